//! fio beside the study of a job file: where fio is installed (a `fio` on
//! `PATH` that is not ssdready itself), the same job is run by fio too —
//! as written, with each mechanic of the application's I/O that gained,
//! and with the best configuration's changes — and the study's figures
//! are set against fio's ([`ssdready_diagnosis::limit::job::fio`]). fio
//! is started with the job file on its standard input and its JSON on
//! its output, inside the study's own groups (a change that moves the
//! study's process to groups of its own moves fio, started after it);
//! a stop or a run past its time kills it, with its jobs' processes, within
//! [`POLL`]. Each run
//! takes its share of the study's budget: none starts that would end
//! past it.
//!
//! Where fio cannot run the job (not installed, an emulated drive), the
//! study says why and goes on: fio is the check, not the study.

use crate::clock::RunBudget;
use crate::job;
use crate::session_parts::JobDoc;
use crate::trials::Change;
use ssdready_core::options::Section;
use ssdready_diagnosis::limit::job::best::{self, Best};
use ssdready_diagnosis::limit::job::fio::{self as judge, FioBeside};
use ssdready_diagnosis::limit::job::RunFigures;
use ssdready_diagnosis::trials::Measured;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a wait for fio looks at the study's stop and fio's end.
pub const POLL: Duration = Duration::from_millis(50);

/// What fio may take beyond the job's own length: starting, laying out a
/// file the job names.
const SLACK_S: f64 = 30.0;

/// The fio the study runs beside its own runs.
pub struct Fio {
    path: PathBuf,
    /// `fio-3.33`.
    pub version: String,
    /// fio's share of the study's budget, kept run by run.
    budget: RunBudget,
}

/// The fio on `PATH` for the job `sections` (as written), whose runs
/// must end before `deadline`; or why fio cannot check this job.
pub fn find(sections: &[Section], deadline: Instant, stop: &AtomicBool) -> Result<Fio, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    find_in(sections, &path, (deadline, stop))
}

/// [`find`] in the directories of `path` (as `PATH` lists them).
fn find_in(
    sections: &[Section],
    path: &std::ffi::OsStr,
    (deadline, stop): (Instant, &AtomicBool),
) -> Result<Fio, String> {
    let emulated = (0..sections.len())
        .filter(|&i| !sections[i].global)
        .any(|i| job::spec(sections, i).on_emulator());
    if emulated {
        return Err("the job runs on ssdready's emulated drive, which fio cannot open".into());
    }
    let path = on_path(path, "fio").ok_or("fio is not installed (no fio on PATH)")?;
    let out = run(&path, &["--version"], "", (stop, 10.0))?;
    let version = out.trim().to_string();
    if version.contains("ssdready") || !version.starts_with("fio-") {
        return Err(format!(
            "the fio on PATH ({}) answers {version:?}: it is not fio itself, so no check",
            path.display()
        ));
    }
    Ok(Fio {
        path,
        version,
        budget: RunBudget::new(deadline, 0.0),
    })
}

impl Fio {
    /// The same fio, its runs kept within `budget` (the study's end, a
    /// run taking what the job's runs take).
    pub fn lasting(mut self, budget: RunBudget) -> Fio {
        self.budget = budget;
        self
    }

    /// The job `sections` run once by fio: its figures, or why not.
    pub fn run(&mut self, sections: &[Section], stop: &AtomicBool) -> Result<RunFigures, String> {
        self.budget.allows().map_err(|why| format!("fio: {why}"))?;
        let text = ssdready_diagnosis::limit::job::best::render(sections, "");
        let at = Instant::now();
        let args = ["--output-format=json", "-"];
        let out = run(
            &self.path,
            &args,
            &text,
            (stop, self.budget.run_s() + SLACK_S),
        )?;
        self.budget.took(at.elapsed().as_secs_f64());
        judge::figures(&out).map_err(|e| e.to_string())
    }
}

