//! Temporal merge through the binary (issue #13, item 2): the options and
//! their refusals, the result's `temporal_merge` section, Shin's shape on
//! the emulated DRAM SSD in virtual time, window 0 as no merge, and a real
//! run through the STM and ATM layers.

use crate::common;
use common::*;
use serde_json::Value;

/// Shin's host, as the bench gives it: 5 µs per command issued, 15 µs more
/// from an interrupt to the thread, 5 µs for a sleeping thread to run again.
const DRAM_SSD: &str = "emu:dram-ssd,size=256m,host_cmd_ns=5us,irq_ns=15us,wake_ns=5us";

fn simulate(args: &[&str]) -> Value {
    let mut a = vec!["emu", "simulate", "--output-format=native", "--quiet"];
    a.extend_from_slice(args);
    let out = ssdready(&a);
    assert!(
        out.status.success(),
        "{a:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// 4 KiB random reads by 16 threads under a strategy: (MB/s, result).
fn strategy(completion: &str, merge: &str) -> (f64, Value) {
    let r = simulate(&[
        &format!("--filename={DRAM_SSD},completion={completion}"),
        "--rw=randread",
        "--bs=4k",
        "--numjobs=16",
        "--runtime=200ms",
        "--time_based",
        &format!("--temporal_merge={merge}"),
        "--merge_max=16",
    ]);
    let bw = r["jobs"][0]["read"]["bw_bytes_per_s"].as_f64().unwrap() / 1e6;
    (bw, r)
}

#[test]
fn the_dram_ssd_gives_shins_random_read_shape_in_virtual_time() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let peak = 4096.0 / 5.6e-6 / 1e6; // the DRAM unit: 5.6 µs per 4 KiB
    let (async_intr, _) = strategy("irq", "off");
    let (sync_poll, _) = strategy("poll", "off");
    let (stm, r) = strategy("poll", "stm");
    let (atm, _) = strategy("poll", "atm");
    assert!(async_intr < sync_poll, "{async_intr} vs {sync_poll}");
    assert!(stm >= 0.80 * peak, "stm {stm} MB/s of {peak}");
    assert!(stm >= 1.5 * sync_poll, "stm {stm} vs sync {sync_poll}");
    assert!(atm >= 1.5 * sync_poll, "atm {atm} vs sync {sync_poll}");
    let m = &r["jobs"][0]["temporal_merge"];
    assert_eq!(m["mode"], "stm");
    assert!(m["mean_extents"].as_f64().unwrap() > 1.0, "{m}");
    let hist = m["extents_histogram"].as_array().unwrap();
    let counted: u64 = hist
        .iter()
        .map(|c| c["extents"].as_u64().unwrap() * c["commands"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, m["requests"].as_u64().unwrap());
    assert!(hist.iter().all(|c| c["extents"].as_u64().unwrap() <= 16));
    assert!(
        r["emulator"]["extents"].as_u64().unwrap() > r["emulator"]["commands"].as_u64().unwrap()
    );
}

#[test]
fn window_zero_is_the_same_run_as_no_merge() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (off, plain) = strategy("poll", "off");
    for mode in ["stm", "atm"] {
        let r = simulate(&[
            &format!("--filename={DRAM_SSD},completion=poll"),
            "--rw=randread",
            "--bs=4k",
            "--numjobs=8",
            "--runtime=200ms",
            "--time_based",
            &format!("--temporal_merge={mode}"),
            "--merge_window_us=0",
        ]);
        let m = &r["jobs"][0]["temporal_merge"];
        assert_eq!(m["mean_extents"].as_f64(), Some(1.0), "{mode}: {m}");
        let bw = r["jobs"][0]["read"]["bw_bytes_per_s"].as_f64().unwrap() / 1e6;
        // 8 threads here, 16 there: the device, one command at a time, is the limit either way.
        assert!((bw - off).abs() / off < 0.01, "{mode}: {bw} vs {off}");
    }
    assert!(plain["jobs"][0]["temporal_merge"].is_null());
}

#[test]
fn bad_merge_options_are_refused_in_one_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = std::env::temp_dir().join(format!("ssdready-tm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("target");
    let target = format!("--filename={}", file.display());
    let out_json = dir.join("out.json");
    let out_arg = format!("--output={}", out_json.display());
    for (args, needle) in [
        (
            vec!["--temporal_merge=yes"],
            "'temporal_merge': 'yes' is not off, stm or atm",
        ),
        (vec!["--temporal_merge=stm", "--merge_max=0"], "'merge_max'"),
        (
            vec!["--temporal_merge=stm", "--merge_max=5000"],
            "'merge_max'",
        ),
        (
            vec!["--temporal_merge=atm", "--merge_window_us=-1"],
            "'merge_window_us'",
        ),
        (
            vec!["--temporal_merge=atm", "--merge_window_us=1000001"],
            "'merge_window_us'",
        ),
        (
            vec!["--temporal_merge=stm", "--merge_max_bytes=1k"],
            "'merge_max_bytes'",
        ),
        (
            vec!["--temporal_merge=stm", &target, "--size=1m"],
            "only the emulator",
        ),
    ] {
        let mut a = vec!["run", "--name=j", "--runtime=1", &out_arg];
        a.extend(args.iter().copied());
        let out = ssdready(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!out_json.exists(), "{args:?}: nothing written");
        assert!(!file.exists(), "{args:?}: the target was not created");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn real_time_runs_go_through_both_layers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for mode in ["stm", "atm"] {
        let r = run_json(&[
            "--name=j",
            "--filename=emu:dram-ssd,size=16m,completion=poll",
            "--rw=randrw",
            "--bs=4k",
            "--numjobs=3",
            "--runtime=300ms",
            "--time_based",
            &format!("--temporal_merge={mode}"),
            "--merge_window_us=200",
        ]);
        let j = &r["jobs"][0];
        let m = &j["temporal_merge"];
        assert_eq!(m["mode"], mode);
        let ios = j["read"]["ios"].as_u64().unwrap() + j["write"]["ios"].as_u64().unwrap();
        assert!(ios > 0, "{mode}");
        // Commands are counted by the request that opened them: the window's
        // requests are those of the counted commands, give or take the
        // commands that straddle the window's edges.
        let requests = m["requests"].as_u64().unwrap();
        let commands = m["commands"].as_u64().unwrap();
        assert!(
            requests.abs_diff(ios) <= 3 * 16,
            "{mode}: {requests} vs {ios}"
        );
        assert!(commands > 0 && commands <= requests, "{mode}");
        assert!(
            j["completion_mode"]
                .as_str()
                .unwrap()
                .starts_with(&format!("emu-{mode}")),
            "{j}"
        );
    }
}
