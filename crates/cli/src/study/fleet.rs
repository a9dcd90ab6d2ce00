//! `ssdready study --client HOSTS [TARGET]`: the study of a fleet — the
//! command line checked, every host probed before anything runs, the
//! files written. The runs, the document and the printed block are
//! `ssdready_study::fleet_run` (which says what is measured).

use super::StudyArgs;
use crate::stdout::out;
use crate::{fail, say};
use ssdready_fleet::client::{self, Host};
use ssdready_study::fleet::HostInfo;
use ssdready_study::fleet_run::{self, Plan, Started};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn refuse_with_client(a: &StudyArgs) -> crate::Done {
    if a.allow_destructive {
        return Err(fail(
            2,
            "option '--allow-destructive': not with --client (each server applies its own safety \
             checks to the target it is sent; a fleet's writes are never forced from here)",
        ));
    }
    if a.in_process {
        return Err(fail(
            2,
            "option '--in-process': not with --client (it chooses the local default drive; a fleet \
             names its target, or runs fio's null engine)",
        ));
    }
    let other = [
        ("--slo", a.slo.is_some()),
        ("--sweeps", !a.sweeps.is_empty()),
        ("--baseline", a.baseline.is_some()),
        ("--db", a.db.is_some()),
    ];
    if let Some((name, _)) = other.iter().find(|x| x.1) {
        return Err(fail(
            2,
            &format!("option '{name}': not with --client (the study of a fleet runs its own plan and is not recorded in the history)"),
        ));
    }
    Ok(())
}

/// `--budget` as seconds: at least 10 s.
fn fleet_budget(a: &StudyArgs) -> Result<f64, crate::Exit> {
    let budget_s = ssdready_core::units::parse_time_ns(&a.budget, 1_000_000_000)
        .map(|ns| ns as f64 / 1e9)
        .map_err(|e| {
            fail(
                2,
                &format!("option '--budget': {e} (allowed: a time such as 10m or 90s)"),
            )
        })?;
    if budget_s < 10.0 {
        return Err(fail(
            2,
            &format!("option '--budget': {budget_s} s is too short (allowed: 10 s or more)"),
        ));
    }
    Ok(budget_s)
}

/// The hosts of every `--client`, each named once.
fn hosts_of(a: &StudyArgs) -> Result<Vec<Host>, crate::Exit> {
    let mut hosts: Vec<Host> = Vec::new();
    for spec in &a.client {
        let more = client::parse_hosts(spec).map_err(|e| {
            fail(
                2,
                &format!(
                    "option '--client': {}",
                    e.to_string().trim_start_matches("option '--client': ")
                ),
            )
        })?;
        hosts.extend(more);
    }
    for (i, h) in hosts.iter().enumerate() {
        if hosts[..i].iter().any(|o| o.addr == h.addr) {
            return Err(fail(2, &format!("option '--client': host {},{} is named twice (a server runs one client at a time)", h.name, h.port)));
        }
    }
    Ok(hosts)
}

/// What each host says it is; a host that does not answer is bad input.
fn probe_hosts(hosts: &[Host], stop: &AtomicBool) -> Result<Vec<HostInfo>, crate::Exit> {
    hosts
        .iter()
        .map(|h| match client::probe(h, stop) {
            Ok((v, p)) => Ok(HostInfo {
                host: format!("{},{}", h.name, h.port),
                hostname: p.hostname,
                fio_version: p.fio_version,
                protocol_version: v,
            }),
            Err(e) => Err(fail(
                2,
                &format!("option '--client': host {},{}: {e}", h.name, h.port),
            )),
        })
        .collect()
}

/// Check the command line and that every host answers; bad input is one
/// line and exit code 2, with nothing written.
fn validate(a: &StudyArgs, stop: &AtomicBool) -> Result<Plan, crate::Exit> {
    refuse_with_client(a)?;
    let budget_s = fleet_budget(a)?;
    let hosts = hosts_of(a)?;
    let target = a.target.clone();
    if let Some(t) = &target {
        if t.is_empty() || t.contains(['\n', '[', ']']) {
            return Err(fail(2, &format!("study target '{t}': not a path or emu: target for the hosts (no '[', ']' or line breaks)")));
        }
    }
    let dir = crate::output::result_dir(a.output.as_deref(), "ssdready-study", "study.json")
        .map_err(|e| fail(2, &e.to_string()))?;
    if dir.join("study.json").exists() {
        return Err(fail(
            2,
            &format!(
                "option '--output': {} already holds a study (study.json); name a new directory",
                dir.display()
            ),
        ));
    }
    let infos = probe_hosts(&hosts, stop)?;
    let depths = Plan::depths(a.quick);
    let mut runtime_s = Plan::runtime_s(a.quick, budget_s, depths.len(), hosts.len());
    // Shorter runs for the tests (seconds), as the study of one machine.
    if let Some(r) = std::env::var("SSDREADY_STUDY_RUNTIME")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|&r| r > 0.0)
    {
        runtime_s = r;
    }
    Ok(Plan {
        hosts,
        infos,
        target,
        depths,
        runtime_s,
        budget_s,
        dir,
    })
}

/// Run `ssdready study --client`.
pub fn command(a: &StudyArgs, stop: Arc<AtomicBool>) -> crate::Done {
    let started = std::time::Instant::now();
    let started_ms = super::now_ms();
    let p = validate(a, &stop)?;
    let n_runs = p.runs();
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
        return Err(fail(
            2,
            &format!("option '--output': creating {}: {e}", p.dir.display()),
        ));
    }
    let tell = |m: String| {
        if !a.quiet {
            say(&format!("fleet: {m}"));
        }
    };
    let (section, interrupted) = fleet_run::measure(&p, a.quick, &stop, &tell);
    let started_by = Started {
        unix_ms: started_ms,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect(),
        quick: a.quick,
    };
    let machine = ssdready_study::detect::machine(None);
    let (doc, partial) = fleet_run::document(
        &p,
        section,
        interrupted,
        started_by,
        super::now_ms(),
        machine,
    );
    let text =
        serde_json::to_string_pretty(&doc).expect("the study model always serialises") + "\n";
    out!(
        "{}",
        fleet_run::block(&doc, started.elapsed().as_secs_f64())
    )?;
    match crate::output::write_in(&p.dir, "study.json", &text) {
        Ok(path) => eprintln!("ssdready: wrote {}", path.display()),
        Err(e) => return Err(fail(1, &e.to_string())),
    }
    match crate::report::write_report(&p.dir, &text) {
        Ok(path) => eprintln!("ssdready: wrote {}", path.display()),
        Err(e) => say(&format!("warning: {e}")),
    }
    if interrupted {
        eprintln!("ssdready: interrupted; the study covers what ran");
        return Err(crate::Exit(130));
    }
    if partial {
        let why = "fleet: partial: not every host finished every run (see figures.fleet)";
        return Err(fail(1, why));
    }
    Ok(())
}
