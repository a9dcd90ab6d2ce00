//! The kernel's texts of cgroups, `/proc` and sysfs, parsed: pure
//! functions of the text a file holds, so that every format (v1 like a
//! legacy host, v2 like a systemd host or a container, `max` values,
//! broken lines) is tested without the file. A line-oriented parser keeps
//! the lines it understood and returns the others as [`BadLine`]s, which
//! the reader reports as unread rather than dropping them silently.

use super::{CgroupVersion, IoLimitKind};
use crate::limits::counters::IoCount;
use ssdready_core::units::unescape_octal;

/// A line that was not understood, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct BadLine {
    pub line: String,
    pub why: String,
}

/// What a line-oriented parser understood, and the lines it did not.
pub type Lines<T> = (Vec<T>, Vec<BadLine>);

fn bad(line: &str, why: impl Into<String>) -> BadLine {
    BadLine {
        line: line.to_string(),
        why: why.into(),
    }
}

/// Parse every non-empty line with `f`.
fn lines<T>(text: &str, mut f: impl FnMut(&str) -> Result<Option<T>, String>) -> Lines<T> {
    let (mut ok, mut no) = (Vec::new(), Vec::new());
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        match f(l) {
            Ok(Some(v)) => ok.push(v),
            Ok(None) => {}
            Err(why) => no.push(bad(l, why)),
        }
    }
    (ok, no)
}

fn num(s: &str) -> Result<u64, String> {
    s.parse()
        .map_err(|_| format!("'{s}' is not a whole number"))
}

/// The active scheduler (the one in brackets) and every one offered, from
/// a `queue/scheduler` text (`mq-deadline [none] kyber`): the one parser
/// of it, used by the probe, the tuner, the emulator's drive and the
/// levers alike.
pub fn schedulers(text: &str) -> (Option<String>, Vec<String>) {
    let mut active = None;
    let mut all = Vec::new();
    for w in text.split_whitespace() {
        let name = w.trim_matches(|c| c == '[' || c == ']');
        if w.starts_with('[') {
            active = Some(name.to_string());
        }
        all.push(name.to_string());
    }
    (active, all)
}

/// The scheduler in effect from a `queue/scheduler` text: the bracketed
/// one, or the whole text where nothing is bracketed (a queue that offers
/// no choice shows `none` alone). None for an empty text.
pub fn active_scheduler(text: &str) -> Option<String> {
    let (active, _) = schedulers(text);
    active.or_else(|| {
        let t = text.trim();
        (!t.is_empty()).then(|| t.to_string())
    })
}

/// What moved in a device's queue between two readings (file → text):
/// `nr_requests 4 → 128, scheduler mq-deadline → none`, the scheduler by
/// its active name ([`queue_value`]); None where nothing did. A file missing from either
/// reading is no change.
pub fn moved(
    was: &std::collections::BTreeMap<String, String>,
    now: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let each: Vec<String> = (was.iter())
        .filter_map(|(f, w)| Some((f, queue_value(f, w), queue_value(f, now.get(f)?))))
        .filter(|(_, w, n)| w != n)
        .map(|(f, w, n)| format!("{f} {w} → {n}"))
        .collect();
    (!each.is_empty()).then(|| each.join(", "))
}

/// A queue setting's text (`/sys/block/DEV/queue/ATTR`) as the value to
/// compare and to write back: the active scheduler for `scheduler`
/// (`[none] mq-deadline` is `none`), any other setting trimmed.
pub fn queue_value(attr: &str, text: &str) -> String {
    match attr {
        super::queue_files::SCHEDULER => active_scheduler(text).unwrap_or_default(),
        _ => text.trim().to_string(),
    }
}

/// A device number `MAJ:MIN`, checked.
pub fn devno(s: &str) -> Result<(u32, u32), String> {
    let err = || format!("'{s}' is not a device number (MAJ:MIN)");
    let (a, b) = s.split_once(':').ok_or_else(err)?;
    Ok((a.parse().map_err(|_| err())?, b.parse().map_err(|_| err())?))
}

/// One line of `/proc/PID/cgroup`: `ID:CONTROLLERS:PATH`.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcCgroup {
    pub id: u32,
    /// Empty for the v2 hierarchy.
    pub controllers: Vec<String>,
    pub path: String,
}

