//! The trial machinery's invariants, checked where a turn runs, so that a
//! mistake in the loops cannot change a user's host unseen (the Tuner
//! checks its own: the journal on disk before each write, the device's
//! lock held — `ssdready_tune::Tuner`):
//!
//! - **a turn's order** ([`turn_order`]): in a comparison made in turns
//!   the order alternates pair by pair — the baseline first in the first
//!   turn, the change first in the second, … — and every turn measured
//!   is recorded, so a drift through the trial favours neither side.
//!   Asserted before the turn's runs: a loop that skips a turn without
//!   recording it is a bug.
//! - **put back before the next** ([`changed_run`]): a turn's change is
//!   made only when no change an earlier turn made is still held. A
//!   change that could not be put back stops the trials (its error is
//!   fatal) and refuses every later change of this thread with an error
//!   of its own; a change that could not be made is put back where it was
//!   partly made (a stack's first member set, the second refused) before
//!   anything else runs. Several changes at once are one change made by
//!   a combination (its `Together`), never two turns' changes.
//! - **the device's lock held** ([`changed_run`]): from the moment a
//!   queue setting is made until it is put back, this process holds the
//!   lock of each device it changes. A change found without it is put
//!   back first, then the assertion fails.
//!
//! Each check is a few comparisons per run (a run takes seconds). A
//! failed assertion panics with nothing of the turn left changed: the
//! binary's panic hook puts back every journal of the process
//! (`ssdready_tune::put_back_own`) and a library caller's unwinding drops
//! the Tuner, which puts back what it holds.
//!
//! The checks see a trial's change as [`Made`] (the trials' `Change`, in
//! `made.rs`), so that this file names nothing of the trials that call it.

use std::cell::RefCell;

/// A turn's change as the checks see it.
pub(crate) trait Made {
    /// Make the change.
    fn make(&mut self) -> Result<(), String>;
    /// Put back what was there before.
    fn put_back(&mut self) -> Result<(), String>;
    /// The devices whose settings it changes (none for other changes).
    fn devices(&self) -> Vec<String>;
}

thread_local! {
    /// The change a turn made and could not put back, in words.
    static STUCK: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Assert that the turn after `done` turns recorded runs the change first
/// exactly when `change_first`: the baseline first in even turns, the
/// change first in odd ones.
pub(crate) fn turn_order(done: usize, change_first: bool) {
    let want = done % 2 == 1;
    assert_eq!(
        change_first,
        want,
        "turn {} of a comparison in turns would run the {} first: the order alternates pair by pair, the baseline first in the first turn",
        done + 1,
        if change_first { "change" } else { "baseline" },
    );
}

/// A turn's changed run: `change` made (none an earlier turn made still
/// held), `run` measured, the change put back — the devices it changes
/// locked by this process throughout. The error, and whether the trials
/// must stop (a change that could not be put back, or one refused because
/// an earlier one was not).
pub(crate) fn changed_run<C: Made + ?Sized, T>(
    change: &mut C,
    run: impl FnOnce() -> Result<T, String>,
) -> Result<T, (String, bool)> {
    if let Some(held) = STUCK.with(|s| s.borrow().clone()) {
        return Err((
            format!("not made: an earlier change is still held ({held}), and no other change is made while it is"),
            true,
        ));
    }
    if let Err(e) = change.make() {
        return match change.put_back() {
            Ok(()) => Err((format!("could not make the change: {e}"), false)),
            Err(u) => Err((
                stuck(format!(
                    "could not make the change: {e}; putting back what was made of it: {u}"
                )),
                true,
            )),
        };
    }
    assert_locked(change, "made");
    let ran = run();
    assert_locked(change, "put back");
    change
        .put_back()
        .map_err(|e| (stuck(format!("could not put it back: {e}")), true))?;
    ran.map_err(|e| (e, false))
}

/// Keep `why` as the change held, and return it.
fn stuck(why: String) -> String {
    STUCK.with(|s| *s.borrow_mut() = Some(why.clone()));
    why
}

/// Assert that this process holds the lock of every device `change` sets
/// (when it was `made`, or is to be `put back`); a change found without
/// one is put back first.
fn assert_locked<C: Made + ?Sized>(change: &mut C, when: &str) {
    let Some(free) = change
        .devices()
        .into_iter()
        .find(|d| !ssdready_tune::lock::holds(d))
    else {
        return;
    };
    let back = change.put_back();
    panic!(
        "a trial's change of {free} was {when} without the device's lock (putting it back: {})",
        match back {
            Ok(()) => "done".to_string(),
            Err(e) => e,
        }
    );
}

#[cfg(test)]
#[path = "invariants_tests.rs"]
mod tests;
