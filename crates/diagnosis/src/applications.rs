//! The study's "applications" section: application workloads (small files,
//! SQLite OLTP, fdatasync log appends; `ssdready app`) in the target's
//! directory, each at a few concurrency levels, set against the raw figures
//! of the same study, and judged by their own verdict rules
//! (`data/applications.rules`, the same language as the main rules).
//!
//! The question is the one Samsung's "System-wide Issues for Efficient Use
//! of E-SSD" asked of TPC-C on MySQL: how much of the device's speed does an
//! application see? An application's operation costs the device a number
//! of I/Os (its reads, writes and flushes per operation, from
//! `/sys/block/X/stat`); the I/Os per second it makes the device do, against
//! the device's raw 4 KiB random-read limit measured by the same study,
//! says how much of the device it uses. A small share with a flush per
//! operation is a workload bound by sync latency, not by the device's
//! bandwidth.

pub use crate::app_figures::{AppFigure, CACHE_PREFIX};

use crate::facts::{Fact, Value};
use crate::rules;
use ssdready_measured::record::Verdict;
use std::collections::BTreeMap;

/// The rules of this section.
pub const RULES: &str = include_str!("../data/applications.rules");

/// The facts this section gives its rules.
pub const KNOWN: &[&str] = &[
    "app_raw_iops",
    "app_fdatasync_p99",
    "app_fdatasync_rate",
    "app_fdatasync_share_pct",
    "app_sqlite_tps",
    "app_sqlite_jobs",
    "app_sqlite_share_pct",
    "app_sqlite_flushes_per_tx",
    "app_sqlite_writes_per_tx",
    "app_sqlite_scaling",
    "app_small_files_tps",
    "app_small_files_amplification",
    "app_best",
    "app_best_share_pct",
    "app_cache_fit_reads_per_tx",
    "app_cache_fit_tps",
    "app_cache_small_reads_per_tx",
    "app_cache_small_cached_pct",
    "app_cache_small_tps",
    "app_cache_rate_change_pct",
];

fn fact(v: f64, unit: &str, run: &AppFigure) -> Fact {
    Fact::of(
        Value::Num(v),
        unit,
        vec![format!("app-{}-{}", run.name, run.jobs)],
    )
}

fn text(t: String, run: &AppFigure) -> Fact {
    Fact::of(
        Value::Text(t),
        "text",
        vec![format!("app-{}-{}", run.name, run.jobs)],
    )
}

/// The facts of the section's figures.
pub fn facts(points: &[AppFigure]) -> BTreeMap<String, Fact> {
    let mut m = BTreeMap::new();
    if let Some(p) = points.iter().find(|p| p.raw_iops.is_some()) {
        m.insert(
            "app_raw_iops".into(),
            fact(p.raw_iops.unwrap_or(0.0), "iops", p),
        );
    }
    if let Some(p) = first(points, "fdatasync") {
        m.insert(
            "app_fdatasync_p99".into(),
            fact(p.lat_p99_ns as f64, "ns", p),
        );
        m.insert(
            "app_fdatasync_rate".into(),
            fact(p.ops_per_s.round(), "count", p),
        );
        if let Some(s) = p.share_of_raw_pct {
            m.insert("app_fdatasync_share_pct".into(), fact(s, "pct", p));
        }
    }
    sqlite_facts(points, &mut m);
    if let Some(p) = best_of(points, "small-files") {
        m.insert(
            "app_small_files_tps".into(),
            fact(p.ops_per_s.round(), "count", p),
        );
        if let Some(a) = p.write_amplification {
            m.insert("app_small_files_amplification".into(), fact(a, "ratio", p));
        }
    }
    best_facts(points, &mut m);
    cache_facts(points, &mut m);
    m
}

/// The application's point with the fewest jobs.
fn first<'a>(points: &'a [AppFigure], name: &str) -> Option<&'a AppFigure> {
    points
        .iter()
        .filter(|p| p.name == name)
        .min_by_key(|p| p.jobs)
}

/// The application's fastest point.
fn best_of<'a>(points: &'a [AppFigure], name: &str) -> Option<&'a AppFigure> {
    points
        .iter()
        .filter(|p| p.name == name)
        .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s))
}

