//! The study of a fleet (`ssdready study --client HOSTS [TARGET]`): its
//! runs, its document and its printed block. The binary checks the
//! command line, probes the hosts and writes the files.
//!
//! Every host (a `fio --server` or an `ssdready server`) must answer
//! before anything runs. Then, at each queue depth of a small plan of
//! 4 KiB random reads: each host alone for the run time (its own limit),
//! then hosts 1…N together, each given the same number of I/Os (the median
//! host's solo rate × the run time), so that a straggler shows as a longer
//! runtime. Each run's consolidated result (json+, as `run --client`
//! writes it) is kept beside study.json as `fleet-qdD-nN.json` (or
//! `fleet-qdD-solo-I.json`); the section itself (`figures.fleet`) and its
//! verdicts come from `ssdready_study::fleet`.
//!
//! TARGET is what each host's job reads, on that host: a path (read with
//! libaio and O_DIRECT), `emu:…` (ssdready servers only; filled first, as
//! the study fills an emulated drive), or, when none is named, fio's null
//! engine (each host's I/O path without a device).

use crate::fleet::{self as sf, HostFigure, HostInfo, Section};
use crate::model::{PlanDoc, StudyDoc, SweepDoc};
use ssdready_fleet::client::{self, Host, HostRun, Request};
use ssdready_fleet::merge;
use ssdready_measured::record::{Machine, TargetKind, TargetProfile};
use ssdready_measured::schema::{SCHEMA, SCHEMA_VERSION};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The measured job's name in every host's job file.
const MEASURED: &str = "m";

/// What the command line asks, checked.
#[derive(Debug)]
pub struct Plan {
    pub hosts: Vec<Host>,
    pub infos: Vec<HostInfo>,
    pub target: Option<String>,
    pub depths: Vec<u32>,
    pub runtime_s: f64,
    pub budget_s: f64,
    pub dir: PathBuf,
}

impl Plan {
    /// The queue depths of a quick or full study.
    pub fn depths(quick: bool) -> Vec<u32> {
        if quick {
            vec![1, 16]
        } else {
            vec![1, 4, 16, 64]
        }
    }

    /// Each run's time: 1 s when quick, else the budget spread over the
    /// runs (each host alone and together at each depth), 1 to 5 s.
    pub fn runtime_s(quick: bool, budget_s: f64, depths: usize, hosts: usize) -> f64 {
        let runs = (depths * hosts * 2) as f64;
        if quick {
            1.0
        } else {
            (budget_s * 0.8 / runs).clamp(1.0, 5.0)
        }
    }

    /// How many runs the plan holds.
    pub fn runs(&self) -> usize {
        self.depths.len() * self.hosts.len() * 2
    }
}

/// How a run ends: after a time (alone) or a number of I/Os (together).
#[derive(Clone, Copy)]
pub enum Bound {
    Time(f64),
    Ios(u64, f64),
}

/// The job file every host of a run gets.
pub fn job(target: Option<&str>, quick: bool, qd: u32, bound: Bound) -> String {
    let ms = |s: f64| format!("{}ms", (s * 1000.0).round() as u64);
    let mut j = format!("[global]\nrw=randread\nbs=4k\niodepth={qd}\n");
    let region = match target {
        None => {
            j += "ioengine=null\n";
            "1g"
        }
        Some(t) if t.starts_with("emu:") => {
            j += &format!("filename={t}\n[fill]\nrw=write\nbs=1m\niodepth=8\nsize=64m\n");
            "64m"
        }
        Some(t) => {
            j += &format!("filename={t}\nioengine=libaio\ndirect=1\n");
            if quick {
                "64m"
            } else {
                "256m"
            }
        }
    };
    j += &format!("[{MEASURED}]\n");
    if target.is_some_and(|t| t.starts_with("emu:")) {
        j += "stonewall\n";
    }
    j += &format!("size={region}\n");
    match bound {
        Bound::Time(s) => j += &format!("time_based\nruntime={}\n", ms(s)),
        Bound::Ios(n, cap) => j += &format!("io_size={}\nruntime={}\n", n * 4096, ms(cap)),
    }
    j
}

/// One host's figures in a run: its measured job's reads.
fn figure(r: &HostRun) -> HostFigure {
    let d = merge::merge(r.ts.iter().filter(|t| t.ts.text("name") == MEASURED));
    let rd = &d[0];
    let error = (!r.complete()).then(|| {
        r.error.clone().unwrap_or_else(|| match r.stop {
            Some((e, s)) if (e, s) != (0, 0) => format!("the run ended with error {e}, signal {s}"),
            _ => format!("{} of {} result blocks", r.ts.len(), r.stats_announced),
        })
    });
    HostFigure {
        host: format!("{},{}", r.host.name, r.host.port),
        ios: rd.ios,
        iops: rd.iops,
        runtime_ms: rd.runtime_ms,
        work_ms: None,
        projected: false,
        p99_ns: merge::percentiles(&rd.bins[1], &[99.0])
            .first()
            .map(|x| x.1),
        error,
        clat_bins: rd.bins[1].clone(),
    }
}

