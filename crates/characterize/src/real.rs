//! Characterization of a block device or file in real time: every step is
//! a normal `ssdready run` (the run library's `execute`, its options through
//! the option table, exactly as the study runs its points), so writes go
//! through the same safety checks: a device in use is refused unless
//! `--allow-destructive`.
//!
//! The runner plans each step as the request of one job and hands it to a
//! [`RunFn`] — the binary's adapter over `ssdready_run::execute`, or a
//! fake in the tests — then judges what came back: a refused job is a
//! point that does not apply here, any other failure fails the step.
//!
//! The purge is a TRIM (discard) of the whole device, with `--purge` only;
//! PTS prefers a secure erase or format, which ssdready does not issue. A
//! file cannot be purged: its file system places its blocks.

use crate::driver::{Failure, PointOutcome, Runner, WsatRun};
use crate::model::*;
use crate::plan::{Point, WsatPlan};
use crate::virt::{figures, rw_of};
use ssdready_core::result::RunResult;
use ssdready_core::stats::WorkerStats;
use ssdready_run::{Failure as RunFailure, RunFn, RunRequest};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// The real target the tests run on.
#[derive(Clone, Debug, Default)]
pub struct RealTarget {
    pub path: String,
    /// Bytes of the target the tests cover (from offset 0).
    pub capacity: u64,
    pub block_device: bool,
    /// The device takes discards.
    pub discard: bool,
}

/// A real target and how to run on it.
pub struct RealRunner<'a> {
    pub target: RealTarget,
    /// `--purge` was given.
    pub purge_asked: bool,
    /// io_uring, libaio or psync.
    pub engine: String,
    /// No progress display during the runs.
    pub quiet: bool,
    pub stop: Arc<AtomicBool>,
    run_fn: Box<RunFn<'a>>,
}

impl<'a> RealRunner<'a> {
    /// A runner whose jobs `run_fn` runs.
    pub fn new(
        target: RealTarget,
        purge_asked: bool,
        engine: &str,
        quiet: bool,
        stop: Arc<AtomicBool>,
        run_fn: Box<RunFn<'a>>,
    ) -> Self {
        RealRunner {
            target,
            purge_asked,
            engine: engine.into(),
            quiet,
            stop,
            run_fn,
        }
    }

    /// A job with the options every step has; the step adds its own.
    fn job(&self) -> RunRequest {
        let mut r = RunRequest {
            quiet: self.quiet,
            ..Default::default()
        };
        r.job("characterize")
            .set("filename", &self.target.path)
            .set("size", self.target.capacity)
            .set("direct", 1)
            .set("randrepeat", 0)
            .flag("group_reporting");
        r
    }

    /// Run one step's job.
    fn run(&mut self, job: &RunRequest) -> Result<RunResult, Failure> {
        judge((self.run_fn)(job))
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

/// A run's outcome as a step's: refused is not applicable here; any other
/// failure, an I/O error of a job, or a run that stopped on a failure
/// fails the step.
fn judge(ran: Result<RunResult, RunFailure>) -> Result<RunResult, Failure> {
    let r = match ran {
        Ok(r) => r,
        Err(RunFailure::BadInput(m)) => return Err(Failure::NotApplicable(m)),
        Err(
            RunFailure::Runtime(m)
            | RunFailure::Internal(m)
            | RunFailure::Interrupted(m)
            | RunFailure::NotStarted(m),
        ) => return Err(Failure::Failed(m)),
    };
    if let Some(j) = r.jobs.iter().find(|j| j.first_error.is_some()) {
        return Err(Failure::Failed(j.first_error.clone().unwrap_or_default()));
    }
    if let Some(f) = &r.failure {
        return Err(Failure::Failed(f.clone()));
    }
    Ok(r)
}

/// WSAT's samples from the per-second series of its one run, `secs` long.
/// The last second is cut where the run ended; under half a second it
/// joins the one before (a sliver of a second is noise).
fn wsat_samples(mut series: Vec<ssdready_core::stats::SecSample>, secs: f64) -> Vec<WsatSample> {
    let last_dt = secs - (series.len().max(1) - 1) as f64;
    if series.len() > 1 && last_dt < 0.5 {
        let tail = series.pop().expect("two seconds");
        let prev = series.last_mut().expect("one second");
        prev.ios += tail.ios;
        prev.bytes += tail.bytes;
    }
    let n = series.len();
    let mut written = 0u64;
    let mut out = Vec::with_capacity(n);
    for (i, s) in series.iter().enumerate() {
        let dt = if i + 1 == n {
            (secs - i as f64).max(1e-3)
        } else {
            1.0
        };
        written += s.bytes;
        out.push(WsatSample {
            t_s: i as f64 + dt,
            dt_s: dt,
            ios: s.ios,
            iops: s.ios as f64 / dt,
            bytes_written: written,
            host_pages: None,
            nand_pages: None,
        });
    }
    out
}

impl Runner for RealRunner<'_> {
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
        if !self.target.block_device {
            return not("a file cannot be purged (its file system places its blocks)");
        }
        if !self.target.discard {
            return not(
                "the device does not take discards (queue/discard_max_bytes is 0): not purged",
            );
        }
        // The largest power of two up to 256 MiB that divides the capacity.
        let bs = 1u64 << self.target.capacity.trailing_zeros().min(28);
        let mut job = self.job();
        job.set("rw", "trim")
            .set("bs", bs)
            .set("ioengine", "psync")
            .set("direct", 1);
        self.run(&job)
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
        let mut job = self.job();
        job.set("rw", "write")
            .set("bs", bs)
            .set("iodepth", iodepth)
            .set("ioengine", &self.engine)
            .set("io_size", bytes);
        let r = self.run(&job)?;
        let o = figures(&Self::merged(&r), None);
        Ok(PreconditionRecord {
            bytes,
            bs,
            seconds: o.figures.seconds,
            bw_bytes: o.figures.bw_bytes,
        })
    }

