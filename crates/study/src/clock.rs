//! The study's clock: when the study started and what its budget has left,
//! read from a time source that tests replace with a fake one
//! ([`FakeTime`]). The plan is sized from estimates; the clock keeps the
//! promise. It starts before anything else the study does (the drive's
//! attach counts), and every step asks it before starting: each point of
//! the sweeps through a [`Deadline`] that keeps back what must still
//! follow them ([`after_sweeps_s`]), then the capacity search, the
//! transport's calibration and the applications section, each skipped
//! (saying so) when it would not fit, and last the trials, given what is
//! left less [`CLOSING_S`] for judging and writing.

use crate::plan::Plan;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Where the clock reads the time: seconds from any fixed origin.
pub trait Time: Send + Sync {
    fn now_s(&self) -> f64;
}

/// The monotonic clock of this process.
struct Monotonic(Instant);

impl Time for Monotonic {
    fn now_s(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}

/// A time that moves only when told to: the clock of tests.
#[derive(Debug, Default)]
pub struct FakeTime(Mutex<f64>);

impl FakeTime {
    /// Move the time on by `s` seconds.
    pub fn advance(&self, s: f64) {
        if let Ok(mut t) = self.0.lock() {
            *t += s;
        }
    }
}

impl Time for FakeTime {
    fn now_s(&self) -> f64 {
        self.0.lock().map_or(0.0, |t| *t)
    }
}

/// Seconds every budget keeps for its close: the judging, stopping the
/// drive, writing study.json and the report.
pub const CLOSING_S: f64 = 3.0;

/// The most of a budget the sweeps leave to what follows them: a budget
/// too short for everything gives at least half of itself to the sweeps
/// (the capacity search, the calibration, the applications section and
/// the trials then run as far as the clock lets them).
pub const AFTER_SWEEPS_SHARE: f64 = 0.5;

/// The study's start and budget.
#[derive(Clone)]
pub struct Clock {
    time: Arc<dyn Time>,
    start_s: f64,
    budget_s: f64,
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clock")
            .field("elapsed_s", &self.elapsed_s())
            .field("budget_s", &self.budget_s)
            .finish()
    }
}

impl Clock {
    /// A clock started now, on this process's monotonic time.
    pub fn start(budget_s: f64) -> Clock {
        Clock::since(Instant::now(), budget_s)
    }

    /// A clock started at `started`, on this process's monotonic time.
    pub fn since(started: Instant, budget_s: f64) -> Clock {
        Clock {
            time: Arc::new(Monotonic(started)),
            start_s: 0.0,
            budget_s,
        }
    }

    /// A clock started now on `time` (a [`FakeTime`] in tests).
    pub fn on(time: Arc<dyn Time>, budget_s: f64) -> Clock {
        let start_s = time.now_s();
        Clock {
            time,
            start_s,
            budget_s,
        }
    }

    /// A clock without a budget: nothing is ever dropped for time.
    pub fn unbounded() -> Clock {
        Clock::start(f64::INFINITY)
    }

    pub fn budget_s(&self) -> f64 {
        self.budget_s
    }

    /// Seconds since the study started.
    pub fn elapsed_s(&self) -> f64 {
        (self.time.now_s() - self.start_s).max(0.0)
    }

    /// Seconds the budget has left (0 once spent).
    pub fn left_s(&self) -> f64 {
        (self.budget_s - self.elapsed_s()).max(0.0)
    }

    /// The deadline of a step that must leave `keep_s` seconds of the
    /// budget to what follows it.
    pub fn keeping(&self, keep_s: f64) -> Deadline {
        Deadline {
            clock: self.clone(),
            keep_s: keep_s.max(0.0),
        }
    }
}

/// A time before the budget's end: the budget less what must follow.
#[derive(Clone, Debug)]
pub struct Deadline {
    clock: Clock,
    keep_s: f64,
}

impl Deadline {
    /// No deadline at all.
    pub fn none() -> Deadline {
        Clock::unbounded().keeping(0.0)
    }

    /// Seconds left before the deadline (0 once passed).
    pub fn left_s(&self) -> f64 {
        (self.clock.left_s() - self.keep_s).max(0.0)
    }

    /// Whether a step of about `need_s` seconds fits before the deadline;
    /// else why not, in words: `takes` says what it is ("this run takes"
    /// gives "the budget's clock: 12 s left, this run takes about 14 s").
    pub fn check(&self, need_s: f64, takes: &str) -> Result<(), String> {
        let left = self.left_s();
        match need_s <= left {
            true => Ok(()),
            false => Err(format!(
                "the budget's clock: {} left, {takes} about {}",
                secs(left),
                secs(need_s)
            )),
        }
    }

