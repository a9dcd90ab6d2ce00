//! `ssdready app`: each application workload's counts are confirmed by an
//! independent source (SQLite's and PostgreSQL's own row counts, the files
//! on disk, strace's count of fdatasync calls, the block device's counters
//! on a loop device), bad input gets one line and exit code 2, and Ctrl-C
//! stops a run promptly with its results.

use crate::common;

use common::{is_root, ssdready, LoopDev};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn app_json(dir: &Path, args: &[&str]) -> Value {
    let d = dir.display().to_string();
    let mut a = vec![
        "app",
        args[0],
        "--directory",
        &d,
        "--output-format",
        "json",
        "--quiet",
    ];
    a.extend_from_slice(&args[1..]);
    let out = ssdready(&a);
    assert!(
        out.status.success(),
        "ssdready {a:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// The named checks of a result (its figures against an independent
/// source) are there and agree; the one named first is returned.
fn checks_agree<'a>(r: &'a Value, names: &[&str]) -> &'a Value {
    let all = r["checks"].as_array().expect("checks");
    for n in names {
        let c = all
            .iter()
            .find(|c| c["name"] == *n)
            .unwrap_or_else(|| panic!("no check {n}: {r}"));
        assert_eq!(c["agree"], true, "check {n} disagrees: {c}");
    }
    all.iter().find(|c| c["name"] == names[0]).unwrap()
}

#[test]
fn sqlite_history_holds_one_row_per_committed_transaction() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    // One connection (low load) and four on one writer (saturation).
    for (journal, jobs) in [("wal", "1"), ("delete", "4")] {
        let r = app_json(
            t.path(),
            &[
                "sqlite",
                "--runtime",
                "700ms",
                "--jobs",
                jobs,
                "--journal",
                journal,
                "--synchronous",
                "normal",
            ],
        );
        let tx = u(&r["transactions"]);
        assert!(tx > 0, "{r}");
        assert_eq!(u(&r["ops"]), tx);
        assert!(r["lat_ns"]["p99"].as_u64().unwrap() >= r["lat_ns"]["p50"].as_u64().unwrap());
        let db = t.path().join("ssdready-sqlite/bench.db");
        let c = rusqlite::Connection::open(&db).unwrap();
        let rows: i64 = c
            .query_row("SELECT count(*) FROM history", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows as u64, tx, "{journal}: history rows vs transactions");
        // The run's own checks: the rows, and the rate their timestamps
        // (SQLite's clock) give.
        let chk = checks_agree(&r, &["history_rows", "history_rate"]);
        assert_eq!(chk["theirs"].as_f64(), Some(tx as f64), "{chk}");
        // Every delta reached its account, teller and branch.
        let sums: (i64, i64, i64, i64) = c
            .query_row(
                "SELECT (SELECT sum(delta) FROM history), (SELECT sum(abalance) FROM pgbench_accounts),
                        (SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert!(
            sums.0 == sums.1 && sums.1 == sums.2 && sums.2 == sums.3,
            "{sums:?}"
        );
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, journal);
    }
}

#[test]
fn small_files_on_disk_are_the_workloads_count() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    let r = app_json(
        t.path(),
        &[
            "small-files",
            "--runtime",
            "500ms",
            "--jobs",
            "2",
            "--fsync",
        ],
    );
    let c = &r["counts"];
    assert_eq!(u(&c["initial_files"]), 1000);
    assert_eq!(
        u(&c["files"]),
        1000 + u(&c["files_created"]) - u(&c["files_deleted"])
    );
    assert!(u(&c["transactions"]) > 0 && u(&c["fsyncs"]) > 0, "{r}");
    let mut on_disk = 0;
    let mut stack = vec![t.path().join("ssdready-small-files")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if e.file_name().to_string_lossy().starts_with('f') {
                on_disk += 1;
            }
        }
    }
    assert_eq!(on_disk, u(&c["files"]));
    // --clean removes the workload's directory and nothing else.
    std::fs::write(t.path().join("mine"), "x").unwrap();
    let d = t.path().display().to_string();
    let out = ssdready(&["app", "small-files", "--directory", &d, "--clean"]);
    assert!(out.status.success());
    assert!(!t.path().join("ssdready-small-files").exists());
    assert!(t.path().join("mine").exists());
}

