//! A rate-limited job's capacity (`rate`, `rate_iops`, `thinktime`),
//! judged purely: the highest offered load of the job's own I/O that
//! meets its own latency target — its `latency_target` at its
//! `latency_percentile` where it sets one, else the p99 it had at its
//! rate ([`target`]) — by the device study's open-loop points
//! ([`super::point`]: a point meets the target when its percentile is
//! within it and the load is carried), searched from the job's own rate
//! up ([`search`]): twice the load each step until one misses (or the
//! closed-loop peak is passed), then bisection to 5 %, then a repeat with
//! other draws, stepping down 5 % on a miss. A job on a synchronous
//! engine keeps one I/O in flight per thread: it has no open loop, and
//! the study says so ([`no_open_loop`]). The study runs each point.

use super::{point, Capacity, Slo};
use crate::limit::job::{self, RunFigures};
use ssdready_core::options::Section;
use ssdready_measured::summary::PointSummary;

/// The runs the search takes, about: the peak, the doublings, the
/// bisection, a repeat or two.
pub const RUNS: usize = 1 + 8 + BISECT + 2;

/// Bisection steps at most.
const BISECT: usize = 5;

/// Repeats at most.
const REPEATS: u32 = 3;

/// The search from the job's own `rate` (IOPS) up (module docs).
/// `measure(iops, seed)` runs one point (0: closed loop).
pub fn search(
    slo: &Slo,
    rate: f64,
    measure: &mut dyn FnMut(u64, u32) -> Result<PointSummary, String>,
) -> Result<Capacity, String> {
    let peak = measure(0, 0)?.iops;
    if peak <= 0.0 || rate <= 0.0 {
        return Err("no I/O in the closed loop, or none at the job's rate".into());
    }
    let mut c = Capacity {
        slo: Some(*slo),
        peak_iops: peak,
        ..Default::default()
    };
    let mut run = |c: &mut Capacity, load: f64, seed: u32, step: &str| {
        let iops = load.round().max(1.0);
        let p = point(slo, iops, &measure(iops as u64, seed)?, step);
        let ok = p.meets;
        c.points.push(p);
        Ok::<bool, String>(ok)
    };
    let (mut lo, mut hi) = (None, None);
    let mut load = rate;
    while load <= 1.2 * peak {
        match run(&mut c, load, 0, "curve")? {
            true => lo = Some(load),
            false => {
                hi = Some(load);
                break;
            }
        }
        load *= 2.0;
    }
    let Some(mut lo) = lo else {
        return Ok(c);
    };
    let mut hi = hi.unwrap_or(load);
    for _ in 0..BISECT {
        if hi - lo <= 0.05 * lo {
            break;
        }
        let mid = (lo + hi) / 2.0;
        match run(&mut c, mid, 0, "bisect")? {
            true => lo = mid,
            false => hi = mid,
        }
    }
    for seed in 1..=REPEATS {
        if run(&mut c, lo, seed, "repeat")? {
            c.sustained_iops = Some(lo.round());
            c.sustained_pct_of_peak = Some(100.0 * lo / peak);
            break;
        }
        lo *= 0.95;
    }
    Ok(c)
}

/// Whether a job of the file paces itself.
pub fn rate_limited(sections: &[Section]) -> bool {
    let jobs = (0..sections.len()).filter(|&i| !sections[i].global);
    jobs.into_iter().any(|j| {
        let s = job::spec(sections, j);
        let paced = |r: &[Option<u64>; 3]| r.iter().any(|x| x.is_some_and(|v| v > 0));
        paced(&s.rate_iops) || paced(&s.rate_bytes) || s.thinktime_ns > 0
    })
}

/// Why the job has no open loop, where it has none.
pub fn no_open_loop(sections: &[Section]) -> Option<String> {
    let jobs: Vec<usize> = (0..sections.len())
        .filter(|&i| !sections[i].global)
        .collect();
    jobs.iter().find_map(|&j| {
        let s = job::spec(sections, j);
        let e = job::engine_named(&s);
        s.engine().caps.synchronous.then(|| {
            format!(
                "[{}] runs on {e}, one I/O in flight per thread: its capacity at a latency target needs an asynchronous engine (io_uring, libaio) to offer load without waiting",
                sections[j].name
            )
        })
    })
}

