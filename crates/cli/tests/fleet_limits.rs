//! `ssdready server` with fio's own client, bounded: fio's client with
//! `--output=FILE` gets both hosts' results in its file (its own switches
//! are not the server's); a job whose sample logs reach their bound, or
//! past the time a job may take, ends with its error sent to its client,
//! and the server goes on; a job with more workers or files
//! than a job may have is refused; a job file that includes files many
//! times over is refused at a bound. Skipped, saying why, without fio.

use crate::common;
use common::net::{free_port, have_fio, spawn_listening, Proc, Within};
use common::server::BIN;
use serde_json::Value;
use std::process::Command;

fn server(dir: &std::path::Path, extra: &[&str]) -> (Proc, u16) {
    let port = free_port();
    let p = spawn_listening(
        Command::new(BIN)
            .args(["server", "--port", &port.to_string(), "--directory"])
            .arg(dir)
            .args(extra),
        port,
    );
    (p, port)
}

fn fio(args: &[String]) -> (String, bool) {
    fio_in(std::path::Path::new("."), args)
}

/// fio's client run in `cwd` (where it writes the logs the server sends).
fn fio_in(cwd: &std::path::Path, args: &[String]) -> (String, bool) {
    let out = Command::new("fio")
        .current_dir(cwd)
        .args(args)
        .output_in_time();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (text, out.status.success())
}

#[test]
fn fios_client_writes_both_hosts_results_to_its_output_file() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_a, pa) = server(&dir.path().join("a"), &[]);
    let (_b, pb) = server(&dir.path().join("b"), &[]);
    let hosts = dir.path().join("hosts");
    std::fs::write(&hosts, format!("ip:127.0.0.1,{pa}\nip:127.0.0.1,{pb}\n")).unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(
        &job,
        "[global]\nioengine=null\nbs=4k\nsize=4m\n[r]\nrw=randread\n",
    )
    .unwrap();
    let out = dir.path().join("out.json");
    let (text, ok) = fio(&[
        format!("--client={}", hosts.display()),
        job.display().to_string(),
        "--output-format=json".into(),
        format!("--output={}", out.display()),
    ]);
    assert!(ok, "{text}");
    let doc: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let stats = doc["client_stats"].as_array().unwrap();
    for port in [pa, pb] {
        let j = stats
            .iter()
            .find(|j| j["jobname"] == "r" && j["port"] == port)
            .unwrap_or_else(|| panic!("no results from port {port}: {doc}"));
        assert_eq!(j["read"]["total_ios"], 1024);
    }
    // The client's output file is the client's: no server wrote one.
    for s in ["a", "b"] {
        let work = dir.path().join(s).join("work");
        let files: Vec<_> = std::fs::read_dir(&work).unwrap().collect();
        assert!(files.is_empty(), "{s}: {files:?}");
    }
}

#[test]
fn a_job_past_its_memory_or_time_ends_and_the_server_goes_on() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (server, port) = server(
        &dir.path().join("srv"),
        &["--job-memory", "128m", "--job-time", "2s"],
    );
    let run = |job: &str| {
        let jf = dir.path().join("job.fio");
        std::fs::write(&jf, job).unwrap();
        fio_in(
            dir.path(),
            &[
                format!("--client=127.0.0.1,{port}"),
                jf.display().to_string(),
                "--output-format=json".into(),
            ],
        )
    };
    // Per-I/O logs of a null job: their bound (half of 128 MiB) is
    // reached well before its 60 s, and the job ends there with an error
    // that says so, its results and its logs so far sent.
    let (text, _) = run(
        "[x]\nioengine=null\nbs=4k\nsize=1g\ntime_based\nruntime=60\n\
         write_lat_log=lat\nwrite_bw_log=bw\nwrite_iops_log=iops\n",
    );
    assert!(
        text.contains("its sample logs reached") && text.contains("log_avg_msec"),
        "{text}"
    );
    assert!(!text.contains("ran out of the memory"), "{text}");
    // The server did not hold the job's memory.
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.0.id())).unwrap();
    let hwm: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(hwm < 100 << 10, "the server grew to {hwm} KiB");
    // Too many workers, or files, for one job: refused at its check.
    for (job, needle) in [
        ("[x]\nioengine=null\nsize=1m\nnumjobs=300\n", "300 workers"),
        ("[x]\nrw=write\nsize=64m\nnrfiles=5000\n", "5000 files"),
    ] {
        let (text, _) = run(job);
        assert!(
            text.contains(needle) && text.contains("this server allows"),
            "{text}"
        );
    }
    // A job past its time is stopped and sends what it measured.
    let (text, ok) = run("[x]\nioengine=null\nbs=4k\nsize=1g\ntime_based\nruntime=60\n");
    assert!(ok, "{text}");
    let json = &text[text.find('{').unwrap()..];
    let doc: Value = serde_json::from_str(json).unwrap();
    let j = &doc["client_stats"][0];
    assert!(j["read"]["total_ios"].as_u64().unwrap() > 0, "{j}");
    assert!(j["job_runtime"].as_u64().unwrap() < 30_000, "{j}");
}

#[test]
fn a_job_file_that_includes_files_many_times_over_is_refused_at_a_bound() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    // f0 includes f1 ten times, …, f7 includes f8: 10^8 includes.
    for n in 0..8 {
        std::fs::write(
            dir.path().join(format!("f{n}.fio")),
            format!("include f{}.fio\n", n + 1).repeat(10),
        )
        .unwrap();
    }
    std::fs::write(dir.path().join("f8.fio"), "; end\n").unwrap();
    std::fs::write(
        dir.path().join("job.fio"),
        "[x]\ninclude f0.fio\nioengine=null\nsize=1m\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", "--parse-only"])
        .arg(dir.path().join("job.fio"))
        .output_in_time();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("more than 1024 files included"), "{err}");
}
