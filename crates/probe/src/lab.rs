//! Lab conditions: the settings of the machine that make results noisy or
//! unrepresentative, each read from sysfs/procfs with a one-line warning
//! when it does. The SSD-ready platforms study fixed them before measuring
//! (no SMT, no low-power states, no frequency scaling, polling when idle);
//! a result records how far this machine is from that.
//!
//! Every reader takes the file-system root as a parameter (`/` in use, a
//! fake tree in tests); `source` names the real path, without the root.
//! [`crate::lab_irq`] covers the device's interrupts.

use crate::sys::{cpu_list, Sys};
use ssdready_core::result::LabCondition;
use std::path::Path;

const CPU: &str = "/sys/devices/system/cpu";

fn cond(name: &str, value: String, source: &str, warning: Option<String>) -> LabCondition {
    LabCondition {
        name: name.into(),
        value,
        source: source.into(),
        warning,
    }
}

/// The bracketed choice of a sysfs selector (`always [madvise] never`).
fn bracketed(text: &str) -> Option<&str> {
    let a = text.find('[')?;
    let b = text[a..].find(']')? + a;
    Some(&text[a + 1..b])
}

/// All lab conditions read from files below `root`, for the block devices
/// `disks` under test (hardware counters are added by the caller).
pub fn collect(root: &Path, disks: &[String]) -> Vec<LabCondition> {
    let s = Sys::new(root);
    let mut v = vec![governor(s)];
    v.extend(turbo(s));
    v.extend(frequency_range(s));
    v.push(idle_driver(s));
    v.extend(idle_states(s));
    v.extend(haltpoll(s));
    v.extend(smt(s));
    v.push(virtualization(s));
    v.extend(crate::lab_irq::devices(s, disks));
    v.push(crate::lab_irq::irqbalance(s));
    v.push(isolation(s));
    v.extend(transparent_hugepages(s));
    v.push(mitigations(s));
    v
}

/// Each CPU's `cpufreq/FILE`, for the CPUs that have one.
fn per_cpu(s: Sys, file: &str) -> Vec<(u32, String)> {
    s.numbered(CPU, "cpu")
        .into_iter()
        .filter_map(|c| Some((c, s.read(&format!("{CPU}/cpu{c}/{file}"))?)))
        .collect()
}

