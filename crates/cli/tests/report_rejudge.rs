//! `ssdready report --rejudge DIR` on a recorded study: the 16-vCPU cloud
//! VM's (`crates/diagnosis/tests/fixtures/cloud-virtio-16cpu.json.gz`),
//! whose recording build named the submission path, is judged again with
//! this build's rules: study.json and report.html are rewritten, and the
//! changed findings are said. A job study (`study --job` on the emulator)
//! is judged again likewise, in job-study.json. Bad input is one line,
//! exit code 2, and nothing written.

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

/// A job study of 4 KiB random reads at QD 8 on the emulator, in `out`.
fn job_study(dir: &Path, out: &Path) {
    let file = dir.join("reads.fio");
    std::fs::write(
        &file,
        "[global]\nioengine=libaio\ndirect=1\nrw=randread\nbs=4k\n\
         [reads]\niodepth=8\nfilename=/nonexistent\n",
    )
    .unwrap();
    let (f, o) = (file.to_str().unwrap(), out.to_str().unwrap());
    let args = ["study", "--job", f, "emu:", "--budget", "10s", "--quiet"];
    let ran = ssdready(&[&args[..], &["--output", o]].concat());
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert_eq!(ran.status.code(), Some(0), "{stderr}");
}

fn job_doc(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("job-study.json")).unwrap()).unwrap()
}

#[test]
fn a_job_study_judged_again_corrects_an_old_verdict_or_is_refused_without_its_inputs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("job");
    job_study(tmp.path(), &out);
    let mut doc = job_doc(&out);
    let was = doc["held"][0]["saturation"]["limit"].clone();
    assert!(doc["judged_from"]["machine"].is_object(), "{doc}");
    // The verdict an older build might have written: another cause.
    let (wrong, named) = match was.as_str() {
        Some("device") => ("cpu_quota", "a CPU quota"),
        _ => ("device", "device"),
    };
    doc["held"][0]["saturation"]["limit"] = wrong.into();
    doc["holds"] = serde_json::json!([format!("{named}: as an older build said")]);
    std::fs::write(out.join("job-study.json"), doc.to_string()).unwrap();
    let o = ssdready(&["report", "--rejudge", out.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("job-study.json"), "{stderr}");
    assert!(stdout.contains("what holds this job:"), "{stdout}");
    assert!(
        stdout.contains(&format!("what holds the job: {named} → ")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("- {named}: as an older build said")),
        "{stdout}"
    );
    let again = job_doc(&out);
    assert_eq!(again["held"][0]["saturation"]["limit"], was);
    assert_eq!(again["schema"], "ssdready-job-study");
    // Judged again once more: nothing left to change.
    let o = ssdready(&["report", "--rejudge", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout.contains("no finding changed"), "{stdout}");
    // Recorded without what the rules judge a job from: refused, untouched.
    let mut older = job_doc(&out);
    older.as_object_mut().unwrap().remove("judged_from");
    let text = older.to_string();
    std::fs::write(out.join("job-study.json"), &text).unwrap();
    let o = ssdready(&["report", "--rejudge", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains("recorded without"), "{err}");
    assert!(err.contains("run the study of the job again"), "{err}");
    assert_eq!(
        std::fs::read_to_string(out.join("job-study.json")).unwrap(),
        text
    );
}
