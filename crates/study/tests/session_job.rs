//! The study of a job file as one call (`ssdready_study::session::
//! study_job`) holds its budget by the clock: runs that take longer than
//! the plan said leave the rest unmade, and the study says so.

use ssdready_run::{RunRequest, SilentObserver};
use ssdready_study::ask::Ask;
use ssdready_study::session::{self, Allowed, Options};
use ssdready_study::session::{study_job, JobOptions};
use ssdready_study::trials::{Hands, NoHands};
use std::cell::Cell;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

struct Quiet;

impl ssdready_study::driver::Observer for Quiet {}

impl session::Observer for Quiet {
    fn note(&mut self, _: &str) {}
    fn warn(&mut self, _: &str) {}
    fn block(&mut self, _: &str) {}
    fn sweeps(&mut self, _: &ssdready_study::plan::Plan) {}
    fn sweeps_done(&mut self) {}
}

fn no_hands(_: Allowed) -> Box<dyn Hands> {
    Box::new(NoHands("a test changes nothing".into()))
}

#[test]
fn runs_slower_than_planned_stop_at_the_budget_and_the_study_says_so() {
    let _one = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("job.fio");
    std::fs::write(
        &file,
        "[j]\nioengine=null\nsize=1m\nruntime=1\ntime_based\n",
    )
    .unwrap();
    let o = JobOptions {
        study: Options {
            ask: Ask {
                quick: true,
                output: Some(tmp.path().join("study")),
                budget: Some("10s".into()),
                ..Ask::default()
            },
            try_changes: false,
            stop: Arc::new(AtomicBool::new(false)),
            tool: "ssdready test".into(),
            command: vec!["ssdready".into(), "study".into()],
        },
        file: file.display().to_string(),
        section: None,
        baseline: None,
    };
    // Each run takes its second and two more (a slow start the plan did
    // not foresee): about 3 s, where the plan counts 1.5 s.
    let made = Cell::new(0usize);
    let run = |r: &RunRequest| {
        if !r.parse_only {
            made.set(made.get() + 1);
            std::thread::sleep(Duration::from_secs(2));
        }
        ssdready_run::execute(r.clone(), &mut SilentObserver)
    };
    let s = study_job(&o, &run, &no_hands, &mut Quiet).expect("the study runs");
    // 10 s hold three runs of 3 s at most; without the clock the plan's
    // dozen would all run.
    assert!((1..=3).contains(&made.get()), "{} runs made", made.get());
    let said = s
        .doc
        .notes
        .iter()
        .any(|n| n.contains("ran out") && n.contains("were not made"));
    assert!(said, "{:?}", s.doc.notes);
}
