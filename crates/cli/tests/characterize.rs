//! `ssdready characterize`: the SNIA PTS tests to steady state and the
//! write cliff, on emulated drives in virtual time (checked against the
//! emulator's analytic limits and Desnoyers' write-amplification model)
//! and on a real block device in real time (through `run`'s path and its
//! safety checks); bad input stops with exit code 2 and writes nothing.

use crate::common;
use common::*;
use serde_json::Value;
use std::path::Path;

fn characterize(args: &[&str], dir: &Path) -> (Option<i32>, String, String) {
    let out_dir = format!("--output={}", dir.display());
    let mut a = vec!["characterize", "--quiet", out_dir.as_str()];
    a.extend_from_slice(args);
    let o = ssdready(&a);
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn doc(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("characterize.json")).expect("characterize.json");
    let v: Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["schema"], "ssdready.characterize");
    assert_eq!(v["schema_version"], 1);
    v
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn param(d: &Value, key: &str) -> f64 {
    d["target"]["emulator_params"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p[0] == key)
        .and_then(|p| p[1].as_str()?.parse().ok())
        .unwrap_or_else(|| panic!("no parameter {key}"))
}

/// Every round-based test's record hangs together: one tracked value per
/// round, the verdict's window inside the rounds, and the window's figures
/// within the rule when steady state was reached.
fn check_round_test(t: &Value) {
    let rounds = t["rounds"].as_array().unwrap();
    let values = t["tracked_values"].as_array().unwrap();
    assert_eq!(rounds.len(), values.len());
    assert!(!rounds.is_empty() && rounds.len() <= 25);
    for (i, r) in rounds.iter().enumerate() {
        assert_eq!(r["round"], i + 1);
        assert_eq!(r["tracked"], values[i]);
    }
    let v = &t["verdict"];
    assert_eq!(f(&v["window_last"]) as usize, rounds.len());
    assert_eq!(f(&v["window_last"]) - f(&v["window_first"]), 4.0);
    if t["steady_state_reached"] == true {
        assert!(
            f(&v["range_pct"]) <= 20.0 && f(&v["excursion_pct"]) <= 10.0,
            "{v}"
        );
    } else {
        assert_eq!(rounds.len(), 25, "stopped early without steady state");
    }
}

#[test]
fn x25e_quick_virtual_reaches_steady_state_and_finds_the_write_cliff() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let (code, stdout, stderr) =
        characterize(&["emu:x25e,size=256m", "--quick", "--virtual"], &dir);
    assert_eq!(code, Some(0), "{stderr}");
    let d = doc(&dir);
    assert_eq!(d["target"]["clock"], "virtual");
    assert_eq!(f(&d["target"]["capacity_bytes"]), (256u64 << 20) as f64);
    // Steady state: the IOPS test's 4 KiB random writes.
    let ss = &d["steady_state"];
    assert_eq!(ss["reached"], true, "{ss}");
    let rw4k = f(&ss["randwrite_4k_iops"]);
    assert!(rw4k > 1000.0 && rw4k < 35_000.0, "{rw4k}");
    assert_eq!(ss["tests"].as_array().unwrap().len(), 4);
    assert!(
        ss["tests"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["reached"] == true),
        "{ss}"
    );
    for t in std::iter::once(&d["iops"])
        .chain(d["throughput"].as_array().unwrap())
        .chain(std::iter::once(&d["latency"]))
    {
        check_round_test(t);
    }
    // The matrix: 2 block sizes × 3 mixes; 4 KiB reads are the
    // controller's limit (1 / 28 µs), writes far below after the cliff.
    let m = &d["iops_matrix"];
    assert_eq!(m["block_sizes"], serde_json::json!([131072, 4096]));
    assert_eq!(m["mixes"], serde_json::json!(["100/0", "65/35", "0/100"]));
    let read4k = f(&m["iops"][1][0]);
    let limit = 1e9 / param(&d, "fw_cmd_ns");
    assert!((read4k - limit).abs() / limit < 0.03, "{read4k} vs {limit}");
    assert_eq!(f(&m["iops"][1][2]), rw4k);
    // The latency table: QD 1, p99.99 ≤ max, means from the window.
    let lat = d["latency"]["window"].as_array().unwrap();
    assert_eq!(lat.len(), 3);
    for w in lat {
        assert_eq!(w["iodepth"], 1);
        assert!(f(&w["lat_p99_99_ns"]) <= f(&w["lat_max_ns"]));
        assert!(f(&w["lat_mean_ns"]) > 0.0);
    }
    check_wsat_and_cliff(&d, limit);
    // The summary says it.
    assert!(
        stdout.contains("IOPS matrix") && stdout.contains("write cliff: fresh"),
        "{stdout}"
    );
    check_report_rerenders(&dir);
}

