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
//! N-ms window: mean latencies (rounded half up, as fio), or with
//! `log_max_value` the window's largest, and IOPS and KiB/s over the window
//! (bs 0); with `log_window_value=both` (newer fio) a line carries the
//! mean and then the largest (`time_ms, mean, max, ddir, …`; a per-I/O
//! line's second value is 0, a bw or IOPS line's is its value again). With
//! `log_issue_time` (newer fio) a last column is the I/O's issue time in
//! ns since the worker started (the slat and clat logs; 0 in the others
//! and on averaged lines). With `log_unix_epoch` or `log_alternate_epoch`, times count from
//! that clock's epoch instead ([`IoLog::with_epoch_ms`]). A worker's
//! histogram log (`write_hist_log`) is kept here too
//! ([`crate::iolog_hist`]). [`IoLog::rows`] gives the lines as numbers, for
//! fio's compressed binary form.
//!
//! Per-I/O logs hold every sample in memory until the end (48 bytes each);
//! averaged logs hold one small record per window. A caller that must
//! bound them (a server, for a remote client's job) sets the most samples
//! or windows a log holds ([`IoLog::with_max_samples`]): past it the log
//! records nothing more and says it is [`IoLog::full`].

use crate::req::Ddir;
use std::fmt::Write;

/// The slat of an I/O that has none: a synchronous engine's (fio logs a
/// submission latency only for I/Os queued asynchronously, so its slat
/// log of a psync job is empty).
pub const NO_SLAT: u64 = u64::MAX;

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
    /// I/Os with a slat ([`NO_SLAT`] otherwise).
    slat_ios: u64,
    /// Sums of (slat, clat, lat).
    sum: [u64; 3],
    /// Largest (slat, clat, lat): `log_max_value`.
    max: [u64; 3],
}

/// One line of a log, as numbers: fio's `io_sample`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Milliseconds (since the worker started, or the epoch asked for).
    pub t_ms: u64,
    pub value: u64,
    pub ddir: u8,
    pub bs: u32,
    /// The I/O's offset (0 on averaged lines).
    pub offset: u64,
    /// The I/O's priority value (`class << 13 | level`; 0 on averaged lines).
    pub prio: u16,
    /// The window's largest value (`log_window_value=both`; 0 otherwise).
    pub value1: u64,
    /// The I/O's issue time, ns since the worker started (slat and clat
    /// logs; 0 otherwise).
    pub issue_ns: u64,
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
    /// Added to every time (ms): the epoch of `log_unix_epoch`.
    epoch_ms: u64,
    /// `log_max_value`.
    max_value: bool,
    /// `log_window_value=both`.
    both: bool,
    /// `log_issue_time`.
    issue_time: bool,
    /// `write_hist_log`.
    hist: Option<Box<crate::iolog_hist::HistLog>>,
    /// When the job's measured time ended (ns since the worker started),
    /// once known: the windows past it are partial ([`IoLog::set_end`]).
    end_ns: Option<u64>,
    /// The most samples (or windows) it holds; None: no bound.
    max_samples: Option<usize>,
    /// A sample was dropped at the bound.
    full: bool,
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

