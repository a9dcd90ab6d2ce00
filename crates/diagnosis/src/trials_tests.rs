//! Trials judged from recorded turns: the gain with its spread, the noise
//! verdict, the ranking, a contradiction, the untested reasons, the text.

use super::*;
use crate::levers::{shipped, Context, Kind, Point};
use crate::limit::Cause;
use crate::trials::plan::{pairs_that_fit, plan, Consent};

/// A lever kind's consent gate, as a trial records the kind.
fn gate(k: Kind, cause: Cause, c: &Consent) -> Result<(), (Reason, String)> {
    k.ops().gate(cause, c)
}
use crate::trials::section::*;
use ssdready_measured::record::{Evidence, Verdict};

fn m(iops: f64, p99_us: f64) -> Measured {
    Measured {
        iops,
        bw_bytes_per_s: iops * 4096.0,
        lat_mean_ns: 1e9 / iops,
        lat_p99_ns: p99_us * 1000.0,
        cpu_ns_per_io: Some(3000.0),
        directions: None,
    }
}

/// Turns of a baseline near `base` IOPS and a change at `ratio` times each
/// turn's baseline, with the given per-turn wobble of the ratio.
fn turns(base: f64, ratio: f64, wobble: &[f64]) -> Vec<Turn> {
    wobble
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let b = base * (1.0 + 0.01 * i as f64);
            Turn {
                baseline: m(b, 200.0),
                change: m(b * (ratio + w), 150.0),
            }
        })
        .collect()
}

fn trial(lever: &str, from: &str, to: &str, t: Vec<Turn>) -> Trial {
    let l = shipped().into_iter().find(|l| l.id == lever).unwrap();
    let mut x = Trial {
        lever: lever.into(),
        kind: l.kind,
        what: l.what,
        from: from.into(),
        to: to.into(),
        at: "4 KiB random reads at QD 32 × 1 thread".into(),
        measure: l.measure,
        turns: t,
        permanent: "ACTION==\"add|change\", KERNEL==\"loop7\", ATTR{queue/scheduler}=\"none\""
            .into(),
        ..Default::default()
    };
    judge_trial(&mut x);
    x
}

#[test]
fn a_gain_is_the_mean_of_the_pairs_with_their_spread() {
    let t = turns(100_000.0, 1.38, &[0.0, 0.04, -0.04]);
    let g = gain(&t, Metric::Iops).unwrap();
    assert!((g.change_pct - 38.0).abs() < 0.01, "{g:?}");
    assert!((g.spread_pct - 4.0).abs() < 0.01, "{g:?}");
    assert_eq!(g.pairs, 3);
    assert!(g.beyond_noise && g.better);
    // Latency: less is better; the same turns' p99 fell by a quarter.
    let p = gain(&t, Metric::P99).unwrap();
    assert!((p.change_pct + 25.0).abs() < 0.01 && p.better && p.beyond_noise);
    // Shown with the interval it is judged on: twice the spread of the
    // log ratios about their mean, back in percent.
    assert_eq!(fmt_gain(&g), "+38.0 % (+30.2 % … +46.2 %)");
}

#[test]
fn a_gain_that_multiplies_the_rate_is_judged_on_its_log_ratios() {
    // A throttle lifted: +200 %, +900 %, +550 % in the three pairs. The
    // percents spread 350 around their mean of 550, yet every pair is a
    // gain of three times or more: beyond the noise.
    let x = trial(
        "io-throttle",
        "in the study's group",
        "without the I/O throttle",
        turns(5000.0, 6.5, &[-3.5, 3.5, 0.0]),
    );
    let g = x.main_gain().unwrap();
    assert!((g.change_pct - 550.0).abs() < 1.0, "{g:?}");
    assert!(g.spread_pct > 300.0 && g.change_pct < 2.0 * g.spread_pct);
    assert!(g.beyond_noise && g.better, "{g:?}");
    assert_eq!(x.outcome, Outcome::Better);
    assert!(g.lower_bound() > 20.0, "{}", g.lower_bound());
    // +206 %, -33 %, +236 %: one pair lost; not beyond the noise, and
    // the turns too far apart to call it no change.
    let x = trial(
        "nr-requests",
        "4",
        "32",
        turns(1e5, 1.0, &[2.06, -0.33, 2.36]),
    );
    assert_eq!(x.outcome, Outcome::TooNoisy, "{:?}", x.main_gain());
}

