//! `ssdready study` end to end: quick studies of emulated drives (with
//! short runs: SSDREADY_STUDY_RUNTIME) and of a loop device over /dev/shm
//! as root; study.json's schema, the findings, read-only studies, bad input.

use crate::common;
use common::*;
use serde_json::Value;
use std::process::Command;

/// Studies measure the machine: one at a time, or they measure each other.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Run a study with runs of `runtime` seconds; returns (exit code, stdout,
/// stderr, study.json when written).
fn study(args: &[&str], runtime: Option<&str>) -> (i32, String, String, Option<Value>) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut c = Command::new(env!("CARGO_BIN_EXE_ssdready"));
    c.arg("study").args(args).arg("--output").arg(&out);
    // Studies record themselves in the history: never in the user's.
    c.env("XDG_DATA_HOME", dir.path());
    if let Some(r) = runtime {
        c.env("SSDREADY_STUDY_RUNTIME", r);
    }
    let o = c.output().expect("run ssdready study");
    let json = std::fs::read(out.join("study.json"))
        .ok()
        .map(|b| serde_json::from_slice(&b).expect("study.json is JSON"));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        json,
    )
}

fn verdict<'a>(d: &'a Value, rule: &str) -> Option<&'a Value> {
    d["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["rule"] == rule)
}

