//! The page cache as what a run's rate measured: a job's buffered reads
//! that never reached the device (served from memory: the rate is the
//! copy's, at the CPU's pace, and the device's figures do not apply), or
//! its buffered writes that the device did not take within the run,
//! written back after it.
//! A run of a second or so fills the page cache well below its dirty
//! limit, so the writes go at the speed of memory; closing the target
//! then writes them back at the device's pace, or at the pace of a limit
//! on it (a write throttle on the group the writeback is charged to).
//! The rate is the cache's, not the device's; in a run of the job's own
//! length the dirty pages reach their limit and the writer waits for the
//! writeback.

use super::found::{pct, Found, Test};
use super::view::{Shared, View};
use ssdready_core::units::fmt_bytes;
use ssdready_measured::summary::DiskSummary;

/// The device wrote under this share of the bytes the job wrote within
/// the run.
pub const DEVICE_SHARE: f64 = 0.5;

/// The run lasted at least this many times its I/O's length, and this
/// many seconds more: the close waited for the writeback.
pub const AFTER_TIMES: f64 = 2.0;
pub const AFTER_S: f64 = 2.0;

/// Buffered writes the device did not take within the run, whose
/// writeback held the run's end well past its I/O; else buffered reads
/// the device did not serve.
pub fn page_cache(sh: &Shared, v: &View) -> Test {
    let w = &v.run.workload;
    let (reads, writes) = match w.direct {
        true => (false, false),
        false => crate::levers::binding::directions(&w.rw),
    };
    let Some(d) = v.disk.filter(|_| reads || writes) else {
        return Test::No(match reads || writes {
            true => "no device counters to show where the I/O went".into(),
            false => "no I/O through the page cache to weigh".into(),
        });
    };
    let written = writes.then(|| written_back(sh, v, d));
    match (written, reads.then(|| served_reads(v, d))) {
        (Some(Test::No(w)), Some(Test::No(r))) => Test::No(format!("{w}; {r}")),
        (Some(Test::No(_)), Some(t)) | (Some(t), _) | (None, Some(t)) => t,
        (None, None) => Test::No("no I/O through the page cache to weigh".into()),
    }
}

/// The job's buffered reads that never reached the device: at least
/// [`DEVICE_SHARE`] of them, by the bytes the application read against
/// the device's own read counter ([`DiskSummary::cache_hit_pct`]).
fn served_reads(v: &View, d: &DiskSummary) -> Test {
    let s = &v.run.summary;
    let Some(hit) = d.cache_hit_pct.filter(|_| s.read_iops > 0.0) else {
        return Test::No("no reads to set against the device's".into());
    };
    let read = format!(
        "{} read {} within the run, and {} of the job's reads never reached it",
        d.name,
        fmt_bytes(d.read_bytes as f64),
        pct(hit)
    );
    if hit < 100.0 * (1.0 - DEVICE_SHARE) {
        return Test::No(read);
    }
    Test::Holds(Found {
        part: format!("{read}: the page cache served them"),
        evidence: vec![format!(
            "/sys/block/{}/stat against the bytes the job read ({:.0} reads a second): the reads were copies from memory, at the CPU's pace, and the device's figures do not apply to them (direct=1, or a file larger than the memory, measures the device)",
            d.name, s.read_iops
        )],
        setting: None,
        margin_pct: Some(100.0 * (hit / (100.0 * (1.0 - DEVICE_SHARE)) - 1.0)),
    })
}

/// Buffered writes the device did not take within the run, whose
/// writeback held the run's end well past its I/O.
fn written_back(sh: &Shared, v: &View, d: &DiskSummary) -> Test {
    let r = v.run;
    let w = &r.workload;
    let s = &r.summary;
    let window = s.window_s.max(1e-3);
    let wrote = s.write_iops * w.bs as f64 * window;
    let device = d.bytes.saturating_sub(d.read_bytes) as f64;
    let after = r.wall_s - window;
    let held = after >= (AFTER_TIMES * window).max(AFTER_S);
    if wrote <= 0.0 || device >= DEVICE_SHARE * wrote || !held {
        return Test::No(format!(
            "{} wrote {} of the {} the job wrote within the run, which ended {after:.1} s after its I/O",
            d.name,
            fmt_bytes(device),
            fmt_bytes(wrote)
        ));
    }
    let mut evidence = vec![
        format!(
            "{} of the job's writes reached {} within the run (/sys/block/{}/stat against the job's {:.0} writes a second)",
            pct(100.0 * device / wrote),
            d.name,
            d.name,
            s.write_iops
        ),
        format!(
            "the run took {:.1} s for {window:.1} s of I/O: closing the target waited for its dirty pages, written back at the device's pace or a limit's on it",
            r.wall_s
        ),
    ];
    evidence.push(pace(sh, (wrote - device) / after, w.bs));
    Test::Holds(Found {
        part: format!(
            "{} wrote {} of the {} the job's writes made within the run, and the run ended {after:.1} s after its I/O, writing them back",
            d.name,
            fmt_bytes(device),
            fmt_bytes(wrote)
        ),
        evidence,
        setting: None,
        margin_pct: Some(100.0 * (1.0 - device / (DEVICE_SHARE * wrote))),
    })
}

