//! `--profile` and `--decompose` on a loop device over /dev/shm (root
//! only): ≥ 80 % of busy CPU in named layers, the rest a tail; every CPU-second of the window
//! accounted for; the layers' CPU per I/O within 20 % of the whole-system
//! figure at QD 1 and at saturation; the per-I/O split adds up.

use crate::common;
use common::*;
use serde_json::Value;
use std::process::Command;

/// The tests of this file run one at a time: the checks are against
/// whole-system CPU, and two runs at once would each count the other's (on
/// 16 CPUs the three agreement tests in parallel disagreed every time; one
/// at a time they agreed).
static SYSTEM_WIDE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn alone() -> std::sync::MutexGuard<'static, ()> {
    SYSTEM_WIDE.lock().unwrap_or_else(|e| e.into_inner())
}

fn profiled_run(dev: &str, engine: &str, qd: &str) -> Option<Value> {
    let f = format!("--filename={dev}");
    let e = format!("--ioengine={engine}");
    let q = format!("--iodepth={qd}");
    let r = run_json(&[
        &f,
        "--rw=randread",
        &e,
        "--direct=1",
        &q,
        "--runtime=3",
        "--time_based",
        "--profile",
    ]);
    if r["phases"][0]["profile"].is_null() {
        eprintln!("skipped: profiling not permitted here: {:?}", r["warnings"]);
        return None;
    }
    Some(r)
}

