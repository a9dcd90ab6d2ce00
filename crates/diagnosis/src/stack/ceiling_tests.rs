//! The stack against its members, judged on recorded figures: the IOPS of
//! small requests, the bandwidth of large ones, and the members read all
//! at once — each finding's both sides.

use super::ceiling::*;
use ssdready_measured::record::{RunContext, RunRecord, Workload};
use ssdready_measured::stack_layers::{LayerKind, Stack, StackLayer};

/// md0 (RAID 0, 64 KiB chunk) over nullb0 and nullb1.
pub(super) fn md0() -> Stack {
    let phys = |d: &str| StackLayer {
        disk: d.into(),
        depth: 1,
        ..Default::default()
    };
    Stack {
        target: "md0".into(),
        layers: vec![
            StackLayer {
                disk: "md0".into(),
                kind: LayerKind::Md {
                    level: Some("raid0".into()),
                    chunk_bytes: Some(65536),
                    raid_disks: Some(2),
                    degraded: None,
                    members: Vec::new(),
                },
                under: vec!["nullb0".into(), "nullb1".into()],
                ..Default::default()
            },
            phys("nullb0"),
            phys("nullb1"),
        ],
        physical: vec!["nullb0".into(), "nullb1".into()],
        ..Default::default()
    }
}

/// A `ceiling` run of `paths` in `round`: 4 KiB random reads at QD 32
/// giving `iops`.
fn run(paths: &[&str], round: u32, iops: f64) -> RunRecord {
    let who = match paths {
        [p] => p.trim_start_matches("/dev/").to_string(),
        _ => "members-at-once".into(),
    };
    let mut r = RunRecord {
        id: format!("ceiling-{who}-qd32#{round}"),
        sweep: SWEEP.into(),
        repeat: round,
        workload: Workload {
            rw: "randread".into(),
            bs: 4096,
            qd: 32,
            targets: paths.iter().map(|p| p.to_string()).collect(),
            ..Default::default()
        },
        ..Default::default()
    };
    r.summary.iops = iops;
    r
}

/// A large sequential read of `path` in `round` at `mb_s` MB/s.
fn large(path: &str, round: u32, mb_s: f64) -> RunRecord {
    let mut r = run(&[path], round, mb_s * 1e6 / 131072.0);
    r.id = format!(
        "ceiling-{}-128k-read-qd8#{round}",
        path.trim_start_matches("/dev/")
    );
    r.workload.rw = "read".into();
    r.workload.bs = 128 << 10;
    r.workload.qd = 8;
    r.summary.bw_bytes_per_s = mb_s * 1e6;
    r
}

/// Rounds of the stack's IOPS and each member's alone.
fn rounds(r: &[(f64, f64, f64)]) -> Vec<RunRecord> {
    r.iter()
        .zip(1..)
        .flat_map(|(&(s, a, b), n)| {
            [
                run(&["/dev/md0"], n, s),
                run(&["/dev/nullb0"], n, a),
                run(&["/dev/nullb1"], n, b),
            ]
        })
        .collect()
}

/// Rounds of large reads: the stack's MB/s and each member's alone.
fn large_rounds(r: &[(f64, f64, f64)]) -> Vec<RunRecord> {
    r.iter()
        .zip(1..)
        .flat_map(|(&(s, a, b), n)| {
            [
                large("/dev/md0", n, s),
                large("/dev/nullb0", n, a),
                large("/dev/nullb1", n, b),
            ]
        })
        .collect()
}

/// The members read at once in each round, each member's counters giving
/// half of `iops` over a second.
fn at_once(iops: &[f64]) -> Vec<RunRecord> {
    iops.iter()
        .zip(1..)
        .map(|(&x, n)| {
            let mut r = run(&["/dev/nullb0", "/dev/nullb1"], n, x);
            let half = |d: &str| ssdready_measured::stack_layers::MemberCounters {
                disk: d.into(),
                read_ios: (x / 2.0) as u64,
                window_ms: 1000,
                ..Default::default()
            };
            r.context = Some(RunContext {
                members: vec![half("md0"), half("nullb0"), half("nullb1")],
                ..Default::default()
            });
            r
        })
        .collect()
}

