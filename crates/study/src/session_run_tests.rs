//! The job's repeats as written under the budget: where the budget
//! refuses a repeat after one ran, the study goes on with those made.

use super::*;
use ssdready_core::options::RawOption;
use ssdready_core::result::{DirResult, JobResult};
use ssdready_run::{Failure, RunRequest, RunResult};

fn written() -> Vec<JobSection> {
    let o = |k: &str, v: &str| RawOption {
        key: k.into(),
        value: Some(v.into()),
        at: None,
    };
    vec![JobSection {
        name: "j".into(),
        global: false,
        options: vec![
            o("rw", "randwrite"),
            o("iodepth", "16"),
            o("filename", "/dev/null"),
        ],
    }]
}

/// A run of the job that wrote 50K times a second.
fn wrote() -> RunResult {
    RunResult {
        jobs: vec![JobResult {
            name: "j".into(),
            write: Some(DirResult {
                ios: 50_000,
                iops: 50_000.0,
                bw_bytes_per_s: 50_000.0 * 4096.0,
                ..Default::default()
            }),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn measured(second: Failure) -> (JobDoc, bool) {
    let judge = Judge {
        target: None,
        machine: Machine::default(),
        context: Default::default(),
    };
    let mut answers = vec![Err(second), Ok(wrote())];
    let mut run = move |_: &RunRequest| {
        answers
            .pop()
            .unwrap_or(Err(Failure::Runtime("no more".into())))
    };
    let stop = Arc::new(AtomicBool::new(false));
    let sections = written();
    let mut points = Points::new(&mut run, &sections, &judge, &stop);
    let mut doc = JobDoc::default();
    let ok = measure_job(&mut doc, &sections, &mut points, &stop, &mut |_| {});
    (doc, ok)
}

#[test]
fn a_repeat_the_budget_refused_after_one_ran_leaves_the_study_to_go_on_with_it() {
    let refused = format!(
        "{} 0 s of the budget left, a run takes 50 s",
        clock::NOT_RUN
    );
    let (doc, ok) = measured(Failure::NotStarted(refused.clone()));
    assert!(ok && doc.error.is_none(), "{:?}", doc.error);
    assert_eq!(doc.repeats.len(), 1);
    assert_eq!(doc.median_iops, 50_000.0);
    assert!(
        doc.notes
            .iter()
            .any(|n| n.starts_with("1 of 3 repeats as written: not run:")),
        "{:?}",
        doc.notes
    );
    // Any other failure is the job's: it did not run, whatever its words.
    let (doc, ok) = measured(Failure::Runtime(refused));
    assert!(!ok && doc.error.is_some());
    let (doc, ok) = measured(Failure::Runtime("the device went away".into()));
    assert!(!ok);
    assert!(doc
        .error
        .as_deref()
        .is_some_and(|e| e.contains("went away")));
}
