//! What to change, measured: the study's own advice tried on this machine,
//! in turns (baseline then change, change then baseline, …) at the point its
//! finding is about, each change put back after its trial. This module
//! judges what the turns measured, purely: each metric's gain as the mean
//! of the per-pair changes, judged on the pairs' log ratios, the trials
//! ranked, the findings' recommendations each citing its trial or saying
//! why none was possible ([`crate::trials::section::cite`]), and a named cause its lever did not
//! move called a contradiction, lowering that verdict's confidence —
//! except where the trial's point could not bind the limit
//! ([`Trial::unbound`]): such a trial proves nothing of it.
//!
//! A trial's outcome ([`Gain::outcome`]), from the interval of its pairs'
//! log ratios — their mean less and plus twice their spread (at least
//! [`MIN_SPREAD_PCT`]), back in percent, asymmetric: a change that
//! multiplies the rate spreads its percents in proportion to itself, so
//! +200 % to +900 % in every pair is a gain though its percents spread
//! 300 — and from the pairs one by one:
//!
//! * **better** or **worse beyond the noise**: the interval stays clear of
//!   zero;
//! * **better** or **worse in every pair**: the interval crosses zero, but
//!   every one of at least [`MIN_PAIRS`] pairs moved the same way, each by
//!   [`CLEAR_PCT`] or more and by more than one pair's noise (twice √2
//!   times the spread of the baseline's own runs). A sign test alone gives
//!   three pairs agreeing by chance one time in four; it is the size of
//!   every pair, each beyond what the baseline's runs vary by, that makes
//!   −65 %, −80 %, −95 % a loss though their log ratios spread wide;
//! * **no change**: the interval crosses zero and lies within
//!   [`SMALL_PCT`] either way: the turns agree that the effect is small;
//! * **too noisy to judge**: the interval crosses zero and reaches beyond
//!   [`SMALL_PCT`]: the turns spread too wide to say either way.
//!
//! The interval shown with a gain and drawn as its error bar is the one its
//! outcome rests on ([`Gain::interval`]: the pairs' range where every pair
//! decided), so a "beyond the noise" or "in every pair" never has a bar
//! across zero and "no change" or "too noisy" always has.
//! The section these trials make and what it says of the findings is
//! [`crate::trials::section`]; the running is `ssdready-study`'s
//! (`trials`); the text is [`crate::trials::text`].

pub mod combination;
pub mod files;
pub mod plan;
pub mod section;
pub mod text;
use crate::levers::{Kind, Metric, Point};
use serde::{Deserialize, Serialize};
use ssdready_measured::summary::PointSummary;

/// The smallest spread a gain is judged against, percent: turns that
/// agree exactly (a model, a quiet machine) still call nothing under
/// twice this a gain.
pub const MIN_SPREAD_PCT: f64 = 1.0;

/// The largest change, either way, that a trial whose turns agree calls
/// no change, percent (as a factor: within × 1.1 and ÷ 1.1).
pub const SMALL_PCT: f64 = 10.0;

/// How far every pair must move, the same way, for the pairs alone to
/// judge a trial whose interval crosses zero, percent (as a factor:
/// × 1.25 or more, or ÷ 1.25: −20 %).
pub const CLEAR_PCT: f64 = 25.0;

/// Turns a trial takes: at least this many pairs, more in a full study.
pub const MIN_PAIRS: usize = 3;
/// Pairs in a full study's trials, time allowing.
pub const FULL_PAIRS: usize = 5;

