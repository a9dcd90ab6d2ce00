//! Completion strategies (`completion`, `sqthread_poll`, `coalesce_n`,
//! `coalesce_us`, `iodepth_batch_complete_max`): each runs on the emulator
//! and on a file, moves exact bytes, and the result says what ran and why
//! it differs from what was asked; requests that cannot work here are
//! refused with the reason.

use crate::common;
use common::*;
use serde_json::Value;

/// The job's `strategy` object of a native result.
fn strategy(r: &Value) -> &Value {
    &r["jobs"][0]["strategy"]
}

fn file_arg(dir: &tempfile::TempDir) -> String {
    let f = dir.path().join("data");
    std::fs::write(&f, vec![7u8; 4 << 20]).unwrap();
    format!("--filename={}", f.display())
}

/// `ssdready run ARGS`, expected to fail with exit 2 and one line naming
/// `needle`.
fn expect_refused(args: &[&str], needle: &str) -> String {
    let mut a = vec!["run", "--quiet"];
    a.extend_from_slice(args);
    let out = ssdready(&a);
    assert_refused(&out, &format!("{args:?}"), &[needle]);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn each_completion_strategy_runs_on_the_emulator_and_says_so() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (asked, ran) in [
        (None, "emu-hybrid"),
        (Some("interrupt"), "interrupt"),
        (Some("poll"), "spin"),
        (Some("spin"), "spin"),
        (Some("hybrid"), "hybrid"),
    ] {
        let c = asked.map(|a| format!("--completion={a}"));
        let mut args = vec![
            // The interface unlimited (the preset takes one command at a time,
            // which leaves nothing to coalesce).
            "--filename=emu:dram-ssd,size=64m,iface_depth=0",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=4",
            "--size=4m",
        ];
        args.extend(c.as_deref());
        let r = run_json(&args);
        let s = strategy(&r);
        assert_eq!(r["jobs"][0]["read"]["bytes"], 4u64 << 20, "{asked:?}");
        assert_eq!(s["ran"], ran, "{asked:?}: {s}");
        assert_eq!(s["requested"].as_str(), asked, "{s}");
        assert_eq!(s["issue"], "async");
        // Only "poll" is not what ran, and it says why.
        let fallback = s["fallback"].as_str();
        if asked == Some("poll") {
            assert!(fallback.unwrap().contains("in this process"), "{s}");
        } else {
            assert!(fallback.is_none(), "{s}");
        }
        assert!(s["completion_events"].as_u64().unwrap() > 0, "{s}");
    }
}

#[test]
fn each_completion_strategy_runs_on_a_file_and_says_so() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = file_arg(&dir);
    let cases: [(&str, &str, &str, Option<&str>); 7] = [
        ("io_uring", "interrupt", "interrupt", None),
        ("io_uring", "spin", "spin", None),
        ("io_uring", "hybrid", "hybrid", None),
        // Buffered I/O cannot be polled: user-space spinning, with why.
        ("io_uring", "poll", "spin", Some("need direct=1")),
        ("libaio", "poll", "spin", Some("libaio cannot poll")),
        ("libaio", "hybrid", "hybrid", None),
        (
            "psync",
            "poll",
            "sync",
            Some("completes each I/O inside its system call"),
        ),
    ];
    for (engine, asked, ran, why) in cases {
        let e = format!("--ioengine={engine}");
        let c = format!("--completion={asked}");
        let r = run_json(&[
            &f,
            &e,
            &c,
            "--rw=randread",
            "--bs=4k",
            "--iodepth=8",
            "--size=4m",
        ]);
        let s = strategy(&r);
        assert_eq!(
            r["jobs"][0]["read"]["bytes"],
            4u64 << 20,
            "{engine} {asked}"
        );
        assert_eq!(s["ran"], ran, "{engine} {asked}: {s}");
        match why {
            Some(w) => assert!(s["fallback"].as_str().unwrap().contains(w), "{s}"),
            None => assert!(s["fallback"].is_null(), "{s}"),
        }
        let issue = if engine == "psync" { "sync" } else { "async" };
        assert_eq!(s["issue"], issue, "{s}");
    }
}