fn verdicts(runs: &[RunRecord]) -> Vec<ssdready_measured::record::Verdict> {
    let j = crate::stack::judge(&md0(), runs).unwrap();
    let mut v = Vec::new();
    crate::stack::add_verdicts(&mut v, &j);
    v
}

#[test]
fn an_array_at_half_its_members_sum_is_held_back_by_its_own_layer() {
    let runs = rounds(&[(9700.0, 10100.0, 10300.0), (9900.0, 10200.0, 10200.0)]);
    let c = ceiling(&md0(), &runs).expect("a ceiling");
    assert_eq!((c.rounds, c.qd, c.bs), (2, 32, 4096));
    assert!((c.stack_iops - 9800.0).abs() < 1e-9);
    assert!((c.members_sum_iops - 20400.0).abs() < 1e-9);
    assert!((c.ratio_pct - 48.04).abs() < 0.01, "{}", c.ratio_pct);
    assert!((c.ratio_err_pct - 0.49).abs() < 0.01, "{}", c.ratio_err_pct);
    assert!(c.held_back);
    assert_eq!(c.members[1].disk, "nullb1");
    assert!((c.members[1].iops - 10250.0).abs() < 1e-9);
    assert_eq!(c.runs.len(), 6);
    assert_eq!((c.bandwidth.as_ref(), c.together.as_ref()), (None, None));
    let (words, _) = c.words();
    assert!(
        words.starts_with("md0 (md raid0 over 2 members) delivers 9.8K IOPS of 4 KiB random reads at QD 32, 48 % (± 0 %) of its members' 20.4K measured alone")
            && words.contains("hold it back"),
        "{words}"
    );
    // Judged with the rest of the stack: said, and said first, with no
    // "not identified" beside it.
    let j = crate::stack::judge(&md0(), &runs).unwrap();
    assert_eq!(j.ceiling.as_ref(), Some(&c));
    assert!(j.findings.is_empty(), "{:?}", j.findings);
    let v = verdicts(&runs);
    assert_eq!(v[0].rule, "stack-ceiling");
    assert!(v[0].evidence.figures.iter().any(|f| f.0 == "nullb0 alone"));
}

#[test]
fn a_stack_near_its_members_or_within_its_error_of_the_line_keeps_up() {
    let near = rounds(&[(19000.0, 10000.0, 10000.0), (17000.0, 10200.0, 10200.0)]);
    let c = ceiling(&md0(), &near).unwrap();
    assert!(!c.held_back && c.ratio_pct > 85.0);
    assert!(c.words().0.contains("keeps up"), "{}", c.words().0);
    // 60 % and 72 %: 66 % ± 6 % reaches the line.
    let spread = rounds(&[(12000.0, 10000.0, 10000.0), (14400.0, 10000.0, 10000.0)]);
    let c = ceiling(&md0(), &spread).unwrap();
    assert!((c.ratio_pct - 66.0).abs() < 1e-9 && (c.ratio_err_pct - 6.0).abs() < 1e-9);
    assert!(!c.held_back);
    let mut j = crate::stack::judge(&md0(), &spread).unwrap();
    assert!(verdicts(&spread).iter().any(|v| v.rule == "stack-keeps-up"));
    j.ceiling = None;
    assert!(!serde_json::to_string(&j).unwrap().contains("ceiling"));
}

#[test]
fn a_round_missing_a_member_counts_for_nothing_and_other_sweeps_are_not_read() {
    let mut runs = rounds(&[(9800.0, 10000.0, 10000.0), (5000.0, 10000.0, 10000.0)]);
    runs[5].error = Some("failed".into());
    let c = ceiling(&md0(), &runs).unwrap();
    assert_eq!(c.rounds, 1);
    assert!((c.stack_iops - 9800.0).abs() < 1e-9);
    // A qd sweep run of the stack, or a member run of no round: none.
    let mut other = run(&["/dev/md0"], 1, 9000.0);
    other.sweep = "qd".into();
    assert_eq!(
        ceiling(&md0(), &[other, run(&["/dev/nullb0"], 1, 1.0)]),
        None
    );
    assert_eq!(member_alone(&md0(), &run(&["/dev/nullb9"], 1, 1.0)), None);
    assert_eq!(
        member_alone(&md0(), &run(&["/dev/nullb1"], 1, 1.0)),
        Some("nullb1")
    );
}