/// One lever tried at one value.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Trial {
    pub lever: String,
    pub kind: Kind,
    /// What it changes, in words.
    pub what: String,
    pub from: String,
    pub to: String,
    /// Queue levers: the devices it was set on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// The point, in words, and as the runs' workload.
    pub at: String,
    pub point: Point,
    /// What it is judged on first.
    pub measure: Metric,
    pub turns: Vec<Turn>,
    /// Each metric's gain over the turns (absent where unmeasured).
    pub gains: Vec<Gain>,
    pub outcome: Outcome,
    /// How a user makes it last on this host.
    pub permanent: String,
    /// How it was put back.
    pub undo: String,
    /// The runs' command lines.
    pub baseline_options: Vec<String>,
    pub change_options: Vec<String>,
    /// Why it stopped before its turns were done, or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why its limit could not bind at its point, where it could not
    /// ([`crate::levers::binding`]): the trial says nothing of the limit, and
    /// lowers no verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unbound: Option<String>,
    /// Where the devices it was set on (a stack's members) did not all
    /// read the same before it: each one's value, in words. Each was put
    /// back to its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub members_differed: Option<String>,
    /// Other settings the change moved and that could not be put back (a
    /// scheduler switch resets `nr_requests`), in words: its runs measured
    /// them too, so its gain is not the change's alone; it is neither a
    /// change that helped nor the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<String>,
}

/// One turn: a baseline run and a run with the change.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub baseline: Measured,
    pub change: Measured,
}

/// What a run measured, as a trial compares it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: f64,
    /// CPU per I/O, ns: the whole system's where measured, else the
    /// process's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns_per_io: Option<f64>,
}

impl Measured {
    /// A run's figures.
    pub fn of(s: &PointSummary) -> Measured {
        Measured {
            iops: s.iops,
            bw_bytes_per_s: s.bw_bytes_per_s,
            lat_mean_ns: s.lat_mean_ns,
            lat_p99_ns: s.lat_p99_ns as f64,
            cpu_ns_per_io: s.cpu.as_ref().map(|c| match c.system_ns_per_io {
                x if x > 0.0 => x,
                _ => c.process_ns_per_io,
            }),
        }
    }

    fn get(&self, m: Metric) -> Option<f64> {
        let v = match m {
            Metric::Iops => self.iops,
            Metric::Bandwidth => self.bw_bytes_per_s,
            Metric::Mean => self.lat_mean_ns,
            Metric::P99 => self.lat_p99_ns,
            Metric::Cpu => self.cpu_ns_per_io?,
        };
        (v > 0.0).then_some(v)
    }
}

/// One metric's change over a trial's turns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gain {
    pub metric: Metric,
    /// The means of the baseline's and the change's turns.
    pub baseline: f64,
    pub change: f64,
    /// The mean of the per-pair changes, percent (signed: + is more).
    pub change_pct: f64,
    /// Their standard deviation, percent.
    pub spread_pct: f64,
    pub pairs: usize,
    /// The mean and the standard deviation of the pairs' log ratios
    /// (ln of change / baseline), what the noise is judged on.
    #[serde(default)]
    pub log_mean: f64,
    #[serde(default)]
    pub log_spread: f64,
    /// The log ratios' mean beyond twice their spread (and beyond twice
    /// [`MIN_SPREAD_PCT`]).
    pub beyond_noise: bool,
    /// Whether the change is for the better (more IOPS, less latency).
    pub better: bool,
    /// Whether every pair moved the same way, each by [`CLEAR_PCT`] or
    /// more and beyond one pair's noise, over at least [`MIN_PAIRS`]
    /// pairs (the module's rule).
    #[serde(default)]
    pub every_pair: bool,
    /// The pairs' smallest and largest change, percent.
    #[serde(default)]
    pub pairs_low_pct: f64,
    #[serde(default)]
    pub pairs_high_pct: f64,
}

impl Gain {
    /// The interval the beyond-the-noise test uses, percent: the pairs'
    /// log ratios' mean less and plus twice their spread (at least
    /// [`MIN_SPREAD_PCT`]), back in percent.
    pub fn noise_interval(&self) -> (f64, f64) {
        let w = 2.0 * self.log_spread.max(log_floor());
        (
            100.0 * (self.log_mean - w).exp_m1(),
            100.0 * (self.log_mean + w).exp_m1(),
        )
    }

    /// Whether its outcome rests on every pair, its interval crossing zero.
    pub fn by_every_pair(&self) -> bool {
        self.every_pair && !self.beyond_noise
    }