impl ProcCgroup {
    /// v2 is the line `0::PATH`; every other line is a v1 hierarchy.
    pub fn version(&self) -> CgroupVersion {
        match self.id == 0 && self.controllers.is_empty() {
            true => CgroupVersion::V2,
            false => CgroupVersion::V1,
        }
    }
}

/// `/proc/PID/cgroup`.
pub fn proc_cgroup(text: &str) -> Lines<ProcCgroup> {
    lines(text, |l| {
        let mut f = l.splitn(3, ':');
        let (id, ctl, path) = match (f.next(), f.next(), f.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => return Err("not ID:CONTROLLERS:PATH".into()),
        };
        let id = id
            .parse()
            .map_err(|_| format!("hierarchy id '{id}' is not a number"))?;
        if !path.starts_with('/') {
            return Err(format!("path '{path}' is not absolute"));
        }
        let controllers = ctl
            .split(',')
            .filter(|c| !c.is_empty())
            .map(String::from)
            .collect();
        Ok(Some(ProcCgroup {
            id,
            controllers,
            path: path.to_string(),
        }))
    })
}

/// A cgroup file system mounted here (one line of mountinfo).
#[derive(Clone, Debug, PartialEq)]
pub struct CgroupMount {
    pub version: CgroupVersion,
    /// The group of the hierarchy the mount shows at its mount point (`/`
    /// unless a subtree was mounted or bound).
    pub root: String,
    pub mount_point: String,
    /// The super block's options: a v1 mount's controllers are among them.
    pub options: Vec<String>,
}

/// The cgroup mounts of a mountinfo text (other lines are skipped; a line
/// that is not mountinfo's shape is bad).
pub fn cgroup_mounts(mountinfo: &str) -> Lines<CgroupMount> {
    lines(mountinfo, |l| {
        let f: Vec<&str> = l.split(' ').collect();
        let dash = f
            .iter()
            .position(|x| *x == "-")
            .filter(|&d| d >= 6 && f.len() >= d + 4)
            .ok_or("not a mountinfo line")?;
        let version = match f[dash + 1] {
            "cgroup" => CgroupVersion::V1,
            "cgroup2" => CgroupVersion::V2,
            _ => return Ok(None),
        };
        Ok(Some(CgroupMount {
            version,
            root: unescape_octal(f[3]),
            mount_point: unescape_octal(f[4]),
            options: f[dash + 3].split(',').map(String::from).collect(),
        }))
    })
}

/// `path` below `root`, as a relative path (`""` for the root itself);
/// None when it is not below it.
fn below<'a>(path: &'a str, root: &str) -> Option<&'a str> {
    if root == "/" {
        return Some(path.trim_start_matches('/'));
    }
    match path.strip_prefix(root)? {
        "" => Some(""),
        rest => rest.strip_prefix('/'),
    }
}

/// The mount that shows the group of `line`: for v2 a cgroup2 mount, for
/// v1 the mount of the hierarchy with the same controllers, in both whose
/// root holds the group (the deepest such root when several do).
pub fn mount_for<'a>(mounts: &'a [CgroupMount], line: &ProcCgroup) -> Option<&'a CgroupMount> {
    let version = line.version();
    mounts
        .iter()
        .filter(|m| m.version == version)
        .filter(|m| {
            version == CgroupVersion::V2 || line.controllers.iter().all(|c| m.options.contains(c))
        })
        .filter(|m| below(&line.path, &m.root).is_some())
        .max_by_key(|m| m.root.len())
}

/// The levels of a group visible through `mount`, from the group itself
/// up to the mount's root: (group path, directory on this host). Empty
/// when the group is not below the mount's root, or its path leaves the
/// reader's namespace (`/..`).
pub fn levels(mount: &CgroupMount, path: &str) -> Vec<(String, String)> {
    if path.split('/').any(|p| p == "..") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut group = path.trim_end_matches('/').to_string();
    if group.is_empty() {
        group = "/".into();
    }
    while let Some(rel) = below(&group, &mount.root) {
        let dir = match rel {
            "" => mount.mount_point.clone(),
            r => format!("{}/{r}", mount.mount_point.trim_end_matches('/')),
        };
        out.push((group.clone(), dir));
        if group == "/" || rel.is_empty() {
            break;
        }
        group = match group.rfind('/') {
            Some(0) | None => "/".into(),
            Some(i) => group[..i].to_string(),
        };
    }
    out
}

