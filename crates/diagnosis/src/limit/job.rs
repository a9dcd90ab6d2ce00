//! The user's own job (`ssdready study --job FILE`) as fio runs it and
//! as it ran, purely: each job of the file read through core's resolved
//! spec ([`spec`]), its figures per job and together from a run's result
//! ([`RunFigures`]: IOPS and bandwidth per direction; mean, p99 and p99.9
//! completion latency), the repeats' median and spread, and a
//! rate-limited job's rate reached. Its variants judged on the job's own
//! metric are [`gain`]; the best configuration of the changes that gained
//! is [`best`]; what holds the job is the device study's causes
//! ([`super::point`]).

pub mod best;
pub mod best_set;
pub mod fio;
pub mod gain;

pub use gain::{directions, largest_block, mean_block};
use serde::{Deserialize, Serialize};
use ssdready_core::options::{RawOption, Section};
use ssdready_core::result::{DirResult, RunResult};
use ssdready_core::spec::JobSpec;

/// A gain of a variant counts from this share up (and beyond the spread).
pub const GAIN_PCT: f64 = 10.0;

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

/// The path of job `j`'s first file as fio opens it ([`files`]); None
/// for a job of neither `filename` nor `directory` (the built-in drive).
pub fn first_file(sections: &[Section], j: usize) -> Option<String> {
    files(sections, j).into_iter().next()
}

/// The files job `j` opens, as fio names them (the run's own naming,
/// `ssdready_workload::fileset::names`): its `filename`s, else `nrfiles`
/// names for each of its `numjobs` clones from `filename_format` in its
/// `directory`; none with `opendir` (its files are there already) or with
/// neither (the built-in drive).
pub fn files(sections: &[Section], j: usize) -> Vec<String> {
    use ssdready_workload::fileset::{names, PathInfo};
    let s = spec(sections, j);
    let named = s.filename.iter().any(|f| !f.is_empty());
    if !named && (s.directory.is_none() || s.opendir.is_some()) {
        return Vec::new();
    }
    let (info, list) = (|_: &str| PathInfo::default(), |_: &str| Ok(Vec::new()));
    let mut out: Vec<String> = Vec::new();
    for clone in 0..s.numjobs.max(1) {
        for f in names(&s, clone, &info, &list).unwrap_or_default() {
            if !f.is_empty() && !out.contains(&f) {
                out.push(f);
            }
        }
    }
    out
}

