//! fio compatibility: the file-access options that were
//! "not supported yet" — `file_append`, `create_only`, `sync_file_range`,
//! `serialize_overlap`, `lockfile`, `write_hint`, the per-I/O flags and
//! `profile` — compared with fio 3.33 side by side where fio is installed.

use crate::common;
use common::fio::*;
use serde_json::Value;

fn ok(o: &std::process::Output, who: &str) {
    assert!(
        o.status.success(),
        "{who}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn file_len(p: &std::path::Path) -> u64 {
    std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
}

/// file_append: the writes start at the file's old end (fio's
/// get_start_offset), so 32 KiB appended to 64 KiB leave 96 KiB, and the
/// old bytes are untouched.
#[test]
fn file_append_writes_land_after_the_old_end_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let mut tools = vec!["ssdready"];
    if have_fio() {
        tools.push("fio");
    }
    for tool in tools {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.dat");
        let old: Vec<u8> = (0..65536u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&f, &old).unwrap();
        let args = [
            "--name=a",
            "--filename=a.dat",
            "--rw=write",
            "--bs=4k",
            "--size=32k",
            "--file_append=1",
        ];
        let (v, o) = match tool {
            "fio" => fio_in(dir.path(), &args),
            _ => ssdready_in(dir.path(), &args),
        };
        ok(&o, tool);
        assert_eq!(ios(&v, "write"), 8, "{tool}");
        assert_eq!(file_len(&f), 98304, "{tool}");
        let now = std::fs::read(&f).unwrap();
        assert_eq!(&now[..65536], &old[..], "{tool}: the old bytes changed");
    }
}

/// create_only: the files are laid out as fio lays them out, and no I/O
/// is done.
#[test]
fn create_only_lays_out_the_same_files_as_fio_and_does_no_io() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let args = [
        "--name=c",
        "--nrfiles=2",
        "--rw=read",
        "--bs=4k",
        "--size=32k",
        "--create_only=1",
    ];
    let dir = tempfile::tempdir().unwrap();
    let (v, o) = ssdready_in(dir.path(), &args);
    ok(&o, "ssdready");
    assert_eq!(ios(&v, "read"), 0);
    let ours: Vec<u64> = ["c.0.0", "c.0.1"]
        .iter()
        .map(|n| file_len(&dir.path().join(n)))
        .collect();
    assert_eq!(ours, [16384, 16384]);
    if have_fio() {
        let fdir = tempfile::tempdir().unwrap();
        let (fv, fo) = fio_in(fdir.path(), &args);
        ok(&fo, "fio");
        assert_eq!(ios(&fv, "read"), 0);
        let theirs: Vec<u64> = ["c.0.0", "c.0.1"]
            .iter()
            .map(|n| file_len(&fdir.path().join(n)))
            .collect();
        assert_eq!(ours, theirs);
    }
}

/// sync_file_range=write:4 over 32 writes: 7 ranged syncs (after writes
/// 4, 8, …, 28; none once the job is done), in fio's sync latency but not
/// in its total_ios (which counts fsyncs), on each engine.
#[test]
fn sync_file_range_every_four_writes_counts_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for engine in ["psync", "libaio", "io_uring"] {
        let dir = tempfile::tempdir().unwrap();
        let ea = format!("--ioengine={engine}");
        let args = [
            "--name=s",
            "--filename=s.dat",
            &ea,
            "--rw=write",
            "--bs=4k",
            "--size=128k",
            "--sync_file_range=write:4",
        ];
        let sync = |v: &Value| {
            let s = &v["jobs"][0]["sync"];
            (s["total_ios"].as_u64(), s["lat_ns"]["N"].as_u64())
        };
        let (v, o) = ssdready_in(dir.path(), &args);
        ok(&o, engine);
        assert_eq!(ios(&v, "write"), 32, "{engine}");
        assert_eq!(sync(&v), (Some(0), Some(7)), "{engine}");
        if have_fio() {
            let (fv, fo) = fio_in(dir.path(), &args);
            ok(&fo, "fio");
            assert_eq!(ios(&fv, "write"), 32, "fio {engine}");
            assert_eq!(sync(&v), sync(&fv), "{engine}");
        }
    }
}

