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
//! `~/.cache/…`), written with the one writer, and a later study on the
//! same boot and transport reuses it when it covers the depths it needs.
//! Keeping one removes the files of earlier boots, which no study can use.

use serde::{Deserialize, Serialize};
use ssdready_emu::kernel::daemon;
use ssdready_run::{RunFn, RunRequest};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Duration;

/// The calibration file's schema.
pub const SCHEMA: &str = "ssdready.transport-calibration";

/// The zero-time drive's size (its reads are not filled: a zero-time
/// drive's unwritten page costs what a written one does).
pub const SIZE: &str = "64m";

/// [`SIZE`] in bytes.
const SIZE_BYTES: u64 = 64 << 20;

/// Times each depth is measured (alternating drive and shm loop).
pub const REPEATS: usize = 3;

/// One run's length, seconds (at most: a study of shorter runs
/// calibrates with its own length).
pub const RUNTIME_S: f64 = 0.5;

/// The transport's cost at one queue depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Point {
    pub qd: u32,
    /// Latency the transport adds: the zero-time drive's median latency
    /// less the shm loop's (medians, not means: a loaded machine's
    /// preemptions, milliseconds long, would swamp a few µs), the median
    /// of the repeats.
    pub lat_ns: f64,
    /// Half the spread of the repeats' differences.
    pub lat_err_ns: f64,
    /// CPU per I/O the transport adds: the daemon's threads, and the
    /// submitter's own CPU above the shm loop's.
    pub cpu_ns: f64,
    pub cpu_err_ns: f64,
    /// The daemon's threads alone (median).
    pub daemon_cpu_ns: f64,
    /// The zero-time drive's and the shm loop's own median latency
    /// (medians of the repeats).
    pub drive_lat_ns: f64,
    pub loop_lat_ns: f64,
}

/// The calibration of one kernel and boot.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    pub schema: String,
    /// `uname -r`.
    pub kernel: String,
    /// /proc/sys/kernel/random/boot_id.
    pub boot_id: String,
    /// The transport measured (`fuse+loop`).
    pub transport: String,
    pub made_unix_ms: u64,
    pub repeats: usize,
    pub runtime_s: f64,
    pub points: Vec<Point>,
    /// Where it is kept (not stored: set when read or written).
    #[serde(skip)]
    pub path: Option<PathBuf>,
    /// Whether this study measured it (false: read from `path`).
    #[serde(skip)]
    pub fresh: bool,
    /// Why it was not kept for the next studies (not stored).
    #[serde(skip)]
    pub not_kept: Option<String>,
}

/// One pair of runs: the zero-time drive and the shm loop at one depth.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pair {
    pub drive_lat_ns: f64,
    pub loop_lat_ns: f64,
    /// The daemon's threads' CPU per I/O over the drive's run.
    pub daemon_cpu_ns: f64,
    /// The submitting process's CPU per I/O on each.
    pub drive_proc_ns: f64,
    pub loop_proc_ns: f64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn half_spread(v: &[f64]) -> f64 {
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    let min = v.iter().copied().fold(f64::MAX, f64::min);
    if v.is_empty() {
        0.0
    } else {
        (max - min) / 2.0
    }
}

impl Point {
    /// Whether the repeats' spread exceeds the transport itself (1 µs at
    /// least): a loaded machine's noise, not a figure to take out.
    pub fn noise(&self) -> bool {
        self.lat_err_ns > self.lat_ns.abs().max(1_000.0)
    }

    /// The transport at depth `qd` from its repeats.
    pub fn from_pairs(qd: u32, pairs: &[Pair]) -> Point {
        let mut lat: Vec<f64> = pairs
            .iter()
            .map(|p| p.drive_lat_ns - p.loop_lat_ns)
            .collect();
        let mut cpu: Vec<f64> = pairs
            .iter()
            .map(|p| p.daemon_cpu_ns + (p.drive_proc_ns - p.loop_proc_ns).max(0.0))
            .collect();
        let (lat_err_ns, cpu_err_ns) = (half_spread(&lat), half_spread(&cpu));
        let pick = |f: fn(&Pair) -> f64| median(&mut pairs.iter().map(f).collect::<Vec<_>>());
        Point {
            qd,
            lat_ns: median(&mut lat),
            lat_err_ns,
            cpu_ns: median(&mut cpu),
            cpu_err_ns,
            daemon_cpu_ns: pick(|p| p.daemon_cpu_ns),
            drive_lat_ns: pick(|p| p.drive_lat_ns),
            loop_lat_ns: pick(|p| p.loop_lat_ns),
        }
    }
}

impl Calibration {
    /// The transport at depth `qd`.
    pub fn at(&self, qd: u32) -> Option<&Point> {
        self.points.iter().find(|p| p.qd == qd)
    }

