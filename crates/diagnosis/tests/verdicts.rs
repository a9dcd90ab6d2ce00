//! The verdict rules against synthetic sweeps: runs made up to show one
//! bottleneck each (a CPU-bound submitter on a RAM device whose completions
//! wait, a costly scheduler, the page cache hiding the device, a lock, a
//! device-bound SSD, a zero-latency device, a noisy machine), judged by the
//! shipped rules. Each test checks the verdict names the bottleneck with
//! its figures.

use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::{judge, Inputs, Judgement};
use ssdready_measured::record::Workload;
use ssdready_measured::record::{Machine, RunRecord, TargetKind, TargetProfile, Verdict};
use ssdready_measured::summary::{
    CpuSummary, DecompSummary, DiskSummary, PointSummary, ProfileSummary,
};

const DEV: &str = "/dev/loop9";

fn rec(sweep: &str, point: &str, repeat: u32, qd: u32, iops: f64, lat_ns: f64) -> RunRecord {
    RunRecord {
        id: if repeat > 1 {
            format!("{point}#{repeat}")
        } else {
            point.into()
        },
        point: point.into(),
        sweep: sweep.into(),
        repeat,
        workload: Workload {
            rw: "randread".into(),
            bs: 4096,
            qd,
            threads: 1,
            engine: Some("io_uring".into()),
            direct: true,
            targets: vec![DEV.into()],
            ..Default::default()
        },
        clock: "real".into(),
        summary: PointSummary {
            iops,
            bw_bytes_per_s: iops * 4096.0,
            lat_mean_ns: lat_ns,
            lat_p99_ns: (lat_ns * 2.0) as u64,
            read_iops: iops,
            cpu: Some(CpuSummary {
                thread_busy_max_pct: Some(40.0),
                system_busy_pct: 50.0,
                system_ns_per_io: 8000.0,
                system_clocks_per_io: Some(20_000.0),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}

fn busy(mut r: RunRecord, thread: f64, system: f64) -> RunRecord {
    let c = r.summary.cpu.as_mut().unwrap();
    c.thread_busy_max_pct = Some(thread);
    c.system_busy_pct = system;
    r
}

fn profiled(r: RunRecord, d: Option<DecompSummary>, p: Option<ProfileSummary>) -> RunRecord {
    let mut r = r;
    r.sweep = "instrumented".into();
    r.instrumented = true;
    r.point = format!("{}-profiled", r.point);
    r.id = r.point.clone();
    r.summary.decomposition = d;
    r.summary.profile = p;
    r
}

fn decomp(above: f64, block: f64, device: f64, completion: f64) -> DecompSummary {
    let total = above + block + device + completion;
    let part = |n: &str, v: f64| (n.to_string(), v, 100.0 * v / total);
    DecompSummary {
        parts: vec![
            part("above block, submission", above),
            part("block layer and scheduler", block),
            part("driver and device", device),
            part("completion to the app", completion),
        ],
        platform_share_pct: Some(100.0 - 100.0 * device / total),
        device_ns: Some(device),
        completion_share_pct: Some(100.0 * completion / total),
        ..Default::default()
    }
}

fn layers(v: &[(&str, f64)]) -> ProfileSummary {
    ProfileSummary {
        layers: v
            .iter()
            .map(|(l, s)| (l.to_string(), *s, s * 100.0, Some(s * 250.0)))
            .collect(),
        ..Default::default()
    }
}

fn ram_device() -> TargetProfile {
    TargetProfile {
        spec: DEV.into(),
        kind: TargetKind::RamDevice,
        transport: "loop".into(),
        device: Some("loop9".into()),
        scheduler: Some("none".into()),
        schedulers: vec![
            "none".into(),
            "mq-deadline".into(),
            "kyber".into(),
            "bfq".into(),
        ],
        logical_block_size: 512,
        writable: true,
        ..Default::default()
    }
}

/// A queue-depth curve with three measurements of QD 1, the two depths
/// below the peak, and the peak.
fn curve(points: &[(u32, f64, f64)], peak: u32, spread: f64) -> Vec<RunRecord> {
    let mut v = Vec::new();
    for &(qd, iops, lat) in points {
        v.push(rec("qd", &format!("qd-{qd}"), 1, qd, iops, lat));
    }
    let key = |qd: u32| qd == 1 || qd == peak || qd * 2 == peak || qd * 4 == peak;
    for r in 2..=3 {
        for &(qd, iops, lat) in points.iter().filter(|p| key(p.0)) {
            let k = if r == 2 { 1.0 + spread } else { 1.0 - spread };
            v.push(rec("repeat", &format!("qd-{qd}"), r, qd, iops * k, lat));
        }
    }
    v
}

fn run(targets: &[TargetProfile], runs: &[RunRecord]) -> Judgement {
    let m = Machine {
        cpus: 2,
        ..Default::default()
    };
    judge(&Inputs::of(targets, &m, runs))
}

fn verdict<'a>(j: &'a Judgement, rule: &str) -> &'a Verdict {
    j.verdicts
        .iter()
        .find(|v| v.rule == rule)
        .unwrap_or_else(|| {
            panic!(
                "no verdict {rule}; got {:#?}\nsaturation {:?}",
                j.verdicts
                    .iter()
                    .map(|v| (&v.rule, &v.finding))
                    .collect::<Vec<_>>(),
                j.figures.saturation
            )
        })
}

/// Foong et al. and the README's loop device: the submitter is CPU-bound, both CPUs
/// are busy and finished I/Os wait for it.
fn loop_device_runs() -> Vec<RunRecord> {
    let mut runs = curve(
        &[
            (1, 61_000.0, 16_300.0),
            (2, 110_000.0, 18_000.0),
            (4, 170_000.0, 23_000.0),
            (8, 210_000.0, 38_000.0),
            (16, 225_000.0, 71_000.0),
            (32, 230_000.0, 139_000.0),
            (64, 229_000.0, 279_000.0),
        ],
        32,
        0.01,
    );
    for r in runs.iter_mut().filter(|r| r.workload.qd >= 16) {
        *r = busy(r.clone(), 98.0, 99.0);
    }
    runs.push(profiled(
        rec("qd", "qd-1", 1, 1, 60_000.0, 16_300.0),
        Some(decomp(1_850.0, 350.0, 8_140.0, 5_980.0)),
        None,
    ));
    runs.push(profiled(
        busy(rec("qd", "qd-32", 1, 32, 210_000.0, 150_000.0), 98.0, 99.0),
        Some(decomp(3_000.0, 1_500.0, 31_000.0, 110_000.0)),
        Some(layers(&[
            ("io_uring", 41.0),
            ("block-core", 26.0),
            ("driver", 14.0),
            ("memory", 3.0),
        ])),
    ));
    runs
}

#[test]
fn a_cpu_bound_submitter_is_named_with_its_layers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let j = run(&[ram_device()], &loop_device_runs());
    assert_eq!(j.figures.saturation.limit, Cause::OneCore);
    assert_eq!(j.figures.knee_qd, Some(8));
    let v = verdict(&j, "one-core");
    assert!(
        v.finding.contains("One core saturates at 232.3K IOPS"),
        "{}",
        v.finding
    );
    assert!(
        v.finding
            .contains("io_uring 41 %, block-core 26 %, driver 14 %"),
        "{}",
        v.finding
    );
    assert_eq!(v.confidence, "high", "{}", v.confidence_why);
    assert!(
        v.evidence.runs.contains(&"qd-32-profiled".to_string()),
        "{:?}",
        v.evidence
    );
}

#[test]
fn late_completions_on_a_busy_core_are_the_cores_doing_not_a_cause_of_their_own() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let j = run(&[ram_device()], &loop_device_runs());
    // 76 % of the latency is completion to the app, but the core that
    // reaps is the one that is busy: the core is named, not the reaping.
    assert_eq!(j.figures.saturation.limit, Cause::OneCore);
    assert!(j.verdicts.iter().all(|v| v.rule != "completions-limit"));
    let c = j
        .figures
        .saturation
        .ruled_out
        .iter()
        .find(|r| r.cause == Cause::Completions)
        .unwrap();
    assert!(
        c.why.contains("scarce") || c.why.contains("weighed after"),
        "{}",
        c.why
    );
    let p = j.figures.platform_share_qd1.as_ref().unwrap();
    assert!((p.pct - 50.1).abs() < 0.1, "{p:?}");
    assert!(verdict(&j, "platform-owns-qd1").finding.contains("50 %"));
}

