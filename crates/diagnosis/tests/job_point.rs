//! The user's job judged by the device study's causes from runs recorded
//! under a planted limit: a study's queue-depth runs read as a job at one
//! depth (its repeats) beside its depth variants (the other depths), as
//! the job study records them.

use ssdready_diagnosis::limit::caps::Caps;
use ssdready_diagnosis::limit::point::{classify_job, words};
use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::model::StudyDoc;

fn fixture(name: &str) -> StudyDoc {
    let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn a_job_at_qd_16_behind_a_4_request_queue_names_the_queue_from_recorded_runs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // A RAM loop device with nr_requests 4, recorded on a loaded 2-vCPU
    // machine: the job reads at QD 16; its variants are QD 8, 32 and 64.
    let d = fixture("loop-nr-requests-4-loaded");
    let runs: Vec<_> = d
        .runs
        .iter()
        .filter(|r| r.sweep == "qd" && [8, 16, 32, 64].contains(&r.workload.qd))
        .cloned()
        .collect();
    let caps = Caps::of(d.limits.as_ref().expect("the recorded inventory"));
    let s = classify_job(&d.targets[0], &runs, 16, &d.machine, &caps);
    assert_eq!(s.limit, Cause::DeviceQueue, "{s:?}");
    assert_eq!(s.qd, 16);
    let set = s.setting.as_ref().expect("the queue's setting");
    assert_eq!(
        (set.name.as_str(), set.value.as_str()),
        ("queue/nr_requests", "4")
    );
    assert!(set.path.ends_with("/queue/nr_requests"), "{set:?}");
    let lines = words(&s, "");
    assert!(lines[0].starts_with("the device's queue: "), "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("more I/Os in flight bought nothing")),
        "{lines:?}"
    );
}
