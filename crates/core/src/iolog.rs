//! fio-format logs (`write_bw_log`, `write_lat_log`, `write_iops_log`).
//!
//! Each line is `time_ms, value, ddir, bs, 0` (ddir 0 read, 1 write, 2
//! trim; the last column is fio's I/O priority: 1 for the real-time
//! class, else 0, or with `log_prio` the priority value itself as fio
//! writes it, `0x6000` for class 3 level 0; 0 on averaged lines); with
//! `log_offset`, `time_ms, value, ddir, bs, offset, 0` (the I/O's offset
//! in its file; 0 on averaged lines, as in fio). Time is
//! milliseconds since the worker started. Without `log_avg_msec`, there is
//! one line per I/O: latencies in ns, IOPS 1, bandwidth the I/O's size over
//! its latency in KiB/s. With `log_avg_msec=N`, one line per direction per
//! N-ms window: mean latencies, and IOPS and KiB/s over the window (bs 0).
//!
//! Per-I/O logs hold every sample in memory until the end (40 bytes each);
//! averaged logs hold one small record per window.

use crate::req::Ddir;
use std::fmt::Write;

/// One I/O, for per-I/O logs.
#[derive(Clone, Copy, Debug)]
struct Sample {
    t_ns: u64,
    ddir: u8,
    bs: u32,
    offset: u64,
    slat: u64,
    clat: u64,
    lat: u64,
    /// The I/O's priority value (`class << 13 | level`).
    prio: u16,
}

#[derive(Clone, Copy, Debug, Default)]
struct Window {
    ios: u64,
    bytes: u64,
    slat: u64,
    clat: u64,
    lat: u64,
}

/// The samples of one worker.
#[derive(Clone, Debug, Default)]
pub struct IoLog {
    avg_ns: u64,
    /// `log_offset`: the offset column.
    offsets: bool,
    /// `log_prio`: the priority column holds the priority value.
    prio_values: bool,
    samples: Vec<Sample>,
    windows: Vec<[Window; 3]>,
}

/// Which log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    /// `_bw`: KiB/s.
    Bw,
    /// `_iops`.
    Iops,
    /// `_slat`, ns.
    Slat,
    /// `_clat`, ns.
    Clat,
    /// `_lat`, ns.
    Lat,
}

impl LogKind {
    /// The file-name suffix fio uses.
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::Slat => "slat",
            LogKind::Clat => "clat",
            LogKind::Lat => "lat",
        }
    }
}

impl IoLog {
    /// A log averaging over `avg_msec` (0: per I/O), with the offset
    /// column when `offsets` (fio's `log_offset`).
    pub fn new(avg_msec: u64, offsets: bool) -> Self {
        IoLog {
            avg_ns: avg_msec * 1_000_000,
            offsets,
            ..IoLog::default()
        }
    }

    /// Record one completed I/O of `bs` bytes at `offset`, at `t_ns` since
    /// the worker started; its latencies are `lat` = (slat, clat, lat).
    #[inline]
    pub fn record(&mut self, t_ns: u64, ddir: Ddir, bs: u32, offset: u64, lat: [u64; 3]) {
        self.record_prio(t_ns, ddir, bs, offset, lat, 0);
    }

    /// The priority column holds each I/O's priority value (`log_prio`).
    pub fn with_prio_values(mut self, on: bool) -> Self {
        self.prio_values = on;
        self
    }

    /// [`IoLog::record`] for an I/O of priority `prio` (`class << 13 | level`).
    #[inline]
    pub fn record_prio(
        &mut self,
        t_ns: u64,
        ddir: Ddir,
        bs: u32,
        offset: u64,
        lat: [u64; 3],
        prio: u16,
    ) {
        let [slat, clat, lat] = lat;
        if self.avg_ns == 0 {
            self.samples.push(Sample {
                t_ns,
                ddir: ddir as u8,
                bs,
                offset,
                slat,
                clat,
                lat,
                prio,
            });
            return;
        }
        let w = (t_ns / self.avg_ns) as usize;
        if w >= self.windows.len() {
            self.windows.resize(w + 1, [Window::default(); 3]);
        }
        let x = &mut self.windows[w][ddir.idx()];
        x.ios += 1;
        x.bytes += bs as u64;
        x.slat += slat;
        x.clat += clat;
        x.lat += lat;
    }

    /// Forget everything (end of ramp).
    pub fn clear(&mut self) {
        self.samples.clear();
        self.windows.clear();
    }

