//! What the trials record, as plain data below the levers' kinds and the
//! trials' judgement alike (`study.json`'s `trials` section is made of
//! them): one lever tried at one value ([`Trial`], its [`Turn`]s of
//! [`Measured`] runs, each metric's [`Gain`] and its [`Outcome`]), a lever
//! not tried and why ([`Untested`], [`Reason`]), what the trials say of the
//! findings ([`Contradiction`], [`Citation`]), and the configuration the
//! changes that helped make together ([`Combination`]: its changes,
//! [`Member`], and the [`Set`]s measured). How a trial is judged is
//! [`crate::trials`]; how the configuration is found,
//! [`crate::trials::combination`].

use crate::lever_context::Point;
use crate::levers::estimate::Estimate;
use crate::levers::lever::{Kind, Metric};
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
    /// Other settings the change moved and that the kernel would not take
    /// back while the change holds (a switch to `none` resets
    /// `nr_requests` and refuses more than the driver's tags), in words:
    /// its runs measured them too, as the change made for good brings them
    /// too. It is credited as the change with them, and said so, but it
    /// neither confirms nor contradicts a named cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moved: Option<String>,
    /// Its limit binds only once another is lifted
    /// ([`crate::levers::binding::hidden_by`]): that other change's lever,
    /// made with it in every changed run. Its gains are the two
    /// together's; it is credited only beyond the other's own
    /// ([`crate::trials::combination::behind_front`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind: Option<String>,
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
    /// The reads' and the writes' IOPS, where a job's run did both (a
    /// mix, or phases of each): what a change gave each direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directions: Option<[f64; 2]>,
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
            directions: None,
        }
    }

    pub(crate) fn get(&self, m: Metric) -> Option<f64> {
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
    /// pairs (the trials' rule, [`crate::trials`]).
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
    /// incomplete whatever its gain: [`crate::trials::judge_trial`]).
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
    pub estimate: Option<Estimate>,
    /// The command that would try it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

impl Untested {
    /// The lever `id` (`what` it changes) at `value` not tried, for
    /// `reason`, said as `why`.
    pub fn of((id, what): (&str, &str), value: &str, reason: Reason, why: String) -> Untested {
        Untested {
            lever: id.into(),
            what: format!("{what} → {value}"),
            reason,
            why,
            estimate: None,
            command: None,
        }
    }

    /// With its estimate.
    pub fn with(mut self, e: Option<Estimate>) -> Untested {
        self.estimate = e;
        self
    }

    /// Whether it may buy much (`LARGE_PCT` or more).
    pub fn large(&self) -> bool {
        self.estimate.as_ref().is_some_and(|e| e.large())
    }
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
    /// The trial went against the recommendation: what the verdict calls
    /// slower was faster in turns (its confidence is lowered).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub against: bool,
    pub text: String,
}

/// [`MIN_SPREAD_PCT`] as a log ratio.
pub(crate) fn log_floor() -> f64 {
    (MIN_SPREAD_PCT / 100.0).ln_1p()
}

impl Trial {
    /// The gain on what it is judged on.
    pub fn main_gain(&self) -> Option<&Gain> {
        self.gains.iter().find(|g| g.metric == self.measure)
    }

    /// Its gain on `metric` (a job's, or a set's measure), else on what it
    /// was judged on.
    pub fn gain_on(&self, metric: Metric) -> Option<&Gain> {
        let on = self.gains.iter().find(|g| g.metric == metric);
        on.or(self.main_gain())
    }

    /// `scheduler mq-deadline → none`.
    pub fn change(&self) -> String {
        match &self.behind {
            Some(f) => format!(
                "{} {} → {} behind {f} lifted",
                self.lever, self.from, self.to
            ),
            None => format!("{} {} → {}", self.lever, self.from, self.to),
        }
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

/// The `combination` of the study's `trials` section.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Combination {
    /// The point every set ran at (the best single change's), in words
    /// and as the runs' workload.
    pub at: String,
    pub point: Point,
    /// What the sets are judged on: what the best single change is.
    pub measure: Metric,
    /// Every change in the whole set, the best single change first.
    pub changes: Vec<Member>,
    /// Every set measured together: the whole set first, then each
    /// subset the search measured.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sets: Vec<Set>,
    /// The configuration to deploy: the set kept, or the best single
    /// change alone as its own trial measured it (`single`).
    pub kept: Set,
    /// The kept set bought more than the best single change, beyond the
    /// noise (its gain less twice its spread above the single's gain).
    pub beats_best: bool,
    /// Changes that helped alone but are in no set, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<LeftOut>,
    /// Why the whole set was not measured (no time left, stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
    /// What the measurement says of the set, in words.
    pub words: String,
}

/// One change of the set, as its own trial made it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub lever: String,
    pub kind: Kind,
    /// `scheduler mq-deadline → none` ([`Trial::change`]).
    pub change: String,
    /// Queue levers: the file under `/sys/block/DEV/queue/`, and the
    /// devices it is set on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attr: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<String>,
    /// The value it sets.
    pub value: String,
    /// Application levers: the job's options it sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<(String, String)>,
    /// How it lasts alone ([`Trial::permanent`]).
    pub permanent: String,
    /// Its own trial's gain on what it was judged on, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alone: Option<Gain>,
    pub alone_at: String,
    /// A limit of the host that bought nothing alone, tried behind the
    /// changes that helped: a limit that binds only once another is
    /// lifted ([`crate::trials::combination::behind`]). A set with it is kept only where it bought
    /// more than the best single change beyond the noise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub behind: bool,
}

/// A set of changes measured together in turns against the baseline.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Set {
    /// The changes' levers, in the order applied.
    pub levers: Vec<String>,
    /// Not measured together: the best single change's own trial.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub single: bool,
    pub turns: Vec<Turn>,
    /// Each metric's gain over the turns, as a trial's.
    pub gains: Vec<Gain>,
    pub outcome: Outcome,
    /// The runs' command lines.
    pub baseline_options: Vec<String>,
    pub change_options: Vec<String>,
    /// Why it stopped before its turns were done, or failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A change that helped alone and is in no set.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LeftOut {
    pub lever: String,
    pub change: String,
    pub why: String,
}

