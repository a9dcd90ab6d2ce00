//! `engines`: io_uring, libaio and psync, each but the point's own (none
//! where the point has no engine: an emulator brings its own), none the
//! engine sweep measured slower than the point's own at its depth, and
//! psync only at QD 1: a synchronous engine keeps one I/O in flight per
//! thread, so at a deeper point it would try a shallower workload, not an
//! engine.

use super::form::{Form, Gain, Now};
use crate::lever_context::{Candidate, Context, Point};
use std::sync::Arc;

/// How the table writes it.
pub const SYNTAX: &str = "engines";

/// The engines it tries, in this order.
const ENGINES: [&str; 3] = ["io_uring", "libaio", "psync"];

/// The synchronous one: one I/O in flight per thread.
const SYNCHRONOUS: &str = "psync";

/// An engine measured this much slower than the point's own, or more, at
/// its depth is not tried again (the sweep's turns already said so).
pub const ENGINE_SLOWER: f64 = 0.95;

/// The form from the rest of its line (nothing more is read).
pub fn parse(_rest: &str) -> Option<Result<Arc<dyn Form>, String>> {
    Some(Ok(Arc::new(Engines)))
}

/// `engines`.
#[derive(Debug)]
pub struct Engines;

/// Whether the engine sweep measured `engine` slower than the point's own
/// engine at the point's depth.
fn measured_slower(cx: &Context, p: &Point, engine: &str) -> bool {
    let at = |e: &str| {
        cx.engines_measured
            .iter()
            .find(|(x, qd, _)| x == e && *qd == p.qd)
            .map(|m| m.2)
    };
    match (p.engine.as_deref().and_then(at), at(engine)) {
        (Some(own), Some(other)) => other < ENGINE_SLOWER * own,
        _ => false,
    }
}

impl Form for Engines {
    fn text(&self) -> String {
        SYNTAX.into()
    }

    fn proposed(&self, now: &Now) -> Vec<Candidate> {
        ENGINES
            .into_iter()
            .filter(|e| !measured_slower(now.cx, now.point, e))
            .filter(|e| *e != SYNCHRONOUS || now.point.qd <= 1)
            .map(|e| Candidate {
                value: e.into(),
                options: vec![("ioengine".to_string(), e.to_string())],
            })
            .collect()
    }

    /// The point's own engine, and every engine where the point has none.
    fn in_place(&self, c: &Candidate, now: &Now) -> bool {
        now.point.engine.as_deref().is_none_or(|x| x == c.value)
    }

    fn gain(&self) -> Option<Gain> {
        Some(Gain::EngineGap)
    }

    fn replaces(&self, p: &Point) -> String {
        p.engine
            .clone()
            .unwrap_or_else(|| "the emulator's own".into())
    }

    fn nothing_to_try(&self, p: &Point) -> String {
        let sync = match p.qd {
            0 | 1 => "",
            _ => " (psync, synchronous, cannot keep that depth)",
        };
        format!(
            "nothing to try: the engine sweep measured every other engine slower at QD {}{sync}",
            p.qd
        )
    }
}