#[test]
fn a_gain_within_twice_its_spread_is_no_change_or_too_noisy() {
    // +5 % with a spread of 4 %: within twice it, but the interval
    // reaches a gain of more than a tenth: too noisy to say no change.
    let x = trial(
        "scheduler",
        "mq-deadline",
        "none",
        turns(1e5, 1.05, &[0.0, 0.04, -0.04]),
    );
    assert_eq!(x.outcome, Outcome::TooNoisy, "{:?}", x.main_gain());
    let (lo, hi) = x.main_gain().unwrap().interval();
    assert!(lo < 0.0 && hi > SMALL_PCT, "{lo} {hi}");
    // +1 % with a spread of 1 %: within the noise, which is small.
    let x = trial(
        "scheduler",
        "mq-deadline",
        "none",
        turns(1e5, 1.01, &[0.0, 0.01, -0.01]),
    );
    assert_eq!(x.outcome, Outcome::NoGain, "{:?}", x.main_gain());
    // Turns that agree exactly still need twice the smallest spread.
    let x = trial(
        "scheduler",
        "mq-deadline",
        "none",
        turns(1e5, 1.015, &[0.0, 0.0, 0.0]),
    );
    assert_eq!(x.outcome, Outcome::NoGain);
    let x = trial(
        "scheduler",
        "mq-deadline",
        "none",
        turns(1e5, 1.03, &[0.0, 0.0, 0.0]),
    );
    assert_eq!(x.outcome, Outcome::Better);
    let x = trial(
        "scheduler",
        "none",
        "bfq",
        turns(1e5, 0.7, &[0.0, 0.01, -0.01]),
    );
    assert_eq!(x.outcome, Outcome::Worse);
    // One turn has no spread: no answer.
    let x = trial("scheduler", "mq-deadline", "none", turns(1e5, 2.0, &[0.0]));
    assert_eq!(x.outcome, Outcome::Incomplete);
}

#[test]
fn trials_rank_by_their_gain_beyond_the_noise() {
    let mut v = vec![
        trial(
            "scheduler",
            "bfq",
            "kyber",
            turns(1e5, 1.0, &[0.0, 0.01, -0.01]),
        ),
        trial(
            "scheduler",
            "bfq",
            "mq-deadline",
            turns(1e5, 1.20, &[0.0, 0.08, -0.08]),
        ),
        trial(
            "scheduler",
            "bfq",
            "none",
            turns(1e5, 1.15, &[0.0, 0.01, -0.01]),
        ),
        trial(
            "scheduler",
            "bfq",
            "x",
            turns(1e5, 0.5, &[0.0, 0.01, -0.01]),
        ),
    ];
    rank(&mut v);
    let order: Vec<&str> = v.iter().map(|t| t.to.as_str()).collect();
    // +15 % ± 1 % is surer than +20 % ± 8 %: 13 % against 4 % beyond.
    assert_eq!(order, ["none", "mq-deadline", "kyber", "x"]);
}

fn verdict(rule: &str, cause: &str) -> Verdict {
    Verdict {
        rule: rule.into(),
        finding: "f".into(),
        recommendation: "Lift it.".into(),
        confidence: "high".into(),
        confidence_why: "margin".into(),
        evidence: Evidence {
            figures: vec![("saturation_limit".into(), cause.into())],
            runs: Vec::new(),
        },
        ..Default::default()
    }
}

#[test]
fn a_throttle_lifted_with_no_gain_contradicts_the_diagnosis() {
    let table = shipped();
    let mut s = Section {
        trials: vec![trial(
            "io-throttle",
            "in the study's group",
            "without the I/O throttle",
            turns(5000.0, 1.002, &[0.0, 0.005, -0.005]),
        )],
        ..Default::default()
    };
    let mut v = vec![
        verdict("io-throttle-limit", "an I/O throttle"),
        verdict("random-writes", "x"),
    ];
    cite(&mut s, &mut v, &table, Cause::IoThrottle);
    assert_eq!(s.contradictions.len(), 1, "{:?}", s.contradictions);
    assert!(s.contradictions[0].text.contains("an I/O throttle"));
    assert!(
        s.contradictions[0]
            .text
            .contains("over 3 turns: no change beyond the noise, so the trial does not confirm it"),
        "{}",
        s.contradictions[0].text
    );
    assert_eq!(v[0].confidence, "medium");
    assert!(
        v[0].confidence_why.contains("lowered"),
        "{}",
        v[0].confidence_why
    );
    assert!(
        v[0].recommendation
            .contains("[measured: no change beyond the noise"),
        "{}",
        v[0].recommendation
    );
    // A verdict no lever answers is left as it was.
    assert_eq!(v[1].recommendation, "Lift it.");
    assert!(
        s.answer.contains("no change beat the baseline"),
        "{}",
        s.answer
    );
}

