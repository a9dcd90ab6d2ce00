//! The jobs' logs across fio's protocol, on loopback with real fio 3.33:
//! `fio --client` writes the same log files from an `ssdready server` as
//! from a `fio --server` (names, samples per file, columns), and
//! `ssdready run --client` writes the logs of both kinds of server, named
//! with the host as fio's client names them. Skipped, saying why, when fio
//! is not installed.

use crate::common;
use common::net::{fio_server, free_port, have_fio, ssdready_server, ssdready_server_with, Within};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ssdready");
/// 64 random 4 KiB reads, every I/O logged (no log_avg_msec).
const JOB: &str = "[lg]\nioengine=null\nrw=randread\nbs=4k\nsize=256k\n\
                   write_lat_log=lg\nwrite_bw_log=lg\nwrite_iops_log=lg\n";

/// Every log file in `dir`: its name and its lines split into columns.
fn logs_in(dir: &Path) -> BTreeMap<String, Vec<Vec<u64>>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with("lg_"))
        .map(|e| {
            let text = std::fs::read_to_string(e.path()).unwrap();
            let rows = text
                .lines()
                .map(|l| l.split(", ").map(|x| x.parse::<u64>().unwrap()).collect())
                .collect();
            (e.file_name().to_string_lossy().into_owned(), rows)
        })
        .collect()
}

fn fio_client(dir: &Path, port: u16) {
    std::fs::write(dir.join("job.fio"), JOB).unwrap();
    let out = Command::new("fio")
        .current_dir(dir)
        .arg(format!("--client=ip:127.0.0.1,{port}"))
        .arg("job.fio")
        .output_in_time();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn fio_client_writes_the_same_logs_from_ssdready_as_from_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (pf, ps) = (free_port(), free_port());
    let _f = fio_server(pf);
    let _s = ssdready_server(ps);
    fio_client(a.path(), pf);
    fio_client(b.path(), ps);
    let (from_fio, from_ssdready) = (logs_in(a.path()), logs_in(b.path()));
    let names: Vec<&String> = from_fio.keys().collect();
    assert_eq!(
        names,
        [
            "lg_bw.1.log.127.0.0.1",
            "lg_clat.1.log.127.0.0.1",
            "lg_iops.1.log.127.0.0.1",
            "lg_lat.1.log.127.0.0.1",
            "lg_slat.1.log.127.0.0.1"
        ]
    );
    assert_eq!(
        from_ssdready.keys().collect::<Vec<_>>(),
        names,
        "the same files"
    );
    for (name, rows) in &from_fio {
        let ours = &from_ssdready[name];
        // One line per I/O in the latency logs (none for slat: the null
        // engine is synchronous), per sample in bw and iops.
        assert_eq!(ours.len(), rows.len(), "{name}: lines");
        let want = if name.contains("slat") { 0 } else { 64 };
        assert_eq!(ours.len(), want, "{name}");
        for r in ours {
            // time, value, direction (read), block size, priority.
            assert_eq!(r.len(), 5, "{name}: {r:?}");
            assert_eq!((r[2], r[3]), (0, 4096), "{name}: {r:?}");
        }
        if name.contains("iops") {
            assert!(ours.iter().all(|r| r[1] == 1), "one I/O per sample");
        }
    }
}

#[test]
fn run_client_writes_the_logs_of_fio_and_ssdready_servers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.fio"), JOB).unwrap();
    let (pf, ps) = (free_port(), free_port());
    let _f = fio_server(pf);
    let _s = ssdready_server(ps);
    let out = Command::new(BIN)
        .current_dir(dir.path())
        .args(["run", &format!("--client=127.0.0.1,{pf};127.0.0.1,{ps}")])
        .args(["job.fio", "--output-format=json"])
        .output_in_time();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let logs = logs_in(dir.path());
    for (port, h) in [pf, ps].iter().zip(doc["hosts"].as_array().unwrap()) {
        check_host_logs(h, *port, *port == ps, &logs, &stderr);
    }
    // Each host's job, then fio's "All clients" with both.
    for j in doc["client_stats"].as_array().unwrap() {
        let n = if j["jobname"] == "All clients" {
            128
        } else {
            64
        };
        assert_eq!(j["read"]["clat_ns"]["N"], n, "{j}");
    }
}