/// The scheduler sweep's runs: each scheduler at QD 1 and QD 32 with its
/// IOPS there, one I/O's latency the inverse of its rate.
fn schedulers_at_qd1_and_32(each: &[(&str, f64, f64)]) -> Vec<RunRecord> {
    let mut runs = Vec::new();
    for &(s, q1, q32) in each {
        for (qd, iops) in [(1, q1), (32, q32)] {
            let mut r = rec(
                "scheduler",
                &format!("sched-{s}-qd{qd}"),
                1,
                qd,
                iops,
                1e9 / iops,
            );
            r.workload.scheduler = Some(s.into());
            runs.push(r);
        }
    }
    runs
}

#[test]
fn a_scheduler_that_costs_at_qd1_only_is_quantified() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut runs = loop_device_runs();
    runs.extend(schedulers_at_qd1_and_32(&[
        ("none", 61_000.0, 230_000.0),
        ("mq-deadline", 52_460.0, 230_000.0),
        ("kyber", 60_000.0, 229_000.0),
        ("bfq", 58_000.0, 228_000.0),
    ]));
    let j = run(&[ram_device()], &runs);
    let v = verdict(&j, "scheduler-costs");
    assert!(
        v.finding
            .starts_with("mq-deadline costs 14 % of IOPS at QD 1 and 0 % at QD 32"),
        "{}",
        v.finding
    );
    assert!(v.recommendation.contains("Use none"));
}

