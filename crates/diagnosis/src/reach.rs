//! Whether the device served the study's I/Os at all: what the study
//! completed on each run against what the device's own counters
//! (`/sys/block/X/stat`) saw over the same window, in requests and in
//! bytes. Reads of holes (a sparse or never-written file), of the page
//! cache or of data a file system keeps inline are answered above the
//! device; then every figure is the file system's or the cache's, and the
//! study says so before any device figure.
//!
//! The device's counters count every process's I/O, so what they saw is
//! an upper bound of the study's share; bytes are used where both sides
//! have them, since a split or merged request changes the count of
//! requests and not their bytes.

use serde::{Deserialize, Serialize};
use ssdready_core::units::{fmt_bytes, fmt_count};
use ssdready_measured::record::{Evidence, RunRecord, TargetProfile, Verdict};

/// Below this share of the study's bytes at the device, the device was
/// almost never asked.
pub const ALMOST_NONE_PCT: f64 = 10.0;
/// Below this share, the device served only part of the study's I/O.
pub const PART_PCT: f64 = 50.0;

/// The study's I/O against the device's over the runs that count.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceReach {
    /// The device whose counters were read.
    pub device: String,
    /// I/Os and bytes the study completed on it, over `runs`.
    pub study_ios: u64,
    pub study_bytes: u64,
    /// Requests and bytes the device's counters saw over the same windows,
    /// anyone's.
    pub device_ios: u64,
    pub device_bytes: u64,
    /// The most of the study's I/O that can have reached the device,
    /// percent (bytes where both sides have them, else requests).
    pub reached_pct: f64,
    /// The runs it covers.
    pub runs: Vec<String>,
}

impl DeviceReach {
    /// Whether the device saw almost none of the study's I/O.
    pub fn almost_none(&self) -> bool {
        self.reached_pct < ALMOST_NONE_PCT
    }

    /// Whether the device saw too little of it for a figure to be its own.
    pub fn short(&self) -> bool {
        self.reached_pct < PART_PCT
    }

    /// The one line said before any device figure, when `short`.
    pub fn line(&self) -> Option<String> {
        let head = match (self.almost_none(), self.short()) {
            (true, _) => "THE DEVICE WAS ALMOST NEVER ASKED",
            (false, true) => "THE DEVICE SERVED ONLY PART OF THE STUDY'S I/O",
            _ => return None,
        };
        Some(format!(
            "{head}: {}; the figures below are the file system's or the page cache's, not {}'s",
            self.counts(),
            self.device
        ))
    }

    /// `the study completed 3.21M I/Os (12.2 GiB) over 9 runs; vda's own
    /// counters saw 434 requests (1.70 MiB): at most 0.01 % of it`.
    fn counts(&self) -> String {
        format!(
            "the study completed {} I/Os ({}) over {} run(s); {}'s own counters saw {} requests ({}) in the same windows: at most {} of the study's I/O reached it",
            fmt_count(self.study_ios as f64),
            fmt_bytes(self.study_bytes as f64),
            self.runs.len(),
            self.device,
            fmt_count(self.device_ios as f64),
            fmt_bytes(self.device_bytes as f64),
            fmt_pct(self.reached_pct)
        )
    }
}

fn fmt_pct(p: f64) -> String {
    match p {
        p if p < 0.1 => format!("{p:.2} %"),
        p if p < 10.0 => format!("{p:.1} %"),
        p => format!("{p:.0} %"),
    }
}

/// The study's I/O against the device's, over the runs with direct I/O
/// whose device counters were read (all such runs where none was direct),
/// on `device` (the target's) where runs counted it, else on the first
/// run's. None without a device, or without a run that moved I/O.
pub fn of(runs: &[RunRecord], device: Option<&str>) -> Option<DeviceReach> {
    let counted = |r: &&RunRecord| {
        r.error.is_none()
            && r.summary
                .disk
                .as_ref()
                .is_some_and(|d| d.app_ios > 0 && !d.name.is_empty())
    };
    let direct: Vec<&RunRecord> = runs
        .iter()
        .filter(counted)
        .filter(|r| r.workload.direct)
        .collect();
    let rs = match direct.is_empty() {
        true => runs.iter().filter(counted).collect(),
        false => direct,
    };
    fn name<'r>(r: &&'r RunRecord) -> &'r str {
        r.summary.disk.as_ref().map_or("", |d| d.name.as_str())
    }
    let on = device
        .filter(|dev| rs.iter().any(|r| name(r) == *dev))
        .or_else(|| rs.first().map(name))?;
    let mut d = DeviceReach {
        device: on.to_string(),
        ..Default::default()
    };
    for r in rs.iter().filter(|r| name(r) == on) {
        let k = r.summary.disk.as_ref().unwrap();
        d.study_ios += k.app_ios;
        d.study_bytes += k.app_bytes;
        d.device_ios += k.ios;
        d.device_bytes += k.bytes;
        d.runs.push(r.id.clone());
    }
    let ratio = |dev: u64, app: u64| (100.0 * dev as f64 / app as f64).min(100.0);
    d.reached_pct = match d.study_bytes > 0 {
        true => ratio(d.device_bytes, d.study_bytes),
        false => ratio(d.device_ios, d.study_ios),
    };
    Some(d)
}

/// The finding said first when the device served too little of the
/// study's I/O for a device figure to be its own; None otherwise.
pub fn verdict(d: &DeviceReach, t: &TargetProfile) -> Option<Verdict> {
    if !d.short() {
        return None;
    }
    let what = match d.almost_none() {
        true => "The device was almost never asked",
        false => "The device served only part of the study's I/O",
    };
    let others = (d.device_ios > 0 && d.almost_none()).then(|| {
        format!(
            "; {} served {} requests during the runs, too few to be the study's: other processes' I/O or the file system's own, and no device time is taken from them",
            d.device,
            fmt_count(d.device_ios as f64)
        )
    });
    let finding = format!(
        "{what}: {}; every rate and latency of this study is the file system's or the page cache's (reads of holes in a sparse or never-written file, of pages already cached, or of data kept inline), not {}'s{}",
        d.counts(),
        d.device,
        others.unwrap_or_default()
    );
    let recommendation = match t.created_by_study {
        true => "Study a file that holds data: the study lays out the files it creates; name a new file, or a device".to_string(),
        false => format!(
            "Lay out {} with data before studying it (e.g. `dd if=/dev/urandom of={} bs=1M count=N conv=notrunc`), or name a new file for the study to create and lay out; keep direct I/O so the page cache does not answer",
            t.spec, t.spec
        ),
    };
    Some(Verdict {
        rule: "device-not-reached".into(),
        finding,
        evidence: Evidence {
            figures: vec![
                ("study_ios".into(), fmt_count(d.study_ios as f64)),
                ("study_bytes".into(), fmt_bytes(d.study_bytes as f64)),
                ("device_ios".into(), fmt_count(d.device_ios as f64)),
                ("device_bytes".into(), fmt_bytes(d.device_bytes as f64)),
                ("reached_pct".into(), fmt_pct(d.reached_pct)),
            ],
            runs: d.runs.clone(),
        },
        recommendation,
        confidence: match d.reached_pct < 1.0 {
            true => "high",
            false => "medium",
        }
        .into(),
        confidence_why: "the device's own counters against the study's completions over the same windows; other I/O on the device only raises the device's count".into(),
        noise_pct: None,
    })
}

#[cfg(test)]
#[path = "reach_tests.rs"]
mod tests;
