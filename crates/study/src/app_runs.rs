//! The study's "applications" section: after the raw sweeps, the
//! application workloads of `ssdready app` in the target's directory, each
//! at one and four jobs, set against the study's raw limit
//! (`crate::applications`). It runs when asked with
//! `--sweeps=applications` or in a full study: on a writable file target,
//! in its directory; on a block device the study may write, as root, in an
//! ext4 the study makes on it and removes afterwards ([`crate::appfs`]).
//! Each point's result is written beside study.json as `app-NAME-JOBS.json`; the workloads' files
//! are removed afterwards. Each workload starts only when it fits before
//! the budget's deadline; the first that does not ends the section.

use crate::applications::{self, AppFigure};
use crate::clock::Deadline;
use crate::model::Skip;
use crate::plan::APP_SETUP_S;
use ssdready_app::{Config, Workload};
use ssdready_measured::record::{TargetKind, TargetProfile};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Why the applications section, or one of its sweeps, does not run
/// (the skip's reason).
#[derive(Debug, thiserror::Error)]
pub enum NotRun {
    #[error(
        "{target} is not a file on a file system: application workloads need a directory (name a file on the mounted file system, e.g. MOUNT/ssdready.dat)"
    )]
    NotAFile { target: String },
    #[error("the target is not writable: {why}")]
    NotWritable { why: String },
    #[error("{0} (the workloads need a file system)")]
    NoFileSystem(crate::appfs::FsError),
    /// No memory cgroup for the cache effect.
    #[error(transparent)]
    Cgroup(#[from] ssdready_app::cgroup::CgroupError),
    /// The workload failed.
    #[error(transparent)]
    App(#[from] ssdready_app::Error),
}

/// Where the section runs, or why it does not.
pub fn directory(targets: &[TargetProfile]) -> Result<PathBuf, NotRun> {
    let t = &targets[0];
    if t.kind != TargetKind::File {
        return Err(NotRun::NotAFile {
            target: t.spec.clone(),
        });
    }
    if let Some(why) = &t.write_refusal {
        return Err(NotRun::NotWritable { why: why.clone() });
    }
    let dir = Path::new(&t.spec)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(dir.to_path_buf())
}

/// What the command line asked of the section.
pub struct Ask {
    /// Named in `--sweeps` (else: part of a full study).
    pub named: bool,
    /// A full study also runs pgbench, when PostgreSQL is installed.
    pub with_pgbench: bool,
    /// A full study also runs the cache effect (SQLite under memory
    /// cgroups: root and a memory controller needed).
    pub with_cache_effect: bool,
    pub runtime_s: f64,
    /// Each workload starts only when it fits before this; the first that
    /// does not ends the section, said as a skip.
    pub deadline: Deadline,
}

impl Ask {
    /// Seconds one workload at one job count takes: its set-up and run.
    pub fn workload_s(&self) -> f64 {
        APP_SETUP_S + self.runtime_s.max(1.0)
    }

    /// Whether `what`, `n` workloads' worth, fits before the deadline;
    /// else the skip that says so.
    fn fits(&self, n: f64, what: String) -> Result<(), Skip> {
        self.deadline
            .check(n * self.workload_s(), "it takes")
            .map_err(|why| Skip { what, why })
    }
}

/// Run the section; its points, or skips with reasons. `tell` hears
/// what starts (the binary prints it unless quiet); each result is
/// written in `out_dir`.
pub fn run(
    targets: &[TargetProfile],
    ask: &Ask,
    out_dir: &Path,
    stop: &Arc<AtomicBool>,
    tell: &dyn Fn(String),
    raw_iops: Option<f64>,
) -> (Vec<AppFigure>, Vec<Skip>) {
    let mut skipped = Vec::new();
    // A full study of the emulator has no file system to run in: nothing
    // to say unless the section was asked for.
    if !ask.named && targets[0].kind == TargetKind::Emulator {
        return (Vec::new(), skipped);
    }
    if let Err(s) = ask.fits(1.0, "applications".into()) {
        skipped.push(s);
        return (Vec::new(), skipped);
    }
    let (made, dir) = match workspace(targets) {
        Ok(w) => w,
        Err(why) => {
            skipped.push(Skip {
                what: "applications".into(),
                why: why.to_string(),
            });
            return (Vec::new(), skipped);
        }
    };
    let mut names = vec![Workload::Fdatasync, Workload::Sqlite, Workload::SmallFiles];
    if ask.with_pgbench {
        match ssdready_app::pgbench::find_tools() {
            Ok(_) => names.push(Workload::Pgbench),
            Err(e) => skipped.push(Skip {
                what: "applications: pgbench".into(),
                why: e.to_string(),
            }),
        }
    }
    let mut points = Vec::new();
    let mut out_of_time = false;
    'names: for w in names {
        for jobs in [1, 4] {
            if stop.load(Ordering::Relaxed) {
                return (points, skipped);
            }
            let what = format!("applications: {} at {jobs} jobs and what follows", w.name());
            if let Err(s) = ask.fits(1.0, what) {
                skipped.push(s);
                out_of_time = true;
                break 'names;
            }
            tell(format!("applications: {} with {jobs} jobs", w.name()));
            match point(w, jobs, &dir, ask, out_dir, stop, raw_iops) {
                Ok(f) => points.push(f),
                Err(s) => skipped.push(s),
            }
            let _ = ssdready_app::clean(&dir, w);
        }
    }
    if ask.with_cache_effect && !out_of_time {
        let (p, s) = cache_effects(&dir, ask, out_dir, stop, tell, raw_iops);
        points.extend(p);
        skipped.extend(s);
    }
    if let Some(mut m) = made {
        for e in m.remove() {
            skipped.push(Skip {
                what: "applications: the study's file system".into(),
                why: format!("not removed: {e}"),
            });
        }
    }
    (points, skipped)
}

