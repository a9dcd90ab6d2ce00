//! The study of a fleet (`ssdready study --client`) on three `ssdready
//! server`s on loopback (ports chosen free at run time): its scaling
//! section is checked against each run's own consolidated result (the
//! hosts' I/O counts and rates, and the p99 of their json+ bins summed
//! here, bin by bin); bad input is one line, exit code 2, nothing written.

use crate::common;
use common::net::{free_port, spawn_listening, Proc, Within};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_ssdready");

fn server(port: u16) -> Proc {
    spawn_listening(
        Command::new(BIN).args(["server", "--port", &port.to_string()]),
        port,
    )
}

fn study(args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("study")
        .args(args)
        .env("SSDREADY_STUDY_RUNTIME", "0.3")
        .output_in_time()
}

/// The p-th percentile of a histogram by fio's rule: the first bin at
/// which the running count reaches p % of the samples.
fn percentile(bins: &BTreeMap<u64, u64>, p: f64) -> Option<u64> {
    let n: u64 = bins.values().sum();
    let mut sum = 0;
    for (v, c) in bins {
        sum += c;
        if sum as f64 >= p / 100.0 * n as f64 {
            return Some(*v);
        }
    }
    None
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// One point of the scaling section against its run's own document.
fn check_point(dir: &Path, p: &Value) {
    let file = p["result"].as_str().expect("each run's result is kept");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(file)).unwrap()).unwrap();
    let jobs: Vec<&Value> = doc["client_stats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|j| j["jobname"] == "m")
        .collect();
    assert_eq!(jobs.len() as u64, p["n"].as_u64().unwrap(), "{file}");
    let ios: u64 = jobs
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .sum();
    assert_eq!(p["ios"].as_u64(), Some(ios), "{file}: aggregate I/Os");
    let iops: f64 = jobs.iter().map(|j| num(&j["read"]["iops"])).sum();
    assert!(
        (num(&p["iops"]) - iops).abs() <= 1e-6 * iops,
        "{file}: aggregate IOPS"
    );
    let mut bins = BTreeMap::new();
    for j in &jobs {
        for (v, c) in j["read"]["clat_ns"]["bins"].as_object().unwrap() {
            *bins.entry(v.parse::<u64>().unwrap()).or_insert(0) += c.as_u64().unwrap();
        }
    }
    assert_eq!(
        bins.values().sum::<u64>(),
        ios,
        "{file}: every I/O in a bin"
    );
    assert_eq!(
        p["p99_ns"].as_u64(),
        percentile(&bins, 99.0),
        "{file}: merged p99"
    );
    // Together, every host gets the same work.
    let per: Vec<u64> = jobs
        .iter()
        .map(|j| j["read"]["total_ios"].as_u64().unwrap())
        .collect();
    assert!(per.windows(2).all(|w| w[0] == w[1]), "{file}: {per:?}");
    // The slowest host: the longest runtime, its share of the summed time.
    let hosts = p["per_host"].as_array().unwrap();
    // (Together, a host's time for its work; alone, its runtime.)
    let times: Vec<f64> = hosts
        .iter()
        .map(|h| {
            num(if h["work_ms"].is_null() {
                &h["runtime_ms"]
            } else {
                &h["work_ms"]
            })
        })
        .collect();
    let max = times.iter().cloned().fold(0.0, f64::max);
    let slow = &p["slowest"];
    assert_eq!(num(&slow["runtime_ms"]), max, "{file}");
    let share = 100.0 * max / times.iter().sum::<f64>();
    assert!(
        (num(&slow["share_of_fleet_time_pct"]) - share).abs() < 1e-6,
        "{file}"
    );
}

