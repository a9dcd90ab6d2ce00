//! `ssdready ramdev create|list|remove`: a RAM-backed kernel block device
//! that exposes the software stack ("SSD for everyone", Accardi and Wilcox). Which kind is
//! made depends on what the kernel has:
//!
//! * `null_blk` (configfs) — blk-mq with no data: the purest view of the
//!   block layer; used when `/sys/kernel/config/nullb` exists;
//! * `loop` — a loop device over a `/dev/shm` file with direct I/O: the real
//!   block layer and the loop driver, whose worker thread then reads the
//!   tmpfs pages; the default where null_blk is missing;
//! * `zram` — compressed RAM, bio-based (no request queue, no scheduler).
//!
//! ublk needs a user-space server and is not offered. Each kind says what
//! its I/O path includes and leaves out. Devices made here are recognised
//! by their names (`/dev/shm/ssdready-ramdev-*`, `nullb` directory
//! `ssdready*`, a zram marker), so `list` and `remove` touch nothing else.

use crate::failure::Failure;
use crate::sys::is_root;
use ssdready_core::units::fmt_bytes;
use std::path::Path;
use std::process::Command;

const SHM_PREFIX: &str = "/dev/shm/ssdready-ramdev-";
const NULLB: &str = "/sys/kernel/config/nullb";

/// What a kind's I/O path includes and leaves out.
pub fn explain(kind: &str) -> &'static str {
    match kind {
        "loop" => "includes: system call, VFS, blk-mq block layer (scheduler as set, 'none' by default), the loop \
                   driver and its kworker, a direct read/write of tmpfs pages (one memory copy); leaves out: a device, \
                   DMA, interrupts (completion runs in the loop worker: one context switch per request)",
        "zram" => "includes: system call, VFS, the bio-based block path, LZO/ZSTD compression of each page; leaves \
                   out: the request queue, I/O scheduler, merging and interrupts; its diskstats times are coarse",
        "null_blk" => "includes: system call, VFS, blk-mq block layer and scheduler, a driver that completes at once \
                       (irqmode 0) without moving data; leaves out: data copies, a device, interrupts",
        _ => "unknown kind",
    }
}

/// A `ramdev create` request refused, or a step of making or removing a
/// device that failed.
#[derive(Debug, thiserror::Error)]
pub enum RamdevError {
    #[error("option 'kind': '{kind}' is not a kind (allowed: {KINDS})")]
    NotAKind { kind: String },
    #[error("option 'size': {size} bytes (allowed: a whole number of MiB, at least 1m, e.g. 1g)")]
    NotWholeMib { size: u64 },
    #[error(
        "option 'size': {} is more than the {} of memory available (allowed: at most MemAvailable of /proc/meminfo)",
        fmt_bytes(*.size as f64),
        fmt_bytes(*.avail as f64)
    )]
    MoreThanMemory { size: u64, avail: u64 },
    #[error(
        "option 'size': {} is more than the {} free in /dev/shm, where the loop device's backing file lives",
        fmt_bytes(*.size as f64),
        fmt_bytes(*.free as f64)
    )]
    MoreThanShm { size: u64, free: u64 },
    /// A tool (losetup) that could not be started.
    #[error("{program:?}: {err}")]
    NotRun {
        program: std::ffi::OsString,
        err: std::io::Error,
    },
    /// A tool that failed (`stderr`: what it said).
    #[error("{program:?} failed: {stderr}")]
    Failed {
        program: std::ffi::OsString,
        stderr: String,
    },
    #[error("writing '{value}' to {path}: {err}")]
    Write {
        value: String,
        path: String,
        err: std::io::Error,
    },
    #[error("{path}: {err}")]
    RemoveDir { path: String, err: std::io::Error },
}

