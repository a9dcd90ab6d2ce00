//! The plan ranked by what each change can buy: a large estimate is
//! tried first, in a quick study too, whatever the findings' order; an
//! untested large one is listed with its estimate and keeps the answer
//! from calling the host's figures final. At a job as written: which of
//! the host's levers are tried, which are refused and why, and what a
//! study not asked to change the host says instead.

use super::*;
use crate::levers::{shipped, At, Kind};
use crate::trials::command_to_try;
use crate::trials::section::{self as trials_section, answer};
use ssdready_core::options::RawOption;

fn num(v: f64) -> crate::facts::Fact {
    crate::facts::Fact::of(crate::facts::Value::Num(v), "count", Vec::new())
}

/// A loop device whose findings name the submission path, with 1 MiB
/// reads split 128 ways (`max_sectors_kb` 8 of 1280).
fn split_device() -> Context {
    let mut cx = Context {
        cause: Cause::SubmissionPath,
        cpu_list: "0-1".into(),
        large_read_split: Some(128.0),
        ..Default::default()
    };
    let mut kind = num(0.0);
    kind.value = crate::facts::Value::Text("BlockDevice".into());
    cx.facts.insert("target_kind".into(), kind);
    for (k, v) in [("peak_qd", 32.0), ("cpus", 2.0)] {
        cx.facts.insert(k.into(), num(v));
    }
    for (k, v) in [
        ("scheduler", "[none] mq-deadline"),
        ("nr_requests", "128"),
        ("nomerges", "0"),
        ("iostats", "1"),
        ("rq_affinity", "1"),
        ("max_sectors_kb", "8"),
        ("max_hw_sectors_kb", "1280"),
    ] {
        cx.queue.insert(k.into(), v.into());
    }
    cx
}

fn at(a: At) -> Option<Point> {
    let large = a == At::Large;
    Some(Point {
        rw: if large { "read" } else { "randread" }.into(),
        bs: if large { 1 << 20 } else { 4096 },
        qd: if large { 8 } else { 32 },
        threads: 1,
        engine: Some("io_uring".into()),
        direct: true,
        sizes: String::new(),
    })
}

fn asked() -> Consent {
    Consent {
        device: true,
        root: true,
        asked: true,
        ..Default::default()
    }
}

#[test]
fn a_quick_study_tries_the_change_with_a_large_estimate_first() {
    let cx = split_device();
    let fired = levers::fired(&cx, &[]);
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert_eq!(ids.first(), Some(&"max-sectors"), "{ids:?}");
    assert!(todo[0].estimate.as_ref().is_some_and(|e| e.large()));
    // The small ones the findings point at still fill the quick study's
    // share; the rest are listed as left for a full study.
    assert!(ids.len() >= 2, "{ids:?}");
    assert!(not.iter().any(|u| u.reason == Reason::Quick), "{not:?}");
}

#[test]
fn a_large_estimate_ranks_before_the_levers_the_cause_names() {
    let mut cx = split_device();
    // The findings name nothing that points at max-sectors: its estimate
    // alone brings it in, and first.
    cx.cause = Cause::OneCore;
    let (todo, _) = plan(&shipped(), &cx, &[], &asked(), false, &at);
    assert_eq!(todo[0].lever.id, "max-sectors");
    // Without the split it has no estimate and no place at the front.
    cx.large_read_split = None;
    let (todo, _) = plan(&shipped(), &cx, &[], &asked(), false, &at);
    assert!(todo.iter().all(|p| p.lever.id != "max-sectors"));
}

