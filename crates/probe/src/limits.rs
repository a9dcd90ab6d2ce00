//! Everything that can cap a process's I/O, read live from the kernel:
//! [`inventory`] (its cgroups in every hierarchy, v1 and v2, with each
//! level's I/O throttles, latency targets, weights, CPU quota, cpuset and
//! memory limit; its affinity; the CPUs online; the devices in its
//! target's path with their queues and kinds) and [`counters`] (its
//! groups' CPU, throttling, I/O and pressure counters, to read before and
//! after a run). The types and the parsers are `ssdready_measured::limits`'s.
//!
//! Files are found from `/proc/PID/cgroup` (the process's group in each
//! hierarchy) and `/proc/self/mountinfo` (where this process sees each
//! hierarchy mounted, and the group at the mount's root): the cgroup files
//! are opened in the reader's mount namespace, and `/proc/PID/cgroup`
//! names groups relative to the reader's cgroup namespace, so both are the
//! reader's. Every reader takes a file-system root ([`Sys`]: `/` in use, a
//! fake tree in tests). Nothing is changed on the system.

use crate::limits_dev;
use crate::sys::Sys;
use ssdready_measured::limits::parse::{self, BadLine, CgroupMount};
use ssdready_measured::limits::*;
use std::path::Path;

/// The inode of the initial cgroup namespace (the kernel's
/// `PROC_CGROUP_INIT_INO`): a reader in another sees its own group as `/`.
const INITIAL_CGROUP_NS: &str = "cgroup:[4026531835]";

/// The process's group in one hierarchy, with the levels visible here.
pub(crate) struct Group {
    pub path: CgroupPath,
    pub mount: Option<CgroupMount>,
    /// (group, directory), the group's own first, up to the mount's root.
    pub levels: Vec<(String, String)>,
    /// v2: the controllers any level read offers (a quota on an ancestor
    /// holds a group that does not have the controller itself).
    pub offered: Vec<String>,
}

impl Group {
    fn has(&self, controller: &str) -> bool {
        self.path.controllers.iter().any(|c| c == controller)
    }
    fn v1(&self, controller: &str) -> bool {
        self.path.version == CgroupVersion::V1 && self.has(controller) && !self.levels.is_empty()
    }
}

/// Reads files below a root, noting what could not be read or parsed.
pub(crate) struct Reader<'a> {
    pub s: Sys<'a>,
    pub unread: Vec<Unread>,
}

impl<'a> Reader<'a> {
    pub fn new(root: &'a Path) -> Self {
        Reader {
            s: Sys::new(root),
            unread: Vec::new(),
        }
    }
    /// The file's text; None when it does not exist (noted when it exists
    /// but cannot be read).
    pub fn read(&mut self, file: &str) -> Option<String> {
        match std::fs::read_to_string(self.s.path(file)) {
            Ok(t) => Some(t),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.note(file, format!("cannot read it: {e}"));
                None
            }
        }
    }
    pub fn note(&mut self, source: &str, why: impl Into<String>) {
        self.unread.push(Unread {
            source: source.into(),
            why: why.into(),
        });
    }
    fn bad(&mut self, source: &str, lines: Vec<BadLine>) {
        for b in lines {
            self.note(
                source,
                format!("line '{}' not understood: {}", b.line, b.why),
            );
        }
    }
    /// A file parsed whole by `f`; None when absent or not understood (noted).
    fn parsed<T>(&mut self, file: &str, f: impl Fn(&str) -> Result<T, String>) -> Option<T> {
        let text = self.read(file)?;
        f(&text)
            .map_err(|why| self.note(file, format!("not understood: {why}")))
            .ok()
    }
    /// A line-oriented file parsed by `f`, its bad lines noted.
    fn each<T>(&mut self, file: &str, f: impl Fn(&str) -> parse::Lines<T>) -> Vec<T> {
        let Some(text) = self.read(file) else {
            return Vec::new();
        };
        let (ok, bad) = f(&text);
        self.bad(file, bad);
        ok
    }
}

