//! Virtual time: a deterministic discrete-event run of jobs against the
//! device model. Each worker follows the same [`IoPlan`] a real worker
//! would, keeps `iodepth` commands in flight, and issues the next one at the
//! simulated time the previous one completes (plus `host_ns` of host cost
//! per I/O). Writing a device ten times over takes seconds; the same seed
//! gives the same counters.
//!
//! Virtual time must advance: on a device that serves some command in 0 ns
//! (the `null` preset; trims on a DRAM device without command latency;
//! all-zero timings) with `host_ns=0`, a time-based job would never reach its
//! runtime and a sized one would report I/Os per zero seconds. Such a run is
//! refused rather than reported: when more than [`STALL_EVENTS`] (or four per
//! slot, if more) completions in a row happen at one instant, or when a
//! job's measured I/Os took no simulated time at all. `stop` is polled every
//! [`STOP_POLL_EVENTS`] events.
//!
//! Between a worker and the device sits the host's command path
//! ([`crate::merge::virtual_time`]): the interface depth (`iface_depth`),
//! the host's cost per command (`host_cmd_ns`), the delay before a
//! completion is seen (`irq_ns` with `completion=irq`), and, for jobs with
//! `temporal_merge`, the merge layer (one per setting, shared by the jobs
//! that use it), whose window ends and dispatches are events here. An STM
//! worker is synchronous: it keeps one request in flight whatever its
//! `iodepth`, as in real time.

use crate::device::{Device, Extent};
use crate::engine::op_of;
use crate::merge::virtual_time::{Out, Request, VirtualHost};
use crate::merge::{MergeConfig, Served};
use ssdready_core::arrivals::ScheduleStats;
use ssdready_core::spec::{JobSpec, TemporalMerge};
use ssdready_core::stats::WorkerStats;
use ssdready_core::Ddir;
use ssdready_workload::plan::{IoPlan, Region};
use ssdready_workload::rate::Pacer;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const WAKE: u32 = u32::MAX;
/// The "worker" of the host path's events (merge windows, dispatches).
const HOST_EVENT: u32 = u32::MAX;
/// Completions in a row at one simulated instant after which virtual time
/// is taken to have stopped (at least; four per slot in flight if more).
pub const STALL_EVENTS: u64 = 1 << 20;
/// How often (in events) the stop callback is polled.
pub const STOP_POLL_EVENTS: u64 = 1024;
/// The free-blocks series keeps at most this many simulated seconds
/// (48 days, 32 MiB); later seconds are not sampled.
pub const MAX_SERIES_SECONDS: u64 = 1 << 22;

#[derive(Clone, Copy, Default)]
struct Slot {
    issue: u64,
    /// `lat_from=schedule`: the I/O's intended issue time.
    intended: u64,
    ddir: Option<Ddir>,
    len: u32,
}

struct Worker {
    job: usize,
    /// The merge layer its requests go to.
    layer: Option<usize>,
    plan: IoPlan,
    depth: usize,
    inflight: usize,
    done: bool,
    slots: Vec<Slot>,
    free: Vec<u32>,
    stats: WorkerStats,
    /// fio's rate limits, per direction.
    pacer: Option<Pacer>,
    next_issue: f64,
    ramp_end: u64,
    deadline: Option<u64>,
    /// Whether it stopped at the deadline (not at the end of its I/O).
    hit_deadline: bool,
    measuring: bool,
    last_completion: u64,
    /// `lat_from=schedule` on a paced job ([`ssdready_core::arrivals`]).
    open_loop: bool,
    /// The time of the latest wake-up asked for (one per due time: every
    /// completion of a paced worker looks again, and a wake-up pushed for
    /// each would pile up).
    wake_at: u64,
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
    clone_region(spec, 0, capacity)
}

