//! Comparisons of hand-made results: identical, slower, noisy, incomparable.

use super::*;
use crate::figures::StudyView;
use crate::figures::{from_run, from_study};
use ssdready_core::hist::LatSummary;
use ssdready_core::result::{CpuCost, DirResult, JobResult, PhaseResult, RunResult};
use ssdready_core::spec::{JobSpec, RwMode};
use ssdready_core::stats::SecSample;
use ssdready_measured::record::RunRecord;
use ssdready_measured::summary::PointSummary;

/// A one-job run: `per_sec` I/Os in each whole second, latencies in ns.
fn run(rw: RwMode, target: &str, per_sec: &[u64], mean_ns: f64, p99_ns: u64) -> RunResult {
    let spec = JobSpec {
        name: "t".into(),
        rw,
        filename: vec![target.into()],
        ..JobSpec::default()
    };
    let total: u64 = per_sec.iter().sum();
    let secs = per_sec.len() as u64;
    let d = DirResult {
        ios: total,
        bytes: total * 4096,
        iops: total as f64 / secs as f64,
        bw_bytes_per_s: (total * 4096) as f64 / secs as f64,
        lat: LatSummary {
            n: total,
            mean_ns,
            percentiles: vec![(50.0, mean_ns as u64), (99.0, p99_ns)],
            ..LatSummary::default()
        },
        series: per_sec
            .iter()
            .map(|&ios| SecSample {
                ios,
                bytes: ios * 4096,
                ..SecSample::default()
            })
            .collect(),
        ..DirResult::default()
    };
    let mut cpu = CpuCost::default();
    cpu.per_io.system_ns = 5000.0;
    cpu.per_io.process_ns = 1000.0;
    cpu.sources.system_error_ns = 10.0;
    let job = JobResult {
        name: "t".into(),
        spec,
        workers: 1,
        measured_ns: secs * 1_000_000_000,
        read: (rw == RwMode::RandRead).then(|| d.clone()),
        write: (rw == RwMode::RandWrite).then_some(d),
        ..JobResult::default()
    };
    RunResult {
        schema: ssdready_core::result::SCHEMA.into(),
        schema_version: ssdready_core::result::SCHEMA_VERSION,
        jobs: vec![job],
        phases: vec![PhaseResult {
            jobs: vec![0],
            cpu: Some(cpu),
            ..PhaseResult::default()
        }],
        ..RunResult::default()
    }
}

fn cmp(a: &RunResult, b: &RunResult) -> Comparison {
    compare(
        (Origin::default(), &from_run(a)),
        (Origin::default(), &from_run(b)),
    )
}

const STEADY: &[u64] = &[10_000, 10_100, 9_900, 10_000];

#[test]
fn identical_runs_show_no_differences() {
    let a = run(RwMode::RandRead, "emu:nvme-tlc", STEADY, 90_000.0, 120_000);
    let c = cmp(&a, &a);
    assert!(c.comparable, "{:?}", c.not_comparable);
    assert_eq!(c.differences, 0);
    assert!(c.regressions.is_empty());
    assert!(c.figures.len() >= 6, "IOPS, bandwidth, latencies, CPU");
    assert!(c.figures.iter().all(|r| r.verdict == Verdict::Same));
    assert!(render_text(&c, false).contains("no differences beyond the noise"));
}

#[test]
fn a_slower_drive_is_worse_beyond_the_noise_on_every_key_figure() {
    let a = run(RwMode::RandRead, "emu:nvme-tlc", STEADY, 90_000.0, 120_000);
    let slow: Vec<u64> = STEADY.iter().map(|x| x / 8).collect();
    let b = run(
        RwMode::RandRead,
        "emu:nvme-tlc,fw_cmd_ns=40000",
        &slow,
        720_000.0,
        900_000,
    );
    let c = cmp(&a, &b);
    assert!(c.comparable);
    for name in ["t.read.iops", "t.read.lat_mean_ns", "t.read.lat_p99_ns"] {
        assert!(
            c.regressions.contains(&name.to_string()),
            "{name}: {:?}",
            c.regressions
        );
    }
    let iops = c.figures.iter().find(|r| r.name == "t.read.iops").unwrap();
    assert!(
        (iops.change_pct.unwrap() + 87.5).abs() < 0.1,
        "{:?}",
        iops.change_pct
    );
    assert!(
        c.notes.iter().any(|n| n.contains("targets differ")),
        "{:?}",
        c.notes
    );
    let text = render_regressions(&c);
    assert!(
        text.contains("read IOPS") && text.contains("-87.5 %"),
        "{text}"
    );
    // The other way round it is an improvement, not a regression.
    let back = cmp(&b, &a);
    assert!(back.regressions.is_empty(), "{:?}", back.regressions);
    assert!(back.better >= 3);
}

