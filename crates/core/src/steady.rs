//! Steady state: when a measured figure has stopped changing.
//!
//! An SSD's throughput depends on its history (free blocks, the mapping's
//! fragmentation), so a figure means something only once it no longer
//! drifts. Two rule sets judge that, over one windowed computation
//! ([`window_stats`]: mean, range, largest deviation from the mean, and
//! the least-squares line through the window, x = 0, 1, …):
//!
//! * **SNIA PTS** ([`PtsRule`], [`pts_check`], [`pts_next`]): a test runs
//!   in rounds of fixed length and tracks one figure per round; it is in
//!   steady state when, over the last 5 rounds, the figure's range
//!   (max − min) is at most 20 % of the window's mean and the least-squares
//!   line's excursion across the window (|slope| × (5 − 1)) is at most 10 %
//!   of the mean. After 25 rounds without that, steady state was not
//!   reached, and the result says so.
//! * **fio's `steadystate`** ([`SsCriterion`], [`FioSteady`]): one sample
//!   of IOPS and bandwidth per second in a rolling window of
//!   `steadystate_duration` seconds; `iops`/`bw` ask every sample to lie
//!   within the limit of the window's mean (the largest deviation below the
//!   limit), `iops_slope`/`bw_slope` ask the least-squares slope (per
//!   second) to be below it; a limit written with `%` is a percentage of
//!   the window's mean. The job ends once the criterion holds. fio 3.33's
//!   `steadystate.c` is the reference: its slope and deviation, its
//!   integer samples (IOPS and bytes per second, truncated), and its JSON
//!   object ([`FioSteadyReport`]).

use serde::{Deserialize, Serialize};

/// Figures of one window of values, x = 0, 1, … n−1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowStats {
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// max − min.
    pub range: f64,
    /// The largest |value − mean|.
    pub max_deviation: f64,
    /// The least-squares line: slope per step of x, and its value at x = 0.
    pub slope: f64,
    pub intercept: f64,
    /// |slope| × (n − 1): how far the line moves across the window.
    pub excursion: f64,
}

/// The figures of `y` (all of it: callers pass the window).
pub fn window_stats(y: &[f64]) -> WindowStats {
    let n = y.len();
    if n == 0 {
        return WindowStats::default();
    }
    let nf = n as f64;
    let mean = y.iter().sum::<f64>() / nf;
    let min = y.iter().copied().fold(f64::INFINITY, f64::min);
    let max = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let max_deviation = y.iter().map(|v| (v - mean).abs()).fold(0.0, f64::max);
    let x_mean = (nf - 1.0) / 2.0;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, v) in y.iter().enumerate() {
        let dx = i as f64 - x_mean;
        sxy += dx * (v - mean);
        sxx += dx * dx;
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    WindowStats {
        n,
        mean,
        min,
        max,
        range: max - min,
        max_deviation,
        slope,
        intercept: mean - slope * x_mean,
        excursion: slope.abs() * (nf - 1.0),
    }
}

/// The PTS steady-state rule.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PtsRule {
    /// Rounds in the measurement window.
    pub window: usize,
    /// Rounds after which a test stops without steady state.
    pub max_rounds: usize,
    /// Largest range (max − min) in the window, % of its mean.
    pub range_pct: f64,
    /// Largest excursion of the least-squares line across the window, % of
    /// the mean.
    pub excursion_pct: f64,
}

impl Default for PtsRule {
    /// SNIA PTS: 5 rounds, 20 % range, 10 % excursion, at most 25 rounds.
    fn default() -> Self {
        PtsRule {
            window: 5,
            max_rounds: 25,
            range_pct: 20.0,
            excursion_pct: 10.0,
        }
    }
}

/// The PTS judgement of the last window of rounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PtsVerdict {
    /// Both conditions hold over the window.
    pub reached: bool,
    /// Rounds run so far.
    pub rounds: usize,
    /// The window's first and last round, 1-based.
    pub window_first: usize,
    pub window_last: usize,
    /// The window's figures and the two conditions, as % of its mean.
    pub stats: WindowStats,
    pub range_pct: f64,
    pub excursion_pct: f64,
    pub range_ok: bool,
    pub excursion_ok: bool,
}

