//! What `ssdready strategies` runs: the seven submission/completion
//! strategies × seed 004's four Iozone patterns (16 threads, 4 KiB
//! requests, one request per thread at a time), each as the options of an
//! ordinary `ssdready run`, and the device's peak each result is set
//! against.
//!
//! The strategies are combinations of options that exist on every run
//! (README, "Completion strategies" and "Temporal merge"); `bench/strategies.sh`
//! and `bench/temporal-merge.sh` run the same combinations from the shell.

use ssdready_study::limit::{self, Access};

/// Threads of 004's Iozone runs (one request each at a time).
pub const THREADS: u32 = 16;
/// Request size of 004's runs.
pub const BS: u64 = 4096;
/// The merge layer's default largest command, in extents.
const MERGE_MAX: u64 = 64;

/// The patterns, as named in strategies.json, with their `rw`.
pub const PATTERNS: [(&str, &str); 4] = [
    ("seqread", "read"),
    ("seqwrite", "write"),
    ("randread", "randread"),
    ("randwrite", "randwrite"),
];

/// A strategy: its name and the run options that make it.
pub struct Strategy {
    pub name: &'static str,
    pub options: &'static [&'static str],
    /// In words, for the JSON.
    pub how: &'static str,
}

/// The strategies, in the order of 004's table, then the others.
pub const STRATEGIES: [Strategy; 7] = [
    Strategy {
        name: "async+intr",
        options: &["--completion=interrupt"],
        how: "completion=interrupt: each thread sleeps until its completion wakes it",
    },
    Strategy {
        name: "sync+poll",
        options: &["--completion=poll"],
        how: "completion=poll: each thread polls for its own completion (IOPOLL where the device has poll queues, else user-space spinning, stated in `ran`)",
    },
    Strategy {
        name: "stm+poll",
        options: &["--completion=poll", "--temporal_merge=stm"],
        how: "temporal_merge=stm: the first thread in gathers the others' requests for merge_window_us (20) into one vectored command and polls; the others sleep",
    },
    Strategy {
        name: "atm+poll",
        options: &[
            "--completion=poll",
            "--temporal_merge=atm",
            "--merge_max=16",
        ],
        how: "temporal_merge=atm, merge_max=16 (the thread count): a dispatcher thread drains the queued requests into vectored commands and polls",
    },
    Strategy {
        name: "coalesced",
        options: &[
            "--completion=interrupt",
            "--coalesce_n=8",
            "--coalesce_us=100",
        ],
        how: "completion=interrupt with interrupt coalescing: one completion event per 8 completions or 100 µs",
    },
    Strategy {
        name: "sqpoll",
        options: &["--completion=interrupt", "--sqthread_poll=1"],
        how: "io_uring SQPOLL: a kernel thread polls the submission queue (its CPU is counted)",
    },
    Strategy {
        name: "hybrid",
        options: &["--completion=hybrid"],
        how: "completion=hybrid: sleep half the mean completion latency, then spin",
    },
];

/// Seed 004's published table, % of peak: seq-read, seq-write, rand-read,
/// rand-write.
pub const PUBLISHED_004: [(&str, [f64; 4]); 4] = [
    ("async+intr", [82.0, 68.0, 22.0, 28.0]),
    ("sync+poll", [93.0, 44.0, 46.0, 45.0]),
    ("stm+poll", [100.0, 85.0, 88.0, 92.0]),
    ("atm+poll", [95.0, 100.0, 43.0, 96.0]),
];

/// 004's figure for a strategy and pattern, when it published one.
pub fn published(strategy: &str, pattern: &str) -> Option<f64> {
    let col = PATTERNS.iter().position(|(p, _)| *p == pattern)?;
    PUBLISHED_004
        .iter()
        .find(|(s, _)| *s == strategy)
        .map(|(_, v)| v[col])
}

/// The target as the runs name it.
#[derive(Clone, Debug)]
pub enum Target {
    /// `emu:PRESET[,k=v…]` with its parameters.
    Emulator {
        spec: String,
        params: Box<ssdready_emu::config::Params>,
    },
    /// A regular file (`size` bytes) or a block device (size None).
    Real { path: String, size: Option<u64> },
}

impl Target {
    pub fn spec(&self) -> &str {
        match self {
            Target::Emulator { spec, .. } => spec,
            Target::Real { path, .. } => path,
        }
    }

    /// The options every run on this target gets. The emulator skips data
    /// copies (`nocopy=1`): what is measured is the host's path, not memcpy.
    pub fn options(&self) -> Vec<String> {
        match self {
            Target::Emulator { spec, .. } if spec.contains("nocopy") => {
                vec![format!("--filename={spec}")]
            }
            Target::Emulator { spec, .. } => vec![format!("--filename={spec},nocopy=1")],
            Target::Real { path, size } => {
                let mut o = vec![
                    format!("--filename={path}"),
                    "--ioengine=io_uring".into(),
                    "--direct=1".into(),
                ];
                o.extend(size.map(|s| format!("--size={s}")));
                o
            }
        }
    }
}

