//! Characterization of an emulated device in virtual time: each step is a
//! simulation of the emulator's model (`ssdready_run::virtual_time`, the path of
//! `ssdready emu simulate`) on one device that keeps its history from step
//! to step; a purge builds a fresh device and restarts the random offsets
//! (a test gives the same figures alone or after others). Write amplification comes from
//! the FTL's counters, and the analytic model's expectation from the
//! device's spare factor.
//!
//! WSAT is simulated in chunks of data (1/64 of the capacity, at least
//! 8 MiB and at least the write buffer, at most 1/8 of the capacity), each
//! a sample: a small device's cliff comes within a second or two, too
//! soon for per-second samples to place it.

use crate::driver::{Failure, PointOutcome, Runner, WsatRun};
use crate::model::*;
use crate::plan::{Access, Point, WsatPlan};
use ssdready_core::hist::Histogram;
use ssdready_core::spec::{BlockSizes, EngineKind, JobSpec, RwMode};
use ssdready_core::stats::WorkerStats;
use ssdready_emu::analytic::{wa_fifo, wa_greedy};
use ssdready_emu::config::{GcPolicy, Params};
use ssdready_emu::device::Device;
use ssdready_emu::die::NandTiming;
use ssdready_run::virtual_time::{simulate, SimError};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// The random seed of the first job after a purge: every purged test
/// sees the same offsets whatever ran before it, so `--tests=wsat` gives
/// the combined run's WSAT.
const SEED: u64 = 0x5eed_c4a2;

/// The emulated device and where the characterization stands on it.
pub struct VirtualRunner {
    params: Params,
    dev: Device,
    seed: u64,
    stop: Arc<AtomicBool>,
    /// Simulated time of every step, ns.
    pub simulated_ns: u64,
}

/// The model's steady-state WA for uniform random writes on `p`.
pub fn model(p: &Params) -> Option<DeviceModel> {
    if p.dram {
        return None;
    }
    let a = p.alpha_effective();
    let timing = NandTiming::of(p);
    let (gc, wa) = match p.gc {
        GcPolicy::Greedy => ("greedy", wa_greedy(a, p.pages_per_block as f64)),
        GcPolicy::Fifo => ("fifo", wa_fifo(a)),
    };
    Some(DeviceModel {
        alpha_effective: a,
        pages_per_block: p.pages_per_block,
        gc: gc.into(),
        wa_predicted: wa,
        dies: p.dies(),
        program_ns: p.program_ns,
        read_ns: p.read_ns,
        erase_ns: p.erase_ns,
        program_unit_pages: timing.unit,
        erase_every: timing.erase_every,
    })
}

/// fio's `rw` for a point.
pub fn rw_of(p: &Point) -> RwMode {
    match (p.access, p.read_pct) {
        (Access::Random, 100) => RwMode::RandRead,
        (Access::Random, 0) => RwMode::RandWrite,
        (Access::Random, _) => RwMode::RandRw,
        (Access::Sequential, 100) => RwMode::Read,
        (Access::Sequential, 0) => RwMode::Write,
        (Access::Sequential, _) => RwMode::ReadWrite,
    }
}

impl VirtualRunner {
    pub fn new(params: Params, stop: Arc<AtomicBool>) -> Self {
        VirtualRunner {
            dev: Device::new(&params),
            params,
            seed: SEED,
            stop,
            simulated_ns: 0,
        }
    }

    fn spec(&mut self, rw: RwMode, read_pct: u32, bs: u32, iodepth: u32) -> JobSpec {
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        JobSpec {
            name: "characterize".into(),
            rw,
            rwmixread: read_pct,
            bs: BlockSizes::Fixed(bs),
            iodepth,
            norandommap: true,
            randseed: self.seed,
            ioengine: EngineKind::Null,
            ..JobSpec::default()
        }
    }

    /// (host pages, NAND pages) programmed so far.
    fn pages(&self) -> (u64, u64) {
        self.dev.ftl.as_ref().map_or((0, 0), |f| {
            let c = f.counters;
            (c.host_pages, c.host_pages + c.gc_pages)
        })
    }

