//! The verdict rules: data (`data/verdicts.rules`), read at start, tested
//! against the facts of a study. A rule fires when all its conditions hold
//! and its templates can be filled; its verdict quotes the facts it used as
//! evidence, with their runs, and states a confidence from how far each
//! numeric condition was from its threshold against the noise between
//! repeats (and lower when a cross-check of those runs disagreed, or the
//! study was interrupted).

use crate::facts::{Fact, Value};
use ssdready_core::units::fmt_ns;
use ssdready_measured::record::{Evidence, Verdict};
use std::collections::BTreeMap;

/// The rules shipped with ssdready.
pub const RULES: &str = include_str!("../data/verdicts.rules");

/// Noise (standard deviation between repeats, percent of their mean)
/// above which nothing is firm.
pub const TOO_NOISY_PCT: f64 = 15.0;

/// A rule's condition operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Ge,
    Le,
    Gt,
    Lt,
    Exists,
    Missing,
}

/// One `when` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Cond {
    pub fact: String,
    pub op: Op,
    pub value: Option<Value>,
}

/// One rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    pub id: String,
    pub when: Vec<Cond>,
    pub finding: String,
    pub recommendation: String,
}

/// A line of the rules file that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("verdict rules line {line}: {msg}")]
pub struct RuleError {
    pub line: usize,
    pub msg: String,
}

pub(crate) fn parse_cond(text: &str, line: usize) -> Result<Cond, RuleError> {
    let err = |m: &str| RuleError {
        line,
        msg: format!("{m}: '{text}'"),
    };
    let mut it = text.splitn(3, ' ');
    let fact = it
        .next()
        .filter(|f| !f.is_empty())
        .ok_or_else(|| err("no fact"))?;
    let op = match it.next().ok_or_else(|| err("no operator"))? {
        "=" => Op::Eq,
        "!=" => Op::Ne,
        ">=" => Op::Ge,
        "<=" => Op::Le,
        ">" => Op::Gt,
        "<" => Op::Lt,
        "exists" => Op::Exists,
        "missing" => Op::Missing,
        o => return Err(err(&format!("unknown operator '{o}'"))),
    };
    let value = match (op, it.next().map(str::trim)) {
        // A cause is a value: a word that names none is an error here,
        // not a rule that can never fire.
        (Op::Eq | Op::Ne, Some(v)) if crate::facts::CAUSE_FACTS.contains(&fact) => {
            if crate::limit::Cause::of_name(v).is_none() {
                return Err(err(&format!(
                    "'{v}' is not a cause (allowed: {})",
                    crate::limit::Cause::ALL.map(|c| c.name()).join(", ")
                )));
            }
            Some(Value::Text(v.to_string()))
        }
        (Op::Exists | Op::Missing, None) => None,
        (Op::Exists | Op::Missing, Some(_)) => return Err(err("exists/missing take no value")),
        (_, None | Some("")) => return Err(err("no value")),
        (_, Some(v)) => Some(match v.parse::<f64>() {
            Ok(n) => Value::Num(n),
            Err(_) => Value::Text(v.to_string()),
        }),
    };
    Ok(Cond {
        fact: fact.into(),
        op,
        value,
    })
}

/// Read a rules file.
pub fn parse(text: &str) -> Result<Vec<Rule>, RuleError> {
    let mut rules: Vec<Rule> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let (key, rest) = l.split_once(' ').unwrap_or((l, ""));
        let rest = rest.trim();
        if key == "rule" {
            rules.push(Rule {
                id: rest.into(),
                ..Default::default()
            });
            continue;
        }
        let r = rules.last_mut().ok_or(RuleError {
            line,
            msg: "a line before the first rule".into(),
        })?;
        match key {
            "when" => r.when.push(parse_cond(rest, line)?),
            "finding" => r.finding = rest.into(),
            "recommendation" => r.recommendation = rest.into(),
            k => {
                return Err(RuleError {
                    line,
                    msg: format!(
                        "unknown key '{k}' (allowed: rule, when, finding, recommendation)"
                    ),
                })
            }
        }
    }
    if let Some(r) = rules
        .iter()
        .find(|r| r.finding.is_empty() || r.recommendation.is_empty())
    {
        return Err(RuleError {
            line: 0,
            msg: format!("rule '{}' needs a finding and a recommendation", r.id),
        });
    }
    Ok(rules)
}

