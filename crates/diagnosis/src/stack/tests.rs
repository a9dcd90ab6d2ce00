//! The stack's judging on recorded counters: a RAID 0 with one member
//! behind dm-delay, an even healthy array, a RAID 5 written in small
//! blocks, a single-path dm-crypt, and too little I/O to judge.

use super::judge::misaligned;
use super::*;
use ssdready_measured::record::{RunContext, RunRecord, Workload};
use ssdready_measured::stack_layers::{
    DmTarget, LayerKind, MdMember, MemberCounters, Stack, StackLayer,
};

pub(super) fn layer(disk: &str, depth: u32, kind: LayerKind, under: &[&str]) -> StackLayer {
    StackLayer {
        disk: disk.into(),
        device: "0:0".into(),
        depth,
        kind,
        under: under.iter().map(|s| s.to_string()).collect(),
        source: format!("/sys/block/{disk}"),
        size_bytes: None,
        nr_requests: None,
    }
}

pub(super) fn phys(disk: &str, depth: u32) -> StackLayer {
    layer(
        disk,
        depth,
        LayerKind::Physical {
            transport: "null_blk".into(),
        },
        &[],
    )
}

pub(super) fn dm(disk: &str, name: &str, ty: &str, under: &str) -> StackLayer {
    layer(
        disk,
        1,
        LayerKind::Dm {
            name: Some(name.into()),
            targets: vec![DmTarget::new(0, 1 << 20, ty.into(), "x")],
            table_source: "DM_TABLE_STATUS ioctl".into(),
            cipher: None,
        },
        &[under],
    )
}

/// md0 (level, chunk 64k) over nullb0, dm-0 (delay over nullb1), dm-1
/// (crypt over nullb2).
pub(super) fn raid(level: &str) -> Stack {
    Stack {
        target: "md0".into(),
        layers: vec![
            layer(
                "md0",
                0,
                LayerKind::Md {
                    level: Some(level.into()),
                    chunk_bytes: Some(65536),
                    raid_disks: Some(3),
                    degraded: None,
                    members: Vec::new(),
                },
                &["nullb0", "dm-0", "dm-1"],
            ),
            phys("nullb0", 1),
            dm("dm-0", "slow", "delay", "nullb1"),
            dm("dm-1", "secret", "crypt", "nullb2"),
            phys("nullb1", 2),
            phys("nullb2", 2),
        ],
        physical: vec!["nullb0".into(), "nullb1".into(), "nullb2".into()],
        ..Default::default()
    }
}

/// Counters: (disk, reads, read ms, writes, write ms, io_ticks ms) over 1 s.
pub(super) fn c(disk: &str, r: u64, rt: u64, w: u64, wt: u64, busy: u64) -> MemberCounters {
    MemberCounters {
        disk: disk.into(),
        read_ios: r,
        read_sectors: r * 8,
        read_ticks_ms: rt,
        write_ios: w,
        write_sectors: w * 8,
        write_ticks_ms: wt,
        io_ticks_ms: busy,
        time_in_queue_ms: rt + wt,
        window_ms: 1000,
        ..Default::default()
    }
}

