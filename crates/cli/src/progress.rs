//! Live progress on stderr, once a second: elapsed / remaining time and the
//! current IOPS and bandwidth per direction. Silent when stderr is not a
//! terminal or with `--quiet`.

use crate::worker::Live;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdready_core::units::{fmt_bytes, fmt_count};
use std::io::IsTerminal;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// The display; a no-op when hidden.
pub struct Progress {
    bar: ProgressBar,
    last: [(u64, u64); 3],
    last_t: f64,
    expected_s: Option<f64>,
}

/// Whether progress should be drawn.
pub fn visible(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

impl Progress {
    /// A display for a run expected to last `expected_s` seconds, if known.
    pub fn new(show: bool, expected_s: Option<f64>) -> Self {
        let bar = if show {
            ProgressBar::new_spinner()
        } else {
            ProgressBar::hidden()
        };
        if !show {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
        Progress {
            bar,
            last: [(0, 0); 3],
            last_t: 0.0,
            expected_s,
        }
    }

    /// Update from the workers' live counters at `t` seconds since start.
    pub fn tick(&mut self, t: f64, lives: &[Arc<Live>]) {
        let mut now = [(0u64, 0u64); 3];
        for l in lives {
            for (d, n) in now.iter_mut().enumerate() {
                n.0 += l.ios[d].load(Relaxed);
                n.1 += l.bytes[d].load(Relaxed);
            }
        }
        let dt = (t - self.last_t).max(1e-3);
        let mut parts = Vec::new();
        for (d, name) in ["read", "write", "trim"].iter().enumerate() {
            let (ios, bytes) = (now[d].0 - self.last[d].0, now[d].1 - self.last[d].1);
            if now[d].0 > 0 {
                parts.push(format!(
                    "{name} {} IOPS {}/s",
                    fmt_count(ios as f64 / dt),
                    fmt_bytes(bytes as f64 / dt)
                ));
            }
        }
        let time = match self.expected_s {
            Some(e) => format!("{t:.0}s elapsed, {:.0}s left", (e - t).max(0.0)),
            None => format!("{t:.0}s elapsed"),
        };
        self.bar
            .set_message(format!("{time} | {}", parts.join(" | ")));
        self.bar.tick();
        self.last = now;
        self.last_t = t;
    }

    /// Remove the line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A byte progress bar for laying out files.
pub fn layout_bar(show: bool, path: &str, total: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template(
            "laying out {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
        )
        .expect("static template"),
    );
    b.set_message(path.to_string());
    b
}
