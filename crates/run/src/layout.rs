//! Getting the targets ready before the first I/O of a run.
//!
//! Every target of every phase is opened once as its workers will open it
//! (so a target of a later phase that cannot be used stops the run before
//! the first phase measures anything), and files are laid out to the size
//! their jobs need — refused up front, with the figures, when their file
//! system does not have the room. A layout stops within one 1 MiB chunk of
//! Ctrl-C, SIGTERM or SIGHUP. When anything fails or is interrupted, the
//! files this run created are removed and files it extended are cut back,
//! so a refusal leaves nothing behind.

use crate::failure::{bad, Failure};
use crate::observer::RunObserver;
use crate::prepared::PreparedJob;
use ssdready_core::spec::RwMode;
use ssdready_io::target::space::{free_space, show_bytes};
use ssdready_io::target::{self, LayoutEnd, Target, TargetKind};
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A file that must be created or extended.
struct Growth {
    target: Target,
    /// Its size when laid out.
    need: u64,
    /// Preallocated, and written when a job reads it (fio's rule).
    prep: target::Prep,
    /// The first job that needs it, for messages.
    job: String,
    /// Whether it existed before the run.
    existed: bool,
}

impl Growth {
    fn bytes_to_write(&self) -> u64 {
        self.need - self.target.size
    }

    /// What the file system must hold: the new part, unless nothing is
    /// written or reserved in it.
    fn bytes_to_hold(&self) -> u64 {
        use ssdready_core::spec_io::Fallocate;
        let reserved = matches!(
            self.prep.fallocate,
            Fallocate::Native | Fallocate::Posix | Fallocate::Keep
        );
        if self.prep.write_data || reserved {
            self.bytes_to_write()
        } else {
            0
        }
    }
}

/// Open, check the space for and lay out every target of `jobs`; see the
/// module docs.
pub(crate) fn ready(
    jobs: &[PreparedJob],
    readonly: bool,
    stop: &AtomicBool,
    obs: &mut dyn RunObserver,
) -> Result<(), Failure> {
    let plan = plan(jobs);
    if readonly {
        check_readonly(jobs, &plan)?;
    }
    check_space(&plan)?;
    check_open(jobs, &|t| t.path.exists())?;
    // Each file laid out, with its old length when it existed before.
    let mut done: Vec<(PathBuf, Option<u64>)> = Vec::new();
    let laid = lay_out(&plan, stop, obs, &mut done).and_then(|()| {
        check_open(jobs, &|t| {
            done.iter().any(|(p, old)| old.is_none() && *p == t.path)
        })
    });
    if laid.is_err() {
        // Undo every file, not only the one that failed: created files go,
        // extended ones are cut back to their old length.
        for (p, old) in &done {
            match old {
                None => {
                    let _ = std::fs::remove_file(p);
                }
                Some(len) => {
                    let _ = std::fs::OpenOptions::new()
                        .write(true)
                        .open(p)
                        .and_then(|f| f.set_len(*len));
                }
            }
        }
    }
    laid
}

/// The files to grow, each once at the largest size any job needs; the
/// data is written when any job reads the file or asks for `overwrite`
/// (fio's rule), and jobs with `create_on_open` make their own files.
fn plan(jobs: &[PreparedJob]) -> Vec<Growth> {
    let mut want: BTreeMap<PathBuf, Growth> = BTreeMap::new();
    for j in jobs.iter().filter(|j| j.spec.lays_out_files()) {
        let reads = !matches!(
            j.spec.rw,
            RwMode::Write | RwMode::RandWrite | RwMode::Trim | RwMode::RandTrim
        );
        // An engine that cannot extend a file (mmap) has it laid out whole.
        let write_data = reads
            || (j.spec.rw.modifies() && (j.spec.files.overwrite || j.spec.engine_cannot_extend()));
        for (t, r) in j.targets.iter().zip(&j.regions) {
            if t.kind != TargetKind::File {
                continue;
            }
            let g = want.entry(t.path.clone()).or_insert_with(|| Growth {
                target: t.clone(),
                need: 0,
                prep: target::Prep {
                    fallocate: j.spec.files.fallocate,
                    write_data,
                    fsync: j.spec.run.create_fsync.unwrap_or(true),
                },
                job: j.spec.name.clone(),
                existed: t.path.exists(),
            });
            g.need = g.need.max(r.offset + r.len);
            g.prep.write_data |= write_data;
            g.prep.fsync |= j.spec.run.create_fsync.unwrap_or(true);
        }
    }
    want.into_values()
        .filter(|g| g.target.size < g.need)
        .collect()
}

/// Under `--readonly`, refuse (one line, before anything is opened) a job
/// that removes its files, a file that would be created and one that
/// would be extended, as fio does.
fn check_readonly(jobs: &[PreparedJob], plan: &[Growth]) -> Result<(), Failure> {
    for j in jobs {
        if j.spec.unlink || j.spec.files.unlink_each_loop {
            return Err(bad(format!(
                "job '{}': {} removes its files, but --readonly is given (allowed: unlink=0, unlink_each_loop=0)",
                j.spec.name,
                if j.spec.unlink { "unlink=1" } else { "unlink_each_loop=1" }
            )));
        }
        let files = j.targets.iter().filter(|t| t.kind == TargetKind::File);
        if let Some(t) = files.into_iter().find(|t| !t.path.exists()) {
            return Err(bad(format!(
                "job '{}': {} does not exist and would be created, but --readonly is given \
                 (allowed: files that exist, at least as large as the job needs)",
                j.spec.name,
                t.path.display()
            )));
        }
    }
    match plan.first() {
        Some(g) => Err(bad(format!(
            "job '{}': {} is {} bytes and would be extended to {}, but --readonly is given \
             (allowed: files that exist, at least as large as the job needs)",
            g.job,
            g.target.path.display(),
            g.target.size,
            g.need
        ))),
        None => Ok(()),
    }
}

