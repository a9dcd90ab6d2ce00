//! The changes the study knows how to try, as data (`data/levers.table`,
//! read like the verdict rules): for each lever, what it changes, how its
//! candidate values follow from the current value and the facts, which
//! causes and facts make it worth trying, the point it is tried at, how it
//! is put back and how a user makes it last. Pure: the study reads the
//! current values and hands them in ([`Context`]); what comes out is the
//! candidates ([`candidates`]) and whether the lever applies at all
//! ([`applies`]).

use crate::facts::{Fact, Value};
use crate::limit::Cause;
use crate::rules::{Cond, RuleError};
use serde::{Deserialize, Serialize};
use ssdready_measured::group_limits::GroupLimit;
use std::collections::BTreeMap;

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
    fn of(word: &str) -> Option<Kind> {
        match word {
            "queue" => Some(Kind::Queue),
            "cgroup" => Some(Kind::Cgroup),
            "application" => Some(Kind::Application),
            _ => None,
        }
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

/// How a lever's candidate values follow from the current one.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// `none` first, then each scheduler the device offers.
    Offered,
    /// Twice the I/Os in flight at the point, at least four times the
    /// current value, at most 1024 or the device's own queue depth.
    Raise,
    /// `max_hw_sectors_kb`.
    HwMax,
    /// One value.
    Set(String),
    /// The current value times a factor, at most a ceiling.
    Scale(u64, u64),
    /// The job's options (`{qd}`, `{half_qd}`, `{quad_qd}`, `{quad_bs}`,
    /// `{threads}`, `{cpu_list}` filled from the point).
    Options(Vec<(String, String)>),
    /// io_uring, libaio and psync, each but the point's own.
    Engines,
    /// Twice the threads, the same I/Os in flight.
    Threads,
    /// Direct I/O against the page cache.
    Direct,
    /// Outside the study's control groups: every limit of theirs lifted
    /// at once.
    Outside,
    /// One limit of the study's control groups lifted on its own, the
    /// others kept ([`ssdready_measured::group_limits`]).
    Lift(GroupLimit),
}

/// One lever of the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lever {
    pub id: String,
    pub kind: Kind,
    /// Queue levers: the file under `/sys/block/DEV/queue/`.
    pub attr: Option<String>,
    pub what: String,
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
    /// The limit of the study's groups it lifts on its own, if it does.
    pub fn lift(&self) -> Option<GroupLimit> {
        match self.values {
            Some(Values::Lift(g)) => Some(g),
            _ => None,
        }
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
    let (word, rest) = text.split_once(' ').unwrap_or((text, ""));
    let rest = rest.trim();
    let bad = |why: &str| err(line, format!("values '{text}': {why}"));
    Ok(match word {
        "offered" => Values::Offered,
        "raise" => Values::Raise,
        "hw-max" => Values::HwMax,
        "engines" => Values::Engines,
        "threads" => Values::Threads,
        "direct" => Values::Direct,
        "outside" => Values::Outside,
        "lift" => Values::Lift(GroupLimit::of(rest).ok_or_else(|| {
            bad(&format!(
                "lift takes one of {}",
                GroupLimit::ALL.map(|g| g.word()).join(", ")
            ))
        })?),
        "set" if !rest.is_empty() => Values::Set(rest.into()),
        "scale" => {
            let n: Vec<u64> = rest.split(' ').filter_map(|x| x.parse().ok()).collect();
            match n[..] {
                [f, max] if f > 1 => Values::Scale(f, max),
                _ => return Err(bad("scale takes a factor above 1 and a ceiling")),
            }
        }
        "options" => {
            let kv: Option<Vec<(String, String)>> = rest
                .split(' ')
                .map(|o| o.split_once('=').map(|(k, v)| (k.into(), v.into())))
                .collect();
            match kv {
                Some(kv) if !kv.is_empty() => Values::Options(kv),
                _ => return Err(bad("options are KEY=VALUE, space-separated")),
            }
        }
        _ => {
            return Err(bad(
                "allowed: offered, raise, hw-max, set V, scale F MAX, options K=V…, engines, threads, direct, outside, lift LIMIT",
            ))
        }
    })
}