/// The region clone `clone` of `spec` covers (`offset_increment` moves
/// each clone further).
pub fn clone_region(spec: &JobSpec, clone: u32, capacity: u64) -> Result<Region, String> {
    let (offset, len) = ssdready_workload::fileset::region_on(spec, clone, capacity)?;
    Ok(Region {
        file: 0,
        offset,
        len,
    })
}

/// Why a simulation gave no result.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// The jobs cannot be simulated as asked (a region beyond the device,
    /// virtual time that would not advance): the request's fault.
    #[error("{0}")]
    Refused(String),
    /// The model failed (or a bug): the run's fault.
    #[error("{0}")]
    Model(String),
}

/// Run `jobs` together against `dev` in virtual time, starting where the
/// device's clock stands (so consecutive simulations continue one
/// history). `stop` is polled so a long simulation can be interrupted.
pub fn simulate(
    dev: &mut Device,
    jobs: &[JobSpec],
    stop: &dyn Fn() -> bool,
) -> Result<SimOutcome, SimError> {
    if let Some(why) = jobs.iter().find_map(|j| unservable_rate(j, &dev.p)) {
        return Err(SimError::Refused(why));
    }
    let mut sim = Sim::new(dev, jobs)?;
    let t0 = sim.dev.now;
    for wi in 0..sim.ws.len() {
        sim.issue(wi as u32, t0)?;
    }
    sim.run(stop)?;
    sim.finish()
}

/// The event queue: (time, worker, slot); a worker's [`WAKE`] or the
/// [`HOST_EVENT`] worker's events.
type Events = BinaryHeap<Reverse<(u64, u32, u32)>>;

/// A simulation between two events.
struct Sim<'a> {
    dev: &'a mut Device,
    jobs: &'a [JobSpec],
    host: VirtualHost,
    ws: Vec<Worker>,
    heap: Events,
    /// What the host path produced since the last flush.
    out: Out,
    /// How each request in flight was merged, per worker and slot.
    served: Vec<Vec<Option<Served>>>,
    free_blocks: Vec<u64>,
    next_sample: u64,
    end_ns: u64,
    /// Directions whose I/Os completed at the instant they were issued.
    instant: [bool; 3],
}

fn model(e: crate::ftl::FtlError) -> SimError {
    SimError::Model(e.to_string())
}

/// Worker `w` of job `ji`, starting at `t0`.
fn worker(
    spec: &JobSpec,
    ji: usize,
    w: u32,
    t0: u64,
    cap: u64,
    layer: Option<usize>,
) -> Result<Worker, SimError> {
    let r = clone_region(spec, w, cap).map_err(SimError::Refused)?;
    let depth = if spec.temporal_merge == TemporalMerge::Stm {
        1
    } else {
        spec.iodepth.max(1) as usize
    };
    let start = t0.saturating_add(spec.startdelay_ns);
    let ramp_end = start.saturating_add(spec.ramp_time_ns);
    let pacer = Pacer::new(spec, start as f64);
    let open_loop = spec.sched.lat_from_schedule && pacer.is_some();
    let mut stats = WorkerStats::default();
    if open_loop {
        // Virtual time issues on time exactly: any lateness is late.
        stats.schedule = Some(Box::new(ScheduleStats::new(0)));
    }
    Ok(Worker {
        job: ji,
        layer,
        plan: IoPlan::new(spec, &[r], w),
        depth,
        inflight: 0,
        done: false,
        slots: vec![Slot::default(); depth],
        free: (0..depth as u32).rev().collect(),
        stats,
        pacer,
        next_issue: start as f64,
        ramp_end,
        deadline: spec.runtime_ns.map(|rt| ramp_end.saturating_add(rt)),
        hit_deadline: false,
        measuring: ramp_end == 0,
        last_completion: 0,
        open_loop,
        wake_at: u64::MAX,
    })
}

