//! The study's runs through the platform: each point's options go through
//! `run`'s option table and run path (the run library's `execute`), so a
//! study writes only where `run` would, after the same checks. The scheduler sweep switches
//! the device's I/O scheduler through sysfs and restores the original
//! before any other run, at the end, and on Ctrl-C.

use ssdready_emu::kernel::stamps::Summary;
use ssdready_run::Failure as RunFailure;
use ssdready_study::driver::{Failure, Outcome, Runner};
use ssdready_study::model::TargetProfile;
use ssdready_study::plan::Workload;
use ssdready_study::summary::PointSummary;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// A device's scheduler as it was before the study changed it.
struct Switched {
    device: String,
    original: String,
}

/// Runs points with the run library.
pub struct RealRunner {
    stop: Arc<AtomicBool>,
    /// `study --allow-destructive`: each run gets it too, so the writes the
    /// plan holds (detection judged the targets with the same flag) run.
    allow_destructive: bool,
    targets: Vec<TargetProfile>,
    switched: Option<Switched>,
    /// The emulated drive's attachment when the target is one (its daemon's
    /// figures are read around each run).
    drive: Option<String>,
    /// What the runner did besides running (scheduler switches).
    pub notes: Vec<String>,
}

fn sched_path(dev: &str) -> String {
    format!("/sys/block/{dev}/queue/scheduler")
}

impl RealRunner {
    pub fn new(stop: Arc<AtomicBool>, targets: &[TargetProfile], allow_destructive: bool) -> Self {
        RealRunner {
            stop,
            allow_destructive,
            targets: targets.to_vec(),
            switched: None,
            drive: targets
                .first()
                .and_then(|t| ssdready_emu::kernel::daemon::record_of(&t.spec))
                .map(|r| r.name),
            notes: Vec::new(),
        }
    }

    /// The daemon's figures over one run: its stats file after the run
    /// (once the daemon has rewritten it) less the one before.
    fn transport_between(
        &self,
        before: Option<&Summary>,
    ) -> Option<ssdready_study::transport::Transport> {
        let name = self.drive.as_deref()?;
        let before = before?;
        std::thread::sleep(std::time::Duration::from_millis(
            ssdready_emu::kernel::daemon::STATS_EVERY_MS + 50,
        ));
        let after = ssdready_emu::kernel::daemon::stats(name)?;
        let d = after.since(before);
        let r = ssdready_emu::kernel::daemon::record_of(name)?;
        Some(ssdready_study::transport::Transport {
            name: r.transport,
            ios: d.ios,
            device_ns_mean: d.device_ns_mean,
            late_ns_mean: d.late_ns_mean,
            late_ns_max: d.late_ns_max,
            reply_ns_mean: d.reply_ns_mean,
            daemon_cpu_ns_per_io: d.daemon_cpu_ns_per_io,
        })
    }

    fn set_scheduler(&mut self, w: &Workload) -> Result<(), String> {
        let Some(want) = &w.scheduler else {
            self.restore();
            return Ok(());
        };
        let dev = self
            .targets
            .iter()
            .find(|t| w.targets.contains(&t.spec))
            .and_then(|t| t.device.clone())
            .ok_or("the target has no block device")?;
        let path = sched_path(&dev);
        if self.switched.is_none() {
            let now = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
            let original = ssdready_probe::platform::active_scheduler(&now).unwrap_or_default();
            self.switched = Some(Switched {
                device: dev.clone(),
                original: original.clone(),
            });
            self.notes.push(format!(
                "switched {dev}'s I/O scheduler for the scheduler sweep; restored to {original} after it"
            ));
        }
        std::fs::write(&path, want).map_err(|e| format!("setting {path} to {want}: {e}"))
    }

    /// Put the original scheduler back, if it was changed.
    pub fn restore(&mut self) {
        if let Some(s) = self.switched.take() {
            let path = sched_path(&s.device);
            if let Err(e) = std::fs::write(&path, &s.original) {
                eprintln!(
                    "ssdready: warning: could not restore {path} to {}: {e}",
                    s.original
                );
            }
        }
    }
}

impl Drop for RealRunner {
    fn drop(&mut self) {
        self.restore();
    }
}

impl Runner for RealRunner {
    fn run(&mut self, w: &Workload, options: &[String]) -> Result<Outcome, Failure> {
        self.set_scheduler(w).map_err(Failure::NotApplicable)?;
        let before = self
            .drive
            .as_deref()
            .and_then(ssdready_emu::kernel::daemon::stats);
        let ran = crate::progress::run_options(options, self.stop.clone(), self.allow_destructive);
        match ran {
            Ok(r) => {
                if let Some(j) = r.jobs.iter().find(|j| j.first_error.is_some()) {
                    return Err(Failure::Failed(format!(
                        "job '{}': {}",
                        j.name,
                        j.first_error.clone().unwrap_or_default()
                    )));
                }
                let mut summary = PointSummary::from_result(&r);
                summary.transport = self.transport_between(before.as_ref());
                Ok(Outcome {
                    summary,
                    result: Some(r),
                    clock: "real".into(),
                })
            }
            Err(RunFailure::BadInput(m)) => Err(Failure::NotApplicable(m)),
            Err(RunFailure::Runtime(m) | RunFailure::Internal(m)) => Err(Failure::Failed(m)),
            // The study sees the stop flag itself and keeps what ran.
            Err(RunFailure::Interrupted(m)) => Err(Failure::Failed(m)),
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }
}
