//! What a study leaves, from made-up studies.

use super::*;
use crate::session_parts::{Compared, JobDoc};
use ssdready_measured::record::RunRecord;

fn studied(of: Of, runs: usize) -> Studied {
    let doc = StudyDoc {
        runs: (0..runs).map(|_| RunRecord::default()).collect(),
        ..Default::default()
    };
    Studied {
        doc,
        dir: "/nonexistent".into(),
        of,
    }
}

fn job(best: Option<&str>, compared: Option<Compared>) -> JobStudied {
    JobStudied {
        doc: JobDoc::default(),
        dir: "/nonexistent".into(),
        best: best.map(String::from),
        host_files: vec![File {
            name: UDEV,
            text: "ACTION==\"add\"\n".into(),
        }],
        compared,
    }
}

fn shape(out: &[Output]) -> Vec<(&str, Need)> {
    out.iter().map(|o| (o.name, o.need)).collect()
}

#[test]
fn a_study_of_this_machine_leaves_its_json_then_its_report_and_loses_neither_quietly() {
    let s = studied(Of::Machine, 3);
    let out = of_study(&s).unwrap();
    let want = [("study.json", Need::Kept), ("report.html", Need::Kept)];
    assert_eq!(shape(&out), want);
    assert_eq!(out[0].what, "3 runs");
    assert_eq!(out[1].body, Body::Report);
    let Body::Text(json) = &out[0].body else {
        panic!("study.json has a text");
    };
    let back: StudyDoc = serde_json::from_str(json).unwrap();
    assert_eq!(back.runs.len(), 3);
    assert!(json.ends_with("}\n"));
}

#[test]
fn a_fleets_report_is_extra() {
    let out = of_study(&studied(Of::Fleet { partial: false }, 1)).unwrap();
    let want = [("study.json", Need::Kept), ("report.html", Need::Extra)];
    assert_eq!(shape(&out), want);
    assert_eq!(out[0].what, "");
}

#[test]
fn a_job_study_leaves_the_best_job_and_its_host_files_only_where_it_gained() {
    assert_eq!(
        shape(&of_job(&job(None, None)).unwrap()),
        [("job-study.json", Need::Kept)]
    );
    let out = of_job(&job(Some("[j]\nrw=read\n"), None)).unwrap();
    let want = [
        ("job-study.json", Need::Kept),
        ("job-best.fio", Need::Kept),
        (UDEV, Need::Extra),
    ];
    assert_eq!(shape(&out), want);
    assert_eq!(out[1].body, Body::Text("[j]\nrw=read\n".into()));
}

#[test]
fn a_job_worse_than_its_baseline_ends_with_code_3_unless_it_did_not_run() {
    let worse = Compared::Same {
        change_pct: -20.0,
        worse: true,
    };
    let mut s = job(None, Some(worse));
    let c = job_closing(&s);
    assert_eq!(c.code, 3);
    assert!(c.line.unwrap().contains("worse beyond the noise"));
    s.doc.error = Some("no such file".into());
    let c = job_closing(&s);
    assert_eq!(c.code, 1);
    assert_eq!(c.line.as_deref(), Some("the job did not run: no such file"));
    let same = job(None, None);
    assert_eq!(
        (job_closing(&same).code, job_closing(&same).line),
        (0, None)
    );
}

#[test]
fn a_study_closes_with_its_findings_and_an_interruption_says_so() {
    let mut s = studied(Of::Machine, 1);
    assert_eq!(closing(&s, 1.0).code, 0);
    s.doc.interrupted = true;
    let c = closing(&s, 1.0);
    assert_eq!(c.code, 130);
    assert!(!c.text.is_empty());
    let f = studied(Of::Fleet { partial: true }, 1);
    assert_eq!(closing(&f, 1.0).code, 1);
}

#[test]
fn what_holds_a_job_ends_with_where_its_trials_point_when_they_point_elsewhere() {
    let doc = JobDoc {
        holds: vec!["not identified: no candidate had positive evidence".into()],
        trials_point: Some(
            "the trials point at the CPUs allowed: cpuset … gained IOPS +228.2 %".into(),
        ),
        ..Default::default()
    };
    let text = job_text(&doc);
    assert!(
        text.ends_with(
            "what holds this job:\n  not identified: no candidate had positive evidence\n  but the trials point at the CPUs allowed: cpuset … gained IOPS +228.2 %\n"
        ),
        "{text}"
    );
}

#[test]
fn the_rules_other_findings_follow_what_holds_a_job_with_their_confidence_and_what_to_do() {
    let doc = JobDoc {
        holds: vec!["completions: finished I/Os wait for the submitting thread".into()],
        findings: vec![ssdready_measured::record::Verdict {
            rule: "platform-owns-qd1".into(),
            finding: "At QD 1 the platform takes 60 % of each I/O's latency.".into(),
            recommendation: "Polled completions cut QD 1 latency here; a faster device would not."
                .into(),
            confidence: "medium".into(),
            confidence_why: "20 % past its threshold".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let text = job_text(&doc);
    let holds = text.find("what holds this job:").unwrap();
    let found = text
        .find("what else the study's rules find in the job's runs:\n  At QD 1 the platform takes 60 % of each I/O's latency. [confidence medium: 20 % past its threshold]\n    → Polled completions")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(holds < found, "{text}");
    // None found: no heading.
    let text = job_text(&JobDoc {
        findings: Vec::new(),
        ..doc
    });
    assert!(!text.contains("what else"), "{text}");
}
