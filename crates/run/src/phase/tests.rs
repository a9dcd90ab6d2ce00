//! fio's `exitall` and `exit_what` between the workers of a phase: which
//! workers a finished job ends, and whether the run ends with the phase.

use super::*;
use crate::steadystate::EndFlags;

/// A job of `options` (key, value) through the option table.
fn spec(options: &[(&str, &str)]) -> JobSpec {
    let mut r = crate::request::RunRequest::default();
    r.job("j")
        .option("filename", Some("f"))
        .option("size", Some("1m"));
    for (k, v) in options {
        r.option(k, (!v.is_empty()).then_some(*v));
    }
    ssdready_core::options::build_jobs_on(&r.sections, &crate::sys::host())
        .unwrap()
        .remove(0)
}

/// Three jobs, one worker each: job 0 (with `options`) and job 1 in
/// reporting group 0, job 2 in group 1. Job 0's worker is done (and
/// errored when `errored`); returns which workers are asked to end, and
/// whether the run ends.
fn after_job_0(options: &[(&str, &str)], errored: bool) -> (Vec<bool>, bool) {
    let first = spec(options);
    let plain = spec(&[]);
    let specs = [&first, &plain, &plain];
    let lives: Vec<(usize, Arc<Live>)> = (0..3).map(|j| (j, Arc::default())).collect();
    lives[0].1.done.store(true, Relaxed);
    lives[0].1.errored.store(errored, Relaxed);
    let mut ends = EndFlags::new(3);
    let end_run = exitall(&specs, &[0, 0, 1], &lives, &mut ends);
    let ended = (0..3).map(|w| ends.flag(w).load(Relaxed)).collect();
    (ended, end_run)
}

#[test]
fn without_exitall_a_finished_job_ends_no_other() {
    assert_eq!(after_job_0(&[], false), (vec![false; 3], false));
}

#[test]
fn exitall_ends_its_reporting_group_by_default() {
    let got = after_job_0(&[("exitall", "")], false);
    assert_eq!(got, (vec![true, true, false], false));
}

#[test]
fn exit_what_stonewall_ends_every_job_of_the_phase_but_not_the_run() {
    let got = after_job_0(&[("exitall", ""), ("exit_what", "stonewall")], false);
    assert_eq!(got, (vec![true; 3], false));
}

#[test]
fn exit_what_all_ends_every_job_and_the_run() {
    let got = after_job_0(&[("exitall", ""), ("exit_what", "all")], false);
    assert_eq!(got, (vec![true; 3], true));
}

#[test]
fn exitall_on_error_ends_the_run_only_when_the_job_failed() {
    let on = [("exitall_on_error", "")];
    assert_eq!(after_job_0(&on, false), (vec![false; 3], false));
    assert_eq!(after_job_0(&on, true), (vec![true; 3], true));
}
