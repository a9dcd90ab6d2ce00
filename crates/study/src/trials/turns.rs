//! The trials' one loop and one A/B turn, for both kinds of point: the
//! device study's sweeps and the user's job as written.
//!
//! - [`each`]: every change planned, in order, tried in turns or listed
//!   untested with why (the study stopped, no time left for its pairs,
//!   or an earlier change that could not be put back). A [`Bench`] says
//!   what a point does: its sides, its clock, its words.
//! - [`in_turns`]: `pairs` turns of a change against its baseline, the
//!   order alternating pair by pair (a drift favours neither side).
//! - [`turn`]: one baseline run and one changed run, the change made just
//!   before its run, put back after it ([`crate::invariants::changed_run`]).
//! - [`measure_trial`]: the turns into a trial, with what else it moved.

use crate::trials::Change;
use ssdready_diagnosis::trials::{self, Measured, Reason, Trial, Turn, Untested};

/// What the trials' loop asks of its point: the device study's sweeps
/// (`trials::run`) or the job as written (`on_job::run`).
pub(crate) trait Bench {
    /// One change to try: a lever at one value, at its point.
    type Item;
    /// Whether the study was asked to stop.
    fn stopped(&self) -> bool;
    /// The pairs `item`'s trial may take (none: no time left for them).
    fn pairs(&self, item: &Self::Item) -> usize;
    /// Why `item` gets no pairs, in words.
    fn no_time(&self, _item: &Self::Item) -> String {
        "no time left in the budget for its turns".into()
    }
    /// `item` not tried, for `reason`, said as `why`.
    fn untested(&self, item: &Self::Item, reason: Reason, why: String) -> Untested;
    /// `item` tried in `pairs` turns, after the trials `done` so far. The
    /// trial, and whether the trials must stop (its change could not be
    /// put back).
    fn try_one(&mut self, item: &Self::Item, pairs: usize, done: &[Trial]) -> (Trial, bool);
}

/// Every item tried in turns, in order, into `tried`; or listed in
/// `untested` with why. After a change that could not be put back no
/// other change is made: the rest are listed with that error, which is
/// returned.
pub(crate) fn each<B: Bench>(
    bench: &mut B,
    items: &[B::Item],
    tried: &mut Vec<Trial>,
    untested: &mut Vec<Untested>,
) -> Option<String> {
    let mut fatal: Option<String> = None;
    for item in items {
        let pairs = bench.pairs(item);
        let why = match (&fatal, bench.stopped()) {
            (Some(e), _) => Some((Reason::Unavailable, format!("the trials stopped: {e}"))),
            (None, true) => Some((Reason::Stopped, "the study was stopped first".into())),
            _ if pairs == 0 => Some((Reason::NoTime, bench.no_time(item))),
            _ => None,
        };
        if let Some((reason, why)) = why {
            untested.push(bench.untested(item, reason, why));
            continue;
        }
        let (trial, stop) = bench.try_one(item, pairs, tried);
        if stop {
            let e = trial.error.clone();
            fatal = Some(e.unwrap_or_else(|| "a change could not be put back".into()));
        }
        tried.push(trial);
    }
    fatal
}

/// What else a change moved and could not put back, in words.
fn moved_words(change: &dyn Change) -> Option<String> {
    let moved = change.moved();
    (!moved.is_empty()).then(|| moved.join("; "))
}

/// The two sides of a trial's turns, as the device study's trials and the
/// job's run them: the baseline and the changed run, and whether the
/// study was asked to stop.
pub(crate) trait Sides {
    fn stopped(&self) -> bool;
    /// One run of the changed side (`changed`) or of the baseline.
    fn measure(&mut self, changed: bool) -> Result<Measured, String>;
}

/// What a change's turns gave: the turns done, why they stopped short,
/// whether none could be done for a failure (not a stop), and whether the
/// trials must stop (a change that could not be put back).
#[derive(Default)]
pub(crate) struct Turns {
    pub turns: Vec<Turn>,
    pub error: Option<String>,
    pub failed: bool,
    pub fatal: bool,
}

/// `pairs` turns of `change` against the baseline, the one loop of every
/// trial, set and best configuration. The order alternates pair by pair
/// (baseline first, then the change first): a device that drifts over the
/// trial (a drive recovering from its garbage collection) favours neither
/// side.
pub(crate) fn in_turns(sides: &mut dyn Sides, change: &mut dyn Change, pairs: usize) -> Turns {
    let mut out = Turns::default();
    for i in 0..pairs {
        if sides.stopped() {
            out.error = Some("the study was stopped".into());
            break;
        }
        crate::invariants::turn_order(out.turns.len(), i % 2 == 1);
        match turn(sides, change, i % 2 == 1) {
            Ok(t) => out.turns.push(t),
            Err((e, fatal)) => {
                out.failed = out.turns.is_empty();
                (out.error, out.fatal) = (Some(e), fatal);
                break;
            }
        }
    }
    out
}

/// A trial's turns, measured into `trial`: [`in_turns`], then what else
/// the change moved ([`moved_words`]), the trial failed where no turn
/// completed. Returns whether the trials must stop (a change that could
/// not be put back). The one tail of the device study's trials and the
/// job's.
pub(crate) fn measure_trial(
    trial: &mut Trial,
    sides: &mut dyn Sides,
    change: &mut dyn Change,
    pairs: usize,
) -> bool {
    let done = in_turns(sides, change, pairs);
    (trial.turns, trial.error) = (done.turns, done.error);
    trial.moved = moved_words(change);
    if done.failed {
        trial.outcome = trials::Outcome::Failed;
    }
    done.fatal
}

/// One A/B turn: the baseline and the changed run (the change made before
/// it, put back after it), the change first when `change_first`. An error,
/// and whether the trials must stop (a change that could not be put back).
pub(crate) fn turn(
    sides: &mut dyn Sides,
    change: &mut dyn Change,
    change_first: bool,
) -> Result<Turn, (String, bool)> {
    let mut changed = |sides: &mut dyn Sides| {
        crate::invariants::changed_run(&mut *change, || sides.measure(true))
    };
    let base = |sides: &mut dyn Sides| sides.measure(false).map_err(|e| (e, false));
    let (baseline, change) = if change_first {
        let c = changed(sides)?;
        (base(sides)?, c)
    } else {
        let b = base(sides)?;
        (b, changed(sides)?)
    };
    Ok(Turn { baseline, change })
}

#[cfg(test)]
#[path = "turns_tests.rs"]
mod tests;