/// SQLite's best transactions per second, what each cost, and how it
/// scaled from its first point.
fn sqlite_facts(points: &[AppFigure], m: &mut BTreeMap<String, Fact>) {
    let Some(p) = best_of(points, "sqlite") else {
        return;
    };
    m.insert(
        "app_sqlite_tps".into(),
        fact(p.ops_per_s.round(), "count", p),
    );
    m.insert("app_sqlite_jobs".into(), fact(p.jobs as f64, "count", p));
    if let Some(s) = p.share_of_raw_pct {
        m.insert("app_sqlite_share_pct".into(), fact(s, "pct", p));
    }
    if let Some(f) = p.flushes_per_op {
        m.insert("app_sqlite_flushes_per_tx".into(), fact(f, "count", p));
    }
    if let Some(w) = p.writes_per_op {
        m.insert("app_sqlite_writes_per_tx".into(), fact(w, "count", p));
    }
    if let Some(one) = first(points, "sqlite").filter(|o| o.jobs < p.jobs && o.ops_per_s > 0.0) {
        m.insert(
            "app_sqlite_scaling".into(),
            fact(p.ops_per_s / one.ops_per_s, "ratio", p),
        );
    }
}

/// The application that got the largest share of the raw device.
fn best_facts(points: &[AppFigure], m: &mut BTreeMap<String, Fact>) {
    let Some(p) = points
        .iter()
        .filter(|p| p.share_of_raw_pct.is_some())
        .max_by(|a, b| {
            a.share_of_raw_pct
                .unwrap_or(0.0)
                .total_cmp(&b.share_of_raw_pct.unwrap_or(0.0))
        })
    else {
        return;
    };
    m.insert(
        "app_best".into(),
        text(format!("{} at {} jobs", p.name, p.jobs), p),
    );
    m.insert(
        "app_best_share_pct".into(),
        fact(p.share_of_raw_pct.unwrap_or(0.0), "pct", p),
    );
}

/// The cache effect: the largest and the smallest memory limit.
fn cache_facts(points: &[AppFigure], m: &mut BTreeMap<String, Fact>) {
    let mut cache: Vec<&AppFigure> = points
        .iter()
        .filter(|p| p.name.starts_with(CACHE_PREFIX) && p.memory_max.is_some())
        .collect();
    if cache.len() < 2 {
        return;
    }
    cache.sort_by_key(|p| std::cmp::Reverse(p.memory_max));
    let (fit, small) = (cache[0], cache[cache.len() - 1]);
    let (Some(rf), Some(rs)) = (fit.reads_per_op, small.reads_per_op) else {
        return;
    };
    m.insert("app_cache_fit_reads_per_tx".into(), fact(rf, "count", fit));
    m.insert(
        "app_cache_fit_tps".into(),
        fact(fit.ops_per_s.round(), "count", fit),
    );
    m.insert(
        "app_cache_small_reads_per_tx".into(),
        fact(rs, "count", small),
    );
    m.insert(
        "app_cache_small_tps".into(),
        fact(small.ops_per_s.round(), "count", small),
    );
    if let Some(c) = small.cached_share {
        m.insert(
            "app_cache_small_cached_pct".into(),
            fact((c * 100.0).min(100.0), "pct", small),
        );
    }
    if fit.ops_per_s > 0.0 {
        m.insert(
            "app_cache_rate_change_pct".into(),
            fact(
                (small.ops_per_s / fit.ops_per_s - 1.0) * 100.0,
                "pct",
                small,
            ),
        );
    }
}

