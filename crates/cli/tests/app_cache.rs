//! `ssdready app sqlite --memory/--cache-effect`: the same OLTP workload in
//! a memory cgroup whose page cache holds the data and one whose does not.
//! The device's read counters (/sys/block) and the cgroup's own page cache
//! (memory.stat) must tell the same story: no reads where the data is
//! cached, reads where it is not; and the cgroup never outlives the run,
//! Ctrl-C included.

use crate::common;

use common::{ssdready, LoopDev};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// ext4 with 4 KiB blocks (the page size: no partial-page metadata reads)
/// on a loop device over /dev/shm, unmounted on drop.
struct Ext4 {
    mnt: tempfile::TempDir,
    _l: LoopDev,
}

impl Ext4 {
    fn new(tag: &str) -> Option<Ext4> {
        if Command::new("mkfs.ext4").arg("-V").output().is_err() {
            eprintln!("skipped: mkfs.ext4 (e2fsprogs) is not installed");
            return None;
        }
        let l = LoopDev::new(tag, 128)?;
        let ok = |c: &mut Command| c.status().is_ok_and(|s| s.success());
        let lazy = "lazy_itable_init=0,lazy_journal_init=0";
        if !ok(Command::new("mkfs.ext4").args(["-q", "-F", "-b", "4096", "-E", lazy, &l.dev])) {
            eprintln!("skipped: mkfs.ext4 failed");
            return None;
        }
        let mnt = tempfile::tempdir().unwrap();
        if !ok(Command::new("mount").arg(&l.dev).arg(mnt.path())) {
            eprintln!("skipped: mount failed");
            return None;
        }
        Some(Ext4 { mnt, _l: l })
    }
    fn dir(&self) -> String {
        self.mnt.path().display().to_string()
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.mnt.path()).status();
    }
}

/// Every `ssdready-app-*` cgroup directory under the mounted hierarchies.
fn ssdready_cgroups() -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![PathBuf::from("/sys/fs/cgroup")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if e.file_name().to_string_lossy().starts_with("ssdready-app-") {
                found.push(e.path());
            } else if stack.len() < 10_000 {
                stack.push(e.path());
            }
        }
    }
    found
}

/// The memory cgroup a process is in now (its memory line in v1, its one
/// line in v2), as a path relative to the hierarchy.
fn cgroup_line(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default()
}

