//! What the caller hands the study as one call ([`crate::session::study`]):
//! the options it is asked ([`Options`]), how a run is executed ([`Run`]),
//! the hands for the trials ([`MakeHands`], [`host_hands`]) and the
//! observer of its progress ([`Observer`]).

use crate::ask::Ask;
use crate::driver;
use crate::plan::Plan;
use crate::trials::Hands;
use ssdready_core::result::RunResult;
use ssdready_run::{Failure, RunRequest};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How a run is executed: the caller's run function (`run`'s path, with
/// the targets' safety checks and `--allow-destructive` as it takes it).
pub type Run<'a> = dyn Fn(&RunRequest) -> Result<RunResult, Failure> + 'a;

/// The hands for the trials, made for the devices they may change.
pub type MakeHands<'a> = dyn Fn(Allowed) -> Box<dyn Hands> + 'a;

/// What the trials' hands may change.
#[derive(Clone, Debug, Default)]
pub struct Allowed {
    /// The target's device and its stack's members.
    pub disks: Vec<String>,
    /// The study runs as root.
    pub root: bool,
    /// Why the devices' settings may not be changed (another process holds
    /// their lock), if so.
    pub refused: Option<String>,
}

/// The hands of this host ([`crate::trials_hands::HostHands`]).
pub fn host_hands(a: Allowed) -> Box<dyn Hands> {
    let mut h = crate::trials_hands::HostHands::new(a.disks, a.root);
    if let Some(why) = a.refused {
        h.refuse_queue(why);
    }
    Box::new(h)
}

/// What the study is asked.
#[derive(Clone, Debug)]
pub struct Options {
    /// The command line's values (the target among them).
    pub ask: Ask,
    /// `--try-changes`: as root, try the device's queue settings too.
    pub try_changes: bool,
    /// Set by a signal: the study stops after the current run.
    pub stop: Arc<AtomicBool>,
    /// What made the study (`ssdready VERSION`) and its command line, for
    /// the document's header.
    pub tool: String,
    pub command: Vec<String>,
}

/// Hears the study's progress.
pub trait Observer: driver::Observer {
    /// A line of progress (a quiet study says none).
    fn note(&mut self, line: &str);
    /// A line said even in a quiet study: a warning or a refusal.
    fn warn(&mut self, line: &str);
    /// A block of progress text as it is: the plan before the first run,
    /// the capacity found.
    fn block(&mut self, text: &str);
    /// The sweeps start: the plan's runs.
    fn sweeps(&mut self, _plan: &Plan) {}
    /// The sweeps are over.
    fn sweeps_done(&mut self) {}
}
