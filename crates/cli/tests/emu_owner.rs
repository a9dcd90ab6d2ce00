//! A drive never outlives its owner: `emu attach` whose standard output is
//! full, or a pipe whose reader goes away, detaches its drive and exits 1
//! with one line; a daemon that panics hands its drive to `emu detach`.
//! In every case the loop device, the FUSE mount and the record are gone
//! afterwards. Root only (skipped with the reason otherwise).

use crate::common;
use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

const SPEC: &str = "dram-ssd,size=64m";

/// Generous: the daemon stops within 100 ms of noticing; a loaded machine
/// can take seconds to unbind a loop device.
const LIMIT: Duration = Duration::from_secs(20);

fn usable() -> bool {
    kernel_drive_usable()
}

fn attach_cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ssdready"));
    c.args(["emu", "attach", SPEC]).stdin(Stdio::null());
    c
}

/// Wait for `child` to end (killed after [`LIMIT`]); its exit code and
/// stderr.
fn finish(mut child: Child) -> (Option<i32>, String) {
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("emu attach did not end within {LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// What of drive `dev`, served by daemon `pid`, is left after [`LIMIT`]:
/// its loop binding, its FUSE mount and its record (other drives on the
/// machine are not this test's).
fn left_of(dev: &str, pid: u32) -> Vec<String> {
    let index = dev.trim_start_matches("/dev/loop");
    let name = format!("/run/ssdready/emu/emu-{pid}");
    let t0 = Instant::now();
    loop {
        let mut left = Vec::new();
        let backing = format!("/sys/block/loop{index}/loop/backing_file");
        if std::fs::read_to_string(&backing).is_ok_and(|b| b.contains(&name)) {
            left.push(format!("{dev} still bound"));
        }
        let mounts = std::fs::read_to_string("/proc/self/mounts").unwrap();
        left.extend(
            mounts
                .lines()
                .filter(|l| l.contains(&format!("{name}.mnt")))
                .map(String::from),
        );
        if std::path::Path::new(&format!("{name}.json")).exists() {
            left.push(format!("{name}.json"));
        }
        if left.is_empty() || t0.elapsed() > LIMIT {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The device named on the drive's stderr (`… at /dev/loopN over …`).
fn device_in(stderr: &str) -> Option<String> {
    let i = stderr.find("/dev/loop")?;
    let end = stderr[i..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '/'))
        .map_or(stderr.len(), |n| i + n);
    Some(stderr[i..end].to_string())
}

#[test]
fn a_full_stdout_detaches_the_drive_with_one_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let child = attach_cmd()
        .stdout(full)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (code, err) = finish(child);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains("panic"), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        err.contains("standard output") && err.contains("detached"),
        "{err}"
    );
    let dev = device_in(&err).expect("the line names the device");
    assert_eq!(left_of(&dev, pid), Vec::<String>::new());
}

#[test]
fn a_stdout_reader_that_goes_away_detaches_the_drive() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let mut child = attach_cmd()
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let dev = line.trim().to_string();
    assert!(dev.starts_with("/dev/loop"), "{dev}");
    // The reader is dropped here, as `| head -1` does after its line.
    let pid = child.id();
    let (code, err) = finish(child);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("reader went away"), "{err}");
    assert_eq!(left_of(&dev, pid), Vec::<String>::new());
}

#[test]
fn a_daemon_that_panics_leaves_no_drive_behind() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !usable() {
        return;
    }
    let child = attach_cmd()
        .env("SSDREADY_INJECT_PANIC", "attach")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (code, err) = finish(child);
    assert_eq!(code, Some(70), "{err}");
    assert!(err.contains("is being detached"), "{err}");
    let dev = device_in(&err).expect("stderr names the device");
    assert_eq!(left_of(&dev, pid), Vec::<String>::new());
}

#[test]
fn a_mount_left_by_a_killed_study_is_removed_by_emu_list() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    if !is_root() || !std::path::Path::new("/usr/sbin/mkfs.ext4").exists() {
        eprintln!("skipped: needs root and mkfs.ext4");
        return;
    }
    let Some(l) = LoopDev::new("left-mount", 32) else {
        return;
    };
    let sh = |c: &str, a: &[&str]| Command::new(c).args(a).status().unwrap().success();
    assert!(sh("mkfs.ext4", &["-q", &l.dev]));
    // What a study killed in its applications section leaves: the mount
    // and its record, naming a process that is gone.
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("ssdready-study-fs");
    std::fs::create_dir(&dir).unwrap();
    let d = dir.display().to_string();
    assert!(sh("mount", &[&l.dev, &d]));
    std::fs::create_dir_all("/run/ssdready/emu").unwrap();
    let rec = format!("/run/ssdready/emu/mount-{}-test.mount", u32::MAX - 1);
    let text = format!(
        r#"{{"pid":{},"device":"{}","dir":"{d}","made":true}}"#,
        u32::MAX - 1,
        l.dev
    );
    std::fs::write(&rec, text).unwrap();
    let out = ssdready(&["emu", "list"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let still = std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .contains(&d);
    if still {
        let _ = Command::new("umount").arg(&d).status();
    }
    assert!(!still, "the mount is left: {err}");
    assert!(err.contains("removed a mount"), "{err}");
    assert!(!std::path::Path::new(&rec).exists());
}
