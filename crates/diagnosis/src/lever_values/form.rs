//! The one interface every form of a lever's `values` stands behind (as
//! an I/O engine behind fio's `ioengine_ops`): its candidates at a point,
//! whether a candidate is the value already in place, what it says in
//! words, the limit of the study's groups it lifts and which measurement
//! says what it can buy. Each form is one file beside this one.

use crate::lever_context::{Candidate, Context, Point};
use ssdready_measured::group_limits::GroupLimit;
use std::fmt::Debug;

/// Why nothing is left to try, where no form says more.
pub const NOTHING_TO_TRY: &str = "nothing to try: it is already at the value the study would try";
/// What an application lever's candidate replaces, where no form says more.
pub const THE_JOB: &str = "the study's job";

/// Where a form is asked for its candidates: the study's context, the
/// point, and for a queue lever the value its file holds now.
#[derive(Clone, Copy, Debug)]
pub struct Now<'a> {
    pub cx: &'a Context,
    pub point: &'a Point,
    /// The queue file's value in effect (None for the other levers).
    pub value: Option<&'a str>,
}

/// The measurement that says what a form's first candidate can buy
/// (`crate::levers::estimate` makes the figure of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gain {
    /// The kernel's split of a large read into requests.
    Split,
    /// The queue-depth curve's growth up to the request queue's size.
    QueueFull,
    /// The scheduler sweep's cost against `none`.
    Scheduler,
    /// The engine sweep's gap to the point's own engine.
    EngineGap,
    /// The headroom between the peak and the device's own limit.
    Headroom,
    /// The same headroom, where the named cause is this limit's own.
    HeadroomIfCause(GroupLimit),
}

/// One form of `values`. The defaults are those of a form that proposes
/// job options or a move of the study's runs: no queue file, nothing
/// already in place, no limit lifted, no measured gain.
pub trait Form: Debug + Send + Sync {
    /// Its text as the table writes it (`scale 4 4096`).
    fn text(&self) -> String;

    /// Whether it sets a queue file, its candidates following from the
    /// file's value (a queue lever's form).
    fn on_queue(&self) -> bool {
        false
    }

    /// The value in effect, from the queue file's text.
    fn current(&self, file: &str) -> Option<String> {
        Some(file.trim().to_string())
    }

    /// Its candidates, best guess first, before those already in place
    /// are left out.
    fn proposed(&self, now: &Now) -> Vec<Candidate>;

    /// Whether `c` is the value already in place: trying it tries nothing.
    fn in_place(&self, _c: &Candidate, _now: &Now) -> bool {
        false
    }

    /// The one limit of the study's groups it lifts, the others kept.
    fn limit(&self) -> Option<GroupLimit> {
        None
    }

    /// Whether it raises a cap (a count of requests, a request's size, a
    /// limit of the study's groups): a limit that may bind only once
    /// another in front of it is lifted.
    fn raises_cap(&self) -> bool {
        false
    }

    /// What measurement says what its first candidate can buy.
    fn gain(&self) -> Option<Gain> {
        None
    }

    /// What its candidate replaces in the job at point `p`, in words.
    fn replaces(&self, _p: &Point) -> String {
        THE_JOB.into()
    }

    /// Why nothing is left to try at point `p`, in words.
    fn nothing_to_try(&self, _p: &Point) -> String {
        NOTHING_TO_TRY.into()
    }
}

/// For a queue form: whether `c` is the file's value now.
pub fn same_value(c: &Candidate, now: &Now) -> bool {
    now.value == Some(c.value.as_str())
}

/// For a queue form that raises a number: whether `c` is the file's
/// value now, or as a number not above it.
pub fn not_above(c: &Candidate, now: &Now) -> bool {
    let n = |v: &str| v.parse::<u64>().ok();
    match (now.value.and_then(n), n(&c.value)) {
        (Some(a), Some(b)) => b <= a,
        _ => same_value(c, now),
    }
}
