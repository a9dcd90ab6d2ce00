//! Stacked devices in the lab VM (`tests/common/labvm.rs`,
//! `bench/lab-vm.sh`): one boot of Debian's distribution kernel under
//! QEMU's software emulation, with md RAID 0 and 5 over null_blk, a RAID 0
//! with one member behind dm-delay, dm-crypt, scsi_debug, brd and an NVMe
//! controller with poll queues; this build's `ssdready run` reads each, and
//! the kernel's own counters (`/sys/block/*/stat`, `/proc/interrupts`) are
//! read before and after every run. The tests check function, never speed:
//! under emulation every device tops out near 10–13K IOPS.
//!
//! Needs `qemu-system-x86_64`, a static `/bin/busybox`, `mdadm`, `dmsetup`
//! and the kernel `.ci/vm-kernel.sh` prepares; each test skips, saying
//! which is missing, without them.

use crate::common;
use common::labvm::{block_stat, crashed_booting, lab_script, Lab};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

/// 4 KiB random reads per size-bound run.
const IOS: u64 = 4096;
/// The read delay of the slow member, in ms.
const DELAY_MS: u32 = 20;

/// The guest's part: each scenario is a step; `measure` snapshots the
/// devices' counters and the NVMe queues' interrupts around one run.
const SCRIPT: &str = r#"
echo "@@ lab-env $SSDREADY_LAB"
measure() { # NAME "DEVICES" SSDREADY-RUN-OPTIONS…
  name=$1; devs=$2; shift 2
  lab_step "$name"
  for d in $devs; do echo "$d $(cat /sys/block/$(lab_kname $d)/stat)"; done >"$name.before"
  grep ' nvme0q[1-9]' /proc/interrupts >"$name.irq-before" || true
  ssdready run --name="$name" --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
    --iodepth=4 --output-format=json --output="$name.json" "$@"
  grep ' nvme0q[1-9]' /proc/interrupts >"$name.irq-after" || true
  for d in $devs; do echo "$d $(cat /sys/block/$(lab_kname $d)/stat)"; done >"$name.after"
}
ls /sys/block/md0/slaves >md0.slaves
ls /sys/block/md1/slaves >md1.slaves
ls /sys/block/md2/slaves >md2.slaves
measure raid0 "md0 nullb0 nullb1" --filename=/dev/md0 --size=16m
measure raid5 "md1 nullb2 nullb3 nullb4" --filename=/dev/md1 --size=16m
measure slow-member "md2 nullb5 slow nullb6" --filename=/dev/md2 --size=64m --runtime=3 --time_based
ssdready limits /dev/nvme0n1 --json >nvme-limits.json
lab_step strategies-nvme
ssdready strategies /dev/nvme0n1 --runtime 300ms --quiet --output strategies-nvme
cp strategies-nvme/strategies.json strategies.json
measure nvme-hipri "nvme0n1" --filename=/dev/nvme0n1 --size=16m --hipri
measure nvme-interrupt "nvme0n1" --filename=/dev/nvme0n1 --size=16m
measure dm-crypt "secret nullb7" --filename=/dev/mapper/secret --size=8m
measure scsi_debug "sda" --filename=/dev/sda --size=8m
measure brd "ram0" --filename=/dev/ram0 --size=8m
"#;

/// What the one boot left, read into memory (its directory is gone).
struct Outcome {
    console: String,
    files: BTreeMap<String, String>,
}

static LAB: OnceLock<Result<Option<Outcome>, String>> = OnceLock::new();