/// The job's latency target: its `latency_target` at its
/// `latency_percentile` (p99 where it names less, p99.9 from 99.9 up),
/// else the p99 it had at its rate (`p99_ns`). The target and how it was
/// chosen.
pub fn target(sections: &[Section], p99_ns: Option<u64>) -> Option<(Slo, String)> {
    let j = sections.iter().position(|s| !s.global)?;
    let s = job::spec(sections, j);
    let own = s.sched.latency.map(|l| l.target_ns).filter(|ns| *ns > 0);
    if let Some(ns) = own {
        let asked = s.sched.latency_percentile.unwrap_or(100.0);
        let pct = if asked >= 99.9 { 99.9 } else { 99.0 };
        let why = format!("its own latency_target at p{asked} (searched at p{pct})");
        return Some((Slo { pct, limit_ns: ns }, why));
    }
    let ns = p99_ns.filter(|n| *n > 0)?;
    Some((
        Slo {
            pct: 99.0,
            limit_ns: ns,
        },
        "the p99 it had at its own rate".into(),
    ))
}

/// The device's ceiling for the job's mix, where a model of the device
/// is known: on an emulated drive (`emu:…`), the job's I/O (its pace off,
/// the study's most in flight per thread) on the model alone in
/// virtual time, and the share of it the job got.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ceiling {
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    /// Where the ceiling comes from, in words.
    pub basis: String,
    /// The job's median IOPS as a share of it, percent.
    pub share_pct: f64,
}

/// The p99 the job had at its rate: the worse direction's, of the repeat
/// nearest the median.
pub fn p99_at_rate(repeats: &[RunFigures], median: f64) -> Option<u64> {
    let mid = repeats.iter().min_by(|a, b| {
        (a.iops() - median)
            .abs()
            .total_cmp(&(b.iops() - median).abs())
    })?;
    [&mid.together.read, &mid.together.write]
        .into_iter()
        .flatten()
        .filter_map(|d| d.lat_p99_ns)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::options::RawOption;

    /// A platform whose p99 is 100 µs up to 10,000 IOPS and 10 ms beyond,
    /// 50,000 IOPS closed-loop.
    fn platform(iops: u64, _seed: u32) -> Result<PointSummary, String> {
        let carried = if iops == 0 { 50_000.0 } else { iops as f64 };
        Ok(PointSummary {
            iops: carried,
            lat_p99_ns: if iops <= 10_000 && iops > 0 {
                100_000
            } else {
                10_000_000
            },
            ..Default::default()
        })
    }

    #[test]
    fn the_search_doubles_from_the_jobs_rate_then_bisects_to_the_edge() {
        let slo = Slo {
            pct: 99.0,
            limit_ns: 1_000_000,
        };
        let c = search(&slo, 1000.0, &mut platform).unwrap();
        let s = c.sustained_iops.unwrap();
        assert!((9_000.0..=10_000.0).contains(&s), "{s}: {:?}", c.points);
        let offered: Vec<f64> = c.points.iter().map(|p| p.offered_iops).collect();
        assert_eq!(&offered[..5], [1000.0, 2000.0, 4000.0, 8000.0, 16000.0]);
        // Above the limit at the job's own rate: no capacity.
        let tight = Slo {
            pct: 99.0,
            limit_ns: 50_000,
        };
        assert!(search(&tight, 1000.0, &mut platform)
            .unwrap()
            .sustained_iops
            .is_none());
    }

    fn job(opts: &[(&str, &str)]) -> Vec<Section> {
        vec![Section {
            name: "paced".into(),
            global: false,
            options: opts
                .iter()
                .map(|(k, v)| RawOption::cli(k, Some(v)))
                .collect(),
        }]
    }

    #[test]
    fn a_paced_job_is_searched_at_its_own_target_else_at_the_p99_of_its_rate() {
        let paced = job(&[
            ("ioengine", "libaio"),
            ("rate_iops", "500"),
            ("numjobs", "2"),
        ]);
        assert!(rate_limited(&paced));
        assert!(!rate_limited(&job(&[("ioengine", "libaio")])));
        assert!(no_open_loop(&paced).is_none());
        assert!(no_open_loop(&job(&[("rate_iops", "5")]))
            .unwrap()
            .contains("psync"));
        let (slo, why) = target(&paced, Some(800_000)).unwrap();
        assert_eq!((slo.pct, slo.limit_ns), (99.0, 800_000));
        assert!(why.contains("p99 it had"), "{why}");
        let mut own = paced.clone();
        own[0]
            .options
            .push(RawOption::cli("latency_target", Some("2ms")));
        own[0]
            .options
            .push(RawOption::cli("latency_percentile", Some("99.9")));
        let (slo, _) = target(&own, Some(800_000)).unwrap();
        assert_eq!((slo.pct, slo.limit_ns), (99.9, 2_000_000));
        assert!(target(&paced, None).is_none());
    }
}
