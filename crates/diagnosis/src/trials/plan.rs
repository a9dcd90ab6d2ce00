//! Which levers a study tries, purely: those that apply here ([`crate::levers`]'s
//! conditions on the facts), ranked by what each can buy
//! (`estimate`) and by the findings that point at them, in a
//! quick study every large estimate, every limit of the study's own groups
//! that holds (each lifted on its own) and one or two more, each allowed by
//! what the user asked and what this machine can do ([`Consent`]), each at
//! a point where its limit can bind ([`crate::levers::binding`]); every lever that
//! applies but is not tried is listed with its reason.

use crate::levers::estimate::Estimate;
use crate::levers::{self, Candidate, Context, Lever, Point};
use crate::limit::Cause;
use crate::trials::{Reason, Untested};

pub use crate::levers::Consent;

/// A lever to try, with its candidate values at its point.
#[derive(Clone, Debug)]
pub struct Planned {
    pub lever: Lever,
    pub point: Point,
    pub candidates: Vec<Candidate>,
    /// The findings point at it.
    pub pointed: bool,
    /// What its first candidate may buy, where a measurement says.
    pub estimate: Option<Estimate>,
    /// A limit of the study's own groups that holds, which it lifts: tried
    /// after the large estimates, before the rest, in a quick study too.
    pub held: bool,
    /// Its limit binds only once another limit of the study's groups is
    /// lifted ([`crate::levers::binding::hidden_by`]): that limit's lever, and why
    /// it cannot bind alone. Tried behind that lever's change, the two
    /// together against the baseline, never alone.
    pub behind: Option<(String, String)>,
}

/// Levers the findings point at that a quick study tries.
pub const QUICK_LEVERS: usize = 2;

/// Whether a lever may be tried; why not otherwise: its kind's gate
/// ([`crate::levers::LeverKind::gate`]).
pub fn gate(l: &Lever, cause: Cause, c: &Consent) -> Result<(), (Reason, String)> {
    l.ops().gate(cause, c)
}

fn untested(l: &Lever, reason: Reason, why: String) -> Untested {
    Untested {
        lever: l.id.clone(),
        what: l.what.clone(),
        reason,
        why,
        estimate: None,
        command: None,
    }
}

/// The levers to try and those not tried, from the table, the lever
/// context, the findings (the named cause and the rules that fired), the
/// consent and the points resolved for each `at` (None: not measured).
/// Ranked by what each can buy (`estimate`): every large
/// estimate first, best first; then the ones the cause points at, then
/// those a finding points at, each in the table's order. A quick study
/// tries every large one and fills up to [`QUICK_LEVERS`] with the rest.
pub fn plan(
    table: &[Lever],
    cx: &Context,
    fired: &[String],
    consent: &Consent,
    quick: bool,
    point: &dyn Fn(levers::At) -> Option<Point>,
) -> (Vec<Planned>, Vec<Untested>) {
    let mut todo = Vec::new();
    let mut not = Vec::new();
    for l in table.iter().filter(|l| levers::applies(l, cx)) {
        let pointed = levers::pointed(l, cx.cause, fired);
        let held = held_limit(l, cx);
        let wanted = wanted(l, cx, pointed, held);
        let assessed = assess(l, cx, point);
        let estimate = assessed.as_ref().ok().and_then(|a| a.2.clone());
        let large = estimate.as_ref().is_some_and(Estimate::large);
        if quick && !wanted && !large {
            // A cap of the device's queue that can bind here is a limit
            // the inventory shows: said untested, never passed over.
            if let (true, Ok((p, ..))) = (l.ops().on_queue() && l.raises_cap(), &assessed) {
                let why = format!(
                    "its limit can bind at {}, but a quick study tries the changes with a large estimate and the first the findings point at",
                    p.describe()
                );
                not.push(untested(l, Reason::Quick, why).with(estimate));
            }
            continue;
        }
        if let Err((r, why)) = gate(l, cx.cause, consent) {
            // A cgroup lever needs a limit to lift: said only when the
            // findings point at it or its limit holds.
            if !l.ops().lifts_group() || wanted {
                not.push(untested(l, r, why).with(estimate));
            }
            continue;
        }
        if l.ops().lifts_group() && !wanted {
            continue;
        }
        match assessed {
            Ok((point, mut candidates, estimate)) => {
                if quick {
                    candidates.truncate(1);
                }
                let behind = crate::levers::binding::hidden_by(l, cx, &point)
                    .map(|(front, why)| (front.word().to_string(), why));
                todo.push(Planned {
                    lever: l.clone(),
                    point,
                    candidates,
                    pointed,
                    estimate,
                    held,
                    behind,
                });
            }
            Err((r, why)) => not.push(untested(l, r, why)),
        }
    }
    rank(&mut todo, cx.cause);
    if quick {
        let (kept, left) = quick_share(todo, cx.cause);
        todo = kept;
        for p in left {
            not.push(
                untested(
                    &p.lever,
                    Reason::Quick,
                    "a quick study tries the changes with a large estimate and the first the findings point at".into(),
                )
                .with(p.estimate),
            );
        }
    }
    (todo, not)
}