#[test]
fn completion_contradicting_hipri_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    expect_refused(
        &[
            "--filename=/dev/shm/x",
            "--ioengine=io_uring",
            "--direct=1",
            "--hipri",
            "--completion=spin",
        ],
        "completion=spin contradicts hipri=1",
    );
    expect_refused(
        &["--filename=emu", "--completion=sometimes"],
        "allowed: interrupt, poll, spin, hybrid",
    );
}

#[test]
fn the_batch_reap_limit_is_honoured_and_reported() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let base = [
        "--filename=emu:null,size=64m",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=16",
        "--size=16m",
        "--completion=spin",
    ];
    let mut capped = base.to_vec();
    capped.push("--iodepth_batch_complete_max=2");
    let r = run_json(&capped);
    let s = strategy(&r);
    assert_eq!(s["complete_max"], 2);
    assert!(s["completions_per_event"].as_f64().unwrap() <= 2.0, "{s}");
    assert_eq!(r["jobs"][0]["read"]["bytes"], 16u64 << 20);
    // Uncapped, a zero-latency device hands back the whole queue at once.
    let r = run_json(&base);
    let s = strategy(&r);
    assert_eq!(s["complete_max"], 16);
    assert!(s["completions_per_event"].as_f64().unwrap() > 2.0, "{s}");
}

/// A run on the DRAM SSD preset, with extra options.
fn dram(extra: &[&str]) -> Value {
    let mut a = vec![
        // The interface unlimited (the preset takes one command at a time,
        // which leaves nothing to coalesce).
        "--filename=emu:dram-ssd,size=64m,iface_depth=0",
        "--rw=randread",
        "--bs=4k",
    ];
    a.extend_from_slice(extra);
    run_json(&a)
}

#[test]
fn coalescing_on_the_emulator_cuts_completion_events() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // 16 in flight, deliveries of at least 8 (the 50 ms timer never fires
    // but for the last few I/Os): every event carries 8 or more.
    let opts = ["--iodepth=16", "--size=8m", "--completion=interrupt"];
    let plain = dram(&opts);
    let mut c = opts.to_vec();
    c.extend(["--coalesce_n=8", "--coalesce_us=50ms"]);
    let coalesced = dram(&c);
    let (p, q) = (strategy(&plain), strategy(&coalesced));
    assert_eq!(q["coalescing"]["n"], 8, "{q}");
    assert_eq!(q["coalescing"]["by"], "the emulated device");
    assert!(p["coalescing"].is_null(), "{p}");
    let events = |s: &Value| s["completion_events"].as_u64().unwrap();
    assert!(
        q["completions_per_event"].as_f64().unwrap() >= 7.5,
        "coalesced: {q}"
    );
    assert!(events(q) < events(p), "coalesced {q} vs plain {p}");
    assert_eq!(coalesced["jobs"][0]["read"]["bytes"], 8u64 << 20);
}

#[test]
fn coalescing_raises_small_request_latency() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // One I/O in flight: coalescing holds each completion for its whole
    // time (300 µs), where alone it takes about 8 µs.
    let opts = ["--iodepth=1", "--size=1m", "--completion=spin"];
    let plain = dram(&opts);
    let mut c = opts.to_vec();
    c.extend(["--coalesce_n=8", "--coalesce_us=300"]);
    let coalesced = dram(&c);
    let lat = |r: &Value, k: &str| r["jobs"][0]["read"]["lat"][k].as_u64().unwrap();
    assert!(
        lat(&coalesced, "min_ns") >= 300_000,
        "{}",
        coalesced["jobs"][0]["read"]["lat"]
    );
    let p50 = |r: &Value| {
        let pcts = r["jobs"][0]["read"]["clat"]["percentiles"]
            .as_array()
            .unwrap()
            .clone();
        pcts.iter()
            .find(|p| p[0].as_f64() == Some(50.0))
            .and_then(|p| p[1].as_u64())
            .unwrap()
    };
    assert!(
        p50(&coalesced) > p50(&plain),
        "p50 {} coalesced vs {} plain",
        p50(&coalesced),
        p50(&plain)
    );
}

