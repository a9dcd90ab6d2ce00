//! The drive's transport measured, to be taken out: a zero-time drive
//! (`emu attach null`, the model answers at once) served over the same
//! transport as the studied drive (the one its record names: FUSE + loop,
//! FUSE over io_uring + loop, or ublk), and beside it a loop
//! device over a `/dev/shm` file (the same kernel path less FUSE and the
//! daemon), each read at every queue depth the study measured, alternating,
//! a few times. What the zero-time drive costs above the shm loop, in
//! latency and in CPU per I/O, is the transport's own cost; the spread of
//! the repeats is its error.
//!
//! A calibration holds for one transport, kernel and boot: it is kept in
//! `$XDG_CACHE_HOME/ssdready/transport/RELEASE-BOOTID-TRANSPORT.json` (or
//! `~/.cache/…`; as root, only where root alone can write, else under
//! `/var/cache`), written with the one writer, read only as a regular
//! file of at most 1 MiB, and a later study on the
//! same boot and transport reuses it when it covers the depths it needs.
//! Keeping one removes the files of earlier boots, which no study can use.

use crate::clock::Deadline;
use crate::plan::CALIBRATION_RUN_S;
use ssdready_emu::kernel::daemon;
use ssdready_run::{RunFn, RunRequest};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

pub use ssdready_diagnosis::transport::calibration::*;

/// The calibration for a study's runs over `transport`: the one kept for
/// this kernel and boot when it covers their depths, else measured now
/// when that fits before `d` (`NoTime` otherwise) and kept (its note says
/// where, or that it could not be kept).
pub fn for_runs(
    runs: &[ssdready_measured::record::RunRecord],
    transport: &str,
    runtime_s: f64,
    (run_fn, stop): (&mut RunFn<'_>, &AtomicBool),
    d: &Deadline,
) -> Result<Calibration, CalibrationError> {
    let qds = depths(runs);
    if qds.is_empty() {
        return Err(CalibrationError::NoDepth);
    }
    let engine = engine(runs);
    let here = here();
    let path = path_for(&here, transport);
    if let Some(c) = path
        .as_deref()
        .and_then(load)
        .filter(|c| c.fits(&here, transport, &engine, &qds))
    {
        return Ok(c);
    }
    let at = Reading {
        engine: &engine,
        runtime_s: runtime_s.min(RUNTIME_S),
    };
    d.check(estimate_s(qds.len(), at.runtime_s), "measuring it takes")
        .map_err(CalibrationError::NoTime)?;
    let mut c = measure(&qds, transport, at, (run_fn, stop), d)?;
    match (c.steady(), path) {
        (Err(why), _) => c.not_kept = Some(why.to_string()),
        (Ok(()), Some(p)) => match save(&c, &p) {
            Ok(()) => c.path = Some(p),
            Err(e) => c.not_kept = Some(format!("{}: {e}", p.display())),
        },
        (Ok(()), None) => {}
    }
    Ok(c)
}

/// Seconds measuring the transport at `depths` depths takes: the
/// zero-time drive's attach, then at each depth [`REPEATS`] pairs of runs
/// of `runtime_s`, each run with [`CALIBRATION_RUN_S`] besides.
pub fn estimate_s(depths: usize, runtime_s: f64) -> f64 {
    let pairs = (depths * REPEATS) as f64;
    ATTACH_S + pairs * 2.0 * (runtime_s + CALIBRATION_RUN_S)
}

/// Seconds the zero-time drive and its shm loop take to come up.
pub const ATTACH_S: f64 = 2.0;

/// Forget the kept calibration `c` where the study's own peak showed its
/// measurement disturbed (the drive beat its transport's zero-time
/// ceiling, [`ssdready_diagnosis::apparatus::BEATEN`]): the next study
/// measures the transport again. Returns whether a file was removed.
pub fn forget_if_beaten(c: &Calibration, f: &ssdready_diagnosis::figures::Figures) -> bool {
    let beaten = f.transport_ceiling.as_ref().is_some_and(|t| t.beaten);
    match (&c.path, beaten) {
        (Some(p), true) => std::fs::remove_file(p).is_ok(),
        _ => false,
    }
}

/// This kernel's release and this boot's id.
pub fn here() -> (String, String) {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    (
        read("/proc/sys/kernel/osrelease"),
        read("/proc/sys/kernel/random/boot_id"),
    )
}

/// The file for this kernel, boot and transport: under [`cache_base`]'s
/// directory; None without one.
pub fn path_for(here: &(String, String), transport: &str) -> Option<PathBuf> {
    Some(path_in(&cache_base().0?, here, transport))
}

/// The user's cache directory: `$XDG_CACHE_HOME` when it is absolute (the
/// XDG rule), else `$HOME/.cache`; None without either.
fn user_cache_base() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })
}

