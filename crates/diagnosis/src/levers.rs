//! The changes the study knows how to try, as data (`data/levers.table`,
//! read like the verdict rules): for each lever, what it changes, how its
//! candidate values follow from the current value and the facts, which
//! causes and facts make it worth trying, the point it is tried at, how it
//! is put back and how a user makes it last. Pure: the study reads the
//! current values and hands them in ([`Context`]); what comes out is the
//! candidates ([`candidates`]), whether the lever applies at all
//! ([`applies`]) and how the study makes a candidate ([`Apply`]). Each
//! form of `values` is one file of `lever_values`, behind one
//! interface: this file names none of them; each kind of lever is one
//! unit (`kind`: a queue file, a limit of the study's groups, the job's
//! own options, priority and placement), behind another, listed in one
//! table here ([`KINDS`]). A lever as plain data is `lever`, below the
//! units; the reading of the table, the table of kinds and what asks a
//! lever's unit (its candidates, its change, where it binds, what it may
//! buy) are here, above them.

pub mod binding;
pub mod estimate;
pub mod kind;
pub mod kind_application;
pub mod kind_cgroup;
pub mod kind_cpu;
pub mod kind_priority;
pub mod kind_queue;
pub mod lever;
pub mod permanent;
use crate::facts::{Fact, Value};
use crate::limit::Cause;
use crate::rules::RuleError;
use estimate::Estimate;
use ssdready_measured::group_limits::Lift;
use ssdready_measured::limits::Inventory;
use std::collections::BTreeMap;

pub use crate::lever_context::{Candidate, Context, Point};
pub use crate::lever_values::engines::ENGINE_SLOWER;
pub use crate::lever_values::options::{MAX_BS, MAX_QD};
pub use crate::lever_values::Values;
pub use kind::LeverKind;
pub use lever::{
    Apply, At, Consent, Kind, Lever, Metric, Unit, EXTRA_FACTS, FINDINGS, SPLIT_AT_LEAST,
    SPLIT_FINDING,
};

/// The levers shipped with ssdready.
pub const TABLE: &str = include_str!("../data/levers.table");

/// Every kind: its word in the table, the kind a trial records, and its
/// unit. A lever of `priority` is recorded as the application's own
/// choice, as it always was.
pub const KINDS: [(Kind, &dyn LeverKind); 5] = [
    (Kind::Queue, &kind_queue::QUEUE),
    (Kind::Cgroup, &kind_cgroup::CGROUP),
    (Kind::Application, &kind_application::APPLICATION),
    (Kind::Application, &kind_priority::PRIORITY),
    (Kind::Cpu, &kind_cpu::CPU_IDLE),
];

impl Default for Unit {
    /// The application's own options, as [`Kind`]'s default.
    fn default() -> Unit {
        of_kind(Kind::default()).0
    }
}

impl Unit {
    /// Its unit.
    pub fn ops(self) -> &'static dyn LeverKind {
        KINDS[self.0].1
    }

    /// The kind a trial of it records.
    pub fn kind(self) -> Kind {
        KINDS[self.0].0
    }
}

/// The kind the table names by `word`.
pub fn by_word(word: &str) -> Option<Unit> {
    KINDS.iter().position(|k| k.1.word() == word).map(Unit)
}

/// The words the table allows.
pub fn words() -> String {
    KINDS.map(|k| k.1.word()).join(", ")
}

/// The first unit that records `kind`: what a recorded trial of that
/// kind is made and ordered by.
pub fn of_kind(kind: Kind) -> (Unit, &'static dyn LeverKind) {
    let i = KINDS.iter().position(|k| k.0 == kind).unwrap_or(0);
    (Unit(i), KINDS[i].1)
}

impl Kind {
    /// The unit a recorded trial of this kind is made and ordered by.
    pub fn ops(self) -> &'static dyn LeverKind {
        of_kind(self).1
    }
}

impl Lever {
    /// How the study makes candidate `c`: for a cgroup lever, `lift`
    /// ([`Lever::lifted`]).
    pub fn apply(&self, c: &Candidate, lift: &Lift) -> Apply {
        self.ops().change(self, c, lift)
    }

    /// Its kind's unit.
    pub fn ops(&self) -> &'static dyn LeverKind {
        self.unit.ops()
    }
}

