//! What the worker does to its files between I/Os when the job's flow
//! ([`ssdready_workload::jobflow::Step`]) says so: drop a region's page cache
//! (a time-based pass ended, a loop starts, verification begins), fsync the
//! files (`end_fsync`, `fsync_on_close`, before verifying; not counted as
//! I/O, as in fio), and start a loop: remove the files (`unlink_each_loop`)
//! and open them again. The emulator and the null engine have no files:
//! these do nothing there.

use super::ctx::WorkerCtx;
use ssdready_io::engine::{open_files, EngineSetup};
use ssdready_io::target::TargetKind;
use ssdready_io::{Engine, EngineError};

/// Drop the cached pages of target `file`'s region (best effort, as fio).
pub(super) fn drop_cache(ctx: &WorkerCtx, file: u32) {
    let (Some(t), Some(r)) = (
        ctx.targets.get(file as usize),
        ctx.regions.iter().find(|r| r.file == file),
    ) else {
        return;
    };
    let _ = t.drop_cache(r.offset, r.len);
}

/// Drop the cache of every target.
pub(super) fn drop_caches(ctx: &WorkerCtx) {
    for f in 0..ctx.targets.len() as u32 {
        drop_cache(ctx, f);
    }
}

/// fsync every target (through a descriptor of its own: fsync flushes the
/// file, whichever descriptor wrote it). A failure is the job's error.
pub(super) fn fsync_all(ctx: &WorkerCtx) -> Result<(), EngineError> {
    for t in ctx.targets.iter() {
        let r = std::fs::File::open(&t.path).and_then(|f| f.sync_all());
        match r {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(EngineError::Sys {
                    what: format!("fsync of {}", t.path.display()),
                    source: e,
                })
            }
        }
    }
    Ok(())
}

/// A new loop: remove the job's files when `unlink` and open them again
/// (created empty by the job's open), then drop their cache when
/// `invalidate`. Called with nothing in flight.
pub(super) fn new_loop<E: Engine>(
    ctx: &WorkerCtx,
    engine: &mut E,
    unlink: bool,
    invalidate: bool,
) -> Result<(), EngineError> {
    if unlink && !ctx.targets.is_empty() {
        for t in ctx.targets.iter().filter(|t| t.kind == TargetKind::File) {
            match std::fs::remove_file(&t.path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(EngineError::Sys {
                        what: format!("unlink_each_loop: removing {}", t.path.display()),
                        source: e,
                    })
                }
            }
        }
        let setup = EngineSetup {
            spec: &ctx.spec,
            targets: &ctx.targets,
            seed: ctx.spec.randseed ^ u64::from(ctx.index),
        };
        engine.reopen(open_files(&setup)?)?;
    }
    if invalidate {
        drop_caches(ctx);
    }
    Ok(())
}