/// Check TARGET: one line for the user when it is not usable.
pub fn target(spec: &str) -> Result<Target, String> {
    if let Some(body) = spec.strip_prefix("emu:") {
        let body = if body.trim().is_empty() {
            "nvme-tlc"
        } else {
            body
        };
        let params = limit::params_of(body).map_err(|e| format!("target '{spec}': {e}"))?;
        return Ok(Target::Emulator {
            spec: format!("emu:{body}"),
            params: Box::new(params),
        });
    }
    use std::os::unix::fs::FileTypeExt;
    let m = std::fs::metadata(spec).map_err(|e| {
        format!("target '{spec}': {e} (allowed: an existing file, a block device, or emu:PRESET[,key=value…])")
    })?;
    if m.file_type().is_block_device() {
        return Ok(Target::Real {
            path: spec.into(),
            size: None,
        });
    }
    if !m.is_file() {
        return Err(format!(
            "target '{spec}': not a regular file or block device (allowed: an existing file, a block device, or emu:PRESET[,key=value…])"
        ));
    }
    if m.len() < 16 << 20 {
        return Err(format!(
            "target '{spec}': {} bytes is too small (allowed: a file of 16 MiB or more)",
            m.len()
        ));
    }
    Ok(Target::Real {
        path: spec.into(),
        size: Some(m.len().min(1 << 30)),
    })
}

/// The run options of one point.
pub fn run_options(t: &Target, s: &Strategy, rw: &str, runtime_s: f64) -> Vec<String> {
    let mut o = vec!["--quiet".to_string(), "--name=strategies".into()];
    o.extend(t.options());
    o.extend([
        format!("--rw={rw}"),
        format!("--bs={BS}"),
        format!("--numjobs={THREADS}"),
        format!("--runtime={runtime_s}s"),
        "--time_based".into(),
    ]);
    o.extend(s.options.iter().map(|x| x.to_string()));
    o
}

/// The peak one pattern's results are set against.
#[derive(Clone, Debug, PartialEq)]
pub struct Peak {
    pub pattern: String,
    pub bw_bytes_per_s: f64,
    pub iops: f64,
    /// `model` (the emulator's analytic limit) or `best observed`.
    pub source: String,
    /// How the figure was found, in words.
    pub detail: String,
}

/// The emulated device's peak for a pattern: its analytic limit
/// (`ssdready_study::limit`) for one-request commands or for the merge
/// layer's largest commands (64 requests), whichever moves more bytes — a
/// device's peak throughput, as 004 uses it.
pub fn model_peak(p: &ssdready_emu::config::Params, pattern: &str, runtime_s: f64) -> Peak {
    let access = if pattern.ends_with("write") {
        Access::Write
    } else {
        Access::Read
    };
    let bw = |bs: u64| match access {
        Access::Read => limit::model_limit(p, access, bs).bw_bytes_per_s,
        Access::Write => limit::write_iops_over(p, bs, runtime_s).map(|i| i * bs as f64),
    };
    let single = bw(BS);
    let merged = bw(BS * MERGE_MAX);
    let (best, how) = match (single, merged) {
        (Some(a), Some(b)) if b > a => (b, format!("commands of {MERGE_MAX} × 4 KiB extents")),
        (Some(a), _) => (a, "commands of one 4 KiB request".to_string()),
        (None, Some(b)) => (b, format!("commands of {MERGE_MAX} × 4 KiB extents")),
        (None, None) => (f64::NAN, "nothing in the model bounds it".to_string()),
    };
    let bound = limit::model_limit(p, access, BS)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dram_ssd_peak_is_its_dram_unit_rate() {
        let Target::Emulator { params, .. } = target("emu:dram-ssd").unwrap() else {
            panic!("an emulator")
        };
        let p = model_peak(&params, "randread", 1.0);
        // 4 KiB per 5.6 µs is 731 MB/s; 64-extent commands pay the 2 µs
        // command time once per 64 requests (004's ~700 MB/s device).
        let mbs = p.bw_bytes_per_s / 1e6;
        assert!((715.0..732.0).contains(&mbs), "{mbs} MB/s: {p:?}");
        assert!(p.detail.contains("64 × 4 KiB"), "{p:?}");
    }

    #[test]
    fn unknown_targets_are_refused_with_what_is_allowed() {
        let e = target("emu:nonesuch").unwrap_err();
        assert!(e.contains("allowed"), "{e}");
        let e = target("/nonexistent/x").unwrap_err();
        assert!(e.contains("allowed"), "{e}");
        assert!(target("emu:").unwrap().spec() == "emu:nvme-tlc");
    }

    #[test]
    fn every_published_figure_has_its_strategy() {
        for (s, _) in PUBLISHED_004 {
            assert!(STRATEGIES.iter().any(|x| x.name == s), "{s}");
        }
        assert_eq!(published("stm+poll", "randread"), Some(88.0));
        assert_eq!(published("hybrid", "randread"), None);
    }
}
