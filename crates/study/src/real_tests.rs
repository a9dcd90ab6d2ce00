//! The runner's own tests: each request through the run function, and
//! the queue read around each run.

use super::*;
use ssdready_core::result::RunResult;
use std::cell::RefCell;
use std::rc::Rc;

fn workload() -> Workload {
    Workload {
        targets: vec!["emu:".into()],
        ..Default::default()
    }
}

#[test]
fn each_points_request_goes_to_the_run_function_and_its_failures_are_sorted() {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let log = seen.clone();
    let mut answers = vec![
        Err(RunFailure::Runtime("the device went away".into())),
        Err(RunFailure::BadInput("option 'hipri': needs polling".into())),
        Ok(RunResult::default()),
    ];
    let run = move |r: &RunRequest| {
        log.borrow_mut().push(r.command_line());
        answers.pop().expect("three runs")
    };
    let job = |name: &str| {
        let mut r = RunRequest::default();
        r.job(name);
        r
    };
    let stop = Arc::new(AtomicBool::new(false));
    let mut r = RealRunner::new(stop.clone(), &[], Box::new(run));
    let o = r.run(&workload(), &job("a")).unwrap();
    assert_eq!(o.clock, "real");
    assert!(o.result.is_some());
    match r.run(&workload(), &job("b")) {
        Err(Failure::NotApplicable(m)) => assert!(m.contains("hipri")),
        other => panic!("{:?}", other.map(|o| o.clock)),
    }
    match r.run(&workload(), &job("c")) {
        Err(Failure::Failed(m)) => assert!(m.contains("went away")),
        other => panic!("{:?}", other.map(|o| o.clock)),
    }
    assert_eq!(seen.borrow().len(), 3);
    assert_eq!(seen.borrow()[1], vec!["--name=b".to_string()]);
    assert!(!r.stopped());
    stop.store(true, Relaxed);
    assert!(r.stopped());
    assert!(r.notes.is_empty() && r.restore().is_ok());
}

static READS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The queue as another process leaves it: 4 requests for the first
/// run (read before and after it), 128 after the second's.
fn queue_moved_in_second_run(_: &str) -> BTreeMap<String, String> {
    let n = READS.fetch_add(1, Relaxed);
    let nr = if n < 3 { "4" } else { "128" };
    BTreeMap::from([("nr_requests".to_string(), format!("{nr}\n"))])
}

#[test]
fn a_queue_setting_another_process_moves_during_a_run_is_noted_with_that_run() {
    let run = |_: &RunRequest| Ok(RunResult::default());
    let stop = Arc::new(AtomicBool::new(false));
    let mut r = RealRunner::new(stop, &[], Box::new(run));
    r.queue = Some(("loop7".into(), queue_moved_in_second_run));
    let mut w = workload();
    (w.rw, w.bs, w.qd, w.threads) = ("randread".into(), 4096, 16, 1);
    r.run(&w, &RunRequest::default()).unwrap();
    assert!(r.notes.is_empty(), "{:?}", r.notes);
    w.qd = 32;
    r.run(&w, &RunRequest::default()).unwrap();
    assert_eq!(
        r.notes,
        vec!["loop7's nr_requests 4 → 128 during a run (randread, 4 KiB, QD 32 × 1): another process changed it, so that run measured other settings than the study read".to_string()]
    );
}
