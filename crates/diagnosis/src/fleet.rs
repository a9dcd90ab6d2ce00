//! The study of a fleet (`ssdready study --client HOSTS`): its scaling
//! section, `figures.fleet`.
//!
//! The same small plan (4 KiB random reads at a few queue depths) runs
//! first on each host alone — each host's own limit — then on hosts 1…N
//! together, through fio's client/server protocol (`ssdready_fleet`). Each
//! point gives the fleet's aggregate IOPS (the hosts' rates added: they ran
//! at once), its p99 read from the hosts' completion-latency histograms
//! summed bin by bin (never percentiles averaged), its efficiency against
//! the same hosts' solo IOPS summed and against N × the first host alone,
//! and the slowest host with its share of the fleet's time. The runs
//! together give every host the same number of I/Os (the median host's
//! solo rate × the run time), as a job split evenly across a fleet does, so
//! a straggler shows as a longer runtime. The section's facts are judged by
//! their own rules (`data/fleet.rules`).

use crate::facts::{Fact, Value};
use crate::record::Verdict;
use crate::rules;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The rules of this section.
pub const RULES: &str = include_str!("../data/fleet.rules");

/// The facts this section gives its rules.
pub const KNOWN: &[&str] = &[
    "fleet_hosts",
    "fleet_qd",
    "fleet_iops",
    "fleet_p99",
    "fleet_own_limits_iops",
    "fleet_delivered_pct",
    "fleet_efficiency_pct",
    "fleet_vs_first_pct",
    "fleet_first_iops",
    "fleet_slowest",
    "fleet_slowest_share_pct",
    "fleet_slowest_past_median_pct",
    "fleet_partial",
];

/// One host in one run (alone or with others).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostFigure {
    /// `HOST,PORT` as named on the command line.
    pub host: String,
    pub ios: u64,
    pub iops: f64,
    pub runtime_ms: u64,
    /// Together: the time the host took for the I/Os it was given, ms;
    /// projected from its rate (and `projected` set) when the run's time
    /// cap stopped it first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub projected: bool,
    /// Completion latency p99, ns (fio's rule, from the host's own bins).
    pub p99_ns: Option<u64>,
    /// Why the host failed, if it did (its figures are what it sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// fio's completion-latency bins (1856): summed for the fleet, not
    /// written (the run's own document keeps them).
    #[serde(skip)]
    pub clat_bins: Vec<u64>,
}

/// The slowest host of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Straggler {
    pub host: String,
    /// Its time for its share of the work (`work_ms`), else its runtime.
    pub runtime_ms: u64,
    /// The time is projected from its rate (it hit the time cap).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub projected: bool,
    /// Its runtime against the hosts' runtimes summed, percent.
    pub share_of_fleet_time_pct: f64,
    /// How much longer it took than the median host, percent.
    pub past_median_pct: f64,
}

/// One run: a host alone, or hosts 1…n together, at one depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Point {
    pub qd: u32,
    /// How many hosts ran together.
    pub n: u32,
    /// Together: the I/Os each host was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_ios: Option<u64>,
    pub hosts: Vec<String>,
    /// I/Os completed, all hosts.
    pub ios: u64,
    /// The hosts' rates added (they ran at once).
    pub iops: f64,
    /// Percentiles of the bin-by-bin sum of the hosts' histograms, ns.
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub per_host: Vec<HostFigure>,
    /// The same hosts alone at this depth, IOPS summed.
    pub solo_sum_iops: Option<f64>,
    /// `iops` against `solo_sum_iops`, percent.
    pub efficiency_pct: Option<f64>,
    /// The first host alone at this depth, IOPS.
    pub first_host_iops: Option<f64>,
    /// `iops` against n × `first_host_iops`, percent.
    pub vs_first_pct: Option<f64>,
    pub slowest: Option<Straggler>,
    /// A host failed or did not finish: the figures cover what came.
    pub partial: bool,
    /// The run's consolidated result (json+), beside study.json.
    pub result: Option<String>,
}

/// A host of the fleet, as it answered.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub host: String,
    pub hostname: String,
    pub fio_version: String,
    pub protocol_version: u16,
}

/// `figures.fleet`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Section {
    pub hosts: Vec<HostInfo>,
    /// What each host's job reads: a path on the host, `emu:…` (ssdready
    /// servers) or `null engine`.
    pub target: String,
    pub depths: Vec<u32>,
    /// Seconds of each solo run (the runs together are bounded by I/Os).
    pub runtime_s: f64,
    /// Each host alone at each depth.
    pub solo: Vec<Point>,
    /// Hosts 1…n together at each depth.
    pub scaling: Vec<Point>,
    /// Each host's own limit (its best solo IOPS over the depths), summed.
    pub own_limits_iops: Option<f64>,
    /// The best aggregate of all hosts together against `own_limits_iops`,
    /// percent: the fleet's delivered fraction.
    pub delivered_pct: Option<f64>,
    /// The point that figure comes from (all hosts, its depth).
    pub best: Option<Point>,
}