/// The scaling governor of every CPU, grouped.
pub fn governor(s: Sys) -> LabCondition {
    let source = "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor";
    let govs = per_cpu(s, "cpufreq/scaling_governor");
    if govs.is_empty() {
        let value = "none (no cpufreq driver; typical in a VM)";
        return cond("cpufreq_governor", value.into(), source, None);
    }
    let mut names: Vec<&str> = govs.iter().map(|(_, g)| g.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let on = |g: &str| -> Vec<u32> {
        govs.iter()
            .filter(|(_, x)| x == g)
            .map(|(c, _)| *c)
            .collect()
    };
    let groups: Vec<String> = names
        .iter()
        .map(|g| format!("{g} on CPUs {}", cpu_list(&on(g))))
        .collect();
    let driver = s
        .read(&format!("{CPU}/cpu{}/cpufreq/scaling_driver", govs[0].0))
        .map(|d| format!(" (driver {d})"))
        .unwrap_or_default();
    let scaling: Vec<String> = names
        .iter()
        .filter(|g| **g != "performance")
        .map(|g| format!("'{g}' on {} CPUs", on(g).len()))
        .collect();
    let warning = (!scaling.is_empty()).then(|| {
        format!(
            "governor {}: frequency scaling changes per-I/O CPU cost between runs; set 'performance' (cpupower frequency-set -g performance)",
            scaling.join(", ")
        )
    });
    let value = format!("{}{driver}", groups.join(", "));
    cond("cpufreq_governor", value, source, warning)
}

/// Turbo / boost: intel_pstate's `no_turbo`, or cpufreq `boost` (global or
/// per policy, acpi-cpufreq and amd-pstate).
pub fn turbo(s: Sys) -> Option<LabCondition> {
    let amd = s
        .read(&format!("{CPU}/amd_pstate/status"))
        .map(|st| format!(", amd_pstate {st}"))
        .unwrap_or_default();
    let (source, on) = if let Some(v) = s.read(&format!("{CPU}/intel_pstate/no_turbo")) {
        (format!("{CPU}/intel_pstate/no_turbo"), v == "0")
    } else if let Some(v) = s.read(&format!("{CPU}/cpufreq/boost")) {
        (format!("{CPU}/cpufreq/boost"), v == "1")
    } else {
        let (c, v) = per_cpu(s, "cpufreq/boost").into_iter().next()?;
        (format!("{CPU}/cpu{c}/cpufreq/boost"), v == "1")
    };
    let off_value = if source.ends_with("no_turbo") { 1 } else { 0 };
    let warning = on.then(|| {
        format!(
            "turbo/boost on: the clock follows temperature and the number of busy cores, so CPU figures vary between runs; write {off_value} to {source}"
        )
    });
    let value = format!("{}{amd}", if on { "on" } else { "off" });
    Some(cond("turbo", value, &source, warning))
}

fn mhz(khz: u64) -> String {
    format!("{}", khz / 1000)
}

/// Scaling limits against the hardware's, over all CPUs with cpufreq.
pub fn frequency_range(s: Sys) -> Option<LabCondition> {
    let num = |f: &str| -> Vec<u64> {
        per_cpu(s, &format!("cpufreq/{f}"))
            .iter()
            .filter_map(|(_, v)| v.parse().ok())
            .collect()
    };
    let (smin, smax) = (num("scaling_min_freq"), num("scaling_max_freq"));
    let (hmin, hmax) = (num("cpuinfo_min_freq"), num("cpuinfo_max_freq"));
    let lo = |v: &[u64]| v.iter().copied().min();
    let hi = |v: &[u64]| v.iter().copied().max();
    let (smin, smax) = (lo(&smin)?, hi(&smax)?);
    let khz = |c: u32, f: &str| -> Option<u64> {
        s.read(&format!("{CPU}/cpu{c}/cpufreq/{f}"))?.parse().ok()
    };
    let capped = s
        .numbered(CPU, "cpu")
        .into_iter()
        .filter(|&c| {
            matches!((khz(c, "scaling_max_freq"), khz(c, "cpuinfo_max_freq")),
                (Some(a), Some(b)) if a < b)
        })
        .count();
    let hw = match (lo(&hmin), hi(&hmax)) {
        (Some(a), Some(b)) => format!(" of {}–{} MHz", mhz(a), mhz(b)),
        _ => String::new(),
    };
    let warning = (capped > 0).then(|| {
        format!("maximum frequency capped below the hardware's on {capped} CPUs: figures are not those of the full-speed machine; raise scaling_max_freq")
    });
    let value = format!("{}–{} MHz{hw}", mhz(smin), mhz(smax));
    let source = "/sys/devices/system/cpu/cpu*/cpufreq/{scaling,cpuinfo}_{min,max}_freq";
    Some(cond("frequency_range", value, source, warning))
}

/// The cpuidle driver and governor.
pub fn idle_driver(s: Sys) -> LabCondition {
    let source = "/sys/devices/system/cpu/cpuidle/current_driver";
    let driver = s.read(&format!("{CPU}/cpuidle/current_driver"));
    let governor = s
        .read(&format!("{CPU}/cpuidle/current_governor_ro"))
        .or_else(|| s.read(&format!("{CPU}/cpuidle/current_governor")));
    let value = match (driver.as_deref(), governor) {
        (None | Some("none"), _) => {
            "none (idle CPUs use the architecture's default, e.g. HLT)".to_string()
        }
        (Some(d), Some(g)) => format!("{d}, governor {g}"),
        (Some(d), None) => d.to_string(),
    };
    cond("idle_driver", value, source, None)
}

/// Idle state `i`: name, exit latency (µs) and on how many CPUs disabled.
struct IdleState {
    name: String,
    latency_us: u64,
    disabled_on: usize,
    cpus: usize,
}

fn read_idle_states(s: Sys) -> Vec<IdleState> {
    let cpus = s.numbered(CPU, "cpu");
    let mut states: Vec<IdleState> = Vec::new();
    for &c in &cpus {
        let dir = format!("{CPU}/cpu{c}/cpuidle");
        for i in s.numbered(&dir, "state") {
            let f = |x: &str| s.read(&format!("{dir}/state{i}/{x}"));
            let Some(name) = f("name") else { continue };
            let disabled = f("disable").is_some_and(|d| d != "0");
            match states.iter_mut().find(|st| st.name == name) {
                Some(st) => {
                    st.cpus += 1;
                    st.disabled_on += disabled as usize;
                }
                None => states.push(IdleState {
                    name,
                    latency_us: f("latency").and_then(|l| l.parse().ok()).unwrap_or(0),
                    disabled_on: disabled as usize,
                    cpus: 1,
                }),
            }
        }
    }
    states
}

/// Exit latency above which an idle state counts as a low-power state the
/// study turned off (C1 is 1–2 µs; C1E and deeper are 10 µs and more).
const DEEP_STATE_US: u64 = 2;

/// The C-states the CPUs may enter, with their exit latencies.
pub fn idle_states(s: Sys) -> Option<LabCondition> {
    let states = read_idle_states(s);
    if states.is_empty() {
        return None;
    }
    let text: Vec<String> = states
        .iter()
        .map(|st| {
            let off = match st.disabled_on {
                0 => String::new(),
                n if n == st.cpus => " (disabled)".into(),
                n => format!(" (disabled on {n} of {})", st.cpus),
            };
            format!("{} {} µs{off}", st.name, st.latency_us)
        })
        .collect();
    let deep: Vec<String> = states
        .iter()
        .filter(|st| st.latency_us > DEEP_STATE_US && st.disabled_on < st.cpus)
        .map(|st| format!("{} ({} µs)", st.name, st.latency_us))
        .collect();
    let warning = (!deep.is_empty()).then(|| {
        format!(
            "deep C-states enabled: {}; a CPU asleep between I/Os pays the exit latency on each completion; disable them (cpupower idle-set -D {DEEP_STATE_US})",
            deep.join(", ")
        )
    });
    let source = "/sys/devices/system/cpu/cpu*/cpuidle/state*/{name,latency,disable}";
    Some(cond("idle_states", text.join(", "), source, warning))
}

/// Guest halt polling (cpuidle-haltpoll): how long an idle vCPU polls
/// before it halts into the hypervisor.
pub fn haltpoll(s: Sys) -> Option<LabCondition> {
    let dir = "/sys/module/haltpoll/parameters";
    let params = s.list(dir);
    if params.is_empty() {
        return None;
    }
    let text: Vec<String> = params
        .iter()
        .filter_map(|p| {
            let v = s.read(&format!("{dir}/{p}"))?;
            Some(format!("{}={v}", p.trim_start_matches("guest_halt_poll_")))
        })
        .collect();
    let in_use = s
        .read(&format!("{CPU}/cpuidle/current_governor_ro"))
        .as_deref()
        == Some("haltpoll")
        || s.read(&format!("{CPU}/cpuidle/current_driver")).as_deref() == Some("haltpoll");
    let poll_ns = s.read(&format!("{dir}/guest_halt_poll_ns"));
    let warning = (in_use && poll_ns.as_deref() == Some("0")).then(|| {
        format!("guest halt polling off (guest_halt_poll_ns=0): an idle vCPU halts into the hypervisor and each completion pays its wake-up; for lab conditions write e.g. 200000 to {dir}/guest_halt_poll_ns")
    });
    let value = format!(
        "{}{}",
        text.join(", "),
        if in_use { "" } else { " (not in use)" }
    );
    Some(cond("haltpoll", value, &format!("{dir}/*"), warning))
}

/// Simultaneous multithreading.
pub fn smt(s: Sys) -> Option<LabCondition> {
    let active = s.read(&format!("{CPU}/smt/active"))?;
    let control = s.read(&format!("{CPU}/smt/control")).unwrap_or_default();
    let on = active == "1";
    let warning = on.then(|| {
        format!("SMT on: hyperthread siblings share a core, so a busy sibling changes per-I/O CPU cost; write off to {CPU}/smt/control or keep the siblings idle")
    });
    let value = format!("{} (control {control})", if on { "on" } else { "off" });
    Some(cond(
        "smt",
        value,
        "/sys/devices/system/cpu/smt/{active,control}",
        warning,
    ))
}

/// The hypervisor's name, from what the guest can see of it.
pub(crate) fn hypervisor_name(s: Sys) -> Option<String> {
    if let Some(t) = s.read("/sys/hypervisor/type").filter(|t| !t.is_empty()) {
        return Some(if t == "xen" { "Xen".into() } else { t });
    }
    let cs = s
        .read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
        .unwrap_or_default();
    for (clock, name) in [
        ("kvm-clock", "KVM"),
        ("hyperv_clocksource", "Hyper-V"),
        ("xen", "Xen"),
    ] {
        if cs.split_whitespace().any(|c| c.starts_with(clock)) {
            return Some(name.into());
        }
    }
    let vendor = s.read("/sys/class/dmi/id/sys_vendor").unwrap_or_default();
    let product = s.read("/sys/class/dmi/id/product_name").unwrap_or_default();
    let known = [
        ("QEMU", "QEMU/KVM"),
        ("VMware", "VMware"),
        ("Microsoft", "Hyper-V"),
        ("innotek", "VirtualBox"),
        ("Xen", "Xen"),
        ("Amazon EC2", "Amazon EC2"),
        ("Google", "Google Compute Engine"),
    ];
    known
        .iter()
        .find(|(k, _)| vendor.contains(k) || product.contains(k))
        .map(|(_, n)| n.to_string())
        .or_else(|| (!vendor.is_empty()).then(|| format!("{vendor} {product}")))
}

/// Whether the CPU says it runs under a hypervisor (the `hypervisor` flag
/// of /proc/cpuinfo), or /sys/hypervisor names one.
pub(crate) fn under_hypervisor(s: Sys) -> bool {
    let cpuinfo = s.read("/proc/cpuinfo").unwrap_or_default();
    let flag = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .is_some_and(|l| l.split_whitespace().any(|f| f == "hypervisor"));
    flag || s.read("/sys/hypervisor/type").is_some()
}

/// Where [`virtualization`] looks.
pub(crate) const VIRTUALIZATION_SOURCE: &str = "/proc/cpuinfo (hypervisor flag), /sys/hypervisor/type, clocksource0/available_clocksource, /sys/class/dmi/id/{sys_vendor,product_name}";

/// Whether the machine is a virtual machine, and which hypervisor.
pub fn virtualization(s: Sys) -> LabCondition {
    let source = VIRTUALIZATION_SOURCE;
    if !under_hypervisor(s) {
        return cond(
            "virtualization",
            "none (no hypervisor flag)".into(),
            source,
            None,
        );
    }
    let name = hypervisor_name(s).unwrap_or_else(|| "unknown hypervisor".into());
    let warning = format!("virtual machine ({name}): interrupts and timers go through the hypervisor; latency and CPU figures include its overhead and other guests' interference (steal)");
    cond(
        "virtualization",
        format!("virtual machine ({name})"),
        source,
        Some(warning),
    )
}

/// Isolated and tickless CPUs.
pub fn isolation(s: Sys) -> LabCondition {
    let list = |f: &str| {
        s.read(&format!("{CPU}/{f}"))
            .filter(|v| !v.is_empty() && v != "(null)")
    };
    let isolated = list("isolated");
    let nohz_full = list("nohz_full");
    let cmdline = s.read("/proc/cmdline").unwrap_or_default();
    let tickless_idle = !cmdline.split_whitespace().any(|a| a == "nohz=off");
    let value = format!(
        "isolated {}, nohz_full {}, tickless idle {}",
        isolated.as_deref().unwrap_or("none"),
        nohz_full.as_deref().unwrap_or("none"),
        if tickless_idle { "on" } else { "off" }
    );
    let warning = isolated.map(|c| {
        format!("CPUs {c} are isolated: the scheduler keeps jobs off them unless cpus_allowed names them")
    });
    cond(
        "cpu_isolation",
        value,
        "/sys/devices/system/cpu/{isolated,nohz_full}, /proc/cmdline",
        warning,
    )
}

/// Transparent hugepages mode.
pub fn transparent_hugepages(s: Sys) -> Option<LabCondition> {
    let source = "/sys/kernel/mm/transparent_hugepage/enabled";
    let text = s.read(source)?;
    let mode = bracketed(&text).unwrap_or(&text).to_string();
    Some(cond("transparent_hugepages", mode, source, None))
}

/// CPU-vulnerability mitigations: how many are active, and the command line.
pub fn mitigations(s: Sys) -> LabCondition {
    let dir = format!("{CPU}/vulnerabilities");
    let active = s
        .list(&dir)
        .iter()
        .filter(|v| {
            s.read(&format!("{dir}/{v}"))
                .is_some_and(|t| t.starts_with("Mitigation: "))
        })
        .count();
    let cmdline = s.read("/proc/cmdline").unwrap_or_default();
    let arg = cmdline
        .split_whitespace()
        .find_map(|a| a.strip_prefix("mitigations="));
    let off = arg.is_some_and(|a| a.split(',').any(|x| x == "off"));
    let value = format!(
        "{active} active ({})",
        arg.map_or("kernel default".to_string(), |a| format!("mitigations={a}"))
    );
    let warning = off.then(|| {
        "mitigations=off: system calls and context switches are cheaper than on a default kernel; per-I/O CPU figures are lower than production's".to_string()
    });
    cond(
        "mitigations",
        value,
        "/sys/devices/system/cpu/vulnerabilities/*, /proc/cmdline",
        warning,
    )
}

#[cfg(test)]
#[path = "lab_tests.rs"]
mod tests;
