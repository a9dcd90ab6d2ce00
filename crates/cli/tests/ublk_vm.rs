//! The ublk transport end to end, in a throwaway virtual machine: this
//! machine's kernel has no ublk, so the test boots a distribution kernel
//! that has it (`ublk_drv`) under QEMU with a small initramfs — busybox,
//! this build's `ssdready` and its libraries, and `tests/vm/ublk-init.sh`
//! as init — and reads what the init prints on the serial console.
//!
//! Inside, `ssdready emu attach x25e,size=256m --transport ublk` makes
//! `/dev/ublkbN`; a verified random-write job and a trim job run on it
//! through the kernel's block layer; the daemon's own counts must equal
//! the kernel's (`/sys/block/ublkbN/stat`); `emu detach` must leave no
//! ublk device; a daemon killed with SIGKILL must be cleaned up by the
//! next `emu list`.
//!
//! Needs `qemu-system-x86_64`, a static `/bin/busybox`, and the kernel
//! and module that `.ci/vm-kernel.sh` prepares (in
//! `$SSDREADY_VM_KERNEL`, default `/var/cache/ssdready/vm-kernel`:
//! `vmlinuz` and `ublk_drv.ko`); it skips, saying which is missing,
//! without them. QEMU runs without KVM (nested KVM hangs on this
//! project's machines), so timings inside mean nothing: only counts,
//! data and clean-up are checked.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BOOT_LIMIT: Duration = Duration::from_secs(420);

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

fn kernel_dir() -> PathBuf {
    std::env::var_os("SSDREADY_VM_KERNEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ssdready/vm-kernel"))
}

/// What the test needs that is missing here, if anything.
fn missing() -> Option<String> {
    if which("qemu-system-x86_64").is_none() {
        return Some("qemu-system-x86_64 (Debian: qemu-system-x86)".into());
    }
    if !Path::new("/bin/busybox").is_file() {
        return Some("/bin/busybox (Debian: busybox-static)".into());
    }
    let k = kernel_dir();
    for f in ["vmlinuz", "ublk_drv.ko"] {
        if !k.join(f).is_file() {
            return Some(format!(
                "{} (made by .ci/vm-kernel.sh)",
                k.join(f).display()
            ));
        }
    }
    None
}

/// The shared libraries `exe` loads (from ldd), with the loader.
fn libraries(exe: &Path) -> Vec<PathBuf> {
    let Ok(out) = Command::new("ldd").arg(exe).output() else {
        return Vec::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter(|w| w.starts_with('/'))
        .map(PathBuf::from)
        .collect()
}

/// A `newc` cpio archive (what the kernel unpacks as its initramfs).
#[derive(Default)]
struct Cpio {
    bytes: Vec<u8>,
    ino: u32,
}

impl Cpio {
    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) {
        self.ino += 1;
        let namesize = name.len() + 1;
        let fields = [
            self.ino,
            mode,
            0,
            0,
            1,
            0,
            data.len() as u32,
            0,
            0,
            0,
            0,
            namesize as u32,
            0,
        ];
        self.bytes.extend_from_slice(b"070701");
        for f in fields {
            self.bytes.extend_from_slice(format!("{f:08x}").as_bytes());
        }
        self.bytes.extend_from_slice(name.as_bytes());
        self.bytes.push(0);
        self.pad();
        self.bytes.extend_from_slice(data);
        self.pad();
    }
    fn pad(&mut self) {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
    }
    fn dir(&mut self, name: &str) {
        self.entry(name, 0o040755, &[]);
    }
    fn file(&mut self, name: &str, from: &Path) {
        let data = std::fs::read(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        self.entry(name, 0o100755, &data);
    }
    fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, &[]);
        self.bytes
    }
}

fn initramfs(kernel: &Path) -> Vec<u8> {
    let exe = Path::new(env!("CARGO_BIN_EXE_ssdready"));
    let busybox = Path::new("/bin/busybox");
    let mut c = Cpio::default();
    for d in [
        "bin", "dev", "proc", "sys", "tmp", "run", "lib", "lib64", "usr", "usr/lib",
    ] {
        c.dir(d);
    }
    c.file("bin/busybox", busybox);
    c.file("ssdready", exe);
    c.file("ublk_drv.ko", &kernel.join("ublk_drv.ko"));
    c.entry(
        "init",
        0o100755,
        include_bytes!("vm/ublk-init.sh").as_slice(),
    );
    let mut dirs = std::collections::BTreeSet::new();
    let mut libs: Vec<PathBuf> = libraries(exe);
    libs.extend(libraries(busybox));
    libs.sort();
    libs.dedup();
    for lib in libs {
        let name = lib.to_string_lossy().trim_start_matches('/').to_string();
        let parent = Path::new(&name)
            .parent()
            .map(|p| p.to_string_lossy().to_string());
        if let Some(p) = parent.filter(|p| !p.is_empty()) {
            if dirs.insert(p.clone()) {
                c.dir(&p);
            }
        }
        c.file(&name, &lib);
    }
    c.finish()
}