    /// Simulate one job; its workers' counters merged.
    fn run(&mut self, spec: JobSpec) -> Result<WorkerStats, Failure> {
        let t0 = self.dev.now;
        let stop = self.stop.clone();
        let o = simulate(&mut self.dev, &[spec], &move || stop.load(Relaxed)).map_err(|e| {
            Failure::Failed(match e {
                SimError::Refused(m) | SimError::Model(m) => m,
            })
        })?;
        self.simulated_ns += self.dev.now.saturating_sub(t0);
        let mut merged = WorkerStats::default();
        for w in o.workers.iter().flatten() {
            merged.merge(w);
            merged.measured_ns = merged.measured_ns.max(w.measured_ns);
        }
        Ok(merged)
    }
}

/// A point's figures from its merged counters.
pub fn figures(s: &WorkerStats, wa: Option<f64>) -> PointOutcome {
    let secs = s.measured_ns as f64 / 1e9;
    let per_s = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
    let mut lat = Histogram::new();
    let (mut ios, mut bytes) = (0, 0);
    for d in s.dirs.iter().flatten() {
        lat.merge(&d.lat);
        ios += d.ios;
        bytes += d.bytes;
    }
    let dir_ios = |i: usize| s.dirs[i].as_ref().map_or(0, |d| d.ios);
    PointOutcome {
        figures: PointFigures {
            iops: per_s(ios),
            bw_bytes: per_s(bytes),
            read_iops: per_s(dir_ios(0)),
            write_iops: per_s(dir_ios(1)),
            lat_mean_ns: lat.mean(),
            lat_p99_99_ns: lat.percentile(99.99),
            lat_max_ns: lat.max(),
            wa,
            seconds: secs,
        },
        lat,
    }
}

fn wa_between(a: (u64, u64), b: (u64, u64)) -> Option<f64> {
    let host = b.0.saturating_sub(a.0);
    (host > 0).then(|| b.1.saturating_sub(a.1) as f64 / host as f64)
}

impl Runner for VirtualRunner {
    fn purge(&mut self) -> Result<PurgeRecord, Failure> {
        self.dev = Device::new(&self.params);
        self.seed = SEED;
        Ok(PurgeRecord {
            done: true,
            how: "a fresh emulated device (every block erased, nothing mapped)".into(),
        })
    }

    fn precondition(
        &mut self,
        bytes: u64,
        bs: u32,
        iodepth: u32,
    ) -> Result<PreconditionRecord, Failure> {
        let mut spec = self.spec(RwMode::Write, 0, bs, iodepth);
        spec.io_size = Some(bytes);
        let s = self.run(spec)?;
        let o = figures(&s, None);
        Ok(PreconditionRecord {
            bytes,
            bs,
            seconds: o.figures.seconds,
            bw_bytes: o.figures.bw_bytes,
        })
    }

    fn point(&mut self, p: &Point) -> Result<PointOutcome, Failure> {
        let mut spec = self.spec(rw_of(p), p.read_pct, p.bs, p.iodepth);
        spec.numjobs = p.numjobs;
        spec.time_based = true;
        spec.runtime_ns = Some((p.seconds * 1e9) as u64);
        let before = self.pages();
        let s = self.run(spec)?;
        let wa = wa_between(before, self.pages());
        Ok(figures(&s, wa))
    }