fn check_schema(d: &Value) {
    assert_eq!(d["schema"], "ssdready.study");
    assert_eq!(d["schema_version"], 2);
    let runs = d["runs"].as_array().unwrap();
    assert!(!runs.is_empty());
    for r in runs.iter().filter(|r| r["error"].is_null()) {
        assert_eq!(
            r["result"]["schema"], "ssdready.run",
            "each run keeps its full result"
        );
        assert!(r["summary"]["iops"].as_f64().unwrap() > 0.0, "{}", r["id"]);
        let timed = r["options"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o == "--time_based");
        assert_eq!(timed, r["sweep"] != "fill", "{}", r["id"]);
    }
    for k in [
        "device_limit",
        "delivered_pct",
        "knee_qd",
        "scaling_efficiency",
        "platform_share_qd1",
        "clocks_per_io",
        "saturation",
    ] {
        assert!(d["figures"].get(k).is_some(), "figures.{k}");
    }
    check_strategies(d);
    let verdicts = d["verdicts"].as_array().unwrap();
    assert!(!verdicts.is_empty());
    for v in verdicts {
        for k in ["finding", "recommendation", "confidence"] {
            assert!(!v[k].as_str().unwrap().is_empty(), "{k} of {v}");
        }
        assert!(!v["evidence"]["figures"].as_array().unwrap().is_empty());
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The strategies section is there, each result is its run's, and every
/// ratio is the result's figure over async+intr's on the same pattern.
fn check_strategies(d: &Value) {
    let s = &d["figures"]["strategies"];
    assert!(s.is_object(), "figures.strategies is missing");
    let results = s["results"].as_array().unwrap();
    let skipped = s["skipped"].as_array().unwrap();
    let runs = d["runs"].as_array().unwrap();
    let planned: Vec<&Value> = runs.iter().filter(|r| r["sweep"] == "strategies").collect();
    assert!(!planned.is_empty(), "no strategies run");
    for r in &planned {
        let name = &r["workload"]["strategy"];
        let listed = results
            .iter()
            .chain(skipped)
            .any(|x| &x["strategy"] == name);
        assert!(listed, "{name}: neither a result nor skipped");
        assert_eq!(r["workload"]["threads"], 16, "{}", r["id"]);
    }
    for k in skipped {
        assert!(!k["reason"].as_str().unwrap().is_empty(), "{k}");
    }
    for r in results {
        check_strategy_result(r, results, runs);
    }
    check_best_strategy(d, s, results);
}

/// A strategy's result is its run's, and its ratios are its figures over
/// async+intr's on the same pattern.
fn check_strategy_result(r: &Value, results: &[Value], runs: &[Value]) {
    let num = |v: &Value| v.as_f64().unwrap();
    let run = runs
        .iter()
        .find(|x| x["id"] == r["run"])
        .unwrap_or_else(|| panic!("{}: no run {}", r["strategy"], r["run"]));
    assert_eq!(run["workload"]["strategy"], r["strategy"]);
    assert!(run["error"].is_null());
    assert!(close(num(&r["iops"]), num(&run["summary"]["iops"])), "{r}");
    assert!(num(&r["iops"]) > 0.0, "{r}");
    let pct = num(&r["pct_of_peak"]);
    assert!(pct > 0.0 && pct <= 101.0, "% of peak {pct}: {r}");
    assert!(
        r["cpu_source"].as_str().unwrap().contains("getrusage"),
        "{r}"
    );
    let base = results
        .iter()
        .find(|b| b["strategy"] == "async+intr" && b["pattern"] == r["pattern"]);
    let vs = &r["vs_async_intr"];
    match base {
        Some(b) if r["strategy"] != "async+intr" => {
            let want = |k: &str| num(&r[k]) / num(&b[k]);
            assert!(close(num(&vs["iops_ratio"]), want("iops")), "{r} vs {b}");
            assert!(
                close(num(&vs["cpu_per_io_ratio"]), want("cpu_ns_per_io")),
                "{r} vs {b}"
            );
            assert!(
                close(num(&vs["p99_lat_ratio"]), want("p99_lat_ns")),
                "{r} vs {b}"
            );
        }
        _ => assert!(vs.is_null(), "{r}"),
    }
}

/// The best strategy at random reads is the one with the highest IOPS
/// ratio to async+intr, with a verdict, where both ran; else none.
fn check_best_strategy(d: &Value, s: &Value, results: &[Value]) {
    let num = |v: &Value| v.as_f64().unwrap();
    let reads: Vec<&Value> = results
        .iter()
        .filter(|r| r["pattern"] == "randread" && r["strategy"] != "async+intr")
        .collect();
    let best = &s["best"];
    if results
        .iter()
        .any(|r| r["pattern"] == "randread" && r["strategy"] == "async+intr")
        && !reads.is_empty()
    {
        let top = reads
            .iter()
            .max_by(|a, b| {
                num(&a["vs_async_intr"]["iops_ratio"])
                    .total_cmp(&num(&b["vs_async_intr"]["iops_ratio"]))
            })
            .unwrap();
        assert_eq!(best["strategy"], top["strategy"], "{best}");
        assert!(close(
            num(&best["iops_ratio"]),
            num(&top["vs_async_intr"]["iops_ratio"])
        ));
        assert!(close(
            num(&best["cpu_per_io_ratio"]),
            num(&top["vs_async_intr"]["cpu_per_io_ratio"])
        ));
        assert!(best["cpu_source"].as_str().unwrap().contains("getrusage"));
        let fired = ["strategy-beats-interrupts", "interrupts-hold-their-own"]
            .iter()
            .any(|r| verdict(d, r).is_some());
        assert!(fired, "a verdict on the strategies");
    } else {
        assert!(best.is_null(), "{best}");
    }
}

#[test]
fn x25e_study_finds_its_knee_and_names_the_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (code, stdout, stderr, d) = study(&["emu:x25e", "--quick"], Some("0.5"));
    assert_eq!(code, 0, "{stderr}");
    let d = d.unwrap();
    check_schema(&d);
    // In ssdready's own process: said in the first lines and the headline.
    let head: Vec<&str> = stdout.lines().take(2).collect();
    assert!(
        head[0].contains("inside ssdready's own process"),
        "{stdout}"
    );
    assert!(head[1].starts_with("IN SSDREADY'S OWN PROCESS"), "{stdout}");
    assert_eq!(d["verdicts"][0]["rule"], "in-process-drive");
    let f = &d["figures"];
    check_knee(f);
    check_device_limits(&d, &stdout);
    assert!(stdout.contains("findings:"), "{stdout}");
    check_emulator_strategies(&d, &stdout);
    assert!(
        stderr.contains("plan (quick)"),
        "the plan comes first: {stderr}"
    );
}

/// The knee at QD 8 to 10, where the platform keeps up with the device
/// below it; on a busy machine, the curve's own.
fn check_knee(f: &Value) {
    let knee = f["knee_qd"].as_u64().unwrap();
    // The ground truth holds where the platform keeps up with the device
    // below the knee; on a machine busy with other work the application
    // sees a later knee, and the study must show that loss.
    let at8 = f["qd_curve"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["qd"] == 8)
        .map(|c| c["iops"].as_f64().unwrap() / c["device_iops"].as_f64().unwrap())
        .unwrap();
    if at8 >= 0.95 {
        assert!((8..=10).contains(&knee), "knee {knee}: {}", f["qd_curve"]);
    } else {
        // A busy machine lowers every depth, the peak too, so the knee may
        // stay where it is: then it must still be the curve's own (the
        // first depth at 90 % of the peak).
        let curve = f["qd_curve"].as_array().unwrap();
        let iops = |c: &serde_json::Value| c["iops"].as_f64().unwrap();
        let peak = curve.iter().map(iops).fold(0.0, f64::max);
        let first = curve
            .iter()
            .find(|c| iops(c) >= 0.9 * peak)
            .and_then(|c| c["qd"].as_u64())
            .unwrap();
        assert_eq!(
            knee, first,
            "the knee is not the curve's: {}",
            f["qd_curve"]
        );
        eprintln!(
            "skipped the x25e knee check: the platform delivered {:.0} % of the device at QD 8 (a busy machine); knee {knee}, the curve's own",
            100.0 * at8
        );
    }
}

/// The analytic limit, and the device named as the limit (or, on a busy
/// machine, the CPUs).
fn check_device_limits(d: &Value, stdout: &str) {
    let f = &d["figures"];
    let limit = f["device_limit"]["iops"].as_f64().unwrap();
    assert!(
        (limit - 35_714.0).abs() < 50.0,
        "the analytic limit: {limit}"
    );
    let s = &f["saturation"];
    let busy = s["system_busy_pct"].as_f64().unwrap_or(0.0);
    if s["limit"] == "device" {
        assert!(verdict(d, "device-limits-reads").is_some(), "{stdout}");
        assert!(stdout.contains("the controller"), "{stdout}");
    } else {
        // On a machine busy with other work the platform cannot keep up;
        // the study must then say that the CPUs, not the device, limit.
        assert!(busy >= 90.0, "not the device, yet the CPUs were idle: {s}");
        eprintln!(
            "skipped the device check: the CPUs were {busy:.0} % busy ({})",
            s["part"]
        );
    }
}

/// The emulator takes every strategy but SQPOLL (io_uring's).
fn check_emulator_strategies(d: &Value, stdout: &str) {
    let s = &d["figures"]["strategies"];
    let ran: Vec<&str> = s["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["strategy"].as_str().unwrap())
        .collect();
    for want in [
        "async+intr",
        "sync+poll",
        "stm+poll",
        "atm+poll",
        "coalesced",
    ] {
        assert!(ran.contains(&want), "{want}: {ran:?}");
    }
    // SQPOLL is not planned there: the plan says why.
    assert!(!ran.contains(&"sqpoll"), "{ran:?}");
    let sq = d["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["what"] == "strategy sqpoll")
        .unwrap_or_else(|| panic!("{}", d["skipped"]));
    assert!(sq["why"].as_str().unwrap().contains("io_uring"), "{sq}");
    assert!(
        stdout.contains("strategies, 4 KiB random reads") && stdout.contains("  best: "),
        "{stdout}"
    );
}

#[test]
fn null_study_puts_the_whole_limit_on_a_named_part_of_the_platform() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (code, stdout, stderr, d) = study(&["emu:null", "--quick"], Some("0.3"));
    assert_eq!(code, 0, "{stderr}");
    let d = d.unwrap();
    assert!(d["figures"]["device_limit"]["iops"].is_null());
    let v = verdict(&d, "platform-is-the-whole-limit").unwrap_or_else(|| panic!("{stdout}"));
    let finding = v["finding"].as_str().unwrap();
    assert!(
        finding.contains("the platform is the whole limit"),
        "{finding}"
    );
    // A part of the platform, or, on a machine busy with other builds,
    // the other work that kept the submitting thread waiting: never the
    // device, which has no limit here.
    let limit = d["figures"]["saturation"]["limit"].as_str().unwrap();
    assert!(
        [
            "one_core",
            "io_path_cpu",
            "lock",
            "submission_path",
            "completions",
            "other_work",
            "cpus_allowed"
        ]
        .contains(&limit),
        "{limit}: {}; evidence {}",
        d["figures"]["saturation"]["part"],
        d["figures"]["saturation"]["evidence"]
    );
    let said = d["facts"]["saturation_limit"]["value"].as_str().unwrap();
    assert!(finding.contains(&format!("held by {said}")), "{finding}");
}

#[test]
fn bad_study_arguments_say_what_and_write_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (args, want) in [
        (vec!["--budget=soon"], "option '--budget'"),
        (vec!["--budget=5s"], "too short"),
        (vec!["emu:nope"], "unknown emulator preset 'nope'"),
        (
            vec!["--sweeps=colour"],
            "allowed: scheduler, buffered, raw, devices",
        ),
        (vec!["/no/such/dir/file"], "does not exist"),
        (vec!["--slo=1ms"], "names no percentile"),
        (vec!["--slo=p98=1ms"], "is not a percentile"),
    ] {
        let (code, _, stderr, d) = study(&args, None);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(d.is_none());
    }
}

#[test]
fn a_sparse_file_is_refused_with_how_to_lay_it_out() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // As a new user would: `truncate -s 64M data`, then a study of it.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::File::create(&data)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let f = std::fs::File::open(&data).unwrap();
    if ssdready_io::target::holes::data_bytes(&f, 64 << 20).unwrap() == 64 << 20 {
        eprintln!("skipped: the temporary directory's file system reports no holes");
        return;
    }
    let (code, _, stderr, d) = study(&[data.to_str().unwrap(), "--quick"], Some("0.2"));
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
    assert!(
        stderr.contains("is sparse: 0 B of its first 64.00 MiB hold data"),
        "{stderr}"
    );
    assert!(stderr.contains("dd if=/dev/urandom of="), "{stderr}");
    assert!(stderr.contains("count=64 conv=notrunc"), "{stderr}");
    assert!(d.is_none(), "nothing written");
    // The file is as it was: nothing written into it.
    let f = std::fs::File::open(&data).unwrap();
    assert_eq!(
        ssdready_io::target::holes::data_bytes(&f, 64 << 20).unwrap(),
        0
    );
}

