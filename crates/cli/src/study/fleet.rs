//! `ssdready study --client HOSTS [TARGET]`: the files of a fleet's study
//! and its exit code. The study itself is `ssdready_study::session`'s
//! (`session::fleet`); its runs, document and printed block are
//! `ssdready_study::fleet_run` (which says what is measured).

use crate::stdout::out;
use crate::{fail, say};
use ssdready_diagnosis::model::StudyDoc;
use ssdready_study::fleet_run;
use std::path::Path;

/// Print the fleet's block, write study.json and its report; the exit
/// code (130 when interrupted, 1 when partial or study.json not written).
pub(super) fn finish(doc: &StudyDoc, dir: &Path, partial: bool, wall_s: f64) -> crate::Done {
    let text = serde_json::to_string_pretty(doc).expect("the study model always serialises") + "\n";
    out!("{}", fleet_run::block(doc, wall_s))?;
    match crate::output::write_in(dir, "study.json", &text) {
        Ok(path) => eprintln!("ssdready: wrote {}", path.display()),
        Err(e) => return Err(fail(1, &e.to_string())),
    }
    match crate::report::write_report(dir, &text) {
        Ok(path) => eprintln!("ssdready: wrote {}", path.display()),
        Err(e) => say(&format!("warning: {e}")),
    }
    if doc.interrupted {
        eprintln!("ssdready: interrupted; the study covers what ran");
        return Err(crate::Exit(130));
    }
    if partial {
        let why = "fleet: partial: not every host finished every run";
        return Err(fail(1, &format!("{why} (see figures.fleet)")));
    }
    Ok(())
}