/// A v2 group's controllers, and those any level on its path offers.
fn v2_controllers(r: &mut Reader, levels: &[(String, String)]) -> (Vec<String>, Vec<String>) {
    let mut own = Vec::new();
    let mut offered: Vec<String> = Vec::new();
    for (i, (_, dir)) in levels.iter().enumerate() {
        let text = r.read(&format!("{dir}/cgroup.controllers"));
        let here: Vec<String> = text
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect();
        if i == 0 {
            own = here.clone();
        }
        for c in here {
            if !offered.contains(&c) {
                offered.push(c);
            }
        }
    }
    (own, offered)
}

/// The process's group in every hierarchy.
pub(crate) fn groups(r: &mut Reader, pid: u32) -> Vec<Group> {
    let src = format!("/proc/{pid}/cgroup");
    let Some(text) = r.read(&src) else {
        r.note(
            &src,
            "missing: no such process, or no cgroups in this kernel",
        );
        return Vec::new();
    };
    let (lines, bad) = parse::proc_cgroup(&text);
    r.bad(&src, bad);
    let mounts = r.each("/proc/self/mountinfo", parse::cgroup_mounts);
    let ns = std::fs::read_link(r.s.path("/proc/self/ns/cgroup")).ok();
    let own_ns = ns.is_some_and(|l| l.to_string_lossy() != INITIAL_CGROUP_NS);
    lines
        .into_iter()
        .map(|line| {
            let mount = parse::mount_for(&mounts, &line).cloned();
            let levels = mount
                .as_ref()
                .map(|m| parse::levels(m, &line.path))
                .unwrap_or_default();
            let version = line.version();
            let (controllers, offered) = match version {
                CgroupVersion::V1 => (line.controllers.clone(), Vec::new()),
                CgroupVersion::V2 => v2_controllers(r, &levels),
            };
            let path = CgroupPath {
                version,
                controllers,
                path: line.path,
                dir: levels.first().map(|l| l.1.clone()),
                hidden_above: own_ns || mount.as_ref().is_some_and(|m| m.root != "/"),
                source: format!("/proc/{pid}/cgroup, /proc/self/mountinfo"),
            };
            Group {
                path,
                mount,
                levels,
                offered,
            }
        })
        .collect()
}

/// The whole disks a listing keeps (every one when no target was named),
/// and a device number's disk name.
pub(crate) struct Disks<'a> {
    s: Sys<'a>,
    keep: Option<Vec<String>>,
}

impl<'a> Disks<'a> {
    /// The target's device numbers and their whole disks (`found`); a
    /// number sysfs does not know is kept as it is.
    fn new(s: Sys<'a>, devices: &[(u32, u32)], found: Vec<String>) -> Self {
        let mut keep = found;
        keep.extend(devices.iter().map(|(a, b)| format!("{a}:{b}")));
        let keep = (!devices.is_empty()).then_some(keep);
        Disks { s, keep }
    }
    fn wanted(&self, dev: &str) -> bool {
        self.keep
            .as_ref()
            .is_none_or(|k| k.iter().any(|x| x == dev))
    }
    fn name(&self, dev: &str) -> Option<String> {
        let (a, b) = parse::devno(dev).ok()?;
        limits_dev::whole_disk(self.s, a, b).map(|d| d.1)
    }
}

fn v1_throttles(r: &mut Reader, g: &Group, disks: &Disks, out: &mut Vec<IoThrottle>) {
    for (i, (cgroup, dir)) in g.levels.iter().enumerate() {
        for kind in IoLimitKind::ALL {
            let file = format!("{dir}/{}", kind.v1_file());
            for (device, value) in r.each(&file, parse::v1_throttle) {
                if disks.wanted(&device) {
                    out.push(IoThrottle {
                        version: CgroupVersion::V1,
                        cgroup: cgroup.clone(),
                        disk: disks.name(&device),
                        device,
                        kind,
                        value,
                        applies: i == 0,
                        source: file.clone(),
                    });
                }
            }
        }
    }
}