/// Boot the machine; what its console printed.
fn boot(kernel: &Path, initrd: &Path) -> String {
    let mut child = Command::new("qemu-system-x86_64")
        .args(["-accel", "tcg", "-cpu", "max", "-smp", "2", "-m", "1G"])
        .arg("-kernel")
        .arg(kernel.join("vmlinuz"))
        .arg("-initrd")
        .arg(initrd)
        .args(["-append", "console=ttyS0 quiet panic=-1"])
        .args([
            "-nographic",
            "-no-reboot",
            "-nodefaults",
            "-serial",
            "stdio",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu-system-x86_64 starts");
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > BOOT_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the virtual machine did not power off within {BOOT_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let text = String::from_utf8_lossy(&reader.join().unwrap()).replace('\r', "");
    eprintln!("virtual machine ran {:.1} s", t0.elapsed().as_secs_f64());
    text
}

/// Whether the guest kernel crashed before the test's init said anything:
/// an oops or panic on the console and no `@@` line of ours.
fn guest_crashed_early(console: &str) -> bool {
    (console.contains("Kernel panic") || console.contains("Oops:")) && !console.contains("@@ ")
}

/// The text after marker `@@ key ` on its line.
fn marker<'a>(console: &'a str, key: &str) -> &'a str {
    let tag = format!("@@ {key}");
    console
        .lines()
        .find_map(|l| l.strip_prefix(tag.as_str()))
        .unwrap_or_else(|| panic!("no '{tag}' on the console:\n{console}"))
        .trim()
}

/// The lines between `@@ NAME-begin` and `@@ NAME-end`.
fn block(console: &str, name: &str) -> String {
    let (b, e) = (format!("@@ {name}-begin"), format!("@@ {name}-end"));
    console
        .lines()
        .skip_while(|l| *l != b)
        .skip(1)
        .take_while(|l| *l != e)
        .collect::<Vec<_>>()
        .join("\n")
}

/// (reads, writes, flushes, trims, errors) from the daemon's summary.
fn daemon_counts(log: &str) -> [u64; 5] {
    let line = log
        .lines()
        .find(|l| l.contains("detached /dev/ublkb"))
        .unwrap_or_else(|| panic!("no detach summary in the daemon's log:\n{log}"));
    let inner = line
        .split('(')
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("counts in parentheses");
    let num = |w: &str| -> u64 {
        inner
            .split(',')
            .find(|p| p.trim().ends_with(w))
            .and_then(|p| p.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no '{w}' count in: {line}"))
    };
    [
        num("reads"),
        num("writes"),
        num("flushes"),
        num("trims"),
        num("errors"),
    ]
}

#[test]
fn the_emulated_drive_serves_the_kernel_over_ublk() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if let Some(m) = missing() {
        eprintln!("skipped: the ublk virtual machine needs {m}");
        return;
    }
    let kernel = kernel_dir();
    let dir = tempfile::tempdir().unwrap();
    let initrd = dir.path().join("initrd.cpio");
    std::fs::write(&initrd, initramfs(&kernel)).unwrap();
    let mut console = boot(&kernel, &initrd);
    if guest_crashed_early(&console) {
        // Software emulation (TCG) can trip the guest kernel's own code
        // patching while it boots, before anything of ours runs: boot once
        // more rather than blame the drive.
        eprintln!(
            "the guest kernel crashed while it booted, before the test's init: booting again"
        );
        console = boot(&kernel, &initrd);
    }
    assert!(
        console.contains("@@ control present"),
        "ublk_drv did not load:\n{console}"
    );
    let attached = marker(&console, "attached");
    assert!(attached.starts_with("/dev/ublkb"), "{console}");
    let log = block(&console, "log");
    assert!(log.contains("over ublk"), "{log}");
    assert_eq!(marker(&console, "verify rc"), "0", "{console}");
    assert_eq!(marker(&console, "trim rc"), "0", "{console}");
    // The job's own result: every block written, then read back and
    // verified.
    let json: serde_json::Value = serde_json::from_str(&block(&console, "json"))
        .unwrap_or_else(|e| panic!("the job's JSON: {e}\n{console}"));
    let job = &json["jobs"][0];
    assert_eq!(job["write"]["total_ios"], 2048, "{job}");
    assert_eq!(job["read"]["total_ios"], 2048, "{job}");
    assert_eq!(job["error"], 0, "{job}");
    // The kernel's counters and the daemon's agree: every request the
    // block layer completed, the daemon served.
    let k: Vec<u64> = marker(&console, "kstat")
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let [reads, writes, flushes, trims, errors] = daemon_counts(&log);
    assert_eq!(errors, 0, "{log}");
    assert_eq!(reads, k[0], "reads: daemon vs kernel ({k:?})");
    assert_eq!(writes * 8, k[6], "4 KiB writes vs sectors written ({k:?})");
    assert_eq!(trims, k[11], "trims vs discards ({k:?})");
    assert_eq!(flushes, k[15], "flushes ({k:?})");
    assert!(reads >= 2048 && writes >= 2048 && trims == 128, "{log}");
    // What the device offers the kernel.
    assert_eq!(marker(&console, "queue"), "4096 write back 524288");
    // Clean-up: detach leaves nothing; a killed daemon's device is removed
    // by the next `emu list`.
    assert_eq!(marker(&console, "detach rc"), "0", "{console}");
    assert_eq!(marker(&console, "left"), "0", "{console}");
    assert!(
        marker(&console, "stale").contains("removed a stale emulated drive /dev/ublkb"),
        "{console}"
    );
    assert_eq!(marker(&console, "left-after-kill"), "0", "{console}");
}