/// Judge the last `rule.window` values of `rounds` (one tracked value per
/// round, oldest first). None while there are fewer rounds than a window.
/// A window whose mean is not a positive finite number (a device that did
/// nothing, a failed measurement) is never steady.
pub fn pts_check(rounds: &[f64], rule: &PtsRule) -> Option<PtsVerdict> {
    let w = rule.window.max(2);
    if rounds.len() < w {
        return None;
    }
    let first = rounds.len() - w;
    let s = window_stats(&rounds[first..]);
    let usable =
        s.mean.is_finite() && s.mean > 0.0 && rounds[first..].iter().all(|v| v.is_finite());
    let pct = |x: f64| {
        if usable {
            100.0 * x / s.mean
        } else {
            f64::INFINITY
        }
    };
    let (range_pct, excursion_pct) = (pct(s.range), pct(s.excursion));
    let range_ok = usable && range_pct <= rule.range_pct;
    let excursion_ok = usable && excursion_pct <= rule.excursion_pct;
    Some(PtsVerdict {
        reached: range_ok && excursion_ok,
        rounds: rounds.len(),
        window_first: first + 1,
        window_last: rounds.len(),
        stats: s,
        range_pct,
        excursion_pct,
        range_ok,
        excursion_ok,
    })
}

/// What a PTS test does after a round.
#[derive(Clone, Debug, PartialEq)]
pub enum PtsNext {
    /// Run another round.
    Continue,
    /// Steady state over the verdict's window: stop.
    Steady(PtsVerdict),
    /// `max_rounds` reached without steady state: stop and say so (the
    /// verdict of the last window, when there was one).
    NotReached(Option<PtsVerdict>),
}

/// After the rounds so far, whether to go on.
pub fn pts_next(rounds: &[f64], rule: &PtsRule) -> PtsNext {
    let v = pts_check(rounds, rule);
    match v {
        Some(v) if v.reached => PtsNext::Steady(v),
        v if rounds.len() >= rule.max_rounds => PtsNext::NotReached(v),
        _ => PtsNext::Continue,
    }
}

/// What fio's steady-state criterion tracks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SsMetric {
    Iops,
    Bw,
}

/// fio's `steadystate=` (alias `ss`): `iops`, `iops_slope`, `bw` or
/// `bw_slope`, a colon, and a limit: a number, or a percentage of the
/// window's mean with `%`. fio's default is `iops_slope:0.01%`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SsCriterion {
    pub metric: SsMetric,
    /// The least-squares slope (true) or the largest deviation from the mean.
    pub slope: bool,
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
}

impl Default for SsCriterion {
    fn default() -> Self {
        SsCriterion {
            metric: SsMetric::Iops,
            slope: true,
            limit: 0.01,
            percent: true,
        }
    }
}

/// Why `steadystate` could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SteadyError {
    #[error(
        "'{0}' has no limit (fio: the threshold must be given with the criterion, e.g. iops:10%)"
    )]
    NoLimit(String),
    #[error("'{0}' is not a criterion")]
    NotACriterion(String),
    #[error("limit '{0}' is not a number")]
    NotANumber(String),
    #[error("limit '{limit}': {err}")]
    Size {
        limit: String,
        err: crate::units::UnitError,
    },
    #[error("limit '{0}' is not a finite number ≥ 0")]
    NotFinite(String),
}

impl From<SteadyError> for String {
    fn from(e: SteadyError) -> String {
        e.to_string()
    }
}

/// The values `steadystate=` allows, for messages.
pub const SS_ALLOWED: &str = "iops:LIMIT, iops_slope:LIMIT, bw:LIMIT or bw_slope:LIMIT, LIMIT a \
number or a percentage of the mean such as 10% (bw limits take size suffixes)";

impl SsCriterion {
    /// Parse fio's syntax; `kb_base` scales a bandwidth limit's suffix.
    pub fn parse(v: &str, kb_base: u64) -> Result<Self, SteadyError> {
        let (name, limit) = v
            .split_once(':')
            .ok_or_else(|| SteadyError::NoLimit(v.to_string()))?;
        let (metric, slope) = match name.trim() {
            "iops" => (SsMetric::Iops, false),
            "iops_slope" => (SsMetric::Iops, true),
            "bw" => (SsMetric::Bw, false),
            "bw_slope" => (SsMetric::Bw, true),
            other => return Err(SteadyError::NotACriterion(other.to_string())),
        };
        let limit = limit.trim();
        let (number, percent) = match limit.strip_suffix('%') {
            Some(n) => (n.trim_end(), true),
            None => (limit, false),
        };
        let value = if percent || metric == SsMetric::Iops {
            number
                .parse::<f64>()
                .map_err(|_| SteadyError::NotANumber(limit.to_string()))?
        } else {
            crate::units::parse_fio_size(number, kb_base).map_err(|err| SteadyError::Size {
                limit: limit.to_string(),
                err,
            })? as f64
        };
        if !value.is_finite() || value < 0.0 {
            return Err(SteadyError::NotFinite(limit.to_string()));
        }
        Ok(SsCriterion {
            metric,
            slope,
            limit: value,
            percent,
        })
    }