/// The layers of the I/O's path are named; what is left is a long tail
/// of the kernel's generic functions, one to three samples each, which
/// changes from run to run (9–16 % of the busy samples on two VMs, in a
/// different set of functions each time, before rules were added for the
/// ones seen). A layer left unnamed would be no tail: no unmatched
/// function may hold 5 % of the busy samples.
fn assert_layers_named(p: &Value) {
    let named = p["named_share_of_busy_pct"].as_f64().unwrap();
    let unmatched = p["unmatched_symbols"].as_array().unwrap();
    let busy = p["busy_samples"].as_f64().unwrap();
    let largest = unmatched.first().map_or(0.0, |u| u[1].as_f64().unwrap());
    assert!(
        named >= 80.0 && largest < 0.05 * busy,
        "{named:.1}% of busy CPU in named layers, {busy} busy samples; unmatched: {}; other kernel by leaf: {:?}",
        p["unmatched_symbols"],
        p["top_functions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t[1] == "other kernel")
            .collect::<Vec<_>>()
    );
}

/// The CPU figures of one profiled run: every CPU-second of the window
/// accounted for (samples or late-timer gaps), the layers named
/// ([`assert_layers_named`]), whole-system CPU ≥ the process's own with
/// both sources named, and the cross-check of the profile's busy time
/// against the system figure present. Returns the profile's busy CPU per I/O over the system's.
fn check_profiled_run(dev: &str, engine: &str, qd: &str) -> Option<(f64, bool)> {
    let r = profiled_run(dev, engine, qd)?;
    let phase = &r["phases"][0];
    let p = &phase["profile"];
    let cpu = &phase["cpu"];
    let ios = cpu["ios"].as_f64().unwrap();
    assert_layers_named(p);
    assert!(p["layers"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["layer"] == "block-core"));
    // ssdready's own user-mode samples are named from its symbol table.
    let own: Vec<&Value> = p["top_functions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t[1] == "ssdready (user)")
        .collect();
    assert!(
        own.is_empty() || own.iter().any(|t| t[0] != "?"),
        "unnamed: {own:?}"
    );
    let layers = p["layers"].as_array().unwrap();
    let all_s: f64 = layers
        .iter()
        .map(|l| l["ns_per_io"].as_f64().unwrap())
        .sum::<f64>()
        * ios
        / 1e9
        + p["late_timer_ns"].as_f64().unwrap() / 1e9;
    let unsampled_s = p["unsampled_ns"].as_f64().unwrap() / 1e9;
    let cpus = r["platform"]["cpus_online"].as_f64().unwrap();
    let window_s = phase["window_ns"].as_f64().unwrap() / 1e9;
    // Every CPU-second accounted for, none twice: samples and late gaps
    // never stand for more than the window, and what they leave is the
    // unsampled time (idle CPUs whose timer stops: 16-vCPU Firecracker).
    assert!(
        all_s <= cpus * window_s * 1.03,
        "samples stand for {all_s:.2} CPU-s of {:.2}",
        cpus * window_s
    );
    assert!(
        (all_s + unsampled_s - cpus * window_s).abs() / (cpus * window_s) < 0.03,
        "samples cover {all_s:.2} CPU-s + {unsampled_s:.2} unsampled of {:.2}",
        cpus * window_s
    );
    let src = &cpu["sources"];
    assert!(src["system"].as_str().unwrap().contains("idle"), "{src}");
    assert!(
        src["process"].as_str().unwrap().contains("getrusage"),
        "{src}"
    );
    let system = cpu["per_io"]["system_ns"].as_f64().unwrap();
    let err = src["system_error_ns"].as_f64().unwrap();
    let process = cpu["per_io"]["process_ns"].as_f64().unwrap();
    assert!(
        system + err >= process,
        "system {system} ± {err} < process {process}"
    );
    let checks = phase["checks"].as_array().unwrap();
    let check = checks.iter().find(|c| c["a_source"] == "profile");
    assert!(check.is_some(), "no profile cross-check: {checks:?}");
    let flagged = check.is_some_and(|c| c["agree"] == false);
    // As the run's own check does: a vCPU the hypervisor stopped is
    // charged to the code it stopped in, and /proc/stat takes it out.
    let steal = src["steal_ns"].as_f64().unwrap_or(0.0);
    let busy = p["busy_ns_per_io"].as_f64().unwrap() - steal;
    eprintln!(
        "{engine} QD {qd}: profile {busy:.0} ns/IO less steal {steal:.0}, system {system:.0} ± {err:.0}, process {process:.0} ({} samples)",
        p["samples"]
    );
    Some((busy / system, flagged))
}

/// The profile's busy CPU within 20 % of the exact system figure (at QD 1
/// on a VM it used to come out 2-3× too high: idle gaps charged to busy
/// code), or, where sampling cannot be trusted, said so by the run itself.
/// On this project's AMD KVM guest, quiet, the sampling timer skips periods
/// on vCPUs that halt and wake ~100,000 times a second and the sampled
/// figure falls 20-40 % short at QD 1 (docs/measurement.md, "Where the CPU
/// goes at QD 1 on a VM"); the run's own cross-check must then mark the
/// layers and point to `--profile=exact`, whose agreement is tested in
/// profile_exact.rs. So: one of three runs agrees, or every run that does
/// not is flagged by its own check — a wrong figure is never silent.
fn profile_agrees(engine: &str, qd: &str) {
    let Some(l) = LoopDev::new(&format!("profile-{engine}-{qd}"), 256) else {
        return;
    };
    let mut ratios = Vec::new();
    for _ in 0..3 {
        let Some((ratio, flagged)) = check_profiled_run(&l.dev, engine, qd) else {
            return;
        };
        if (ratio - 1.0).abs() <= 0.2 {
            return;
        }
        assert!(
            flagged,
            "{engine} QD {qd}: profile/system {ratio:.2} and the run's own check agrees"
        );
        ratios.push(ratio);
    }
    eprintln!(
        "{engine} QD {qd}: the sampled profile is off here ({ratios:.2?} of the system figure) \
         and every run said so; --profile=exact is the figure to use (profile_exact.rs)"
    );
}

#[test]
fn profile_at_qd1_psync_agrees_with_the_system_figure() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    profile_agrees("psync", "1");
}

#[test]
fn profile_at_qd1_io_uring_agrees_with_the_system_figure() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    profile_agrees("io_uring", "1");
}

#[test]
fn profile_at_qd32_io_uring_agrees_with_the_system_figure() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    profile_agrees("io_uring", "32");
}

