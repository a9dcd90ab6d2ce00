//! Block-device statistics from `/sys/block/X/stat` (Documentation/block/stat.rst).
//!
//! The kernel adds each request's time from `block_io_start` to
//! `block_io_done` to `read_ticks` / `write_ticks` in nanoseconds and shows the
//! sum in milliseconds, so over a window of many I/Os the mean time an I/O
//! spends in the block layer, scheduler, driver and device is exact to well
//! under a microsecond. Subtracting it from the mean latency the application
//! saw gives the mean time *above* the block layer (system call, io_uring or
//! VFS, file system, completion delivery and wake-up) — but only when the
//! device saw the same I/Os we issued: merges, splits, other users of the
//! device or a file system's own I/O make the two counts differ, and then the
//! split is withheld with the reason.

use ssdready_core::result::DiskResult;

/// The counters of /sys/block/X/stat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks: u64,
    pub in_flight: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
    pub discard_ios: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks: u64,
}

/// Parse the text of a stat file (11, 15 or 17 fields).
pub fn parse_stat(text: &str) -> Option<DiskStat> {
    let v: Vec<u64> = text
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 11 {
        return None;
    }
    let g = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(DiskStat {
        read_ios: g(0),
        read_merges: g(1),
        read_sectors: g(2),
        read_ticks: g(3),
        write_ios: g(4),
        write_merges: g(5),
        write_sectors: g(6),
        write_ticks: g(7),
        in_flight: g(8),
        io_ticks: g(9),
        time_in_queue: g(10),
        discard_ios: g(11),
        discard_merges: g(12),
        discard_sectors: g(13),
        discard_ticks: g(14),
    })
}

/// Read /sys/block/`disk`/stat now.
pub fn read(disk: &str) -> Option<DiskStat> {
    parse_stat(&std::fs::read_to_string(format!("/sys/block/{disk}/stat")).ok()?)
}