#[test]
fn fdatasync_calls_are_counted_as_strace_counts_them() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if Command::new("strace").arg("-V").output().is_err() {
        eprintln!("skipped: strace is not installed (Debian: apt-get install strace)");
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display().to_string();
    let trace = t.path().join("strace.txt");
    let out = Command::new("strace")
        .args(["-c", "-f", "-e", "trace=fdatasync", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "app",
            "fdatasync",
            "--directory",
            &d,
            "--runtime",
            "700ms",
            "--jobs",
            "2",
        ])
        .args(["--output-format", "json", "--quiet", "--bs", "8k"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ops = u(&r["ops"]);
    assert!(ops > 0);
    assert_eq!(u(&r["counts"]["bytes_written"]), ops * 8192);
    let text = std::fs::read_to_string(&trace).unwrap();
    let calls: u64 = text
        .lines()
        .find(|l| l.trim_end().ends_with("fdatasync"))
        .and_then(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // % time, seconds, usecs/call, calls, [errors], syscall
            f.get(3).and_then(|c| c.parse().ok())
        })
        .unwrap_or_else(|| panic!("no fdatasync line in strace's summary:\n{text}"));
    assert_eq!(
        calls, ops,
        "strace counted {calls} fdatasync calls:\n{text}"
    );
    // The run's own check: the kernel's count of the appenders' writes.
    let c = checks_agree(&r, &["kernel_write_calls"]);
    assert_eq!(c["theirs"].as_f64(), Some(calls as f64), "{c}");
}

/// A file system on a loop device over /dev/shm: the device's counters
/// match what the workload did.
#[test]
fn device_io_per_operation_matches_the_workload_on_a_loop_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if Command::new("mkfs.ext4").arg("-V").output().is_err() {
        eprintln!("skipped: mkfs.ext4 (e2fsprogs) is not installed");
        return;
    }
    let Some(l) = LoopDev::new("app", 256) else {
        return;
    };
    let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
    // Inode tables and journal written now: a lazily initialised ext4
    // writes them in the background after mounting, into the window.
    let lazy = "lazy_itable_init=0,lazy_journal_init=0";
    if !ok(Command::new("mkfs.ext4").args(["-q", "-F", "-E", lazy, &l.dev])) {
        eprintln!("skipped: mkfs.ext4 failed");
        return;
    }
    let mnt = tempfile::tempdir().unwrap();
    let m = mnt.path().display().to_string();
    if !ok(Command::new("mount").args([&l.dev, &m])) {
        eprintln!("skipped: mount failed");
        return;
    }
    struct Unmount(String);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(m.clone());
    let disk = l.dev.trim_start_matches("/dev/").to_string();
    // Overwriting appends to a written log: one bs-sized write and one
    // flush per fdatasync, nothing else.
    let r = app_json(
        mnt.path(),
        &[
            "fdatasync",
            "--runtime",
            "700ms",
            "--bs",
            "4k",
            "--scale",
            "4",
        ],
    );
    let dev = &r["device"];
    assert_eq!(dev["name"], disk.as_str(), "{r}");
    let per = &dev["per_op"];
    let bytes = per["write_bytes"].as_f64().unwrap();
    assert!(
        (bytes / 4096.0 - 1.0).abs() < 0.10,
        "device bytes per fdatasync {bytes}: {r}"
    );
    let flushes = per["flushes"].as_f64().unwrap();
    assert!(
        (flushes - 1.0).abs() < 0.10,
        "flushes per fdatasync {flushes}: {r}"
    );
    let wc = std::fs::read_to_string(format!("/sys/block/{disk}/queue/write_cache"));
    if wc.is_ok_and(|w| w.trim() == "write back") {
        checks_agree(&r, &["device_flushes", "kernel_write_calls"]);
    }
    // Small files, synced: every byte the workload wrote reached the device.
    let r = app_json(
        mnt.path(),
        &["small-files", "--runtime", "500ms", "--fsync"],
    );
    let dev = &r["device"];
    let app_bytes = u(&r["app_write_bytes"]);
    assert!(u(&dev["write_bytes"]) >= app_bytes, "{r}");
    assert!(
        u(&dev["flushes"]) >= u(&r["counts"]["fsyncs"]) * 9 / 10,
        "{r}"
    );
}