#[test]
fn quick_study_of_a_loop_device_over_shm_as_root() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // On mq-deadline with a queue of 64, without --try-changes: no queue
    // setting of the device changes at any moment of the study (read
    // every few milliseconds while it runs), and the scheduler sweep it
    // left out says how to ask for it.
    let Some(t) = common::tuned::Tuned::new("study", 512) else {
        return;
    };
    let before = t.snapshot();
    let done = std::sync::atomic::AtomicBool::new(false);
    let (mut reads, mut changed) = (0, None);
    let (code, stdout, stderr, d) = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let r = study(&[&t.l.dev, "--quick"], Some("0.5"));
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            r
        });
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            let now = t.snapshot();
            reads += 1;
            if now != before && changed.is_none() {
                changed = Some(now);
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        h.join().unwrap()
    });
    assert_eq!(code, 0, "{stderr}");
    assert!(reads > 10, "read {reads} times");
    assert_eq!(changed, None, "changed during the study: {stderr}");
    assert_eq!(t.snapshot(), before, "{stderr}");
    let d = d.unwrap();
    let skipped = d["skipped"].to_string();
    assert!(skipped.contains("--try-changes"), "{skipped}");
    check_schema(&d);
    assert_eq!(d["targets"][0]["kind"], "ram_device");
    assert!(
        d["targets"][0]["writable"].as_bool().unwrap(),
        "a fresh loop device may be written"
    );
    let sweeps: Vec<&str> = d["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["sweep"].as_str().unwrap())
        .collect();
    for s in ["fill", "qd", "repeat", "engine", "rw", "bs", "instrumented"] {
        assert!(sweeps.contains(&s), "sweep {s} ran: {sweeps:?}");
    }
    let p = &d["figures"]["platform_share_qd1"];
    assert!(
        p["source"].as_str().unwrap().contains("decomposition"),
        "{p}"
    );
    assert!(p["pct"].as_f64().unwrap() > 0.0 && p["pct"].as_f64().unwrap() < 100.0);
    assert!(!d["figures"]["clocks_per_io"]["qd1"]["layers"]
        .as_array()
        .unwrap()
        .is_empty());
    assert!(d["figures"]["knee_qd"].as_u64().is_some());
    assert!(stdout.contains("findings:"));
    eprintln!("{stdout}");
}