/// Run `hosts` together and keep the consolidated result as `file`.
fn point(
    hosts: &[Host],
    job: String,
    (qd, work): (u32, Option<u64>),
    dir: &Path,
    file: String,
    stop: &AtomicBool,
) -> sf::Point {
    let req = Request {
        args: Vec::new(),
        jobs: vec![job],
    };
    let runs = client::run_fleet(hosts, &req, stop);
    let doc = merge::document(&runs, true);
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    let saved = ssdready_run::output::write_in(dir, &file, &text).is_ok();
    let mut p = sf::combine(qd, runs.iter().map(figure).collect(), work);
    p.result = saved.then_some(file);
    p
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Run the plan: at each depth, each host alone, then hosts 1…N together;
/// `tell` hears each run as it starts. Returns the section and whether it
/// was interrupted.
pub fn measure(p: &Plan, quick: bool, stop: &AtomicBool, tell: &dyn Fn(String)) -> (Section, bool) {
    let mut s = Section {
        hosts: p.infos.clone(),
        target: p.target.clone().unwrap_or_else(|| "null engine".into()),
        depths: p.depths.clone(),
        runtime_s: p.runtime_s,
        ..Default::default()
    };
    let t = p.target.as_deref();
    for &qd in &p.depths {
        let mut solo_iops = Vec::new();
        for (i, h) in p.hosts.iter().enumerate() {
            if stop.load(Relaxed) {
                return (s, true);
            }
            tell(format!("QD {qd}: {},{} alone", h.name, h.port));
            let j = job(t, quick, qd, Bound::Time(p.runtime_s));
            let pt = point(
                std::slice::from_ref(h),
                j,
                (qd, None),
                &p.dir,
                format!("fleet-qd{qd}-solo-{}.json", i + 1),
                stop,
            );
            solo_iops.push(pt.iops);
            s.solo.push(pt);
        }
        // The same work on every host: what the median host does alone in
        // the run time (at least 64 I/Os); a run may take 4× that long.
        let ios = ((median(solo_iops) * p.runtime_s).round() as u64).max(64);
        for n in 1..=p.hosts.len() {
            if stop.load(Relaxed) {
                return (s, true);
            }
            tell(format!("QD {qd}: {n} host(s) together, {ios} I/Os each"));
            let j = job(t, quick, qd, Bound::Ios(ios, p.runtime_s * 4.0));
            s.scaling.push(point(
                &p.hosts[..n],
                j,
                (qd, Some(ios)),
                &p.dir,
                format!("fleet-qd{qd}-n{n}.json"),
                stop,
            ));
        }
    }
    (s, stop.load(Relaxed))
}

/// How the study was started, for its document.
pub struct Started {
    pub unix_ms: u64,
    pub tool: String,
    pub command: Vec<String>,
    pub quick: bool,
}

/// The document of a fleet's study, and whether it is partial (a host did
/// not finish every run).
pub fn document(
    p: &Plan,
    mut section: Section,
    interrupted: bool,
    started: Started,
    finished_unix_ms: u64,
    machine: Machine,
) -> (StudyDoc, bool) {
    let n_runs = p.runs();
    sf::finish(&mut section);
    let (facts, verdicts) = sf::judge(&section, interrupted);
    let partial = section
        .scaling
        .iter()
        .chain(&section.solo)
        .any(|x| x.partial);
    let doc = StudyDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: started.tool,
        command: started.command,
        started_unix_ms: started.unix_ms,
        finished_unix_ms,
        quick: started.quick,
        budget_s: p.budget_s,
        targets: vec![TargetProfile {
            spec: section.target.clone(),
            kind: if p.target.as_deref().is_some_and(|t| t.starts_with("emu:")) {
                TargetKind::Emulator
            } else {
                TargetKind::File
            },
            transport: "fleet".into(),
            ..Default::default()
        }],
        machine,
        plan: PlanDoc {
            runtime_s: p.runtime_s,
            points: n_runs,
            eta_s: n_runs as f64 * (p.runtime_s + 1.5),
            sweeps: vec![SweepDoc {
                name: "fleet".into(),
                points: n_runs,
                what: "4 KiB random reads: each host alone, then hosts 1…N together".into(),
            }],
            ..Default::default()
        },
        skipped: Vec::new(),
        runs: Vec::new(),
        figures: crate::figures::Figures {
            fleet: Some(section),
            ..Default::default()
        },
        facts,
        verdicts,
        interrupted,
        warnings: Vec::new(),
        capacity: None,
        limits: None,
        trials: None,
    };
    (doc, partial)
}