    /// The interval its outcome rests on, percent: the noise interval, or
    /// the pairs' range where every pair decided. Shown with the gain and
    /// drawn as its error bar.
    pub fn interval(&self) -> (f64, f64) {
        match self.by_every_pair() {
            true => (self.pairs_low_pct, self.pairs_high_pct),
            false => self.noise_interval(),
        }
    }

    /// Whether the noise interval lies within [`SMALL_PCT`] either way.
    fn small(&self) -> bool {
        let w = 2.0 * self.log_spread.max(log_floor());
        self.log_mean.abs() + w <= (SMALL_PCT / 100.0).ln_1p()
    }

    /// What it says of the change (a trial with fewer than two turns is
    /// incomplete whatever its gain: [`judge_trial`]).
    pub fn outcome(&self) -> Outcome {
        match self {
            g if (g.beyond_noise || g.every_pair) && g.better => Outcome::Better,
            g if g.beyond_noise || g.every_pair => Outcome::Worse,
            g if g.small() => Outcome::NoGain,
            _ => Outcome::TooNoisy,
        }
    }

    /// How much better it is beyond the noise, percent: the change less
    /// twice its spread (on the log ratios), or, where every pair decided,
    /// the pair that moved least; signed for the better.
    pub fn lower_bound(&self) -> f64 {
        let s = if self.better { 1.0 } else { -1.0 };
        let beyond = match self.by_every_pair() {
            true => [self.pairs_low_pct, self.pairs_high_pct]
                .map(|p| (p / 100.0).ln_1p().abs())
                .into_iter()
                .fold(f64::INFINITY, f64::min),
            false => self.log_mean.abs() - 2.0 * self.log_spread.max(log_floor()),
        };
        s * 100.0 * beyond.exp_m1()
    }
}

/// A trial's answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Better beyond the noise on what it is judged on, or in every pair.
    Better,
    /// No change: within the noise, and the noise within [`SMALL_PCT`]
    /// either way (serialized `no_gain`, its name before too noisy was
    /// told apart).
    #[default]
    NoGain,
    /// Within the noise, and the noise too wide to say either way.
    TooNoisy,
    /// Worse beyond the noise, or in every pair.
    Worse,
    /// Fewer than two turns completed: no spread, no answer.
    Incomplete,
    /// The change could not be made, or its runs failed.
    Failed,
}

impl Outcome {
    /// Whether its turns were judged: better, no change, too noisy, worse.
    pub fn judged(self) -> bool {
        matches!(
            self,
            Outcome::Better | Outcome::NoGain | Outcome::TooNoisy | Outcome::Worse
        )
    }
}

/// Why a lever that applies was not tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// A setting of the host, and the study is not root.
    NotRoot,
    /// A setting of the host the user did not ask to try (`--try-changes`).
    NotAsked,
    /// The kernel does not offer the setting on this device.
    NotOffered,
    /// Nothing to try: no value differs from what is in effect.
    NoCandidate,
    /// The target has no device queue of its own (an emulator in-process).
    NoDevice,
    /// A limit below this host: no setting of the host moves it.
    BelowHost,
    /// No time left in the budget.
    NoTime,
    /// `--quick`: only the levers the findings point at first.
    Quick,
    /// This machine cannot do it (said in the text).
    Unavailable,
    /// Its limit cannot bind at any point the study can run (said in the
    /// text: a quota as large as the CPUs the point can use, a queue that
    /// admits all the study keeps in flight).
    CannotBind,
    /// Its limit binds only once another is lifted, and that change did
    /// not help alone, or the two were not measured together (said in the
    /// text).
    Behind,
    /// The study was stopped first.
    Stopped,
    /// A setting of ssdready's own apparatus (the built-in drive behind
    /// the kernel), not of the user's device: never a change to make.
    Apparatus,
}

