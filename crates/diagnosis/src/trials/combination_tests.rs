//! The configuration's judgement: a set that buys more than its best
//! change is kept and said to beat it; one that buys less keeps the best
//! set measured, or the best change alone, and says so; the search drops
//! the change that helped least first.

use super::*;
use crate::trials::section::Section;
use crate::trials::text::combination_lines as lines;
use crate::trials::{judge_trial, Measured, Turn};

fn run(iops: f64) -> Measured {
    Measured {
        iops,
        bw_bytes_per_s: iops * 4096.0,
        lat_mean_ns: 32e9 / iops,
        lat_p99_ns: 64e9 / iops,
        cpu_ns_per_io: None,
        directions: None,
    }
}

/// Three turns whose changed runs give `ratio` times the baseline, each
/// pair a little off the last.
fn turns(ratio: f64) -> Vec<Turn> {
    (0..3)
        .map(|i| {
            let base = 100_000.0 * (1.0 + 0.002 * f64::from(i));
            Turn {
                baseline: run(base),
                change: run(base * ratio * (1.0 + 0.003 * f64::from(i % 2))),
            }
        })
        .collect()
}

fn trial(lever: &str, ratio: f64) -> Trial {
    let mut t = Trial {
        lever: lever.into(),
        kind: Kind::Queue,
        from: "a".into(),
        to: "b".into(),
        measure: Metric::Iops,
        turns: turns(ratio),
        change_options: vec!["--name=m".into(), "--rw=randread".into()],
        ..Default::default()
    };
    judge_trial(&mut t);
    t
}

fn member(t: &Trial) -> Member {
    Member {
        lever: t.lever.clone(),
        kind: t.kind,
        change: t.change(),
        value: t.to.clone(),
        alone: t.main_gain().cloned(),
        ..Default::default()
    }
}

fn set(levers: &[&str], ratio: f64) -> Set {
    let mut s = Set {
        levers: levers.iter().map(|l| l.to_string()).collect(),
        turns: turns(ratio),
        change_options: vec!["--name=m".into(), "--rw=randread".into()],
        ..Default::default()
    };
    judge_set(&mut s, Metric::Iops);
    s
}

fn combination(trials: &[Trial]) -> Combination {
    Combination {
        measure: Metric::Iops,
        changes: trials.iter().map(member).collect(),
        ..Default::default()
    }
}

#[test]
fn a_set_that_buys_more_than_its_best_change_is_kept_and_said_to_beat_it() {
    let (a, b) = (trial("scheduler", 1.5), trial("nr-requests", 1.45));
    let mut c = combination(&[a.clone(), b]);
    c.sets.push(set(&["scheduler", "nr-requests"], 1.6));
    assert_eq!(next_subset(&c), None);
    choose(&mut c, &a);
    assert!(!c.kept.single);
    assert_eq!(c.kept.levers, ["scheduler", "nr-requests"]);
    assert!(c.beats_best, "{:?}", c.kept_gain());
    assert!(
        c.words.contains("more than the best single change"),
        "{}",
        c.words
    );
    let g = c.kept_gain().unwrap();
    assert!((g.change_pct - 60.0).abs() < 1.0, "{g:?}");
    let answer = answer(&c, "the best change measured: …");
    assert!(
        answer.starts_with(
            "the configuration to deploy: scheduler a → b + nr-requests a → b: IOPS +60"
        ),
        "{answer}"
    );
    assert!(
        answer.contains("more than its best single change"),
        "{answer}"
    );
}

#[test]
fn a_set_no_better_than_its_best_change_beyond_the_noise_leaves_the_others_out() {
    // An idle-state hold helped alone; beside the scheduler it adds
    // nothing measurable, and is not deployed for nothing.
    let (a, b) = (trial("scheduler", 1.5), trial("cpu-idle", 1.2));
    let mut c = combination(&[a.clone(), b]);
    c.sets.push(set(&["scheduler", "cpu-idle"], 1.505));
    assert_eq!(next_subset(&c), None, "a subset of one is its own trial");
    choose(&mut c, &a);
    assert!(c.kept.single);
    assert_eq!(c.kept.levers, ["scheduler"]);
    assert_eq!(c.kept.turns, a.turns);
    assert!(!c.beats_best);
    assert!(
        c.words.starts_with("together they bought +50."),
        "{}",
        c.words
    );
    assert!(
        c.words
            .contains("not more than the best single change, scheduler"),
        "{}",
        c.words
    );
    assert!(
        c.words.contains("the configuration is that change alone"),
        "{}",
        c.words
    );
}