    /// The clock the deadline is on.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }
}

/// Seconds in words: "0.8 s" below 10 s, else whole seconds.
pub fn secs(s: f64) -> String {
    match s < 10.0 {
        true => format!("{s:.1} s"),
        false => format!("{s:.0} s"),
    }
}

/// The trials' share of the budget: a fifth of a full study's, the turns
/// of its levers in a quick one.
fn trials_share_s(p: &Plan, budget_s: f64, quick: bool) -> f64 {
    match quick {
        true => quick_s(p),
        false => reserve_s(budget_s, false),
    }
}

/// Seconds the sweeps keep back for what follows them: the plan's estimate
/// of the capacity search, the calibration and the applications section,
/// the trials' share, and the close; at most [`AFTER_SWEEPS_SHARE`] of the
/// budget besides the close.
pub fn after_sweeps_s(p: &Plan, budget_s: f64, quick: bool) -> f64 {
    let after = p.beyond_s + trials_share_s(p, budget_s, quick);
    CLOSING_S + after.min(AFTER_SWEEPS_SHARE * budget_s)
}

/// Seconds the steps between the sweeps and the trials (the capacity
/// search, the calibration, the applications section) keep back: the
/// trials' share and the close.
pub fn before_trials_s(p: &Plan, budget_s: f64, quick: bool) -> f64 {
    CLOSING_S + trials_share_s(p, budget_s, quick)
}

/// Seconds of a full study's budget kept for its trials (a quick study's
/// runs are of a fixed length, so its trials add to its minute instead).
pub fn reserve_s(budget_s: f64, quick: bool) -> f64 {
    if quick {
        0.0
    } else {
        0.2 * budget_s
    }
}

/// Seconds a quick study's trials take: the turns of
/// [`ssdready_diagnosis::trials::plan::QUICK_LEVERS`] levers and of one more (a change with a
/// large estimate, or the changes that helped, together), within a quick
/// study's minute.
pub fn quick_s(plan: &Plan) -> f64 {
    let per_run = plan.settings.runtime_s + plan.settings.ramp_s + plan.overhead_s;
    ((ssdready_diagnosis::trials::plan::QUICK_LEVERS + 1)
        * ssdready_diagnosis::trials::MIN_PAIRS
        * 2) as f64
        * per_run
        + 1.0
}

/// Seconds the trials may take: what the budget's clock has left less the
/// study's close ([`CLOSING_S`]), in a quick study at most
/// [`quick_s`].
pub fn budget_s(plan: &Plan, quick: bool, clock: &Clock) -> f64 {
    let left = (clock.left_s() - CLOSING_S).max(0.0);
    match quick {
        true => quick_s(plan).min(left),
        false => left,
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

// The job study's clock: each run's length from the budget, and the
// budget kept run by run.

/// What starting a run and writing its result take, about, beside its
/// length (the clock's allowance before a run starts).
pub const RUN_START_S: f64 = 0.5;

/// How a run the budget refused begins its error.
pub const NOT_RUN: &str = "not run:";

/// A budget kept run by run: no run starts that would end past its end,
/// a run taking what the first was said to take, or the longest so far.
/// The study's runs of a job and fio's beside them each keep one.
#[derive(Clone, Debug)]
pub struct RunBudget {
    end: std::time::Instant,
    /// The longest run so far, shared by every clone.
    longest_s: std::rc::Rc<std::cell::Cell<f64>>,
}

impl RunBudget {
    /// A budget ending at `end`, a run taking `run_s` at first.
    pub fn new(end: std::time::Instant, run_s: f64) -> RunBudget {
        RunBudget {
            end,
            longest_s: std::rc::Rc::new(std::cell::Cell::new(run_s)),
        }
    }

    fn left_s(&self) -> f64 {
        let now = std::time::Instant::now();
        self.end.saturating_duration_since(now).as_secs_f64()
    }

    /// Whether `runs` more runs fit before the end.
    pub fn fits(&self, runs: usize) -> bool {
        self.left_s() >= runs as f64 * self.longest_s.get()
    }

    /// Whether the next run fits: why not, in words.
    pub fn allows(&self) -> Result<(), String> {
        let (left, run_s) = (self.left_s(), self.longest_s.get());
        match left < run_s {
            true => Err(format!(
                "{NOT_RUN} {left:.0} s of the budget left, a run takes {run_s:.0} s"
            )),
            false => Ok(()),
        }
    }

    /// A run took `s` seconds.
    pub fn took(&self, s: f64) {
        self.longest_s.set(self.longest_s.get().max(s));
    }

    /// How long a run takes, as far as is known.
    pub fn run_s(&self) -> f64 {
        self.longest_s.get()
    }
}

/// The budget's clock around the caller's run function ([`RunBudget`]);
/// the runs refused are counted.
pub struct Clocked<'a> {
    pub run: &'a (dyn Fn(&ssdready_run::RunRequest) -> Result<ssdready_run::RunResult, ssdready_run::Failure>
             + 'a),
    pub budget: RunBudget,
    pub budget_s: f64,
    pub refused: std::cell::Cell<usize>,
}

impl Clocked<'_> {
    pub fn run(
        &self,
        r: &ssdready_run::RunRequest,
    ) -> Result<ssdready_run::RunResult, ssdready_run::Failure> {
        if let Err(why) = self.budget.allows() {
            self.refused.set(self.refused.get() + 1);
            return Err(ssdready_run::Failure::NotStarted(why));
        }
        let at = std::time::Instant::now();
        let result = (self.run)(r);
        self.budget.took(at.elapsed().as_secs_f64());
        result
    }

    /// The note of the runs not made, where some were not.
    pub fn note(&self) -> Option<String> {
        let n = self.refused.get();
        (n > 0).then(|| {
            format!(
                "the budget ({:.0} s) ran out: {n} runs were not made",
                self.budget_s
            )
        })
    }
}

