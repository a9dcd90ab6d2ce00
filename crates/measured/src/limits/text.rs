//! The inventory in words: one [`Line`] per limit or setting, with the
//! file it was read from, for a terminal (`ssdready limits`) or a report.

use super::queue_files as file;
use super::{
    CgroupVersion, CpuAllowance, Device, DeviceRole, Inventory, IoLimitKind, IoThrottle,
    MemLimitKind, QueueSettings, WeightKind,
};
use ssdready_core::units::{fmt_bytes, fmt_cpu_list};

/// One line: what it is about, what the kernel says, and where it said so.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub topic: &'static str,
    pub text: String,
    pub source: String,
}

fn line(topic: &'static str, text: String, source: &str) -> Line {
    Line {
        topic,
        text,
        source: source.to_string(),
    }
}

fn cpus(v: &[u32]) -> String {
    format!(
        "{} ({})",
        fmt_cpu_list(v.iter().map(|&c| c as usize)),
        v.len()
    )
}

fn version(v: CgroupVersion) -> &'static str {
    match v {
        CgroupVersion::V1 => "v1",
        CgroupVersion::V2 => "v2",
    }
}

/// `7:0 (loop0)`.
fn dev(device: &str, disk: &Option<String>) -> String {
    match disk {
        Some(d) => format!("{d} ({device})"),
        None => device.to_string(),
    }
}

fn throttle_value(t: &IoThrottle) -> String {
    match t.kind {
        IoLimitKind::ReadIops | IoLimitKind::WriteIops => format!("{} {}", t.value, t.kind.words()),
        IoLimitKind::ReadBps | IoLimitKind::WriteBps => format!(
            "{}/s ({} {})",
            fmt_bytes(t.value as f64),
            t.value,
            t.kind.words()
        ),
    }
}

/// What a "none" line says was looked at.
const GROUPS_READ: &str = "the process's groups, every level read";

fn throttles(inv: &Inventory, out: &mut Vec<Line>) {
    if inv.io_throttles.is_empty() {
        let on = match inv.devices.is_empty() {
            true => "any device",
            false => "the target's devices",
        };
        out.push(line(
            "I/O throttle",
            format!("none set on {on}"),
            GROUPS_READ,
        ));
    }
    for t in &inv.io_throttles {
        let holds = match t.applies {
            true => "holds this process".to_string(),
            false => format!(
                "does not hold this process ({} throttles are flat: only the process's own group's hold it)",
                version(t.version)
            ),
        };
        out.push(line(
            "I/O throttle",
            format!(
                "{}: {}, set on {} ({}); {holds}",
                dev(&t.device, &t.disk),
                throttle_value(t),
                t.cgroup,
                t.version
            ),
            &t.source,
        ));
    }
    for l in &inv.io_latency {
        out.push(line(
            "I/O latency target",
            format!(
                "{}: {} µs, set on {} ({}): when it is missed, the kernel throttles the I/O of the group's siblings",
                dev(&l.device, &l.disk),
                l.target_us,
                l.cgroup,
                l.version
            ),
            &l.source,
        ));
    }
    io_cost(inv, out);
}

/// io.cost's settings and the I/O weights: shares against siblings, not
/// caps.
fn io_cost(inv: &Inventory, out: &mut Vec<Line>) {
    for (name, v) in [
        ("io.cost.qos", &inv.io_cost.qos),
        ("io.cost.model", &inv.io_cost.model),
    ] {
        for c in v.iter() {
            let fields: Vec<String> = c.fields.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let state = if c.enabled { "on" } else { "off" };
            out.push(line(
                "io.cost",
                format!(
                    "{}: {name} {state}, {}",
                    dev(&c.device, &c.disk),
                    fields.join(" ")
                ),
                &c.source,
            ));
        }
    }
    for w in &inv.io_cost.weights {
        let kind = match w.kind {
            WeightKind::IoCost => "io.weight",
            WeightKind::Bfq => "io.bfq.weight",
        };
        let on = w
            .device
            .as_ref()
            .map_or("every device".into(), |d| dev(d, &w.disk));
        out.push(line(
            "I/O weight",
            format!(
                "{kind} {} on {on}, set on {} ({}): a share against its siblings, not a cap",
                w.weight, w.cgroup, w.version
            ),
            &w.source,
        ));
    }
}

fn cpu(inv: &Inventory, out: &mut Vec<Line>) {
    if inv.cpu_quotas.is_empty() {
        out.push(line("CPU quota", "none set".into(), GROUPS_READ));
    }
    for q in &inv.cpu_quotas {
        let burst = q
            .burst_us
            .map(|b| format!(", burst {b} µs"))
            .unwrap_or_default();
        out.push(line(
            "CPU quota",
            format!(
                "{} µs every {} µs = {:.2} CPUs{burst}, set on {} ({})",
                q.quota_us, q.period_us, q.cpus, q.cgroup, q.version
            ),
            &q.source,
        ));
    }
    if let Some(s) = &inv.cpuset {
        out.push(line(
            "cpuset",
            format!(
                "CPUs {}, the effective set of {} ({})",
                cpus(&s.cpus),
                s.cgroup,
                s.version
            ),
            &s.source,
        ));
    }
    if let Some(a) = &inv.affinity {
        out.push(line(
            "affinity",
            format!("CPUs {}", cpus(&a.cpus)),
            &a.source,
        ));
    }
    let c = &inv.cpus;
    out.push(line(
        "CPUs online",
        cpus(&c.online),
        "/sys/devices/system/cpu/online",
    ));
    let held = match c.held_by {
        CpuAllowance::Online => "the CPUs online",
        CpuAllowance::Cpuset => "the cpuset",
        CpuAllowance::Affinity => "the affinity mask",
        CpuAllowance::Quota => "the CPU quota",
    };
    out.push(line(
        "usable CPUs",
        format!(
            "{:.2} of {} online (runs on CPUs {}; held by {held})",
            c.usable,
            c.online.len(),
            fmt_cpu_list(c.set.iter().map(|&x| x as usize))
        ),
        "the cpuset, the affinity, the quota and the CPUs online together",
    ));
}