    /// fio's JSON `ss` string: `iops_slope:0.010000%`.
    pub fn fio_name(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            self.metric_name(),
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.percent { "%" } else { "" }
        )
    }

    /// `iops` or `bw`.
    pub fn metric_name(&self) -> &'static str {
        match self.metric {
            SsMetric::Iops => "iops",
            SsMetric::Bw => "bw",
        }
    }
}

/// fio's rolling steady-state check for one job (or one reporting group):
/// one sample a second, the last `dur` kept.
#[derive(Clone, Debug)]
pub struct FioSteady {
    pub criterion: SsCriterion,
    dur: usize,
    iops: std::collections::VecDeque<u64>,
    bw: std::collections::VecDeque<u64>,
    taken: u64,
    attained_at: Option<u64>,
    /// The criterion's value at the last full window (a % when `percent`).
    last: f64,
    slope: f64,
    deviation: f64,
}

/// fio's JSON `steadystate` object, and a little more for ssdready's own
/// schema (`limit`, `criterion_value`, `samples`, `attained_after_s`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FioSteadyReport {
    /// `iops:10.000000%`.
    pub ss: String,
    /// The window, seconds.
    pub duration: u64,
    /// `steadystate_ramp_time`, seconds (not in fio's JSON).
    pub ramp_time_s: f64,
    pub attained: bool,
    /// fio's text: the criterion's last value, `8.308462%`.
    pub criterion: String,
    pub criterion_value: f64,
    pub limit: f64,
    /// The largest deviation from the mean (deviation criteria; 0 for slopes).
    pub max_deviation: f64,
    /// The least-squares slope per second (slope criteria; 0 otherwise).
    pub slope: f64,
    /// Samples taken (seconds after the ramp).
    pub samples: u64,
    /// Seconds of samples when the criterion first held.
    pub attained_after_s: Option<u64>,
    pub data: FioSteadyData,
}

/// The window's samples, oldest first, as fio lists them (zeros for
/// seconds not yet sampled), and their integer means.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FioSteadyData {
    pub bw_mean: u64,
    pub iops_mean: u64,
    pub iops: Vec<u64>,
    /// Bytes per second.
    pub bw: Vec<u64>,
}

impl FioSteady {
    /// A check over a window of `dur_s` seconds (at least 1).
    pub fn new(criterion: SsCriterion, dur_s: u64) -> Self {
        let dur = dur_s.max(1) as usize;
        FioSteady {
            criterion,
            dur,
            iops: Default::default(),
            bw: Default::default(),
            taken: 0,
            attained_at: None,
            last: 0.0,
            slope: 0.0,
            deviation: 0.0,
        }
    }

    /// Whether the criterion has held.
    pub fn attained(&self) -> bool {
        self.attained_at.is_some()
    }

    /// Add one second's sample (IOPS, bytes per second, as fio truncates
    /// them); true when the criterion holds over the full window. Samples
    /// after attainment are ignored.
    pub fn push(&mut self, iops: u64, bw: u64) -> bool {
        if self.attained() {
            return true;
        }
        self.taken += 1;
        self.iops.push_back(iops);
        self.bw.push_back(bw);
        if self.iops.len() > self.dur {
            self.iops.pop_front();
            self.bw.pop_front();
        }
        if self.iops.len() < self.dur {
            return false;
        }
        let y: Vec<f64> = match self.criterion.metric {
            SsMetric::Iops => self.iops.iter().map(|&v| v as f64).collect(),
            SsMetric::Bw => self.bw.iter().map(|&v| v as f64).collect(),
        };
        let s = window_stats(&y);
        // fio divides the integer sum by the window: in integers for the
        // slope's percentage, as a double for the deviation's.
        let sum: u64 = y.iter().map(|&v| v as u64).sum();
        let (value, mean) = if self.criterion.slope {
            self.slope = s.slope;
            (s.slope, (sum / self.dur as u64) as f64)
        } else {
            self.deviation = s.max_deviation;
            (s.max_deviation, sum as f64 / self.dur as f64)
        };
        self.last = if self.criterion.percent {
            100.0 * value / mean
        } else {
            value
        };
        // fio compares |criterion| for slopes, the criterion for deviations
        // (never negative); a NaN (mean 0) never holds.
        let held = self.last.abs() < self.criterion.limit;
        if held {
            self.attained_at = Some(self.taken);
        }
        held
    }

