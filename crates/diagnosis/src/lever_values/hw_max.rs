//! `hw-max`: the largest request the device takes
//! (`max_hw_sectors_kb`), where the block layer builds smaller ones.

use super::form::{not_above, Form, Gain, Now};
use crate::lever_context::{Candidate, HW_MAX};
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "hw-max";

/// The form from the rest of its line (nothing more is read).
pub fn parse(_rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(Ok(Arc::new(HwMax)))
}

/// `hw-max`.
#[derive(Debug)]
pub struct HwMax;

impl Form for HwMax {
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
        if now.value.is_none() {
            return Vec::new();
        }
        now.cx
            .queue
            .get(HW_MAX)
            .map(|h| Candidate::of(h.trim()))
            .into_iter()
            .collect()
    }

    fn in_place(&self, c: &Candidate, now: &Now) -> bool {
        not_above(c, now)
    }

    fn gain(&self) -> Option<Gain> {
        Some(Gain::Split)
    }
}