/// The fact names a template refers to.
pub fn template_facts(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = t;
    while let Some(a) = rest.find('{') {
        let Some(b) = rest[a..].find('}') else { break };
        out.push(rest[a + 1..a + b].to_string());
        rest = &rest[a + b + 1..];
    }
    out
}

/// Fill `{fact}` in a template; `[ … ]` parts with an unknown fact are
/// dropped. None when a fact outside brackets is unknown.
pub fn render(t: &str, facts: &BTreeMap<String, Fact>) -> Option<String> {
    let mut out = String::new();
    let mut rest = t;
    while let Some(a) = rest.find('[') {
        out.push_str(&fill(&rest[..a], facts)?);
        let b = rest[a..].find(']')? + a;
        if let Some(s) = fill(&rest[a + 1..b], facts) {
            out.push_str(&s);
        }
        rest = &rest[b + 1..];
    }
    out.push_str(&fill(rest, facts)?);
    Some(out)
}

fn fill(t: &str, facts: &BTreeMap<String, Fact>) -> Option<String> {
    let mut out = String::new();
    let mut rest = t;
    while let Some(a) = rest.find('{') {
        out.push_str(&rest[..a]);
        let b = rest[a..].find('}')? + a;
        out.push_str(&facts.get(&rest[a + 1..b])?.show());
        rest = &rest[b + 1..];
    }
    out.push_str(rest);
    Some(out)
}

pub(crate) fn holds(c: &Cond, facts: &BTreeMap<String, Fact>) -> bool {
    let f = facts.get(&c.fact);
    match (c.op, f, &c.value) {
        (Op::Exists, f, _) => f.is_some(),
        (Op::Missing, f, _) => f.is_none(),
        (_, None, _) | (_, _, None) => false,
        (op, Some(f), Some(Value::Text(want))) => {
            let have = match &f.value {
                Value::Text(t) => t.clone(),
                Value::Num(n) => n.to_string(),
            };
            match op {
                Op::Eq => have == *want,
                Op::Ne => have != *want,
                _ => false,
            }
        }
        (op, Some(f), Some(Value::Num(want))) => {
            let Some(have) = f.num() else { return false };
            match op {
                Op::Eq => have == *want,
                Op::Ne => have != *want,
                Op::Ge => have >= *want,
                Op::Le => have <= *want,
                Op::Gt => have > *want,
                Op::Lt => have < *want,
                Op::Exists | Op::Missing => unreachable!("handled above"),
            }
        }
    }
}

/// Everything a judgement needs besides the facts.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// Largest spread between repeats, percent (None: no repeats ran).
    pub noise_pct: Option<f64>,
    /// Runs whose cross-checks disagreed.
    pub disagreeing_runs: Vec<String>,
    pub interrupted: bool,
}

