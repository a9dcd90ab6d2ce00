//! `ssdready server-job` (hidden, [`COMMAND`]): one client's job, checked
//! or run in a process of its own that `ssdready server` starts for it.
//!
//! Before it reads anything the process takes its limits and, when the
//! server is root and the client is another local user, that user's uid,
//! gid and groups ([`crate::confine`]): from then on the kernel decides every
//! access the job makes, as for a job the user ran. It is then confined to
//! the places the operator allowed (Landlock), so that even a job that runs
//! with the server's rights (a client on another host, root, the server's
//! own user) opens nothing elsewhere, whatever a name was swapped for
//! between a check and an open. Its order (the policy, the job) comes on
//! standard input as JSON; what it answers goes to standard output: one
//! JSON line for a check (`plan`), the results as the protocol's messages
//! for a run.
//!
//! The job's files and their includes never touch the disk as files of the
//! server: the job texts are parsed from memory, an include is resolved
//! from the file that holds it (the server's work directory for the
//! client's own texts), checked against the policy by name, opened without
//! blocking (a FIFO or a device is refused), and checked again by what was
//! opened, all in one place ([`ServerFiles`]).

use crate::confine;
use serde::{Deserialize, Serialize};
use ssdready_cmdline::args;
use ssdready_core::jobfile::Included;
use ssdready_fleet::iolog::{self, IoLog, STORE_COMPRESSED};
use ssdready_fleet::policy::{Policy, Users};
use ssdready_fleet::server::RunOutput;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// The hidden subcommand of this program that [`crate::spawn`] starts
/// for each job: its `main` hands it to [`take_rights`], [`read_order`]
/// and [`answer`].
pub const COMMAND: &str = "server-job";

/// What the job's process takes before it reads anything: its limits and,
/// when the server gives it one, the client's user.
#[derive(Clone, Debug, Default)]
pub struct Rights {
    /// Run as this user (the server is root and the client is that user).
    pub uid: Option<u32>,
    /// Its group (the uid's own when not given).
    pub gid: Option<u32>,
    /// Its supplementary groups.
    pub groups: Vec<u32>,
    /// The memory the job may use, bytes (`RLIMIT_DATA`).
    pub memory: u64,
    /// The files the job may hold open (`RLIMIT_NOFILE`).
    pub files: u64,
}

/// Why a job's process ends without its answer (it then exits 1; the
/// server reads the last line of its standard error).
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("server job: {0}")]
    Limits(String),
    #[error("server job: {0}")]
    User(String),
    /// The server ended before the job could tie its life to it: nothing
    /// to say, nobody to say it to.
    #[error("server job: the server has ended")]
    ServerGone,
    #[error("server job: reading the order: {0}")]
    ReadOrder(std::io::Error),
    #[error("server job: the order: {0}")]
    Order(serde_json::Error),
    #[error("server job: answering the server: {0}")]
    Answer(String),
}

/// Check the job (answer: how many result blocks it sends), or run it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    Plan,
    Run,
}

/// What the server asks of the job's process.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Order {
    pub mode: Mode,
    /// The client's job line and job files' texts.
    pub args: Vec<String>,
    pub jobs: Vec<String>,
    /// The protocol version of the results, and whether logs go compressed.
    pub version: u16,
    pub zlib: bool,
    /// The job's working directory (relative names land there).
    pub work: PathBuf,
    /// The places the job may use: directories (the working one among
    /// them) and devices, canonical.
    pub dirs: Vec<PathBuf>,
    pub devices: Vec<PathBuf>,
    /// Whether commands are allowed (`--allow-exec`): the job is then not
    /// confined to the places (a command could not run confined).
    pub exec: bool,
    /// Whether the client is root: only then may the job raise its
    /// priority.
    pub root_client: bool,
    /// Whether the job keeps the server's rights for a client who is not
    /// the server's user (nor root): it must then be confined, or not run.
    pub confine_required: bool,
    /// The most workers (threads doing I/O), and files, a job may have.
    pub max_workers: u64,
    pub max_files: u64,
}

/// The answer to a check.
#[derive(Debug, Serialize, Deserialize)]
pub enum Planned {
    Jobs(u32),
    Refused(String),
}

/// The largest order read (the job files, at most 16 MiB each, and some).
const MAX_ORDER: u64 = 256 << 20;

/// Take the job's limits and, when given, the client's user; then tie the
/// process's life to the server's (a server killed outright takes its jobs
/// with it).
pub fn take_rights(r: &Rights) -> Result<(), JobError> {
    confine::limits(r.memory, r.files).map_err(JobError::Limits)?;
    if let Some(uid) = r.uid {
        let gid = r.gid.unwrap_or(uid);
        confine::become_user(uid, gid, &r.groups).map_err(JobError::User)?;
    }
    match confine::end_with_parent() {
        true => Ok(()),
        false => Err(JobError::ServerGone),
    }
}

