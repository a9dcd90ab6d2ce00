//! The drive's transport measured with a zero-time drive behind it: its
//! cost above a loop device over `/dev/shm` at each queue depth, as data
//! ([`Calibration`], kept in its own file by the study), and its ceiling
//! at the peak's depth ([`TransportCeiling`]). Taking it out of the
//! figures is [`crate::transport::calibration`]'s; weighing it as a cause,
//! [`crate::apparatus`]'s.

use serde::{Deserialize, Serialize};
use ssdready_core::units::fmt_count;
use std::path::PathBuf;
/// The calibration file's schema.
pub const SCHEMA: &str = "ssdready.transport-calibration";

/// The zero-time drive's size (its reads are not filled: a zero-time
/// drive's unwritten page costs what a written one does).
pub const SIZE: &str = "64m";

/// [`SIZE`] in bytes.
pub const SIZE_BYTES: u64 = 64 << 20;

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
    /// The zero-time drive's IOPS at this depth (median of the repeats):
    /// the transport's own ceiling there. 0 in a calibration kept before
    /// it was measured.
    #[serde(default)]
    pub drive_iops: f64,
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
    /// The engine it was read with: the queue-depth sweep's own (a
    /// synchronous engine would read every depth at QD 1). Empty in a
    /// calibration kept before it was recorded, which fits no study.
    #[serde(default)]
    pub engine: String,
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
    /// The zero-time drive's IOPS over its run.
    pub drive_iops: f64,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

pub(crate) fn half_spread(v: &[f64]) -> f64 {
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
            drive_iops: pick(|p| p.drive_iops),
        }
    }
}

impl Calibration {
    /// The transport at depth `qd`.
    pub fn at(&self, qd: u32) -> Option<&Point> {
        self.points.iter().find(|p| p.qd == qd)
    }

    /// Whether it was made on this kernel and boot for `transport`, read
    /// with `engine`, at every depth in `qds`.
    pub fn fits(
        &self,
        here: &(String, String),
        transport: &str,
        engine: &str,
        qds: &[u32],
    ) -> bool {
        self.schema == SCHEMA
            && self.kernel == here.0
            && self.boot_id == here.1
            && self.transport == transport
            && self.engine == engine
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
            "the drive's transport ({}) {} with a zero-time drive against a loop device over /dev/shm, \
             read with {} at QD {} ({} × {:.1} s each; {at})",
            self.transport,
            if self.fresh {
                "was measured now"
            } else {
                "was measured earlier on this boot"
            },
            self.engine,
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

/// The drive's transport's own ceiling at the peak's depth, against the
/// peak and the platform's own peak on RAM.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TransportCeiling {
    /// `fuse+loop` or `ublk`.
    pub transport: String,
    pub qd: u32,
    /// The zero-time drive's IOPS at `qd`.
    pub iops: f64,
    /// The drive's peak (IOPS at `qd`).
    pub peak_iops: f64,
    /// The drive alone (its model in virtual time) at `qd`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_iops: Option<f64>,
    /// The platform's own peak on RAM (the reference loop device over
    /// /dev/shm), and its depth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform_iops: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform_qd: Option<u32>,
    /// Whether it explains the peak (the peak at `apparatus::EXPLAINS` of it
    /// or more, and not `beaten`).
    pub explains: bool,
    /// Whether the drive beat it by more than `apparatus::BEATEN`: a
    /// zero-time drive behind the same transport cannot be slower than a
    /// real one, so that measurement of the transport was disturbed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub beaten: bool,
}

impl TransportCeiling {
    /// `the drive's transport (fuse+loop) gives at most 73.1K IOPS at QD
    /// 32 with a zero-time drive behind it; the drive reached 72.5K (99 %)`.
    pub fn part(&self) -> String {
        format!(
            "the drive's transport ({}) gives at most {} IOPS at QD {} with a zero-time drive behind it; the drive reached {} ({:.0} %)",
            self.transport,
            fmt_count(self.iops),
            self.qd,
            fmt_count(self.peak_iops),
            100.0 * self.peak_iops / self.iops.max(1.0)
        )
    }

    pub(crate) fn platform(&self) -> Option<String> {
        Some(format!(
            "this platform alone on RAM gives {} IOPS (QD {})",
            fmt_count(self.platform_iops?),
            self.platform_qd?
        ))
    }
}