/// A set's changes as the study makes them, in the one order of their
/// kinds ([`LeverKind::order`]: the scheduler first, a switch resets
/// `nr_requests`): each queue setting on its own, with its lever's id;
/// then the limits of the study's groups lifted by one move, with their
/// levers' ids. The job's own options need no change of the host.
pub fn together(parts: Vec<(&Lever, Apply)>) -> Vec<(Vec<String>, Apply)> {
    let mut parts = parts;
    parts.sort_by_key(|(l, _)| l.ops().order(l.attr.as_deref()));
    let mut out = Vec::new();
    let mut escape: Option<(Vec<String>, Lift)> = None;
    for (l, a) in parts {
        match (a, &mut escape) {
            (Apply::Options(_), _) => {}
            (Apply::Escape(lift), Some((ids, all))) => {
                ids.push(l.id.clone());
                *all = all.with(&lift);
            }
            (Apply::Escape(lift), None) => escape = Some((vec![l.id.clone()], lift)),
            (q, _) => out.push((vec![l.id.clone()], q)),
        }
    }
    out.extend(escape.map(|(ids, lift)| (ids, Apply::Escape(lift))));
    out
}

fn err(line: usize, msg: String) -> RuleError {
    RuleError { line, msg }
}

fn causes_of(list: &str, line: usize) -> Result<Vec<Cause>, RuleError> {
    list.split(',')
        .map(str::trim)
        .map(|w| {
            Cause::of_name(w).ok_or_else(|| {
                err(
                    line,
                    format!(
                        "'{w}' is not a cause (allowed: {})",
                        Cause::ALL.map(|c| c.name()).join(", ")
                    ),
                )
            })
        })
        .collect()
}

fn values_of(text: &str, line: usize) -> Result<Values, RuleError> {
    crate::lever_values::parse(text).map_err(|why| err(line, format!("values '{text}': {why}")))
}

/// Set one key of a lever from its line.
fn set_key(l: &mut Lever, key: &str, rest: &str, line: usize) -> Result<(), RuleError> {
    match key {
        "kind" => {
            l.unit = by_word(rest).ok_or_else(|| {
                err(line, format!("kind '{rest}' (allowed: {})", words()))
            })?;
            l.kind = l.unit.kind();
        }
        "attr" => l.attr = Some(rest.into()),
        "what" => l.what = rest.into(),
        "values" => l.values = Some(values_of(rest, line)?),
        "when" => l.when.push(crate::rules::parse_cond(rest, line)?),
        "causes" => l.causes = causes_of(rest, line)?,
        "lifts" => l.lifts = causes_of(rest, line)?,
        "rules" => l.rules = rest.split(',').map(|r| r.trim().to_string()).collect(),
        "at" => {
            l.at = At::of(rest).ok_or_else(|| {
                err(
                    line,
                    format!("at '{rest}' (allowed: peak, deepest, qd1, large, buffered, parallel)"),
                )
            })?
        }
        "measure" => {
            l.measure = Metric::of(rest).ok_or_else(|| {
                err(
                    line,
                    format!("measure '{rest}' (allowed: iops, bandwidth, mean, p99, cpu)"),
                )
            })?
        }
        "undo" => l.undo = rest.into(),
        "permanent" => l.permanent = Some(rest.into()),
        k => {
            return Err(err(
                line,
                format!(
                    "unknown key '{k}' (allowed: lever, kind, attr, what, values, when, causes, lifts, rules, at, measure, undo, permanent)"
                ),
            ))
        }
    }
    Ok(())
}

/// Read a levers table.
pub fn parse(text: &str) -> Result<Vec<Lever>, RuleError> {
    let mut out: Vec<Lever> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let (key, rest) = l.split_once(' ').unwrap_or((l, ""));
        let rest = rest.trim();
        if key == "lever" {
            if out.iter().any(|x| x.id == rest) {
                return Err(err(line, format!("lever '{rest}' twice")));
            }
            out.push(Lever {
                id: rest.into(),
                ..Default::default()
            });
            continue;
        }
        let lever = out
            .last_mut()
            .ok_or_else(|| err(line, "a line before the first lever".into()))?;
        set_key(lever, key, rest, line)?;
    }
    for l in &out {
        let has = |k: &str| match k {
            "attr" => l.attr.is_some(),
            "undo" => !l.undo.is_empty(),
            _ => true,
        };
        let missing = match () {
            _ if l.what.is_empty() => Some("what"),
            _ if l.values.is_none() => Some("values"),
            _ => l.ops().needs().iter().copied().find(|k| !has(k)),
        };
        if let Some(k) = missing {
            return Err(err(0, format!("lever '{}' needs '{k}'", l.id)));
        }
    }
    Ok(out)
}

/// The shipped levers.
pub fn shipped() -> Vec<Lever> {
    parse(TABLE).expect("the shipped levers table parses (a unit test checks)")
}

/// The lever's current value (None for application and cgroup levers,
/// and for a file the device does not have).
pub fn current(l: &Lever, cx: &Context) -> Option<String> {
    l.ops().current(l, cx)
}

