//! fio compatibility: `ignore_error` — per kind of
//! error (read, write, verify), the errnos a job counts in `total_err` and
//! goes past — and compressible / deduplicable write buffers, compared with
//! fio 3.33 side by side where fio is installed.

use crate::common;
use common::fio::*;
use common::ssdready;
use serde_json::Value;

/// A run's (exit code, error, total_err, first_error, bytes written).
type Outcome = (Option<i32>, Value, Value, Value, Value);

/// Write 8 MiB in 64 KiB blocks to a file made 8 MiB long (sparse) on a
/// 4 MiB tmpfs: the second half of the writes fails with ENOSPC.
/// The outcome of each tool (ssdready, then fio when installed).
fn write_past_a_full_fs(extra: &str) -> Option<Vec<Outcome>> {
    let fs = SmallFs::mount(4)?;
    let f = fs.dir.path().join("f");
    let fa = format!("--filename={}", f.display());
    let args = [
        "--name=f",
        fa.as_str(),
        "--size=8m",
        "--rw=write",
        "--bs=64k",
        extra,
    ];
    let mut out = Vec::new();
    let tools: &[&Runner] = if have_fio() {
        &[&ssdready_in, &fio_in]
    } else {
        &[&ssdready_in]
    };
    for run in tools {
        let _ = std::fs::remove_file(&f);
        std::fs::File::create(&f).unwrap().set_len(8 << 20).unwrap();
        let (v, o) = run(fs.dir.path(), &args);
        let j = &v["jobs"][0];
        out.push((
            o.status.code(),
            j["error"].clone(),
            j["total_err"].clone(),
            j["first_error"].clone(),
            j["write"]["io_bytes"].clone(),
        ));
    }
    Some(out)
}

type Runner = dyn Fn(&std::path::Path, &[&str]) -> (Value, std::process::Output);

/// ignore_error=,ENOSPC: the 64 writes that find the file system full are
/// counted in total_err (first_error 28) and the job goes on to its end,
/// exit code 0, 4 MiB written — as fio 3.33 (whose JSON "error" still
/// shows the last ENOSPC; ssdready's is 0, as for continue_on_error).
#[test]
fn ignore_error_goes_past_enospc_and_counts_it_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(runs) = write_past_a_full_fs("--ignore_error=,ENOSPC") else {
        return;
    };
    let (code, error, total, first, bytes) = runs[0].clone();
    assert_eq!(code, Some(0));
    assert_eq!(error, 0);
    assert_eq!(
        (total, first, bytes),
        (64.into(), 28.into(), (4u64 << 20).into())
    );
    if let Some(fio) = runs.get(1) {
        assert_eq!(fio.0, Some(0), "fio's exit code");
        assert_eq!(
            (&runs[0].2, &runs[0].3, &runs[0].4),
            (&fio.2, &fio.3, &fio.4)
        );
    }
}

/// continue_on_error=write alone goes past EIO (and EILSEQ) only, as fio's
/// default list: ENOSPC still stops the job with error 28 after 4 MiB.
#[test]
fn continue_on_error_alone_stops_at_enospc_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(runs) = write_past_a_full_fs("--continue_on_error=write") else {
        return;
    };
    let (code, error, _, _, bytes) = runs[0].clone();
    assert_eq!(code, Some(1));
    assert_eq!((error, bytes), (28.into(), (4u64 << 20).into()));
    if let Some(fio) = runs.get(1) {
        assert_eq!((&runs[0].1, &runs[0].4), (&fio.1, &fio.4), "vs fio 3.33");
    }
}

/// A run on the emulator with injected read errors (EIO), in ssdready's
/// own JSON: (exit code, the job).
fn faulty_reads(ignore: &str) -> (Option<i32>, Value) {
    let o = ssdready(&[
        "run",
        "--output-format=native",
        "--name=j",
        "--filename=emu:nvme-tlc,size=256m,fault_read_error_rate=0.01,fault_seed=7",
        "--rw=randread",
        "--bs=4k",
        "--runtime=300ms",
        "--time_based",
        ignore,
    ]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    (o.status.code(), v["jobs"][0].clone())
}

/// ignore_error=EIO (the read list) goes past injected read errors without
/// continue_on_error; a list for writes only leaves reads fatal.
#[test]
fn ignore_error_covers_only_the_kind_it_lists() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (code, j) = faulty_reads("--ignore_error=EIO");
    assert_eq!(code, Some(0), "{j}");
    assert!(j["continued_errors"].as_u64().unwrap() > 10, "{j}");
    assert!(j["first_error"].is_null(), "{j}");

    let (code, j) = faulty_reads("--ignore_error=,EIO");
    assert_eq!(code, Some(1), "{j}");
    assert_eq!(j["continued_errors"], 0, "{j}");
    let first = j["first_error"].as_str().unwrap();
    assert!(first.contains("Input/output error"), "{first}");
}

