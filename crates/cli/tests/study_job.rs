//! `ssdready study --job FILE`: a bad job file is one line and exit code 2
//! with nothing written; as root, a job on a loop device over /dev/shm is
//! studied as written, in repeats, each variant changing one thing, the
//! job file's text and hash recorded, and the best configuration's job
//! file one that runs.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// One study at a time: each measures the machine, and two at once on a
/// machine of few CPUs would each be the other's load (a rate-limited
/// job beside a study trying the host's changes ran starved).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn study_job(args: &[&str], out: &Path) -> (i32, String, String) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .arg("study")
        .args(args)
        .arg("--output")
        .arg(out)
        .output()
        .expect("run ssdready study");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_job_file_the_study_cannot_run_is_one_line_and_exit_2_with_nothing_written() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let data = d.path().join("data");
    let cases = [
        ("[j\nrw=randread\n", "empty section name", None),
        (
            "[j]\nrw=randread\nbogus_opt=1\nsize=1m\n",
            "option 'bogus_opt'",
            None,
        ),
        (
            "[j]\nrw=randread\nsize=1m\nexec_prerun=true\n",
            "option 'exec_prerun' (line 4)",
            None,
        ),
        (
            "[j]\nrw=randread\nsize=1m\n",
            "no job section [nosuch]",
            Some("nosuch"),
        ),
        ("[global]\nrw=read\n", "no jobs in", None),
    ];
    for (i, (text, want, section)) in cases.iter().enumerate() {
        let file = d.path().join(format!("bad{i}.fio"));
        std::fs::write(&file, format!("{text}filename={}\n", data.display())).unwrap();
        let out = d.path().join(format!("out{i}"));
        let mut args = vec!["--job", file.to_str().unwrap(), "--quick"];
        if let Some(s) = section {
            args.extend(["--section", s]);
        }
        let (code, stdout, stderr) = study_job(&args, &out);
        assert_eq!(code, 2, "{text}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{text}: {stderr}");
        assert!(stderr.contains(want), "{text}: {stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(!out.exists(), "{text}: nothing written");
        assert!(!data.exists(), "{text}: no target file made");
    }
}

