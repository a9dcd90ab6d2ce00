//! A process's groups' counters at one moment ([`counters`]): to read
//! before and after a run, and take the difference
//! ([`ssdready_measured::limits::CgroupCounters::delta`]).

use super::{groups, Disks, Group, Reader};
use crate::limits_dev;
use ssdready_measured::limits::counters::{
    CgroupCounters, CpuCounters, GroupProcess, IoCount, IoCounters, Pressure, Resource,
};
use ssdready_measured::limits::{parse, CgroupVersion};
use std::path::Path;

/// The monotonic clock, ns.
fn now_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC)
        .map(|t| t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64)
        .unwrap_or(0)
}

/// The counters of process `pid`'s groups now, with the I/O of the
/// target's devices `devices` (every device when none).
pub fn counters(pid: u32, devices: &[(u32, u32)]) -> CgroupCounters {
    counters_at(Path::new("/"), pid, devices, now_ns())
}

/// [`counters`], with the files below `root`, stamped `at_ns`.
pub fn counters_at(root: &Path, pid: u32, devices: &[(u32, u32)], at_ns: u64) -> CgroupCounters {
    let mut r = Reader::new(root);
    let groups = groups(&mut r, pid);
    let found = devices
        .iter()
        .filter_map(|&(a, b)| limits_dev::whole_disk(r.s, a, b).map(|d| d.0))
        .collect();
    let disks = Disks::new(r.s, devices, found);
    let mut out = CgroupCounters {
        pid,
        at_ns,
        cpu: Vec::new(),
        io: Vec::new(),
        pressure: Vec::new(),
        unread: Vec::new(),
        processes: Vec::new(),
    };
    let acct = groups.iter().find(|g| g.v1("cpuacct"));
    for g in &groups {
        if g.v1("cpu") {
            v1_cpu(&mut r, g, acct, &mut out.cpu);
        }
        if g.v1("blkio") {
            v1_io(&mut r, g, &disks, &mut out.io);
        }
        if g.path.version == CgroupVersion::V2 {
            v2(&mut r, g, &disks, &mut out);
        }
    }
    out.processes = processes(&mut r, &groups, pid);
    out.unread = r.unread;
    out
}

/// The controllers whose group a limit can be set on and shared through.
const SHARED: [&str; 4] = ["blkio", "cpu", "cpuacct", "cpuset"];
/// At most this many processes of a group are read.
pub const GROUP_PROCESSES: usize = 256;

/// The processes in the study's own groups (`cgroup.procs`) of the
/// hierarchies a limit is set through, and the unified group; the root
/// group (every process on the machine) is left out.
fn processes(r: &mut Reader, groups: &[Group], pid: u32) -> Vec<GroupProcess> {
    let mut out: Vec<GroupProcess> = Vec::new();
    for g in groups {
        let Some((cgroup, dir)) = g.levels.first() else {
            continue;
        };
        let kinds: Vec<String> = match g.path.version {
            CgroupVersion::V2 => vec!["v2".into()],
            CgroupVersion::V1 => SHARED
                .iter()
                .filter(|c| g.v1(c))
                .map(|c| c.to_string())
                .collect(),
        };
        if kinds.is_empty() || cgroup == "/" {
            continue;
        }
        let procs = r.read(&format!("{dir}/cgroup.procs")).unwrap_or_default();
        let pids = procs.lines().filter_map(|l| l.trim().parse::<u32>().ok());
        for p in pids.take(GROUP_PROCESSES) {
            let i = match out.iter().position(|x| x.pid == p) {
                Some(i) => i,
                None => match process(r, p) {
                    Some(x) => {
                        out.push(x);
                        out.len() - 1
                    }
                    None => continue,
                },
            };
            for k in &kinds {
                if !out[i].shares.contains(k) {
                    out[i].shares.push(k.clone());
                }
            }
        }
    }
    // The study's own process, in whatever groups: its share is weighed
    // against the others'.
    if !out.iter().any(|x| x.pid == pid) && !out.is_empty() {
        out.extend(process(r, pid));
    }
    out
}

/// Clock ticks per second of `/proc/PID/stat`'s times.
pub(crate) fn user_hz() -> u64 {
    nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK)
        .ok()
        .flatten()
        .filter(|h| *h > 0)
        .map_or(100, |h| h as u64)
}

/// One process now: its name, CPU, policy and nice value
/// (`/proc/PID/stat`) and its block I/O (`/proc/PID/io`, readable only by
/// its owner or root). None when it is gone.
fn process(r: &mut Reader, pid: u32) -> Option<GroupProcess> {
    let stat = r.s.read(&format!("/proc/{pid}/stat"))?;
    let mut p = parse_stat(&stat, user_hz())?;
    p.pid = pid;
    if let Some(io) = r.s.read(&format!("/proc/{pid}/io")) {
        p.read_bytes = crate::disk::io_field(&io, "read_bytes");
        p.write_bytes = crate::disk::io_field(&io, "write_bytes");
    }
    Some(p)
}

/// A `/proc/PID/stat` text: its name, utime + stime (ticks of `hz`) in
/// ns, nice value and policy.
pub fn parse_stat(stat: &str, hz: u64) -> Option<GroupProcess> {
    let comm = crate::threads::stat_comm(stat)?.to_string();
    let rest: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let num = |i: usize| rest.get(i).and_then(|v| v.parse::<i64>().ok());
    let ticks = num(11)?.max(0) as u64 + num(12)?.max(0) as u64;
    let (policy, nice) = crate::threads::policy_nice(stat);
    Some(GroupProcess {
        comm,
        cpu_ns: Some(ticks.saturating_mul(1_000_000_000 / hz.max(1))),
        nice,
        policy,
        ..Default::default()
    })
}

