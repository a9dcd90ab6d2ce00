//! What a worker does around its I/O, as fio's thread_main: set its nice
//! value (`nice`), pin memory (`lockmem`), and run the job's commands
//! (`exec_prerun` before the first I/O, `exec_postrun` after the last),
//! each with its output in `jobname.prerun.txt` / `jobname.postrun.txt` in
//! the current directory, as fio — always a regular file: a symbolic link
//! or a device at that name is refused before the command runs.

use super::ctx::WorkerCtx;
use ssdready_io::mem::{set_thread_nice, LockedMemory};

/// Held while the job runs (the pinned memory is released on drop).
pub(super) struct Held {
    _locked: Option<LockedMemory>,
}

/// Before the first I/O; the error ends the job (as fio's `goto err`).
pub(super) fn before_io(ctx: &WorkerCtx) -> Result<Held, String> {
    let run = &ctx.spec.run;
    if run.nice != 0 {
        set_thread_nice(run.nice).map_err(|e| e.to_string())?;
    }
    let locked = match run.lockmem {
        0 => None,
        n => Some(LockedMemory::pin(n).map_err(|e| e.to_string())?),
    };
    if let Some(cmd) = &run.exec_prerun {
        exec(&ctx.spec.name, cmd, "prerun")?;
    }
    Ok(Held { _locked: locked })
}

/// After the last I/O (a failing command is reported, as fio's, but the
/// job's results stand).
pub(super) fn after_io(ctx: &WorkerCtx) -> Result<(), String> {
    match &ctx.spec.run.exec_postrun {
        Some(cmd) => exec(&ctx.spec.name, cmd, "postrun"),
        None => Ok(()),
    }
}

/// Run `cmd` with `sh -c`, its output in `job.mode.txt`.
fn exec(job: &str, cmd: &str, mode: &str) -> Result<(), String> {
    let out_path = format!("{job}.{mode}.txt");
    // Never through a link, never onto a device: a regular file or nothing.
    let out = ssdready_io::writer::create_regular(std::path::Path::new(&out_path))
        .map_err(|e| format!("exec_{mode}: {out_path}: {e}"))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("exec_{mode}: {out_path}: {e}"))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| format!("exec_{mode}: running sh: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "exec_{mode} '{cmd}' failed ({status}; its output is in {out_path})"
        ))
    }
}
