//! Each engine option on a real file (no root needed): the bytes moved are
//! exact, and the option is visible in what the run reports.

use crate::common;
use common::*;

fn file_arg(dir: &tempfile::TempDir) -> String {
    format!("--filename={}", dir.path().join("data").display())
}

#[test]
fn io_uring_options_move_exact_bytes() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = file_arg(&dir);
    // Lay the file out once.
    run_json(&[&f, "--rw=write", "--bs=64k", "--size=4m"]);
    for extra in [
        vec![],
        vec!["--fixedbufs"],
        vec!["--registerfiles"],
        vec!["--fixedbufs", "--registerfiles"],
        vec!["--sqthread_poll"],
        vec!["--iodepth_batch_submit=8", "--iodepth_batch_complete_min=4"],
    ] {
        for rw in ["randread", "randwrite"] {
            let mut a = vec![
                f.as_str(),
                "--ioengine=io_uring",
                "--iodepth=16",
                "--bs=4k",
                "--size=4m",
            ];
            let rwa = format!("--rw={rw}");
            a.push(&rwa);
            a.extend(extra.iter().copied());
            let r = run_json(&a);
            let dir = if rw == "randread" { "read" } else { "write" };
            assert_eq!(r["jobs"][0][dir]["bytes"], 4u64 << 20, "{a:?}");
            assert_eq!(r["jobs"][0]["errors"], 0, "{a:?}");
        }
    }
}

#[test]
fn libaio_moves_exact_bytes_in_batches() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = file_arg(&dir);
    run_json(&[&f, "--rw=write", "--bs=64k", "--size=4m"]);
    for rw in ["randread", "randwrite"] {
        let rwa = format!("--rw={rw}");
        let r = run_json(&[
            &f,
            "--ioengine=libaio",
            "--direct=1",
            "--iodepth=16",
            "--iodepth_batch_submit=4",
            "--bs=4k",
            "--size=4m",
            &rwa,
        ]);
        let d = if rw == "randread" { "read" } else { "write" };
        assert_eq!(r["jobs"][0][d]["bytes"], 4u64 << 20, "{rw}");
        assert!(r["jobs"][0][d]["slat"].is_object());
    }
    // Trims run on libaio too, as fio's do_io_u_trim (a punched hole on
    // a file): 1 MiB of 4 KiB trims.
    let r = run_json(&[&f, "--ioengine=libaio", "--rw=trim", "--size=1m"]);
    assert_eq!(r["jobs"][0]["trim"]["bytes"], 1u64 << 20);
}

#[test]
fn trims_punch_holes_in_files() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = file_arg(&dir);
    run_json(&[&f, "--rw=write", "--bs=1m", "--size=8m"]);
    let path = dir.path().join("data");
    let before = std::fs::metadata(&path)
        .map(|m| std::os::unix::fs::MetadataExt::blocks(&m))
        .unwrap();
    for engine in ["psync", "io_uring"] {
        let e = format!("--ioengine={engine}");
        let r = run_json(&[&f, &e, "--rw=trim", "--bs=64k", "--size=4m"]);
        assert_eq!(r["jobs"][0]["trim"]["bytes"], 4u64 << 20, "{engine}");
    }
    let after = std::fs::metadata(&path)
        .map(|m| std::os::unix::fs::MetadataExt::blocks(&m))
        .unwrap();
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        8 << 20,
        "trim keeps the size"
    );
    if before > 0 {
        assert!(
            after < before,
            "blocks {before} -> {after}: no hole was punched"
        );
    }
}

/// thinktime=1ms on a synchronous job: at most 1000 I/Os a second (1010
/// allowed: the first I/O thinks after it, not before). A loaded machine
/// only oversleeps, so the floor is a tenth of that: a wake-up late by up
/// to 9 ms each time still passes; no think time at all (a null engine's
/// millions a second) fails.
#[test]
fn thinktime_paces_a_synchronous_job() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let r = run_json(&[
        "--ioengine=null",
        "--size=1g",
        "--thinktime=1ms",
        "--runtime=1",
        "--time_based",
    ]);
    let iops = r["jobs"][0]["read"]["iops"].as_f64().unwrap();
    assert!(
        (100.0..=1010.0).contains(&iops),
        "1 ms think time gave {iops} IOPS"
    );
}

#[test]
fn cpus_allowed_pins_workers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // Pinned to CPU 0 with two clones: both still run and finish.
    let r = run_json(&[
        "--ioengine=null",
        "--size=1g",
        "--number_ios=100000",
        "--numjobs=2",
        "--cpus_allowed=0",
    ]);
    assert_eq!(r["jobs"][0]["read"]["ios"], 200_000);
    let bad = ssdready(&["run", "--ioengine=null", "--size=1g", "--cpus_allowed=x"]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn buffered_write_of_a_new_file_lays_it_out_and_reports_no_device_split_when_counts_differ() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = file_arg(&dir);
    let r = run_json(&[&f, "--rw=randwrite", "--bs=4k", "--size=2m"]);
    assert_eq!(r["jobs"][0]["write"]["bytes"], 2u64 << 20);
    // Buffered writes reach the device later (or never): any disk entry
    // must withhold the above-block split and say why.
    for d in r["phases"][0]["disks"].as_array().unwrap() {
        if d["counts_agree"] == false {
            assert!(d["above_block_mean_ns"].is_null());
            assert!(d["note"].as_str().unwrap().len() > 10);
        }
    }
}
