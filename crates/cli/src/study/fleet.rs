//! `ssdready study --client HOSTS [TARGET]`: the study of a fleet.
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

use super::StudyArgs;
use crate::{fail, say};
use ssdready_fleet::client::{self, Host, HostRun, Request};
use ssdready_fleet::merge;
use ssdready_study::fleet::{self as sf, HostFigure, HostInfo, Section};
use ssdready_study::model::{PlanDoc, StudyDoc, SweepDoc, TargetKind, TargetProfile};
use ssdready_study::model::{SCHEMA, SCHEMA_VERSION};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// The measured job's name in every host's job file.
const MEASURED: &str = "m";

/// What the command line asks, checked.
struct Plan {
    hosts: Vec<Host>,
    infos: Vec<HostInfo>,
    target: Option<String>,
    depths: Vec<u32>,
    runtime_s: f64,
    budget_s: f64,
    dir: PathBuf,
}

fn refuse_with_client(a: &StudyArgs) {
    if a.allow_destructive {
        fail(
            2,
            "option '--allow-destructive': not with --client (each server applies its own safety \
             checks to the target it is sent; a fleet's writes are never forced from here)",
        );
    }
    if a.in_process {
        fail(
            2,
            "option '--in-process': not with --client (it chooses the local default drive; a fleet \
             names its target, or runs fio's null engine)",
        );
    }
    let other = [
        ("--slo", a.slo.is_some()),
        ("--sweeps", !a.sweeps.is_empty()),
        ("--baseline", a.baseline.is_some()),
        ("--db", a.db.is_some()),
    ];
    if let Some((name, _)) = other.iter().find(|x| x.1) {
        fail(
            2,
            &format!("option '{name}': not with --client (the study of a fleet runs its own plan and is not recorded in the history)"),
        );
    }
}

/// Check the command line and that every host answers; bad input is one
/// line and exit code 2, with nothing written.
fn validate(a: &StudyArgs, stop: &AtomicBool) -> Plan {
    refuse_with_client(a);
    let budget_s = ssdready_core::units::parse_time_ns(&a.budget, 1_000_000_000)
        .map(|ns| ns as f64 / 1e9)
        .unwrap_or_else(|e| {
            fail(
                2,
                &format!("option '--budget': {e} (allowed: a time such as 10m or 90s)"),
            )
        });
    if budget_s < 10.0 {
        fail(
            2,
            &format!("option '--budget': {budget_s} s is too short (allowed: 10 s or more)"),
        );
    }
    let mut hosts: Vec<Host> = Vec::new();
    for spec in &a.client {
        let more = client::parse_hosts(spec).unwrap_or_else(|e| {
            fail(
                2,
                &format!(
                    "option '--client': {}",
                    e.trim_start_matches("option '--client': ")
                ),
            )
        });
        hosts.extend(more);
    }
    for (i, h) in hosts.iter().enumerate() {
        if hosts[..i].iter().any(|o| o.addr == h.addr) {
            fail(2, &format!("option '--client': host {},{} is named twice (a server runs one client at a time)", h.name, h.port));
        }
    }
    let target = a.target.clone();
    if let Some(t) = &target {
        if t.is_empty() || t.contains(['\n', '[', ']']) {
            fail(2, &format!("study target '{t}': not a path or emu: target for the hosts (no '[', ']' or line breaks)"));
        }
    }
    let dir = crate::output::result_dir(a.output.as_deref(), "ssdready-study", "study.json")
        .unwrap_or_else(|e| fail(2, &e));
    if dir.join("study.json").exists() {
        fail(
            2,
            &format!(
                "option '--output': {} already holds a study (study.json); name a new directory",
                dir.display()
            ),
        );
    }
    let infos = hosts
        .iter()
        .map(|h| match client::probe(h, stop) {
            Ok((v, p)) => HostInfo {
                host: format!("{},{}", h.name, h.port),
                hostname: p.hostname,
                fio_version: p.fio_version,
                protocol_version: v,
            },
            Err(e) => fail(
                2,
                &format!("option '--client': host {},{}: {e}", h.name, h.port),
            ),
        })
        .collect();
    let depths = if a.quick {
        vec![1, 16]
    } else {
        vec![1, 4, 16, 64]
    };
    let runs = (depths.len() * hosts.len() * 2) as f64;
    let mut runtime_s = if a.quick {
        1.0
    } else {
        (budget_s * 0.8 / runs).clamp(1.0, 5.0)
    };
    // Shorter runs for the tests (seconds), as the study of one machine.
    if let Some(r) = std::env::var("SSDREADY_STUDY_RUNTIME")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|&r| r > 0.0)
    {
        runtime_s = r;
    }
    Plan {
        hosts,
        infos,
        target,
        depths,
        runtime_s,
        budget_s,
        dir,
    }
}

