//! `--profile=exact` on a loop device over /dev/shm (root and eBPF only):
//! the tracepoint-bracketed CPU time accounts for every CPU over the whole
//! window, its busy total is within 10 % of the exact whole-system figure
//! from /proc/stat at QD 1 (psync, io_uring) and QD 32, and the layer table
//! built from it adds up to it. Both figures are whole-system, so the check
//! holds on a loaded machine too (other processes count on both sides).
//! The block tracepoints' states (block layer submission, driver, block
//! completion) have time, and the bracketed block submission is at least
//! the block layer's interval as --decompose times it.

use crate::common;
use common::*;
use serde_json::Value;

/// One bracketed run; None (with the reason printed) where the programs
/// cannot load.
fn exact_run(dev: &str, engine: &str, qd: &str, extra: &[&str]) -> Option<Value> {
    let f = format!("--filename={dev}");
    let e = format!("--ioengine={engine}");
    let q = format!("--iodepth={qd}");
    let mut args = vec![
        f.as_str(),
        "--rw=randread",
        &e,
        "--direct=1",
        &q,
        "--runtime=2",
        "--time_based",
        "--profile=exact",
    ];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    let p = &r["phases"][0]["profile"];
    if p.is_null() || p["exact"].is_null() {
        eprintln!(
            "skipped: profiling or eBPF not permitted here: {:?}",
            r["warnings"]
        );
        return None;
    }
    Some(r)
}

/// The states cover the window × CPUs, and each CPU's window, within 1 %.
fn check_coverage(e: &Value, what: &str) {
    let covered = e["covered_pct"].as_f64().unwrap();
    assert!(
        (covered - 100.0).abs() < 1.0,
        "{what}: the states cover {covered:.2}% of the window × CPUs"
    );
    let per_cpu = e["covered_pct_per_cpu"].as_array().unwrap();
    assert!(!per_cpu.is_empty(), "{what}: no CPU's coverage");
    for c in per_cpu {
        let c = c.as_f64().unwrap();
        assert!(
            (c - 100.0).abs() < 1.0,
            "{what}: a CPU's states cover {c:.2}% of the window: {}",
            e["covered_pct_per_cpu"]
        );
    }
}

/// The time per I/O in state `n` of the exact profile `e`.
fn state_ns_per_io(e: &Value, n: &str) -> f64 {
    e["states"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["state"] == n)
        .unwrap_or_else(|| panic!("no state {n}: {e}"))["ns_per_io"]
        .as_f64()
        .unwrap()
}

