//! Lab conditions of the device under test's interrupts: its hardware
//! queues and the CPUs they map, the MSI/MSI-X interrupts of the device
//! (found above `/sys/block/X/device` in the device tree: the PCI function
//! of an NVMe controller or a virtio device) with their allowed and
//! effective CPUs, and whether irqbalance may move them.

use crate::sys::{cpu_list, Sys};
use ssdready_core::result::LabCondition;
use ssdready_core::units::parse_cpu_list;

/// One interrupt of the device.
#[derive(Debug, PartialEq)]
pub struct Irq {
    pub number: u32,
    /// The handler's name (`nvme0q1`, `virtio1-req.0`).
    pub name: String,
    pub allowed: String,
    pub effective: Option<String>,
}

impl Irq {
    /// Interrupts that complete I/O (not a virtio config-change vector).
    pub fn is_queue(&self) -> bool {
        !self.name.ends_with("-config")
    }
}

/// Parse a CPU list in either form sysfs writes (`0-3,6` or `0, 1, 2`).
fn cpus_of(text: &str) -> Vec<u32> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    parse_cpu_list(&compact)
        .map(|v| v.into_iter().map(|c| c as u32).collect())
        .unwrap_or_default()
}

/// The hardware queues of `disk` and the CPUs each serves.
pub fn queues(s: Sys, disk: &str) -> Vec<Vec<u32>> {
    let dir = format!("/sys/block/{disk}/mq");
    s.numbered(&dir, "")
        .into_iter()
        .map(|q| cpus_of(&s.read(&format!("{dir}/{q}/cpu_list")).unwrap_or_default()))
        .collect()
}

/// The interrupts of `disk`'s device: the `msi_irqs` of the nearest device
/// above `/sys/block/X/device`, or its legacy `irq`. None when the disk has
/// no device (loop, zram, device-mapper).
pub fn irqs(s: Sys, disk: &str) -> Option<Vec<Irq>> {
    let link = s.path(&format!("/sys/block/{disk}/device"));
    let dev = std::fs::canonicalize(link).ok()?;
    let root = std::fs::canonicalize(s.path("/")).ok()?;
    let mut numbers = Vec::new();
    for dir in dev.ancestors().take(6).filter(|d| d.starts_with(&root)) {
        let msi = dir.join("msi_irqs");
        if msi.is_dir() {
            let rel = msi.strip_prefix(&root).ok()?.to_string_lossy().into_owned();
            numbers = s.numbered(&format!("/{rel}"), "");
            break;
        }
        let legacy = std::fs::read_to_string(dir.join("irq")).ok();
        if let Some(n) = legacy.and_then(|t| t.trim().parse::<u32>().ok()) {
            numbers = vec![n].into_iter().filter(|&n| n > 0).collect();
            break;
        }
    }
    Some(numbers.into_iter().map(|n| irq(s, n)).collect())
}

fn irq(s: Sys, number: u32) -> Irq {
    let dir = format!("/proc/irq/{number}");
    let name = s
        .list(&dir)
        .into_iter()
        .find(|e| s.path(&format!("{dir}/{e}")).is_dir())
        .unwrap_or_else(|| "?".into());
    Irq {
        number,
        name,
        allowed: s
            .read(&format!("{dir}/smp_affinity_list"))
            .unwrap_or_else(|| "?".into()),
        effective: s.read(&format!("{dir}/effective_affinity_list")),
    }
}

/// Why a disk without a device has no interrupts.
fn software_device(disk: &str) -> &'static str {
    let kinds = [
        ("loop", "loop device: completions run in a kernel worker"),
        ("zram", "zram: I/O completes in the submitting thread"),
        ("nullb", "null_blk: completions come from a timer or inline"),
        ("ram", "RAM disk: I/O completes in the submitting thread"),
        (
            "dm-",
            "device-mapper: the interrupts are its member devices'",
        ),
        (
            "md",
            "software RAID: the interrupts are its member devices'",
        ),
    ];
    kinds
        .iter()
        .find(|(p, _)| disk.starts_with(p))
        .map_or("no device behind it", |(_, t)| t)
}

const SHOWN_IRQS: usize = 4;

fn irq_text(i: &Irq) -> String {
    match &i.effective {
        Some(e) if *e != i.allowed => {
            format!("{} {} on CPU {e} (allowed {})", i.number, i.name, i.allowed)
        }
        _ => format!("{} {} on CPUs {}", i.number, i.name, i.allowed),
    }
}

/// The queue and interrupt condition of `disk`, with `online` CPUs.
pub fn device(s: Sys, disk: &str, online: &[u32]) -> LabCondition {
    let source = format!(
        "/sys/block/{disk}/mq/*/cpu_list, /sys/block/{disk}/device/…/msi_irqs, /proc/irq/N/{{smp,effective}}_affinity_list"
    );
    let q = queues(s, disk);
    let qtext = match q.len() {
        0 => String::new(),
        1 => format!("1 hw queue for CPUs {}; ", cpu_list(&q[0])),
        n => format!("{n} hw queues; "),
    };
    let mut c = LabCondition {
        name: "irq_affinity".into(),
        source,
        ..LabCondition::default()
    };
    let Some(irqs) = irqs(s, disk) else {
        c.value = format!("{disk}: {qtext}no interrupts ({})", software_device(disk));
        return c;
    };
    if irqs.is_empty() {
        c.value = format!("{disk}: {qtext}no interrupts found under its device");
        return c;
    }
    let mut shown: Vec<String> = irqs.iter().take(SHOWN_IRQS).map(irq_text).collect();
    if irqs.len() > SHOWN_IRQS {
        shown.push(format!("… {} IRQs in all", irqs.len()));
    }
    c.value = format!("{disk}: {qtext}IRQ {}", shown.join(", "));
    let serving: Vec<u32> = irqs
        .iter()
        .filter(|i| i.is_queue())
        .flat_map(|i| cpus_of(i.effective.as_deref().unwrap_or(&i.allowed)))
        .collect();
    let serving = cpu_list(&serving);
    if !serving.is_empty() && cpus_of(&serving).len() < online.len() {
        c.warning = Some(format!(
            "{disk}'s completion interrupts go to CPU {serving} only: a job on another CPU is completed across CPUs, and its cost depends on where the scheduler puts it; pin jobs with cpus_allowed"
        ));
    }
    c
}

/// One interrupt condition per block device under test.
pub fn devices(s: Sys, disks: &[String]) -> Vec<LabCondition> {
    let online = cpus_of(&s.read("/sys/devices/system/cpu/online").unwrap_or_default());
    disks.iter().map(|d| device(s, d, &online)).collect()
}

/// Whether irqbalance is running (a process named so in /proc).
pub fn irqbalance(s: Sys) -> LabCondition {
    let pid = s
        .numbered("/proc", "")
        .into_iter()
        .find(|p| s.read(&format!("/proc/{p}/comm")).as_deref() == Some("irqbalance"));
    LabCondition {
        name: "irqbalance".into(),
        value: match pid {
            Some(p) => format!("running (pid {p})"),
            None => "not running".into(),
        },
        source: "/proc/*/comm".into(),
        warning: pid.map(|_| {
            "irqbalance is running: it can move the device's interrupts to other CPUs mid-run; stop it (systemctl stop irqbalance) and pin the queue IRQs".into()
        }),
    }
}