fn memory(inv: &Inventory, out: &mut Vec<Line>) {
    let smallest = inv.memory_limit();
    if inv.memory_limits.is_empty() {
        out.push(line("memory", "no limit set".into(), GROUPS_READ));
    }
    for m in &inv.memory_limits {
        let kind = match m.kind {
            MemLimitKind::Max => "limit",
            MemLimitKind::High => "high (throttled above)",
        };
        let note = match smallest == Some(m) {
            true => "; the smallest: it bounds the page cache of the group's reads",
            false => "",
        };
        out.push(line(
            "memory",
            format!(
                "{kind} {}, set on {} ({}){note}",
                fmt_bytes(m.bytes as f64),
                m.cgroup,
                m.version
            ),
            &m.source,
        ));
    }
}

/// The queue's settings that were read, `key value` joined.
pub fn queue_words(q: &QueueSettings) -> String {
    let mut w: Vec<String> = Vec::new();
    let mut num = |k: &str, v: Option<u64>| {
        if let Some(v) = v {
            w.push(format!("{k} {v}"));
        }
    };
    num("hw_queues", q.hw_queues.map(u64::from));
    num(file::NR_REQUESTS, q.nr_requests);
    num("queue_depth", q.queue_depth);
    num(file::WBT_LAT_USEC, q.wbt_lat_usec);
    num(file::MAX_SECTORS_KB, q.max_sectors_kb);
    num(file::MAX_HW_SECTORS_KB, q.max_hw_sectors_kb);
    num(file::NOMERGES, q.nomerges.map(u64::from));
    num(file::RQ_AFFINITY, q.rq_affinity.map(u64::from));
    num(file::READ_AHEAD_KB, q.read_ahead_kb);
    num(file::IO_POLL, q.io_poll.map(u64::from));
    num(file::ROTATIONAL, q.rotational.map(u64::from));
    num(file::LOGICAL_BLOCK_SIZE, q.logical_block_size);
    num(file::PHYSICAL_BLOCK_SIZE, q.physical_block_size);
    if let Some(s) = &q.scheduler {
        w.insert(0, format!("{} {s}", file::SCHEDULER));
    }
    if let (Some(p), Some(n)) = (q.poll_queues, q.hw_queues) {
        let at = w
            .iter()
            .position(|x| x.starts_with("hw_queues"))
            .map_or(0, |i| i + 1);
        w.insert(
            at,
            format!("poll_queues {p} ({} by interrupt)", n.saturating_sub(p)),
        );
    }
    if let Some(c) = &q.write_cache {
        w.push(format!("write_cache '{c}'"));
    }
    w.join(", ")
}

fn device(d: &Device, out: &mut Vec<Line>) {
    let role = match d.role {
        DeviceRole::Target => "the target's device",
        DeviceRole::Under => "under the target",
    };
    let model = d
        .model
        .as_ref()
        .map(|m| format!(" '{m}'"))
        .unwrap_or_default();
    let virt = if d.virtual_disk {
        ", a virtual disk"
    } else {
        ""
    };
    out.push(line(
        "device",
        format!(
            "{}: {role}, {}{model}{virt}; {}",
            dev(&d.device, &Some(d.disk.clone())),
            d.transport,
            queue_words(&d.queue)
        ),
        &d.source,
    ));
    if let Some(u) = &d.unseen {
        out.push(line("not visible", format!("{}: {u}", d.disk), &d.source));
    }
}

/// The v1 controllers whose hierarchies hold a limit the inventory reads.
const V1_READ: [&str; 5] = ["blkio", "cpu", "cpuacct", "cpuset", "memory"];

/// Every line of the inventory, cgroups first (v2, and the v1
/// hierarchies whose controllers it reads), then I/O, CPU, memory,
/// devices, the hypervisor and what could not be read.
pub fn lines(inv: &Inventory) -> Vec<Line> {
    let mut out = Vec::new();
    let read = |c: &&super::CgroupPath| {
        c.version == CgroupVersion::V2
            || c.controllers.iter().any(|x| V1_READ.contains(&x.as_str()))
    };
    for c in inv.cgroups.iter().filter(read) {
        let at = c.dir.as_deref().unwrap_or("not mounted here");
        let ctl = match c.controllers.is_empty() {
            true => "no controllers".to_string(),
            false => c.controllers.join(","),
        };
        let hidden = match c.hidden_above {
            true => {
                "; the levels above it are hidden from this host, and their limits are not read"
            }
            false => "",
        };
        out.push(line(
            "cgroup",
            format!("{} {ctl}: {} at {at}{hidden}", version(c.version), c.path),
            &c.source,
        ));
    }
    throttles(inv, &mut out);
    cpu(inv, &mut out);
    memory(inv, &mut out);
    for d in &inv.devices {
        device(d, &mut out);
    }
    if let Some(h) = &inv.hypervisor {
        out.push(line("hypervisor", h.name.clone(), &h.source));
    }
    for u in &inv.unread {
        out.push(line("not read", u.why.clone(), &u.source));
    }
    out
}