/// The run's decomposition when the tp_btf programs ran, else None with
/// the reason printed.
fn tp_btf_decomposition(r: &Value) -> Option<&Value> {
    let d = &r["phases"][0]["decomposition"];
    if d.is_null() || d["flavour"] != "tp_btf" {
        eprintln!(
            "skipped: tp_btf programs not permitted here: {:?}",
            r["warnings"]
        );
        return None;
    }
    Some(d)
}

/// `--decompose` on a loop device (root): the kernel saw this run's I/Os,
/// above + block + device adds up to the app's mean, and block + device
/// matches /sys/block/X/stat's mean within 5 %.
#[test]
fn decomposition_adds_up_and_matches_diskstats() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    let Some(l) = LoopDev::new("decompose", 256) else {
        return;
    };
    let f = format!("--filename={}", l.dev);
    let r = run_json(&[
        &f,
        "--rw=randread",
        "--ioengine=io_uring",
        "--direct=1",
        "--iodepth=16",
        "--runtime=2",
        "--time_based",
        "--decompose",
    ]);
    let phase = &r["phases"][0];
    let d = &phase["decomposition"];
    if d.is_null() {
        eprintln!("skipped: eBPF not permitted here: {:?}", r["warnings"]);
        return;
    }
    let app = d["app_mean_ns"].as_f64().unwrap();
    let below = d["block_and_below"]["mean_ns"].as_f64().unwrap();
    let dev = d["driver_and_device"]["mean_ns"].as_f64().unwrap();
    let above = d["above_block_mean_ns"]
        .as_f64()
        .expect("counts agree on a loop device");
    let block = d["block_layer_mean_ns"].as_f64().unwrap();
    // I/Os in flight at either edge of the window (≤ iodepth each) may be counted on one side only.
    let (n, ios) = (
        d["block_and_below"]["n"].as_f64().unwrap(),
        d["app_ios"].as_f64().unwrap(),
    );
    assert!(
        (n - ios).abs() <= 32.0 + ios * 0.001,
        "kernel saw {n} bios, ssdready completed {ios} I/Os"
    );
    assert!(
        above > 0.0 && block > 0.0 && dev > 0.0,
        "above {above} block {block} device {dev}"
    );
    assert!(((above + block + dev) - app).abs() / app < 0.05);
    let stat = phase["disks"][0]["block_mean_ns"].as_f64().unwrap();
    eprintln!("block+device {below:.0} ns (eBPF) vs {stat:.0} ns (/sys/block/X/stat)");
    check_against_diskstats(phase, below, stat);
    assert!(
        d["block_and_below"]["percentiles"]
            .as_array()
            .unwrap()
            .len()
            >= 5
    );
    // The submission-side block layer (io_start → rq_issue) is part of the
    // block layer total (the difference of means also holds the completion side).
    let blk_hist = d["block_layer"]["mean_ns"].as_f64().unwrap();
    assert!(
        blk_hist > 0.0 && blk_hist <= block * 1.25,
        "block layer {blk_hist:.0} vs {block:.0}"
    );
}

/// Block + device from eBPF (`below`) against /sys/block/X/stat's mean
/// (`stat`): within 5 % on a quiet machine. Under load the two clocks drift
/// apart (diskstats starts a request's time where it is accounted, the
/// tracepoint where it is issued, and a preempted CPU between them counts
/// in one only: 16 % once at load average 6): then the run must say so in
/// its cross-checks (it allows 5 % and diskstats' rounding; 6 % here
/// leaves that rounding room), and the two stay within 25 %.
fn check_against_diskstats(phase: &Value, below: f64, stat: f64) {
    let gap = (below - stat).abs() / stat;
    assert!(gap < 0.25, "eBPF {below:.0} vs diskstats {stat:.0}");
    if gap >= 0.06 {
        let flagged = phase["checks"].as_array().unwrap().iter().any(|c| {
            c["quantity"]
                .as_str()
                .is_some_and(|q| q.starts_with("block-and-below mean latency"))
                && c["agree"] == false
        });
        assert!(
            flagged,
            "eBPF {below:.0} vs diskstats {stat:.0} and no disagreement said: {}",
            phase["checks"]
        );
    }
}

