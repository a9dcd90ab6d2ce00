//! The drive's transport, measured to be taken out of a study's figures:
//! what a zero-time drive served over the same transport as the studied
//! drive costs above a loop device over `/dev/shm`, at each queue depth
//! (the measuring and the file it is kept in are the study's:
//! `ssdready_study::calibrate`). Here: the calibration as data, and how it
//! is taken out of the QD curve and the QD 1 platform share.

pub use crate::zero_drive::*;

/// The queue depths of a study's queue-depth sweep.
pub fn depths(runs: &[ssdready_measured::record::RunRecord]) -> Vec<u32> {
    crate::figures::curve::qd_sweep_depths(runs)
}

/// The engine of the queue-depth sweep's runs (io_uring, the study's
/// default, where none is named): the one the transport is read with.
pub fn engine(runs: &[ssdready_measured::record::RunRecord]) -> String {
    runs.iter()
        .find(|r| r.sweep == "qd")
        .and_then(|r| r.workload.engine.clone())
        .unwrap_or_else(|| "io_uring".into())
}

/// Take the transport out of the figures: each depth's latency less the
/// transport's (with its error), and the QD 1 platform share from that
/// latency less the daemon's lateness behind the model (the emulator's own
/// error, from its stamps over the QD 1 runs), with its error: the
/// calibration's and half the spread of the QD 1 `runs`' means.
pub fn take_out(
    f: &mut crate::figures::Figures,
    cal: &Calibration,
    runs: &[ssdready_measured::record::RunRecord],
) {
    for c in f.qd_curve.iter_mut() {
        if let Some(p) = cal.at(c.qd) {
            // A transport measured below nothing (the zero-time drive
            // faster than the shm loop: a loaded machine's noise) takes
            // nothing out; its spread still says how far to trust it.
            c.less_transport_lat_ns = Some((c.lat_mean_ns - p.lat_ns.max(0.0)).max(0.0));
            c.less_transport_err_ns = Some(p.lat_err_ns);
        }
    }
    f.calibration = Some(cal.clone());
    let Some(c) = f.qd_curve.iter().find(|c| c.qd == 1) else {
        return;
    };
    let (Some(less), Some(dev), Some(p)) =
        (c.less_transport_lat_ns, c.device_lat_mean_ns, cal.at(1))
    else {
        return;
    };
    // A QD 1 transport lost in its own spread would take an arbitrary
    // part of the platform out: the share keeps the daemon's own stamps
    // (its lateness and reply) and says why.
    if p.noise() {
        if let Some(s) = f.platform_share_qd1.as_mut() {
            s.source.push_str(&format!(
                "; the calibration at QD 1 was noise ({:.1} µs ± {:.1} µs), not taken out",
                p.lat_ns / 1e3,
                p.lat_err_ns / 1e3
            ));
        }
        return;
    }
    let late = f.transport_qd1.as_ref().map_or(0.0, |t| t.late_ns_mean);
    let outside_daemon = outside_daemon(c.lat_mean_ns, f.transport_qd1.as_ref());
    let residual = less - late - dev;
    let platform = residual.max(0.0);
    let means: Vec<f64> = runs
        .iter()
        .filter(|r| c.runs.contains(&r.id) && r.summary.ios > 0)
        .map(|r| r.summary.lat_mean_ns)
        .collect();
    let err_ns = p.lat_err_ns.hypot(half_spread(&means));
    let total = platform + dev;
    if total <= 0.0 {
        return;
    }
    let us = |ns: f64| format!("{:.1} µs", ns / 1e3);
    f.platform_share_qd1 = Some(crate::figures::PlatformShare {
        pct: 100.0 * platform / total,
        total_ns: total,
        platform_ns: platform,
        device_ns: dev,
        parts: vec![
            (
                "the platform: system call, block layer, driver".into(),
                platform,
                0.0,
            ),
            ("device (the model)".into(), dev, 0.0),
        ],
        source: format!(
            "emulator model behind the kernel: the QD 1 mean less the drive's transport ({} ± {}, \
             measured with a zero-time drive) and the daemon's lateness ({}), against the same I/Os \
             on the model alone in virtual time",
            us(p.lat_ns.max(0.0)),
            us(p.lat_err_ns),
            us(late)
        ),
        runs: c.runs.clone(),
        err_ns: Some(err_ns),
        overcount_ns: (-residual > err_ns).then_some(-residual),
        outside_daemon_ns: outside_daemon,
        unaccounted_ns: None,
        joined_pct: None,
        paced_ns: None,
    });
}

/// The QD 1 mean less what the daemon's stamps account for, from receipt
/// to reply (device time, lateness, reply): the kernel's path and the
/// transport's, both ways. None without the daemon's device time.
fn outside_daemon(mean_ns: f64, t: Option<&ssdready_measured::summary::Transport>) -> Option<f64> {
    let t = t.filter(|t| t.device_ns_mean > 0.0)?;
    Some((mean_ns - t.device_ns_mean - t.late_ns_mean - t.reply_ns_mean).max(0.0))
}