/// How a run ends: after a time (alone) or a number of I/Os (together).
#[derive(Clone, Copy)]
enum Bound {
    Time(f64),
    Ios(u64, f64),
}

/// The job file every host of a run gets.
fn job(target: Option<&str>, quick: bool, qd: u32, bound: Bound) -> String {
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
    let saved = crate::output::write_in(dir, &file, &text).is_ok();
    let mut p = sf::combine(qd, runs.iter().map(figure).collect(), work);
    p.result = saved.then_some(file);
    p
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Run the plan: at each depth, each host alone, then hosts 1…N together.
fn measure(p: &Plan, quick: bool, stop: &AtomicBool, quiet: bool) -> (Section, bool) {
    let mut s = Section {
        hosts: p.infos.clone(),
        target: p.target.clone().unwrap_or_else(|| "null engine".into()),
        depths: p.depths.clone(),
        runtime_s: p.runtime_s,
        ..Default::default()
    };
    let tell = |m: String| {
        if !quiet {
            say(&format!("fleet: {m}"));
        }
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

/// Run `ssdready study --client`.
pub fn command(a: &StudyArgs, stop: Arc<AtomicBool>) -> ! {
    let started = std::time::Instant::now();
    let started_ms = super::now_ms();
    let p = validate(a, &stop);
    let n_runs = p.depths.len() * p.hosts.len() * 2;
    if !a.quiet {
        eprintln!(
            "ssdready: study of a fleet of {} hosts ({}): 4 KiB random reads at QD {:?}, each host alone for {:.1} s, then 1…{} hosts together with the same I/Os each; {n_runs} runs, about {:.0} s (up to {:.0} s if a host is slow)",
            p.hosts.len(),
            p.target.as_deref().unwrap_or("null engine"),
            p.depths,
            p.runtime_s,
            p.hosts.len(),
            n_runs as f64 * (p.runtime_s + 1.5),
            n_runs as f64 / 2.0 * (5.0 * p.runtime_s + 3.0)
        );
    }
    if let Err(e) = std::fs::create_dir_all(&p.dir) {
        fail(
            2,
            &format!("option '--output': creating {}: {e}", p.dir.display()),
        );
    }
    let (mut section, interrupted) = measure(&p, a.quick, &stop, a.quiet);
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
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect(),
        started_unix_ms: started_ms,
        finished_unix_ms: super::now_ms(),
        quick: a.quick,
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
        machine: super::detect::machine(None),
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
        figures: ssdready_study::figures::Figures {
            fleet: Some(section),
            ..Default::default()
        },
        facts,
        verdicts,
        interrupted,
        warnings: Vec::new(),
        capacity: None,
    };
    let text =
        serde_json::to_string_pretty(&doc).expect("the study model always serialises") + "\n";
    print!("{}", block(&doc, started.elapsed().as_secs_f64()));
    match crate::output::write_in(&p.dir, "study.json", &text) {
        Ok(path) => eprintln!("ssdready: wrote {}", path.display()),
        Err(e) => fail(1, &format!("writing {}/study.json: {e}", p.dir.display())),
    }
    match crate::report::write_report(&p.dir, &text) {
        Ok(path) => eprintln!("ssdready: wrote {}", path.display()),
        Err(e) => say(&format!(
            "warning: writing {}/report.html: {e}",
            p.dir.display()
        )),
    }
    if interrupted {
        eprintln!("ssdready: interrupted; the study covers what ran");
        std::process::exit(130);
    }
    if partial {
        say("fleet: partial: not every host finished every run (see figures.fleet)");
        std::process::exit(1);
    }
    std::process::exit(0);
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
fn block(doc: &StudyDoc, wall_s: f64) -> String {
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