/// The per-I/O join (tp_btf): nearly every I/O is found in the kernel's
/// record; for each I/O the four parts add up to its latency, so their means
/// add up to the joined I/Os' mean, which is the app's mean; the per-I/O
/// driver-and-device and block-layer parts agree with the kernel's own
/// histograms of all I/Os. Runs with an I/O scheduler, so requests are
/// issued from the scheduler as well as directly.
#[test]
fn per_io_split_joins_every_io_and_adds_up() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    let Some(l) = LoopDev::new("join", 256) else {
        return;
    };
    let name = l.dev.trim_start_matches("/dev/");
    let sched = Sched(format!("/sys/block/{name}/queue/scheduler"));
    let deadline = std::fs::write(&sched.0, "mq-deadline").is_ok();
    if !deadline {
        eprintln!("note: mq-deadline not available; testing with the default scheduler");
    }
    let f = format!("--filename={}", l.dev);
    let r = run_json(&[
        &f,
        "--rw=randrw",
        "--ioengine=io_uring",
        "--direct=1",
        "--decompose",
        "--iodepth=8",
        "--runtime=2",
        "--time_based",
    ]);
    let Some(d) = tp_btf_decomposition(&r) else {
        return;
    };
    let p = &d["per_io"];
    let f64_of = |v: &Value| v.as_f64().unwrap();
    let (matched, unmatched) = (f64_of(&p["matched"]), f64_of(&p["unmatched"]));
    let app_ios = f64_of(&d["app_ios"]);
    assert!(
        matched >= 0.99 * app_ios && matched + unmatched == app_ios,
        "joined {matched} + {unmatched} of {app_ios}"
    );
    let mean = |k: &str| f64_of(&p[k]["mean_ns"]);
    let parts = mean("above_block_submit")
        + mean("block_layer")
        + mean("driver_and_device")
        + mean("completion");
    let total = mean("total");
    assert!(
        (parts - total).abs() / total < 0.01,
        "parts {parts:.0} vs total {total:.0}"
    );
    let app = f64_of(&d["app_mean_ns"]);
    assert!(
        (total - app).abs() / app < 0.05,
        "joined {total:.0} vs app {app:.0}"
    );
    for k in [
        "above_block_submit",
        "block_layer",
        "driver_and_device",
        "completion",
    ] {
        assert!(mean(k) > 0.0, "{k}");
    }
    check_against_kernel_histograms(d, matched, deadline);
    // Shares of the parts add up to 100 %.
    let shares: f64 = d["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| f64_of(&x["share_pct"]))
        .sum();
    assert!((shares - 100.0).abs() < 1.0, "shares {shares}");
}

/// A device's scheduler, put back to none when dropped.
struct Sched(String);

impl Drop for Sched {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.0, "none");
    }
}

/// The kernel's histograms count every I/O with ±12.5 % buckets but exact
/// sums; the joined means (of `matched` I/Os) should match within 5 % (10 %
/// for the short block-layer part). Through mq-deadline (`deadline`) every
/// request is inserted, then dispatched: the wait in its queue is part of
/// the block layer's time.
fn check_against_kernel_histograms(d: &Value, matched: f64, deadline: bool) {
    let p = &d["per_io"];
    let f64_of = |v: &Value| v.as_f64().unwrap();
    let mean = |k: &str| f64_of(&p[k]["mean_ns"]);
    let dev_k = f64_of(&d["driver_and_device"]["mean_ns"]);
    let dev_j = mean("driver_and_device");
    assert!(
        (dev_k - dev_j).abs() / dev_k < 0.05,
        "device {dev_j:.0} vs kernel {dev_k:.0}"
    );
    let blk_k = f64_of(&d["block_layer"]["mean_ns"]);
    let blk_j = mean("block_layer");
    assert!(
        (blk_k - blk_j).abs() / blk_k < 0.10,
        "block {blk_j:.0} vs kernel {blk_k:.0}"
    );
    // Through mq-deadline every request is inserted, then dispatched: the
    // wait in its queue is part of the block layer's time.
    if deadline {
        let q = &p["scheduler_queue"];
        assert!(f64_of(&q["n"]) >= 0.99 * matched, "queued {q}");
        assert!(
            f64_of(&q["mean_ns"]) < blk_j,
            "queued {q} vs block {blk_j:.0}"
        );
    }
}

