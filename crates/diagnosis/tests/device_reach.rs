//! The device's share of the study's I/O judged again on a study recorded
//! as a new user would make it: `truncate -s 1G data`, then `ssdready study
//! data --quick` as an ordinary user on ext4 (before the study refused a
//! sparse file). Every read was of a hole: the device's counters saw a few
//! requests of other processes' while the study completed hundreds of
//! thousands a run.

use ssdready_diagnosis::model::StudyDoc;
use ssdready_diagnosis::rejudge;

fn sparse_study() -> StudyDoc {
    let path = format!(
        "{}/tests/fixtures/file-sparse-never-written-second-user.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

#[test]
fn reads_of_holes_are_said_first_to_be_the_file_systems_not_the_devices() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = sparse_study();
    assert!(!d.machine.root);
    let j = rejudge(&d);
    let r = j
        .figures
        .device_reach
        .as_ref()
        .expect("the device's counters");
    assert_eq!(r.device, "vda");
    assert!(r.study_ios > 1_000_000, "{r:?}");
    assert!(r.reached_pct < 1.0, "{r:?}");
    let first = &j.verdicts[0];
    assert_eq!(first.rule, "device-not-reached", "{:?}", j.verdicts);
    assert!(first.finding.contains("not vda's"), "{}", first.finding);
    assert!(
        first.recommendation.contains("Lay out data"),
        "{}",
        first.recommendation
    );
    assert_eq!(first.confidence, "high");
}

#[test]
fn no_device_time_is_taken_from_requests_the_study_did_not_issue() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let j = rejudge(&sparse_study());
    // Its QD 1 share was "the device takes 0 ns" from 4 stray requests.
    assert!(
        j.figures.platform_share_qd1.is_none(),
        "{:?}",
        j.figures.platform_share_qd1
    );
    assert!(j.figures.qd_curve.iter().all(|c| c.block_ns.is_none()));
    assert!(!j.facts.contains_key("platform_share_qd1"));
    for v in &j.verdicts {
        assert!(
            !v.finding.contains("the device takes"),
            "{}: {}",
            v.rule,
            v.finding
        );
    }
}

#[test]
fn the_findings_open_with_it_before_any_device_figure() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut d = sparse_study();
    let j = rejudge(&d);
    (d.figures, d.verdicts) = (j.figures, j.verdicts);
    let text = ssdready_diagnosis::text::findings(&d, 27.0);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[1].starts_with("THE DEVICE WAS ALMOST NEVER ASKED"),
        "{text}"
    );
    assert!(lines[2].starts_with("highest rate measured"), "{text}");
}