    /// The log's text in fio's format.
    pub fn render(&self, kind: LogKind) -> String {
        let mut out = String::new();
        if self.avg_ns == 0 {
            for s in &self.samples {
                let v = match kind {
                    LogKind::Bw => {
                        if s.lat > 0 {
                            (s.bs as u128 * 1_000_000_000 / s.lat as u128 / 1024) as u64
                        } else {
                            0
                        }
                    }
                    LogKind::Iops => 1,
                    LogKind::Slat => s.slat,
                    LogKind::Clat => s.clat,
                    LogKind::Lat => s.lat,
                };
                let t = s.t_ns / 1_000_000;
                let prio = if self.prio_values {
                    format!("0x{:04x}", s.prio)
                } else {
                    u8::from(s.prio >> 13 == 1).to_string()
                };
                if self.offsets {
                    let _ = writeln!(out, "{t}, {v}, {}, {}, {}, {prio}", s.ddir, s.bs, s.offset);
                } else {
                    let _ = writeln!(out, "{t}, {v}, {}, {}, {prio}", s.ddir, s.bs);
                }
            }
            return out;
        }
        let secs = self.avg_ns as f64 / 1e9;
        for (i, w) in self.windows.iter().enumerate() {
            let t_ms = (i as u64 + 1) * self.avg_ns / 1_000_000;
            for (d, x) in w.iter().enumerate() {
                if x.ios == 0 {
                    continue;
                }
                let v = match kind {
                    LogKind::Bw => (x.bytes as f64 / 1024.0 / secs) as u64,
                    LogKind::Iops => (x.ios as f64 / secs) as u64,
                    LogKind::Slat => x.slat / x.ios,
                    LogKind::Clat => x.clat / x.ios,
                    LogKind::Lat => x.lat / x.ios,
                };
                let offset = if self.offsets { "0, " } else { "" };
                let _ = writeln!(out, "{t_ms}, {v}, {d}, 0, {offset}0");
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_io_lines_follow_fios_format() {
        let mut l = IoLog::new(0, false);
        l.record(1_500_000, Ddir::Write, 4096, 8192, [100, 900, 1000]);
        assert_eq!(l.render(LogKind::Clat), "1, 900, 1, 4096, 0\n");
        let mut o = IoLog::new(0, true);
        o.record(1_500_000, Ddir::Write, 4096, 8192, [100, 900, 1000]);
        assert_eq!(o.render(LogKind::Clat), "1, 900, 1, 4096, 8192, 0\n");
        assert_eq!(l.render(LogKind::Iops), "1, 1, 1, 4096, 0\n");
        assert_eq!(
            l.render(LogKind::Bw),
            format!("1, {}, 1, 4096, 0\n", 4096u64 * 1_000_000 / 1024)
        );
    }

    #[test]
    fn averaged_lines_are_per_window_and_direction() {
        let mut l = IoLog::new(100, false);
        for i in 0..10 {
            l.record(i * 10_000_000, Ddir::Read, 4096, 0, [0, 1000 + i, 1000 + i]);
        }
        l.record(150_000_000, Ddir::Write, 8192, 0, [0, 5000, 5000]);
        let iops = l.render(LogKind::Iops);
        assert_eq!(iops, "100, 100, 0, 0, 0\n200, 10, 1, 0, 0\n");
        assert_eq!(
            l.render(LogKind::Lat).lines().next(),
            Some("100, 1004, 0, 0, 0")
        );
        assert_eq!(
            l.render(LogKind::Bw).lines().nth(1),
            Some("200, 80, 1, 0, 0")
        );
    }

    #[test]
    fn the_priority_column_is_fios_rt_flag_or_with_log_prio_the_value() {
        let mut l = IoLog::new(0, false);
        l.record_prio(1_000_000, Ddir::Read, 4096, 0, [1, 2, 3], 0x2003);
        l.record_prio(2_000_000, Ddir::Read, 4096, 0, [1, 2, 3], 0x6000);
        assert_eq!(
            l.render(LogKind::Clat),
            "1, 2, 0, 4096, 1\n2, 2, 0, 4096, 0\n"
        );
        let l = l.with_prio_values(true);
        assert_eq!(
            l.render(LogKind::Lat),
            "1, 3, 0, 4096, 0x2003\n2, 3, 0, 4096, 0x6000\n"
        );
    }
}
