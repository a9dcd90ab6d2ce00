//! `ssdready report --rejudge DIR` on a recorded study: the 16-vCPU cloud
//! VM's (`crates/diagnosis/tests/fixtures/cloud-virtio-16cpu.json.gz`),
//! whose recording build named the submission path, is judged again with
//! this build's rules: study.json and report.html are rewritten, and the
//! changed findings are said. Bad input is one line, exit code 2, and
//! nothing written.

use crate::common::ssdready;
use serde_json::Value;
use std::io::Read;
use std::path::Path;

/// A directory holding the recorded study as `study.json`.
fn recorded_study(dir: &Path) {
    let gz = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../diagnosis/tests/fixtures/cloud-virtio-16cpu.json.gz");
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_end(&mut text)
        .unwrap();
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("study.json"), text).unwrap();
}

fn limit_of(dir: &Path) -> String {
    let d: Value = serde_json::from_slice(&std::fs::read(dir.join("study.json")).unwrap()).unwrap();
    d["figures"]["saturation"]["limit"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_recorded_study_judged_again_is_rewritten_and_says_what_changed() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cloud");
    recorded_study(&dir);
    assert_eq!(limit_of(&dir), "submission_path");
    let out = ssdready(&["report", "--rejudge", dir.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(limit_of(&dir), "below_host");
    assert!(
        stdout.contains("headline: The submission path limits saturation at 115.7K IOPS"),
        "{stdout}"
    );
    assert!(
        stdout.contains("what holds the peak: submission path → a rate limit below this host"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(page.contains("below this host"), "the report says it");
    assert!(stderr.contains("report.html"), "{stderr}");
    // Judged again once more: nothing left to change.
    let out = ssdready(&["report", "--rejudge", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no finding changed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // Bad input: one line, exit code 2, nothing written.
    let run = tmp.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(
        run.join("study.json"),
        "{\"schema\": \"ssdready.run\", \"schema_version\": 1}",
    )
    .unwrap();
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for (d, want) in [
        (tmp.path().join("missing"), "No such file"),
        (empty.clone(), "has no study.json"),
        (run.clone(), "report --rejudge"),
    ] {
        let out = ssdready(&["report", "--rejudge", d.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{d:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(want), "{d:?}: {err}");
        assert!(!d.join("report.html").exists(), "nothing written");
    }
}
