use super::*;

/// `/proc/self/cgroup` of a v1 host like the project's machines: every
/// controller in its own hierarchy, and an empty v2 one.
const V1_CGROUP: &str = "9:name=systemd:/\n8:pids:/\n7:blkio:/job\n6:freezer:/\n\
    4:memory:/process_api/8fe4\n3:cpuset:/\n2:cpuacct:/\n1:cpu:/job/inner\n0::/\n";

/// Its mountinfo's cgroup lines, among others.
const V1_MOUNTINFO: &str = "\
22 1 0:21 / /proc rw,nosuid - proc proc rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

#[test]
fn a_v1_hosts_groups_are_found_with_their_mounts_and_levels() {
    let (groups, bad) = proc_cgroup(V1_CGROUP);
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(groups.len(), 9);
    let (mounts, bad) = cgroup_mounts(V1_MOUNTINFO);
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(mounts.len(), 7, "{mounts:?}");
    let cpu = groups.iter().find(|g| g.controllers == ["cpu"]).unwrap();
    assert_eq!(cpu.version(), CgroupVersion::V1);
    let m = mount_for(&mounts, cpu).unwrap();
    assert_eq!(m.mount_point, "/sys/fs/cgroup/cpu");
    assert_eq!(
        levels(m, &cpu.path),
        vec![
            ("/job/inner".into(), "/sys/fs/cgroup/cpu/job/inner".into()),
            ("/job".into(), "/sys/fs/cgroup/cpu/job".into()),
            ("/".into(), "/sys/fs/cgroup/cpu".into()),
        ]
    );
    // cpuacct is a hierarchy of its own here, not cpu's.
    let acct = groups
        .iter()
        .find(|g| g.controllers == ["cpuacct"])
        .unwrap();
    assert_eq!(
        mount_for(&mounts, acct).unwrap().mount_point,
        "/sys/fs/cgroup/cpuacct"
    );
    let v2 = groups
        .iter()
        .find(|g| g.version() == CgroupVersion::V2)
        .unwrap();
    let m = mount_for(&mounts, v2).unwrap();
    assert_eq!(
        levels(m, "/"),
        vec![("/".into(), "/sys/fs/cgroup/unified".into())]
    );
    let named = groups
        .iter()
        .find(|g| g.controllers == ["name=systemd"])
        .unwrap();
    assert_eq!(
        mount_for(&mounts, named).unwrap().mount_point,
        "/sys/fs/cgroup/systemd"
    );
}

#[test]
fn a_comounted_v1_hierarchy_serves_both_controllers() {
    let info = "30 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
    let (mounts, _) = cgroup_mounts(info);
    let (g, _) = proc_cgroup("4:cpu,cpuacct:/user.slice\n");
    let m = mount_for(&mounts, &g[0]).unwrap();
    assert_eq!(
        levels(m, &g[0].path)[0].1,
        "/sys/fs/cgroup/cpu,cpuacct/user.slice"
    );
}

