//! fio's `steadystate` options in `ssdready run`: a job ends once its
//! criterion holds over the window, fio's JSON carries fio 3.33's
//! `steadystate` object (checked against fio's own output, kept in
//! tests/golden, and against live fio when installed), and bad values stop
//! with exit code 2.

mod common;
use common::*;
use serde_json::Value;

fn fio_json(args: &[&str]) -> Value {
    let mut a = vec!["run", "--quiet", "--output-format=json"];
    a.extend_from_slice(args);
    let out = ssdready(&a);
    assert!(
        out.status.success(),
        "ssdready {a:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("fio JSON")
}

/// A rate-limited null-engine job: 2000 IOPS every second, steady from the
/// first sample.
const PACED: [&str; 7] = [
    "--ioengine=null",
    "--size=64m",
    "--rw=randread",
    "--bs=4k",
    "--rate_iops=2000",
    "--time_based",
    "--runtime=20",
];

#[test]
fn a_steady_job_ends_early_with_fios_steadystate_object() {
    let mut a = vec!["--name=s", "--ss=iops:10%", "--ss_dur=2"];
    a.extend(PACED);
    let t = std::time::Instant::now();
    let v = fio_json(&a);
    assert!(
        t.elapsed() < std::time::Duration::from_secs(10),
        "ran {:?} of a 20 s runtime",
        t.elapsed()
    );
    let job = &v["jobs"][0];
    assert!(
        job["job_runtime"].as_u64().unwrap() < 6000,
        "{}",
        job["job_runtime"]
    );
    let ss = &job["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["ss"], "iops:10.000000%");
    assert_eq!(ss["duration"], 2);
    let iops = ss["data"]["iops_mean"].as_u64().unwrap();
    assert!((1900..=2100).contains(&iops), "{ss}");
    // fio 3.33's object, key for key and in its order, after latency_window.
    let golden: Value =
        serde_json::from_str(include_str!("golden/fio-3.33-steadystate.json")).unwrap();
    let keys = |o: &Value| -> Vec<String> { o.as_object().unwrap().keys().cloned().collect() };
    assert_eq!(keys(ss), keys(&golden["steadystate"]));
    assert_eq!(keys(&ss["data"]), keys(&golden["steadystate"]["data"]));
    for k in ["ss", "criterion"] {
        assert!(ss[k].is_string(), "{k}");
    }
    let ours = keys(job);
    let at = ours.iter().position(|k| k == "steadystate").unwrap();
    assert_eq!(ours[at - 1], "latency_window");
}

#[test]
fn a_criterion_that_never_holds_runs_to_the_runtime_and_says_not_attained() {
    let v = fio_json(&[
        "--name=n",
        "--ioengine=null",
        "--size=64m",
        "--rw=randread",
        "--rate_iops=1000",
        "--time_based",
        "--runtime=3",
        "--steadystate=iops:0",
        "--steadystate_duration=2",
    ]);
    let job = &v["jobs"][0];
    assert!(job["job_runtime"].as_u64().unwrap() >= 3000);
    assert_eq!(job["steadystate"]["attained"], 0);
    assert_eq!(
        job["steadystate"]["data"]["iops"].as_array().unwrap().len(),
        2
    );
}

#[test]
fn each_clone_has_its_own_check_and_a_group_has_one() {
    let mut a = vec![
        "--name=c",
        "--numjobs=2",
        "--ss=iops_slope:5%",
        "--ss_dur=2",
    ];
    a.extend(PACED);
    let v = fio_json(&a);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for j in jobs {
        assert_eq!(j["steadystate"]["attained"], 1, "{}", j["steadystate"]);
        let iops = j["steadystate"]["data"]["iops_mean"].as_u64().unwrap();
        assert!((1900..=2100).contains(&iops), "{iops}");
    }
    a.push("--group_reporting");
    let v = fio_json(&a);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1);
    let iops = jobs[0]["steadystate"]["data"]["iops_mean"]
        .as_u64()
        .unwrap();
    assert!(
        (3800..=4200).contains(&iops),
        "the group's two workers: {iops}"
    );
}

#[test]
fn the_native_schema_carries_the_report_and_the_text_says_it() {
    let mut a = vec!["--name=s", "--ss=bw:10%", "--ss_dur=2"];
    a.extend(PACED);
    let v = run_json(&a);
    let ss = &v["jobs"][0]["steadystate"][0];
    assert_eq!(ss["attained"], true);
    assert_eq!(ss["attained_after_s"], 2);
    assert_eq!(ss["limit"], 10.0);
    let mut t = vec!["run", "--quiet"];
    t.extend(a);
    let out = ssdready(&t);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("steady state: attained after 2 s"), "{text}");
}

#[test]
fn bad_steady_state_options_stop_with_exit_code_2() {
    for (opt, want) in [
        ("--ss=lat:1%", "'lat' is not a criterion"),
        ("--ss=iops", "has no limit"),
        ("--ss_dur=500ms", "under one second"),
        ("--ss=iops:-2%", "not a finite number"),
    ] {
        let mut a = vec!["run", "--name=b", opt, "--ss_dur=2"];
        if opt.starts_with("--ss_dur") {
            a.pop();
        }
        a.extend(PACED);
        let out = ssdready(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{opt}: {err}");
        assert!(
            err.contains(want) && err.contains("allowed"),
            "{opt}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
    // A reporting group must judge its jobs alike.
    let out = ssdready(&[
        "run",
        "--group_reporting",
        "--ioengine=null",
        "--size=1m",
        "--name=a",
        "--ss_dur=2",
        "--name=b",
        "--ss_dur=3",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("same reporting group"), "{err}");
    // Virtual time has no steady-state detection yet: said, not ignored.
    let out = ssdready(&[
        "emu",
        "simulate",
        "--name=v",
        "--filename=emu:x25e,size=256m",
        "--rw=randwrite",
        "--runtime=5",
        "--time_based",
        "--ss_dur=2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("characterize --virtual"), "{err}");
}

/// With fio installed, both tools judge the same paced job steady, with
/// the same object.
#[test]
fn side_by_side_with_live_fio() {
    let mut args = vec!["--name=s", "--ss=iops:10%", "--ss_dur=2"];
    args.extend(PACED);
    let Ok(f) = std::process::Command::new("fio")
        .args(&args)
        .arg("--output-format=json")
        .output()
    else {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    };
    let fio: Value = serde_json::from_slice(&f.stdout).unwrap();
    let ours = fio_json(&args);
    let (a, b) = (
        &fio["jobs"][0]["steadystate"],
        &ours["jobs"][0]["steadystate"],
    );
    assert_eq!(a["attained"], 1, "fio: {a}");
    assert_eq!(b["attained"], 1, "ours: {b}");
    assert_eq!(a["ss"], b["ss"]);
    let mean = |v: &Value| v["data"]["iops_mean"].as_f64().unwrap();
    assert!(
        (mean(a) - mean(b)).abs() / mean(a) < 0.05,
        "fio {} vs ours {}",
        mean(a),
        mean(b)
    );
}
