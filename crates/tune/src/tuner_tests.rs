//! The Tuner and its journal on a fake sysfs in a temporary directory: a
//! change and its restore, a setting another process changed meanwhile,
//! a journal an ended process left, the journal on disk before the write,
//! refusals, and a panic's unwinding.

use super::*;
use crate::{held_at, recover_at, Undone};
use std::path::Path;

/// A fake `/sys` with loop0 and loop1 (scheduler mq-deadline of three,
/// nr_requests 128), and a journal directory beside it.
struct Fake {
    t: tempfile::TempDir,
}

impl Fake {
    fn new() -> Fake {
        let t = tempfile::tempdir().unwrap();
        for dev in ["loop0", "loop1"] {
            let q = t.path().join("sys/block").join(dev).join("queue");
            std::fs::create_dir_all(&q).unwrap();
            std::fs::write(q.join("scheduler"), "none [mq-deadline] bfq\n").unwrap();
            std::fs::write(q.join("nr_requests"), "128\n").unwrap();
        }
        Fake { t }
    }
    fn sys(&self) -> PathBuf {
        self.t.path().join("sys")
    }
    fn dir(&self) -> PathBuf {
        self.t.path().join("run/ssdready/settings")
    }
    fn tuner(&self) -> Tuner {
        Tuner::with_roots(self.sys(), self.dir(), vec!["loop0".into()]).unwrap()
    }
    fn read(&self, dev: &str, attr: &str) -> String {
        sysfs::read(&self.sys(), dev, attr).unwrap()
    }
    fn write(&self, dev: &str, attr: &str, v: &str) {
        std::fs::write(sysfs::path(&self.sys(), dev, attr), v).unwrap();
    }
    fn journals(&self) -> Vec<PathBuf> {
        crate::store::list(&self.dir())
    }
    /// A journal of `owner` holding loop0's scheduler set to none.
    fn plant(&self, owner: Owner) -> PathBuf {
        let mut j = Journal::new(owner.clone());
        j.settings.push(Setting {
            device: "loop0".into(),
            attr: "scheduler".into(),
            original: "mq-deadline".into(),
            ours: "none".into(),
            also: Vec::new(),
        });
        let path = journal::file(&self.dir(), journal::SETTINGS, owner.pid);
        j.save(&path).unwrap();
        path
    }
}

/// A pid no process has (above the kernel's pid_max).
const NO_PID: u32 = 4_000_000_000;

#[test]
fn a_setting_is_journaled_while_changed_and_put_back_on_restore() {
    let f = Fake::new();
    let mut t = f.tuner();
    t.set("loop0", "scheduler", "none").unwrap();
    assert_eq!(f.read("loop0", "scheduler"), "none");
    let j = Journal::load(t.journal_path()).unwrap().unwrap();
    assert_eq!(j.owner.pid, std::process::id());
    assert_eq!(j.settings[0].original, "mq-deadline");
    assert_eq!(j.settings[0].ours, "none");
    // A second change keeps the first original.
    t.set("loop0", "scheduler", "bfq").unwrap();
    t.set("loop0", "nr_requests", "4").unwrap();
    assert_eq!(t.changed().len(), 2);
    let r = t.restore("loop0", "scheduler").unwrap();
    assert_eq!(
        r.to_string(),
        "put back /sys/block/loop0/queue/scheduler to mq-deadline \
         (and nr_requests to 128, which the switch resets)"
    );
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert_eq!(t.restore("loop0", "scheduler"), None);
    assert_eq!(f.journals().len(), 1, "nr_requests still held");
    let all = t.restore_all();
    assert!(all.iter().all(Restored::is_original), "{all:?}");
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert!(f.journals().is_empty(), "an empty journal is removed");
}

#[test]
fn a_setting_already_at_the_value_asked_is_not_journaled() {
    let f = Fake::new();
    let mut t = f.tuner();
    t.set("loop0", "scheduler", "mq-deadline").unwrap();
    assert!(t.changed().is_empty() && f.journals().is_empty());
}

#[test]
fn a_setting_another_process_changed_meanwhile_is_left_and_reported() {
    let f = Fake::new();
    let mut t = f.tuner();
    t.set("loop0", "scheduler", "none").unwrap();
    f.write("loop0", "scheduler", "none mq-deadline [bfq]\n");
    let r = t.restore("loop0", "scheduler").unwrap();
    assert_eq!(
        r,
        Restored::ChangedByOther {
            device: "loop0".into(),
            attr: "scheduler".into(),
            now: "bfq".into(),
            ours: "none".into(),
            original: "mq-deadline".into(),
        }
    );
    assert!(r.to_string().contains("another process changed it"), "{r}");
    assert_eq!(f.read("loop0", "scheduler"), "bfq", "not overwritten");
    assert!(f.journals().is_empty());
}