/// Samsung's controllers: small requests held, bandwidth scaling. And the
/// other side: a stack whose large reads fall short while its small ones
/// keep up (a cost per byte).
#[test]
fn a_stack_held_at_small_requests_but_not_at_large_ones_has_a_cost_per_request() {
    let mut runs = rounds(&[(9700.0, 10100.0, 10300.0), (9900.0, 10200.0, 10200.0)]);
    runs.extend(large_rounds(&[
        (1900.0, 1000.0, 1000.0),
        (1940.0, 1000.0, 1000.0),
    ]));
    let c = ceiling(&md0(), &runs).unwrap();
    // The large reads do not disturb the small ones' figures.
    assert!((c.stack_iops - 9800.0).abs() < 1e-9 && c.held_back);
    assert_eq!(c.runs.len(), 6);
    let b = c.bandwidth.as_ref().expect("the bandwidth");
    assert_eq!((b.bs, b.qd, b.rounds), (128 << 10, 8, 2));
    assert!((b.stack_bytes_per_s - 1920e6).abs() < 1.0);
    assert!((b.members_sum_bytes_per_s - 2000e6).abs() < 1.0);
    assert!((b.ratio_pct - 96.0).abs() < 1e-9 && (b.ratio_err_pct - 1.0).abs() < 1e-9);
    assert!(!b.held_back);
    assert_eq!(b.members[0].disk, "nullb0");
    let (words, _) = c.bandwidth_words().unwrap();
    assert!(
        words.starts_with("md0 delivers 48 % (± 0 %) of its members' IOPS at 4 KiB but 96 % (± 1 %) of their bandwidth at 128 KiB")
            && words.contains("per request")
            && words.contains("System-wide issues for efficient use of E-SSD"),
        "{words}"
    );
    let v = verdicts(&runs);
    let bw = v.iter().find(|v| v.rule == "stack-bandwidth-keeps-up");
    assert!(
        bw.is_some_and(|v| v
            .evidence
            .figures
            .iter()
            .any(|f| f.0 == "nullb1 alone" && f.1 == "1000.0 MB/s")),
        "{v:?}"
    );
    // Small requests keep up, large ones fall to half: per byte.
    let mut runs = rounds(&[(19000.0, 10000.0, 10000.0), (19400.0, 10000.0, 10000.0)]);
    runs.extend(large_rounds(&[
        (1000.0, 1000.0, 1000.0),
        (1020.0, 1000.0, 1000.0),
    ]));
    let c = ceiling(&md0(), &runs).unwrap();
    let b = c.bandwidth.as_ref().unwrap();
    assert!(!c.held_back && b.held_back, "{c:?}");
    let (words, _) = c.bandwidth_words().unwrap();
    assert!(words.contains("grows with the bytes"), "{words}");
    assert!(verdicts(&runs)
        .iter()
        .any(|v| v.rule == "stack-bandwidth-ceiling"));
    // Both held, and both kept: said so, with "and".
    let mut runs = rounds(&[(9800.0, 10000.0, 10000.0)]);
    runs.extend(large_rounds(&[(1000.0, 1000.0, 1000.0)]));
    let (words, _) = ceiling(&md0(), &runs).unwrap().bandwidth_words().unwrap();
    assert!(
        words.contains("alike") && words.contains("IOPS at 4 KiB and 50 %"),
        "{words}"
    );
    let mut runs = rounds(&[(19800.0, 10000.0, 10000.0)]);
    runs.extend(large_rounds(&[(1990.0, 1000.0, 1000.0)]));
    let (words, _) = ceiling(&md0(), &runs).unwrap().bandwidth_words().unwrap();
    assert!(words.contains("keeps up at both sizes"), "{words}");
}