fn v2_io(r: &mut Reader, g: &Group, disks: &Disks, inv: &mut Inventory) {
    for (cgroup, dir) in &g.levels {
        let file = format!("{dir}/io.max");
        for (device, kind, value) in r.each(&file, parse::io_max) {
            if disks.wanted(&device) {
                let (source, disk) = (file.clone(), disks.name(&device));
                let (version, cgroup) = (CgroupVersion::V2, cgroup.clone());
                let applies = true;
                let t = IoThrottle {
                    version,
                    cgroup,
                    device,
                    disk,
                    kind,
                    value,
                    applies,
                    source,
                };
                inv.io_throttles.push(t);
            }
        }
        let file = format!("{dir}/io.latency");
        for (device, target_us) in r.each(&file, parse::io_latency) {
            if disks.wanted(&device) {
                inv.io_latency.push(IoLatency {
                    version: CgroupVersion::V2,
                    cgroup: cgroup.clone(),
                    disk: disks.name(&device),
                    device,
                    target_us,
                    source: file.clone(),
                });
            }
        }
        weights(r, cgroup, dir, disks, &mut inv.io_cost.weights);
    }
    if let Some((_, root)) = g.levels.last().filter(|(c, _)| c == "/") {
        for (name, qos) in [("io.cost.qos", true), ("io.cost.model", false)] {
            let file = format!("{root}/{name}");
            for (device, enabled, fields) in r.each(&file, |t| parse::io_cost(t, qos)) {
                if disks.wanted(&device) {
                    let disk = disks.name(&device);
                    let line = IoCostLine {
                        device,
                        disk,
                        enabled,
                        fields,
                        source: file.clone(),
                    };
                    match qos {
                        true => inv.io_cost.qos.push(line),
                        false => inv.io_cost.model.push(line),
                    }
                }
            }
        }
    }
}

/// A level's `io.weight` and `io.bfq.weight`, where not the default.
fn weights(r: &mut Reader, cgroup: &str, dir: &str, disks: &Disks, out: &mut Vec<IoWeight>) {
    for (name, kind) in [
        ("io.weight", WeightKind::IoCost),
        ("io.bfq.weight", WeightKind::Bfq),
    ] {
        let file = format!("{dir}/{name}");
        for (device, weight) in r.each(&file, parse::weights) {
            let set = device.is_some() || weight != 100;
            if set && device.as_deref().is_none_or(|d| disks.wanted(d)) {
                out.push(IoWeight {
                    version: CgroupVersion::V2,
                    cgroup: cgroup.into(),
                    kind,
                    disk: device.as_deref().and_then(|d| disks.name(d)),
                    device,
                    weight,
                    source: file.clone(),
                });
            }
        }
    }
}

/// A level's quota: (quota µs, period µs, burst µs, source).
fn quota_at(r: &mut Reader, version: CgroupVersion, dir: &str) -> Option<CpuQuota> {
    let (q, source, burst) = match version {
        CgroupVersion::V1 => {
            let file = format!("{dir}/cpu.cfs_quota_us");
            let period = r.read(&format!("{dir}/cpu.cfs_period_us"))?;
            let q = r.parsed(&file, |t| parse::cfs_quota(t, &period))?;
            (
                q,
                format!("{file}, {dir}/cpu.cfs_period_us"),
                format!("{dir}/cpu.cfs_burst_us"),
            )
        }
        CgroupVersion::V2 => {
            let file = format!("{dir}/cpu.max");
            (
                r.parsed(&file, parse::cpu_max)?,
                file,
                format!("{dir}/cpu.max.burst"),
            )
        }
    };
    let (quota_us, period_us) = q.filter(|&(_, p)| p > 0)?;
    let burst_us = r.parsed(&burst, parse::single).filter(|&b| b > 0);
    Some(CpuQuota {
        version,
        cgroup: String::new(),
        quota_us,
        period_us,
        burst_us,
        cpus: quota_us as f64 / period_us as f64,
        source,
    })
}

