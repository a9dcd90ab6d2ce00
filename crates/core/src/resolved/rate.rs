//! A job's rate limits as the pacer keeps them (`rate`, `rate_iops`,
//! `rate_process`, `rate_ignore_thinktime`): nanoseconds per byte of each
//! limited direction, worked out once.

use crate::spec::JobSpec;

/// The rate limits of a job that limits some direction.
#[derive(Clone, Debug, PartialEq)]
pub struct RateConfig {
    /// Nanoseconds per byte of each direction (None: not limited). A
    /// `rate_iops` limit is a byte rate of `rate_iops ×` the direction's
    /// smallest block size; `rate` wins when both are given.
    pub ns_per_byte: [Option<f64>; 3],
    /// The job mixes reads and writes, and both have a share.
    pub mixed: bool,
    /// Each direction's smallest block size (fio's `min_bs`), at least 1.
    pub min_bs: [u64; 3],
    /// `rate_process=poisson`: per direction, the mean gap between I/Os
    /// (ns), and the seed of the draws.
    pub poisson: Option<([f64; 3], u64)>,
}

impl RateConfig {
    /// The rate limits of `spec`; None when no direction is limited.
    pub fn new(spec: &JobSpec) -> Option<Self> {
        let ns_per_byte: [Option<f64>; 3] = std::array::from_fn(|d| {
            let bps = match (spec.rate_bytes[d], spec.rate_iops[d]) {
                (Some(b), _) => b as f64,
                (None, Some(iops)) => iops as f64 * f64::from(spec.bs.for_dir(d).min().max(1)),
                (None, None) => return None,
            };
            Some(1e9 / bps)
        });
        ns_per_byte.iter().any(Option::is_some).then(|| RateConfig {
            ns_per_byte,
            mixed: spec.rw.is_mixed() && (1..100).contains(&spec.rwmixread),
            min_bs: std::array::from_fn(|d| u64::from(spec.bs.for_dir(d).min().max(1))),
            poisson: spec.sched.poisson.then(|| {
                let gap = std::array::from_fn(|d| {
                    ns_per_byte[d].map_or(0.0, |ns| ns * f64::from(spec.bs.for_dir(d).min().max(1)))
                });
                (gap, spec.randseed ^ 0x5851_f42d_4c95_7f2d | 1)
            }),
        })
    }
}
