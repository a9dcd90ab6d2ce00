//! The study of the user's own workload (`ssdready study --job FILE`): the
//! job as written is the study's point. It runs in repeats, its own
//! figures are reported per job and together (IOPS and bandwidth per
//! direction; mean, p99 and p99.9 completion latency, fio's `clat`), and
//! around it the study varies one thing at a time, keeping everything else
//! as written: the depth ×½, ×2 and ×4, the jobs ×2, each other engine,
//! the block ×2 where the job has one fixed block size. Each variant is
//! set against the job's repeats, and a gain counts only beyond the
//! repeats' spread and 10 %.
//!
//! What holds the job is named only with positive evidence: a throttle of
//! the study's control groups that the job's rate reaches (90 % of it or
//! more), or a variant of the job's own choices that gains beyond the
//! noise (the job's depth, its parallelism, its engine, its block size);
//! otherwise "not identified", with what was ruled out.
//!
//! A job the study cannot repeat (`exec_prerun`, `exec_postrun`) is refused
//! before anything runs. A job longer than its share of the budget runs
//! shorter (`runtime`, `time_based` kept as written), and the study says
//! the length it used.

use serde::{Deserialize, Serialize};
use ssdready_core::options::{RawOption, Section};
use ssdready_core::result::{DirResult, RunResult};
use ssdready_diagnosis::limit::caps::Caps;

/// Options whose effect the study cannot repeat run after run.
const UNREPEATABLE: &[&str] = &["exec_prerun", "exec_postrun"];

/// A gain of a variant counts from this share up (and beyond the spread).
pub const GAIN_PCT: f64 = 10.0;

/// A throttle holds the job when the job's rate is this share of it.
pub const AT_THROTTLE: f64 = 0.9;

/// Why a job file cannot be studied.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(
        "option '{key}' ({at}): the study runs the job again and again and cannot repeat what \
         a command does around it (allowed: a job without exec_prerun and exec_postrun; run it \
         once with `ssdready run` instead)"
    )]
    Unrepeatable { key: String, at: String },
    #[error("job file {0}: it defines no job (allowed: a file with at least one [job] section)")]
    NoJob(String),
}

/// Refuse what the study cannot repeat.
pub fn check(sections: &[Section], file: &str) -> Result<(), JobError> {
    if !sections.iter().any(|s| !s.global) {
        return Err(JobError::NoJob(file.into()));
    }
    for s in sections {
        if let Some(o) = s
            .options
            .iter()
            .find(|o| UNREPEATABLE.contains(&o.key.as_str()))
        {
            return Err(JobError::Unrepeatable {
                key: o.key.clone(),
                at: o
                    .at
                    .clone()
                    .unwrap_or_else(|| format!("section [{}]", s.name)),
            });
        }
    }
    Ok(())
}

/// The value of `key` in effect for the job at `job` (the last one
/// written in the globals before it or in its own section).
pub fn effective(sections: &[Section], job: usize, key: &str) -> Option<String> {
    let own = std::iter::once(&sections[job]);
    let globals = sections[..job].iter().filter(|s| s.global);
    let mut found = None;
    for o in globals.chain(own).flat_map(|s| s.options.iter()) {
        if o.key == key {
            found = Some(o.value.clone().unwrap_or_default());
        }
    }
    found
}

/// Set `key` on every job (after what it wrote, so it wins).
fn set_all(sections: &mut [Section], key: &str, value: impl Fn(usize, &[Section]) -> String) {
    let snapshot = sections.to_vec();
    for (i, s) in sections.iter_mut().enumerate().filter(|(_, s)| !s.global) {
        let v = value(i, &snapshot);
        s.options.push(RawOption::cli(key, Some(&v)));
    }
}

/// The job's sections with `target` as every job's `filename`, when given.
pub fn with_target(sections: &[Section], target: Option<&str>) -> Vec<Section> {
    let mut out = sections.to_vec();
    if let Some(t) = target {
        set_all(&mut out, "filename", |_, _| t.to_string());
    }
    out
}

/// The job's sections as the study runs them: the target (`filename`)
/// when given, and each job's length cut to `runtime_s` where it would run
/// longer, or has no length of its own. Returns the note to say when a
/// job was cut.
pub fn prepared(
    sections: &[Section],
    target: Option<&str>,
    runtime_s: f64,
) -> (Vec<Section>, Option<String>) {
    let mut out = with_target(sections, target);
    let mut cut = Vec::new();
    let jobs: Vec<usize> = (0..out.len()).filter(|&i| !out[i].global).collect();
    for i in jobs {
        let written = effective(&out, i, "runtime")
            .and_then(|v| ssdready_core::units::parse_time_ns(&v, 1_000_000_000).ok())
            .map(|ns| ns as f64 / 1e9);
        if written.is_some_and(|w| w > 0.0 && w <= runtime_s) {
            continue;
        }
        cut.push(match written {
            Some(w) if w > 0.0 => format!("[{}] {w:.0} s", out[i].name),
            _ => format!("[{}] (no runtime)", out[i].name),
        });
        let v = format!("{runtime_s:.0}s");
        out[i].options.push(RawOption::cli("runtime", Some(&v)));
    }
    let note = (!cut.is_empty()).then(|| {
        format!(
            "each run of the job lasts at most {runtime_s:.0} s to fit the budget (as written: {})",
            cut.join(", ")
        )
    });
    (out, note)
}

