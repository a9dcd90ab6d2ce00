//! Running fio beside ssdready: both write fio's JSON for the same job, in
//! the same directory. Tests that compare with fio skip, saying so, when
//! fio is not installed (CI installs it).
#![allow(dead_code)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Whether fio can be run; prints why a test is skipped when not.
pub fn have_fio() -> bool {
    let ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: fio is not installed (CI installs it; apt-get install fio)");
    }
    ok
}

/// The JSON document in `out` (fio may print notes before it).
fn json_of(out: &[u8], who: &str) -> Value {
    let text = String::from_utf8_lossy(out);
    let at = text
        .find('{')
        .unwrap_or_else(|| panic!("{who}: no JSON in {text}"));
    serde_json::from_str(&text[at..]).unwrap_or_else(|e| panic!("{who}: {e}: {text}"))
}

/// Run fio with `args` in `dir`; its JSON and the process output.
pub fn fio_in(dir: &Path, args: &[&str]) -> (Value, Output) {
    let out = Command::new("fio")
        .arg("--output-format=json")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run fio");
    (json_of(&out.stdout, "fio"), out)
}

/// Run `ssdready run --output-format=json` with `args` in `dir`.
pub fn ssdready_in(dir: &Path, args: &[&str]) -> (Value, Output) {
    let out = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet", "--output-format=json"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ssdready");
    (json_of(&out.stdout, "ssdready"), out)
}

/// Run `ssdready run` with `args` in `dir` in ssdready's own JSON.
pub fn native_in(dir: &Path, args: &[&str]) -> (Value, Output) {
    let out = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet", "--output-format=native"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run ssdready");
    (json_of(&out.stdout, "ssdready"), out)
}

/// The first job's `dir` section counter `key` (fio's JSON).
pub fn ios(v: &Value, dir: &str) -> u64 {
    v["jobs"][0][dir]["total_ios"].as_u64().unwrap_or(0)
}

/// Whether `dir` is on tmpfs (whose page cache cannot be dropped).
pub fn on_tmpfs(dir: &Path) -> bool {
    let out = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .expect("stat");
    String::from_utf8_lossy(&out.stdout).trim() == "tmpfs"
}

/// A tmpfs of `mb` MiB mounted on a fresh directory for the test's life
/// (root only), unmounted when dropped.
pub struct SmallFs {
    pub dir: tempfile::TempDir,
}

impl SmallFs {
    pub fn mount(mb: u64) -> Option<SmallFs> {
        if !super::is_root() {
            eprintln!("skipped: mounting a size-limited tmpfs needs root");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={mb}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: mount -t tmpfs failed (no CAP_SYS_ADMIN here)");
            return None;
        }
        Some(SmallFs { dir })
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}