/// A lever not tried, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Untested {
    pub lever: String,
    pub what: String,
    pub reason: Reason,
    /// The reason in words.
    pub why: String,
    /// What it may buy, estimated from the study's measurements.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<crate::levers::estimate::Estimate>,
    /// The command that would try it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl Untested {
    /// With its estimate.
    pub fn with(mut self, e: Option<crate::levers::estimate::Estimate>) -> Untested {
        self.estimate = e;
        self
    }

    /// Whether it may buy much (`LARGE_PCT` or more).
    pub fn large(&self) -> bool {
        self.estimate.as_ref().is_some_and(|e| e.large())
    }
}

/// The command that would try an untested change on `target`, for the
/// reasons a command can lift (None for the others).
pub fn command_to_try(reason: Reason, target: &str) -> Option<String> {
    match reason {
        Reason::NotRoot | Reason::NotAsked => {
            Some(format!("sudo ssdready study {target} --try-changes"))
        }
        Reason::Quick | Reason::NoTime => Some(format!("ssdready study {target} --budget 20m")),
        _ => None,
    }
}

/// Where the devices a queue setting is set on did not all read the same
/// before it ([`Trial::members_differed`]): each device's value, in words.
pub fn members_differed(before: &[(String, String)]) -> Option<String> {
    let first = &before.first()?.1;
    if before.iter().all(|(_, v)| v == first) {
        return None;
    }
    let each: Vec<String> = before.iter().map(|(d, v)| format!("{v} on {d}")).collect();
    Some(each.join(", "))
}

/// A named cause its lever did not move.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Contradiction {
    /// The cause, in the rules' words.
    pub cause: String,
    pub lever: String,
    pub text: String,
}

/// A recommendation's trial, or why it has none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub rule: String,
    /// True when a trial measured it; false: untested.
    pub measured: bool,
    pub text: String,
}

