//! `ssdready emu attach --transport=fuse-uring`: the emulated drive's FUSE
//! requests carried by io_uring. A verified write pass through the block
//! device reaches the daemon over the ring (its counts equal the job's);
//! the kernel's switch (`enable_uring`) is back to what it was after the
//! detach, and nothing of the drive is left. Root only, and only where the
//! kernel has FUSE over io_uring (skipped with the reason otherwise).
//! Counts and data, no timing: the machine's load cannot fail it.

use crate::common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// attach's stdout, read line by line.
type Stdout = BufReader<std::process::ChildStdout>;

const PARAM: &str = "/sys/module/fuse/parameters/enable_uring";

fn usable() -> bool {
    if !kernel_drive_usable() {
        return false;
    }
    if !std::path::Path::new(PARAM).exists() {
        eprintln!("skipped: this kernel has no FUSE over io_uring ({PARAM})");
        return false;
    }
    true
}

/// The attach's process, stopped (SIGTERM: it detaches) if the test
/// fails before it does.
struct Stop(std::process::Child);

impl Drop for Stop {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill")
                .args(["-TERM", &self.0.id().to_string()])
                .status();
            let _ = self.0.wait();
        }
    }
}

fn param() -> String {
    std::fs::read_to_string(PARAM).unwrap().trim().to_string()
}

/// The kernel's switch is one for the machine: one test at a time here.
static SWITCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// An attach killed (SIGKILL) right after it turned the switch on, before
/// its drive is recorded, leaves the switch's record, written and synced
/// before the flip: the next `emu list` puts the switch back and removes
/// what the attach left (its mount point, a loop device it bound).
#[test]
fn an_attach_killed_right_after_turning_the_switch_on_has_it_put_back_by_the_next_list() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !usable() {
        return;
    }
    let _one = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
    if param() != "N" {
        eprintln!("skipped: {PARAM} is already Y (another drive uses it)");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_ssdready");
    let mut child = Command::new(bin)
        .args(["emu", "attach", "null,size=64m", "--transport=fuse-uring"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start emu attach");
    // The hook: the switch has just been flipped.
    let t0 = Instant::now();
    while param() != "Y" {
        assert!(child.try_wait().unwrap().is_none(), "attach ended first");
        assert!(t0.elapsed() < Duration::from_secs(60), "never turned on");
        std::thread::sleep(Duration::from_millis(1));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let was = std::path::Path::new("/run/ssdready/emu/enable_uring.was");
    assert!(
        was.exists(),
        "the switch's record is written before the flip"
    );
    let o = Command::new(bin).args(["emu", "list"]).output().unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(param(), "N", "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!was.exists());
    let mnt = format!("/run/ssdready/emu/emu-{}.mnt", child.id());
    assert!(!std::path::Path::new(&mnt).exists(), "{mnt} is left");
    let loops = std::fs::read_dir("/sys/block").unwrap().flatten().any(|e| {
        std::fs::read_to_string(e.path().join("loop/backing_file"))
            .is_ok_and(|b| b.starts_with(&mnt))
    });
    assert!(!loops, "a loop device over {mnt} is left");
}

#[test]
fn a_verified_job_runs_over_fuse_uring_and_the_switch_is_put_back() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !usable() {
        return;
    }
    let _one = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
    let before = param();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("attach.log");
    // Its stdout stays open while it runs (a closed pipe would end it).
    let (mut child, _stdout, dev, said) = attach(&log);
    assert!(
        dev.starts_with("/dev/loop"),
        "attach printed '{dev}': {said}"
    );
    assert_eq!(param(), "Y", "the switch is on while the drive is attached");
    assert!(
        said.contains("requests over io_uring"),
        "attach says the transport: {said}"
    );
    assert_eq!(
        said.contains("turned FUSE over io_uring on"),
        before == "N",
        "one line says the switch was turned on, only when it was: {said}"
    );
    let pid = child.0.id();
    let name = format!("emu-{pid}");
    let rec = std::fs::read_to_string(format!("/run/ssdready/emu/{name}.json")).unwrap();
    assert!(rec.contains("\"fuse-uring+loop\""), "{rec}");

    verified_writes_reach_the_daemon(&dev, &name);

    interrupt(&mut child, pid);
    check_all_put_back(&dev, &name, &before, &log);
}

/// Start `ssdready emu attach` over FUSE on io_uring, its stderr to `log`:
/// the running attach, its stdout, its device, and what it said (within
/// 10 s).
fn attach(log: &std::path::Path) -> (Stop, Stdout, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["emu", "attach", "x25e,size=128m", "--transport=fuse-uring"])
        .stdout(Stdio::piped())
        .stderr(Stdio::from(std::fs::File::create(log).unwrap()))
        .spawn()
        .expect("start emu attach");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let dev = line.trim().to_string();
    // The description follows the device's line on stderr.
    let t0 = Instant::now();
    let mut said = String::new();
    while !said.contains("study it with") && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
        said = std::fs::read_to_string(log).unwrap_or_default();
    }
    (Stop(child), out, dev, said)
}

/// 4,096 random 4 KiB writes with crc32c on `dev`, each read back and
/// checked, and each reached the daemon of emu `name` (or merged with
/// another on the loop device).
fn verified_writes_reach_the_daemon(dev: &str, name: &str) {
    // The loop device's merged writes: two adjacent random writes can
    // reach the daemon as one request.
    let stat = format!("/sys/block/{}/stat", dev.trim_start_matches("/dev/"));
    let write_merges = || -> u64 {
        let s = std::fs::read_to_string(&stat).unwrap_or_default();
        s.split_whitespace()
            .nth(5)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let merges_before = write_merges();
    // 4,096 random 4 KiB writes with crc32c, each read back and checked.
    let w = run_json(&[
        "--name=v",
        &format!("--filename={dev}"),
        "--rw=randwrite",
        "--bs=4k",
        "--size=16m",
        "--iodepth=8",
        "--ioengine=io_uring",
        "--direct=1",
        "--verify=crc32c",
        "--do_verify=1",
    ]);
    let job = &w["jobs"][0];
    assert_eq!(job["errors"], 0, "{job}");
    assert_eq!(job["write"]["ios"], 4096);
    assert_eq!(job["read"]["ios"], 4096, "every block read back");
    assert_eq!(job["verify"]["blocks"], 4096, "every block verified");
    assert_eq!(job["verify"]["failed"], 0);
    std::thread::sleep(Duration::from_millis(400));
    let stats: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("/run/ssdready/emu/{name}.stats.json")).unwrap(),
    )
    .unwrap();
    let merged = write_merges().saturating_sub(merges_before);
    assert_eq!(
        stats["writes"].as_u64().unwrap() + merged,
        4096,
        "each write reached the daemon, {merged} of them merged with another on the loop device: {stats}"
    );
    assert!(stats["reads"].as_u64().unwrap() >= 4096, "{stats}");
    assert_eq!(stats["errors"], 0, "{stats}");
}

