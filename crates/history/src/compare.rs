//! Two results side by side: which figures moved by more than the noise.
//!
//! A figure's change is `(B − A) / A`. Its noise is the larger of the two
//! sides' noise for it (each side's own estimate: repeats in a study, the
//! per-second series in a run; see [`crate::figures`]), at least
//! [`NOISE_FLOOR_PCT`]; a side with no estimate counts as
//! [`UNKNOWN_NOISE_PCT`]. A change within the noise is `same` — judged as
//! a ratio, B/A between 1 / (1 + noise) and 1 + noise, so that a fall
//! weighs as much as a rise by the same factor; beyond it, `better` or
//! `worse` by the figure's direction (`changed` for figures that have
//! none, such as the knee's depth).
//!
//! Two results are compared only when they measured the same thing: two
//! studies (point by point: a point measured by one alone is listed, not
//! judged), or two runs whose jobs ran the same workload (the options that
//! shape the I/O, the clock). Otherwise the comparison says why and judges
//! nothing. Different targets or platforms are compared, and said.
//!
//! The JSON form ([`Comparison`], `compare.json`) is documented in
//! `docs/compare-schema.md`.

use crate::dates::fmt_minute;
use crate::figures::{Better, Fingerprint, Kind, Series, Side, Unit};
use serde::Serialize;
use serde_json::Value;
use ssdready_measured::curve::CurvePoint;
use std::fmt::Write;
use std::path::PathBuf;

/// Name of the comparison schema.
pub const SCHEMA: &str = "ssdready.compare";
/// Version of the comparison schema.
pub const SCHEMA_VERSION: u32 = 1;
/// Below this change, percent, a figure is the same whatever the noise
/// estimates say (a quiet machine's repeats can agree closer than the next
/// run will).
pub const NOISE_FLOOR_PCT: f64 = 2.0;
/// The noise assumed when neither side has an estimate, percent.
pub const UNKNOWN_NOISE_PCT: f64 = 10.0;

/// Where a side came from, as the user named it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Origin {
    /// As given on the command line.
    pub given: String,
    /// The JSON file read.
    pub path: Option<PathBuf>,
    /// The history id, when named by one (or found in the history).
    pub history_id: Option<i64>,
}

/// One side as the comparison shows it.
#[derive(Clone, Debug, Serialize)]
pub struct SideInfo {
    #[serde(flatten)]
    pub origin: Origin,
    pub kind: Kind,
    pub target: String,
    pub started: String,
    pub started_unix_ms: u64,
    pub workload: String,
    pub platform: Fingerprint,
    pub runtime_s: f64,
    pub interrupted: bool,
    pub noise_basis: String,
    /// A study's queue-depth curve (for overlays).
    pub curve: Vec<CurvePoint>,
    /// A run's per-second IOPS (for overlays).
    pub series: Vec<Series>,
}

/// A figure's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    /// Within the noise.
    Same,
    /// Beyond the noise, for a figure with no better direction.
    Changed,
    /// Measured by A alone.
    OnlyA,
    /// Measured by B alone.
    OnlyB,
}

impl Verdict {
    fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Same => "same",
            Verdict::Changed => "changed",
            Verdict::OnlyA => "only in A",
            Verdict::OnlyB => "only in B",
        }
    }
}

/// One figure side by side.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub name: String,
    pub label: String,
    pub unit: Unit,
    pub better: Better,
    pub key: bool,
    pub a: Option<f64>,
    pub b: Option<f64>,
    /// (B − A) / A, percent.
    pub change_pct: Option<f64>,
    /// The noise it was judged against, percent.
    pub noise_pct: f64,
    /// Where that noise comes from.
    pub noise_source: String,
    pub verdict: Verdict,
}

/// A whole comparison (`compare.json`).
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    pub schema: String,
    pub schema_version: u32,
    /// `ssdready X.Y.Z`.
    pub tool: String,
    pub a: SideInfo,
    pub b: SideInfo,
    /// False when the two measured different things (then no verdicts).
    pub comparable: bool,
    /// Why not, one reason per entry.
    pub not_comparable: Vec<String>,
    /// What differs between the two besides the figures (targets,
    /// platforms, run lengths).
    pub notes: Vec<String>,
    pub noise_floor_pct: f64,
    pub unknown_noise_pct: f64,
    pub figures: Vec<Row>,
    /// Figures beyond the noise, and how they split.
    pub differences: usize,
    pub better: usize,
    pub worse: usize,
    /// Key figures that got worse beyond the noise (what `--baseline` fails on).
    pub regressions: Vec<String>,
}

