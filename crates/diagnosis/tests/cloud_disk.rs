//! A whole study recorded on a 16-vCPU cloud VM whose disk is virtio
//! (`ssdready study --quick --try-changes --budget 90s` on a file of its
//! root ext4; mq-deadline, `nr_requests` 256, one hardware queue), judged
//! again. At the peak (QD 64) the submitting thread was about a third
//! busy, the disk held 52 of the 64 I/Os and was busy 99 % of the time,
//! the curve stopped at 115.7K IOPS, and 16 threads at QD 1 gave what one
//! thread at QD 16 gave. The I/Os that were not at the disk waited in the
//! block layer for it: the disk's limit, or what lies below this host.

use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::model::StudyDoc;
use ssdready_diagnosis::rejudge;

fn cloud_study() -> StudyDoc {
    serde_json::from_slice(&crate::gunzip("cloud-virtio-16cpu.json.gz")).unwrap()
}

#[test]
fn a_virtio_disk_full_of_the_ios_on_16_cpus_is_a_limit_below_the_host_not_the_submission_path() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = cloud_study();
    let j = rejudge(&d);
    let s = &j.figures.saturation;
    assert_eq!(s.limit, Cause::BelowHost, "{s:?}");
    assert_eq!(s.limit.to_string(), "a rate limit below this host");
    assert!(s.repeats_agree, "{:?}", s.repeats);
    assert!(s.part.contains("the device vda"), "{}", s.part);
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("held 5") && e.contains("of the 64 I/Os")),
        "{:?}",
        s.evidence
    );
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("16 threads at QD 1 gave")),
        "{:?}",
        s.evidence
    );
    // Ruled out by the thread's own busy share, as the run that speaks
    // for the answer measured it.
    let speaker = d
        .runs
        .iter()
        .find(|r| r.summary.iops == s.iops && r.point == "qd-64")
        .unwrap();
    let busy = speaker
        .summary
        .cpu
        .as_ref()
        .and_then(|c| c.thread_busy_max_pct)
        .unwrap();
    assert!(busy < 50.0, "{busy}");
    let sub = s
        .ruled_out
        .iter()
        .find(|r| r.cause == Cause::SubmissionPath)
        .unwrap();
    assert!(
        sub.why
            .contains(&format!("the submitting thread was {busy:.0} % busy")),
        "{}",
        sub.why
    );
    assert!(
        !s.also_held.iter().any(|a| a.cause == Cause::SubmissionPath),
        "{:?}",
        s.also_held
    );
}

#[test]
fn the_cloud_studys_facts_name_the_limit_below_the_host() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let j = rejudge(&cloud_study());
    let said = serde_json::to_string(&j.facts["saturation_limit"].value).unwrap();
    assert!(said.contains("below this host"), "{said}");
    let headline: Vec<&str> = j.verdicts.iter().map(|v| v.finding.as_str()).collect();
    assert!(
        !headline
            .iter()
            .any(|f| f.contains("submission path limits")),
        "{headline:?}"
    );
}
