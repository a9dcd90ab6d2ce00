//! Capacity at a latency target: the highest offered load a platform
//! carries while a latency percentile stays under a limit (`ssdready study
//! --slo p99=1ms`).
//!
//! The load is offered open loop (`rate_iops`, `rate_process=poisson`,
//! `lat_from=schedule`, docs/latency-under-load.md): latency is measured
//! from each I/O's intended issue time, so a queue that builds up in the
//! host or the device is charged to every I/O that waited in it, and
//! `iodepth` is only a cap. The search:
//!
//! 1. the peak: a closed-loop run at the cap (what the target serves when
//!    it is never idle);
//! 2. the load curve: offered load from 10 % of the peak to beyond it,
//!    with p50/p99/p99.9 at each point (the "hockey stick");
//! 3. bisection between the highest load of the curve that meets the
//!    target and the next that does not, to 1 % of the peak;
//! 4. a repeat of the result (with a new seed), stepping down 1 % of the
//!    peak at a time while the repeat misses the target.
//!
//! A point meets the target when its percentile is within the limit and
//! the load was carried (at least 95 % of the offered I/Os completed per
//! second: beyond its capacity an open loop's queue only grows).

use serde::{Deserialize, Serialize};
use ssdready_measured::summary::PointSummary;

pub mod job;

/// The default target of the full study.
pub const DEFAULT_SLO: &str = "p99=1ms";

/// Offered loads of the curve, as shares of the peak.
pub const CURVE: [f64; 12] = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.05, 1.2];

/// Share of the offered load that must complete for a point to count as
/// carried.
pub const CARRIED: f64 = 0.95;

/// A latency target: percentile `pct` at most `limit_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub pct: f64,
    pub limit_ns: u64,
}

/// The percentiles a target may name (those every run reports).
pub const SLO_PERCENTILES: [(&str, f64); 3] = [("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9)];

/// What `--slo` accepts, said after each refusal.
const SLO_ALLOWED: &str =
    "allowed: PERCENTILE=TIME with PERCENTILE p50, p99 or p99.9, e.g. p99=1ms or p99.9=5ms";

/// An `--slo` value that is not a latency target.
#[derive(Debug, thiserror::Error)]
pub enum SloError {
    #[error("option '--slo': '{text}' names no percentile ({SLO_ALLOWED})")]
    NoPercentile { text: String },
    #[error("option '--slo': '{percentile}' is not a percentile ({SLO_ALLOWED})")]
    Percentile { percentile: String },
    /// The time the units parser refused (`why` says why).
    #[error("option '--slo': {why} ({SLO_ALLOWED})")]
    Time {
        why: ssdready_core::units::UnitError,
    },
    #[error("option '--slo': a limit of 0 ({SLO_ALLOWED})")]
    Zero,
}

/// Why a capacity search gave no answer: a point could not be measured
/// (the measuring function's error), or the peak carried nothing.
#[derive(Debug, thiserror::Error)]
pub enum SearchError<E: std::fmt::Display> {
    #[error("{0}")]
    Measure(E),
    #[error("the closed-loop run at the cap completed no I/O")]
    NoIo,
}

impl Slo {
    /// Parse `p99=1ms`, `p99.9=5ms`, `p50=200us`. The error is one line
    /// naming the allowed values.
    pub fn parse(s: &str) -> Result<Slo, SloError> {
        let Some((p, t)) = s.split_once('=') else {
            return Err(SloError::NoPercentile { text: s.into() });
        };
        let pct = SLO_PERCENTILES
            .iter()
            .find(|(n, _)| *n == p.trim())
            .map(|(_, v)| *v)
            .ok_or_else(|| SloError::Percentile {
                percentile: p.into(),
            })?;
        let limit_ns = ssdready_core::units::parse_time_ns(t.trim(), 1_000)
            .map_err(|why| SloError::Time { why })?;
        if limit_ns == 0 {
            return Err(SloError::Zero);
        }
        Ok(Slo { pct, limit_ns })
    }

    /// The target's percentile of a point, ns.
    pub fn of(&self, p: &PointSummary) -> u64 {
        if self.pct >= 99.9 {
            p.lat_p999_ns
        } else if self.pct >= 99.0 {
            p.lat_p99_ns
        } else {
            p.lat_p50_ns
        }
    }

    /// `p99 ≤ 1.00 ms`.
    pub fn text(&self) -> String {
        let name = SLO_PERCENTILES
            .iter()
            .find(|(_, v)| *v == self.pct)
            .map_or("p?", |(n, _)| n);
        format!(
            "{name} ≤ {}",
            ssdready_core::units::fmt_ns(self.limit_ns as f64)
        )
    }
}

/// One offered load and what it gave.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LoadPoint {
    pub offered_iops: f64,
    pub achieved_iops: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    /// Met the target (the percentile within the limit, the load carried).
    pub meets: bool,
    /// `curve`, `bisect` or `repeat`.
    pub step: String,
}

/// The search's result.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Capacity {
    pub slo: Option<Slo>,
    /// Closed loop at the cap, IOPS.
    pub peak_iops: f64,
    /// `lat_from=schedule` runs in the order made.
    pub points: Vec<LoadPoint>,
    /// The highest load that met the target and whose repeat did too
    /// (None: not even the lowest load did).
    pub sustained_iops: Option<f64>,
    pub sustained_pct_of_peak: Option<f64>,
}