#[test]
fn a_named_quota_whose_lift_gains_nothing_points_the_headline_at_the_queue_that_gained() {
    // A 4-request queue beside a CPU quota: the study named the quota, its
    // lift moved nothing, the queue's lift gained beyond the noise.
    let table = shipped();
    let mut s = Section {
        trials: vec![
            trial(
                "cpu-quota",
                "in the study's group",
                "without the CPU quota",
                turns(100_000.0, 0.994, &[0.0, 0.07, -0.07]),
            ),
            trial(
                "nr-requests",
                "4",
                "128",
                turns(100_000.0, 3.74, &[0.0, 0.5, -0.5]),
            ),
        ],
        ..Default::default()
    };
    let mut v = vec![
        verdict("cpu-quota-limit", "a CPU quota"),
        verdict("also-held", "a CPU quota"),
        verdict("random-writes", "x"),
    ];
    v[0].finding = "The cgroup's CPU quota holds the study at 114.1K IOPS.".into();
    cite(&mut s, &mut v, &table, Cause::CpuQuota);
    assert_eq!(s.contradictions.len(), 1, "{:?}", s.contradictions);
    let c = &s.contradictions[0].text;
    assert!(
        c.contains("the trials point at the device's queue instead: nr-requests 4 → 128 gained IOPS +274.0 %"),
        "{c}"
    );
    // The headline opens with what the trials confirmed.
    assert!(
        v[0].finding.starts_with(
            "The trials point at the device's queue: nr-requests 4 → 128 gained IOPS +274.0 %"
        ),
        "{}",
        v[0].finding
    );
    assert!(
        v[0].finding
            .ends_with("Lifting what the measurements named gained nothing beyond the noise: the cgroup's CPU quota holds the study at 114.1K IOPS."),
        "{}",
        v[0].finding
    );
    assert_eq!(v[0].confidence, "medium");
    assert_eq!(
        v[1].finding, "f",
        "the headline alone says where the trials point"
    );
    assert_eq!(
        v[2].finding, "f",
        "a verdict of another cause is left as it was"
    );
    // Where no other change gained, the contradiction stands alone.
    s.trials.retain(|t| t.lever == "cpu-quota");
    let mut v = vec![verdict("cpu-quota-limit", "a CPU quota")];
    cite(&mut s, &mut v, &table, Cause::CpuQuota);
    assert!(
        !s.contradictions[0].text.contains("point at"),
        "{:?}",
        s.contradictions
    );
    assert_eq!(v[0].finding, "f", "the headline left as it was");
}

#[test]
fn a_jobs_trials_point_at_the_cause_of_the_change_that_gained_unless_it_is_the_one_named() {
    let table = shipped();
    let ts = vec![
        trial(
            "cpu-quota",
            "in the study's group",
            "without the CPU quota",
            turns(30_000.0, 1.005, &[0.0, 0.01, -0.01]),
        ),
        trial(
            "cpuset",
            "in the study's group",
            "without the cpuset",
            turns(30_000.0, 4.1, &[0.0, 0.2, -0.2]),
        ),
    ];
    // Nothing named: the cpuset's gain is where the trials point.
    let p = trials_point(&ts, &table, &[Cause::NotIdentified]).unwrap();
    assert!(
        p.starts_with("the trials point at the CPUs allowed: cpuset in the study's group → without the cpuset gained IOPS +310.0 %"),
        "{p}"
    );
    // The quota named, its lift gained nothing: the same.
    assert!(trials_point(&ts, &table, &[Cause::CpuQuota]).is_some());
    // The cpuset named: the trials confirm it.
    assert_eq!(trials_point(&ts, &table, &[Cause::CpusAllowed]), None);
    // Another job of the file named held by the cpuset: the trials point
    // at nothing the verdicts do not name already.
    let both = [Cause::CpuQuota, Cause::CpusAllowed];
    assert_eq!(trials_point(&ts, &table, &both), None);
    // No change gained: nowhere to point.
    assert_eq!(
        trials_point(&ts[..1], &table, &[Cause::NotIdentified]),
        None
    );
}

#[test]
fn a_lifted_throttle_that_gains_confirms_it_and_is_cited() {
    let table = shipped();
    let mut s = Section {
        trials: vec![trial(
            "io-throttle",
            "in the study's group",
            "without the I/O throttle",
            turns(5000.0, 34.0, &[0.0, 0.5, -0.5]),
        )],
        ..Default::default()
    };
    let mut v = vec![verdict("io-throttle-limit", "an I/O throttle")];
    cite(&mut s, &mut v, &table, Cause::IoThrottle);
    assert!(s.contradictions.is_empty());
    assert_eq!(v[0].confidence, "high");
    assert!(
        v[0].recommendation
            .contains("[measured: IOPS +3300.0 % (+3201.2 % … +3401.2 %) over 3 turns"),
        "{}",
        v[0].recommendation
    );
    assert!(s.citations[0].measured);
    assert!(s
        .answer
        .starts_with("the best change measured: io-throttle"));
}

