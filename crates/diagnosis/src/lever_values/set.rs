//! `set V`: one value, written as the table gives it.

use super::form::{same_value, Form, Now};
use crate::lever_context::Candidate;
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "set V";

/// The form from the rest of its line: its value (None without one).
pub fn parse(rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    (!rest.is_empty()).then(|| Ok(Arc::new(Set(rest.into())) as Arc<dyn Form>))
}

/// `set V`.
#[derive(Debug)]
pub struct Set(pub String);

impl Form for Set {
    fn text(&self) -> String {
        format!("set {}", self.0)
    }

    fn on_queue(&self) -> bool {
        true
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        match now.value {
            Some(_) => vec![Candidate::of(self.0.clone())],
            None => Vec::new(),
        }
    }

    fn in_place(&self, c: &Candidate, now: &Now) -> bool {
        same_value(c, now)
    }
}