/// The lab's outcome, booting it on first use; `None` when skipped.
fn lab() -> Option<&'static Outcome> {
    let got = LAB.get_or_init(|| {
        let null = "null_blk:memory_backed=1,size=64";
        let run = Lab::new()
            .device(null)
            .device(null)
            .device(null)
            .device(null)
            .device(null)
            .device("null_blk:memory_backed=1,size=64,irqmode=2,completion_nsec=100000")
            .device(null)
            .device(null)
            .device("nvme:size=64M,poll_queues=2")
            .device("md:md0,raid0,nullb0,nullb1,chunk=64")
            .device("md:md1,raid5,nullb2,nullb3,nullb4,chunk=64")
            .device(&format!("dm-delay:slow,nullb6,{DELAY_MS}"))
            .device("md:md2,raid0,nullb5,slow,chunk=64")
            .device("dm-crypt:secret,nullb7")
            .device("scsi_debug:dev_size_mb=32,delay=0")
            .device("brd:rd_nr=1,rd_size=32768")
            .script(SCRIPT)
            .limit(Duration::from_secs(400))
            .try_run();
        match run.code {
            0 => {}
            77 => {
                eprintln!("skipped: {}", run.stderr.trim());
                return Ok(None);
            }
            c => return Err(format!("the lab VM failed (exit {c}):\n{}", run.stderr)),
        }
        for (step, s) in run.steps() {
            eprintln!("lab step {step}: {s:.1} s");
        }
        let files = std::fs::read_dir(run.out())
            .unwrap()
            .filter_map(|e| {
                let e = e.ok()?;
                let text = std::fs::read_to_string(e.path()).ok()?;
                Some((e.file_name().to_string_lossy().into_owned(), text))
            })
            .collect();
        Ok(Some(Outcome {
            console: run.console.clone(),
            files,
        }))
    });
    match got {
        Ok(o) => o.as_ref(),
        Err(e) => panic!("{e}"),
    }
}

impl Outcome {
    fn file(&self, name: &str) -> &str {
        self.files
            .get(name)
            .unwrap_or_else(|| panic!("the guest wrote no {name}:\n{}", self.console))
    }

    fn json(&self, name: &str) -> Value {
        serde_json::from_str(self.file(&format!("{name}.json"))).expect("the run's JSON")
    }

    /// Per device: the difference of its `/sys/block/*/stat` over a run.
    fn stat_delta(&self, name: &str) -> BTreeMap<String, Vec<u64>> {
        let read = |suffix: &str| -> BTreeMap<String, Vec<u64>> {
            self.file(&format!("{name}.{suffix}"))
                .lines()
                .filter_map(|l| {
                    let (dev, rest) = l.split_once(' ')?;
                    Some((dev.to_string(), block_stat(rest)))
                })
                .collect()
        };
        let (before, after) = (read("before"), read("after"));
        after
            .into_iter()
            .map(|(d, a)| {
                let b = &before[&d];
                (d, a.iter().zip(b).map(|(a, b)| a - b).collect())
            })
            .collect()
    }

    /// Interrupts taken on the NVMe I/O queues over a run.
    fn nvme_irqs(&self, name: &str) -> u64 {
        let count = |suffix: &str| -> u64 {
            let per_cpu = |l: &str| -> u64 {
                l.split_whitespace()
                    .skip(1)
                    .map_while(|w| w.parse::<u64>().ok())
                    .sum()
            };
            self.file(&format!("{name}.{suffix}"))
                .lines()
                .map(per_cpu)
                .sum()
        };
        count("irq-after") - count("irq-before")
    }
}

/// The run's own read count, checked whole and without errors.
fn reads_done(o: &Outcome, name: &str) -> u64 {
    let job = &o.json(name)["jobs"][0];
    assert_eq!(job["error"], 0, "{name}: {job}");
    job["read"]["total_ios"].as_u64().expect("total_ios")
}

/// The device's reads over the run agree with ssdready's: every I/O of the
/// job, plus at most 1 % (ssdready's own look at the device before it).
fn assert_device_counts(o: &Outcome, name: &str, dev: &str, ios: u64) {
    let d = &o.stat_delta(name)[dev];
    assert!(
        d[0] >= ios && d[0] <= ios + ios / 100,
        "{name}: {dev} completed {} reads, ssdready {ios}",
        d[0]
    );
    assert_eq!(d[2], d[0] * 8, "{name}: {dev} sectors read vs 4 KiB reads");
}