/// The study's capacity section (`study.json`, `capacity`).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CapacityDoc {
    /// The workload searched (`4 KiB random reads`) and its target.
    pub what: String,
    pub target: String,
    /// Through the platform (real time).
    pub platform: Option<Capacity>,
    /// An emulated drive's model alone (virtual time), for comparison.
    pub device: Option<Capacity>,
    /// The answer in words.
    pub sentence: String,
    /// Why a search gave no result.
    pub error: Option<String>,
}

/// Measure one offered load (IOPS; 0: closed loop, for the peak); `E`
/// says why a point could not be measured.
pub type Measure<'a, E> = dyn FnMut(u64, u32) -> Result<PointSummary, E> + 'a;

pub fn point(slo: &Slo, offered: f64, s: &PointSummary, step: &str) -> LoadPoint {
    LoadPoint {
        offered_iops: offered,
        achieved_iops: s.iops,
        p50_ns: s.lat_p50_ns,
        p99_ns: s.lat_p99_ns,
        p999_ns: s.lat_p999_ns,
        meets: slo.of(s) <= slo.limit_ns && s.iops >= CARRIED * offered,
        step: step.into(),
    }
}

/// Run the search (module docs). `measure(iops, seed)` runs one point.
pub fn search<E: std::fmt::Display>(
    slo: &Slo,
    measure: &mut Measure<E>,
) -> Result<Capacity, SearchError<E>> {
    let peak = measure(0, 0).map_err(SearchError::Measure)?.iops;
    if peak <= 0.0 {
        return Err(SearchError::NoIo);
    }
    let mut c = Capacity {
        slo: Some(*slo),
        peak_iops: peak,
        ..Capacity::default()
    };
    let mut run = |c: &mut Capacity, load: f64, seed: u32, step: &str| {
        let iops = load.round().max(1.0);
        let s = measure(iops as u64, seed).map_err(SearchError::Measure)?;
        let p = point(slo, iops, &s, step);
        let ok = p.meets;
        c.points.push(p);
        Ok::<bool, SearchError<E>>(ok)
    };
    // The curve; the first load that misses bounds the search.
    let mut lo = None;
    let mut hi = None;
    for share in CURVE {
        let ok = run(&mut c, share * peak, 0, "curve")?;
        match (ok, hi) {
            (true, None) => lo = Some(share * peak),
            (false, None) => hi = Some(share * peak),
            _ => {}
        }
    }
    let Some(mut lo) = lo else {
        return Ok(c);
    };
    let mut hi = hi.unwrap_or(CURVE[CURVE.len() - 1] * peak * 1.5);
    while hi - lo > 0.01 * peak {
        let mid = (lo + hi) / 2.0;
        if run(&mut c, mid, 0, "bisect")? {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Confirmed by a repeat with another seed, stepping down on a miss.
    for seed in 1..=5u32 {
        if run(&mut c, lo, seed, "repeat")? {
            c.sustained_iops = Some(lo.round());
            c.sustained_pct_of_peak = Some(100.0 * lo / peak);
            return Ok(c);
        }
        lo -= 0.01 * peak;
        if lo <= 0.0 {
            break;
        }
    }
    Ok(c)
}

/// The answer in words.
pub fn sentence(c: &Capacity, what: &str) -> String {
    let Some(slo) = c.slo else {
        return String::new();
    };
    let k = |v: f64| ssdready_core::units::fmt_count(v);
    match (c.sustained_iops, c.sustained_pct_of_peak) {
        (Some(s), Some(p)) => format!(
            "this platform sustains {} IOPS of {what} with {} ({p:.0} % of its peak, {} IOPS); beyond that the queue grows and the {} passes the limit",
            k(s),
            slo.text(),
            k(c.peak_iops),
            slo.text().split(' ').next().unwrap_or("percentile")
        ),
        _ => format!(
            "no offered load of {what} met {} (not even 10 % of the peak, {} IOPS): the latency at light load is already above the limit",
            slo.text(),
            k(c.peak_iops)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_and_bad_ones_say_what_is_allowed() {
        assert_eq!(
            Slo::parse("p99=1ms").unwrap(),
            Slo {
                pct: 99.0,
                limit_ns: 1_000_000
            }
        );
        assert_eq!(Slo::parse("p99.9=5ms").unwrap().pct, 99.9);
        for bad in ["1ms", "p98=1ms", "p99=", "p99=fast", "p99=0"] {
            let e = Slo::parse(bad).unwrap_err().to_string();
            assert!(e.contains("allowed: PERCENTILE=TIME"), "{bad}: {e}");
        }
    }

    /// An M/D/1-like target: p99 grows as the load nears the peak.
    fn model(peak: f64) -> impl FnMut(u64, u32) -> Result<PointSummary, std::convert::Infallible> {
        move |iops, _| {
            let rho = if iops == 0 { 1.0 } else { iops as f64 / peak };
            let carried = (iops as f64).min(peak);
            let p99 = if rho >= 1.0 {
                u64::MAX / 4
            } else {
                (10_000.0 * (1.0 + 4.6 * rho / (1.0 - rho))) as u64
            };
            Ok(PointSummary {
                iops: if iops == 0 { peak } else { carried },
                lat_p50_ns: 10_000,
                lat_p99_ns: p99,
                lat_p999_ns: p99.saturating_mul(2),
                ..PointSummary::default()
            })
        }
    }

    #[test]
    fn bisection_finds_the_highest_load_within_the_target() {
        let slo = Slo::parse("p99=100us").unwrap();
        let mut m = model(100_000.0);
        let c = search(&slo, &mut m).unwrap();
        // p99 = 10 µs × (1 + 4.6ρ/(1−ρ)) ≤ 100 µs ⇔ ρ ≤ 9/13.6 = 0.662.
        let s = c.sustained_iops.unwrap();
        assert!((65_000.0..=66_200.0).contains(&s), "{s}");
        assert!(c.points.iter().any(|p| p.step == "repeat" && p.meets));
        assert!(c.points.iter().filter(|p| p.step == "curve").count() == CURVE.len());
        assert!(sentence(&c, "4 KiB random reads").contains("sustains"));
    }

    #[test]
    fn a_target_no_load_meets_is_said_so() {
        let slo = Slo::parse("p99=5us").unwrap();
        let mut m = model(100_000.0);
        let c = search(&slo, &mut m).unwrap();
        assert_eq!(c.sustained_iops, None);
        assert!(sentence(&c, "reads").contains("no offered load"));
    }
}
