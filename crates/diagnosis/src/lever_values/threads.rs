//! `threads`: twice the threads, the same I/Os in flight (half the depth
//! each); nothing at a depth under 2.

use super::form::{Form, Now};
use crate::lever_context::{Candidate, Point};
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "threads";

/// The form from the rest of its line (nothing more is read).
pub fn parse(_rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(Ok(Arc::new(Threads)))
}

/// `threads`.
#[derive(Debug)]
pub struct Threads;

impl Form for Threads {
    fn text(&self) -> String {
        SYNTAX.into()
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        let p = now.point;
        if p.qd < 2 {
            return Vec::new();
        }
        vec![Candidate {
            value: format!("{} threads × QD {}", p.threads * 2, p.qd / 2),
            options: vec![
                ("numjobs".into(), (p.threads * 2).to_string()),
                ("iodepth".into(), (p.qd / 2).to_string()),
            ],
        }]
    }

    fn replaces(&self, p: &Point) -> String {
        format!("{} thread(s) × QD {}", p.threads, p.qd)
    }
}
