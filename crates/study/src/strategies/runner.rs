//! Running the matrix of `ssdready strategies`: every strategy on every
//! pattern, each point one job's request handed to a [`RunFn`] (the
//! binary's adapter over the run library's `execute`, or a fake in the
//! tests), and what came back judged: a row when it ran, a skip with
//! `run`'s own reason when it could not — once for all patterns when the
//! first pattern, a read, was refused for a reason that is not the
//! pattern's — and nothing more once the stop flag is set.

use super::matrix::{self, Target};
use super::{refused_everywhere, Peak, Row, Skip, PATTERNS, RUN_FAILED, STRATEGIES};
use ssdready_core::result::RunResult;
use ssdready_run::{Failure as RunFailure, RunFn};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// Hears which point is starting: the `n`th of `total`.
pub trait Observer {
    fn starting(&mut self, n: usize, total: usize, strategy: &str, pattern: &str);
}

/// An observer that hears nothing.
pub struct Quiet;

impl Observer for Quiet {
    fn starting(&mut self, _: usize, _: usize, _: &str, _: &str) {}
}

/// Why a point's run gave no result (its text is the skip's reason).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NoResult {
    /// `run` refused the options (no io_uring, not an emulator, …).
    #[error("{0}")]
    Refused(String),
    /// The run, or one of its jobs, failed.
    #[error("{RUN_FAILED}: {0}")]
    Failed(String),
    #[error("interrupted: {0}")]
    Interrupted(String),
}

/// A point's run as a result, or the reason it gave none.
pub fn judge(ran: Result<RunResult, RunFailure>) -> Result<RunResult, NoResult> {
    match ran {
        Ok(r) => match r.jobs.iter().find_map(|j| j.first_error.clone()) {
            Some(e) => Err(NoResult::Failed(e)),
            None => Ok(r),
        },
        Err(RunFailure::BadInput(m)) => Err(NoResult::Refused(m)),
        Err(RunFailure::Runtime(m) | RunFailure::Internal(m) | RunFailure::NotStarted(m)) => {
            Err(NoResult::Failed(m))
        }
        Err(RunFailure::Interrupted(m)) => Err(NoResult::Interrupted(m)),
    }
}

/// Run every strategy on every pattern of `t`, `runtime_s` each; stops
/// early when `stop` is set.
pub fn run_all(
    t: &Target,
    runtime_s: f64,
    stop: &AtomicBool,
    run_fn: &mut RunFn<'_>,
    obs: &mut dyn Observer,
) -> (Vec<Row>, Vec<Skip>) {
    let (mut rows, mut skips) = (Vec::new(), Vec::new());
    let total = STRATEGIES.len() * PATTERNS.len();
    let mut n = 0;
    for s in &STRATEGIES {
        if let Some(reason) = matrix::not_applicable(t, s) {
            n += PATTERNS.len();
            skips.push(Skip {
                strategy: s.name.into(),
                pattern: None,
                reason,
            });
            continue;
        }
        for (i, (pattern, rw)) in PATTERNS.into_iter().enumerate() {
            n += 1;
            if stop.load(Relaxed) {
                return (rows, skips);
            }
            obs.starting(n, total, s.name, pattern);
            match judge(run_fn(&matrix::run_request(t, s, rw, runtime_s)))
                .map_err(|e| e.to_string())
            {
                Ok(r) => rows.push(Row::of(s.name, pattern, &r, None)),
                Err(_) if stop.load(Relaxed) => return (rows, skips),
                // Refused on the first pattern, a read, for a reason that
                // is not the pattern's (no io_uring, not an emulator): it
                // is refused on all of them; say it once.
                Err(reason) if i == 0 && refused_everywhere(&reason) => {
                    n += PATTERNS.len() - 1;
                    skips.push(Skip {
                        strategy: s.name.into(),
                        pattern: None,
                        reason,
                    });
                    break;
                }
                Err(reason) => skips.push(Skip {
                    strategy: s.name.into(),
                    pattern: Some(pattern.into()),
                    reason,
                }),
            }
        }
    }
    (rows, skips)
}