/// WSAT and the cliff: fresh at the controller's `limit`, the fall after
/// about one physical capacity written, the WA within 15 % of the model.
fn check_wsat_and_cliff(d: &Value, limit: f64) {
    let w = &d["wsat"];
    assert_eq!(w["purge"]["done"], true);
    let samples = w["samples"].as_array().unwrap();
    assert!(samples.len() > 50);
    let c = &d["write_cliff"];
    assert!(c.is_object(), "no cliff: {}", d["write_cliff_note"]);
    assert!((f(&c["fresh_iops"]) - limit).abs() / limit < 0.05, "{c}");
    let at = f(&c["cliff_at_capacity"]);
    assert!((0.9..1.3).contains(&at), "cliff after {at} capacities");
    assert!(f(&c["steady_iops"]) < f(&c["fresh_iops"]) / 5.0, "{c}");
    assert!(f(&c["wa_error_pct"]).abs() < 15.0, "{c}");
    assert!(f(&c["steady_iops"]) <= f(&c["steady_die_bound_iops"]));
    assert_eq!(c["settled"], true);
}

/// The report beside it, in PTS's layout, and `ssdready report DIR`
/// renders the same bytes from the JSON alone.
fn check_report_rerenders(dir: &std::path::Path) {
    let page = std::fs::read_to_string(dir.join("report.html")).expect("report.html");
    for id in [
        "c-conv-iops",
        "c-iops-matrix",
        "c-throughput-bars",
        "c-latency-mix",
        "c-wsat-time",
        "c-wsat-capacity",
    ] {
        assert!(
            page.contains(&format!("id=\"{id}\"")),
            "no {id} in the report"
        );
    }
    assert!(!page.contains("Not measured."), "a PTS figure is missing");
    std::fs::remove_file(dir.join("report.html")).unwrap();
    let o = ssdready(&["report", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(dir.join("report.html")).unwrap(),
        page
    );
}

/// The acceptance figure of the issue: the X25-E's rated 3.3K random-write
/// IOPS within 25 %, in the IOPS test's steady state and WSAT's steady
/// level. The preset acknowledges writes from a 256 KiB write buffer, as
/// the drive does with its cache on (the rating's condition; the preset's
/// comment has the sources): about 3.6K and 3.4K (+10 %, +4 %). Without
/// it (`write_buffer=0`) each write waits for its own die and the IOPS
/// test's steady level is about 2.3K (−31 %), as this test pins too.
#[test]
fn x25e_steady_random_writes_are_within_25_percent_of_the_rated_3300() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let (code, _, stderr) = characterize(&["emu:x25e,size=256m", "--quick", "--virtual"], &dir);
    assert_eq!(code, Some(0), "{stderr}");
    let d = doc(&dir);
    for v in [
        f(&d["steady_state"]["randwrite_4k_iops"]),
        f(&d["write_cliff"]["steady_iops"]),
    ] {
        assert!((v - 3300.0).abs() / 3300.0 <= 0.25, "{v}");
    }
    assert_eq!(param(&d, "write_buffer"), (256u64 << 10) as f64);
    assert!(f(&d["write_cliff"]["wa_error_pct"]).abs() < 15.0);
    let dir = tmp.path().join("nocache");
    let (code, _, stderr) = characterize(
        &[
            "emu:x25e,size=256m,write_buffer=0",
            "--quick",
            "--virtual",
            "--tests=iops",
        ],
        &dir,
    );
    assert_eq!(code, Some(0), "{stderr}");
    let v = f(&doc(&dir)["steady_state"]["randwrite_4k_iops"]);
    assert!(v < 3300.0 * 0.85, "without its buffer: {v}");
}

/// A purged test does not depend on the tests run before it: WSAT alone
/// gives the combined run's WSAT, sample for sample (each purge restarts
/// the random offsets; they once followed from the jobs before, and WSAT
/// alone reported a steady level 40 % above the combined run's).
#[test]
fn wsat_alone_gives_the_full_runs_wsat() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let mut runs = Vec::new();
    for tests in ["--tests=wsat", "--tests=latency,wsat"] {
        let dir = tmp.path().join(&tests[8..]);
        let args = [
            "emu:x25e,size=256m,write_buffer=0",
            "--quick",
            "--virtual",
            tests,
        ];
        let (code, _, stderr) = characterize(&args, &dir);
        assert_eq!(code, Some(0), "{stderr}");
        runs.push(doc(&dir));
    }
    assert!(runs[1]["latency"].is_object() && runs[0]["latency"].is_null());
    assert_eq!(runs[0]["wsat"]["samples"], runs[1]["wsat"]["samples"]);
    assert_eq!(runs[0]["write_cliff"], runs[1]["write_cliff"]);
}

