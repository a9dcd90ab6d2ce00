//! A rate-limited job's capacity (`rate`, `rate_iops`, `thinktime`): the
//! highest offered load of the job's own I/O that meets its own latency
//! target — its `latency_target` at its `latency_percentile` where it
//! sets one, else the p99 it had at its rate — by the device study's
//! open-loop points ([`crate::capacity`]: a point meets the target when
//! its percentile is within it and the load is carried), searched from
//! the job's own rate up: twice the load each step until one misses (or
//! the closed-loop peak is passed), then bisection to 5 %, then a repeat
//! with other draws, stepping down 5 % on a miss. Each point runs the job with its pace replaced by
//! Poisson arrivals at the offered load, shared among its threads, each
//! I/O's latency counted from when it was due (`lat_from=schedule`: no
//! coordinated omission; after a ramp of half a second, without which the
//! I/Os due while the threads start count late), up to
//! [`crate::slo::CAP`] in flight per thread;
//! the peak is the job closed-loop at that depth. A job on a synchronous
//! engine keeps one I/O in flight per thread: it has no open loop, and
//! the study says so.

use crate::capacity::{point, sentence, Capacity, CapacityDoc, Slo};
use crate::job::{self, RunFigures};
use ssdready_core::options::Section;
use ssdready_measured::summary::PointSummary;
use ssdready_run::RunFn;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The runs the search takes, about: the peak, the doublings, the
/// bisection, a repeat or two.
pub const RUNS: usize = 1 + 8 + BISECT + 2;

/// The ramp of each point where the job has none.
const RAMP: &str = "500ms";

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

/// Every job with `key=value` set (by fio's own name) after what it
/// wrote.
fn set_all(sections: &mut [Section], key: &str, value: &str) {
    job::set_all(sections, key, |_, _| value.to_string());
}

/// The job at an offered load of `iops` (0: closed loop, its peak), its
/// pace replaced, shared among its threads; `seed` changes its draws.
pub fn at_load(sections: &[Section], iops: u64, seed: u32) -> Vec<Section> {
    let mut s = sections.to_vec();
    let threads: u64 = (0..s.len())
        .filter(|&i| !s[i].global)
        .map(|i| u64::from(job::spec(&s, i).numjobs.max(1)))
        .sum::<u64>()
        .max(1);
    // Its pace and its own depth search (`latency_target` makes a job
    // probe for the depth that meets it) give way to the offered load.
    for k in ["rate", "thinktime", "latency_target"] {
        set_all(&mut s, k, "0");
    }
    set_all(&mut s, "iodepth", &crate::slo::CAP.to_string());
    // The schedule starts with the job: without a ramp, the I/Os due
    // while its threads start count late, and a second's p99 is theirs.
    if (0..s.len()).all(|i| s[i].global || job::spec(&s, i).ramp_time_ns == 0) {
        set_all(&mut s, "ramp_time", RAMP);
    }
    // Each point runs its whole length, whatever the job's size.
    set_all(&mut s, "time_based", "1");
    match iops {
        0 => set_all(&mut s, "rate_iops", "0"),
        n => {
            let each = n.div_ceil(threads).max(1).to_string();
            set_all(&mut s, "rate_iops", &each);
            set_all(&mut s, "rate_process", "poisson");
            set_all(&mut s, "lat_from", "schedule");
        }
    }
    if seed > 0 {
        set_all(
            &mut s,
            "randseed",
            &(0x5eed_0000u64 + u64::from(seed)).to_string(),
        );
    }
    s
}