#[test]
fn a_round_of_large_reads_missing_a_member_gives_no_bandwidth() {
    let mut runs = rounds(&[(9800.0, 10000.0, 10000.0)]);
    runs.extend(large_rounds(&[(1900.0, 1000.0, 1000.0)]));
    runs.pop();
    let c = ceiling(&md0(), &runs).unwrap();
    assert_eq!(c.bandwidth, None);
    assert_eq!(c.bandwidth_words(), None);
}

/// Members that together give far less than each alone share something
/// that holds them: the stack is judged against that, and a stack at half
/// its members' sum keeps up with what they give together.
#[test]
fn members_held_together_by_what_they_share_are_the_ceiling_not_the_stacks_layer() {
    let mut runs = rounds(&[(9700.0, 10100.0, 10300.0), (9900.0, 10200.0, 10200.0)]);
    runs.extend(at_once(&[10000.0, 10400.0]));
    let c = ceiling(&md0(), &runs).unwrap();
    let t = c.together.as_ref().expect("the members at once");
    assert_eq!((t.rounds, t.qd), (2, 32));
    assert!((t.iops - 10200.0).abs() < 1e-9);
    // 10000 / 20400 and 10400 / 20400.
    assert!((t.ratio_pct - 50.0).abs() < 0.01 && (t.ratio_err_pct - 0.98).abs() < 0.01);
    assert!(t.shared);
    // The stack: 97 % and 95.2 % of them.
    assert!(
        (t.stack_ratio_pct - 96.1).abs() < 0.1,
        "{}",
        t.stack_ratio_pct
    );
    assert!(!c.held_back, "judged against the members at once");
    assert_eq!(t.members.len(), 2);
    assert!((t.members[0].iops - 5100.0).abs() < 1e-9, "{:?}", t.members);
    let (words, _) = c.words();
    assert!(
        words.contains("read all at once its members give 10.2K")
            && words.contains("the ceiling is what they share"),
        "{words}"
    );
    let v = verdicts(&runs);
    assert_eq!(v[0].rule, "stack-shared-ceiling", "said first: {v:?}");
    assert!(v[0].finding.contains("something they share holds them"));
    assert!(v.iter().any(|v| v.rule == "stack-keeps-up"));
    // Not judged as the stack at work, nor shown as it.
    let j = crate::stack::judge(&md0(), &runs).unwrap();
    let r = j.runs.iter().find(|r| r.run.contains("members-at-once"));
    assert_eq!(r.and_then(|r| r.alone.as_deref()), Some(TOGETHER));
    assert!(j
        .busiest()
        .is_none_or(|r| !r.run.contains("members-at-once")));
    // Held further by the stack's own layers beyond what the members share.
    let mut runs = rounds(&[(4000.0, 10000.0, 10000.0), (4100.0, 10000.0, 10000.0)]);
    runs.extend(at_once(&[10000.0, 10000.0]));
    let c = ceiling(&md0(), &runs).unwrap();
    assert!(c.together.as_ref().unwrap().shared && c.held_back);
    let v = verdicts(&runs);
    assert_eq!(
        (v[0].rule.as_str(), v[1].rule.as_str()),
        ("stack-ceiling", "stack-shared-ceiling")
    );
}

#[test]
fn members_that_together_give_their_sum_share_nothing_that_holds_them() {
    let mut runs = rounds(&[(9700.0, 10100.0, 10300.0), (9900.0, 10200.0, 10200.0)]);
    runs.extend(at_once(&[20000.0, 19000.0]));
    let c = ceiling(&md0(), &runs).unwrap();
    let t = c.together.as_ref().unwrap();
    assert!(!t.shared && t.ratio_pct > 90.0);
    // Against the sum of each alone, as without the run at once.
    assert!(c.held_back);
    assert!(!c.words().0.contains("all at once"), "{}", c.words().0);
    let v = verdicts(&runs);
    assert_eq!(v[0].rule, "stack-ceiling");
    let scale = v.iter().find(|v| v.rule == "stack-members-scale").unwrap();
    assert!(scale.finding.contains("nothing they share holds them"));
    // 80 % ± 6 %: within its error of the line, not said to be shared.
    let mut runs = rounds(&[(9800.0, 10000.0, 10000.0), (9800.0, 10000.0, 10000.0)]);
    runs.extend(at_once(&[14800.0, 17200.0]));
    let t = ceiling(&md0(), &runs).unwrap().together.unwrap();
    assert!((t.ratio_pct - 80.0).abs() < 1e-9 && (t.ratio_err_pct - 6.0).abs() < 1e-9);
    assert!(!t.shared);
}