    /// The report, fio's fields first.
    pub fn report(&self, ramp_time_s: f64) -> FioSteadyReport {
        let pad = |d: &std::collections::VecDeque<u64>| {
            let mut v: Vec<u64> = d.iter().copied().collect();
            v.resize(self.dur, 0);
            v
        };
        let (iops, bw) = (pad(&self.iops), pad(&self.bw));
        let mean = |v: &[u64]| v.iter().sum::<u64>() / self.dur as u64;
        FioSteadyReport {
            ss: self.criterion.fio_name(),
            duration: self.dur as u64,
            ramp_time_s,
            attained: self.attained(),
            criterion: format!(
                "{:.6}{}",
                self.last as f32,
                if self.criterion.percent { "%" } else { "" }
            ),
            criterion_value: self.last,
            limit: self.criterion.limit,
            max_deviation: self.deviation,
            slope: self.slope,
            samples: self.taken,
            attained_after_s: self.attained_at,
            data: FioSteadyData {
                bw_mean: mean(&bw),
                iops_mean: mean(&iops),
                iops,
                bw,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> PtsRule {
        PtsRule::default()
    }

    #[test]
    fn least_squares_line_of_a_straight_line_is_exact() {
        let s = window_stats(&[10.0, 12.0, 14.0, 16.0, 18.0]);
        assert!((s.slope - 2.0).abs() < 1e-12);
        assert!((s.intercept - 10.0).abs() < 1e-12);
        assert!((s.excursion - 8.0).abs() < 1e-12);
        assert_eq!(s.range, 8.0);
        assert_eq!(s.max_deviation, 4.0);
        assert_eq!(s.mean, 14.0);
    }

    #[test]
    fn a_flat_series_is_steady_at_the_fifth_round_not_before() {
        let v = [3300.0, 3310.0, 3290.0, 3305.0, 3295.0];
        assert_eq!(pts_next(&v[..4], &rule()), PtsNext::Continue);
        match pts_next(&v, &rule()) {
            PtsNext::Steady(verdict) => {
                assert_eq!((verdict.window_first, verdict.window_last), (1, 5));
                assert!(verdict.range_pct < 1.0);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_converging_series_becomes_steady_once_its_window_settles() {
        // The write cliff seen per round: 30K, 12K, 6K, then ~3.3K.
        let v = [
            30_000.0, 12_000.0, 6_000.0, 3_600.0, 3_350.0, 3_300.0, 3_310.0, 3_290.0, 3_305.0,
            3_300.0,
        ];
        let first = (5..=v.len())
            .find(|&n| matches!(pts_next(&v[..n], &rule()), PtsNext::Steady(_)))
            .expect("steady");
        // The window must exclude 6000 (range) and be flat enough: rounds 4..8.
        assert_eq!(first, 8, "steady after round {first}");
    }

    #[test]
    fn a_steady_trend_fails_the_excursion_even_within_the_range() {
        // 4 % a round: range 16 % of the mean (within 20 %) but the line
        // moves 16 % across the window (over 10 %).
        let v: Vec<f64> = (0..5).map(|i| 1000.0 * (1.0 - 0.04 * i as f64)).collect();
        let verdict = pts_check(&v, &rule()).unwrap();
        assert!(verdict.range_ok, "{verdict:?}");
        assert!(!verdict.excursion_ok, "{verdict:?}");
        assert!(!verdict.reached);
    }

    #[test]
    fn noise_without_trend_fails_the_range_but_not_the_slope() {
        // Alternating ±15 %: no trend, range 30 %.
        let v = [1150.0, 850.0, 1150.0, 850.0, 1150.0];
        let verdict = pts_check(&v, &rule()).unwrap();
        assert!(!verdict.range_ok && verdict.excursion_ok, "{verdict:?}");
        // ±8 % noise passes both.
        let v = [1080.0, 920.0, 1080.0, 920.0, 1000.0];
        assert!(pts_check(&v, &rule()).unwrap().reached);
    }

    #[test]
    fn a_series_that_never_settles_is_reported_not_reached_after_25_rounds() {
        // Drifting down 5 % a round forever.
        let v: Vec<f64> = (0..40).map(|i| 1e4 * 0.95f64.powi(i)).collect();
        for n in 1..25 {
            assert_eq!(pts_next(&v[..n], &rule()), PtsNext::Continue, "round {n}");
        }
        match pts_next(&v[..25], &rule()) {
            PtsNext::NotReached(Some(verdict)) => {
                assert!(!verdict.reached);
                assert_eq!((verdict.window_first, verdict.window_last), (21, 25));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn zero_or_nan_rounds_are_never_steady() {
        assert!(!pts_check(&[0.0; 5], &rule()).unwrap().reached);
        assert!(
            !pts_check(&[1.0, 1.0, f64::NAN, 1.0, 1.0], &rule())
                .unwrap()
                .reached
        );
    }

    #[test]
    fn fio_criteria_parse_as_fio_does() {
        let c = SsCriterion::parse("iops:10%", 1024).unwrap();
        assert_eq!(
            (c.metric, c.slope, c.limit, c.percent),
            (SsMetric::Iops, false, 10.0, true)
        );
        assert_eq!(c.fio_name(), "iops:10.000000%");
        let c = SsCriterion::parse("bw_slope:1m", 1024).unwrap();
        assert_eq!(
            (c.metric, c.slope, c.limit, c.percent),
            (SsMetric::Bw, true, 1048576.0, false)
        );
        assert_eq!(SsCriterion::default().fio_name(), "iops_slope:0.010000%");
        for bad in ["iops", "lat:1%", "iops:x", "iops:-1", "bw:1q"] {
            assert!(SsCriterion::parse(bad, 1024).is_err(), "{bad}");
        }
    }

    /// fio 3.33, `--ss=iops:50% --ss_dur=3` on a file: these samples gave
    /// max_deviation 1030, criterion "8.308462%", iops_mean 12397,
    /// bw_mean 50779237 (its JSON, kept in the notes of this test).
    #[test]
    fn deviation_criterion_reproduces_fio_output() {
        let mut s = FioSteady::new(SsCriterion::parse("iops:50%", 1024).unwrap(), 3);
        assert!(!s.push(11367, 46559232));
        assert!(!s.push(12785, 52370578));
        assert!(s.push(13039, 53407903));
        let r = s.report(1.0);
        assert!(r.attained);
        assert_eq!(r.ss, "iops:50.000000%");
        assert_eq!(r.criterion, "8.308462%");
        assert_eq!(r.max_deviation, 1030.0);
        assert_eq!(r.slope, 0.0);
        assert_eq!(r.data.iops_mean, 12397);
        assert_eq!(r.data.bw_mean, 50779237);
        assert_eq!(r.data.iops, vec![11367, 12785, 13039]);
        assert_eq!(r.attained_after_s, Some(3));
    }

    #[test]
    fn slope_criterion_rolls_its_window_until_flat() {
        let mut s = FioSteady::new(SsCriterion::parse("iops_slope:1%", 1024).unwrap(), 4);
        let series = [100, 200, 300, 400, 450, 455, 452, 453, 454];
        let at = series.iter().position(|&v| s.push(v, v * 4096)).unwrap();
        // The window 450, 455, 452, 453: slope 0.6/s, 0.13 % of the mean;
        // the one before (400…452) rose 16.1/s, 3.7 %.
        assert_eq!(at, 7);
        let r = s.report(0.0);
        assert_eq!(r.data.iops, vec![450, 455, 452, 453]);
        assert!((r.slope - 0.6).abs() < 1e-9, "{}", r.slope);
        assert_eq!(r.criterion, format!("{:.6}%", (100.0 * 0.6 / 452.0) as f32));
        assert_eq!(r.max_deviation, 0.0);
    }

    #[test]
    fn an_unfinished_window_is_padded_with_zeros_as_fio_prints_it() {
        let mut s = FioSteady::new(SsCriterion::default(), 5);
        s.push(10, 40960);
        s.push(20, 81920);
        let r = s.report(0.0);
        assert!(!r.attained);
        assert_eq!(r.data.iops, vec![10, 20, 0, 0, 0]);
        assert_eq!(r.data.iops_mean, 6);
        assert_eq!(r.criterion, "0.000000%");
    }

    #[test]
    fn a_zero_limit_never_holds() {
        let mut s = FioSteady::new(SsCriterion::parse("iops:0", 1024).unwrap(), 2);
        for _ in 0..10 {
            assert!(!s.push(100, 100));
        }
        assert!(!s.report(0.0).attained);
    }
}