fn run(cmd: &mut Command) -> Result<String, RamdevError> {
    let out = cmd.output().map_err(|err| RamdevError::NotRun {
        program: cmd.get_program().to_os_string(),
        err,
    })?;
    if !out.status.success() {
        return Err(RamdevError::Failed {
            program: cmd.get_program().to_os_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn write(path: &str, value: &str) -> Result<(), RamdevError> {
    std::fs::write(path, value).map_err(|err| RamdevError::Write {
        value: value.to_string(),
        path: path.to_string(),
        err,
    })
}

/// The kinds `ramdev create --kind` accepts.
pub const KINDS: &str = "auto, null_blk, loop, zram";

/// `kind` with `auto` resolved: null_blk where the kernel has it, else loop.
fn pick_kind(kind: &str) -> &str {
    match kind {
        "auto" if Path::new(NULLB).is_dir() => "null_blk",
        "auto" => "loop",
        k => k,
    }
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = m
        .lines()
        .find(|l| l.starts_with("MemAvailable:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// Bytes free in /dev/shm, where a loop ramdev keeps its backing file.
fn shm_free() -> Option<u64> {
    ssdready_io::target::space::free_space(Path::new("/dev/shm"))
        .ok()
        .map(|f| f.available)
}

/// Check a `ramdev create` request before anything is made: a known kind,
/// a size of whole MiB (null_blk counts in MiB), at least 1 MiB, and no more
/// than the memory that is available (a RAM device beyond RAM swaps or
/// meets the OOM killer). Returns the resolved kind.
pub fn check_request(kind: &str, size: u64) -> Result<&str, RamdevError> {
    let kind = pick_kind(kind);
    if !["null_blk", "loop", "zram", "ublk"].contains(&kind) {
        return Err(RamdevError::NotAKind {
            kind: kind.to_string(),
        });
    }
    if size < 1 << 20 || !size.is_multiple_of(1 << 20) {
        return Err(RamdevError::NotWholeMib { size });
    }
    if let Some(avail) = mem_available() {
        if size > avail {
            return Err(RamdevError::MoreThanMemory { size, avail });
        }
    }
    if kind == "loop" {
        if let Some(free) = shm_free().filter(|&f| size > f) {
            return Err(RamdevError::MoreThanShm { size, free });
        }
    }
    Ok(kind)
}

/// Create a device of `kind` (`auto`, `null_blk`, `loop`, `zram`) and `size`
/// bytes; returns (kind, device path). Bad input, missing permission and a
/// kernel without the kind are [`Failure::BadInput`].
pub fn create(kind: &str, size: u64) -> Result<(String, String), Failure> {
    let kind = check_request(kind, size).map_err(|e| Failure::BadInput(e.to_string()))?;
    if !is_root() {
        return Err(Failure::BadInput(
            "ramdev needs root (it creates a kernel block device)".into(),
        ));
    }
    make(kind, size)
}

fn make(kind: &str, size: u64) -> Result<(String, String), Failure> {
    let env = |m: String| Failure::BadInput(m);
    let failed = |m: String| Failure::Runtime(m);
    let fail_with = |e: RamdevError| Failure::Runtime(e.to_string());
    match kind {
        "loop" => {
            let n = (0..1000)
                .find(|i| !Path::new(&format!("{SHM_PREFIX}{i}.img")).exists())
                .ok_or_else(|| {
                    env("1000 loop ramdevs exist already (ssdready ramdev list)".into())
                })?;
            let backing = format!("{SHM_PREFIX}{n}.img");
            // A new file only (never an existing one through a planted
            // link), removed again if it cannot be sized.
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&backing)
                .map_err(|e| failed(format!("{backing}: {e}")))?;
            if let Err(e) = f.set_len(size) {
                let _ = std::fs::remove_file(&backing);
                return Err(failed(format!("{backing}: {e}")));
            }
            drop(f);
            match run(Command::new("losetup").args(["--direct-io=on", "-f", "--show", &backing])) {
                Ok(dev) => Ok(("loop".into(), dev)),
                Err(e) => {
                    let _ = std::fs::remove_file(&backing);
                    Err(failed(format!("{e} (losetup is in util-linux)")))
                }
            }
        }
        "zram" => {
            let dev = (0..16)
                .map(|i| format!("zram{i}"))
                .find(|z| {
                    std::fs::read_to_string(format!("/sys/block/{z}/disksize")).map(|s| s.trim() == "0").unwrap_or(false)
                })
                .ok_or_else(|| env("no unused zram device (/sys/block/zramN/disksize is 0 for none); hot-add one via /sys/class/zram-control".into()))?;
            write(&format!("/sys/block/{dev}/disksize"), &size.to_string()).map_err(fail_with)?;
            if let Err(e) = write(&format!("{SHM_PREFIX}{dev}"), "made by ssdready ramdev\n") {
                // Unmarked, `ramdev list`/`remove` would not see it: undo.
                let _ = write(&format!("/sys/block/{dev}/reset"), "1");
                return Err(fail_with(e));
            }
            Ok(("zram".into(), format!("/dev/{dev}")))
        }
        "null_blk" => {
            if !Path::new(NULLB).is_dir() {
                return Err(env(format!("null_blk is not available: {NULLB} does not exist (modprobe null_blk, or use --kind=loop)")));
            }
            let n = (0..1000)
                .find(|i| !Path::new(&format!("{NULLB}/ssdready{i}")).exists())
                .ok_or_else(|| {
                    env("1000 null_blk ramdevs exist already (ssdready ramdev list)".into())
                })?;
            let dir = format!("{NULLB}/ssdready{n}");
            std::fs::create_dir(&dir).map_err(|e| failed(format!("{dir}: {e}")))?;
            write(&format!("{dir}/size"), &(size >> 20).to_string()).map_err(fail_with)?;
            write(&format!("{dir}/irqmode"), "0").map_err(fail_with)?;
            write(&format!("{dir}/queue_mode"), "2").map_err(fail_with)?;
            write(&format!("{dir}/power"), "1").map_err(fail_with)?;
            let idx = std::fs::read_to_string(format!("{dir}/index"))
                .map_err(|e| failed(e.to_string()))?;
            Ok(("null_blk".into(), format!("/dev/nullb{}", idx.trim())))
        }
        "ublk" => Err(env(
            "ublk needs a user-space server, which ssdready does not provide (use --kind=loop)"
                .into(),
        )),
        other => Err(env(format!(
            "option 'kind': '{other}' is not a kind (allowed: {KINDS})"
        ))),
    }
}

/// (kind, device, detail) of every device made here.
pub fn list() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    if let Ok(text) = run(Command::new("losetup").args(["-n", "-O", "NAME,BACK-FILE,DIO", "-l"])) {
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() >= 2 && f[1].starts_with(SHM_PREFIX) {
                out.push((
                    "loop".into(),
                    f[0].to_string(),
                    format!("backing {} direct-io {}", f[1], f.get(2).unwrap_or(&"?")),
                ));
            }
        }
    }
    for i in 0..16 {
        let z = format!("zram{i}");
        if Path::new(&format!("{SHM_PREFIX}{z}")).exists() {
            let size =
                std::fs::read_to_string(format!("/sys/block/{z}/disksize")).unwrap_or_default();
            out.push((
                "zram".into(),
                format!("/dev/{z}"),
                format!("{} bytes", size.trim()),
            ));
        }
    }
    if let Ok(rd) = std::fs::read_dir(NULLB) {
        for e in rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("ssdready"))
        {
            let idx = std::fs::read_to_string(e.path().join("index")).unwrap_or_default();
            out.push((
                "null_blk".into(),
                format!("/dev/nullb{}", idx.trim()),
                e.path().display().to_string(),
            ));
        }
    }
    out
}

/// Remove one device made here (or all with `None`).
pub fn remove(which: Option<&str>) -> Result<Vec<String>, Failure> {
    if !is_root() {
        return Err(Failure::BadInput("ramdev needs root".into()));
    }
    let all = list();
    if let Some(w) = which {
        if !all.iter().any(|(_, d, _)| d == w) {
            return Err(Failure::BadInput(format!(
                "{w} was not made by ssdready ramdev (see 'ssdready ramdev list')"
            )));
        }
    }
    remove_listed(all, which).map_err(|e| Failure::Runtime(e.to_string()))
}

fn remove_listed(
    all: Vec<(String, String, String)>,
    which: Option<&str>,
) -> Result<Vec<String>, RamdevError> {
    let mut removed = Vec::new();
    for (kind, dev, detail) in all
        .into_iter()
        .filter(|(_, d, _)| which.is_none_or(|w| w == d))
    {
        match kind.as_str() {
            "loop" => {
                run(Command::new("losetup").args(["-d", &dev]))?;
                if let Some(b) = detail
                    .strip_prefix("backing ")
                    .and_then(|r| r.split_whitespace().next())
                {
                    let _ = std::fs::remove_file(b);
                }
            }
            "zram" => {
                let z = dev.trim_start_matches("/dev/");
                write(&format!("/sys/block/{z}/reset"), "1")?;
                let _ = std::fs::remove_file(format!("{SHM_PREFIX}{z}"));
            }
            _ => {
                write(&format!("{detail}/power"), "0")?;
                std::fs::remove_dir(&detail).map_err(|err| RamdevError::RemoveDir {
                    path: detail.clone(),
                    err,
                })?;
            }
        }
        removed.push(dev);
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_refused_naming_the_option_and_the_allowed_values() {
        let refused = |kind, size| check_request(kind, size).unwrap_err().to_string();
        assert_eq!(
            refused("nbd", 1 << 20),
            "option 'kind': 'nbd' is not a kind (allowed: auto, null_blk, loop, zram)"
        );
        assert_eq!(
            refused("zram", 4096),
            "option 'size': 4096 bytes (allowed: a whole number of MiB, at least 1m, e.g. 1g)"
        );
        let e = RamdevError::MoreThanShm {
            size: 2 << 30,
            free: 1 << 30,
        };
        assert!(e.to_string().starts_with("option 'size': "), "{e}");
        assert!(
            e.to_string()
                .ends_with("free in /dev/shm, where the loop device's backing file lives"),
            "{e}"
        );
    }
}