/// The section's facts and verdicts.
pub fn judge(points: &[AppFigure], interrupted: bool) -> (BTreeMap<String, Fact>, Vec<Verdict>) {
    let facts = facts(points);
    let rules =
        rules::parse(RULES).expect("the shipped application rules parse (a unit test checks)");
    let ctx = rules::Context {
        interrupted,
        ..Default::default()
    };
    let verdicts = rules::judge(&rules, &facts, &ctx);
    (facts, verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(name: &str, jobs: u32, ops: f64, writes: f64, flushes: f64, p99: u64) -> AppFigure {
        let mut p = AppFigure {
            name: name.into(),
            jobs,
            op: "transaction".into(),
            ops_per_s: ops,
            lat_p99_ns: p99,
            reads_per_op: Some(0.0),
            writes_per_op: Some(writes),
            flushes_per_op: Some(flushes),
            ..Default::default()
        };
        p.set_raw(Some(100_000.0));
        p
    }

    #[test]
    fn the_rules_parse_and_use_only_known_facts() {
        let rules = rules::parse(RULES).unwrap();
        assert!(!rules.is_empty());
        for r in &rules {
            let mut names: Vec<String> = r.when.iter().map(|c| c.fact.clone()).collect();
            names.extend(rules::template_facts(&r.finding));
            names.extend(rules::template_facts(&r.recommendation));
            for n in names {
                assert!(
                    KNOWN.contains(&n.as_str()),
                    "rule {} uses unknown fact {n}",
                    r.id
                );
            }
        }
    }

    #[test]
    fn reads_that_appear_as_the_cache_shrinks_are_the_cache_effect() {
        let cache = |mib: u64, share: f64, reads: f64, tps: f64| {
            let mut p = point(&format!("{CACHE_PREFIX}{mib}m"), 1, tps, 3.0, 1.0, 1);
            p.memory_max = Some(mib << 20);
            p.cached_share = Some(share);
            p.reads_per_op = Some(reads);
            p
        };
        let pts = vec![
            cache(13, 0.24, 1.6, 800.0),
            cache(90, 1.01, 0.0, 1600.0),
            cache(22, 0.48, 0.9, 1000.0),
        ];
        let (facts, v) = judge(&pts, false);
        assert_eq!(facts["app_cache_fit_reads_per_tx"].num(), Some(0.0));
        assert_eq!(facts["app_cache_small_reads_per_tx"].num(), Some(1.6));
        assert_eq!(facts["app_cache_small_cached_pct"].num(), Some(24.0));
        assert_eq!(facts["app_cache_rate_change_pct"].num(), Some(-50.0));
        let ids: Vec<&str> = v.iter().map(|v| v.rule.as_str()).collect();
        assert!(ids.contains(&"app-cache-effect"), "{ids:?}");
        // No reads at the small limit either: no cache effect to report,
        // and the sqlite facts are not taken from the cache points.
        let (facts, v) = judge(
            &[cache(90, 1.0, 0.0, 1600.0), cache(13, 0.9, 0.01, 1500.0)],
            false,
        );
        assert!(!facts.contains_key("app_sqlite_tps"));
        assert!(!v.iter().any(|v| v.rule == "app-cache-effect"), "{v:?}");
    }

    #[test]
    fn a_sync_bound_database_and_a_slow_log_are_called_so() {
        let pts = vec![
            point("fdatasync", 1, 60.0, 2.0, 1.0, 25_000_000),
            point("sqlite", 1, 50.0, 5.0, 2.0, 30_000_000),
            point("sqlite", 4, 55.0, 5.0, 2.0, 90_000_000),
        ];
        assert_eq!(pts[1].device_iops, Some(250.0));
        assert_eq!(pts[1].share_of_raw_pct, Some(0.25));
        let (facts, v) = judge(&pts, false);
        assert_eq!(facts["app_sqlite_jobs"].num(), Some(4.0));
        assert!((facts["app_sqlite_scaling"].num().unwrap() - 1.1).abs() < 1e-9);
        let ids: Vec<&str> = v.iter().map(|v| v.rule.as_str()).collect();
        assert!(ids.contains(&"app-fsync-misses-etcd"), "{ids:?}");
        assert!(ids.contains(&"app-sync-bound"), "{ids:?}");
        assert!(!ids.contains(&"app-fsync-meets-etcd"), "{ids:?}");
        // A fast log: the other verdict.
        let (_, v) = judge(&[point("fdatasync", 1, 5000.0, 2.0, 1.0, 300_000)], false);
        assert_eq!(v[0].rule, "app-fsync-meets-etcd");
        assert!(v[0].finding.contains("300"), "{}", v[0].finding);
    }
}