/// Apply the rules in order.
pub fn judge(rules: &[Rule], facts: &BTreeMap<String, Fact>, ctx: &Context) -> Vec<Verdict> {
    let mut out = Vec::new();
    for r in rules {
        if !r.when.iter().all(|c| holds(c, facts)) {
            continue;
        }
        let (Some(finding), Some(recommendation)) =
            (render(&r.finding, facts), render(&r.recommendation, facts))
        else {
            continue;
        };
        let mut names: Vec<String> = r.when.iter().map(|c| c.fact.clone()).collect();
        names.extend(template_facts(&r.finding));
        names.extend(template_facts(&r.recommendation));
        let mut seen = Vec::new();
        names.retain(|n| {
            facts.contains_key(n) && !seen.contains(n) && {
                seen.push(n.clone());
                true
            }
        });
        let mut runs: Vec<String> = names.iter().flat_map(|n| facts[n].runs.clone()).collect();
        runs.sort();
        runs.dedup();
        let (confidence, why, noise) = confidence(r, facts, &runs, ctx);
        out.push(Verdict {
            rule: r.id.clone(),
            finding,
            evidence: Evidence {
                figures: names.iter().map(|n| (n.clone(), facts[n].show())).collect(),
                runs,
            },
            recommendation,
            confidence: confidence.into(),
            confidence_why: why,
            noise_pct: noise,
        });
    }
    out
}

/// Each condition's margin past its threshold, percent of the threshold
/// (a text condition: its fact's own margin, where it has one).
fn margins(r: &Rule, facts: &BTreeMap<String, Fact>) -> Vec<(String, f64)> {
    let mut margins = Vec::new();
    for c in &r.when {
        let Some(f) = facts.get(&c.fact) else {
            continue;
        };
        match (&c.value, f.num()) {
            (Some(Value::Num(th)), Some(v)) if *th != 0.0 => {
                margins.push((c.fact.clone(), 100.0 * (v - th).abs() / th.abs()))
            }
            (Some(Value::Text(_)), _) => {
                if let Some(m) = f.margin_pct {
                    margins.push((c.fact.clone(), m));
                }
            }
            _ => {}
        }
    }
    margins
}

