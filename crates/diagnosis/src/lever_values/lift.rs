//! `lift L`: one limit of the study's control groups lifted on its own,
//! the others kept (`ssdready_measured::group_limits`); the candidate
//! names those kept, as the inventory shows them.

use super::form::{Form, Gain, Now};
use crate::lever_context::Candidate;
use ssdready_measured::group_limits::{self, GroupLimit};
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "lift LIMIT";

/// The form from the rest of its line: the limit's word.
pub fn parse(rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(match GroupLimit::of(rest) {
        Some(g) => Ok(Arc::new(Lift(g))),
        None => Err(format!(
            "lift takes one of {}",
            GroupLimit::ALL.map(|g| g.word()).join(", ")
        )),
    })
}

/// `lift L`.
#[derive(Debug)]
pub struct Lift(pub GroupLimit);

impl Form for Lift {
    fn raises_cap(&self) -> bool {
        true
    }

    fn text(&self) -> String {
        format!("lift {}", self.0.word())
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        let g = self.0;
        let kept = group_limits::lift(g, now.cx.limits.as_ref()).kept;
        vec![Candidate::of(without(g, &kept))]
    }

    fn limit(&self) -> Option<GroupLimit> {
        Some(self.0)
    }

    fn gain(&self) -> Option<Gain> {
        Some(Gain::HeadroomIfCause(self.0))
    }
}

/// The candidate's words: `g` lifted, the limits `kept` named.
pub(crate) fn without(g: GroupLimit, kept: &[String]) -> String {
    match kept.is_empty() {
        true => format!("without {}", g.words()),
        false => format!("without {}, {} kept", g.words(), kept.join(" and ")),
    }
}