    fn point(&mut self, p: &Point) -> Result<PointOutcome, Failure> {
        let mut job = self.job();
        job.set("rw", rw_of(p).name())
            .set("rwmixread", p.read_pct)
            .set("bs", p.bs)
            .set("iodepth", p.iodepth)
            .set("numjobs", p.numjobs)
            .set("ioengine", &self.engine)
            .set(
                "runtime",
                format_args!("{}ms", (p.seconds * 1000.0).round() as u64),
            )
            .flag("time_based")
            .flag("norandommap");
        let r = self.run(&job)?;
        Ok(figures(&Self::merged(&r), None))
    }

    fn saturate(
        &mut self,
        w: &WsatPlan,
        sample: &mut dyn FnMut(&WsatSample),
    ) -> Result<WsatRun, Failure> {
        let mut job = self.job();
        job.set("rw", "randwrite")
            .set("bs", w.point.bs)
            .set("iodepth", w.point.iodepth)
            .set("ioengine", &self.engine)
            .set("io_size", w.bytes)
            .set("runtime", format_args!("{}s", w.max_seconds.ceil() as u64))
            .flag("norandommap");
        let r = self.run(&job)?;
        let m = Self::merged(&r);
        let series = m.dirs[1]
            .as_ref()
            .map(|d| d.series.clone())
            .unwrap_or_default();
        let mut run = WsatRun::default();
        for x in wsat_samples(series, m.measured_ns as f64 / 1e9) {
            sample(&x);
            run.samples.push(x);
        }
        let written = run.samples.last().map_or(0, |x| x.bytes_written);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Access;
    use ssdready_core::result::JobResult;
    use ssdready_core::stats::{DirStats, SecSample};
    use std::cell::RefCell;
    use std::rc::Rc;

    type Calls = Rc<RefCell<Vec<Vec<String>>>>;

    /// A result whose one job wrote `per_s` bytes in 4 KiB I/Os each
    /// second for `secs` seconds (the last one cut where it ended).
    fn wrote(per_s: &[u64], secs: f64) -> RunResult {
        let mut d = DirStats::default();
        for &b in per_s {
            d.series.push(SecSample {
                ios: b / 4096,
                bytes: b,
                ..SecSample::default()
            });
            d.ios += b / 4096;
            d.bytes += b;
        }
        let mut j = JobResult::default();
        j.raw.dirs[1] = Some(Box::new(d));
        j.raw.measured_ns = (secs * 1e9) as u64;
        RunResult {
            jobs: vec![j],
            ..RunResult::default()
        }
    }

    /// A runner whose jobs are answered by `answer`, recording each job's
    /// options.
    fn runner<'a>(
        target: RealTarget,
        purge: bool,
        mut answer: impl FnMut(&[String]) -> Result<RunResult, RunFailure> + 'a,
    ) -> (RealRunner<'a>, Calls) {
        let calls: Calls = Rc::default();
        let seen = calls.clone();
        let run = Box::new(move |r: &RunRequest| {
            let o = r.command_line();
            let answer = answer(&o);
            seen.borrow_mut().push(o);
            answer
        });
        let stop = Arc::new(AtomicBool::new(false));
        (
            RealRunner::new(target, purge, "libaio", true, stop, run),
            calls,
        )
    }

    fn device(discard: bool) -> RealTarget {
        RealTarget {
            path: "/dev/sdz".into(),
            capacity: 3 << 30,
            block_device: true,
            discard,
        }
    }