fn fmt_pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.0} %"))
}

fn fmt_ns(x: Option<u64>) -> String {
    x.map_or("-".into(), |v| {
        if v >= 1_000_000 {
            format!("{:.2} ms", v as f64 / 1e6)
        } else if v >= 1_000 {
            format!("{:.1} µs", v as f64 / 1e3)
        } else {
            format!("{v} ns")
        }
    })
}

/// The printed study block: the scaling table, the fleet's delivered
/// fraction, the verdicts.
pub fn block(doc: &StudyDoc, wall_s: f64) -> String {
    let Some(s) = &doc.figures.fleet else {
        return String::new();
    };
    let mut o = format!(
        "\nStudy of a fleet: {} hosts, {} ({:.0} s)\n",
        s.hosts.len(),
        s.target,
        wall_s
    );
    for h in &s.hosts {
        o += &format!("  {} ({}, {})\n", h.host, h.hostname, h.fio_version);
    }
    o += "\nScaling (4 KiB random reads; p99 from the hosts' histograms summed bin by bin):\n";
    o += &format!(
        "  {:>4} {:>5} {:>12} {:>10} {:>14} {:>10} {:>10}  {}\n",
        "QD", "hosts", "IOPS", "p99", "alone, summed", "efficiency", "vs N×first", "slowest host"
    );
    for p in &s.scaling {
        let slow = p.slowest.as_ref().map_or("-".into(), |x| {
            format!(
                "{} ({:.0} % of the time, {:+.0} % on the others{})",
                x.host,
                x.share_of_fleet_time_pct,
                x.past_median_pct,
                if x.projected {
                    "; projected: it hit the time cap"
                } else {
                    ""
                }
            )
        });
        o += &format!(
            "  {:>4} {:>5} {:>12.0} {:>10} {:>14} {:>10} {:>10}  {}{}\n",
            p.qd,
            p.n,
            p.iops,
            fmt_ns(p.p99_ns),
            p.solo_sum_iops.map_or("-".into(), |v| format!("{v:.0}")),
            fmt_pct(p.efficiency_pct),
            fmt_pct(p.vs_first_pct),
            slow,
            if p.partial { "  PARTIAL" } else { "" }
        );
    }
    if let (Some(d), Some(l)) = (s.delivered_pct, s.own_limits_iops) {
        o += &format!(
            "\nThe fleet delivers {d:.0} % of its hosts' own limits summed ({:.0} IOPS against {l:.0}).\n",
            s.best.as_ref().map_or(0.0, |b| b.iops)
        );
    }
    for v in &doc.verdicts {
        o += &format!("\n* {}\n  -> {}\n", v.finding, v.recommendation);
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_plan_spreads_the_budget_and_a_quick_one_runs_a_second() {
        assert_eq!(Plan::depths(true), vec![1, 16]);
        assert_eq!(Plan::runtime_s(true, 600.0, 2, 3), 1.0);
        // 4 depths × 2 hosts × 2 = 16 runs: 80 % of 60 s is 3 s each.
        assert_eq!(Plan::runtime_s(false, 60.0, 4, 2), 3.0);
        assert_eq!(Plan::runtime_s(false, 10_000.0, 4, 2), 5.0);
        assert_eq!(Plan::runtime_s(false, 10.0, 4, 8), 1.0);
    }

    #[test]
    fn the_median_of_the_solo_rates_is_the_middle_one() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![]), 0.0);
    }

    #[test]
    fn jobs_bound_alone_by_time_together_by_ios() {
        let j = job(None, true, 16, Bound::Time(1.5));
        assert!(
            j.contains("ioengine=null") && j.contains("iodepth=16"),
            "{j}"
        );
        assert!(
            j.contains("[m]\nsize=1g\ntime_based\nruntime=1500ms"),
            "{j}"
        );
        let j = job(Some("emu:nvme-tlc"), true, 4, Bound::Ios(1000, 4.0));
        assert!(j.contains("[fill]") && j.contains("[m]\nstonewall"), "{j}");
        assert!(j.contains("io_size=4096000\nruntime=4000ms"), "{j}");
        let j = job(Some("/data/f"), false, 1, Bound::Time(1.0));
        assert!(
            j.contains("filename=/data/f\nioengine=libaio\ndirect=1"),
            "{j}"
        );
    }
}
