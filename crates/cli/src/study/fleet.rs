//! `ssdready study --client HOSTS [TARGET]`: the study of a fleet — its
//! progress and the files written. The command line's checks and the
//! hosts' probes are `ssdready_study::ask`; the runs, the document and the
//! printed block are `ssdready_study::fleet_run` (which says what is
//! measured).

use super::StudyArgs;
use crate::stdout::out;
use crate::{fail, say};
use ssdready_study::fleet_run::{self, Started};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Run `ssdready study --client`.
pub fn command(a: &StudyArgs, stop: Arc<AtomicBool>) -> crate::Done {
    let started = std::time::Instant::now();
    let started_ms = ssdready_study::session::now_ms();
    // Bad input: one line, exit code 2, nothing written.
    let p = a.ask().fleet(&stop).map_err(|e| fail(2, &e.to_string()))?;
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
        ssdready_study::session::now_ms(),
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
