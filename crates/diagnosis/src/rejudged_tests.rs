//! A recorded study judged again as a whole: the 16-vCPU cloud VM's study
//! (`tests/fixtures/cloud-virtio-16cpu.json.gz`), recorded by a build
//! whose rules named the submission path with its thread 32 % busy.

use super::*;
use std::io::Read;

fn cloud_study() -> StudyDoc {
    let path = format!(
        "{}/tests/fixtures/cloud-virtio-16cpu.json.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    serde_json::from_slice(&text).unwrap()
}

#[test]
fn the_cloud_study_judged_again_says_its_headline_and_limit_changed() {
    let old = cloud_study();
    assert_eq!(old.figures.saturation.limit, Cause::SubmissionPath);
    let (new, c) = rejudged(&old).unwrap();
    assert_eq!(new.figures.saturation.limit, Cause::BelowHost);
    assert_eq!(c.limit, Some((Cause::SubmissionPath, Cause::BelowHost)));
    let (was, now) = c.headline.clone().unwrap();
    assert!(
        was.starts_with("The submission path limits saturation"),
        "{was}"
    );
    assert!(now.contains("below this host"), "{now}");
    assert_eq!(new.verdicts[0].finding, now);
    // What it measured stays as recorded.
    assert_eq!(new.runs.len(), old.runs.len());
    assert_eq!(new.limits.is_some(), old.limits.is_some());
    let lines = c.lines();
    assert!(
        lines[0].starts_with("headline: The submission path"),
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l == "what holds the peak: submission path → a rate limit below this host"),
        "{lines:?}"
    );
    // Judged again, the new document has nothing more to change.
    let (_, again) = rejudged(&new).unwrap();
    assert!(again.none(), "{again:?}");
    assert_eq!(again.lines(), vec!["no finding changed".to_string()]);
}

#[test]
fn a_document_without_runs_or_of_a_fleet_is_not_judged_again() {
    let mut d = cloud_study();
    d.figures.fleet = Some(Default::default());
    assert_eq!(rejudged(&d).unwrap_err(), RejudgeError::Fleet);
    d.figures.fleet = None;
    d.runs.clear();
    assert_eq!(rejudged(&d).unwrap_err(), RejudgeError::NoRuns);
}
