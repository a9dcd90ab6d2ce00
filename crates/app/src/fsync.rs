//! Log appends each followed by `fdatasync`: what etcd and every write-ahead
//! log do. etcd's hardware guidance asks for a 99th percentile fdatasync
//! under 10 ms.
//!
//! Each job appends `bs` bytes at a time to its own log of `scale` MiB and
//! calls `fdatasync` after each append; at the end of the log it starts
//! again at the beginning, as a log of preallocated segments does. The log
//! is written in full and synced before the timed phase (as etcd
//! preallocates its WAL segments), so the appends overwrite allocated,
//! written blocks: the file system has no metadata to commit, and the device
//! should see one write of `bs` bytes and one flush per append. The device's
//! counters say whether it did.

use crate::checks::Check;
use crate::config::{Config, Workload};
use crate::error::Error;
use crate::phase::Phase;
use crate::result::AppResult;
use crate::{device, workdir};
use ssdready_core::hist::Histogram;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

#[derive(Default)]
struct JobCounts {
    lat: Histogram,
    append_lat: Histogram,
    syncs: u64,
    bytes: u64,
    wraps: u64,
    /// The kernel's count of this thread's write calls in the loop.
    write_calls: Option<u64>,
    error: Option<String>,
}

/// Run the fdatasync workload.
pub fn run(cfg: &Config, stop: Arc<AtomicBool>) -> Result<AppResult, Error> {
    let wd = workdir::prepare(&cfg.directory, Workload::Fdatasync)?;
    let log_bytes = (cfg.scale as u64) << 20;
    let mut files = Vec::new();
    for j in 0..cfg.jobs {
        let p = wd.join(format!("log.{j}"));
        files.push(preallocate(&p, log_bytes, &stop)?);
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Err(Error::Interrupted);
        }
    }
    workdir::sync_fs(&wd)?;
    let mut window = device::Window::new(&wd);
    window.begin();
    let phase = Phase::new(cfg.runtime_ns, stop);
    let per_job: Vec<JobCounts> = std::thread::scope(|s| {
        let hs: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(j, f)| {
                let phase = &phase;
                s.spawn(move || appender(f, j as u64, cfg, log_bytes, phase))
            })
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let elapsed = phase.elapsed_ns();
    let mut lat = Histogram::new();
    let mut append_lat = Histogram::new();
    let (mut syncs, mut bytes, mut wraps) = (0, 0, 0);
    let mut write_calls = Some(0);
    for c in &per_job {
        if let Some(e) = &c.error {
            return Err(Error::Runtime(e.clone()));
        }
        lat.merge(&c.lat);
        append_lat.merge(&c.append_lat);
        syncs += c.syncs;
        bytes += c.bytes;
        wraps += c.wraps;
        write_calls = write_calls.zip(c.write_calls).map(|(a, b)| a + b);
    }
    let dev = window.end(syncs, bytes);
    let mut r = AppResult {
        name: Workload::Fdatasync.name().into(),
        op: "fdatasync".into(),
        directory: wd.display().to_string(),
        jobs: cfg.jobs,
        scale: cfg.scale,
        seed: cfg.seed,
        app_write_bytes: bytes,
        interrupted: phase.stopped(),
        ..Default::default()
    };
    r.setting("bs", cfg.bs);
    r.setting("log_bytes", log_bytes);
    r.finish(elapsed, syncs, &lat, dev);
    r.count("fdatasync_calls", syncs);
    r.count("appends", syncs);
    r.count("bytes_written", bytes);
    r.count("log_wraps", wraps);
    r.count(
        "append_lat_ns",
        serde_json::to_value(crate::result::LatNs::of(&append_lat)).expect("serialises"),
    );
    if let Some(w) = write_calls {
        r.count("kernel_write_calls", w);
    }
    for c in checks(syncs, write_calls, r.device.as_ref(), flush_cache(&wd)) {
        r.check(c);
    }
    r.notes.push(etcd_note(r.lat_ns.p99));
    Ok(r)
}

/// Whether the disk under `dir` has a volatile write cache, so that an
/// fdatasync sends it a flush (`queue/write_cache`: "write back"; None:
/// unknown).
fn flush_cache(dir: &Path) -> Option<bool> {
    let d = device::disk_of(dir).ok()?;
    let s = std::fs::read_to_string(format!("/sys/block/{}/queue/write_cache", d.name)).ok()?;
    Some(s.trim() == "write back")
}

