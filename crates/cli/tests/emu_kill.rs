//! `ssdready emu attach` killed with SIGKILL at random moments, during its
//! setup or while it serves: each time the process is gone at once (never
//! stuck in D state, waiting on its own FUSE connection), and the next
//! `emu list` leaves nothing of it: no loop device over its file, no FUSE
//! mount, no mount point, no record. Root only (skipped with the reason
//! otherwise). `bench/emu-kill-loop.sh N` runs the same loop at length.

use crate::common;
use common::*;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const RUN: &str = "/run/ssdready/emu";

/// How many times the daemon is killed.
const KILLS: u64 = 25;

/// One delay before each kill, spread over 0-500 ms: the i-th falls at
/// random in the i-th of [`KILLS`] equal slices (the clock picks where,
/// so each run tries other moments), so that both the setup and the
/// serving are hit.
fn delays() -> Vec<u64> {
    let mut x = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64)
        | 1;
    let slice = 500 / KILLS;
    (0..KILLS)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            i * slice + x % slice
        })
        .collect()
}

/// The states of process `pid`'s threads (R, S, D, Z…), one letter each;
/// empty once it is reaped.
fn thread_states(pid: u32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return String::new();
    };
    tasks
        .flatten()
        .filter_map(|t| {
            let stat = std::fs::read_to_string(t.path().join("stat")).ok()?;
            stat.rsplit_once(") ")?.1.chars().next()
        })
        .collect()
}

/// The kernel stacks of `pid`'s threads, for the failure's text.
fn stacks(pid: u32) -> String {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return String::new();
    };
    let each = tasks
        .flatten()
        .map(|t| std::fs::read_to_string(t.path().join("stack")).unwrap_or_default());
    each.collect::<Vec<_>>().join("--\n")
}

/// Wait at most `limit` for `child` to end; whether it did.
fn reaped_within(child: &mut Child, limit: Duration) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if child.try_wait().ok().flatten().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// What is left of the attachment of daemon `pid`.
fn left_of(pid: u32) -> Vec<String> {
    let mnt = format!("{RUN}/emu-{pid}.mnt");
    let mut left = Vec::new();
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    if info
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(mnt.as_str()))
    {
        left.push(format!("a mount on {mnt}"));
    }
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        let backing = e.path().join("loop/backing_file");
        let b = std::fs::read_to_string(backing).unwrap_or_default();
        if b.starts_with(&format!("{mnt}/")) {
            left.push(format!(
                "{} bound to {}",
                e.file_name().to_string_lossy(),
                b.trim()
            ));
        }
    }
    // Names read from the directory: a stat of a mount point whose daemon
    // is stuck would wait for it.
    let names: Vec<String> = std::fs::read_dir(RUN)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for name in [format!("emu-{pid}.mnt"), format!("emu-{pid}.json")] {
        if names.contains(&name) {
            left.push(format!("{RUN}/{name}"));
        }
    }
    left
}

/// One kill after `ms`: what went wrong (nothing: empty), and whether the
/// daemon was serving (its record written) when it was killed.
fn kill_once(ms: u64) -> (Vec<String>, bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["emu", "attach", "dram-ssd,size=64m"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start emu attach");
    let pid = child.id();
    std::thread::sleep(Duration::from_millis(ms));
    let serving = Path::new(&format!("{RUN}/emu-{pid}.json")).exists();
    child.kill().unwrap();
    let mut wrong = Vec::new();
    // A second, as asked of it; a loaded machine may take longer to run an
    // exit, but a thread in D state then is one waiting on something.
    let mut gone = reaped_within(&mut child, Duration::from_secs(1));
    if !gone && thread_states(pid).contains('D') {
        let (states, stacks) = (thread_states(pid), stacks(pid));
        wrong.push(format!(
            "pid {pid} killed after {ms} ms is still there 1 s later, threads {states}:\n{stacks}"
        ));
    }
    gone = gone || reaped_within(&mut child, Duration::from_secs(10));
    // The next command removes what it left, and frees it if it is stuck.
    let out = ssdready(&["emu", "list"]);
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "emu list: {said}");
    if !gone && !reaped_within(&mut child, Duration::from_secs(5)) {
        wrong.push(format!(
            "pid {pid} killed after {ms} ms never ended: {said}"
        ));
    }
    let left = left_of(pid);
    if !left.is_empty() {
        wrong.push(format!(
            "pid {pid} killed after {ms} ms left {left:?} after emu list: {said}"
        ));
    }
    (wrong, serving)
}

#[test]
fn attach_killed_at_random_moments_is_gone_at_once_and_leaves_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !kernel_drive_usable() {
        return;
    }
    let (mut wrong, mut serving) = (Vec::new(), 0);
    for ms in delays() {
        let (w, s) = kill_once(ms);
        wrong.extend(w);
        serving += usize::from(s);
    }
    eprintln!("{KILLS} kills, {serving} of them while the drive was served");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