    fn saturate(
        &mut self,
        w: &WsatPlan,
        sample: &mut dyn FnMut(&WsatSample),
    ) -> Result<WsatRun, Failure> {
        let cap = self.dev.capacity();
        let bs = w.point.bs as u64;
        let chunk = (cap / 64)
            .max(8 << 20)
            .max(self.params.write_buffer)
            .min(cap / 8)
            .max(bs)
            / bs
            * bs;
        let t0 = self.dev.now;
        let mut run = WsatRun::default();
        let mut written = 0u64;
        run.stopped_by = "data".into();
        while written < w.bytes {
            if self.stop.load(Relaxed) {
                run.stopped_by = "interrupted".into();
                break;
            }
            if (self.dev.now - t0) as f64 / 1e9 >= w.max_seconds {
                run.stopped_by = "time".into();
                break;
            }
            let mut spec = self.spec(RwMode::RandWrite, 0, w.point.bs, w.point.iodepth);
            spec.io_size = Some(chunk.min(w.bytes - written).max(bs));
            let (start, before) = (self.dev.now, self.pages());
            let s = self.run(spec)?;
            let after = self.pages();
            let ios: u64 = s.dirs.iter().flatten().map(|d| d.ios).sum();
            written += s.dirs.iter().flatten().map(|d| d.bytes).sum::<u64>();
            let dt = (self.dev.now - start) as f64 / 1e9;
            let x = WsatSample {
                t_s: (self.dev.now - t0) as f64 / 1e9,
                dt_s: dt,
                ios,
                iops: if dt > 0.0 { ios as f64 / dt } else { 0.0 },
                bytes_written: written,
                host_pages: Some(after.0 - before.0),
                nand_pages: Some(after.1 - before.1),
            };
            sample(&x);
            run.samples.push(x);
            if ios == 0 {
                break; // interrupted inside the simulation
            }
        }
        Ok(run)
    }

    fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(spec: &str) -> VirtualRunner {
        let p = Params::parse(spec).unwrap();
        VirtualRunner::new(p, Arc::new(AtomicBool::new(false)))
    }

    fn point(read_pct: u32, seconds: f64) -> Point {
        Point {
            access: Access::Random,
            read_pct,
            bs: 4096,
            iodepth: 8,
            numjobs: 1,
            seconds,
        }
    }

    #[test]
    fn each_point_is_the_fio_mode_of_its_access_and_mix() {
        let mut p = point(100, 1.0);
        assert_eq!(rw_of(&p), RwMode::RandRead);
        p.read_pct = 70;
        assert_eq!(rw_of(&p), RwMode::RandRw);
        p.access = Access::Sequential;
        p.read_pct = 0;
        assert_eq!(rw_of(&p), RwMode::Write);
    }

    #[test]
    fn a_purge_gives_the_same_figures_whatever_ran_before_it() {
        let mut r = runner("x25e,size=256m");
        r.purge().unwrap();
        let first = r.point(&point(0, 0.05)).unwrap();
        assert!(first.figures.write_iops > 0.0);
        assert!((first.figures.seconds - 0.05).abs() < 0.01);
        // Fresh: every host page programmed once.
        assert!(first.figures.wa.is_some());
        r.precondition(256 << 20, 128 << 10, 8).unwrap();
        r.purge().unwrap();
        let again = r.point(&point(0, 0.05)).unwrap();
        assert_eq!(first.figures.iops, again.figures.iops);
        assert!(r.simulated_ns > 0);
    }

    #[test]
    fn wsat_is_sampled_in_chunks_until_its_data_is_written() {
        let mut r = runner("x25e,size=256m");
        r.purge().unwrap();
        let w = WsatPlan {
            point: point(0, 1.0),
            bytes: 32 << 20,
            capacity_multiple: 0.5,
            max_bytes: 128 << 20,
            max_seconds: 3600.0,
        };
        let mut n = 0;
        let run = r.saturate(&w, &mut |_| n += 1).unwrap();
        assert_eq!(run.stopped_by, "data");
        assert_eq!(n, run.samples.len());
        // 256 MiB / 64 is under 8 MiB: 8 MiB chunks, four of them.
        assert_eq!(run.samples.len(), 4);
        let last = run.samples.last().unwrap();
        assert_eq!(last.bytes_written, 32 << 20);
        assert!(last.host_pages.unwrap() > 0);
        assert!(last.nand_pages.unwrap() >= last.host_pages.unwrap());
        // A time limit that is already past stops it before any chunk.
        let run = r
            .saturate(
                &WsatPlan {
                    max_seconds: 0.0,
                    ..w
                },
                &mut |_| {},
            )
            .unwrap();
        assert_eq!(run.stopped_by, "time");
        assert!(run.samples.is_empty());
    }

    #[test]
    fn the_model_is_there_for_flash_and_not_for_dram() {
        let m = model(&Params::parse("x25e,size=256m").unwrap()).unwrap();
        assert!(m.wa_predicted >= 1.0);
        assert!(model(&Params::parse("dram-ssd").unwrap()).is_none());
    }
}
