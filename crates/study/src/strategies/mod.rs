//! Submission and completion strategies (Shin's experiment): the seven
//! strategies × Shin's four Iozone patterns (16 threads, 4 KiB
//! requests, one request per thread at a time), the device's peak each
//! result is set against, each result's trade-off against async+intr, and
//! the study's strategies section.
//!
//! `ssdready strategies` runs the whole matrix ([`matrix`]: the target and
//! each point's options; [`runner`]: the points run through a function
//! the caller gives, and judged; [`doc`]: strategies.json; [`text`]: the
//! tables as printed); `ssdready study` runs a part of it as its
//! `strategies` sweep ([`crate::plan`]) and derives its
//! section ([`section`]) from the same rows, peaks and trade-offs. The
//! strategies are combinations of options that exist on every run (README,
//! "Completion strategies" and "Temporal merge"); `bench/strategies.sh`
//! and `bench/temporal-merge.sh` run the same combinations from the shell.

pub mod doc;
pub mod matrix;
pub mod runner;
pub mod text;

pub use ssdready_diagnosis::strategies::*;

use ssdready_emu::analytic::limit::{self as analytic_limit, Access};
use ssdready_measured::record::RunRecord;

/// The merge layer's default largest command, in extents.
const MERGE_MAX: u64 = 64;

/// Add the strategy's options to the request's last job.
pub fn apply(s: &Strategy, r: &mut ssdready_run::RunRequest) {
    for (k, v) in s.options {
        r.set(k, v);
    }
}

/// The emulated device's peak for a pattern: its analytic limit
/// ([`ssdready_emu::analytic::limit`]) for one-request commands or for the merge layer's
/// largest commands (64 requests), whichever moves more bytes — a device's
/// peak throughput, as Shin uses it.
pub fn model_peak(p: &ssdready_emu::config::Params, pattern: &str, runtime_s: f64) -> Peak {
    let access = if pattern.ends_with("write") {
        Access::Write
    } else {
        Access::Read
    };
    let bw = |bs: u64| match access {
        Access::Read => analytic_limit::model_limit(p, access, bs).bw_bytes_per_s,
        Access::Write => analytic_limit::write_iops_over(p, bs, runtime_s).map(|i| i * bs as f64),
    };
    let single = bw(BS);
    let merged = bw(BS * MERGE_MAX);
    let (best, how) = match (single, merged) {
        (Some(a), Some(b)) if b > a => (b, format!("commands of {MERGE_MAX} × 4 KiB extents")),
        (Some(a), _) => (a, "commands of one 4 KiB request".to_string()),
        (None, Some(b)) => (b, format!("commands of {MERGE_MAX} × 4 KiB extents")),
        (None, None) => (f64::NAN, "nothing in the model bounds it".to_string()),
    };
    let bound = analytic_limit::model_limit(p, access, BS)
        .bound_by
        .unwrap_or_default();
    Peak {
        pattern: pattern.into(),
        bw_bytes_per_s: best,
        iops: best / BS as f64,
        source: "model".into(),
        detail: format!(
            "the emulator's analytic limit with {how}; one request per command is bound by {bound}"
        ),
    }
}

/// The peak of each pattern in `patterns`: the model's on an emulator
/// (`params`), else the best seen among `rows`.
pub fn peaks(
    params: Option<&ssdready_emu::config::Params>,
    patterns: &[&str],
    rows: &[Row],
    runtime_s: f64,
) -> Vec<Peak> {
    match params {
        Some(p) => patterns
            .iter()
            .map(|pat| model_peak(p, pat, runtime_s))
            .collect(),
        None => observed_peaks(patterns, rows),
    }
}

/// The study's strategies section from its `strategies` runs, set against
/// the model's peaks on an emulator; None when the study planned none.
pub fn section_of(
    params: Option<&ssdready_emu::config::Params>,
    runs: &[RunRecord],
    runtime_s: f64,
) -> Option<Section> {
    section(runs, |patterns, rows| {
        peaks(params, patterns, rows, runtime_s)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dram_ssd_peak_is_its_dram_unit_rate() {
        let params = crate::limit::params_of("dram-ssd").unwrap();
        let p = model_peak(&params, "randread", 1.0);
        // 4 KiB per 5.6 µs is 731 MB/s; 64-extent commands pay the 2 µs
        // command time once per 64 requests (Shin's ~700 MB/s device).
        let mbs = p.bw_bytes_per_s / 1e6;
        assert!((715.0..732.0).contains(&mbs), "{mbs} MB/s: {p:?}");
        assert!(p.detail.contains("64 × 4 KiB"), "{p:?}");
    }

    #[test]
    fn an_unbounded_peak_survives_study_json() {
        let params = crate::limit::params_of("null").unwrap();
        let p = model_peak(&params, "randread", 1.0);
        assert!(p.bw_bytes_per_s.is_nan(), "{p:?}");
        let json = serde_json::to_string(&p).unwrap();
        let back: Peak = serde_json::from_str(&json).unwrap();
        assert!(back.iops.is_nan() && back.detail == p.detail, "{json}");
    }
}
