use super::*;
use crate::levers::{self, parse, At, Kind, TABLE};
use crate::trials::plan::{plan, Consent};

/// A queue setting the shipped table does not know, as a row of its own.
const NEW_ROW: &str = "
lever add-random
  kind queue
  attr add_random
  what whether the block layer feeds the entropy pool from its completions
  values set 0
  causes submission path
  at peak
  measure iops
  undo the setting it had, written back
";

fn asked() -> Consent {
    Consent {
        root: true,
        asked: true,
        device: true,
        ..Default::default()
    }
}

fn point() -> Point {
    Point {
        rw: "randread".into(),
        bs: 4096,
        qd: 32,
        threads: 1,
        engine: Some("io_uring".into()),
        direct: true,
        sizes: String::new(),
    }
}

#[test]
fn a_new_queue_file_is_a_table_row_alone_tried_through_its_own_file_and_put_back() {
    let table = parse(&format!("{TABLE}{NEW_ROW}")).unwrap();
    let mut cx = Context {
        cause: Cause::SubmissionPath,
        ..Default::default()
    };
    cx.queue.insert("add_random".into(), "1".into());
    let (todo, _) = plan(&table, &cx, &[], &asked(), false, &|_: At| Some(point()));
    let p = todo.iter().find(|p| p.lever.id == "add-random").unwrap();
    assert_eq!(p.lever.kind, Kind::Queue);
    assert_eq!(p.candidates[0].value, "0");
    let change = p.lever.apply(&p.candidates[0], &Lift::all());
    assert_eq!(
        change,
        Apply::Queue {
            attr: "add_random".into(),
            value: "0".into()
        }
    );
    // What it is put back to is what the file held, as read.
    assert_eq!(levers::replaced(&p.lever, &cx, &point()), "1");
    assert_eq!(p.lever.undo, "the setting it had, written back");
    let rule = levers::permanent(&p.lever, &["nvme0n1".into()], &p.candidates[0]);
    assert!(rule.contains("ATTR{queue/add_random}=\"0\""), "{rule}");
    // A kernel without the file: said so, not tried.
    cx.queue.clear();
    let (todo, not) = plan(&table, &cx, &[], &asked(), false, &|_: At| Some(point()));
    assert!(todo.iter().all(|p| p.lever.id != "add-random"));
    let n = not.iter().find(|n| n.lever == "add-random").unwrap();
    assert_eq!(n.reason, Reason::NotOffered);
    assert!(n.why.contains("queue/add_random"), "{}", n.why);
}

#[test]
fn a_queue_setting_asks_for_a_device_root_consent_and_a_way_to_write() {
    let r = |c: &Consent| QUEUE.gate(Cause::Device, c).map_err(|e| e.0);
    assert_eq!(r(&asked()), Ok(()));
    let no_device = Consent {
        device: false,
        ..asked()
    };
    assert_eq!(r(&no_device), Err(Reason::NoDevice));
    let not_root = Consent {
        root: false,
        ..asked()
    };
    assert_eq!(r(&not_root), Err(Reason::NotRoot));
    let made = Consent {
        made_by_study: true,
        ..asked()
    };
    assert_eq!(r(&made), Err(Reason::Apparatus));
    let not_asked = Consent {
        asked: false,
        ..asked()
    };
    assert_eq!(r(&not_asked), Err(Reason::NotAsked));
    let refused = Consent {
        queue_unavailable: Some("read-only sysfs".into()),
        ..asked()
    };
    assert_eq!(r(&refused), Err(Reason::Unavailable));
}

#[test]
fn the_scheduler_is_switched_first_and_its_rule_said_first() {
    assert!(QUEUE.order(Some(SCHEDULER)) < QUEUE.order(Some(NR_REQUESTS)));
    let member = |attr: &str, value: &str| Member {
        attr: Some(attr.into()),
        value: value.into(),
        devices: vec!["sda".into()],
        ..Default::default()
    };
    let (nr, sched) = (member(NR_REQUESTS, "64"), member(SCHEDULER, "none"));
    let text = udev_lines(&mut [&nr, &sched]);
    let at = |s: &str| text.find(s).unwrap();
    assert!(at("queue/scheduler") < at("queue/nr_requests"), "{text}");
    assert!(text.starts_with("# The scheduler comes first"), "{text}");
    let alone = udev_lines(&mut [&nr]);
    assert!(!alone.contains("comes first"), "{alone}");
}

#[test]
fn writeback_throttling_is_idle_for_a_job_that_writes_nothing_or_writes_directly() {
    let wbt = levers::shipped()
        .into_iter()
        .find(|l| l.attr.as_deref() == Some("wbt_lat_usec"))
        .unwrap();
    assert!(QUEUE.idle_for_job(&wbt, &point()).is_some());
    let writes = |direct: bool, rw: &str| Point {
        rw: rw.into(),
        direct,
        ..point()
    };
    assert_eq!(QUEUE.idle_for_job(&wbt, &writes(false, "randwrite")), None);
    assert!(QUEUE
        .idle_for_job(&wbt, &writes(true, "randwrite"))
        .is_some_and(|w| w.contains("the kernel lets direct writes pass it")));
    // Discards are throttled, direct or not.
    assert_eq!(QUEUE.idle_for_job(&wbt, &writes(true, "trim")), None);
    let nr = levers::shipped()
        .into_iter()
        .find(|l| l.attr.as_deref() == Some(NR_REQUESTS))
        .unwrap();
    assert_eq!(QUEUE.idle_for_job(&nr, &point()), None);
}

#[test]
fn poll_queues_are_read_from_the_queue() {
    let mut cx = Context::default();
    assert!(!polled(&cx));
    cx.queue.insert(POLL.into(), "1".into());
    assert!(polled(&cx));
}
