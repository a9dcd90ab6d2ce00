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
//! the job's repeats on the job's own metric
//! ([`ssdready_diagnosis::limit::job::gain`]), and a
//! gain counts only beyond the repeats' spread and 10 %.
//!
//! What holds the job is judged by the device study's causes
//! ([`crate::real::Judge`]), the variants that keep more in flight being
//! evidence for them.
//!
//! A job the study cannot repeat (`exec_prerun`, `exec_postrun`) is refused
//! before anything runs. A job longer than its share of the budget runs
//! shorter (`runtime`, `time_based` kept as written), and the study says
//! the length it used.

use ssdready_core::options::{RawOption, Section};
use ssdready_diagnosis::limit::job::best as job_best;

/// Repeats of the job as written.
pub const REPEATS: usize = 3;
pub use ssdready_diagnosis::limit::job::{
    canonical, described, directions, drop_idle, engine_named, largest_block, mean_block,
    median_spread, moved_note, rates, set_all, spec, Dir, JobFigures, Part, RunFigures,
    VariantResult, GAIN_PCT,
};

/// Options whose effect the study cannot repeat run after run.
const UNREPEATABLE: &[&str] = &["exec_prerun", "exec_postrun"];

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
    let phases = ssdready_diagnosis::limit::job::phases(&out).len().max(1);
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
    let wall = |i: usize| {
        let s = spec(sections, i);
        let runtime = match secs(s.runtime_ns.unwrap_or(0)) {
            0.0 => runtime_s,
            r => r,
        };
        runtime + secs(s.ramp_time_ns) + secs(s.startdelay_ns)
    };
    let phases = ssdready_diagnosis::limit::job::phases(sections);
    let longest = |p: &Vec<usize>| p.iter().map(|&i| wall(i)).fold(0.0, f64::max);
    phases.iter().map(longest).sum()
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
    /// I/O mechanics: [`ssdready_diagnosis::limit::job::gain::mechanic`]).
    pub workload: bool,
}

impl Variant {
    fn new(what: String, option: String, sections: Vec<Section>, asks: &str) -> Variant {
        let workload = !ssdready_diagnosis::limit::job::gain::mechanic(&option);
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

/// Each variant of the job, one thing changed at a time. The depth and
/// the jobs are scaled in each job alike; where the file's jobs differ in
/// one, its option is the factor (`iodepth=×2`, [`job_best::apply`]).
pub fn variants(sections: &[Section]) -> Vec<Variant> {
    let mut out = Vec::new();
    let j = first_job(sections);
    // A synchronous engine keeps one I/O in flight per thread whatever
    // the iodepth (as fio's do): deeper queues are for the other engines.
    let shapes = match synchronous(sections, j) {
        true => [].as_slice(),
        false => ["×½", "×2", "×4"].as_slice(),
    };
    let depth = shapes
        .iter()
        .map(|&f| ("iodepth", f, "keeps {} I/Os in flight per thread"));
    let jobs = std::iter::once(("numjobs", "×2", "issues from {} threads"));
    for (key, factor, asks) in depth.chain(jobs) {
        let changed = job_best::apply(sections, &[format!("{key}={factor}")]);
        let values = |s: &[Section]| -> Vec<u64> {
            let each = (0..s.len()).filter(|&i| !s[i].global);
            each.map(|i| job_best::own(s, i, key)).collect()
        };
        let (was, now) = (values(sections), values(&changed));
        if was == now {
            continue;
        }
        let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let (option, what, per) = match was.windows(2).all(|w| w[0] == w[1]) {
            true => (
                format!("{key}={}", now[0]),
                format!("{key} {factor} ({} → {})", was[0], now[0]),
                now[0].to_string(),
            ),
            false => (
                format!("{key}={factor}"),
                format!("{key} {factor} ({} → {})", list(&was), list(&now)),
                format!("{} (one value per job)", list(&now)),
            ),
        };
        out.push(Variant::new(
            what,
            option,
            changed,
            &asks.replace("{}", &per),
        ));
    }
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

/// Each other engine of io_uring, libaio and psync, for a job on one of
/// them (or on one of psync's other names).
fn engine_variants(sections: &[Section], j: usize) -> Vec<Variant> {
    let s = spec(sections, j);
    let own = engine_named(&s);
    let known = ["io_uring", "libaio", "psync"];
    // fio's other names of psync (sync, pvsync, …) are psync's family;
    // an engine ssdready does not run has no variants.
    let family = ssdready_core::engines::find(&own).map(|e| e.name);
    let Some(family) = family.filter(|f| known.contains(f)) else {
        return Vec::new();
    };
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

#[cfg(test)]
#[path = "job_workload_tests.rs"]
mod workload_tests;
