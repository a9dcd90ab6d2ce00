//! Each workload's figures set against an independent source.
//!
//! A rate ssdready reports is only as good as its counting: each workload
//! therefore compares its own count or rate with one it did not make —
//! SQLite's `history` rows and their timestamps (SQLite's own clock), the
//! kernel's count of a thread's write calls (`/proc/thread-self/io`,
//! `syscw`) and the device's flush counter, pgbench's reported rate against
//! the one its per-transaction log gives, and PostgreSQL's
//! `pgbench_history`. Each comparison is a [`Check`] with the error it is
//! allowed; one outside it says so in the result.

use serde::Serialize;

/// One comparison of a figure with an independent source.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Check {
    /// Short name (e.g. `history_rows`).
    pub name: String,
    /// What is compared, in words.
    pub what: String,
    /// ssdready's own figure.
    pub ours: f64,
    /// The independent source, in words.
    pub source: String,
    /// The source's figure.
    pub theirs: f64,
    /// The largest difference the two may have and still agree (the
    /// error of the comparison, in the figures' unit).
    pub tolerance: f64,
    pub agree: bool,
    /// Why they may differ, or what a disagreement means.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Check {
    /// Compare `ours` with `theirs`, allowing `tolerance`.
    pub fn new(
        name: &str,
        what: &str,
        ours: f64,
        source: &str,
        theirs: f64,
        tolerance: f64,
    ) -> Check {
        let agree = ours.is_finite() && theirs.is_finite() && (ours - theirs).abs() <= tolerance;
        Check {
            name: name.into(),
            what: what.into(),
            ours,
            source: source.into(),
            theirs,
            tolerance,
            agree,
            note: None,
        }
    }

    /// Add why the two may differ (said with a disagreement).
    pub fn with_note(mut self, note: impl Into<String>) -> Check {
        self.note = Some(note.into());
        self
    }

    /// The check as a line for a person.
    pub fn line(&self) -> String {
        let verdict = if self.agree {
            "agree".to_string()
        } else {
            format!(
                "DISAGREE beyond their error{}",
                self.note
                    .as_ref()
                    .map_or(String::new(), |n| format!(" ({n})"))
            )
        };
        format!(
            "check {}: {} {} against {} {} (allowed ±{}): {verdict}",
            self.name,
            self.what,
            num(self.ours),
            self.source,
            num(self.theirs),
            num(self.tolerance)
        )
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

/// The relative error allowed between two rates of `n` operations whose
/// windows differ by up to `edge_ns` at their ends, over `elapsed_ns`:
/// 5 % for clocks and rounding, one operation in `n` at each end, and the
/// edges' share of the window.
pub fn rate_tolerance(n: u64, edge_ns: u64, elapsed_ns: u64) -> f64 {
    let n = n.max(1) as f64;
    0.05 + 2.0 / n + edge_ns as f64 / elapsed_ns.max(1) as f64
}

/// A rate computed from the first and last timestamps of `n` events `span`
/// apart: `n − 1` intervals (None when it cannot be had).
pub fn span_rate(n: u64, span_ns: u64) -> Option<f64> {
    (n >= 2 && span_ns > 0).then(|| (n - 1) as f64 * 1e9 / span_ns as f64)
}

/// A thread's count of write system calls (`syscw` of
/// `/proc/thread-self/io`, kept by the kernel; None without
/// `CONFIG_TASK_IO_ACCOUNTING`).
pub fn thread_write_calls() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/io").ok()?;
    io_field(&s, "syscw")
}

fn io_field(s: &str, key: &str) -> Option<u64> {
    s.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_difference_beyond_the_tolerance_disagrees() {
        let c = Check::new("rows", "transactions", 1000.0, "rows", 1000.0, 0.0);
        assert!(c.agree);
        assert!(c.line().ends_with(": agree"), "{}", c.line());
        let c = Check::new("rows", "transactions", 1000.0, "rows", 999.0, 0.0)
            .with_note("a commit not counted");
        assert!(!c.agree);
        assert!(c.line().contains("DISAGREE"), "{}", c.line());
        assert!(c.line().contains("a commit not counted"));
        let c = Check::new("rate", "tx/s", 100.0, "log", 104.0, 5.0);
        assert!(c.agree);
        let c = Check::new("rate", "tx/s", 100.0, "log", 106.0, 5.0);
        assert!(!c.agree);
        let c = Check::new("rate", "tx/s", f64::NAN, "log", 100.0, 1e9);
        assert!(!c.agree);
    }

    #[test]
    fn rates_from_timestamps_and_their_error() {
        assert_eq!(span_rate(11, 1_000_000_000), Some(10.0));
        assert_eq!(span_rate(1, 1_000_000_000), None);
        assert_eq!(span_rate(5, 0), None);
        let t = rate_tolerance(1000, 100_000_000, 1_000_000_000);
        assert!((t - (0.05 + 0.002 + 0.1)).abs() < 1e-12);
    }

    #[test]
    fn write_calls_are_read_from_the_kernels_io_file() {
        let s = "rchar: 6976\nwchar: 10\nsyscr: 10\nsyscw: 7\nread_bytes: 0\n";
        assert_eq!(io_field(s, "syscw"), Some(7));
        assert_eq!(io_field(s, "syscr"), Some(10));
        assert_eq!(io_field(s, "nope"), None);
        // Where the kernel keeps the count, a write moves it by one.
        if let Some(a) = thread_write_calls() {
            let f = tempfile::tempfile().unwrap();
            use std::io::Write;
            (&f).write_all(b"x").unwrap();
            assert_eq!(thread_write_calls(), Some(a + 1));
        }
    }
}
