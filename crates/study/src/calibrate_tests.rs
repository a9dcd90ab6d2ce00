//! The transport calibration's tests: its arithmetic, its file, the
//! choice of transport, and how it is taken out of the figures.

use super::*;

fn pair(d: f64, l: f64, daemon: f64) -> Pair {
    Pair {
        drive_lat_ns: d,
        loop_lat_ns: l,
        daemon_cpu_ns: daemon,
        drive_proc_ns: 6_000.0,
        loop_proc_ns: 5_000.0,
        drive_iops: 40_000.0,
    }
}

#[test]
fn the_transport_is_the_zero_time_drive_above_the_shm_loop_with_the_repeats_spread() {
    let p = Point::from_pairs(
        1,
        &[
            pair(30_000.0, 20_000.0, 4_000.0),
            pair(34_000.0, 20_000.0, 5_000.0),
            pair(31_000.0, 19_000.0, 3_000.0),
        ],
    );
    // Differences 10, 14, 12 µs: median 12, half the spread 2.
    assert_eq!(p.lat_ns, 12_000.0);
    assert_eq!(p.lat_err_ns, 2_000.0);
    // The daemon plus the submitter's 1 µs above the shm loop's.
    assert_eq!(p.cpu_ns, 5_000.0);
    assert_eq!(p.cpu_err_ns, 1_000.0);
    assert_eq!(p.daemon_cpu_ns, 4_000.0);
    assert_eq!(p.drive_lat_ns, 31_000.0);
}

/// The zero-time drive goes over the measured drive's own transport:
/// a drive attached by hand over FUSE on io_uring is calibrated over
/// FUSE on io_uring, not over what `auto` would pick.
#[test]
fn the_zero_time_drive_uses_the_measured_drives_transport() {
    let over = |t: &str| zero_time_drive(t).map(|(_, o)| o);
    assert_eq!(over("fuse-uring+loop").unwrap(), "fuse-uring");
    assert_eq!(over("fuse+loop").unwrap(), "fuse");
    assert_eq!(over("ublk").unwrap(), "ublk");
    assert_eq!(zero_time_drive("ublk").unwrap().0, "null,size=64m");
    let e = over("nbd").unwrap_err().to_string();
    assert!(
        e.contains("'nbd' is not one ssdready can attach over"),
        "{e}"
    );
}

#[test]
fn a_calibration_fits_only_its_kernel_boot_transport_engine_and_depths() {
    let c = Calibration {
        schema: SCHEMA.into(),
        kernel: "6.18".into(),
        boot_id: "b".into(),
        transport: "fuse+loop".into(),
        engine: "io_uring".into(),
        points: vec![
            Point {
                qd: 1,
                ..Default::default()
            },
            Point {
                qd: 32,
                ..Default::default()
            },
        ],
        ..Default::default()
    };
    let here = ("6.18".to_string(), "b".to_string());
    let io = "io_uring";
    assert!(c.fits(&here, "fuse+loop", io, &[1, 32]));
    assert!(!c.fits(&here, "fuse+loop", io, &[1, 16]));
    assert!(!c.fits(&here, "ublk", io, &[1]));
    assert!(!c.fits(&("6.18".into(), "other boot".into()), "fuse+loop", io, &[1]));
    assert!(!c.fits(&("6.19".into(), "b".into()), "fuse+loop", io, &[1]));
    // Read with another engine (a synchronous one reads every depth at
    // QD 1), or kept before the engine was recorded: measured again.
    assert!(!c.fits(&here, "fuse+loop", "psync", &[1]));
    let old = Calibration {
        engine: String::new(),
        ..c.clone()
    };
    assert!(!old.fits(&here, "fuse+loop", io, &[1]));
}

