//! No panic reaches a user as a Rust backtrace.
//!
//! [`install`] sets a panic hook. A panic inside [`catching`] (a worker
//! thread's engine setup and I/O loop) is recorded with its location and
//! handed back as an error of that run, so the run reports it like any other
//! failure; the first panic of the process is kept ([`first`]), so that the
//! poisoned locks it leaves behind do not hide it. Any other panic is
//! handed to the program's `uncaught` function (the binary prints one line
//! naming it as an internal error, with its location, and exits with
//! [`INTERNAL_ERROR`]); [`crate::execute`] runs inside [`catching`], so a
//! caller of the library gets a panic of a run as its
//! [`Failure::Internal`](crate::Failure::Internal).
//!
//! `SSDREADY_INJECT_PANIC` makes the binary panic on purpose, for the tests
//! of this: `main` before the run; `worker` or `worker:JOB` in the I/O loop
//! of the first worker of every job or of job JOB (holding the emulator's
//! lock when there is one); `open` or `open:JOB` while it sets up its engine.

use std::cell::{Cell, RefCell};
use std::sync::OnceLock;

/// Exit code of an internal error, a bug in ssdready (BSD's EX_SOFTWARE).
pub const INTERNAL_ERROR: i32 = 70;

thread_local! {
    static CATCHING: Cell<bool> = const { Cell::new(false) };
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

static FIRST: OnceLock<String> = OnceLock::new();

/// Install the hook (once, first thing in `main`); `uncaught` is called
/// with the panic's location and message when it happened outside
/// [`catching`] (a program says so and exits with [`INTERNAL_ERROR`]).
pub fn install(uncaught: fn(&str)) {
    std::panic::set_hook(Box::new(move |info| {
        let msg = payload_text(info.payload());
        let what = match info.location() {
            Some(l) => format!("panic at {}:{}: {msg}", l.file(), l.line()),
            None => format!("panic: {msg}"),
        };
        let _ = FIRST.set(what.clone());
        if CATCHING.with(Cell::get) {
            LAST.with(|l| *l.borrow_mut() = Some(what));
        } else {
            uncaught(&what);
        }
    }));
}

fn payload_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

/// Run `f`; a panic in it becomes `Err` with its location and message.
pub fn catching<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = CATCHING.with(|c| c.replace(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(was));
    r.map_err(|p| {
        LAST.with(|l| l.borrow_mut().take())
            .unwrap_or_else(|| payload_text(&*p))
    })
}

/// The first panic of the process, if any.
pub fn first() -> Option<&'static str> {
    FIRST.get().map(String::as_str)
}

/// Whether `SSDREADY_INJECT_PANIC` asks for a panic at `place`.
pub fn injected(place: &str) -> bool {
    std::env::var("SSDREADY_INJECT_PANIC").is_ok_and(|v| v == place)
}

/// Whether `SSDREADY_INJECT_PANIC` asks for a panic at `place` in the
/// workers of `job` (`PLACE`: of every job; `PLACE:NAME`: of job NAME).
pub fn injected_in_job(place: &str, job: &str) -> bool {
    std::env::var("SSDREADY_INJECT_PANIC").is_ok_and(|v| {
        v == place || v.strip_prefix(place).and_then(|r| r.strip_prefix(':')) == Some(job)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caught_panic_becomes_an_error_with_its_message() {
        let r: Result<(), String> = catching(|| panic!("boom {}", 7));
        assert!(r.unwrap_err().contains("boom 7"));
        assert_eq!(catching(|| 5).unwrap(), 5);
    }
}
