//! The emulator's limits (issue #9, items 3 and 4): a device or queue that
//! does not fit in memory is refused before anything is allocated (exit 2,
//! one line with the figures and the alternative, nothing written); no loop,
//! in real or virtual time, outlives its runtime or a Ctrl-C.
//!
//! Memory cases run under an address-space limit (`ulimit -v`) so that they
//! are refused on any machine, however much RAM it has.

use crate::common;
use common::*;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// 8 GiB of address space, in KiB for `ulimit -v`.
const LIMIT_KB: &str = "8388608";

/// ssdready under `ulimit -v LIMIT_KB`.
fn limited(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {LIMIT_KB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .output()
        .expect("run sh")
}

/// A refusal: exit 2, one line on stderr containing every `needle`, nothing
/// on stdout, and no output file.
fn assert_refused(out: &Output, out_file: Option<&std::path::Path>, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{n:?} not in: {err}");
    }
    assert!(out.stdout.is_empty(), "nothing on stdout");
    if let Some(f) = out_file {
        assert!(!f.exists(), "{} was written", f.display());
    }
}

#[test]
fn emulated_device_larger_than_memory_is_refused_not_aborted() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let res = dir.path().join("r.json");
    let o = format!("--output={}", res.display());
    let out = limited(&[
        "run",
        &o,
        "--name=x",
        "--filename=emu:nvme-tlc,size=64g",
        "--rw=randwrite",
        "--runtime=1",
        "--time_based",
    ]);
    assert_refused(
        &out,
        Some(&res),
        &[
            "emu:nvme-tlc,size=64g",
            "not enough memory",
            "data pages 64.0 GiB",
            "ulimit -v",
            "nocopy=1",
            "smaller size=",
        ],
    );
}

#[test]
fn terabyte_emulated_device_is_refused_not_aborted() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&[
        "run",
        "--name=x",
        "--filename=emu:null,size=1t",
        "--rw=read",
        "--runtime=1",
        "--time_based",
    ]);
    assert_refused(&out, None, &["data pages 1.0 TiB", "nocopy=1"]);
}

#[test]
fn offset_far_into_the_default_device_is_refused_not_aborted() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = limited(&[
        "run",
        "--name=x",
        "--offset=100g",
        "--size=1g",
        "--rw=randread",
        "--runtime=1",
        "--time_based",
    ]);
    assert_refused(
        &out,
        None,
        &["offset + size", "data pages 101.0 GiB", "nocopy=1"],
    );
}

#[test]
fn deep_queue_of_large_buffers_is_refused_not_oom_killed() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = limited(&[
        "run",
        "--name=x",
        "--filename=emu:null,size=64m",
        "--iodepth=65536",
        "--bs=1m",
        "--rw=randread",
        "--runtime=1",
        "--time_based",
    ]);
    assert_refused(
        &out,
        None,
        &["I/O buffers 64.0 GiB", "lower iodepth, bs or numjobs"],
    );
}

#[test]
fn parse_only_refuses_what_the_run_would_refuse() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let args = [
        "--parse-only",
        "--name=x",
        "--filename=emu:nvme-tlc,size=64g",
        "--rw=randwrite",
    ];
    let mut run = vec!["run"];
    run.extend_from_slice(&args);
    assert_refused(&limited(&run), None, &["data pages 64.0 GiB"]);
    // In virtual time there are no data pages: the FTL of 64 GiB fits.
    let mut sim = vec!["emu", "simulate"];
    sim.extend_from_slice(&args);
    let out = limited(&sim);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn nocopy_device_larger_than_memory_runs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = limited(&[
        "run",
        "--output-format=native",
        "--quiet",
        "--name=x",
        "--filename=emu:nvme-tlc,size=64g,nocopy=1",
        "--rw=randread",
        "--runtime=1",
        "--time_based",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["jobs"][0]["read"]["ios"].as_u64().unwrap() > 0);
}

fn simulate(args: &[&str]) -> (Output, Duration) {
    let mut a = vec!["emu", "simulate", "--output-format=native", "--quiet"];
    a.extend_from_slice(args);
    let t = Instant::now();
    let out = ssdready(&a);
    (out, t.elapsed())
}

#[test]
fn zero_latency_preset_time_based_simulation_ends_with_a_refusal() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (out, took) = simulate(&[
        "--name=x",
        "--filename=emu:null",
        "--rw=randread",
        "--runtime=10",
        "--time_based",
    ]);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_refused(
        &out,
        None,
        &[
            "virtual time stopped advancing",
            "reads take 0 ns",
            "host_ns=",
        ],
    );
}

