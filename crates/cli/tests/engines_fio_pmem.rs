//! fio's `libpmem`, `dev-dax` and `e4defrag` engines, beside
//! fio 3.33 where it is installed.
//!
//! This machine has no persistent memory: libpmem's files are in a temp
//! dir, where ssdready takes the msync path and says so. fio 3.33 refuses
//! such a file (error 95, "file_name does not point to persistent
//! memory") unless told to pretend with libpmem's `PMEM_IS_PMEM_FORCE=1`,
//! which these tests set for fio. dev-dax needs a device-DAX character
//! device, which nothing here has: its refusals are what is tested.

use crate::common;
use common::fio::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The first job's `dir` bytes (fio's JSON).
fn bytes(v: &Value, dir: &str) -> u64 {
    v["jobs"][0][dir]["io_bytes"].as_u64().unwrap_or(0)
}

/// fio's libpmem job in `dir`, pretending the file is persistent memory.
fn fio_pmem(dir: &Path, args: &[&str]) -> Value {
    let out = Command::new("fio")
        .arg("--output-format=json")
        .args(args)
        .env("PMEM_IS_PMEM_FORCE", "1")
        .current_dir(dir)
        .output()
        .expect("run fio");
    let text = String::from_utf8_lossy(&out.stdout);
    let at = text
        .find('{')
        .unwrap_or_else(|| panic!("fio: no JSON: {text}"));
    serde_json::from_str(&text[at..]).unwrap()
}

