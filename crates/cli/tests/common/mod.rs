//! Helpers for the binary's integration tests: run ssdready, parse its JSON,
//! and make a loop device over a /dev/shm file when root (cleaned up on drop);
//! `labvm` boots the lab VM (devices this kernel lacks, under QEMU).
#![allow(dead_code)]

pub mod fio;
pub mod labvm;
pub mod net;
pub mod server;
pub mod tuned;

use serde_json::Value;
use std::process::{Command, Output};

/// A refusal as every bad input gets one: exit code 2, one line on
/// stderr holding every needle, nothing on stdout; `what` names the call.
pub fn assert_refused(out: &Output, what: &str, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(out.stdout.is_empty(), "{what} printed a result");
    assert_eq!(err.trim_end().lines().count(), 1, "{what}: one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{what}: '{}' lacks '{n}'", err.trim_end());
    }
}

pub fn ssdready(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .output()
        .expect("run ssdready")
}

/// Run with --output-format=json and return the parsed result; panics with
/// stderr when the run fails.
pub fn run_json(args: &[&str]) -> Value {
    let mut a = vec!["run", "--output-format=native", "--quiet"];
    a.extend_from_slice(args);
    let out = ssdready(&a);
    assert!(
        out.status.success(),
        "ssdready {a:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// Whether the kernel drive can be attached here (root and /dev/fuse);
/// when not, says why the test is skipped.
#[allow(dead_code)]
pub fn kernel_drive_usable() -> bool {
    if !is_root() {
        eprintln!("skipped: the kernel drive needs root");
        return false;
    }
    if !std::path::Path::new("/dev/fuse").exists() {
        eprintln!("skipped: no /dev/fuse");
        return false;
    }
    true
}

pub fn is_root() -> bool {
    nix_uid() == 0
}

fn nix_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(u32::MAX)
}

/// A loop device over a file in /dev/shm, with direct I/O on.
pub struct LoopDev {
    pub dev: String,
    backing: String,
}

impl LoopDev {
    /// None (with the reason printed) when not root or losetup fails.
    pub fn new(tag: &str, size_mb: u64) -> Option<LoopDev> {
        if !is_root() {
            eprintln!("skipped: needs root to create a loop device");
            return None;
        }
        let backing = format!("/dev/shm/ssdready-test-{tag}-{}.img", std::process::id());
        let f = std::fs::File::create(&backing).ok()?;
        f.set_len(size_mb << 20).ok()?;
        let out = Command::new("losetup")
            .args(["--direct-io=on", "-f", "--show", &backing])
            .output();
        match out {
            Ok(o) if o.status.success() => Some(LoopDev {
                dev: String::from_utf8_lossy(&o.stdout).trim().to_string(),
                backing,
            }),
            other => {
                eprintln!("skipped: losetup failed: {other:?}");
                let _ = std::fs::remove_file(&backing);
                None
            }
        }
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

/// A check of real-time behaviour that another process's load can upset (a
/// sleep that overshoots, a thread that waits for a CPU): up to `tries`
/// attempts, each printed; passes at the first success, else panics with
/// every attempt's failure. Only for figures a loaded machine pushes one
/// way; a wrong implementation fails every attempt.
#[allow(dead_code)]
pub fn on_a_quiet_attempt(tries: usize, mut check: impl FnMut() -> Result<(), String>) {
    let mut failures = Vec::new();
    for i in 0..tries {
        match check() {
            Ok(()) => return,
            Err(e) => {
                eprintln!("attempt {} of {tries}: {e}", i + 1);
                failures.push(e);
            }
        }
    }
    panic!("every attempt failed: {failures:?}");
}