/// One field of a `/proc/PID/io` text (`read_bytes`: bytes the process's
/// tasks asked of the block layer, the file system's own reads for them
/// included).
pub fn io_field(io: &str, key: &str) -> Option<u64> {
    io.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// The bytes this process's tasks (every thread, io_uring's workers among
/// them) have read through the block layer, from `/proc/self/io`.
pub fn own_read_bytes() -> Option<u64> {
    io_field(
        &std::fs::read_to_string("/proc/self/io").ok()?,
        "read_bytes",
    )
}

/// What ssdready itself saw on a device during the window.
#[derive(Clone, Copy, Debug, Default)]
pub struct AppView {
    /// Completed I/Os.
    pub ios: u64,
    /// Sum of their total latencies, ns.
    pub lat_sum_ns: f64,
    /// Bytes they moved.
    pub bytes: u64,
}

/// Build the device's result from two snapshots and the app's view.
pub fn split(name: &str, a: &DiskStat, b: &DiskStat, app: AppView, window_ns: u64) -> DiskResult {
    let d = |x: u64, y: u64| y.saturating_sub(x);
    let mut r = DiskResult {
        name: name.to_string(),
        read_ios: d(a.read_ios, b.read_ios),
        read_merges: d(a.read_merges, b.read_merges),
        read_sectors: d(a.read_sectors, b.read_sectors),
        read_ticks_ms: d(a.read_ticks, b.read_ticks),
        write_ios: d(a.write_ios, b.write_ios),
        write_merges: d(a.write_merges, b.write_merges),
        write_sectors: d(a.write_sectors, b.write_sectors),
        write_ticks_ms: d(a.write_ticks, b.write_ticks),
        discard_ios: d(a.discard_ios, b.discard_ios),
        discard_ticks_ms: d(a.discard_ticks, b.discard_ticks),
        io_ticks_ms: d(a.io_ticks, b.io_ticks),
        time_in_queue_ms: d(a.time_in_queue, b.time_in_queue),
        app_ios: app.ios,
        app_bytes: app.bytes,
        app_mean_ns: if app.ios > 0 {
            app.lat_sum_ns / app.ios as f64
        } else {
            0.0
        },
        ..DiskResult::default()
    };
    if window_ns > 0 {
        r.util_pct = (100.0 * r.io_ticks_ms as f64 * 1e6 / window_ns as f64).min(100.0);
    }
    let dev_ios = r.read_ios + r.write_ios + r.discard_ios;
    let ticks = r.read_ticks_ms + r.write_ticks_ms + r.discard_ticks_ms;
    if dev_ios > 0 {
        r.block_mean_ns = Some(ticks as f64 * 1e6 / dev_ios as f64);
    }
    let merges = r.read_merges + r.write_merges;
    let tolerance = (app.ios as f64 * 0.01).max(2.0);
    r.counts_agree = app.ios > 0 && (dev_ios as f64 - app.ios as f64).abs() <= tolerance;
    if r.counts_agree {
        r.above_block_mean_ns = r.block_mean_ns.map(|b| r.app_mean_ns - b);
        if ticks < 100 {
            r.note = Some(format!(
                "only {ticks} ms of block-layer time in total: the block mean has at most 1 ms / {dev_ios} I/Os of rounding"
            ));
        }
    } else if app.ios == 0 {
        r.note = Some("no ssdready I/O reached this device in the window".into());
    } else {
        let why = if merges > 0 {
            format!("{merges} requests were merged in the block layer")
        } else if let Some(per_io) = r.split_per_io() {
            format!(
                "the kernel split each I/O into {per_io:.1} requests on average (the device's max_sectors_kb), \
                 and the bytes agree"
            )
        } else if dev_ios > app.ios {
            "other I/O reached the device (another process, the file system's own I/O, or I/O split into several requests)".to_string()
        } else {
            "some I/O did not reach the device (page cache hits, or requests merged before accounting)".to_string()
        };
        r.note = Some(format!(
            "above-block split withheld: the device counted {dev_ios} I/Os, ssdready {}; {why}",
            app.ios
        ));
    }
    r
}

/// A latency summary from log-linear buckets (representative ns, count),
/// with an exact sum and count.
pub fn summary_from_buckets(
    buckets: &[(u64, u64)],
    sum_ns: u64,
    count: u64,
    pcts: &[f64],
) -> ssdready_core::hist::LatSummary {
    let mut s = ssdready_core::hist::LatSummary {
        n: count,
        min_ns: buckets.first().map(|b| b.0).unwrap_or(0),
        max_ns: buckets.last().map(|b| b.0).unwrap_or(0),
        mean_ns: if count > 0 {
            sum_ns as f64 / count as f64
        } else {
            0.0
        },
        ..Default::default()
    };
    let total: u64 = buckets.iter().map(|b| b.1).sum();
    let mut var = 0.0;
    for &(v, c) in buckets {
        var += c as f64 * (v as f64 - s.mean_ns).powi(2);
    }
    s.stddev_ns = if total > 1 {
        (var / total as f64).sqrt()
    } else {
        0.0
    };
    for &p in pcts {
        let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut cum = 0;
        let v = buckets.iter().find(|b| {
            cum += b.1;
            cum >= rank
        });
        s.percentiles.push((p, v.map(|b| b.0).unwrap_or(0)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_line_is_parsed() {
        let s = parse_stat("  100 2 800 50 10 0 80 5 0 40 55 0 0 0 0 0 0\n").unwrap();
        assert_eq!(s.read_ios, 100);
        assert_eq!(s.read_ticks, 50);
        assert_eq!(s.write_ios, 10);
        assert_eq!(s.io_ticks, 40);
        assert!(parse_stat("1 2 3").is_none());
    }

    #[test]
    fn above_block_time_is_app_minus_block_when_counts_agree() {
        let a = DiskStat::default();
        let b = DiskStat {
            read_ios: 100_000,
            read_ticks: 1_500,
            io_ticks: 900,
            ..a
        };
        let r = split(
            "loop0",
            &a,
            &b,
            AppView {
                ios: 100_000,
                lat_sum_ns: 100_000.0 * 20_000.0,
                bytes: 100_000 * 4096,
            },
            1_000_000_000,
        );
        assert!(r.counts_agree);
        assert!((r.block_mean_ns.unwrap() - 15_000.0).abs() < 1e-6);
        assert!((r.above_block_mean_ns.unwrap() - 5_000.0).abs() < 1e-6);
        assert!((r.util_pct - 90.0).abs() < 1e-9);
        let r = split(
            "loop0",
            &a,
            &b,
            AppView {
                ios: 50_000,
                lat_sum_ns: 1e9,
                bytes: 50_000 * 4096,
            },
            1_000_000_000,
        );
        assert!(!r.counts_agree);
        assert!(r.above_block_mean_ns.is_none());
        assert!(r.note.unwrap().contains("withheld"));
    }

    #[test]
    fn a_split_io_is_named_as_such() {
        // 1,000 reads of 1 MiB reached the device as 2,000 requests.
        let a = DiskStat::default();
        let b = DiskStat {
            read_ios: 2_000,
            read_sectors: 2_000 * 1_024,
            read_ticks: 900,
            ..a
        };
        let app = AppView {
            ios: 1_000,
            lat_sum_ns: 1e9,
            bytes: 1_000 << 20,
        };
        let r = split("loop0", &a, &b, app, 1_000_000_000);
        assert!(!r.counts_agree);
        assert_eq!(r.split_per_io(), Some(2.0));
        let note = r.note.unwrap();
        assert!(note.contains("split each I/O into 2.0 requests"), "{note}");
    }
}
