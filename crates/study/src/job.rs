//! The study of the user's own workload (`ssdready study --job FILE`): the
//! job as written is the study's point, read as fio runs it (core's
//! resolved spec: [`spec`]). It runs in repeats, its own figures are
//! reported per job and together (IOPS and bandwidth per direction; mean,
//! p99 and p99.9 completion latency, fio's `clat`), and around it the
//! study varies one thing at a time, keeping everything else as written:
//! the depth ×½, ×2 and ×4, the jobs ×2, each other engine — the
//! application's I/O mechanics, each saying what it asks of the
//! application — and, as what a different workload would get, the block
//! ×2 where the job has one fixed block size. Each variant is set against
//! the job's repeats on the job's own metric ([`crate::job_gain`]), and a
//! gain counts only beyond the repeats' spread and 10 %.
//!
//! What holds the job is judged by the device study's causes
//! ([`crate::job_point`]), the variants that keep more in flight being
//! evidence for them.
//!
//! A job the study cannot repeat (`exec_prerun`, `exec_postrun`) is refused
//! before anything runs. A job longer than its share of the budget runs
//! shorter (`runtime`, `time_based` kept as written), and the study says
//! the length it used.

pub use crate::job_gain::{directions, largest_block, mean_block};
use serde::{Deserialize, Serialize};
use ssdready_core::options::{RawOption, Section};
use ssdready_core::result::{DirResult, RunResult};
use ssdready_core::spec::JobSpec;

/// Options whose effect the study cannot repeat run after run.
const UNREPEATABLE: &[&str] = &["exec_prerun", "exec_postrun"];

/// A gain of a variant counts from this share up (and beyond the spread).
pub const GAIN_PCT: f64 = 10.0;

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

/// Job `job` of `sections` as fio runs it: core's resolved spec, built
/// as `run` builds it from the globals before the job and its own options
/// in order, so that every alias (`readwrite`, `blocksize`, `timeout`, …),
/// every included file (expanded into the sections when the file was
/// read) and every per-direction value (`bs=4k,64k`) counts. Every
/// question the study asks of a job's options is answered here. A job
/// core refuses whole (the study's parse-only run refuses it before any
/// run) is read option by option, each one core takes applied in order.
pub fn spec(sections: &[Section], job: usize) -> JobSpec {
    let own = sections.get(job).cloned().unwrap_or_default();
    let mut upto: Vec<Section> = sections[..job.min(sections.len())]
        .iter()
        .filter(|s| s.global)
        .cloned()
        .collect();
    upto.push(Section {
        global: false,
        ..own
    });
    if let Ok(mut built) = ssdready_core::options::build_jobs(&upto) {
        if let Some(s) = built.pop() {
            return s;
        }
    }
    let mut s = JobSpec::default();
    for o in upto.iter().flat_map(|s| s.options.iter()) {
        let _ = ssdready_core::options::apply(&mut s, &o.key, o.value.as_deref());
    }
    s
}

/// fio's own name of an option written as `key` (`readwrite` → `rw`,
/// `blocksize` → `bs`); `key` itself where core does not know it.
pub fn canonical(key: &str) -> &str {
    ssdready_core::options::find(key).map_or(key, |d| d.name)
}