fn info(origin: Origin, s: &Side) -> SideInfo {
    SideInfo {
        origin,
        kind: s.kind,
        target: s.target.clone(),
        started: crate::dates::fmt_iso(s.started_unix_ms as i64),
        started_unix_ms: s.started_unix_ms,
        workload: s.workload.clone(),
        platform: s.platform.clone(),
        runtime_s: s.runtime_s,
        interrupted: s.interrupted,
        noise_basis: s.noise_basis.clone(),
        curve: s.curve.clone(),
        series: s.series.clone(),
    }
}

/// A job's name and the options that shape its I/O ([`crate::figures::job_workload`]).
pub type JobWorkload = (String, std::collections::BTreeMap<String, Value>);

/// Why two results cannot be compared (empty: they can).
fn incomparable(a: &Side, b: &Side) -> Vec<String> {
    if a.kind != b.kind {
        return vec![format!(
            "A is a {} and B a {}: compare a study with a study, a run with a run",
            a.kind.as_str(),
            b.kind.as_str()
        )];
    }
    if a.kind == Kind::Study {
        return Vec::new();
    }
    workload_differences(&a.jobs, &b.jobs)
}

/// How two runs' jobs differ in workload (empty: the same workloads, job
/// by job in order).
pub fn workload_differences(a: &[JobWorkload], b: &[JobWorkload]) -> Vec<String> {
    if a == b {
        return Vec::new();
    }
    let words = |j: &[JobWorkload]| {
        j.iter()
            .map(|(n, w)| format!("'{n}': {}", crate::figures::describe(w)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if a.len() != b.len() {
        return vec![format!(
            "A ran {} job(s) ({}) and B {} ({})",
            a.len(),
            words(a),
            b.len(),
            words(b)
        )];
    }
    let mut why = Vec::new();
    for ((na, wa), (nb, wb)) in a.iter().zip(b) {
        let keys: std::collections::BTreeSet<&String> = wa.keys().chain(wb.keys()).collect();
        let shown = |v: Option<&Value>| v.map_or("unset".to_string(), |v| v.to_string());
        let diffs: Vec<String> = keys
            .into_iter()
            .filter(|k| wa.get(*k) != wb.get(*k))
            .map(|k| format!("{k} {} vs {}", shown(wa.get(k)), shown(wb.get(k))))
            .collect();
        if !diffs.is_empty() {
            let job = if na == nb {
                format!("job '{na}'")
            } else {
                format!("jobs '{na}' and '{nb}'")
            };
            why.push(format!(
                "{job} ran different workloads: {}",
                diffs.join(", ")
            ));
        }
    }
    why
}

/// What differs besides the figures.
fn notes(a: &Side, b: &Side) -> Vec<String> {
    let mut n = Vec::new();
    if a.target != b.target {
        n.push(format!(
            "the targets differ (A {}, B {}): the differences are the targets' as much as the platform's",
            a.target, b.target
        ));
    }
    let (pa, pb) = (&a.platform, &b.platform);
    let mut plat = Vec::new();
    if pa.kernel != pb.kernel {
        plat.push(format!("kernel {} vs {}", pa.kernel, pb.kernel));
    }
    if pa.cpu_model != pb.cpu_model || pa.cpus != pb.cpus {
        plat.push(format!(
            "{} × {} vs {} × {}",
            pa.cpus, pa.cpu_model, pb.cpus, pb.cpu_model
        ));
    }
    if pa.vm.is_some() && pb.vm.is_some() && pa.vm != pb.vm {
        let w = |v: Option<bool>| {
            if v == Some(true) {
                "a VM"
            } else {
                "bare metal"
            }
        };
        plat.push(format!("{} vs {}", w(pa.vm), w(pb.vm)));
    }
    if !plat.is_empty() {
        n.push(format!("the platforms differ: {}", plat.join("; ")));
    }
    if a.kind == Kind::Study && a.workload != b.workload {
        n.push(format!(
            "A is a {}, B a {}: only the points both measured are judged",
            a.workload, b.workload
        ));
    }
    if a.kind == Kind::Run && a.jobs.iter().map(|j| &j.0).ne(b.jobs.iter().map(|j| &j.0)) {
        n.push("the jobs' names differ: they are matched by position".into());
    }
    let (ra, rb) = (a.runtime_s, b.runtime_s);
    if ra > 0.0 && rb > 0.0 && (ra - rb).abs() > 0.05 * ra.max(rb) {
        n.push(format!("runs of different lengths (A {ra:.1} s, B {rb:.1} s): longer runs see more of the device's slow events"));
    }
    for (s, name) in [(a, "A"), (b, "B")] {
        if s.interrupted {
            n.push(format!("{name} was interrupted: it covers what ran"));
        }
    }
    n
}

/// The figure's row in B's terms of A's: names of B's job `i` renamed to A's.
fn rename_b(a: &Side, b: &Side, name: &str) -> String {
    for ((na, _), (nb, _)) in a.jobs.iter().zip(&b.jobs) {
        if let Some(rest) = name.strip_prefix(&format!("{nb}.")) {
            return format!("{na}.{rest}");
        }
    }
    name.to_string()
}

/// The verdict on a change from `a` to `b` against a relative noise:
/// judged as a ratio, so that a rise and a fall by the same factor weigh
/// the same (a 5-fold drop is beyond a 150 % noise, though it is only
/// −80 %): beyond the noise when b/a is over 1 + noise or under
/// 1 / (1 + noise).
fn judge(better: Better, a: f64, b: f64, noise_pct: f64) -> Verdict {
    let limit = 1.0 + noise_pct / 100.0;
    let up = if a == b {
        return Verdict::Same;
    } else if a > 0.0 && b > 0.0 {
        let ratio = b / a;
        if ratio <= limit && ratio >= 1.0 / limit {
            return Verdict::Same;
        }
        ratio > 1.0
    } else {
        // A zero or negative value: no ratio; any change is beyond it.
        b > a
    };
    match (better, up) {
        (Better::Neither, _) => Verdict::Changed,
        (Better::Higher, true) | (Better::Lower, false) => Verdict::Better,
        _ => Verdict::Worse,
    }
}

fn rows(a: &Side, b: &Side) -> Vec<Row> {
    let b_named: Vec<(String, &crate::figures::Figure)> = b
        .figures
        .iter()
        .map(|f| (rename_b(a, b, &f.name), f))
        .collect();
    let mut out = Vec::new();
    for fa in &a.figures {
        let fb = b_named.iter().find(|(n, _)| *n == fa.name).map(|(_, f)| *f);
        let (noise, source) = match (fa.noise_pct, fb.and_then(|f| f.noise_pct)) {
            (Some(x), Some(y)) if y > x => {
                (y, format!("B: {}", fb.map_or("", |f| &f.noise_source)))
            }
            (Some(x), _) => (x, format!("A: {}", fa.noise_source)),
            (None, Some(y)) => (y, format!("B: {}", fb.map_or("", |f| &f.noise_source))),
            (None, None) => (
                UNKNOWN_NOISE_PCT,
                "no estimate on either side: assumed".into(),
            ),
        };
        let (noise, source) = if noise < NOISE_FLOOR_PCT {
            (
                NOISE_FLOOR_PCT,
                format!("the floor ({source}: {noise:.2} %)"),
            )
        } else {
            (noise, source)
        };
        let change = fb.and_then(|fb| match (fa.value, fb.value) {
            (x, y) if x == y => Some(0.0),
            (x, y) if x != 0.0 => Some(100.0 * (y - x) / x.abs()),
            _ => None,
        });
        out.push(Row {
            name: fa.name.clone(),
            label: fa.label.clone(),
            unit: fa.unit,
            better: fa.better,
            key: fa.key,
            a: Some(fa.value),
            b: fb.map(|f| f.value),
            change_pct: change,
            noise_pct: noise,
            noise_source: source,
            verdict: match fb {
                Some(fb) => judge(fa.better, fa.value, fb.value, noise),
                None => Verdict::OnlyA,
            },
        });
    }
    for (name, fb) in &b_named {
        if a.figure(name).is_none() {
            out.push(Row {
                name: name.clone(),
                label: fb.label.clone(),
                unit: fb.unit,
                better: fb.better,
                key: fb.key,
                a: None,
                b: Some(fb.value),
                change_pct: None,
                noise_pct: fb
                    .noise_pct
                    .unwrap_or(UNKNOWN_NOISE_PCT)
                    .max(NOISE_FLOOR_PCT),
                noise_source: format!("B: {}", fb.noise_source),
                verdict: Verdict::OnlyB,
            });
        }
    }
    out
}

/// Compare A (the reference: a baseline) with B.
pub fn compare(a: (Origin, &Side), b: (Origin, &Side)) -> Comparison {
    let (sa, sb) = (a.1, b.1);
    let mut why = incomparable(sa, sb);
    let mut figures = if why.is_empty() {
        rows(sa, sb)
    } else {
        Vec::new()
    };
    let judged = |r: &Row| !matches!(r.verdict, Verdict::OnlyA | Verdict::OnlyB);
    if why.is_empty() && !figures.iter().any(judged) {
        why.push("no figure was measured by both".into());
        figures.clear();
    }
    let count = |v: Verdict| figures.iter().filter(|r| r.verdict == v).count();
    let (better, worse) = (count(Verdict::Better), count(Verdict::Worse));
    Comparison {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        notes: if why.is_empty() {
            notes(sa, sb)
        } else {
            Vec::new()
        },
        comparable: why.is_empty(),
        not_comparable: why,
        noise_floor_pct: NOISE_FLOOR_PCT,
        unknown_noise_pct: UNKNOWN_NOISE_PCT,
        differences: better + worse + count(Verdict::Changed),
        better,
        worse,
        regressions: figures
            .iter()
            .filter(|r| r.key && r.verdict == Verdict::Worse)
            .map(|r| r.name.clone())
            .collect(),
        figures,
        a: info(a.0, sa),
        b: info(b.0, sb),
    }
}

fn describe(s: &SideInfo) -> String {
    let mut from = Vec::new();
    if let Some(id) = s.origin.history_id {
        from.push(format!("history #{id}"));
    }
    if let Some(p) = &s.origin.path {
        from.push(p.display().to_string());
    }
    format!(
        "{} on {}, {} UTC ({})",
        s.workload
            .strip_suffix(&format!(" of {}", s.target))
            .unwrap_or(&s.workload),
        s.target,
        fmt_minute(s.started_unix_ms as i64),
        from.join(", ")
    )
}

fn fmt_change(c: Option<f64>) -> String {
    c.map_or("-".into(), |c| format!("{c:+.1} %"))
}

/// The figures shown, one line each: A, B, the change, the noise and the
/// verdict (nothing when none is shown).
fn figures_table(out: &mut String, shown: &[&Row]) {
    if shown.is_empty() {
        return;
    }
    let w = shown
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        out,
        "\n{:<w$}  {:>11}  {:>11}  {:>9}  {:>7}  verdict",
        "figure", "A", "B", "change", "noise"
    );
    for r in shown {
        let v = |x: Option<f64>| x.map_or("-".into(), |x| r.unit.fmt(x));
        let _ = writeln!(
            out,
            "{:<w$}  {:>11}  {:>11}  {:>9}  {:>5.1} %  {}{}",
            r.label,
            v(r.a),
            v(r.b),
            fmt_change(r.change_pct),
            r.noise_pct,
            r.verdict.word(),
            if r.key && r.verdict == Verdict::Worse {
                " (key figure)"
            } else {
                ""
            }
        );
    }
}

/// The comparison as text: the differences beyond the noise, side by
/// side (every figure with `all`), then the counts.
pub fn render_text(c: &Comparison, all: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {}", describe(&c.a));
    let _ = writeln!(out, "B: {}", describe(&c.b));
    if !c.comparable {
        let _ = writeln!(
            out,
            "not comparable: {}; no differences are claimed",
            c.not_comparable.join("; ")
        );
        return out;
    }
    for n in &c.notes {
        let _ = writeln!(out, "note: {n}");
    }
    let _ = writeln!(out, "noise, A: {}", c.a.noise_basis);
    let _ = writeln!(out, "noise, B: {}", c.b.noise_basis);
    let _ = writeln!(
        out,
        "a change within the larger of the two noises (at least {} %) is the same",
        c.noise_floor_pct
    );
    let shown: Vec<&Row> = c
        .figures
        .iter()
        .filter(|r| {
            all || matches!(
                r.verdict,
                Verdict::Better | Verdict::Worse | Verdict::Changed
            )
        })
        .collect();
    figures_table(&mut out, &shown);
    let same = c
        .figures
        .iter()
        .filter(|r| r.verdict == Verdict::Same)
        .count();
    let only = |v: Verdict| c.figures.iter().filter(|r| r.verdict == v).count();
    let _ = write!(
        out,
        "\n{}",
        match c.differences {
            0 => format!("no differences beyond the noise ({same} figures compared)"),
            n => format!(
                "{n} difference(s) beyond the noise ({} worse, {} better, {} changed); {same} figure(s) within it",
                c.worse,
                c.better,
                n - c.worse - c.better
            ),
        }
    );
    for (v, side) in [(Verdict::OnlyA, "A"), (Verdict::OnlyB, "B")] {
        if only(v) > 0 {
            let _ = write!(out, "; {} measured only in {side}", only(v));
        }
    }
    out.push('\n');
    out
}

/// What a regression check prints: the key figures that got worse.
pub fn render_regressions(c: &Comparison) -> String {
    let mut out = String::new();
    let worse: Vec<&Row> = c
        .figures
        .iter()
        .filter(|r| c.regressions.contains(&r.name))
        .collect();
    let _ = writeln!(
        out,
        "regression against the baseline ({}): {} key figure(s) worse beyond the noise",
        describe(&c.a),
        worse.len()
    );
    for r in worse {
        let v = |x: Option<f64>| x.map_or("-".into(), |x| r.unit.fmt(x));
        let _ = writeln!(
            out,
            "  {}: {} → {} ({}, noise {:.1} %)",
            r.label,
            v(r.a),
            v(r.b),
            fmt_change(r.change_pct),
            r.noise_pct
        );
    }
    out
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