/// Refuse a layout that its file system has no room for, before writing
/// anything. Files on one file system are counted together.
fn check_space(plan: &[Growth]) -> Result<(), Failure> {
    let mut by_fs: BTreeMap<u64, (PathBuf, u64, Vec<&Growth>)> = BTreeMap::new();
    for g in plan {
        let on = if g.existed {
            g.target.path.clone()
        } else {
            parent_of(&g.target.path).to_path_buf()
        };
        let dev = std::fs::metadata(&on)
            .map_err(|e| Failure::Runtime(format!("{}: {e}", on.display())))?
            .dev();
        let e = by_fs.entry(dev).or_insert((on, 0, Vec::new()));
        e.1 += g.bytes_to_hold();
        e.2.push(g);
    }
    for (on, bytes, files) in by_fs.into_values() {
        let free = free_space(&on)
            .map_err(|e| Failure::Runtime(format!("free space of {}: {e}", on.display())))?
            .available;
        if bytes > free {
            return Err(bad(no_room(&files, bytes, free)));
        }
    }
    Ok(())
}

fn no_room(files: &[&Growth], bytes: u64, free: u64) -> String {
    let first = files[0];
    let what = if files.len() == 1 {
        format!(
            "job '{}': option 'size': laying out {} to {} bytes (offset + size)",
            first.job,
            first.target.path.display(),
            first.need
        )
    } else {
        let paths: Vec<String> = files
            .iter()
            .map(|g| g.target.path.display().to_string())
            .collect();
        format!("laying out {}", paths.join(", "))
    };
    format!(
        "{what} needs {} written, but its file system has {} free \
         (lower size or offset, or use a file system with more room)",
        show_bytes(bytes),
        show_bytes(free)
    )
}

fn parent_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Open every target that `which` selects as its job's workers will.
fn check_open(jobs: &[PreparedJob], which: &dyn Fn(&Target) -> bool) -> Result<(), Failure> {
    for j in jobs.iter().filter(|j| !j.spec.dir_engine()) {
        let write = j.spec.modifies_target();
        for t in j.targets.iter().filter(|t| which(t)) {
            if let Err(e) = t.open(write, j.spec.direct) {
                let hint = if j.spec.direct && e.raw_os_error() == Some(libc::EINVAL) {
                    " (its file system may not support O_DIRECT: use direct=0)"
                } else {
                    ""
                };
                return Err(bad(format!(
                    "job '{}': cannot open {}{}{}: {e}{hint}",
                    j.spec.name,
                    t.path.display(),
                    if write {
                        " for writing"
                    } else {
                        " for reading"
                    },
                    if j.spec.direct { " with O_DIRECT" } else { "" },
                )));
            }
        }
    }
    Ok(())
}

/// Lay out the planned files; `created` gets those this run created.
fn lay_out(
    plan: &[Growth],
    stop: &AtomicBool,
    obs: &mut dyn RunObserver,
    done: &mut Vec<(PathBuf, Option<u64>)>,
) -> Result<(), Failure> {
    for g in plan {
        let shown = g.target.path.display().to_string();
        obs.layout_start(
            &shown,
            if g.prep.write_data {
                g.bytes_to_write()
            } else {
                0
            },
        );
        let end = target::layout(&g.target, g.need, g.prep, stop, &mut |done, _| {
            obs.layout_progress(done)
        });
        obs.layout_end();
        match end {
            Ok(LayoutEnd::Done) => {
                done.push((g.target.path.clone(), g.existed.then_some(g.target.size)))
            }
            Ok(LayoutEnd::Stopped) => {
                return Err(Failure::Interrupted(format!(
                    "interrupted while laying out {shown}; {} (nothing was measured)",
                    if g.existed {
                        "it is back to its old size"
                    } else {
                        "it was removed"
                    }
                )))
            }
            Err(e) => {
                let msg = format!("job '{}': laying out {e}", g.job);
                // Refused before a byte was written: the request cannot work.
                let refused = matches!(&e, target::TargetError::Io { source, .. }
                    if matches!(source.raw_os_error(), Some(libc::EACCES | libc::EPERM | libc::EROFS)));
                return Err(if refused {
                    bad(msg)
                } else {
                    Failure::Runtime(msg)
                });
            }
        }
    }
    Ok(())
}

/// Give file targets on block devices their extent maps, so that their
/// I/Os can be joined with the block layer's records (`--decompose`).
pub(crate) fn map_file_sectors(mut jobs: Vec<PreparedJob>) -> Vec<PreparedJob> {
    let on_a_disk = |t: &Target| t.kind == TargetKind::File && t.device.is_some();
    for j in &mut jobs {
        if j.targets.iter().any(on_a_disk) {
            let mapped = j.targets.iter().map(|t| {
                let mut t = t.clone();
                if on_a_disk(&t) {
                    // Without a map the file's I/Os stay unjoined; the
                    // decomposition's note says so.
                    t.sector_map = target::file_sector_map(&t).ok();
                }
                t
            });
            j.targets = Arc::new(mapped.collect());
            // Each clone's targets are the job's, by path.
            for c in &mut j.clones {
                let by_path = c.targets.iter().map(|t| {
                    j.targets
                        .iter()
                        .find(|m| m.path == t.path)
                        .cloned()
                        .unwrap_or_else(|| t.clone())
                });
                c.targets = Arc::new(by_path.collect());
            }
        }
    }
    jobs
}