/// md RAID: the array and its members agree with ssdready and with each
/// other (4 KiB reads within a chunk reach exactly one member each).
fn check_md(name: &str, md: &str, members: &[&str]) {
    let Some(o) = lab() else { return };
    let listed: Vec<&str> = o.file(&format!("{md}.slaves")).split_whitespace().collect();
    assert_eq!(listed, members, "{md}'s members (/sys/block/{md}/slaves)");
    let ios = reads_done(o, name);
    assert_eq!(ios, IOS, "{name}: a size-bound run reads it all");
    assert_device_counts(o, name, md, ios);
    let util = &o.json(name)["disk_util"][0];
    assert_eq!(util["name"], md, "{util}");
    assert_eq!(util["read_ios"], ios, "{name}: ssdready's own disk counts");
    let delta = o.stat_delta(name);
    let on_members: u64 = members.iter().map(|m| delta[*m][0]).sum();
    let each: Vec<u64> = members.iter().map(|m| delta[*m][0]).collect();
    eprintln!(
        "{name}: ssdready {ios} reads, {md} {}, members {each:?}",
        delta[md][0]
    );
    assert_eq!(on_members, delta[md][0], "{name}: members' reads vs {md}'s");
    for m in members {
        assert!(
            delta[*m][0] > ios / (4 * members.len() as u64),
            "{name}: {m} took {} of {ios} reads",
            delta[*m][0]
        );
    }
}

#[test]
fn md_raid0_over_null_blk_is_read_and_counted_per_member() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    check_md("raid0", "md0", &["nullb0", "nullb1"]);
}

#[test]
fn md_raid5_over_null_blk_is_read_and_counted_per_member() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    check_md("raid5", "md1", &["nullb2", "nullb3", "nullb4"]);
}

#[test]
fn a_raid_member_behind_dm_delay_takes_longer_per_io() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(o) = lab() else { return };
    let listed: Vec<&str> = o.file("md2.slaves").split_whitespace().collect();
    assert_eq!(listed.len(), 2, "md2's members: {listed:?}");
    let ios = reads_done(o, "slow-member");
    let d = o.stat_delta("slow-member");
    assert_device_counts(o, "slow-member", "md2", ios);
    assert_eq!(d["nullb5"][0] + d["slow"][0], d["md2"][0], "members vs md2");
    assert_eq!(d["slow"][0], d["nullb6"][0], "dm-delay passes each read on");
    // Time per read (field 4: ms spent on reads) on each member.
    let per_io = |dev: &str| d[dev][3] as f64 / d[dev][0].max(1) as f64;
    let (fast, slow) = (per_io("nullb5"), per_io("slow"));
    eprintln!("time per read: fast member {fast:.2} ms, slow member {slow:.2} ms");
    assert!(d["slow"][0] > 20, "too few reads on the slow member: {d:?}");
    let delay = f64::from(DELAY_MS);
    assert!(slow >= 0.9 * delay, "slow member {slow:.2} ms per read");
    assert!(
        fast < delay / 4.0 && slow > 4.0 * fast,
        "fast {fast:.2} ms vs slow {slow:.2} ms per read"
    );
}

#[test]
fn polled_reads_on_nvme_poll_queues_take_no_interrupts() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(o) = lab() else { return };
    for (name, ran) in [("nvme-hipri", "iopoll"), ("nvme-interrupt", "interrupt")] {
        let ios = reads_done(o, name);
        assert_eq!(ios, IOS, "{name}");
        assert_device_counts(o, name, "nvme0n1", ios);
        let strategy = &o.json(name)["jobs"][0]["ssdready"]["strategy"];
        assert_eq!(strategy["ran"], ran, "{name}: {strategy}");
    }
    let (polled, control) = (o.nvme_irqs("nvme-hipri"), o.nvme_irqs("nvme-interrupt"));
    eprintln!("NVMe I/O queue interrupts: {polled} polled, {control} without hipri");
    assert_eq!(polled, 0, "interrupts on the NVMe queues while polled");
    // The control: the same reads without hipri complete by interrupt.
    assert!(control > 0, "no interrupt counted at all");
}

