//! Virtual time: a deterministic discrete-event run of jobs against the
//! device model. Each worker follows the same [`IoPlan`] a real worker
//! would, keeps `iodepth` commands in flight, and issues the next one at the
//! simulated time the previous one completes (plus `host_ns` of host cost
//! per I/O). Writing a device ten times over takes seconds; the same seed
//! gives the same counters.

use crate::device::{Device, Extent, Op};
use ssdready_core::plan::{IoPlan, Region};
use ssdready_core::spec::JobSpec;
use ssdready_core::stats::WorkerStats;
use ssdready_core::Ddir;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const WAKE: u32 = u32::MAX;

#[derive(Clone, Copy, Default)]
struct Slot {
    issue: u64,
    ddir: Option<Ddir>,
    len: u32,
}

struct Worker {
    job: usize,
    plan: IoPlan,
    depth: usize,
    inflight: usize,
    done: bool,
    slots: Vec<Slot>,
    free: Vec<u32>,
    stats: WorkerStats,
    interval_ns: Option<f64>,
    next_issue: f64,
    ramp_end: u64,
    deadline: Option<u64>,
    measuring: bool,
    last_completion: u64,
}

/// What a simulation produced.
pub struct SimOutcome {
    /// Per job, per worker.
    pub workers: Vec<Vec<WorkerStats>>,
    /// Free blocks at the end of each simulated second.
    pub free_blocks: Vec<u64>,
    /// Simulated time of the last completion, ns.
    pub end_ns: u64,
}

/// The region a job covers on the device.
pub fn region(spec: &JobSpec, capacity: u64) -> Result<Region, String> {
    if spec.offset >= capacity {
        return Err(format!(
            "option 'offset': {} is beyond the emulated device's {capacity} bytes",
            spec.offset
        ));
    }
    let len = spec.size.unwrap_or(capacity - spec.offset);
    if spec.offset + len > capacity {
        return Err(format!(
            "option 'size': offset + size = {} exceeds the emulated device's {capacity} bytes (raise the device's size=)",
            spec.offset + len
        ));
    }
    Ok(Region {
        file: 0,
        offset: spec.offset,
        len,
    })
}