#[test]
fn a_job_on_a_loop_device_is_studied_in_repeats_and_one_change_at_a_time() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("job", 256) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("db.fio");
    std::fs::write(
        &file,
        "[global]\nioengine=libaio\ndirect=1\nbs=8k\niodepth=8\nruntime=30\ntime_based=1\n\
         [oltp]\nrw=randrw\nrwmixread=70\nfilename=/nonexistent\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let f = file.to_str().unwrap();
    let (code, stdout, stderr) = study_job(
        &[
            "--job",
            f,
            &l.dev,
            "--budget",
            "15s",
            "--allow-destructive",
            "--quiet",
        ],
        &out,
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("what holds this job:"), "{stdout}");
    assert!(stdout.contains("at most 1 s"), "the cut is said: {stdout}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("job-study.json")).unwrap()).unwrap();
    assert_eq!(doc["job_text"], std::fs::read_to_string(&file).unwrap());
    assert_eq!(doc["job_sha256"].as_str().unwrap().len(), 64);
    assert_eq!(doc["repeats"].as_array().unwrap().len(), 3);
    let options = |list: &str| -> Vec<String> {
        doc[list].as_array().map_or(Vec::new(), |a| {
            a.iter()
                .map(|v| v["option"].as_str().unwrap().to_string())
                .collect()
        })
    };
    let variants = options("variants");
    for want in [
        "iodepth=4",
        "iodepth=16",
        "iodepth=32",
        "numjobs=2",
        "ioengine=io_uring",
    ] {
        assert!(variants.iter().any(|v| v == want), "{want}: {variants:?}");
    }
    // A larger block is another workload: apart, and never configured.
    assert_eq!(options("different_workloads"), ["bs=16384"]);
    assert!(
        stdout.contains("what a different workload would get"),
        "{stdout}"
    );
    let best = doc["best"]["options"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        best.iter().all(|o| !o.as_str().unwrap().starts_with("bs=")),
        "{best:?}"
    );
    // Where the changes that gained were measured together and gained, the
    // user's job comes back with them, its gain in its header, and it runs.
    if let Some(b) = doc.get("best").filter(|b| b["beyond_noise"] == true) {
        let best = std::fs::read_to_string(out.join("job-best.fio")).unwrap();
        assert!(best.starts_with("# the best configuration: "), "{best}");
        for o in b["options"].as_array().unwrap() {
            assert!(best.contains(o.as_str().unwrap()), "{o} in {best}");
        }
        let p = ssdready(&[
            "run",
            "--parse-only",
            out.join("job-best.fio").to_str().unwrap(),
        ]);
        assert!(p.status.success(), "{}", String::from_utf8_lossy(&p.stderr));
    } else {
        assert!(!out.join("job-best.fio").exists());
    }
    // Each repeat's figures are the run's own (the unit tests check the
    // sums); set against fio on the same file in docs/results.md, not here:
    // runs at different moments on a loaded machine differ by more than
    // any bound a test could keep.
    for r in doc["repeats"].as_array().unwrap() {
        assert!(r["together"]["read"]["iops"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            r["together"]["write"]["iops"].as_f64().unwrap() > 0.0,
            "{r}"
        );
    }
    assert!(doc["median_iops"].as_f64().unwrap() > 0.0);
    // fio beside the study, where it is installed: the same job run by
    // fio, its figure set against the study's; else why not, in words.
    let fio = &doc["fio"];
    match std::process::Command::new("fio").arg("--version").output() {
        Ok(v) if v.status.success() => {
            let version = String::from_utf8_lossy(&v.stdout).trim().to_string();
            assert_eq!(fio["version"], version.as_str(), "{fio}");
            let first = fio["lines"][0].as_str().unwrap_or_default();
            assert!(
                first.contains("on the same file") || fio["error"].is_string(),
                "{fio}"
            );
        }
        _ => assert!(fio["error"].as_str().unwrap().contains("fio"), "{fio}"),
    }
}

/// Every queue file of `disk` as read (the host's settings to compare).
fn queue_snapshot(disk: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(format!("/sys/block/{disk}/queue"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_file())
        .filter_map(|e| {
            let v = std::fs::read_to_string(e.path()).ok()?;
            Some((e.file_name().to_string_lossy().into_owned(), v))
        })
        .collect();
    out.sort();
    out
}

/// A queue setting planted for a test and reset after it: a loop device
/// keeps its queue settings after it is detached.
struct Planted {
    path: String,
    was: String,
}

impl Planted {
    fn new(disk: &str, attr: &str, value: &str) -> Planted {
        let path = format!("/sys/block/{disk}/queue/{attr}");
        let was = std::fs::read_to_string(&path).unwrap().trim().to_string();
        std::fs::write(&path, value).unwrap();
        Planted { path, was }
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.path, &self.was);
    }
}

#[test]
fn asked_to_try_the_hosts_changes_the_job_study_lifts_a_planted_limit_and_leaves_the_host_as_it_was(
) {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("joblevers", 256) else {
        return;
    };
    let disk = l.dev.trim_start_matches("/dev/").to_string();
    // Requests of 4 KiB under 1 MiB reads: fio on this loop device reads
    // about three times slower with it than with the device's own
    // largest request.
    let _planted = Planted::new(&disk, "max_sectors_kb", "4");
    let before = queue_snapshot(&disk);
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("big.fio");
    std::fs::write(
        &file,
        "[big]\nrw=read\nbs=1m\nioengine=libaio\niodepth=4\ndirect=1\nfilename=/nonexistent\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = d.path().join("out");
    let mut args = vec!["--job", f, &l.dev, "--budget", "60s"];
    args.extend(["--allow-destructive", "--quiet"]);
    // Not asked: nothing of the host changes, and the study says how to ask.
    let (code, stdout, stderr) = study_job(&args, &out);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(queue_snapshot(&disk), before, "the host as it was");
    assert!(stdout.contains("not tried on the job"), "{stdout}");
    assert!(stdout.contains("--try-changes"), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("job-study.json")).unwrap()).unwrap();
    assert!(doc["host"].get("trials").is_none(), "{}", doc["host"]);
    // Asked: each change in turns, put back after each run.
    let out = d.path().join("asked");
    args.push("--try-changes");
    let (code, stdout, stderr) = study_job(&args, &out);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(queue_snapshot(&disk), before, "the host as it was");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("job-study.json")).unwrap()).unwrap();
    let trials = doc["host"]["trials"].as_array().expect("host trials");
    let t = trials
        .iter()
        .find(|t| t["lever"] == "max-sectors")
        .unwrap_or_else(|| panic!("max-sectors tried: {stdout}"));
    assert_eq!(t["from"], "4");
    assert_eq!(
        t["to"].as_str(),
        Some(before_of(&before, "max_hw_sectors_kb"))
    );
    assert_eq!(t["turns"].as_array().unwrap().len(), 3, "{t}");
    let bw = t["gains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metric"] == "bandwidth")
        .unwrap();
    assert!(bw["change_pct"].as_f64().unwrap() > 30.0, "{bw}");
    // The request queue admits the job's 4 I/Os: not tried, and said why.
    let untested = doc["host"]["untested"].as_array().unwrap();
    let nr = untested
        .iter()
        .find(|u| u["lever"] == "nr-requests")
        .unwrap();
    assert_eq!(nr["reason"], "cannot_bind", "{nr}");
    // Where fio ran beside the study, it A/B'd the change that gained
    // most, at the same point, through the same change (the queue is as
    // it was, above), and the line says whether the trial agrees.
    let fio = &doc["fio"];
    let fio_ran = fio["as_written"].is_object() && fio["error"].is_null();
    let gained: Vec<String> = trials
        .iter()
        .filter(|t| t["outcome"] == "better" && t["moved"].is_null())
        .map(|t| {
            format!(
                "{} {} → {}",
                t["lever"].as_str().unwrap(),
                t["from"].as_str().unwrap(),
                t["to"].as_str().unwrap()
            )
        })
        .collect();
    if fio_ran && !gained.is_empty() {
        let h = &fio["host"];
        assert_eq!(h["change"].as_str(), Some(gained[0].as_str()), "{fio}");
        assert!(
            stdout.contains("by fio in 2 pair(s) of turns at the same point"),
            "{stdout}"
        );
    }
    // Where the best configuration gained with the size among its host
    // changes (its trial helped beyond the noise; a loaded machine can
    // leave it too noisy to judge), the udev rule that keeps the size
    // comes with job-best.fio, its measured gain in its header.
    let host_best = doc["best"]["host"].as_array().cloned().unwrap_or_default();
    let with_size = host_best
        .iter()
        .any(|h| h.as_str().is_some_and(|h| h.starts_with("max-sectors")));
    if doc["best"]["beyond_noise"] == true && with_size {
        let rules = std::fs::read_to_string(out.join("99-ssdready.rules")).unwrap();
        assert!(rules.starts_with("# ssdready study "), "{rules}");
        assert!(rules.contains(" over 3 turns"), "{rules}");
        assert!(
            rules.contains(&format!("KERNEL==\"{disk}\", ATTR{{queue/max_sectors_kb}}")),
            "{rules}"
        );
    }
}