#[test]
fn an_untested_large_change_is_listed_with_its_estimate_and_keeps_the_answer_open() {
    let cx = split_device();
    let fired = levers::fired(&cx, &[]);
    let user = Consent {
        device: true,
        root: true,
        ..Default::default()
    };
    let (todo, not) = plan(&shipped(), &cx, &fired, &user, true, &at);
    assert!(todo.iter().all(|p| p.lever.kind != Kind::Queue));
    let mut u = not
        .iter()
        .find(|u| u.lever == "max-sectors")
        .cloned()
        .expect("max-sectors is listed");
    assert_eq!(u.reason, Reason::NotAsked);
    assert!(u.large(), "{u:?}");
    u.command = command_to_try(u.reason, "/dev/loop3");
    let s = trials_section::Section {
        trials: vec![crate::trials::Trial {
            outcome: crate::trials::Outcome::NoGain,
            ..Default::default()
        }],
        untested: vec![u],
        ..Default::default()
    };
    let a = answer(&s);
    assert!(!a.contains("what this host gives"), "{a}");
    assert!(a.contains("may buy up to +1000 %"), "{a}");
    assert!(
        a.contains("sudo ssdready study /dev/loop3 --try-changes"),
        "{a}"
    );
    let text = crate::trials::text::section(&s);
    assert!(text.contains("may buy up to"), "{text}");
}

/// A loop device's study in a group with a read-IOPS throttle and a CPU
/// quota (cgroup v1), the throttle named as what holds the I/O.
fn throttle_and_quota() -> Context {
    let mut cx = split_device();
    cx.large_read_split = None;
    cx.cause = Cause::IoThrottle;
    cx.limits = Some(ssdready_measured::group_limits::fixtures::v1_plant());
    cx
}

fn parallel_at(a: At) -> Option<Point> {
    let mut p = at(a)?;
    if a == At::Parallel {
        (p.threads, p.qd) = (2, 16);
    }
    Some(p)
}

#[test]
fn every_limit_that_holds_is_tried_alone_at_its_own_point_in_a_quick_study_too() {
    let cx = throttle_and_quota();
    let fired = levers::fired(&cx, &["io-throttle-limit".to_string()]);
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &parallel_at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert_eq!(ids[..2], ["io-throttle", "cpu-quota"], "{ids:?} {not:?}");
    assert_eq!(todo[1].point.threads, 2);
    assert!(todo[1].candidates[0]
        .value
        .contains("the I/O throttle kept"));
    // The cpuset holds nothing here: no lever lifts it.
    assert!(ids.iter().all(|i| *i != "cpuset"));
    assert!(not.iter().all(|u| u.lever != "cpuset"), "{not:?}");
}

#[test]
fn a_limit_that_cannot_bind_at_the_point_the_study_reaches_is_said_untested() {
    let mut cx = throttle_and_quota();
    // A quota of 4 CPUs on a machine of two: no point binds it.
    if let Some(inv) = cx.limits.as_mut() {
        inv.cpu_quotas[0].cpus = 4.0;
    }
    let (todo, not) = plan(&shipped(), &cx, &[], &asked(), false, &parallel_at);
    assert!(todo.iter().all(|p| p.lever.id != "cpu-quota"));
    let u = not.iter().find(|u| u.lever == "cpu-quota").expect("listed");
    assert_eq!(u.reason, Reason::CannotBind);
    assert!(u.why.contains("the quota allows 4.00 CPUs"), "{}", u.why);
}

/// A RAM loop device with its request queue cut to 4 (the planted case):
/// the curve still grew past QD 4 (more I/Os in flight amortise the
/// submissions), but the device held no more than its queue admits.
fn queue_of_four() -> Context {
    let mut cx = split_device();
    cx.cause = Cause::DeviceQueue;
    cx.large_read_split = None;
    cx.queue.insert("nr_requests".into(), "4".into());
    cx.queue.insert("max_sectors_kb".into(), "1280".into());
    cx.curve = vec![
        (1, 27_601.0),
        (2, 44_801.0),
        (4, 81_364.0),
        (8, 122_653.0),
        (16, 139_263.0),
        (32, 129_438.0),
        (64, 125_894.0),
    ];
    for (k, v) in [
        ("peak_qd", 16.0),
        ("device_in_flight_peak", 3.0),
        ("priority_raisable", 1.0),
    ] {
        cx.facts.insert(k.into(), num(v));
    }
    cx
}

