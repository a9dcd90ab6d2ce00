//! The permanent lines of each lifted limit, for a group systemd does not
//! manage on cgroup v1, and for a systemd service on cgroup v1 and v2.

use super::*;
use ssdready_measured::group_limits::fixtures::{v1_cpuset, v1_plant, v2_service};

fn reached(iops: f64, threads: u32) -> Reached {
    Reached {
        iops,
        bw_bytes_per_s: iops * 4096.0,
        threads,
        mixed: false,
    }
}

#[test]
fn a_unit_is_the_last_part_of_the_groups_path_where_it_is_one() {
    assert_eq!(
        unit_of("/system.slice/app.service").as_deref(),
        Some("app.service")
    );
    assert_eq!(
        unit_of("/user.slice/user-1000.slice/session-3.scope").as_deref(),
        Some("session-3.scope")
    );
    assert_eq!(unit_of("/system.slice").as_deref(), Some("system.slice"));
    assert_eq!(unit_of("/plant"), None);
    assert_eq!(unit_of("/docker/3f2a"), None);
    assert_eq!(unit_of("/"), None);
    assert_eq!(unit_of("/.service"), None);
}

#[test]
fn a_v1_group_systemd_does_not_manage_gets_its_cgroupfs_writes() {
    let inv = v1_plant();
    let t = lines(GroupLimit::IoThrottle, &inv, Some(&reached(41_000.4, 1)));
    assert_eq!(
        t,
        [
            "echo \"7:3 0\" > /sys/fs/cgroup/blkio/plant/blkio.throttle.read_iops_device  # no limit (the group /plant is not a systemd unit's)",
            "echo \"7:3 41001\" > /sys/fs/cgroup/blkio/plant/blkio.throttle.read_iops_device  # or raise it to what the trial reached",
        ]
    );
    let q = lines(GroupLimit::CpuQuota, &inv, Some(&reached(9000.0, 2)));
    assert_eq!(
        q,
        [
            "echo \"-1\" > /sys/fs/cgroup/cpu,cpuacct/plant/cpu.cfs_quota_us  # no limit (the group /plant is not a systemd unit's)",
            "echo \"200000\" > /sys/fs/cgroup/cpu,cpuacct/plant/cpu.cfs_quota_us  # or raise it to the 2 CPUs the trial's 2 threads could use",
        ]
    );
    // One thread: one CPU.
    let one = lines(GroupLimit::CpuQuota, &inv, Some(&reached(9000.0, 1)));
    assert!(
        one[1].ends_with("raise it to the 1 CPU the trial's one thread could use"),
        "{one:?}"
    );
    // Reads and writes together: their rate is no figure for a throttle of
    // the reads alone, which is only removed.
    let mixed = Reached {
        mixed: true,
        ..reached(41_000.4, 1)
    };
    let t = lines(GroupLimit::IoThrottle, &inv, Some(&mixed));
    assert_eq!(t.len(), 1, "{t:?}");
    let c = lines(GroupLimit::Cpuset, &v1_cpuset(), None);
    assert_eq!(
        c,
        ["echo \"0-1\" > /sys/fs/cgroup/cpuset/plant1/cpuset.cpus  # no limit (the group /plant1 is not a systemd unit's)"]
    );
    // A limit the inventory does not show has no line.
    assert!(lines(GroupLimit::Cpuset, &inv, None).is_empty());
}

#[test]
fn a_v2_service_gets_its_units_property_with_the_device_then_the_cgroupfs_write() {
    let inv = v2_service();
    let t = lines(GroupLimit::IoThrottle, &inv, Some(&reached(52_000.0, 1)));
    assert_eq!(
        t[..3],
        [
            "systemctl set-property app.service IOReadIOPSMax=  # no limit",
            "systemctl set-property app.service IOReadIOPSMax=\"/dev/nvme0n1 52000\"  # or raise it to what the trial reached",
            "echo \"259:0 riops=max\" > /sys/fs/cgroup/system.slice/app.service/io.max  # the same without systemd",
        ]
    );
    // The bandwidth limit (200 MiB/s) is below what the trial reached
    // (52K × 4 KiB, 203 MiB/s): its own lines, removed or raised.
    assert!(t[3].starts_with("systemctl set-property app.service IOReadBandwidthMax="));
    assert!(t[5].contains("259:0 rbps=max"), "{t:?}");
    // The quota is set on the slice: the slice's property.
    let q = lines(GroupLimit::CpuQuota, &inv, Some(&reached(9000.0, 4)));
    assert_eq!(
        q,
        [
            "systemctl set-property system.slice CPUQuota=  # no limit",
            "systemctl set-property system.slice CPUQuota=400%  # or raise it to the 4 CPUs the trial's 4 threads could use",
            "echo \"max\" > /sys/fs/cgroup/system.slice/cpu.max  # the same without systemd",
        ]
    );
    let c = lines(GroupLimit::Cpuset, &inv, None);
    assert_eq!(
        c,
        [
            "systemctl set-property app.service AllowedCPUs=  # no limit",
            "echo \"0-3\" > /sys/fs/cgroup/system.slice/app.service/cpuset.cpus  # the same without systemd",
        ]
    );
    let l = lines(GroupLimit::IoLatency, &inv, None);
    assert_eq!(
        l[0],
        "systemctl set-property app.service IODeviceLatencyTargetSec=  # no limit"
    );
    assert!(l[1].starts_with(
        "echo \"259:0 target=max\" > /sys/fs/cgroup/system.slice/app.service/io.latency"
    ));
    let w = lines(GroupLimit::IoWeight, &inv, None);
    assert_eq!(
        w[0],
        "systemctl set-property app.service IOWeight=  # no limit"
    );
}

#[test]
fn a_v1_service_uses_the_modern_io_properties_and_no_allowed_cpus() {
    let mut inv = v1_plant();
    inv.io_throttles[0].cgroup = "/system.slice/db.service".into();
    inv.io_throttles[0].source =
        "/sys/fs/cgroup/blkio/system.slice/db.service/blkio.throttle.read_iops_device".into();
    let t = lines(GroupLimit::IoThrottle, &inv, None);
    assert_eq!(
        t,
        [
            "systemctl set-property db.service IOReadIOPSMax=  # no limit",
            "echo \"7:3 0\" > /sys/fs/cgroup/blkio/system.slice/db.service/blkio.throttle.read_iops_device  # the same without systemd",
        ]
    );
    let mut c = v1_cpuset();
    c.cpuset.as_mut().unwrap().cgroup = "/system.slice/db.service".into();
    c.cpuset.as_mut().unwrap().source =
        "/sys/fs/cgroup/cpuset/system.slice/db.service/cpuset.cpus".into();
    let c = lines(GroupLimit::Cpuset, &c, None);
    assert_eq!(
        c,
        ["echo \"0-1\" > /sys/fs/cgroup/cpuset/system.slice/db.service/cpuset.cpus  # no limit (systemd sets AllowedCPUs= on cgroup v2 only)"]
    );
}

#[test]
fn a_device_sysfs_does_not_name_is_given_as_its_block_node() {
    let mut inv = v2_service();
    inv.io_throttles.truncate(1);
    inv.io_throttles[0].disk = None;
    let t = lines(GroupLimit::IoThrottle, &inv, Some(&reached(9000.0, 1)));
    assert!(t[1].contains("\"/dev/block/259:0 9000\""), "{t:?}");
}