/// Run `jobs` together against `dev` in virtual time, starting where the
/// device's clock stands (so consecutive simulations continue one
/// history). `stop` is polled so a long simulation can be interrupted.
pub fn simulate(
    dev: &mut Device,
    jobs: &[JobSpec],
    stop: &dyn Fn() -> bool,
) -> Result<SimOutcome, String> {
    let cap = dev.capacity();
    let t0 = dev.now;
    let mut ws: Vec<Worker> = Vec::new();
    for (ji, spec) in jobs.iter().enumerate() {
        let r = region(spec, cap)?;
        for w in 0..spec.numjobs {
            let depth = spec.iodepth.max(1) as usize;
            let ramp_end = t0 + spec.startdelay_ns + spec.ramp_time_ns;
            ws.push(Worker {
                job: ji,
                plan: IoPlan::new(spec, &[r], w),
                depth,
                inflight: 0,
                done: false,
                slots: vec![Slot::default(); depth],
                free: (0..depth as u32).rev().collect(),
                stats: WorkerStats::default(),
                interval_ns: spec.rate_iops.map(|r| 1e9 / r as f64),
                next_issue: (t0 + spec.startdelay_ns) as f64,
                ramp_end,
                deadline: spec.runtime_ns.map(|rt| ramp_end + rt),
                measuring: ramp_end == 0,
                last_completion: 0,
            });
        }
    }
    let host_ns = dev.p.host_ns;
    let mut heap: BinaryHeap<Reverse<(u64, u32, u32)>> = BinaryHeap::new();
    let mut free_blocks = Vec::new();
    let mut next_sample = t0 + 1_000_000_000u64;
    let mut end_ns = t0;

    let issue = |w: &mut Worker,
                 wi: u32,
                 t: u64,
                 dev: &mut Device,
                 heap: &mut BinaryHeap<Reverse<(u64, u32, u32)>>| {
        let mut cursor = t;
        while !w.done && w.inflight < w.depth {
            if w.deadline.is_some_and(|d| cursor >= d) {
                w.done = true;
                break;
            }
            if let Some(i) = w.interval_ns {
                if (cursor as f64) < w.next_issue {
                    heap.push(Reverse((w.next_issue.ceil() as u64, wi, WAKE)));
                    break;
                }
                w.next_issue += i;
            } else if (cursor as f64) < w.next_issue {
                cursor = w.next_issue as u64; // startdelay
            }
            let Some((_, ddir, offset, len)) = w.plan.next_io() else {
                w.done = true;
                break;
            };
            cursor += host_ns;
            let op = match ddir {
                Ddir::Read => Op::Read,
                Ddir::Write => Op::Write,
                Ddir::Trim => Op::Trim,
            };
            let done = dev.submit(
                cursor,
                op,
                &[Extent {
                    offset,
                    len: len as u64,
                }],
            );
            let slot = w.free.pop().expect("a free slot below depth");
            w.slots[slot as usize] = Slot {
                issue: cursor,
                ddir: Some(ddir),
                len,
            };
            w.inflight += 1;
            heap.push(Reverse((done, wi, slot)));
        }
    };

    for (wi, w) in ws.iter_mut().enumerate() {
        issue(w, wi as u32, t0, dev, &mut heap);
    }
    let mut n = 0u64;
    while let Some(Reverse((t, wi, slot))) = heap.pop() {
        n += 1;
        if n.is_multiple_of(65_536) && stop() {
            break;
        }
        while t >= next_sample {
            free_blocks.push(dev.free_blocks());
            next_sample += 1_000_000_000;
        }
        let w = &mut ws[wi as usize];
        if slot != WAKE {
            let s = w.slots[slot as usize];
            w.inflight -= 1;
            w.free.push(slot);
            if !w.measuring && t >= w.ramp_end {
                w.stats.clear();
                w.measuring = true;
            }
            if w.measuring {
                let sec = ((t - w.ramp_end) / 1_000_000_000) as usize;
                let d = w.stats.dir(s.ddir.unwrap_or(Ddir::Read));
                d.account(sec, s.len as u64, false);
                let lat = t - s.issue;
                d.lat.record(lat);
                d.clat.record(lat);
            }
            w.last_completion = t;
            end_ns = end_ns.max(t);
        }
        issue(w, wi, t, dev, &mut heap);
    }
    let mut per_job: Vec<Vec<WorkerStats>> = (0..jobs.len()).map(|_| Vec::new()).collect();
    for mut w in ws {
        w.stats.measured_ns = match w.deadline {
            // Time based: the runtime, plus the drain of the commands in
            // flight at its end (they are counted), as in a real run.
            Some(d) => d.max(w.last_completion).saturating_sub(w.ramp_end),
            None => w.last_completion.saturating_sub(w.ramp_end),
        };
        per_job[w.job].push(w.stats);
    }
    free_blocks.push(dev.free_blocks());
    Ok(SimOutcome {
        workers: per_job,
        free_blocks,
        end_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Params;
    use ssdready_core::spec::RwMode;

    fn job(rw: RwMode, depth: u32, ios: u64) -> JobSpec {
        JobSpec {
            rw,
            iodepth: depth,
            number_ios: Some(ios),
            time_based: true,
            ioengine: ssdready_core::spec::EngineKind::Null,
            ..JobSpec::default()
        }
    }

    #[test]
    fn same_seed_same_counters() {
        let run = || {
            let mut d = Device::new(&Params::parse("x25e,size=256m").unwrap());
            let o = simulate(&mut d, &[job(RwMode::RandWrite, 4, 30_000)], &|| false).unwrap();
            (
                d.ftl.as_ref().unwrap().counters,
                o.end_ns,
                o.workers[0][0].dirs[1].as_ref().unwrap().lat.sum(),
            )
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn qd1_reads_take_the_modelled_latency() {
        let mut d = Device::new(&Params::parse("x25e,size=256m").unwrap());
        let fill = JobSpec {
            size: Some(32 << 20),
            bs: ssdready_core::spec::BlockSizes::Fixed(1 << 20),
            ..job(RwMode::Write, 1, 32)
        };
        simulate(&mut d, &[fill], &|| false).unwrap();
        let read = JobSpec {
            size: Some(32 << 20),
            ..job(RwMode::RandRead, 1, 1000)
        };
        let o = simulate(&mut d, &[read], &|| false).unwrap();
        let lat = o.workers[0][0].dirs[0].as_ref().unwrap().lat.mean();
        assert!((145_000.0..155_000.0).contains(&lat), "{lat}");
    }
}