#[test]
fn the_journal_is_on_disk_before_the_write_and_a_failed_write_changes_nothing() {
    let f = Fake::new();
    let mut t = f.tuner();
    let file = t.journal_path().to_path_buf();
    let seen = std::rc::Rc::new(std::cell::RefCell::new(None));
    let s = seen.clone();
    t.before_write = Some(Box::new(move |_| {
        *s.borrow_mut() = Journal::load(&file).unwrap();
        Err(std::io::Error::other("injected"))
    }));
    let e = t.set("loop0", "nr_requests", "4").unwrap_err();
    assert!(matches!(e, TuneError::Write { .. }), "{e}");
    let j = seen
        .borrow()
        .clone()
        .expect("the journal existed at the write");
    assert_eq!(
        (j.settings[0].original.as_str(), j.settings[0].ours.as_str()),
        ("128", "4")
    );
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert!(t.changed().is_empty() && f.journals().is_empty());
}

#[test]
fn a_journal_that_cannot_be_written_stops_the_change() {
    let f = Fake::new();
    // A file where the journal directory should be.
    std::fs::create_dir_all(f.dir().parent().unwrap()).unwrap();
    std::fs::write(f.dir(), "").unwrap();
    let mut t = f.tuner();
    let e = t.set("loop0", "scheduler", "none").unwrap_err();
    assert!(matches!(e, TuneError::Journal { .. }), "{e}");
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert!(t.changed().is_empty());
}

#[test]
fn a_device_or_setting_not_allowed_is_refused_with_what_is() {
    let f = Fake::new();
    let allowed = vec!["loop0".into(), "../vda".into()];
    let mut t = Tuner::with_roots(f.sys(), f.dir(), allowed).unwrap();
    assert_eq!(t.allowed(), ["loop0"]);
    for dev in ["loop1", "vda", "../vda"] {
        let e = t.set(dev, "scheduler", "none").unwrap_err();
        assert!(matches!(e, TuneError::NotAllowed { .. }), "{e}");
        assert!(e.to_string().contains("allowed: loop0"), "{e}");
    }
    let e = t.set("loop0", "rotational", "0").unwrap_err();
    assert!(matches!(e, TuneError::UnknownAttr { .. }), "{e}");
    assert!(e.to_string().contains("max_sectors_kb"), "{e}");
    let e = t.set("loop0", "scheduler", "none\nbfq").unwrap_err();
    assert!(matches!(e, TuneError::BadValue { .. }), "{e}");
    let e = t.set("loop0", "io_poll", "1").unwrap_err();
    assert!(matches!(e, TuneError::NotOffered { .. }), "{e}");
    assert_eq!(f.read("loop1", "scheduler"), "mq-deadline");
    assert!(f.journals().is_empty());
    let mut gone =
        Tuner::with_roots(f.sys(), f.t.path().join("other"), vec!["sdz".into()]).unwrap();
    let e = gone.set("sdz", "scheduler", "none").unwrap_err();
    assert!(matches!(e, TuneError::NoDevice { .. }), "{e}");
}

#[test]
fn one_tuner_per_journal_directory_in_a_process() {
    let f = Fake::new();
    let _t = f.tuner();
    let e = Tuner::with_roots(f.sys(), f.dir(), vec![]).err().unwrap();
    assert!(matches!(e, TuneError::AlreadyOpen { .. }), "{e}");
}

#[test]
fn a_panic_puts_every_setting_back_on_its_unwinding() {
    let f = Fake::new();
    let r = std::panic::catch_unwind(|| {
        let mut t = f.tuner();
        t.set("loop0", "scheduler", "none").unwrap();
        t.set("loop0", "nr_requests", "8").unwrap();
        assert_eq!(f.journals().len(), 1);
        panic!("in the middle of a trial");
    });
    assert!(r.is_err());
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert!(f.journals().is_empty());
}

