//! Fault injection on the emulator (`fault_` keys): the errors, retries and
//! silent corruptions a run sees are the ones the emulator injected, as it
//! counts them in `emulator.faults`; `continue_on_error` goes past them as
//! fio does.

use serde_json::Value;
use std::process::{Command, Output};

fn ssdready(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .output()
        .expect("run ssdready")
}

/// A real-time run with native JSON on stdout: (exit code, document, stderr).
fn run(target: &str, job: &[&str]) -> (Option<i32>, Value, String) {
    run_as("native", target, job)
}

/// [`run`] writing `format` (`native`, fio's `json`).
fn run_as(format: &str, target: &str, job: &[&str]) -> (Option<i32>, Value, String) {
    let f = format!("--filename={target}");
    let o = format!("--output-format={format}");
    let mut args = vec!["run", &o, "--name=j", &f];
    args.extend_from_slice(job);
    let o = ssdready(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, stderr)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn faults(doc: &Value) -> &Value {
    let e = &doc["emulator"];
    let f = e.as_array().map_or(&e["faults"], |a| &a[0]["faults"]);
    assert!(f.is_object(), "no emulator.faults in {doc}");
    f
}

const DRIVE: &str = "emu:nvme-tlc,size=256m";

#[test]
fn injected_read_errors_are_the_errors_the_run_goes_past() {
    let target = format!("{DRIVE},fault_read_error_rate=0.01,fault_seed=7");
    let (code, doc, stderr) = run(
        &target,
        &[
            "--rw=randread",
            "--bs=4k",
            "--iodepth=4",
            "--runtime=300ms",
            "--time_based",
            "--continue_on_error=read",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let j = &doc["jobs"][0];
    let gone_past = u(&j["continued_errors"]);
    let injected = u(&faults(&doc)["read_errors"]);
    assert!(gone_past > 10, "{j}");
    // Requests still in flight when the run stops were injected but never
    // reaped: at most the queue depth.
    assert!(
        gone_past <= injected && injected <= gone_past + 4,
        "run {gone_past}, emulator {injected}"
    );
    assert!(j["first_error"].is_null(), "{j}");
    let first = j["first_continued_error"].as_str().unwrap();
    assert!(first.contains("Input/output error"), "{first}");
    let ios = u(&j["read"]["ios"]);
    let rate = gone_past as f64 / (ios + gone_past) as f64;
    assert!((0.005..0.02).contains(&rate), "error rate {rate}");
}

#[test]
fn without_continue_on_error_the_first_injected_error_stops_the_job() {
    let target = format!("{DRIVE},fault_read_error_rate=0.01");
    let (code, v, stderr) = run_as(
        "json",
        &target,
        &["--rw=randread", "--bs=4k", "--runtime=2", "--time_based"],
    );
    assert_eq!(code, Some(1), "{stderr}");
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 5, "EIO: {j}");
    // fio writes total_err only with continue_on_error.
    assert!(j.get("total_err").is_none(), "{j}");
    // It stopped at the error: far fewer than 2 s of reads at ~1 % errors.
    assert!(u(&j["read"]["total_ios"]) < 10_000, "{j}");
}

#[test]
fn fio_json_counts_errors_gone_past_as_total_err() {
    let target = format!("{DRIVE},fault_write_error_rate=0.02");
    let (code, v, stderr) = run_as(
        "json",
        &target,
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--size=16m",
            "--continue_on_error=write",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0, "{j}");
    assert_eq!(j["first_error"], 5, "{j}");
    let total = u(&j["total_err"]);
    let written = u(&j["write"]["total_ios"]);
    // 4096 writes of 4 KiB, 2 % failing: 82 expected, sd 9.
    assert_eq!(total + written, 4096, "{j}");
    assert!((40..130).contains(&total), "{total}");
}

#[test]
fn a_bad_lba_fails_every_read_of_it_and_nothing_else() {
    // Three passes of sequential reads over 1 MiB, one bad 4 KiB block.
    let target = format!("{DRIVE},fault_read_error_at=8192+4096");
    let (code, doc, stderr) = run(
        &target,
        &[
            "--rw=read",
            "--bs=4k",
            "--size=1m",
            "--loops=3",
            "--continue_on_error=io",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let j = &doc["jobs"][0];
    assert_eq!(u(&j["continued_errors"]), 3, "{j}");
    assert_eq!(u(&j["read"]["ios"]), 3 * 255, "{j}");
    assert_eq!(u(&faults(&doc)["read_errors"]), 3);
}

#[test]
fn read_retries_cost_their_time_and_then_succeed() {
    let target = format!("{DRIVE},fault_retry_rate=1,fault_retries=2,fault_retry_ns=400us");
    let (code, doc, stderr) = run(
        &target,
        &[
            "--rw=randread",
            "--bs=4k",
            "--runtime=200ms",
            "--time_based",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let r = &doc["jobs"][0]["read"];
    // Issue to completion (clat starts at the worker's submit stamp, which
    // a preempted worker takes after the emulator has the command).
    assert!(u(&r["lat"]["min_ns"]) >= 800_000, "{r}");
    assert_eq!(u(&doc["jobs"][0]["errors"]), 0);
    let recovered = u(&faults(&doc)["read_retries_recovered"]);
    assert!(recovered >= u(&r["ios"]), "{recovered} {r}");
}

/// Silent corruption is what verification exists for: every corrupted read
/// fails its check, and with no corruption no check fails.
#[test]
fn verification_finds_every_silently_corrupted_read() {
    for (rate, expect_some) in [("0.05", true), ("0", false)] {
        let target = format!("{DRIVE},fault_corrupt_rate={rate},fault_seed=3");
        let (code, doc, stderr) = run(
            &target,
            &[
                "--rw=write",
                "--bs=4k",
                "--size=8m",
                "--verify=crc32c",
                "--verify_state_save=0",
                "--continue_on_error=verify",
            ],
        );
        assert_eq!(code, Some(0), "{stderr}");
        let j = &doc["jobs"][0];
        // Without a fault key the emulator reports no faults at all.
        let corrupted = match expect_some {
            true => u(&faults(&doc)["corrupted_reads"]),
            false => {
                assert!(doc["emulator"]["faults"].is_null(), "{doc}");
                0
            }
        };
        let failed = u(&j["verify"]["failed"]);
        assert_eq!(failed, corrupted, "{j}");
        assert_eq!(u(&j["verify"]["blocks"]), 2048, "{j}");
        assert_eq!(corrupted > 0, expect_some, "rate {rate}: {corrupted}");
        assert_eq!(u(&j["continued_errors"]), failed);
    }
}

#[test]
fn a_bad_fault_value_is_one_line_and_exit_2() {
    for (target, needle) in [
        (
            "emu:nvme-tlc,fault_read_error_rate=2",
            "is not a probability",
        ),
        (
            "emu:nvme-tlc,fault_read_error_at=abc",
            "fault_read_error_at",
        ),
        ("emu:nvme-tlc,fault_retries=1000", "fault_retries"),
    ] {
        let (code, doc, stderr) = run(target, &["--rw=randread", "--runtime=100ms"]);
        assert_eq!(code, Some(2), "{target}: {stderr}");
        assert!(doc.is_null());
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        assert!(stderr.contains(needle), "{stderr}");
    }
}

#[test]
fn a_bad_continue_on_error_is_one_line_and_exit_2() {
    let (code, doc, stderr) = run(DRIVE, &["--rw=read", "--continue_on_error=sometimes"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(doc.is_null());
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("continue_on_error"), "{stderr}");
    assert!(
        stderr.contains("none, read, write, io, verify, all"),
        "{stderr}"
    );
}

#[test]
fn virtual_time_refuses_faults_with_the_reason() {
    let o = ssdready(&[
        "emu",
        "simulate",
        "--name=j",
        "--filename=emu:nvme-tlc,fault_read_error_rate=0.01",
        "--rw=randread",
        "--runtime=1",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("real time only"), "{e}");
    assert!(o.stdout.is_empty());
}
