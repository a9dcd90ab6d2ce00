//! The study as one call (`ssdready_study::session::study`): bad input and
//! a stop before the first run write nothing and say their exit codes; a
//! study of the built-in drive in-process, through a run function that
//! fails or through the run library itself, reports its plan, its runs
//! and the end of its sweeps to the observer and returns the document
//! with the header it was given.

use ssdready_measured::record::RunRecord;
use ssdready_run::{Failure, RunRequest, RunResult, SilentObserver};
use ssdready_study::ask::Ask;
use ssdready_study::driver;
use ssdready_study::plan::Plan;
use ssdready_study::session::{self, Allowed, Options, StudyError};
use ssdready_study::trials::{Hands, NoHands};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What the observer heard.
#[derive(Default)]
struct Heard {
    notes: Vec<String>,
    warnings: Vec<String>,
    blocks: Vec<String>,
    sweeps: usize,
    sweeps_done: usize,
    finished: Vec<String>,
}

impl driver::Observer for Heard {
    fn finished(&mut self, rec: &RunRecord) {
        self.finished.push(rec.id.clone());
    }
}

impl session::Observer for Heard {
    fn note(&mut self, line: &str) {
        self.notes.push(line.into());
    }
    fn warn(&mut self, line: &str) {
        self.warnings.push(line.into());
    }
    fn block(&mut self, text: &str) {
        self.blocks.push(text.into());
    }
    fn sweeps(&mut self, _plan: &Plan) {
        self.sweeps += 1;
    }
    fn sweeps_done(&mut self) {
        self.sweeps_done += 1;
    }
}

/// A quick, in-process study of the built-in drive into `dir`.
fn options(dir: &Path, budget: &str) -> Options {
    Options {
        ask: Ask {
            target: Some("emu:".into()),
            quick: true,
            output: Some(dir.to_path_buf()),
            budget: Some(budget.into()),
            in_process: true,
            ..Ask::default()
        },
        try_changes: false,
        stop: Arc::new(AtomicBool::new(false)),
        tool: "ssdready test".into(),
        command: vec!["ssdready".into(), "study".into()],
    }
}

fn no_hands(_: Allowed) -> Box<dyn Hands> {
    Box::new(NoHands("a test changes nothing".into()))
}

fn failing(_: &RunRequest) -> Result<RunResult, Failure> {
    Err(Failure::Runtime("the test's runs fail".into()))
}

#[test]
fn bad_input_and_a_stop_before_the_first_run_write_nothing() {
    let _one = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    let mut heard = Heard::default();
    let bad = session::study(&options(&dir, "1s"), &failing, &no_hands, &mut heard);
    let e = bad.err().expect("a budget of 1 s is refused");
    assert!(matches!(e, StudyError::Ask(_)), "{e}");
    assert_eq!(e.exit_code(), 2);
    let o = options(&dir, "30s");
    o.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let stopped = session::study(&o, &failing, &no_hands, &mut heard);
    let e = stopped.err().expect("a stop before the first run ends it");
    assert!(matches!(e, StudyError::Interrupted), "{e}");
    assert_eq!(e.exit_code(), 130);
    assert!(!dir.exists(), "nothing is written before the first run");
    assert_eq!(heard.sweeps, 0, "no sweep starts");
}

#[test]
fn failed_runs_are_in_the_document_and_heard_by_the_observer() {
    let _one = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    let mut heard = Heard::default();
    let s = session::study(&options(&dir, "30s"), &failing, &no_hands, &mut heard)
        .expect("the study runs");
    // Checked before the runs, not left: the caller's writer makes it with
    // the files, so a study killed meanwhile leaves no empty directory.
    assert!(!dir.exists(), "the output directory is made by the writer");
    assert_eq!(s.dir, dir);
    assert!(!s.doc.runs.is_empty(), "the plan's runs are recorded");
    assert!(s.doc.runs.iter().all(|r| r.error.is_some()));
    assert_eq!(heard.finished.len(), s.doc.runs.len());
    assert_eq!((heard.sweeps, heard.sweeps_done), (1, 1));
    assert!(
        !heard.blocks.is_empty(),
        "the plan is shown before the runs"
    );
    assert_eq!(s.doc.tool, "ssdready test");
    assert_eq!(s.doc.command, vec!["ssdready", "study"]);
    assert!(s.doc.quick && !s.doc.interrupted);
    assert!(s.doc.finished_unix_ms >= s.doc.started_unix_ms);
}

#[test]
fn runs_through_the_run_library_give_figures() {
    let _one = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("study");
    let run = |r: &RunRequest| ssdready_run::execute(r.clone(), &mut SilentObserver);
    let mut heard = Heard::default();
    let s =
        session::study(&options(&dir, "20s"), &run, &no_hands, &mut heard).expect("the study runs");
    let ok = s.doc.runs.iter().filter(|r| r.error.is_none()).count();
    assert!(
        ok > 0,
        "some runs succeed: {:?}",
        s.doc.runs.first().map(|r| &r.error)
    );
    assert!(
        !s.doc.figures.delivered_pct.is_empty(),
        "each measured run is set against the device's limit"
    );
    assert!(!s.doc.verdicts.is_empty(), "the runs are judged");
    assert!(s.doc.limits.is_some(), "the limits inventory is read");
    assert!(heard.warnings.is_empty(), "{:?}", heard.warnings);
}