#[test]
fn a_journal_left_by_an_ended_process_is_put_back_and_removed() {
    let f = Fake::new();
    f.write("loop0", "scheduler", "[none] mq-deadline bfq\n");
    let me = Owner::me();
    let path = f.plant(Owner {
        pid: NO_PID,
        ..me.clone()
    });
    let r = recover_at(&f.sys(), &f.dir());
    assert_eq!(r.len(), 1, "{r:?}");
    let line = r[0].to_string();
    assert_eq!(
        line,
        format!(
            "put back /sys/block/loop0/queue/scheduler to mq-deadline, left changed by \
             ssdready (pid {NO_PID}), which ended without putting it back"
        )
    );
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert!(!path.exists());
    assert!(recover_at(&f.sys(), &f.dir()).is_empty(), "once");
}

#[test]
fn a_reused_pid_is_not_taken_for_the_owner() {
    let f = Fake::new();
    f.write("loop0", "scheduler", "none\n");
    let me = Owner::me();
    // This process's pid, another start time: an ended owner whose pid was
    // given to this process.
    f.plant(Owner {
        start_time: me.start_time + 1,
        ..me
    });
    let r = recover_at(&f.sys(), &f.dir());
    assert!(
        matches!(&r[0].what, Undone::Setting(Restored::PutBack { .. })),
        "{r:?}"
    );
    assert!(f.journals().is_empty());
}

#[test]
fn a_running_owners_journal_is_left_to_it_and_its_setting_refused() {
    let f = Fake::new();
    f.write("loop0", "scheduler", "none\n");
    let init = Owner::of(Path::new("/proc"), 1).expect("pid 1 runs");
    let path = f.plant(init);
    assert!(recover_at(&f.sys(), &f.dir()).is_empty());
    assert!(path.exists());
    assert_eq!(f.read("loop0", "scheduler"), "none");
    let h = held_at(&f.dir());
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].pid, 1);
    assert!(
        h[0].what[0].contains("set to none (was mq-deadline)"),
        "{h:?}"
    );
    let mut t = f.tuner();
    let e = t.set("loop0", "scheduler", "bfq").unwrap_err();
    assert!(matches!(e, TuneError::HeldByOther { pid: 1, .. }), "{e}");
    // Another setting of the same device is free.
    t.set("loop0", "nr_requests", "4").unwrap();
}

#[test]
fn an_ended_owners_journal_on_the_same_setting_is_put_back_before_the_change() {
    let f = Fake::new();
    f.write("loop0", "scheduler", "none\n");
    f.plant(Owner {
        pid: NO_PID,
        ..Owner::me()
    });
    let mut t = f.tuner();
    t.set("loop0", "scheduler", "bfq").unwrap();
    let notes = t.take_notes();
    assert!(
        matches!(&notes[..], [Undone::Setting(Restored::PutBack { .. })]),
        "{notes:?}"
    );
    assert_eq!(t.changed()[0].original, "mq-deadline", "the true original");
    drop(t);
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
}

#[test]
fn a_setting_that_cannot_be_put_back_stays_in_the_journal() {
    let f = Fake::new();
    let mut t = f.tuner();
    t.set("loop0", "nr_requests", "4").unwrap();
    let p = sysfs::path(&f.sys(), "loop0", "nr_requests");
    std::fs::remove_file(&p).unwrap();
    std::fs::create_dir(&p).unwrap();
    let r = t.restore_all();
    assert!(matches!(&r[..], [Restored::Failed { .. }]), "{r:?}");
    assert_eq!(t.changed().len(), 1);
    assert_eq!(f.journals().len(), 1);
    std::fs::remove_dir(&p).unwrap();
    std::fs::write(&p, "4\n").unwrap();
    assert!(t.restore_all()[0].is_original());
    assert!(f.journals().is_empty());
}

#[test]
fn what_a_scheduler_switch_resets_is_put_back_with_the_scheduler() {
    let f = Fake::new();
    let iosched = sysfs::path(&f.sys(), "loop0", "iosched");
    std::fs::create_dir(&iosched).unwrap();
    std::fs::write(iosched.join("read_expire"), "250\n").unwrap();
    f.write("loop0", "nr_requests", "1000\n");
    let mut t = f.tuner();
    t.set("loop0", "scheduler", "none").unwrap();
    let also: Vec<&str> = t.changed()[0]
        .also
        .iter()
        .map(|a| a.attr.as_str())
        .collect();
    assert_eq!(also, ["nr_requests", "iosched/read_expire"]);
    // The kernel's doing on a switch: the depth reset, the tunables gone.
    f.write("loop0", "nr_requests", "128\n");
    std::fs::remove_file(iosched.join("read_expire")).unwrap();
    // A trial of its own on the depth, after the switch.
    t.set("loop0", "nr_requests", "4").unwrap();
    let r = t.restore("loop0", "nr_requests").unwrap();
    assert!(r.is_original(), "{r:?}");
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    // The kernel's doing on the switch back: the tunables made anew.
    std::fs::write(iosched.join("read_expire"), "500\n").unwrap();
    let r = t.restore_all();
    assert!(matches!(&r[..], [Restored::PutBack { .. }]), "{r:?}");
    assert_eq!(
        r[0].to_string(),
        "put back /sys/block/loop0/queue/scheduler to mq-deadline (and nr_requests to 1000, \
         iosched/read_expire to 250, which the switch resets)"
    );
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert_eq!(f.read("loop0", "nr_requests"), "1000");
    assert_eq!(f.read("loop0", "iosched/read_expire"), "250");
}