#[test]
fn a_change_within_the_per_second_noise_is_the_same() {
    // Seconds swing ±10 %: 2 × σ/mean ≈ 14 %; B is 5 % lower.
    let noisy = [11_000, 9_000, 11_000, 9_000];
    let a = run(RwMode::RandRead, "f", &noisy, 100_000.0, 200_000);
    let lower: Vec<u64> = noisy.iter().map(|x| x * 95 / 100).collect();
    let b = run(RwMode::RandRead, "f", &lower, 105_000.0, 210_000);
    let c = cmp(&a, &b);
    let iops = c.figures.iter().find(|r| r.name == "t.read.iops").unwrap();
    assert!((iops.noise_pct - 20.0).abs() < 0.5, "{}", iops.noise_pct);
    assert_eq!(iops.verdict, Verdict::Same);
    assert_eq!(c.differences, 0, "{}", render_text(&c, true));
}

#[test]
fn a_run_too_short_for_a_noise_estimate_is_judged_against_the_assumed_noise() {
    let a = run(RwMode::RandRead, "f", &[10_000, 10_000], 100_000.0, 200_000);
    let b = run(RwMode::RandRead, "f", &[9_500, 9_500], 105_000.0, 210_000);
    let c = cmp(&a, &b);
    let iops = c.figures.iter().find(|r| r.name == "t.read.iops").unwrap();
    assert_eq!(iops.noise_pct, UNKNOWN_NOISE_PCT);
    assert_eq!(iops.verdict, Verdict::Same);
    assert!(
        c.a.noise_basis.contains("under 3 whole seconds"),
        "{}",
        c.a.noise_basis
    );
}

#[test]
fn different_workloads_are_not_compared() {
    let a = run(RwMode::RandRead, "f", STEADY, 90_000.0, 120_000);
    let b = run(RwMode::RandWrite, "f", STEADY, 90_000.0, 120_000);
    let c = cmp(&a, &b);
    assert!(!c.comparable);
    assert!(c.figures.is_empty() && c.regressions.is_empty());
    assert!(
        c.not_comparable[0].contains("rw \"randread\" vs \"randwrite\""),
        "{:?}",
        c.not_comparable
    );
    assert!(render_text(&c, false).contains("not comparable"));
}

/// A study whose QD 1 point ran three times at `qd1` IOPS and QD 16 once.
fn study(qd1: &[f64], qd16: f64, lat_scale: f64) -> StudyView {
    let rec = |id: &str, point: &str, repeat: u32, iops: f64| RunRecord {
        id: id.into(),
        point: point.into(),
        sweep: "qd".into(),
        repeat,
        clock: "real".into(),
        summary: PointSummary {
            iops,
            lat_mean_ns: lat_scale * 1e9 / iops,
            lat_p99_ns: (lat_scale * 2e9 / iops) as u64,
            ..PointSummary::default()
        },
        ..RunRecord::default()
    };
    let mut runs: Vec<RunRecord> = qd1
        .iter()
        .enumerate()
        .map(|(i, &x)| rec(&format!("qd-1#{}", i + 1), "qd-1", i as u32 + 1, x))
        .collect();
    runs.push(rec("qd-16", "qd-16", 1, qd16));
    StudyView {
        targets: vec![ssdready_measured::record::TargetProfile {
            spec: "emu:x25e".into(),
            ..Default::default()
        }],
        runs,
        ..StudyView::default()
    }
}

#[test]
fn a_studys_noise_is_its_repeats_spread_and_a_single_point_takes_the_typical() {
    let s = from_study(&study(&[10_000.0, 10_500.0, 9_500.0], 80_000.0, 1.0));
    let qd1 = s.figure("qd-1.iops").unwrap();
    assert_eq!(qd1.value, 10_000.0, "the median of the repeats");
    assert!((qd1.noise_pct.unwrap() - 10.0).abs() < 1e-9);
    assert!(qd1.noise_source.contains("3 repeats"));
    let qd16 = s.figure("qd-16.iops").unwrap();
    assert!((qd16.noise_pct.unwrap() - 10.0).abs() < 1e-9);
    assert!(
        qd16.noise_source.contains("typical"),
        "{}",
        qd16.noise_source
    );
    assert!(s.figure("qd-1.lat_mean_ns").unwrap().key);
    assert!(!s.figure("qd-16.lat_mean_ns").unwrap().key);
}