#[test]
fn a_study_of_three_servers_scales_from_one_host_to_three() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let ports = [free_port(), free_port(), free_port()];
    let _servers: Vec<Proc> = ports.iter().map(|&p| server(p)).collect();
    let hosts = dir.path().join("hosts");
    let list: String = ports
        .iter()
        .map(|p| format!("ip:127.0.0.1,{p}\n"))
        .collect();
    std::fs::write(&hosts, list).unwrap();
    let out_dir = dir.path().join("study");
    let out = study(&[
        "--quick",
        "--quiet",
        "--client",
        hosts.to_str().unwrap(),
        "--output",
        out_dir.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("Scaling") && stdout.contains("The fleet delivers"),
        "{stdout}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("study.json")).unwrap())
            .unwrap();
    let f = &doc["figures"]["fleet"];
    assert_eq!(f["hosts"].as_array().unwrap().len(), 3);
    assert_eq!(
        f["hosts"][0]["fio_version"]
            .as_str()
            .map(|v| v.starts_with("ssdready")),
        Some(true)
    );
    let (solo, scaling) = (
        f["solo"].as_array().unwrap(),
        f["scaling"].as_array().unwrap(),
    );
    assert_eq!(
        (solo.len(), scaling.len()),
        (6, 6),
        "2 depths × 3 hosts, alone and together"
    );
    for p in solo.iter().chain(scaling) {
        assert_eq!(p["partial"], false);
        check_point(&out_dir, p);
    }
    for p in scaling {
        check_efficiency(p, solo);
    }
    check_delivered(f, solo, scaling);
    let rules: Vec<&str> = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"fleet-scales") || rules.contains(&"fleet-short-of-its-hosts"),
        "{rules:?}"
    );
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(
        html.contains("s-fleet") && html.contains("QD 16 × 3"),
        "no fleet section"
    );
}

/// A point of the hosts together: its efficiency against the same hosts
/// alone, summed.
fn check_efficiency(p: &Value, solo: &[Value]) {
    let qd = &p["qd"];
    let alone: f64 = p["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let s = solo
                .iter()
                .find(|s| &s["qd"] == qd && &s["hosts"][0] == h)
                .unwrap();
            num(&s["iops"])
        })
        .sum();
    let eff = num(&p["efficiency_pct"]);
    assert!((eff - 100.0 * num(&p["iops"]) / alone).abs() < 1e-6);
    if p["n"] == 1 {
        // The first host again, alone: about its solo rate. Loose: the
        // null engine's rate is the CPU this shared machine has left.
        assert!((25.0..=400.0).contains(&eff), "N=1 efficiency {eff} %");
    }
}

/// The fleet's delivered fraction: the best run of all three against
/// each host's best alone, summed.
fn check_delivered(f: &Value, solo: &[Value], scaling: &[Value]) {
    let best_alone: f64 = (0..3)
        .map(|i| {
            solo.iter()
                .filter(|s| s["hosts"][0] == f["hosts"][i]["host"])
                .map(|s| num(&s["iops"]))
                .fold(0.0, f64::max)
        })
        .sum();
    let best = scaling
        .iter()
        .filter(|p| p["n"] == 3)
        .map(|p| num(&p["iops"]))
        .fold(0.0, f64::max);
    assert!((num(&f["delivered_pct"]) - 100.0 * best / best_alone).abs() < 1e-6);
}

/// One line on stderr, exit code 2, no output directory.
fn refused(args: &[&str], out_dir: &Path, says: &str) {
    let mut a: Vec<&str> = vec!["--quiet", "--output", out_dir.to_str().unwrap()];
    a.extend(args);
    common::assert_refused(&study(&a), &format!("{args:?}"), &[says]);
    assert!(!out_dir.exists(), "{args:?} wrote {}", out_dir.display());
}

#[test]
fn a_fleet_study_refuses_bad_hosts_with_one_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("study");
    // Nothing listens on a port just freed.
    let nobody = format!("127.0.0.1,{}", free_port());
    refused(&["--client", &nobody], &out, &format!("host {nobody}"));
    let empty = dir.path().join("empty-hosts");
    std::fs::write(&empty, "# no hosts\n").unwrap();
    refused(&["--client", empty.to_str().unwrap()], &out, "no host in");
    refused(&["--client", "127.0.0.1,0"], &out, "port '0'");
    refused(
        &["--client", &nobody, "--slo", "p99=1ms"],
        &out,
        "option '--slo'",
    );
    // Writes are never forced on a fleet from here: each server checks.
    refused(
        &["--client", &nobody, "--allow-destructive"],
        &out,
        "option '--allow-destructive'",
    );
}