/// One variant of the job: one thing changed, the rest as written.
#[derive(Clone, Debug)]
pub struct Variant {
    /// In words: `iodepth ×2 (16 → 32)`.
    pub what: String,
    /// The option changed, as it would be written in the job file.
    pub option: String,
    pub sections: Vec<Section>,
    /// Judged on bandwidth (a larger block moves more per I/O), not IOPS.
    pub by_bandwidth: bool,
}

fn number(sections: &[Section], job: usize, key: &str, default: u64) -> u64 {
    effective(sections, job, key)
        .and_then(|v| ssdready_core::units::parse_size(&v, 1024).ok())
        .unwrap_or(default)
}

/// The first job's value of a numeric option, for the words.
fn first_job(sections: &[Section]) -> usize {
    sections.iter().position(|s| !s.global).unwrap_or(0)
}

/// Each variant of the job, one thing changed at a time.
pub fn variants(sections: &[Section]) -> Vec<Variant> {
    let mut out = Vec::new();
    let j = first_job(sections);
    let depth = number(sections, j, "iodepth", 1);
    for (name, num, den) in [("×½", 1, 2), ("×2", 2, 1), ("×4", 4, 1)] {
        let want = (depth * num / den).max(1);
        if want == depth {
            continue;
        }
        let mut s = sections.to_vec();
        set_all(&mut s, "iodepth", |i, all| {
            (number(all, i, "iodepth", 1) * num / den)
                .max(1)
                .to_string()
        });
        out.push(Variant {
            what: format!("iodepth {name} ({depth} → {want})"),
            option: format!("iodepth={want}"),
            sections: s,
            by_bandwidth: false,
        });
    }
    let jobs = number(sections, j, "numjobs", 1);
    let mut s = sections.to_vec();
    set_all(&mut s, "numjobs", |i, all| {
        (number(all, i, "numjobs", 1) * 2).to_string()
    });
    out.push(Variant {
        what: format!("numjobs ×2 ({jobs} → {})", jobs * 2),
        option: format!("numjobs={}", jobs * 2),
        sections: s,
        by_bandwidth: false,
    });
    out.extend(engine_variants(sections, j));
    if let Some(v) = block_variant(sections, j) {
        out.push(v);
    }
    out
}

/// Each other engine of io_uring, libaio and psync, for a job on one of them.
fn engine_variants(sections: &[Section], j: usize) -> Vec<Variant> {
    let own = effective(sections, j, "ioengine").unwrap_or_else(|| "psync".into());
    let known = ["io_uring", "libaio", "psync"];
    if !known.contains(&own.as_str()) {
        return Vec::new();
    }
    known
        .into_iter()
        .filter(|e| *e != own)
        .map(|e| {
            let mut s = sections.to_vec();
            set_all(&mut s, "ioengine", |_, _| e.to_string());
            Variant {
                what: format!("ioengine {own} → {e}"),
                option: format!("ioengine={e}"),
                sections: s,
                by_bandwidth: false,
            }
        })
        .collect()
}

/// Blocks twice as large, where the job has one fixed block size.
fn block_variant(sections: &[Section], j: usize) -> Option<Variant> {
    let mixed = [
        "bsrange",
        "bssplit",
        "blocksize_range",
        "blocksize_unaligned",
    ];
    if mixed.iter().any(|k| effective(sections, j, k).is_some()) {
        return None;
    }
    // `bs=4k,8k` (reads, writes) is no one size.
    if effective(sections, j, "bs").is_some_and(|v| v.contains(',') || v.contains(':')) {
        return None;
    }
    let bs = number(sections, j, "bs", 4096);
    if bs.checked_mul(2)? > 16 << 20 {
        return None;
    }
    let mut s = sections.to_vec();
    set_all(&mut s, "bs", |_, _| (bs * 2).to_string());
    Some(Variant {
        what: format!(
            "bs ×2 ({} → {})",
            crate::plan::fmt_bs(bs),
            crate::plan::fmt_bs(bs * 2)
        ),
        option: format!("bs={}", bs * 2),
        sections: s,
        by_bandwidth: true,
    })
}

/// One direction's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Dir {
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: Option<u64>,
    pub lat_p999_ns: Option<u64>,
}

