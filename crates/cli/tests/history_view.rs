//! The history's view of a study document against the whole document:
//! the history reads study.json through its own view of the schema (the
//! fields it compares), the diagnosis writes it whole. Here, where both
//! are reachable, recorded studies are read both ways, and the history's
//! figures must be the whole document's: from the file's text (what
//! `compare` and `--baseline` read) and from the document as the study
//! holds it, serialised (what a study records).

use ssdready_diagnosis::model::StudyDoc;
use ssdready_history::figures::{from_study, join_command, Document, StudyView};
use ssdready_history::Side;
use ssdready_measured::curve::median;
use std::path::PathBuf;

/// The recorded studies the diagnosis is tested on.
fn recorded_studies() -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../diagnosis/tests/fixtures");
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    out.sort();
    assert!(out.len() >= 5, "recorded studies in {}", dir.display());
    out
}

/// The history's reduction of a study document's text.
fn side_of_text(text: &str) -> Side {
    match Document::parse(text).expect("the history reads a recorded study") {
        Document::Study(v) => from_study(&v),
        Document::Run(_) => panic!("a study read as a run"),
    }
}

/// The value of the history's figure `name`.
fn value(s: &Side, name: &str) -> Option<f64> {
    s.figure(name).map(|f| f.value)
}

/// The history's figures against the whole document's own.
fn agrees_with_whole(s: &Side, d: &StudyDoc, file: &str) {
    let f = &d.figures;
    assert_eq!(s.curve, f.qd_curve, "{file}: the curve");
    assert_eq!(s.key_figures.knee_qd, f.knee_qd, "{file}: the knee");
    assert_eq!(
        value(s, "peak.iops"),
        f.peak.as_ref().map(|p| p.iops),
        "{file}: the peak"
    );
    let limit = f.device_limit.iops.filter(|l| *l > 0.0);
    assert_eq!(value(s, "device_limit.iops"), limit, "{file}: the limit");
    let delivered = f.peak.as_ref().zip(limit).map(|(p, l)| 100.0 * p.iops / l);
    assert_eq!(value(s, "delivered_pct"), delivered, "{file}: delivered");
    if let Some(share) = &f.platform_share_qd1 {
        assert_eq!(
            value(s, "platform_share_qd1.pct"),
            Some(share.pct),
            "{file}"
        );
    }
    assert_eq!(s.runtime_s, d.plan.runtime_s, "{file}: runtime");
    assert_eq!(s.interrupted, d.interrupted, "{file}");
    assert_eq!(s.started_unix_ms, d.started_unix_ms, "{file}");
    assert_eq!(s.command, join_command(&d.command), "{file}");
    let specs: Vec<&str> = d.targets.iter().map(|t| t.spec.as_str()).collect();
    assert_eq!(s.target, specs.join(","), "{file}: the targets");
    assert_eq!(
        (&s.platform.kernel, &s.platform.cpu_model, s.platform.cpus),
        (&d.machine.kernel, &d.machine.cpu_model, d.machine.cpus),
        "{file}: the machine"
    );
    assert!(s
        .workload
        .starts_with(if d.quick { "quick" } else { "full" }));
    for r in d
        .runs
        .iter()
        .filter(|r| r.error.is_none() && !r.instrumented)
    {
        let repeats: Vec<f64> = d
            .runs
            .iter()
            .filter(|x| x.point == r.point && x.error.is_none() && !x.instrumented)
            .map(|x| x.summary.iops)
            .collect();
        let name = format!("{}.iops", r.point);
        assert_eq!(value(s, &name), median(&repeats), "{file}: {name}");
    }
}

#[test]
fn the_history_reads_a_recorded_study_as_the_whole_document_gives_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (path, text) in recorded_studies() {
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let whole: StudyDoc = serde_json::from_str(&text).expect("a recorded study reads whole");
        assert!(
            !whole.runs.is_empty() && !whole.figures.qd_curve.is_empty(),
            "{file}"
        );
        let from_text = side_of_text(&text);
        agrees_with_whole(&from_text, &whole, &file);
        // As a study records itself: the document it holds, serialised.
        let held: StudyView = serde_json::from_value(serde_json::to_value(&whole).unwrap())
            .expect("the history's view reads a serialised study");
        assert_eq!(
            from_study(&held),
            from_text,
            "{file}: recorded vs read back"
        );
        // And the whole document written again reads the same.
        let again = serde_json::to_string_pretty(&whole).unwrap();
        assert_eq!(side_of_text(&again), from_text, "{file}: written again");
    }
}