/// The default run is cheap: no eBPF unless `--decompose` asks (the kernel's
/// fixed price of BPF on four tracepoints alone exceeds the 3 % budget);
/// `--decompose` loads or says why; the emulator never decomposes.
#[test]
fn decompose_is_off_by_default_and_on_when_asked() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    let Some(l) = LoopDev::new("deflt", 64) else {
        return;
    };
    let f = format!("--filename={}", l.dev);
    let args = ["--rw=randread", "--direct=1", "--number_ios=2000"];
    let mut on = vec![f.as_str()];
    on.extend(args);
    let r = run_json(&on);
    assert!(
        r["phases"][0]["decomposition"].is_null(),
        "decomposed by default"
    );
    on.push("--decompose");
    let r = run_json(&on);
    let loaded = !r["phases"][0]["decomposition"].is_null();
    let warned = r["warnings"].to_string().contains("--decompose");
    assert!(loaded || warned, "neither decomposed nor said why: {r}");
    let r = run_json(&[
        "--rw=randread",
        "--size=16m",
        "--number_ios=2000",
        "--decompose",
    ]);
    assert!(
        r["phases"][0]["decomposition"].is_null(),
        "emulator run decomposed"
    );
}

/// A file on ext4 (on a loop device): its I/Os are found through the file's
/// extent map (FIEMAP) and joined with the block layer's records.
#[test]
fn per_io_split_joins_file_io_through_the_extent_map() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    if Command::new("mkfs.ext4").arg("-V").output().is_err() {
        eprintln!("skipped: mkfs.ext4 (e2fsprogs) is not installed");
        return;
    }
    let Some(l) = LoopDev::new("fiemap", 128) else {
        return;
    };
    let mnt = tempfile::tempdir().unwrap();
    let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
    if !ok(Command::new("mkfs.ext4").args(["-q", "-F", &l.dev])) {
        eprintln!("skipped: mkfs.ext4 failed");
        return;
    }
    let m = mnt.path().display().to_string();
    if !ok(Command::new("mount").args([&l.dev, &m])) {
        eprintln!("skipped: mount failed");
        return;
    }
    struct Unmount(String);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(m.clone());
    let f = format!("--filename={m}/data");
    let r = run_json(&[
        &f,
        "--size=32m",
        "--rw=randread",
        "--ioengine=io_uring",
        "--direct=1",
        "--decompose",
        "--iodepth=4",
    ]);
    let Some(d) = tp_btf_decomposition(&r) else {
        return;
    };
    // One pass over the 32 MiB file: 8192 I/Os.
    let matched = d["per_io"]["matched"].as_f64().unwrap_or(0.0);
    let ios = d["app_ios"].as_f64().unwrap();
    assert_eq!(ios, 8192.0);
    assert!(matched >= 0.99 * ios, "joined {matched} of {ios}: {d}");
}