#[test]
fn the_large_reads_span_a_whole_stripe_within_bounds() {
    let mut st = md0();
    // 64 KiB × 2: 128 KiB.
    assert_eq!(bandwidth_bs(&st), 128 << 10);
    let set = |st: &mut Stack, level: &str, chunk: u64, n: u32| {
        st.layers[0].kind = LayerKind::Md {
            level: Some(level.into()),
            chunk_bytes: Some(chunk),
            raid_disks: Some(n),
            degraded: None,
            members: Vec::new(),
        };
    };
    set(&mut st, "raid5", 64 << 10, 4);
    assert_eq!(bandwidth_bs(&st), 192 << 10);
    // Small chunks: whole stripes up to the least size.
    set(&mut st, "raid0", 16 << 10, 3);
    assert_eq!(bandwidth_bs(&st), 144 << 10);
    // md's default 512 KiB chunk over 3 data disks: two whole chunks.
    set(&mut st, "raid6", 512 << 10, 5);
    assert_eq!(bandwidth_bs(&st), 1 << 20);
    set(&mut st, "raid0", 4 << 20, 2);
    assert_eq!(bandwidth_bs(&st), 1 << 20);
    // No chunk (RAID 1, linear): the least size.
    set(&mut st, "raid1", 0, 2);
    assert_eq!(bandwidth_bs(&st), 128 << 10);
    // A striped dm table: 3 stripes of 256 sectors.
    st.layers[0].kind = LayerKind::Dm {
        name: Some("vg-lv".into()),
        targets: vec![ssdready_measured::stack_layers::DmTarget::new(
            0,
            1 << 20,
            "striped".into(),
            "3 256 254:0 0 254:1 0 254:2 0",
        )],
        table_source: "DM_TABLE_STATUS ioctl".into(),
        cipher: None,
    };
    assert_eq!(stripe(&st), Some((128 << 10, 3)));
    assert_eq!(bandwidth_bs(&st), 384 << 10);
}

/// Rounds where the stack's run carries each member's counters: (the
/// stack's IOPS, nullb0 within it, nullb1 within it, nullb0 alone, nullb1
/// alone).
fn rounds_within(r: &[(f64, f64, f64, f64, f64)]) -> Vec<RunRecord> {
    let mut runs = rounds(&r.iter().map(|x| (x.0, x.3, x.4)).collect::<Vec<_>>());
    for (s, x) in runs.iter_mut().step_by(3).zip(r) {
        let c = |d: &str, iops: f64| ssdready_measured::stack_layers::MemberCounters {
            disk: d.into(),
            read_ios: iops as u64,
            window_ms: 1000,
            ..Default::default()
        };
        s.context = Some(RunContext {
            members: vec![c("md0", x.0), c("nullb0", x.1), c("nullb1", x.2)],
            ..Default::default()
        });
    }
    runs
}