#[test]
fn schedulers_that_all_beat_none_are_said_to_gain_not_to_cost_less_than_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // Every scheduler ahead of none at both depths (a noisy loop device).
    let mut runs = loop_device_runs();
    runs.extend(schedulers_at_qd1_and_32(&[
        ("none", 50_000.0, 200_000.0),
        ("bfq", 55_000.0, 210_000.0),
    ]));
    let j = run(&[ram_device()], &runs);
    let v = verdict(&j, "schedulers-cost-nothing");
    assert!(
        v.finding.starts_with("No I/O scheduler cost IOPS here: even the dearest, bfq, gave 10 % more than none at QD 1 and 5 % more at QD 32"),
        "{}",
        v.finding
    );
    let rules: Vec<&str> = j.verdicts.iter().map(|v| v.rule.as_str()).collect();
    assert!(!rules.contains(&"schedulers-cost-little"), "{rules:?}");
}

#[test]
fn a_scheduler_that_costs_only_at_depth_still_costs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // bfq: 1 % at QD 1, 29 % at QD 32 (a RAM loop device under bfq).
    let mut runs = loop_device_runs();
    for (s, q1, q32) in [("none", 61_000.0, 230_000.0), ("bfq", 60_400.0, 163_300.0)] {
        for (qd, iops) in [(1, q1), (32, q32)] {
            let mut r = rec(
                "scheduler",
                &format!("sched-{s}-qd{qd}"),
                1,
                qd,
                iops,
                qd as f64 * 1e9 / iops,
            );
            r.workload.scheduler = Some(s.into());
            runs.push(r);
        }
    }
    let j = run(&[ram_device()], &runs);
    let v = verdict(&j, "scheduler-costs");
    assert!(
        v.finding
            .starts_with("bfq costs 1 % of IOPS at QD 1 and 29 % at QD 32"),
        "{}",
        v.finding
    );
    assert!(
        !j.verdicts
            .iter()
            .any(|v| v.rule == "schedulers-cost-little"),
        "{:?}",
        j.verdicts.iter().map(|v| &v.rule).collect::<Vec<_>>()
    );
}