/// One host's logs (`h`, on `port`; `ours`: ssdready's server): zlib
/// agreed, each log written under a name with the port, with what was
/// received, and a shortfall said on `stderr`.
fn check_host_logs(
    h: &Value,
    port: u16,
    ours: bool,
    logs: &BTreeMap<String, Vec<Vec<u64>>>,
    stderr: &str,
) {
    // zlib agreed with both; the logs came compressed.
    assert_eq!(h["zlib"], true, "{h}");
    assert_eq!(h["logs"].as_array().unwrap().len(), 5, "{h}");
    assert!(
        h["logs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|l| l["compressed"] == 1),
        "{h}"
    );
    // Two hosts named 127.0.0.1: the port tells their files apart.
    for (kind, n) in [
        ("bw", 64),
        ("iops", 64),
        ("lat", 64),
        ("clat", 64),
        ("slat", 0),
    ] {
        let name = format!("lg_{kind}.1.log.127.0.0.1,{port}");
        let rows = logs
            .get(&name)
            .unwrap_or_else(|| panic!("{name} not written: {:?}", logs.keys()));
        let entry = h["logs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["name"] == format!("lg_{kind}.1.log").as_str())
            .unwrap();
        assert_eq!(entry["samples"], n, "{name}");
        // fio's server may cut its zlib stream short by a sample or
        // two; ssdready's never does. What was received is written,
        // and a shortfall is said.
        let got = entry["samples_received"].as_u64().unwrap() as usize;
        assert_eq!(rows.len(), got, "{name}");
        if ours {
            assert_eq!(got, n, "{name}");
        } else {
            assert!(got + 4 >= n, "{name}: {got} of {n}");
        }
        if got < n {
            let said = format!("'{name}': {got} of the {n} samples");
            assert!(stderr.contains(&said), "{said} not in: {stderr}");
        }
    }
    // fio's own count of the job's completions, against its clat log.
    assert_eq!(h["jobs"], 1);
}

#[test]
fn fio_client_gets_a_block_devices_figures_from_ssdready_as_from_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let Some(lo) = common::LoopDev::new("fleet-du", 16) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Direct 4 KiB reads of the loop device for a second (fio's server
    // samples the disk every 250 ms: a shorter job shows it nothing).
    let job = format!(
        "[du]\nfilename={}\nioengine=psync\ndirect=1\nrw=randread\nbs=4k\nsize=4m\n\
         time_based\nruntime=1\n",
        lo.dev
    );
    std::fs::write(dir.path().join("job.fio"), job).unwrap();
    let name = lo.dev.trim_start_matches("/dev/").to_string();
    let (pf, ps) = (free_port(), free_port());
    let _f = fio_server(pf);
    // A server uses a device only when its operator allows it.
    let _s = ssdready_server_with(ps, &["--allow-device", &lo.dev]);
    for port in [pf, ps] {
        let out = Command::new("fio")
            .current_dir(dir.path())
            .arg(format!("--client=ip:127.0.0.1,{port}"))
            .args(["job.fio", "--output-format=json"])
            .output_in_time();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let du = doc["disk_util"]
            .as_array()
            .unwrap_or_else(|| panic!("no disk_util from port {port}: {doc}"));
        let d = du
            .iter()
            .find(|d| d["name"] == name.as_str())
            .unwrap_or_else(|| panic!("no {name} in {du:?}"));
        // The kernel's count of the device's reads against the job's: the
        // same within 1 % from ssdready (the window's /sys/block deltas);
        // fio's server misses what came after its last 250 ms sample.
        let job_ios = doc["client_stats"][0]["read"]["total_ios"]
            .as_u64()
            .unwrap();
        let ios = d["read_ios"].as_u64().unwrap();
        let ok = if port == ps {
            ios.abs_diff(job_ios) <= job_ios / 100 + 8
        } else {
            ios >= job_ios / 2 && ios <= job_ios + 8
        };
        assert!(ok, "port {port}: job {job_ios} reads, disk {d}");
        assert_eq!(d["write_ios"], 0, "{d}");
        let util = d["util"].as_f64().unwrap();
        assert!(util > 0.0 && util <= 100.0, "{d}");
    }
}