/// The files the `variants` of a job file lay out that the file as
/// `written` does not (`numjobs=2`'s second clone's): what a study of it
/// made, to take away after it.
pub fn variant_files(written: &[Section], variants: &[&[Section]]) -> Vec<String> {
    let all = |s: &[Section]| {
        (0..s.len())
            .filter(|&j| !s[j].global)
            .flat_map(|j| files(s, j))
            .collect::<Vec<_>>()
    };
    let own = all(written);
    let mut out: Vec<String> = variants
        .iter()
        .flat_map(|v| all(v))
        .filter(|f| !own.contains(f))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// How the warning of a run made after another process changed the
/// target's queue ends (`loop0's nr_requests 4 → 128: another process
/// changed it`): what holds the job is judged without that run.
pub const MOVED: &str = "another process changed it";

/// What another process moved in the target's queue during the job's
/// runs (`moved`: one reading per run that saw it, `loop0's nr_requests 4
/// → 128`) of all its `runs`, in words; None where nothing moved.
pub fn moved_note(moved: &[String], runs: usize) -> Option<String> {
    let each: std::collections::BTreeSet<&str> = moved.iter().map(String::as_str).collect();
    let each: Vec<&str> = each.into_iter().collect();
    Some(format!(
        "{} of the job's {runs} runs ran after another process changed the target's queue ({}): they measured the job under other settings than those the study read, and what holds it is judged without them; study it again while nothing else changes them",
        moved.len(),
        (!each.is_empty()).then(|| each.join("; "))?
    ))
}

/// The phases a run of the file's `sections` takes, each its jobs
/// (indexes into `sections`), in turn: a new phase at each job that waits
/// for those before it (`stonewall`, or fio's other name for it,
/// `wait_for_previous`); the jobs of one phase run together.
pub fn phases(sections: &[Section]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in (0..sections.len()).filter(|&i| !sections[i].global) {
        match out.last_mut() {
            Some(p) if !spec(sections, i).stonewall => p.push(i),
            _ => out.push(vec![i]),
        }
    }
    out
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

/// The engine of a job, as the job names it (`sync`, `libaio`, …).
pub fn engine_named(s: &JobSpec) -> String {
    s.engine_named
        .clone()
        .unwrap_or_else(|| s.engine().name.to_string())
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
    /// The CPU this job's threads spent per I/O, ns, where it is known
    /// apart from the other jobs': fio's from the job's own `usr_cpu` and
    /// `sys_cpu`, the study's where the job ran in a phase of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_io_ns: Option<f64>,
}

impl JobFigures {
    /// IOPS of both directions.
    pub fn iops(&self) -> f64 {
        self.read.as_ref().map_or(0.0, |d| d.iops) + self.write.as_ref().map_or(0.0, |d| d.iops)
    }
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
    /// The CPU the run's own threads spent per I/O (user and system, the
    /// system calls' submission and completion included), ns: the study's
    /// from its process's counters over the measured window, fio's from
    /// its jobs' `usr_cpu` and `sys_cpu` over their runtime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_per_io_ns: Option<f64>,
}

/// The CPU per I/O of job `i` of `r`, ns, where it ran in a phase of its
/// own (the process's counters over that phase's window).
fn alone_cpu(r: &RunResult, i: usize) -> Option<f64> {
    let p = r.phases.iter().find(|p| p.jobs == [i])?;
    let c = p.cpu.as_ref().filter(|c| c.ios > 0)?;
    let ns = c.process.user_ns + c.process.sys_ns;
    (ns > 0).then(|| ns as f64 / c.ios as f64)
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
    /// The figures of jobs' own figures: together, their rates summed and
    /// their latency weighted by the I/Os (no split, no CPU by layer).
    pub fn of_jobs(jobs: Vec<JobFigures>) -> RunFigures {
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
            cpu_per_io_ns: None,
        };
        RunFigures {
            jobs,
            together,
            ..Default::default()
        }
    }

    /// The figures of a run's result.
    pub fn of(r: &RunResult) -> RunFigures {
        let jobs: Vec<JobFigures> = r
            .jobs
            .iter()
            .enumerate()
            .map(|(i, j)| JobFigures {
                name: j.name.clone(),
                read: j.read.as_ref().and_then(Dir::of),
                write: j.write.as_ref().and_then(Dir::of),
                cpu_per_io_ns: alone_cpu(r, i),
            })
            .collect();
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
        let (cpu_ns, ios) = r
            .phases
            .iter()
            .filter_map(|p| p.cpu.as_ref())
            .map(|c| (c.process.user_ns + c.process.sys_ns, c.ios))
            .fold((0, 0), |(a, b), (c, d)| (a + c, b + d));
        RunFigures {
            split,
            cpu_layers,
            cpu_per_io_ns: (ios > 0 && cpu_ns > 0).then(|| cpu_ns as f64 / ios as f64),
            ..RunFigures::of_jobs(jobs).in_turn(r.phases.len())
        }
    }

    /// Where the jobs ran in `phases` turns, their rates added say so: no
    /// moment saw them together.
    pub fn in_turn(mut self, phases: usize) -> RunFigures {
        if phases > 1 {
            self.together.name =
                format!("all jobs, their rates added though they ran in {phases} phases in turn");
        }
        self
    }

    /// The rate the study compares runs by: IOPS of both directions.
    pub fn iops(&self) -> f64 {
        self.together.iops()
    }

    /// The run's figures as a trial compares them: both directions'
    /// rates, the I/Os' mean latency, the worse direction's p99, and each
    /// direction's IOPS where the run did both.
    pub fn measured(&self) -> crate::trials::Measured {
        let dirs: Vec<&Dir> = [&self.together.read, &self.together.write]
            .into_iter()
            .flatten()
            .collect();
        let iops = self.iops();
        crate::trials::Measured {
            iops,
            bw_bytes_per_s: self.bandwidth(),
            lat_mean_ns: dirs.iter().map(|d| d.lat_mean_ns * d.iops).sum::<f64>() / iops.max(1e-9),
            lat_p99_ns: dirs.iter().filter_map(|d| d.lat_p99_ns).max().unwrap_or(0) as f64,
            cpu_ns_per_io: None,
            directions: match (&self.together.read, &self.together.write) {
                (Some(r), Some(w)) if r.iops > 0.0 && w.iops > 0.0 => Some([r.iops, w.iops]),
                _ => None,
            },
        }
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
    /// its directions' ([`gain::judge_variant`]).
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
    pub per_direction: Vec<gain::DirGain>,
    /// What it asks of the application (a mechanic of its I/O).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub asks: String,
    /// fio's A/B of it against fio's run of the job as written, percent on
    /// the job's metric, where fio checked it ([`fio`]); a mechanic fio
    /// does not confirm stays out of the best configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fio_gain_pct: Option<f64>,
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
    // A split or a range by its least, largest and mean size.
    let bs = |b: u32| ssdready_measured::record::fmt_bs(u64::from(b));
    let size = |d: usize| match s.bs.for_dir(d) {
        ssdready_core::spec::BlockSizes::Fixed(b) => bs(*b),
        other => format!(
            "{}–{} (mean {})",
            bs(other.min()),
            bs(other.max()),
            match mean_block(&s, d) {
                m if m >= 1024.0 && m % 1024.0 != 0.0 => format!("{:.1}k", m / 1024.0),
                m => bs(m.round() as u32),
            }
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

/// Leave out the repeats that counted no I/O where another repeat did: a
/// run that moved nothing says nothing of the job's rate, and in the
/// median it would stand for a rate of 0. The note saying which, if any.
pub fn drop_idle(repeats: &mut Vec<RunFigures>) -> Option<String> {
    let idle = |r: &RunFigures| r.iops() <= 0.0;
    let which: Vec<String> = (repeats.iter().enumerate())
        .filter(|(_, r)| idle(r))
        .map(|(i, _)| (i + 1).to_string())
        .collect();
    if which.is_empty() || which.len() == repeats.len() {
        return None;
    }
    repeats.retain(|r| !idle(r));
    Some(format!(
        "repeat {} of the job as written counted no I/O: left out of its median and spread",
        which.join(", ")
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(iops: f64) -> RunFigures {
        let read = Some(Dir {
            iops,
            ..Dir::default()
        });
        RunFigures {
            together: JobFigures {
                read,
                ..JobFigures::default()
            },
            ..RunFigures::default()
        }
    }

    #[test]
    fn a_repeat_that_counted_no_io_stays_out_of_the_median_where_another_did() {
        // A first repeat that moved nothing, then 1.6K and 2.05K: with it
        // the median is 1.6K and the spread 128 %; without it, what the
        // two runs that did I/O say.
        let mut repeats = vec![reads(0.0), reads(1600.0), reads(2050.0)];
        let note = drop_idle(&mut repeats).expect("said");
        assert!(
            note.starts_with("repeat 1 of the job as written counted no I/O"),
            "{note}"
        );
        let rates: Vec<f64> = repeats.iter().map(RunFigures::iops).collect();
        assert_eq!(rates, [1600.0, 2050.0]);
        let (median, spread) = median_spread(&rates).unwrap();
        assert_eq!(median, 2050.0);
        assert!((spread - 100.0 * 450.0 / 2050.0).abs() < 1e-9);
        // All idle, or none: kept as they are, nothing said.
        let mut none = vec![reads(0.0), reads(0.0)];
        assert_eq!(drop_idle(&mut none), None);
        assert_eq!(none.len(), 2);
        let mut all = vec![reads(5.0), reads(6.0)];
        assert_eq!(drop_idle(&mut all), None);
        assert_eq!(all.len(), 2);
    }

    fn file(text: &str) -> Vec<Section> {
        let mut out = Vec::new();
        let mut no_include = |_: &str, _: &str| Err("no include here".to_string());
        ssdready_core::jobfile::parse_into(text, None, &mut no_include, &|_| None, &mut out)
            .unwrap();
        out
    }

    #[test]
    fn a_jobs_first_file_is_named_as_fio_names_it() {
        // fio's examples/aio-read.fio: a directory, no filename.
        let f = file("[global]\nrw=randread\ndirectory=/data1:/data2\n[file1]\niodepth=4\n");
        assert_eq!(first_file(&f, 1).as_deref(), Some("/data1/file1.0.0"));
        let f = file("[j]\ndirectory=/d/\nfilename_format=$jobname-$filenum.dat\n");
        assert_eq!(first_file(&f, 0).as_deref(), Some("/d/j-0.dat"));
        // A filename is fio's own, in the directory.
        let f = file("[j]\ndirectory=/mnt\nfilename=ssd.test.file\n");
        assert_eq!(first_file(&f, 0).as_deref(), Some("/mnt/ssd.test.file"));
        // Neither: the built-in drive.
        assert_eq!(first_file(&file("[j]\nrw=read\n"), 0), None);
    }
}