#[test]
fn a_scheduler_cost_within_its_error_is_ruled_out_saying_so() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // bfq against none at QD 32, three rounds in turns on a busy machine:
    // bfq 60K, 200K and 130K against none's steady 230K.
    let mut runs = loop_device_runs();
    for (round, bfq) in [(1, 60_000.0), (2, 200_000.0), (3, 130_000.0)] {
        for (s, iops) in [("bfq", bfq), ("none", 230_000.0)] {
            let mut r = rec(
                "scheduler",
                &format!("sched-{s}-qd32"),
                round,
                32,
                iops,
                32e9 / iops,
            );
            r.workload.scheduler = Some(s.into());
            runs.push(r);
        }
    }
    let mut t = ram_device();
    t.scheduler = Some("bfq".into());
    let j = run(&[t], &runs);
    let sat = &j.figures.saturation;
    assert_ne!(sat.limit, Cause::Scheduler, "{sat:?}");
    let why = &sat
        .ruled_out
        .iter()
        .find(|r| r.cause == Cause::Scheduler)
        .unwrap()
        .why;
    assert!(
        why.starts_with("bfq costs") && why.contains("not beyond twice its error"),
        "{why}"
    );
}

#[test]
fn buffered_reads_that_hit_the_cache_hide_the_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut runs = loop_device_runs();
    let mut r = rec("buffered", "buffered-qd1", 1, 1, 400_000.0, 2_500.0);
    r.workload.direct = false;
    r.summary.disk = Some(DiskSummary {
        name: "loop9".into(),
        cache_hit_pct: Some(97.0),
        ..Default::default()
    });
    runs.push(r);
    let j = run(&[ram_device()], &runs);
    let v = verdict(&j, "buffered-hides-device");
    assert!(v.finding.contains("97 % page-cache hits"), "{}", v.finding);
    assert!(
        v.finding.contains("400.0K IOPS against 61.6K IOPS direct"),
        "{}",
        v.finding
    );
}

#[test]
fn a_lock_in_the_profile_is_the_limit() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut runs = curve(
        &[
            (1, 50_000.0, 20_000.0),
            (2, 80_000.0, 25_000.0),
            (4, 81_000.0, 49_000.0),
            (8, 80_500.0, 99_000.0),
        ],
        4,
        0.01,
    );
    let mut p = layers(&[("block-core", 40.0), ("driver", 30.0)]);
    p.lock_share_pct = 32.0;
    p.lock_functions = vec!["native_queued_spin_lock_slowpath".into()];
    runs.push(profiled(
        busy(rec("qd", "qd-4", 1, 4, 80_000.0, 50_000.0), 60.0, 70.0),
        None,
        Some(p),
    ));
    let j = run(&[ram_device()], &runs);
    assert_eq!(j.figures.saturation.limit, Cause::Lock);
    assert!(verdict(&j, "a-lock")
        .finding
        .contains("native_queued_spin_lock_slowpath"));
}