/// Without BTF (forced): raw tracepoints, the kernel parts, the above-block
/// part as a mean, and a warning that says why there is no per-I/O split.
#[test]
fn without_btf_the_split_falls_back_to_means_and_says_so() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    let Some(l) = LoopDev::new("nobtf", 64) else {
        return;
    };
    let f = format!("--filename={}", l.dev);
    let out = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .env("SSDREADY_BTF", "off")
        .args([
            "run",
            "--output-format=native",
            "--quiet",
            &f,
            "--rw=randread",
            "--direct=1",
            "--decompose",
            "--iodepth=4",
            "--ioengine=io_uring",
            "--number_ios=5000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &r["phases"][0]["decomposition"];
    if d.is_null() {
        eprintln!("skipped: eBPF not permitted here: {:?}", r["warnings"]);
        return;
    }
    assert_eq!(d["flavour"], "raw_tp");
    assert!(d["per_io"].is_null());
    assert!(d["above_block_mean_ns"].as_f64().unwrap() > 0.0, "{d}");
    assert!(d["driver_and_device"]["n"].as_u64().unwrap() >= 4990);
    assert!(
        r["warnings"].to_string().contains("raw tracepoints only"),
        "{}",
        r["warnings"]
    );
}

/// Not root: --decompose and --profile cannot load; the run completes and
/// each says what it could not measure and why.
#[test]
fn without_root_the_run_completes_and_says_what_it_could_not_measure() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    if !is_root() {
        eprintln!("skipped: needs root to drop to an unprivileged user");
        return;
    }
    // A file on the root file system (a block device), in sticky /tmp where
    // nobody may create it.
    let file = format!("/tmp/ssdready-nobody-{}.dat", std::process::id());
    struct Gone(String);
    impl Drop for Gone {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _gone = Gone(file.clone());
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "run",
            "--output-format=native",
            "--quiet",
            &format!("--filename={file}"),
            "--rw=randread",
            "--size=16m",
            "--number_ios=1000",
            "--decompose",
            "--profile",
        ])
        .output();
    let Ok(out) = out else {
        eprintln!("skipped: setpriv is not installed");
        return;
    };
    if out.status.code() == Some(127) || out.status.code() == Some(126) {
        eprintln!("skipped: the binary is not reachable by an unprivileged user");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r["phases"][0]["decomposition"].is_null());
    assert!(r["phases"][0]["profile"].is_null());
    let w = r["warnings"].to_string();
    assert!(w.contains("--decompose") && w.contains("needs root"), "{w}");
    assert!(w.contains("--profile"), "{w}");
}

/// fio's JSON carries what the phase measured beyond fio: the `ssdready`
/// object of a job entry holds the phase's profile, decomposition and
/// cross-checks when they ran (the native result has them too), and none of
/// them when they did not.
#[test]
fn fio_json_carries_the_phase_profile_decomposition_and_checks() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _alone = alone();
    let Some(l) = LoopDev::new("fiojs", 64) else {
        return;
    };
    let f = format!("--filename={}", l.dev);
    let base = [
        "run",
        "--name=j",
        f.as_str(),
        "--rw=randread",
        "--direct=1",
        "--number_ios=4000",
        "--output-format=json",
    ];
    let fio_json = |extra: &[&str]| -> (Value, String) {
        let mut a: Vec<&str> = base.to_vec();
        a.extend(extra);
        let o = ssdready(&a);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "{err}");
        (serde_json::from_slice(&o.stdout).expect("fio JSON"), err)
    };
    let (plain, _) = fio_json(&[]);
    let ours = &plain["jobs"][0]["ssdready"];
    assert!(
        ours["profile"].is_null() && ours["decomposition"].is_null(),
        "{ours}"
    );
    assert!(ours["checks"].is_array(), "no cross-checks: {ours}");
    let (both, stderr) = fio_json(&["--profile", "--decompose"]);
    let ours = &both["jobs"][0]["ssdready"];
    if ours["profile"].is_null() {
        eprintln!("skipped: profiling not permitted here");
        return;
    }
    assert!(
        ours["profile"]["busy_samples"].as_u64().unwrap() > 0,
        "{}",
        ours["profile"]
    );
    assert!(ours["profile"]["layers"][0]["share_error_pct"].is_number());
    assert!(
        !ours["decomposition"].is_null() || stderr.contains("--decompose"),
        "neither decomposed nor said why: {stderr}"
    );
    assert!(
        ours["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["a_source"] == "profile"),
        "profile cross-check missing: {}",
        ours["checks"]
    );
}