    /// Whether it was made on this kernel and boot for `transport`, at
    /// every depth in `qds`.
    pub fn fits(&self, here: &(String, String), transport: &str, qds: &[u32]) -> bool {
        self.schema == SCHEMA
            && self.kernel == here.0
            && self.boot_id == here.1
            && self.transport == transport
            && qds.iter().all(|q| self.at(*q).is_some())
    }

    /// Where the study says it came from, in one line.
    /// Whether the measurement is steady enough to keep for the next
    /// studies on this boot: at every depth the spread of the transport's
    /// latency is within the transport itself (1 µs at least). A wider
    /// spread is a loaded machine's noise; the next study measures again.
    pub fn steady(&self) -> Result<(), Unsteady> {
        match self.points.iter().find(|p| p.noise()) {
            Some(p) => Err(Unsteady {
                qd: p.qd,
                spread_ns: p.lat_err_ns,
                transport_ns: p.lat_ns,
            }),
            None => Ok(()),
        }
    }

    /// One line: how and when the transport was measured, and where it is
    /// kept (or why not).
    pub fn note(&self) -> String {
        let at = match (&self.path, &self.not_kept) {
            (Some(p), _) => format!("kept for this kernel and boot in {}", p.display()),
            (None, Some(why)) => format!("not kept: {why}"),
            (None, None) => "not kept: no cache directory could be written".to_string(),
        };
        format!(
            "the drive's transport ({}) {} with a zero-time drive against a loop device over /dev/shm \
             at QD {} ({} × {:.1} s each; {at})",
            self.transport,
            if self.fresh {
                "was measured now"
            } else {
                "was measured earlier on this boot"
            },
            self.points
                .iter()
                .map(|p| p.qd.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            self.repeats,
            self.runtime_s
        )
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

/// The file for this kernel, boot and transport: under `$XDG_CACHE_HOME`
/// when it is absolute (the XDG rule), else `$HOME/.cache`; None without
/// either.
pub fn path_for(here: &(String, String), transport: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".cache"))
        })?;
    Some(path_in(&base, here, transport))
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