impl Set {
    /// A trial as a set of one change (`single`).
    pub fn of_trial(t: &Trial) -> Set {
        Set {
            levers: vec![t.lever.clone()],
            single: true,
            turns: t.turns.clone(),
            gains: t.gains.clone(),
            outcome: t.outcome,
            baseline_options: t.baseline_options.clone(),
            change_options: t.change_options.clone(),
            error: t.error.clone(),
        }
    }

    /// What its outcome says, judged on `measure`, in a trial's words
    /// ([`noise_words`]).
    pub fn outcome_words(&self, measure: Metric) -> &'static str {
        let t = Trial {
            measure,
            gains: self.gains.clone(),
            outcome: self.outcome,
            ..Default::default()
        };
        noise_words(&t)
    }

    /// The gain on `m`.
    pub fn gain(&self, m: Metric) -> Option<&Gain> {
        self.gains.iter().find(|g| g.metric == m)
    }
}

impl Combination {
    /// The best single change's gain (its member's own trial).
    pub fn best_gain(&self) -> Option<&Gain> {
        self.changes.first().and_then(|m| m.alone.as_ref())
    }

    /// The members of a set, in the order applied.
    pub fn members_of<'a>(&'a self, s: &'a Set) -> impl Iterator<Item = &'a Member> + 'a {
        s.levers
            .iter()
            .filter_map(|l| self.changes.iter().find(|m| &m.lever == l))
    }

    /// The kept configuration's changes in words, `A + B`.
    pub fn kept_words(&self) -> String {
        let each: Vec<String> = (self.members_of(&self.kept))
            .map(|m| m.change.clone())
            .collect();
        crate::lever_values::lift::set_words(&each)
    }

    /// The kept configuration's gain on what it is judged on.
    pub fn kept_gain(&self) -> Option<&Gain> {
        self.kept.gain(self.measure)
    }
}
