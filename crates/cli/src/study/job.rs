//! `ssdready study --job FILE [--section NAME] [TARGET]`: the study of the
//! user's own workload, one call of the study crate
//! (`ssdready_study::session_job::study_job`: the job file read and
//! checked whole before anything is written, then run in repeats and in
//! variants); here its files are written — `DIR/job-study.json` (the
//! figures, the job file's text and hash), `job-best.fio` with its host
//! changes' files when the best configuration gained — the findings go to
//! stdout, and the study is set against `--baseline` (exit 3 when worse).

use super::{print::Shown, StudyArgs};
use crate::{fail, say};
use ssdready_study::progress::{self, wrote};
use ssdready_study::session::{self, Options, Run};
use ssdready_study::session_job::{study_job, JobOptions};

/// Run `ssdready study --job FILE`.
pub(super) fn command(
    a: &StudyArgs,
    o: Options,
    file: &str,
    run: &Run,
    shown: &mut Shown,
) -> crate::Done {
    let (section, baseline) = (a.section.clone(), a.baseline.clone());
    let o = JobOptions {
        study: o,
        file: file.into(),
        section,
        baseline,
    };
    let s = study_job(&o, run, &session::host_hands, shown)
        .map_err(|e| fail(e.exit_code(), &e.to_string()))?;
    let json = serde_json::to_string_pretty(&s.doc).map_err(|e| fail(1, &e.to_string()))? + "\n";
    let write = |name: &str, text: &str| {
        ssdready_run::output::write_in(&s.dir, name, text).map_err(|e| e.to_string())
    };
    let path = write("job-study.json", &json).map_err(|e| fail(1, &e))?;
    if let Some(text) = &s.best {
        let p = write("job-best.fio", text).map_err(|e| fail(1, &e))?;
        eprintln!(
            "ssdready: {}",
            wrote(&p, "the job with the best configuration")
        );
        for f in &s.host_files {
            match write(f.name, &f.text) {
                Ok(p) => eprintln!(
                    "ssdready: {}",
                    wrote(&p, "the best configuration's host changes")
                ),
                Err(e) => say(&format!("{} was not written: {e}", f.name)),
            }
        }
    }
    crate::stdout::print(&ssdready_study::job_run::text(&s.doc))?;
    eprintln!("ssdready: {}", wrote(&path, ""));
    if let (code @ 1.., Some(line)) = progress::job_end(&s.doc) {
        return Err(fail(code, &line));
    }
    match s.compared.as_ref().map(progress::compared) {
        Some((line, worse)) => {
            say(&line);
            crate::done(if worse { 3 } else { 0 })
        }
        None => Ok(()),
    }
}
