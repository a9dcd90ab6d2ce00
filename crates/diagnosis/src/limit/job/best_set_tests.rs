//! The job's best configuration searched as the device study's
//! combination: a cap behind the change that helped, kept only where the
//! pair buys more; a subset where the whole set buys less; the best
//! single change where nothing does.

use super::*;
use crate::trials::{judge_trial, Measured, Outcome, Turn};

/// Turns of the job as written and changed, IOPS.
fn turns(pairs: &[(f64, f64)]) -> Vec<Turn> {
    let m = |iops: f64| Measured {
        iops,
        bw_bytes_per_s: 4096.0 * iops,
        ..Default::default()
    };
    let turn = |&(a, b): &(f64, f64)| Turn {
        baseline: m(a),
        change: m(b),
    };
    pairs.iter().map(turn).collect()
}

/// A change of the host tried on the job in turns, judged.
fn trial(id: &str, kind: Kind, to: &str, pairs: &[(f64, f64)]) -> Trial {
    let mut t = Trial {
        lever: id.into(),
        kind,
        from: "as set".into(),
        to: to.into(),
        measure: Metric::Iops,
        turns: turns(pairs),
        ..Default::default()
    };
    judge_trial(&mut t);
    t
}

fn option(option: &str, gain: f64) -> VariantResult {
    VariantResult {
        option: option.into(),
        asks: format!("{option}: asked"),
        gain_pct: Some(gain),
        beyond_noise: true,
        ..Default::default()
    }
}

/// A 4-request queue's lift (+95 %) and a quota's lift that bought
/// nothing alone.
fn queue_and_quota() -> (Trial, Trial) {
    let queue = trial(
        "nr-requests",
        Kind::Queue,
        "128",
        &[(100.0, 195.0), (100.0, 190.0), (100.0, 200.0)],
    );
    let quota = trial(
        "cpu-quota",
        Kind::Cgroup,
        "lifted",
        &[(100.0, 110.0), (100.0, 95.0), (100.0, 104.0)],
    );
    assert_eq!(queue.outcome, Outcome::Better);
    assert_ne!(quota.outcome, Outcome::Better);
    (queue, quota)
}

/// Set `levers` of `c` measured with `pairs`, as the study's search runs
/// it: the job's configuration and the search's set.
fn measure(c: &mut Combination, levers: &[String], pairs: &[(f64, f64)]) -> Best {
    measure_with(c, levers, &[], pairs)
}

/// [`measure`] with the job's options chosen.
fn measure_with(
    c: &mut Combination,
    levers: &[String],
    chosen: &[&VariantResult],
    pairs: &[(f64, f64)],
) -> Best {
    let mut b = best_of(c, levers, chosen, false);
    b.turns = turns(pairs);
    let mut set = Set {
        levers: levers.to_vec(),
        turns: b.turns.clone(),
        ..Default::default()
    };
    model::judge_set(&mut set, Metric::Iops);
    c.sets.push(set);
    b
}

#[test]
fn a_cap_that_bought_nothing_alone_is_measured_behind_the_change_that_helped() {
    let (queue, quota) = queue_and_quota();
    let trials = vec![queue.clone(), quota];
    let mut c =
        combination(&[], &trials, std::slice::from_ref(&queue), false).expect("a change helped");
    let ids: Vec<(&str, bool)> = c
        .changes
        .iter()
        .map(|m| (m.lever.as_str(), m.behind))
        .collect();
    assert_eq!(ids, [("nr-requests", false), ("cpu-quota", true)]);
    // Each member, the cap behind too, weighed alone on the job's metric.
    for m in &c.changes {
        let on = m.alone.as_ref().map(|g| g.metric);
        assert!(on.is_none_or(|g| g == c.measure), "{}: {on:?}", m.lever);
    }
    let whole: Vec<String> = c.changes.iter().map(|m| m.lever.clone()).collect();
    // Both lifted buy +165 %: more than the queue alone beyond the noise.
    let b = measure(
        &mut c,
        &whole,
        &[(100.0, 265.0), (100.0, 262.0), (100.0, 268.0)],
    );
    assert_eq!(
        b.host,
        ["nr-requests as set → 128", "cpu-quota as set → lifted"]
    );
    assert_eq!(model::next_subset(&c), None);
    let kept = kept(&mut c, vec![b], &queue);
    assert_eq!(kept.host.len(), 2, "{kept:?}");
    assert_eq!(kept.whole, None, "the whole set is the one kept");
    assert!(kept.beyond_noise);
    let said = kept.instead_of.unwrap_or_default();
    assert!(
        said.contains("cpu-quota as set → lifted bought nothing alone"),
        "{said}"
    );
}

#[test]
fn a_cap_that_adds_nothing_behind_the_change_that_helped_leaves_that_change_alone() {
    let (queue, quota) = queue_and_quota();
    let trials = vec![queue.clone(), quota];
    let mut c = combination(&[], &trials, std::slice::from_ref(&queue), false).unwrap();
    let whole: Vec<String> = c.changes.iter().map(|m| m.lever.clone()).collect();
    let b = measure(
        &mut c,
        &whole,
        &[(100.0, 196.0), (100.0, 193.0), (100.0, 199.0)],
    );
    assert_eq!(
        model::next_subset(&c),
        None,
        "a subset of one is its own trial"
    );
    let whole_turns = b.turns.clone();
    let kept = kept(&mut c, vec![b], &queue);
    assert_eq!(kept.host, ["nr-requests as set → 128"]);
    assert_eq!(kept.turns, queue.turns, "as its own trial measured it");
    // The whole set stays, for fio's A/B of it.
    let whole = kept.whole.as_deref().expect("the whole set, not kept");
    assert_eq!(whole.host.len(), 2);
    assert_eq!(whole.turns, whole_turns);
    assert!(kept
        .instead_of
        .is_some_and(|w| w.contains("nor behind the best single change")));
}