/// Windows added up, direction by direction.
fn merged(ws: &[[Window; 3]]) -> [Window; 3] {
    let mut out = [Window::default(); 3];
    for w in ws {
        for (o, x) in out.iter_mut().zip(w) {
            o.ios += x.ios;
            o.bytes += x.bytes;
            o.slat_ios += x.slat_ios;
            for k in 0..3 {
                o.sum[k] += x.sum[k];
                o.max[k] = o.max[k].max(x.max[k]);
            }
        }
    }
    out
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

    /// Times count from an epoch `epoch_ms` before the worker started
    /// (`log_unix_epoch`, `log_alternate_epoch`).
    pub fn with_epoch_ms(mut self, epoch_ms: u64) -> Self {
        self.epoch_ms = epoch_ms;
        self
    }

    /// Averaged latency lines carry the window's maximum (`log_max_value`).
    pub fn with_max_value(mut self, on: bool) -> Self {
        self.max_value = on;
        self
    }

    /// Lines carry the mean and the largest value (`log_window_value=both`).
    pub fn with_both(mut self, on: bool) -> Self {
        self.both = on;
        self
    }

    /// Lines end with the I/O's issue time (`log_issue_time`).
    pub fn with_issue_time(mut self, on: bool) -> Self {
        self.issue_time = on;
        self
    }

    /// Hold at most `max` samples (per-I/O lines), or `max` windows of an
    /// averaged log; None: no bound.
    pub fn with_max_samples(mut self, max: Option<u64>) -> Self {
        self.max_samples = max.map(|m| usize::try_from(m).unwrap_or(usize::MAX));
        self
    }

    /// Whether the log reached its bound and dropped a sample.
    #[inline]
    pub fn full(&self) -> bool {
        self.full
    }

    /// Keep a histogram log too (`write_hist_log`).
    pub fn with_hist(mut self, hist: Option<crate::iolog_hist::HistLog>) -> Self {
        self.hist = hist.map(Box::new);
        self
    }

    /// The histogram log's text, if one is kept.
    pub fn hist_text(&self) -> Option<&str> {
        self.hist.as_deref().map(|h| h.text())
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
        if let Some(h) = &mut self.hist {
            h.record(t_ns, ddir, bs, lat[1]);
        }
        let [slat, clat, lat3] = lat;
        let max = self.max_samples.unwrap_or(usize::MAX);
        if self.avg_ns == 0 {
            if self.samples.len() >= max {
                self.full = true;
                return;
            }
            self.samples.push(Sample {
                t_ns,
                ddir: ddir as u8,
                bs,
                offset,
                slat,
                clat,
                lat: lat3,
                prio,
            });
            return;
        }
        let w = (t_ns / self.avg_ns) as usize;
        if w >= self.windows.len() {
            if w >= max {
                self.full = true;
                return;
            }
            self.windows.resize(w + 1, [Window::default(); 3]);
        }
        let x = &mut self.windows[w][ddir.idx()];
        x.ios += 1;
        x.bytes += bs as u64;
        x.slat_ios += u64::from(lat[0] != NO_SLAT);
        let first = usize::from(lat[0] == NO_SLAT);
        for ((sum, max), v) in x.sum.iter_mut().zip(&mut x.max).zip(lat).skip(first) {
            *sum += v;
            *max = (*max).max(v);
        }
    }

    /// The job's measured time ended `end_ns` after the worker started.
    /// An averaged log then ends as fio's does: the rate logs (bandwidth,
    /// IOPS) have no line for the last, partial window, whose I/Os a full
    /// window's time would make a rate too low (a lone I/O completing
    /// after a 2 s run at 250 ms windows read as 4 IOPS); the latency logs
    /// give that window's mean at the end time (fio's `finalize_logs`).
    pub fn set_end(&mut self, end_ns: u64) {
        self.end_ns = Some(end_ns);
    }

    /// Forget everything (end of ramp).
    pub fn clear(&mut self) {
        self.samples.clear();
        self.windows.clear();
        if let Some(h) = &mut self.hist {
            h.clear();
        }
    }

    /// The log's lines as numbers.
    pub fn rows(&self, kind: LogKind) -> Vec<Row> {
        if self.avg_ns == 0 {
            return self
                .samples
                .iter()
                .filter(|s| kind != LogKind::Slat || s.slat != NO_SLAT)
                .map(|s| Row {
                    t_ms: s.t_ns / 1_000_000 + self.epoch_ms,
                    value: match kind {
                        LogKind::Bw if s.lat > 0 => {
                            (s.bs as u128 * 1_000_000_000 / s.lat as u128 / 1024) as u64
                        }
                        LogKind::Bw => 0,
                        LogKind::Iops => 1,
                        LogKind::Slat => s.slat,
                        LogKind::Clat => s.clat,
                        LogKind::Lat => s.lat,
                    },
                    ddir: s.ddir,
                    bs: s.bs,
                    offset: s.offset,
                    prio: s.prio,
                    value1: 0,
                    issue_ns: match kind {
                        LogKind::Slat | LogKind::Clat => s.t_ns.saturating_sub(s.clat),
                        _ => 0,
                    },
                })
                .collect();
        }
        // The windows that end by the job's end are whole; the rest, one
        // partial window.
        let whole = self.end_ns.map_or(self.windows.len(), |e| {
            ((e / self.avg_ns) as usize).min(self.windows.len())
        });
        let mut windows: Vec<(u64, [Window; 3])> = self.windows[..whole]
            .iter()
            .enumerate()
            .map(|(i, w)| ((i as u64 + 1) * self.avg_ns, *w))
            .collect();
        let rate = matches!(kind, LogKind::Bw | LogKind::Iops);
        if let (Some(end), false, true) = (self.end_ns, rate, whole < self.windows.len()) {
            windows.push((end, merged(&self.windows[whole..])));
        }
        self.averaged_rows(kind, &windows)
    }

    /// The lines of averaged windows, each given with its time (ns).
    fn averaged_rows(&self, kind: LogKind, windows: &[(u64, [Window; 3])]) -> Vec<Row> {
        let secs = self.avg_ns as f64 / 1e9;
        let mut rows = Vec::new();
        for (at, w) in windows {
            let t_ms = at / 1_000_000 + self.epoch_ms;
            for (d, x) in w.iter().enumerate() {
                let n = if kind == LogKind::Slat {
                    x.slat_ios
                } else {
                    x.ios
                };
                if n == 0 {
                    continue;
                }
                // fio: the mean rounded half up, or the window's largest.
                let mean = |k: usize| {
                    ((2 * u128::from(x.sum[k]) + u128::from(n)) / (2 * u128::from(n))) as u64
                };
                let lat = |k: usize| match self.max_value {
                    true => (x.max[k], 0),
                    false => (mean(k), if self.both { x.max[k] } else { 0 }),
                };
                let same = |v: u64| (v, if self.both { v } else { 0 });
                let (value, value1) = match kind {
                    LogKind::Bw => same((x.bytes as f64 / 1024.0 / secs) as u64),
                    LogKind::Iops => same((x.ios as f64 / secs) as u64),
                    LogKind::Slat => lat(0),
                    LogKind::Clat => lat(1),
                    LogKind::Lat => lat(2),
                };
                rows.push(Row {
                    t_ms,
                    value,
                    ddir: d as u8,
                    bs: 0,
                    offset: 0,
                    prio: 0,
                    value1,
                    issue_ns: 0,
                });
            }
        }
        rows
    }

    /// The log's text in fio's format.
    pub fn render(&self, kind: LogKind) -> String {
        let mut out = String::new();
        for r in self.rows(kind) {
            let prio = if self.prio_values {
                format!("0x{:04x}", r.prio)
            } else {
                u8::from(r.prio >> 13 == 1).to_string()
            };
            let (t, v, d, bs) = (r.t_ms, r.value, r.ddir, r.bs);
            let _ = write!(out, "{t}, {v}, ");
            if self.both {
                let _ = write!(out, "{}, ", r.value1);
            }
            if self.offsets {
                let _ = write!(out, "{d}, {bs}, {}, {prio}", r.offset);
            } else {
                let _ = write!(out, "{d}, {bs}, {prio}");
            }
            if self.issue_time {
                let _ = write!(out, ", {}", r.issue_ns);
            }
            out.push('\n');
        }
        out
    }

    /// Whether lines carry the offset column (`log_offset`).
    pub fn offsets(&self) -> bool {
        self.offsets
    }

    /// Whether the priority column holds the value (`log_prio`).
    pub fn prio_values(&self) -> bool {
        self.prio_values
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
    fn the_last_partial_window_gives_latencies_but_no_rate() {
        // A 2 s job at 250 ms windows: 10 reads a window, and one read of
        // the drain completing 10 ms after the end.
        let ms = 1_000_000;
        let mut l = IoLog::new(250, false);
        for i in 0..80 {
            l.record(i * 25 * ms + ms, Ddir::Read, 4096, 0, [0, 100, 100]);
        }
        l.record(2010 * ms, Ddir::Read, 4096, 0, [0, 700, 700]);
        let lines = |l: &IoLog, k| l.render(k).lines().map(String::from).collect::<Vec<_>>();
        // Before the end is known, every window has its line.
        assert_eq!(lines(&l, LogKind::Iops).last().unwrap(), "2250, 4, 0, 0, 0");
        l.set_end(2000 * ms);
        let iops = lines(&l, LogKind::Iops);
        assert_eq!(iops.len(), 8, "{iops:?}");
        assert_eq!(iops.last().unwrap(), "2000, 40, 0, 0, 0");
        let clat = lines(&l, LogKind::Clat);
        assert_eq!(clat.len(), 9, "{clat:?}");
        assert_eq!(clat[7], "2000, 100, 0, 0, 0");
        assert_eq!(
            clat[8], "2000, 700, 0, 0, 0",
            "the drain's window, at the end"
        );
        // A job that ends inside a window: its part of that window and the
        // drain after it are one line.
        l.set_end(1900 * ms);
        let clat = lines(&l, LogKind::Clat);
        assert_eq!(clat.len(), 8, "{clat:?}");
        assert_eq!(
            clat[7], "1900, 155, 0, 0, 0",
            "(10 × 100 + 700) / 11 = 154.5, half up"
        );
        assert_eq!(lines(&l, LogKind::Bw).len(), 7);
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
            Some("100, 1005, 0, 0, 0"),
            "fio rounds the mean 1004.5 half up"
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

    #[test]
    fn window_value_both_and_issue_time_add_fios_columns() {
        let mut l = IoLog::new(0, true).with_both(true).with_issue_time(true);
        l.record(1_500_000, Ddir::Write, 4096, 8192, [100, 900, 1000]);
        assert_eq!(
            l.render(LogKind::Clat),
            "1, 900, 0, 1, 4096, 8192, 0, 1499100\n"
        );
        assert_eq!(l.render(LogKind::Lat), "1, 1000, 0, 1, 4096, 8192, 0, 0\n");
        let mut w = IoLog::new(100, false).with_both(true);
        w.record(10_000_000, Ddir::Read, 4096, 0, [0, 100, 100]);
        w.record(20_000_000, Ddir::Read, 4096, 0, [0, 301, 301]);
        assert_eq!(w.render(LogKind::Clat), "100, 201, 301, 0, 0, 0\n");
        assert_eq!(w.render(LogKind::Iops), "100, 20, 20, 0, 0, 0\n");
    }

    #[test]
    fn log_max_value_gives_each_windows_largest_latency() {
        let mut l = IoLog::new(100, false).with_max_value(true);
        for (i, clat) in [300u64, 900, 500].into_iter().enumerate() {
            l.record(
                i as u64 * 1_000_000,
                Ddir::Read,
                4096,
                0,
                [0, clat, clat + 10],
            );
        }
        assert_eq!(l.render(LogKind::Clat), "100, 900, 0, 0, 0\n");
        assert_eq!(l.render(LogKind::Lat), "100, 910, 0, 0, 0\n");
        // Bandwidth and IOPS have one value per window either way.
        assert_eq!(l.render(LogKind::Iops), "100, 30, 0, 0, 0\n");
    }

    #[test]
    fn an_epoch_moves_every_time_of_every_log() {
        let mut l = IoLog::new(0, false).with_epoch_ms(1_700_000_000_000);
        l.record(2_500_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        assert_eq!(l.render(LogKind::Clat), "1700000000002, 2, 0, 4096, 0\n");
        let hist = crate::iolog_hist::HistLog::new(1, 6, 1_700_000_000_000);
        let mut a = IoLog::new(10, false)
            .with_epoch_ms(1_700_000_000_000)
            .with_hist(Some(hist));
        a.record(1_000_000, Ddir::Write, 4096, 0, [1, 2, 3]);
        a.record(3_000_000, Ddir::Write, 4096, 0, [1, 2, 3]);
        assert_eq!(a.render(LogKind::Slat), "1700000000010, 1, 1, 0, 0\n");
        assert!(a
            .hist_text()
            .unwrap()
            .starts_with("1700000000003, 1, 4096, 2, 0"));
    }

    #[test]
    fn a_sync_engines_ios_leave_the_slat_log_empty_as_fio() {
        let mut l = IoLog::new(0, false);
        l.record(1_000_000, Ddir::Read, 4096, 0, [NO_SLAT, 5, 5]);
        assert_eq!(l.render(LogKind::Slat), "");
        assert_eq!(l.render(LogKind::Clat), "1, 5, 0, 4096, 0\n");
        let mut a = IoLog::new(10, false);
        a.record(1_000_000, Ddir::Read, 4096, 0, [NO_SLAT, 5, 5]);
        a.record(2_000_000, Ddir::Read, 4096, 0, [3, 7, 10]);
        assert_eq!(a.render(LogKind::Slat), "10, 3, 0, 0, 0\n");
        assert_eq!(a.render(LogKind::Clat), "10, 6, 0, 0, 0\n");
    }

    #[test]
    fn a_bounded_log_keeps_its_bound_and_says_it_is_full() {
        let mut l = IoLog::new(0, false).with_max_samples(Some(3));
        for i in 0..3 {
            l.record(i * 1_000_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        }
        assert!(!l.full());
        l.record(9_000_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        assert!(l.full());
        assert_eq!(l.rows(LogKind::Lat).len(), 3);
        // Averaged: the bound counts windows.
        let mut a = IoLog::new(1, false).with_max_samples(Some(2));
        a.record(500_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        a.record(1_500_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        assert!(!a.full());
        a.record(2_500_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        assert!(a.full());
        assert_eq!(a.render(LogKind::Iops).lines().count(), 2);
    }
}
