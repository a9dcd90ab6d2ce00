//! fio compatibility, round 5 (issue 15): what fio's own examples need
//! beyond the basics — trims on the asynchronous engines, NUMA placement,
//! deduplication over a working set, submission offload and poisson
//! arrivals, latency-target search and per-I/O priorities — compared with
//! fio 3.33 side by side where fio is installed.

mod common;
use common::fio::*;
use common::{ssdready, LoopDev};
use serde_json::Value;

/// The first job's `dir` bytes (fio's JSON).
fn bytes(v: &Value, dir: &str) -> u64 {
    v["jobs"][0][dir]["io_bytes"].as_u64().unwrap_or(0)
}

/// Blocks the file system allocated to `path` (512-byte units).
fn allocated_blocks(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).unwrap().blocks()
}

/// rw=randtrim on libaio and io_uring, on a file: every block trimmed once
/// (a hole punched, as ssdready's psync does), so the file ends with no
/// blocks allocated; each trim counted as one I/O of its size.
#[test]
fn randtrim_on_libaio_and_io_uring_punches_holes_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    for engine in ["libaio", "io_uring"] {
        std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
        let before = allocated_blocks(&f);
        let fa = format!("--filename={}", f.display());
        let ea = format!("--ioengine={engine}");
        let (v, o) = ssdready_in(
            dir.path(),
            &["--name=t", &fa, &ea, "--rw=randtrim", "--bs=4k", "--size=1m", "--iodepth=8"],
        );
        assert!(o.status.success(), "{engine}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(ios(&v, "trim"), 256, "{engine}");
        assert_eq!(bytes(&v, "trim"), 1 << 20, "{engine}");
        assert_eq!(v["jobs"][0]["error"], 0, "{engine}");
        let after = allocated_blocks(&f);
        assert!(before >= 2048 && after == 0, "{engine}: {before} → {after} blocks");
    }
}

/// rw=randtrim on libaio and io_uring on a block device: BLKDISCARD, one
/// per block, the same I/Os and bytes as fio 3.33 (root: a loop device).
#[test]
fn randtrim_on_libaio_and_io_uring_discards_a_block_device_as_fio() {
    let Some(dev) = LoopDev::new("trim5", 8) else {
        return;
    };
    let fa = format!("--filename={}", dev.dev);
    for engine in ["libaio", "io_uring"] {
        let ea = format!("--ioengine={engine}");
        let args = [
            "--name=t", fa.as_str(), ea.as_str(), "--rw=randtrim", "--bs=64k", "--size=4m",
            "--iodepth=4", "--direct=1",
        ];
        let dir = tempfile::tempdir().unwrap();
        let (v, o) = ssdready_in(dir.path(), &args);
        assert!(o.status.success(), "{engine}: {}", String::from_utf8_lossy(&o.stderr));
        assert_eq!((ios(&v, "trim"), bytes(&v, "trim")), (64, 4 << 20), "{engine}");
        if have_fio() {
            let (fv, _) = fio_in(dir.path(), &args);
            assert_eq!(fv["jobs"][0]["error"], 0, "fio {engine}");
            assert_eq!((ios(&fv, "trim"), bytes(&fv, "trim")), (64, 4 << 20), "fio {engine}");
        }
    }
}