/// Where root keeps calibrations when the user's cache directory is not
/// root's alone (`sudo -E` keeps a user's `$HOME` and `$XDG_CACHE_HOME`).
pub const ROOT_CACHE: &str = "/var/cache";

/// The cache directory calibrations are kept under, and the line saying
/// that the user's was passed over: as root, a cache directory that
/// another user owns or may write to (or that is reached through one) is
/// not used; [`ROOT_CACHE`] is, when it is root's alone.
pub fn cache_base() -> (Option<PathBuf>, Option<String>) {
    let user = user_cache_base();
    if !ssdready_io::kdev::is_root() {
        return (user, None);
    }
    let Some(base) = user else {
        return (
            root_only(Path::new(ROOT_CACHE))
                .ok()
                .map(|()| ROOT_CACHE.into()),
            None,
        );
    };
    let Err(why) = root_only(&base) else {
        return (Some(base), None);
    };
    let fallback = root_only(Path::new(ROOT_CACHE)).map(|()| PathBuf::from(ROOT_CACHE));
    let line = format!(
        "not keeping the transport's calibration under {} ({why}): as root, only a directory \
         that root alone can write is used; {}",
        base.display(),
        match &fallback {
            Ok(p) => format!("{} is used instead", p.join("ssdready").display()),
            Err(e) => format!("{ROOT_CACHE} cannot be used either ({e}); it is measured each time"),
        }
    );
    (fallback.ok(), Some(line))
}

/// Whether the calibrations under `base` are root's alone: each of
/// `base/ssdready/transport`, `base/ssdready`, `base` and the directories
/// above it that exist, up to the first that existed, is owned by root,
/// writable by no one else and not a symbolic link. The reason when not.
pub fn root_only(base: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let deepest = base.join("ssdready").join("transport");
    let mut at = Some(deepest.as_path());
    while let Some(p) = at {
        match std::fs::symlink_metadata(p) {
            Ok(md) => {
                if md.file_type().is_symlink() {
                    return Err(format!("{} is a symbolic link", p.display()));
                }
                if md.uid() != 0 {
                    return Err(format!("{} is owned by uid {}", p.display(), md.uid()));
                }
                if md.mode() & 0o022 != 0 {
                    return Err(format!(
                        "other users can write {} (mode {:04o})",
                        p.display(),
                        md.mode() & 0o7777
                    ));
                }
                if p.starts_with(base) && p != base {
                    at = p.parent();
                } else {
                    return Ok(());
                }
            }
            Err(_) => at = p.parent(),
        }
    }
    Ok(())
}

/// The file for this kernel, boot and transport under the cache
/// directory `base` (each transport has its own: a study of a drive over
/// one does not replace the other's).
pub fn path_in(base: &Path, here: &(String, String), transport: &str) -> PathBuf {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| match c.is_ascii_alphanumeric() || ".-_".contains(c) {
                true => c,
                false => '_',
            })
            .collect()
    };
    base.join("ssdready").join("transport").join(format!(
        "{}-{}-{}.json",
        clean(&here.0),
        clean(&here.1),
        clean(transport)
    ))
}