/// Set one key of a lever from its line.
fn set_key(l: &mut Lever, key: &str, rest: &str, line: usize) -> Result<(), RuleError> {
    match key {
        "kind" => {
            l.kind = Kind::of(rest).ok_or_else(|| {
                err(line, format!("kind '{rest}' (allowed: queue, cgroup, application)"))
            })?
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
        let missing = match () {
            _ if l.what.is_empty() => Some("what"),
            _ if l.values.is_none() => Some("values"),
            _ if l.kind == Kind::Queue && l.attr.is_none() => Some("attr"),
            _ if l.kind != Kind::Application && l.undo.is_empty() => Some("undo"),
            _ => None,
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

/// The point a lever is tried at, as the study resolved it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub rw: String,
    pub bs: u64,
    /// Depth per thread.
    pub qd: u32,
    pub threads: u32,
    /// The engine (None on an emulator: it brings its own).
    pub engine: Option<String>,
    pub direct: bool,
}

impl Point {
    /// In words: `4 KiB random reads at QD 32 × 1 thread`.
    pub fn describe(&self) -> String {
        let what = match self.rw.as_str() {
            "randread" => "random reads",
            "read" => "sequential reads",
            "randwrite" => "random writes",
            "write" => "sequential writes",
            _ => "mixed I/O",
        };
        let bs = match self.bs {
            b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
            b if b >= 1024 && b % 1024 == 0 => format!("{} KiB", b >> 10),
            b => format!("{b} B"),
        };
        let thr = match self.threads {
            1 => "1 thread".to_string(),
            n => format!("{n} threads"),
        };
        let cache = if self.direct {
            ""
        } else {
            " through the page cache"
        };
        format!("{bs} {what}{cache} at QD {} × {thr}", self.qd)
    }
}

/// What the study hands a lever: the facts, the named cause, the current
/// values of the target device's queue (`attr` → the file's text), and
/// the point.
#[derive(Clone, Debug, Default)]
pub struct Context {
    pub facts: BTreeMap<String, Fact>,
    pub cause: Cause,
    /// The target's device's queue files as read (`scheduler` as the
    /// kernel prints it: `none [mq-deadline] kyber`).
    pub queue: BTreeMap<String, String>,
    /// The device's own queue depth (SCSI `device/queue_depth`), a ceiling
    /// for `nr_requests`.
    pub queue_depth: Option<u64>,
    /// The CPUs the study may use, as a list (`0-3`).
    pub cpu_list: String,
    /// The most requests the kernel split one of the study's large reads
    /// into (the device's counted requests against its own I/Os, their
    /// bytes agreeing), where a run showed a split.
    pub large_read_split: Option<f64>,
    /// Whether the study may run its threads at a negative nice (root, or
    /// CAP_SYS_NICE): the counterfactual for other work that holds them.
    pub may_raise_priority: bool,
    /// What the engine sweep measured, one thread each: (engine, depth,
    /// IOPS). An engine it measured slower at the point's depth is not
    /// tried again.
    pub engines_measured: Vec<(String, u32, f64)>,
    /// The 4 KiB random-read queue-depth curve, one thread: (depth, IOPS).
    pub curve: Vec<(u32, f64)>,
    /// The peak of that curve, IOPS.
    pub peak_iops: Option<f64>,
    /// The device's own limit for 4 KiB random reads where something
    /// independent knows it (the model, a raw-device run); None where the
    /// only figure is the study's best run.
    pub device_limit_iops: Option<f64>,
    /// The scheduler sweep's costs against `none`: (scheduler, depth,
    /// IOPS lost percent).
    pub scheduler_costs: Vec<(String, u32, f64)>,
    /// The submitting thread's wait for a CPU at the peak, percent.
    pub cpu_wait_pct: Option<f64>,
    /// The inventory of what can cap the study's I/O, where it was read:
    /// which limits of its control groups hold, for the levers that lift
    /// them one at a time.
    pub limits: Option<ssdready_measured::limits::Inventory>,
}

/// An engine measured this much slower than the point's own, or more, at
/// its depth is not tried again (the sweep's turns already said so).
pub const ENGINE_SLOWER: f64 = 0.95;

/// Whether the engine sweep measured `engine` slower than the point's own
/// engine at the point's depth.
fn measured_slower(cx: &Context, p: &Point, engine: &str) -> bool {
    let at = |e: &str| {
        cx.engines_measured
            .iter()
            .find(|(x, qd, _)| x == e && *qd == p.qd)
            .map(|m| m.2)
    };
    match (p.engine.as_deref().and_then(at), at(engine)) {
        (Some(own), Some(other)) => other < ENGINE_SLOWER * own,
        _ => false,
    }
}

/// One candidate: the value shown (`none`, `1024`, `io_uring`), and for
/// an application lever the job's options that make it.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Candidate {
    pub value: String,
    pub options: Vec<(String, String)>,
}

fn cand(value: impl Into<String>) -> Candidate {
    Candidate {
        value: value.into(),
        options: Vec::new(),
    }
}

/// The lever's current value (None for application and cgroup levers,
/// and for a file the device does not have).
pub fn current(l: &Lever, cx: &Context) -> Option<String> {
    let text = cx.queue.get(l.attr.as_deref()?)?;
    match l.values {
        Some(Values::Offered) => ssdready_measured::limits::parse::schedulers(text).0,
        _ => Some(text.trim().to_string()),
    }
}

fn fill(v: &str, p: &Point, cx: &Context) -> String {
    v.replace("{qd}", &p.qd.to_string())
        .replace("{half_qd}", &(p.qd / 2).max(1).to_string())
        .replace("{quad_qd}", &(p.qd * 4).min(MAX_QD).to_string())
        .replace("{quad_bs}", &format!("{}k", (p.bs * 4).min(MAX_BS) >> 10))
        .replace("{threads}", &p.threads.to_string())
        .replace("{cpu_list}", &cx.cpu_list)
}

/// The deepest queue and the largest block an application lever tries.
pub const MAX_QD: u32 = 256;
pub const MAX_BS: u64 = 4 << 20;

/// The candidates of a queue lever from its current value.
fn queue_candidates(l: &Lever, cx: &Context, p: &Point, now: &str) -> Vec<Candidate> {
    let n = now.parse::<u64>().ok();
    let out: Vec<Candidate> = match l.values.as_ref() {
        Some(Values::Offered) => {
            let (_, offered) = ssdready_measured::limits::parse::schedulers(
                cx.queue.get("scheduler").map_or("", |s| s),
            );
            let mut v: Vec<String> = offered.into_iter().filter(|s| s != now).collect();
            v.sort_by_key(|s| s != "none");
            v.into_iter().map(cand).collect()
        }
        Some(Values::Raise) => {
            let in_flight = u64::from(p.qd) * u64::from(p.threads.max(1));
            let ceiling = cx.queue_depth.unwrap_or(1024).min(1024);
            let want = (2 * in_flight)
                .next_power_of_two()
                .max(4 * n.unwrap_or(0))
                .min(ceiling);
            // Nothing to raise where the queue already admits what the
            // device takes.
            match n {
                Some(now) if want <= now => Vec::new(),
                _ => vec![cand(want.to_string())],
            }
        }
        Some(Values::HwMax) => cx
            .queue
            .get("max_hw_sectors_kb")
            .map(|h| cand(h.trim()))
            .into_iter()
            .collect(),
        Some(Values::Set(v)) => vec![cand(v.clone())],
        Some(Values::Scale(f, max)) => n
            .map(|n| cand((n.max(1) * f).min(*max).to_string()))
            .into_iter()
            .collect(),
        _ => Vec::new(),
    };
    // A candidate equal to the current value (or, as a number, not above
    // it where the lever raises) tries nothing.
    out.into_iter()
        .filter(|c| c.value != now)
        .filter(|c| match (&l.values, n, c.value.parse::<u64>().ok()) {
            (Some(Values::Raise | Values::HwMax | Values::Scale(..)), Some(a), Some(b)) => b > a,
            _ => true,
        })
        .collect()
}

/// The candidate values of a lever at point `p`, best guess first; empty
/// when none differs from what is in effect.
pub fn candidates(l: &Lever, cx: &Context, p: &Point) -> Vec<Candidate> {
    if l.kind == Kind::Queue {
        return match current(l, cx) {
            Some(now) => queue_candidates(l, cx, p, &now),
            None => Vec::new(),
        };
    }
    let opt = |k: &str, v: String| (k.to_string(), v);
    match l.values.as_ref() {
        Some(Values::Outside) => vec![cand("outside the study's group")],
        Some(Values::Lift(g)) => {
            let kept = ssdready_measured::group_limits::lift(*g, cx.limits.as_ref()).kept;
            let value = match kept.is_empty() {
                true => format!("without {}", g.words()),
                false => format!("without {}, {} kept", g.words(), kept.join(" and ")),
            };
            vec![cand(value)]
        }
        Some(Values::Options(kv)) => {
            let options: Vec<(String, String)> =
                kv.iter().map(|(k, v)| opt(k, fill(v, p, cx))).collect();
            let same = options.iter().all(|(k, v)| match k.as_str() {
                "ioengine" => p.engine.as_deref() == Some(v.as_str()),
                "iodepth" => v.parse() == Ok(p.qd),
                "bs" => v.strip_suffix('k').and_then(|k| k.parse::<u64>().ok()) == Some(p.bs >> 10),
                _ => false,
            });
            if same {
                return Vec::new();
            }
            let value = options
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(" ");
            vec![Candidate { value, options }]
        }
        Some(Values::Engines) => ["io_uring", "libaio", "psync"]
            .into_iter()
            .filter(|e| p.engine.as_deref().is_some_and(|x| x != *e))
            .filter(|e| !measured_slower(cx, p, e))
            .map(|e| Candidate {
                value: e.into(),
                options: vec![opt("ioengine", e.into())],
            })
            .collect(),
        Some(Values::Threads) if p.qd >= 2 => vec![Candidate {
            value: format!("{} threads × QD {}", p.threads * 2, p.qd / 2),
            options: vec![
                opt("numjobs", (p.threads * 2).to_string()),
                opt("iodepth", (p.qd / 2).to_string()),
            ],
        }],
        Some(Values::Direct) => vec![Candidate {
            value: format!("direct={}", u8::from(!p.direct)),
            options: vec![opt("direct", u8::from(!p.direct).to_string())],
        }],
        _ => Vec::new(),
    }
}

/// The facts with the lever context's own ([`EXTRA_FACTS`]).
fn with_extras(cx: &Context) -> BTreeMap<String, Fact> {
    let mut f = cx.facts.clone();
    let polled = cx
        .queue
        .get("io_poll")
        .map(|v| v.trim() == "1")
        .unwrap_or(false);
    let num = |v: f64, unit: &str| Fact {
        value: Value::Num(v),
        unit: unit.into(),
        noise_pct: None,
        margin_pct: None,
        err: None,
        disagree: None,
        runs: Vec::new(),
    };
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
    match l.kind {
        Kind::Queue => disks
            .iter()
            .map(|d| {
                format!(
                    "ACTION==\"add|change\", KERNEL==\"{d}\", ATTR{{queue/{attr}}}=\"{}\"",
                    c.value
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Kind::Application => format!("fio/ssdready job options: {options}"),
        Kind::Cgroup => String::new(),
    }
}

#[cfg(test)]
#[path = "levers_tests.rs"]
mod tests;