/// Where the workloads run: a file system of the study's own on a block
/// device it may write (returned, to remove), else the target's directory.
fn workspace(targets: &[TargetProfile]) -> Result<(Option<crate::appfs::MadeFs>, PathBuf), NotRun> {
    if !crate::appfs::applies(&targets[0]) {
        return Ok((None, directory(targets)?));
    }
    let made = crate::appfs::make(&targets[0]).map_err(NotRun::NoFileSystem)?;
    let dir = made.dir().to_path_buf();
    Ok((Some(made), dir))
}

/// One workload at `jobs` jobs: its figure (its result written in
/// `out_dir`), or why it gave none.
fn point(
    w: Workload,
    jobs: u32,
    dir: &Path,
    ask: &Ask,
    out_dir: &Path,
    stop: &Arc<AtomicBool>,
    raw_iops: Option<f64>,
) -> Result<AppFigure, Skip> {
    let mut cfg = Config::new(w, dir.to_path_buf());
    cfg.jobs = jobs;
    cfg.runtime_ns = (ask.runtime_s.max(1.0) * 1e9) as u64;
    let what = format!("applications: {} at {jobs} jobs", w.name());
    let r = ssdready_app::run(&cfg, stop.clone()).map_err(|e| Skip {
        what,
        why: e.to_string(),
    })?;
    let file = format!("app-{}-{jobs}.json", w.name());
    let text = serde_json::to_string_pretty(&r.to_json()).expect("serialises") + "\n";
    let saved = save(out_dir, &file, &text);
    let mut f = figure(&r);
    f.result = saved.then_some(file);
    f.set_raw(raw_iops);
    Ok(f)
}

/// A cache effect's seconds, in workloads' worth: its runs at a few memory
/// limits share one set-up.
const CACHE_EFFECT_RUNS: f64 = 2.0;

/// The cache effect of SQLite always, and of PostgreSQL's server too when
/// it is installed: their figures, and skips with reasons.
fn cache_effects(
    dir: &Path,
    ask: &Ask,
    out_dir: &Path,
    stop: &Arc<AtomicBool>,
    tell: &dyn Fn(String),
    raw_iops: Option<f64>,
) -> (Vec<AppFigure>, Vec<Skip>) {
    let (mut points, mut skipped) = (Vec::new(), Vec::new());
    let mut ws = vec![Workload::Sqlite];
    if ask.with_pgbench && ssdready_app::pgbench::find_tools().is_ok() {
        ws.push(Workload::Pgbench);
    }
    for w in ws {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let what = format!("applications: cache effect ({})", w.name());
        if let Err(s) = ask.fits(CACHE_EFFECT_RUNS, what) {
            skipped.push(s);
            break;
        }
        match cache_effect(dir, w, ask, out_dir, stop, tell, raw_iops) {
            Ok(p) => points.extend(p),
            Err(why) => skipped.push(Skip {
                what: format!("applications: cache effect ({})", w.name()),
                why: why.to_string(),
            }),
        }
        let _ = ssdready_app::clean(dir, w);
    }
    (points, skipped)
}

/// SQLite (or pgbench's server) at memory limits that hold its data and
/// that do not (`ssdready app NAME --cache-effect`), one figure per limit
/// (`sqlite-cache-90m`, `pgbench-cache-90m`), the whole sweep written as
/// `app-NAME-cache.json`.
fn cache_effect(
    dir: &Path,
    w: Workload,
    ask: &Ask,
    out_dir: &Path,
    stop: &Arc<AtomicBool>,
    tell: &dyn Fn(String),
    raw_iops: Option<f64>,
) -> Result<Vec<AppFigure>, NotRun> {
    ssdready_app::cgroup::locate()?;
    let mut cfg = Config::new(w, dir.to_path_buf());
    cfg.cache_effect = true;
    cfg.runtime_ns = (ask.runtime_s.max(1.0) * 1e9) as u64;
    tell(format!(
        "applications: {} at memory limits (cache effect)",
        w.name()
    ));
    let c = ssdready_app::cache::sweep(&cfg, stop.clone())?;
    let file = &format!("app-{}-cache.json", w.name());
    // The study's rules read SQLite's points (applications::CACHE_PREFIX).
    let prefix = match w {
        Workload::Sqlite => applications::CACHE_PREFIX.to_string(),
        _ => format!("{}-cache-", w.name()),
    };
    let text = serde_json::to_string_pretty(&c).expect("serialises") + "\n";
    let saved = save(out_dir, file, &text);
    Ok(c.points
        .iter()
        .map(|p| {
            let mut f = AppFigure {
                name: format!("{prefix}{}m", (p.memory_max + (1 << 19)) >> 20),
                jobs: c.jobs,
                op: c.op.clone(),
                ops_per_s: p.ops_per_s,
                lat_p50_ns: p.lat_p50_ns,
                lat_p99_ns: p.lat_p99_ns,
                device: c.device.clone(),
                reads_per_op: p.reads_per_tx,
                writes_per_op: p.writes_per_tx,
                read_bytes_per_op: p.read_bytes_per_tx,
                note: c.device_note.clone(),
                memory_max: Some(p.memory_max),
                cached_share: Some(p.cached_share),
                result: saved.then(|| file.to_string()),
                ..Default::default()
            };
            f.set_raw(raw_iops);
            f
        })
        .collect())
}