/// An errno fio does not know by name is one line, exit code 2.
#[test]
fn an_unknown_errno_name_is_one_line_and_exit_2() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let o = ssdready(&[
        "run",
        "--name=j",
        "--filename=emu:nvme-tlc,size=64m",
        "--ignore_error=EIO:EWHAT",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("ignore_error") && stderr.contains("EWHAT"),
        "{stderr}"
    );
    assert!(o.stdout.is_empty());
}

/// (share of zero bytes, share of distinct 4 KiB blocks) of a file.
fn compressibility_and_dedupe(path: &std::path::Path) -> (f64, f64) {
    let data = std::fs::read(path).unwrap();
    let zeros = data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64;
    let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
    (
        zeros,
        blocks.len() as f64 / data.chunks(4096).count() as f64,
    )
}

/// buffer_compress_percentage=40 in 1 KiB chunks with dedupe_percentage=50:
/// the 16 MiB written are 40 % zero bytes and half their 4 KiB blocks
/// repeat another, within 2 points of the asked values and of fio 3.33's
/// file (measured here: 0.403 and 0.493; fio 0.404 and 0.496).
#[test]
fn compressible_and_deduplicable_buffers_are_written_as_asked() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let args = |f: &'static str| {
        [
            "--name=j",
            f,
            "--size=16m",
            "--rw=write",
            "--bs=4k",
            "--buffer_compress_percentage=40",
            "--buffer_compress_chunk=1k",
            "--dedupe_percentage=50",
        ]
    };
    let (_, out) = ssdready_in(d.path(), &args("--filename=s"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (zeros, unique) = compressibility_and_dedupe(&d.path().join("s"));
    assert!((zeros - 0.40).abs() < 0.02, "zero share {zeros}");
    assert!((unique - 0.50).abs() < 0.02, "distinct blocks {unique}");
    if have_fio() {
        fio_in(d.path(), &args("--filename=f"));
        let (fz, fu) = compressibility_and_dedupe(&d.path().join("f"));
        assert!((zeros - fz).abs() < 0.02, "zeros {zeros} vs fio {fz}");
        assert!((unique - fu).abs() < 0.03, "distinct {unique} vs fio {fu}");
    }
}

/// `size` with `filesize`: the files are `filesize` long and the job moves
/// `size` bytes over them (at most what they hold), as fio's io_size
/// defaults to size — a 32 MiB file with size=8m is read 8 MiB (32 reads of
/// 256 KiB; ssdready read the whole file once), and with size=64m 32 MiB.
/// The I/O counts are fio 3.33's, checked side by side where fio is
/// installed.
#[test]
fn size_with_filesize_moves_size_bytes_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", tmp.path().join("f").display());
    for (size, rw, want) in [
        ("--size=8m", "--rw=read", 32),
        ("--size=8m", "--rw=randread", 32),
        ("--size=8m", "--rw=write", 32),
        ("--size=64m", "--rw=read", 128),
    ] {
        let args = [
            "--name=j",
            f.as_str(),
            size,
            "--filesize=32m",
            rw,
            "--bs=256k",
            "--ioengine=psync",
        ];
        let dir = if rw == "--rw=write" { "write" } else { "read" };
        let (v, o) = ssdready_in(tmp.path(), &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(ios(&v, dir), want, "{size} {rw}");
        if have_fio() {
            let (fv, _) = fio_in(tmp.path(), &args);
            assert_eq!(ios(&fv, dir), want, "fio: {size} {rw}");
        }
    }
}

/// The null engine with `filesize` and no `size` (fio's own test jobs
/// t0019–t0024, t0030 and its client/server jobs): fio sizes the null
/// engine's files by `filesize`, `nrfiles` of them; ssdready refused the
/// job for want of a size. 1 MiB of 4 KiB reads is 256 reads; two files of
/// 1 MiB, 512 — fio 3.33's counts, checked side by side where installed.
#[test]
fn null_engine_is_sized_by_filesize_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    for (nrfiles, want) in [("--nrfiles=1", 256), ("--nrfiles=2", 512)] {
        let args = [
            "--name=j",
            "--ioengine=null",
            "--filesize=1m",
            nrfiles,
            "--rw=read",
            "--bs=4k",
        ];
        let (v, o) = ssdready_in(tmp.path(), &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(ios(&v, "read"), want, "{nrfiles}");
        if have_fio() {
            let (fv, _) = fio_in(tmp.path(), &args);
            assert_eq!(ios(&fv, "read"), want, "fio: {nrfiles}");
        }
    }
}

/// `bs_is_seq_rand=1` (fio's own test job t0009 and others): `bs=4k,64k`
/// then means 4 KiB for sequential I/Os and 64 KiB for random ones,
/// whatever their direction — ssdready refused it as an unknown option.
/// Random reads and writes of 16 MiB without the random map are all 64
/// KiB: fio 3.33's counts to the I/O (132 reads, 124 writes; the mix draws
/// are fio's); a sequential mix is all 4 KiB.
#[test]
fn bs_is_seq_rand_sizes_by_sequential_or_random_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    for rw in ["--rw=randrw", "--rw=readwrite"] {
        let args = [
            "--name=j",
            "--ioengine=null",
            "--size=16m",
            rw,
            "--bs=4k,64k",
            "--bs_is_seq_rand=1",
            "--norandommap=1",
        ];
        let (v, o) = ssdready_in(tmp.path(), &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let want_bs = if rw == "--rw=randrw" { 65536 } else { 4096 };
        let bytes = |v: &Value, d: &str| v["jobs"][0][d]["io_bytes"].as_u64().unwrap();
        for d in ["read", "write"] {
            assert_eq!(bytes(&v, d), ios(&v, d) * want_bs, "{rw} {d}");
        }
        assert_eq!(bytes(&v, "read") + bytes(&v, "write"), 16 << 20, "{rw}");
        if have_fio() && rw == "--rw=randrw" {
            let (fv, _) = fio_in(tmp.path(), &args);
            for d in ["read", "write"] {
                assert_eq!(ios(&v, d), ios(&fv, d), "{rw} {d} against fio");
            }
        }
    }
}

/// `per_job_logs=0` (fio's own test jobs t0019–t0024 write their logs so):
/// every worker's lines in one `PREFIX_iops.log`, no `.N`; ssdready wrote
/// `PREFIX_iops.N.log` per worker. Three workers of 16 I/Os each: one file
/// of 48 lines, the same name and count as fio 3.33.
#[test]
fn per_job_logs_0_writes_one_shared_log_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tools: Vec<(&str, &Runner)> = if have_fio() {
        vec![("ssdready", &ssdready_in), ("fio", &fio_in)]
    } else {
        vec![("ssdready", &ssdready_in)]
    };
    for (tool, run) in tools {
        let tmp = tempfile::tempdir().unwrap();
        let args = [
            "--name=a",
            "--ioengine=null",
            "--size=64k",
            "--bs=4k",
            "--numjobs=3",
            "--write_iops_log=z",
            "--per_job_logs=0",
        ];
        let (_, o) = run(tmp.path(), &args);
        assert!(
            o.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let mut logs: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".log"))
            .collect();
        logs.sort();
        assert_eq!(logs, ["z_iops.log"], "{tool}");
        let text = std::fs::read_to_string(tmp.path().join("z_iops.log")).unwrap();
        assert_eq!(text.lines().count(), 48, "{tool}");
    }
}

