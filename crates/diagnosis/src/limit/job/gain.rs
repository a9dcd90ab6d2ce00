//! A variant of the job judged on the job's own metric, and which changes
//! leave the application's workload as it is.
//!
//! The workload is the user's. A change of what the application reads
//! and writes — its block size, read/write mix, sizes, pattern, sync and
//! fsync, direct or buffered I/O — is no configuration of it: such a
//! variant is "what a different workload would get", shown apart, never
//! in the best configuration, its job file or what holds the job. What may
//! configure the job are the host's changes and the application's I/O
//! mechanics that leave its reads and writes as they are ([`MECHANICS`]:
//! the engine, the depth, the threads, batching, registered buffers and
//! files, polling), each saying what it asks of the application.
//!
//! Gains are on the job's own metric, direction by direction: IOPS where
//! a direction's I/Os average under [`STREAMING_BYTES`] (64 KiB: a
//! database's pages, 4 to 16 KiB, are counted in I/Os), bandwidth from
//! there up (streaming). A mix gains where every direction gains beyond
//! its own noise (by the least of them), and loses where one loses beyond
//! it; where one gains beyond its noise and the others hold within theirs
//! (a throttle of the writes holds them), it gains what its directions
//! together gained.

use super::{self as job, RunFigures, GAIN_PCT};
use serde::{Deserialize, Serialize};
use ssdready_core::options::Section;
use ssdready_core::spec::JobSpec;

/// From this mean size of a direction's I/Os up, the direction streams:
/// it is judged on bandwidth, below it on IOPS.
pub const STREAMING_BYTES: f64 = 65536.0;

/// The options of the application's I/O mechanics, by fio's own names:
/// how it issues its reads and writes, not which. Any other option
/// changes the workload.
pub const MECHANICS: &[&str] = &[
    "ioengine",
    "iodepth",
    "iodepth_low",
    "iodepth_batch_submit",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
    "numjobs",
    "fixedbufs",
    "registerfiles",
    "hipri",
    "sqthread_poll",
    "sqthread_poll_cpu",
];

/// Whether an option (`iodepth=32`, or its name, under any of fio's
/// names for it) is one of the application's I/O mechanics.
pub fn mechanic(option: &str) -> bool {
    let key = option.split('=').next().unwrap_or_default();
    MECHANICS.contains(&job::canonical(key))
}

/// The directions a job does, as its `rw` resolves (0 reads, 1 writes,
/// 2 trims).
pub fn directions(s: &JobSpec) -> Vec<usize> {
    use ssdready_core::spec::RwMode::*;
    match s.rw {
        Read | RandRead => vec![0],
        Write | RandWrite => vec![1],
        ReadWrite | RandRw => vec![0, 1],
        Trim | RandTrim => vec![2],
    }
}

/// The largest block of the directions the job does (`bs=4k,64k` on a
/// read job: 4 KiB).
pub fn largest_block(s: &JobSpec) -> u32 {
    directions(s)
        .into_iter()
        .map(|d| s.bs.for_dir(d).max())
        .max()
        .unwrap_or(4096)
}

/// The mean size of a direction's I/Os (0 reads, 1 writes, 2 trims), as
/// its block sizes resolve: one size, a range's middle, a split's sizes
/// by their weights.
pub fn mean_block(s: &JobSpec, d: usize) -> f64 {
    use ssdready_core::spec::BlockSizes::*;
    match s.bs.for_dir(d) {
        Fixed(b) => f64::from(*b),
        Range { min, max } => (f64::from(*min) + f64::from(*max)) / 2.0,
        Split(v) => {
            let w: u32 = v.iter().map(|p| p.1).sum();
            v.iter()
                .map(|p| f64::from(p.0) * f64::from(p.1))
                .sum::<f64>()
                / f64::from(w.max(1))
        }
        PerDir(_) => f64::from(s.bs.for_dir(d).max()),
    }
}

/// What the job as written did in one direction, its median over the
/// repeats on the job's metric for it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirBase {
    /// 0 reads, 1 writes.
    pub dir: usize,
    /// A streaming direction: judged on bandwidth.
    pub by_bandwidth: bool,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    /// The repeats' spread on the direction's metric, percent.
    pub spread_pct: f64,
}