#[test]
fn a_device_bound_ssd_without_a_basis_is_a_rate_limit_below_the_host() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut t = ram_device();
    t.kind = TargetKind::BlockDevice;
    t.transport = "nvme".into();
    let mut runs = curve(
        &[
            (1, 12_000.0, 83_000.0),
            (2, 23_000.0, 87_000.0),
            (4, 44_000.0, 91_000.0),
            (8, 80_000.0, 100_000.0),
            (16, 98_000.0, 163_000.0),
            (32, 100_000.0, 320_000.0),
            (64, 100_500.0, 637_000.0),
        ],
        64,
        0.02,
    );
    runs.push(profiled(
        rec("qd", "qd-1", 1, 1, 12_000.0, 83_000.0),
        Some(decomp(2_000.0, 500.0, 78_000.0, 2_500.0)),
        None,
    ));
    runs.push(profiled(
        rec("qd", "qd-64", 1, 64, 99_000.0, 640_000.0),
        Some(decomp(3_000.0, 2_000.0, 620_000.0, 15_000.0)),
        None,
    ));
    let j = run(&[t], &runs);
    // No model, no raw measurement, no specification: the device is not
    // named, and its best run is only the highest rate measured.
    assert_eq!(j.figures.saturation.limit, Cause::BelowHost);
    assert!(!j.facts.contains_key("device_limit"));
    assert!(j.facts.contains_key("highest_measured"));
    assert_eq!(j.figures.knee_qd, Some(16));
    let v = verdict(&j, "below-host-limit");
    assert!(v.finding.contains("from QD 16"), "{}", v.finding);
    assert!(
        v.finding.contains("78.0 µs at QD 1 to 620.0 µs at QD 64"),
        "{}",
        v.finding
    );
    assert!(v.recommendation.contains("platform tuning does not"));
    assert!(verdict(&j, "device-owns-qd1").finding.contains("6 %"));
}

#[test]
fn a_zero_latency_device_leaves_the_whole_limit_to_the_platform() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = TargetProfile {
        spec: "emu:null".into(),
        kind: TargetKind::Emulator,
        transport: "emulator".into(),
        writable: true,
        // The emulator's model of a zero-latency device: nothing bounds it.
        basis: Some(ssdready_measured::basis::DeviceBasis {
            source: ssdready_measured::basis::ANALYTIC_MODEL.into(),
            what: "the emulator's model of emu:null".into(),
            read_4k: Default::default(),
        }),
        ..Default::default()
    };
    let mut runs = curve(
        &[
            (1, 3.1e6, 300.0),
            (2, 3.3e6, 600.0),
            (4, 3.35e6, 1_200.0),
            (8, 3.3e6, 2_400.0),
        ],
        4,
        0.02,
    );
    for r in &mut runs {
        r.workload.targets = vec!["emu:null".into()];
        r.workload.engine = None;
        *r = busy(r.clone(), 100.0, 55.0);
    }
    let j = run(&[t], &runs);
    assert_eq!(j.figures.device_limit.iops, None);
    assert_eq!(j.figures.saturation.limit, Cause::OneCore);
    let v = verdict(&j, "platform-is-the-whole-limit");
    assert!(
        v.finding.contains("the platform is the whole limit"),
        "{}",
        v.finding
    );
    assert!(
        v.finding
            .contains("held by one core: ssdready's worker loop"),
        "{}",
        v.finding
    );
    assert!(j.verdicts.iter().all(|v| v.rule != "one-core"), "said once");
}

#[test]
fn a_noisy_machine_lowers_every_confidence() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut runs = loop_device_runs();
    for r in runs.iter_mut().filter(|r| r.repeat == 2) {
        r.summary.iops *= 1.4;
    }
    let j = run(&[ram_device()], &runs);
    // What holds the I/O comes first, then how far to trust it.
    assert_eq!(j.verdicts[0].rule, "one-core");
    let first = j
        .verdicts
        .iter()
        .find(|v| v.rule == "noisy-machine")
        .unwrap();
    assert!(
        first
            .finding
            .contains("typically varied by 21 % (standard deviation; up to 42 % apart"),
        "{}",
        first.finding
    );
    assert!(
        j.verdicts.iter().all(|v| v.confidence == "low"),
        "{:?}",
        j.verdicts
            .iter()
            .map(|v| (&v.rule, &v.confidence))
            .collect::<Vec<_>>()
    );
}

