//! The user's job judged by the device study's causes from runs recorded
//! under a planted limit: a study's queue-depth runs read as a job at one
//! depth (its repeats) beside its depth variants (the other depths), as
//! the job study records them.

use ssdready_diagnosis::limit::caps::Caps;
use ssdready_diagnosis::limit::job::{Dir, JobFigures};
use ssdready_diagnosis::limit::point::{classify_job, per_job, words};
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

#[test]
fn two_jobs_reading_together_behind_a_4_request_queue_are_each_held_by_the_queue() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // The recorded runs' rate shared by two jobs reading together, 3 to 1.
    let d = fixture("loop-nr-requests-4-loaded");
    let runs: Vec<_> = d
        .runs
        .iter()
        .filter(|r| r.sweep == "qd" && [8, 16, 32, 64].contains(&r.workload.qd))
        .cloned()
        .collect();
    let jobs: Vec<Vec<JobFigures>> = runs
        .iter()
        .map(|r| {
            let share = |name: &str, f: f64| JobFigures {
                name: name.into(),
                read: Some(Dir {
                    iops: f * r.summary.iops,
                    bw_bytes_per_s: f * r.summary.bw_bytes_per_s,
                    ..Default::default()
                }),
                write: None,
                cpu_per_io_ns: None,
            };
            vec![share("hot", 0.75), share("cold", 0.25)]
        })
        .collect();
    let each = per_job(&runs, &jobs);
    let labels: Vec<&str> = each.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(labels, ["[hot] reads", "[cold] reads"]);
    let caps = Caps::of(d.limits.as_ref().expect("the recorded inventory"));
    for (label, mine) in &each {
        let s = classify_job(&d.targets[0], mine, 16, &d.machine, &caps);
        assert_eq!(s.limit, Cause::DeviceQueue, "{label}: {s:?}");
        let lines = words(&s, label);
        assert!(
            lines[0].starts_with(&format!("{label}: the device's queue: ")),
            "{lines:?}"
        );
    }
}
