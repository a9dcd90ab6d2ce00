//! What ssdready changes on the host is put back, however it ends (root,
//! loop devices over /dev/shm; skipped, saying why, elsewhere): a study
//! whose scheduler sweep switched a loop device's scheduler is killed
//! with SIGKILL mid-way, and the next command (`ssdready limits`) puts it
//! back and says so; a study stopped with Ctrl-C mid-way leaves every
//! queue setting of the device as it was (one let finish: the quick study
//! of a loop device in `study.rs`); `ssdready restore`
//! puts back an ended process's journal and leaves a running one's.

use crate::common;
use common::tuned::Tuned;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// The studies measure the machine and switch devices: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const JOURNALS: &str = "/run/ssdready/settings";

/// The journal a process's Tuner writes.
fn journal_of(pid: u32) -> PathBuf {
    Path::new(JOURNALS).join(format!("settings-{pid}.json"))
}

/// A quick study of `dev` with short runs that may change its settings
/// (`--try-changes`), its output in `dir`; one process, the one started
/// (its journal is named by its pid).
fn start_study(dev: &str, dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["study", dev, "--quick", "--try-changes", "--output"])
        .arg(dir.join("out"))
        .env("XDG_DATA_HOME", dir)
        .env("SSDREADY_SESSION", "caller")
        .env("SSDREADY_STUDY_RUNTIME", "0.3")
        .stdout(std::fs::File::create(dir.join("stdout")).unwrap())
        .stderr(std::fs::File::create(dir.join("stderr")).unwrap())
        .spawn()
        .unwrap()
}

/// Wait until the study has switched the scheduler away from mq-deadline
/// with its journal written; false when it ended first or took too long.
fn wait_for_switch(child: &mut Child, t: &Tuned) -> bool {
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(600) {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if journal_of(child.id()).exists() && !t.scheduler().contains("[mq-deadline]") {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

fn text(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_default()
}

#[test]
fn a_killed_studys_scheduler_switch_is_put_back_by_the_next_command() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = Tuned::new("tune-kill", 256) else {
        return;
    };
    let before = t.snapshot();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_study(&t.l.dev, dir.path());
    let pid = child.id();
    let switched = wait_for_switch(&mut child, &t);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        switched,
        "the study never switched: {}",
        text(dir.path(), "stderr")
    );
    assert!(journal_of(pid).exists(), "a SIGKILL leaves the journal");
    assert_ne!(t.snapshot(), before, "left changed");
    let o = ssdready(&["limits"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    // What the switch back reset is put back with it, said in brackets.
    let put_back = format!(
        "ssdready: put back /sys/block/{}/queue/scheduler to mq-deadline",
        t.name
    );
    let by = format!("left changed by ssdready (pid {pid}), which ended without putting it back");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&put_back) && l.ends_with(&by)),
        "{stderr}"
    );
    assert!(o.status.success(), "{stderr}");
    assert_eq!(t.snapshot(), before);
    assert!(!journal_of(pid).exists());
}

#[test]
fn ctrl_c_mid_study_leaves_every_queue_setting_as_it_was() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = Tuned::new("tune-int", 256) else {
        return;
    };
    let before = t.snapshot();
    let dir = tempfile::tempdir().unwrap();
    let mut child = start_study(&t.l.dev, dir.path());
    let pid = child.id();
    let switched = wait_for_switch(&mut child, &t);
    let sent = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    let stderr = text(dir.path(), "stderr");
    assert!(
        switched && sent.success(),
        "the study never switched: {stderr}"
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert_eq!(t.snapshot(), before, "{stderr}");
    assert!(!journal_of(pid).exists());
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/study.json")).unwrap()).unwrap();
    assert_eq!(doc["interrupted"], true);
    let notes = doc["warnings"].to_string();
    assert!(notes.contains("switched"), "the study's note: {notes}");
}

/// Plant a journal of `owner` (pid, start time, boot id) holding the
/// device's scheduler set to none.
fn plant(pid: u32, start_time: u64, boot_id: &str, device: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(JOURNALS).unwrap();
    std::fs::set_permissions(JOURNALS, std::fs::Permissions::from_mode(0o700)).unwrap();
    let path = journal_of(pid);
    let j = serde_json::json!({
        "owner": { "pid": pid, "start_time": start_time, "boot_id": boot_id },
        "settings": [{ "device": device, "attr": "scheduler",
                       "original": "mq-deadline", "ours": "none" }]
    });
    std::fs::write(&path, j.to_string()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Field 22 of /proc/PID/stat.
fn start_time(pid: u32) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &s[s.rfind(')').unwrap() + 1..];
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

#[test]
fn restore_puts_back_an_ended_processs_journal_and_leaves_a_running_ones() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = Tuned::new("tune-restore", 256) else {
        return;
    };
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let boot = boot.trim();
    // A running owner (pid 1) holds it: left to it, even by `restore`.
    std::fs::write(t.queue().join("scheduler"), "none").unwrap();
    let held = plant(1, start_time(1), boot, &t.name);
    let o = ssdready(&["restore"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let _ = std::fs::remove_file(&held);
    assert!(
        stdout.contains(&format!(
            "ssdready (pid 1) is running and holds /sys/block/{}/queue/scheduler set to none",
            t.name
        )),
        "{stdout}"
    );
    assert!(t.scheduler().contains("[none]"), "not touched");
    // An ended owner (a pid no process has): put back.
    let ended = plant(4_000_000_000, 1, boot, &t.name);
    let o = ssdready(&["restore"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&format!(
            "put back /sys/block/{}/queue/scheduler to mq-deadline, left changed by ssdready (pid 4000000000)",
            t.name
        )),
        "{stdout}"
    );
    assert!(o.status.success());
    assert!(t.scheduler().contains("[mq-deadline]"));
    assert!(!ended.exists());
}

/// Wait until `file` holds `text`, or `child` ends, or a minute passes.
fn wait_for_text(child: &mut Child, file: &Path, text: &str) -> bool {
    let began = Instant::now();
    while began.elapsed() < Duration::from_secs(60) {
        if std::fs::read_to_string(file).is_ok_and(|s| s.contains(text)) {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

#[test]
fn a_second_study_of_a_device_another_is_changing_changes_none_of_its_settings() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(t) = Tuned::new("tune-two", 256) else {
        return;
    };
    let before = t.snapshot();
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut first = start_study(&t.l.dev, d1.path());
    let switched = wait_for_switch(&mut first, &t);
    // The second starts while the first holds a trial value.
    let mut second = start_study(&t.l.dev, d2.path());
    let refused = wait_for_text(
        &mut second,
        &d2.path().join("stderr"),
        "this study changes none of its settings",
    );
    let during = t.snapshot();
    for c in [&second, &first] {
        let _ = Command::new("kill")
            .args(["-INT", &c.id().to_string()])
            .status();
    }
    let (s2, s1) = (second.wait().unwrap(), first.wait().unwrap());
    let (e1, e2) = (text(d1.path(), "stderr"), text(d2.path(), "stderr"));
    assert!(switched, "the first never switched: {e1}");
    assert!(refused, "the second was not refused: {e2}");
    assert!(
        e2.contains(&format!("another ssdready (pid {})", first.id())),
        "{e2}"
    );
    assert_ne!(during, before, "the first's change held meanwhile");
    assert!(s1.code() == Some(130) || s1.success(), "{e1}");
    assert!(s2.code() == Some(130) || s2.success(), "{e2}");
    assert_eq!(t.snapshot(), before, "first: {e1}\nsecond: {e2}");
    assert!(!journal_of(first.id()).exists());
    assert!(!journal_of(second.id()).exists());
}
