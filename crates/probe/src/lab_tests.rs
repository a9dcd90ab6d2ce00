//! Lab-condition readers against fake sysfs/procfs trees.

use super::*;
use crate::lab_irq;

/// A fake file-system root holding `files` (path, content); a content
/// starting with `->` makes a symbolic link to the rest, and a path ending
/// in `/` a directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (path, content) in files {
        let p = dir.path().join(path.trim_start_matches('/'));
        if path.ends_with('/') {
            std::fs::create_dir_all(&p).unwrap();
            continue;
        }
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        match content.strip_prefix("->") {
            Some(target) => std::os::unix::fs::symlink(target, &p).unwrap(),
            None => std::fs::write(&p, format!("{content}\n")).unwrap(),
        }
    }
    dir
}

fn sys(t: &tempfile::TempDir) -> Sys<'_> {
    Sys::new(t.path())
}

const C: &str = "/sys/devices/system/cpu";

#[test]
fn cpu_lists_collapse_runs() {
    assert_eq!(cpu_list(&[3, 0, 1, 2, 6, 8, 9]), "0-3,6,8-9");
    assert_eq!(cpu_list(&[5]), "5");
    assert_eq!(cpu_list(&[]), "");
}

#[test]
fn no_cpufreq_driver_is_said_plainly_without_warning() {
    let t = tree(&[
        ("/sys/devices/system/cpu/cpu0/", ""),
        ("/sys/devices/system/cpu/cpu1/", ""),
    ]);
    let c = governor(sys(&t));
    assert!(
        c.value.starts_with("none (no cpufreq driver"),
        "{}",
        c.value
    );
    assert!(c.value.contains("typical in a VM"));
    assert_eq!(c.warning, None);
    assert!(turbo(sys(&t)).is_none() && frequency_range(sys(&t)).is_none());
}

#[test]
fn powersave_governor_warns_with_its_cpu_count() {
    let t = tree(&[
        (&format!("{C}/cpu0/cpufreq/scaling_governor"), "performance"),
        (&format!("{C}/cpu0/cpufreq/scaling_driver"), "intel_pstate"),
        (&format!("{C}/cpu1/cpufreq/scaling_governor"), "powersave"),
        (&format!("{C}/cpu2/cpufreq/scaling_governor"), "powersave"),
        (&format!("{C}/cpu10/cpufreq/scaling_governor"), "schedutil"),
    ]);
    let c = governor(sys(&t));
    assert_eq!(
        c.value,
        "performance on CPUs 0, powersave on CPUs 1-2, schedutil on CPUs 10 (driver intel_pstate)"
    );
    let w = c.warning.expect("warning");
    assert!(
        w.starts_with("governor 'powersave' on 2 CPUs, 'schedutil' on 1 CPUs: frequency scaling"),
        "{w}"
    );
    assert!(w.contains("set 'performance'"));
}

#[test]
fn performance_governor_everywhere_is_quiet() {
    let t = tree(&[
        (&format!("{C}/cpu0/cpufreq/scaling_governor"), "performance"),
        (&format!("{C}/cpu1/cpufreq/scaling_governor"), "performance"),
    ]);
    assert_eq!(governor(sys(&t)).warning, None);
}

#[test]
fn turbo_is_read_from_intel_pstate_or_cpufreq_boost() {
    let t = tree(&[(&format!("{C}/intel_pstate/no_turbo"), "0")]);
    let c = turbo(sys(&t)).expect("turbo");
    assert_eq!(c.value, "on");
    assert!(c
        .warning
        .unwrap()
        .ends_with("write 1 to /sys/devices/system/cpu/intel_pstate/no_turbo"));

    let t = tree(&[(&format!("{C}/cpufreq/boost"), "0")]);
    let c = turbo(sys(&t)).expect("boost");
    assert_eq!((c.value.as_str(), c.warning), ("off", None));

    let t = tree(&[
        (&format!("{C}/cpu0/cpufreq/boost"), "1"),
        (&format!("{C}/amd_pstate/status"), "active"),
    ]);
    let c = turbo(sys(&t)).expect("per-policy boost");
    assert_eq!(c.value, "on, amd_pstate active");
    assert!(c
        .warning
        .unwrap()
        .ends_with("write 0 to /sys/devices/system/cpu/cpu0/cpufreq/boost"));
}