#[test]
fn an_engine_the_finding_calls_slower_that_gains_in_turns_is_said_against_it() {
    // A noisy 16-CPU guest: io_uring's best QD 1 repeat (a 44.3K flip
    // among 28.6K and 30.4K) against libaio's 31.9K made "io_uring beats
    // libaio by 39 %"; in turns at QD 1, io_uring → libaio gained 4.8 %.
    let table = shipped();
    let mut s = Section {
        trials: vec![trial(
            "engine",
            "io_uring",
            "libaio",
            turns(30_000.0, 1.048, &[0.0, 0.01, -0.01]),
        )],
        ..Default::default()
    };
    let mut v = verdict("engine-gap-qd1", "");
    v.evidence.figures = vec![
        ("engine_gap_qd1".into(), "39 %".into()),
        ("engine_best_qd1".into(), "io_uring (44.3K)".into()),
        ("engine_worst_qd1".into(), "libaio (31.9K)".into()),
    ];
    let mut vs = vec![v.clone()];
    cite(&mut s, &mut vs, &table, Cause::NotIdentified);
    assert!(
        vs[0]
            .recommendation
            .contains("[measured against it: IOPS +4.8 %"),
        "{}",
        vs[0].recommendation
    );
    assert_eq!(vs[0].confidence, "medium");
    assert!(vs[0]
        .confidence_why
        .contains("lowered: measured against it"));
    assert!(s.citations.iter().any(|c| c.against), "{:?}", s.citations);
    // Where the trial went the finding's way (to the faster), it confirms.
    s.trials[0].from = "libaio".into();
    s.trials[0].to = "io_uring".into();
    let mut vs = vec![v];
    cite(&mut s, &mut vs, &table, Cause::NotIdentified);
    assert!(
        vs[0].recommendation.contains("[measured: IOPS +4.8 %"),
        "{}",
        vs[0].recommendation
    );
    assert_eq!(vs[0].confidence, "high");
    assert!(s.citations.iter().all(|c| !c.against), "{:?}", s.citations);
}

#[test]
fn other_work_lifted_by_raising_the_ios_threads_says_what_it_costs() {
    // The study's job at nice −10 beside busy loops: +45 % in every pair.
    let table = shipped();
    let mut s = Section {
        trials: vec![trial(
            "priority",
            "the study's job",
            "nice=-10",
            turns(100_000.0, 1.45, &[0.0, 0.02, -0.02]),
        )],
        ..Default::default()
    };
    let mut v = vec![verdict("other-work-limit", "other work")];
    cite(&mut s, &mut v, &table, Cause::OtherWork);
    // 45 of the 145 the lifted threads reached.
    assert!(
        v[0].recommendation
            .contains("; other work costs at least 31 % of the IOPS here]"),
        "{}",
        v[0].recommendation
    );
    // Another cause's gain says no such thing.
    let mut s = Section {
        trials: vec![trial(
            "io-throttle",
            "in the study's group",
            "outside the study's group",
            turns(5000.0, 1.45, &[0.0, 0.02, -0.02]),
        )],
        ..Default::default()
    };
    let mut v = vec![verdict("io-throttle-limit", "an I/O throttle")];
    cite(&mut s, &mut v, &table, Cause::IoThrottle);
    assert!(
        !v[0].recommendation.contains("other work costs"),
        "{}",
        v[0].recommendation
    );
}

#[test]
fn an_untried_recommendation_says_why_and_is_marked_untested() {
    let table = shipped();
    let mut s = Section {
        untested: vec![Untested {
            lever: "scheduler".into(),
            what: "the device's I/O scheduler".into(),
            reason: Reason::NotAsked,
            why: "a setting of this host: run with --try-changes to measure it".into(),
            estimate: None,
            command: None,
        }],
        ..Default::default()
    };
    let mut v = vec![
        verdict("scheduler-limit", "the scheduler"),
        verdict("below-host-limit", "a rate limit below this host"),
    ];
    cite(&mut s, &mut v, &table, Cause::Scheduler);
    assert!(
        v[0].recommendation
            .contains("[untested: a setting of this host"),
        "{}",
        v[0].recommendation
    );
    assert!(
        v[1].recommendation
            .contains("untested: a limit below this host"),
        "{}",
        v[1].recommendation
    );
    assert!(s.citations.iter().all(|c| !c.measured));
    assert_eq!(s.answer, "no change was tried (see why below)");
}

