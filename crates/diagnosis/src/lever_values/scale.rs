//! `scale F MAX`: the current value times a factor above 1, at most a
//! ceiling.

use super::form::{not_above, Form, Now};
use crate::lever_context::Candidate;
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "scale F MAX";

/// The form from the rest of its line: the factor and the ceiling.
pub fn parse(rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    let n: Vec<u64> = rest.split(' ').filter_map(|x| x.parse().ok()).collect();
    Some(match n[..] {
        [factor, ceiling] if factor > 1 => Ok(Arc::new(Scale { factor, ceiling })),
        _ => Err("scale takes a factor above 1 and a ceiling".into()),
    })
}

/// `scale F MAX`.
#[derive(Debug)]
pub struct Scale {
    pub factor: u64,
    pub ceiling: u64,
}

impl Form for Scale {
    fn text(&self) -> String {
        format!("scale {} {}", self.factor, self.ceiling)
    }

    fn on_queue(&self) -> bool {
        true
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        now.value
            .and_then(|v| v.parse::<u64>().ok())
            .map(|n| Candidate::of((n.max(1) * self.factor).min(self.ceiling).to_string()))
            .into_iter()
            .collect()
    }

    fn in_place(&self, c: &Candidate, now: &Now) -> bool {
        not_above(c, now)
    }
}
