//! fio compatibility: job files in the styles people write parse to the
//! expected jobs (or stop with the precise message); our json/json+ has the
//! structure fio 3.33 gives for the same job and feeds fio's own tools; logs
//! come out in fio's format.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The job fio 3.33's golden json+ was made with (tests/golden).
const GOLDEN_JOB: [&str; 10] = [
    "run",
    "--quiet",
    "--output-format=json+",
    "--name=g",
    "--ioengine=null",
    "--size=64m",
    "--rw=randrw",
    "--bs=4k",
    "--iodepth=4",
    "--number_ios=4000",
];

fn jobs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/jobs")
}

fn summary(job: &Value) -> String {
    let s = &job["spec"];
    let opt = |v: &Value| {
        if v.is_null() {
            "-".to_string()
        } else {
            v.to_string().trim_matches('"').to_string()
        }
    };
    let bs = match &s["bs"] {
        Value::Object(m) if m.contains_key("fixed") => m["fixed"].to_string(),
        Value::Object(m) if m.contains_key("split") => m["split"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!("{}/{}", p[0], p[1]))
            .collect::<Vec<_>>()
            .join(":"),
        other => other.to_string(),
    };
    // Per direction; one value when the three agree.
    let per_dir = |v: &Value| {
        let d: Vec<String> = v.as_array().unwrap().iter().map(opt).collect();
        if d.iter().all(|x| *x == d[0]) {
            d[0].clone()
        } else {
            d.join(",")
        }
    };
    let dist = match s["random_distribution"]["kind"].as_str().unwrap() {
        "random" => "random".to_string(),
        k => format!("{k}:{}", s["random_distribution"]["param"]),
    };
    format!(
        "name={} group={} phase={} rw={} bs={bs} iodepth={} numjobs={} size={} time_based={} runtime_ns={} ramp_ns={} \
         engine={} direct={} dist={dist} rate_iops={} group_reporting={}",
        opt(&s["name"]),
        job["group"],
        job["phase"],
        opt(&s["rw"]),
        s["iodepth"],
        s["numjobs"],
        opt(&s["size"]),
        s["time_based"],
        opt(&s["runtime_ns"]),
        s["ramp_time_ns"],
        opt(&s["ioengine"]),
        s["direct"],
        per_dir(&s["rate_iops"]),
        s["group_reporting"],
    )
}

fn with_target(args: &[&str], target: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .env("SSDREADY_TEST_TARGET", target)
        .output()
        .unwrap()
}

/// Every job file in tests/jobs parses to its .expected jobs, or stops with
/// the one-line error the .expected file gives (exit code 2).
#[test]
fn job_files_parse_to_the_expected_jobs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    let mut checked = 0;
    for entry in std::fs::read_dir(jobs_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("fio") {
            continue;
        }
        let expected = std::fs::read_to_string(path.with_extension("expected")).unwrap();
        let out = with_target(&["run", "--parse-only", path.to_str().unwrap()], &target);
        let got = if out.status.success() {
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            v.as_array()
                .unwrap()
                .iter()
                .map(summary)
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        } else {
            assert_eq!(out.status.code(), Some(2), "{}", path.display());
            assert!(out.stdout.is_empty());
            format!(
                "error: {}",
                String::from_utf8_lossy(&out.stderr).trim_start_matches("ssdready: ")
            )
        };
        assert_eq!(got, expected, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} job files");
    assert!(!target.exists(), "--parse-only wrote the target");
}

/// The runnable job files run unchanged.
#[test]
fn job_files_run_unchanged() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("target");
    for name in [
        "seq-then-rand.fio",
        "oltp-70-30.fio",
        "include.fio",
        "snia-precondition.fio",
    ] {
        let p = jobs_dir().join(name);
        let out = with_target(
            &[
                "run",
                "--quiet",
                "--output-format=json",
                p.to_str().unwrap(),
            ],
            &target,
        );
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value =
            serde_json::from_slice(&out.stdout).expect("stdout is one valid JSON document");
        assert!(!v["jobs"].as_array().unwrap().is_empty(), "{name}");
    }
}

fn key_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = format!("{prefix}/{k}");
                out.push(p.clone());
                if k != "percentile" && k != "bins" {
                    key_paths(x, &p, out);
                }
            }
        }
        Value::Array(a) => {
            if let Some(first) = a.first().filter(|f| f.is_object()) {
                key_paths(first, &format!("{prefix}[]"), out);
            }
        }
        _ => {}
    }
}