fn sweep(dir: &str, extra: &[&str]) -> std::process::Output {
    let mut a = vec![
        "app",
        "sqlite",
        "--directory",
        dir,
        "--output-format",
        "json",
        "--quiet",
    ];
    a.extend_from_slice(extra);
    ssdready(&a)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn device_reads_appear_when_the_page_cache_stops_holding_the_data() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(fs) = Ext4::new("cache") else {
        return;
    };
    let dir = fs.dir();
    // 40 MiB holds the 9 MiB database; 6 MiB holds a fraction of it.
    let out = sweep(&dir, &["--memory", "40m,6m", "--runtime", "700ms"]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && err.contains("cgroup") {
        eprintln!("skipped: {}", err.trim());
        return;
    }
    assert!(out.status.success(), "{err}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pts = r["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2, "{r}");
    assert!(r["device"].as_str().unwrap().starts_with("loop"), "{r}");
    let (fits, not) = (&pts[0], &pts[1]);
    assert!(f(&fits["memory_max"]) > f(&not["memory_max"]));
    // memory.stat: the group's page cache held the data, then a part.
    assert!(f(&fits["cached_share"]) >= 0.95, "{fits}");
    assert!(f(&not["cached_share"]) < 0.6, "{not}");
    assert!(f(&not["cache_bytes"]) <= f(&not["memory_max"]));
    // /sys/block: no reads while cached, reads once not.
    assert!(fits["transactions"].as_u64().unwrap() > 0);
    assert!(not["transactions"].as_u64().unwrap() > 0);
    assert!(f(&fits["reads_per_tx"]) < 0.05, "{fits}");
    assert!(f(&not["reads_per_tx"]) > 0.2, "{not}");
    assert!(
        f(&not["reads_per_tx"]) >= f(&not["expected_reads_per_tx"]) / 4.0,
        "{not}"
    );
    // The group was made where the result says, and is gone.
    let cg = r["settings"]["cgroup"].as_str().unwrap();
    let path = Path::new(cg.rsplit(" at ").next().unwrap());
    assert!(path.starts_with("/sys/fs/cgroup"), "{cg}");
    assert!(!path.exists(), "{} left behind", path.display());

    // Ctrl-C in the middle of a point: results so far, exit 130, and the
    // group removed.
    let child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["app", "sqlite", "--directory", &dir, "--memory", "40m,8m"])
        .args(["--runtime", "60s", "--output-format", "json", "--quiet"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let name = format!("ssdready-app-{pid}");
    let t0 = std::time::Instant::now();
    while !cgroup_line(pid).contains(&name) && t0.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(cgroup_line(pid).contains(&name), "never joined its cgroup");
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["interrupted"], true);
    let after: Vec<_> = ssdready_cgroups()
        .into_iter()
        .filter(|p| p.ends_with(&name))
        .collect();
    assert!(after.is_empty(), "left behind: {after:?}");
}

#[test]
fn memory_limits_are_checked_before_anything_is_written() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = tempfile::tempdir().unwrap();
    let d = t.path().display().to_string();
    for c in [
        vec!["--memory", "1m"],
        vec!["--memory", "64m,lots"],
        vec!["--memory", "64m", "--runtime", "1s", "--scale", "0"],
    ] {
        let out = sweep(&d, &c);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{c:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{c:?}: {err}");
    }
    let out = ssdready(&["app", "fdatasync", "--directory", &d, "--cache-effect"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("sqlite"));
    assert_eq!(std::fs::read_dir(t.path()).unwrap().count(), 0);
}

/// Processes whose command line names `needle` (a server left running).
fn processes_naming(needle: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(needle) {
            v.push(format!("{}: {cmd}", e.file_name().to_string_lossy()));
        }
    }
    v
}

#[test]
fn postgresql_reads_from_the_device_once_its_cache_is_limited() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(fs) = Ext4::new("pgcache") else {
        return;
    };
    let dir = fs.dir();
    // pgbench's tables at scale 1 are 15 MiB; the server holds ~8 MiB of
    // its own: 64 MiB holds them, 18 MiB about half.
    let out = ssdready(&[
        "app",
        "pgbench",
        "--directory",
        &dir,
        "--memory",
        "64m,18m",
        "--runtime",
        "1s",
        "--output-format",
        "json",
        "--quiet",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(2) && (err.contains("cgroup") || err.contains("postgresql")) {
        eprintln!("skipped: {}", err.trim());
        return;
    }
    assert!(out.status.success(), "{err}");
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_points(&r);
    check_nothing_left(&r, &dir);

    ctrl_c_stops_the_server_and_removes_its_group(&dir);
}

/// Two points, the tables held then about half of them: the cached share
/// (memory.stat), the reads per transaction (/sys/block), and each
/// point's rate and count against pgbench's own.
fn check_points(r: &Value) {
    let pts = r["points"].as_array().unwrap();
    assert_eq!(pts.len(), 2, "{r}");
    assert_eq!(r["name"], "pgbench");
    assert!(r["device"].as_str().unwrap().starts_with("loop"), "{r}");
    let (fits, not) = (&pts[0], &pts[1]);
    // memory.stat (less the server's shared memory): the tables held,
    // then about half of them.
    assert!(f(&fits["cached_share"]) >= 0.95, "{fits}");
    assert!(f(&not["cached_share"]) < 0.8, "{not}");
    assert!(f(&not["shmem_bytes"]) > 0.0, "{not}");
    // /sys/block: (almost) no reads while held, reads once not, in the
    // proportion the cached share predicts (within a factor of 4).
    assert!(f(&fits["reads_per_tx"]) < 0.1, "{fits}");
    assert!(f(&not["reads_per_tx"]) > 0.2, "{not}");
    let (got, want) = (f(&not["reads_per_tx"]), f(&not["expected_reads_per_tx"]));
    assert!(got >= want / 4.0 && got <= 4.0 * want + 0.1, "{not}");
    assert!(
        !r["notes"].to_string().contains("disagree"),
        "{}",
        r["notes"]
    );
    // Each point's rate and count against pgbench's logs and
    // pgbench_history.
    for p in pts {
        let names: Vec<_> = p["checks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                assert_eq!(c["agree"], true, "{c}");
                c["name"].as_str().unwrap().to_string()
            })
            .collect();
        assert!(names.contains(&"pgbench_tps".to_string()), "{p}");
        assert!(names.contains(&"history_rows".to_string()), "{p}");
    }
}

/// Nothing left of the study in `dir`: no group, no server.
fn check_nothing_left(r: &Value, dir: &str) {
    let cg = r["settings"]["cgroup"].as_str().unwrap();
    let path = Path::new(cg.rsplit(" at ").next().unwrap());
    assert!(path.starts_with("/sys/fs/cgroup"), "{cg}");
    assert!(!path.exists(), "{} left behind", path.display());
    let data = format!("{dir}/ssdready-pgbench/data");
    assert!(!Path::new(&data).join("postmaster.pid").exists());
    let left = processes_naming(&data);
    assert!(left.is_empty(), "left running: {left:?}");
}

/// Ctrl-C while the server runs in its group: exit 130, the server
/// stopped, the group removed.
fn ctrl_c_stops_the_server_and_removes_its_group(dir: &str) {
    let data = format!("{dir}/ssdready-pgbench/data");
    let child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["app", "pgbench", "--directory", dir, "--memory", "64m"])
        .args(["--runtime", "60s", "--output-format", "json", "--quiet"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let name = format!("ssdready-app-{pid}");
    let in_group = || {
        processes_naming(&data).iter().any(|p| {
            let id = p.split(':').next().unwrap_or("");
            id.parse::<u32>()
                .is_ok_and(|id| cgroup_line(id).contains(&name))
        })
    };
    let t0 = std::time::Instant::now();
    while !in_group() && t0.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(in_group(), "the server never ran in {name}");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let t1 = std::time::Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t1.elapsed().as_secs() < 15, "took {:?}", t1.elapsed());
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["interrupted"], true, "{r}");
    let groups: Vec<_> = ssdready_cgroups()
        .into_iter()
        .filter(|p| p.ends_with(&name))
        .collect();
    assert!(groups.is_empty(), "left behind: {groups:?}");
    let left = processes_naming(&data);
    assert!(left.is_empty(), "left running: {left:?}");
}
