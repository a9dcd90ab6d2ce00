//! fio's `--bandwidth-log[=NAME]`: the bandwidth of all jobs together,
//! sampled every 500 ms (fio's `bwavgtime` default) outside ramp time, in
//! `NAME-read_bw.log`, `NAME-write_bw.log` and `NAME-trim_bw.log` (NAME
//! defaults to `agg`), lines in fio's log format: `time_ms, KiB/s, ddir,
//! 0, 0`, time counted from the start of the run.

use crate::live::Live;
use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// fio's default `bwavgtime`.
const EVERY_NS: u64 = 500_000_000;

/// The aggregate bandwidth log of a run.
pub(crate) struct AggBwLog {
    prefix: String,
    /// The run's start (clock ns).
    genesis: u64,
    last_t: Option<u64>,
    last_bytes: [u64; 3],
    lines: [String; 3],
}

impl AggBwLog {
    pub(crate) fn new(prefix: &str, genesis: u64) -> AggBwLog {
        AggBwLog {
            prefix: prefix.to_string(),
            genesis,
            last_t: None,
            last_bytes: [0; 3],
            lines: Default::default(),
        }
    }

    /// A new phase: its workers count from zero.
    pub(crate) fn phase_start(&mut self) {
        self.last_t = None;
        self.last_bytes = [0; 3];
    }

    /// Sample at `now` (clock ns) when 500 ms passed since the last one;
    /// `measuring` is false during ramp time, which fio leaves out.
    pub(crate) fn tick(&mut self, now: u64, measuring: bool, lives: &[Arc<Live>]) {
        let bytes: [u64; 3] =
            std::array::from_fn(|d| lives.iter().map(|l| l.bytes[d].load(Relaxed)).sum());
        let Some(last) = self.last_t.filter(|_| measuring) else {
            self.last_t = Some(now);
            self.last_bytes = bytes;
            return;
        };
        let dt = now.saturating_sub(last);
        if dt < EVERY_NS {
            return;
        }
        let t_ms = now.saturating_sub(self.genesis) / 1_000_000;
        for (d, line) in self.lines.iter_mut().enumerate() {
            let diff = bytes[d].saturating_sub(self.last_bytes[d]);
            let kib_s = (u128::from(diff) * 1_000_000_000 / u128::from(dt) / 1024) as u64;
            let _ = writeln!(line, "{t_ms}, {kib_s}, {d}, 0, 0");
        }
        self.last_t = Some(now);
        self.last_bytes = bytes;
    }

    /// The files to write.
    pub(crate) fn files(self) -> Vec<(String, String)> {
        Self::paths(&self.prefix)
            .into_iter()
            .zip(self.lines)
            .collect()
    }

    /// The files it will write, for the checks before the run.
    pub(crate) fn paths(prefix: &str) -> Vec<String> {
        ["read", "write", "trim"]
            .iter()
            .map(|d| format!("{prefix}-{d}_bw.log"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_every_half_second_outside_ramp() {
        let live = Arc::new(Live::default());
        let lives = [live.clone()];
        let mut log = AggBwLog::new("agg", 0);
        log.tick(0, false, &lives);
        live.bytes[0].store(1 << 20, Relaxed);
        log.tick(400_000_000, false, &lives);
        log.tick(450_000_000, true, &lives);
        live.bytes[0].store((1 << 20) + (512 << 10), Relaxed);
        log.tick(700_000_000, true, &lives);
        log.tick(900_000_000, true, &lives);
        let files = log.files();
        assert_eq!(files[0].0, "agg-read_bw.log");
        assert_eq!(files[0].1, "900, 1024, 0, 0, 0\n", "512 KiB in 500 ms");
        assert_eq!(files[1].1, "900, 0, 1, 0, 0\n");
    }
}