/// Same keys at the same places as fio 3.33's json+ for the same job, and
/// the same deterministic values on the null engine.
#[test]
fn json_plus_has_fios_structure() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let golden = include_str!("golden/fio-3.33-null-randrw.keys");
    let out = ssdready(&GOLDEN_JOB);
    assert!(out.status.success());
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut paths = Vec::new();
    key_paths(&ours, "", &mut paths);
    let missing: Vec<&str> = golden
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .filter(|l| !paths.iter().any(|p| p == l))
        .collect();
    assert!(missing.is_empty(), "keys fio has and we lack: {missing:?}");
    let fio: Value =
        serde_json::from_str(include_str!("golden/fio-3.33-null-randrw.json")).unwrap();
    let (a, b) = (&ours["jobs"][0], &fio["jobs"][0]);
    let total = |j: &Value| {
        j["read"]["total_ios"].as_u64().unwrap() + j["write"]["total_ios"].as_u64().unwrap()
    };
    assert_eq!(total(a), total(b), "number_ios is exact in both tools");
    assert_eq!(a["job options"], b["job options"]);
    assert_eq!(a["jobname"], "g");
    assert!(ours["fio version"]
        .as_str()
        .unwrap()
        .starts_with("ssdready-"));
    // percentile keys are fio's default list, formatted like fio's
    let keys: Vec<&String> = a["read"]["clat_ns"]["percentile"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    let fio_keys: Vec<&String> = b["read"]["clat_ns"]["percentile"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys, fio_keys);
    // bins rebuild the distribution: counts add up to N
    let bins: u64 = a["read"]["clat_ns"]["bins"]
        .as_object()
        .unwrap()
        .values()
        .map(|v| v.as_u64().unwrap())
        .sum();
    assert_eq!(bins, a["read"]["clat_ns"]["N"].as_u64().unwrap());
}

#[test]
fn clones_are_separate_entries_unless_group_reporting() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let base = [
        "run",
        "--quiet",
        "--output-format=json",
        "--ioengine=null",
        "--size=64m",
        "--number_ios=1000",
        "--numjobs=3",
    ];
    let mut a = base.to_vec();
    a.push("--name=c");
    let v: Value = serde_json::from_slice(&ssdready(&a).stdout).unwrap();
    assert_eq!(v["jobs"].as_array().unwrap().len(), 3);
    a.push("--group_reporting");
    let v: Value = serde_json::from_slice(&ssdready(&a).stdout).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0]["read"]["total_ios"], 3000);
    assert_eq!(jobs[0]["ssdready"]["group"]["jobs"][0]["workers"], 3);
}

#[test]
fn stonewall_runs_phases_in_order_and_groups_are_numbered() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&[
        "run",
        "--quiet",
        "--output-format=native",
        "--ioengine=null",
        "--size=64m",
        "--name=a",
        "--rate_iops=2000",
        "--number_ios=400",
        "--name=b",
        "--stonewall",
        "--number_ios=100",
        "--name=c",
        "--new_group",
        "--number_ios=100",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let groups: Vec<u64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["group"].as_u64().unwrap())
        .collect();
    assert_eq!(groups, [0, 1, 2]);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[0]["jobs"], serde_json::json!([0]));
    assert_eq!(phases[1]["jobs"], serde_json::json!([1, 2]));
    // a ran alone for ~200 ms (400 I/Os at 2000 IOPS)
    assert!(phases[0]["window_ns"].as_u64().unwrap() >= 190_000_000);
}

