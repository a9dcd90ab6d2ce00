//! Each layer's CPU from its kernel threads: which thread is whose, and a
//! layer named only where one of its threads held a whole CPU at the
//! stack's best runs.

use super::*;
use crate::stack::finding::StackFinding;
use ssdready_core::result::KernelWork;
use ssdready_measured::record::{RunContext, RunRecord};
use ssdready_measured::stack_layers::{DmTarget, LayerKind, MemberCounters, Stack, StackLayer};
use ssdready_measured::summary::CpuSummary;

fn layer(disk: &str, device: &str, kind: LayerKind, under: &[&str]) -> StackLayer {
    StackLayer {
        disk: disk.into(),
        device: device.into(),
        kind,
        under: under.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

fn dm(disk: &str, device: &str, ty: &str, under: &str) -> StackLayer {
    let kind = LayerKind::Dm {
        name: Some(format!("{ty}-vol")),
        targets: vec![DmTarget::new(0, 1 << 20, ty.into(), "x")],
        table_source: "DM_TABLE_STATUS ioctl".into(),
        cipher: None,
    };
    layer(disk, device, kind, &[under])
}

/// dm-1 (crypt) over md0 (`level` over nullb0, dm-0 delay over nullb1),
/// and a loop device beside.
fn stack(level: &str) -> Stack {
    let md = LayerKind::Md {
        level: Some(level.into()),
        chunk_bytes: Some(65536),
        raid_disks: Some(2),
        degraded: None,
        members: Vec::new(),
    };
    let phys = |d: &str, dev: &str| layer(d, dev, LayerKind::default(), &[]);
    Stack {
        target: "dm-1".into(),
        layers: vec![
            dm("dm-1", "253:1", "crypt", "md0"),
            layer("md0", "9:0", md, &["nullb0", "dm-0"]),
            phys("nullb0", "250:0"),
            dm("dm-0", "253:0", "delay", "nullb1"),
            phys("nullb1", "250:1"),
            layer(
                "loop0",
                "7:0",
                LayerKind::Loop { backing_file: None },
                &["vda"],
            ),
        ],
        ..Default::default()
    }
}

fn work(name: &str, threads: u32, cpus: f64, busiest: f64) -> KernelWork {
    KernelWork {
        work: name.into(),
        threads,
        cpus,
        busiest_thread_cpus: busiest,
        wait_pct: 0.0,
    }
}

#[test]
fn each_kernel_thread_is_counted_for_the_layer_it_works_for() {
    let s = stack("raid5");
    let owner = |w: &str| -> Vec<&str> {
        s.layers
            .iter()
            .filter(|l| works_for(&s, l, w))
            .map(|l| l.disk.as_str())
            .collect()
    };
    assert_eq!(owner("md0_raid5"), ["md0"]);
    assert_eq!(owner("md0_resync"), ["md0"]);
    assert!(owner("md01_raid1").is_empty(), "another array's thread");
    assert_eq!(owner("raid5wq"), ["md0"], "the one parity array's queue");
    assert_eq!(owner("kcryptd/253:1"), ["dm-1"]);
    assert_eq!(owner("kcryptd-253:1-1"), ["dm-1"]);
    assert!(
        owner("kcryptd-253:11-1").is_empty(),
        "another device's queue"
    );
    assert_eq!(owner("dmcrypt_write/253:1"), ["dm-1"]);
    assert_eq!(owner("kdmflush/253:0"), ["dm-0"]);
    assert_eq!(owner("kdelayd"), ["dm-0"], "the one delay target's queue");
    assert_eq!(owner("loop0"), ["loop0"]);
    assert!(owner("ksoftirqd").is_empty() && owner("kworker").is_empty());
    // A RAID 1 array has no parity queue.
    let s1 = stack("raid1");
    assert!(!s1.layers.iter().any(|l| works_for(&s1, l, "raid5wq")));

    let cpu = layers_cpu(
        &s,
        &[
            work("kcryptd/253:1", 2, 0.8, 0.45),
            work("dmcrypt_write/253:1", 1, 0.1, 0.1),
            work("md0_raid5", 1, 0.5, 0.5),
            work("ksoftirqd", 2, 0.3, 0.2),
        ],
        10_000.0,
    );
    let got: Vec<(&str, f64, f64)> = cpu
        .iter()
        .map(|c| (c.disk.as_str(), c.cpus, c.busiest_thread_cpus))
        .collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!((got[0].0, got[1].0), ("dm-1", "md0"));
    assert!((got[0].1 - 0.9).abs() < 1e-9 && (got[0].2 - 0.45).abs() < 1e-9);
    // 0.9 CPUs over 10,000 IOPS: 90 µs per I/O.
    assert!((cpu[0].ns_per_io - 90_000.0).abs() < 1e-6, "{cpu:?}");
}

fn at(id: &str, iops: f64, md_thread: f64) -> AtWork {
    let s = stack("raid5");
    let w = [work("md0_raid5", 1, md_thread, md_thread)];
    AtWork {
        run: id.into(),
        workload: "4k randwrite".into(),
        iops,
        layers: layers_cpu(&s, &w, iops),
        all_busy_cpus: None,
    }
}

#[test]
fn a_layer_whose_thread_holds_a_cpu_at_the_peak_is_named_and_only_then() {
    let s = stack("raid5");
    // Saturated at both best runs, idle at QD 1: named, with its advice.
    let runs = [
        at("qd-1", 2_000.0, 0.2),
        at("qd-32", 20_000.0, 0.97),
        at("qd-64", 19_500.0, 0.95),
    ];
    match saturated(&s, &runs).pop() {
        Some(StackFinding::LayerThread {
            disk,
            works,
            thread_cpus,
            runs,
            judged,
            advice,
            ..
        }) => {
            assert_eq!(
                (disk.as_str(), works, judged),
                ("md0", vec!["md0_raid5".to_string()], 2)
            );
            assert_eq!(runs, ["qd-32", "qd-64"]);
            assert!((thread_cpus - 0.97).abs() < 1e-9);
            assert!(advice.contains("group_thread_cnt"), "{advice}");
        }
        other => panic!("md0's thread not named: {other:?}"),
    }
    // Busy, but not a whole CPU: nothing.
    let runs = [at("qd-32", 20_000.0, 0.7), at("qd-64", 19_500.0, 0.8)];
    assert!(saturated(&s, &runs).is_empty());
    // Saturated on one of three runs near the peak: not more than half.
    let runs = [
        at("qd-16", 19_000.0, 0.5),
        at("qd-32", 20_000.0, 0.95),
        at("qd-64", 19_500.0, 0.6),
    ];
    assert!(saturated(&s, &runs).is_empty());
    // Saturated only far below the peak: not what holds the best runs.
    let runs = [at("qd-1", 2_000.0, 0.99), at("qd-32", 20_000.0, 0.3)];
    assert!(saturated(&s, &runs).is_empty());
    // Saturated at the writes' best, beside reads that go around the
    // thread and are faster: judged within the writes, named for them.
    let mut read = at("qd-32", 90_000.0, 0.05);
    read.workload = "4k randread".into();
    let runs = [read, at("rw-randwrite-qd4", 3_000.0, 0.98)];
    let f = saturated(&s, &runs);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].words().0.contains("best 4k randwrite runs"),
        "{:?}",
        f[0].words()
    );
}