impl<'a> Sim<'a> {
    fn new(dev: &'a mut Device, jobs: &'a [JobSpec]) -> Result<Self, SimError> {
        let cap = dev.capacity();
        let t0 = dev.now;
        let mut host = VirtualHost::new(&dev.p);
        let layers = merge_layers(&mut host, jobs);
        let mut ws = Vec::new();
        for (ji, spec) in jobs.iter().enumerate() {
            for w in 0..spec.numjobs {
                ws.push(worker(spec, ji, w, t0, cap, layers[ji])?);
            }
        }
        let served = ws.iter().map(|w| vec![None; w.depth]).collect();
        Ok(Sim {
            dev,
            jobs,
            host,
            ws,
            heap: BinaryHeap::new(),
            out: Out::default(),
            served,
            free_blocks: Vec::new(),
            next_sample: t0 + 1_000_000_000u64,
            end_ns: t0,
            instant: [false; 3],
        })
    }

    /// Worker `wi` issues at `t` what its depth, pacing and plan allow,
    /// each I/O `host_ns` after the one before; then [`Sim::flush`].
    fn issue(&mut self, wi: u32, t: u64) -> Result<(), SimError> {
        let host_ns = self.dev.p.host_ns;
        let w = &mut self.ws[wi as usize];
        let mut cursor = t;
        let mut intended = t;
        while !w.done && w.inflight < w.depth {
            if w.deadline.is_some_and(|d| cursor >= d) {
                w.done = true;
                w.hit_deadline = true;
                break;
            }
            if let Some(p) = &w.pacer {
                let due = p.next_due(&mut w.plan, cursor as f64).max(w.next_issue);
                if (cursor as f64) < due {
                    let at = due.ceil() as u64;
                    if w.wake_at != at {
                        self.heap.push(Reverse((at, wi, WAKE)));
                        w.wake_at = at;
                    }
                    break;
                }
                intended = (due.ceil() as u64).min(cursor);
            } else if (cursor as f64) < w.next_issue {
                cursor = w.next_issue as u64; // startdelay
            }
            let Some((_, ddir, offset, len)) = w.plan.next_io() else {
                w.done = true;
                break;
            };
            if let Some(p) = &mut w.pacer {
                p.issued(ddir, u64::from(len));
            }
            let late = cursor - intended;
            cursor = cursor.saturating_add(host_ns);
            let Some(slot) = w.free.pop() else {
                return Err(SimError::Model(
                    "emulator simulation: no free slot below the queue depth (a bug)".into(),
                ));
            };
            w.slots[slot as usize] = Slot {
                issue: cursor,
                intended: cursor - host_ns - late,
                ddir: Some(ddir),
                len,
            };
            w.inflight += 1;
            let req = Request {
                worker: wi,
                slot,
                op: op_of(ddir),
                ext: Extent {
                    offset,
                    len: len as u64,
                },
                at: cursor,
            };
            match w.layer {
                None => self.host.direct(self.dev, req, &mut self.out),
                Some(l) => self.host.merged(self.dev, l, req, &mut self.out),
            }
            .map_err(model)?;
        }
        self.flush();
        Ok(())
    }

    /// Hand what the host path produced to the event queue. Latency spikes
    /// (`fault_spike_rate`) delay a command's completion.
    fn flush(&mut self) {
        for s in self.out.seen.drain(..) {
            if s.served.is_some() {
                self.served[s.worker as usize][s.slot as usize] = s.served;
            }
            let at = s.at.saturating_add(self.dev.faults.next_spike());
            self.heap.push(Reverse((at, s.worker, s.slot)));
        }
        for (t, ev) in self.out.events.drain(..) {
            self.heap.push(Reverse((t, HOST_EVENT, ev)));
        }
    }