/// The search on the job from its own `rate`: its capacity at `slo`, in
/// a document.
pub fn capacity(
    sections: &[Section],
    (slo, why, rate): (Slo, &str, f64),
    run: &mut RunFn,
    stop: &Arc<AtomicBool>,
) -> CapacityDoc {
    let what = "the job's I/O".to_string();
    let mut measure = |iops: u64, seed: u32| -> Result<PointSummary, String> {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err("the study was stopped".into());
        }
        let r = run(&crate::job::request(&at_load(sections, iops, seed), stop))
            .map_err(|e| e.message().to_string())?;
        Ok(PointSummary::from_result(&r))
    };
    let mut doc = CapacityDoc {
        what: format!("{what}, with {why}"),
        ..Default::default()
    };
    match search(&slo, rate, &mut measure) {
        Ok(c) => {
            doc.sentence = match c.sustained_iops {
                Some(s) => format!(
                    "{} ({:.1}× the {} IOPS it ran at)",
                    sentence(&c, &what),
                    s / rate.max(1e-9),
                    rate.round()
                ),
                None => format!(
                    "not even its own rate again ({} IOPS) met {} in the open loop, latency counted from each I/O's schedule",
                    rate.round(),
                    slo.text()
                ),
            };
            doc.platform = Some(c);
        }
        Err(e) => doc.error = Some(format!("the search failed: {e}")),
    }
    doc
}

/// The device's ceiling for the job's mix, where a model of the device
/// is known: on an emulated drive (`emu:…`), the job's I/O (its pace off,
/// [`crate::slo::CAP`] in flight per thread) on the model alone in
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

/// The ceiling of the job's mix on its device's model, where every
/// target of the job is an emulated drive; None elsewhere, or where the
/// model gives no I/O. `median` is the job's IOPS as written.
pub fn ceiling(sections: &[Section], median: f64) -> Result<Option<Ceiling>, String> {
    let jobs = (0..sections.len()).filter(|&i| !sections[i].global);
    let files: Vec<String> = jobs
        .filter_map(|i| job::spec(sections, i).filename.into_iter().next())
        .collect();
    if files.is_empty() || !files.iter().all(|f| f.starts_with("emu")) {
        return Ok(None);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let r = crate::job::request(&at_load(sections, 0, 0), &stop);
    let (s, _) = crate::virt::run(&r).map_err(|e| e.to_string())?;
    if s.iops <= 0.0 {
        return Ok(None);
    }
    Ok(Some(Ceiling {
        iops: s.iops,
        bw_bytes_per_s: s.bw_bytes_per_s,
        basis: format!(
            "the model of {} alone, in virtual time, the job's mix at {} in flight per thread",
            files[0],
            crate::slo::CAP
        ),
        share_pct: 100.0 * median / s.iops,
    }))
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
    fn on_an_emulated_drive_the_ceiling_of_the_jobs_mix_is_the_models_and_the_job_gets_a_share() {
        let paced = job(&[
            ("filename", "emu:nvm-lowlat,size=64m"),
            ("rw", "randread"),
            ("ioengine", "libaio"),
            ("iodepth", "1"),
            ("rate_iops", "1000"),
            ("runtime", "1s"),
            ("norandommap", "1"),
        ]);
        let c = ceiling(&paced, 1000.0).unwrap().expect("a model");
        // The model at 256 in flight gives far more than the job's 1000.
        assert!(c.iops > 10_000.0, "{c:?}");
        assert!((c.share_pct - 100_000.0 / c.iops).abs() < 1e-6, "{c:?}");
        assert!(c.basis.contains("emu:nvm-lowlat"), "{}", c.basis);
        let real = job(&[("filename", "/dev/nvme0n1"), ("rw", "randread")]);
        assert!(ceiling(&real, 1000.0).unwrap().is_none());
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

    #[test]
    fn each_load_is_offered_open_loop_shared_among_the_threads_with_latency_from_the_schedule() {
        let paced = job(&[
            ("ioengine", "libaio"),
            ("rate_iops", "500"),
            ("numjobs", "2"),
        ]);
        let s = job::spec(&at_load(&paced, 3001, 1), 0);
        assert_eq!(s.rate_iops, [Some(1501); 3]);
        assert!(s.sched.lat_from_schedule && s.sched.poisson);
        assert_eq!((s.thinktime_ns, s.sched.latency), (0, None));
        assert_eq!((s.iodepth, s.ramp_time_ns), (256, 500_000_000));
        let peak = job::spec(&at_load(&paced, 0, 0), 0);
        assert_eq!(peak.rate_iops, [None; 3]);
        assert!(!peak.sched.lat_from_schedule);
    }
}