fn before_of<'a>(snap: &'a [(String, String)], attr: &str) -> &'a str {
    snap.iter().find(|(k, _)| k == attr).unwrap().1.trim()
}

#[test]
fn a_rate_limited_job_gets_its_capacity_at_its_own_latency_target_open_loop_from_its_rate() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("jobpaced", 256) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("paced.fio");
    std::fs::write(
        &file,
        "[paced]\nrw=randread\nbs=4k\nioengine=libaio\niodepth=4\ndirect=1\nrate_iops=2000\n\
         latency_target=20ms\nlatency_percentile=99\nfilename=/nonexistent\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let f = file.to_str().unwrap();
    // About 31 runs of at least 1 s each, and their start-ups: a budget
    // that holds them all (the study keeps its budget by the clock, and
    // the capacity search comes last).
    let args = ["--job", f, &l.dev, "--budget", "90s", "--allow-destructive"];
    let (code, stdout, stderr) = study_job(&[&args[..], &["--quiet"]].concat(), &out);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("of 2000 IOPS asked"), "{stdout}");
    assert!(stdout.contains("its capacity"), "{stdout}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("job-study.json")).unwrap()).unwrap();
    let c = &doc["capacity"];
    assert!(
        c["what"].as_str().unwrap().contains("latency_target"),
        "{c}"
    );
    let p = &c["platform"];
    assert_eq!(p["slo"]["limit_ns"], 20_000_000, "{c}");
    // The first load offered is the job's own rate, open loop.
    let first = p["points"][0]["offered_iops"].as_f64().unwrap();
    let median = doc["median_iops"].as_f64().unwrap();
    assert!(
        (first - median.round()).abs() <= 1.0,
        "{first} against {median}"
    );
    assert!(p["peak_iops"].as_f64().unwrap() > first, "{c}");
}