/// Ctrl-C to attach `pid`: it ends cleanly within 10 s.
fn interrupt(child: &mut Stop, pid: u32) {
    Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let t0 = Instant::now();
    let st = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "attach did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(st.success(), "Ctrl-C ends attach cleanly: {st:?}");
}

/// The switch is back as it was (`before`), said so in `log` where it
/// was turned on, and the loop device, mount and records of emu `name`
/// are gone.
fn check_all_put_back(dev: &str, name: &str, before: &str, log: &std::path::Path) {
    let said = std::fs::read_to_string(log).unwrap();
    assert_eq!(param(), before, "the switch is back as it was: {said}");
    if before == "N" {
        assert!(said.contains(&format!("put {PARAM} back to N")), "{said}");
    }
    let index = dev.trim_start_matches("/dev/loop");
    let backing = std::fs::read_to_string(format!("/sys/block/loop{index}/loop/backing_file"))
        .unwrap_or_default();
    assert!(
        !backing.contains(name),
        "loop{index} still bound to {backing}"
    );
    let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
    assert!(!mounts.contains(&format!("{name}.mnt")), "{mounts}");
    assert!(!std::path::Path::new(&format!("/run/ssdready/emu/{name}.json")).exists());
    assert!(!std::path::Path::new("/run/ssdready/emu/enable_uring.was").exists());
}

#[test]
fn fuse_uring_is_refused_in_one_line_where_it_cannot_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if is_root() && std::path::Path::new(PARAM).exists() {
        eprintln!("skipped: FUSE over io_uring can run here");
        return;
    }
    let o = ssdready(&["emu", "attach", "x25e,size=64m", "--transport=fuse-uring"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("needs") || err.contains("cannot be used"),
        "{err}"
    );
}