fn pct_of(d: &DirResult, want: f64) -> Option<u64> {
    d.clat
        .percentiles
        .iter()
        .find(|(p, _)| (p - want).abs() < 1e-6)
        .map(|x| x.1)
}

impl Dir {
    fn of(d: &DirResult) -> Option<Dir> {
        (d.ios > 0).then(|| Dir {
            iops: d.iops,
            bw_bytes_per_s: d.bw_bytes_per_s,
            lat_mean_ns: d.clat.mean_ns,
            lat_p99_ns: pct_of(d, 99.0),
            lat_p999_ns: pct_of(d, 99.9),
        })
    }
}

/// One job's figures in one run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobFigures {
    pub name: String,
    pub read: Option<Dir>,
    pub write: Option<Dir>,
}

/// One run's figures: each job, and together (rates summed, latency
/// weighted by the I/Os).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFigures {
    pub jobs: Vec<JobFigures>,
    pub together: JobFigures,
    /// The I/Os' latency along their path, where the run split it (root,
    /// a block device: the kernel's block tracepoints): each part's mean
    /// and its share of the I/Os' mean.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub split: Vec<Part>,
    /// The CPU each I/O cost, layer by layer, where the run profiled it
    /// (root: system-wide samples): each layer's share of the busy CPU and
    /// its CPU per I/O.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_layers: Vec<Part>,
}

/// One part of the latency split.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Part {
    pub part: String,
    pub mean_ns: f64,
    pub share_pct: f64,
}

impl RunFigures {
    /// The figures of a run's result.
    pub fn of(r: &RunResult) -> RunFigures {
        let jobs: Vec<JobFigures> = r
            .jobs
            .iter()
            .map(|j| JobFigures {
                name: j.name.clone(),
                read: j.read.as_ref().and_then(Dir::of),
                write: j.write.as_ref().and_then(Dir::of),
            })
            .collect();
        let sum = |pick: &dyn Fn(&JobFigures) -> Option<&Dir>| {
            let ds: Vec<&Dir> = jobs.iter().filter_map(pick).collect();
            let iops: f64 = ds.iter().map(|d| d.iops).sum();
            (!ds.is_empty()).then(|| Dir {
                iops,
                bw_bytes_per_s: ds.iter().map(|d| d.bw_bytes_per_s).sum(),
                lat_mean_ns: ds.iter().map(|d| d.lat_mean_ns * d.iops).sum::<f64>()
                    / iops.max(1e-9),
                // Percentiles do not add up: the worst job's, an upper bound.
                lat_p99_ns: ds.iter().filter_map(|d| d.lat_p99_ns).max(),
                lat_p999_ns: ds.iter().filter_map(|d| d.lat_p999_ns).max(),
            })
        };
        let together = JobFigures {
            name: "all jobs".into(),
            read: sum(&|j| j.read.as_ref()),
            write: sum(&|j| j.write.as_ref()),
        };
        let split = r
            .phases
            .iter()
            .filter_map(|p| p.decomposition.as_ref())
            .flat_map(|d| &d.parts)
            .map(|p| Part {
                part: p.part.clone(),
                mean_ns: p.mean_ns,
                share_pct: p.share_pct,
            })
            .collect();
        let cpu_layers = r
            .phases
            .iter()
            .filter_map(|p| p.profile.as_ref())
            .flat_map(|p| &p.layers)
            .filter(|l| l.share_of_busy_pct > 0.0)
            .map(|l| Part {
                part: l.layer.clone(),
                mean_ns: l.ns_per_io,
                share_pct: l.share_of_busy_pct,
            })
            .collect();
        RunFigures {
            jobs,
            together,
            split,
            cpu_layers,
        }
    }

    /// The rate the study compares runs by: IOPS of both directions.
    pub fn iops(&self) -> f64 {
        self.together.read.as_ref().map_or(0.0, |d| d.iops)
            + self.together.write.as_ref().map_or(0.0, |d| d.iops)
    }

    /// Bytes per second of both directions.
    pub fn bandwidth(&self) -> f64 {
        self.together
            .read
            .as_ref()
            .map_or(0.0, |d| d.bw_bytes_per_s)
            + self
                .together
                .write
                .as_ref()
                .map_or(0.0, |d| d.bw_bytes_per_s)
    }
}

/// A variant measured against the job.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VariantResult {
    pub what: String,
    pub option: String,
    pub figures: Option<RunFigures>,
    /// IOPS (bandwidth for a block size) against the job's median, percent.
    pub gain_pct: Option<f64>,
    /// Judged on bandwidth rather than IOPS.
    #[serde(default)]
    pub by_bandwidth: bool,
    /// Beyond the repeats' spread and [`GAIN_PCT`].
    pub beyond_noise: bool,
    pub error: Option<String>,
}