/// `cpu.stat`'s fields: (nr_periods, nr_throttled, throttled ns, usage ns).
fn cpu_stat(r: &mut Reader, file: &str) -> [Option<u64>; 4] {
    let kv = r.each(file, parse::keyed);
    let get = |k: &str| kv.iter().find(|(x, _)| x == k).map(|(_, v)| *v);
    let us = |k: &str| get(k).map(|v| v.saturating_mul(1000));
    [
        get("nr_periods"),
        get("nr_throttled"),
        get("throttled_time").or_else(|| us("throttled_usec")),
        us("usage_usec"),
    ]
}

/// The own level, and each level above it with a quota.
fn quota_levels<'g>(r: &mut Reader, g: &'g Group) -> Vec<(&'g String, &'g String, Option<f64>)> {
    g.levels
        .iter()
        .enumerate()
        .filter_map(|(i, (cgroup, dir))| {
            let q = super::quota_at(r, g.path.version, dir).map(|q| q.cpus);
            (i == 0 || q.is_some()).then_some((cgroup, dir, q))
        })
        .collect()
}

/// v1: `cpu.stat` of the cpu hierarchy's levels, and the usage of the
/// same group in the cpuacct hierarchy (the same directory when the two
/// are mounted together), where it exists.
fn v1_cpu(r: &mut Reader, g: &Group, acct: Option<&Group>, out: &mut Vec<CpuCounters>) {
    for (cgroup, dir, quota_cpus) in quota_levels(r, g) {
        let stat = format!("{dir}/cpu.stat");
        let [nr_periods, nr_throttled, throttled_ns, _] = cpu_stat(r, &stat);
        let usage = acct
            .and_then(|a| a.mount.as_ref())
            .and_then(|m| parse::levels(m, cgroup).into_iter().next())
            .map(|(_, d)| format!("{d}/cpuacct.usage"));
        let usage_ns = usage.as_ref().and_then(|f| r.parsed(f, parse::single));
        let source = match usage_ns.and(usage) {
            Some(u) => format!("{stat}, {u}"),
            None => stat,
        };
        out.push(CpuCounters {
            version: CgroupVersion::V1,
            cgroup: cgroup.clone(),
            quota_cpus,
            usage_ns,
            nr_periods,
            nr_throttled,
            throttled_ns,
            source,
        });
    }
}

/// v1: the own group's `blkio.throttle.io_serviced` and `io_service_bytes`.
fn v1_io(r: &mut Reader, g: &Group, disks: &Disks, out: &mut Vec<IoCounters>) {
    let (cgroup, dir) = &g.levels[0];
    let ios = format!("{dir}/blkio.throttle.io_serviced");
    let bytes = format!("{dir}/blkio.throttle.io_service_bytes");
    let mut per: Vec<(String, IoCount)> = Vec::new();
    for (file, is_bytes) in [(&ios, false), (&bytes, true)] {
        for (dev, op, n) in r.each(file, parse::blkio_stat) {
            if !disks.wanted(&dev) {
                continue;
            }
            let i = match per.iter().position(|(d, _)| *d == dev) {
                Some(i) => i,
                None => {
                    per.push((dev, IoCount::default()));
                    per.len() - 1
                }
            };
            let c = &mut per[i].1;
            match (op.as_str(), is_bytes) {
                ("Read", false) => c.reads = n,
                ("Write", false) => c.writes = n,
                ("Read", true) => c.read_bytes = n,
                ("Write", true) => c.write_bytes = n,
                _ => {}
            }
        }
    }
    for (device, count) in per {
        out.push(IoCounters {
            version: CgroupVersion::V1,
            cgroup: cgroup.clone(),
            disk: disks.name(&device),
            device,
            count,
            source: format!("{ios}, {bytes}"),
        });
    }
}

/// v2: `cpu.stat` of the own level and each level with a quota, the own
/// group's `io.stat` and its pressure files.
fn v2(r: &mut Reader, g: &Group, disks: &Disks, out: &mut CgroupCounters) {
    for (cgroup, dir, quota_cpus) in quota_levels(r, g) {
        let source = format!("{dir}/cpu.stat");
        let [nr_periods, nr_throttled, throttled_ns, usage_ns] = cpu_stat(r, &source);
        if usage_ns.is_some() || nr_periods.is_some() {
            out.cpu.push(CpuCounters {
                version: CgroupVersion::V2,
                cgroup: cgroup.clone(),
                quota_cpus,
                usage_ns,
                nr_periods,
                nr_throttled,
                throttled_ns,
                source,
            });
        }
    }
    let Some((cgroup, dir)) = g.levels.first() else {
        return;
    };
    let file = format!("{dir}/io.stat");
    for (device, count) in r.each(&file, parse::io_stat) {
        if disks.wanted(&device) {
            out.io.push(IoCounters {
                version: CgroupVersion::V2,
                cgroup: cgroup.clone(),
                disk: disks.name(&device),
                device,
                count,
                source: file.clone(),
            });
        }
    }
    for (f, resource) in [
        ("io.pressure", Resource::Io),
        ("cpu.pressure", Resource::Cpu),
        ("memory.pressure", Resource::Memory),
    ] {
        let source = format!("{dir}/{f}");
        if let Some((some_us, full_us)) = r.parsed(&source, parse::pressure) {
            out.pressure.push(Pressure {
                version: CgroupVersion::V2,
                cgroup: cgroup.clone(),
                resource,
                some_us,
                full_us,
                source,
            });
        }
    }
}
