//! Capacity at a latency target: the device study's (`ssdready study
//! --slo p99=1ms`) at its built-in job, and a rate-limited user's job's
//! (`rate`, `rate_iops`, `thinktime`) at its own latency target from its
//! own rate up. The searches and their documents are the diagnosis's
//! (`ssdready_diagnosis::figures::capacity`, the job's in its `job`); here, each
//! point's run. A job's point runs the job with its pace replaced by
//! Poisson arrivals at the offered load, shared among its threads, each
//! I/O's latency counted from when it was due (`lat_from=schedule`: no
//! coordinated omission; after a ramp of half a second, without which the
//! I/Os due while the threads start count late), up to
//! [`CAP`] in flight per thread; the peak is the job
//! closed-loop at that depth.

use ssdready_core::options::Section;
use ssdready_diagnosis::figures::capacity::job::Ceiling;
pub use ssdready_diagnosis::figures::capacity::*;
use ssdready_measured::summary::PointSummary;
use ssdready_run::{RunFn, RunRequest};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The cap on what is outstanding (`iodepth`) of the open loop: deep
/// enough that it does not bind below the capacity.
pub const CAP: u32 = 256;

/// The request of one point: the workload's (from
/// [`crate::jobs::request`], the measured job last) with the open loop's
/// rate, or none for the closed-loop peak; `seed` changes the random
/// offsets and the arrival draws.
pub fn point_request(base: &RunRequest, iops: u64, seed: u32) -> RunRequest {
    let mut r = base.clone();
    if iops > 0 {
        r.set("rate_iops", iops)
            .set("rate_process", "poisson")
            .set("lat_from", "schedule");
    }
    if seed > 0 {
        r.set("randseed", 0x5eed_0000u64 + u64::from(seed));
    }
    r
}

/// The ramp of each point where the job has none.
const RAMP: &str = "500ms";

/// Every job with `key=value` set (by fio's own name) after what it
/// wrote.
fn set_all(sections: &mut [Section], key: &str, value: &str) {
    crate::job::set_all(sections, key, |_, _| value.to_string());
}

/// The job at an offered load of `iops` (0: closed loop, its peak), its
/// pace replaced, shared among its threads; `seed` changes its draws.
pub fn job_at_load(sections: &[Section], iops: u64, seed: u32) -> Vec<Section> {
    let mut s = sections.to_vec();
    let threads: u64 = (0..s.len())
        .filter(|&i| !s[i].global)
        .map(|i| u64::from(crate::job::spec(&s, i).numjobs.max(1)))
        .sum::<u64>()
        .max(1);
    // Its pace and its own depth search (`latency_target` makes a job
    // probe for the depth that meets it) give way to the offered load.
    for k in ["rate", "thinktime", "latency_target"] {
        set_all(&mut s, k, "0");
    }
    set_all(&mut s, "iodepth", &CAP.to_string());
    // The schedule starts with the job: without a ramp, the I/Os due
    // while its threads start count late, and a second's p99 is theirs.
    if (0..s.len()).all(|i| s[i].global || crate::job::spec(&s, i).ramp_time_ns == 0) {
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
pub fn job_capacity(
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
        let r = run(&crate::job::request(
            &job_at_load(sections, iops, seed),
            stop,
        ))
        .map_err(|e| e.message().to_string())?;
        Ok(PointSummary::from_result(&r))
    };
    let mut doc = CapacityDoc {
        what: format!("{what}, with {why}"),
        ..Default::default()
    };
    match job::search(&slo, rate, &mut measure) {
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

/// The ceiling of the job's mix on its device's model, where every
/// target of the job is an emulated drive; None elsewhere, or where the
/// model gives no I/O. `median` is the job's IOPS as written.
pub fn job_ceiling(sections: &[Section], median: f64) -> Result<Option<Ceiling>, String> {
    let jobs = (0..sections.len()).filter(|&i| !sections[i].global);
    let files: Vec<String> = jobs
        .filter_map(|i| crate::job::spec(sections, i).filename.into_iter().next())
        .collect();
    if files.is_empty() || !files.iter().all(|f| f.starts_with("emu")) {
        return Ok(None);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let r = crate::job::request(&job_at_load(sections, 0, 0), &stop);
    let (s, _) = crate::virt::run(&r).map_err(|e| e.to_string())?;
    if s.iops <= 0.0 {
        return Ok(None);
    }
    Ok(Some(Ceiling {
        iops: s.iops,
        bw_bytes_per_s: s.bw_bytes_per_s,
        basis: format!(
            "the model of {} alone, in virtual time, the job's mix at {} in flight per thread",
            files[0], CAP
        ),
        share_pct: 100.0 * median / s.iops,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::options::RawOption;

    /// On an emulated drive in virtual time, the search's answer against
    /// the truth of the same points: the answer meets the target, 2 % of
    /// the peak more does not.
    #[test]
    fn on_an_emulated_drive_the_answer_is_the_edge_of_the_virtual_sweep() {
        let mut base = RunRequest::default();
        base.job("slo")
            .set("filename", "emu:nvm-lowlat,size=64m")
            .set("rw", "randread")
            .set("bs", "4k")
            .set("iodepth", 64)
            .flag("norandommap")
            .flag("time_based")
            .set("runtime", "200ms");
        let mut measure = |iops: u64, seed: u32| {
            crate::virt::run(&point_request(&base, iops, seed)).map(|(s, _)| s)
        };
        let slo = Slo::parse("p99=60us").unwrap();
        let c = search(&slo, &mut measure).unwrap();
        // 7 units of 10 µs: 700K IOPS closed loop.
        assert!(
            (650_000.0..=710_000.0).contains(&c.peak_iops),
            "{}",
            c.peak_iops
        );
        let s = c.sustained_iops.expect("a load meets 60 µs");
        let at = |iops: f64| point(&slo, iops, &measure(iops as u64, 0).unwrap(), "check");
        assert!(at(s).meets);
        let above = at(s + 0.02 * c.peak_iops);
        assert!(!above.meets, "{s}: {above:?}");
        eprintln!("{}", sentence(&c, "4 KiB random reads"));
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
        let c = job_ceiling(&paced, 1000.0).unwrap().expect("a model");
        // The model at 256 in flight gives far more than the job's 1000.
        assert!(c.iops > 10_000.0, "{c:?}");
        assert!((c.share_pct - 100_000.0 / c.iops).abs() < 1e-6, "{c:?}");
        assert!(c.basis.contains("emu:nvm-lowlat"), "{}", c.basis);
        let real = job(&[("filename", "/dev/nvme0n1"), ("rw", "randread")]);
        assert!(job_ceiling(&real, 1000.0).unwrap().is_none());
    }

    #[test]
    fn each_load_is_offered_open_loop_shared_among_the_threads_with_latency_from_the_schedule() {
        let paced = job(&[
            ("ioengine", "libaio"),
            ("rate_iops", "500"),
            ("numjobs", "2"),
        ]);
        let s = crate::job::spec(&job_at_load(&paced, 3001, 1), 0);
        assert_eq!(s.rate_iops, [Some(1501); 3]);
        assert!(s.sched.lat_from_schedule && s.sched.poisson);
        assert_eq!((s.thinktime_ns, s.sched.latency), (0, None));
        assert_eq!((s.iodepth, s.ramp_time_ns), (256, 500_000_000));
        let peak = crate::job::spec(&job_at_load(&paced, 0, 0), 0);
        assert_eq!(peak.rate_iops, [None; 3]);
        assert!(!peak.sched.lat_from_schedule);
    }
}