/// The first executable file named `name` in the directories of `path`.
fn on_path(path: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path).map(|d| d.join(name)).find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// `path args`, `input` on its standard input: its standard output when
/// it exits cleanly; killed when `stop` is set or after `limit_s`.
fn run(
    path: &Path,
    args: &[&str],
    input: &str,
    (stop, limit_s): (&AtomicBool, f64),
) -> Result<String, String> {
    use std::os::unix::process::CommandExt;
    // A group of its own: fio forks a process per job, and a kill must
    // reach them all.
    let mut child = Command::new(path)
        .args(args)
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {}: {e}", path.display()))?;
    // fio reads its whole job file before it starts; a write it refuses
    // (it exited first) shows in its exit status and error output.
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(input.as_bytes());
    }
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let started = Instant::now();
    let status = loop {
        if stop.load(Relaxed) {
            kill(&mut child);
            return Err("fio was stopped with the study".into());
        }
        if started.elapsed().as_secs_f64() > limit_s {
            kill(&mut child);
            return Err(format!("fio ran past {limit_s:.0} s and was stopped"));
        }
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => {
                kill(&mut child);
                return Err(format!("waiting for fio: {e}"));
            }
        }
    };
    let (out, err) = (joined(out), joined(err));
    match status.success() {
        true => Ok(out),
        false => {
            let why = err
                .lines()
                .chain(out.lines())
                .find(|l| !l.trim().is_empty());
            Err(format!(
                "fio exited with {status}: {}",
                why.unwrap_or("no message")
            ))
        }
    }
}

type Drain = Option<std::thread::JoinHandle<String>>;

/// A pipe read to its end on a thread of its own (fio blocks on a full
/// pipe while it runs).
fn drain<R: Read + Send + 'static>(r: Option<R>) -> Drain {
    r.map(|mut r| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    })
}

fn joined(d: Drain) -> String {
    d.and_then(|h| h.join().ok()).unwrap_or_default()
}

/// Kill fio and its jobs' processes (its group) and reap it; its pipes
/// then end, and their readers.
fn kill(child: &mut Child) {
    use nix::sys::signal::{killpg, Signal};
    let group = nix::unistd::Pid::from_raw(child.id() as i32);
    if killpg(group, Signal::SIGKILL).is_err() {
        let _ = child.kill();
    }
    let _ = child.wait();
}

#[cfg(test)]
#[path = "fio_beside_tests.rs"]
mod tests;

/// The most mechanics fio checks (each an A/B pair of fio's runs).
pub const MECHANICS: usize = 3;

/// Pairs of turns fio runs of the best configuration.
pub const BEST_PAIRS: usize = 2;

/// Pairs of turns fio runs of the host's change that gained most.
pub const HOST_PAIRS: usize = 2;

/// The runs fio takes beside a job study, at most: the job as written,
/// [`MECHANICS`]' pairs, the host's best change's pairs, and the best
/// configuration's pairs and the whole set's where another was kept.
pub const RUNS: usize = 1 + 2 * MECHANICS + 2 * HOST_PAIRS + 4 * BEST_PAIRS;

/// fio beside the job study's steps: the fio found (or why not), what it
/// measured of the job as written, and the document's section.
pub struct Beside {
    fio: Result<Fio, String>,
    pub doc: FioBeside,
    /// The limits' line of a CPU quota the job runs under, if any.
    pub quota: Option<String>,
}

impl Beside {
    pub fn new(fio: Result<Fio, String>) -> Beside {
        let doc = match &fio {
            Ok(f) => FioBeside {
                version: f.version.clone(),
                ..Default::default()
            },
            Err(e) => FioBeside {
                error: Some(e.clone()),
                ..Default::default()
            },
        };
        Beside {
            doc,
            fio,
            quota: None,
        }
    }

    /// Whether fio runs beside the study.
    pub fn found(&self) -> bool {
        self.fio.is_ok()
    }

    /// fio's run of `sections`, or why not (kept as the section's error
    /// where it is the first).
    fn measure(&mut self, sections: &[Section], stop: &AtomicBool) -> Option<RunFigures> {
        let fio = self.fio.as_mut().ok()?;
        match fio.run(sections, stop) {
            Ok(f) => Some(f),
            Err(e) => {
                self.doc.error.get_or_insert(e);
                None
            }
        }
    }

