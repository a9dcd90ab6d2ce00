//! The measuring commands' session, as fio's: `run` and `study` measure in
//! a session of their own, while a process in the caller's stays to take
//! the terminal's signals.
//!
//! Where the kernel groups sessions ([`ssdready_probe::sched_group`]: no
//! CPU cgroup of its own, `sched_autogroup_enabled` 1), a CPU is shared
//! first among sessions, then among a session's threads by their nice
//! values. fio forks each job not marked `thread` into a process that
//! starts a session of its own (`setsid()` in its `thread_main`), so
//! other work in the caller's session meets the job at a group's weight,
//! whatever its nice value. Measured in the caller's session, ssdready's
//! threads met such work inside one group instead: beside two loops at
//! nice 10, on 2 vCPUs, fio ran 160–218K IOPS and ssdready 223–311K.
//!
//! So the command starts itself again ([`apart`]), waits for it, passes
//! it every signal that asks to stop, and ends with its exit code; the
//! copy leaves the caller's session before its first run
//! ([`leave_for`]) unless the job's sections set `thread`, where fio
//! keeps its jobs in its own process, in the caller's session.
//! `SSDREADY_SESSION=caller` keeps one process in the caller's session,
//! for a tool that signals or inspects the process it started; so does
//! running under valgrind, which counts the process it started.

use crate::{done, say, Done};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use ssdready_core::options::Section;
use std::sync::atomic::{AtomicBool, Ordering};

/// The variable: the pid of the process that started this copy, or
/// `caller`.
pub(crate) const ENV: &str = "SSDREADY_SESSION";

/// Whether this process is a copy started by [`apart`], free to leave the
/// caller's session.
static COPY: AtomicBool = AtomicBool::new(false);

/// The signals that ask a command to stop, passed on to the copy.
const PASSED: [i32; 4] = [
    signal_hook::consts::SIGINT,
    signal_hook::consts::SIGTERM,
    signal_hook::consts::SIGHUP,
    signal_hook::consts::SIGQUIT,
];

/// In a copy started by [`apart`] (its variable names the parent): end
/// with the parent (SIGTERM, which puts back what it changed, as Ctrl-C
/// does), and remember that it may leave the session. First thing in
/// `main`, before any thread starts.
pub(crate) fn adopt() -> Done {
    let parent = nix::unistd::getppid();
    let named = std::env::var(ENV).ok().and_then(|v| v.parse::<i32>().ok());
    if named != Some(parent.as_raw()) {
        return Ok(());
    }
    nix::sys::prctl::set_pdeathsig(Signal::SIGTERM)
        .map_err(|e| crate::fail(1, &format!("tying this run to its parent: {e}")))?;
    // The parent may have ended before the tie was made.
    if nix::unistd::getppid() != parent {
        return Err(crate::fail(
            130,
            "the ssdready that started this run has ended",
        ));
    }
    COPY.store(true, Ordering::Relaxed);
    Ok(())
}