/// The server's order, from standard input (at most [`MAX_ORDER`] bytes).
pub fn read_order() -> Result<Order, JobError> {
    let mut text = String::new();
    std::io::stdin()
        .take(MAX_ORDER)
        .read_to_string(&mut text)
        .map_err(JobError::ReadOrder)?;
    serde_json::from_str(&text).map_err(JobError::Order)
}

/// Check or run the job of `order` (stopped by `stop`), and answer the
/// server on standard output: one JSON line for a check, the results as
/// the protocol's messages for a run (its sample logs kept below what
/// `memory`, the job's memory limit, can hold).
pub fn answer(order: &Order, memory: u64, stop: Arc<AtomicBool>) -> Result<(), JobError> {
    let prepared = prepare(order);
    let mut out = std::io::stdout().lock();
    let written = match order.mode {
        Mode::Plan => {
            let answer = match prepared.and_then(|()| resolved(order, stop).map_err(|e| e.1)) {
                Ok((_, n)) => Planned::Jobs(n as u32),
                Err(e) => Planned::Refused(e),
            };
            let line = serde_json::to_string(&answer).unwrap_or_default();
            writeln!(out, "{line}").map_err(|e| e.to_string())
        }
        Mode::Run => {
            let result = match prepared {
                Ok(()) => run(order, stop, memory),
                Err(e) => failed(1, e),
            };
            ssdready_fleet::server::write_results(&mut out, order.version, order.zlib, &result)
                .map_err(|e| e.to_string())
        }
    };
    written
        .and_then(|()| out.flush().map_err(|e| e.to_string()))
        .map_err(JobError::Answer)
}

/// Into the working directory, and confined to the allowed places.
fn prepare(order: &Order) -> Result<(), String> {
    std::env::set_current_dir(&order.work)
        .map_err(|e| format!("the job's directory {}: {e}", order.work.display()))?;
    if order.exec {
        return Ok(());
    }
    let enforced = confine::confine(&order.dirs, &order.devices)?;
    if !enforced && order.confine_required {
        return Err(
            "this kernel does not enforce Landlock, so a job that runs with this \
                    server's rights for another client cannot be kept to the allowed places \
                    (needs Linux 5.13 or later with Landlock enabled): refused"
                .into(),
        );
    }
    Ok(())
}

fn policy(order: &Order) -> Policy {
    Policy {
        dirs: order.dirs.clone(),
        devices: order.devices.clone(),
        exec: order.exec,
        users: Users::All,
    }
}

/// Where a client's job files and includes come from: the texts it sent
/// (as if they were files in the job's working directory), and included
/// files in the allowed places.
struct ServerFiles<'a> {
    order: &'a Order,
    policy: Policy,
    stop: &'a AtomicBool,
}

impl args::Source for ServerFiles<'_> {
    fn job_file(&mut self, arg: &str) -> Result<(String, String), String> {
        let i: usize = arg
            .strip_prefix("job-file-")
            .and_then(|n| n.parse().ok())
            .filter(|i| *i >= 1 && *i <= self.order.jobs.len())
            .ok_or_else(|| format!("'{arg}': not a job file the client sent"))?;
        let path = self.order.work.join(arg);
        Ok((self.order.jobs[i - 1].clone(), path.display().to_string()))
    }

    fn include(&mut self, name: &str, from: &str) -> Result<Included, String> {
        if self.stop.load(Relaxed) {
            return Err("interrupted".into());
        }
        let path = args::beside(name, from);
        let outside = || {
            format!(
                "outside the places this server allows ({})",
                self.policy.places()
            )
        };
        self.policy.check_include(&path).map_err(|_| outside())?;
        let text = confine::read_checked(&path, &self.policy)?;
        Ok(Included {
            label: name.to_string(),
            text,
            path: path.display().to_string(),
        })
    }
}

fn in_job(job: &str, e: String) -> String {
    if job == "global" {
        e
    } else {
        format!("job '{job}': {e}")
    }
}