#[test]
fn studies_compare_point_by_point_against_their_repeats() {
    let a = from_study(&study(&[10_000.0, 10_500.0, 9_500.0], 80_000.0, 1.0));
    let same = compare((Origin::default(), &a), (Origin::default(), &a));
    assert!(same.comparable && same.differences == 0);
    // QD 1 latency doubled: far beyond its 10 % spread.
    let b = from_study(&study(&[10_000.0, 10_500.0, 9_500.0], 80_000.0, 2.0));
    let c = compare((Origin::default(), &a), (Origin::default(), &b));
    assert!(
        c.regressions.contains(&"qd-1.lat_mean_ns".to_string()),
        "{:?}",
        c.regressions
    );
    assert!(c.regressions.contains(&"qd-1.lat_p99_ns".to_string()));
    assert!(
        !c.regressions.contains(&"qd-16.lat_mean_ns".to_string()),
        "not a key figure"
    );
    assert!(c
        .figures
        .iter()
        .any(|r| r.name == "qd-16.lat_mean_ns" && r.verdict == Verdict::Worse));
    // A study and a run measure different things.
    let r = from_run(&run(RwMode::RandRead, "f", STEADY, 1.0, 2));
    let x = compare((Origin::default(), &a), (Origin::default(), &r));
    assert!(!x.comparable && x.not_comparable[0].contains("a study and B a run"));
}

#[test]
fn a_fall_weighs_as_much_as_a_rise_by_the_same_factor() {
    // Noise 150 %: a 5-fold drop (−80 %) is beyond it, a 2-fold one is not.
    assert_eq!(judge(Better::Higher, 100.0, 20.0, 150.0), Verdict::Worse);
    assert_eq!(judge(Better::Higher, 100.0, 50.0, 150.0), Verdict::Same);
    assert_eq!(judge(Better::Lower, 100.0, 500.0, 150.0), Verdict::Worse);
    assert_eq!(judge(Better::Lower, 100.0, 200.0, 150.0), Verdict::Same);
    // Small noises: about ± the noise.
    assert_eq!(judge(Better::Higher, 100.0, 97.0, 2.0), Verdict::Worse);
    assert_eq!(judge(Better::Higher, 100.0, 98.5, 2.0), Verdict::Same);
    assert_eq!(judge(Better::Neither, 64.0, 128.0, 2.0), Verdict::Changed);
    assert_eq!(judge(Better::Lower, 0.0, 5.0, 2.0), Verdict::Worse);
}

#[test]
fn a_baseline_check_is_clean_regressed_or_not_made_with_its_exit_code() {
    use crate::load::Baseline;
    use crate::outcome::{differences, regression_check, RegressionCheck};
    let a = run(RwMode::RandRead, "emu:nvme-tlc", STEADY, 90_000.0, 120_000);
    let base = Baseline {
        origin: Origin {
            given: "7".into(),
            ..Origin::default()
        },
        side: from_run(&a),
    };
    let same = regression_check(&base, &from_run(&a));
    assert!(
        matches!(&same, RegressionCheck::Clean(l) if l.contains("baseline (7)")),
        "{same:?}"
    );
    assert_eq!(same.exit_code(), 0);
    let slow: Vec<u64> = STEADY.iter().map(|x| x / 8).collect();
    let b = run(RwMode::RandRead, "emu:nvme-tlc", &slow, 720_000.0, 900_000);
    let worse = regression_check(&base, &from_run(&b));
    assert_eq!(worse.exit_code(), 3);
    assert!(
        worse.lines().iter().any(|l| l.contains("read IOPS")),
        "{worse:?}"
    );
    let w = run(RwMode::RandWrite, "emu:nvme-tlc", STEADY, 90_000.0, 120_000);
    let other = regression_check(&base, &from_run(&w));
    assert_eq!(other.exit_code(), 1);
    assert!(other.lines()[0].contains("no regression check was made"));
    // compare.html's table: only the figures beyond the noise.
    let d = differences(&cmp(&a, &b));
    let rows = d["differences"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["verdict"] != "same"), "{rows:?}");
    assert!(differences(&cmp(&a, &a))["differences"]
        .as_array()
        .unwrap()
        .is_empty());
}