    /// Take events in time order until none is left (or `stop`), refusing
    /// a run whose virtual time stops advancing.
    fn run(&mut self, stop: &dyn Fn() -> bool) -> Result<(), SimError> {
        let slots: u64 = self.ws.iter().map(|w| w.depth as u64 + 1).sum();
        let stall_limit = STALL_EVENTS.max(slots.saturating_mul(4));
        let mut same_instant = 0u64;
        let mut last_t = None;
        let mut n = 0u64;
        while let Some(Reverse((t, wi, slot))) = self.heap.pop() {
            n += 1;
            if n.is_multiple_of(STOP_POLL_EVENTS) && stop() {
                break;
            }
            if last_t == Some(t) {
                same_instant += 1;
                if same_instant > stall_limit {
                    return Err(SimError::Refused(no_time(
                        &self.dev.p,
                        &format!("virtual time stopped advancing at {t} ns: more than {stall_limit} I/Os in a row completed at that instant"),
                        self.instant,
                    )));
                }
            } else {
                last_t = Some(t);
                same_instant = 0;
            }
            self.sample(t);
            if wi == HOST_EVENT {
                self.host
                    .event(self.dev, t, slot, &mut self.out)
                    .map_err(model)?;
                self.flush();
                continue;
            }
            if slot != WAKE {
                self.complete(wi, slot, t);
            }
            self.issue(wi, t)?;
        }
        Ok(())
    }

    /// The free-blocks series: every second passed since the last sample
    /// (a startdelay can jump days ahead at once), up to the cap.
    fn sample(&mut self, t: u64) {
        if t < self.next_sample {
            return;
        }
        let seconds = (t - self.next_sample) / 1_000_000_000 + 1;
        let room = (MAX_SERIES_SECONDS as usize).saturating_sub(self.free_blocks.len());
        let fill = seconds.min(room as u64) as usize;
        let free = self.dev.free_blocks();
        self.free_blocks.resize(self.free_blocks.len() + fill, free);
        self.next_sample = self
            .next_sample
            .saturating_add(seconds.saturating_mul(1_000_000_000));
    }

    /// Worker `wi`'s I/O in `slot` completed at `t`: its latencies are
    /// recorded once the worker's ramp has passed.
    fn complete(&mut self, wi: u32, slot: u32, t: u64) {
        let host_ns = self.dev.p.host_ns;
        let w = &mut self.ws[wi as usize];
        let s = w.slots[slot as usize];
        w.inflight -= 1;
        w.free.push(slot);
        if !w.measuring && t >= w.ramp_end {
            w.stats.clear();
            w.measuring = true;
        }
        let ddir = s.ddir.unwrap_or(Ddir::Read);
        self.instant[ddir.idx()] |= t == s.issue;
        if w.measuring {
            let sec = ((t - w.ramp_end) / 1_000_000_000) as usize;
            let d = w.stats.dir(ddir);
            d.account(sec, s.len as u64, false);
            let lat = t - s.issue;
            let total = match w.stats.schedule.as_deref_mut().filter(|_| w.open_loop) {
                Some(sch) => sch.record(ddir, s.intended, s.issue - host_ns, t),
                None => lat,
            };
            let d = w.stats.dir(ddir);
            d.record_lat(sec, total);
            d.clat.record(lat);
            if let Some(m) = self.served[wi as usize][slot as usize].take() {
                m.record(w.stats.temporal_merge.get_or_insert_with(Box::default));
            }
        }
        w.last_completion = t;
        self.end_ns = self.end_ns.max(t);
    }