/// v1 `blkio.throttle.*_device`: `MAJ:MIN VALUE` lines.
pub fn v1_throttle(text: &str) -> Lines<(String, u64)> {
    lines(text, |l| {
        let (dev, v) = l.split_once(' ').ok_or("not 'MAJ:MIN VALUE'")?;
        devno(dev)?;
        Ok(Some((dev.to_string(), num(v.trim())?)))
    })
}

/// A device's number and its `key=value` fields, as written.
type DeviceFields<'a> = (String, Vec<(&'a str, &'a str)>);

/// `MAJ:MIN key=value…` lines (io.max, io.latency, io.stat, io.cost.*).
fn device_fields(l: &str) -> Result<DeviceFields<'_>, String> {
    let mut words = l.split_whitespace();
    let dev = words.next().unwrap_or_default();
    devno(dev)?;
    let fields = words
        .map(|w| w.split_once('=').ok_or(format!("'{w}' is not key=value")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((dev.to_string(), fields))
}

/// v2 `io.max`: `MAJ:MIN rbps=N wbps=max riops=N wiops=max` (`max`: no limit).
pub fn io_max(text: &str) -> Lines<(String, IoLimitKind, u64)> {
    let (ok, no) = lines(text, |l| {
        let (dev, fields) = device_fields(l)?;
        let mut out = Vec::new();
        for (k, v) in fields {
            let kind = IoLimitKind::ALL
                .into_iter()
                .find(|x| x.v2_key() == k)
                .ok_or(format!("'{k}' is not rbps, wbps, riops or wiops"))?;
            if v != "max" {
                out.push((dev.clone(), kind, num(v)?));
            }
        }
        Ok(Some(out))
    });
    (ok.into_iter().flatten().collect(), no)
}

/// v2 `io.latency`: `MAJ:MIN target=µs`.
pub fn io_latency(text: &str) -> Lines<(String, u64)> {
    lines(text, |l| {
        let (dev, fields) = device_fields(l)?;
        let (_, v) = fields
            .iter()
            .find(|(k, _)| *k == "target")
            .ok_or("no target=")?;
        Ok(Some((dev, num(v)?)))
    })
}

/// One device's line of io.cost: (device, enabled, its other fields).
pub type CostLine = (String, bool, Vec<(String, String)>);

/// v2 `io.cost.qos` or `io.cost.model`: (device, enabled, other fields).
/// A qos line is enabled by `enable=1`; a model line always is.
pub fn io_cost(text: &str, qos: bool) -> Lines<CostLine> {
    lines(text, |l| {
        let (dev, fields) = device_fields(l)?;
        let enabled = !qos || fields.iter().any(|(k, v)| *k == "enable" && *v == "1");
        let rest = fields
            .into_iter()
            .filter(|(k, _)| *k != "enable")
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Ok(Some((dev, enabled, rest)))
    })
}

/// v2 `io.weight` / `io.bfq.weight`: `default N` and `MAJ:MIN N` lines
/// (device None for the default).
pub fn weights(text: &str) -> Lines<(Option<String>, u32)> {
    lines(text, |l| {
        let (k, v) = l.split_once(' ').ok_or("not 'default N' or 'MAJ:MIN N'")?;
        let w: u32 = v
            .trim()
            .parse()
            .map_err(|_| format!("weight '{v}' is not a number"))?;
        match k {
            "default" => Ok(Some((None, w))),
            dev => devno(dev).map(|_| Some((Some(dev.to_string()), w))),
        }
    })
}

/// v2 `cpu.max`: `QUOTA PERIOD` (µs); None for `max PERIOD` (no quota).
pub fn cpu_max(text: &str) -> Result<Option<(u64, u64)>, String> {
    let mut w = text.split_whitespace();
    match (w.next(), w.next(), w.next()) {
        (Some("max"), Some(p), None) => num(p).map(|_| None),
        (Some(q), Some(p), None) => Ok(Some((num(q)?, num(p)?))),
        _ => Err(format!("'{}' is not 'QUOTA PERIOD'", text.trim())),
    }
}

/// v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us`; None for quota `-1`.
pub fn cfs_quota(quota: &str, period: &str) -> Result<Option<(u64, u64)>, String> {
    let period = num(period.trim())?;
    match quota.trim() {
        "-1" => Ok(None),
        q => Ok(Some((num(q)?, period))),
    }
}

/// A file holding one number.
pub fn single(text: &str) -> Result<u64, String> {
    num(text.trim())
}

/// Values from this on are the kernel's "no limit" for memory (v1 shows
/// its page counter's maximum times the page size, 0x7FFFFFFFFFFFF000
/// with 4 KiB pages).
const MEMORY_UNLIMITED: u64 = 1 << 62;

/// A memory limit: v1 `memory.limit_in_bytes` (a huge value for none) or
/// v2 `memory.max` / `memory.high` (`max` for none).
pub fn memory_limit(text: &str) -> Result<Option<u64>, String> {
    match text.trim() {
        "max" => Ok(None),
        t => num(t).map(|b| (b < MEMORY_UNLIMITED).then_some(b)),
    }
}

/// `key value` lines (`cpu.stat`).
pub fn keyed(text: &str) -> Lines<(String, u64)> {
    lines(text, |l| {
        let (k, v) = l.split_once(' ').ok_or("not 'key value'")?;
        Ok(Some((k.to_string(), num(v.trim())?)))
    })
}

/// v2 `io.stat`: `MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N`.
pub fn io_stat(text: &str) -> Lines<(String, IoCount)> {
    lines(text, |l| {
        let (dev, fields) = device_fields(l)?;
        let mut c = IoCount::default();
        for (k, v) in fields {
            let slot = match k {
                "rios" => &mut c.reads,
                "wios" => &mut c.writes,
                "rbytes" => &mut c.read_bytes,
                "wbytes" => &mut c.write_bytes,
                _ => continue,
            };
            *slot = num(v)?;
        }
        Ok(Some((dev, c)))
    })
}

/// v1 `blkio.throttle.io_serviced` or `…io_service_bytes`: `MAJ:MIN OP N`
/// lines, OP one of Read, Write, Sync, Async, Discard, Total (the file's
/// last line, `Total N`, sums every device and is skipped).
pub fn blkio_stat(text: &str) -> Lines<(String, String, u64)> {
    lines(text, |l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["Total", n] => num(n).map(|_| None),
            [dev, op, n] => {
                devno(dev)?;
                Ok(Some((dev.to_string(), op.to_string(), num(n)?)))
            }
            _ => Err("not 'MAJ:MIN OP N'".into()),
        }
    })
}

