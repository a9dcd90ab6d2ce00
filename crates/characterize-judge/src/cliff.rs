//! The write cliff in a write-saturation series (PTS WSAT; Polte et al. Figure 5):
//! a fresh device takes random writes at its program (or controller) rate
//! while erased blocks last; then garbage collection copies valid pages
//! and every host page costs A page programs, so IOPS fall to about
//! fresh / A.
//!
//! * The **fresh level** is the median IOPS of the samples before the
//!   cliff, first estimated from the samples written between ½ and ¾ of
//!   one capacity: a purged device cannot need garbage collection before
//!   about one capacity is written, and by then a write buffer's burst at
//!   link speed (the first tens of MiB) is over. (With fewer than three
//!   samples there, the samples up to ¾ of a capacity, at least three.)
//! * The **cliff** is the first sample below 80 % of the fresh level whose
//!   median with the next two samples is below it too (a single slow
//!   sample is noise, not a cliff).
//! * The **steady level** is the mean IOPS of the samples that cover the
//!   last [`STEADY_CAPACITIES`] capacities' worth of writes (at least 5
//!   samples, at most half of them: the notes measure steady WA over 2×
//!   the capacity, after 3–5× to get there); PTS's rule, applied to that window cut into five parts, says
//!   whether IOPS had settled ([`settled`]: WSAT goes on until they have,
//!   within its limits).
//! * Write amplification **seen** is the emulator's (NAND page programs
//!   over host page programs in the steady window); **inferred** is
//!   fresh / steady.
//!
//! No cliff is reported, with the reason, when IOPS never leave 80 % of
//! their first level (a DRAM device; a device not purged, already past
//! its cliff) or when the series is too short.

use crate::model::{DeviceModel, WriteCliff, WsatSample};
use ssdready_core::steady::{pts_check, PtsRule};

/// The fall that counts as leaving the fresh level.
pub const BAND: f64 = 0.20;
/// Fewest samples worth looking at.
pub const MIN_SAMPLES: usize = 8;

fn median(v: &[f64]) -> f64 {
    let mut s: Vec<f64> = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    match s.len() {
        0 => 0.0,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The first sample that leaves `fresh` (and stays out over the next two).
fn leaves(iops: &[f64], fresh: f64) -> Option<usize> {
    let limit = (1.0 - BAND) * fresh;
    (1..iops.len()).find(|&i| {
        let next = &iops[i..(i + 3).min(iops.len())];
        iops[i] < limit && median(next) < limit
    })
}

/// The steady window's data, in capacities.
pub const STEADY_CAPACITIES: u64 = 2;

/// Where the steady window starts: the samples covering the last
/// [`STEADY_CAPACITIES`] × `capacity` bytes written, at least 5, at most
/// half of them.
pub fn steady_window(samples: &[WsatSample], capacity: u64) -> usize {
    let n = samples.len();
    let end = samples.last().map_or(0, |s| s.bytes_written);
    let span = capacity.saturating_mul(STEADY_CAPACITIES);
    let from = samples
        .iter()
        .rposition(|s| end.saturating_sub(s.bytes_written) >= span)
        .map_or(0, |i| i + 1);
    from.min(n.saturating_sub(5)).max(n / 2)
}

/// PTS's rule over the steady window cut into `rule.window` parts: None
/// while the window has fewer samples than parts.
pub fn settled(
    samples: &[WsatSample],
    capacity: u64,
    rule: &PtsRule,
) -> Option<ssdready_core::steady::PtsVerdict> {
    let from = steady_window(samples, capacity);
    let tail = &samples[from..];
    let k = rule.window.max(1);
    if tail.len() < k {
        return None;
    }
    // Equal parts from the end; the oldest samples left over are dropped.
    let part = tail.len() / k;
    let parts: Vec<f64> = tail[tail.len() - part * k..]
        .chunks(part)
        .map(|c| c.iter().map(|s| s.iops).sum::<f64>() / c.len() as f64)
        .collect();
    pts_check(&parts, rule)
}

/// The samples the fresh level is first estimated from (module docs).
fn early(samples: &[WsatSample], capacity: u64) -> Vec<f64> {
    let (lo, hi) = (capacity / 2, capacity / 4 * 3);
    let mid: Vec<f64> = samples
        .iter()
        .filter(|s| s.bytes_written > lo && s.bytes_written <= hi)
        .map(|s| s.iops)
        .collect();
    if mid.len() >= 3 {
        return mid;
    }
    let upto = samples
        .iter()
        .take_while(|s| s.bytes_written <= hi)
        .count()
        .clamp(3, samples.len());
    samples[..upto].iter().map(|s| s.iops).collect()
}

/// Why a write-saturation series shows no write cliff.
#[derive(Debug, thiserror::Error)]
pub enum NoCliff {
    #[error("{samples} samples are too few to find a write cliff (at least {least})")]
    TooFew { samples: usize, least: usize },
    #[error(
        "IOPS stayed within {:.0} % of their first level ({first:.0}) over {samples} samples: no write cliff \
         (a device without garbage collection, or one already past its cliff: purge it first)",
        BAND * 100.0
    )]
    Level { first: f64, samples: usize },
    #[error(
        "IOPS fell at {at_s:.1} s but came back: the last samples ({steady:.0} IOPS) are within {:.0} % of the \
         fresh level ({fresh:.0}); no lasting write cliff",
        BAND * 100.0
    )]
    CameBack { at_s: f64, steady: f64, fresh: f64 },
}