/// fio's `rw=trimwrite` / `randtrimwrite` (fio's own test jobs t0023,
/// t0024 and its uring-cmd-bsg example; refused before): each trim is
/// followed by a write of the same block, and `size` counts the trims — 1
/// MiB of 4 KiB blocks is 256 trims and 256 writes, fio 3.33's counts. The
/// iolog shows the pairs: every write at the offset just trimmed.
#[test]
fn trimwrite_writes_each_block_it_trims_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for rw in ["--rw=trimwrite", "--rw=randtrimwrite"] {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("io.log");
        let log_arg = format!("--write_iolog={}", log.display());
        let args = [
            "--name=x",
            "--ioengine=psync",
            "--size=1m",
            "--bs=4k",
            rw,
            log_arg.as_str(),
        ];
        let (v, o) = ssdready_in(tmp.path(), &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!((ios(&v, "trim"), ios(&v, "write")), (256, 256), "{rw}");
        let text = std::fs::read_to_string(&log).unwrap();
        let ops: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 5).then(|| (f[2].to_string(), f[3].to_string()))
            })
            .collect();
        assert_eq!(ops.len(), 512, "{rw}");
        for pair in ops.chunks(2) {
            assert_eq!(pair[0].0, "trim", "{rw}: {pair:?}");
            assert_eq!(pair[1].0, "write", "{rw}: {pair:?}");
            assert_eq!(
                pair[0].1, pair[1].1,
                "{rw}: a write not at the trimmed offset"
            );
        }
        if have_fio() {
            let null = ["--name=x", "--ioengine=null", "--size=1m", "--bs=4k", rw];
            let (fv, _) = fio_in(tmp.path(), &null);
            assert_eq!(
                (ios(&fv, "trim"), ios(&fv, "write")),
                (256, 256),
                "fio {rw}"
            );
            let (sv, _) = ssdready_in(tmp.path(), &null);
            assert_eq!(
                (ios(&sv, "trim"), ios(&sv, "write")),
                (256, 256),
                "null {rw}"
            );
        }
    }
}