#[test]
fn fio_logs_are_written_in_fios_format() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("t");
    let p = prefix.to_str().unwrap();
    let bw = format!("--write_bw_log={p}");
    let lat = format!("--write_lat_log={p}");
    let iops = format!("--write_iops_log={p}");
    let out = ssdready(&[
        "run",
        "--quiet",
        "--ioengine=null",
        "--size=64m",
        "--number_ios=500",
        "--numjobs=2",
        "--name=l",
        &bw,
        &lat,
        &iops,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for n in [1, 2] {
        for kind in ["bw", "iops", "clat", "slat", "lat"] {
            let f = tmp.path().join(format!("t_{kind}.{n}.log"));
            let text =
                std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
            if kind == "slat" {
                // A synchronous engine has no submission latency: fio
                // 3.33 writes the file empty.
                assert_eq!(text.lines().count(), 0, "{kind}.{n}: empty, as fio's");
                continue;
            }
            assert_eq!(text.lines().count(), 500, "{kind}.{n}: one line per I/O");
            let first: Vec<&str> = text.lines().next().unwrap().split(", ").collect();
            assert_eq!(first.len(), 5, "{kind}: time, value, ddir, bs, prio");
            assert_eq!(first[2], "0");
            assert_eq!(first[3], "4096");
        }
    }
    // Averaged: one line per whole 100 ms window and direction that saw
    // I/O, stamped at the window's end, its value the window's I/Os per
    // second. 300 I/Os at 1000 IOPS take 300 ms at least (a loaded machine
    // only makes it longer), so they fill two windows or more. The last,
    // partial window has no line, as in fio (fio 3.33 gave 2 lines, 200 of
    // the 300 I/Os): the lines' I/Os (value × 0.1 s) add up to the 300
    // less those after the last whole window, fewer than one window holds.
    let out = ssdready(&[
        "run",
        "--quiet",
        "--ioengine=null",
        "--size=64m",
        "--rate_iops=1000",
        "--number_ios=300",
        "--name=a",
        &iops,
        "--log_avg_msec=100",
    ]);
    assert!(out.status.success());
    let text = std::fs::read_to_string(tmp.path().join("t_iops.1.log")).unwrap();
    let lines: Vec<Vec<u64>> = text
        .lines()
        .map(|l| l.split(", ").map(|c| c.parse().unwrap()).collect())
        .collect();
    assert!(lines.len() >= 2, "{} windows", lines.len());
    assert!(lines.iter().all(|l| l.len() == 5 && l[2] == 0), "{text}");
    assert!(
        lines.windows(2).all(|w| w[0][0] < w[1][0]) && lines.iter().all(|l| l[0] % 100 == 0),
        "window ends: {text}"
    );
    // value = ios / 0.1 s, floored: round back to the window's I/Os.
    let ios: u64 = lines.iter().map(|l| (l[1] + 5) / 10).sum();
    assert!(ios <= 300 && ios + 100 > 300, "{ios} I/Os: {text}");
}

/// fio's own json+ converter reads our output and gives the columns it gives
/// for fio's. Needs fio_jsonplus_clat2csv (Debian package fio).
#[test]
fn fio_jsonplus_clat2csv_reads_our_json_plus() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tool = "fio_jsonplus_clat2csv";
    if std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        eprintln!("skipped: {tool} is not installed (apt-get install fio)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let ours = tmp.path().join("ours.json");
    let out = ssdready(&GOLDEN_JOB);
    std::fs::write(&ours, &out.stdout).unwrap();
    let fio = tmp.path().join("fio.json");
    std::fs::write(&fio, include_str!("golden/fio-3.33-null-randrw.json")).unwrap();
    let header = |json: &Path, stem: &str| -> (String, usize) {
        let csv = tmp.path().join(format!("{stem}.csv"));
        let o = std::process::Command::new(tool)
            .args([json, &csv])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{tool} failed on {}: {}",
            json.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        let text = std::fs::read_to_string(tmp.path().join(format!("{stem}_job0.csv"))).unwrap();
        (
            text.lines().next().unwrap().to_string(),
            text.lines().count(),
        )
    };
    let (ours_h, ours_rows) = header(&ours, "ours");
    let (fio_h, _) = header(&fio, "fio");
    assert_eq!(ours_h, fio_h);
    assert!(ours_rows > 10, "{ours_rows} rows");
}

/// With fio installed, run both tools on one null-engine job and compare the
/// whole key structure and the deterministic values.
#[test]
fn side_by_side_with_live_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let args = [
        "--name=s",
        "--ioengine=null",
        "--size=128m",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=1",
        "--number_ios=20000",
    ];
    let Ok(f) = std::process::Command::new("fio")
        .args(args)
        .arg("--output-format=json")
        .output()
    else {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    };
    let fio: Value = serde_json::from_slice(&f.stdout).unwrap();
    let mut a = vec!["run", "--quiet", "--output-format=json"];
    a.extend(args);
    let ours: Value = serde_json::from_slice(&ssdready(&a).stdout).unwrap();
    let (mut pf, mut po) = (Vec::new(), Vec::new());
    key_paths(&fio, "", &mut pf);
    key_paths(&ours, "", &mut po);
    let missing: Vec<&String> = pf.iter().filter(|p| !po.contains(p)).collect();
    assert!(missing.is_empty(), "{missing:?}");
    for k in ["total_ios", "io_bytes", "io_kbytes", "short_ios"] {
        assert_eq!(ours["jobs"][0]["read"][k], fio["jobs"][0]["read"][k], "{k}");
    }
    // fio's null engine keeps one I/O in flight whatever iodepth says, so
    // depth distributions are compared at QD 1, where both are synchronous.
    assert_eq!(
        ours["jobs"][0]["iodepth_level"],
        fio["jobs"][0]["iodepth_level"]
    );
}

/// The fio-plot package (PyPI) charts our json output as it charts fio's.
#[test]
fn fio_plot_charts_our_json() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if std::process::Command::new("fio-plot")
        .arg("--help")
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        eprintln!("skipped: fio-plot is not installed (pip install fio-plot)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    for qd in ["1", "4"] {
        let d = format!("--iodepth={qd}");
        let out = ssdready(&[
            "run",
            "--quiet",
            "--output-format=json",
            "--ioengine=null",
            "--size=1g",
            "--rw=randread",
            "--bs=4k",
            &d,
            "--numjobs=1",
            "--name=randread",
            "--number_ios=20000",
        ]);
        assert!(out.status.success());
        std::fs::write(dir.join(format!("randread-{qd}-1.json")), &out.stdout).unwrap();
    }
    let o = std::process::Command::new("fio-plot")
        .args([
            "-i",
            dir.to_str().unwrap(),
            "-T",
            "ssdready",
            "-l",
            "-r",
            "randread",
            "-d",
            "1",
            "4",
            "-n",
            "1",
        ])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "fio-plot failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let pngs = std::fs::read_dir(tmp.path())
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "png"))
        .count();
    assert_eq!(
        pngs,
        1,
        "fio-plot wrote no chart: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}