/// The candidate values of a lever at point `p`, best guess first; empty
/// when none differs from what is in effect. A queue lever's form
/// proposes from the file's value; the others' from the point.
pub fn candidates(l: &Lever, cx: &Context, p: &Point) -> Vec<Candidate> {
    let Some(v) = &l.values else {
        return Vec::new();
    };
    let on_queue = l.ops().on_queue();
    let value = match on_queue {
        true => match current(l, cx) {
            Some(now) => Some(now),
            None => return Vec::new(),
        },
        false => None,
    };
    if v.on_queue() != on_queue {
        return Vec::new();
    }
    let now = crate::lever_values::Now {
        cx,
        point: p,
        value: value.as_deref(),
    };
    v.proposed(&now)
        .into_iter()
        .filter(|c| !v.in_place(c, &now))
        .collect()
}

/// What a lever's candidate replaces at point `p`, in words: the queue
/// file's value, the study's group, or what the job ran with.
pub fn replaced(l: &Lever, cx: &Context, p: &Point) -> String {
    l.ops().replaced(l, cx, p)
}

/// What lifting `l`'s limit of the study's groups behind `front`'s (both
/// at once) leaves, in the words of its candidate: "without the cpuset"
/// where the two were the only limits, else those still kept. None for a
/// lever that lifts no one limit.
pub fn lifted_behind(l: &Lever, front: &Lever, limits: Option<&Inventory>) -> Option<String> {
    let g = l.lift()?;
    let both = l.lifted(limits).with(&front.lifted(limits));
    Some(crate::lever_values::lift::without(g, &both.kept))
}

/// Why `l`'s limit cannot bind at point `p`, where the facts say so
/// (None: it can, or nothing tells): its kind's
/// ([`LeverKind::cannot_bind`]; a queue file's own bound is the queue
/// kind's, a group limit's is [`binding`]'s).
pub fn cannot_bind(l: &Lever, cx: &Context, p: &Point) -> Option<String> {
    l.ops().cannot_bind(l, cx, p)
}

/// The estimate of a lever's candidate at point `p`, where a measurement
/// says what it can buy: its kind's ([`LeverKind::estimate`]).
pub fn estimate(l: &Lever, cx: &Context, p: &Point, c: &Candidate) -> Option<Estimate> {
    l.ops().estimate(l, cx, p, c)
}

/// Why a lever has nothing to try at point `p`, in words.
pub fn nothing_to_try(l: &Lever, p: &Point) -> String {
    match &l.values {
        Some(v) => v.nothing_to_try(p),
        None => crate::lever_values::NOTHING_TO_TRY.into(),
    }
}

/// The facts with the lever context's own ([`EXTRA_FACTS`]).
fn with_extras(cx: &Context) -> BTreeMap<String, Fact> {
    let mut f = cx.facts.clone();
    let polled = kind_queue::polled(cx);
    let num = |v: f64, unit: &str| Fact::of(Value::Num(v), unit, Vec::new());
    if polled {
        f.insert("poll_queues".into(), num(1.0, "count"));
    }
    if let Some(n) = cx.large_read_split {
        f.insert("large_read_split".into(), num(n, "ratio"));
    }
    if cx.may_raise_priority {
        f.insert("priority_raisable".into(), num(1.0, "count"));
    }
    f
}

/// The verdict rules that fired and the context's own findings
/// ([`FINDINGS`]): what [`pointed`] is asked about.
pub fn fired(cx: &Context, rules: &[String]) -> Vec<String> {
    let mut out = rules.to_vec();
    if cx.large_read_split.is_some_and(|n| n >= SPLIT_AT_LEAST) {
        out.push(SPLIT_FINDING.into());
    }
    out
}

/// Whether every `when` of the lever holds on the facts.
pub fn applies(l: &Lever, cx: &Context) -> bool {
    let f = with_extras(cx);
    l.when.iter().all(|c| crate::rules::holds(c, &f))
}

/// Whether the findings point at the lever: the named cause is among its
/// causes, or a verdict it answers fired.
pub fn pointed(l: &Lever, cause: Cause, fired: &[String]) -> bool {
    l.causes.contains(&cause) || l.rules.iter().any(|r| fired.contains(r))
}

/// How a user makes a tried value last on this host.
pub fn permanent(l: &Lever, disks: &[String], c: &Candidate) -> String {
    let options = c
        .options
        .iter()
        .map(|(k, v)| format!("--{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let attr = l.attr.clone().unwrap_or_default();
    if let Some(t) = &l.permanent {
        return t
            .replace("{value}", &c.value)
            .replace("{attr}", &attr)
            .replace("{options}", &options)
            .replace("{disk}", &disks.join(","));
    }
    l.ops().permanent(l, disks, c, &options)
}

#[cfg(test)]
#[path = "levers_tests.rs"]
mod tests;