    #[test]
    fn a_purge_runs_only_when_asked_on_a_block_device_that_takes_discards() {
        for (target, asked, why) in [
            (device(true), false, "--purge not given"),
            (device(false), true, "does not take discards"),
            (
                RealTarget {
                    block_device: false,
                    ..device(true)
                },
                true,
                "a file cannot be purged",
            ),
        ] {
            let (mut r, calls) = runner(target, asked, |_| Ok(RunResult::default()));
            let p = r.purge().unwrap();
            assert!(!p.done && p.how.contains(why), "{}", p.how);
            assert!(calls.borrow().is_empty(), "nothing runs when not purging");
        }
        let (mut r, calls) = runner(device(true), true, |_| Ok(RunResult::default()));
        let p = r.purge().unwrap();
        assert!(p.done, "{}", p.how);
        let calls = calls.borrow();
        assert_eq!(calls.len(), 1);
        let o = &calls[0];
        // 3 GiB: the largest power of two that divides it, up to 256 MiB.
        for want in [
            "--rw=trim",
            "--bs=268435456",
            "--filename=/dev/sdz",
            "--quiet",
        ] {
            assert!(o.iter().any(|x| x == want), "{want} missing from {o:?}");
        }
    }

    #[test]
    fn a_point_is_one_time_based_job_with_the_points_options() {
        let (mut r, calls) = runner(device(true), false, |_| Ok(wrote(&[4096 * 1000; 2], 2.0)));
        let p = Point {
            access: Access::Random,
            read_pct: 65,
            bs: 8192,
            iodepth: 32,
            numjobs: 1,
            seconds: 1.5,
        };
        let o = r.point(&p).unwrap();
        assert_eq!(o.figures.write_iops, 1000.0);
        assert_eq!(o.figures.seconds, 2.0);
        let calls = calls.borrow();
        let want = [
            "--name=characterize",
            "--size=3221225472",
            "--direct=1",
            "--rw=randrw",
            "--rwmixread=65",
            "--bs=8192",
            "--iodepth=32",
            "--ioengine=libaio",
            "--runtime=1500ms",
            "--time_based",
            "--norandommap",
        ];
        for w in want {
            assert!(
                calls[0].iter().any(|x| x == w),
                "{w} missing: {:?}",
                calls[0]
            );
        }
    }

    #[test]
    fn a_refused_job_is_not_applicable_and_an_io_error_fails_the_step() {
        let (mut r, _) = runner(device(true), false, |_| {
            Err(RunFailure::BadInput("bs below the logical block".into()))
        });
        let e = r.precondition(1 << 20, 4096, 32).unwrap_err();
        assert_eq!(
            e,
            Failure::NotApplicable("bs below the logical block".into())
        );
        let (mut r, _) = runner(device(true), false, |_| {
            let mut res = wrote(&[4096], 1.0);
            res.jobs[0].first_error = Some("EIO at offset 0".into());
            Ok(res)
        });
        let e = r.precondition(1 << 20, 4096, 32).unwrap_err();
        assert_eq!(e, Failure::Failed("EIO at offset 0".into()));
        let (mut r, _) = runner(device(true), false, |_| {
            Err(RunFailure::Runtime("the device went away".into()))
        });
        assert!(r.purge().is_ok(), "not asked: nothing runs");
        r.purge_asked = true;
        match r.purge() {
            Err(Failure::Failed(m)) => assert!(m.starts_with("TRIM of the whole device"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn wsat_samples_each_second_and_says_what_stopped_it() {
        let mib = 1 << 20;
        let plan = WsatPlan {
            point: Point {
                access: Access::Random,
                read_pct: 0,
                bs: 4096,
                iodepth: 32,
                numjobs: 1,
                seconds: 1.0,
            },
            bytes: 10 * mib,
            capacity_multiple: 1.0,
            max_bytes: 40 * mib,
            max_seconds: 60.0,
        };
        // Three seconds and a sliver: the sliver joins the third second.
        let (mut r, calls) = runner(device(true), false, move |_| {
            Ok(wrote(&[2 * mib, 2 * mib, 2 * mib, mib], 3.2))
        });
        let mut seen = 0;
        let run = r.saturate(&plan, &mut |_| seen += 1).unwrap();
        assert_eq!(seen, 3);
        assert_eq!(run.samples.len(), 3);
        let last = run.samples.last().unwrap();
        assert!((last.dt_s - 1.2).abs() < 1e-9, "{}", last.dt_s);
        assert_eq!(last.bytes_written, 7 * mib);
        assert_eq!(run.stopped_by, "time", "7 of 10 MiB written");
        assert!(calls.borrow()[0].iter().any(|x| x == "--io_size=10485760"));
        assert!(calls.borrow()[0].iter().any(|x| x == "--runtime=60s"));

        let (mut r, _) = runner(device(true), false, move |_| {
            Ok(wrote(&[6 * mib, 4 * mib], 1.7))
        });
        let run = r.saturate(&plan, &mut |_| {}).unwrap();
        assert_eq!(run.stopped_by, "data");
        assert!((run.samples[1].dt_s - 0.7).abs() < 1e-9);
        r.stop.store(true, Relaxed);
        let run = r.saturate(&plan, &mut |_| {}).unwrap();
        assert_eq!(run.stopped_by, "interrupted");
        assert!(r.stopped());
    }
}
