//! The lab conditions and hardware counters reach the result: the platform
//! carries them, each phase carries counts exactly when the machine has
//! counters, and a block device under test gets its interrupt condition.

use crate::common;
use common::*;
use serde_json::Value;

fn lab_entry<'a>(r: &'a Value, name: &str) -> Option<&'a Value> {
    r["platform"]["lab"]
        .as_array()
        .expect("platform.lab is an array")
        .iter()
        .find(|c| c["name"] == name)
}

#[test]
fn phases_carry_hardware_counts_exactly_when_the_lab_says_there_are_counters() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let r = run_json(&[
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--runtime=0.3",
        "--time_based",
    ]);
    let hw = lab_entry(&r, "hw_counters").expect("an hw_counters condition");
    let counts = &r["phases"][0]["hw_counters"];
    if hw["value"] == "none" {
        let w = hw["warning"].as_str().expect("a reason");
        assert!(w.starts_with("no hardware counters: "), "{w}");
        assert!(counts.is_null(), "counts without counters: {counts}");
    } else {
        assert!(counts["cycles"].as_u64().unwrap() > 0, "{counts}");
        assert!(counts["instructions_per_io"].as_f64().unwrap() > 0.0);
        assert!(counts["ipc"].as_f64().unwrap() > 0.0);
    }
    for name in ["cpufreq_governor", "virtualization", "idle_driver"] {
        assert!(lab_entry(&r, name).is_some(), "{name} missing");
    }
}

#[test]
fn text_report_says_whether_there_are_hardware_counters() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&[
        "run",
        "--name=t",
        "--ioengine=null",
        "--size=1g",
        "--runtime=0.2",
        "--time_based",
        "--quiet",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\n  lab: "), "{text}");
    assert!(
        text.contains("\n  no hardware counters: ")
            || text.contains("\n  hardware counters (all CPUs): "),
        "{text}"
    );
}

#[test]
fn a_loop_device_under_test_is_said_to_have_no_interrupts() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(dev) = LoopDev::new("lab", 16) else {
        return;
    };
    let f = format!("--filename={}", dev.dev);
    let r = run_json(&[
        "--name=t",
        &f,
        "--rw=randread",
        "--bs=4k",
        "--direct=1",
        "--runtime=0.2",
        "--time_based",
    ]);
    let name = dev.dev.trim_start_matches("/dev/");
    let irq = lab_entry(&r, "irq_affinity").expect("irq_affinity");
    let v = irq["value"].as_str().unwrap();
    assert!(v.starts_with(&format!("{name}: ")), "{v}");
    assert!(
        v.ends_with("no interrupts (loop device: completions run in a kernel worker)"),
        "{v}"
    );
}