#[test]
fn pgbench_history_rows_equal_its_transactions() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display().to_string();
    // As root the cluster runs as an unprivileged user, who must reach it.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = ssdready(&[
        "app",
        "pgbench",
        "--directory",
        &d,
        "--runtime",
        "1s",
        "--jobs",
        "2",
        "--output-format",
        "json",
        "--quiet",
    ]);
    if out.status.code() == Some(2) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("apt-get install postgresql"), "{err}");
        eprintln!("skipped: {}", err.trim());
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tx = u(&r["transactions"]);
    assert!(tx > 0 && r["ops_per_s"].as_f64().unwrap() > 0.0, "{r}");
    assert_eq!(u(&r["counts"]["history_rows"]), tx, "{r}");
    assert_eq!(u(&r["counts"]["logged_transactions"]), tx, "{r}");
    // pgbench's reported rate against its own transaction logs' span.
    checks_agree(&r, &["pgbench_tps", "history_rows", "logged_transactions"]);
    // The server was stopped: no postmaster.pid is left.
    assert!(!t
        .path()
        .join("ssdready-pgbench/data/postmaster.pid")
        .exists());
}

#[test]
fn bad_input_is_one_line_and_exit_2_with_nothing_written() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display().to_string();
    let block = ["/dev/loop0", "/dev/zram0"].into_iter().find(|p| {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(p).is_ok_and(|m| m.file_type().is_block_device())
    });
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["app", "sqlite", "--directory", &d, "--scale", "0"],
        vec!["app", "sqlite", "--directory", &d, "--journal", "memory"],
        vec!["app", "sqlite", "--directory", &d, "--synchronous", "extra"],
        vec!["app", "tpcc", "--directory", &d],
        vec!["app", "fdatasync", "--directory", &d, "--runtime", "soon"],
        vec![
            "app",
            "fdatasync",
            "--directory",
            &d,
            "--bs",
            "2m",
            "--scale",
            "1",
        ],
        vec!["app", "small-files", "--directory", "/nonexistent/dir"],
        // Values clap refuses: one line too.
        vec!["app", "sqlite", "--directory", &d, "--scale", "99999999999"],
        vec!["app", "sqlite", "--directory", &d, "--seed=-1"],
        vec!["app", "sqlite", "--directory", ""],
        vec![
            "app",
            "small-files",
            "--directory",
            &d,
            "--output-format",
            "xml",
        ],
    ];
    if let Some(b) = block {
        cases.push(vec!["app", "small-files", "--directory", b]);
    }
    for c in cases {
        let out = ssdready(&c);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{c:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{c:?}: {err}");
        assert!(out.stdout.is_empty(), "{c:?}");
    }
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
    // Someone else's directory of the workload's name is never emptied.
    std::fs::create_dir(t.path().join("ssdready-sqlite")).unwrap();
    std::fs::write(t.path().join("ssdready-sqlite/keep"), "x").unwrap();
    let out = ssdready(&["app", "sqlite", "--directory", &d, "--runtime", "100ms"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(t.path().join("ssdready-sqlite/keep").exists());
}

#[test]
fn ctrl_c_stops_a_run_promptly_with_its_results() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display().to_string();
    let child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "app",
            "fdatasync",
            "--directory",
            &d,
            "--runtime",
            "60s",
            "--output-format",
            "json",
            "--quiet",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let t0 = std::time::Instant::now();
    assert!(Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let took = t0.elapsed();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took.as_millis() < 1000, "took {took:?} to stop");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["interrupted"], true);
    assert!(u(&r["ops"]) > 0);
}

