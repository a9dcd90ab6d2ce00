//! Characterization of a block device or file in real time: every step is
//! a normal `ssdready run` (the run library's `execute`, its options through
//! the option table, exactly as the study runs its points), so writes go through the same safety checks:
//! a device in use is refused unless `--allow-destructive`.
//!
//! The purge is a TRIM (discard) of the whole device, with `--purge` only;
//! PTS prefers a secure erase or format, which ssdready does not issue. A
//! file cannot be purged: its file system places its blocks.

use super::virt::rw_of;
use ssdready_characterize::driver::{Failure, PointOutcome, Runner, WsatRun};
use ssdready_characterize::model::*;
use ssdready_characterize::plan::{Point, WsatPlan};
use ssdready_core::result::RunResult;
use ssdready_core::stats::WorkerStats;
use ssdready_run::Failure as RunFailure;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// A real target and how to run on it.
pub struct RealRunner {
    pub target: String,
    /// Bytes of the target the tests cover (from offset 0).
    pub capacity: u64,
    pub block_device: bool,
    /// The device takes discards.
    pub discard: bool,
    pub purge_asked: bool,
    pub allow_destructive: bool,
    pub engine: String,
    pub quiet: bool,
    pub stop: Arc<AtomicBool>,
}

impl RealRunner {
    /// Run one job with `options` after the common ones.
    fn run(&self, options: &[String]) -> Result<RunResult, Failure> {
        let mut all: Vec<String> = Vec::new();
        if self.quiet {
            all.push("--quiet".into());
        }
        all.extend([
            "--name=characterize".to_string(),
            format!("--filename={}", self.target),
            format!("--size={}", self.capacity),
            "--direct=1".into(),
            "--randrepeat=0".into(),
            "--group_reporting".into(),
        ]);
        all.extend_from_slice(options);
        let ran = crate::progress::run_options(&all, self.stop.clone(), self.allow_destructive);
        let r = match ran {
            Ok(r) => r,
            Err(RunFailure::BadInput(m)) => return Err(Failure::NotApplicable(m)),
            Err(RunFailure::Runtime(m) | RunFailure::Internal(m) | RunFailure::Interrupted(m)) => {
                return Err(Failure::Failed(m))
            }
        };
        if let Some(j) = r.jobs.iter().find(|j| j.first_error.is_some()) {
            return Err(Failure::Failed(j.first_error.clone().unwrap_or_default()));
        }
        if let Some(f) = &r.failure {
            return Err(Failure::Failed(f.clone()));
        }
        Ok(r)
    }

    fn merged(r: &RunResult) -> WorkerStats {
        let mut m = WorkerStats::default();
        for j in &r.jobs {
            m.merge(&j.raw);
            m.measured_ns = m.measured_ns.max(j.raw.measured_ns);
        }
        m
    }
}

impl Runner for RealRunner {
    fn purge(&mut self) -> Result<PurgeRecord, Failure> {
        let not = |how: &str| {
            Ok(PurgeRecord {
                done: false,
                how: how.into(),
            })
        };
        if !self.purge_asked {
            return not(
                "not purged (--purge not given): the device's history (free blocks, its mapping) \
                 shapes the first rounds and the write cliff; PTS asks for a purge",
            );
        }
        if !self.block_device {
            return not("a file cannot be purged (its file system places its blocks)");
        }
        if !self.discard {
            return not(
                "the device does not take discards (queue/discard_max_bytes is 0): not purged",
            );
        }
        // The largest power of two up to 256 MiB that divides the capacity.
        let bs = 1u64 << self.capacity.trailing_zeros().min(28);
        self.run(&[
            "--rw=trim".into(),
            format!("--bs={bs}"),
            "--ioengine=psync".into(),
            "--direct=1".into(),
        ])
        .map_err(|e| Failure::Failed(format!("TRIM of the whole device: {e}")))?;
        Ok(PurgeRecord {
            done: true,
            how: format!(
                "TRIM (discard) of the whole device in {} blocks; PTS prefers a secure erase or \
                 format, which ssdready does not issue",
                ssdready_core::units::fmt_bytes(bs as f64)
            ),
        })
    }

    fn precondition(
        &mut self,
        bytes: u64,
        bs: u32,
        iodepth: u32,
    ) -> Result<PreconditionRecord, Failure> {
        let r = self.run(&[
            "--rw=write".into(),
            format!("--bs={bs}"),
            format!("--iodepth={iodepth}"),
            format!("--ioengine={}", self.engine),
            format!("--io_size={bytes}"),
        ])?;
        let o = super::virt::figures(&Self::merged(&r), None);
        Ok(PreconditionRecord {
            bytes,
            bs,
            seconds: o.figures.seconds,
            bw_bytes: o.figures.bw_bytes,
        })
    }

    fn point(&mut self, p: &Point) -> Result<PointOutcome, Failure> {
        let r = self.run(&[
            format!("--rw={}", rw_of(p).name()),
            format!("--rwmixread={}", p.read_pct),
            format!("--bs={}", p.bs),
            format!("--iodepth={}", p.iodepth),
            format!("--numjobs={}", p.numjobs),
            format!("--ioengine={}", self.engine),
            format!("--runtime={}ms", (p.seconds * 1000.0).round() as u64),
            "--time_based".into(),
            "--norandommap".into(),
        ])?;
        Ok(super::virt::figures(&Self::merged(&r), None))
    }

    fn saturate(
        &mut self,
        w: &WsatPlan,
        sample: &mut dyn FnMut(&WsatSample),
    ) -> Result<WsatRun, Failure> {
        let r = self.run(&[
            "--rw=randwrite".into(),
            format!("--bs={}", w.point.bs),
            format!("--iodepth={}", w.point.iodepth),
            format!("--ioengine={}", self.engine),
            format!("--io_size={}", w.bytes),
            format!("--runtime={}s", w.max_seconds.ceil() as u64),
            "--norandommap".into(),
        ])?;
        let m = Self::merged(&r);
        let series = m.dirs[1]
            .as_ref()
            .map(|d| d.series.clone())
            .unwrap_or_default();
        let secs = m.measured_ns as f64 / 1e9;
        let mut run = WsatRun::default();
        let mut written = 0u64;
        let mut series = series;
        // The last second is cut where the run ended; under half a second
        // it joins the one before (a sliver of a second is noise).
        let last_dt = secs - (series.len().max(1) - 1) as f64;
        if series.len() > 1 && last_dt < 0.5 {
            let tail = series.pop().expect("two seconds");
            let prev = series.last_mut().expect("one second");
            prev.ios += tail.ios;
            prev.bytes += tail.bytes;
        }
        let n = series.len();
        for (i, s) in series.iter().enumerate() {
            let dt = if i + 1 == n {
                (secs - i as f64).max(1e-3)
            } else {
                1.0
            };
            written += s.bytes;
            let x = WsatSample {
                t_s: i as f64 + dt,
                dt_s: dt,
                ios: s.ios,
                iops: s.ios as f64 / dt,
                bytes_written: written,
                host_pages: None,
                nand_pages: None,
            };
            sample(&x);
            run.samples.push(x);
        }
        run.stopped_by = if self.stop.load(Relaxed) {
            "interrupted".into()
        } else if written >= w.bytes {
            "data".into()
        } else {
            "time".into()
        };
        Ok(run)
    }

    fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
}
