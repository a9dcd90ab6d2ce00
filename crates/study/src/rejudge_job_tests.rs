//! A job study's document judged again, as `study --job` writes it and
//! as one written before what it was judged from was kept reads. Its
//! verdict here is the one of a job whose target the study could not read
//! (the diagnosis's tests judge recorded runs of a real target).

use super::*;
use ssdready_diagnosis::limit::point::{held_words, JudgedFrom};
use ssdready_diagnosis::limit::Cause;
use ssdready_measured::record::RunRecord;

/// The job's document, judged as the study judges it.
fn job_doc() -> JobDoc {
    let from = JudgedFrom::default();
    let points = vec![RunRecord {
        id: "qd-16".into(),
        point: "qd-16".into(),
        sweep: "qd".into(),
        ..Default::default()
    }];
    let held = from.held(&points);
    JobDoc {
        schema: SCHEMA.into(),
        schema_version: crate::session_parts::SCHEMA_VERSION,
        job_file: "rand-read-iops.fio".into(),
        median_iops: 60_000.0,
        holds: held_words(&held),
        held,
        points,
        judged_from: Some(from),
        ..Default::default()
    }
}

#[test]
fn a_job_study_read_back_is_judged_again_and_an_old_verdict_corrected() {
    let doc = job_doc();
    assert!(doc.holds[0].starts_with("not identified: the job's target"));
    let text = serde_json::to_string_pretty(&doc).unwrap();
    // The runs are kept once: what it was judged from holds none of them.
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v["judged_from"].get("points").is_none());
    assert!(!v["judged_from"].to_string().contains("\"qd-16\""));
    let read = parse(&text).unwrap();
    let (same, c) = rejudged(&read).unwrap();
    assert_eq!(c.lines(), ["no finding changed"]);
    assert_eq!(same.holds, doc.holds);
    // A verdict an older build wrote, corrected; the rest as recorded.
    let mut old = read;
    old.held[0].saturation.limit = Cause::OtherWork;
    old.holds = vec!["other work: other processes kept the I/O's threads waiting".into()];
    let (new, c) = rejudged(&old).unwrap();
    assert_eq!(new.held[0].saturation.limit, Cause::NotIdentified);
    assert_eq!(new.holds, doc.holds);
    assert_eq!(
        c.lines()[0],
        "what holds the job: other work → not identified"
    );
    assert_eq!((new.median_iops, new.points.len()), (60_000.0, 1));
}

#[test]
fn a_job_study_recorded_before_its_judging_was_kept_loads_and_is_refused() {
    let mut v = serde_json::to_value(job_doc()).unwrap();
    v.as_object_mut().unwrap().remove("judged_from");
    let old = parse(&v.to_string()).expect("an older document still loads");
    assert!(old.judged_from.is_none() && !old.held.is_empty());
    let e = rejudged(&old).unwrap_err();
    assert_eq!(e, RejudgeError::NoJudgedFrom);
    assert!(
        e.to_string().contains("run the study of the job again"),
        "{e}"
    );
    v["schema"] = "ssdready-study".into();
    let e = parse(&v.to_string()).unwrap_err();
    assert!(e.starts_with("not a job study"), "{e}");
    assert!(parse("{").unwrap_err().starts_with("not a job study ("));
}

#[test]
fn where_the_trials_point_is_said_again_against_the_verdict_judged_again() {
    use ssdready_diagnosis::levers::{Kind, Metric};
    use ssdready_diagnosis::trials::{Gain, Outcome, Trial};
    let mut old = job_doc();
    let lifted = Trial {
        lever: "io-throttle".into(),
        kind: Kind::Cgroup,
        from: "in the study's group".into(),
        to: "without the I/O throttle".into(),
        outcome: Outcome::Better,
        gains: vec![Gain {
            metric: Metric::Iops,
            change_pct: 347.0,
            beyond_noise: true,
            better: true,
            ..Default::default()
        }],
        ..Default::default()
    };
    old.host = Some(crate::trials::on_job::HostSection {
        trials: vec![lifted],
        ..Default::default()
    });
    old.trials_point = Some("the trials point at what an older build named".into());
    let (new, _) = rejudged(&old).unwrap();
    let said = new.trials_point.unwrap_or_default();
    assert!(
        said.starts_with("the trials point at an I/O throttle: io-throttle"),
        "{said}"
    );
}

#[test]
fn a_quota_an_older_build_said_could_not_bind_behind_a_throttle_of_the_other_direction_binds() {
    use ssdready_diagnosis::levers::{Kind, Point};
    use ssdready_diagnosis::trials::{Measured, Outcome, Trial, Turn};
    use ssdready_measured::group_limits::fixtures::v1_plant;
    let mut old = job_doc();
    if let Some(from) = old.judged_from.as_mut() {
        from.context.limits = Some(v1_plant());
    }
    let m = |iops| Measured {
        iops,
        ..Default::default()
    };
    // A file that writes and reads (the plant throttles reads to 3000):
    // lifting the quota bought beyond the noise.
    let quota = Trial {
        lever: "cpu-quota".into(),
        kind: Kind::Cgroup,
        point: Point {
            rw: "randrw".into(),
            bs: 4096,
            qd: 4,
            threads: 1,
            ..Default::default()
        },
        outcome: Outcome::Better,
        turns: vec![
            Turn {
                baseline: m(60_000.0),
                change: m(70_000.0),
            };
            3
        ],
        unbound: Some("the I/O throttle kept held its baseline at 60000 IOPS".into()),
        ..Default::default()
    };
    old.host = Some(crate::trials::on_job::HostSection {
        trials: vec![quota],
        ..Default::default()
    });
    let (new, _) = rejudged(&old).unwrap();
    let t = &new.host.unwrap().trials[0];
    assert_eq!(t.unbound, None);
    // How to keep it, made again: the quota removed, or raised to the
    // one CPU of the trial's one thread.
    assert!(t.permanent.contains("cpu.cfs_quota_us"), "{}", t.permanent);
    assert!(
        t.permanent.contains("the 1 CPU the trial's one thread"),
        "{}",
        t.permanent
    );
}