#[test]
fn the_section_in_words_gives_each_row_and_how_to_keep_it() {
    let table = shipped();
    let mut s = Section {
        trials: vec![
            trial(
                "scheduler",
                "mq-deadline",
                "none",
                turns(1e5, 1.38, &[0.0, 0.04, -0.04]),
            ),
            trial(
                "scheduler",
                "mq-deadline",
                "kyber",
                turns(1e5, 1.0, &[0.0, 0.01, -0.01]),
            ),
        ],
        ..Default::default()
    };
    s.trials[0].devices = vec!["loop7".into()];
    cite(&mut s, &mut [], &table, Cause::Scheduler);
    let text = crate::trials::text::section(&s);
    assert!(text.starts_with("what to change, measured"), "{text}");
    assert!(
        text.contains("1. scheduler mq-deadline → none on loop7: IOPS +38.0 % (+30.2 % … +46.2 %)"),
        "{text}"
    );
    assert!(text.contains("better beyond the noise; 3 turns at 4 KiB random reads"));
    assert!(text.contains("to keep it: ACTION==\"add|change\", KERNEL==\"loop7\""));
    assert!(text.contains("2. scheduler mq-deadline → kyber"));
    assert!(text.contains("no change beyond the noise"));
    assert!(text.contains("answer: the best change measured: scheduler mq-deadline → none"));
}

fn text_fact(v: &str) -> crate::facts::Fact {
    crate::facts::Fact::of(crate::facts::Value::Text(v.into()), "text", Vec::new())
}

fn block_device(cause: Cause) -> Context {
    let mut cx = Context {
        cause,
        cpu_list: "0-1".into(),
        ..Default::default()
    };
    cx.facts
        .insert("target_kind".into(), text_fact("BlockDevice"));
    for (k, v) in [("peak_qd", 32.0), ("cpus", 2.0)] {
        let mut f = text_fact("");
        f.value = crate::facts::Value::Num(v);
        cx.facts.insert(k.into(), f);
    }
    for (k, v) in [("scheduler", "[mq-deadline] none"), ("nr_requests", "4")] {
        cx.queue.insert(k.into(), v.into());
    }
    cx
}

fn at(_: crate::levers::At) -> Option<Point> {
    Some(Point {
        rw: "randread".into(),
        bs: 4096,
        qd: 32,
        threads: 1,
        engine: Some("io_uring".into()),
        direct: true,
        sizes: String::new(),
    })
}

#[test]
fn host_settings_need_root_and_asking_and_the_apparatus_s_are_never_tried() {
    let c = Consent {
        device: true,
        ..Default::default()
    };
    assert_eq!(
        gate(Kind::Queue, Cause::Scheduler, &c).unwrap_err().0,
        Reason::NotRoot
    );
    let root = Consent {
        root: true,
        ..c.clone()
    };
    assert_eq!(
        gate(Kind::Queue, Cause::Scheduler, &root).unwrap_err().0,
        Reason::NotAsked
    );
    let asked = Consent {
        asked: true,
        ..root.clone()
    };
    assert!(gate(Kind::Queue, Cause::Scheduler, &asked).is_ok());
    // The built-in drive's queue is the apparatus's: never a change to make.
    let ours = Consent {
        made_by_study: true,
        ..asked.clone()
    };
    assert_eq!(
        gate(Kind::Queue, Cause::Scheduler, &ours).unwrap_err().0,
        Reason::Apparatus
    );
    // The study's own group needs root, never asking; below the host it
    // moves nothing.
    assert!(gate(Kind::Cgroup, Cause::IoThrottle, &root).is_ok());
    assert_eq!(
        gate(Kind::Cgroup, Cause::IoThrottle, &c).unwrap_err().0,
        Reason::NotRoot
    );
    assert_eq!(
        gate(Kind::Cgroup, Cause::BelowHost, &root).unwrap_err().0,
        Reason::BelowHost
    );
    assert!(gate(Kind::Application, Cause::Scheduler, &Consent::default()).is_ok());
    let none = Consent {
        device: false,
        ..asked
    };
    assert_eq!(
        gate(Kind::Queue, Cause::Scheduler, &none).unwrap_err().0,
        Reason::NoDevice
    );
}