/// The writeback's pace, `bytes_per_s` of `bs`-byte writes, in words;
/// with the write throttle of the study's group whose value it is near.
fn pace(sh: &Shared, bytes_per_s: f64, bs: u64) -> String {
    let per_s = bytes_per_s / bs.max(1) as f64;
    let near = sh.caps.io_limit(false, bs).filter(|(limit, _)| {
        (super::configured::THROTTLE_LOW..=super::configured::THROTTLE_HIGH)
            .contains(&(per_s / limit))
    });
    format!(
        "after the run they were written back at {}/s ({per_s:.0} writes a second){}",
        fmt_bytes(bytes_per_s),
        near.map_or(String::new(), |(_, c)| format!(
            ": the pace {} = {} allows on {}",
            c.setting.name, c.setting.value, c.device
        ))
    )
}

#[cfg(test)]
mod tests {
    use super::super::caps::{IoCap, IoKind};
    use super::super::tests::{judge, ruled, run, target};
    use super::super::*;
    use ssdready_measured::record::RunRecord;

    /// Buffered 4 KiB random writes at 63K a second for a second, the
    /// device writing `device` bytes within it, the run ending `wall_s`
    /// after it began.
    fn buffered(device: u64, wall_s: f64) -> RunRecord {
        let mut r = run("qd-16", 16, 63_000.0, 27.0, 83.0, 2.0);
        (r.workload.rw, r.workload.direct, r.wall_s) = ("randwrite".into(), false, wall_s);
        r.summary.write_iops = 63_000.0;
        let d = r.summary.disk.as_mut().unwrap();
        (d.read_bytes, d.bytes) = (0, device);
        r
    }

    /// Buffered 4 KiB random reads at 120K a second, `hit` % of them
    /// never reaching the device.
    fn cached_reads(hit: f64) -> RunRecord {
        let mut r = run("qd-16", 16, 120_000.0, 27.0, 83.0, 2.0);
        (r.workload.rw, r.workload.direct) = ("randread".into(), false);
        r.summary.read_iops = 120_000.0;
        let d = r.summary.disk.as_mut().unwrap();
        d.read_bytes = ((100.0 - hit) / 100.0 * 120_000.0 * 4096.0) as u64;
        d.cache_hit_pct = Some(hit);
        r
    }

    #[test]
    fn buffered_reads_the_device_did_not_serve_are_the_page_caches_rate() {
        let t = target(TargetKind::RamDevice);
        let s = judge(&t, &[cached_reads(100.0)], &Caps::default(), true);
        assert_eq!(s.limit, Cause::PageCache, "{s:?}");
        assert!(
            s.part.contains("100 % of the job's reads never reached it"),
            "{}",
            s.part
        );
        // Most of them reached the device: the device's rate.
        let s = judge(&t, &[cached_reads(20.0)], &Caps::default(), true);
        assert_ne!(s.limit, Cause::PageCache, "{s:?}");
        assert!(ruled(&s, Cause::PageCache)
            .why
            .contains("20 % of the job's reads"));
        // Direct reads never are.
        let mut direct = cached_reads(100.0);
        direct.workload.direct = true;
        let s = judge(&t, &[direct], &Caps::default(), true);
        assert_ne!(s.limit, Cause::PageCache, "{s:?}");
        // A mix whose writes the device took: its reads are weighed still.
        let mut mixed = cached_reads(100.0);
        (mixed.workload.rw, mixed.summary.write_iops) = ("randrw".into(), 1_000.0);
        let s = judge(&t, &[mixed], &Caps::default(), true);
        assert_eq!(s.limit, Cause::PageCache, "{s:?}");
    }

    #[test]
    fn buffered_writes_the_device_took_after_the_run_are_the_page_caches_rate() {
        let t = target(TargetKind::RamDevice);
        let s = judge(&t, &[buffered(0, 30.0)], &Caps::default(), true);
        assert_eq!(s.limit, Cause::PageCache, "{s:?}");
        assert!(s.part.contains("ended 29.0 s after its I/O"), "{}", s.part);
        // 258 MB written back in 29 s: 2,172 writes of 4 KiB a second, the
        // pace of a 2,000-IOPS write throttle on the group.
        let throttle = Caps {
            io: vec![IoCap {
                kind: IoKind::WriteIops,
                value: 2_000.0,
                device: "loop3".into(),
                setting: super::super::tests::setting(
                    "blkio.throttle.write_iops_device",
                    "7:3 2000",
                ),
            }],
            ..Default::default()
        };
        let s = judge(&t, &[buffered(0, 30.0)], &throttle, true);
        assert_eq!(s.limit, Cause::PageCache, "{s:?}");
        let paced = s
            .evidence
            .iter()
            .find(|e| e.contains("2172 writes a second"));
        assert!(
            paced.is_some_and(|e| e.contains("the pace blkio.throttle.write_iops_device")),
            "{:?}",
            s.evidence
        );
        // The device took them within the run: no cache between.
        let s = judge(&t, &[buffered(63_000 * 4096, 1.5)], &Caps::default(), true);
        assert_ne!(s.limit, Cause::PageCache, "{s:?}");
        // Or the run ended with its I/O: nothing waited to be written.
        let s = judge(&t, &[buffered(0, 1.5)], &Caps::default(), true);
        assert_ne!(s.limit, Cause::PageCache, "{s:?}");
        assert!(ruled(&s, Cause::PageCache)
            .why
            .contains("ended 0.5 s after"));
        // Direct writes never are.
        let mut direct = buffered(0, 30.0);
        direct.workload.direct = true;
        let s = judge(&t, &[direct], &Caps::default(), true);
        assert_ne!(s.limit, Cause::PageCache, "{s:?}");
    }
}
