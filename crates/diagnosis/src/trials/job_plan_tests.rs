//! The job's levers, planned without root: which are tried at the job as
//! written, which are refused and why, and what a study not asked to
//! change the host says instead.

use super::*;
use crate::levers::Kind;
use ssdready_core::options::RawOption;

fn job(opts: &[(&str, &str)]) -> Vec<Section> {
    vec![Section {
        name: "db".into(),
        global: false,
        options: opts
            .iter()
            .map(|(k, v)| RawOption::cli(k, Some(v)))
            .collect(),
    }]
}

/// A loop-like device with a planted queue of 4 requests and 4 KiB
/// requests.
fn queue(nr_requests: &str, max_sectors: &str) -> BTreeMap<String, String> {
    [
        ("scheduler", "[mq-deadline] none"),
        ("nr_requests", nr_requests),
        ("max_sectors_kb", max_sectors),
        ("max_hw_sectors_kb", "512"),
        ("nomerges", "0"),
        ("rq_affinity", "1"),
        ("iostats", "1"),
        ("read_ahead_kb", "128"),
        ("wbt_lat_usec", "2000"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

fn setting(root: bool, asked: bool, q: BTreeMap<String, String>) -> Setting {
    Setting {
        disks: vec!["loop7".into()],
        queue: q,
        queue_depth: Some(128),
        limits: None,
        consent: Consent {
            root,
            asked,
            device: true,
            ..Default::default()
        },
        command: "sudo ssdready study --job db.fio --try-changes".into(),
    }
}

fn ids(p: &[Planned]) -> Vec<String> {
    p.iter()
        .map(|x| format!("{}={}", x.lever.id, x.candidate.value))
        .collect()
}

fn reason_of(u: &[Untested], lever: &str) -> Option<Reason> {
    u.iter().find(|x| x.lever == lever).map(|x| x.reason)
}

fn db() -> Vec<Section> {
    job(&[
        ("rw", "randread"),
        ("bs", "8k"),
        ("ioengine", "libaio"),
        ("iodepth", "16"),
        ("numjobs", "2"),
        ("direct", "1"),
    ])
}

#[test]
fn the_job_as_written_is_the_point_its_threads_and_what_they_keep_in_flight() {
    let p = point(&db());
    assert_eq!(
        (p.rw.as_str(), p.bs, p.qd, p.threads),
        ("randread", 8192, 16, 2)
    );
    assert!(p.direct);
    // A synchronous engine keeps one I/O in flight per thread.
    let p = point(&job(&[
        ("rw", "write"),
        ("ioengine", "psync"),
        ("iodepth", "32"),
    ]));
    assert_eq!((p.qd, p.threads, p.direct), (1, 1, false));
}

#[test]
fn as_root_and_asked_the_queue_levers_whose_limit_binds_for_the_job_are_tried() {
    let table = levers::shipped();
    let (todo, not) = plan(&table, &db(), &setting(true, true, queue("4", "4")));
    let got = ids(&todo);
    // 32 I/Os in flight against 4 requests; 8 KiB blocks against 4 KiB
    // requests: both limits bind, raised to what the job needs.
    for want in ["scheduler=none", "nr-requests=64", "max-sectors=512"] {
        assert!(got.contains(&want.to_string()), "{want}: {got:?}");
    }
    // No application lever: the job's own options are its variants.
    assert!(todo.iter().all(|p| p.lever.kind != Kind::Application));
    // Read-ahead does nothing for direct reads, writeback throttling
    // nothing for a job that writes none.
    assert_eq!(reason_of(&not, "read-ahead"), Some(Reason::CannotBind));
    assert_eq!(reason_of(&not, "wbt"), Some(Reason::CannotBind));
    assert!(not.iter().all(|u| u.command.is_none()), "{not:?}");
}

#[test]
fn a_queue_that_admits_the_job_and_requests_as_large_as_its_blocks_are_not_tried() {
    let table = levers::shipped();
    let (todo, not) = plan(&table, &db(), &setting(true, true, queue("64", "512")));
    let got = ids(&todo);
    assert!(!got
        .iter()
        .any(|x| x.starts_with("nr-requests") || x.starts_with("max-sectors")));
    let why = |l: &str| not.iter().find(|u| u.lever == l).unwrap().why.clone();
    assert!(
        why("nr-requests").contains("cannot fill"),
        "{}",
        why("nr-requests")
    );
    assert!(
        why("max-sectors").contains("nothing is split"),
        "{}",
        why("max-sectors")
    );
}

#[test]
fn not_asked_or_not_root_nothing_of_the_host_is_planned_and_the_command_is_said() {
    let table = levers::shipped();
    for (root, reason) in [(true, Reason::NotAsked), (false, Reason::NotRoot)] {
        let s = setting(root, false, queue("4", "4"));
        let (todo, not) = plan(&table, &db(), &s);
        assert!(todo.is_empty(), "{:?}", ids(&todo));
        let n = not.iter().find(|u| u.lever == "nr-requests").unwrap();
        assert_eq!(n.reason, reason);
        assert!(n.what.ends_with("→ 64"), "{}", n.what);
        assert_eq!(n.command.as_deref(), Some(s.command.as_str()));
    }
}

#[test]
fn each_limit_of_the_groups_is_lifted_alone_where_it_binds_for_the_job() {
    let table = levers::shipped();
    let mut s = setting(true, true, queue("64", "512"));
    // A read IOPS throttle and a CPU quota of 0.2 CPUs on the study's group.
    s.limits = Some(ssdready_measured::group_limits::fixtures::v1_plant());
    let (todo, _) = plan(&table, &db(), &s);
    let got = ids(&todo);
    assert!(got.iter().any(|x| x.starts_with("io-throttle=")), "{got:?}");
    assert!(got.iter().any(|x| x.starts_with("cpu-quota=")), "{got:?}");
    // No cpuset is set: nothing to lift, nothing said.
    assert!(!got.iter().any(|x| x.starts_with("cpuset")));
    // A job that only writes: the read throttle counts none of its I/O.
    let writer = job(&[
        ("rw", "randwrite"),
        ("ioengine", "libaio"),
        ("iodepth", "8"),
    ]);
    let (todo, not) = plan(&table, &writer, &s);
    assert!(!ids(&todo).iter().any(|x| x.starts_with("io-throttle")));
    assert_eq!(reason_of(&not, "io-throttle"), Some(Reason::CannotBind));
    // Not asked: a limit of the groups is not lifted either.
    s.consent.asked = false;
    let (todo, not) = plan(&table, &db(), &s);
    assert!(todo.is_empty());
    assert_eq!(reason_of(&not, "cpu-quota"), Some(Reason::NotAsked));
}

#[test]
fn an_emulated_drive_has_no_device_of_the_host_to_change() {
    // No device read for it (the study's `trials::on_job::disks`): nothing of
    // the host's queue is tried.
    let emu = job(&[("filename", "emu:nvm-lowlat,size=64m")]);
    let s = Setting {
        consent: Consent {
            root: true,
            asked: true,
            device: false,
            ..Default::default()
        },
        ..Default::default()
    };
    let (todo, not) = plan(&levers::shipped(), &emu, &s);
    assert!(todo.is_empty(), "{:?}", ids(&todo));
    assert_eq!(reason_of(&not, "scheduler"), Some(Reason::NoDevice));
}

fn libaio_qd64() -> Vec<Section> {
    job(&[
        ("rw", "randread"),
        ("ioengine", "libaio"),
        ("iodepth", "64"),
    ])
}

fn consent(root: bool, asked: bool) -> Setting {
    Setting {
        consent: Consent {
            root,
            asked,
            ..Default::default()
        },
        command: "ssdready study --job f --try-changes".into(),
        ..Default::default()
    }
}

#[test]
fn the_jobs_priority_is_tried_where_its_judgement_names_other_work_and_the_user_asked() {
    let table = levers::shipped();
    let (todo, not) = where_named(
        &table,
        &libaio_qd64(),
        &consent(true, true),
        Cause::OtherWork,
    );
    let tried: Vec<(&str, &str)> = todo
        .iter()
        .map(|p| (p.lever.what.as_str(), p.candidate.value.as_str()))
        .collect();
    assert_eq!(tried.len(), 1, "{tried:?} {not:?}");
    assert!(tried[0].0.contains("nice -10"), "{tried:?}");
    assert_eq!(todo[0].candidate.options, [("nice".into(), "-10".into())]);
    // Pinning needs the CPUs the study may use, which a job's setting
    // does not read: passed over, not tried with an empty list.
    assert!(todo
        .iter()
        .all(|p| p.candidate.options.iter().all(|o| !o.1.is_empty())));
    // Another cause named: nothing; not asked, or not root: said why.
    let named =
        |root, asked, cause| where_named(&table, &libaio_qd64(), &consent(root, asked), cause);
    assert!(named(true, true, Cause::IoPathCpu).0.is_empty());
    let (todo, not) = named(true, false, Cause::OtherWork);
    assert!(
        todo.is_empty() && not.len() == 1 && not[0].reason == Reason::NotAsked,
        "{not:?}"
    );
    assert_eq!(
        not[0].command.as_deref(),
        Some("ssdready study --job f --try-changes")
    );
    let (todo, not) = named(false, true, Cause::OtherWork);
    assert!(
        todo.is_empty() && not[0].reason == Reason::NotRoot,
        "{not:?}"
    );
}
