//! The study's progress and closing lines, from made-up events.

use super::*;

fn record(id: &str, error: Option<&str>) -> RunRecord {
    let mut r = RunRecord {
        id: id.into(),
        error: error.map(String::from),
        ..Default::default()
    };
    r.summary.iops = 312_400.0;
    r.summary.lat_mean_ns = 51_200.0;
    r.summary.lat_p99_ns = 1_500_000;
    r
}

#[test]
fn a_finished_run_says_its_id_then_its_figures_or_why_it_failed() {
    assert_eq!(
        run_line(&record("qd-16", None)),
        "  qd-16                        312.4K IOPS, 51.20 µs mean, 1.50 ms p99"
    );
    assert_eq!(
        run_line(&record("qd-16#2", Some("no such file"))),
        "  qd-16#2                      failed: no such file"
    );
}

#[test]
fn the_bar_counts_each_run_at_its_estimated_length() {
    let mut b = Bar {
        per_point_s: 2.5,
        done_s: 0.0,
        total: 4,
        length_ms: 10_000,
    };
    assert_eq!(b.starting(0, "qd-1"), "run 1/4 qd-1");
    assert_eq!(b.position_ms(1.0), 1_000);
    // A run longer than its estimate stays at its end until it finishes.
    assert_eq!(b.position_ms(9.0), 2_500);
    assert_eq!(b.finished(), 2_500);
    assert_eq!(b.position_ms(0.5), 3_000);
    assert_eq!(b.dropped(10_000, 2), 5_000);
    assert_eq!(b.dropped(1_000, 2), 0);
}

#[test]
fn the_bar_of_a_plan_is_its_estimated_length() {
    let mut p = Plan::default();
    (p.settings.runtime_s, p.settings.ramp_s, p.overhead_s) = (1.0, 0.5, 0.5);
    p.beyond_s = 3.0;
    let b = Bar::of(&p);
    assert_eq!((b.per_point_s, b.total, b.length_ms), (2.0, 0, 3_000));
}

#[test]
fn the_job_study_says_its_runs_before_the_first() {
    assert_eq!(
        job_plan("fio.job", 12, 0, 7.4),
        "studying the job file fio.job: 3 repeats as written, then 9 more runs (its variants), 7 s each"
    );
    assert!(job_plan("fio.job", 20, 4, 7.0).contains("(its variants, the host's changes)"));
}

#[test]
fn a_written_file_says_what_it_holds_when_said() {
    let p = Path::new("/tmp/s/job-best.fio");
    assert_eq!(wrote(p, ""), "wrote /tmp/s/job-best.fio");
    assert_eq!(
        wrote(p, "the job with the best configuration"),
        "wrote /tmp/s/job-best.fio (the job with the best configuration)"
    );
}

#[test]
fn a_study_ends_interrupted_or_without_a_run_that_succeeded() {
    let mut doc = StudyDoc::default();
    doc.runs.push(record("qd-1", Some("refused")));
    assert_eq!(
        study_end(&doc),
        (1, Some("no run of the study succeeded: refused".into()))
    );
    doc.runs.push(record("qd-2", None));
    assert_eq!(study_end(&doc), (0, None));
    doc.interrupted = true;
    assert_eq!(study_end(&doc), (130, Some(INTERRUPTED.into())));
    assert_eq!(fleet_end(&doc, true).0, 130);
    doc.interrupted = false;
    assert_eq!(fleet_end(&doc, false), (0, None));
    let (code, line) = fleet_end(&doc, true);
    assert_eq!(code, 1);
    assert!(line.unwrap().ends_with("(see figures.fleet)"));
}

#[test]
fn a_job_study_ends_interrupted_or_with_why_the_job_did_not_run() {
    let mut doc = JobDoc::default();
    assert_eq!(job_end(&doc), (0, None));
    doc.error = Some("no such file".into());
    assert_eq!(
        job_end(&doc),
        (1, Some("the job did not run: no such file".into()))
    );
    doc.interrupted = true;
    assert_eq!(job_end(&doc).0, 130);
}

#[test]
fn a_job_study_against_its_baseline_says_the_change_and_whether_it_is_worse() {
    let worse = Compared::Same {
        change_pct: -23.46,
        worse: true,
    };
    assert_eq!(
        compared(&worse),
        (
            "against the baseline: the job's IOPS -23.5 % (worse beyond the noise)".into(),
            true
        )
    );
    let same = Compared::Same {
        change_pct: 2.0,
        worse: false,
    };
    assert!(compared(&same)
        .0
        .ends_with("+2.0 % (within the noise or better)"));
    let other = Compared::OtherFile {
        was: "a.fio".into(),
    };
    assert_eq!(
        compared(&other),
        (
            "no comparison with the baseline: it studied another job file (a.fio, another SHA-256)"
                .into(),
            false
        )
    );
}