#[test]
fn a_device_with_a_signature_gets_a_read_only_study_that_says_what_it_skipped() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("study-ro", 64) else {
        return;
    };
    // An MBR boot signature: run refuses to write, so the study reads only.
    let mut sector = vec![0u8; 512];
    sector[510] = 0x55;
    sector[511] = 0xAA;
    sector[446 + 4] = 0x83;
    sector[446 + 12] = 1;
    std::fs::write(&l.dev, &sector).unwrap();
    let (code, _, stderr, d) = study(&[&l.dev, "--quick"], Some("0.1"));
    assert_eq!(code, 0, "{stderr}");
    let d = d.unwrap();
    assert_eq!(d["targets"][0]["writable"], false);
    assert!(!d["targets"][0]["write_refusal"]
        .as_str()
        .unwrap()
        .is_empty());
    let runs = d["runs"].as_array().unwrap();
    assert!(runs
        .iter()
        .all(|r| !r["workload"]["rw"].as_str().unwrap().contains("write")));
    let skipped = d["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["what"].as_str().unwrap().contains("writes")),
        "{skipped:?}"
    );
    assert_eq!(
        &std::fs::read(&l.dev).unwrap()[..512],
        &sector[..],
        "nothing was written"
    );
}

#[test]
fn ctrl_c_stops_the_study_and_keeps_what_ran() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["study", "emu:x25e", "--quick", "--output"])
        .arg(&out)
        .env("XDG_DATA_HOME", dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(4));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    let d: Value = serde_json::from_slice(&std::fs::read(out.join("study.json")).unwrap()).unwrap();
    assert_eq!(d["interrupted"], true);
    let runs = d["runs"].as_array().unwrap().len();
    assert!((1..10).contains(&runs), "stopped early: {runs} runs");
    assert!(String::from_utf8_lossy(&o.stdout).contains("interrupted"));
}

