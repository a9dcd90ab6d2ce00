//! `offered`: the device's I/O schedulers, `none` first, then each other
//! one it offers; the value in effect is the one the kernel brackets
//! (`none [mq-deadline] kyber`).

use super::form::{same_value, Form, Gain, Now};
use crate::lever_context::{Candidate, SCHEDULER};
use ssdready_measured::limits::parse::schedulers;
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "offered";

/// The form from the rest of its line (nothing more is read).
pub fn parse(_rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(Ok(Arc::new(Offered)))
}

/// `offered`.
#[derive(Debug)]
pub struct Offered;

impl Form for Offered {
    fn text(&self) -> String {
        SYNTAX.into()
    }

    fn on_queue(&self) -> bool {
        true
    }

    fn current(&self, file: &str) -> Option<String> {
        schedulers(file).0
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        let Some(active) = now.value else {
            return Vec::new();
        };
        let (_, offered) = schedulers(now.cx.queue.get(SCHEDULER).map_or("", |s| s));
        let mut v: Vec<String> = offered.into_iter().filter(|s| s != active).collect();
        v.sort_by_key(|s| s != "none");
        v.into_iter().map(Candidate::of).collect()
    }

    fn in_place(&self, c: &Candidate, now: &Now) -> bool {
        same_value(c, now)
    }

    fn gain(&self) -> Option<Gain> {
        Some(Gain::Scheduler)
    }
}
