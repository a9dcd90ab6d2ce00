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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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
    let _one_file = crate::one_file_at_a_time(module_path!());
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

/// A write job with verification on `keys` of the drive: (document, job).
fn verified_writes(keys: &str, job: &[&str]) -> (Value, Value) {
    let target = format!("{DRIVE},{keys}");
    let mut args = vec![
        "--rw=write",
        "--bs=16k",
        "--size=8m",
        "--verify=crc32c",
        "--verify_state_save=0",
        "--continue_on_error=all",
    ];
    args.extend_from_slice(job);
    let (code, doc, stderr) = run(&target, &args);
    assert_eq!(code, Some(0), "{keys} {job:?}: {stderr}");
    let j = doc["jobs"][0].clone();
    (doc, j)
}

/// Without flushes, the writes a power cut loses are the newest ones still
/// in the drive's write buffer, and verification finds every one of them.
#[test]
fn verification_finds_every_write_a_power_cut_lost() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (doc, j) = verified_writes("fault_power_cut_after=300", &["--iodepth=1"]);
    let f = faults(&doc);
    let lost = u(&f["writes_lost"]);
    assert_eq!(u(&f["power_cuts"]), 1);
    assert!(lost > 0, "{f}");
    assert_eq!(u(&f["commands_aborted"]), 0, "QD 1: nothing in flight");
    assert_eq!(u(&j["verify"]["blocks"]), 512, "{j}");
    assert_eq!(u(&j["verify"]["failed"]), lost, "{j}");
    // The oldest lost write may have kept its first pages (torn).
    let bytes = u(&f["bytes_lost"]);
    assert!(
        ((lost - 1) * 16384 + 1..=lost * 16384).contains(&bytes),
        "{f}"
    );
    // The newest writes before the 300th were lost: the failures are the
    // blocks just before it.
    let offsets: Vec<u64> = j["verify"]["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| u(&x["offset"]))
        .collect();
    let want: Vec<u64> = (299 - lost..299).map(|b| b * 16384).collect();
    assert_eq!(offsets, want);
}

/// A write in flight at the cut fails with EIO (a prefix of its pages may
/// have reached the medium); with every write FUA (`sync=1`), nothing that
/// was acknowledged is lost: no verification failure.
#[test]
fn with_fua_writes_a_cut_loses_nothing_acknowledged() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (doc, j) = verified_writes("fault_power_cut_after=300", &["--iodepth=8", "--sync=1"]);
    let f = faults(&doc);
    let aborted = u(&f["commands_aborted"]);
    assert!((1..=8).contains(&aborted), "{f}");
    assert_eq!(u(&f["writes_lost"]), 0, "{f}");
    assert_eq!(
        u(&j["continued_errors"]),
        aborted,
        "each failed with EIO: {j}"
    );
    assert_eq!(u(&j["verify"]["failed"]), 0, "{j}");
    assert_eq!(u(&j["verify"]["blocks"]) + aborted, 512, "{j}");
}

/// A flush after every write (`fsync=1`) leaves nothing for a cut to take;
/// a flush every 4 writes bounds the loss to what came after the last one.
#[test]
fn flushes_bound_what_a_power_cut_loses() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (doc, j) = verified_writes("fault_power_cut_after=300", &["--fsync=1"]);
    let f = faults(&doc);
    assert_eq!(u(&f["power_cuts"]), 1);
    assert_eq!((u(&f["writes_lost"]), u(&f["bytes_lost"])), (0, 0), "{f}");
    assert_eq!(u(&j["verify"]["failed"]), 0, "{j}");
    let (doc, j) = verified_writes("fault_power_cut_after=300", &["--fsync=4", "--iodepth=8"]);
    let lost = u(&faults(&doc)["writes_lost"]);
    assert!((1..=12).contains(&lost), "{lost}");
    assert_eq!(u(&j["verify"]["failed"]), lost, "{j}");
}

/// A device with the power-cut model whose cut never comes: clean.
#[test]
fn no_cut_no_verification_failure() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (doc, j) = verified_writes("fault_power_cut_after=100000", &["--iodepth=4"]);
    assert_eq!(u(&faults(&doc)["power_cuts"]), 0);
    assert_eq!(u(&j["verify"]["failed"]), 0, "{j}");
    assert_eq!(u(&j["verify"]["blocks"]), 512, "{j}");
}

