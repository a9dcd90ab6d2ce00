//! The queue-depth curve's point as study.json keeps it ([`CurvePoint`]:
//! `figures.qd_curve`, `figures.peak`, the platform's curve) and the median
//! that combines a point's repeats. Plain data and arithmetic: the
//! diagnosis derives the curve from the runs, the history reads it back
//! from a study document, the report draws it.

use serde::{Deserialize, Serialize};

/// One queue depth of the curve.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    pub qd: u32,
    pub iops: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: u64,
    /// Emulator: the model alone at this depth (virtual time).
    pub device_iops: Option<f64>,
    pub device_lat_mean_ns: Option<f64>,
    pub runs: Vec<String>,
    /// Kernel drive: the mean latency less the drive's transport (its
    /// calibration at this depth), and that calibration's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub less_transport_lat_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub less_transport_err_ns: Option<f64>,
    /// Of the mean, the time in the block layer and below, from the
    /// device's own counters (`/sys/block/X/stat`: time per request), when
    /// the device counted the same I/Os as the study (within 2 %); the rest
    /// of the mean is above the block layer. The median over the repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_ns: Option<f64>,
    /// The time the CPU quota stopped the study's group, per I/O (the
    /// group's `cpu.stat` throttled time over the I/Os), where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_stopped_ns: Option<f64>,
}

/// The mean of a list (0 for none).
pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The median of a list (None when empty).
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
}