/// The peak per pattern: the model's on the emulator, else the best seen.
pub fn peaks(t: &Target, rows: &[Row], runtime_s: f64) -> Vec<Peak> {
    let params = match t {
        Target::Emulator { params, .. } => Some(params.as_ref()),
        Target::Real { .. } => None,
    };
    let patterns: Vec<&str> = PATTERNS.iter().map(|(p, _)| *p).collect();
    super::peaks(params, &patterns, rows, runtime_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::{DirResult, JobResult};
    use ssdready_run::RunRequest;

    /// A run of `n` 4 KiB reads or writes in a second.
    fn ran(rw: &str, iops: f64) -> RunResult {
        let d = DirResult {
            ios: iops as u64,
            bytes: iops as u64 * 4096,
            iops,
            bw_bytes_per_s: iops * 4096.0,
            ..DirResult::default()
        };
        let mut j = JobResult::default();
        if rw.contains("read") {
            j.read = Some(d);
        } else {
            j.write = Some(d);
        }
        RunResult {
            jobs: vec![j],
            ..RunResult::default()
        }
    }

    fn option<'a>(o: &'a [String], name: &str) -> Option<&'a str> {
        let value = |x: &'a String| x.strip_prefix("--")?.strip_prefix(name)?.strip_prefix('=');
        o.iter().find_map(value)
    }

    #[test]
    fn each_point_is_one_job_with_its_strategys_options_on_the_target() {
        let t = matrix::target("emu:nvme-tlc").unwrap();
        let mut seen: Vec<Vec<String>> = Vec::new();
        let mut run = |r: &RunRequest| {
            let o = r.command_line();
            let answer = ran(option(&o, "rw").unwrap(), 1000.0);
            seen.push(o);
            Ok(answer)
        };
        let mut heard = 0;
        struct Count<'a>(&'a mut usize);
        impl Observer for Count<'_> {
            fn starting(&mut self, n: usize, total: usize, _: &str, _: &str) {
                // In order; a strategy that does not apply is passed over.
                assert!(n > *self.0);
                assert_eq!(total, STRATEGIES.len() * PATTERNS.len());
                *self.0 = n;
            }
        }
        let stop = AtomicBool::new(false);
        let (rows, skips) = run_all(&t, 0.5, &stop, &mut run, &mut Count(&mut heard));
        // SQPOLL does not apply to the in-process emulator: said once.
        assert_eq!(skips.len(), 1, "{skips:?}");
        assert_eq!(
            (skips[0].strategy.as_str(), &skips[0].pattern),
            ("sqpoll", &None)
        );
        assert_eq!(rows.len(), (STRATEGIES.len() - 1) * PATTERNS.len());
        assert_eq!(heard, STRATEGIES.len() * PATTERNS.len());
        let first = &seen[0];
        assert_eq!(option(first, "filename"), Some("emu:nvme-tlc,nocopy=1"));
        assert_eq!(option(first, "rw"), Some("read"));
        assert_eq!(option(first, "numjobs"), Some("16"));
        assert_eq!(option(first, "runtime"), Some("0.5s"));
        assert!(first.iter().any(|x| x == "--completion=interrupt"));
        assert!(
            seen[4].iter().any(|x| x == "--completion=poll"),
            "{:?}",
            seen[4]
        );
    }

    #[test]
    fn a_strategy_refused_on_its_first_read_is_skipped_once_for_every_pattern() {
        let t = matrix::target("emu:nvme-tlc").unwrap();
        let mut calls = 0;
        let mut run = |r: &RunRequest| {
            let o = &r.command_line();
            calls += 1;
            if o.iter().any(|x| x == "--temporal_merge=stm") {
                return Err(RunFailure::BadInput(
                    "option 'temporal_merge': needs io_uring".into(),
                ));
            }
            if o.iter().any(|x| x == "--rw=randwrite") && o.iter().any(|x| x.contains("coalesc")) {
                return Err(RunFailure::Runtime("EIO".into()));
            }
            Ok(ran(option(o, "rw").unwrap(), 1000.0))
        };
        let stop = AtomicBool::new(false);
        let (rows, skips) = run_all(&t, 1.0, &stop, &mut run, &mut Quiet);
        let stm: Vec<_> = skips.iter().filter(|s| s.strategy == "stm+poll").collect();
        if refused_everywhere("option 'temporal_merge': needs io_uring") {
            assert_eq!(stm.len(), 1);
            assert_eq!(stm[0].pattern, None);
        } else {
            assert_eq!(stm.len(), PATTERNS.len());
        }
        assert!(rows.iter().all(|r| r.strategy != "stm+poll"));
        for s in skips
            .iter()
            .filter(|s| s.strategy != "stm+poll" && s.strategy != "sqpoll")
        {
            assert_eq!(s.pattern.as_deref(), Some("randwrite"));
            assert_eq!(s.reason, format!("{RUN_FAILED}: EIO"));
        }
        assert!(calls < STRATEGIES.len() * PATTERNS.len() + 1);
    }

    #[test]
    fn a_stop_ends_the_matrix_and_a_failed_run_under_it_is_not_a_skip() {
        let t = matrix::target("emu:nvme-tlc").unwrap();
        let stop = AtomicBool::new(false);
        let mut calls = 0;
        let mut run = |_: &RunRequest| {
            calls += 1;
            if calls == 3 {
                stop.store(true, Relaxed);
                return Err(RunFailure::Interrupted("stopped".into()));
            }
            Ok(ran("read", 10.0))
        };
        let (rows, skips) = run_all(&t, 1.0, &stop, &mut run, &mut Quiet);
        assert_eq!(rows.len(), 2);
        assert!(skips.is_empty());
    }

    /// Shin's result for 4 KiB random reads, from the matrix's own requests
    /// run in virtual time (deterministic, whatever the machine's load): on
    /// his host (5 µs per command issued, 15 µs from an interrupt to the
    /// thread, 5 µs for a sleeping thread to run again) temporal merge puts
    /// the 16 threads' requests into one command and pays the command time
    /// once, where interrupts pay it, and a wake-up, per request. Virtual
    /// time takes the completion from the device (`completion=irq` here),
    /// not from the job: async+intr is the interrupt run.
    #[test]
    fn temporal_merge_beats_interrupts_by_shins_ratio_in_virtual_time() {
        let t = matrix::target(
            "emu:dram-ssd,size=64m,host_cmd_ns=5us,irq_ns=15us,wake_ns=5us,completion=irq",
        )
        .unwrap();
        let mut run = |r: &RunRequest| {
            let mut quiet = ssdready_run::SilentObserver;
            ssdready_run::simulate(r.clone(), &mut quiet)
        };
        let stop = AtomicBool::new(false);
        let (rows, _) = run_all(&t, 0.2, &stop, &mut run, &mut Quiet);
        let row = |s: &str| {
            let found = rows
                .iter()
                .find(|r| r.strategy == s && r.pattern == "randread");
            found.unwrap_or_else(|| panic!("no {s} randread in {rows:?}"))
        };
        let (stm, intr) = (row("stm+poll"), row(super::super::BASELINE));
        let vs = super::super::Tradeoff::of(stm, &rows).unwrap();
        assert!(
            vs.iops >= 1.5,
            "stm {} vs async+intr {} IOPS",
            stm.summary.iops,
            intr.summary.iops
        );
        let m = stm.merge_mean.unwrap();
        assert!(m > 1.5, "requests per merged command: {m}");
        assert!(intr.merge_mean.is_none());
    }

    #[test]
    fn failures_are_judged_as_runs_reasons() {
        assert_eq!(
            judge(Err(RunFailure::BadInput("no io_uring".into())))
                .unwrap_err()
                .to_string(),
            "no io_uring"
        );
        assert_eq!(
            judge(Err(RunFailure::Internal("panic".into())))
                .unwrap_err()
                .to_string(),
            format!("{RUN_FAILED}: panic")
        );
        assert_eq!(
            judge(Err(RunFailure::Interrupted("signal".into())))
                .unwrap_err()
                .to_string(),
            "interrupted: signal"
        );
        let mut r = ran("read", 1.0);
        r.jobs[0].first_error = Some("EIO".into());
        assert_eq!(
            judge(Ok(r)).unwrap_err().to_string(),
            format!("{RUN_FAILED}: EIO")
        );
    }
}