#[test]
fn a_set_of_two_that_buys_less_keeps_the_best_change_alone_and_says_so() {
    // Each gains alone; together one cancels the other.
    let (a, b) = (trial("scheduler", 1.5), trial("nr-requests", 1.3));
    let mut c = combination(&[a.clone(), b]);
    c.sets.push(set(&["scheduler", "nr-requests"], 1.1));
    // Without one of two, the set is the best change: its own trial.
    assert_eq!(next_subset(&c), None);
    choose(&mut c, &a);
    assert!(c.kept.single);
    assert_eq!(c.kept.levers, ["scheduler"]);
    assert_eq!(c.kept.turns, a.turns);
    assert!(!c.beats_best);
    assert!(
        c.words.contains("bought less than the best single change"),
        "{}",
        c.words
    );
    assert!(
        c.words.contains("kept the best single change alone"),
        "{}",
        c.words
    );
    assert!(c.words.contains("; the whole set +10.1 %"), "{}", c.words);
    let answer = answer(&c, "the best change measured: scheduler");
    assert!(
        answer.starts_with("the best change measured: scheduler; the changes together bought less"),
        "{answer}"
    );
}

#[test]
fn the_search_drops_the_change_that_helped_least_first_and_keeps_the_first_set_that_holds() {
    let best = trial("scheduler", 1.5);
    let least = trial("rq-affinity", 1.1);
    let next = trial("nr-requests", 1.3);
    let mut c = combination(&[best.clone(), next, least]);
    c.sets
        .push(set(&["scheduler", "nr-requests", "rq-affinity"], 1.2));
    // The one that helped least goes first.
    assert_eq!(next_subset(&c).unwrap(), ["scheduler", "nr-requests"]);
    c.sets.push(set(&["scheduler", "nr-requests"], 1.15));
    // Then the next least, from the whole set again.
    assert_eq!(next_subset(&c).unwrap(), ["scheduler", "rq-affinity"]);
    c.sets.push(set(&["scheduler", "rq-affinity"], 1.7));
    // Bounded: two subsets at most, and one held.
    assert_eq!(next_subset(&c), None);
    choose(&mut c, &best);
    assert_eq!(c.kept.levers, ["scheduler", "rq-affinity"]);
    assert!(c.beats_best);
    assert!(
        c.words
            .contains("kept the best set measured, without nr-requests"),
        "{}",
        c.words
    );
    // What the whole set bought is said beside the best change's.
    assert!(
        c.words.starts_with("the whole set bought less (+20"),
        "{}",
        c.words
    );
    let lines = lines(&c);
    assert!(
        lines.contains("measured without rq-affinity: IOPS +15"),
        "{lines}"
    );
    assert!(
        lines.contains("measured without nr-requests: IOPS +70"),
        "{lines}"
    );
}

#[test]
fn the_search_stops_once_a_set_fails() {
    let best = trial("scheduler", 1.5);
    let mut c = combination(&[best, trial("a", 1.2), trial("b", 1.1)]);
    let mut whole = set(&["scheduler", "a", "b"], 1.2);
    whole.turns.truncate(1);
    c.sets.push(whole);
    assert_eq!(next_subset(&c), None);
}

#[test]
fn one_change_that_helped_is_the_configuration_as_its_trial_measured_it() {
    let a = trial("scheduler", 1.5);
    let mut c = combination(std::slice::from_ref(&a));
    choose(&mut c, &a);
    assert!(c.kept.single);
    assert!(c.sets.is_empty());
    assert!(
        c.words.starts_with("one change helped beyond the noise"),
        "{}",
        c.words
    );
    assert_eq!(
        answer(&c, "the best change measured: x"),
        "the best change measured: x"
    );
    assert!(result_words(&c).contains("alone over 3 turns"));
}

#[test]
fn a_set_not_measured_says_why_and_keeps_the_best_change() {
    let a = trial("scheduler", 1.5);
    let mut c = combination(&[a.clone(), trial("nr-requests", 1.3)]);
    c.not_measured = Some("no time left in the budget for its turns".into());
    choose(&mut c, &a);
    assert!(c.kept.single);
    assert!(
        c.words
            .starts_with("the changes together were not measured: no time left"),
        "{}",
        c.words
    );
}

#[test]
fn the_candidates_are_one_per_lever_that_helped_best_first() {
    let mut no = trial("engine", 1.0);
    no.to = "libaio".into();
    let ts = [
        trial("scheduler", 1.5),
        trial("scheduler", 1.2),
        no,
        trial("nr-requests", 1.3),
    ];
    let ids: Vec<&str> = helped(&ts).iter().map(|t| t.lever.as_str()).collect();
    assert_eq!(ids, ["scheduler", "nr-requests"]);
    assert!(std::ptr::eq(helped(&ts)[0], &ts[0]));
}

