//! A study in the lab VM (`tests/common/labvm.rs`, `bench/lab-vm.sh`) of
//! md RAID 0 over three null_blk disks: one bare, one under dm-linear
//! (as fast: it only counts a few microseconds more per I/O) and one
//! behind a dm-delay that holds writes 10 ms and reads not at all.
//! `ssdready study --quick /dev/md0` inside must name the delayed member
//! slow for writes — from its writes, never from the reads that make most
//! of the study's runs — and name neither the linear member nor anything
//! else slow; each device's reads and writes over the study within 1 % of
//! the guest's own `/sys/block/*/stat`. One boot; everything inside is
//! emulated: function and counts, never speed.
//!
//! Needs `qemu-system-x86_64`, a static `/bin/busybox`, `mdadm`, `dmsetup`
//! and the kernel `.ci/vm-kernel.sh` prepares; skips, saying which is
//! missing, without them.

use crate::common;
use common::labvm::Lab;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// The write delay, ms.
const WRITE_DELAY_MS: u32 = 10;

const SCRIPT: &str = r#"
devs="md0 nullb0 lin nullb1 wslow nullb2"
for d in $devs; do echo "$d $(lab_kname $d)"; done >names
snap() { for d in $devs; do k=$(lab_kname $d); echo "$k $(cat /sys/block/$k/stat)"; done >"$1"; }
snap before.stat
lab_step study
HOME=/tmp SSDREADY_STUDY_RUNTIME=0.3 ssdready study --quick --quiet --output /host/study --db /tmp/history.db /dev/md0 >study.out 2>study.err
snap after.stat
"#;

#[test]
fn a_member_delayed_only_on_writes_is_named_for_writes_and_a_linear_member_never() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let null = "null_blk:memory_backed=1,size=64";
    let Some(run) = Lab::new()
        .device(null)
        .device(null)
        .device(null)
        .device("dm-linear:lin,nullb1")
        .device(&format!("dm-delay:wslow,nullb2,0,{WRITE_DELAY_MS}"))
        .device("md:md0,raid0,nullb0,lin,wslow,chunk=64")
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
    let (lin, wslow) = (&names["lin"], &names["wslow"]);
    let stat = run.stat_delta("before.stat", "after.stat");
    let delta = |d: &str, i: usize| stat[d][i];
    check_the_plant_holds(&stat, wslow);

    let study: Value = serde_json::from_str(&run.file("study/study.json")).expect("study.json");
    let findings = study["figures"]["stack"]["findings"].as_array().unwrap();
    let slow: Vec<&Value> = findings
        .iter()
        .filter(|f| f["finding"] == "slow_member")
        .collect();
    assert_eq!(slow.len(), 1, "{findings:?}");
    assert_eq!(&slow[0]["disk"], wslow.as_str(), "{findings:?}");
    assert_eq!(slow[0]["direction"], "writes", "{findings:?}");
    let ms = slow[0]["mean_ms_per_io"].as_f64().unwrap();
    assert!(ms >= 0.9 * f64::from(WRITE_DELAY_MS), "{}", slow[0]);
    assert!(
        findings.iter().all(|f| f["disk"] != lin.as_str()),
        "the linear member named: {findings:?}"
    );
    assert!(study["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .any(|v| v["rule"] == "stack-slow-member"
            && v["finding"].as_str().unwrap().contains("for writes")));

    // Each device's I/O as the study counted it, against the kernel's.
    let whole = study["targets"][0]["stack"]["over_study"]
        .as_array()
        .expect("over_study");
    for disk in names.values() {
        let c = whole
            .iter()
            .find(|c| c["disk"] == disk.as_str())
            .unwrap_or_else(|| panic!("{disk} not in over_study"));
        for (key, field) in [("read_ios", 0), ("write_ios", 4)] {
            let (mine, kernel) = (c[key].as_u64().unwrap(), delta(disk, field));
            eprintln!("{disk} {key}: the study {mine}, the kernel {kernel}");
            assert!(
                kernel.abs_diff(mine) as f64 <= 0.01 * kernel as f64,
                "{disk} {key}: the study counted {mine}, the kernel {kernel}"
            );
        }
    }
    assert!(run.leftovers().is_empty(), "{:?}", run.leftovers());
}

/// The plant holds, by the kernel's own counters (`stat`): the delayed
/// member's (`wslow`) writes took the delay each, its reads far less.
fn check_the_plant_holds(stat: &BTreeMap<String, Vec<u64>>, wslow: &str) {
    let delta = |d: &str, i: usize| stat[d][i];
    let (writes, write_ms) = (delta(wslow, 4), delta(wslow, 7));
    let (reads, read_ms) = (delta(wslow, 0), delta(wslow, 3));
    assert!(
        writes > 0 && reads > 0,
        "{wslow}: {reads} reads, {writes} writes"
    );
    assert!(
        write_ms as f64 / writes as f64 >= 0.9 * f64::from(WRITE_DELAY_MS),
        "{wslow}: {write_ms} ms over {writes} writes"
    );
    assert!(
        (read_ms as f64 / reads as f64) < 1.0,
        "{wslow}: {read_ms} ms over {reads} reads"
    );
}