/// Set `key` on every job by fio's own name of it, after what the job
/// wrote (under any of its names), so that it wins.
pub fn set_all(sections: &mut [Section], key: &str, value: impl Fn(usize, &[Section]) -> String) {
    let key = canonical(key);
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
/// when given, and each job's length cut where a run would last longer
/// than `runtime_s`, or has no length of its own. The phases a file runs
/// in turn (`stonewall`) share `runtime_s`, and each job's ramp and start
/// delay are counted in its phase's share. Returns the note to say when a
/// job was cut.
pub fn prepared(
    sections: &[Section],
    target: Option<&str>,
    runtime_s: f64,
) -> (Vec<Section>, Option<String>) {
    let mut out = with_target(sections, target);
    let mut cut = Vec::new();
    let jobs: Vec<usize> = (0..out.len()).filter(|&i| !out[i].global).collect();
    let phases = phases(&out, &jobs);
    let share = runtime_s / phases as f64;
    for i in jobs {
        // A ramp longer than half the share is cut to half of it.
        let ramp = secs(spec(&out, i).ramp_time_ns);
        if ramp > share / 2.0 {
            let half = (share / 2.0 * 1000.0).floor();
            cut.push(format!(
                "[{}] ramp_time {ramp:.1} s → {:.1} s",
                out[i].name,
                half / 1000.0
            ));
            out[i]
                .options
                .push(RawOption::cli("ramp_time", Some(&format!("{half:.0}ms"))));
        }
        let s = spec(&out, i);
        let lead = secs(s.ramp_time_ns) + secs(s.startdelay_ns);
        let cap = (share - lead).floor().max(1.0);
        let written = secs(s.runtime_ns.unwrap_or(0));
        if written > 0.0 && written <= cap {
            continue;
        }
        let name = &out[i].name;
        cut.push(match written {
            0.0 => format!("[{name}] (no runtime) → {cap:.0} s"),
            w => format!("[{name}] {w:.0} s → {cap:.0} s"),
        });
        let v = format!("{cap:.0}s");
        out[i].options.push(RawOption::cli("runtime", Some(&v)));
    }
    let note = (!cut.is_empty()).then(|| {
        let turns = match phases {
            1 => String::new(),
            n => format!("; its {n} phases run in turn"),
        };
        format!(
            "each run of the job lasts at most {runtime_s:.0} s to fit the budget{turns} (each job's ramp and start delay counted): {}",
            cut.join(", ")
        )
    });
    (out, note)
}

/// How long a run of the job's `sections` lasts, about: each phase's
/// longest job (its start delay, ramp and runtime), phase after phase; a
/// job with no runtime counts as `runtime_s`.
pub fn run_wall_s(sections: &[Section], runtime_s: f64) -> f64 {
    let jobs: Vec<usize> = (0..sections.len())
        .filter(|&i| !sections[i].global)
        .collect();
    let mut walls: Vec<f64> = Vec::new();
    for (k, &i) in jobs.iter().enumerate() {
        let s = spec(sections, i);
        let runtime = match secs(s.runtime_ns.unwrap_or(0)) {
            0.0 => runtime_s,
            r => r,
        };
        let wall = runtime + secs(s.ramp_time_ns) + secs(s.startdelay_ns);
        match walls.last_mut() {
            Some(w) if k > 0 && !waits(sections, i) => *w = w.max(wall),
            _ => walls.push(wall),
        }
    }
    walls.iter().sum()
}

/// Whether job `i` waits for the jobs before it (`stonewall`, or fio's
/// other name for it, `wait_for_previous`).
fn waits(sections: &[Section], i: usize) -> bool {
    spec(sections, i).stonewall
}

/// The phases a run of `jobs` takes: a new one at each job that waits for
/// those before it (`stonewall`, `wait_for_previous`).
fn phases(sections: &[Section], jobs: &[usize]) -> usize {
    let later = jobs.iter().skip(1).filter(|&&i| waits(sections, i)).count();
    1 + later
}

/// Nanoseconds in seconds.
fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

/// One variant of the job: one thing changed, the rest as written.
#[derive(Clone, Debug)]
pub struct Variant {
    /// In words: `iodepth ×2 (16 → 32)`.
    pub what: String,
    /// The option changed, as it would be written in the job file.
    pub option: String,
    pub sections: Vec<Section>,
    /// What it asks of the application (`numjobs=2: the application
    /// issues from 2 threads`); empty for a change of the workload.
    pub asks: String,
    /// It changes what the application reads and writes (not one of its
    /// I/O mechanics: [`crate::job_gain::mechanic`]).
    pub workload: bool,
}

impl Variant {
    fn new(what: String, option: String, sections: Vec<Section>, asks: &str) -> Variant {
        let workload = !crate::job_gain::mechanic(&option);
        Variant {
            asks: match workload {
                true => String::new(),
                false => format!("{option}: the application {asks}"),
            },
            what,
            option,
            sections,
            workload,
        }
    }
}

/// The first job's value of a numeric option, for the words.
fn first_job(sections: &[Section]) -> usize {
    sections.iter().position(|s| !s.global).unwrap_or(0)
}

/// A job as fio runs it, in words: its I/O, its block per direction,
/// its engine, depth and jobs (`[job1] random reads, 4 KiB blocks,
/// libaio, QD 64 × 1 job, direct`).
pub fn described(sections: &[Section], j: usize) -> String {
    let s = spec(sections, j);
    let pattern = match s.rw.is_random() {
        true => "random",
        false => "sequential",
    };
    let what = match s.rw {
        m if m.is_mixed() => format!("{pattern} reads and writes ({} % reads)", s.rwmixread),
        m if m.trims() => format!("{pattern} trims"),
        m if m.modifies() => format!("{pattern} writes"),
        _ => format!("{pattern} reads"),
    };
    let size = |d: usize| match s.bs.for_dir(d) {
        ssdready_core::spec::BlockSizes::Fixed(b) => crate::plan::fmt_bs(u64::from(*b)),
        other => format!(
            "{}–{}",
            crate::plan::fmt_bs(u64::from(other.min())),
            crate::plan::fmt_bs(u64::from(other.max()))
        ),
    };
    let dirs = directions(&s);
    let sizes: Vec<String> = dirs.iter().map(|&d| size(d)).collect();
    let blocks = match sizes.windows(2).all(|w| w[0] == w[1]) {
        true => format!("{} blocks", sizes[0]),
        false => {
            let name = ["reads", "writes", "trims"];
            let each: Vec<String> = dirs
                .iter()
                .zip(&sizes)
                .map(|(&d, b)| format!("{b} {}", name[d]))
                .collect();
            each.join(" and ")
        }
    };
    let jobs = match s.numjobs {
        1 => "1 job".to_string(),
        n => format!("{n} jobs"),
    };
    format!(
        "[{}] {what}, {blocks}, {}, QD {} × {jobs}, {}",
        sections[j].name,
        engine_named(&s),
        s.iodepth,
        if s.direct { "direct" } else { "buffered" }
    )
}

/// Each variant of the job, one thing changed at a time.
pub fn variants(sections: &[Section]) -> Vec<Variant> {
    let mut out = Vec::new();
    let j = first_job(sections);
    let depth = u64::from(spec(sections, j).iodepth);
    // A synchronous engine keeps one I/O in flight per thread whatever
    // the iodepth (as fio's do): deeper queues are for the other engines.
    let shapes = match synchronous(sections, j) {
        true => [].as_slice(),
        false => [("×½", 1, 2), ("×2", 2, 1), ("×4", 4, 1)].as_slice(),
    };
    for &(name, num, den) in shapes {
        let want = (depth * num / den).max(1);
        if want == depth {
            continue;
        }
        let mut s = sections.to_vec();
        set_all(&mut s, "iodepth", |i, all| {
            (u64::from(spec(all, i).iodepth) * num / den)
                .max(1)
                .to_string()
        });
        out.push(Variant::new(
            format!("iodepth {name} ({depth} → {want})"),
            format!("iodepth={want}"),
            s,
            &format!("keeps {want} I/Os in flight per thread"),
        ));
    }
    let jobs = u64::from(spec(sections, j).numjobs);
    let mut s = sections.to_vec();
    set_all(&mut s, "numjobs", |i, all| {
        (u64::from(spec(all, i).numjobs) * 2).to_string()
    });
    out.push(Variant::new(
        format!("numjobs ×2 ({jobs} → {})", jobs * 2),
        format!("numjobs={}", jobs * 2),
        s,
        &format!("issues from {} threads", jobs * 2),
    ));
    out.extend(engine_variants(sections, j));
    if let Some(v) = block_variant(sections, j) {
        out.push(v);
    }
    out
}

/// Whether the job's engine completes each I/O inside its call (psync and
/// fio's other names for it, sg, mmap, …): its iodepth cannot act.
pub fn synchronous(sections: &[Section], j: usize) -> bool {
    spec(sections, j).engine().caps.synchronous
}

/// The engine of a job, as the job names it (`sync`, `libaio`, …).
pub fn engine_named(s: &JobSpec) -> String {
    s.engine_named
        .clone()
        .unwrap_or_else(|| s.engine().name.to_string())
}

/// Each other engine of io_uring, libaio and psync, for a job on one of
/// them (or on one of psync's other names).
fn engine_variants(sections: &[Section], j: usize) -> Vec<Variant> {
    let s = spec(sections, j);
    let own = engine_named(&s);
    let known = ["io_uring", "libaio", "psync"];
    // fio's other names of psync (sync, pvsync, …) are psync's family;
    // an engine ssdready does not run has no variants.
    let Some(family) = ssdready_core::engines::find(&own).map(|e| e.name) else {
        return Vec::new();
    };
    if !known.contains(&family) {
        return Vec::new();
    }
    known
        .into_iter()
        .filter(|e| *e != family)
        .map(|e| {
            let mut s = sections.to_vec();
            set_all(&mut s, "ioengine", |_, _| e.to_string());
            let asks = match e {
                "psync" => "moves to psync: one synchronous read or write at a time per thread",
                "libaio" => "moves to libaio",
                _ => "moves to io_uring",
            };
            Variant::new(
                format!("ioengine {own} → {e}"),
                format!("ioengine={e}"),
                s,
                asks,
            )
        })
        .collect()
}

/// Blocks twice as large, where the job has one fixed block size.
fn block_variant(sections: &[Section], j: usize) -> Option<Variant> {
    // A range, a split, unaligned sizes or sizes per direction
    // (`bs=4k,8k`) are no one size.
    let s = spec(sections, j);
    let ssdready_core::spec::BlockSizes::Fixed(bs) = s.bs else {
        return None;
    };
    if s.bs_unaligned {
        return None;
    }
    let bs = u64::from(bs);
    if bs.checked_mul(2)? > 16 << 20 {
        return None;
    }
    let mut s = sections.to_vec();
    set_all(&mut s, "bs", |_, _| (bs * 2).to_string());
    let what = format!(
        "bs ×2 ({} → {})",
        crate::plan::fmt_bs(bs),
        crate::plan::fmt_bs(bs * 2)
    );
    Some(Variant::new(what, format!("bs={}", bs * 2), s, ""))
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

/// Each phase's label for its parts: none for a run of one phase, else its
/// jobs' names (`[fill] `), as a stonewalled job file runs them in turn.
fn phase_labels(r: &RunResult) -> Vec<String> {
    let one = r.phases.len() < 2;
    r.phases
        .iter()
        .map(|p| match one {
            true => String::new(),
            false => {
                let names: Vec<&str> = p
                    .jobs
                    .iter()
                    .filter_map(|&j| r.jobs.get(j).map(|j| j.name.as_str()))
                    .collect();
                format!("[{}] ", names.join(", "))
            }
        })
        .collect()
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
        let label = phase_labels(r);
        let split = r
            .phases
            .iter()
            .zip(&label)
            .filter_map(|(p, l)| Some((p.decomposition.as_ref()?, l)))
            .flat_map(|(d, l)| d.parts.iter().map(move |p| (p, l)))
            .map(|(p, l)| Part {
                part: format!("{l}{}", p.part),
                mean_ns: p.mean_ns,
                share_pct: p.share_pct,
            })
            .collect();
        let cpu_layers = r
            .phases
            .iter()
            .zip(&label)
            .filter_map(|(p, l)| Some((p.profile.as_ref()?, l)))
            .flat_map(|(p, l)| p.layers.iter().map(move |x| (x, l)))
            .filter(|(x, _)| x.share_of_busy_pct > 0.0)
            .map(|(x, l)| Part {
                part: format!("{l}{}", x.layer),
                mean_ns: x.ns_per_io,
                share_pct: x.share_of_busy_pct,
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
    /// On the job's own metric against its median, percent: the least of
    /// its directions' ([`crate::job_gain::judge_variant`]).
    pub gain_pct: Option<f64>,
    /// The job's metric is bandwidth (every direction streams), not IOPS.
    #[serde(default)]
    pub by_bandwidth: bool,
    /// Beyond the repeats' spread and [`GAIN_PCT`], every direction where
    /// it gains.
    pub beyond_noise: bool,
    pub error: Option<String>,
    /// Each direction's change on its own metric, and on both.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_direction: Vec<crate::job_gain::DirGain>,
    /// What it asks of the application (a mechanic of its I/O).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub asks: String,
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
