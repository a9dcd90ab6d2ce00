//! A fixed number of 4 KiB random reads through the emulator's real-time
//! front, for counting its instructions per read with valgrind
//! (`INSTR=1 bench/emu-scaling.sh`): the drive is written whole first (so
//! that every read reaches a die), then each of WORKERS threads reads
//! READS times at QD 32 on its own engine, as a worker of `ssdready run`
//! does (queue the free slots, then wait for at least one completion).
//!
//! Usage: front_reads READS [WORKERS [EMU-SPEC]]
//! (default spec: the `flash-poll` preset of `bench/emu-scaling.sh`).

use ssdready_core::spec::JobSpec;
use ssdready_core::{Ddir, IoReq};
use ssdready_emu::config::Params;
use ssdready_emu::engine::{EmuEngine, SharedDevice};
use ssdready_io::clock::Clock;
use ssdready_io::Engine;
use std::process::ExitCode;
use std::sync::Arc;

const FLASH_POLL: &str = "nvme-tlc,read_ns=2000,fw_cmd_ns=200,link_mbps=64000,\
                          channel_mbps=64000,nocopy=1,completion=poll,size=256m";
const DEPTH: u32 = 32;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: u64| match args.get(i) {
        None => Some(default),
        Some(a) => a.parse::<u64>().ok().filter(|&n| n > 0),
    };
    let (Some(reads), Some(workers)) = (number(0, 100_000), number(1, 1)) else {
        eprintln!("front_reads: usage: front_reads READS [WORKERS [EMU-SPEC]] (counts above 0)");
        return ExitCode::from(2);
    };
    let spec = args.get(2).map_or(FLASH_POLL, String::as_str);
    let params = match Params::parse(spec) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("front_reads: {spec}: {e}");
            return ExitCode::from(2);
        }
    };
    match run(params, reads, workers) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("front_reads: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(params: Params, reads: u64, workers: u64) -> Result<(), String> {
    let dev = SharedDevice::new(params, Clock::calibrate()).map_err(|e| e.to_string())?;
    fill(&dev)?;
    let started = std::time::Instant::now();
    let done: Result<Vec<(u64, u64)>, String> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..workers)
            .map(|w| {
                let dev = dev.clone();
                s.spawn(move || read(dev, reads, w + 1))
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().map_err(|_| "a worker panicked".to_string())?)
            .collect()
    });
    let done = done?;
    let total: u64 = done.iter().map(|d| d.0).sum();
    let visits: u64 = done.iter().map(|d| d.1).sum();
    let secs = started.elapsed().as_secs_f64();
    let per_read = visits as f64 / total.max(1) as f64;
    println!(
        "{total} reads by {workers} workers in {secs:.3} s; {per_read:.3} ledger writes a read"
    );
    Ok(())
}

/// Write the drive whole, 1 MiB at a time at QD 4.
fn fill(dev: &Arc<SharedDevice>) -> Result<(), String> {
    let spec = JobSpec {
        iodepth: 4,
        ..JobSpec::default()
    };
    let mut e = EmuEngine::new(dev.clone(), &spec, 0).map_err(|e| e.to_string())?;
    let (size, bs) = (dev.capacity(), 1 << 20);
    let (mut next, mut free, mut out) = (0u64, (0..4).collect::<Vec<u32>>(), vec![]);
    while next < size || free.len() < 4 {
        for slot in std::mem::take(&mut free) {
            if next >= size {
                free.push(slot);
                continue;
            }
            e.queue(request(slot, Ddir::Write, next, bs))
                .map_err(|e| e.to_string())?;
            next += u64::from(bs);
        }
        out.clear();
        e.getevents(1, &mut out).map_err(|e| e.to_string())?;
        free.extend(out.iter().map(|c| c.slot));
    }
    Ok(())
}

/// One worker's `reads` random 4 KiB reads at QD 32: how many completed,
/// and how many times its lanes wrote the device's ledgers.
fn read(dev: Arc<SharedDevice>, reads: u64, seed: u64) -> Result<(u64, u64), String> {
    let spec = JobSpec {
        iodepth: DEPTH,
        ..JobSpec::default()
    };
    let pages = dev.capacity() / 4096;
    let mut e = EmuEngine::new(dev, &spec, seed).map_err(|e| e.to_string())?;
    let (mut free, mut out, mut x) = ((0..DEPTH).collect::<Vec<u32>>(), vec![], seed);
    let (mut queued, mut completed) = (0u64, 0u64);
    while completed < reads {
        for slot in free.drain(..) {
            if queued == reads {
                break;
            }
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let page = (x >> 32) % pages;
            e.queue(request(slot, Ddir::Read, page * 4096, 4096))
                .map_err(|e| e.to_string())?;
            queued += 1;
        }
        out.clear();
        e.getevents(1, &mut out).map_err(|e| e.to_string())?;
        completed += out.len() as u64;
        free.extend(out.iter().map(|c| c.slot));
    }
    Ok((completed, e.ledger_visits()))
}

fn request(slot: u32, ddir: Ddir, offset: u64, len: u32) -> IoReq {
    IoReq {
        slot,
        file: 0,
        ddir,
        offset,
        len,
    }
}