/// Each run's length: the budget shared by the repeats and the variants,
/// a tenth kept for starting each run; 1 to 60 s.
pub fn runtime_s(budget_s: f64, runs: usize) -> f64 {
    (0.9 * budget_s / runs.max(1) as f64)
        .clamp(1.0, 60.0)
        .floor()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(budget_s: f64) -> (Clock, Arc<FakeTime>) {
        let t = Arc::new(FakeTime::default());
        t.advance(1000.0);
        (Clock::on(t.clone(), budget_s), t)
    }

    #[test]
    fn the_clock_counts_from_its_start_and_stops_at_nothing_left() {
        let (c, t) = fake(120.0);
        assert_eq!(c.elapsed_s(), 0.0);
        assert_eq!(c.left_s(), 120.0);
        t.advance(100.5);
        assert_eq!(c.elapsed_s(), 100.5);
        assert_eq!(c.left_s(), 19.5);
        t.advance(30.0);
        assert_eq!(c.left_s(), 0.0, "spent: nothing left, never less");
    }

    #[test]
    fn a_deadline_keeps_back_what_follows_and_says_why_a_step_does_not_fit() {
        let (c, t) = fake(120.0);
        let d = c.keeping(100.0);
        assert_eq!(d.left_s(), 20.0);
        assert!(d.check(20.0, "this run takes").is_ok());
        t.advance(8.0);
        let why = d.check(14.0, "this run takes").unwrap_err();
        assert_eq!(
            why,
            "the budget's clock: 12 s left, this run takes about 14 s"
        );
        t.advance(20.0);
        assert_eq!(d.left_s(), 0.0);
        assert!(d.check(0.1, "this run takes").is_err());
        assert!(Deadline::none().check(1e9, "anything takes").is_ok());
    }

    #[test]
    fn the_sweeps_leave_the_trials_and_what_follows_at_most_half_a_short_budget() {
        let mut p = Plan::default();
        p.settings.runtime_s = 1.0;
        p.overhead_s = 0.25;
        p.beyond_s = 100.0;
        // Ten minutes: all that follows is kept (a fifth for the trials).
        assert_eq!(after_sweeps_s(&p, 600.0, false), CLOSING_S + 100.0 + 120.0);
        // Two: half of it, and the close.
        assert_eq!(after_sweeps_s(&p, 120.0, false), CLOSING_S + 60.0);
        // What follows the sweeps keeps the trials' fifth of the budget.
        assert_eq!(before_trials_s(&p, 120.0, false), CLOSING_S + 24.0);
        // A quick study keeps its trials' turns.
        p.beyond_s = 0.0;
        let quick = after_sweeps_s(&p, 75.0, true);
        assert_eq!(quick, CLOSING_S + quick_s(&p));
        assert_eq!(quick, before_trials_s(&p, 75.0, true));
        assert!(quick < 30.0, "{quick}");
    }
}
