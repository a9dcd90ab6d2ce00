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
    Some(match of(rest) {
        Some(g) => Ok(Arc::new(Lift(g))),
        None => Err(format!(
            "lift takes one of {}",
            GroupLimit::ALL.map(word).join(", ")
        )),
    })
}

/// The table's word for a limit (`lift io-throttle`).
pub fn word(g: GroupLimit) -> &'static str {
    match g {
        GroupLimit::IoThrottle => "io-throttle",
        GroupLimit::CpuQuota => "cpu-quota",
        GroupLimit::Cpuset => "cpuset",
        GroupLimit::IoLatency => "io-latency",
        GroupLimit::IoWeight => "io-weight",
    }
}

/// The limit a table's word names.
fn of(w: &str) -> Option<GroupLimit> {
    GroupLimit::ALL.into_iter().find(|g| word(*g) == w)
}

/// `lift L`.
#[derive(Debug)]
pub struct Lift(pub GroupLimit);

impl Form for Lift {
    fn raises_cap(&self) -> bool {
        true
    }

    fn text(&self) -> String {
        format!("lift {}", word(self.0))
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

/// A set of changes in words, joined by ` + `: a lift that names the
/// limits it keeps (`without the I/O throttle, the CPU quota kept`, as
/// [`without`] words it) no longer names one the set lifts too.
pub fn set_words(all: &[String]) -> String {
    let lifted = |w: &str| all.iter().any(|c| c.contains(&format!("without {w}")));
    let each = all.iter().map(|c| {
        let Some((head, kept)) = c.strip_suffix(" kept").and_then(|c| c.rsplit_once(", ")) else {
            return c.clone();
        };
        let still: Vec<&str> = kept.split(" and ").filter(|w| !lifted(w)).collect();
        match still.is_empty() {
            true => head.to_string(),
            false => format!("{head}, {} kept", still.join(" and ")),
        }
    });
    each.collect::<Vec<_>>().join(" + ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_words_name_each_limit() {
        for g in GroupLimit::ALL {
            assert_eq!(of(word(g)), Some(g));
        }
        assert_eq!(of("outside"), None);
        assert!(parse("outside").unwrap().is_err());
    }
}