#[test]
fn the_nvme_drivers_poll_queues_are_told_from_its_interrupt_driven_ones() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(o) = lab() else { return };
    let limits: Value = serde_json::from_str(o.file("nvme-limits.json")).expect("limits JSON");
    let dev = limits["inventory"]["devices"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["disk"] == "nvme0n1"))
        .unwrap_or_else(|| panic!("no nvme0n1 in {limits}"));
    let q = &dev["queue"];
    // Booted with nvme.poll_queues=2 on 2 CPUs: 2 queues by interrupt, 2 polled.
    assert_eq!(q["poll_queues"], 2, "{q}");
    assert_eq!(q["hw_queues"], 4, "{q}");
    assert_eq!(q["io_poll"], true, "{q}");
    assert!(q["poll_queues_source"].is_string(), "{q}");
}

#[test]
fn the_strategies_poll_an_nvme_device_with_poll_queues_by_iopoll() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(o) = lab() else { return };
    let doc: Value = serde_json::from_str(o.file("strategies.json")).expect("strategies.json");
    let results = doc["results"].as_array().expect("results");
    let ran = |strategy: &str| -> Vec<&str> {
        results
            .iter()
            .filter(|r| r["strategy"] == strategy)
            .filter_map(|r| r["ran"].as_str())
            .collect()
    };
    let polled = ran("sync+poll");
    assert!(!polled.is_empty(), "no sync+poll result: {doc}");
    assert!(
        polled.iter().all(|r| *r == "iopoll"),
        "sync+poll ran as {polled:?}"
    );
    assert!(ran("async+intr").iter().all(|r| *r == "interrupt"), "{doc}");
    // ssdready's own count of the controller's queue interrupts over each
    // run (/proc/interrupts in the guest; emulated, so no speed is read).
    let irqs = |strategy: &str| -> Vec<(u64, &Value)> {
        results
            .iter()
            .filter(|r| r["strategy"] == strategy)
            .map(|r| (r["device_interrupts"].as_u64().expect("counted"), r))
            .collect()
    };
    for (n, r) in irqs("sync+poll") {
        eprintln!(
            "emulated: {} {}: {n} interrupts",
            r["strategy"], r["pattern"]
        );
        assert_eq!(n, 0, "interrupts while polled: {r}");
        assert_eq!(r["polled"], true, "{r}");
        assert_eq!(r["interrupt_check"], "no interrupt on its queues: polled");
    }
    let intr = irqs("async+intr");
    assert!(!intr.is_empty(), "{doc}");
    for (n, r) in intr {
        eprintln!(
            "emulated: {} {}: {n} interrupts",
            r["strategy"], r["pattern"]
        );
        assert!(n > 0, "an interrupt-driven run took no interrupt: {r}");
        assert!(r["device_interrupts_per_io"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r.get("polled").is_none(), "no verdict without iopoll: {r}");
    }
}

#[test]
fn dm_crypt_scsi_debug_and_brd_are_read_and_counted_where_they_count() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(o) = lab() else { return };
    for (name, dev) in [("dm-crypt", "secret"), ("scsi_debug", "sda")] {
        let ios = reads_done(o, name);
        assert_eq!(ios, IOS / 2, "{name}");
        assert_device_counts(o, name, dev, ios);
    }
    // brd is bio-based and calls no accounting: /sys/block/ram0/stat stays
    // 0 on this kernel (queue/iostats 1 or not); where it counts, it agrees.
    let ios = reads_done(o, "brd");
    assert_eq!(ios, IOS / 2, "brd");
    if o.stat_delta("brd")["ram0"][0] > 0 {
        assert_device_counts(o, "brd", "ram0", ios);
    }
    let d = o.stat_delta("dm-crypt");
    assert_eq!(
        d["secret"][0], d["nullb7"][0],
        "dm-crypt passes each read on"
    );
}