#[test]
fn a_full_request_queue_named_as_the_cause_is_tried_first_in_a_quick_study() {
    let cx = queue_of_four();
    let rules = ["device-queue-limit", "other-work-present", "unstable-point"];
    let fired = levers::fired(&cx, &rules.map(String::from));
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    let all = plan(&shipped(), &cx, &fired, &asked(), false, &at).0;
    let all: Vec<(&str, bool)> = all.iter().map(|p| (p.lever.id.as_str(), p.held)).collect();
    assert_eq!(ids.first(), Some(&"nr-requests"), "{ids:?} {all:?} {not:?}");
    let e = todo[0].estimate.as_ref().expect("an estimate");
    assert!(e.large(), "{e:?}");
}

#[test]
fn the_named_causes_own_lever_is_kept_in_a_quick_study_beside_larger_estimates() {
    let mut cx = queue_of_four();
    // The I/O's threads waited for a CPU other work held: priority and
    // pinning may buy more by their estimate; the queue's own lever, with no estimate
    // (its curve unknown), still has its trial.
    cx.cpu_wait_pct = Some(64.5);
    cx.facts.insert("other_work_peak".into(), num(60.0));
    cx.curve.clear();
    let rules = ["device-queue-limit", "other-work-present", "unstable-point"];
    let fired = levers::fired(&cx, &rules.map(String::from));
    let (todo, not) = plan(&shipped(), &cx, &fired, &asked(), true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert!(ids.contains(&"nr-requests"), "{ids:?} {not:?}");
    let large = todo
        .iter()
        .filter(|p| p.estimate.as_ref().is_some_and(|e| e.large()))
        .count();
    assert!(large >= 1, "{ids:?}");
    assert_eq!(ids.len(), large + 1, "{ids:?}");
    assert!(not.iter().all(|u| u.lever != "nr-requests"), "{not:?}");
}

#[test]
fn a_queue_cap_a_quick_study_passes_over_is_listed_untested_with_why() {
    // A queue of four beside a quota that the findings name: the queue's
    // lever has no estimate and no finding, yet its limit can bind.
    let mut cx = queue_of_four();
    cx.cause = Cause::CpuQuota;
    cx.curve.clear();
    cx.limits = Some(ssdready_measured::group_limits::fixtures::v1_plant());
    let (todo, not) = plan(&shipped(), &cx, &[], &asked(), true, &parallel_at);
    assert!(todo.iter().all(|p| p.lever.id != "nr-requests"));
    let u = not
        .iter()
        .find(|u| u.lever == "nr-requests")
        .expect("the queue listed untested");
    assert_eq!(u.reason, Reason::Quick);
    assert!(u.why.starts_with("its limit can bind at "), "{}", u.why);
    // Where it cannot bind (no more in flight than it admits): not listed.
    cx.queue.insert("nr_requests".into(), "1024".into());
    let (_, not) = plan(&shipped(), &cx, &[], &asked(), true, &parallel_at);
    assert!(not.iter().all(|u| u.lever != "nr-requests"), "{not:?}");
}

// The job as written as the point.

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
        others_apart: false,
    }
}

fn ids(p: &[Planned]) -> Vec<String> {
    p.iter()
        .map(|x| format!("{}={}", x.lever.id, x.candidate().value))
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
    let p = job_point(&db());
    assert_eq!(
        (p.rw.as_str(), p.bs, p.qd, p.threads),
        ("randread", 8192, 16, 2)
    );
    assert!(p.direct);
    // A synchronous engine keeps one I/O in flight per thread.
    let p = job_point(&job(&[
        ("rw", "write"),
        ("ioengine", "psync"),
        ("iodepth", "32"),
    ]));
    assert_eq!((p.qd, p.threads, p.direct), (1, 1, false));
    assert_eq!(p.sizes, "", "one block size is said by `bs`");
}