/// The most a kept calibration may hold (one is a few KiB).
pub const MAX_KEPT: u64 = 1 << 20;

/// The kept calibration at `path`, if it is a regular file (opened without
/// following a link or waiting on a FIFO) of at most [`MAX_KEPT`] bytes
/// and parses.
pub fn load(path: &Path) -> Option<Calibration> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .ok()?;
    let md = f.metadata().ok()?;
    if !md.is_file() || md.len() > MAX_KEPT {
        return None;
    }
    let mut text = String::new();
    f.take(MAX_KEPT).read_to_string(&mut text).ok()?;
    let mut c: Calibration = serde_json::from_str(&text).ok()?;
    c.path = Some(path.to_path_buf());
    Some(c)
}

/// Keep `c` at `path` (atomically, with the one writer; its directory
/// made first), and remove the calibrations of earlier boots beside it:
/// they can never be used again, and the directory would otherwise keep
/// one file per boot.
pub fn save(c: &Calibration, path: &Path) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let json = serde_json::to_string_pretty(c).map_err(std::io::Error::other)?;
    ssdready_io::writer::replace(path, json.as_bytes())?;
    if let Some(dir) = path.parent() {
        prune_other_boots(dir, &c.boot_id);
    }
    Ok(())
}

/// Remove the `*.json` files (not directories; a link itself, never what
/// it points to) in `dir` whose name does not carry `boot_id`, and this
/// boot's file under the name used before calibrations were kept per
/// transport (`RELEASE-BOOTID.json`, never read now). Nothing is removed
/// without a boot id. Best effort: a file that cannot be
/// removed stays.
fn prune_other_boots(dir: &Path, boot_id: &str) {
    if boot_id.is_empty() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let plain = e.file_type().is_ok_and(|t| !t.is_dir());
        let unread = !name.contains(boot_id) || name.ends_with(&format!("-{boot_id}.json"));
        if plain && name.ends_with(".json") && unread {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Why the drive's transport could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error("the study measured no queue depth")]
    NoDepth,
    /// The zero-time drive could not be attached.
    #[error(transparent)]
    Drive(#[from] crate::kdrive::StartError),
    #[error("{device}: no record of its daemon")]
    NoRecord { device: String },
    /// The zero-time drive came up over another transport than the
    /// measured drive's.
    #[error("the zero-time drive was served over {got}, not the measured drive's {want}")]
    OtherTransport { want: String, got: String },
    /// The loop device to compare with could not be had.
    #[error(transparent)]
    ShmLoop(#[from] crate::kdrive::ShmLoopError),
    #[error("interrupted while measuring the drive's transport")]
    Interrupted,
    /// Measuring it would not fit in what the budget has left.
    #[error("{0}")]
    NoTime(String),
    /// A read run failed (`why`: the run's message).
    #[error("reading {device} at QD {qd}: {why}")]
    Read {
        device: String,
        qd: u32,
        why: String,
    },
    #[error("reading {device} at QD {qd}: no I/O completed")]
    NoIo { device: String, qd: u32 },
}

/// The zero-time drive to attach for a drive served over `transport`
/// (its record's name): the spec and the `emu attach --transport` value,
/// the same transport, never `auto` (which could pick another one).
pub fn zero_time_drive(transport: &str) -> Result<(String, &'static str), CalibrationError> {
    let over = crate::kdrive::attach_transport(transport).ok_or_else(|| {
        crate::kdrive::StartError::UnknownTransport {
            name: transport.into(),
        }
    })?;
    Ok((format!("null,size={SIZE}"), over))
}

/// Measure the transport at `qds`: attach a zero-time drive over
/// `transport` (the measured drive's, as its record names it) and a shm
/// loop, read each at every depth [`REPEATS`] times, alternating, with
/// the study's own runner (the same engine and options as its runs).
pub fn measure(
    qds: &[u32],
    transport: &str,
    at: Reading,
    (run_fn, stop): (&mut RunFn<'_>, &AtomicBool),
    d: &Deadline,
) -> Result<Calibration, CalibrationError> {
    let (spec, over) = zero_time_drive(transport)?;
    let mut drive = crate::kdrive::start_spec(stop, &spec, over)?;
    let record = daemon::record_of(&drive.device).ok_or_else(|| CalibrationError::NoRecord {
        device: drive.device.clone(),
    })?;
    if record.transport != transport {
        drive.stop();
        return Err(CalibrationError::OtherTransport {
            want: transport.into(),
            got: record.transport,
        });
    }
    let shm = crate::kdrive::ShmLoop::new(SIZE_BYTES, record.block_size)?;
    let mut points = Vec::new();
    for &qd in qds {
        let mut pairs = Vec::new();
        for _ in 0..REPEATS {
            if stop.load(Relaxed) {
                return Err(CalibrationError::Interrupted);
            }
            d.check(
                2.0 * (at.runtime_s + CALIBRATION_RUN_S),
                "its next pair of runs takes",
            )
            .map_err(CalibrationError::NoTime)?;
            let before = daemon::stats(&record.name).unwrap_or_default();
            let (drive_lat_ns, drive_proc_ns, drive_iops) = read_at(run_fn, &drive.device, qd, at)?;
            std::thread::sleep(Duration::from_millis(daemon::STATS_EVERY_MS + 50));
            let after = daemon::stats(&record.name).unwrap_or_default();
            let (loop_lat_ns, loop_proc_ns, _) = read_at(run_fn, &shm.device, qd, at)?;
            pairs.push(Pair {
                drive_lat_ns,
                loop_lat_ns,
                daemon_cpu_ns: after.since(&before).daemon_cpu_ns_per_io,
                drive_proc_ns,
                loop_proc_ns,
                drive_iops,
            });
        }
        points.push(Point::from_pairs(qd, &pairs));
    }
    drop(shm);
    drive.stop();
    let (kernel, boot_id) = here();
    Ok(Calibration {
        schema: SCHEMA.into(),
        kernel,
        boot_id,
        transport: record.transport,
        engine: at.engine.into(),
        made_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        repeats: REPEATS,
        runtime_s: at.runtime_s,
        points,
        path: None,
        fresh: true,
        not_kept: None,
    })
}

/// How each calibration run reads: the engine of the runs it calibrates
/// (with a synchronous one every depth would be QD 1) and its length.
#[derive(Clone, Copy, Debug)]
pub struct Reading<'a> {
    pub engine: &'a str,
    pub runtime_s: f64,
}

/// 4 KiB random reads of `dev` at depth `qd`: median latency, the
/// submitting process's CPU per I/O, and IOPS.
fn read_at(
    run_fn: &mut RunFn<'_>,
    dev: &str,
    qd: u32,
    at: Reading,
) -> Result<(f64, f64, f64), CalibrationError> {
    let runtime_s = at.runtime_s;
    let mut req = RunRequest {
        quiet: true,
        ..Default::default()
    };
    req.job("transport");
    req.set("filename", dev)
        .set("rw", "randread")
        .set("ioengine", at.engine)
        .set("bs", "4k")
        .set("iodepth", qd)
        .set("direct", 1)
        .set("size", SIZE)
        .flag("time_based")
        .set(
            "runtime",
            format!("{}ms", (runtime_s * 1e3).max(1.0) as u64),
        );
    let r = run_fn(&req).map_err(|e| CalibrationError::Read {
        device: dev.into(),
        qd,
        why: e.message().to_string(),
    })?;
    let s = ssdready_measured::summary::PointSummary::from_result(&r);
    if s.ios == 0 {
        return Err(CalibrationError::NoIo {
            device: dev.into(),
            qd,
        });
    }
    Ok((
        s.lat_p50_ns as f64,
        s.cpu.as_ref().map_or(0.0, |c| c.process_ns_per_io),
        s.iops,
    ))
}

#[cfg(test)]
#[path = "calibrate_tests.rs"]
mod tests;