#[test]
fn a_capped_maximum_frequency_warns() {
    let mut files = Vec::new();
    for (cpu, smax) in [(0, "3500000"), (1, "2000000")] {
        files.push((format!("{C}/cpu{cpu}/cpufreq/scaling_min_freq"), "800000"));
        files.push((format!("{C}/cpu{cpu}/cpufreq/scaling_max_freq"), smax));
        files.push((format!("{C}/cpu{cpu}/cpufreq/cpuinfo_min_freq"), "800000"));
        files.push((format!("{C}/cpu{cpu}/cpufreq/cpuinfo_max_freq"), "3500000"));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    let t = tree(&files);
    let c = frequency_range(sys(&t)).expect("range");
    assert_eq!(c.value, "800–3500 MHz of 800–3500 MHz");
    assert!(c.warning.unwrap().contains("on 1 CPUs"));
}

fn idle_tree(states: &[(&str, &str, [&str; 2])]) -> tempfile::TempDir {
    let mut files = Vec::new();
    for (i, (name, lat, disable)) in states.iter().enumerate() {
        for (cpu, off) in disable.iter().enumerate() {
            let d = format!("{C}/cpu{cpu}/cpuidle/state{i}");
            files.push((format!("{d}/name"), name.to_string()));
            files.push((format!("{d}/latency"), lat.to_string()));
            files.push((format!("{d}/disable"), off.to_string()));
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    tree(&files)
}

#[test]
fn deep_c_states_warn_unless_disabled_everywhere() {
    let t = idle_tree(&[
        ("POLL", "0", ["0", "0"]),
        ("C1", "2", ["0", "0"]),
        ("C6", "133", ["0", "1"]),
    ]);
    let c = idle_states(sys(&t)).expect("states");
    assert_eq!(
        c.value,
        "POLL 0 µs, C1 2 µs, C6 133 µs (disabled on 1 of 2)"
    );
    let w = c.warning.expect("warning");
    assert!(w.starts_with("deep C-states enabled: C6 (133 µs)"), "{w}");

    let t = idle_tree(&[("POLL", "0", ["0", "0"]), ("C6", "133", ["1", "1"])]);
    let c = idle_states(sys(&t)).expect("states");
    assert_eq!(c.value, "POLL 0 µs, C6 133 µs (disabled)");
    assert_eq!(c.warning, None);
    assert!(idle_states(sys(&tree(&[]))).is_none());
}

/// This project's VM: cpuidle-haltpoll with guest_halt_poll_ns=0.
fn haltpoll_tree(poll_ns: &str, governor: &str) -> tempfile::TempDir {
    tree(&[
        (&format!("{C}/cpuidle/current_driver"), "haltpoll"),
        (&format!("{C}/cpuidle/current_governor_ro"), governor),
        (
            "/sys/module/haltpoll/parameters/guest_halt_poll_ns",
            poll_ns,
        ),
        ("/sys/module/haltpoll/parameters/guest_halt_poll_grow", "2"),
    ])
}

#[test]
fn halt_polling_off_in_a_guest_warns() {
    let t = haltpoll_tree("0", "haltpoll");
    assert_eq!(idle_driver(sys(&t)).value, "haltpoll, governor haltpoll");
    let c = haltpoll(sys(&t)).expect("haltpoll");
    assert_eq!(c.value, "grow=2, ns=0");
    let w = c.warning.expect("warning");
    assert!(
        w.starts_with("guest halt polling off (guest_halt_poll_ns=0)"),
        "{w}"
    );

    let c = haltpoll(sys(&haltpoll_tree("200000", "haltpoll"))).unwrap();
    assert_eq!(c.warning, None);
    let t = tree(&[
        (&format!("{C}/cpuidle/current_driver"), "intel_idle"),
        (&format!("{C}/cpuidle/current_governor_ro"), "menu"),
        ("/sys/module/haltpoll/parameters/guest_halt_poll_ns", "0"),
    ]);
    let c = haltpoll(sys(&t)).unwrap();
    assert!(c.value.ends_with("(not in use)") && c.warning.is_none());
    assert!(haltpoll(sys(&tree(&[]))).is_none());
    assert!(idle_driver(sys(&tree(&[]))).value.starts_with("none"));
}

#[test]
fn smt_on_warns_and_off_does_not() {
    let on = tree(&[
        (&format!("{C}/smt/active"), "1"),
        (&format!("{C}/smt/control"), "on"),
    ]);
    let c = smt(sys(&on)).unwrap();
    assert_eq!(c.value, "on (control on)");
    assert!(c.warning.unwrap().starts_with("SMT on"));
    let off = tree(&[
        (&format!("{C}/smt/active"), "0"),
        (&format!("{C}/smt/control"), "notsupported"),
    ]);
    let c = smt(sys(&off)).unwrap();
    assert_eq!(
        (c.value.as_str(), c.warning),
        ("off (control notsupported)", None)
    );
    assert!(smt(sys(&tree(&[]))).is_none());
}

#[test]
fn virtual_machines_are_named_and_warned_about() {
    let kvm = tree(&[
        (
            "/proc/cpuinfo",
            "processor\t: 0\nflags\t\t: fpu tsc hypervisor constant_tsc",
        ),
        (
            "/sys/devices/system/clocksource/clocksource0/available_clocksource",
            "tsc kvm-clock ",
        ),
    ]);
    let c = virtualization(sys(&kvm));
    assert_eq!(c.value, "virtual machine (KVM)");
    assert!(c
        .warning
        .unwrap()
        .starts_with("virtual machine (KVM): interrupts and timers go through the hypervisor"));

    let vmware = tree(&[
        ("/proc/cpuinfo", "flags\t\t: fpu hypervisor"),
        ("/sys/class/dmi/id/sys_vendor", "VMware, Inc."),
    ]);
    assert_eq!(
        virtualization(sys(&vmware)).value,
        "virtual machine (VMware)"
    );
    let xen = tree(&[
        ("/proc/cpuinfo", "flags\t\t: fpu"),
        ("/sys/hypervisor/type", "xen"),
    ]);
    assert_eq!(virtualization(sys(&xen)).value, "virtual machine (Xen)");
    let metal = tree(&[("/proc/cpuinfo", "flags\t\t: fpu tsc constant_tsc")]);
    let c = virtualization(sys(&metal));
    assert_eq!(
        (c.value.as_str(), c.warning),
        ("none (no hypervisor flag)", None)
    );
}

/// This project's VM: virtio-blk vda on PCI 0000:00:02.0, one queue, its
/// request interrupt on CPU 1 of 0-1.
fn virtio_tree() -> tempfile::TempDir {
    let pci = "/sys/devices/pci0000:00/0000:00:02.0";
    tree(&[
        (&format!("{pci}/virtio1/"), ""),
        (&format!("{pci}/msi_irqs/35"), "msix"),
        (&format!("{pci}/msi_irqs/36"), "msix"),
        (&format!("{pci}/irq"), "11"),
        (
            "/sys/block/vda/device",
            "->../../devices/pci0000:00/0000:00:02.0/virtio1",
        ),
        ("/sys/block/vda/mq/0/cpu_list", "0, 1"),
        ("/sys/devices/system/cpu/online", "0-1"),
        ("/proc/irq/35/virtio1-config/", ""),
        ("/proc/irq/35/smp_affinity_list", "0-1"),
        ("/proc/irq/35/effective_affinity_list", "1"),
        ("/proc/irq/36/virtio1-req.0/", ""),
        ("/proc/irq/36/smp_affinity_list", "0-1"),
        ("/proc/irq/36/effective_affinity_list", "1"),
        ("/sys/block/loop0/mq/0/cpu_list", "0, 1"),
    ])
}

#[test]
fn virtio_queue_interrupts_are_found_above_the_device_with_their_cpus() {
    let t = virtio_tree();
    let irqs = lab_irq::irqs(sys(&t), "vda").expect("a device");
    assert_eq!(irqs.len(), 2);
    assert_eq!(
        irqs[1],
        lab_irq::Irq {
            number: 36,
            name: "virtio1-req.0".into(),
            allowed: "0-1".into(),
            effective: Some("1".into()),
        }
    );
    let c = &lab_irq::devices(sys(&t), &["vda".into()])[0];
    assert_eq!(
        c.value,
        "vda: 1 hw queue for CPUs 0-1; IRQ 35 virtio1-config on CPU 1 (allowed 0-1), 36 virtio1-req.0 on CPU 1 (allowed 0-1)"
    );
    let w = c.warning.as_deref().expect("warning");
    assert!(
        w.starts_with("vda's completion interrupts go to CPU 1 only"),
        "{w}"
    );
}

#[test]
fn loop_devices_have_no_interrupts_and_say_why() {
    let t = virtio_tree();
    assert!(lab_irq::irqs(sys(&t), "loop0").is_none());
    let c = &lab_irq::devices(sys(&t), &["loop0".into(), "zram0".into()]);
    assert_eq!(
        c[0].value,
        "loop0: 1 hw queue for CPUs 0-1; no interrupts (loop device: completions run in a kernel worker)"
    );
    assert_eq!(c[0].warning, None);
    assert!(c[1].value.starts_with("zram0: no interrupts (zram:"));
}

#[test]
fn nvme_queues_spread_over_every_cpu_do_not_warn() {
    let pci = "/sys/devices/pci0000:00/0000:00:04.0";
    let mut files: Vec<(String, String)> = vec![
        (format!("{pci}/nvme/nvme0/nvme0n1/"), String::new()),
        (
            "/sys/block/nvme0n1/device".into(),
            "->../../devices/pci0000:00/0000:00:04.0/nvme/nvme0".into(),
        ),
        ("/sys/devices/system/cpu/online".into(), "0-1".into()),
    ];
    for (irq, name, cpu) in [
        (40, "nvme0q0", "0"),
        (41, "nvme0q1", "0"),
        (42, "nvme0q2", "1"),
    ] {
        files.push((format!("{pci}/msi_irqs/{irq}"), "msix".into()));
        files.push((format!("/proc/irq/{irq}/{name}/"), String::new()));
        files.push((format!("/proc/irq/{irq}/smp_affinity_list"), cpu.into()));
        files.push((
            format!("/proc/irq/{irq}/effective_affinity_list"),
            cpu.into(),
        ));
    }
    for q in 0..2 {
        files.push((format!("/sys/block/nvme0n1/mq/{q}/cpu_list"), q.to_string()));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let t = tree(&files);
    let c = &lab_irq::devices(sys(&t), &["nvme0n1".into()])[0];
    assert_eq!(
        c.value,
        "nvme0n1: 2 hw queues; IRQ 40 nvme0q0 on CPUs 0, 41 nvme0q1 on CPUs 0, 42 nvme0q2 on CPUs 1"
    );
    assert_eq!(c.warning, None);
}

#[test]
fn a_running_irqbalance_is_found_by_its_name() {
    let t = tree(&[
        ("/proc/1/comm", "init"),
        ("/proc/812/comm", "irqbalance"),
        ("/proc/self/", ""),
    ]);
    let c = lab_irq::irqbalance(sys(&t));
    assert_eq!(c.value, "running (pid 812)");
    assert!(c.warning.unwrap().starts_with("irqbalance is running"));
    let t = tree(&[("/proc/1/comm", "init")]);
    let c = lab_irq::irqbalance(sys(&t));
    assert_eq!((c.value.as_str(), c.warning), ("not running", None));
}

#[test]
fn isolation_tickless_hugepages_and_mitigations_read_as_written() {
    let t = tree(&[
        (&format!("{C}/isolated"), "2-3"),
        (&format!("{C}/nohz_full"), "(null)"),
        ("/proc/cmdline", "quiet nohz=off mitigations=off"),
        (
            "/sys/kernel/mm/transparent_hugepage/enabled",
            "always [madvise] never",
        ),
        (
            &format!("{C}/vulnerabilities/spectre_v2"),
            "Mitigation: Retpolines",
        ),
        (&format!("{C}/vulnerabilities/meltdown"), "Not affected"),
    ]);
    let c = isolation(sys(&t));
    assert_eq!(c.value, "isolated 2-3, nohz_full none, tickless idle off");
    assert!(c.warning.unwrap().starts_with("CPUs 2-3 are isolated"));
    assert_eq!(transparent_hugepages(sys(&t)).unwrap().value, "madvise");
    let m = mitigations(sys(&t));
    assert_eq!(m.value, "1 active (mitigations=off)");
    assert!(m.warning.unwrap().starts_with("mitigations=off"));

    let t = tree(&[(&format!("{C}/isolated"), ""), ("/proc/cmdline", "quiet")]);
    let c = isolation(sys(&t));
    assert_eq!(c.value, "isolated none, nohz_full none, tickless idle on");
    assert_eq!(c.warning, None);
    assert_eq!(mitigations(sys(&t)).value, "0 active (kernel default)");
}

#[test]
fn every_condition_of_this_machine_has_a_value_and_a_source() {
    let disks: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let conds = collect(Path::new("/"), &disks);
    for name in [
        "cpufreq_governor",
        "idle_driver",
        "virtualization",
        "irqbalance",
        "mitigations",
    ] {
        assert!(conds.iter().any(|c| c.name == name), "{name} missing");
    }
    assert_eq!(
        conds.iter().filter(|c| c.name == "irq_affinity").count(),
        disks.len()
    );
    for c in &conds {
        assert!(!c.value.is_empty() && c.source.starts_with('/'), "{c:?}");
        assert!(c.warning.as_ref().is_none_or(|w| !w.is_empty()), "{c:?}");
    }
}
