//! fio compatibility: more of fio's examples/ run —
//! the file-operation engines (`filecreate`, `filestat`, `filedelete`),
//! and the options of the examples refused before — each compared with fio
//! 3.33 side by side where fio is installed.

use crate::common;
use common::fio::*;
use serde_json::Value;
use std::path::Path;

/// One tool run in a directory: its JSON and process output
/// (`ssdready_in` or `fio_in`).
type Runner = dyn Fn(&Path, &[&str]) -> (Value, std::process::Output);

/// A job's (I/Os, bytes, clat samples, lat samples).
type Counts = (u64, u64, u64, u64);

/// The counters fio's file-operation engines report per job, read the same
/// way from either tool.
fn fileop_counts(v: &Value) -> Vec<Counts> {
    v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            let r = &j["read"];
            let n = |k: &str| r[k]["N"].as_u64().unwrap_or(0);
            (
                r["total_ios"].as_u64().unwrap(),
                r["io_bytes"].as_u64().unwrap(),
                n("clat_ns"),
                n("lat_ns"),
            )
        })
        .collect()
}

fn files_in(dir: &Path, prefix: &str) -> Vec<std::fs::Metadata> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .map(|e| e.metadata().unwrap())
        .collect()
}

/// Run one tool's job of `engine` over 2 jobs × 12 files of 16 KiB with
/// bs=4k in a fresh directory: its counters and the files it left.
fn run_fileop(engine: &str, run: &Runner) -> (Vec<Counts>, Vec<std::fs::Metadata>) {
    let d = tempfile::tempdir().unwrap();
    let eng = format!("--ioengine={engine}");
    let args = [
        eng.as_str(),
        "--filesize=16k",
        "--nrfiles=12",
        "--bs=4k",
        "--name=t0",
        "--name=t1",
    ];
    let (v, out) = run(d.path(), &args);
    assert!(
        out.status.success(),
        "{engine}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (fileop_counts(&v), files_in(d.path(), "t"))
}

/// fio's filecreate, filestat and filedelete: one timed operation per file
/// (open with O_CREAT, stat, unlink) as the only latency, and fake I/Os
/// that count in I/Os and bytes: 12 files of 16 KiB at bs=4k give 48 I/Os,
/// 192 KiB and 12 clat samples per job, no lat samples — fio 3.33's exact
/// counts. filecreate leaves empty files (mode 0600), filestat the laid-out
/// ones, filedelete none.
#[test]
fn file_operation_engines_count_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for engine in ["filecreate", "filestat", "filedelete"] {
        let (ours, files) = run_fileop(engine, &ssdready_in);
        assert_eq!(ours, vec![(48, 48 * 4096, 12, 0); 2], "{engine}");
        match engine {
            "filecreate" => {
                assert_eq!(files.len(), 24);
                assert!(files.iter().all(|m| m.len() == 0), "created empty");
                use std::os::unix::fs::PermissionsExt;
                assert!(files
                    .iter()
                    .all(|m| m.permissions().mode() & 0o777 == 0o600));
            }
            "filestat" => {
                assert_eq!(files.len(), 24);
                assert!(files.iter().all(|m| m.len() == 16384), "laid out");
            }
            _ => assert!(files.is_empty(), "filedelete removes every file"),
        }
        if have_fio() {
            let (theirs, fio_files) = run_fileop(engine, &fio_in);
            assert_eq!(ours, theirs, "{engine}: ssdready vs fio 3.33");
            assert_eq!(files.len(), fio_files.len(), "{engine}: files left");
        }
    }
}

/// filestat of files that are not there fails as fio's does (ENOENT, the
/// job's error), rather than counting anything.
#[test]
fn filestat_of_missing_files_is_the_jobs_error() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let (v, _) = ssdready_in(
        d.path(),
        &[
            "--ioengine=filestat",
            "--create_on_open=1",
            "--filesize=4k",
            "--nrfiles=3",
            "--name=t0",
        ],
    );
    assert_eq!(v["jobs"][0]["error"], 2, "ENOENT");
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 0);
}

/// The offsets column of a fio log written with `log_offset=1`.
fn logged_offsets(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let cols: Vec<&str> = l.split(',').map(str::trim).collect();
            assert_eq!(cols.len(), 6, "fio's log_offset format: {l}");
            cols[4].parse().unwrap()
        })
        .collect()
}