#[test]
fn a_trials_section_without_a_combination_still_reads() {
    let old = r#"{"asked":true,"budget_s":30.0,"spent_s":10.0,"trials":[],"untested":[],"contradictions":[],"citations":[],"answer":"x"}"#;
    let s: Section = serde_json::from_str(old).unwrap();
    assert!(s.combination.is_none());
    let text = serde_json::to_string(&s).unwrap();
    assert!(!text.contains("combination"));
    let mut s = s;
    let a = trial("scheduler", 1.5);
    let mut c = combination(&[a.clone(), trial("nr-requests", 1.3)]);
    c.sets.push(set(&["scheduler", "nr-requests"], 1.6));
    choose(&mut c, &a);
    s.combination = Some(c.clone());
    let back: Section = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    let back = back.combination.unwrap();
    assert_eq!((back.kept.levers, back.words), (c.kept.levers, c.words));
    assert!(back.beats_best && back.kept.turns.len() == 3);
}

#[test]
fn a_cap_whose_lift_measured_worse_where_it_did_not_bind_is_tried_behind_the_change_that_helped() {
    let front = trial("max-sectors", 1.8);
    let mut throttle = trial("io-throttle", 0.9);
    throttle.kind = Kind::Cgroup;
    assert_eq!(throttle.outcome, Outcome::Worse);
    let cap = |id: &str| id == "io-throttle";
    // Worse, with nothing to say its limit did not bind: not tried again.
    let ts = [front.clone(), throttle.clone()];
    assert!(behind(&ts, &[&ts[0]], &cap).is_empty());
    // Its baseline ran below the throttle: the loss is not the limit's,
    // which binds once the request size is lifted.
    throttle.unbound = Some("its baseline ran at 9609 IOPS, below the throttle's 15259".into());
    let ts = [front, throttle];
    let ids: Vec<&str> = behind(&ts, &[&ts[0]], &cap)
        .iter()
        .map(|t| t.lever.as_str())
        .collect();
    assert_eq!(ids, ["io-throttle"]);
}

#[test]
fn a_whole_set_that_only_matched_its_best_change_is_said_so_beside_the_subset_kept() {
    let best = trial("scheduler", 1.5);
    let mut c = combination(&[
        best.clone(),
        trial("nr-requests", 1.3),
        trial("cpu-idle", 1.1),
    ]);
    c.sets
        .push(set(&["scheduler", "nr-requests", "cpu-idle"], 1.505));
    // The whole set did not beat the best change: the search goes on.
    assert_eq!(next_subset(&c).unwrap(), ["scheduler", "nr-requests"]);
    c.sets.push(set(&["scheduler", "nr-requests"], 1.9));
    choose(&mut c, &best);
    assert_eq!(c.kept.levers, ["scheduler", "nr-requests"]);
    assert!(
        c.words.starts_with("the whole set bought no more (+50."),
        "{}",
        c.words
    );
    assert!(
        c.words
            .contains("beyond the noise; kept the best set measured, without cpu-idle"),
        "{}",
        c.words
    );
}

/// A queue's lift and a scheduler's that each helped, and behind them a
/// throttle's lift that bought nothing alone.
fn two_and_a_cap() -> (Trial, Combination) {
    let (q, s, cap) = (
        trial("nr-requests", 1.7),
        trial("scheduler", 1.3),
        trial("io-throttle", 1.01),
    );
    let mut c = combination(&[q.clone(), s, cap]);
    c.changes[2].behind = true;
    (q, c)
}

#[test]
fn a_cap_kept_behind_other_changes_is_measured_without_them_once_and_earns_its_place() {
    let (q, mut c) = two_and_a_cap();
    let whole = ["nr-requests", "scheduler", "io-throttle"];
    c.sets.push(set(&whole, 3.5));
    // The whole set beat the queue alone: the same set without the cap next.
    assert_eq!(
        next_subset(&c),
        Some(vec!["nr-requests".to_string(), "scheduler".to_string()])
    );
    c.sets.push(set(&["nr-requests", "scheduler"], 1.8));
    assert_eq!(next_subset(&c), None);
    choose(&mut c, &q);
    assert_eq!(c.kept.levers, whole);
    assert!(
        c.words.contains("without io-throttle they bought +80"),
        "{}",
        c.words
    );
}

#[test]
fn a_cap_that_adds_nothing_behind_other_changes_is_left_out_of_the_set() {
    let (q, mut c) = two_and_a_cap();
    c.sets
        .push(set(&["nr-requests", "scheduler", "io-throttle"], 2.2));
    c.sets.push(set(&["nr-requests", "scheduler"], 2.21));
    assert_eq!(next_subset(&c), None);
    choose(&mut c, &q);
    assert_eq!(c.kept.levers, ["nr-requests", "scheduler"]);
    assert!(
        c.words
            .contains("io-throttle a → b bought nothing alone, nor behind the others"),
        "{}",
        c.words
    );
}