#[test]
fn coalescing_where_nothing_can_apply_it_is_refused_with_why() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = file_arg(&dir);
    expect_refused(
        &[
            &f,
            "--ioengine=io_uring",
            "--coalesce_n=8",
            "--coalesce_us=100",
            "--size=1m",
        ],
        "interrupt coalescing is not available here",
    );
    expect_refused(
        &["--ioengine=null", "--size=1m", "--coalesce_n=4"],
        "does not apply to ioengine=null",
    );
    let Some(l) = LoopDev::new("coalesce", 16) else {
        return;
    };
    let dev = format!("--filename={}", l.dev);
    let err = expect_refused(
        &[
            &dev,
            "--ioengine=io_uring",
            "--direct=1",
            "--coalesce_n=8",
            "--runtime=1",
        ],
        "not NVMe",
    );
    assert!(err.contains("loop device"), "{err}");
}

#[test]
fn sqpoll_thread_cpu_is_counted_in_the_jobs_cost() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = file_arg(&dir);
    let out = ssdready(&[
        "run",
        "--quiet",
        "--output-format=json",
        &f,
        "--ioengine=io_uring",
        "--sqthread_poll",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=8",
        "--runtime=1",
        "--time_based",
    ]);
    if !out.status.success() {
        eprintln!(
            "skipped: this kernel refuses SQPOLL: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let job = &r["jobs"][0];
    let s = &job["ssdready"]["strategy"];
    let sq = &s["sq_thread"];
    assert!(
        sq["threads"][0].as_str().unwrap().starts_with("iou-sqp-"),
        "{s}"
    );
    assert!(sq["source"].as_str().unwrap().contains("schedstat"), "{s}");
    let sq_ns = sq["cpu_ns"].as_u64().unwrap();
    assert!(sq_ns > 1_000_000, "the SQ thread polls: {sq_ns} ns");
    // In the job's system CPU (fio's sys_cpu, percent of the window)…
    let window_ns = job["job_runtime"].as_f64().unwrap() * 1e6;
    let sys_ns = job["sys_cpu"].as_f64().unwrap() / 100.0 * window_ns;
    assert!(
        sys_ns >= sq_ns as f64 * 0.95,
        "sys {sys_ns} < SQ thread {sq_ns}"
    );
    // …and in the process's getrusage figure (the thread is ours).
    let p = &job["ssdready"]["cpu"]["process"];
    let process_ns = p["user_ns"].as_u64().unwrap() + p["sys_ns"].as_u64().unwrap();
    assert!(
        process_ns as f64 >= sq_ns as f64 * 0.9,
        "process {process_ns} < SQ thread {sq_ns}"
    );
}

#[test]
fn on_a_loop_device_poll_falls_back_to_spinning_and_hipri_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("strategies", 16) else {
        return;
    };
    let dev = format!("--filename={}", l.dev);
    let base = [
        dev.as_str(),
        "--ioengine=io_uring",
        "--direct=1",
        "--rw=randread",
    ];
    let mut poll = base.to_vec();
    poll.extend(["--completion=poll", "--iodepth=4", "--size=4m", "--bs=4k"]);
    let r = run_json(&poll);
    let s = strategy(&r);
    assert_eq!(s["ran"], "spin", "{s}");
    assert!(
        s["fallback"]
            .as_str()
            .unwrap()
            .contains("queue/io_poll is 0"),
        "{s}"
    );
    assert_eq!(r["jobs"][0]["read"]["bytes"], 4u64 << 20);
    let mut hipri = base.to_vec();
    hipri.extend(["--hipri", "--size=4m"]);
    expect_refused(&hipri, "fio would run it");
    let mut sq = base.to_vec();
    sq.extend(["--sqthread_poll", "--iodepth=4", "--size=4m", "--bs=4k"]);
    let r = run_json(&sq);
    let s = strategy(&r);
    assert!(s["sq_thread"]["cpu_ns"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(r["jobs"][0]["read"]["bytes"], 4u64 << 20);
}
