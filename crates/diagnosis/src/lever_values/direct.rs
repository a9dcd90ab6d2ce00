//! `direct`: direct I/O against the page cache (or the page cache against
//! direct I/O): the other of the point's own.

use super::form::{Form, Now};
use crate::lever_context::{Candidate, Point};
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "direct";

/// The form from the rest of its line (nothing more is read).
pub fn parse(_rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(Ok(Arc::new(Direct)))
}

/// `direct`.
#[derive(Debug)]
pub struct Direct;

impl Form for Direct {
    fn text(&self) -> String {
        SYNTAX.into()
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        let other = u8::from(!now.point.direct);
        vec![Candidate {
            value: format!("direct={other}"),
            options: vec![("direct".into(), other.to_string())],
        }]
    }

    fn replaces(&self, p: &Point) -> String {
        format!("direct={}", u8::from(p.direct))
    }
}
