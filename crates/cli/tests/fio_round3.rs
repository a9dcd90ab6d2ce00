//! fio compatibility, round 3 (issue 15): more of fio's examples/ run —
//! the file-operation engines (`filecreate`, `filestat`, `filedelete`),
//! and the options of the examples refused before — each compared with fio
//! 3.33 side by side where fio is installed.

mod common;
use common::fio::*;
use serde_json::Value;
use std::path::Path;

/// The counters fio's file-operation engines report per job, read the same
/// way from either tool: (I/Os, bytes, clat samples, lat samples).
fn fileop_counts(v: &Value) -> Vec<(u64, u64, u64, u64)> {
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
fn run_fileop(
    engine: &str,
    run: &dyn Fn(&Path, &[&str]) -> (Value, std::process::Output),
) -> (Vec<(u64, u64, u64, u64)>, Vec<std::fs::Metadata>) {
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
