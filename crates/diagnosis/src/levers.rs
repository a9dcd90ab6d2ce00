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
//! own options, priority and placement), behind another.

pub mod binding;
pub mod estimate;
pub mod permanent;
use crate::facts::{Fact, Value};
use crate::limit::Cause;
use crate::rules::{Cond, RuleError};
use serde::{Deserialize, Serialize};
use ssdready_measured::group_limits::{self, GroupLimit, Lift};
use ssdready_measured::limits::Inventory;
use std::collections::BTreeMap;

pub use crate::lever_context::{Candidate, Context, Point};
pub use crate::lever_values::engines::ENGINE_SLOWER;
pub use crate::lever_values::options::{MAX_BS, MAX_QD};
pub use crate::lever_values::Values;
pub use kind::{LeverKind, Unit, KINDS};

pub mod kind;
pub mod kind_application;
pub mod kind_cgroup;
pub mod kind_priority;
pub mod kind_queue;

/// The levers shipped with ssdready.
pub const TABLE: &str = include_str!("../data/levers.table");

/// Facts a lever's `when` may test beyond the study's own
/// ([`crate::facts::KNOWN`]): what the study reads of the device for the
/// trials.
pub const EXTRA_FACTS: &[&str] = &["poll_queues", "large_read_split", "priority_raisable"];

/// What the study's own runs found that points at a lever as a verdict
/// rule that fired does (a lever's `rules` may name it): the kernel split
/// each of its large reads into [`SPLIT_AT_LEAST`] requests or more.
pub const SPLIT_FINDING: &str = "large-reads-split";
/// Requests per large read from which the split is a finding.
pub const SPLIT_AT_LEAST: f64 = 2.0;
/// The findings beside the verdict rules ([`fired`]).
pub const FINDINGS: &[&str] = &[SPLIT_FINDING];

/// What kind of thing a lever changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A setting of the device's queue (`/sys/block/DEV/queue/ATTR`), on
    /// the target's device and its stack's members: a setting of the host.
    Queue,
    /// The study's own runs from a control group of ssdready's own,
    /// without the user's throttle, quota or cpuset; no setting changes.
    Cgroup,
    /// The application's own choice: the job's options.
    #[default]
    Application,
}

impl Kind {
    /// The unit a recorded trial of this kind is made and ordered by.
    pub fn ops(self) -> &'static dyn LeverKind {
        kind::of_kind(self).1
    }
}

/// What a trial is judged on first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    #[default]
    Iops,
    Bandwidth,
    /// Mean latency.
    Mean,
    /// 99th percentile latency.
    P99,
    /// CPU per I/O.
    Cpu,
}

impl Metric {
    /// Every metric a trial reports, in the order shown.
    pub const ALL: [Metric; 5] = [
        Metric::Iops,
        Metric::Bandwidth,
        Metric::Mean,
        Metric::P99,
        Metric::Cpu,
    ];

    fn of(word: &str) -> Option<Metric> {
        Metric::ALL.into_iter().find(|m| m.word() == word)
    }

    /// The table's word for it.
    pub fn word(self) -> &'static str {
        match self {
            Metric::Iops => "iops",
            Metric::Bandwidth => "bandwidth",
            Metric::Mean => "mean",
            Metric::P99 => "p99",
            Metric::Cpu => "cpu",
        }
    }

    /// Its name in a sentence.
    pub fn label(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Bandwidth => "bandwidth",
            Metric::Mean => "mean latency",
            Metric::P99 => "p99 latency",
            Metric::Cpu => "CPU per I/O",
        }
    }

    /// Whether more of it is better (IOPS, bandwidth) or less (latency, CPU).
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::Bandwidth)
    }
}

/// The point a lever is tried at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum At {
    /// 4 KiB random reads at the peak's depth.
    #[default]
    Peak,
    /// 4 KiB random reads at the deepest depth the queue-depth sweep ran:
    /// where a limit on what is in flight (the device's request queue)
    /// binds, as its finding says.
    Deepest,
    /// 4 KiB random reads at QD 1.
    Qd1,
    /// 1 MiB sequential reads at QD 8.
    Large,
    /// 4 KiB sequential reads through the page cache.
    Buffered,
    /// 4 KiB random reads from as many threads as the CPUs online (or the
    /// peak's threads, where more), the peak's I/Os in flight shared among
    /// them: where a cpuset or a CPU quota binds, parallel work taking
    /// the CPUs it withholds.
    Parallel,
}

impl At {
    fn of(word: &str) -> Option<At> {
        match word {
            "peak" => Some(At::Peak),
            "deepest" => Some(At::Deepest),
            "qd1" => Some(At::Qd1),
            "large" => Some(At::Large),
            "buffered" => Some(At::Buffered),
            "parallel" => Some(At::Parallel),
            _ => None,
        }
    }
}

/// One lever of the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lever {
    pub id: String,
    /// What a trial of it records ([`Unit::kind`]).
    pub kind: Kind,
    /// Its kind's unit ([`kind::KINDS`]).
    pub unit: Unit,
    /// Queue levers: the file under `/sys/block/DEV/queue/`.
    pub attr: Option<String>,
    pub what: String,
    /// How its candidate values follow from the current one
    /// (`lever_values`: one form each).
    pub values: Option<Values>,
    pub when: Vec<Cond>,
    pub causes: Vec<Cause>,
    pub lifts: Vec<Cause>,
    pub rules: Vec<String>,
    pub at: At,
    pub measure: Metric,
    pub undo: String,
    pub permanent: Option<String>,
}

impl Lever {
    /// Whether it raises a cap ([`crate::lever_values::Form`]'s
    /// `raises_cap`): a request queue's size, a request's, a group's limit.
    pub fn raises_cap(&self) -> bool {
        self.values.as_ref().is_some_and(|v| v.raises_cap())
    }

    /// The limit of the study's groups it lifts on its own, if it does.
    pub fn lift(&self) -> Option<GroupLimit> {
        self.values.as_ref()?.limit()
    }

    /// What it lifts of the study's groups: its limit alone, the others
    /// kept, as the inventory shows them (every limit at once for a lever
    /// that lifts no one limit).
    pub fn lifted(&self, limits: Option<&Inventory>) -> Lift {
        match self.lift() {
            Some(g) => group_limits::lift(g, limits),
            None => Lift::all(),
        }
    }

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

/// How the study makes a lever's candidate, what it executes: nothing
/// outside the diagnosis reads a lever's kind of values to know.
#[derive(Clone, Debug, PartialEq)]
pub enum Apply {
    /// `value` written to `queue/ATTR` of each of the target's disks.
    Queue { attr: String, value: String },
    /// The runs from a control group of ssdready's own, these limits of
    /// the study's groups lifted.
    Escape(Lift),
    /// The job's own options; nothing of the host changes.
    Options(Vec<(String, String)>),
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

impl Apply {
    /// Whether it moves the study's process to a group of its own.
    pub fn moves_process(&self) -> bool {
        matches!(self, Apply::Escape(_))
    }
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
            l.unit = kind::by_word(rest).ok_or_else(|| {
                err(line, format!("kind '{rest}' (allowed: {})", kind::words()))
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