#[test]
fn a_quick_study_tries_the_first_two_levers_the_findings_point_at() {
    let table = shipped();
    let cx = block_device(Cause::OneCore);
    let c = Consent {
        device: true,
        root: true,
        asked: true,
        ..Default::default()
    };
    let (todo, not) = plan(&table, &cx, &[], &c, true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(todo.iter().all(|p| p.pointed && p.candidates.len() == 1));
    assert!(not.iter().any(|u| u.reason == Reason::Quick), "{not:?}");
    // The full study tries every lever that applies, pointed ones first;
    // a queue file the device lacks is said.
    let (todo, not) = plan(&table, &cx, &[], &c, false, &at);
    assert!(
        todo.len() > 4,
        "{:?}",
        todo.iter().map(|p| &p.lever.id).collect::<Vec<_>>()
    );
    assert!(todo[0].pointed);
    assert!(todo.iter().any(|p| p.lever.id == "nr-requests"));
    assert!(not
        .iter()
        .any(|u| u.reason == Reason::NotOffered && u.why.contains("queue/nomerges")));
    // Not root: the host's settings are listed as untested, the
    // application's own choices still tried.
    let user = Consent {
        device: true,
        ..Default::default()
    };
    let (todo, not) = plan(&table, &cx, &[], &user, false, &at);
    assert!(todo.iter().all(|p| p.lever.kind == Kind::Application));
    assert!(not
        .iter()
        .any(|u| u.lever == "scheduler" && u.reason == Reason::NotRoot));
}

#[test]
fn the_levers_the_cause_names_come_before_those_a_finding_points_at() {
    let table = shipped();
    let mut cx = block_device(Cause::OtherWork);
    cx.may_raise_priority = true;
    let c = Consent {
        device: true,
        root: true,
        ..Default::default()
    };
    // Other work holds the CPUs, and a finding also points at the engine
    // (listed before them in the table).
    let fired = ["engine-gap-peak".to_string()];
    let (todo, not) = plan(&table, &cx, &fired, &c, true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert_eq!(ids, ["priority", "pinning"], "{not:?}");
    assert!(not
        .iter()
        .any(|u| u.lever == "engine" && u.reason == Reason::Quick));
    // Without the right to raise a priority, the finding's lever is next.
    cx.may_raise_priority = false;
    let (todo, _) = plan(&table, &cx, &fired, &c, true, &at);
    let ids: Vec<&str> = todo.iter().map(|p| p.lever.id.as_str()).collect();
    assert_eq!(ids, ["pinning", "engine"]);
}

#[test]
fn an_engine_lever_with_every_engine_measured_slower_says_so() {
    let table = shipped();
    let mut cx = block_device(Cause::OneCore);
    cx.engines_measured = vec![
        ("io_uring".into(), 32, 200_000.0),
        ("libaio".into(), 32, 150_000.0),
        ("psync".into(), 32, 90_000.0),
    ];
    let c = Consent {
        device: true,
        ..Default::default()
    };
    let (todo, not) = plan(&table, &cx, &[], &c, false, &at);
    assert!(todo.iter().all(|p| p.lever.id != "engine"));
    let u = not.iter().find(|u| u.lever == "engine").expect("said");
    assert_eq!(u.reason, Reason::NoCandidate);
    assert!(
        u.why
            .contains("measured every other engine slower at QD 32"),
        "{}",
        u.why
    );
}

#[test]
fn trials_fit_the_time_left_or_are_not_run() {
    assert_eq!(pairs_that_fit(5, 100.0, 2.0), 5);
    assert_eq!(pairs_that_fit(5, 16.0, 2.0), 4);
    assert_eq!(pairs_that_fit(5, 11.0, 2.0), 0);
}

#[test]
fn advice_whose_every_trial_made_it_worse_cites_it_as_worse() {
    // Large reads four times as deep behind a drive whose one serving
    // thread holds them: −19 % in every pair.
    let table = shipped();
    let mut s = Section {
        trials: vec![trial(
            "large-depth",
            "the study's job",
            "iodepth=32",
            turns(2000.0, 0.81, &[0.0, 0.02, -0.02]),
        )],
        ..Default::default()
    };
    assert_eq!(s.trials[0].outcome, Outcome::Worse);
    let mut v = vec![verdict("bandwidth-short", "large reads")];
    cite(&mut s, &mut v, &table, Cause::Apparatus);
    assert!(
        v[0].recommendation.contains(
            "[measured: worse beyond the noise (large-depth the study's job → iodepth=32"
        ),
        "{}",
        v[0].recommendation
    );
}

#[test]
fn a_trial_whose_every_pair_lost_a_lot_is_worse_though_its_turns_spread_wide() {
    // −95 %, −80 %, −65 %: four fifths lost on average, but the log ratios
    // spread so wide that twice their spread reaches past zero. Every pair
    // lost a fifth or more, far beyond what the baseline's runs vary by:
    // worse, and said to rest on the pairs.
    let table = shipped();
    let mut s = Section {
        trials: vec![trial(
            "engine",
            "io_uring",
            "psync",
            turns(1e5, 0.2, &[-0.15, 0.0, 0.15]),
        )],
        ..Default::default()
    };
    let g = s.trials[0].main_gain().unwrap().clone();
    assert!(!g.beyond_noise && g.noise_interval().1 > 0.0, "{g:?}");
    assert!(g.every_pair && g.by_every_pair(), "{g:?}");
    assert_eq!(s.trials[0].outcome, Outcome::Worse);
    assert_eq!(fmt_gain(&g), "-80.0 % (pairs -95.0 % … -65.0 %)");
    assert_eq!(noise_words(&s.trials[0]), "worse in every pair");
    let mut v = vec![verdict("engine-gap-peak", "x")];
    cite(&mut s, &mut v, &table, Cause::OneCore);
    assert!(
        v[0].recommendation.contains(
            "[measured: worse in every pair (engine io_uring → psync: IOPS -80.0 % (pairs -95.0 % … -65.0 %) over 3 turns)"
        ),
        "{}",
        v[0].recommendation
    );
    // The same gains the other way: better in every pair.
    let x = trial(
        "engine",
        "psync",
        "io_uring",
        turns(1e5, 2.5, &[-1.2, 0.0, 2.5]),
    );
    let g = x.main_gain().unwrap();
    assert!(!g.beyond_noise && g.by_every_pair(), "{g:?}");
    assert_eq!(x.outcome, Outcome::Better);
    // Two pairs agree by chance one time in two: the pairs alone do not
    // judge them.
    let x = trial(
        "engine",
        "io_uring",
        "psync",
        turns(1e5, 0.2, &[-0.15, 0.15]),
    );
    assert_eq!(x.outcome, Outcome::TooNoisy, "{:?}", x.main_gain());
}

#[test]
fn pairs_that_move_less_than_the_baseline_runs_vary_do_not_judge_alone() {
    // −30 %, −70 %, −25 % in the pairs.
    let pairs = |base: [f64; 3]| -> Vec<Turn> {
        base.iter()
            .zip([0.7, 0.3, 0.75])
            .map(|(&b, r)| Turn {
                baseline: m(b, 200.0),
                change: m(b * r, 200.0),
            })
            .collect()
    };
    // On a quiet machine (its baselines within 2 %), each pair is beyond
    // the noise of one pair: worse in every pair.
    let quiet = trial("engine", "io_uring", "psync", pairs([1e5, 1.01e5, 0.99e5]));
    assert_eq!(quiet.outcome, Outcome::Worse, "{:?}", quiet.main_gain());
    // Where the baseline's own runs went 100K, 50K, 150K, a pair moves
    // that much by chance: too noisy to judge.
    let loud = trial("engine", "io_uring", "psync", pairs([1e5, 0.5e5, 1.5e5]));
    assert_eq!(loud.outcome, Outcome::TooNoisy, "{:?}", loud.main_gain());
}

/// Each gain's outcome against the interval shown with it, and the
/// trial's words against both.
fn check_words_and_interval(t: &Trial) {
    let small_low = 100.0 * ((1.0 + SMALL_PCT / 100.0).recip() - 1.0) - 1e-9;
    for g in &t.gains {
        let (lo, hi) = g.interval();
        let up = g.metric.higher_is_better();
        assert!(lo <= g.change_pct && g.change_pct <= hi, "{g:?}");
        let ok = match g.outcome() {
            Outcome::Better => (up && lo > 0.0) || (!up && hi < 0.0),
            Outcome::Worse => (up && hi < 0.0) || (!up && lo > 0.0),
            Outcome::NoGain => lo <= 0.0 && hi >= 0.0 && lo >= small_low && hi <= SMALL_PCT,
            Outcome::TooNoisy => lo <= 0.0 && hi >= 0.0 && (lo < small_low || hi > SMALL_PCT),
            o => panic!("{o:?} {g:?}"),
        };
        assert!(ok, "{:?}: {} {g:?}", g.outcome(), fmt_gain(g));
        assert_eq!(fmt_gain(g).contains("(pairs "), g.by_every_pair());
    }
    let g = t.main_gain().unwrap();
    let words = noise_words(t);
    let want = match (t.outcome, g.by_every_pair()) {
        (Outcome::Better, false) => "better beyond the noise",
        (Outcome::Better, true) => "better in every pair",
        (Outcome::Worse, false) => "worse beyond the noise",
        (Outcome::Worse, true) => "worse in every pair",
        (Outcome::NoGain, _) => "no change beyond the noise",
        (Outcome::TooNoisy, _) => "too noisy to judge",
        (o, _) => panic!("{o:?}"),
    };
    assert_eq!(words, want, "{}", fmt_gain(g));
}

#[test]
fn the_words_and_the_error_bar_shown_always_agree() {
    // "Beyond the noise" never with a bar across zero, "no change" and
    // "too noisy" always with one; "in every pair" with the pairs' range.
    let mut seen = std::collections::BTreeSet::new();
    for ratio in [0.2, 0.5, 0.8, 0.95, 1.0, 1.02, 1.05, 1.3, 3.0] {
        for f in [0.0, 0.01, 0.04, 0.1, 0.3, 0.5, 0.75] {
            let w = ratio * f;
            for wobble in [
                vec![0.0, w, -w],
                vec![w, w, -w],
                vec![w, -w],
                vec![0.0, w, -w, 0.5 * w, -0.5 * w],
            ] {
                let x = trial("scheduler", "a", "b", turns(1e5, ratio, &wobble));
                check_words_and_interval(&x);
                let every = x.main_gain().unwrap().by_every_pair();
                seen.insert(format!("{:?} {every}", x.outcome));
            }
        }
    }
    let want = [
        "Better false",
        "Better true",
        "NoGain false",
        "TooNoisy false",
        "Worse false",
        "Worse true",
    ];
    assert_eq!(seen.iter().map(|s| s.as_str()).collect::<Vec<_>>(), want);
}

#[test]
fn a_lift_at_a_point_where_the_limit_could_not_bind_lowers_no_verdict() {
    let table = shipped();
    let mut t = trial(
        "cpuset",
        "in the study's group",
        "without the cpuset",
        turns(50_000.0, 1.10, &[0.0, 0.17, -0.17]),
    );
    t.unbound = Some(
        "4 KiB random reads at QD 32 × 1 thread runs 1 thread, no more than the cpuset's 1 CPU"
            .into(),
    );
    let mut s = Section {
        trials: vec![t],
        ..Default::default()
    };
    let mut v = vec![verdict("cpus-allowed-limit", "the CPUs allowed")];
    cite(&mut s, &mut v, &table, Cause::CpusAllowed);
    assert!(s.contradictions.is_empty(), "{:?}", s.contradictions);
    assert_eq!(v[0].confidence, "high");
    assert!(
        v[0].recommendation
            .contains("at a point where its limit could not bind"),
        "{}",
        v[0].recommendation
    );
    let text = crate::trials::text::section(&s);
    assert!(text.contains("could not bind at this point"), "{text}");
    // The same trial where the limit could bind contradicts the finding.
    s.trials[0].unbound = None;
    let mut v = vec![verdict("cpus-allowed-limit", "the CPUs allowed")];
    cite(&mut s, &mut v, &table, Cause::CpusAllowed);
    assert_eq!(s.contradictions.len(), 1);
    assert_eq!(v[0].confidence, "medium");
}

#[test]
fn a_stacks_members_that_read_differently_are_said_each_with_its_value() {
    let alike = [
        ("md0".to_string(), "none".to_string()),
        ("loop1".into(), "none".into()),
    ];
    assert_eq!(members_differed(&alike), None);
    assert_eq!(members_differed(&[]), None);
    let apart = [
        ("md0".to_string(), "none".to_string()),
        ("loop1".into(), "mq-deadline".into()),
        ("loop2".into(), "none".into()),
    ];
    assert_eq!(
        members_differed(&apart).as_deref(),
        Some("none on md0, mq-deadline on loop1, none on loop2")
    );
    let t = Trial {
        lever: "scheduler".into(),
        from: "none".into(),
        to: "none".into(),
        members_differed: members_differed(&apart),
        ..Default::default()
    };
    let text = crate::trials::text::row(1, &t);
    assert!(
        text.contains("its devices differed before it (none on md0, mq-deadline on loop1, none on loop2): each was set alike for the trial and put back to its own"),
        "{text}"
    );
}

#[test]
fn a_set_of_lifts_names_no_limit_as_kept_that_it_lifts_too() {
    let throttle =
        "io-throttle in the study's group → without the I/O throttle, the CPU quota kept";
    let quota = "cpu-quota in the study's group → without the CPU quota, the I/O throttle and the cpuset kept";
    let set = crate::trials::set_words(&[throttle.into(), quota.into()]);
    assert_eq!(
        set,
        "io-throttle in the study's group → without the I/O throttle + cpu-quota in the study's group → without the CPU quota, the cpuset kept"
    );
    // Alone, a lift still says what it keeps; other changes are as they are.
    let alone = crate::trials::set_words(&[throttle.into(), "scheduler none → mq-deadline".into()]);
    assert_eq!(alone, format!("{throttle} + scheduler none → mq-deadline"));
}

#[test]
fn a_change_of_a_job_that_reads_and_writes_is_said_per_direction() {
    // A quota lifted where it held the reads, a throttle the writes: the
    // reads gain 150 %, the writes nothing, the total in between.
    let run = |r: f64, w: f64| Measured {
        directions: Some([r, w]),
        ..m(r + w, 100.0)
    };
    let turns: Vec<Turn> = [(16e3, 8e3, 40e3, 8.1e3), (18e3, 8e3, 45e3, 7.9e3)]
        .iter()
        .map(|&(br, bw, cr, cw)| Turn {
            baseline: run(br, bw),
            change: run(cr, cw),
        })
        .collect();
    let words = direction_words(&turns).expect("both directions in every run");
    assert_eq!(
        words,
        "reads +150.0 % (pairs +150.0 … +150.0 %), writes +0.0 % (pairs -1.2 … +1.2 %)"
    );
    // One run without its directions (an older document): no words.
    let mut old = turns.clone();
    old[1].change.directions = None;
    assert_eq!(direction_words(&old), None);
    assert_eq!(direction_words(&[]), None);
}
