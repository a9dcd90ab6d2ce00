//! What a comparison comes to: the differences compare.html's table shows,
//! and the regression check of `--baseline` (a key figure worse beyond the
//! noise is a regression; two results that measured different things are
//! not compared at all).

use crate::compare::{compare, render_regressions, Comparison, Origin, Row, Verdict};
use crate::figures::Side;
use crate::load::Baseline;

/// The comparison's judgement as compare.html's table shows it: the
/// figures beyond the noise, with the counts and the notes beside.
pub fn differences(c: &Comparison) -> serde_json::Value {
    let beyond = |r: &&Row| r.verdict != Verdict::Same;
    let rows: Vec<serde_json::Value> = c
        .figures
        .iter()
        .filter(beyond)
        .map(|r| {
            serde_json::json!({
                "figure": r.label,
                "unit": r.unit,
                "A": r.a,
                "B": r.b,
                "change %": r.change_pct,
                "noise %": r.noise_pct,
                "noise from": r.noise_source,
                "verdict": r.verdict,
                "key": r.key,
            })
        })
        .collect();
    serde_json::json!({
        "differences": rows,
        "better": c.better,
        "worse": c.worse,
        "regressions": c.regressions.join(", "),
        "noise floor %": c.noise_floor_pct,
        "notes": c.notes.join("; "),
    })
}

/// The regression check of a new result against its baseline.
#[derive(Clone, Debug, PartialEq)]
pub enum RegressionCheck {
    /// The two cannot be compared: no check was made (exit code 1).
    NotComparable(String),
    /// No key figure got worse beyond the noise (exit code 0).
    Clean(String),
    /// Key figures got worse beyond the noise, one line each (exit code 3).
    Regressed(Vec<String>),
}

impl RegressionCheck {
    /// The process exit code the check ends with.
    pub fn exit_code(&self) -> i32 {
        match self {
            RegressionCheck::NotComparable(_) => 1,
            RegressionCheck::Clean(_) => 0,
            RegressionCheck::Regressed(_) => 3,
        }
    }

    /// What to say, line by line.
    pub fn lines(&self) -> Vec<String> {
        match self {
            RegressionCheck::NotComparable(l) | RegressionCheck::Clean(l) => vec![l.clone()],
            RegressionCheck::Regressed(l) => l.clone(),
        }
    }
}

/// Judge `new` against the baseline.
pub fn regression_check(base: &Baseline, new: &Side) -> RegressionCheck {
    let origin = Origin {
        given: "this run".into(),
        ..Origin::default()
    };
    let c = compare((base.origin.clone(), &base.side), (origin, new));
    if !c.comparable {
        return RegressionCheck::NotComparable(format!(
            "the baseline ({}) is not comparable: {}; no regression check was made",
            base.origin.given,
            c.not_comparable.join("; ")
        ));
    }
    if c.regressions.is_empty() {
        return RegressionCheck::Clean(format!(
            "no regression against the baseline ({}): none of {} key figures got worse beyond the noise ({} figures better, {} worse that are not key figures)",
            base.origin.given,
            c.figures.iter().filter(|r| r.key).count(),
            c.better,
            c.worse
        ));
    }
    RegressionCheck::Regressed(render_regressions(&c).lines().map(String::from).collect())
}
