//! `ssdready study --job FILE [--section NAME] [TARGET]`: the study of the
//! user's own workload (`ssdready_study::job`, `ssdready_study::job_run`).
//! The job file is read as `run` reads it (includes, globals, several
//! jobs; TARGET replaces each job's `filename`), checked whole before
//! anything is written (a parse-only run: every option, and the targets'
//! safety checks with `--allow-destructive` as `run` takes it), then run
//! in repeats and in variants; `DIR/job-study.json` holds the figures and
//! the job file's text and hash, and the findings go to stdout.

use super::StudyArgs;
use crate::{fail, say};
use ssdready_study::job;
use ssdready_study::job_run::{self, JobDoc};
use ssdready_study::session_job;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// The options a study of a job file does not take, and why.
fn refuse_options(a: &StudyArgs) -> crate::Done {
    let not = [
        (
            "--client",
            !a.client.is_empty(),
            "a fleet's study runs its own plan",
        ),
        (
            "--slo",
            a.slo.is_some(),
            "the job's own rate and depth set its load",
        ),
        (
            "--sweeps",
            !a.sweeps.is_empty(),
            "the job is the study's point",
        ),
        ("--in-process", a.in_process, "the job names its own target"),
    ];
    match not.iter().find(|x| x.1) {
        Some((name, _, why)) => Err(fail(2, &format!("option '{name}': not with --job ({why})"))),
        None => Ok(()),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The job file's sections, checked; its text.
fn read(
    a: &StudyArgs,
    file: &str,
) -> Result<(Vec<ssdready_core::options::Section>, String), crate::Exit> {
    let mut args = vec![file.to_string()];
    if let Some(s) = &a.section {
        args.push(format!("--section={s}"));
    }
    let parsed = ssdready_cmdline::args::parse(&args).map_err(|e| fail(2, &e.to_string()))?;
    job::check(&parsed.sections, file).map_err(|e| fail(2, &e.to_string()))?;
    let text = std::fs::read_to_string(file)
        .map_err(|e| fail(2, &format!("option '--job': {file}: {e}")))?;
    Ok((parsed.sections, text))
}

/// The hands that change the host for the job's trials (the device
/// study's), and the locks of the job's devices, taken as root when asked
/// (another process holding one: no queue setting is changed, said once).
fn hands(
    a: &StudyArgs,
    sections: &[ssdready_core::options::Section],
    root: bool,
) -> (
    ssdready_study::trials_hands::HostHands,
    Vec<ssdready_tune::lock::DeviceLock>,
) {
    let disks = ssdready_study::job_levers::disks(sections);
    let mut hands = ssdready_study::trials_hands::HostHands::new(disks.clone(), root);
    let locks = match root && a.try_changes {
        true => ssdready_study::trials_hands::hold(&disks).unwrap_or_else(|why| {
            say(&why);
            hands.refuse_queue(why);
            Vec::new()
        }),
        false => Vec::new(),
    };
    (hands, locks)
}

/// The command that tries the host's changes on this job.
fn ask_command(a: &StudyArgs, file: &str) -> String {
    format!(
        "sudo ssdready study --job {file}{}{} --try-changes",
        a.section
            .as_ref()
            .map_or(String::new(), |s| format!(" --section {s}")),
        a.target.as_ref().map_or(String::new(), |t| format!(" {t}"))
    )
}

/// Run `ssdready study --job FILE`.
pub(super) fn command(a: &StudyArgs, file: &str, stop: Arc<AtomicBool>) -> crate::Done {
    refuse_options(a)?;
    let (budget_s, dir) = a.ask().check().map_err(|e| fail(2, &e.to_string()))?;
    let earlier = a.baseline.as_deref().map(baseline).transpose()?;
    let budget_s = if a.quick {
        budget_s.min(60.0)
    } else {
        budget_s
    };
    let (sections, text) = read(a, file)?;
    let as_written = job::with_target(&sections, a.target.as_deref());
    let (caps, limits, inv) = session_job::caps(&as_written);
    // The host's changes only as root and asked, under the devices' locks
    // (held for the study's whole length), through the device study's hands.
    let root = ssdready_io::kdev::is_root();
    let (mut hands, _locks) = hands(a, &as_written, root);
    let ask = ask_command(a, file);
    let mut host = job_run::HostPlan::new(
        &as_written,
        Some(inv.clone()),
        a.try_changes,
        &mut hands,
        ask,
    );
    let runs = job_run::REPEATS
        + usize::from(root)
        + job::variants(&sections).len()
        + 2 * ssdready_study::job_best::PAIRS
        + host.runs()
        + job_run::capacity_runs(&sections);
    let host_runs = host.runs();
    let runtime = session_job::runtime_s(budget_s, runs);
    let (sections, cut) = job::prepared(&sections, a.target.as_deref(), runtime);
    // Every option and the targets' safety, before anything is written.
    let mut check = job::request(&sections, &stop);
    check.parse_only = true;
    crate::progress::run_request(&check, stop.clone(), a.allow_destructive)
        .map_err(|e| fail(e.exit_code(), e.message()))?;
    if stop.load(Relaxed) {
        return Err(fail(
            130,
            "interrupted before the study's first run (nothing written)",
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| {
        fail(
            2,
            &format!("option '--output': creating {}: {e}", dir.display()),
        )
    })?;
    if !a.quiet {
        for l in &limits {
            say(&format!("a limit on this study's I/O: {l}"));
        }
    }
    let mut doc = JobDoc {
        schema: job_run::SCHEMA.into(),
        schema_version: job_run::SCHEMA_VERSION,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        command: std::env::args().collect(),
        started_unix_ms: now_ms(),
        job_file: file.into(),
        job_sha256: job_run::sha256(&text),
        job_text: text,
        section: a.section.clone(),
        target: a.target.clone(),
        runtime_s: runtime,
        limits,
        notes: cut.into_iter().collect(),
        ..Default::default()
    };
    if !a.quiet {
        say(&format!(
            "studying the job file {file}: {} repeats as written, then {} more runs (its variants{}), {runtime:.0} s each",
            job_run::REPEATS,
            runs - job_run::REPEATS,
            if host_runs > 0 { ", the host's changes" } else { "" }
        ));
    }
    let allow = a.allow_destructive;
    let s = stop.clone();
    let mut run =
        move |r: &ssdready_run::RunRequest| crate::progress::run_request(r, s.clone(), allow);
    let quiet = a.quiet;
    let mut tell = |m: String| {
        if !quiet {
            say(&m);
        }
    };
    let both = (&mut run as &mut ssdready_run::RunFn, &mut host);
    job_run::execute(&mut doc, &sections, &caps, both, &stop, &mut tell);
    drop(host);
    doc.notes.extend(hands.finish());
    doc.finished_unix_ms = now_ms();
    doc.interrupted |= stop.load(Relaxed);
    let best = session_job::best_file(&mut doc, &as_written);
    finish(
        &doc,
        &dir,
        best.as_deref(),
        &job_run::host_files(&doc, Some(&inv)),
    )?;
    match earlier.map(|e| job_run::compare(&doc, &e)) {
        Some(job_run::Compared::Same { change_pct, worse }) => {
            say(&format!(
                "against the baseline: the job's IOPS {change_pct:+.1} % ({})",
                if worse {
                    "worse beyond the noise"
                } else {
                    "within the noise or better"
                }
            ));
            if worse {
                return Err(crate::Exit(3));
            }
        }
        Some(job_run::Compared::OtherFile { was }) => say(&format!(
            "no comparison with the baseline: it studied another job file ({was}, another SHA-256)"
        )),
        None => {}
    }
    Ok(())
}

/// An earlier job study (a directory or its job-study.json); bad input is
/// one line and exit code 2.
fn baseline(path: &str) -> Result<JobDoc, crate::Exit> {
    let p = Path::new(path);
    let file = match p.is_dir() {
        true => p.join("job-study.json"),
        false => p.to_path_buf(),
    };
    let text = std::fs::read_to_string(&file)
        .map_err(|e| fail(2, &format!("option '--baseline': {}: {e}", file.display())))?;
    let doc: JobDoc = serde_json::from_str(&text).map_err(|e| {
        fail(
            2,
            &format!(
                "option '--baseline': {}: not a job study ({e})",
                file.display()
            ),
        )
    })?;
    match doc.schema == job_run::SCHEMA {
        true => Ok(doc),
        false => Err(fail(
            2,
            &format!(
                "option '--baseline': {}: not a job study (allowed: a directory or job-study.json of `study --job`)",
                file.display()
            ),
        )),
    }
}

/// Write job-study.json (and job-best.fio when the best configuration
/// gained, with the files of its host changes) and print the findings;
/// the exit code.
fn finish(
    doc: &JobDoc,
    dir: &Path,
    best: Option<&str>,
    host_files: &[ssdready_diagnosis::combination_files::File],
) -> crate::Done {
    let json = serde_json::to_string_pretty(doc).map_err(|e| fail(1, &e.to_string()))? + "\n";
    let path = ssdready_run::output::write_in(dir, "job-study.json", &json)
        .map_err(|e| fail(1, &e.to_string()))?;
    if let Some(text) = best {
        let p = ssdready_run::output::write_in(dir, "job-best.fio", text)
            .map_err(|e| fail(1, &e.to_string()))?;
        eprintln!(
            "ssdready: wrote {} (the job with the best configuration)",
            p.display()
        );
        for f in host_files {
            match ssdready_run::output::write_in(dir, f.name, &f.text) {
                Ok(p) => eprintln!(
                    "ssdready: wrote {} (the best configuration's host changes)",
                    p.display()
                ),
                Err(e) => say(&format!("{} was not written: {e}", f.name)),
            }
        }
    }
    crate::stdout::write(&job_run::text(doc)).map_err(|e| fail(1, &e))?;
    eprintln!("ssdready: wrote {}", path.display());
    match (&doc.error, doc.interrupted) {
        (_, true) => Err(fail(130, "interrupted; the study covers what ran")),
        (Some(e), _) => Err(fail(1, &format!("the job did not run: {e}"))),
        _ => Ok(()),
    }
}