/// `study FILE --sweeps=applications`: the section's figures, one entry
/// per workload and concurrency, each with its result file, and its
/// verdicts among the study's.
#[test]
fn a_study_with_the_applications_sweep_sets_them_against_the_raw_limit() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    let target = t.path().join("study.dat").display().to_string();
    let out_dir = t.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "study",
            &target,
            "--quick",
            "--quiet",
            "--sweeps=applications",
            "--output",
        ])
        .arg(&out_dir)
        .env("XDG_DATA_HOME", t.path())
        .env("SSDREADY_STUDY_RUNTIME", "0.2")
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let d: Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("study.json")).unwrap())
            .unwrap();
    let apps = d["figures"]["applications"]
        .as_array()
        .expect("figures.applications");
    let got: Vec<(String, u64)> = apps
        .iter()
        .map(|a| (a["name"].as_str().unwrap().to_string(), u(&a["jobs"])))
        .collect();
    for name in ["fdatasync", "sqlite", "small-files"] {
        for jobs in [1, 4] {
            assert!(
                got.contains(&(name.to_string(), jobs)),
                "{name} ×{jobs} missing: {got:?}"
            );
        }
    }
    for a in apps {
        assert!(a["ops_per_s"].as_f64().unwrap() > 0.0, "{a}");
        let file = out_dir.join(a["result"].as_str().unwrap());
        let r: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(r["ops_per_s"], a["ops_per_s"]);
        if !r["device"].is_null() {
            assert_eq!(a["writes_per_op"], r["device"]["per_op"]["writes"]);
        }
    }
    let rules: Vec<&str> = d["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v["rule"].as_str())
        .collect();
    assert!(
        rules.iter().any(|r| r.starts_with("app-fsync-")),
        "{rules:?}"
    );
    // The workloads' files are gone; the report has the section.
    let left: Vec<_> = std::fs::read_dir(t.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("ssdready-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("id=\"applications\""));
}

/// Processes whose command line names `dir`'s cluster.
fn cluster_processes(dir: &str) -> Vec<String> {
    let o = std::process::Command::new("pgrep")
        .args(["-af", &format!("{dir}/ssdready-pgbench/data")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains("bin/postgres"))
        .map(String::from)
        .collect()
}

#[test]
fn postgresql_dies_with_app_pgbench_even_on_sigkill() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    use std::time::{Duration, Instant};
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display().to_string();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["app", "pgbench", "--directory", &d, "--runtime", "120s"])
        .args(["--jobs", "1", "--quiet"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (up to 2 minutes on a loaded machine) for the server to run.
    let t0 = Instant::now();
    while cluster_processes(&d).is_empty() {
        if let Some(st) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(st.code(), Some(2), "{err}");
            eprintln!("skipped: {}", err.trim());
            return;
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "no server started");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The watchdog stops the server at once; 60 s is a loaded machine's margin.
    let t0 = Instant::now();
    while !cluster_processes(&d).is_empty() && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(cluster_processes(&d), Vec::<String>::new());
}

#[test]
fn a_pgbench_refused_for_its_directory_leaves_nothing_behind() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !is_root() {
        eprintln!("skipped: the refusal is for root (PostgreSQL runs as another user)");
        return;
    }
    // A directory the server's user cannot enter (0700 above it).
    let t = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let inner = t.path().join("x");
    std::fs::create_dir(&inner).unwrap();
    let d = inner.display().to_string();
    let out = ssdready(&["app", "pgbench", "--directory", &d, "--runtime", "1s"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_dir(&inner).unwrap().count(), 0, "{err}");
}