fn figure(r: &ssdready_app::AppResult) -> AppFigure {
    let d = r.device.as_ref();
    AppFigure {
        name: r.name.clone(),
        jobs: r.jobs,
        op: r.op.clone(),
        ops_per_s: r.ops_per_s,
        lat_p50_ns: r.lat_ns.p50,
        lat_p99_ns: r.lat_ns.p99,
        device: d.map(|d| d.name.clone()),
        reads_per_op: d.map(|d| d.per_op.reads),
        writes_per_op: d.map(|d| d.per_op.writes),
        read_bytes_per_op: d.map(|d| d.per_op.read_bytes),
        write_bytes_per_op: d.map(|d| d.per_op.write_bytes),
        flushes_per_op: d.and_then(|d| d.per_op.flushes),
        write_amplification: d.and_then(|d| d.write_amplification),
        note: r.device_note.clone(),
        ..Default::default()
    }
}

/// Add the section to a judgement: figures, facts and verdicts.
pub fn add(j: &mut crate::Judgement, points: Vec<AppFigure>, interrupted: bool) {
    if points.is_empty() {
        return;
    }
    let (facts, verdicts) = applications::judge(&points, interrupted);
    j.facts.extend(facts);
    j.verdicts.extend(verdicts);
    j.figures.applications = points;
}

/// Write an application's result as `file` in the study's output
/// directory, made with its first file (the study only checked it can
/// be); whether it was written.
fn save(out_dir: &Path, file: &str, text: &str) -> bool {
    std::fs::create_dir_all(out_dir).is_ok()
        && ssdready_run::output::write_in(out_dir, file, text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(kind: TargetKind, spec: &str) -> TargetProfile {
        TargetProfile {
            spec: spec.into(),
            kind,
            ..Default::default()
        }
    }

    #[test]
    fn the_section_runs_in_a_file_targets_directory_and_says_why_not_elsewhere() {
        let t = target(TargetKind::File, "/mnt/data/ssdready.dat");
        assert_eq!(directory(&[t]).unwrap(), PathBuf::from("/mnt/data"));
        let t = target(TargetKind::File, "ssdready.dat");
        assert_eq!(directory(&[t]).unwrap(), PathBuf::from("."));
        let e = directory(&[target(TargetKind::Emulator, "emu:")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("need a directory"), "{e}");
        let mut t = target(TargetKind::File, "/data/f");
        t.write_refusal = Some("it exists".into());
        assert!(directory(&[t])
            .unwrap_err()
            .to_string()
            .contains("not writable: it exists"));
    }

    #[test]
    fn a_full_study_of_the_emulator_has_no_section_and_says_nothing() {
        let ask = Ask {
            named: false,
            with_pgbench: false,
            with_cache_effect: false,
            runtime_s: 1.0,
            deadline: Deadline::none(),
        };
        let told = std::cell::RefCell::new(Vec::new());
        let (points, skips) = run(
            &[target(TargetKind::Emulator, "emu:")],
            &ask,
            Path::new("/nonexistent"),
            &Arc::new(AtomicBool::new(false)),
            &|m| told.borrow_mut().push(m),
            None,
        );
        assert!(points.is_empty() && skips.is_empty() && told.borrow().is_empty());
    }

    #[test]
    fn a_named_section_on_the_emulator_is_a_skip_with_its_reason() {
        let ask = Ask {
            named: true,
            with_pgbench: false,
            with_cache_effect: false,
            runtime_s: 1.0,
            deadline: Deadline::none(),
        };
        let (points, skips) = run(
            &[target(TargetKind::Emulator, "emu:")],
            &ask,
            Path::new("/nonexistent"),
            &Arc::new(AtomicBool::new(false)),
            &|_| {},
            None,
        );
        assert!(points.is_empty());
        assert_eq!(skips.len(), 1);
        assert!(skips[0].why.contains("need a directory"), "{:?}", skips[0]);
    }
}