#[test]
fn a_job_of_many_block_sizes_is_said_by_its_range_and_mean_not_its_largest() {
    // fio's examples/iometer-file-access-server.fio.
    let split = "512/10:1k/5:2k/5:4k/60:8k/2:16k/4:32k/4:64k/10";
    let p = job_point(&job(&[
        ("bssplit", split),
        ("rw", "randrw"),
        ("rwmixread", "80"),
        ("ioengine", "libaio"),
        ("iodepth", "64"),
        ("direct", "1"),
    ]));
    assert_eq!(
        (p.bs, p.sizes.as_str()),
        (65536, "512 B–64 KiB (mean 11.1 KiB)")
    );
    assert_eq!(
        p.describe(),
        "mixed I/O of 512 B–64 KiB (mean 11.1 KiB) blocks at QD 64 × 1 thread"
    );
    // Sizes per direction whose means differ: the range alone.
    let p = job_point(&job(&[("rw", "randrw"), ("bs", "4k,64k")]));
    assert_eq!(p.sizes, "4 KiB–64 KiB");
}

#[test]
fn jobs_that_run_in_turn_keep_in_flight_what_their_busiest_phase_keeps() {
    // fio's examples/ssd-test.fio: four jobs at QD 4, each waiting for the
    // one before it, and one more beside the last.
    let mut file = job(&[("bs", "4k"), ("ioengine", "libaio"), ("iodepth", "4")]);
    file[0].global = true;
    let section = |name: &str, opts: &[(&str, &str)]| Section {
        name: name.into(),
        ..job(opts).remove(0)
    };
    for rw in ["read", "randread", "write"] {
        file.push(section(rw, &[("rw", rw), ("stonewall", "1")]));
    }
    file.push(section(
        "randwrite",
        &[("rw", "randwrite"), ("wait_for_previous", "1")],
    ));
    let p = job_point(&file);
    assert_eq!((p.qd, p.threads, p.rw.as_str()), (4, 1, "randrw"));
    file.push(section("beside", &[("rw", "randwrite"), ("iodepth", "8")]));
    let p = job_point(&file);
    assert_eq!((p.qd, p.threads), (6, 2));
    assert_eq!(crate::limit::job::phases(&file).len(), 4);
}

