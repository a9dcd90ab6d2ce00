//! The job's runs kept as the device study's points: the job as written
//! and its depths as the queue-depth sweep's, any other variant apart, a
//! failed run with its reason.

use super::*;
use ssdready_core::options::RawOption;

fn job(depth: &str, jobs: &str) -> Vec<Section> {
    let o = |k: &str, v: &str| RawOption {
        key: k.into(),
        value: Some(v.into()),
        at: None,
    };
    vec![Section {
        name: "j".into(),
        global: false,
        options: vec![
            o("ioengine", "libaio"),
            o("rw", "randread"),
            o("iodepth", depth),
            o("numjobs", jobs),
            o("filename", "/dev/null"),
        ],
    }]
}

#[test]
fn the_jobs_runs_are_named_as_the_device_studys_points() {
    let judge = Judge {
        target: None,
        machine: Machine::default(),
        context: Context::default(),
    };
    let mut answers = vec![
        Err(ssdready_run::Failure::Runtime(
            "the device went away".into(),
        )),
        Ok(RunResult::default()),
        Ok(RunResult::default()),
        Ok(RunResult::default()),
    ];
    let mut run = move |_: &RunRequest| answers.pop().expect("four runs");
    let stop = Arc::new(AtomicBool::new(false));
    let written = job("16", "1");
    let mut p = Points::new(&mut run, &written, &judge, &stop);
    let req = RunRequest::new(stop.clone());
    for (kind, s) in [
        (Kind::Repeat(0), job("16", "1")),
        (Kind::Repeat(1), job("16", "1")),
        (Kind::Variant(0), job("32", "1")),
    ] {
        assert!(p.run(kind, &s, &req).is_ok());
    }
    // A depth of the job stays the queue-depth sweep's point.
    p.name_last("iodepth=32");
    let e = p.run(Kind::Variant(1), &job("16", "2"), &req).unwrap_err();
    p.name_last("numjobs=2");
    assert!(e.to_string().contains("went away"), "{e}");
    let ids: Vec<(&str, &str, &str)> = p
        .records
        .iter()
        .map(|r| (r.id.as_str(), r.point.as_str(), r.sweep.as_str()))
        .collect();
    assert_eq!(
        ids,
        [
            ("qd-16", "qd-16", "qd"),
            ("qd-16#2", "qd-16", "qd"),
            ("qd-32", "qd-32", "qd"),
            ("numjobs=2", "numjobs=2", "job"),
        ]
    );
    assert_eq!(p.records[3].workload.threads, 2);
    assert_eq!(p.records[3].error.as_deref(), Some("the device went away"));
    assert!(p.records[..3].iter().all(|r| r.error.is_none()));
    // No target detected: not identified, and why.
    let from = judge.judged_from(p.jobs.clone(), &written);
    let lines = ssdready_diagnosis::limit::point::held_words(&from.held(&p.records));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].starts_with("not identified: the job's target"),
        "{lines:?}"
    );
}

#[test]
fn a_queue_another_process_moved_during_a_run_is_said_of_that_run() {
    // Any disk's queue, only read: the judge's reading differs from it as
    // a reading after another process's change would.
    let disks = std::fs::read_dir("/sys/block")
        .into_iter()
        .flatten()
        .flatten();
    let Some((disk, now)) = disks
        .map(|d| d.file_name().to_string_lossy().into_owned())
        .find_map(|d| {
            Some((
                d.clone(),
                crate::trials::queue_files(&d).remove("nr_requests")?,
            ))
        })
    else {
        eprintln!("skipped: no disk here has a queue/nr_requests to read");
        return;
    };
    let was = format!("{}", now.trim().parse::<u64>().unwrap_or(0) + 1);
    let judge = Judge {
        target: Some(TargetProfile {
            device: Some(disk.clone()),
            ..Default::default()
        }),
        machine: Machine::default(),
        context: Context {
            queue: [("nr_requests".to_string(), was.clone())].into(),
            ..Default::default()
        },
    };
    let mut run = |_: &RunRequest| Ok(RunResult::default());
    let stop = Arc::new(AtomicBool::new(false));
    let written = job("16", "1");
    let mut p = Points::new(&mut run, &written, &judge, &stop);
    let req = RunRequest::new(stop.clone());
    for i in 0..2 {
        assert!(p.run(Kind::Repeat(i), &written, &req).is_ok());
    }
    let moved = format!("{disk}'s nr_requests {was} → {}", now.trim());
    assert!(p.records[1]
        .summary
        .warnings
        .iter()
        .any(|w| w.starts_with(&moved)));
    let note = crate::job::moved_note(&p.moved, p.records.len()).expect("a note");
    assert!(
        note.starts_with(&format!(
            "2 of the job's 2 runs ran after another process changed the target's queue ({moved})"
        )),
        "{note}"
    );
}
