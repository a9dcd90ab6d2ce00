//! `outside`: the study's runs from outside its control groups, every
//! limit of theirs lifted at once.

use super::form::{Form, Gain, Now};
use crate::lever_context::Candidate;
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "outside";

/// The form from the rest of its line (nothing more is read).
pub fn parse(_rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(Ok(Arc::new(Outside)))
}

/// `outside`.
#[derive(Debug)]
pub struct Outside;

impl Form for Outside {
    fn text(&self) -> String {
        SYNTAX.into()
    }

    fn proposed(&self, _now: &Now) -> Vec<Candidate> {
        vec![Candidate::of("outside the study's group")]
    }

    fn gain(&self) -> Option<Gain> {
        Some(Gain::Headroom)
    }
}