#[test]
fn a_whole_set_that_buys_less_is_searched_without_its_weakest_change() {
    let (queue, _) = queue_and_quota();
    let sched = trial(
        "scheduler",
        Kind::Queue,
        "none",
        &[(100.0, 131.0), (100.0, 129.0), (100.0, 130.0)],
    );
    let depth = option("iodepth=128", 20.0);
    let chosen = [&depth];
    let helped = vec![queue.clone(), sched.clone()];
    let mut c = combination(&chosen, &helped, &helped, false).unwrap();
    let ids: Vec<&str> = c.changes.iter().map(|m| m.lever.as_str()).collect();
    assert_eq!(ids, ["nr-requests", "scheduler", "iodepth=128"]);
    let whole: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    let pairs = [(100.0, 160.0), (100.0, 158.0), (100.0, 161.0)];
    let mut sets = vec![measure_with(&mut c, &whole, &chosen, &pairs)];
    assert_eq!(sets[0].options, ["iodepth=128"]);
    assert_eq!(sets[0].asks, ["iodepth=128: asked"]);
    // The option, measured once, has no interval: it goes first.
    let next = model::next_subset(&c).expect("a subset");
    assert_eq!(next, ["nr-requests", "scheduler"]);
    sets.push(measure(
        &mut c,
        &next,
        &[(100.0, 201.0), (100.0, 199.0), (100.0, 203.0)],
    ));
    assert_eq!(model::next_subset(&c), None, "that one bought as much");
    let kept = kept(&mut c, sets, &queue);
    assert!(kept.options.is_empty());
    assert_eq!(
        kept.host,
        ["nr-requests as set → 128", "scheduler as set → none"]
    );
    assert!(kept
        .instead_of
        .is_some_and(|w| w.contains("without iodepth=128")));
}

#[test]
fn nothing_is_searched_without_a_change_of_the_host_or_where_an_option_gained_far_more() {
    let (queue, _) = queue_and_quota();
    let depth = option("iodepth=128", 20.0);
    assert!(combination(&[&depth], &[], &[], false).is_none());
    let big = option("numjobs=4", 200.0);
    let helped = vec![queue];
    assert!(combination(&[&big], &helped, &helped, false).is_none());
    assert!(combination(&[&depth], &helped, &helped, false).is_some());
}

#[test]
fn sets_are_weighed_on_the_jobs_metric_whatever_the_best_changes_own() {
    // The CPUs held out of idle states, judged on their mean latency
    // (-44 %), bought +80 % IOPS; a queue's lift +72 %. The whole set,
    // with a second thread, buys +200 % IOPS at a mean latency only 33 %
    // lower: on the job's metric it is the configuration.
    let m = |iops: f64, in_flight: f64| Measured {
        iops,
        bw_bytes_per_s: 4096.0 * iops,
        lat_mean_ns: in_flight * 1e9 / iops,
        ..Default::default()
    };
    let turns_of = |pairs: &[(f64, f64, f64)]| -> Vec<Turn> {
        let turn = |&(a, b, n): &(f64, f64, f64)| Turn {
            baseline: m(a, 64.0),
            change: m(b, n),
        };
        pairs.iter().map(turn).collect()
    };
    let mut idle = Trial {
        lever: "cpu-idle".into(),
        kind: Kind::Cpu,
        from: "as the kernel picks".into(),
        to: "0".into(),
        measure: Metric::Mean,
        turns: turns_of(&[
            (100.0, 181.0, 64.0),
            (100.0, 179.0, 64.0),
            (100.0, 180.0, 64.0),
        ]),
        ..Default::default()
    };
    judge_trial(&mut idle);
    let queue = trial(
        "nr-requests",
        Kind::Queue,
        "128",
        &[(100.0, 173.0), (100.0, 171.0), (100.0, 172.0)],
    );
    let helped = vec![idle.clone(), queue.clone()];
    let mut c = combination(&[], &helped, &helped, false).expect("changes helped");
    assert_eq!(c.best_gain().map(|g| g.metric), Some(Metric::Iops));
    let whole: Vec<String> = c.changes.iter().map(|m| m.lever.clone()).collect();
    let mut b = best_of(&c, &whole, &[], false);
    b.turns = turns_of(&[
        (100.0, 301.0, 128.0),
        (100.0, 299.0, 128.0),
        (100.0, 300.0, 128.0),
    ]);
    let mut set = Set {
        levers: whole.clone(),
        turns: b.turns.clone(),
        ..Default::default()
    };
    model::judge_set(&mut set, c.measure);
    c.sets.push(set);
    let kept = kept(&mut c, vec![b], &idle);
    assert_eq!(kept.host.len(), 2, "{kept:?}");
    assert!(kept.gain_pct.is_some_and(|g| g > 150.0), "{kept:?}");
}