/// `run` or `study` started again in a process of its own that leaves
/// the caller's session before it measures; this one's outcome is the
/// copy's. None: measure here (a copy already, `SSDREADY_SESSION=caller`,
/// valgrind, a session leader, a CPU cgroup rather than sessions, or a
/// command line that sets `thread`); said on stderr when the copy cannot
/// start.
pub(crate) fn apart(args: &[String]) -> Option<Done> {
    if let Some(v) = std::env::var_os(ENV).filter(|v| *v != "caller") {
        // A pid is a copy's (one started by another ssdready passes it on).
        if v.to_str().and_then(|v| v.parse::<u32>().ok()).is_none() {
            let what = format!(
                "environment variable {ENV}: '{}' is not allowed (allowed: caller, to measure in the caller's session; unset, to measure in a session of its own)",
                v.to_string_lossy()
            );
            return Some(Err(crate::fail(2, &what)));
        }
    }
    let me = std::process::id();
    let leader = nix::unistd::getsid(None).is_ok_and(|s| s.as_raw() as u32 == me);
    let grouped = ssdready_probe::sched_group::of(me).is_some_and(|g| g.starts_with("autogroup:"));
    if COPY.load(Ordering::Relaxed)
        || std::env::var_os(ENV).is_some_and(|v| v == "caller")
        || under_valgrind()
        || leader
        || !grouped
        || args
            .iter()
            .any(|a| a == "--thread" || a.starts_with("--thread="))
    {
        return None;
    }
    let child = std::env::current_exe().and_then(|exe| {
        std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env(ENV, me.to_string())
            .spawn()
    });
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return refused(&e),
    };
    let pid = Pid::from_raw(child.id() as i32);
    // After the spawn, so that a copy that cannot start leaves the
    // signals' default actions as they were. A signal before this ends
    // this process by its default action, and the copy with it (its
    // parent's death, [`adopt`]).
    let mut signals = match signal_hook::iterator::Signals::new(PASSED) {
        Ok(s) => s,
        Err(e) => {
            let _ = kill(pid, Signal::SIGTERM);
            let _ = child.wait();
            return Some(Err(crate::fail(1, &format!("passing on signals: {e}"))));
        }
    };
    let handle = signals.handle();
    let passer = std::thread::spawn(move || {
        for sig in signals.forever() {
            if let Ok(s) = Signal::try_from(sig) {
                let _ = kill(pid, s);
            }
        }
    });
    let status = child.wait();
    handle.close();
    let _ = passer.join();
    Some(match status {
        Ok(s) => done(exit_code(s)),
        Err(e) => Err(crate::fail(1, &format!("waiting for the run: {e}"))),
    })
}

/// Whether valgrind runs this process (its preloaded core names it).
fn under_valgrind() -> bool {
    std::env::var_os("LD_PRELOAD").is_some_and(|v| v.to_string_lossy().contains("vgpreload"))
}

/// The copy's exit code, or 128 + the signal that ended it, as a shell
/// says it.
fn exit_code(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code()
        .or_else(|| s.signal().map(|n| 128 + n))
        .unwrap_or(1)
}

/// Measure here, saying why the copy could not start.
fn refused(e: &std::io::Error) -> Option<Done> {
    say(&format!(
        "measuring in the caller's session: a process of its own could not start ({e})"
    ));
    None
}

/// Before a run of `sections`: a copy started by [`apart`] leaves the
/// caller's session, once, unless a section sets `thread` (fio keeps
/// such jobs in its own process, hence in the caller's session).
pub(crate) fn leave_for(sections: &[Section]) {
    if threads(sections) || !COPY.swap(false, Ordering::Relaxed) {
        return;
    }
    if let Err(e) = nix::unistd::setsid() {
        say(&format!(
            "measuring in the caller's session: leaving it failed ({e})"
        ));
    }
}

/// Whether a section sets fio's `thread` (a value other than 0).
pub(crate) fn threads(sections: &[Section]) -> bool {
    sections
        .iter()
        .flat_map(|s| &s.options)
        .any(|o| o.key == "thread" && o.value.as_deref() != Some("0"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::options::RawOption;

    fn section(options: &[(&str, Option<&str>)]) -> Section {
        Section {
            name: "j".into(),
            global: false,
            options: options.iter().map(|(k, v)| RawOption::cli(k, *v)).collect(),
        }
    }

    #[test]
    fn a_section_that_sets_thread_keeps_the_callers_session() {
        assert!(threads(&[
            section(&[("rw", Some("read"))]),
            section(&[("thread", None)])
        ]));
        assert!(threads(&[section(&[("thread", Some("1"))])]));
        assert!(!threads(&[section(&[("thread", Some("0"))])]));
        assert!(!threads(&[section(&[("rw", Some("read"))])]));
    }

    #[test]
    fn the_copys_exit_code_is_the_commands() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(exit_code(std::process::ExitStatus::from_raw(130 << 8)), 130);
        assert_eq!(exit_code(std::process::ExitStatus::from_raw(9)), 137);
    }
}
