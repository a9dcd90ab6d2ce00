//! strategies.json (`docs/strategies-schema.md`): what ran and on what, the
//! peak per pattern, one entry per strategy × pattern that ran — with its %
//! of peak, seed 004's published figure and its trade-off against
//! async+intr — and what was skipped, with the reason.

use super::matrix::{self, Peak, Target, STRATEGIES};
use super::{Row, Skip, Tradeoff};
use serde_json::{json, Value};

/// strategies.json's `schema` and `schema_version`.
pub const SCHEMA: &str = "ssdready.strategies";
pub const SCHEMA_VERSION: u32 = 1;

/// How `cpu_ns_per_io` is measured.
const CPU_SOURCE: &str = "process: getrusage(RUSAGE_SELF) over the measured window, every \
     ssdready thread (emulator threads, SQPOLL thread and merge dispatcher included)";

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
        "command": std::env::args().collect::<Vec<_>>(),
        "target": c.target.spec(),
        "clock": "real",
        "threads": matrix::THREADS,
        "bs": matrix::BS,
        "runtime_s": c.runtime_s,
        "cpus": std::thread::available_parallelism().map_or(0, |n| n.get()),
        "loadavg": loadavg(),
        "interrupted": c.interrupted,
        "peak": peaks.iter().map(peak).collect::<Vec<_>>(),
        "strategies": STRATEGIES
            .iter()
            .map(|s| json!({"strategy": s.name, "options": s.options, "how": s.how}))
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
    let s = &r.summary;
    let peak = peaks
        .iter()
        .find(|x| x.pattern == r.pattern)
        .map_or(f64::NAN, |x| x.bw_bytes_per_s);
    json!({
        "strategy": r.strategy,
        "pattern": r.pattern,
        "ran": r.ran,
        "fallback": r.fallback,
        "interrupted": s.interrupted,
        "iops": num(s.iops),
        "mb_s": num(s.bw_bytes_per_s / 1e6),
        "pct_of_peak": num(100.0 * s.bw_bytes_per_s / peak),
        "mean_lat_ns": num(s.lat_mean_ns),
        "p99_lat_ns": s.lat_p99_ns,
        "cpu_ns_per_io": s.cpu.as_ref().map(|c| num(c.process_ns_per_io)),
        "cpu_source": s.cpu.as_ref().map(|_| CPU_SOURCE),
        "merge_mean_requests": r.merge_mean,
        "published_004_pct": matrix::published(r.strategy, r.pattern),
        "vs_async_intr": Tradeoff::of(r, rows).map(|t| json!({
            "iops_ratio": num(t.iops),
            "cpu_per_io_ratio": t.cpu_per_io.map(num),
            "p99_lat_ratio": num(t.p99),
        })),
    })
}