fn cpu_quotas(r: &mut Reader, groups: &[Group]) -> Vec<CpuQuota> {
    let mut out = Vec::new();
    for g in groups
        .iter()
        .filter(|g| g.has("cpu") || g.path.version == CgroupVersion::V2)
    {
        for (cgroup, dir) in &g.levels {
            if let Some(mut q) = quota_at(r, g.path.version, dir) {
                q.cgroup = cgroup.clone();
                out.push(q);
            }
        }
    }
    out
}

/// The effective cpuset: v1's group's `cpuset.effective_cpus` (or
/// `cpuset.cpus` on kernels without it); v2's nearest
/// `cpuset.cpus.effective` on the path.
fn cpuset(r: &mut Reader, groups: &[Group]) -> Option<CpuSet> {
    if let Some(g) = groups.iter().find(|g| g.v1("cpuset")) {
        let (cgroup, dir) = &g.levels[0];
        for f in ["cpuset.effective_cpus", "cpuset.cpus"] {
            let file = format!("{dir}/{f}");
            if let Some(cpus) = r.parsed(&file, parse::cpu_list) {
                let (version, cgroup) = (CgroupVersion::V1, cgroup.clone());
                return Some(CpuSet {
                    version,
                    cgroup,
                    cpus,
                    source: file,
                });
            }
        }
    }
    let g = groups
        .iter()
        .find(|g| g.path.version == CgroupVersion::V2)?;
    g.levels.iter().find_map(|(cgroup, dir)| {
        let file = format!("{dir}/cpuset.cpus.effective");
        let cpus = r.parsed(&file, parse::cpu_list)?;
        let (version, cgroup) = (CgroupVersion::V2, cgroup.clone());
        Some(CpuSet {
            version,
            cgroup,
            cpus,
            source: file,
        })
    })
}

fn memory_limits(r: &mut Reader, groups: &[Group]) -> Vec<MemLimit> {
    let mut out = Vec::new();
    for g in groups {
        let files: &[(&str, MemLimitKind)] = match g.path.version {
            CgroupVersion::V1 if g.has("memory") => &[("memory.limit_in_bytes", MemLimitKind::Max)],
            CgroupVersion::V1 => &[],
            CgroupVersion::V2 => &[
                ("memory.max", MemLimitKind::Max),
                ("memory.high", MemLimitKind::High),
            ],
        };
        for (cgroup, dir) in &g.levels {
            for &(f, kind) in files {
                let source = format!("{dir}/{f}");
                if let Some(bytes) = r.parsed(&source, parse::memory_limit).flatten() {
                    let (version, cgroup) = (g.path.version, cgroup.clone());
                    out.push(MemLimit {
                        version,
                        cgroup,
                        kind,
                        bytes,
                        source,
                    });
                }
            }
        }
    }
    out
}

/// Say which kinds of limit no hierarchy here can show.
fn note_missing(r: &mut Reader, pid: u32, groups: &[Group]) {
    let v2 = |c: &str| {
        groups
            .iter()
            .any(|g| g.path.version == CgroupVersion::V2 && g.offered.iter().any(|o| o == c))
    };
    let src = format!("/proc/{pid}/cgroup, /proc/self/mountinfo");
    for (v1, c, what) in [
        ("blkio", "io", "I/O throttles and weights"),
        ("cpu", "cpu", "CPU quotas"),
        ("cpuset", "cpuset", "the cpuset"),
        ("memory", "memory", "memory limits"),
    ] {
        if !groups.iter().any(|g| g.v1(v1)) && !v2(c) {
            r.note(&src, format!(
                "{what}: no cgroup v1 '{v1}' hierarchy is mounted here and no level of the process's cgroup v2 group offers the '{c}' controller: none can be read"
            ));
        }
    }
}

