//! fio's job semantics in the worker loop, against the scripted engine:
//! `rate_iops_min` (fio's check_min_rate) and `wait_for` (the start held
//! until the waitee is done, or a stop). Each check counts I/Os the engine
//! saw, or rests on a bound the engine sets (its latency caps its IOPS): a
//! loaded machine only slows the loop, which these checks allow for.
//! (`flow`'s ratio is `tokens`' own test: between two threads, who joins
//! the flow first depends on the machine, so a ratio of their counts does;
//! `budgets` holds a worker against a flow member the test drives.)

use super::*;
use crate::live::Live;
use ssdready_core::Ddir;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The scripted engine: every I/O moves all its bytes.
fn whole() -> Script {
    Box::new(|_, len| i64::from(len))
}

/// An engine 2 ms per I/O at queue depth 1 can do 500 IOPS at most: below
/// a minimum of 100,000, the job ends with EIO at its first check (after
/// its first 2 s and one 100 ms cycle), long before its 60 s.
#[test]
fn rate_iops_min_ends_a_job_slower_than_the_minimum() {
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("time_based", ""),
        ("runtime", "60s"),
        ("rate_iops_min", "100000"),
        ("rate_cycle", "100"),
    ]);
    let (mock, seen) = Mock::new(Duration::from_millis(2), whole());
    let c = ctx(s, Arc::default());
    let out = run_mock(&c, mock);
    let err = out.stats.first_error.clone().unwrap_or_default();
    assert!(err.contains("rate_iops_min=100000"), "{err:?}");
    assert_eq!(out.stats.first_errno, libc::EIO);
    // Ended at the first check: 500 IOPS over 60 s would be 30,000 I/Os;
    // a check at 2.1 s allows about 1,050 (fewer on a loaded machine).
    let ios = seen.lock().unwrap().queued;
    assert!((1..=2_000).contains(&ios), "{ios} I/Os queued");
}

/// An engine with no latency keeps far more than 10 IOPS however loaded
/// the machine: the job runs past its checks to its end, with no error.
#[test]
fn a_job_that_keeps_its_minimum_runs_to_its_end() {
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("time_based", ""),
        ("runtime", "2500ms"),
        ("rate_iops_min", "10"),
        ("rate_cycle", "100"),
    ]);
    let (mock, _) = Mock::new(Duration::ZERO, whole());
    let c = ctx(s, Arc::default());
    let out = run_mock(&c, mock);
    assert_eq!(out.stats.first_error, None);
    assert_eq!(out.error, None);
    assert!(dir(&out, Ddir::Read).ios > 25, "ran past the 2 s checks");
}

/// `wait_for`: no I/O is queued while the waitee runs; once it is done,
/// the job runs all of its I/O.
#[test]
fn wait_for_holds_the_job_until_its_waitee_is_done() {
    let s = spec(&[("rw", "read"), ("bs", "4k"), ("size", "64k")]);
    let (mock, seen) = Mock::new(Duration::ZERO, whole());
    let waitee = Arc::new(Live::default());
    let c = WorkerCtx {
        waitees: vec![waitee.clone()],
        ..ctx(s, Arc::default())
    };
    let looping = std::thread::spawn(move || run_mock(&c, mock));
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        seen.lock().unwrap().queued,
        0,
        "issued before its waitee ended"
    );
    waitee.done.store(true, Relaxed);
    let out = looping.join().unwrap();
    assert_eq!(out.error, None);
    assert_eq!(seen.lock().unwrap().queued, 16, "64 KiB in 4 KiB blocks");
}

/// The scripted engine's loop stops on the stop flag even while it waits
/// for its waitee (every wait ends on a stop).
#[test]
fn a_stop_ends_the_wait_for_a_waitee() {
    let s = spec(&[("rw", "read"), ("bs", "4k"), ("size", "64k")]);
    let (mock, seen) = Mock::new(Duration::ZERO, whole());
    let stop = Arc::new(AtomicBool::new(false));
    let c = WorkerCtx {
        waitees: vec![Arc::new(Live::default())],
        ..ctx(s, stop.clone())
    };
    let looping = std::thread::spawn(move || run_mock(&c, mock));
    std::thread::sleep(Duration::from_millis(100));
    let asked = Instant::now();
    stop.store(true, Relaxed);
    let out = looping.join().unwrap();
    // The wait looks every millisecond; 10 s is a loaded machine's margin.
    assert!(asked.elapsed() < Duration::from_secs(10));
    assert_eq!(out.error, None);
    assert_eq!(seen.lock().unwrap().queued, 0);
}
