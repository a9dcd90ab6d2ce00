//! The plan of the `ceiling` sweep for a stack: the stack and each
//! physical member read alone, at small and large requests, and every
//! member at once — read-only, in turns, reversed each round.

use super::tests::{loop7, opts};
use super::*;
use ssdready_measured::record::TargetProfile;

/// A layer of a stack: `disk`, `depth` layers down, over `under`.
fn layer(disk: &str, depth: u32, under: &[&str]) -> ssdready_measured::stack_layers::StackLayer {
    ssdready_measured::stack_layers::StackLayer {
        disk: disk.into(),
        depth,
        under: under.iter().map(|u| u.to_string()).collect(),
        ..Default::default()
    }
}

/// md0 (RAID 0) over two null_blk disks.
fn md0() -> TargetProfile {
    use ssdready_measured::stack_layers::{LayerKind, Stack, StackLayer};
    TargetProfile {
        spec: "/dev/md0".into(),
        device: Some("md0".into()),
        stack: Some(Stack {
            target: "md0".into(),
            layers: vec![
                StackLayer {
                    kind: LayerKind::Md {
                        level: Some("raid0".into()),
                        chunk_bytes: Some(128 << 10),
                        raid_disks: Some(2),
                        degraded: None,
                        members: Vec::new(),
                    },
                    ..layer("md0", 0, &["nullb0", "nullb1"])
                },
                StackLayer {
                    size_bytes: Some(64 << 20),
                    ..layer("nullb0", 1, &[])
                },
                layer("nullb1", 1, &[]),
            ],
            physical: vec!["nullb0".into(), "nullb1".into()],
            ..Default::default()
        }),
        ..loop7()
    }
}

/// A point's id at its depth (the peak taken as 32).
fn at(x: &Point) -> String {
    match x.qd {
        Qd::Fixed(q) => x.id(q),
        _ => x.id(32),
    }
}

#[test]
fn a_root_study_of_a_stack_reads_each_member_alone_and_all_at_once_in_turns_and_never_writes_one() {
    let t = md0();
    let o = StudyOptions {
        root: true,
        ..opts(true)
    };
    let p = plan(std::slice::from_ref(&t), &o);
    let pts: Vec<&Point> = p.points.iter().filter(|x| x.sweep == "ceiling").collect();
    let ids: Vec<String> = pts.iter().map(|x| at(x)).collect();
    // A 128 KiB chunk over two disks: a 256 KiB stripe.
    let round = [
        "ceiling-stack-qd32",
        "ceiling-nullb0-qd32",
        "ceiling-nullb1-qd32",
        "ceiling-members-at-once-qd32",
        "ceiling-stack-256k-read-qd8",
        "ceiling-nullb0-256k-read-qd8",
        "ceiling-nullb1-256k-read-qd8",
    ];
    let mut want: Vec<String> = round.iter().map(|s| s.to_string()).collect();
    want.extend(round.iter().rev().map(|s| format!("{s}#2")));
    assert_eq!(ids, want);
    for pt in &pts {
        assert_reads_only(pt, &t);
    }
    // The run at once reads every member, and is planned only at 4 KiB.
    let once: Vec<&&Point> = pts.iter().filter(|x| x.members.len() > 1).collect();
    assert_eq!(once.len(), 2);
    assert!(once
        .iter()
        .all(|x| x.members == ["/dev/nullb0", "/dev/nullb1"] && x.rw == "randread"));
    // No point of the whole plan, whatever it does to the stack, reaches a member but these.
    assert!(p
        .points
        .iter()
        .filter(|x| !x.members.is_empty())
        .all(|x| x.sweep == "ceiling" && !x.writes));
    // A full study takes three rounds.
    let full = StudyOptions {
        root: true,
        ..opts(false)
    };
    let n = plan(std::slice::from_ref(&t), &full)
        .points
        .iter()
        .filter(|x| x.sweep == "ceiling")
        .count();
    assert_eq!(n, 21);
}

/// `pt`'s job reads only, one job per device it reads, each at the
/// point's depth and size and within its own size.
fn assert_reads_only(pt: &Point, t: &TargetProfile) {
    let s = crate::plan::Settings {
        runtime_s: 1.0,
        ramp_s: 0.0,
        region_bytes: 1 << 30,
    };
    // Within each member's own size (nullb1's unread: half the region).
    let size = |path: &str| match path {
        "/dev/nullb0" => 64 << 20,
        "/dev/nullb1" => 512 << 20,
        _ => 1 << 30,
    };
    let (rw, bs, qd) = match pt.rw {
        "randread" => ("randread", 4096, 32),
        _ => ("read", 256 << 10, 8),
    };
    assert!(!pt.writes && pt.bs == bs, "{pt:?}");
    let w = crate::jobs::workload(pt, qd, std::slice::from_ref(t), Some("io_uring"));
    let want: Vec<String> = match pt.members.len() {
        0 => vec!["/dev/md0".into()],
        _ => pt.members.clone(),
    };
    assert_eq!(w.targets, want);
    let line = crate::jobs::request(&w, std::slice::from_ref(t), &s, false).command_line();
    assert!(
        !line
            .iter()
            .any(|a| a.contains("write") || a.contains("trim")),
        "{line:?}"
    );
    // One job per device read, each reading only, at the same depth,
    // within its own size.
    let jobs: Vec<&String> = line.iter().filter(|a| a.starts_with("--name=")).collect();
    assert_eq!(jobs.len(), want.len(), "{line:?}");
    for (flag, n) in [
        (format!("--rw={rw}"), want.len()),
        (format!("--iodepth={qd}"), want.len()),
        (format!("--bs={}", fmt_bs(bs)), want.len()),
    ] {
        assert_eq!(
            line.iter().filter(|a| **a == flag).count(),
            n,
            "{flag}: {line:?}"
        );
    }
    for path in &want {
        assert!(line.contains(&format!("--filename={path}")), "{line:?}");
        assert!(line.contains(&format!("--size={}", size(path))), "{line:?}");
    }
}