/// One direction's change under a variant.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DirGain {
    /// `reads` or `writes`.
    pub dir: String,
    /// Judged on bandwidth (a streaming direction), not IOPS.
    pub by_bandwidth: bool,
    /// On the direction's metric, percent.
    pub gain_pct: f64,
    pub iops_pct: f64,
    pub bandwidth_pct: f64,
    /// Beyond the direction's spread and [`GAIN_PCT`].
    pub beyond_noise: bool,
}

const DIRS: [&str; 2] = ["reads", "writes"];

fn dir_of(f: &RunFigures, d: usize) -> Option<&job::Dir> {
    match d {
        0 => f.together.read.as_ref(),
        _ => f.together.write.as_ref(),
    }
}

/// The mean block of direction `d` in the first job of `sections` that
/// does it, as fio resolves the job.
fn block_of(sections: &[Section], d: usize) -> Option<f64> {
    (0..sections.len())
        .filter(|&i| !sections[i].global)
        .map(|i| job::spec(sections, i))
        .find(|s| job::directions(s).contains(&d))
        .map(|s| job::mean_block(&s, d))
}

/// The job's own metric per direction, from its repeats: each direction
/// they moved, on IOPS or bandwidth by its mean block ([`STREAMING_BYTES`]).
pub fn baseline(repeats: &[RunFigures], sections: &[Section]) -> Vec<DirBase> {
    let mut out = Vec::new();
    for d in 0..2 {
        let got: Vec<&job::Dir> = repeats.iter().filter_map(|r| dir_of(r, d)).collect();
        if got.is_empty() {
            continue;
        }
        let by_bandwidth = block_of(sections, d).is_some_and(|b| b >= STREAMING_BYTES);
        let iops: Vec<f64> = got.iter().map(|x| x.iops).collect();
        let bw: Vec<f64> = got.iter().map(|x| x.bw_bytes_per_s).collect();
        let ((iops, si), (bw, sb)) = (
            job::median_spread(&iops).unwrap_or_default(),
            job::median_spread(&bw).unwrap_or_default(),
        );
        // A direction the repeats did not move is none of the job's.
        if iops <= 0.0 {
            continue;
        }
        out.push(DirBase {
            dir: d,
            by_bandwidth,
            iops,
            bw_bytes_per_s: bw,
            spread_pct: if by_bandwidth { sb } else { si },
        });
    }
    out
}

/// Whether the job is judged on bandwidth: every direction it does
/// streams.
pub fn by_bandwidth(base: &[DirBase]) -> bool {
    !base.is_empty() && base.iter().all(|b| b.by_bandwidth)
}

fn pct(now: f64, was: f64) -> f64 {
    100.0 * (now / was.max(1e-9) - 1.0)
}

/// A variant's gain against the job's repeats, direction by direction on
/// each one's metric: it gains where every direction gains beyond its
/// noise, loses where one loses beyond it; its gain is the least of the
/// directions', or, where one gained and the others held, the
/// directions' together on the job's metric.
pub fn judge_variant(v: &mut job::VariantResult, base: &[DirBase]) {
    let Some(f) = &v.figures else {
        return;
    };
    v.per_direction = base
        .iter()
        .map(|b| {
            let (iops, bw) = dir_of(f, b.dir).map_or((0.0, 0.0), |x| (x.iops, x.bw_bytes_per_s));
            let (iops_pct, bandwidth_pct) = (pct(iops, b.iops), pct(bw, b.bw_bytes_per_s));
            let gain_pct = if b.by_bandwidth {
                bandwidth_pct
            } else {
                iops_pct
            };
            DirGain {
                dir: DIRS[b.dir].into(),
                by_bandwidth: b.by_bandwidth,
                gain_pct,
                iops_pct,
                bandwidth_pct,
                beyond_noise: gain_pct.abs() >= GAIN_PCT.max(b.spread_pct),
            }
        })
        .collect();
    let Some(least) = v
        .per_direction
        .iter()
        .min_by(|a, b| a.gain_pct.total_cmp(&b.gain_pct))
    else {
        return;
    };
    v.gain_pct = Some(least.gain_pct);
    v.by_bandwidth = by_bandwidth(base);
    v.beyond_noise = match least.gain_pct > 0.0 {
        true => v.per_direction.iter().all(|g| g.beyond_noise),
        false => least.beyond_noise,
    };
    // One direction gained beyond its noise, the others held within
    // theirs (a throttle of the writes held them): the job gained what
    // its directions together did, on its metric.
    let d = &v.per_direction;
    let gained = d.iter().any(|g| g.beyond_noise && g.gain_pct > 0.0);
    let lost = d.iter().any(|g| g.beyond_noise && g.gain_pct < 0.0);
    if gained && !lost && !v.beyond_noise {
        let pick = |iops: f64, bw: f64| if v.by_bandwidth { bw } else { iops };
        let was: f64 = base.iter().map(|b| pick(b.iops, b.bw_bytes_per_s)).sum();
        let now: f64 = (base.iter().filter_map(|b| dir_of(f, b.dir)))
            .map(|x| pick(x.iops, x.bw_bytes_per_s))
            .sum();
        (v.gain_pct, v.beyond_noise) = (Some(pct(now, was)), true);
    }
}