/// Run a job writing `L_clat.1.log` with `log_offset=1` in a fresh
/// directory: the offsets it logged.
fn strided_offsets(args: &[&str], run: &Runner) -> Vec<u64> {
    let d = tempfile::tempdir().unwrap();
    let mut a = vec![
        "--name=z",
        "--filename=zf",
        "--size=32m",
        "--io_size=8m",
        "--bs=256k",
        "--write_lat_log=L",
        "--log_offset=1",
    ];
    a.extend_from_slice(args);
    let (_, out) = run(d.path(), &a);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    logged_offsets(&d.path().join("L_clat.1.log"))
}

/// zonemode=strided: 1 MiB read in each zone, then 3 MiB skipped, wrapping
/// at the end of the file (fio 3.33's offsets exactly, from its own
/// log_offset log); random I/O stays in the zone, covering its blocks
/// once before moving on.
#[test]
fn strided_zones_move_zonesize_then_skip() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let seq = [
        "--rw=read",
        "--zonemode=strided",
        "--zonesize=1m",
        "--zoneskip=3m",
    ];
    let ours = strided_offsets(&seq, &ssdready_in);
    let expect: Vec<u64> = (0..8u64)
        .flat_map(|z| (0..4u64).map(move |b| z * (4 << 20) + b * (256 << 10)))
        .collect();
    assert_eq!(ours, expect);
    // zonesize without zonemode means strided, as in fio.
    let implied = ["--rw=read", "--zonesize=1m", "--zoneskip=3m"];
    assert_eq!(strided_offsets(&implied, &ssdready_in), expect);
    let rnd = [
        "--rw=randread",
        "--zonemode=strided",
        "--zonesize=1m",
        "--zoneskip=3m",
    ];
    let ours_rnd = strided_offsets(&rnd, &ssdready_in);
    for (z, zone) in ours_rnd.chunks(4).enumerate() {
        let mut got = zone.to_vec();
        got.sort_unstable();
        assert_eq!(got, expect[z * 4..z * 4 + 4], "zone {z}: {ours_rnd:?}");
    }
    if have_fio() {
        assert_eq!(ours, strided_offsets(&seq, &fio_in), "ssdready vs fio 3.33");
        let fio_rnd = strided_offsets(&rnd, &fio_in);
        let zones = |v: &[u64]| v.iter().map(|o| o >> 22).collect::<Vec<_>>();
        assert_eq!(zones(&ours_rnd), zones(&fio_rnd), "zone order vs fio 3.33");
    }
}

/// fill_device=1 writes until the file system is full: ENOSPC ends the job
/// without an error, the file holds the whole 4 MiB, and the failed write
/// counts in total_ios as in fio 3.33 (65 I/Os of 64 KiB, 4 MiB moved).
#[test]
fn fill_device_writes_until_enospc() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(fs) = SmallFs::mount(4) else {
        return;
    };
    let f = fs.dir.path().join("f");
    let fa = format!("--filename={}", f.display());
    let args = [
        "--name=f",
        fa.as_str(),
        "--rw=write",
        "--bs=64k",
        "--fill_device=1",
    ];
    let summary = |v: &Value| {
        let j = &v["jobs"][0];
        (
            j["error"].clone(),
            j["write"]["io_bytes"].clone(),
            j["write"]["total_ios"].clone(),
        )
    };
    let (v, out) = ssdready_in(fs.dir.path(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(summary(&v), (0.into(), (4u64 << 20).into(), 65.into()));
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 4 << 20);
    if have_fio() {
        std::fs::remove_file(&f).unwrap();
        let (fv, _) = fio_in(fs.dir.path(), &args);
        assert_eq!(summary(&v), summary(&fv), "ssdready vs fio 3.33");
    }
}

/// fill_fs is fio's other name for fill_device; without fill_device the
/// same job on a file with no size is refused as before (no size).
#[test]
fn fill_device_needs_no_size() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let ok = common::ssdready(&[
        "run",
        "--parse-only",
        "--name=f",
        "--filename=x",
        "--rw=write",
        "--fill_fs=1",
    ]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let (v, out) = ssdready_in(
        d.path(),
        &[
            "--name=f",
            "--filename=x",
            "--rw=write",
            "--number_ios=4",
            "--fill_device=1",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(v["jobs"][0]["write"]["total_ios"], 4);
    let out = common::ssdready(&[
        "run",
        "--name=f",
        "--filename=/nonexistent-dir/x",
        "--rw=write",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// zonemode=strided without zonesize is bad input (fio refuses it too):
/// one line naming the job and the option, exit 2.
#[test]
fn strided_zones_need_a_zonesize() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = common::ssdready(&[
        "run",
        "--parse-only",
        "--name=z",
        "--filename=zf",
        "--size=1m",
        "--zonemode=strided",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("job 'z'") && err.contains("zonesize"), "{err}");
}
