//! The trial machinery's invariants broken on purpose, through fake
//! changes of a fake host: a turn out of its order, a change made while
//! an earlier one is held, a change made without its device's lock.

use super::*;
use std::rc::Rc;

/// What happened, in order.
type Log = Rc<RefCell<Vec<String>>>;

/// A fake host's setting: `apply` and `revert` logged, each refused when
/// asked, on the devices `on`.
struct Fake {
    name: &'static str,
    log: Log,
    refuse_apply: bool,
    refuse_revert: bool,
    on: Vec<String>,
}

impl Fake {
    fn new(name: &'static str, log: &Log) -> Fake {
        Fake {
            name,
            log: log.clone(),
            refuse_apply: false,
            refuse_revert: false,
            on: Vec::new(),
        }
    }
}

impl Made for Fake {
    fn make(&mut self) -> Result<(), String> {
        self.log.borrow_mut().push(format!("apply {}", self.name));
        match self.refuse_apply {
            true => Err(format!("{} refused", self.name)),
            false => Ok(()),
        }
    }
    fn put_back(&mut self) -> Result<(), String> {
        self.log.borrow_mut().push(format!("revert {}", self.name));
        match self.refuse_revert {
            true => Err(format!("{} changed by another process", self.name)),
            false => Ok(()),
        }
    }
    fn devices(&self) -> Vec<String> {
        self.on.clone()
    }
}

/// A run that logs itself and measures `v`.
fn run(log: &Log, v: u32) -> impl FnOnce() -> Result<u32, String> + '_ {
    move || {
        log.borrow_mut().push("run".into());
        Ok(v)
    }
}

fn said(log: &Log) -> Vec<String> {
    log.borrow().clone()
}

#[test]
fn the_turns_alternate_pair_by_pair_from_the_baseline() {
    for (done, change_first) in [(0, false), (1, true), (2, false), (3, true)] {
        turn_order(done, change_first);
    }
}

#[test]
#[should_panic(expected = "turn 2 of a comparison in turns would run the baseline first")]
fn a_turn_skipped_without_its_record_breaks_the_order() {
    // The loop's second turn (i = 1, the change first) failed and was not
    // recorded, and the loop went on: its third turn (baseline first) would
    // be recorded second.
    turn_order(1, false);
}

#[test]
fn a_change_is_made_before_its_run_and_put_back_after_it() {
    let log: Log = Rc::default();
    let mut a = Fake::new("a", &log);
    assert_eq!(changed_run(&mut a, run(&log, 7)), Ok(7));
    let mut b = Fake::new("b", &log);
    assert_eq!(changed_run(&mut b, run(&log, 8)), Ok(8));
    assert_eq!(
        said(&log),
        ["apply a", "run", "revert a", "apply b", "run", "revert b"]
    );
}

#[test]
fn no_change_is_made_while_an_earlier_one_is_not_put_back() {
    let log: Log = Rc::default();
    let mut a = Fake {
        refuse_revert: true,
        ..Fake::new("a", &log)
    };
    let (e, fatal) = changed_run(&mut a, run(&log, 7)).unwrap_err();
    assert!(fatal && e.contains("could not put it back"), "{e}");
    // Broken on purpose: a loop that goes on after a change it could not
    // put back. The next change is refused, never made.
    let mut b = Fake::new("b", &log);
    let (e, fatal) = changed_run(&mut b, run(&log, 8)).unwrap_err();
    assert!(fatal, "{e}");
    assert!(e.contains("an earlier change is still held"), "{e}");
    assert!(e.contains("a changed by another process"), "{e}");
    assert_eq!(said(&log), ["apply a", "run", "revert a"]);
}

#[test]
fn a_change_that_could_not_be_made_is_put_back_where_it_was_partly_made() {
    let log: Log = Rc::default();
    let mut a = Fake {
        refuse_apply: true,
        ..Fake::new("a", &log)
    };
    let (e, fatal) = changed_run(&mut a, run(&log, 7)).unwrap_err();
    assert!(
        !fatal && e.contains("could not make the change: a refused"),
        "{e}"
    );
    // Nothing of it is held: the next one is made.
    let mut b = Fake::new("b", &log);
    assert_eq!(changed_run(&mut b, run(&log, 8)), Ok(8));
    assert_eq!(
        said(&log),
        ["apply a", "revert a", "apply b", "run", "revert b"]
    );
}

#[test]
fn a_change_made_without_its_devices_lock_is_put_back_before_the_panic() {
    let log: Log = Rc::default();
    // Broken on purpose: a queue setting of a device this process never
    // locked.
    let mut a = Fake {
        on: vec!["ssdready-test-unlocked0".into()],
        ..Fake::new("a", &log)
    };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        changed_run(&mut a, run(&log, 7))
    }));
    let e = r.unwrap_err();
    let why = e.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        why.contains("ssdready-test-unlocked0 was made without the device's lock"),
        "{why}"
    );
    assert_eq!(said(&log), ["apply a", "revert a"], "put back, never run");
}

#[test]
fn a_change_under_its_devices_lock_runs() {
    let log: Log = Rc::default();
    let dir = tempfile::tempdir().unwrap();
    let lock = ssdready_tune::lock::acquire_at(&dir.path().join("locks"), "ssdready-test-locked0")
        .unwrap();
    let mut a = Fake {
        on: vec!["ssdready-test-locked0".into()],
        ..Fake::new("a", &log)
    };
    assert_eq!(changed_run(&mut a, run(&log, 7)), Ok(7));
    drop(lock);
    assert_eq!(said(&log), ["apply a", "run", "revert a"]);
}