    /// The job as written, run by fio, set against the study's repeats.
    pub fn as_written(
        &mut self,
        doc: &JobDoc,
        sections: &[Section],
        stop: &AtomicBool,
        tell: &mut dyn FnMut(String),
    ) {
        if !self.found() {
            return;
        }
        tell("fio: the job as written".into());
        let Some(f) = self.measure(sections, stop) else {
            return;
        };
        self.quota = (doc.limits.iter())
            .find(|l| l.starts_with("a CPU quota"))
            .cloned();
        let spread = (doc.median_iops, doc.spread_pct);
        let quota = self.quota.as_deref();
        let cpu: Vec<f64> = doc.repeats.iter().filter_map(|r| r.cpu_per_io_ns).collect();
        let own = ssdready_measured::curve::median(&cpu);
        let sessions = sessions_apart(doc, sections);
        let (line, agrees) = judge::as_written_line(
            spread,
            (&f, own),
            &self.doc.version,
            (quota, sessions.as_deref()),
        );
        let each = judge::jobs_line(&doc.repeats, &f, quota.is_some());
        self.doc.lines.extend([line].into_iter().chain(each));
        self.doc.as_written_agrees = Some(agrees);
        self.doc.as_written = Some(f);
    }

    /// Each mechanic the best configuration would carry (at most
    /// [`MECHANICS`]; a change of engine first, where ssdready's engines
    /// and fio's differ most), in one A/B turn by fio against the job as
    /// written: its gain by fio kept on the variant, one not confirmed
    /// left out of the best.
    pub fn mechanics(
        &mut self,
        doc: &mut JobDoc,
        sections: &[Section],
        stop: &Arc<AtomicBool>,
        tell: &mut dyn FnMut(String),
    ) {
        let Ok(fio) = self.fio.as_mut() else {
            return;
        };
        // Nothing to set a mechanic against where fio did not run the job.
        if self.doc.as_written.is_none() {
            return;
        }
        let mut options: Vec<String> = ssdready_diagnosis::limit::job::best::chosen(&doc.variants)
            .iter()
            .map(|v| v.option.clone())
            .collect();
        options.sort_by_key(|o| !o.starts_with("ioengine="));
        options.truncate(MECHANICS);
        let all = job::variants(sections);
        for o in options {
            let (Some(v), Some(w)) = (
                all.iter().find(|w| w.option == o),
                doc.variants.iter_mut().find(|v| v.option == o),
            ) else {
                continue;
            };
            if stop.load(Relaxed) {
                return;
            }
            tell(format!("fio: the job with {}, in turns", w.what));
            let mut sides = FioSides::new(fio, (sections, &v.sections), stop);
            let done = crate::trials::in_turns(&mut sides, &mut crate::trials::NoChange, 1);
            let (Some(base), Some(changed)) = (sides.of(false), sides.of(true)) else {
                self.doc.error.get_or_insert(done.error.unwrap_or_default());
                return;
            };
            let Some(g) = judge::gain_pct(base, changed, w.by_bandwidth) else {
                continue;
            };
            let (line, kept) = judge::mechanic_line(&w.what, w.gain_pct.unwrap_or(0.0), g);
            w.fio_gain_pct = kept;
            self.doc.lines.push(line);
        }
    }

    /// The host's change that gained most on the job (its trial first
    /// among those that gained, `host`'s section ranked best first), in
    /// [`HOST_PAIRS`] pairs of A/B turns by fio at the same point, made
    /// through the same `change`: fio's gain set beside the trial's
    /// interval.
    pub fn host(
        &mut self,
        trial: &ssdready_diagnosis::trials::Trial,
        sections: &[Section],
        change: &mut dyn Change,
        stop: &Arc<AtomicBool>,
    ) {
        use ssdready_diagnosis::levers::Metric;
        let by_bandwidth = match trial.measure {
            Metric::Iops => false,
            Metric::Bandwidth => true,
            _ => return,
        };
        let (Some(g), Ok(fio)) = (trial.main_gain(), self.fio.as_mut()) else {
            return;
        };
        if self.doc.as_written.is_none() {
            return;
        }
        let mut sides = FioSides::new(fio, (sections, sections), stop);
        let done = crate::trials::in_turns(&mut sides, change, HOST_PAIRS);
        if let Some(e) = done.error {
            self.doc.error.get_or_insert(e);
        }
        let pairs = best::pairs_pct(&done.turns, by_bandwidth);
        if pairs.is_empty() {
            return;
        }
        let fio_pct = ssdready_measured::curve::mean(&pairs);
        let (lo, hi) = g.interval();
        let quota = self.quota.as_deref();
        let (line, agrees) =
            judge::host_line(&trial.change(), (g.change_pct, lo, hi), &pairs, quota);
        self.doc.lines.push(line);
        self.doc.host = Some(judge::HostByFio {
            change: trial.change(),
            fio_gain_pct: fio_pct,
            agrees,
            turns: done.turns,
        });
    }

