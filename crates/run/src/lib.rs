//! # ssdready-run
//!
//! The run engine, as a library. [`execute`] takes a [`RunRequest`] (job
//! sections in the option table's own form, and the run's switches) and a
//! [`RunObserver`] (told the warnings, notes and progress as they come: the
//! library prints nothing), and returns the [`RunResult`] or the
//! [`Failure`] that stopped it, a panic included: this is the one panic
//! boundary of a run. [`simulate`] runs the same request on the emulator in
//! virtual time (the loop is [`virtual_time`]; planners that drive a device
//! of their own call [`virtual_time::simulate`]); [`resolve`] only validates
//! it.
//!
//! Inside: the one validation path ([`validate`]), targets opened and
//! prepared (`prepare`, `layout`, `fileprep`; emulated devices in
//! `emulated`, zoned ones in `zbd`), phases run by worker threads
//! (`worker`) and measured (CPU, disks, `profiler`, `decompose`), and the
//! result assembled (`run`).

#![forbid(unsafe_code)]

mod agglog;
pub mod auxpath;
pub mod calibration;
mod decompose;
pub mod emulated;
pub mod exactcpu;
pub mod failure;
mod fileprep;
mod layout;
mod live;
mod logs;
pub mod observer;
pub mod output;
pub mod panics;
mod passthru;
mod phase;
pub mod phases;
mod prepare;
mod prepared;
mod profiler;
pub mod ramdev;
mod replay;
pub mod request;
mod run;
mod simulate;
mod steadystate;
pub mod stop;
mod strategy;
pub use strategy::awake;
pub mod sys;
mod target_checks;
pub mod validate;
pub mod virtual_time;
mod worker;
mod zbd;
mod zbd_error;
mod zbd_table;

pub use failure::Failure;
pub use logs::{LogSink, WorkerLog};
pub use observer::{RunObserver, SilentObserver, Totals};
pub use request::{RunFn, RunRequest};
pub use ssdready_core::result::RunResult;

use ssdready_core::spec::JobSpec;
use ssdready_emu::memory::TimeBase;

/// Run the request's jobs in real time; the result may be marked
/// interrupted (the request's stop flag) or carry a later phase's failure.
pub fn execute(request: RunRequest, observer: &mut dyn RunObserver) -> Result<RunResult, Failure> {
    bounded(observer, |obs| run::execute(&request, obs))
}

/// Run the request's jobs on the emulator in virtual time (every target
/// must be an emulated device).
pub fn simulate(request: RunRequest, observer: &mut dyn RunObserver) -> Result<RunResult, Failure> {
    bounded(observer, |_| simulate::execute(&request))
}

/// The request's jobs as a run (`Real`) or a simulation (`Virtual`) would
/// run them, checked as they would check them, without running anything.
pub fn resolve(
    request: &RunRequest,
    time: TimeBase,
    observer: &mut dyn RunObserver,
) -> Result<Vec<JobSpec>, Failure> {
    run::resolve_only(request, time, observer)
}

/// Run `f` as the one panic boundary of a run: a panic becomes
/// [`Failure::Internal`], and what threads without the observer said
/// ([`observer::notices`]) reaches it.
fn bounded(
    obs: &mut dyn RunObserver,
    f: impl FnOnce(&mut dyn RunObserver) -> Result<RunResult, Failure>,
) -> Result<RunResult, Failure> {
    let said = observer::notices::Queue::default();
    let ran = said.scope(|| panics::catching(|| f(&mut *obs)));
    said.drain_into(obs);
    ran.unwrap_or_else(|what| {
        Err(Failure::Internal(format!(
            "internal error: {what} (a bug in ssdready; please report it)"
        )))
    })
}