/// A quick study's share of the ranked levers, in their order: every
/// large estimate and every limit of the study's groups that holds; the
/// first lever of the named cause's own (or else the first the findings
/// point at), whatever its estimate, so that the cause named is tried;
/// then the rest up to [`QUICK_LEVERS`]. The others are left.
fn quick_share(todo: Vec<Planned>, cause: Cause) -> (Vec<Planned>, Vec<Planned>) {
    let must = |p: &Planned| p.held || p.estimate.as_ref().is_some_and(Estimate::large);
    let first_of = |f: &dyn Fn(&Planned) -> bool| todo.iter().position(f);
    let named = first_of(&|p| p.lever.causes.contains(&cause)).or(first_of(&|p| p.pointed));
    let mut keep: Vec<bool> = todo
        .iter()
        .enumerate()
        .map(|(i, p)| must(p) || Some(i) == named)
        .collect();
    let mut room = QUICK_LEVERS.saturating_sub(keep.iter().filter(|k| **k).count());
    for k in keep.iter_mut().filter(|k| !**k) {
        if room == 0 {
            break;
        }
        *k = true;
        room -= 1;
    }
    let (mut kept, mut left) = (Vec::new(), Vec::new());
    for (p, k) in todo.into_iter().zip(keep) {
        match k {
            true => kept.push(p),
            false => left.push(p),
        }
    }
    (kept, left)
}

/// Whether a cgroup lever's limit holds on the study's groups, as the
/// inventory shows.
fn held_limit(l: &Lever, cx: &Context) -> bool {
    match (l.lift(), &cx.limits) {
        (Some(g), Some(inv)) => ssdready_measured::group_limits::holds(g, inv),
        _ => false,
    }
}

/// Whether a lever is worth a trial beyond its estimate: the findings
/// point at it; for a lever that lifts one limit of the study's groups,
/// where the inventory was read, its limit holds (each held limit is
/// tried alone, named or not) or the named cause is its own.
fn wanted(l: &Lever, cx: &Context, pointed: bool, held: bool) -> bool {
    match (l.lift(), &cx.limits) {
        (Some(_), Some(_)) => held || l.causes.contains(&cx.cause),
        _ => pointed,
    }
}

/// Best first: the large estimates by size, then the levers that lift a
/// limit of the study's groups that holds, then the cause's own levers,
/// then those a finding points at (the table's order kept among equals).
fn rank(todo: &mut [Planned], cause: Cause) {
    let big = |p: &Planned| {
        p.estimate
            .as_ref()
            .filter(|e| e.large())
            .map_or(0.0, |e| e.pct)
    };
    todo.sort_by(|a, b| {
        big(b)
            .total_cmp(&big(a))
            .then_with(|| (!a.held).cmp(&!b.held))
            .then_with(|| (!a.lever.causes.contains(&cause)).cmp(&!b.lever.causes.contains(&cause)))
            .then_with(|| (!a.pointed).cmp(&!b.pointed))
    });
}

/// A lever's point, its candidates there and what the first may buy.
type Assessed = (Point, Vec<Candidate>, Option<Estimate>);

/// A lever's point, its candidates there and what the first may buy; or
/// why it cannot be tried.
fn assess(
    l: &Lever,
    cx: &Context,
    point: &dyn Fn(levers::At) -> Option<Point>,
) -> Result<Assessed, (Reason, String)> {
    let Some(p) = point(l.at) else {
        return Err((
            Reason::Unavailable,
            "the study measured no point to try it at".into(),
        ));
    };
    l.ops().offered(l, cx, "on this device")?;
    let candidates = levers::candidates(l, cx, &p);
    let Some(first) = candidates.first() else {
        return Err((Reason::NoCandidate, levers::nothing_to_try(l, &p)));
    };
    if let Some(why) = levers::cannot_bind(l, cx, &p) {
        return Err((
            Reason::CannotBind,
            format!("its limit cannot bind at any point this study runs: {why}"),
        ));
    }
    let e = levers::estimate(l, cx, &p, first);
    Ok((p, candidates, e))
}

/// The trials' pairs that fit in `left_s` seconds at `per_run_s` each:
/// `want` pairs when they fit, at least [`crate::trials::MIN_PAIRS`],
/// else none.
pub fn pairs_that_fit(want: usize, left_s: f64, per_run_s: f64) -> usize {
    let fit = (left_s / (2.0 * per_run_s.max(0.01))).floor() as usize;
    match fit.min(want) {
        n if n >= crate::trials::MIN_PAIRS => n,
        _ => 0,
    }
}

#[cfg(test)]
#[path = "trials_plan_tests.rs"]
mod tests;