/// Where IOPS leave the fresh level for good: the sample, and the fresh
/// level (the median before it). Err: they never leave it.
fn fall(samples: &[WsatSample], capacity: u64, iops: &[f64]) -> Result<(usize, f64), NoCliff> {
    let first = median(&early(samples, capacity));
    let Some(mut at) = leaves(iops, first) else {
        return Err(NoCliff::Level {
            first,
            samples: samples.len(),
        });
    };
    let mut fresh = median(&iops[..at]);
    // Once more with the fresh level from every sample before the cliff.
    if let Some(again) = leaves(iops, fresh) {
        at = again;
        fresh = median(&iops[..at]);
    }
    Ok((at, fresh))
}

/// The write amplification the emulator's page counts show over
/// `samples` (None without them).
fn write_amplification(samples: &[WsatSample]) -> Option<f64> {
    let (host, nand) = samples.iter().fold((Some(0u64), Some(0u64)), |(h, t), s| {
        (
            h.zip(s.host_pages).map(|(a, b)| a + b),
            t.zip(s.nand_pages).map(|(a, b)| a + b),
        )
    });
    match (host, nand) {
        (Some(h), Some(t)) if h > 0 => Some(t as f64 / h as f64),
        _ => None,
    }
}

/// Find the cliff in `samples` of a device of `capacity` bytes; `model`
/// is the analytic expectation for an emulated device. Err: why there is
/// none.
pub fn detect(
    samples: &[WsatSample],
    capacity: u64,
    rule: &PtsRule,
    model: Option<&DeviceModel>,
) -> Result<WriteCliff, NoCliff> {
    let n = samples.len();
    if n < MIN_SAMPLES {
        return Err(NoCliff::TooFew {
            samples: n,
            least: MIN_SAMPLES,
        });
    }
    let iops: Vec<f64> = samples.iter().map(|s| s.iops).collect();
    let steady_from = steady_window(samples, capacity);
    let tail = n - steady_from;
    let steady = iops[steady_from..].iter().sum::<f64>() / tail as f64;
    let (at, fresh) = fall(samples, capacity, &iops)?;
    if steady >= (1.0 - BAND) * fresh {
        return Err(NoCliff::CameBack {
            at_s: samples[at].t_s,
            steady,
            fresh,
        });
    }
    let start = |i: usize| samples[i].t_s - samples[i].dt_s;
    let written_before = |i: usize| {
        if i == 0 {
            0
        } else {
            samples[i - 1].bytes_written
        }
    };
    let settled_verdict = settled(samples, capacity, rule);
    let wa_seen = write_amplification(&samples[steady_from..]);
    let ratio = fresh / steady;
    let wa_predicted = model.map(|m| m.wa_predicted);
    let bound = model.zip(wa_seen).map(|(m, a)| m.die_bound_iops(a));
    Ok(WriteCliff {
        fresh_iops: fresh,
        cliff_at_s: start(at),
        cliff_at_bytes: written_before(at),
        cliff_at_capacity: written_before(at) as f64 / capacity.max(1) as f64,
        band: BAND,
        steady_iops: steady,
        steady_from_s: start(steady_from),
        steady_from_bytes: written_before(steady_from),
        settled: settled_verdict.as_ref().is_some_and(|v| v.reached),
        settled_verdict,
        ratio,
        wa_seen,
        wa_inferred: ratio,
        wa_predicted,
        wa_error_pct: wa_seen.zip(wa_predicted).map(|(s, p)| 100.0 * (s - p) / p),
        ratio_vs_wa_pct: wa_seen.map(|s| 100.0 * (ratio - s) / s),
        steady_die_bound_iops: bound,
        steady_vs_die_bound_pct: bound.map(|b| 100.0 * (steady - b) / b),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A series of `iops` per 1-second sample, 4 KiB writes, with the
    /// emulator's page counts at `wa`.
    fn series(iops: &[f64], wa: &[f64]) -> Vec<WsatSample> {
        let mut written = 0u64;
        iops.iter()
            .zip(wa)
            .enumerate()
            .map(|(i, (&v, &a))| {
                let ios = v as u64;
                written += ios * 4096;
                WsatSample {
                    t_s: i as f64 + 1.0,
                    dt_s: 1.0,
                    ios,
                    iops: v,
                    bytes_written: written,
                    host_pages: Some(ios),
                    nand_pages: Some((ios as f64 * a) as u64),
                }
            })
            .collect()
    }

    /// 10 s fresh at 30K, a fall over 5 s, then 3K (WA 9); the capacity
    /// is 5 s of steady writes.
    fn cliff_series() -> Vec<WsatSample> {
        let mut v = vec![30_000.0; 10];
        v.extend([20_000.0, 12_000.0, 7_000.0, 5_000.0, 4_000.0]);
        v.extend(std::iter::repeat_n(3_000.0, 30));
        let wa: Vec<f64> = v
            .iter()
            .map(|&x| if x > 25_000.0 { 1.0 } else { 9.0 })
            .collect();
        series(&v, &wa)
    }

    /// Half of the steady window: 5 s of steady writes.
    const CAP: u64 = 5 * 3000 * 4096 / 2;

    #[test]
    fn the_steady_window_covers_the_last_capacity_written() {
        let s = cliff_series();
        // 45 samples; the last 5 hold 5 × 3000 writes = 2 CAP.
        assert_eq!(steady_window(&s, CAP), 40);
        assert_eq!(steady_window(&s, 10 * CAP), 22, "at most half");
        assert_eq!(steady_window(&s, 1), 40, "at least 5");
    }

    #[test]
    fn a_fall_from_30k_to_3k_is_found_where_it_starts() {
        let s = cliff_series();
        let model = DeviceModel {
            wa_predicted: 8.0,
            dies: 10,
            program_ns: 200_000,
            read_ns: 25_000,
            erase_ns: 1_600_000,
            pages_per_block: 64,
            ..DeviceModel::default()
        };
        let c = detect(&s, CAP, &PtsRule::default(), Some(&model)).unwrap();
        assert_eq!(c.fresh_iops, 30_000.0);
        assert_eq!(c.cliff_at_s, 10.0);
        assert_eq!(c.cliff_at_bytes, 10 * 30_000 * 4096);
        assert_eq!(c.steady_iops, 3_000.0);
        assert_eq!(c.ratio, 10.0);
        assert!(c.settled);
        assert_eq!(c.wa_seen, Some(9.0));
        assert!((c.wa_error_pct.unwrap() - 12.5).abs() < 1e-9);
        assert!((c.ratio_vs_wa_pct.unwrap() - 100.0 / 9.0).abs() < 1e-9);
        // 9 × 200 + 8 × 25 + 9/64 × 1600 = 2225 µs of die time a page.
        let bound = c.steady_die_bound_iops.unwrap();
        assert!((bound - 10.0 / 2225e-6).abs() < 1e-6, "{bound}");
    }

    #[test]
    fn a_write_buffer_burst_in_the_first_sample_does_not_set_the_fresh_level() {
        let mut s = cliff_series();
        s[0].iops = 90_000.0;
        let c = detect(&s, CAP, &PtsRule::default(), None).unwrap();
        assert_eq!(c.fresh_iops, 30_000.0);
        assert_eq!(c.cliff_at_s, 10.0);
        assert_eq!(c.wa_predicted, None);
    }

    #[test]
    fn a_buffer_burst_over_a_quarter_of_the_capacity_is_not_the_cliff() {
        // 64 MiB of buffer on a 256 MiB device: 2 of 8 samples per capacity.
        let mut v = vec![850_000.0; 2];
        v.extend(std::iter::repeat_n(53_000.0, 7));
        v.extend(std::iter::repeat_n(5_000.0, 40));
        let mut s = series(&v, &vec![1.0; v.len()]);
        let mut written = 0;
        for x in s.iter_mut() {
            written += 32 << 20;
            x.bytes_written = written;
        }
        let c = detect(&s, 256 << 20, &PtsRule::default(), None).unwrap();
        assert_eq!(c.fresh_iops, 53_000.0);
        assert_eq!(c.cliff_at_bytes, 9 * (32 << 20));
    }

    #[test]
    fn a_write_buffer_burst_over_several_samples_is_not_the_cliff() {
        // The first 4 samples at link speed while a buffer fills, then 26
        // at the program rate, then the fall.
        let mut v = vec![90_000.0; 4];
        v.extend(std::iter::repeat_n(30_000.0, 26));
        v.extend(std::iter::repeat_n(3_000.0, 40));
        let s = series(&v, &vec![1.0; v.len()]);
        let c = detect(&s, 40 * 30_000 * 4096, &PtsRule::default(), None).unwrap();
        assert_eq!(c.fresh_iops, 30_000.0);
        assert_eq!(c.cliff_at_s, 30.0);
    }

    #[test]
    fn one_slow_sample_is_noise_not_a_cliff() {
        let mut s = cliff_series();
        s[4].iops = 10_000.0;
        let c = detect(&s, CAP, &PtsRule::default(), None).unwrap();
        assert_eq!(c.cliff_at_s, 10.0);
    }

    #[test]
    fn a_device_without_garbage_collection_has_no_cliff() {
        let v: Vec<f64> = (0..40)
            .map(|i| 100_000.0 + (i % 3) as f64 * 1000.0)
            .collect();
        let e = detect(
            &series(&v, &vec![1.0; 40]),
            1 << 30,
            &PtsRule::default(),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no write cliff"), "{e}");
    }

    #[test]
    fn a_device_already_past_its_cliff_says_to_purge() {
        let v = vec![3_000.0; 40];
        let e = detect(
            &series(&v, &vec![9.0; 40]),
            1 << 30,
            &PtsRule::default(),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("purge"), "{e}");
    }

    #[test]
    fn a_series_still_falling_at_its_end_is_not_settled() {
        let v: Vec<f64> = (0..60)
            .map(|i| {
                if i < 10 {
                    30_000.0
                } else {
                    20_000.0 * 0.97f64.powi(i - 10)
                }
            })
            .collect();
        let c = detect(
            &series(&v, &vec![1.0; 60]),
            1 << 30,
            &PtsRule::default(),
            None,
        )
        .unwrap();
        assert!(!c.settled, "{c:?}");
        assert_eq!(c.wa_seen, Some(1.0));
    }

    #[test]
    fn too_few_samples_are_said_not_guessed() {
        let v = vec![1.0; 5];
        assert!(detect(&series(&v, &v), 1, &PtsRule::default(), None)
            .unwrap_err()
            .to_string()
            .contains("too few"));
    }
}