/// The affinity, the CPUs online and the usable CPUs, and the hypervisor.
fn cpus_and_host(r: &mut Reader, pid: u32, inv: &mut Inventory) {
    let status = format!("/proc/{pid}/status");
    inv.affinity = r.parsed(&status, parse::cpus_allowed).map(|cpus| Affinity {
        cpus,
        source: format!("{status} (Cpus_allowed_list: the mask sched_getaffinity gives)"),
    });
    let online_src = "/sys/devices/system/cpu/online";
    let online = r.parsed(online_src, parse::cpu_list).unwrap_or_default();
    let quota = inv.cpu_quota().map(|q| q.cpus);
    let (set, aff) = (inv.cpuset.as_ref(), inv.affinity.as_ref());
    inv.cpus = UsableCpus::new(
        online,
        set.map(|c| c.cpus.clone()),
        aff.map(|a| a.cpus.clone()),
        quota,
    );
    if crate::lab::under_hypervisor(r.s) {
        inv.hypervisor = Some(Hypervisor {
            name: crate::lab::hypervisor_name(r.s).unwrap_or_else(|| "unknown hypervisor".into()),
            source: crate::lab::VIRTUALIZATION_SOURCE.into(),
        });
    }
}

/// The inventory of what can cap the I/O of process `pid` on devices
/// `devices` (device numbers of the target; none: no devices, every
/// device's throttles).
pub fn inventory(pid: u32, devices: &[(u32, u32)]) -> Inventory {
    inventory_at(Path::new("/"), pid, devices)
}

/// [`inventory`], with the files below `root`.
pub fn inventory_at(root: &Path, pid: u32, devices: &[(u32, u32)]) -> Inventory {
    let mut r = Reader::new(root);
    let groups = groups(&mut r, pid);
    let devs = limits_dev::devices(r.s, devices);
    for &(a, b) in devices {
        if limits_dev::whole_disk(r.s, a, b).is_none() {
            let why = format!("device {a}:{b} is not in sysfs: its queue and kind are not read");
            r.note(&format!("/sys/dev/block/{a}:{b}"), why);
        }
    }
    let found = devs.iter().map(|d| d.device.clone()).collect();
    let disks = Disks::new(r.s, devices, found);
    let mut inv = Inventory {
        pid,
        cgroups: groups.iter().map(|g| g.path.clone()).collect(),
        io_throttles: Vec::new(),
        io_latency: Vec::new(),
        io_cost: IoCost::default(),
        cpu_quotas: Vec::new(),
        cpuset: None,
        affinity: None,
        memory_limits: Vec::new(),
        cpus: UsableCpus::new(Vec::new(), None, None, None),
        devices: devs,
        hypervisor: None,
        unread: Vec::new(),
    };
    for g in &groups {
        match g.path.version {
            CgroupVersion::V1 if g.has("blkio") => {
                v1_throttles(&mut r, g, &disks, &mut inv.io_throttles)
            }
            CgroupVersion::V1 => {}
            CgroupVersion::V2 => v2_io(&mut r, g, &disks, &mut inv),
        }
    }
    inv.cpu_quotas = cpu_quotas(&mut r, &groups);
    inv.cpuset = cpuset(&mut r, &groups);
    inv.memory_limits = memory_limits(&mut r, &groups);
    note_missing(&mut r, pid, &groups);
    cpus_and_host(&mut r, pid, &mut inv);
    inv.unread = r.unread;
    inv
}

#[path = "limits_counters.rs"]
mod counters_impl;
pub use counters_impl::{counters, counters_at};

#[cfg(test)]
#[path = "limits_tests.rs"]
mod tests;
