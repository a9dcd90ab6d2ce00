//! The emulator's FTL under the workloads and geometries that once broke
//! it (issue #9): sub-page sequential writes that piled every page's last
//! copy on a few dies until GC had nothing to reclaim (a panic, then a
//! poisoned lock), an x25e too small for its GC reserve, a 128 MiB x25e
//! that collapsed to a few IOPS, and geometries whose arithmetic overflowed.
//! Every case must end in a clean result or a one-line refusal (exit 2).

use crate::common;
use common::*;
use serde_json::Value;

fn simulate(args: &[&str]) -> std::process::Output {
    let mut a = vec!["emu", "simulate", "--output-format=native", "--quiet"];
    a.extend_from_slice(args);
    ssdready(&a)
}

fn clean_result(what: &str, out: &std::process::Output) -> Value {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: {err}");
    assert!(!err.contains("panicked"), "{what}: {err}");
    serde_json::from_slice(&out.stdout).expect("a JSON result")
}

fn refused(what: &str, out: &std::process::Output, needle: &str) {
    assert_refused(out, what, &[needle]);
}

/// Per-second I/O counts of the first job's writes, without the last
/// (partial) second.
fn full_seconds(r: &Value) -> Vec<u64> {
    let s = r["jobs"][0]["write"]["series"].as_array().expect("series");
    s[..s.len() - 1]
        .iter()
        .map(|x| x["ios"].as_u64().unwrap())
        .collect()
}

#[test]
fn sub_page_sequential_writes_on_the_default_drive_end_in_a_result() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // Real time, the issue's command: it panicked "GC keeps a free block per
    // frontier" in the worker, then main on the poisoned lock (exit 101).
    let out = ssdready(&[
        "run",
        "--output-format=native",
        "--quiet",
        "--name=f",
        "--rw=write",
        "--bs=512",
        "--runtime=3",
        "--time_based",
    ]);
    let r = clean_result("run bs=512", &out);
    assert!(r["jobs"][0]["write"]["ios"].as_u64().unwrap() > 0);
}

#[test]
fn sub_page_sequential_writes_fill_nvme_tlc_and_iodrive_without_a_gc_panic() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // Writing the whole (1 GiB) device once: with 32 dies, every page's last
    // copy used to land on 32 / (4096 / bs) of them, which overflowed.
    for preset in ["nvme-tlc", "iodrive"] {
        for bs in ["512", "1k", "2k", "3k"] {
            let what = format!("{preset} bs={bs}");
            let out = simulate(&[
                "--name=f",
                &format!("--filename=emu:{preset}"),
                "--rw=write",
                &format!("--bs={bs}"),
            ]);
            let r = clean_result(&what, &out);
            let bytes = r["jobs"][0]["write"]["bytes"].as_u64().unwrap();
            assert!(
                bytes > (1 << 30) - 4096,
                "{what}: the whole device is written, not {bytes} bytes"
            );
        }
    }
}

#[test]
fn x25e_at_64m_is_refused_as_too_small_for_its_gc_reserve() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // 10 dies of 28 blocks: each must hold 1639 pages, but with two write
    // frontiers and gc_fg_free=1 GC can only keep 1600 valid. It panicked.
    let job = [
        "--name=f",
        "--filename=emu:x25e,size=64m",
        "--rw=write",
        "--bs=512",
    ];
    let mut run = vec!["run"];
    run.extend_from_slice(&job);
    refused("run", &ssdready(&run), "can keep at most 1600 valid");
    refused("simulate", &simulate(&job), "gc_fg_free");
}

#[test]
fn x25e_at_128m_does_not_collapse_to_a_few_iops() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // 512 B sequential writes, 200 s: the dies holding every page's last
    // copy filled up and each write to them cleaned up to 55 fully valid
    // blocks (874 ms; 2 IOPS in the worst seconds).
    let out = simulate(&[
        "--name=f",
        "--filename=emu:x25e,size=128m",
        "--rw=write",
        "--bs=512",
        "--runtime=200",
        "--time_based",
    ]);
    let r = clean_result("x25e 512 B writes", &out);
    let worst = full_seconds(&r).into_iter().min().unwrap();
    let max_ms = r["jobs"][0]["write"]["lat"]["max_ns"].as_f64().unwrap() / 1e6;
    assert!(
        worst > 1000,
        "512 B writes: {worst} IOPS in the worst second"
    );
    assert!(max_ms < 100.0, "512 B writes: a {max_ms} ms write");
    // 4 KiB random writes at QD 1: foreground GC used to clean a whole
    // block's worth of nearly full victims before one write (~240 ms, 4 IOPS
    // in the worst seconds); now GC work is spread over the writes.
    let out = simulate(&[
        "--name=f",
        "--filename=emu:x25e,size=128m",
        "--rw=randwrite",
        "--bs=4k",
        "--runtime=60",
        "--time_based",
    ]);
    let r = clean_result("x25e random writes", &out);
    let worst = full_seconds(&r).into_iter().min().unwrap();
    let max_ms = r["jobs"][0]["write"]["lat"]["max_ns"].as_f64().unwrap() / 1e6;
    assert!(
        worst > 300,
        "random writes: {worst} IOPS in the worst second"
    );
    assert!(max_ms < 100.0, "random writes: a {max_ms} ms write");
}

#[test]
fn absurd_geometries_are_refused_in_one_line_naming_the_key() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // channels × dies_per_channel overflowed u32 and divided by zero; the
    // others truncated, went to infinity or wrapped.
    for (spec, needle) in [
        ("x25e,channels=65536,dies_per_channel=65536", "'channels'"),
        (
            "x25e,channels=4096,dies_per_channel=4096",
            "dies_per_channel",
        ),
        ("x25e,channels=4294967296", "'channels'"),
        ("x25e,op=nan", "'op'"),
        ("x25e,op=inf", "'op'"),
        ("x25e,op=1e300", "'op'"),
        ("x25e,op=-1", "'op'"),
        ("x25e,page_bytes=8g", "'page_bytes'"),
        ("x25e,page_bytes=3000", "'page_bytes'"),
        ("x25e,pages_per_block=4294967296", "'pages_per_block'"),
        ("x25e,pages_per_block=65536", "pages_per_block"),
        ("x25e,size=100t", "'size'"),
        ("x25e,gc_bg_free=4294967295", "'gc_bg_free'"),
        ("x25e,gc_fg_free=0", "'gc_fg_free'"),
        ("x25e,fw_units=100000", "'fw_units'"),
        ("x25e,read=1000s", "'read_ns'"),
        ("x25e,channel_mbps=1e-300", "'channel_mbps'"),
        ("x25e,link_mbps=inf", "'link_mbps'"),
        ("x25e,cmd_slots=4294967295", "'cmd_slots'"),
    ] {
        let target = format!("--filename=emu:{spec}");
        let job = [
            "--name=f",
            &target,
            "--rw=randwrite",
            "--bs=4k",
            "--number_ios=100",
        ];
        let mut run = vec!["run"];
        run.extend_from_slice(&job);
        refused(&format!("run {spec}"), &ssdready(&run), needle);
        refused(&format!("simulate {spec}"), &simulate(&job), needle);
    }
}