#[test]
fn a_systemd_v2_hosts_group_has_every_level_to_the_root() {
    let (g, bad) = proc_cgroup("0::/system.slice/db.service\n");
    assert!(bad.is_empty());
    assert_eq!(g[0].version(), CgroupVersion::V2);
    let (mounts, _) =
        cgroup_mounts("35 24 0:30 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
    let m = mount_for(&mounts, &g[0]).unwrap();
    let lv: Vec<String> = levels(m, &g[0].path).into_iter().map(|l| l.1).collect();
    assert_eq!(
        lv,
        [
            "/sys/fs/cgroup/system.slice/db.service",
            "/sys/fs/cgroup/system.slice",
            "/sys/fs/cgroup"
        ]
    );
}

#[test]
fn a_containers_group_is_its_namespace_root_or_below_a_mounted_subtree() {
    // In a cgroup namespace: the group is "/", the mount shows it at its root.
    let (g, _) = proc_cgroup("0::/\n");
    let (m, _) = cgroup_mounts("700 690 0:30 / /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
    let m = mount_for(&m, &g[0]).unwrap();
    assert_eq!(levels(m, "/"), vec![("/".into(), "/sys/fs/cgroup".into())]);
    // Without one: the mount's root is the container's group.
    let (m, _) = cgroup_mounts("700 690 0:30 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
    let (g, _) = proc_cgroup("0::/docker/abc/app\n");
    let m = mount_for(&m, &g[0]).unwrap();
    assert_eq!(
        levels(m, &g[0].path),
        vec![
            ("/docker/abc/app".into(), "/sys/fs/cgroup/app".into()),
            ("/docker/abc".into(), "/sys/fs/cgroup".into()),
        ]
    );
    // A group outside the mount, or outside the reader's namespace.
    let (g, _) = proc_cgroup("0::/other\n");
    assert!(mount_for(std::slice::from_ref(m), &g[0]).is_none());
    assert!(levels(m, "/../sibling").is_empty());
    // A root that is a prefix of another name is not its parent.
    assert!(mount_for(
        std::slice::from_ref(m),
        &proc_cgroup("0::/docker/abcd\n").0[0]
    )
    .is_none());
}

#[test]
fn mount_points_with_escaped_spaces_are_decoded() {
    let (m, _) = cgroup_mounts("41 31 0:38 / /mnt/my\\040cg rw - cgroup2 cgroup2 rw\n");
    assert_eq!(m[0].mount_point, "/mnt/my cg");
}

#[test]
fn malformed_lines_are_kept_as_bad_lines() {
    let (g, bad) = proc_cgroup("3:cpuset:/\ngarbage\nx:cpu:/\n1:cpu:relative\n");
    assert_eq!(g.len(), 1);
    assert_eq!(bad.len(), 3, "{bad:?}");
    assert!(bad[1].why.contains("'x'"), "{bad:?}");
    let (_, bad) = cgroup_mounts("1 2 3\n");
    assert_eq!(bad.len(), 1);
    let (ok, bad) = v1_throttle("7:0 5000\n7:x 5\n8:0\n8:16 lots\n");
    assert_eq!(ok, [("7:0".to_string(), 5000)]);
    assert_eq!(bad.len(), 3);
    let (ok, bad) = io_max("8:16 rbps=1 sparkle=2\n8:0 riops=7\n");
    assert_eq!(ok, [("8:0".to_string(), IoLimitKind::ReadIops, 7)]);
    assert!(bad[0].why.contains("sparkle"), "{bad:?}");
    assert!(cpu_max("fast").is_err() && cpu_max("1 2 3").is_err());
    assert!(cfs_quota("-1", "x").is_err());
    assert!(memory_limit("lots").is_err());
    assert!(pressure("full avg10=0 total=3\n").is_err());
    assert!(pressure("some avg10=0.00\n").is_err());
    assert!(cpus_allowed("Name: x\n").is_err());
    assert!(cpus_allowed("Cpus_allowed_list:\t3-1\n").is_err());
}

#[test]
fn throttles_of_both_versions_are_read_with_max_as_no_limit() {
    let (v, bad) = v1_throttle("7:0 5000\n");
    assert!(bad.is_empty());
    assert_eq!(v, [("7:0".into(), 5000)]);
    let (v, bad) = io_max("8:16 rbps=2097152 wbps=max riops=max wiops=120\n259:0 rbps=max wbps=max riops=max wiops=max\n");
    assert!(bad.is_empty());
    assert_eq!(
        v,
        [
            ("8:16".into(), IoLimitKind::ReadBps, 2_097_152),
            ("8:16".into(), IoLimitKind::WriteIops, 120)
        ]
    );
    assert_eq!(io_latency("8:16 target=75\n").0, [("8:16".into(), 75)]);
}

#[test]
fn io_cost_lines_keep_their_fields() {
    let qos = "8:16 enable=1 ctrl=user rpct=95.00 rlat=75000 wpct=95.00 wlat=150000 min=50.00 max=150.00\n\
               8:0 enable=0 ctrl=auto rpct=0.00 rlat=250000 wpct=0.00 wlat=250000 min=1.00 max=10000.00\n";
    let (v, bad) = io_cost(qos, true);
    assert!(bad.is_empty());
    assert!(v[0].1 && !v[1].1);
    assert_eq!(v[0].2[0], ("ctrl".into(), "user".into()));
    assert!(!v[0].2.iter().any(|(k, _)| k == "enable"));
    let model = "8:16 ctrl=auto model=linear rbps=2706339840 rseqiops=89698 rrandiops=110036 wbps=1063126016 wseqiops=135560 wrandiops=130734\n";
    let (v, _) = io_cost(model, false);
    assert!(v[0].1);
    assert_eq!(v[0].2[1], ("model".into(), "linear".into()));
    let (w, bad) = weights("default 100\n8:16 200\n");
    assert!(bad.is_empty());
    assert_eq!(w, [(None, 100), (Some("8:16".into()), 200)]);
}

#[test]
fn cpu_quotas_of_both_versions_and_none() {
    assert_eq!(cpu_max("max 100000\n"), Ok(None));
    assert_eq!(cpu_max("20000 100000\n"), Ok(Some((20_000, 100_000))));
    assert_eq!(cfs_quota("-1\n", "100000\n"), Ok(None));
    assert_eq!(
        cfs_quota("50000\n", "100000\n"),
        Ok(Some((50_000, 100_000)))
    );
}

#[test]
fn memory_limits_of_both_versions_and_none() {
    assert_eq!(memory_limit("9223372036854771712\n"), Ok(None));
    assert_eq!(memory_limit("max\n"), Ok(None));
    assert_eq!(memory_limit("536870912\n"), Ok(Some(512 << 20)));
}

#[test]
fn cpu_counters_and_io_counters_of_both_versions() {
    let v1 =
        "nr_periods 59\nnr_throttled 57\nthrottled_time 2991074953\nnr_bursts 0\nburst_time 0\n";
    let (k, bad) = keyed(v1);
    assert!(bad.is_empty());
    assert_eq!(k[2], ("throttled_time".into(), 2_991_074_953));
    let v2 = "usage_usec 1795842537\nuser_usec 1709822901\nsystem_usec 86019636\nnice_usec 0\n\
              nr_periods 10\nnr_throttled 4\nthrottled_usec 120000\n";
    assert_eq!(keyed(v2).0.len(), 7);
    let (s, bad) =
        io_stat("8:16 rbytes=1459200 wbytes=314773504 rios=192 wios=353 dbytes=0 dios=0\n");
    assert!(bad.is_empty());
    assert_eq!(
        s[0].1,
        IoCount {
            reads: 192,
            writes: 353,
            read_bytes: 1_459_200,
            write_bytes: 314_773_504
        }
    );
    let serviced = "7:0 Read 25032\n7:0 Write 0\n7:0 Sync 25032\n7:0 Async 0\n7:0 Discard 0\n7:0 Total 25032\nTotal 25032\n";
    let (b, bad) = blkio_stat(serviced);
    assert!(bad.is_empty(), "{bad:?}");
    assert_eq!(b.len(), 6);
    assert_eq!(b[0], ("7:0".into(), "Read".into(), 25032));
    // A group that did no I/O yet has only the total.
    assert_eq!(blkio_stat("Total 0\n").0.len(), 0);
}

#[test]
fn pressure_totals_and_cpu_lists() {
    let io = "some avg10=0.10 avg60=0.06 avg300=0.07 total=6110623\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1721188\n";
    assert_eq!(pressure(io), Ok((6_110_623, Some(1_721_188))));
    assert_eq!(
        pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"),
        Ok((5, None))
    );
    assert_eq!(cpu_list("0-1\n"), Ok(vec![0, 1]));
    assert_eq!(cpu_list("0,2-3"), Ok(vec![0, 2, 3]));
    let status = "Name:\tsleep\nCpus_allowed:\t1\nCpus_allowed_list:\t0\nMems_allowed_list:\t0\n";
    assert_eq!(cpus_allowed(status), Ok(vec![0]));
    assert_eq!(devno("259:3"), Ok((259, 3)));
    assert!(devno("259").is_err() && devno("a:b").is_err());
}

#[test]
fn the_scheduler_in_effect_is_the_bracketed_one_or_the_only_one() {
    assert_eq!(
        schedulers("mq-deadline [none] kyber\n"),
        (
            Some("none".to_string()),
            vec!["mq-deadline".into(), "none".into(), "kyber".into()]
        )
    );
    assert_eq!(
        active_scheduler("mq-deadline [none] kyber").as_deref(),
        Some("none")
    );
    assert_eq!(
        active_scheduler("none mq-deadline [bfq]\n").as_deref(),
        Some("bfq")
    );
    // A queue that offers no choice (md, device-mapper) shows it alone.
    assert_eq!(schedulers("none").0, None);
    assert_eq!(active_scheduler("none\n").as_deref(), Some("none"));
    assert_eq!(active_scheduler(""), None);
    assert_eq!(active_scheduler(" \n"), None);
}

#[test]
fn a_queue_settings_value_is_its_active_scheduler_or_its_trimmed_text() {
    assert_eq!(
        queue_value("scheduler", "none [mq-deadline] bfq\n"),
        "mq-deadline"
    );
    assert_eq!(queue_value("scheduler", "none\n"), "none");
    assert_eq!(queue_value("scheduler", ""), "");
    assert_eq!(queue_value("nr_requests", " 256\n"), "256");
    // Only the scheduler's text is read for brackets.
    assert_eq!(queue_value("write_cache", "[x]\n"), "[x]");
}

#[test]
fn a_queue_that_moved_between_two_readings_says_each_file_that_did() {
    use crate::limits::queue_files::{NOMERGES, NR_REQUESTS, SCHEDULER};
    let read = |pairs: &[(&str, &str)]| {
        (pairs.iter())
            .map(|(f, t)| (f.to_string(), format!("{t}\n")))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let was = read(&[
        (SCHEDULER, "none [mq-deadline] kyber bfq"),
        (NR_REQUESTS, "4"),
        (NOMERGES, "0"),
    ]);
    assert_eq!(moved(&was, &was), None);
    let now = read(&[
        (SCHEDULER, "[none] mq-deadline kyber bfq"),
        (NR_REQUESTS, "128"),
    ]);
    assert_eq!(
        moved(&was, &now).as_deref(),
        Some("nr_requests 4 → 128, scheduler mq-deadline → none")
    );
}
