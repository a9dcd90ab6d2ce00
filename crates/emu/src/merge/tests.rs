//! The merge layers in real time, with real threads: every request served
//! exactly once with its own data, merge counts under concurrency and
//! without it, the limits, and window 0.

use super::*;
use crate::config::Params;
use ssdready_core::spec::BlockSizes;
use ssdready_core::Ddir;
use ssdready_io::clock::Clock;

fn device(spec: &str) -> Arc<SharedDevice> {
    SharedDevice::new(Params::parse(spec).unwrap(), Clock::calibrate()).unwrap()
}

fn job(mode: TemporalMerge, window_us: u64, max: u32, depth: u32) -> JobSpec {
    JobSpec {
        temporal_merge: mode,
        merge_window_ns: window_us * 1000,
        merge_max: max,
        iodepth: depth,
        bs: BlockSizes::Fixed(4096),
        ..JobSpec::default()
    }
}

fn engine(dev: &Arc<SharedDevice>, spec: &JobSpec, seed: u64) -> MergeEngine {
    MergeEngine::new(dev.clone(), spec, seed, MergeConfig::of(spec).unwrap()).unwrap()
}

/// The tag written at the start of the block of request `n`.
fn tag(n: u64) -> [u8; 8] {
    (n ^ 0xA5A5_5A5A_0F0F_F0F0).to_le_bytes()
}

/// Request `n` (0-based, thread-major) writes or reads block `n`.
fn req(slot: u32, ddir: Ddir, n: u64) -> IoReq {
    IoReq {
        slot,
        file: 0,
        ddir,
        offset: n * 4096,
        len: 4096,
    }
}