/// `part` against `whole`, percent (None when `whole` is not positive).
pub fn pct(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| 100.0 * part / whole)
}

/// Fill the efficiencies of the points together from the solo points, and
/// the fleet's delivered fraction against its hosts' own limits.
pub fn finish(s: &mut Section) {
    let solo_iops = |host: &str, qd: u32| {
        s.solo
            .iter()
            .find(|p| p.qd == qd && p.hosts.first().map(String::as_str) == Some(host))
            .filter(|p| !p.partial)
            .map(|p| p.iops)
    };
    for p in &mut s.scaling {
        let solos: Option<Vec<f64>> = p.hosts.iter().map(|h| solo_iops(h, p.qd)).collect();
        p.solo_sum_iops = solos.map(|v| v.iter().sum());
        p.efficiency_pct = p.solo_sum_iops.and_then(|w| pct(p.iops, w));
        p.first_host_iops = p.hosts.first().and_then(|h| solo_iops(h, p.qd));
        p.vs_first_pct = p.first_host_iops.and_then(|f| pct(p.iops, p.n as f64 * f));
    }
    let limits: Option<Vec<f64>> = s
        .hosts
        .iter()
        .map(|h| {
            s.solo
                .iter()
                .filter(|p| p.hosts.first() == Some(&h.host) && !p.partial)
                .map(|p| p.iops)
                .max_by(f64::total_cmp)
        })
        .collect();
    s.own_limits_iops = limits.filter(|v| !v.is_empty()).map(|v| v.iter().sum());
    let all = s.hosts.len() as u32;
    s.best = s
        .scaling
        .iter()
        .filter(|p| p.n == all && !p.partial)
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .cloned();
    s.delivered_pct = match (&s.best, s.own_limits_iops) {
        (Some(b), Some(l)) => pct(b.iops, l),
        _ => None,
    };
}

fn fact(v: Value, unit: &str, run: &str) -> Fact {
    Fact {
        value: v,
        unit: unit.into(),
        noise_pct: None,
        margin_pct: None,
        err: None,
        disagree: None,
        runs: vec![run.to_string()],
    }
}

/// The facts of the section: of its best point with every host.
pub fn facts(s: &Section) -> BTreeMap<String, Fact> {
    let mut m = BTreeMap::new();
    let partial = s.scaling.iter().chain(&s.solo).any(|p| p.partial);
    let run = |p: &Point| format!("fleet-qd{}-n{}", p.qd, p.n);
    let mut put = |k: &str, v: Value, unit: &str, r: &str| {
        m.insert(k.to_string(), fact(v, unit, r));
    };
    put(
        "fleet_hosts",
        Value::Num(s.hosts.len() as f64),
        "count",
        "fleet",
    );
    if partial {
        put("fleet_partial", Value::Text("yes".into()), "text", "fleet");
    }
    let Some(b) = &s.best else {
        return m;
    };
    let r = run(b);
    put("fleet_qd", Value::Num(b.qd as f64), "count", &r);
    put("fleet_iops", Value::Num(b.iops), "iops", &r);
    if let Some(p) = b.p99_ns {
        put("fleet_p99", Value::Num(p as f64), "ns", &r);
    }
    if let Some(l) = s.own_limits_iops {
        put("fleet_own_limits_iops", Value::Num(l), "iops", &r);
    }
    if let Some(d) = s.delivered_pct {
        put("fleet_delivered_pct", Value::Num(d), "pct", &r);
    }
    if let Some(e) = b.efficiency_pct {
        put("fleet_efficiency_pct", Value::Num(e), "pct", &r);
    }
    if let (Some(v), Some(f)) = (b.vs_first_pct, b.first_host_iops) {
        put("fleet_vs_first_pct", Value::Num(v), "pct", &r);
        put("fleet_first_iops", Value::Num(f), "iops", &r);
    }
    if let Some(st) = &b.slowest {
        put("fleet_slowest", Value::Text(st.host.clone()), "text", &r);
        let share = st.share_of_fleet_time_pct;
        put("fleet_slowest_share_pct", Value::Num(share), "pct", &r);
        let past = st.past_median_pct;
        put("fleet_slowest_past_median_pct", Value::Num(past), "pct", &r);
    }
    m
}

/// The section's facts and verdicts.
pub fn judge(s: &Section, interrupted: bool) -> (BTreeMap<String, Fact>, Vec<Verdict>) {
    let facts = facts(s);
    let rules = rules::parse(RULES).expect("the shipped fleet rules parse (a unit test checks)");
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

    #[test]
    fn the_rules_parse_and_use_only_known_facts() {
        let rules = rules::parse(RULES).unwrap();
        assert!(!rules.is_empty());
        for r in &rules {
            let mut names: Vec<String> = r.when.iter().map(|c| c.fact.clone()).collect();
            names.extend(rules::template_facts(&r.finding));
            names.extend(rules::template_facts(&r.recommendation));
            for n in names {
                assert!(KNOWN.contains(&n.as_str()), "rule {} uses {n}", r.id);
            }
        }
    }
}