/// serialize_overlap: random 4 KiB writes at depth 16 over a 64 KiB
/// region (no random map, so blocks repeat): overlapping requests wait
/// for the one in flight, and verification passes.
#[test]
fn serialize_overlap_holds_overlapping_writes_back_and_verify_passes() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let (v, o) = ssdready_in(
        dir.path(),
        &[
            "--name=o",
            "--filename=o.dat",
            "--ioengine=io_uring",
            "--iodepth=16",
            "--rw=randwrite",
            "--bs=4k",
            "--size=64k",
            "--io_size=2m",
            "--norandommap=1",
            "--verify=crc32c",
            "--serialize_overlap=1",
        ],
    );
    ok(&o, "ssdready");
    let j = &v["jobs"][0];
    assert_eq!(j["error"], 0, "{j}");
    let waited = j["ssdready"]["overlaps_waited"].as_u64().unwrap_or(0);
    assert!(waited > 0, "no request waited: {j}");
}

/// lockfile=exclusive with four clones of a psync job on one file: one
/// I/O at a time, so the I/Os' summed latency fits in the run's second.
#[test]
fn lockfile_exclusive_serializes_four_clones() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let (v, o) = ssdready_in(
        dir.path(),
        &[
            "--name=l",
            "--lockfile=exclusive",
            "--filename=l.dat",
            "--numjobs=4",
            "--rw=randrw",
            "--bs=256k",
            "--size=16m",
            "--runtime=1",
            "--time_based=1",
            "--group_reporting=1",
        ],
    );
    ok(&o, "ssdready");
    let j = &v["jobs"][0];
    let busy_s: f64 = ["read", "write"]
        .iter()
        .map(|d| {
            j[d]["total_ios"].as_f64().unwrap_or(0.0)
                * j[d]["clat_ns"]["mean"].as_f64().unwrap_or(0.0)
        })
        .sum::<f64>()
        / 1e9;
    assert!(ios(&v, "read") + ios(&v, "write") > 100, "{j}");
    assert!(
        busy_s < 1.1,
        "four clones were busy {busy_s:.2} s in a 1 s run: not one at a time"
    );
}

/// write_hint: buffered, the hint goes on the inode and the job runs; with
/// direct=1 fio 3.33 asks for F_SET_FILE_RW_HINT, which Linux 5.17 removed,
/// so both tools fail the job.
#[test]
fn write_hint_runs_buffered_and_fails_with_direct_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for direct in ["0", "1"] {
        let dir = tempfile::tempdir().unwrap();
        let da = format!("--direct={direct}");
        let args = [
            "--name=h",
            "--filename=h.dat",
            "--rw=write",
            "--bs=4k",
            "--size=64k",
            "--write_hint=short",
            &da,
        ];
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
            .args(["run", "--quiet", "--output-format=json"])
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        if direct == "0" {
            ok(&o, "ssdready");
        } else {
            assert!(!o.status.success());
            assert!(err.contains("F_SET_FILE_RW_HINT"), "{err}");
        }
        if have_fio() {
            let f = std::process::Command::new("fio")
                .arg("--output-format=json")
                .args(args)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert_eq!(f.status.success(), o.status.success(), "direct={direct}");
        }
    }
}

/// profile= is refused when the job file is read (exit 2, the option named);
/// per-I/O flags on an engine that has none are refused before anything runs.
#[test]
fn profile_and_flags_without_an_engine_for_them_are_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("p.fio");
    std::fs::write(&job, "[p]\nprofile=tiobench\nfilename=p.dat\nsize=1m\n").unwrap();
    let o = common::ssdready(&["run", "--quiet", job.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("option 'profile'") && err.contains("tiobench"),
        "{err}"
    );
    let fa = format!("--filename={}", dir.path().join("n.dat").display());
    for flag in ["--nowait=1", "--force_async=4", "--userspace_reap=1"] {
        let o = common::ssdready(&[
            "run",
            "--quiet",
            "--name=n",
            &fa,
            "--size=1m",
            "--rw=write",
            flag,
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(
            !dir.path().join("n.dat").exists(),
            "{flag}: something was written"
        );
    }
}