/// `threads` threads, each with its own engine, write `per` blocks each
/// (tagged) at `depth` requests in flight, then read them back and check
/// the tags. Returns every engine's merge counts, writes and reads.
fn write_then_verify(
    dev: &Arc<SharedDevice>,
    spec: &JobSpec,
    threads: u64,
    per: u64,
) -> MergeStats {
    // Every engine is open before any starts, as a run's workers are.
    let opened = std::sync::Barrier::new(threads as usize);
    let all: Vec<MergeStats> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|th| {
                let spec = spec.clone();
                let opened = &opened;
                sc.spawn(move || {
                    let mut e = engine(dev, &spec, th);
                    opened.wait();
                    for ddir in [Ddir::Write, Ddir::Read] {
                        run_requests(&mut e, ddir, th * per, per, spec.iodepth);
                    }
                    e.take_merge_stats().unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut total = MergeStats::default();
    for s in &all {
        total.merge(s);
    }
    // Every request counted once in some command: writes and reads.
    assert_eq!(total.extents(), 2 * threads * per);
    assert_eq!(total.window_wait.count(), 2 * threads * per);
    total
}

/// Blocks first..first+count through `e`, `depth` in flight; each completes
/// exactly once; a write carries its block's tag, a read returns it.
fn run_requests(e: &mut MergeEngine, ddir: Ddir, first: u64, count: u64, depth: u32) {
    let mut next = first;
    let mut owner: Vec<Option<u64>> = vec![None; depth as usize];
    let mut done = 0;
    let mut out = Vec::new();
    while done < count {
        for slot in 0..depth {
            if next < first + count && owner[slot as usize].is_none() {
                if ddir == Ddir::Write {
                    e.bufs.get(slot, true)[..8].copy_from_slice(&tag(next));
                }
                owner[slot as usize] = Some(next);
                match e.queue(req(slot, ddir, next)).unwrap() {
                    Queued::Done(n) => {
                        assert_eq!(n, 4096);
                        out.push(Completion { slot, result: n });
                    }
                    Queued::Pending => {}
                }
                next += 1;
            }
        }
        e.getevents(1, &mut out).unwrap();
        for c in out.drain(..) {
            let n = owner[c.slot as usize]
                .take()
                .expect("a completion for a request in flight, once");
            assert_eq!(c.result, 4096);
            if ddir == Ddir::Read {
                assert_eq!(e.bufs.get(c.slot, false)[..8], tag(n), "block {n}");
            }
            done += 1;
        }
    }
    assert!(owner.iter().all(Option::is_none));
}

#[test]
fn stm_serves_each_request_once_with_its_own_data_and_merges_under_concurrency() {
    let dev = device("dram-ssd,size=4m,completion=poll");
    // A long window: on a machine with fewer CPUs than threads, the
    // others still arrive while the winner waits.
    let spec = job(TemporalMerge::Stm, 5_000, 64, 1);
    let s = write_then_verify(&dev, &spec, 4, 30);
    assert!(
        s.commands_by_extents.len() > 1,
        "some command carried several requests: {:?}",
        s.commands_by_extents
    );
    assert!(s.commands_by_extents.len() <= 4, "at most one per thread");
    let d = dev.device.read().unwrap();
    assert_eq!(d.counters.extents, 240);
    assert_eq!(d.counters.commands, s.commands());
}

#[test]
fn atm_serves_each_request_once_with_its_own_data_and_merges_a_queue() {
    let dev = device("dram-ssd,size=4m,completion=poll");
    let spec = job(TemporalMerge::Atm, 2_000, 64, 4);
    let s = write_then_verify(&dev, &spec, 3, 40);
    assert!(
        s.commands_by_extents.len() > 1,
        "{:?}",
        s.commands_by_extents
    );
    let d = dev.device.read().unwrap();
    assert_eq!(d.counters.extents, 240);
    assert_eq!(d.counters.commands, s.commands());
}

#[test]
fn one_thread_never_merges_nor_waits_a_window() {
    let dev = device("dram-ssd,size=4m,completion=poll");
    let spec = job(TemporalMerge::Stm, 100_000, 64, 1);
    let t = std::time::Instant::now();
    let s = write_then_verify(&dev, &spec, 1, 50);
    assert_eq!(s.commands_by_extents, vec![100]);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(5),
        "a lone thread's command is full at once: no 100 ms windows"
    );
}

#[test]
fn window_zero_sends_every_request_alone() {
    for mode in [TemporalMerge::Stm, TemporalMerge::Atm] {
        let dev = device("dram-ssd,size=4m,completion=poll");
        let spec = job(mode, 0, 64, 2);
        let s = write_then_verify(&dev, &spec, 3, 20);
        assert_eq!(s.commands_by_extents, vec![120], "{mode:?}");
    }
}

#[test]
fn merged_commands_keep_to_the_limits() {
    for mode in [TemporalMerge::Stm, TemporalMerge::Atm] {
        let dev = device("dram-ssd,size=4m,completion=poll");
        let mut spec = job(mode, 3_000, 3, 4);
        let s = write_then_verify(&dev, &spec, 4, 12);
        assert!(
            s.commands_by_extents.len() <= 3,
            "{mode:?}: {:?}",
            s.commands_by_extents
        );
        // Bytes: two 4 KiB requests at most.
        spec.merge_max_bytes = 8192;
        let dev = device("dram-ssd,size=4m,completion=poll");
        let s = write_then_verify(&dev, &spec, 4, 12);
        assert!(
            s.commands_by_extents.len() <= 2,
            "{mode:?}: {:?}",
            s.commands_by_extents
        );
    }
}

#[test]
fn the_layer_is_shared_by_settings_and_ends_with_its_engines() {
    let dev = device("dram-ssd,size=4m");
    let a = job(TemporalMerge::Atm, 10, 8, 1);
    let b = job(TemporalMerge::Atm, 20, 8, 1);
    let (e1, e2, e3) = (
        engine(&dev, &a, 1),
        engine(&dev, &a, 2),
        engine(&dev, &b, 3),
    );
    assert_eq!(lock(&dev.mergers).len(), 2, "one layer per setting");
    drop((e1, e2, e3));
    let _e4 = engine(&dev, &a, 4);
    assert_eq!(
        lock(&dev.mergers).len(),
        1,
        "dead layers are forgotten; a new one starts"
    );
}