    /// The set `b` (`what`: the best configuration, or the whole set not
    /// kept), the job `jobs.1` with the host's `change` made, in
    /// [`BEST_PAIRS`] pairs by fio against `jobs.0`: fio's gain on `b`.
    pub fn best(
        &mut self,
        (what, b): (&str, &mut Best),
        jobs: (&[Section], &[Section]),
        change: &mut dyn Change,
        stop: &Arc<AtomicBool>,
    ) -> Option<bool> {
        let (Some(claimed), Ok(fio)) = (b.gain_pct, self.fio.as_mut()) else {
            return None;
        };
        let mut sides = FioSides::new(fio, jobs, stop);
        let done = crate::trials::in_turns(&mut sides, change, BEST_PAIRS);
        if let Some(e) = done.error {
            self.doc.error.get_or_insert(e);
        }
        if done.turns.is_empty() {
            return None;
        }
        b.fio_pairs_pct = best::pairs_pct(&done.turns, b.by_bandwidth);
        b.fio_gain_pct = judge::pairs_gain(&b.fio_pairs_pct);
        let quota = self.quota.as_deref();
        let (line, agrees) =
            judge::best_line((what, &b.pairs_pct), claimed, &b.fio_pairs_pct, quota);
        self.doc.lines.push(line);
        Some(agrees)
    }
}

/// fio's sides of an A/B turn: the job as written and the changed job,
/// each run's figures kept.
struct FioSides<'a> {
    fio: &'a mut Fio,
    jobs: (&'a [Section], &'a [Section]),
    stop: &'a Arc<AtomicBool>,
    figures: Vec<(bool, RunFigures)>,
}

impl<'a> FioSides<'a> {
    fn new(
        fio: &'a mut Fio,
        jobs: (&'a [Section], &'a [Section]),
        stop: &'a Arc<AtomicBool>,
    ) -> Self {
        FioSides {
            fio,
            jobs,
            stop,
            figures: Vec::new(),
        }
    }

    /// The figures of the changed side's run (`changed`) or the baseline's.
    fn of(&self, changed: bool) -> Option<&RunFigures> {
        self.figures.iter().find(|f| f.0 == changed).map(|f| &f.1)
    }
}

impl crate::trials::Sides for FioSides<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Relaxed)
    }

    fn measure(&mut self, changed: bool) -> Result<Measured, String> {
        let job = if changed { self.jobs.1 } else { self.jobs.0 };
        let f = self.fio.run(job, self.stop)?;
        let m = f.measured();
        self.figures.push((changed, f));
        Ok(m)
    }
}

/// The other work at a lower priority in the study's own session
/// ([`ssdready_diagnosis::limit::others::lower_in_own_group`], each at
/// the most it took in the job's runs), where fio runs the job as processes (no section sets
/// `thread`), each starting a session of its own, and the study's
/// scheduling group is its session's autogroup: fio's processes then meet
/// that work as another group. None otherwise.
fn sessions_apart(doc: &JobDoc, sections: &[Section]) -> Option<String> {
    let threads = sections
        .iter()
        .flat_map(|s| &s.options)
        .any(|o| o.key == "thread" && o.value.as_deref() != Some("0"));
    let own = ssdready_probe::sched_group::of(std::process::id())?;
    if threads || !own.starts_with("autogroup:") {
        return None;
    }
    // Each process named once, at the most it took in any of the runs.
    let mut busiest: Vec<_> = doc
        .points
        .iter()
        .filter_map(|r| r.summary.cpu.as_ref())
        .flat_map(|c| &c.busiest_threads)
        .collect();
    busiest.sort_by(|a, b| b.cpus.total_cmp(&a.cpus));
    ssdready_diagnosis::limit::others::lower_in_own_group(busiest)
}