/// Polte et al.'s ioDrive and today's TLC drive: the cliff after about one
/// capacity, from the dies' program rate, down to a steady level the
/// dies' time at the measured WA explains, and that WA within 10 % of
/// Desnoyers' greedy model at the preset's spare factor.
#[test]
fn iodrive_and_nvme_tlc_cliffs_follow_desnoyers_model() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for preset in ["iodrive", "nvme-tlc"] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("c");
        let target = format!("emu:{preset}");
        let (code, stdout, stderr) =
            characterize(&[&target, "--quick", "--virtual", "--tests=wsat"], &dir);
        assert_eq!(code, Some(0), "{preset}: {stderr}");
        let d = doc(&dir);
        assert!(d["iops"].is_null() && d["latency"].is_null());
        let c = &d["write_cliff"];
        assert!(c.is_object(), "{preset}: {}", d["write_cliff_note"]);
        // One program unit is `planes × flash_page_bytes`; the model's
        // `program_ns` is the page types' mean.
        let model = &d["target"]["model"];
        let pages_per_program = param(&d, "planes") * param(&d, "flash_page_bytes") / 4096.0;
        let program_bound = f(&model["dies"]) * pages_per_program * 1e9 / f(&model["program_ns"]);
        let fresh = f(&c["fresh_iops"]);
        assert!(
            (fresh - program_bound).abs() / program_bound < 0.05,
            "{preset}: {fresh} vs {program_bound}"
        );
        let at = f(&c["cliff_at_capacity"]);
        assert!(
            (0.9..1.5).contains(&at),
            "{preset}: cliff after {at} capacities"
        );
        let model = f(&d["target"]["model"]["wa_predicted"]);
        let seen = f(&c["wa_seen"]);
        assert!(
            (seen - model).abs() / model < 0.10,
            "{preset}: WA {seen} vs {model}"
        );
        assert!(
            f(&c["steady_vs_die_bound_pct"]).abs() < 10.0,
            "{preset}: {c}"
        );
        assert_eq!(c["settled"], true, "{preset}");
        assert!(stdout.contains("Desnoyers"), "{stdout}");
    }
}

#[test]
fn bad_input_exits_2_with_one_line_and_writes_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("never");
    let missing = tmp.path().join("no-such-file");
    let missing = missing.to_str().unwrap();
    for (args, want) in [
        (vec!["emu:x25e,size=256m"], "add --virtual"),
        (vec![missing, "--virtual"], "not an emulated device"),
        (vec!["emu:nosuch", "--virtual"], "target 'emu:nosuch'"),
        (
            vec!["emu:x25e,size=256m", "--virtual", "--tests=iops,wast"],
            "'wast' is not a test",
        ),
        (
            vec!["emu:x25e,size=256m", "--virtual", "--point-time=abc"],
            "option '--point-time'",
        ),
        (
            vec!["emu:x25e,size=256m", "--virtual", "--point-time=10ms"],
            "too short",
        ),
        (
            vec!["emu:x25e,size=256m", "--virtual", "--iodepth=0"],
            "option '--iodepth'",
        ),
        (
            vec!["emu:x25e,size=256m", "--virtual", "--purge"],
            "option '--purge'",
        ),
        (vec!["emu:null", "--virtual"], "its writes take no time"),
        (vec![missing], "create with --size"),
        (
            vec![missing, "--size=64m", "--ioengine=posixaio"],
            "option '--ioengine'",
        ),
    ] {
        let (code, stdout, stderr) = characterize(&args, &dir);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}");
        assert!(!dir.exists(), "{args:?} made the output directory");
    }
    assert!(!Path::new(missing).exists(), "a file was created");
    // An output directory under a missing one.
    let (code, _, stderr) = characterize(
        &["emu:x25e,size=256m", "--virtual"],
        &tmp.path().join("a/b"),
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("does not exist"), "{stderr}");
}

/// A real block device in real time: a device holding a file system is
/// refused by `run`'s safety checks unless --allow-destructive; with it,
/// the purge is a TRIM of the whole device and WSAT runs through `run`.
#[test]
fn a_block_device_is_characterized_in_real_time_behind_the_safety_checks() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("characterize", 64) else {
        return;
    };
    if !std::process::Command::new("mkfs.ext4")
        .args(["-q", "-F", &l.dev])
        .status()
        .is_ok_and(|s| s.success())
    {
        eprintln!("skipped: mkfs.ext4 failed or is missing");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("c");
    let args = [l.dev.as_str(), "--quick", "--tests=wsat", "--purge"];
    let (code, _, stderr) = characterize(&args, &dir);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("signature") && stderr.contains("--allow-destructive"),
        "{stderr}"
    );
    assert!(!dir.exists());
    let mut allowed = args.to_vec();
    allowed.push("--allow-destructive");
    let (code, stdout, stderr) = characterize(&allowed, &dir);
    assert_eq!(code, Some(0), "{stderr}");
    let d = doc(&dir);
    assert_eq!(d["target"]["kind"], "block");
    assert_eq!(d["target"]["clock"], "real");
    let w = &d["wsat"];
    assert_eq!(w["purge"]["done"], true, "{}", w["purge"]);
    assert!(w["purge"]["how"].as_str().unwrap().contains("TRIM"));
    assert!(f(&w["bytes_written"]) >= f(&d["target"]["capacity_bytes"]) * 3.0);
    assert!(!w["samples"].as_array().unwrap().is_empty());
    // RAM has no garbage collection, but in real time on a shared machine
    // the samples are noisy: whatever the verdict, it is stated.
    assert!(d["write_cliff"].is_object() != d["write_cliff_note"].is_string());
    assert!(stdout.contains("write cliff:"), "{stdout}");
}