#[test]
fn one_point_that_flips_between_two_levels_is_named_and_only_its_verdicts_drop() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut runs = loop_device_runs();
    for r in runs
        .iter_mut()
        .filter(|r| r.point == "qd-1" && r.repeat > 1)
    {
        r.summary.iops = 17_800.0;
    }
    let j = run(&[ram_device()], &runs);
    assert!(j.verdicts.iter().all(|v| v.rule != "noisy-machine"));
    let v = verdict(&j, "unstable-point");
    assert!(
        v.finding
            .starts_with("qd-1 did not repeat: 61.0K, 17.8K, 17.8K"),
        "{}",
        v.finding
    );
    assert_eq!(
        verdict(&j, "one-core").confidence,
        "high",
        "the peak repeated well"
    );
}

#[test]
fn an_idle_host_waiting_mostly_on_the_device_is_a_limit_below_the_host() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut t = ram_device();
    t.kind = TargetKind::BlockDevice;
    t.transport = "virtio".into();
    let mut runs = curve(
        &[
            (1, 16_000.0, 60_000.0),
            (2, 30_000.0, 64_000.0),
            (4, 58_000.0, 66_000.0),
            (8, 100_000.0, 78_000.0),
            (16, 150_000.0, 105_000.0),
            (32, 165_000.0, 190_000.0),
            (64, 168_000.0, 380_000.0),
            (128, 168_500.0, 760_000.0),
        ],
        128,
        0.01,
    );
    runs.push(profiled(
        busy(
            rec("qd", "qd-128", 1, 128, 160_000.0, 780_000.0),
            21.0,
            17.0,
        ),
        Some(decomp(150_000.0, 45_000.0, 450_000.0, 130_000.0)),
        None,
    ));
    let j = run(&[t], &runs);
    assert_eq!(
        j.figures.saturation.limit,
        Cause::BelowHost,
        "{:?}",
        j.figures.saturation
    );
    assert!(
        j.figures
            .saturation
            .evidence
            .iter()
            .any(|e| e.contains("driver and device: 58 %")),
        "{:?}",
        j.figures.saturation.evidence
    );
    assert!(verdict(&j, "below-host-limit")
        .finding
        .contains("from QD 32"));
}

/// A 16-CPU virtio guest at QD 1, the engines taking turns: io_uring (the
/// queue-depth sweep's engine) 28.6K, 30.4K and, once, 44.3K; libaio
/// 31.0K, 37.2K, 31.9K; psync 39.5K, 38.4K, 34.4K. Each engine is its
/// repeats' median: io_uring's one high repeat does not make it the best.
#[test]
fn engines_at_qd1_are_compared_on_their_repeats_medians() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let engine = |e: &str, repeat: u32, iops: f64| {
        let point = format!("engine-{e}-qd1");
        let mut r = rec("engine", &point, repeat, 1, iops, 1e9 / iops);
        r.workload.engine = Some(e.into());
        r
    };
    let mut runs = vec![
        rec("qd", "qd-1", 1, 1, 28_618.0, 34_900.0),
        rec("repeat", "qd-1", 2, 1, 30_354.0, 33_000.0),
        rec("repeat", "qd-1", 3, 1, 44_303.0, 22_600.0),
        rec("qd", "qd-2", 1, 2, 44_500.0, 44_900.0),
        rec("qd", "qd-4", 1, 4, 65_800.0, 58_700.0),
    ];
    for (e, v) in [
        ("libaio", [30_983.0, 37_184.0, 31_882.0]),
        ("psync", [39_517.0, 38_352.0, 34_373.0]),
    ] {
        runs.extend(
            v.iter()
                .enumerate()
                .map(|(i, x)| engine(e, i as u32 + 1, *x)),
        );
    }
    let j = run(&[ram_device()], &runs);
    let v = verdict(&j, "engine-gap-qd1");
    assert!(
        v.finding
            .starts_with("At QD 1 psync (38.4K) beats io_uring (30.4K) by 26 %"),
        "{}",
        v.finding
    );
}
