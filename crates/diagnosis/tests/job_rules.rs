//! A job's runs through the device study's rules: two studies of one
//! synchronous job (`psync`, 4 KiB random reads at QD 1, `study --job …
//! --budget 60s`) on a loop device over `/dev/shm`, recorded on a 2-vCPU
//! virtual machine, alone and beside two busy loops at nice 10. Besides
//! what holds the job, the rules find what they find of any study's
//! runs: the platform's share of the latency at QD 1, and a machine too
//! noisy to conclude firmly, with the other work that kept it busy.

use ssdready_diagnosis::limit::point::{Held, JudgedFrom};
use ssdready_diagnosis::rejudged::job::{rejudged_job, Recorded, Rejudged};
use ssdready_measured::record::{RunRecord, Verdict};

/// A recorded job study's inputs and verdict: what it was judged from,
/// its runs, what held it and its lines.
pub fn recorded(name: &str) -> (JudgedFrom, Vec<RunRecord>, Vec<Held>, Vec<String>) {
    let doc: serde_json::Value = serde_json::from_slice(&crate::gunzip(name)).unwrap();
    let of = |k: &str| doc[k].clone();
    (
        serde_json::from_value(of("judged_from")).unwrap(),
        serde_json::from_value(of("points")).unwrap(),
        serde_json::from_value(of("held")).unwrap(),
        serde_json::from_value(of("holds")).unwrap(),
    )
}

/// The job study recorded in fixture `name` judged again by this build,
/// as recorded by a build that kept no finding but what holds the job:
/// what held it as recorded, and the job judged again.
pub fn judged_again(name: &str) -> (Vec<Held>, Rejudged) {
    let (from, points, held, holds) = recorded(name);
    let again = rejudged_job(Recorded {
        from: Some(&from),
        points: &points,
        held: &held,
        holds: &holds,
        findings: &[],
    })
    .unwrap();
    (held, again)
}

fn rules(v: &[Verdict]) -> Vec<&str> {
    v.iter().map(|v| v.rule.as_str()).collect()
}

#[test]
fn a_jobs_runs_alone_give_the_platforms_share_at_qd_1_and_not_again_what_holds_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (from, points, held, _) = recorded("loop-psync-qd1-job.json.gz");
    let found = ssdready_diagnosis::job_findings(&from, &points);
    let split = found
        .iter()
        .find(|v| v.rule == "platform-owns-qd1")
        .unwrap_or_else(|| panic!("{:?}", rules(&found)));
    // 14.02 µs of 20.19 µs: the instrumented run's latency split.
    assert!(split.finding.contains("70 %"), "{}", split.finding);
    // What holds the job is said once, by its own lines, not again here.
    assert_eq!(
        held[0].saturation.limit,
        ssdready_diagnosis::limit::Cause::Completions
    );
    assert!(
        found.iter().all(|v| !v.rule.ends_with("-limit")),
        "{:?}",
        rules(&found)
    );
}

#[test]
fn a_jobs_runs_beside_busy_loops_are_said_too_noisy_with_the_work_that_kept_the_cpus_busy() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let name = "loop-psync-qd1-job-beside-nice10-loops.json.gz";
    let (from, points, _, _) = recorded(name);
    let found = ssdready_diagnosis::job_findings(&from, &points);
    let noisy = found
        .iter()
        .find(|v| v.rule == "noisy-machine")
        .unwrap_or_else(|| panic!("{:?}", rules(&found)));
    assert!(
        noisy.finding.contains("busy before the study began"),
        "{}",
        noisy.finding
    );
    // Recorded by a build that judged no finding but what holds the job:
    // judged again, it gains them, each said as added.
    let (_, again) = judged_again(name);
    assert_eq!(rules(&again.findings), rules(&found));
    assert!(
        again.changes.added.iter().any(|l| l == &noisy.finding),
        "{:?}",
        again.changes.added
    );
}