#[test]
fn as_root_and_asked_the_queue_levers_whose_limit_binds_for_the_job_are_tried() {
    let table = levers::shipped();
    let (todo, not) = for_job(&table, &db(), &setting(true, true, queue("4", "4")));
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
    let (todo, not) = for_job(&table, &db(), &setting(true, true, queue("64", "512")));
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
        let (todo, not) = for_job(&table, &db(), &s);
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
    let (todo, _) = for_job(&table, &db(), &s);
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
    let (todo, not) = for_job(&table, &writer, &s);
    assert!(!ids(&todo).iter().any(|x| x.starts_with("io-throttle")));
    assert_eq!(reason_of(&not, "io-throttle"), Some(Reason::CannotBind));
    // Not asked: a limit of the groups is not lifted either.
    s.consent.asked = false;
    let (todo, not) = for_job(&table, &db(), &s);
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
    let (todo, not) = for_job(&levers::shipped(), &emu, &s);
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
        .map(|p| (p.lever.what.as_str(), p.candidate().value.as_str()))
        .collect();
    assert_eq!(tried.len(), 1, "{tried:?} {not:?}");
    assert!(tried[0].0.contains("nice -10"), "{tried:?}");
    assert_eq!(todo[0].candidate().options, [("nice".into(), "-10".into())]);
    // Pinning needs the CPUs the study may use, which a job's setting
    // does not read: passed over, not tried with an empty list.
    assert!(todo
        .iter()
        .all(|p| p.candidate().options.iter().all(|o| !o.1.is_empty())));
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

#[test]
fn writeback_throttling_is_tried_only_where_the_job_writes_through_the_page_cache() {
    let table = levers::shipped();
    let s = setting(true, true, queue("64", "512"));
    let mix =
        |direct: &'static str| job(&[("rw", "randrw"), ("iodepth", "16"), ("direct", direct)]);
    let (todo, not) = for_job(&table, &mix("1"), &s);
    assert!(
        !ids(&todo).iter().any(|x| x.starts_with("wbt")),
        "{:?}",
        ids(&todo)
    );
    assert_eq!(reason_of(&not, "wbt"), Some(Reason::CannotBind));
    let why = &not.iter().find(|u| u.lever == "wbt").unwrap().why;
    assert!(
        why.contains("the kernel lets direct writes pass it"),
        "{why}"
    );
    let (todo, not) = for_job(&table, &mix("0"), &s);
    assert!(ids(&todo).iter().any(|x| x.starts_with("wbt")), "{not:?}");
}

#[test]
fn the_files_a_variant_lays_out_beyond_the_jobs_own_are_named_as_fio_names_them() {
    use crate::limit::job::{files, first_file, variant_files};
    let written = job(&[("directory", "/data/a:/data/b"), ("nrfiles", "2")]);
    let j = 0;
    assert_eq!(files(&written, j), ["/data/a/db.0.0", "/data/a/db.0.1"]);
    assert_eq!(first_file(&written, j).as_deref(), Some("/data/a/db.0.0"));
    // numjobs=2: the second clone in the second directory.
    let mut twice = written.clone();
    twice[0].options.push(RawOption::cli("numjobs", Some("2")));
    assert_eq!(
        variant_files(&written, &[&twice, &written]),
        ["/data/b/db.1.0", "/data/b/db.1.1"]
    );
    // Named files are the job's own whatever the clones; opendir's are
    // there already; the built-in drive has none.
    let named = job(&[("filename", "/data/f"), ("numjobs", "4")]);
    assert_eq!(files(&named, 0), ["/data/f"]);
    assert!(files(&job(&[("opendir", "/data")]), 0).is_empty());
    // `name=` renames the job, and its files with it (kubestr's spelling).
    let renamed = job(&[("name", "read_iops"), ("directory", "/data")]);
    assert_eq!(files(&renamed, 0), ["/data/read_iops.0.0"]);
    assert!(files(&job(&[("rw", "read")]), 0).is_empty());
}

#[test]
fn the_changes_of_the_limits_the_judgement_names_are_tried_first_then_those_behind_them() {
    use crate::limit::point::Held;
    use crate::limit::{AlsoHeld, Saturation};
    let table = shipped();
    let of = |id: &str, behind: bool| Planned {
        lever: table.iter().find(|l| l.id == id).unwrap().clone(),
        point: Point::default(),
        candidates: vec![],
        pointed: false,
        estimate: None,
        held: false,
        behind: behind.then(|| ("cpu-quota".into(), "hidden".into())),
    };
    // The table's order, as the job's plan makes it; a write throttle
    // the groups set that holds neither direction.
    let mut p = vec![
        of("scheduler", false),
        of("nomerges", false),
        of("cpuset", true),
        of("io-throttle", false),
        of("cpu-quota", false),
        of("cpu-idle", false),
        Planned {
            held: true,
            ..of("io-latency", false)
        },
    ];
    // The reads held by the quota; the writes by the throttle, the quota
    // also holding them.
    let held = |limit: Cause, also: &[Cause]| Held {
        saturation: Saturation {
            limit,
            also_held: also
                .iter()
                .map(|&cause| AlsoHeld {
                    cause,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        },
        ..Default::default()
    };
    let judged = [
        held(Cause::CpuQuota, &[]),
        held(Cause::IoThrottle, &[Cause::CpuQuota]),
    ];
    named_first(&mut p, &judged);
    let order: Vec<&str> = p.iter().map(|x| x.lever.id.as_str()).collect();
    assert_eq!(
        order,
        [
            "io-throttle",
            "cpu-quota",
            "io-latency",
            "cpuset",
            "scheduler",
            "nomerges",
            "cpu-idle"
        ]
    );
    assert!(p[0].pointed && p[1].pointed && !p[3].pointed);
    // An also-held cause alone points at its lever too.
    let mut q = vec![of("nomerges", false), of("cpu-quota", false)];
    named_first(&mut q, &[held(Cause::IoThrottle, &[Cause::CpuQuota])]);
    assert_eq!(q[0].lever.id, "cpu-quota");
}