#[test]
fn a_job_behind_a_four_request_queue_is_held_by_the_devices_queue_named_with_its_path() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("jobqueue", 256) else {
        return;
    };
    let disk = l.dev.trim_start_matches("/dev/").to_string();
    let _scheduler = Planted::new(&disk, "scheduler", "none");
    let _queue = Planted::new(&disk, "nr_requests", "4");
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("rand-read-iops.fio");
    std::fs::write(
        &file,
        "[global]\nioengine=libaio\ndirect=1\nreadwrite=randread\nblocksize=4k\n\
         [rand-read-iops]\niodepth=32\nfilename=/nonexistent\n",
    )
    .unwrap();
    let out = d.path().join("out");
    let f = file.to_str().unwrap();
    let args = [
        "--job",
        f,
        &l.dev,
        "--budget",
        "60s",
        "--allow-destructive",
        "--quiet",
    ];
    let (code, stdout, stderr) = study_job(&args, &out);
    assert_eq!(code, 0, "{stderr}");
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("job-study.json")).unwrap()).unwrap();
    let held = doc["held"].as_array().expect("what holds the job, judged");
    let s = &held[0]["saturation"];
    // Beside other work the picture is another: a busy CPU keeps few
    // requests at the device, and fio's A/B of the queue there gains a
    // quarter, not five times. Only a study that measured its CPUs taken
    // by others may answer otherwise, and it says so.
    if s["limit"] != "device_queue" && loaded(s) {
        eprintln!(
            "the queue's verdict not asserted: other processes took {} % of the busy CPUs and kept the I/O's threads waiting {} % of the run",
            s["others_pct"], s["io_wait_pct"]
        );
        return;
    }
    assert_eq!(s["limit"], "device_queue", "{stdout}");
    assert_eq!(s["setting"]["value"], "4", "{s}");
    let path = format!("/sys/block/{disk}/queue/nr_requests");
    assert_eq!(s["setting"]["path"], path.as_str(), "{s}");
    assert!(stdout.contains(&path), "{stdout}");
    // Each run of the job is kept as the device study keeps a point.
    let points = doc["points"].as_array().unwrap();
    assert!(points.iter().any(|p| p["id"] == "qd-32#3"), "{points:?}");
}

/// Whether a judged saturation says other processes took the CPUs its
/// I/O's threads waited for: a tenth of the run waiting, a fifth of the
/// busy CPUs theirs.
fn loaded(s: &serde_json::Value) -> bool {
    let f = |k: &str| s[k].as_f64().unwrap_or(0.0);
    f("io_wait_pct") >= 10.0 && f("others_pct") >= 20.0
}