#[test]
fn a_member_giving_within_the_stack_what_it_gives_alone_is_the_ceiling_not_the_layer() {
    // A member with a queue of one request: 760 IOPS alone, 740 within
    // the array, whose other member could give 20K.
    let runs = rounds_within(&[
        (1_480.0, 740.0, 740.0, 760.0, 20_000.0),
        (1_500.0, 750.0, 750.0, 770.0, 20_400.0),
    ]);
    let c = ceiling(&md0(), &runs).unwrap();
    let f = c.fullest.as_ref().unwrap();
    assert_eq!(f.disk, "nullb0");
    assert!(f.full && f.pct > 95.0, "{f:?}");
    assert!(!c.held_back, "the layer is not what holds it");
    let (words, todo) = c.words();
    assert!(
        words.contains("nullb0 gives 745 IOPS") && words.contains("not the stack's layers"),
        "{words}"
    );
    assert!(todo.contains("nullb0"), "{todo}");
    let v = verdicts(&runs);
    assert_eq!(v[0].rule, "stack-member-ceiling", "said first: {v:?}");
    // Members far from full within the stack: its layers hold it back.
    let runs = rounds_within(&[
        (4_000.0, 2_000.0, 2_000.0, 10_000.0, 10_100.0),
        (4_100.0, 2_050.0, 2_050.0, 10_200.0, 10_000.0),
    ]);
    let c = ceiling(&md0(), &runs).unwrap();
    assert!(!c.fullest.as_ref().unwrap().full && c.held_back, "{c:?}");
}

#[test]
fn a_member_the_array_marked_faulty_is_no_part_of_its_members_sum() {
    let mut s = md0();
    if let LayerKind::Md { members, .. } = &mut s.layers[0].kind {
        *members = ["nullb0", "nullb1"]
            .iter()
            .map(|d| ssdready_measured::stack_layers::MdMember {
                disk: d.to_string(),
                state: Some(if *d == "nullb1" { "faulty" } else { "in_sync" }.into()),
                slot: None,
            })
            .collect();
    }
    assert_eq!(s.serving().physical, ["nullb0"]);
    assert_eq!(
        md0().serving().physical,
        ["nullb0", "nullb1"],
        "all in service"
    );
    // The faulty member was read alone too: its runs are left out.
    let runs = rounds(&[(9_000.0, 10_000.0, 10_000.0), (9_100.0, 10_100.0, 9_900.0)]);
    let c = ceiling(&s, &runs).unwrap();
    assert_eq!(c.members.len(), 1, "{c:?}");
    assert!((c.members_sum_iops - 10_050.0).abs() < 1e-9, "{c:?}");
    assert!(!c.held_back);
}

/// md0 (RAID 0) over dm-0 and dm-1, two linear halves of one disk, vdb.
fn md0_over_halves_of_one_disk() -> Stack {
    let mut s = md0();
    s.layers[0].under = vec!["dm-0".into(), "dm-1".into()];
    let half = |d: &str| StackLayer {
        disk: d.into(),
        depth: 1,
        under: vec!["vdb".into()],
        ..Default::default()
    };
    s.layers.truncate(1);
    s.layers.extend([
        half("dm-0"),
        half("dm-1"),
        StackLayer {
            disk: "vdb".into(),
            depth: 2,
            ..Default::default()
        },
    ]);
    s.physical = vec!["vdb".into()];
    s
}

#[test]
fn members_on_one_disk_are_counted_as_members_and_the_disk_named_as_shared() {
    let s = md0_over_halves_of_one_disk();
    let runs: Vec<RunRecord> = [(4_000.0, 10_000.0), (4_100.0, 10_200.0)]
        .iter()
        .zip(1..)
        .flat_map(|(&(st, d), n)| [run(&["/dev/md0"], n, st), run(&["/dev/vdb"], n, d)])
        .collect();
    let c = ceiling(&s, &runs).expect("a ceiling");
    assert_eq!(c.members.len(), 1);
    assert_eq!(
        (c.under.len(), c.shared.as_slice()),
        (2, ["vdb".to_string()].as_slice())
    );
    let (words, _) = c.words();
    assert!(
        words.starts_with("md0 (md raid0 over 2 members, dm-0 and dm-1, both on one disk, vdb, which they share) delivers 4.0K IOPS")
            && words.contains("of vdb's 10.1K measured alone"),
        "{words}"
    );
    assert!(!words.contains("1 members"), "{words}");
    // Members on disks of their own: counted, and nothing said shared.
    let c = ceiling(&md0(), &rounds(&[(9_700.0, 10_100.0, 10_300.0)])).unwrap();
    assert!(c.shared.is_empty());
    assert!(c
        .words()
        .0
        .starts_with("md0 (md raid0 over 2 members) delivers"));
}