/// The checks of one run; returns the exact busy figure over the system one.
fn check(r: &Value, what: &str) -> f64 {
    let phase = &r["phases"][0];
    let e = &phase["profile"]["exact"];
    let cpu = &phase["cpu"];
    check_coverage(e, what);
    let state = |n: &str| state_ns_per_io(e, n);
    // The run's own threads make system calls, and the loop device's
    // worker is a kernel thread; nothing stays unknown after the start.
    assert!(state("system calls, this process") > 0.0, "{what}: {e}");
    assert!(state("kernel threads") > 0.0, "{what}: {e}");
    // The block tracepoints split the block layer's submission, the
    // driver's and the completion out of the system calls and kernel
    // threads: each has time, and the run says what they cannot bracket.
    let tps = e["tracepoints"].as_array().unwrap();
    if tps.iter().any(|t| t == "block_rq_issue") {
        for s in [
            "block layer submission",
            "driver submission and return",
            "block completion",
        ] {
            assert!(state(s) > 0.0, "{what}: no time in {s}: {e}");
        }
        let limits = e["limits"].as_array().unwrap();
        assert!(
            limits
                .iter()
                .any(|l| l.as_str().unwrap().contains("driver's return")),
            "{what}: {limits:?}"
        );
    }
    let unknown = state("unknown");
    let busy = e["busy_ns_per_io"].as_f64().unwrap();
    assert!(unknown < 0.01 * busy, "{what}: unknown {unknown} of {busy}");
    // The layer table is built from the bracketed time: its busy layers add
    // up to the exact busy figure.
    let layers: f64 = e["layers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["layer"] != "idle")
        .map(|l| l["ns_per_io"].as_f64().unwrap())
        .sum();
    assert!(
        (layers - busy).abs() <= 0.005 * busy,
        "{what}: layers {layers:.0} vs exact busy {busy:.0}"
    );
    let system = cpu["per_io"]["system_ns"].as_f64().unwrap();
    let err = cpu["sources"]["system_error_ns"].as_f64().unwrap();
    let sampled = phase["profile"]["busy_ns_per_io"].as_f64().unwrap();
    // A vCPU the hypervisor stopped stays in its bracketed state, while
    // /proc/stat takes steal out of busy: compared less steal, as the
    // run's own check does.
    let steal = cpu["sources"]["steal_ns"].as_f64().unwrap_or(0.0);
    eprintln!(
        "{what}: exact {busy:.0} ns/IO, sampled {sampled:.0}, steal {steal:.0}, system {system:.0} ± {err:.0}"
    );
    let busy = busy - steal;
    let checks = phase["checks"].as_array().unwrap();
    let c = checks
        .iter()
        .find(|c| c["a_source"] == "profile.exact")
        .expect("the exact figure is cross-checked");
    assert!(
        (busy - system).abs() <= 0.10 * system + err,
        "{what}: exact {busy:.0} vs system {system:.0} ± {err:.0}: {c}"
    );
    assert_eq!(c["agree"], true);
    busy / system
}

#[test]
fn exact_cpu_by_state_agrees_with_the_system_figure_at_qd1_and_qd32() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("profile-exact", 256) else {
        return;
    };
    for (engine, qd) in [("psync", "1"), ("io_uring", "1"), ("io_uring", "32")] {
        let Some(r) = exact_run(&l.dev, engine, qd, &[]) else {
            return;
        };
        check(&r, &format!("{engine} QD {qd}"));
    }
}

/// The bracketed block layer submission against an independent clock: at
/// QD 1 psync nothing is plugged and the submitter runs from the bio's
/// entry (block_bio_queue) to the request's issue, so its CPU time per I/O
/// is at least the block_io_start → block_rq_issue interval --decompose
/// times per I/O with its own programs (the median: an interrupt or a
/// preemption inside the interval lengthens the wall time only). Other
/// processes' block I/O only adds to the bracketed figure.
#[test]
fn the_bracketed_block_submission_covers_the_block_layer_s_interval() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("profile-exact-block", 64) else {
        return;
    };
    let Some(r) = exact_run(&l.dev, "psync", "1", &["--decompose"]) else {
        return;
    };
    let phase = &r["phases"][0];
    let e = &phase["profile"]["exact"];
    if !e["tracepoints"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "block_rq_issue")
    {
        eprintln!(
            "skipped: no block tracepoints: {}",
            e["missing_tracepoints"]
        );
        return;
    }
    let d = &phase["decomposition"];
    if d.is_null() {
        eprintln!("skipped: no --decompose figures: {:?}", r["warnings"]);
        return;
    }
    let p50 = d["block_layer"]["percentiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0].as_f64() == Some(50.0))
        .map(|p| p[1].as_f64().unwrap())
        .expect("the block layer's median");
    let block = e["states"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["state"] == "block layer submission")
        .unwrap()["ns_per_io"]
        .as_f64()
        .unwrap();
    eprintln!(
        "bracketed block submission {block:.0} ns/IO, io_start → rq_issue median {p50:.0} ns"
    );
    // 12.5 %: the kernel histogram's bucket width.
    assert!(
        block >= 0.875 * p50,
        "bracketed {block:.0} ns/IO below the interval's median {p50:.0}"
    );
}

/// A bad mode is one clear line and exit code 2.
#[test]
fn an_unknown_profile_mode_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&[
        "run",
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        "--profile=fast",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sampled, exact"), "{err}");
}