#[test]
fn a_latency_target_finds_the_capacity_and_a_verdict_says_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (code, _, stderr, d) = study(
        &["emu:nvm-lowlat", "--quick", "--slo=p99=200us"],
        Some("0.3"),
    );
    assert_eq!(code, 0, "{stderr}");
    let d = d.expect("study.json");
    let c = &d["capacity"];
    assert_eq!(c["what"], "4 KiB random reads", "{c}");
    // The model alone in virtual time: 7 units of 10 µs, 700K IOPS peak,
    // and an answer between the light load and the peak.
    let dev = &c["device"];
    let peak = dev["peak_iops"].as_f64().unwrap();
    assert!((650e3..=710e3).contains(&peak), "{dev}");
    let s = dev["sustained_iops"].as_f64().unwrap();
    assert!(s > 0.5 * peak && s < peak, "{dev}");
    // The platform's search ran its curve, its bisection and a repeat.
    let steps: Vec<&str> = c["platform"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["step"].as_str().unwrap())
        .collect();
    assert!(
        steps.iter().filter(|s| **s == "curve").count() == 12,
        "{steps:?}"
    );
    assert!(
        verdict(&d, "capacity-at-target").is_some() || verdict(&d, "capacity-none").is_some(),
        "{}",
        d["verdicts"]
    );
    assert!(stderr.contains("capacity at a latency target"), "{stderr}");
}

#[test]
fn a_stop_during_the_applications_section_interrupts_the_study() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    use std::io::{BufRead, BufReader};
    let d = tempfile::tempdir().unwrap();
    let target = d.path().join("new.img");
    let out = d.path().join("s");
    let mut child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .arg("study")
        .arg(&target)
        .args(["--quick", "--sweeps=applications", "--output"])
        .arg(&out)
        .env("XDG_DATA_HOME", d.path())
        // Short raw sweeps: the stop is what is tested, in the section after.
        .env("SSDREADY_STUDY_RUNTIME", "0.1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the section's first workload (the raw sweeps come first).
    let err = BufReader::new(child.stderr.take().unwrap());
    let mut lines = err.lines();
    let started = lines
        .by_ref()
        .map_while(Result::ok)
        .any(|l| l.contains("ssdready: applications:"));
    if !started {
        let _ = child.kill();
        let _ = child.wait();
        eprintln!("skipped: the study ran no applications section here");
        return;
    }
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    // Drain stderr so the study never blocks on it.
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(130), "{rest:?}");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
}
