//! The emulated drive's transport: its figures are the diagnosis's
//! (`ssdready_diagnosis::transport`); here, those figures from the
//! daemon's own statistics.

pub use ssdready_diagnosis::transport::*;
use ssdready_measured::summary::Transport;

/// The figures of a daemon's statistics `s` (over its life, or one run's
/// difference) for a drive served over `name`.
pub fn of(name: String, s: &ssdready_emu::kernel::stamps::Summary) -> Transport {
    Transport {
        name,
        ios: s.ios,
        device_ns_mean: s.device_ns_mean,
        late_ns_mean: s.late_ns_mean,
        late_ns_max: s.late_ns_max,
        reply_ns_mean: s.reply_ns_mean,
        daemon_cpu_ns_per_io: s.daemon_cpu_ns_per_io,
        threads: s.threads,
        spin_ns_per_io: s.spin_ns as f64 / s.ios.max(1) as f64,
        wait_ns_per_io: s.daemon_wait_ns.map(|w| w as f64 / s.ios.max(1) as f64),
        wait_pct: s.daemon_wait_pct(),
    }
}
