//! `read_iolog` and `write_iolog` before a run: every trace a job replays
//! is read through once (a bad one is bad input: one line naming the file
//! and the line or record, exit code 2), blktraces are merged when
//! `merge_blktrace_file` asks, and the job takes its directions, block
//! sizes, size, depth and targets from what the traces hold, as fio does
//! ([`ssdready_workload::replay::Summary::apply`]). A trace's files become the
//! job's targets — its file names, or for a blktrace the block devices
//! with its major:minor numbers on this machine — unless `replay_redirect`
//! names one target for everything (an `emu:` target replays with no root
//! and no device). The workers read the traces again when they start
//! ([`open`]).

use ssdready_core::spec::JobSpec;
use ssdready_workload::replay::blktrace::{self, BlkTrace};
use ssdready_workload::replay::text::TextLog;
use ssdready_workload::replay::{adjust, cursor, Entries, FileKey, IologSpec, Summary, TraceError};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

/// A trace that cannot be replayed, or a replay's file that cannot be
/// written: one line naming the option, the file and the line or record.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// One of the others, for job `job`.
    #[error("job '{job}': {err}")]
    InJob { job: String, err: Box<ReplayError> },
    #[error(
        "option 'write_iolog': {clones} clones (numjobs) would write {files} file(s) (allowed: one file per clone, names separated by ':')"
    )]
    TooFewNames { clones: u32, files: usize },
    /// A destination the output checks refused.
    #[error(transparent)]
    Output(#[from] crate::output::OutputError),
    /// A trace that cannot be read through.
    #[error("option 'read_iolog': {err}")]
    ReadIolog { err: Box<ReplayError> },
    /// `traces`: their names, comma-separated.
    #[error(
        "option 'read_iolog': {traces} has no request to replay{}",
        if *.skipped { " (after replay_skip)" } else { "" }
    )]
    NothingToReplay { traces: String, skipped: bool },
    #[error(
        "option 'read_iolog': the trace's device {major}:{minor} is not on this machine \
         (give replay_redirect=TARGET: a file, a device, or emu:PRESET to replay on the emulator)"
    )]
    DeviceNotHere { major: u32, minor: u32 },
    #[error("option 'merge_blktrace_file': {name}: {err}")]
    MergeRead { name: String, err: std::io::Error },
    #[error("option 'merge_blktrace_file': {err}")]
    Merge { err: TraceError },
    #[error("option 'merge_blktrace_file': {out}: name a regular file")]
    MergeNotFile { out: String },
    #[error("option 'merge_blktrace_file': writing {}: {err}", .path.display())]
    MergeWrite { path: PathBuf, err: std::io::Error },
    /// A trace file that could not be opened or read.
    #[error("{name}: {err}")]
    Open { name: String, err: std::io::Error },
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// A file the run must write before it starts (a merged blktrace).
pub struct PendingWrite {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// Read every job's traces and set the job up from them; see the module
/// docs. Returns the merged traces to write once every check has passed.
pub fn prepare(specs: &mut [JobSpec]) -> Result<Vec<PendingWrite>, ReplayError> {
    let mut pending = Vec::new();
    for s in specs.iter_mut() {
        let job = s.name.clone();
        let in_job = |err: ReplayError| ReplayError::InJob {
            job: job.clone(),
            err: Box::new(err),
        };
        check_write_names(s).map_err(in_job)?;
        if s.iolog.read.is_empty() {
            continue;
        }
        let merged = merge(&s.iolog).map_err(in_job)?;
        if let Some(m) = &merged {
            s.iolog.read = vec![m.path.to_string_lossy().into_owned()];
        }
        let mut summary = Summary::default();
        let traces = s.iolog.read.len().min(s.numjobs.max(1) as usize);
        for name in &s.iolog.read[..traces] {
            let bytes = merged.as_ref().map(|m| m.bytes.as_slice());
            summarize(name, bytes, &s.iolog, &mut summary)
                .map_err(|e| in_job(ReplayError::ReadIolog { err: Box::new(e) }))?;
        }
        if summary.is_empty() {
            return Err(in_job(ReplayError::NothingToReplay {
                traces: s.iolog.read[..traces].join(", "),
                skipped: s.iolog.skip != Default::default(),
            }));
        }
        match &s.iolog.redirect {
            Some(r) => s.filename = vec![r.clone()],
            None => {
                let keys: Vec<FileKey> = summary.files.iter().map(|f| f.0.clone()).collect();
                s.filename = keys
                    .iter()
                    .map(target_of)
                    .collect::<Result<_, _>>()
                    .map_err(in_job)?;
                s.iolog.files = keys;
            }
        }
        s.nrfiles = 1;
        summary.apply(s);
        pending.extend(merged);
    }
    Ok(pending)
}

/// `write_iolog`: each clone writes its own file.
fn check_write_names(s: &JobSpec) -> Result<(), ReplayError> {
    let Some(w) = &s.iolog.write else {
        return Ok(());
    };
    let names = write_names(w);
    if s.numjobs as usize > names.len() {
        return Err(ReplayError::TooFewNames {
            clones: s.numjobs,
            files: names.len(),
        });
    }
    for (i, n) in names.iter().take(s.numjobs as usize).enumerate() {
        crate::output::check(Path::new(n), &format!("option 'write_iolog' (clone {i})"))?;
    }
    Ok(())
}

fn write_names(w: &str) -> Vec<String> {
    w.split(':')
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// The file clone `clone` of `spec` records its requests in, if any.
pub fn record_path(spec: &JobSpec, clone: u32) -> Option<String> {
    let names = write_names(spec.iolog.write.as_deref()?);
    names.get(clone as usize).cloned()
}

/// The target a trace's file is on this machine: a text log's file as
/// named, a blktrace's device by its numbers.
fn target_of(k: &FileKey) -> Result<String, ReplayError> {
    match k {
        FileKey::Name(n) => Ok(n.clone()),
        FileKey::Dev(_) => {
            let (maj, min) = k.major_minor().unwrap_or_default();
            ssdready_io::target::sysfs::DevNode::from_major_minor(maj, min)
                .map(|d| format!("/dev/{}", d.name))
                .ok_or(ReplayError::DeviceNotHere {
                    major: maj,
                    minor: min,
                })
        }
    }
}

/// The merged blktrace of `merge_blktrace_file`, when asked.
fn merge(io: &IologSpec) -> Result<Option<PendingWrite>, ReplayError> {
    let Some(out) = &io.merge_file else {
        return Ok(None);
    };
    let what = "option 'merge_blktrace_file'";
    let mut inputs = Vec::new();
    for name in &io.read {
        let bytes = ssdready_io::written::read_file_capped(
            Path::new(name),
            MAX_STREAM_BYTES,
            &crate::stop::flag(),
        )
        .map_err(|err| ReplayError::MergeRead {
            name: name.clone(),
            err,
        })?;
        inputs.push((name.clone(), bytes));
    }
    let bytes = blktrace::merge(&inputs, &io.merge_scalars, &io.merge_iters)
        .map_err(|err| ReplayError::Merge { err })?;
    let sink = crate::output::check(Path::new(out), what)?;
    let path = match sink {
        crate::output::Sink::File(p) => p,
        _ => return Err(ReplayError::MergeNotFile { out: out.clone() }),
    };
    Ok(Some(PendingWrite { path, bytes }))
}

/// Write the merged traces (after every check passed).
pub fn write_pending(pending: &[PendingWrite]) -> Result<(), ReplayError> {
    for p in pending {
        crate::output::replace(&p.path, &p.bytes).map_err(|err| ReplayError::MergeWrite {
            path: p.path.clone(),
            err,
        })?;
    }
    Ok(())
}

/// Go through trace `name` (or `bytes`, already in memory) into `summary`.
fn summarize(
    name: &str,
    bytes: Option<&[u8]>,
    io: &IologSpec,
    summary: &mut Summary,
) -> Result<(), ReplayError> {
    let (mut entries, depth) = match bytes {
        Some(b) => reader(name, Box::new(std::io::Cursor::new(b.to_vec())))?,
        None => open_entries(name)?,
    };
    for e in entries.by_ref() {
        let e = e?;
        if let Some(e) = adjust(io, e) {
            summary.add(&e);
        }
    }
    drop(entries);
    if let Some(d) = depth.and_then(|d| d.lock().ok().map(|d| *d)) {
        summary.depth = Some(summary.depth.unwrap_or(0).max(d));
    }
    Ok(())
}

/// The depth a blktrace reader found, read once it is done.
type Depth = Option<std::sync::Arc<std::sync::Mutex<u32>>>;

fn open_entries(name: &str) -> Result<(Entries, Depth), ReplayError> {
    if let Some(b) = streams().get(name) {
        return reader(name, Box::new(std::io::Cursor::new(b.clone())));
    }
    let open_err = |err| ReplayError::Open {
        name: name.to_string(),
        err,
    };
    let f = ssdready_io::written::open_waiting(Path::new(name), false, &crate::stop::flag())
        .map_err(open_err)?;
    if !is_fifo(&f) {
        return reader(name, Box::new(f));
    }
    // A pipe (`<(…)`) can be read once only: what it held is kept for the
    // workers, which read every trace again when they start.
    let bytes: std::sync::Arc<[u8]> = ssdready_io::written::read_capped(f, MAX_STREAM_BYTES, name)
        .map_err(open_err)?
        .into();
    streams().insert(name.to_string(), bytes.clone());
    reader(name, Box::new(std::io::Cursor::new(bytes)))
}

/// The most a trace read from a pipe may hold (it is kept in memory).
const MAX_STREAM_BYTES: u64 = 1 << 30;

fn is_fifo(f: &std::fs::File) -> bool {
    use std::os::unix::fs::FileTypeExt;
    f.metadata().is_ok_and(|m| m.file_type().is_fifo())
}

/// Traces read from pipes, by name.
fn streams(
) -> std::sync::MutexGuard<'static, std::collections::HashMap<String, std::sync::Arc<[u8]>>> {
    static S: std::sync::OnceLock<
        std::sync::Mutex<std::collections::HashMap<String, std::sync::Arc<[u8]>>>,
    > = std::sync::OnceLock::new();
    S.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// A reader of either format, told apart by the blktrace magic (as fio).
fn reader(name: &str, mut r: Box<dyn Read + Send>) -> Result<(Entries, Depth), ReplayError> {
    let mut head = vec![0u8; blktrace::RECORD];
    let mut got = 0;
    while got < head.len() {
        match r.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(err) => {
                return Err(ReplayError::Open {
                    name: name.to_string(),
                    err,
                })
            }
        }
    }
    head.truncate(got);
    let chained = BufReader::new(std::io::Cursor::new(head.clone()).chain(r));
    if let Some(big) = blktrace::detect(&head) {
        let depth = std::sync::Arc::new(std::sync::Mutex::new(1));
        let shared = depth.clone();
        let mut t = BlkTrace::new(chained, name, big);
        let it = std::iter::from_fn(move || {
            let e = t.next();
            if let Ok(mut d) = shared.lock() {
                *d = t.depth();
            }
            e
        });
        return Ok((Box::new(it), Some(depth)));
    }
    let log = TextLog::open(chained, name)?;
    Ok((Box::new(log), None))
}

/// The entries clone `clone` of `spec` replays: read whole now, or as the
/// replay goes with `read_iolog_chunked`. None when the job replays nothing.
pub fn open(spec: &JobSpec, clone: u32) -> Option<Result<Entries, String>> {
    let name = spec.iolog.trace_for(clone)?;
    let opened = open_entries(name).and_then(|(entries, _)| {
        if spec.iolog.chunked {
            return Ok(entries);
        }
        let all = entries.collect::<Result<Vec<_>, _>>()?;
        Ok(cursor::from_vec(all))
    });
    Some(opened.map_err(|e| e.to_string()))
}
