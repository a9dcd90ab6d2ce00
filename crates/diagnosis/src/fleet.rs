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

pub use crate::fleet_figures::{finish, pct, HostFigure, HostInfo, Point, Section, Straggler};

use crate::facts::{Fact, Value};
use crate::rules;
use ssdready_measured::record::Verdict;
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

fn fact(v: Value, unit: &str, run: &str) -> Fact {
    Fact::of(v, unit, vec![run.to_string()])
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