#[test]
fn trims_on_nvm_lowlat_simulation_ends_with_a_refusal() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // cmd_bytes=0: without the command's own 64 B on the link, trims take no time.
    let (out, _) = simulate(&[
        "--name=x",
        "--filename=emu:nvm-lowlat,size=64m,cmd_bytes=0",
        "--rw=randtrim",
        "--runtime=10",
        "--time_based",
    ]);
    assert_refused(&out, None, &["trims take 0 ns"]);
    // Sized rather than timed: the trims end, but over no time: no rate.
    let (out, _) = simulate(&[
        "--name=x",
        "--filename=emu:nvm-lowlat,size=64m,cmd_bytes=0",
        "--rw=trim",
    ]);
    assert_refused(&out, None, &["took no simulated time", "no rate"]);
}

#[test]
fn all_zero_timings_simulation_ends_with_a_refusal() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (out, _) = simulate(&[
        "--name=x",
        "--filename=emu:x25e,size=256m,read_ns=0,program_ns=0,erase_ns=0,fw_cmd_ns=0,channel_mbps=0,link_mbps=0",
        "--rw=randrw",
        "--runtime=10",
        "--time_based",
    ]);
    assert_refused(&out, None, &["take 0 ns", "x25e"]);
}

#[test]
fn zero_latency_simulation_with_a_host_cost_reports_its_rate() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (out, _) = simulate(&[
        "--name=x",
        "--filename=emu:null,host_ns=1us",
        "--rw=randread",
        "--runtime=1",
        "--time_based",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let iops = v["jobs"][0]["read"]["iops"].as_f64().unwrap();
    // One I/O per microsecond of host time, at QD 1.
    assert!((990_000.0..1_010_000.0).contains(&iops), "{iops}");
}

#[test]
fn absurd_emulated_latency_is_refused_with_the_range() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&[
        "run",
        "--name=x",
        "--filename=emu:x25e,read_ns=1000000000000000",
        "--rw=randread",
    ]);
    assert_refused(&out, None, &["'read_ns'", "out of range (allowed: 0 to"]);
}

#[test]
fn long_emulated_io_ends_at_the_runtime_and_is_reported_abandoned() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = Instant::now();
    let out = ssdready(&[
        "run",
        "--output-format=native",
        "--quiet",
        "--name=x",
        "--filename=emu:dram-ssd,dram_per_4k_ns=500ms",
        "--rw=randread",
        "--bs=64k",
        "--iodepth=4",
        "--runtime=1",
        "--time_based",
    ]);
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        took < Duration::from_secs(4),
        "took {took:?}: waited for the 8 s I/Os"
    );
    assert!(
        err.contains("4 I/O(s) still in flight") && err.contains("abandoned"),
        "{err}"
    );
}

/// Start ssdready, let it get going, send SIGINT; returns the output and
/// how long it took to exit after the signal.
fn interrupt_after(wait: Duration, args: &[&str]) -> (Output, Duration) {
    let child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(wait);
    let t = Instant::now();
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (out, t.elapsed())
}

/// Well within ~100 ms on an idle machine; allowance for a loaded CI host.
const PROMPT: Duration = Duration::from_millis(300);

#[test]
fn long_emulated_io_stops_promptly_on_ctrl_c() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for mode in ["irq", "poll", "hybrid"] {
        // 16 pages × 0.5 s: 8 s per 64 KiB read.
        let f = format!("--filename=emu:dram-ssd,dram_per_4k_ns=500ms,completion={mode}");
        let (out, took) = interrupt_after(
            Duration::from_millis(700),
            &[
                "run",
                "--quiet",
                "--name=x",
                &f,
                "--rw=randread",
                "--bs=64k",
                "--iodepth=4",
                "--runtime=60",
                "--time_based",
            ],
        );
        assert_eq!(out.status.code(), Some(130), "{mode}");
        assert!(took < PROMPT, "{mode}: took {took:?} after SIGINT");
    }
}

#[test]
fn long_simulation_stops_promptly_on_ctrl_c() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (out, took) = interrupt_after(
        Duration::from_millis(700),
        &[
            "emu",
            "simulate",
            "--quiet",
            "--output-format=native",
            "--name=x",
            "--filename=emu:x25e,size=256m",
            "--rw=randwrite",
            "--runtime=100h",
            "--time_based",
        ],
    );
    assert_eq!(out.status.code(), Some(130));
    assert!(took < PROMPT, "took {took:?} after SIGINT");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interrupted"], true);
}

#[test]
fn ctrl_c_while_building_a_large_device_stops_promptly() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // A 512 GiB flash device in virtual time: ~1 GiB of FTL tables to
    // build; the signal lands while they are written (or just after).
    let (out, took) = interrupt_after(
        Duration::from_millis(150),
        &[
            "emu",
            "simulate",
            "--quiet",
            "--name=x",
            "--filename=emu:nvme-tlc,size=512g",
            "--rw=randwrite",
            "--runtime=100h",
            "--time_based",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < PROMPT, "took {took:?} after SIGINT");
}