#[test]
fn the_file_is_named_by_kernel_boot_and_transport_and_round_trips() {
    let dir = std::env::temp_dir().join(format!("ssdready-cal-{}", std::process::id()));
    let here = ("6.18.4-x/y".to_string(), "0f-1".to_string());
    let p = path_in(&dir, &here, "fuse-uring+loop");
    assert_eq!(
        p,
        dir.join("ssdready/transport/6.18.4-x_y-0f-1-fuse-uring_loop.json")
    );
    assert_ne!(p, path_in(&dir, &here, "fuse+loop"));
    let c = Calibration {
        schema: SCHEMA.into(),
        kernel: here.0.clone(),
        boot_id: here.1.clone(),
        points: vec![Point {
            qd: 4,
            lat_ns: 1.5,
            ..Default::default()
        }],
        ..Default::default()
    };
    // An earlier boot's files go when this boot's is kept; another
    // transport's of this boot stays.
    let t = dir.join("ssdready/transport");
    std::fs::create_dir_all(&t).unwrap();
    let old = t.join("6.18.4-x_y-0e-fuse_loop.json");
    let other = path_in(&dir, &here, "fuse+loop");
    // This boot's file under the name before transports had their own.
    let unnamed = t.join("6.18.4-x_y-0f-1.json");
    std::fs::write(&unnamed, "{}").unwrap();
    std::fs::write(&old, "{}").unwrap();
    std::fs::write(&other, "{}").unwrap();
    std::fs::write(t.join("notes.txt"), "").unwrap();
    save(&c, &p).unwrap();
    assert!(!old.exists() && other.exists() && t.join("notes.txt").exists());
    assert!(!unnamed.exists());
    let back = load(&p).unwrap();
    assert_eq!(back.points, c.points);
    assert_eq!(back.path.as_deref(), Some(p.as_path()));
    assert!(
        back.note().contains(&p.display().to_string()),
        "{}",
        back.note()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_qd1_share_uses_the_latency_less_the_transport_and_the_lateness() {
    let mut f = qd1_and_qd16_curve();
    let c = calibrated_at_qd1();
    take_out(&mut f, &c, &[]);
    assert_eq!(f.qd_curve[0].less_transport_lat_ns, Some(190_000.0));
    assert_eq!(f.qd_curve[0].less_transport_err_ns, Some(1_000.0));
    // No calibration at QD 16: nothing taken out there.
    assert_eq!(f.qd_curve[1].less_transport_lat_ns, None);
    // 190 − 2 (lateness) − 148 (device) = 40 µs of platform in 188.
    let s = f.platform_share_qd1.clone().unwrap();
    assert_eq!(s.platform_ns, 40_000.0);
    // Without runs, the calibration's error alone.
    assert_eq!(s.err_ns, Some(1_000.0));
    assert_eq!(s.total_ns, 188_000.0);
    assert!((s.pct - 100.0 * 40.0 / 188.0).abs() < 1e-9);
    assert!(s.source.contains("10.0 µs ± 1.0 µs"), "{}", s.source);
    assert!(f.calibration.is_some());
    // With the QD 1 repeats: 198, 202 and 206 µs, half their spread
    // 4 µs, with the calibration's 1: √17 µs. Runs of other depths
    // do not count.
    let run = qd_run;
    f.qd_curve[0].runs = vec!["qd-1".into(), "qd-1#2".into(), "qd-1#3".into()];
    let runs = [
        run("qd-1", 198_000.0),
        run("qd-1#2", 206_000.0),
        run("qd-1#3", 202_000.0),
        run("qd-16", 900_000.0),
    ];
    take_out(&mut f, &c, &runs);
    let s = f.platform_share_qd1.clone().unwrap();
    let e = s.err_ns.unwrap();
    assert!((e - 17f64.sqrt() * 1e3).abs() < 1e-6, "{e}");
    assert_eq!(s.overcount_ns, None, "the parts add up");
    // A transport and lateness that take out more than the mean less the
    // device's time, beyond the error, are said not to add up: 200 − 55
    // − 2 = 143 µs against 148, 5 µs short; within a 6 µs error they
    // would be the noise.
    let mut c2 = c.clone();
    c2.points[0].lat_ns = 55_000.0;
    take_out(&mut f, &c2, &[]);
    let s = f.platform_share_qd1.clone().unwrap();
    assert_eq!(s.platform_ns, 0.0);
    assert_eq!(s.overcount_ns, Some(5_000.0));
    c2.points[0].lat_err_ns = 6_000.0;
    take_out(&mut f, &c2, &[]);
    assert_eq!(f.platform_share_qd1.clone().unwrap().overcount_ns, None);
    // Without the daemon's device time there is no ceiling; with it, the
    // mean less what its stamps account for: 200 − 148 − 2 − 1.5 µs.
    assert_eq!(
        f.platform_share_qd1.clone().unwrap().outside_daemon_ns,
        None
    );
    if let Some(t) = f.transport_qd1.as_mut() {
        t.device_ns_mean = 148_000.0;
        t.reply_ns_mean = 1_500.0;
    }
    take_out(&mut f, &c2, &[]);
    assert_eq!(
        f.platform_share_qd1.unwrap().outside_daemon_ns,
        Some(48_500.0)
    );
}

/// A curve at QD 1 (200 µs) and 16 (500 µs), the device's time 148 µs at
/// each, the transport 2 µs late at QD 1.
fn qd1_and_qd16_curve() -> crate::figures::Figures {
    let mut f = crate::figures::Figures {
        transport_qd1: Some(ssdready_measured::summary::Transport {
            late_ns_mean: 2_000.0,
            ..Default::default()
        }),
        ..Default::default()
    };
    for (qd, lat) in [(1, 200_000.0), (16, 500_000.0)] {
        f.qd_curve.push(ssdready_measured::curve::CurvePoint {
            qd,
            lat_mean_ns: lat,
            device_lat_mean_ns: Some(148_000.0),
            ..Default::default()
        });
    }
    f
}

/// A calibration at QD 1 alone: 10 µs ± 1 µs.
fn calibrated_at_qd1() -> Calibration {
    Calibration {
        points: vec![Point {
            qd: 1,
            lat_ns: 10_000.0,
            lat_err_ns: 1_000.0,
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A run `id` of 100 I/Os at a mean latency of `lat` ns.
fn qd_run(id: &str, lat: f64) -> ssdready_measured::record::RunRecord {
    let mut r = ssdready_measured::record::RunRecord {
        id: id.into(),
        ..Default::default()
    };
    r.summary.ios = 100;
    r.summary.lat_mean_ns = lat;
    r
}

/// A calibration whose spread exceeds the transport at some depth is
/// noise: not kept, and the note says why.
#[test]
fn a_calibration_noisier_than_the_transport_is_not_kept() {
    let point = |qd, lat_ns, lat_err_ns| Point {
        qd,
        lat_ns,
        lat_err_ns,
        ..Default::default()
    };
    let mut c = Calibration {
        transport: "fuse+loop".into(),
        points: vec![point(1, 3_000.0, 24.0), point(16, 3_500.0, 900.0)],
        ..Default::default()
    };
    assert_eq!(c.steady(), Ok(()));
    c.points.push(point(2, 3_000.0, 33_670.0));
    let why = c.steady().unwrap_err().to_string();
    assert!(why.starts_with("at QD 2 its spread (± 33.7 µs)"), "{why}");
    c.not_kept = Some(why);
    assert!(c.note().contains("; not kept: at QD 2"), "{}", c.note());
}

/// A QD 1 calibration lost in its own spread takes nothing out of
/// the platform's share: the share stays the daemon stamps' one (here
/// the model's), and says why.
#[test]
fn a_noisy_qd1_calibration_leaves_the_platform_share_alone() {
    let mut f = crate::figures::Figures::default();
    f.qd_curve.push(ssdready_measured::curve::CurvePoint {
        qd: 1,
        lat_mean_ns: 582_000.0,
        device_lat_mean_ns: Some(149_000.0),
        ..Default::default()
    });
    f.platform_share_qd1 = Some(crate::figures::PlatformShare {
        pct: 74.4,
        platform_ns: 433_000.0,
        source: "stamps".into(),
        ..Default::default()
    });
    let c = Calibration {
        points: vec![Point {
            qd: 1,
            lat_ns: 1_819_700.0,
            lat_err_ns: 1_917_200.0,
            ..Default::default()
        }],
        ..Default::default()
    };
    take_out(&mut f, &c, &[]);
    let s = f.platform_share_qd1.as_ref().unwrap();
    assert_eq!((s.pct, s.platform_ns), (74.4, 433_000.0));
    assert!(
        s.source.ends_with(
            "; the calibration at QD 1 was noise (1819.7 µs ± 1917.2 µs), not taken out"
        ),
        "{}",
        s.source
    );
    // The column still shows it, as noise (the table prints it so).
    assert_eq!(f.qd_curve[0].less_transport_lat_ns, Some(0.0));
}

/// A transport measured below nothing (noise on a loaded machine)
/// takes nothing out: the column never shows more than the latency.
#[test]
fn a_transport_measured_below_nothing_takes_nothing_out() {
    let mut f = crate::figures::Figures::default();
    f.qd_curve.push(ssdready_measured::curve::CurvePoint {
        qd: 4,
        lat_mean_ns: 136_000.0,
        ..Default::default()
    });
    let c = Calibration {
        points: vec![Point {
            qd: 4,
            lat_ns: -27_000.0,
            lat_err_ns: 18_000.0,
            ..Default::default()
        }],
        ..Default::default()
    };
    take_out(&mut f, &c, &[]);
    assert_eq!(f.qd_curve[0].less_transport_lat_ns, Some(136_000.0));
    assert_eq!(f.qd_curve[0].less_transport_err_ns, Some(18_000.0));
}

#[test]
fn the_depths_are_the_queue_depth_sweeps() {
    let run = |sweep: &str, qd: u32, err: bool| ssdready_measured::record::RunRecord {
        sweep: sweep.into(),
        workload: crate::plan::Workload {
            qd,
            ..Default::default()
        },
        error: err.then(|| "failed".into()),
        ..Default::default()
    };
    let runs = [
        run("qd", 16, false),
        run("qd", 1, false),
        run("qd", 1, false),
        run("qd", 64, true),
        run("threads", 8, false),
    ];
    assert_eq!(depths(&runs), vec![1, 16]);
}

#[test]
fn a_kept_calibration_that_is_a_fifo_a_device_link_or_too_large_is_not_read() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        // Opened without waiting for a writer, and refused.
        assert!(load(&fifo).is_none());
    } else {
        eprintln!("skipped the FIFO case: mkfifo is missing");
    }
    let zero = d.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    assert!(load(&zero).is_none());
    let big = d.path().join("big.json");
    std::fs::write(&big, vec![b' '; MAX_KEPT as usize + 1]).unwrap();
    assert!(load(&big).is_none());
    let ok = d.path().join("ok.json");
    std::fs::write(&ok, serde_json::to_string(&Calibration::default()).unwrap()).unwrap();
    assert!(load(&ok).is_some());
}

#[test]
fn as_root_a_cache_directory_another_user_owns_or_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let base = d.path().join("cache");
    std::fs::create_dir(&base).unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if !ssdready_io::kdev::is_root() {
        // Our own directory: not root's.
        assert!(root_only(&base).unwrap_err().contains("owned by uid"));
        eprintln!("skipped the chown cases: needs root");
        return;
    }
    assert_eq!(root_only(&base), Ok(()));
    // Not made yet: the directory it would be made in decides.
    assert_eq!(root_only(&d.path().join("none")), Ok(()));
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert!(root_only(&base)
        .unwrap_err()
        .contains("other users can write"));
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t = base.join("ssdready");
    std::fs::create_dir(&t).unwrap();
    std::os::unix::fs::chown(&t, Some(1000), Some(1000)).unwrap();
    assert!(root_only(&base).unwrap_err().contains("owned by uid 1000"));
    std::fs::remove_dir(&t).unwrap();
    std::os::unix::fs::symlink("/tmp", &t).unwrap();
    assert!(root_only(&base).unwrap_err().contains("symbolic link"));
    // A directory in a world-writable one (as /tmp) may be replaced.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    assert!(root_only(&d.path().join("none")).is_err());
}

#[test]
fn a_kept_calibration_the_drive_beat_is_forgotten_and_one_it_did_not_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k-b-fuse_loop.json");
    std::fs::write(&path, b"{}").unwrap();
    let c = Calibration {
        path: Some(path.clone()),
        ..Default::default()
    };
    let mut f = ssdready_diagnosis::figures::Figures {
        transport_ceiling: Some(ssdready_diagnosis::apparatus::TransportCeiling {
            iops: 40_000.0,
            peak_iops: 41_000.0,
            explains: true,
            ..Default::default()
        }),
        ..Default::default()
    };
    assert!(!forget_if_beaten(&c, &f));
    assert!(path.exists());
    let t = f.transport_ceiling.as_mut().unwrap();
    (t.peak_iops, t.explains, t.beaten) = (92_000.0, false, true);
    assert!(forget_if_beaten(&c, &f));
    assert!(!path.exists());
}