/// The kept calibration at `path`, if it parses.
pub fn load(path: &Path) -> Option<Calibration> {
    let text = std::fs::read_to_string(path).ok()?;
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

/// A calibration too noisy to keep: the depth where the spread of the
/// transport's latency exceeds the transport.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "at QD {qd} its spread (± {:.1} µs) exceeds the transport ({:.1} µs): \
     noise, the next study measures again",
    .spread_ns / 1e3,
    .transport_ns / 1e3
)]
pub struct Unsteady {
    pub qd: u32,
    pub spread_ns: f64,
    pub transport_ns: f64,
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

/// The queue depths of a study's queue-depth sweep.
pub fn depths(runs: &[crate::model::RunRecord]) -> Vec<u32> {
    crate::figures::qd_sweep_depths(runs)
}

/// The calibration for a study's runs over `transport`: the one kept for
/// this kernel and boot when it covers their depths, else measured now
/// and kept (its note says where, or that it could not be kept).
pub fn for_runs(
    runs: &[crate::model::RunRecord],
    transport: &str,
    runtime_s: f64,
    run_fn: &mut RunFn<'_>,
    stop: &AtomicBool,
) -> Result<Calibration, CalibrationError> {
    let qds = depths(runs);
    if qds.is_empty() {
        return Err(CalibrationError::NoDepth);
    }
    let here = here();
    let path = path_for(&here, transport);
    if let Some(c) = path
        .as_deref()
        .and_then(load)
        .filter(|c| c.fits(&here, transport, &qds))
    {
        return Ok(c);
    }
    let mut c = measure(&qds, transport, runtime_s.min(RUNTIME_S), run_fn, stop)?;
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

/// Take the transport out of the figures: each depth's latency less the
/// transport's (with its error), and the QD 1 platform share from that
/// latency less the daemon's lateness behind the model (the emulator's own
/// error, from its stamps over the QD 1 runs), with its error: the
/// calibration's and half the spread of the QD 1 `runs`' means.
pub fn take_out(
    f: &mut crate::figures::Figures,
    cal: &Calibration,
    runs: &[crate::model::RunRecord],
) {
    for c in f.qd_curve.iter_mut() {
        if let Some(p) = cal.at(c.qd) {
            // A transport measured below nothing (the zero-time drive
            // faster than the shm loop: a loaded machine's noise) takes
            // nothing out; its spread still says how far to trust it.
            c.less_transport_lat_ns = Some((c.lat_mean_ns - p.lat_ns.max(0.0)).max(0.0));
            c.less_transport_err_ns = Some(p.lat_err_ns);
        }
    }
    f.calibration = Some(cal.clone());
    let Some(c) = f.qd_curve.iter().find(|c| c.qd == 1) else {
        return;
    };
    let (Some(less), Some(dev), Some(p)) =
        (c.less_transport_lat_ns, c.device_lat_mean_ns, cal.at(1))
    else {
        return;
    };
    // A QD 1 transport lost in its own spread would take an arbitrary
    // part of the platform out: the share keeps the daemon's own stamps
    // (its lateness and reply) and says why.
    if p.noise() {
        if let Some(s) = f.platform_share_qd1.as_mut() {
            s.source.push_str(&format!(
                "; the calibration at QD 1 was noise ({:.1} µs ± {:.1} µs), not taken out",
                p.lat_ns / 1e3,
                p.lat_err_ns / 1e3
            ));
        }
        return;
    }
    let late = f.transport_qd1.as_ref().map_or(0.0, |t| t.late_ns_mean);
    let outside_daemon = outside_daemon(c.lat_mean_ns, f.transport_qd1.as_ref());
    let residual = less - late - dev;
    let platform = residual.max(0.0);
    let means: Vec<f64> = runs
        .iter()
        .filter(|r| c.runs.contains(&r.id) && r.summary.ios > 0)
        .map(|r| r.summary.lat_mean_ns)
        .collect();
    let err_ns = p.lat_err_ns.hypot(half_spread(&means));
    let total = platform + dev;
    if total <= 0.0 {
        return;
    }
    let us = |ns: f64| format!("{:.1} µs", ns / 1e3);
    f.platform_share_qd1 = Some(crate::figures::PlatformShare {
        pct: 100.0 * platform / total,
        total_ns: total,
        platform_ns: platform,
        device_ns: dev,
        parts: vec![
            (
                "the platform: system call, block layer, driver".into(),
                platform,
                0.0,
            ),
            ("device (the model)".into(), dev, 0.0),
        ],
        source: format!(
            "emulator model behind the kernel: the QD 1 mean less the drive's transport ({} ± {}, \
             measured with a zero-time drive) and the daemon's lateness ({}), against the same I/Os \
             on the model alone in virtual time",
            us(p.lat_ns.max(0.0)),
            us(p.lat_err_ns),
            us(late)
        ),
        runs: c.runs.clone(),
        err_ns: Some(err_ns),
        overcount_ns: (-residual > err_ns).then_some(-residual),
        outside_daemon_ns: outside_daemon,
    });
}

/// The QD 1 mean less what the daemon's stamps account for, from receipt
/// to reply (device time, lateness, reply): the kernel's path and the
/// transport's, both ways. None without the daemon's device time.
fn outside_daemon(mean_ns: f64, t: Option<&crate::transport::Transport>) -> Option<f64> {
    let t = t.filter(|t| t.device_ns_mean > 0.0)?;
    Some((mean_ns - t.device_ns_mean - t.late_ns_mean - t.reply_ns_mean).max(0.0))
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
    runtime_s: f64,
    run_fn: &mut RunFn<'_>,
    stop: &AtomicBool,
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
            let before = daemon::stats(&record.name).unwrap_or_default();
            let (drive_lat_ns, drive_proc_ns) = read_at(run_fn, &drive.device, qd, runtime_s)?;
            std::thread::sleep(Duration::from_millis(daemon::STATS_EVERY_MS + 50));
            let after = daemon::stats(&record.name).unwrap_or_default();
            let (loop_lat_ns, loop_proc_ns) = read_at(run_fn, &shm.device, qd, runtime_s)?;
            pairs.push(Pair {
                drive_lat_ns,
                loop_lat_ns,
                daemon_cpu_ns: after.since(&before).daemon_cpu_ns_per_io,
                drive_proc_ns,
                loop_proc_ns,
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
        made_unix_ms: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64),
        repeats: REPEATS,
        runtime_s,
        points,
        path: None,
        fresh: true,
        not_kept: None,
    })
}

/// 4 KiB random reads of `dev` at depth `qd`: median latency and the
/// submitting process's CPU per I/O.
fn read_at(
    run_fn: &mut RunFn<'_>,
    dev: &str,
    qd: u32,
    runtime_s: f64,
) -> Result<(f64, f64), CalibrationError> {
    let mut req = RunRequest {
        quiet: true,
        ..Default::default()
    };
    req.job("transport");
    req.set("filename", dev)
        .set("rw", "randread")
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
    let s = crate::summary::PointSummary::from_result(&r);
    if s.ios == 0 {
        return Err(CalibrationError::NoIo {
            device: dev.into(),
            qd,
        });
    }
    Ok((
        s.lat_p50_ns as f64,
        s.cpu.as_ref().map_or(0.0, |c| c.process_ns_per_io),
    ))
}

#[cfg(test)]
#[path = "calibrate_tests.rs"]
mod tests;