#[test]
fn a_layer_whose_workers_fill_a_machine_busy_to_the_last_cpu_is_named() {
    let s = stack("raid1");
    // dm-crypt's queue over two workers, none a whole CPU.
    let crypt = |id: &str, iops: f64, cpus: f64, busy: Option<f64>| AtWork {
        run: id.into(),
        workload: "4k randread".into(),
        iops,
        layers: layers_cpu(&s, &[work("kcryptd-253:1-1", 2, cpus, cpus / 2.0)], iops),
        all_busy_cpus: busy,
    };
    let runs = [
        crypt("qd-4", 4_000.0, 1.3, Some(1.95)),
        crypt("qd-8", 4_100.0, 1.2, Some(1.9)),
    ];
    match saturated(&s, &runs).pop() {
        Some(f @ StackFinding::LayerThread { .. }) => {
            let (text, advice) = f.words();
            assert!(
                text.contains("every CPU was busy") && text.contains("1.30 of the 1.95 busy CPUs"),
                "{text}"
            );
            assert!(advice.contains("no_read_workqueue"), "{advice}");
        }
        other => panic!("the crypt layer not named: {other:?}"),
    }
    // The same workers on a machine with CPUs to spare: not the limit.
    let runs = [
        crypt("qd-4", 4_000.0, 1.3, None),
        crypt("qd-8", 4_100.0, 1.2, None),
    ];
    assert!(saturated(&s, &runs).is_empty());
    // Every CPU busy, but mostly with other work than the layer's.
    let runs = [
        crypt("qd-4", 4_000.0, 0.5, Some(1.95)),
        crypt("qd-8", 4_100.0, 0.4, Some(1.9)),
    ];
    assert!(saturated(&s, &runs).is_empty());
}

