//! A job study's verdict judged again from recorded runs: a RAM loop
//! device with nr_requests 4, recorded on a loaded 2-vCPU machine
//! (`tests/fixtures/loop-nr-requests-4-loaded.json`), its queue-depth runs
//! at 8, 16, 32 and 64 read as a job at QD 16 beside its depth variants,
//! as a job study records them.

use super::*;
use crate::levers::{Context, Point};
use crate::model::StudyDoc;

/// The job's runs and what its verdict is judged from.
fn recorded_job() -> (JudgedFrom, Vec<RunRecord>) {
    let path = format!(
        "{}/tests/fixtures/loop-nr-requests-4-loaded.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let d: StudyDoc = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let runs = d
        .runs
        .iter()
        .filter(|r| r.sweep == "qd" && [8, 16, 32, 64].contains(&r.workload.qd))
        .cloned()
        .collect();
    let from = JudgedFrom {
        target: d.targets.first().cloned(),
        machine: d.machine.clone(),
        context: Context {
            limits: d.limits.clone(),
            ..Default::default()
        },
        point: Point {
            rw: "randread".into(),
            bs: 4096,
            qd: 16,
            threads: 1,
            engine: Some("io_uring".into()),
            direct: true,
            sizes: String::new(),
        },
        jobs: Vec::new(),
    };
    (from, runs)
}

#[test]
fn a_job_judged_again_by_the_rules_it_was_judged_with_changes_nothing() {
    let (from, runs) = recorded_job();
    let held = from.held(&runs);
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].saturation.limit, Cause::DeviceQueue, "{held:?}");
    let holds = held_words(&held);
    // What it was judged from, as the document keeps it.
    let kept: JudgedFrom = serde_json::from_str(&serde_json::to_string(&from).unwrap()).unwrap();
    let findings = crate::job_findings(&kept, &runs);
    let old = Recorded {
        from: Some(&kept),
        points: &runs,
        held: &held,
        holds: &holds,
        findings: &findings,
    };
    let again = rejudged_job(old).unwrap();
    assert!(again.changes.none(), "{:?}", again.changes);
    assert_eq!(again.changes.lines(), ["no finding changed"]);
    assert_eq!(again.holds, holds);
    assert_eq!(again.held[0].saturation.limit, Cause::DeviceQueue);
}

#[test]
fn a_job_recorded_with_an_old_wrong_verdict_is_corrected_and_the_change_said() {
    let (from, runs) = recorded_job();
    let mut held = from.held(&runs);
    held[0].saturation.limit = Cause::SubmissionPath;
    held[0].saturation.part = "the kernel's submission of I/O".into();
    let holds = vec![
        "submission path: the kernel's submission of I/O".to_string(),
        "  evidence: the submitting thread was 32 % busy".to_string(),
    ];
    let old = Recorded {
        from: Some(&from),
        points: &runs,
        held: &held,
        holds: &holds,
        findings: &[],
    };
    let again = rejudged_job(old).unwrap();
    assert_eq!(again.held[0].saturation.limit, Cause::DeviceQueue);
    assert!(
        again.holds[0].starts_with("the device's queue: "),
        "{:?}",
        again.holds
    );
    let c = &again.changes;
    assert_eq!(
        c.held,
        [(
            String::new(),
            Some(Cause::SubmissionPath),
            Some(Cause::DeviceQueue)
        )]
    );
    assert_eq!(
        c.removed,
        [
            "submission path: the kernel's submission of I/O",
            "evidence: the submitting thread was 32 % busy"
        ]
    );
    let lines = c.lines();
    assert_eq!(
        lines[0],
        "what holds the job: submission path → the device's queue"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("+ the device's queue: ")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("queue/nr_requests")),
        "the setting is said: {lines:?}"
    );
}

#[test]
fn each_direction_is_named_where_its_cause_changed() {
    let c = JobChanges {
        held: vec![
            (
                "reads".into(),
                Some(Cause::OtherWork),
                Some(Cause::CpuQuota),
            ),
            ("[fill] writes".into(), None, Some(Cause::NotIdentified)),
        ],
        ..Default::default()
    };
    assert_eq!(
        c.lines(),
        [
            "what holds the job's reads: other work → a CPU quota",
            "what holds [fill] writes: not judged → not identified"
        ]
    );
}

#[test]
fn a_job_recorded_without_what_it_was_judged_from_or_without_runs_is_refused() {
    let (from, runs) = recorded_job();
    let held = from.held(&runs);
    let holds = held_words(&held);
    let mut old = Recorded {
        from: None,
        points: &runs,
        held: &held,
        holds: &holds,
        findings: &[],
    };
    let e = rejudged_job(old).unwrap_err();
    assert_eq!(e, RejudgeError::NoJudgedFrom);
    let said = e.to_string();
    for what in [
        "recorded without",
        "target",
        "machine",
        "limits",
        "run the study of the job again",
    ] {
        assert!(said.contains(what), "{what}: {said}");
    }
    old.from = Some(&from);
    old.points = &[];
    assert_eq!(rejudged_job(old).unwrap_err(), RejudgeError::NoRuns);
}

#[test]
fn runs_made_after_another_process_changed_the_queue_are_not_judged() {
    let (from, mut runs) = recorded_job();
    let cites = |held: &[Held], id: &str| {
        (held[0].saturation.evidence.iter()).any(|e| e.contains(&format!("{id} ")))
    };
    assert!(cites(&from.held(&runs), "qd-64"), "{:?}", from.held(&runs));
    for r in runs.iter_mut().filter(|r| r.workload.qd == 64) {
        let m = format!("loop0's nr_requests 4 → 128: {}", crate::limit::job::MOVED);
        r.summary.warnings.push(m);
    }
    let held = from.held(&runs);
    assert!(!cites(&held, "qd-64"), "{held:?}");
    // Every run moved: nothing to judge from.
    for r in runs.iter_mut() {
        r.summary
            .warnings
            .push(format!("x: {}", crate::limit::job::MOVED));
    }
    let held = from.held(&runs);
    assert_ne!(
        held.first().map(|h| h.saturation.limit),
        Some(Cause::DeviceQueue),
        "{held:?}"
    );
}
