//! A study of a stacked device in the lab VM (`tests/common/labvm.rs`,
//! `bench/lab-vm.sh`): md RAID 0 over three null_blk disks, one behind
//! dm-delay (the slow member) and one behind dm-crypt. `ssdready study
//! --quick` of /dev/md0 inside must show the stack's layers, name the
//! delayed member, and count each device's I/O as the guest's own
//! `/sys/block/*/stat` does (read before and after the study): over the
//! whole study, and within it over its runs; and read each physical member
//! alone (small random and large sequential reads) and all at once, never
//! writing one, for the stack's ratio to their sum. `ssdready limits
//! /dev/md0` shows the same stack. One boot;
//! everything inside is emulated: function and counts, never speed.
//!
//! Needs `qemu-system-x86_64`, a static `/bin/busybox`, `mdadm`, `dmsetup`
//! and the kernel `.ci/vm-kernel.sh` prepares; skips, saying which is
//! missing, without them.

use crate::common;
use common::labvm::{Lab, LabRun};
use serde_json::Value;
use std::time::Duration;

/// The slow member's delay, ms.
const DELAY_MS: u32 = 10;

/// The guest's part: the devices' kernel names, their counters around the
/// study, and the study.
const SCRIPT: &str = r#"
devs="md0 nullb0 slow nullb1 secret nullb2"
for d in $devs; do echo "$d $(lab_kname $d)"; done >names
snap() { for d in $devs; do k=$(lab_kname $d); echo "$k $(cat /sys/block/$k/stat)"; done >"$1"; }
snap before.stat
lab_step study
HOME=/tmp SSDREADY_STUDY_RUNTIME=0.3 ssdready study --quick --quiet --output /host/study --db /tmp/history.db /dev/md0 >study.out 2>study.err
snap after.stat
lab_step limits
ssdready limits /dev/md0 --json >limits.json
ssdready limits /dev/md0 >limits.txt
"#;

/// The study's counts of `disk` summed over its runs: (reads, writes).
fn counted(study: &Value, disk: &str) -> (u64, u64) {
    let mut sum = (0, 0);
    for r in study["runs"].as_array().expect("runs") {
        for m in r["context"]["members"].as_array().into_iter().flatten() {
            if m["disk"] == disk {
                sum.0 += m["read_ios"].as_u64().unwrap();
                sum.1 += m["write_ios"].as_u64().unwrap();
            }
        }
    }
    sum
}

#[test]
fn a_study_of_md_raid0_names_the_member_behind_dm_delay_and_counts_as_the_kernel() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let null = "null_blk:memory_backed=1,size=64";
    let Some(run) = Lab::new()
        .device(null)
        .device(null)
        .device(null)
        .device(&format!("dm-delay:slow,nullb1,{DELAY_MS}"))
        .device("dm-crypt:secret,nullb2")
        .device("md:md0,raid0,nullb0,slow,secret,chunk=64")
        .script(SCRIPT)
        .limit(Duration::from_secs(420))
        .run()
    else {
        return;
    };
    for (step, s) in run.steps() {
        eprintln!("lab step {step}: {s:.1} s");
    }
    let names = run.names();
    let (slow, secret) = (&names["slow"], &names["secret"]);
    let text = run.file("study/study.json");
    let study: Value = serde_json::from_str(&text).expect("study.json");
    assert!(
        !text.contains("000102030405060708090a0b"),
        "the crypt key reached study.json"
    );
    assert!(run.file("LAB-VM-EMULATED").contains("emulation"));

    check_layers(&study, slow, secret);
    check_slow_member_named(&study, slow);
    check_ceiling(&study);
    check_ceiling_runs_read_only(&study);
    check_stack_verdicts(&study);
    check_counts_against_the_kernel(&run, &study, slow, secret);
    check_limits(&run);
    assert!(run.leftovers().is_empty(), "{:?}", run.leftovers());
}

