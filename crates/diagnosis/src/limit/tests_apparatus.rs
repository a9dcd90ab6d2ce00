//! The built-in drive behind the kernel: I/Os held below its loop device
//! and above its model are held in ssdready's own transport and daemon,
//! never "a rate limit below this host".

use super::caps::Caps;
use super::tests::{judge, ruled, run, target};
use super::*;
use ssdready_measured::record::{DeviceSide, TargetKind};

/// The drive at QD 64: 57.5K IOPS, its loop device holding 54 of the 64
/// I/Os and busy all the time, its daemon's one thread `daemon_busy` %
/// busy, and its model alone giving `alone` IOPS at that depth.
fn kernel_drive_at_qd64(daemon_busy: f64, alone: f64) -> ssdready_measured::record::RunRecord {
    let iops = 57_500.0;
    let mut r = run("qd-64", 64, iops, 12.0, 61.0, 54.0);
    r.summary.transport = Some(ssdready_measured::summary::Transport {
        threads: 1,
        daemon_cpu_ns_per_io: daemon_busy / 100.0 * 1e9 / iops,
        ..Default::default()
    });
    r.device_model = Some(DeviceSide {
        iops: alone,
        ..Default::default()
    });
    r
}

fn drive() -> ssdready_measured::record::TargetProfile {
    let mut t = target(TargetKind::BlockDevice);
    t.transport = "fuse+loop".into();
    t
}

#[test]
fn ios_held_below_the_drives_loop_device_and_above_its_model_are_the_apparatus() {
    let s = judge(
        &drive(),
        &[kernel_drive_at_qd64(40.0, 876_838.0)],
        &Caps::default(),
        true,
    );
    assert_eq!(s.limit, Cause::Apparatus, "{s:?}");
    assert!(s.part.contains("transport and daemon"), "{}", s.part);
    assert!(
        s.evidence
            .iter()
            .any(|e| e.contains("loop3 held 54.0 of the 64 I/Os") && e.contains("876.8K")),
        "{:?}",
        s.evidence
    );
    let below = ruled(&s, Cause::BelowHost);
    assert!(below.why.contains("ssdready's own drive"), "{}", below.why);
}

#[test]
fn a_drive_near_its_models_rate_is_not_held_by_its_transport() {
    // The model alone gives only 1.2 times the rate reached: the drive's
    // own device time is what the I/Os waited for.
    let s = judge(
        &drive(),
        &[kernel_drive_at_qd64(40.0, 69_000.0)],
        &Caps::default(),
        true,
    );
    assert_ne!(s.limit, Cause::Apparatus, "{s:?}");
    assert_ne!(s.limit, Cause::BelowHost, "{s:?}");
}