/// The confidence of a fired rule: `high` when every numeric condition
/// clears its threshold by at least three times the noise (and 5 %),
/// `medium` when by more than the noise, else `low`; one step lower when a
/// cross-check of its runs disagreed; `low` on a machine too noisy to
/// conclude or an interrupted study.
fn confidence(
    r: &Rule,
    facts: &BTreeMap<String, Fact>,
    runs: &[String],
    ctx: &Context,
) -> (&'static str, String, Option<f64>) {
    let noise = r
        .when
        .iter()
        .filter_map(|c| facts.get(&c.fact)?.noise_pct)
        .reduce(f64::max)
        .or(ctx.noise_pct);
    let margins = margins(r, facts);
    let least = margins.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let n = noise.unwrap_or(0.0);
    let within = within_error(r, facts);
    let mut level = match least {
        _ if ctx.interrupted => 0,
        _ if n > TOO_NOISY_PCT => 0,
        None => 2,
        Some((_, m)) if *m >= (3.0 * n).max(5.0) => 2,
        Some((_, m)) if *m > n => 1,
        Some(_) => 0,
    };
    let mut why = match (least, noise) {
        _ if ctx.interrupted => "the study was interrupted".to_string(),
        (_, Some(n)) if n > TOO_NOISY_PCT => {
            format!("the machine was too noisy to conclude: repeats varied by {n:.0} %")
        }
        (Some((f, m)), Some(n)) => {
            format!("{f} is {m:.0} % past its threshold; repeats varied by {n:.1} %")
        }
        (Some((f, m)), None) => {
            format!("{f} is {m:.0} % past its threshold; no repeats to measure noise")
        }
        (None, Some(n)) => format!("repeats varied by {n:.1} %"),
        (None, None) => "no repeats to measure noise".to_string(),
    };
    if noise.is_none() && level == 2 {
        level = 1;
    }
    // Repeats that gave different answers: never high.
    if let Some(d) = r
        .when
        .iter()
        .find_map(|c| facts.get(&c.fact)?.disagree.clone())
    {
        if level == 2 {
            level = 1;
        }
        why.push_str(&format!("; the repeats disagreed: {d}"));
    }
    if let Some((f, dist, err, cap)) = within {
        if level > cap {
            level = cap;
            why.push_str(&format!(
                "; {f} is {} from its threshold, its own error ± {}",
                in_unit(facts, &f, dist),
                in_unit(facts, &f, err)
            ));
        }
    }
    let bad: Vec<&String> = runs
        .iter()
        .filter(|r| ctx.disagreeing_runs.contains(r))
        .collect();
    if !bad.is_empty() && level > 0 {
        level -= 1;
        why.push_str(&format!(
            "; cross-checks disagreed in {}",
            bad.iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    (["low", "medium", "high"][level], why, noise)
}

/// A distance in fact `f`'s unit (`8.5 points` of a percentage).
fn in_unit(facts: &BTreeMap<String, Fact>, f: &str, v: f64) -> String {
    match facts.get(f).map(|x| x.unit.as_str()) {
        Some("pct") => format!("{v:.1} points"),
        Some("ns") => fmt_ns(v),
        _ => format!("{v:.1}"),
    }
}

/// The numeric condition nearest its threshold in units of its fact's
/// own error, when that is under three errors: (fact, distance, error,
/// the highest level it allows: `low` within one error, `medium` within
/// three).
fn within_error(r: &Rule, facts: &BTreeMap<String, Fact>) -> Option<(String, f64, f64, usize)> {
    r.when
        .iter()
        .filter_map(|c| {
            let f = facts.get(&c.fact)?;
            let (Some(Value::Num(th)), Some(v), Some(e)) = (&c.value, f.num(), f.err) else {
                return None;
            };
            let dist = (v - th).abs();
            (e > 0.0 && dist < 3.0 * e).then(|| (c.fact.clone(), dist, e, (dist >= e) as usize))
        })
        .min_by(|a, b| (a.1 / a.2).total_cmp(&(b.1 / b.2)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(v: Value, unit: &str) -> Fact {
        Fact::of(v, unit, vec!["qd-1".into()])
    }

    #[test]
    fn the_shipped_rules_parse_and_use_known_facts_only() {
        let rules = parse(RULES).unwrap();
        assert!(rules.len() >= 20, "{}", rules.len());
        for r in &rules {
            let mut names: Vec<String> = r.when.iter().map(|c| c.fact.clone()).collect();
            names.extend(template_facts(&r.finding));
            names.extend(template_facts(&r.recommendation));
            for n in names {
                assert!(
                    crate::facts::KNOWN.contains(&n.as_str()),
                    "rule {}: unknown fact {n}",
                    r.id
                );
            }
        }
        let mut ids: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), rules.len(), "rule ids are unique");
    }

    #[test]
    fn bad_rules_name_their_line() {
        let e = parse("rule a\n  when x ~ 3\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().contains("unknown operator"), "{e}");
        assert!(parse("when x > 1\n").is_err());
        assert!(parse("rule a\n  when x > 1\n").is_err(), "no finding");
    }

    #[test]
    fn optional_parts_drop_out_and_required_ones_stop_the_rule() {
        let mut f = BTreeMap::new();
        f.insert("a".into(), fact(Value::Num(97.0), "pct"));
        assert_eq!(render("x {a}[ y {b}] z", &f).unwrap(), "x 97 % z");
        assert_eq!(render("x {b}", &f), None);
        f.insert("b".into(), fact(Value::Text("io_uring".into()), "text"));
        assert_eq!(
            render("x {a}[ y {b}] z", &f).unwrap(),
            "x 97 % y io_uring z"
        );
    }

    /// The QD 1 findings give the platform's part with its error where
    /// the figures have one (behind the kernel, calibrated), and read as
    /// before where they do not.
    #[test]
    fn the_qd1_platform_part_carries_its_error_when_there_is_one() {
        let rules = parse(RULES).unwrap();
        let r = rules
            .iter()
            .find(|r| r.finding.starts_with("At QD 1 latency is the device's"))
            .unwrap();
        let mut f = BTreeMap::new();
        f.insert("platform_qd1".into(), fact(Value::Num(10_580.0), "ns"));
        f.insert("platform_share_qd1".into(), fact(Value::Num(6.0), "pct"));
        f.insert("device_qd1".into(), fact(Value::Num(148_990.0), "ns"));
        let without = render(&r.finding, &f).unwrap();
        assert!(!without.contains('±'), "{without}");
        f.insert("platform_qd1_err".into(), fact(Value::Num(4_120.0), "ns"));
        let with = render(&r.finding, &f).unwrap();
        assert!(with.contains(" ± "), "{with}");
        assert_eq!(with.replace(" ± 4.12 µs", ""), without, "{with}");
    }

    #[test]
    fn a_condition_within_its_facts_own_error_is_not_firm() {
        let rules = parse("rule r\n  when a < 20\n  finding {a}\n  recommendation none\n").unwrap();
        let ctx = Context {
            noise_pct: Some(1.0),
            ..Default::default()
        };
        let at = |v: f64, err: Option<f64>| {
            let mut f = BTreeMap::new();
            let mut a = fact(Value::Num(v), "pct");
            a.err = err;
            f.insert("a".into(), a);
            judge(&rules, &f, &ctx).remove(0)
        };
        assert_eq!(at(5.0, None).confidence, "high");
        assert_eq!(at(5.0, Some(4.0)).confidence, "high");
        let v = at(12.0, Some(4.0));
        assert_eq!(v.confidence, "medium");
        assert!(
            v.confidence_why
                .contains("is 8.0 points from its threshold, its own error ± 4.0 points"),
            "{}",
            v.confidence_why
        );
        assert_eq!(at(17.0, Some(4.0)).confidence, "low");
    }

    /// Parts taken out beyond the QD 1 mean are said not to add up.
    #[test]
    fn qd1_parts_that_do_not_add_up_are_said_so() {
        let rules = parse(RULES).unwrap();
        let mut f = BTreeMap::new();
        f.insert("platform_qd1_err".into(), fact(Value::Num(5_930.0), "ns"));
        let fired = |f: &BTreeMap<String, Fact>| {
            judge(&rules, f, &Context::default())
                .into_iter()
                .find(|v| v.rule == "qd1-parts-do-not-add-up")
        };
        assert!(fired(&f).is_none());
        f.insert(
            "platform_qd1_overcount".into(),
            fact(Value::Num(15_800.0), "ns"),
        );
        let v = fired(&f).unwrap();
        assert!(
            v.finding.contains("falls 15.80 µs below") && v.finding.contains("± 5.93 µs"),
            "{}",
            v.finding
        );
        assert!(!v.finding.contains("stamps"), "{}", v.finding);
        f.insert(
            "platform_qd1_outside_daemon".into(),
            fact(Value::Num(9_860.0), "ns"),
        );
        f.insert(
            "platform_qd1_outside_daemon_pct".into(),
            fact(Value::Num(5.6), "pct"),
        );
        let v = fired(&f).unwrap();
        assert!(
            v.finding
                .contains("leave 9.86 µs (6 % of the mean) outside"),
            "{}",
            v.finding
        );
    }

    #[test]
    fn confidence_follows_margin_against_noise() {
        let rules =
            parse("rule r\n  when a >= 90\n  finding {a}\n  recommendation none\n").unwrap();
        let mut f = BTreeMap::new();
        let judge_at = |v: f64, noise: f64, f: &mut BTreeMap<String, Fact>| {
            f.insert("a".into(), fact(Value::Num(v), "pct"));
            let ctx = Context {
                noise_pct: Some(noise),
                ..Default::default()
            };
            judge(&rules, f, &ctx)
        };
        assert_eq!(judge_at(99.5, 1.0, &mut f)[0].confidence, "high");
        assert_eq!(judge_at(93.0, 2.0, &mut f)[0].confidence, "medium");
        assert_eq!(judge_at(90.5, 2.0, &mut f)[0].confidence, "low");
        assert_eq!(judge_at(99.5, 40.0, &mut f)[0].confidence, "low");
        assert!(judge_at(80.0, 1.0, &mut f).is_empty());
    }

    /// Two threads at QD 1 each, judged against one thread.
    fn two_threads(iops: f64, efficiency_pct: f64, cpu: Option<f64>) -> crate::figures::Scaling {
        crate::figures::Scaling {
            threads: 2,
            qd_per_thread: 1,
            iops,
            efficiency_pct,
            cpu_efficiency_pct: cpu,
            runs: vec!["threads-2x1".into()],
            ..Default::default()
        }
    }

    /// The verdicts on a study whose only figure is `s`, on machine `m`.
    fn judge_scaling(
        rules: &[Rule],
        s: crate::figures::Scaling,
        m: &ssdready_measured::record::Machine,
    ) -> Vec<Verdict> {
        let f = crate::figures::Figures {
            scaling_efficiency: vec![s],
            ..Default::default()
        };
        let facts = crate::facts::facts(&Default::default(), m, &f, &Default::default());
        judge(rules, &facts, &Context::default())
    }

    /// Threads that did not scale while each I/O cost them no more CPU, on
    /// CPUs other work kept busy, waited for CPUs: the study says so
    /// instead of sending the reader after a shared lock or queue.
    #[test]
    fn threads_short_of_cpus_are_not_called_a_shared_bottleneck() {
        let rules = parse(RULES).unwrap();
        let judged = |cpu_eff: f64, busy: f64| -> Vec<String> {
            let s = two_threads(22_200.0, 53.0, Some(cpu_eff));
            let m = ssdready_measured::record::Machine {
                cpus: 2,
                background_busy_pct: Some(busy),
                ..Default::default()
            };
            let v = judge_scaling(&rules, s, &m);
            v.into_iter().map(|v| v.rule).collect()
        };
        let busy = judged(106.0, 100.0);
        assert!(
            busy.contains(&"threads-short-of-cpus".to_string()),
            "{busy:?}"
        );
        assert!(
            !busy.contains(&"threads-scale-poorly".to_string()),
            "{busy:?}"
        );
        // An idle machine, or a dearer I/O per thread: something shared.
        for v in [judged(106.0, 5.0), judged(60.0, 100.0)] {
            assert!(v.contains(&"threads-scale-poorly".to_string()), "{v:?}");
            assert!(!v.contains(&"threads-short-of-cpus".to_string()), "{v:?}");
        }
    }

    /// Threads that did not scale, but deliver what one thread does with as
    /// many I/Os in flight, lost nothing to each other: the study points
    /// below the system call (the kernel drive at depth 2 gave 17.9K IOPS
    /// to one thread and 18.2K to two) instead of at what threads share.
    #[test]
    fn threads_that_match_depth_are_sent_below_the_system_call() {
        let rules = parse(RULES).unwrap();
        let judged = |depth_iops: Option<f64>| -> Vec<Verdict> {
            let s = crate::figures::Scaling {
                depth_iops,
                depth_device_iops: Some(44_100.0),
                ..two_threads(18_200.0, 65.0, Some(88.0))
            };
            judge_scaling(&rules, s, &Default::default())
        };
        let names = |v: &[Verdict]| v.iter().map(|v| v.rule.clone()).collect::<Vec<_>>();
        let same = judged(Some(17_900.0));
        assert_eq!(names(&same), ["threads-scale-as-depth"]);
        assert!(same[0].finding.contains("17.9K"), "{}", same[0].finding);
        assert!(same[0].finding.contains("44.1K"), "{}", same[0].finding);
        // Below 90 % of depth's IOPS, or no run at that depth: the threads
        // lost something to each other.
        for d in [Some(20_300.0), None] {
            assert_eq!(names(&judged(d)), ["threads-scale-poorly"], "{d:?}");
        }
    }
}
