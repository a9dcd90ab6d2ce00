//! The study of a job file refused before any run: the options it does
//! not take, a job it cannot repeat, a baseline that is not a job study,
//! each in one line with its exit code; each run's share of the budget.

use super::*;

#[test]
fn a_run_is_a_share_of_the_budget_between_one_and_sixty_seconds() {
    assert_eq!(runtime_s(100.0, 9), 10.0);
    assert_eq!(runtime_s(10.0, 20), 1.0);
    assert_eq!(runtime_s(10_000.0, 3), 60.0);
    assert_eq!(runtime_s(50.0, 0), 45.0);
}

fn options(ask: crate::ask::Ask, file: &str) -> JobOptions {
    JobOptions {
        study: Options {
            ask,
            try_changes: false,
            stop: Default::default(),
            tool: "ssdready test".into(),
            command: Vec::new(),
        },
        file: file.into(),
        section: None,
        baseline: None,
    }
}

/// The study of `o` whose run function must not be called.
fn refused(o: &JobOptions) -> JobStudyError {
    struct Quiet;
    impl crate::driver::Observer for Quiet {
        fn starting(&mut self, _: usize, _: &str, _: f64) {}
        fn finished(&mut self, _: &ssdready_measured::record::RunRecord) {}
    }
    impl Observer for Quiet {
        fn note(&mut self, _: &str) {}
        fn warn(&mut self, _: &str) {}
        fn block(&mut self, _: &str) {}
    }
    let run =
        |_: &ssdready_run::RunRequest| -> Result<_, Failure> { panic!("refused before any run") };
    match study_job(o, &run, &host_hands, &mut Quiet) {
        Err(e) => e,
        Ok(_) => panic!("the study ran"),
    }
}

#[test]
fn the_options_a_job_study_does_not_take_are_refused_in_one_line() {
    let cases = [
        (
            crate::ask::Ask {
                clients: vec!["h1".into()],
                ..Default::default()
            },
            "option '--client': not with --job (a fleet's study runs its own plan)",
        ),
        (
            crate::ask::Ask {
                slo: Some("p99=1ms".into()),
                ..Default::default()
            },
            "option '--slo': not with --job (the job's own rate and depth set its load)",
        ),
        (
            crate::ask::Ask {
                sweeps: vec!["raw".into()],
                ..Default::default()
            },
            "option '--sweeps': not with --job (the job is the study's point)",
        ),
        (
            crate::ask::Ask {
                in_process: true,
                ..Default::default()
            },
            "option '--in-process': not with --job (the job names its own target)",
        ),
    ];
    for (ask, line) in cases {
        let e = refused(&options(ask, "job.fio"));
        assert!(matches!(e, JobStudyError::NotWithJob { .. }), "{e:?}");
        assert_eq!((e.exit_code(), e.to_string()), (2, line.to_string()));
    }
    assert!(refuse_options(&options(Default::default(), "job.fio").study).is_ok());
}

#[test]
fn a_job_file_the_study_cannot_repeat_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pre.fio");
    std::fs::write(
        &file,
        "[j]\nfilename=/dev/null\nexec_prerun=true\nrw=read\n",
    )
    .unwrap();
    let ask = crate::ask::Ask {
        output: Some(dir.path().join("out")),
        ..Default::default()
    };
    let e = refused(&options(ask, file.to_str().unwrap()));
    assert!(matches!(e, JobStudyError::Job(_)), "{e:?}");
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().starts_with("option 'exec_prerun'"), "{e}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn a_baseline_that_is_not_a_job_study_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let e = baseline(dir.path().to_str().unwrap()).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().starts_with("option '--baseline': "), "{e}");
    let f = dir.path().join("job-study.json");
    std::fs::write(&f, "{\"schema\": \"ssdready-study\"}").unwrap();
    let e = baseline(f.to_str().unwrap()).unwrap_err();
    assert!(e.to_string().contains(": not a job study ("), "{e}");
    let doc = JobDoc {
        schema: "ssdready-study".into(),
        ..Default::default()
    };
    std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
    let e = baseline(dir.path().to_str().unwrap()).unwrap_err();
    assert!(e.to_string().ends_with("of `study --job`)"), "{e}");
    let doc = JobDoc {
        schema: JOB_SCHEMA.into(),
        ..Default::default()
    };
    std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
    assert!(baseline(dir.path().to_str().unwrap()).is_ok());
}

#[test]
fn the_signal_before_the_first_run_and_a_refused_job_keep_their_exit_codes() {
    assert_eq!(
        JobStudyError::Study(StudyError::Interrupted).exit_code(),
        130
    );
    let f = Failure::Runtime("refused".into());
    assert_eq!(JobStudyError::Check(f).exit_code(), 1);
}

#[test]
fn no_best_file_without_a_gain_beyond_the_noise() {
    let mut doc = JobDoc::default();
    assert!(best_file(&mut doc, &[]).is_none());
}

#[test]
fn the_output_directory_is_checked_before_the_runs_and_not_left_empty_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    // Missing: made to prove it can be, and taken away until the writer
    // makes it with its files (a study killed meanwhile leaves nothing).
    let new = tmp.path().join("study-out");
    make_output(&new, &stop).unwrap();
    assert!(!new.exists());
    // There already (the user's own): kept, with what it holds.
    let own = tmp.path().join("mine");
    std::fs::create_dir(&own).unwrap();
    std::fs::write(own.join("notes"), "x").unwrap();
    make_output(&own, &stop).unwrap();
    assert!(own.join("notes").is_file());
    // One that cannot be made (its parent is a file) fails before any run.
    let under_file = own.join("notes").join("out");
    assert!(matches!(
        make_output(&under_file, &stop),
        Err(StudyError::Output { .. })
    ));
    // A signal first: nothing made.
    stop.store(true, Relaxed);
    assert!(matches!(
        make_output(&new, &stop),
        Err(StudyError::Interrupted)
    ));
    assert!(!new.exists());
}