#[test]
fn the_study_names_the_crypt_layer_whose_write_thread_is_saturated() {
    let s = stack("raid1");
    let record = |id: &str, iops: f64, writer: f64| {
        let mut r = RunRecord {
            id: id.into(),
            context: Some(RunContext {
                members: vec![MemberCounters {
                    disk: "dm-1".into(),
                    write_ios: iops as u64,
                    window_ms: 1000,
                    ..Default::default()
                }],
                ..Default::default()
            }),
            ..Default::default()
        };
        r.workload.rw = "randwrite".into();
        r.summary.iops = iops;
        r.summary.cpu = Some(CpuSummary {
            kernel_work: vec![
                work("dmcrypt_write/253:1", 1, writer, writer),
                work("md0_raid1", 1, 0.2, 0.2),
            ],
            ..Default::default()
        });
        r
    };
    let runs = [record("qd-1", 3_000.0, 0.3), record("qd-32", 9_000.0, 0.99)];
    let j = crate::stack::judge(&s, &runs).expect("a stack");
    let named = j
        .findings
        .iter()
        .find_map(|f| match f {
            StackFinding::LayerThread { disk, advice, .. } => Some((disk.clone(), advice.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{:?}", j.findings));
    assert_eq!(named.0, "dm-1");
    assert!(named.1.contains("no_write_workqueue"), "{}", named.1);
    let qd32 = j.runs.iter().find(|r| r.run == "qd-32").unwrap();
    assert_eq!(qd32.layers_cpu.len(), 2, "{:?}", qd32.layers_cpu);
    let mut v = Vec::new();
    crate::stack::add_verdicts(&mut v, &j);
    assert_eq!(v[0].rule, "stack-layer-thread", "named first: {v:?}");
    assert!(v[0].finding.contains("dmcrypt_write/253:1") && v[0].finding.contains("99 %"));
    assert!(v[0].evidence.figures.iter().any(|f| f.0 == "dm-1 in qd-32"));
}

#[test]
fn the_layers_cpu_is_said_from_the_busiest_run_that_has_it_and_the_profiled_one() {
    use crate::stack::{MemberFigures, RunFigures, StackJudgement};
    let s = stack("raid5");
    let fig = |run: &str, ios: u64, thread: f64, profiled: bool| RunFigures {
        run: run.into(),
        members: vec![MemberFigures {
            disk: "dm-1".into(),
            ios,
            ..Default::default()
        }],
        layers_cpu: layers_cpu(&s, &[work("md0_raid5", 1, thread, thread)], ios as f64),
        profile: match profiled {
            true => vec![
                ("crypto".into(), 41.0, 30_500.0),
                ("md".into(), 4.0, 2_000.0),
            ],
            false => Vec::new(),
        },
        ..Default::default()
    };
    let j = StackJudgement {
        runs: vec![
            fig("qd-1", 1_000, 0.1, true),
            fig("qd-32", 9_000, 0.6, false),
        ],
        ..Default::default()
    };
    let l = lines(&j);
    assert_eq!(l.len(), 2, "{l:?}");
    assert!(
        l[0].starts_with("each layer's kernel threads over qd-32"),
        "{l:?}"
    );
    assert!(l[0].contains("md0 (md0_raid5) 0.60 CPUs"), "{l:?}");
    assert!(
        l[1].contains("over qd-1: crypto 41.0 % of the busy CPU, 30.50 µs per I/O"),
        "{l:?}"
    );
    assert!(lines(&StackJudgement::default()).is_empty());
}
