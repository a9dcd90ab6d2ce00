//! Several workers on one emulated device at once, each on its own queue
//! pair (`queues`, the emulator's multi-queue front): every I/O completes
//! exactly once with its own data, with none of the model's state lost
//! between them, on the lock-free DRAM-mode path and on a flash device
//! whose garbage collection runs under the workers' concurrent writes.

use serde_json::Value;
use std::process::Command;

/// A real-time run: (exit code, native JSON, stderr).
fn run(args: &[&str]) -> (Option<i32>, Value, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--output-format=native"])
        .args(args)
        .output()
        .expect("run ssdready");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let v = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v, stderr)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// I/Os a job's directions completed.
fn ios(job: &Value) -> u64 {
    ["read", "write", "trim"]
        .iter()
        .filter_map(|d| job[d]["ios"].as_u64())
        .sum()
}

/// Four workers, each writing its own quarter of `target` at random and
/// verifying it (crc32c), with `extra` job options.
fn four_verifying_writers<'a>(target: &'a str, extra: &[&'a str]) -> Vec<String> {
    let mut a: Vec<String> = [
        "--name=v",
        "--rw=randwrite",
        "--bs=4k",
        "--iodepth=8",
        "--numjobs=4",
        "--verify=crc32c",
        "--verify_state_save=0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.push(format!("--filename={target}"));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn four_workers_on_one_lock_free_device_each_read_back_their_own_data() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // nvm-lowlat: 7 units and a link, both shared; null: nothing shared;
    // queues=2: two workers per queue pair, which they then lock.
    for dev in [
        "emu:nvm-lowlat,size=64m,completion=poll",
        "emu:null,size=64m",
        "emu:null,size=64m,queues=2",
    ] {
        let args = four_verifying_writers(dev, &["--size=16m", "--offset_increment=16m"]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, doc, stderr) = run(&args);
        assert_eq!(code, Some(0), "{dev}: {stderr}");
        let j = &doc["jobs"][0];
        // 4 × 16 MiB of 4 KiB writes, each read back once and checked.
        assert_eq!(u(&j["verify"]["blocks"]), 16_384, "{dev}: {j}");
        assert_eq!(u(&j["verify"]["failed"]), 0, "{dev}: {j}");
        assert_eq!(u(&j["write"]["ios"]), 16_384, "{dev}: {j}");
        assert_eq!(u(&j["read"]["ios"]), 16_384, "{dev}: {j}");
        // The device saw each of them once: no command lost or doubled.
        assert_eq!(u(&doc["emulator"]["commands"]), ios(j), "{dev}");
    }
}

#[test]
fn garbage_collection_under_four_concurrent_writers_keeps_every_block() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // A small flash drive written over twice by four workers, then written
    // and verified once more while GC moves pages under them.
    let dev = "emu:x25e,size=16m,op=0.25,pages_per_block=16,completion=poll";
    let quarter = ["--size=4m", "--offset_increment=4m"];
    let mut args: Vec<String> = [
        "--name=fill",
        "--rw=randwrite",
        "--bs=4k",
        "--iodepth=8",
        "--numjobs=4",
        "--loops=2",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("--filename={dev}"));
    args.extend(quarter.iter().map(|s| s.to_string()));
    args.extend(four_verifying_writers(dev, &quarter));
    args.push("--stonewall".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, doc, stderr) = run(&args);
    assert_eq!(code, Some(0), "{stderr}");
    let v = &doc["jobs"][1];
    assert_eq!(u(&v["verify"]["blocks"]), 4096, "{v}");
    assert_eq!(u(&v["verify"]["failed"]), 0, "{v}");
    let e = &doc["emulator"];
    assert!(u(&e["gc_runs"]) > 0, "GC ran: {e}");
    assert!(e["write_amplification"].as_f64().unwrap() > 1.0, "{e}");
    let all: u64 = doc["jobs"].as_array().unwrap().iter().map(ios).sum();
    assert_eq!(u(&e["commands"]), all, "every I/O reached the model once");
    assert_eq!(u(&e["host_pages_written"]), 3 * 4096, "{e}");
}
