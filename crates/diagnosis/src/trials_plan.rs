//! Which levers a study tries, purely: those that apply here ([`crate::levers`]'s
//! conditions on the facts), the ones the findings point at first, only
//! the first one or two of them in a quick study, each allowed by what
//! the user asked and what this machine can do ([`Consent`]); every lever
//! that applies but is not tried is listed with its reason.

use crate::levers::{self, Candidate, Context, Kind, Lever, Point};
use crate::limit::Cause;
use crate::trials::{Reason, Untested};

/// What may be changed, and what this machine can do.
#[derive(Clone, Debug, Default)]
pub struct Consent {
    pub root: bool,
    /// The user asked for the host's settings to be tried (`--try-changes`).
    pub asked: bool,
    /// The target is a device ssdready made itself (the built-in drive
    /// behind the kernel, its RAM loop devices): its queue needs no asking.
    pub made_by_study: bool,
    /// The target has a block device with a queue of its own.
    pub device: bool,
    /// Why queue settings cannot be changed by this build or machine, if so.
    pub queue_unavailable: Option<String>,
    /// Why the study cannot move its own process to a group of its own.
    pub escape_unavailable: Option<String>,
}

/// A lever to try, with its candidate values at its point.
#[derive(Clone, Debug)]
pub struct Planned {
    pub lever: Lever,
    pub point: Point,
    pub candidates: Vec<Candidate>,
    /// The findings point at it.
    pub pointed: bool,
}

/// Levers the findings point at that a quick study tries.
pub const QUICK_LEVERS: usize = 2;

/// Whether a lever of this kind may be tried; why not otherwise.
pub fn gate(kind: Kind, cause: Cause, c: &Consent) -> Result<(), (Reason, String)> {
    match kind {
        Kind::Application => Ok(()),
        Kind::Queue if !c.device => Err((
            Reason::NoDevice,
            "the target has no device queue of its own".into(),
        )),
        Kind::Queue | Kind::Cgroup if !c.root => Err((
            Reason::NotRoot,
            "needs root (run the study as root to measure it)".into(),
        )),
        Kind::Queue if !c.asked && !c.made_by_study => Err((
            Reason::NotAsked,
            "a setting of this host: run with --try-changes to measure it (it is put back after)"
                .into(),
        )),
        Kind::Queue => match &c.queue_unavailable {
            Some(why) => Err((Reason::Unavailable, why.clone())),
            None => Ok(()),
        },
        Kind::Cgroup if cause == Cause::BelowHost => Err((
            Reason::BelowHost,
            "a limit below this host: no group of this host moves it".into(),
        )),
        Kind::Cgroup => match &c.escape_unavailable {
            Some(why) => Err((Reason::Unavailable, why.clone())),
            None => Ok(()),
        },
    }
}

fn untested(l: &Lever, reason: Reason, why: String) -> Untested {
    Untested {
        lever: l.id.clone(),
        what: l.what.clone(),
        reason,
        why,
    }
}

/// The levers to try and those not tried, from the table, the lever
/// context, the findings (the named cause and the rules that fired), the
/// consent and the points resolved for each `at` (None: not measured).
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
        if quick && !pointed {
            continue;
        }
        if let Err((r, why)) = gate(l.kind, cx.cause, consent) {
            // A cgroup lever needs a limit to lift: said only when the
            // findings point at it.
            if l.kind != Kind::Cgroup || pointed {
                not.push(untested(l, r, why));
            }
            continue;
        }
        if l.kind == Kind::Cgroup && !pointed {
            continue;
        }
        let Some(p) = point(l.at) else {
            not.push(untested(
                l,
                Reason::Unavailable,
                "the study measured no point to try it at".into(),
            ));
            continue;
        };
        if l.kind == Kind::Queue && levers::current(l, cx).is_none() {
            let attr = l.attr.clone().unwrap_or_default();
            not.push(untested(
                l,
                Reason::NotOffered,
                format!("this kernel does not offer queue/{attr} on this device"),
            ));
            continue;
        }
        let mut candidates = levers::candidates(l, cx, &p);
        if candidates.is_empty() {
            let why = if l.values == Some(levers::Values::Engines) {
                format!(
                    "nothing to try: the engine sweep measured every other engine slower at QD {}",
                    p.qd
                )
            } else {
                "nothing to try: it is already at the value the study would try".into()
            };
            not.push(untested(l, Reason::NoCandidate, why));
            continue;
        }
        if quick {
            candidates.truncate(1);
        }
        todo.push(Planned {
            lever: l.clone(),
            point: p,
            candidates,
            pointed,
        });
    }
    // The ones the cause itself points at first, then those a finding
    // points at, each in the table's order.
    todo.sort_by_key(|p| (!p.lever.causes.contains(&cx.cause), !p.pointed));
    if quick && todo.len() > QUICK_LEVERS {
        for p in todo.drain(QUICK_LEVERS..) {
            not.push(untested(
                &p.lever,
                Reason::Quick,
                "a quick study tries the first changes the findings point at".into(),
            ));
        }
    }
    (todo, not)
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