    /// Each job's workers' statistics, their windows set.
    fn finish(mut self) -> Result<SimOutcome, SimError> {
        let mut per_job: Vec<Vec<WorkerStats>> = (0..self.jobs.len()).map(|_| Vec::new()).collect();
        for mut w in std::mem::take(&mut self.ws) {
            // A job that ended with its I/O before its runtime (`runtime`
            // without `time_based`) took only the time its I/Os took.
            w.stats.measured_ns = match w.deadline.filter(|_| w.hit_deadline) {
                // Stopped by the runtime: the runtime, plus the drain of the
                // commands in flight at its end (they are counted), as in a
                // real run.
                Some(d) => d.max(w.last_completion).saturating_sub(w.ramp_end),
                None => w.last_completion.saturating_sub(w.ramp_end),
            };
            let ios = w.stats.total_ios();
            if ios > 0 && w.stats.measured_ns == 0 {
                return Err(SimError::Refused(no_time(
                    &self.dev.p,
                    &format!(
                        "job '{}': its {ios} I/Os took no simulated time, so it has no rate",
                        self.jobs[w.job].name
                    ),
                    self.instant,
                )));
            }
            per_job[w.job].push(w.stats);
        }
        self.free_blocks.push(self.dev.free_blocks());
        Ok(SimOutcome {
            workers: per_job,
            free_blocks: self.free_blocks,
            end_ns: self.end_ns,
        })
    }
}

/// Why an open-loop job (`lat_from=schedule`) asks for more than its
/// `iodepth` cap can ever serve, where that is known: a DRAM-mode device
/// with fixed service, whose idle latency for the job's smallest block is
/// exact (each slot holds an I/O at least that long).
pub fn unservable_rate(spec: &JobSpec, p: &crate::config::Params) -> Option<String> {
    if !spec.sched.lat_from_schedule || !p.dram || p.service_exp {
        return None;
    }
    let per_worker = ssdready_core::arrivals::offered_iops(spec) / f64::from(spec.numjobs.max(1));
    let bs = u64::from(spec.bs.min().max(1));
    let pages = bs.div_ceil(u64::from(p.page_bytes.max(1)));
    let units = crate::dram::DramUnits::new(p, 0);
    let latency = units.submit(0, crate::device::Op::Read, bs, pages, 1);
    if latency == 0 {
        return None;
    }
    let depth = spec.iodepth.max(1);
    let most = f64::from(depth) * 1e9 / latency as f64;
    (per_worker > most * (1.0 + 1e-9)).then(|| {
        format!(
            "job '{}': lat_from=schedule with {} I/Os per second per worker is more than iodepth={depth} can ever serve \
             on emulated device '{}' (each {bs}-byte I/O takes at least {latency} ns there: at most {} per second); \
             raise iodepth or lower rate_iops/rate",
            spec.name,
            per_worker.round(),
            p.preset,
            most.floor()
        )
    })
}

/// The merge layer of each job (one per setting, shared by the jobs that
/// use it; STM counts their workers as its members).
fn merge_layers(host: &mut VirtualHost, jobs: &[JobSpec]) -> Vec<Option<usize>> {
    let mut made: Vec<(MergeConfig, usize)> = Vec::new();
    jobs.iter()
        .map(|spec| {
            let cfg = MergeConfig::of(spec)?;
            if let Some((_, l)) = made.iter().find(|(c, _)| *c == cfg) {
                return Some(*l);
            }
            let members: u32 = jobs
                .iter()
                .filter(|j| MergeConfig::of(j) == Some(cfg))
                .map(|j| j.numjobs)
                .sum();
            let l = host.add_layer(cfg, members as usize);
            made.push((cfg, l));
            Some(l)
        })
        .collect()
}

