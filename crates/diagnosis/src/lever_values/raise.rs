//! `raise`: a request queue deep enough for the point: twice the I/Os in
//! flight there (a power of two), at least four times the current value,
//! at most 1024 or the device's own queue depth.

use super::form::{not_above, Form, Gain, Now};
use crate::lever_context::Candidate;
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "raise";

/// The deepest request queue it proposes.
const CEILING: u64 = 1024;

/// The form from the rest of its line (nothing more is read).
pub fn parse(_rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(Ok(Arc::new(Raise)))
}

/// `raise`.
#[derive(Debug)]
pub struct Raise;

impl Form for Raise {
    fn raises_cap(&self) -> bool {
        true
    }

    fn text(&self) -> String {
        SYNTAX.into()
    }

    fn on_queue(&self) -> bool {
        true
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        let Some(value) = now.value else {
            return Vec::new();
        };
        let n = value.parse::<u64>().ok();
        let p = now.point;
        let in_flight = u64::from(p.qd) * u64::from(p.threads.max(1));
        let ceiling = now.cx.queue_depth.unwrap_or(CEILING).min(CEILING);
        let want = (2 * in_flight)
            .next_power_of_two()
            .max(4 * n.unwrap_or(0))
            .min(ceiling);
        // Nothing to raise where the queue already admits what the
        // device takes.
        match n {
            Some(now) if want <= now => Vec::new(),
            _ => vec![Candidate::of(want.to_string())],
        }
    }

    fn in_place(&self, c: &Candidate, now: &Now) -> bool {
        not_above(c, now)
    }

    fn gain(&self) -> Option<Gain> {
        Some(Gain::QueueFull)
    }
}