/// The fdatasync calls made, against the kernel's count of the appending
/// threads' write calls (one append before each call) and the device's
/// flushes (one per call on a disk with a volatile write cache).
fn checks(
    syncs: u64,
    write_calls: Option<u64>,
    dev: Option<&device::DeviceIo>,
    write_back: Option<bool>,
) -> Vec<Check> {
    let mut v = Vec::new();
    if let Some(w) = write_calls {
        v.push(
            Check::new(
                "kernel_write_calls",
                "fdatasync calls (one append each)",
                syncs as f64,
                "the kernel's count of the appending threads' write calls (/proc/thread-self/io syscw)",
                w as f64,
                0.0,
            )
            .with_note("an append or a call counted here that the kernel did not see, or a short write"),
        );
    }
    let flushes = dev.and_then(|d| d.flushes);
    if let (Some(f), Some(true)) = (flushes, write_back) {
        // Concurrent flushes may be merged by the block layer, and the
        // counter is the whole disk's.
        v.push(
            Check::new(
                "device_flushes",
                "fdatasync calls",
                syncs as f64,
                "flushes the device received (/sys/block/X/stat)",
                f as f64,
                0.5 * syncs as f64 + 10.0,
            )
            .with_note(
                "other I/O on the same disk, or flushes merged or dropped below the file system",
            ),
        );
    }
    v
}

/// etcd's guidance, applied to a measured 99th percentile.
pub fn etcd_note(p99_ns: u64) -> String {
    let ms = p99_ns as f64 / 1e6;
    let verdict = if ms < 10.0 { "meets" } else { "misses" };
    format!("p99 fdatasync {ms:.2} ms {verdict} etcd's guidance (99th percentile under 10 ms)")
}

/// Write the whole log once and sync it, so that the timed appends
/// overwrite allocated, written blocks.
fn preallocate(p: &Path, len: u64, stop: &AtomicBool) -> Result<File, Error> {
    let mut f = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(p)
        .map_err(|e| Error::io("creating", p, e))?;
    let chunk = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 && !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n])
            .map_err(|e| Error::io("writing", p, e))?;
        left -= n as u64;
    }
    f.sync_all().map_err(|e| Error::io("syncing", p, e))?;
    Ok(f)
}

fn appender(f: &File, job: u64, cfg: &Config, log_bytes: u64, phase: &Phase) -> JobCounts {
    let buf = crate::phase::random_bytes(cfg.seed, job, cfg.bs as usize);
    let mut c = JobCounts::default();
    let mut off = 0u64;
    let calls0 = crate::checks::thread_write_calls();
    while phase.running() {
        if off + cfg.bs > log_bytes {
            off = 0;
            c.wraps += 1;
        }
        let t0 = Instant::now();
        if let Err(e) = f.write_all_at(&buf, off) {
            c.error = Some(format!("appending to the log: {e}"));
            break;
        }
        let t1 = Instant::now();
        if let Err(e) = f.sync_data() {
            c.error = Some(format!("fdatasync of the log: {e}"));
            break;
        }
        let t2 = Instant::now();
        c.append_lat.record((t1 - t0).as_nanos() as u64);
        c.lat.record((t2 - t1).as_nanos() as u64);
        c.syncs += 1;
        c.bytes += cfg.bs;
        off += cfg.bs;
    }
    c.write_calls = calls0
        .zip(crate::checks::thread_write_calls())
        .map(|(a, b)| b - a);
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_the_kernel_or_the_device_did_not_see_are_named() {
        let dev = |f| device::DeviceIo {
            flushes: Some(f),
            ..Default::default()
        };
        let c = checks(1000, Some(1000), Some(&dev(990)), Some(true));
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|c| c.agree), "{c:?}");
        let c = checks(1000, Some(998), Some(&dev(3000)), Some(true));
        assert!(c.iter().all(|c| !c.agree), "{c:?}");
        // A write-through cache takes no flush: nothing to compare.
        let c = checks(1000, None, Some(&dev(0)), Some(false));
        assert!(c.is_empty(), "{c:?}");
    }
}