#[test]
fn the_guest_is_labelled_emulated() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(o) = lab() else { return };
    assert!(
        o.console.contains("@@ lab-env emulated-vm"),
        "{}",
        o.console
    );
    assert!(o.file("LAB-VM-EMULATED").contains("software emulation"));
}

/// A guest whose script fails: exit 1, the failing command and the
/// console's tail said; nothing left (no QEMU, no work files).
#[test]
fn a_failing_guest_script_is_reported_with_its_trace_and_leaves_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let run = Lab::new()
        .script("echo before\nfalse\necho after")
        .try_run();
    if run.code == 77 {
        eprintln!("skipped: {}", run.stderr.trim());
        return;
    }
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("the script failed"), "{}", run.stderr);
    assert!(
        run.stderr.contains("+ false"),
        "the failing command:\n{}",
        run.stderr
    );
    assert!(!run.console.contains("after"), "{}", run.console);
    assert_eq!(run.leftovers(), Vec::<String>::new());
}

/// The guest's kernel crashing while it unpacks its initramfs (seen once
/// under software emulation: an int3 oops in the timer softirq) is this
/// machine's, said and skipped; a failure once the lab is up is not.
#[test]
fn a_guest_kernel_that_crashes_while_booting_is_skipped_not_failed() {
    let console = "[    1.312481] Modules linked in:\n\
                   [    1.312744] Oops: int3: 0000 [#2] PREEMPT SMP NOPTI\n\
                   [    1.312801] RIP: 0010:run_timer_softirq+0xd7/0xf0\n";
    assert_eq!(
        crashed_booting(1, console).as_deref(),
        Some("[    1.312744] Oops: int3: 0000 [#2] PREEMPT SMP NOPTI")
    );
    let up = format!("@@ lab-ready 1.9\n{console}");
    assert_eq!(crashed_booting(1, &up), None);
    assert_eq!(crashed_booting(0, console), None);
    assert_eq!(crashed_booting(1, "@@ lab-ready 1.9\n+ false\n"), None);
}

/// A guest that does not boot in time is killed; nothing is left.
#[test]
fn a_guest_past_its_boot_limit_is_killed_and_leaves_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let run = Lab::new()
        .script("true")
        .boot_limit(Duration::from_secs(1))
        .try_run();
    if run.code == 77 {
        eprintln!("skipped: {}", run.stderr.trim());
        return;
    }
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("did not boot within 1 s"),
        "{}",
        run.stderr
    );
    assert_eq!(run.leftovers(), Vec::<String>::new());
}

/// Bad input: one line naming what and the allowed values, exit 2, nothing
/// written (no output directory made).
#[test]
fn the_lab_script_refuses_bad_devices_in_one_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for (spec, says) in [
        (
            "floppy",
            "unknown kind 'floppy' (allowed: null_blk, nvme, md",
        ),
        ("nvme:size=lots", "size 'lots' (like 64M)"),
        ("md:md0,raid5", "md:NAME,LEVEL,DEVICE…"),
        ("dm-delay:slow,nullb0,soon", "a whole number above 0"),
        (
            "dm-striped:vol,64,nullb0",
            "dm-striped:NAME,CHUNK_KIB,DEVICE,DEVICE…",
        ),
        ("dm-concat:vol,nullb0", "dm-concat:NAME,DEVICE,DEVICE…"),
    ] {
        let o = std::process::Command::new("bash")
            .arg(lab_script())
            .args(["--device", spec, "--run", "true", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{spec}: {err}");
        assert_eq!(err.lines().count(), 1, "{spec}: {err}");
        assert!(err.contains(says), "{spec}: {err}");
        assert!(!out.exists(), "{spec}: the output directory was made");
    }
}