/// v2 `*.pressure`: the `total=` of its `some` line and of its `full`
/// line (µs stalled; `full` is absent from older kernels' cpu.pressure).
pub fn pressure(text: &str) -> Result<(u64, Option<u64>), String> {
    let total = |kind: &str| -> Result<Option<u64>, String> {
        let Some(l) = text.lines().find(|l| l.starts_with(kind)) else {
            return Ok(None);
        };
        let t = l
            .split_whitespace()
            .find_map(|w| w.strip_prefix("total="))
            .ok_or(format!("'{l}' has no total="))?;
        num(t).map(Some)
    };
    let some = total("some ")?.ok_or("no 'some' line")?;
    Ok((some, total("full ")?))
}

/// A CPU list (`0-3,6`).
pub fn cpu_list(text: &str) -> Result<Vec<u32>, String> {
    ssdready_core::units::parse_cpu_list(text.trim())
        .map(|v| v.into_iter().map(|c| c as u32).collect())
        .map_err(|e| e.to_string())
}

/// The affinity mask from `/proc/PID/status` (`Cpus_allowed_list:`).
pub fn cpus_allowed(status: &str) -> Result<Vec<u32>, String> {
    let l = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .ok_or("no Cpus_allowed_list line")?;
    cpu_list(l)
}

#[cfg(test)]
#[path = "parse_tests.rs"]
mod tests;
