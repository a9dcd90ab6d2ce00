//! `run` measures in a session of its own, as fio's job processes do,
//! while the process started stays in the caller's session and passes on
//! the signals that ask it to stop; `thread` keeps the caller's session.
//! Skipped, saying why, where the kernel does not group sessions.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A null-engine job of 30 s at 1,000 IOPS, as fio options.
const JOB: [&str; 6] = [
    "ioengine=null",
    "size=1g",
    "time_based",
    "runtime=30",
    "rate_iops=1000",
    "name=t",
];

/// `ssdready run --quiet --output-format=native` with `args`.
fn start(args: &[String]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet", "--output-format=native"])
        .args(args)
        .env_remove("SSDREADY_SESSION")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Field `n` (1-based, as proc(5) counts) of /proc/PID/stat.
fn stat_field(pid: u32, n: usize) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) is in brackets and may hold spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(n - 3)?.parse().ok()
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| stat_field(*p, 4) == Some(i64::from(pid)))
        .collect()
}

/// The child of `pid` once it has left `pid`'s session (within 10 s).
fn apart_child(pid: u32) -> Option<u32> {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        let sid = stat_field(pid, 6);
        if let Some(c) = children(pid)
            .into_iter()
            .find(|c| stat_field(*c, 6) == Some(i64::from(*c)) && sid != Some(i64::from(*c)))
        {
            return Some(c);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

fn interrupt(pid: u32) {
    let ok = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// Why sessions do not matter here, if they do not.
fn no_sessions() -> Option<String> {
    let me = std::process::id();
    match ssdready_probe::sched_group::of(me) {
        Some(g) if g.starts_with("autogroup:") => None,
        g => Some(format!("this process competes as {g:?}, not as a session")),
    }
}

#[test]
fn run_measures_in_a_session_of_its_own_and_passes_on_ctrl_c() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if let Some(why) = no_sessions() {
        eprintln!("skipped: {why}");
        return;
    }
    let child = start(&JOB.map(|o| format!("--{o}")));
    let parent = child.id();
    let apart = apart_child(parent);
    let group = |p: u32| std::fs::read_to_string(format!("/proc/{p}/autogroup")).ok();
    let (theirs, mine) = (apart.and_then(group), group(std::process::id()));
    // Some I/O done, so that the results have something to cover.
    std::thread::sleep(Duration::from_millis(1000));
    let began = Instant::now();
    interrupt(parent);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let apart = apart.unwrap_or_else(|| panic!("no process left the caller's session: {err}"));
    assert_ne!(theirs, mine, "the measuring process's scheduling group");
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "took {:?} to stop",
        began.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the results as JSON");
    assert_eq!(v["interrupted"], true);
    assert!(v["jobs"][0]["read"]["ios"].as_u64().unwrap() > 0);
    // The copy has ended (a zombie until the reaper takes it, at most).
    let state = std::fs::read_to_string(format!("/proc/{apart}/status")).unwrap_or_default();
    assert!(
        !state
            .lines()
            .any(|l| l.starts_with("State:") && !l.contains("zombie")),
        "{state}"
    );
}

#[test]
fn a_job_marked_thread_is_measured_in_the_callers_session() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if let Some(why) = no_sessions() {
        eprintln!("skipped: {why}");
        return;
    }
    let ours = stat_field(std::process::id(), 6);
    // On the command line: no copy. In a job file: a copy that stays.
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("threads.fio");
    std::fs::write(
        &job,
        format!("[global]\nthread=1\n{}\n[t]\n", JOB[..5].join("\n")),
    )
    .unwrap();
    let mut flags: Vec<String> = JOB.map(|o| format!("--{o}")).to_vec();
    flags.push("--thread".into());
    let file = vec![job.to_string_lossy().into_owned()];
    for (extra, copies) in [(&flags, 0), (&file, 1)] {
        let child = start(extra);
        std::thread::sleep(Duration::from_millis(500));
        let pid = child.id();
        let sessions: Vec<Option<i64>> = std::iter::once(pid)
            .chain(children(pid))
            .map(|p| stat_field(p, 6))
            .collect();
        interrupt(pid);
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{extra:?}: {err}");
        assert_eq!(sessions.len(), 1 + copies, "{extra:?}: processes");
        assert!(
            sessions.iter().all(|s| *s == ours),
            "{extra:?}: {sessions:?}"
        );
    }
}

#[test]
fn an_unknown_session_setting_is_one_line_and_exit_2_with_nothing_written() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "run",
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--output",
        ])
        .arg(&out)
        .env("SSDREADY_SESSION", "apart")
        .output()
        .unwrap();
    let says = "SSDREADY_SESSION: 'apart' is not allowed (allowed: caller";
    crate::common::assert_refused(&o, "SSDREADY_SESSION=apart", &[says]);
    assert!(!out.exists());
}