/// The client's job parsed from its texts and line, every option checked
/// against the policy.
fn checked(order: &Order) -> Result<args::RunArgs, String> {
    let policy = policy(order);
    let line = policy.job_args(&order.args).map_err(|e| e.to_string())?;
    let mut all: Vec<String> = (1..=order.jobs.len())
        .map(|i| format!("job-file-{i}"))
        .collect();
    all.extend(line);
    let stop = ssdready_run::stop::flag();
    let mut files = ServerFiles {
        order,
        policy: policy.clone(),
        stop: &stop,
    };
    let mut parsed = args::parse_from(&all, &mut files).map_err(|e| e.to_string())?;
    parsed.quiet = true;
    parsed.eta = args::Eta::Never;
    parsed.allow_destructive = false;
    parsed.output = None;
    parsed.report = None;
    parsed.save = false;
    parsed.db = None;
    for s in &parsed.sections {
        for o in &s.options {
            let value = o.value.as_deref();
            policy
                .check_option(&o.key, value, &order.work)
                .map_err(|e| in_job(&s.name, e.to_string()))?;
            if !order.root_client {
                Policy::check_priority(&o.key, value)
                    .map_err(|e| in_job(&s.name, e.to_string()))?;
            }
        }
    }
    Ok(parsed)
}

/// The request checked, parsed and resolved: its jobs (or the error code
/// and the refusal).
fn resolved(
    order: &Order,
    stop: Arc<AtomicBool>,
) -> Result<(ssdready_run::RunRequest, usize), (u32, String)> {
    let parsed = checked(order).map_err(|e| (1, e))?;
    let request = parsed.request(stop);
    let specs = ssdready_run::resolve(
        &request,
        ssdready_emu::memory::TimeBase::Real,
        &mut ssdready_run::SilentObserver,
    )
    .map_err(|f| (22, f.message().to_string()))?;
    check_size(order, &specs).map_err(|e| (1, e))?;
    check_targets(&policy(order), &specs).map_err(|e| (1, e))?;
    Ok((request, specs.len()))
}

/// The job's workers and files within the server's limits.
fn check_size(order: &Order, specs: &[ssdready_core::spec::JobSpec]) -> Result<(), String> {
    let workers: u64 = specs.iter().map(|s| u64::from(s.numjobs.max(1))).sum();
    if workers > order.max_workers {
        return Err(format!(
            "the jobs have {workers} workers in all (numjobs added up); this server allows \
             {} (its operator sets --job-threads)",
            order.max_workers
        ));
    }
    let files: u64 = specs
        .iter()
        .map(|s| u64::from(s.numjobs.max(1)).saturating_mul(s.files_per_clone()))
        .sum();
    if files > order.max_files {
        return Err(format!(
            "the jobs use {files} files in all (nrfiles or filename, times numjobs); this \
             server allows {} (its operator sets --job-files)",
            order.max_files
        ));
    }
    Ok(())
}

/// Every file the jobs will use lies in an allowed place (by name: what is
/// opened is the kernel's to decide, see the module doc).
fn check_targets(policy: &Policy, specs: &[ssdready_core::spec::JobSpec]) -> Result<(), String> {
    use ssdready_workload::fileset::{self, PathInfo};
    let info = |p: &str| match std::fs::metadata(p) {
        Ok(md) => PathInfo {
            exists: true,
            regular: md.is_file(),
            size: md.len(),
        },
        Err(_) => PathInfo::default(),
    };
    let list = |d: &str| -> Result<Vec<String>, String> {
        policy
            .check_path(Path::new(d), "option 'opendir'")
            .map_err(|e| e.to_string())?;
        Ok(Vec::new())
    };
    for s in specs {
        if s.ioengine == ssdready_core::spec::EngineKind::Null
            || (s.on_emulator() && s.filename.is_empty())
        {
            continue;
        }
        for clone in 0..s.numjobs.max(1) {
            let names = fileset::names(s, clone, &info, &list).map_err(|e| e.to_string())?;
            for n in names
                .iter()
                .filter(|n| *n != "emu" && !n.starts_with("emu:"))
            {
                policy
                    .check_path(Path::new(n), "target")
                    .map_err(|e| in_job(&s.name, e.to_string()))?;
            }
        }
    }
    Ok(())
}

fn failed(error: u32, text: String) -> RunOutput {
    RunOutput {
        error,
        text: format!("ssdready: {text}\n"),
        ..Default::default()
    }
}

