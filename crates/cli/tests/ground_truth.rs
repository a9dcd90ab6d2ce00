//! The run command against ground truth: counts, rates and bytes that are
//! known in advance, and the latency split on a real block device.

use crate::common;
use common::*;

#[test]
fn null_engine_with_number_ios_reports_exactly_n() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for depth in ["1", "32"] {
        let r = run_json(&[
            "--name=n",
            "--ioengine=null",
            "--size=4g",
            "--number_ios=123457",
            &format!("--iodepth={depth}"),
        ]);
        let read = &r["jobs"][0]["read"];
        assert_eq!(read["ios"], 123457, "iodepth {depth}");
        assert_eq!(read["bytes"], 123457u64 * 4096);
        assert_eq!(read["lat"]["n"], 123457);
        assert_eq!(r["phases"][0]["cpu"]["ios"], 123457);
    }
}

#[test]
fn rate_iops_is_held_within_two_percent() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let r = run_json(&[
        "--name=r",
        "--ioengine=null",
        "--size=1g",
        "--rate_iops=1000",
        "--runtime=3",
        "--time_based",
    ]);
    let iops = r["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!((iops - 1000.0).abs() <= 20.0, "rate_iops=1000 gave {iops}");
}

#[test]
fn ramp_time_is_excluded_from_the_results() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let r = run_json(&[
        "--name=r",
        "--ioengine=null",
        "--size=1g",
        "--rate_iops=1000",
        "--ramp_time=1",
        "--runtime=1",
        "--time_based",
    ]);
    let ios = r["jobs"][0]["read"]["ios"].as_u64().unwrap();
    assert!(
        (970..=1030).contains(&ios),
        "1 s at 1000 IOPS after a 1 s ramp counted {ios} I/Os"
    );
    let window = r["jobs"][0]["measured_ns"].as_u64().unwrap();
    assert!(
        (950_000_000..1_100_000_000).contains(&window),
        "measured window {window} ns"
    );
}

#[test]
fn write_then_read_moves_exactly_size_bytes() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data");
    let f = f.to_str().unwrap();
    let size = 8u64 << 20;
    let w = run_json(&[
        "--name=w",
        "--rw=write",
        "--bs=4k",
        &format!("--filename={f}"),
        "--size=8m",
    ]);
    assert_eq!(w["jobs"][0]["write"]["bytes"], size);
    assert_eq!(w["jobs"][0]["write"]["ios"], size / 4096);
    assert!(w["jobs"][0]["read"].is_null());
    let r = run_json(&[
        "--name=r",
        "--rw=randread",
        "--bs=4k",
        &format!("--filename={f}"),
        "--size=8m",
    ]);
    assert_eq!(r["jobs"][0]["read"]["bytes"], size);
    let m = run_json(&[
        "--name=m",
        "--rw=randrw",
        "--bs=16k",
        &format!("--filename={f}"),
        "--size=8m",
        "--numjobs=2",
    ]);
    let j = &m["jobs"][0];
    let total = j["read"]["bytes"].as_u64().unwrap() + j["write"]["bytes"].as_u64().unwrap();
    assert_eq!(total, 2 * size, "two clones each cover the region once");
}

#[test]
fn multiple_files_share_the_size() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let names = format!("--filename={}:{}", a.display(), b.display());
    let r = run_json(&["--name=w", "--rw=write", "--bs=4k", &names, "--size=2m"]);
    assert_eq!(r["jobs"][0]["write"]["bytes"], 2u64 << 20);
    assert_eq!(std::fs::metadata(&a).unwrap().len(), 1 << 20);
    assert_eq!(std::fs::metadata(&b).unwrap().len(), 1 << 20);
}

#[test]
fn json_result_is_versioned_and_complete() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let r = run_json(&[
        "--name=n",
        "--ioengine=null",
        "--size=64m",
        "--iodepth=4",
        "--percentile_list=50:99",
    ]);
    assert_eq!(r["schema"], "ssdready.run");
    assert_eq!(r["schema_version"], 1);
    let read = &r["jobs"][0]["read"];
    assert_eq!(read["lat"]["percentiles"].as_array().unwrap().len(), 2);
    assert!(
        read["slat"].is_object(),
        "async path has submission latency"
    );
    assert!(r["clock"]["ns_per_timestamp"].as_f64().unwrap() > 0.0);
    assert!(r["jobs"][0]["spec"]["randseed"].as_u64().is_some());
    assert!(r["phases"][0]["cpu"]["per_io"]["system_ns"]
        .as_f64()
        .is_some());
}

#[test]
fn same_seed_same_offsets_different_seed_different() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // Offsets are not in the result, but a zipf read of a small region
    // touches a seed-dependent set of blocks: compare bytes moved per second.
    let a = run_json(&[
        "--name=z",
        "--ioengine=null",
        "--size=1g",
        "--rw=randread",
        "--number_ios=1000",
        "--bssplit=4k/50:64k/50",
    ]);
    let b = run_json(&[
        "--name=z",
        "--ioengine=null",
        "--size=1g",
        "--rw=randread",
        "--number_ios=1000",
        "--bssplit=4k/50:64k/50",
    ]);
    let c = run_json(&[
        "--name=z",
        "--ioengine=null",
        "--size=1g",
        "--rw=randread",
        "--number_ios=1000",
        "--bssplit=4k/50:64k/50",
        "--randseed=99",
    ]);
    let bytes = |v: &serde_json::Value| v["jobs"][0]["read"]["bytes"].as_u64().unwrap();
    assert_eq!(bytes(&a), bytes(&b));
    assert_ne!(bytes(&a), bytes(&c));
}

#[test]
fn above_block_mean_on_a_loop_device_is_positive_and_below_the_total() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("split", 256) else {
        return;
    };
    let r = run_json(&[
        "--name=r",
        "--rw=randread",
        "--bs=4k",
        "--ioengine=io_uring",
        "--iodepth=8",
        "--direct=1",
        &format!("--filename={}", l.dev),
        "--runtime=2",
        "--time_based",
    ]);
    let d = &r["phases"][0]["disks"][0];
    assert_eq!(d["counts_agree"], true, "{d}");
    let app = d["app_mean_ns"].as_f64().unwrap();
    let above = d["above_block_mean_ns"].as_f64().unwrap();
    let block = d["block_mean_ns"].as_f64().unwrap();
    assert!(above > 0.0 && above < app, "above {above} app {app}");
    assert!((above + block - app).abs() < 1e-6 * app);
    let dev = &r["platform"]["devices"][0];
    assert_eq!(dev["loop_direct_io"], true);
}