/// One run keeps one emulated device across stonewalled jobs: a
/// `verify_only` job after the cut reads back exactly what was lost.
#[test]
fn a_later_verify_only_job_finds_what_the_cut_lost() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = std::env::temp_dir().join(format!("ssdready-powercut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two.fio");
    std::fs::write(
        &file,
        format!(
            "[global]\nfilename={DRIVE},fault_power_cut_after=300\nbs=16k\nsize=8m\n\
             verify=crc32c\nverify_state_save=0\n[w]\nrw=write\ndo_verify=0\n\
             [r]\nstonewall\nrw=read\nverify_only=1\ncontinue_on_error=verify\n"
        ),
    )
    .unwrap();
    let o = ssdready(&["run", "--output-format=native", file.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let lost = u(&faults(&doc)["writes_lost"]);
    assert!(lost > 0);
    assert_eq!(u(&doc["jobs"][1]["verify"]["failed"]), lost, "{doc}");
}

/// A write acknowledged but stored only in part (a firmware bug) is found
/// by verification, every one.
#[test]
fn verification_finds_every_silently_torn_write() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (doc, j) = verified_writes("fault_torn_write_rate=0.05,fault_seed=5", &["--bs=64k"]);
    let torn = u(&faults(&doc)["silently_torn_writes"]);
    assert!(torn > 0);
    assert_eq!(u(&j["verify"]["failed"]), torn, "{j}");
    assert_eq!(u(&j["verify"]["blocks"]), 128, "{j}");
}

/// Latency spikes hit reads and writes, are counted, and show in the
/// run's maximum latency.
#[test]
fn latency_spikes_show_in_the_maximum_latency() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let target = format!("{DRIVE},fault_spike_rate=0.02,fault_spike_ns=30ms");
    let (code, doc, stderr) = run(&target, &["--rw=randrw", "--bs=4k", "--size=4m"]);
    assert_eq!(code, Some(0), "{stderr}");
    let spikes = u(&faults(&doc)["latency_spikes"]);
    // 1024 commands at 2 %: 20 expected.
    assert!((5..50).contains(&spikes), "{spikes}");
    let j = &doc["jobs"][0];
    let max = u(&j["read"]["lat"]["max_ns"]).max(u(&j["write"]["lat"]["max_ns"]));
    assert!(max >= 30_000_000, "{j}");
}

/// Failed programs are re-placed without an error while spare blocks last
/// (each costs `fault_program_fail_ns`); then the drive is read-only.
#[test]
fn program_failures_cost_time_until_the_spares_run_out_then_writes_fail() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let target = format!(
        "{DRIVE},fault_program_fail_rate=0.01,fault_spare_blocks=4,fault_program_fail_ns=5ms"
    );
    let (code, doc, stderr) = run(
        &target,
        &[
            "--rw=randwrite",
            "--bs=4k",
            "--size=8m",
            "--continue_on_error=write",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let f = faults(&doc);
    let j = &doc["jobs"][0];
    assert_eq!(u(&f["blocks_retired"]), 4, "{f}");
    assert_eq!(u(&f["program_failures"]), 5, "{f}");
    let refused = u(&f["read_only_writes"]);
    assert_eq!(u(&j["continued_errors"]), refused, "{j}");
    assert_eq!(u(&j["write"]["ios"]) + refused, 2048, "{j}");
    assert!(u(&j["write"]["lat"]["max_ns"]) >= 5_000_000, "{j}");
}

/// Whichever engine a job names, the emulator's errors reach it as the
/// same errno (fio's JSON `error`, 5 = EIO).
#[test]
fn every_engine_name_sees_the_injected_errno() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for engine in ["psync", "libaio", "io_uring"] {
        let target = format!("{DRIVE},fault_write_error_rate=1");
        let e = format!("--ioengine={engine}");
        let (code, v, stderr) = run_as("json", &target, &[&e, "--rw=write", "--size=1m"]);
        assert_eq!(code, Some(1), "{engine}: {stderr}");
        assert_eq!(v["jobs"][0]["error"], 5, "{engine}: {v}");
    }
}

#[test]
fn a_power_cut_on_a_device_without_data_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (code, doc, stderr) = run(
        "emu:nvme-tlc,nocopy=1,fault_power_cut_after=10",
        &["--rw=write", "--size=1m"],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(doc.is_null());
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("nocopy=1"), "{stderr}");
}