/// The metric's name.
fn metric(by_bandwidth: bool) -> &'static str {
    match by_bandwidth {
        true => "bandwidth",
        false => "IOPS",
    }
}

/// A variant's change on the job's own metric: `+12.0 % IOPS`, or per
/// direction for a mix (`reads +12.0 % IOPS, writes +3.0 % bandwidth`).
pub fn gain_words(v: &job::VariantResult) -> String {
    match v.per_direction.as_slice() {
        [] => v.gain_pct.map_or("not measured".into(), |g| {
            format!("{g:+.1} % {}", metric(v.by_bandwidth))
        }),
        [one] => format!("{:+.1} % {}", one.gain_pct, metric(one.by_bandwidth)),
        all => all
            .iter()
            .map(|g| format!("{} {:+.1} % {}", g.dir, g.gain_pct, metric(g.by_bandwidth)))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A variant of the application's mechanics in words: its change on the
/// job's metric, whether beyond the noise (each direction's where they
/// part: a throttle of the writes holds them while more depth buys the
/// reads), and what it asks.
pub fn variant_line(v: &job::VariantResult) -> String {
    let noise = |beyond: bool| match beyond {
        true => "beyond the noise",
        false => "within the noise",
    };
    let d = &v.per_direction;
    let parted = d.iter().any(|g| g.beyond_noise) && d.iter().any(|g| !g.beyond_noise);
    let what = match (&v.gain_pct, &v.error) {
        (_, Some(e)) => format!("not measured: {e}"),
        (Some(_), _) if parted => {
            let each = d.iter().map(|g| {
                let m = metric(g.by_bandwidth);
                format!(
                    "{} {:+.1} % {m} ({})",
                    g.dir,
                    g.gain_pct,
                    noise(g.beyond_noise)
                )
            });
            each.collect::<Vec<_>>().join(", ")
        }
        (Some(_), _) => format!("{} ({})", gain_words(v), noise(v.beyond_noise)),
        _ => "not measured".into(),
    };
    match v.asks.is_empty() {
        true => format!("{}: {what}", v.what),
        false => format!("{}: {what}; asks: {}", v.what, v.asks),
    }
}

/// What a different workload got, in words: both metrics of each
/// direction, for it is not the job's workload.
pub fn workload_line(v: &job::VariantResult) -> String {
    if let Some(e) = &v.error {
        return format!("{}: not measured: {e}", v.what);
    }
    let each: Vec<String> = v
        .per_direction
        .iter()
        .map(|g| {
            let label = match v.per_direction.len() {
                1 => String::new(),
                _ => format!("{} ", g.dir),
            };
            format!(
                "{label}IOPS {:+.1} %, bandwidth {:+.1} %",
                g.iops_pct, g.bandwidth_pct
            )
        })
        .collect();
    match each.is_empty() {
        true => format!("{}: not measured", v.what),
        false => format!("{}: {}", v.what, each.join("; ")),
    }
}