#[test]
fn a_stack_over_one_member_has_no_run_at_once_and_large_reads_of_the_least_size() {
    let mut t = md0();
    if let Some(st) = t.stack.as_mut() {
        st.layers.truncate(2);
        st.layers[0].under.truncate(1);
        st.layers[0].kind = ssdready_measured::stack_layers::LayerKind::Dm {
            name: Some("secret".into()),
            targets: Vec::new(),
            table_source: "DM_TABLE_STATUS ioctl".into(),
            cipher: None,
        };
        st.physical.truncate(1);
    }
    let o = StudyOptions {
        root: true,
        ..opts(true)
    };
    let p = plan(std::slice::from_ref(&t), &o);
    let ids: Vec<String> = p
        .points
        .iter()
        .filter(|x| x.sweep == "ceiling")
        .map(at)
        .collect();
    assert_eq!(
        ids,
        [
            "ceiling-stack-qd32",
            "ceiling-nullb0-qd32",
            "ceiling-stack-128k-read-qd8",
            "ceiling-nullb0-128k-read-qd8",
            "ceiling-nullb0-128k-read-qd8#2",
            "ceiling-stack-128k-read-qd8#2",
            "ceiling-nullb0-qd32#2",
            "ceiling-stack-qd32#2",
        ]
    );
}

#[test]
fn the_members_alone_are_skipped_with_a_reason_without_root_or_physical_members() {
    let t = md0();
    let p = plan(std::slice::from_ref(&t), &opts(true));
    assert!(p.points.iter().all(|x| x.sweep != "ceiling"));
    let s = p
        .skipped
        .iter()
        .find(|s| s.what.contains("members read alone"));
    assert!(
        s.is_some_and(|s| s.why.contains("needs root")),
        "{:?}",
        p.skipped
    );
    let mut bare = t.clone();
    if let Some(s) = bare.stack.as_mut() {
        s.physical.clear();
    }
    let o = StudyOptions {
        root: true,
        ..opts(true)
    };
    let p = plan(&[bare], &o);
    assert!(p.points.iter().all(|x| x.sweep != "ceiling"));
    assert!(p
        .skipped
        .iter()
        .any(|s| s.what.contains("members read alone") && s.why.contains("no physical")));
    // A device with no stack: no sweep and nothing to say.
    let p = plan(&[loop7()], &o);
    assert!(p.points.iter().all(|x| x.sweep != "ceiling"));
    assert!(!p
        .skipped
        .iter()
        .any(|s| s.what.contains("members read alone")));
}

/// loop7 over `file`, a file on vda1, a partition of vda.
fn loop_over(file: &str) -> TargetProfile {
    use ssdready_measured::stack_layers::{LayerKind, Stack, StackLayer};
    TargetProfile {
        stack: Some(Stack {
            target: "loop7".into(),
            layers: vec![
                StackLayer {
                    kind: LayerKind::Loop {
                        backing_file: Some(file.into()),
                    },
                    ..layer("loop7", 0, &["vda1"])
                },
                layer("vda1", 1, &["vda"]),
                layer("vda", 2, &[]),
            ],
            physical: vec!["vda".into()],
            ..Default::default()
        }),
        ..loop7()
    }
}

#[test]
fn a_loop_devices_disk_is_read_alone_through_its_backing_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("backing");
    std::fs::write(&file, b"x").unwrap();
    let file = file.to_str().unwrap();
    let o = StudyOptions {
        root: true,
        ..opts(true)
    };
    let p = plan(&[loop_over(file)], &o);
    let members: Vec<&Point> = p
        .points
        .iter()
        .filter(|x| x.sweep == "ceiling" && !x.members.is_empty())
        .collect();
    assert!(!members.is_empty());
    assert!(members.iter().all(|x| x.members == [file] && !x.writes));
    assert_eq!(at(members[0]), "ceiling-loop-file-qd32");
    // The file gone (a deleted backing file): said, and nothing read.
    let p = plan(&[loop_over("/nonexistent/backing (deleted)")], &o);
    assert!(p.points.iter().all(|x| x.sweep != "ceiling"));
    assert!(p
        .skipped
        .iter()
        .any(|s| s.what.contains("members read alone") && s.why.contains("not a file")));
}
