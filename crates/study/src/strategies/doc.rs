//! strategies.json (`docs/strategies-schema.md`): what ran and on what, the
//! peak per pattern, one entry per strategy × pattern that ran — with its %
//! of peak, Shin's published figure and its trade-off against
//! async+intr — and what was skipped, with the reason.

use super::matrix::Target;
use super::{Peak, ResultDoc, Row, Skip, BS, STRATEGIES, THREADS};
use serde_json::{json, Value};

/// strategies.json's `schema` and `schema_version`.
pub const SCHEMA: &str = "ssdready.strategies";
pub const SCHEMA_VERSION: u32 = 1;

/// A finite number, or null.
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// What the whole command was.
pub struct Context<'a> {
    /// The command line as given.
    pub command: Vec<String>,
    pub target: &'a Target,
    pub runtime_s: f64,
    pub interrupted: bool,
}

/// The whole document.
pub fn document(c: &Context, rows: &[Row], skips: &[Skip], peaks: &[Peak]) -> Value {
    json!({
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool": format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        "command": c.command,
        "target": c.target.spec(),
        "clock": "real",
        "threads": THREADS,
        "bs": BS,
        "runtime_s": c.runtime_s,
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "loadavg": loadavg(),
        "interrupted": c.interrupted,
        "peak": peaks.iter().map(peak).collect::<Vec<_>>(),
        "strategies": STRATEGIES
            .iter()
            .map(|s| json!({"strategy": s.name, "options": s.command_line(), "how": s.how}))
            .collect::<Vec<_>>(),
        "results": rows.iter().map(|r| result(r, rows, peaks)).collect::<Vec<_>>(),
        "skipped": skips
            .iter()
            .map(|s| json!({"strategy": s.strategy, "pattern": s.pattern, "reason": s.reason}))
            .collect::<Vec<_>>(),
    })
}

/// The 1, 5 and 15 minute load averages when the runs ended.
fn loadavg() -> Option<String> {
    let l = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
}

fn peak(p: &Peak) -> Value {
    json!({
        "pattern": p.pattern,
        "mb_s": num(p.bw_bytes_per_s / 1e6),
        "iops": num(p.iops),
        "source": p.source,
        "detail": p.detail,
    })
}

/// One strategy × pattern that ran.
fn result(r: &Row, rows: &[Row], peaks: &[Peak]) -> Value {
    serde_json::to_value(ResultDoc::of(r, rows, peaks)).unwrap_or(Value::Null)
}