#[test]
fn a_device_another_process_is_changing_is_refused_whole_and_left_as_it_is() {
    let f = Fake::new();
    let locks = f.t.path().join("run/ssdready/locks");
    crate::store::ensure_dir(&locks).unwrap();
    let path = locks.join("loop0");
    // Another process holds loop0's lock (flock(1), which says its pid).
    let mut other = std::process::Command::new("flock")
        .arg(&path)
        .args(["sh", "-c"])
        .arg(format!("echo 4242 >{}; exec sleep 30", path.display()))
        .spawn()
        .expect("flock(1) from util-linux");
    let mut refused = None;
    for _ in 0..500 {
        // A Tuner holds a device's lock until it is dropped: a new one
        // each try, until the other has the lock.
        let mut t = f.tuner();
        if let Err(
            e @ TuneError::Locked(crate::lock::LockError::Busy {
                pid: Some(4242), ..
            }),
        ) = t.set("loop0", "nr_requests", "64")
        {
            refused = Some((e, t));
            break;
        }
        drop(t);
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let (e, mut t) = refused.expect("the other process's lock was never seen");
    assert!(e.to_string().contains("loop0"), "{e}");
    // Neither setting of the device is touched, nor journaled.
    assert!(t.set("loop0", "scheduler", "none").is_err());
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert!(t.changed().is_empty());
    let _ = std::process::Command::new("pkill")
        .args(["-KILL", "-P", &other.id().to_string()])
        .status();
    let _ = other.kill();
    let _ = other.wait();
}

/// A Tuner whose fake kernel resets loop0's `nr_requests` to 64 on a
/// scheduler write, as Linux does; `stuck`: to a value that takes no
/// write (a link, which the tuner never writes through).
fn resetting(f: &Fake, stuck: bool) -> Tuner {
    let mut t = f.tuner();
    let nr = sysfs::path(&f.sys(), "loop0", "nr_requests");
    let real = f.t.path().join("nr_requests.real");
    t.before_write = Some(Box::new(move |path| {
        if path.ends_with("scheduler") {
            std::fs::remove_file(&nr)?;
            match stuck {
                true => {
                    std::fs::write(&real, "64\n")?;
                    std::os::unix::fs::symlink(&real, &nr)?;
                }
                false => std::fs::write(&nr, "64\n")?,
            }
        }
        Ok(())
    }));
    t
}

#[test]
fn a_scheduler_switch_keeps_the_request_queue_it_found_and_both_go_back() {
    let f = Fake::new();
    let mut t = resetting(&f, false);
    let (kept, moved) = t.set_keeping("loop0", "scheduler", "none").unwrap();
    assert_eq!(f.read("loop0", "scheduler"), "none");
    // The kernel's reset to 64 put back: the switch is measured alone.
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert_eq!((kept, moved), (vec!["nr_requests".to_string()], vec![]));
    // Put back the kept setting first, then the switch: as before.
    t.before_write = None;
    t.restore("loop0", "nr_requests");
    t.restore("loop0", "scheduler");
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert!(t.changed().is_empty());
}

#[test]
fn a_setting_the_switch_moved_that_cannot_be_put_back_is_said() {
    let f = Fake::new();
    let mut t = resetting(&f, true);
    let (kept, moved) = t.set_keeping("loop0", "scheduler", "none").unwrap();
    assert!(kept.is_empty());
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert!(
        moved[0]
            .starts_with("nr_requests on loop0 (128 → 64 with scheduler none, which refuses 128: "),
        "{moved:?}"
    );
    // A change of nr_requests alone moves nothing else.
    let f = Fake::new();
    let mut t = f.tuner();
    assert_eq!(
        t.set_keeping("loop0", "nr_requests", "4").unwrap(),
        (vec![], vec![])
    );
}

#[test]
fn a_journal_that_does_not_hold_the_change_at_its_write_stops_it() {
    let f = Fake::new();
    let mut t = f.tuner();
    let file = t.journal_path().to_path_buf();
    // Broken on purpose: the journal removed between its save and the write.
    let gone = file.clone();
    t.before_write = Some(Box::new(move |_| std::fs::remove_file(&gone)));
    let e = t.set("loop0", "nr_requests", "4").unwrap_err();
    assert!(matches!(e, TuneError::NotJournaled { .. }), "{e}");
    assert!(e.to_string().contains("left as it is"), "{e}");
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert!(t.changed().is_empty() && f.journals().is_empty());
    // A setting already changed: its journal rewritten with another value
    // than the one to be written. The value ssdready left stays, journaled.
    t.before_write = None;
    t.set("loop0", "nr_requests", "8").unwrap();
    t.before_write = Some(Box::new(move |_| {
        let mut j = Journal::load(&file).unwrap().unwrap();
        j.settings[0].ours = "16".into();
        j.save(&file)
    }));
    let e = t.set("loop0", "nr_requests", "32").unwrap_err();
    assert!(matches!(e, TuneError::NotJournaled { .. }), "{e}");
    assert_eq!(f.read("loop0", "nr_requests"), "8");
    assert_eq!(t.changed()[0].ours, "8");
    let j = Journal::load(t.journal_path()).unwrap().unwrap();
    assert_eq!(
        (j.settings[0].original.as_str(), j.settings[0].ours.as_str()),
        ("128", "8")
    );
    t.before_write = None;
    assert!(t.restore_all().iter().all(Restored::is_original));
    assert_eq!(f.read("loop0", "nr_requests"), "128");
}

#[test]
fn a_change_without_the_devices_lock_panics_before_its_write_and_all_is_put_back() {
    let f = Fake::new();
    let r = std::panic::catch_unwind(|| {
        let mut t = f.tuner();
        t.set("loop0", "scheduler", "none").unwrap();
        t.set("loop0", "nr_requests", "8").unwrap();
        // Broken on purpose: the lock let go while the device's changes are
        // held; the next write of a held setting finds it gone.
        t.locks.clear();
        assert!(!crate::lock::holds_at(&lock_dir_of(&f.dir()), "loop0"));
        let _ = t.set("loop0", "scheduler", "bfq");
    });
    let e = r.unwrap_err();
    let said = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(said.contains("without the device's lock"), "{said}");
    assert_eq!(
        f.read("loop0", "scheduler"),
        "mq-deadline",
        "never bfq, and put back"
    );
    assert_eq!(f.read("loop0", "nr_requests"), "128");
    assert!(f.journals().is_empty());
}

#[test]
fn a_depth_set_after_a_switch_is_put_back_by_the_switch_alone_at_the_end() {
    // The scheduler switched (nr_requests 4 as planted, reset to 128 by
    // the kernel), then the depth written back to 4 for the trial's run.
    let journaled = |f: &Fake| {
        f.write("loop0", "nr_requests", "4\n");
        let mut t = f.tuner();
        t.set("loop0", "scheduler", "none").unwrap();
        f.write("loop0", "nr_requests", "128\n");
        t.set("loop0", "nr_requests", "4").unwrap();
        assert_eq!(t.changed().len(), 2);
        t
    };
    let f = Fake::new();
    // (This fake kernel resets nothing on the switch back: the depth
    // reads 4 already, and the line says only the scheduler.)
    let r = journaled(&f).restore_all();
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        r[0].to_string(),
        "put back /sys/block/loop0/queue/scheduler to mq-deadline"
    );
    assert_eq!(f.read("loop0", "scheduler"), "mq-deadline");
    assert_eq!(f.read("loop0", "nr_requests"), "4");
    assert!(f.journals().is_empty());
    // The same journal left by a process that was killed: one line too.
    let f = Fake::new();
    let t = journaled(&f);
    let mut j = Journal::load(t.journal_path()).unwrap().unwrap();
    j.owner.pid = NO_PID;
    j.save(t.journal_path()).unwrap();
    std::mem::forget(t);
    let r = recover_at(&f.sys(), &f.dir());
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(
        r[0].to_string().contains("scheduler to mq-deadline"),
        "{r:?}"
    );
    assert_eq!(f.read("loop0", "nr_requests"), "4");
}