/// The file system type of `dir` (`stat -f`).
fn fs_type(dir: &Path) -> String {
    let out = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .expect("stat");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn md5_of(p: &Path) -> String {
    let out = Command::new("md5sum").arg(p).output().expect("md5sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Fixed-size libpmem jobs (sequential write, random read, random mix;
/// with and without direct and sync) move the same I/Os and bytes as fio
/// 3.33; ssdready says its writes went the msync way (no pmem here).
#[test]
fn libpmem_jobs_move_the_same_ios_and_bytes_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let shapes: [&[&str]; 5] = [
        &["--rw=write"],
        &["--rw=write", "--direct=1", "--sync=1"],
        &["--rw=randread"],
        &["--rw=randrw", "--direct=1"],
        &["--rw=randwrite", "--sync=1", "--fsync=8"],
    ];
    for extra in shapes {
        let d = tempfile::tempdir().unwrap();
        let mut args = vec!["--name=p", "--ioengine=libpmem", "--size=1m", "--bs=4k"];
        args.extend_from_slice(extra);
        let (ours, o) = ssdready_in(d.path(), &args);
        assert!(
            o.status.success(),
            "{extra:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let total = |v: &Value| ios(v, "read") + ios(v, "write");
        assert_eq!(total(&ours), 256, "{extra:?}");
        assert_eq!(
            bytes(&ours, "read") + bytes(&ours, "write"),
            1 << 20,
            "{extra:?}"
        );
        assert_eq!(ours["jobs"][0]["error"], 0, "{extra:?}");
        assert_eq!(
            ours["jobs"][0]["ssdready"]["persistence"], "msync",
            "{extra:?}"
        );
        if !have_fio() {
            continue;
        }
        let d = tempfile::tempdir().unwrap();
        let theirs = fio_pmem(d.path(), &args);
        assert_eq!(theirs["jobs"][0]["error"], 0, "fio {extra:?}");
        assert_eq!(total(&theirs), total(&ours), "{extra:?}");
        if extra[0] != "--rw=randrw" {
            // The random mix's split is drawn by each tool's own generator.
            for dir in ["read", "write"] {
                assert_eq!(ios(&theirs, dir), ios(&ours, dir), "{extra:?} {dir}");
                assert_eq!(bytes(&theirs, dir), bytes(&ours, dir), "{extra:?} {dir}");
            }
        }
    }
}

/// Without pretending, fio 3.33 refuses libpmem on a file that is not
/// persistent memory; ssdready runs it on the msync path instead (the
/// disagreement the README states).
#[test]
fn fio_refuses_libpmem_off_pmem_where_ssdready_takes_msync() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let args = [
        "--name=p",
        "--ioengine=libpmem",
        "--size=256k",
        "--bs=4k",
        "--rw=write",
    ];
    let (theirs, _) = fio_in(d.path(), &args);
    assert_eq!(
        theirs["jobs"][0]["error"], 95,
        "EOPNOTSUPP: not persistent memory"
    );
    let (ours, o) = ssdready_in(d.path(), &args);
    assert!(o.status.success());
    assert_eq!(ios(&ours, "write"), 64);
    // In the test's own directory: the job's file is made where it runs.
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .arg("run")
        .args(args)
        .current_dir(d.path())
        .output()
        .expect("run ssdready");
    let t = String::from_utf8_lossy(&text.stdout);
    assert!(
        t.contains("persistence: msync (not persistent memory"),
        "{t}"
    );
}

/// A libpmem write job with verify=md5 leaves blocks that verify — by
/// ssdready and by fio — and a byte flipped in the file is caught by both.
/// fio reads the file with psync: fio 3.33's libpmem with `verify_only`
/// stores its writes anyway (the file changes) and then fails its own
/// check, even on a file fio wrote.
#[test]
fn libpmem_writes_verify_and_a_flipped_byte_is_caught() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let write = [
        "--name=v",
        "--ioengine=libpmem",
        "--filename=v",
        "--size=256k",
        "--bs=4k",
        "--rw=write",
        "--verify=md5",
        "--direct=1",
    ];
    let check: Vec<&str> = write.iter().copied().chain(["--verify_only=1"]).collect();
    let fio_check: Vec<&str> = check
        .iter()
        .map(|a| {
            if *a == "--ioengine=libpmem" {
                "--ioengine=psync"
            } else {
                a
            }
        })
        .collect();
    let (v, o) = native_in(d.path(), &write);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(v["jobs"][0]["verify"]["blocks"], 64);
    assert_eq!(v["jobs"][0]["verify"]["failed"], 0);
    if have_fio() {
        let (theirs, o) = fio_in(d.path(), &fio_check);
        assert_eq!(
            theirs["jobs"][0]["error"],
            0,
            "fio verifies ssdready's blocks: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let path = d.path().join("v");
    let mut data = std::fs::read(&path).unwrap();
    data[40_960 + 100] ^= 0x01;
    std::fs::write(&path, &data).unwrap();
    let (v, o) = native_in(d.path(), &check);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(v["jobs"][0]["verify"]["failed"], 1);
    assert_eq!(v["jobs"][0]["verify"]["failures"][0]["offset"], 40_960);
    if have_fio() {
        let (theirs, _) = fio_in(d.path(), &fio_check);
        assert_eq!(
            theirs["jobs"][0]["error"], 84,
            "fio finds the flipped byte too (EILSEQ)"
        );
    }
}

/// A file of `len` random bytes at `p`.
fn random_file(p: &Path, len: usize, seed: u64) {
    let mut x = seed | 1;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    // Written back: ext4 refuses to move extents under dirty pages (EBUSY).
    let mut f = std::fs::File::create(p).unwrap();
    std::io::Write::write_all(&mut f, &data).unwrap();
    f.sync_all().unwrap();
}

/// The extents of `p` (FIEMAP), as filefrag counts them.
fn extents(p: &Path) -> usize {
    let f = std::fs::File::open(p).unwrap();
    ssdready_io::target::fiemap::extents(&f).unwrap().len()
}

/// fio's e4defrag job shapes (a donor file, inplace 0 and 1) on ext4:
/// the same I/Os and bytes as fio 3.33, the file's content unchanged by
/// the extent moves, and in place 4 KiB random moves fragment the file
/// under both tools.
#[test]
fn e4defrag_moves_match_fio_and_leave_the_content_unchanged() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let probe = tempfile::tempdir().unwrap();
    let fs = fs_type(probe.path());
    if fs != "ext2/ext3" {
        eprintln!("skipped: the temp dir is on {fs}, not ext4 (EXT4_IOC_MOVE_EXT)");
        return;
    }
    let shapes: [(&str, &[&str]); 2] = [
        ("0", &["--rw=write", "--bs=32k", "--direct=1"]),
        ("1", &["--rw=randwrite", "--bs=4k"]),
    ];
    for (inplace, extra) in shapes {
        let mut seen = Vec::new();
        for tool in ["ssdready", "fio"] {
            if tool == "fio" && !have_fio() {
                continue;
            }
            let d = tempfile::tempdir().unwrap();
            let file = d.path().join("file1");
            random_file(&file, 4 << 20, 7);
            let before = md5_of(&file);
            let dir = format!("--directory={}", d.path().display());
            let ip = format!("--inplace={inplace}");
            let mut args = vec![
                "--name=e",
                "--ioengine=e4defrag",
                dir.as_str(),
                "--filename=file1",
                "--filesize=4m",
                "--size=4m",
                "--donorname=file.def",
                ip.as_str(),
            ];
            args.extend_from_slice(extra);
            let (v, o) = if tool == "fio" {
                fio_in(d.path(), &args)
            } else {
                ssdready_in(d.path(), &args)
            };
            assert!(
                o.status.success(),
                "{tool} inplace={inplace}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            assert_eq!(v["jobs"][0]["error"], 0, "{tool} inplace={inplace}");
            assert_eq!(
                md5_of(&file),
                before,
                "{tool} inplace={inplace}: the moves changed the data"
            );
            assert!(
                d.path().join("file.def").exists(),
                "{tool}: the donor is made in directory"
            );
            seen.push((ios(&v, "write"), bytes(&v, "write"), extents(&file)));
        }
        let (n, b, x) = seen[0];
        assert_eq!(b, 4 << 20, "inplace={inplace}");
        if inplace == "1" {
            assert!(
                x > 256,
                "ssdready: 1024 random 4 KiB moves leave {x} extents"
            );
        }
        if let Some(&(fn_, fb, fx)) = seen.get(1) {
            assert_eq!((fn_, fb), (n, b), "inplace={inplace}: fio vs ssdready");
            if inplace == "1" {
                assert!(fx > 256, "fio: {fx} extents");
            }
        }
    }
}

/// e4defrag off ext4 is refused before anything is written, naming the
/// file system; reads are refused as fio fails them.
#[test]
fn e4defrag_is_refused_off_ext4_and_for_reads() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let shm = Path::new("/dev/shm");
    if shm.is_dir() && fs_type(shm) == "tmpfs" {
        let d = tempfile::tempdir_in(shm).unwrap();
        let dir = format!("--directory={}", d.path().display());
        let args = [
            "run",
            "--name=e",
            "--ioengine=e4defrag",
            &dir,
            "--filename=f",
            "--filesize=1m",
            "--size=1m",
            "--donorname=d",
            "--rw=write",
        ];
        let o = common::ssdready(&args);
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("only ext4 has; ") && err.contains("is on tmpfs"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_dir(d.path()).unwrap().count(),
            0,
            "nothing written"
        );
    } else {
        eprintln!("skipped the tmpfs half: /dev/shm is not tmpfs here");
    }
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", d.path().display());
    let o = common::ssdready(&[
        "run",
        "--name=e",
        "--ioengine=e4defrag",
        &dir,
        "--filesize=1m",
        "--size=1m",
        "--donorname=d",
        "--rw=randrw",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("rw=randrw: ioengine=e4defrag only moves extents"),
        "{err}"
    );
}

/// fio's example shapes of the three engines parse (dev-dax's
/// /dev/dax0.0 and e4defrag's /scratch need not exist to parse).
#[test]
fn the_example_shapes_parse() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let files = [
        "[global]\nbs=2m\nioengine=dev-dax\nnorandommap\ntime_based\nruntime=30\nthread\nnumjobs=16\nfilename=/dev/dax0.0\n\
         [dev-dax-write]\nrw=randwrite\nstonewall\n[dev-dax-read]\nrw=randread\nstonewall\n",
        "[global]\nbs=4k\nsize=10g\nioengine=libpmem\nnorandommap\ntime_based\niodepth=1\niodepth_batch=1\nthread\n\
         numjobs=1\nruntime=300\ndirect=1\nsync=1\nscramble_buffers=1\ndirectory=/mnt/pmem\n[libpmem-seqwrite]\nrw=write\nstonewall\n",
        "[global]\nioengine=e4defrag\ndirectory=/scratch\nnrfiles=1\nfilesize=100M\nsize=100M\nbs=32k\n\
         [isolated-e4defrag]\nbuffered=0\ndonorname=file.def\nfilename=file1\ninplace=0\nrw=write\n\
         [e4defrag-fuzzer-4k]\nstonewall\ninplace=1\nbs=4k\nrw=randwrite\nfilename=file\ndonorname=file.def\n",
    ];
    for (i, text) in files.iter().enumerate() {
        let p = d.path().join(format!("{i}.fio"));
        std::fs::write(&p, text).unwrap();
        let o = common::ssdready(&["run", "--parse-only", p.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "{text}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = common::ssdready(&["options"]);
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("donorname") && t.contains("inplace"), "{t}");
}

/// dev-dax refuses, in one line, a regular file (the wrong kind: exit 2)
/// and a missing /dev/dax0.0 (no such device here: exit 1), saying what
/// is missing.
#[test]
fn dev_dax_refuses_a_file_and_a_missing_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("plain");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    let fa = format!("--filename={}", f.display());
    let o = common::ssdready(&[
        "run",
        "--name=x",
        "--ioengine=dev-dax",
        &fa,
        "--rw=randwrite",
        "--bs=4k",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("is a regular file, not a device-DAX character device"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&f).unwrap(),
        vec![0u8; 1 << 20],
        "the file is untouched"
    );
    if Path::new("/dev/dax0.0").exists() {
        eprintln!("skipped the missing-device half: this machine has /dev/dax0.0");
        return;
    }
    let o = common::ssdready(&[
        "run",
        "--name=x",
        "--ioengine=dev-dax",
        "--filename=/dev/dax0.0",
        "--rw=randread",
        "--bs=2m",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "/dev/dax0.0 does not exist: ioengine=dev-dax needs a device-DAX character device"
        ),
        "{err}"
    );
    assert!(!Path::new("/dev/dax0.0").exists(), "nothing made in /dev");
}

/// libpmem maps files: a block device is named as one (exit 2), not called
/// empty because its size reads as 0, and nothing is written to it.
#[test]
fn libpmem_names_a_block_device_as_one() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = common::LoopDev::new("libpmem", 8) else {
        return;
    };
    let fa = format!("--filename={}", l.dev);
    let o = common::ssdready(&[
        "run",
        "--name=x",
        "--ioengine=libpmem",
        &fa,
        "--rw=read",
        "--size=1m",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("is a block device"), "{err}");
    assert!(!err.contains("empty"), "{err}");
}
