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
//! (`trials`); the text is [`crate::trials::text`]. What the trials record,
//! as plain data below the levers' kinds, is [`record`], re-exported here.

pub mod combination;
pub mod files;
pub mod on_job;
pub mod plan;
pub mod record;
pub mod section;
pub mod text;
use crate::levers::Metric;
use record::log_floor;
use ssdready_measured::curve::mean;

pub use crate::lever_values::lift::set_words;

pub use record::{
    noise_words, Citation, Contradiction, Gain, Measured, Outcome, Reason, Trial, Turn, Untested,
    CLEAR_PCT, FULL_PAIRS, MIN_PAIRS, MIN_SPREAD_PCT, SMALL_PCT,
};

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

/// The per-pair ratios of one metric, change / baseline.
fn pair_ratios(turns: &[Turn], m: Metric) -> Vec<f64> {
    turns
        .iter()
        .filter_map(|t| Some(t.change.get(m)? / t.baseline.get(m)?))
        .collect()
}

/// The sample standard deviation (0 for one value).
fn stdev(v: &[f64]) -> f64 {
    let mu = mean(v);
    match v.len() {
        0 | 1 => 0.0,
        n => (v.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt(),
    }
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

/// What a change gave each direction of a job that both reads and
/// writes (a mix, or phases of each), over its turns:
/// `reads +150.3 % (pairs +140.1 … +160.2 %), writes +0.4 % (pairs -1.2 … +2.0 %)`,
/// each the mean of the pairs' changes and their range. None where a
/// run lacks either direction (a job of one direction, a document of an
/// older build).
pub fn direction_words(turns: &[Turn]) -> Option<String> {
    let pcts = |d: usize| -> Option<Vec<f64>> {
        let each = turns.iter().map(|t| {
            let (b, c) = (t.baseline.directions?[d], t.change.directions?[d]);
            (b > 0.0).then(|| 100.0 * (c / b - 1.0))
        });
        each.collect::<Option<Vec<f64>>>().filter(|p| !p.is_empty())
    };
    let each = [("reads", pcts(0)?), ("writes", pcts(1)?)];
    let words = each.iter().map(|(name, p)| {
        let lo = p.iter().copied().fold(f64::MAX, f64::min);
        let hi = p.iter().copied().fold(f64::MIN, f64::max);
        format!("{name} {:+.1} % (pairs {lo:+.1} … {hi:+.1} %)", mean(p))
    });
    Some(words.collect::<Vec<_>>().join(", "))
}

#[cfg(test)]
#[path = "trials_tests.rs"]
mod tests;