pub(super) fn run(id: &str, rw: &str, bs: u64, members: Vec<MemberCounters>) -> RunRecord {
    RunRecord {
        id: id.into(),
        workload: Workload {
            rw: rw.into(),
            bs,
            ..Default::default()
        },
        context: Some(RunContext {
            members,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// A 4k random-read run where dm-0 takes `slow_ms` per I/O.
fn delayed(id: &str, slow_ms: u64) -> RunRecord {
    run(
        id,
        "randread",
        4096,
        vec![
            c("md0", 3000, 1000 * slow_ms + 60, 0, 0, 990),
            c("nullb0", 1000, 20, 0, 0, 20),
            c("dm-0", 1000, 1000 * slow_ms, 0, 0, 990),
            c("dm-1", 1000, 40, 0, 0, 40),
            c("nullb1", 1000, 20, 0, 0, 20),
            c("nullb2", 1000, 20, 0, 0, 20),
        ],
    )
}

#[test]
fn the_member_behind_a_delay_is_named_slow_with_its_figures() {
    let runs = vec![delayed("qd-1", 5), delayed("qd-1#2", 5), delayed("qd-4", 3)];
    let j = judge(&raid("raid0"), &runs).unwrap();
    assert_eq!(j.spreading_layer.as_deref(), Some("md0"));
    let slow = j
        .findings
        .iter()
        .find(|f| matches!(f, StackFinding::SlowMember { .. }))
        .expect("a slow member");
    let StackFinding::SlowMember {
        disk,
        mean_ms_per_io,
        peers_median_ms_per_io,
        runs,
        judged,
        layer,
        ..
    } = slow
    else {
        unreachable!()
    };
    assert_eq!(disk, "dm-0");
    assert!(layer.contains("delay"), "{layer}");
    assert!((mean_ms_per_io - 5.0).abs() < 1e-9);
    assert!((peers_median_ms_per_io - 0.03).abs() < 1e-9);
    assert_eq!((runs.len(), *judged), (3, 3));
    // The delay is dm-0's own time, not nullb1's: the layer is named too.
    assert!(j.findings.iter().any(
        |f| matches!(f, StackFinding::SlowLayer { disk, over, .. } if disk == "dm-0" && over == "nullb1")
    ));
    // The crypt layer's 0.04 ms against its device's 0.02 ms is within 2x.
    assert!(j.findings.iter().all(|f| f.disk() != Some("dm-1")));
    let (words, _) = slow.words();
    assert!(
        words.contains("dm-0") && words.contains("5.000 ms"),
        "{words}"
    );
}

#[test]
fn an_even_healthy_array_is_not_identified_never_guessed() {
    let even = |id: &str| {
        run(
            id,
            "randread",
            4096,
            vec![
                c("md0", 3000, 70, 0, 0, 60),
                c("nullb0", 1000, 20, 0, 0, 20),
                c("dm-0", 1000, 25, 0, 0, 24),
                c("dm-1", 1000, 30, 0, 0, 29),
                c("nullb1", 1000, 20, 0, 0, 20),
                c("nullb2", 1000, 20, 0, 0, 20),
            ],
        )
    };
    let j = judge(&raid("raid0"), &[even("a"), even("b")]).unwrap();
    assert_eq!(j.findings.len(), 1, "{:?}", j.findings);
    assert!(matches!(j.findings[0], StackFinding::NotIdentified { .. }));
    assert_eq!(j.runs.len(), 2);
    assert_eq!(j.runs[0].members[1].ios, 1000);
}

#[test]
fn a_member_slow_on_one_run_of_three_is_not_named() {
    let even = |id: &str| {
        run(
            id,
            "randread",
            4096,
            vec![
                c("nullb0", 1000, 20, 0, 0, 20),
                c("dm-0", 1000, 20, 0, 0, 20),
                c("dm-1", 1000, 20, 0, 0, 20),
                c("nullb1", 1000, 20, 0, 0, 20),
                c("nullb2", 1000, 20, 0, 0, 20),
            ],
        )
    };
    let j = judge(&raid("raid0"), &[even("a"), delayed("b", 5), even("c")]).unwrap();
    assert!(
        j.findings.iter().all(|f| f.disk() != Some("dm-0")),
        "{:?}",
        j.findings
    );
}

#[test]
fn a_raid1_member_read_around_is_judged_on_the_writes_that_reach_it() {
    // RAID 1 reads all go to the fast side: the delayed member sees a
    // handful, too few to judge; every write reaches it, 5 ms each.
    let read = |id: &str| {
        run(
            id,
            "randread",
            4096,
            vec![
                c("nullb0", 3000, 30, 0, 0, 30),
                c("dm-0", 7, 35, 0, 0, 35),
                c("dm-1", 3000, 30, 0, 0, 30),
            ],
        )
    };
    let write = |id: &str| {
        run(
            id,
            "randwrite",
            4096,
            vec![
                c("nullb0", 0, 0, 1000, 20, 20),
                c("dm-0", 0, 0, 1000, 5000, 990),
                c("dm-1", 0, 0, 1000, 20, 20),
            ],
        )
    };
    let runs = [
        read("qd-1"),
        read("qd-8"),
        read("qd-32"),
        write("fill"),
        write("rw-randwrite-qd16"),
    ];
    let j = judge(&raid("raid1"), &runs).unwrap();
    match j
        .findings
        .iter()
        .find(|f| matches!(f, StackFinding::SlowMember { .. }))
    {
        Some(StackFinding::SlowMember {
            disk, runs, judged, ..
        }) => {
            assert_eq!(disk, "dm-0");
            assert_eq!((runs.len(), *judged), (2, 2));
        }
        other => panic!("{other:?} in {:?}", j.findings),
    }
    // The reads went around it: an uneven split, named on the reads.
    assert!(j
        .findings
        .iter()
        .any(|f| matches!(f, StackFinding::UnevenSplit { disk, .. } if disk == "dm-0")));
}

#[test]
fn a_layers_own_time_too_small_against_the_latency_is_not_named() {
    // md's own 6 µs per I/O over members that count none, against a 100 µs
    // mean latency: more than twice its members' time, but not what the
    // I/O waits for.
    let mut r = run(
        "qd-1",
        "randread",
        4096,
        vec![
            c("md0", 10_000, 60, 0, 0, 60),
            c("nullb0", 3400, 1, 0, 0, 1),
            c("dm-0", 3300, 1, 0, 0, 1),
            c("dm-1", 3300, 1, 0, 0, 1),
        ],
    );
    r.summary.lat_mean_ns = 100_000.0;
    let j = judge(&raid("raid0"), std::slice::from_ref(&r)).unwrap();
    assert!(
        j.findings.iter().all(|f| f.disk() != Some("md0")),
        "{:?}",
        j.findings
    );
    // At 20 µs of latency the same 6 µs is a third of it: named.
    r.summary.lat_mean_ns = 20_000.0;
    let j = judge(&raid("raid0"), &[r]).unwrap();
    assert!(
        j.findings.iter().any(|f| f.disk() == Some("md0")),
        "{:?}",
        j.findings
    );
}

#[test]
fn too_few_ios_are_not_judged_even_when_one_member_looks_slow() {
    let tiny = run(
        "a",
        "randread",
        4096,
        vec![
            c("nullb0", 10, 0, 0, 0, 0),
            c("dm-0", 10, 50, 0, 0, 50),
            c("dm-1", 10, 0, 0, 0, 0),
        ],
    );
    let j = judge(&raid("raid0"), &[tiny]).unwrap();
    match &j.findings[..] {
        [StackFinding::NotIdentified { why }] => assert!(why.contains("100 I/Os"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn whole_millisecond_rounding_does_not_make_a_fast_member_slow() {
    // 200 I/Os each: 3 ms against 1 ms summed is three times as long, but
    // whole milliseconds say little of it (3 ms may be 2, 1 ms may be 2).
    let r = run(
        "a",
        "randread",
        4096,
        vec![
            c("nullb0", 200, 1, 0, 0, 1),
            c("dm-0", 200, 3, 0, 0, 3),
            c("dm-1", 200, 1, 0, 0, 1),
        ],
    );
    let j = judge(&raid("raid0"), &[r]).unwrap();
    assert!(matches!(
        j.findings[..],
        [StackFinding::NotIdentified { .. }]
    ));
}

#[test]
fn a_member_given_most_of_the_ios_is_an_uneven_split() {
    let r = |id: &str| {
        run(
            id,
            "randread",
            4096,
            vec![
                c("nullb0", 4000, 80, 0, 0, 80),
                c("dm-0", 500, 10, 0, 0, 10),
                c("dm-1", 500, 10, 0, 0, 10),
            ],
        )
    };
    let j = judge(&raid("raid1"), &[r("a"), r("b")]).unwrap();
    let disks: Vec<&str> = j
        .findings
        .iter()
        .filter(|f| matches!(f, StackFinding::UnevenSplit { .. }))
        .filter_map(|f| f.disk())
        .collect();
    assert_eq!(disks, ["nullb0"]);
}

#[test]
fn member_reads_in_a_raid5_write_run_are_read_modify_write() {
    let w = run(
        "rw-randwrite-qd16",
        "randwrite",
        4096,
        vec![
            c("nullb0", 700, 10, 700, 10, 20),
            c("dm-0", 650, 10, 700, 10, 20),
            c("dm-1", 650, 10, 600, 10, 20),
        ],
    );
    let read = run(
        "qd-1",
        "randread",
        4096,
        vec![
            c("nullb0", 1000, 20, 0, 0, 20),
            c("dm-0", 1000, 20, 0, 0, 20),
            c("dm-1", 1000, 20, 0, 0, 20),
        ],
    );
    let j = judge(&raid("raid5"), &[read.clone(), w.clone()]).unwrap();
    match j
        .findings
        .iter()
        .find(|f| matches!(f, StackFinding::ReadModifyWrite { .. }))
    {
        Some(StackFinding::ReadModifyWrite {
            level,
            member_reads,
            member_writes,
            runs,
        }) => {
            assert_eq!(level, "raid5");
            assert_eq!((*member_reads, *member_writes), (2000, 2000));
            assert_eq!(runs, &["rw-randwrite-qd16"]);
        }
        other => panic!("{other:?}"),
    }
    // The same counters on RAID 0 are no read-modify-write.
    let j = judge(&raid("raid0"), &[read, w]).unwrap();
    assert!(!j
        .findings
        .iter()
        .any(|f| matches!(f, StackFinding::ReadModifyWrite { .. })));
}

#[test]
fn a_block_size_that_does_not_divide_the_chunk_is_misaligned() {
    assert!(misaligned(24576, 65536));
    assert!(misaligned(98304, 65536));
    assert!(!misaligned(4096, 65536));
    assert!(!misaligned(131072, 65536));
    assert!(!misaligned(4096, 0));
    let r = run(
        "bs-24k-read",
        "randread",
        24576,
        vec![
            c("md0", 1000, 20, 0, 0, 20),
            c("nullb0", 500, 10, 0, 0, 10),
            c("dm-0", 500, 10, 0, 0, 10),
            c("dm-1", 400, 10, 0, 0, 10),
        ],
    );
    let j = judge(&raid("raid0"), &[r]).unwrap();
    match j
        .findings
        .iter()
        .find(|f| matches!(f, StackFinding::Misaligned { .. }))
    {
        Some(StackFinding::Misaligned {
            array_ios,
            member_ios,
            ..
        }) => assert_eq!((*array_ios, *member_ios), (1000, 1400)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_single_path_crypt_layer_that_takes_the_time_is_named() {
    let stack = Stack {
        target: "dm-3".into(),
        layers: vec![
            layer(
                "dm-3",
                0,
                LayerKind::Dm {
                    name: Some("vault".into()),
                    targets: vec![DmTarget::new(
                        0,
                        8,
                        "crypt".into(),
                        "aes-xts-plain64 00ff 0 259:0 0",
                    )],
                    table_source: "DM_TABLE_STATUS ioctl".into(),
                    cipher: Some("aes-xts-plain64".into()),
                },
                &["nvme0n1"],
            ),
            phys("nvme0n1", 1),
        ],
        physical: vec!["nvme0n1".into()],
        ..Default::default()
    };
    let r = run(
        "qd-1",
        "randread",
        4096,
        vec![
            c("dm-3", 2000, 400, 0, 0, 400),
            c("nvme0n1", 2000, 100, 0, 0, 100),
        ],
    );
    let j = judge(&stack, &[r]).unwrap();
    assert!(j.spreading_layer.is_none());
    match &j.findings[..] {
        [StackFinding::SlowLayer {
            disk,
            over,
            mean_ms_per_io,
            ..
        }] => {
            assert_eq!((disk.as_str(), over.as_str()), ("dm-3", "nvme0n1"));
            assert!((mean_ms_per_io - 0.2).abs() < 1e-9);
        }
        other => panic!("{other:?}"),
    }
    // The key never reaches the study.
    assert!(!serde_json::to_string(&stack).unwrap().contains("00ff"));
}

#[test]
fn a_lone_device_is_no_stack_and_a_table_line_parses_with_its_key_withheld() {
    let lone = Stack {
        target: "nvme0n1".into(),
        layers: vec![phys("nvme0n1", 0)],
        physical: vec!["nvme0n1".into()],
        ..Default::default()
    };
    assert!(judge(&lone, &[]).is_none());
    let t = DmTarget::parse("0 2097152 crypt aes-xts-plain64 deadbeef 0 7:0 0 1 allow_discards")
        .unwrap();
    assert_eq!(t.params, "aes-xts-plain64 - 0 7:0 0 1 allow_discards");
    assert_eq!(t.cipher().as_deref(), Some("aes-xts-plain64"));
    let t = DmTarget::parse("0 2097152 delay 251:1 0 50").unwrap();
    assert_eq!((t.sectors, t.target_type.as_str()), (2097152, "delay"));
    assert!(t.cipher().is_none());
    assert!(DmTarget::parse("zero").is_none());
}

#[test]
fn the_findings_become_verdicts_the_named_member_first() {
    let j = judge(&raid("raid0"), &[delayed("qd-1", 5)]).unwrap();
    let mut v = vec![ssdready_measured::record::Verdict {
        rule: "other".into(),
        ..Default::default()
    }];
    add_verdicts(&mut v, &j);
    assert_eq!(v[0].rule, "stack-slow-member");
    assert!(v[0].finding.contains("dm-0"));
    assert!(v[0]
        .evidence
        .figures
        .iter()
        .any(|(k, val)| k == "dm-0 in qd-1" && val.contains("5.000 ms") && val.ends_with('←')));
    assert!(v.iter().any(|x| x.rule == "other"));
}

#[test]
fn a_stack_reads_back_from_its_json() {
    let s = raid("raid5");
    let back: Stack = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
    let text = s.lines().join("\n");
    assert!(
        text.contains("md0 (0:0): md raid5, chunk 64k, 3 disks"),
        "{text}"
    );
    assert!(
        text.contains("  dm-0 (0:0): device-mapper slow (delay;"),
        "{text}"
    );
}

#[test]
fn the_whole_study_is_counted_from_detection_to_the_end() {
    let mut s = raid("raid0");
    s.at_detection = vec![c("md0", 100, 5, 10, 1, 4), c("nullb0", 40, 1, 0, 0, 1)];
    let now = [
        c("md0", 1100, 25, 10, 1, 30),
        c("nullb0", 390, 9, 7, 2, 11),
        c("dm-9", 5, 0, 0, 0, 0),
    ];
    s.close(&now, 2500);
    assert_eq!(
        s.over_study.len(),
        2,
        "a device not read at detection is left out"
    );
    let md = &s.over_study[0];
    assert_eq!(
        (md.read_ios, md.write_ios, md.read_ticks_ms, md.io_ticks_ms),
        (1000, 0, 20, 26)
    );
    assert_eq!((md.read_sectors, md.window_ms), (8000, 2500));
    assert_eq!(
        (s.over_study[1].read_ios, s.over_study[1].write_ios),
        (350, 7)
    );
    let back: Stack = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
    assert_eq!(back.over_study, s.over_study);
    assert!(
        back.at_detection.is_empty(),
        "absolute counters stay out of study.json"
    );
}

#[test]
fn an_array_whose_own_time_dwarfs_its_members_is_the_slow_layer() {
    // RAID 5 writes: 1,000 array writes of 40 ms each, its members'
    // 4,000 reads and writes only 2 ms in all: the time is md's own.
    let held = run(
        "rw-randwrite-qd16",
        "randwrite",
        4096,
        vec![
            c("md0", 0, 0, 1000, 40_000, 990),
            c("nullb0", 700, 1, 700, 1, 5),
            c("dm-0", 650, 1, 700, 1, 5),
            c("dm-1", 650, 1, 600, 1, 5),
        ],
    );
    let j = judge(&raid("raid5"), &[held]).unwrap();
    assert!(
        j.findings.iter().any(|f| matches!(f,
            StackFinding::SlowLayer { disk, over, .. } if disk == "md0" && over == "nullb0, dm-0, dm-1")),
        "{:?}",
        j.findings
    );
    // 1 MiB reads split over 64k chunks: each array I/O waits for several
    // member I/Os in turn (its mean is 5x theirs) but spends no time of
    // its own: not the array's.
    let split = run(
        "bs-1m-read",
        "randread",
        1 << 20,
        vec![
            c("md0", 200, 1000, 0, 0, 900),
            c("nullb0", 1100, 400, 0, 0, 300),
            c("dm-0", 1050, 400, 0, 0, 300),
            c("dm-1", 1050, 400, 0, 0, 300),
        ],
    );
    let j = judge(&raid("raid0"), &[split]).unwrap();
    assert!(
        !j.findings.iter().any(|f| f.disk() == Some("md0")),
        "{:?}",
        j.findings
    );
}

#[test]
fn a_degraded_array_is_said_first_whatever_its_counters() {
    let mut s = raid("raid5");
    if let LayerKind::Md {
        degraded, members, ..
    } = &mut s.layers[0].kind
    {
        *degraded = Some(1);
        members.push(MdMember {
            disk: "dm-1".into(),
            state: Some("faulty".into()),
            slot: None,
        });
    }
    let j = judge(&s, &[delayed("qd-1", 5)]).unwrap();
    match &j.findings[0] {
        StackFinding::Degraded {
            disk,
            missing,
            faulty,
            level,
        } => {
            assert_eq!(
                (disk.as_str(), *missing, level.as_str()),
                ("md0", 1, "raid5")
            );
            assert_eq!(faulty, &["dm-1"]);
        }
        other => panic!("{other:?}"),
    }
    let mut v = Vec::new();
    add_verdicts(&mut v, &j);
    assert_eq!(v[0].rule, "stack-degraded");
    assert!(
        v[0].finding
            .contains("1 of its disks missing, faulty: dm-1"),
        "{}",
        v[0].finding
    );
    assert!(
        s.lines()[0].contains("DEGRADED: 1 missing"),
        "{:?}",
        s.lines()
    );
    // A whole array is not degraded.
    let j = judge(&raid("raid5"), &[delayed("qd-1", 5)]).unwrap();
    assert!(!j
        .findings
        .iter()
        .any(|f| matches!(f, StackFinding::Degraded { .. })));
}

#[test]
fn a_striped_tables_chunk_judges_alignment() {
    let stack = Stack {
        target: "dm-4".into(),
        layers: vec![
            layer(
                "dm-4",
                0,
                LayerKind::Dm {
                    name: Some("vg-lv".into()),
                    targets: vec![
                        DmTarget::parse("0 4194304 striped 2 128 259:0 2048 259:1 2048").unwrap(),
                    ],
                    table_source: "DM_TABLE_STATUS ioctl".into(),
                    cipher: None,
                },
                &["nvme0n1", "nvme1n1"],
            ),
            phys("nvme0n1", 1),
            phys("nvme1n1", 1),
        ],
        physical: vec!["nvme0n1".into(), "nvme1n1".into()],
        ..Default::default()
    };
    let r = |bs: u64| {
        run(
            &format!("bs-{bs}"),
            "randread",
            bs,
            vec![
                c("dm-4", 1000, 20, 0, 0, 20),
                c("nvme0n1", 700, 10, 0, 0, 10),
                c("nvme1n1", 700, 10, 0, 0, 10),
            ],
        )
    };
    let j = judge(&stack, &[r(48 << 10)]).unwrap();
    match j
        .findings
        .iter()
        .find(|f| matches!(f, StackFinding::Misaligned { .. }))
    {
        Some(StackFinding::Misaligned { chunk_bytes, .. }) => assert_eq!(*chunk_bytes, 65536),
        other => panic!("{other:?}"),
    }
    let j = judge(&stack, &[r(16 << 10)]).unwrap();
    assert!(!j
        .findings
        .iter()
        .any(|f| matches!(f, StackFinding::Misaligned { .. })));
}

/// loop0 (a loop device over a file) on vda: `top` I/Os taking `top_ms`
/// in all on loop0, `under` taking `under_ms` on vda.
fn looped(top: u64, top_ms: u64, under: u64, under_ms: u64) -> StackJudgement {
    let stack = Stack {
        target: "loop0".into(),
        layers: vec![
            layer(
                "loop0",
                0,
                LayerKind::Loop {
                    backing_file: Some("/var/lib/disk.img".into()),
                },
                &["vda"],
            ),
            phys("vda", 1),
        ],
        physical: vec!["vda".into()],
        ..Default::default()
    };
    let counters = vec![
        c("loop0", top, top_ms, 0, 0, 990),
        c("vda", under, under_ms, 0, 0, 300),
    ];
    judge(&stack, &[run("qd-32", "randread", 4096, counters)]).unwrap()
}

#[test]
fn a_layer_faster_per_io_than_the_disk_under_it_is_not_named() {
    // 0.773 ms per I/O on loop0 over 5.773 ms on vda: loop0's summed time
    // is more than twice vda's (10,000 short I/Os against 300 long ones),
    // but each of its I/Os is faster; it does not hold the I/O.
    let j = looped(10_000, 7730, 300, 1732);
    assert!(
        j.findings.iter().all(|f| f.disk() != Some("loop0")),
        "{:?}",
        j.findings
    );
    assert!(
        matches!(&j.findings[..], [StackFinding::NotIdentified { .. }]),
        "{:?}",
        j.findings
    );
    // The other way round, 5.773 ms on loop0 over 0.773 ms on vda, it does.
    let j = looped(1000, 5773, 1000, 773);
    let [f @ StackFinding::SlowLayer { .. }] = &j.findings[..] else {
        panic!("{:?}", j.findings)
    };
    let (words, _) = f.words();
    assert!(
        words.starts_with("the layer loop0 (")
            && words.contains("5.773 ms per I/O against 0.773 ms on vda under it"),
        "{words}"
    );
}