/// The per-pair ratios of one metric, change / baseline.
fn pair_ratios(turns: &[Turn], m: Metric) -> Vec<f64> {
    turns
        .iter()
        .filter_map(|t| Some(t.change.get(m)? / t.baseline.get(m)?))
        .collect()
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The sample standard deviation (0 for one value).
fn stdev(v: &[f64]) -> f64 {
    let mu = mean(v);
    match v.len() {
        0 | 1 => 0.0,
        n => (v.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt(),
    }
}

/// [`MIN_SPREAD_PCT`] as a log ratio.
fn log_floor() -> f64 {
    (MIN_SPREAD_PCT / 100.0).ln_1p()
}

/// Whether every pair moved the same way by [`CLEAR_PCT`] or more and
/// beyond one pair's noise: twice √2 times the spread of the baseline's
/// own runs' logs `base` (a pair's log ratio is the difference of two
/// runs' logs), over at least [`MIN_PAIRS`] pairs of log ratios `logs`.
fn every_pair(logs: &[f64], base: &[f64]) -> bool {
    let clear = (CLEAR_PCT / 100.0)
        .ln_1p()
        .max(2.0 * std::f64::consts::SQRT_2 * stdev(base));
    logs.len() >= MIN_PAIRS && (logs.iter().all(|&x| x > clear) || logs.iter().all(|&x| x < -clear))
}

/// One metric's gain over the turns; None without a measured pair.
pub fn gain(turns: &[Turn], m: Metric) -> Option<Gain> {
    let r = pair_ratios(turns, m);
    if r.is_empty() {
        return None;
    }
    let d: Vec<f64> = r.iter().map(|x| 100.0 * (x - 1.0)).collect();
    let logs: Vec<f64> = r.iter().map(|x| x.ln()).collect();
    let (log_mean, log_spread) = (mean(&logs), stdev(&logs));
    let side = |f: fn(&Turn) -> &Measured| {
        mean(&turns.iter().filter_map(|t| f(t).get(m)).collect::<Vec<_>>())
    };
    let base: Vec<f64> = turns
        .iter()
        .filter(|t| t.change.get(m).is_some())
        .filter_map(|t| Some(t.baseline.get(m)?.ln()))
        .collect();
    Some(Gain {
        metric: m,
        baseline: side(|t| &t.baseline),
        change: side(|t| &t.change),
        change_pct: mean(&d),
        spread_pct: stdev(&d),
        pairs: d.len(),
        log_mean,
        log_spread,
        beyond_noise: d.len() >= 2 && log_mean.abs() > 2.0 * log_spread.max(log_floor()),
        better: (log_mean > 0.0) == m.higher_is_better(),
        every_pair: every_pair(&logs, &base),
        pairs_low_pct: d.iter().copied().fold(f64::INFINITY, f64::min),
        pairs_high_pct: d.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

/// Fill a trial's gains and outcome from its turns.
pub fn judge_trial(t: &mut Trial) {
    t.gains = Metric::ALL
        .into_iter()
        .filter_map(|m| gain(&t.turns, m))
        .collect();
    if t.outcome == Outcome::Failed && t.turns.is_empty() {
        return;
    }
    t.outcome = match t.gains.iter().find(|g| g.metric == t.measure) {
        _ if t.turns.len() < 2 => Outcome::Incomplete,
        None => Outcome::Incomplete,
        Some(g) => g.outcome(),
    };
}

impl Trial {
    /// The gain on what it is judged on.
    pub fn main_gain(&self) -> Option<&Gain> {
        self.gains.iter().find(|g| g.metric == self.measure)
    }

    /// `scheduler mq-deadline → none`.
    pub fn change(&self) -> String {
        format!("{} {} → {}", self.lever, self.from, self.to)
    }
}

fn rank_key(t: &Trial) -> (u8, f64) {
    let order = match t.outcome {
        Outcome::Better => 0,
        Outcome::NoGain | Outcome::TooNoisy => 1,
        Outcome::Worse => 2,
        Outcome::Incomplete => 3,
        Outcome::Failed => 4,
    };
    (order, -t.main_gain().map_or(0.0, Gain::lower_bound))
}

/// Best first: the changes that help beyond the noise (or in every pair)
/// by how much they help beyond it, then those within it (no change or
/// too noisy alike), then the worse, then the rest.
pub fn rank(trials: &mut [Trial]) {
    trials.sort_by(|a, b| {
        let (x, y) = (rank_key(a), rank_key(b));
        x.0.cmp(&y.0).then(x.1.total_cmp(&y.1))
    });
}

/// The mean of the per-pair changes and the interval its outcome rests on
/// ([`Gain::interval`]): `+38.2 % (+30.2 % … +46.6 %)`, or, where every
/// pair decided, `-80.0 % (pairs -95.0 % … -40.0 %)`.
pub fn fmt_gain(g: &Gain) -> String {
    let (lo, hi) = g.interval();
    let pairs = if g.by_every_pair() { "pairs " } else { "" };
    format!("{:+.1} % ({pairs}{lo:+.1} % … {hi:+.1} %)", g.change_pct)
}

/// A trial's result on what it is judged on, in a few words:
/// `IOPS +38.2 % (+30.2 % … +46.6 %) over 3 turns`.
pub fn result_words(t: &Trial) -> String {
    match t.main_gain() {
        Some(g) => format!(
            "{} {} over {} turns",
            g.metric.label(),
            fmt_gain(g),
            t.turns.len()
        ),
        None => match &t.error {
            Some(e) => format!("not measured: {e}"),
            None => "not measured".into(),
        },
    }
}

/// What a trial's outcome says, and on what it rests: the interval of
/// its pairs' log ratios, or every pair where they decided.
pub fn noise_words(t: &Trial) -> &'static str {
    let every = t.main_gain().is_some_and(Gain::by_every_pair);
    match t.outcome {
        Outcome::Better if every => "better in every pair",
        Outcome::Better => "better beyond the noise",
        Outcome::NoGain => "no change beyond the noise",
        Outcome::TooNoisy => "too noisy to judge",
        Outcome::Worse if every => "worse in every pair",
        Outcome::Worse => "worse beyond the noise",
        Outcome::Incomplete => "too few turns to tell",
        Outcome::Failed => "not measured",
    }
}

#[cfg(test)]
#[path = "trials_tests.rs"]
mod tests;