/// The refusal of a run in which virtual time does not pass: what
/// happened, which I/Os cost nothing, and what to do.
fn no_time(p: &crate::config::Params, what: &str, instant: [bool; 3]) -> String {
    let ops: Vec<&str> = Ddir::ALL
        .iter()
        .filter(|d| instant[d.idx()])
        .map(|d| match d {
            Ddir::Read => "reads",
            Ddir::Write => "writes",
            Ddir::Trim => "trims",
        })
        .collect();
    let ops = if ops.is_empty() {
        "I/Os".to_string()
    } else {
        ops.join(" and ")
    };
    format!(
        "{what} ({ops} take 0 ns on emulated device '{}' and host_ns={}); in virtual time every I/O \
         must take time: give them a cost (e.g. host_ns=1us on the device, the host's time per I/O, \
         or nonzero device timings), or run the job in real time with 'ssdready run'",
        p.preset, p.host_ns
    )
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

    fn timed(rw: RwMode, runtime_ns: u64) -> JobSpec {
        JobSpec {
            number_ios: None,
            runtime_ns: Some(runtime_ns),
            ..job(rw, 4, 0)
        }
    }

    #[test]
    fn zero_latency_time_based_is_refused_not_endless() {
        let t = std::time::Instant::now();
        let mut d = Device::new(&Params::parse("null,size=64m").unwrap());
        let e = simulate(&mut d, &[timed(RwMode::RandRead, 1_000_000_000)], &|| false)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains("stopped advancing") && e.contains("reads take 0 ns"),
            "{e}"
        );
        assert!(e.contains("host_ns="), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn trims_on_nvm_lowlat_are_refused_not_endless() {
        // Without the command's own 64 B on the link, its trims take no time.
        let mut d = Device::new(&Params::parse("nvm-lowlat,size=64m,cmd_bytes=0").unwrap());
        let e = simulate(&mut d, &[timed(RwMode::RandTrim, 1_000_000_000)], &|| false)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("trims take 0 ns"), "{e}");
    }

    #[test]
    fn zero_time_sized_job_reports_no_rate() {
        let mut d = Device::new(&Params::parse("null,size=64m").unwrap());
        let sized = JobSpec {
            time_based: false,
            number_ios: Some(1000),
            ..job(RwMode::RandWrite, 4, 1000)
        };
        let e = simulate(&mut d, &[sized], &|| false)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("took no simulated time"), "{e}");
    }

    #[test]
    fn zero_time_job_with_a_runtime_but_not_time_based_reports_no_rate() {
        let mut d = Device::new(&Params::parse("null,size=64m").unwrap());
        let sized = JobSpec {
            time_based: false,
            number_ios: Some(1000),
            runtime_ns: Some(1_000_000_000),
            ..job(RwMode::RandRead, 4, 1000)
        };
        let e = simulate(&mut d, &[sized], &|| false)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("took no simulated time"), "{e}");
    }

    #[test]
    fn host_cost_lets_zero_latency_devices_run() {
        let mut d = Device::new(&Params::parse("null,size=64m,host_ns=1us").unwrap());
        let o = simulate(&mut d, &[timed(RwMode::RandRead, 10_000_000)], &|| false).unwrap();
        let r = o.workers[0][0].dirs[0].as_ref().unwrap();
        // Four streams, each one I/O per microsecond, for 10 ms.
        assert!((39_000..=40_004).contains(&r.ios), "{}", r.ios);
    }

    #[test]
    fn a_stop_request_ends_a_long_simulation() {
        let mut d = Device::new(&Params::parse("x25e,size=256m").unwrap());
        let t = std::time::Instant::now();
        let o = simulate(
            &mut d,
            &[timed(RwMode::RandWrite, 3_600_000_000_000)],
            &|| t.elapsed() > std::time::Duration::from_millis(50),
        )
        .unwrap();
        assert!(
            t.elapsed() < std::time::Duration::from_millis(500),
            "{:?}",
            t.elapsed()
        );
        assert!(o.end_ns < 3_600_000_000_000);
    }

    #[test]
    fn a_start_days_away_does_not_sample_every_second_in_memory() {
        let mut d = Device::new(&Params::parse("x25e,size=128m").unwrap());
        let late = JobSpec {
            startdelay_ns: 100_000 * 86_400 * 1_000_000_000, // 100000 days
            ..job(RwMode::RandRead, 1, 10)
        };
        let t = std::time::Instant::now();
        let o = simulate(&mut d, &[late], &|| false).unwrap();
        assert!(t.elapsed() < std::time::Duration::from_secs(5));
        assert_eq!(o.free_blocks.len() as u64, MAX_SERIES_SECONDS + 1);
    }
}