/// The median of the repeats' rates, and their spread (max − min) in
/// percent of it.
pub fn median_spread(rates: &[f64]) -> Option<(f64, f64)> {
    let mut v: Vec<f64> = rates.iter().copied().filter(|r| r.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let mid = *v.get(v.len() / 2)?;
    let spread = 100.0 * (v[v.len() - 1] - v[0]) / mid.max(1e-9);
    Some((mid, spread))
}

/// A variant's gain against the job's repeats' median (of IOPS, or of
/// bandwidth for a variant judged on it).
pub fn judge_variant(v: &mut VariantResult, median: f64, spread_pct: f64) {
    let Some(f) = &v.figures else {
        return;
    };
    let rate = match v.by_bandwidth {
        true => f.bandwidth(),
        false => f.iops(),
    };
    let g = 100.0 * (rate / median.max(1e-9) - 1.0);
    v.gain_pct = Some(g);
    v.beyond_noise = g.abs() >= GAIN_PCT.max(spread_pct);
}

/// What holds the job: the findings with positive evidence, else "not
/// identified" with what was ruled out.
pub fn holds(
    caps: &Caps,
    figures: &RunFigures,
    variants: &[VariantResult],
    bs: u64,
) -> Vec<String> {
    let mut out = Vec::new();
    for (reads, dir) in [
        (true, &figures.together.read),
        (false, &figures.together.write),
    ] {
        let (Some(d), Some((limit, cap))) = (dir, caps.io_limit(reads, bs)) else {
            continue;
        };
        if d.iops >= AT_THROTTLE * limit {
            out.push(format!(
                "an I/O throttle: {} on {} holds the job's {} at {:.0} IOPS ({} is {:.0} % of it)",
                cap.setting.show(),
                cap.device,
                if reads { "reads" } else { "writes" },
                limit,
                fmt_rate(d.iops),
                100.0 * d.iops / limit
            ));
        }
    }
    for v in variants
        .iter()
        .filter(|v| v.beyond_noise && v.gain_pct.is_some_and(|g| g > 0.0))
    {
        out.push(format!(
            "the job's own choice: {} gains {:+.0} % of {} (set {} in the job)",
            v.what,
            v.gain_pct.unwrap_or_default(),
            if v.by_bandwidth { "bandwidth" } else { "IOPS" },
            v.option
        ));
    }
    if out.is_empty() {
        out.push(
            "not identified: no throttle of the study's groups is reached, and no variant of the job's own choices gains beyond the noise"
                .into(),
        );
    }
    out
}

/// A rate-limited job's question is its latency at that load: for each
/// job and direction with `rate_iops` or `rate`, whether the job reached
/// the rate it asked (95 % of it, all its workers together) and its p99
/// there; a job with think time says it paces itself.
pub fn rates(r: &RunResult) -> Vec<String> {
    let mut out = Vec::new();
    for j in &r.jobs {
        let n = j.workers.max(1) as f64;
        for (d, label, got) in [(0, "reads", &j.read), (1, "writes", &j.write)] {
            let Some(got) = got.as_ref().filter(|g| g.ios > 0) else {
                continue;
            };
            let (asked, have, unit) = match (j.spec.rate_iops[d], j.spec.rate_bytes[d]) {
                (Some(i), _) => (i as f64 * n, got.iops, "IOPS"),
                (None, Some(b)) => (
                    b as f64 * n / 1048576.0,
                    got.bw_bytes_per_s / 1048576.0,
                    "MiB/s",
                ),
                _ => continue,
            };
            let p99 =
                pct_of(got, 99.0).map_or("?".into(), |ns| ssdready_core::units::fmt_ns(ns as f64));
            let verdict = match have >= 0.95 * asked {
                true => "reached".to_string(),
                false => format!("not reached: {:.0} % short", 100.0 * (1.0 - have / asked)),
            };
            out.push(format!(
                "[{}] {label}: {have:.0} of {asked:.0} {unit} asked ({verdict}), p99 {p99} at that load",
                j.name
            ));
        }
        if j.spec.thinktime_ns > 0 {
            out.push(format!(
                "[{}] thinks {} between I/Os: its own pace sets its load",
                j.name,
                ssdready_core::units::fmt_ns(j.spec.thinktime_ns as f64)
            ));
        }
    }
    out
}

fn fmt_rate(iops: f64) -> String {
    match iops {
        x if x >= 1e6 => format!("{:.2}M", x / 1e6),
        x if x >= 1e4 => format!("{:.1}K", x / 1e3),
        x => format!("{x:.0}"),
    }
}

/// The request that runs `sections`.
pub fn request(
    sections: &[Section],
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> ssdready_run::RunRequest {
    ssdready_run::RunRequest {
        sections: sections.to_vec(),
        quiet: true,
        ..ssdready_run::RunRequest::new(stop.clone())
    }
}

#[cfg(test)]
#[path = "job_tests.rs"]
mod tests;