/// The stack's layers: md0 over three members, one behind dm-delay
/// (`slow`), one behind dm-crypt (`secret`), over three null_blk disks.
fn check_layers(study: &Value, slow: &str, secret: &str) {
    let stack = &study["targets"][0]["stack"];
    assert_eq!(stack["target"], "md0", "{stack}");
    let layer = |disk: &str| -> &Value {
        stack["layers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["disk"] == disk)
            .unwrap_or_else(|| panic!("no layer {disk} in {stack}"))
    };
    let md = &layer("md0")["kind"];
    assert_eq!(
        (
            &md["type"],
            &md["level"],
            &md["chunk_bytes"],
            &md["raid_disks"]
        ),
        (
            &Value::from("md"),
            &Value::from("raid0"),
            &Value::from(65536),
            &Value::from(3)
        ),
        "{md}"
    );
    assert_eq!(md["members"].as_array().unwrap().len(), 3, "{md}");
    let delay = &layer(slow)["kind"];
    assert_eq!(delay["name"], "slow");
    assert_eq!(delay["targets"][0]["target_type"], "delay", "{delay}");
    let crypt = &layer(secret)["kind"];
    assert_eq!(crypt["cipher"], "aes-xts-plain64", "{crypt}");
    assert_eq!(crypt["targets"][0]["target_type"], "crypt");
    let mut physical: Vec<&str> = stack["physical"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    physical.sort_unstable();
    assert_eq!(physical, ["nullb0", "nullb1", "nullb2"]);
}

/// The delayed member is named, with its figures.
fn check_slow_member_named(study: &Value, slow: &str) {
    let findings = &study["figures"]["stack"]["findings"];
    let named = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["finding"] == "slow_member")
        .unwrap_or_else(|| panic!("no slow member among {findings}"));
    assert_eq!(&named["disk"], slow, "{findings}");
    let ms = named["mean_ms_per_io"].as_f64().unwrap();
    assert!(ms >= 0.9 * f64::from(DELAY_MS), "{named}");
    assert!(
        study["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["rule"] == "stack-slow-member"
                && v["finding"].as_str().unwrap().contains(slow))
    );
}

/// The stack against its members read alone, at small random and large
/// sequential reads, and all at once.
fn check_ceiling(study: &Value) {
    // The stack against its members read alone: each physical member was
    // read by itself, read-only, and the ratio is there. Emulated: every
    // device tops out near the same IOPS, so no speed is asserted.
    let ceiling = &study["figures"]["stack"]["ceiling"];
    let ceiling_runs: Vec<(&Value, &Value)> = study["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["sweep"] == "ceiling")
        .map(|r| (&r["id"], &r["error"]))
        .collect();
    assert_eq!(
        ceiling["stack"], "md0",
        "no ceiling: runs {ceiling_runs:?}, skipped {}, plan {}",
        study["skipped"], study["plan"]
    );
    assert_eq!(ceiling["rounds"], 2, "{ceiling}");
    let mut alone: Vec<&str> = ceiling["members"]
        .as_array()
        .unwrap_or_else(|| panic!("no members alone in {ceiling}"))
        .iter()
        .filter(|m| m["iops"].as_f64().is_some_and(|x| x > 0.0))
        .filter_map(|m| m["disk"].as_str())
        .collect();
    alone.sort_unstable();
    assert_eq!(alone, ["nullb0", "nullb1", "nullb2"], "{ceiling}");
    let ratio = ceiling["ratio_pct"].as_f64().expect("ratio_pct");
    assert!(
        ratio > 0.0 && ceiling["ratio_err_pct"].as_f64().is_some(),
        "{ceiling}"
    );
    // Each member read alone: twice at 4 KiB random reads, twice at large
    // sequential reads of a whole stripe (64 KiB chunk × 3 disks).
    let bw = &ceiling["bandwidth"];
    assert_eq!(
        (&bw["bs"], &bw["qd"], &bw["rounds"]),
        (&Value::from(192 << 10), &Value::from(8), &Value::from(2)),
        "{ceiling}"
    );
    assert!(bw["stack_bytes_per_s"].as_f64() > Some(0.0), "{bw}");
    assert!(bw["ratio_pct"].as_f64().is_some(), "{bw}");
    let mut alone_bw: Vec<&str> = bw["members"]
        .as_array()
        .unwrap_or_else(|| panic!("no members' bandwidth in {bw}"))
        .iter()
        .filter(|m| m["bytes_per_s"].as_f64().is_some_and(|x| x > 0.0))
        .filter_map(|m| m["disk"].as_str())
        .collect();
    alone_bw.sort_unstable();
    assert_eq!(alone_bw, ["nullb0", "nullb1", "nullb2"], "{bw}");
    let together = &ceiling["together"];
    assert_eq!(together["rounds"], 2, "{ceiling}");
    assert!(
        together["iops"].as_f64() > Some(0.0) && together["ratio_pct"].as_f64().is_some(),
        "{together}"
    );
}

/// The study's ceiling runs of `rw` whose job reads `targets`.
fn ceiling_of<'a>(study: &'a Value, targets: &[&str], rw: &str) -> Vec<&'a Value> {
    study["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["sweep"] == "ceiling" && r["workload"]["rw"] == rw)
        .filter(|r| r["workload"]["targets"] == serde_json::json!(targets))
        .collect()
}

/// Every device's counters over a run that read members only: `read`
/// read, nothing written.
fn read_only(r: &Value, read: &[&str]) {
    let devices = r["context"]["members"]
        .as_array()
        .unwrap_or_else(|| panic!("no counters in {}", r["id"]));
    for disk in read {
        let own = devices
            .iter()
            .find(|m| m["disk"] == *disk)
            .unwrap_or_else(|| panic!("{disk}'s counters in {}", r["id"]));
        assert!(own["read_ios"].as_u64() > Some(0), "{}: {own}", r["id"]);
    }
    for d in devices {
        assert_eq!(d["write_ios"], 0, "{} wrote {}: {d}", r["id"], d["disk"]);
    }
}

/// Each member read alone twice at each size, and all at once twice,
/// one job each, never written.
fn check_ceiling_runs_read_only(study: &Value) {
    for disk in ["nullb0", "nullb1", "nullb2"] {
        let path = format!("/dev/{disk}");
        for rw in ["randread", "read"] {
            let runs = ceiling_of(study, &[path.as_str()], rw);
            assert_eq!(runs.len(), 2, "{disk} read alone twice ({rw})");
            for r in runs {
                read_only(r, &[disk]);
            }
        }
    }
    // Every member at once, one job each: twice, and it wrote nothing.
    let members = ["/dev/nullb0", "/dev/nullb1", "/dev/nullb2"];
    let at_once = ceiling_of(study, &members, "randread");
    assert_eq!(at_once.len(), 2, "the members read at once twice");
    for r in at_once {
        read_only(r, &["nullb0", "nullb1", "nullb2"]);
        let jobs = r["options"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o.as_str().is_some_and(|o| o.starts_with("--name=")))
            .count();
        assert_eq!(jobs, 3, "one job per member: {}", r["options"]);
    }
}

/// The verdicts on the stack's bandwidth, its members together, and the
/// stack against its members.
fn check_stack_verdicts(study: &Value) {
    let rule = |v: &Value, rules: &[&str]| rules.iter().any(|r| v["rule"] == *r);
    let verdicts = study["verdicts"].as_array().unwrap();
    for rules in [
        ["stack-bandwidth-ceiling", "stack-bandwidth-keeps-up"],
        ["stack-shared-ceiling", "stack-members-scale"],
    ] {
        let said = verdicts
            .iter()
            .find(|v| rule(v, &rules))
            .unwrap_or_else(|| panic!("no verdict {rules:?}"));
        eprintln!("{} (EMULATED): {}", said["rule"], said["finding"]);
    }
    let said = study["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| matches!(v["rule"].as_str(), Some("stack-ceiling" | "stack-keeps-up")))
        .expect("no verdict on the stack against its members");
    eprintln!(
        "the stack against its members (EMULATED): {}",
        said["finding"]
    );
    assert!(
        said["finding"].as_str().unwrap().contains("measured alone"),
        "{said}"
    );
}

/// Each device's I/O as the study counted it, against the kernel's:
/// the whole study (from detection) within 1 %, its runs within it.
fn check_counts_against_the_kernel(run: &LabRun, study: &Value, slow: &str, secret: &str) {
    let stack = &study["targets"][0]["stack"];
    let delta = run.stat_delta("before.stat", "after.stat");
    let whole = stack["over_study"].as_array().expect("over_study");
    for disk in ["md0", "nullb0", slow, "nullb1", secret, "nullb2"] {
        let c = whole
            .iter()
            .find(|c| c["disk"] == disk)
            .unwrap_or_else(|| panic!("{disk} not in over_study: {stack}"));
        let n = |k: &str| c[k].as_u64().unwrap();
        let (reads, writes) = (n("read_ios"), n("write_ios"));
        let (in_runs_r, in_runs_w) = counted(study, disk);
        let k = &delta[disk];
        let (kr, kw) = (k[0], k[4]);
        eprintln!(
            "{disk}: the study counted {reads} reads, {writes} writes ({in_runs_r}, {in_runs_w} in its runs); the kernel {kr}, {kw}"
        );
        assert!(kr > 0 && in_runs_r > 0, "{disk}: no reads at all");
        for (mine, runs, kernel) in [(reads, in_runs_r, kr), (writes, in_runs_w, kw)] {
            let off = kernel.abs_diff(mine) as f64;
            assert!(
                off <= 0.01 * kernel as f64,
                "{disk}: the study counted {mine}, the kernel {kernel}"
            );
            assert!(runs <= mine, "{disk}: {runs} in the runs, {mine} in all");
        }
        // Sectors too, as the kernel keeps them.
        assert!(
            n("read_sectors").abs_diff(k[2]) as f64 <= 0.01 * k[2] as f64,
            "{disk}: {c}"
        );
    }
}

/// `ssdready limits` shows the same stack.
fn check_limits(run: &LabRun) {
    let limits: Value = serde_json::from_str(&run.file("limits.json")).expect("limits --json");
    assert_eq!(limits["stack"]["target"], "md0", "{limits}");
    assert_eq!(limits["stack"]["layers"].as_array().map(Vec::len), Some(6));
    let text = run.file("limits.txt");
    assert!(
        text.contains("the stack under md0") && text.contains("md raid0, chunk 64k, 3 disks"),
        "{text}"
    );
    assert!(text.contains("cipher aes-xts-plain64"), "{text}");
}
