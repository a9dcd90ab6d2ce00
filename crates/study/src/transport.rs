//! The emulated drive's transport, kept apart from the platform: when the
//! study's target is the built-in drive behind the kernel, the daemon
//! serving it stamps each request (arrival, modelled completion, reply) and
//! reports, over the study, the device time per I/O, its own lateness
//! against the model, the reply's cost and its threads' CPU. Lateness above
//! a few percent of device time means the daemon, not the kernel, set part
//! of what the study shows as the platform's time.

use serde::{Deserialize, Serialize};

/// Lateness, percent of device time, above which the transport is named.
pub const BOUND_PCT: f64 = 3.0;

/// The daemon's figures over the study.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Transport {
    /// `fuse+loop` or `ublk`.
    pub name: String,
    pub ios: u64,
    /// Modelled completion − arrival: what the device took.
    pub device_ns_mean: f64,
    /// Reply start − modelled completion: the emulator's own error.
    pub late_ns_mean: f64,
    pub late_ns_max: u64,
    /// The reply's system call (on FUSE it runs the kernel's completion).
    pub reply_ns_mean: f64,
    /// The daemon threads' CPU per I/O (not counted as the platform's).
    pub daemon_cpu_ns_per_io: f64,
}

impl Transport {
    /// Lateness as a percent of device time (None without device time).
    pub fn late_pct(&self) -> Option<f64> {
        (self.device_ns_mean > 0.0).then(|| 100.0 * self.late_ns_mean / self.device_ns_mean)
    }

    /// Whether the daemon failed to keep the model's timing.
    pub fn bound(&self) -> bool {
        self.late_pct().is_some_and(|p| p > BOUND_PCT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_above_three_percent_of_device_time_is_transport_bound() {
        let t = |late| Transport {
            device_ns_mean: 100_000.0,
            late_ns_mean: late,
            ..Default::default()
        };
        assert_eq!(t(2_000.0).late_pct(), Some(2.0));
        assert!(!t(3_000.0).bound());
        assert!(t(3_100.0).bound());
        assert_eq!(Transport::default().late_pct(), None);
    }
}
