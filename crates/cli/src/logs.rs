//! Writing fio-format logs: which files a job's options ask for, and their
//! text (rendered by `ssdready_core::iolog`). Every log path is checked
//! before the first I/O ([`check_all`]) and written atomically
//! ([`crate::output`]).

use ssdready_core::iolog::{IoLog, LogKind};
use ssdready_core::spec::JobSpec;
use std::path::Path;

/// (option, path, kind) of every log file a worker's job asks for.
/// `number` is the worker's 1-based number in the run, as in fio's
/// `NAME_bw.N.log`; with `per_job_logs=0` there is no number, and the
/// workers' lines share the file ([`merge_shared`]).
fn names(spec: &JobSpec, number: u32) -> Vec<(&'static str, String, LogKind)> {
    let number = if spec.per_job_logs {
        format!(".{number}")
    } else {
        String::new()
    };
    let prefix = |p: &str| {
        if p.is_empty() {
            spec.name.clone()
        } else {
            p.to_string()
        }
    };
    let mut out = Vec::new();
    if let Some(p) = &spec.write_bw_log {
        let path = format!("{}_bw{number}.log", prefix(p));
        out.push(("write_bw_log", path, LogKind::Bw));
    }
    if let Some(p) = &spec.write_iops_log {
        let path = format!("{}_iops{number}.log", prefix(p));
        out.push(("write_iops_log", path, LogKind::Iops));
    }
    if let Some(p) = &spec.write_lat_log {
        for k in [LogKind::Slat, LogKind::Clat, LogKind::Lat] {
            let path = format!("{}_{}{number}.log", prefix(p), k.suffix());
            out.push(("write_lat_log", path, k));
        }
    }
    out
}

/// (path, text) of every log file a worker's job asks for.
pub fn files_for(spec: &JobSpec, number: u32, log: &IoLog) -> Vec<(String, String)> {
    names(spec, number)
        .into_iter()
        .map(|(_, path, k)| (path, log.render(k)))
        .collect()
}

/// Log files of the same path (workers of `per_job_logs=0` jobs) as one,
/// their texts one after another in worker order — fio appends each
/// worker's lines to the shared file.
pub fn merge_shared(files: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(files.len());
    for (path, text) in files {
        match out.iter_mut().find(|(p, _)| *p == path) {
            Some((_, t)) => t.push_str(&text),
            None => out.push((path, text)),
        }
    }
    out
}

/// Check, before the first I/O, that every log file the jobs will write can
/// be written. Workers are numbered from 1 in job order, `numjobs` each, as
/// the run numbers them.
pub fn check_all(specs: &[JobSpec]) -> Result<(), String> {
    let mut number = 1u32;
    let mut dirs_checked = std::collections::HashSet::new();
    for s in specs {
        for _ in 0..s.numjobs {
            for (option, path, _) in names(s, number) {
                let path = Path::new(&path);
                // A new file in a directory already checked needs no check.
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                if !dirs_checked.insert(dir) && !path.exists() {
                    continue;
                }
                let what = format!("job '{}': option '{option}'", s.name);
                crate::output::check(path, &what)?;
            }
            number += 1;
        }
    }
    Ok(())
}

/// Write one log file; the error names it.
pub fn write(path: &str, text: &str) -> Result<(), String> {
    let sink = crate::output::check(Path::new(path), "log")?;
    crate::output::write(&sink, text)
}