/// Tests only: with `SSDREADY_SERVER_JOB_HOOK=DIR`, a run that has
/// checked its job makes `DIR/checked` and waits for `DIR/go` before it
/// opens anything, so that a test can swap a name between the check and
/// the open without a race.
fn hook(stop: &AtomicBool) {
    let Some(dir) = std::env::var_os("SSDREADY_SERVER_JOB_HOOK").map(PathBuf::from) else {
        return;
    };
    let _ = std::fs::write(dir.join("checked"), b"");
    while !dir.join("go").exists() && !stop.load(Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Run the job: its results as they go back to the client.
fn run(order: &Order, stop: Arc<AtomicBool>, memory: u64) -> RunOutput {
    let mut request = match resolved(order, stop.clone()) {
        Ok((r, _)) => r,
        Err((code, e)) => return failed(code, e),
    };
    hook(&stop);
    // The jobs' logs go to the client, as fio's server sends them.
    let sink = ssdready_run::LogSink::default();
    request.log_sink = Some(sink.clone());
    request.log_samples_max = Some(ssdready_fleet::bounds::log_samples(memory));
    let result = match ssdready_run::execute(request, &mut ssdready_run::SilentObserver) {
        Ok(r) => r,
        Err(f) => return failed(f.exit_code() as u32, f.message().to_string()),
    };
    let worker_logs = std::mem::take(&mut *sink.lock().unwrap_or_else(|p| p.into_inner()));
    let logs = match to_wire(worker_logs, order.version) {
        Ok(l) => l,
        Err(e) => return failed(70, e.to_string()),
    };
    let mut text: String = result
        .warnings
        .iter()
        .filter(|w| w.contains("is not sent to the client"))
        .map(|w| format!("ssdready: {w}\n"))
        .collect();
    // A job's own error in full (fio's thread_stat keeps 128 bytes of it).
    let errors = result
        .jobs
        .iter()
        .filter_map(|j| j.raw.first_error.as_ref());
    text.extend(errors.map(|e| format!("ssdready: {e}\n")));
    text.extend(result.failure.as_ref().map(|f| format!("ssdready: {f}\n")));
    match ssdready_fleet::from_result::fio_results(&result, order.version) {
        Ok((ts, groups)) => RunOutput {
            ts,
            groups,
            error: u32::from(result.failure.is_some()),
            text,
            logs,
            du: ssdready_fleet::from_result::disk_util(&result),
            global_options: result.global_options.clone(),
            encoded: None,
        },
        Err(e) => failed(70, e.to_string()),
    }
}

/// The run's worker logs as IOLOG messages of protocol `version`
/// (their samples come in fio 3.33's layout, version 97's).
fn to_wire(
    logs: Vec<ssdready_run::WorkerLog>,
    version: u16,
) -> Result<Vec<IoLog>, ssdready_fleet::Error> {
    logs.into_iter()
        .map(|w| {
            let mut l = IoLog {
                nr_samples: w.nr_samples,
                thread_number: w.number,
                log_type: w.log_type,
                compressed: if w.stored_compressed {
                    STORE_COMPRESSED
                } else {
                    0
                },
                per_job_logs: 1,
                name: w.name,
                data: w.data,
                ..Default::default()
            };
            if version != 97 && !w.stored_compressed {
                l.data = iolog::encode_samples(version, &l.samples(97)?)?;
            }
            Ok(l)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An order for the job line `args` and job files `jobs`, working in
    /// `work`, the one allowed place.
    fn order(work: &Path, args: &[&str], jobs: &[&str]) -> Order {
        Order {
            mode: Mode::Plan,
            args: args.iter().map(|a| a.to_string()).collect(),
            jobs: jobs.iter().map(|j| j.to_string()).collect(),
            version: 97,
            zlib: false,
            work: work.to_path_buf(),
            dirs: vec![work.to_path_buf()],
            devices: Vec::new(),
            exec: false,
            root_client: false,
            confine_required: true,
            max_workers: 4,
            max_files: 16,
        }
    }

    #[test]
    fn a_log_outside_the_allowed_places_is_refused_naming_its_job() {
        let d = tempfile::tempdir().unwrap();
        // A job's targets are checked once resolved (`check_targets`);
        // the options that name other files, as written.
        let job = "[x]\nrw=read\nsize=4k\nwrite_iolog=/etc/shadow\n";
        let e = checked(&order(d.path(), &[], &[job])).unwrap_err();
        assert!(e.starts_with("job 'x': "), "{e}");
        assert!(
            e.contains("is outside the places this server allows"),
            "{e}"
        );
        let inside = format!(
            "[x]\nrw=read\nsize=4k\nwrite_iolog={}/f\n",
            d.path().display()
        );
        assert!(checked(&order(d.path(), &[], &[&inside])).is_ok());
    }

    #[test]
    fn an_include_outside_the_places_is_refused_before_it_is_read() {
        let d = tempfile::tempdir().unwrap();
        let job = "[x]\ninclude /etc/shadow\nrw=read\nsize=4k\n";
        let e = checked(&order(d.path(), &[], &[job])).unwrap_err();
        assert!(e.contains("outside the places this server allows"), "{e}");
    }

    #[test]
    fn only_a_root_client_may_raise_a_jobs_priority() {
        let d = tempfile::tempdir().unwrap();
        let job = "[x]\nrw=read\nsize=4k\nnice=-5\n";
        let mut o = order(d.path(), &[], &[job]);
        let e = checked(&o).unwrap_err();
        assert!(e.contains("raises the job's priority"), "{e}");
        o.root_client = true;
        assert!(checked(&o).is_ok());
    }
}
