//! fio's file and timing options, each against fio where fio is installed:
//! syncs (`fsync`, `fdatasync`, `end_fsync`, `fsync_on_close`, `sync`),
//! file preparation (`fallocate`, `create_on_open`, `pre_read`,
//! `unlink_each_loop`), the page cache on buffered runs (`invalidate`,
//! `fadvise_hint`) and think time (`thinktime` and its variants).

use crate::common;
use common::fio::*;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

fn sync_section(v: &Value) -> (u64, u64) {
    let s = &v["jobs"][0]["sync"];
    (
        s["total_ios"].as_u64().unwrap(),
        s["lat_ns"]["N"].as_u64().unwrap(),
    )
}

fn file_arg(dir: &Path, name: &str) -> String {
    format!("--filename={}", dir.join(name).display())
}

/// fsync=8 and fdatasync=10 on 1 MiB of 4 KiB writes: 31 fsyncs (none
/// after the last write) and 25 fdatasyncs, which fio's JSON counts in the
/// latency but not in total_ios — fio 3.33 gives the same figures.
#[test]
fn fsync_and_fdatasync_are_counted_as_fio_counts_them() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let cases: [(&str, (u64, u64)); 2] = [("--fsync=8", (31, 31)), ("--fdatasync=10", (0, 25))];
    for (opt, want) in cases {
        let f = file_arg(d.path(), "s");
        let args = ["--name=s", &f, "--size=1m", "--bs=4k", "--rw=write", opt];
        let (ours, out) = ssdready_in(d.path(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(ios(&ours, "write"), 256);
        assert_eq!(sync_section(&ours), want, "{opt}");
        let lat = &ours["jobs"][0]["sync"]["lat_ns"];
        assert!(lat["min"].as_u64().unwrap() > 0 && lat.get("percentile").is_some());
        if have_fio() {
            let (theirs, _) = fio_in(d.path(), &args);
            assert_eq!(sync_section(&theirs), want, "fio, {opt}");
        }
    }
}

/// end_fsync and fsync_on_close sync the files when the job ends but, as
/// in fio, are not counted as sync I/Os.
#[test]
fn end_fsync_and_fsync_on_close_are_not_counted() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for opt in ["--end_fsync=1", "--fsync_on_close=1"] {
        let f = file_arg(d.path(), "e");
        let args = [
            "--name=e",
            &f,
            "--size=256k",
            "--bs=4k",
            "--rw=randwrite",
            opt,
        ];
        let (ours, out) = ssdready_in(d.path(), &args);
        assert!(out.status.success());
        assert_eq!(sync_section(&ours), (0, 0), "{opt}");
        if have_fio() {
            assert_eq!(
                sync_section(&fio_in(d.path(), &args).0),
                (0, 0),
                "fio, {opt}"
            );
        }
    }
}

/// sync=1 / dsync opens the target with O_SYNC / O_DSYNC: every write
/// reaches the device before it returns, so the device counts at least
/// one write per write of the job even on a buffered run.
#[test]
fn sync_opens_with_o_sync_and_o_dsync() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    if on_tmpfs(d.path()) {
        eprintln!(
            "skipped: {} is tmpfs: no device sees the writes",
            d.path().display()
        );
        return;
    }
    for mode in ["sync", "dsync", "1"] {
        let f = file_arg(d.path(), "o");
        let opt = format!("--sync={mode}");
        let args = ["--name=o", &f, "--size=256k", "--bs=4k", "--rw=write", &opt];
        let (v, out) = native_in(d.path(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let disk_writes: u64 = v["phases"][0]["disks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["write_ios"].as_u64().unwrap_or(0))
            .sum();
        if v["phases"][0]["disks"].as_array().unwrap().is_empty() {
            eprintln!("skipped: the file system is not on a block device");
            return;
        }
        assert!(
            disk_writes >= 64,
            "{mode}: 64 synchronous writes, the device saw {disk_writes}"
        );
    }
}

/// fallocate modes on a file a write-only job creates: fio does not lay
/// such a file out, it only preallocates it; size and allocation after one
/// 4 KiB write agree with fio's.
#[test]
fn fallocate_modes_prepare_the_file_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for mode in ["none", "native", "posix", "keep", "truncate", "0", "1"] {
        let shape = |who: &str| {
            let md = std::fs::metadata(d.path().join(who)).unwrap();
            (md.len(), md.blocks() * 512 >= 1 << 20)
        };
        let run = |who: &str, fio: bool| {
            let f = file_arg(d.path(), who);
            let opt = format!("--fallocate={mode}");
            let args = [
                "--name=f",
                &f,
                "--size=1m",
                "--bs=4k",
                "--rw=write",
                "--number_ios=1",
                &opt,
            ];
            let out = if fio {
                fio_in(d.path(), &args).1
            } else {
                ssdready_in(d.path(), &args).1
            };
            assert!(
                out.status.success(),
                "{mode}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&format!("ours-{mode}"), false);
        let ours = shape(&format!("ours-{mode}"));
        let size = if matches!(mode, "none" | "0" | "keep") {
            4096
        } else {
            1 << 20
        };
        assert_eq!(ours.0, size, "{mode}");
        assert_eq!(
            ours.1,
            matches!(mode, "native" | "posix" | "keep" | "1"),
            "{mode}: {ours:?}"
        );
        if have_fio() {
            run(&format!("fio-{mode}"), true);
            assert_eq!(
                ours,
                shape(&format!("fio-{mode}")),
                "fallocate={mode}: ours vs fio's"
            );
        }
    }
}

/// create_on_open: no layout before the job; the job's open creates the
/// file, which ends as large as what was written (fio alike).
#[test]
fn create_on_open_makes_the_file_when_the_job_opens_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let size = |n: &str| std::fs::metadata(d.path().join(n)).unwrap().len();
    for who in ["ours", "fio"] {
        if who == "fio" && !have_fio() {
            continue;
        }
        let f = file_arg(d.path(), who);
        let args = [
            "--name=c",
            &f,
            "--size=1m",
            "--bs=4k",
            "--rw=write",
            "--create_on_open=1",
            "--fallocate=none",
            "--number_ios=16",
        ];
        let out = match who {
            "ours" => ssdready_in(d.path(), &args).1,
            _ => fio_in(d.path(), &args).1,
        };
        assert!(
            out.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(size("ours"), 64 << 10);
    if have_fio() {
        assert_eq!(size("ours"), size("fio"));
    }
}

/// pre_read reads the region into the page cache before the job (and
/// keeps it: invalidate is off); without it the job's cache is dropped.
#[test]
fn pre_read_fills_the_cache_before_the_job() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    if on_tmpfs(d.path()) {
        eprintln!(
            "skipped: {} is tmpfs, whose pages cannot be dropped",
            d.path().display()
        );
        return;
    }
    let p = d.path().join("p");
    std::fs::write(&p, vec![5u8; 8 << 20]).unwrap();
    let cached = |pre: &str| {
        let f = std::fs::File::open(&p).unwrap();
        f.sync_all().unwrap();
        ssdready_io::target::cache::invalidate(&f, ssdready_io::target::TargetKind::File, 0, 0)
            .unwrap();
        let fa = file_arg(d.path(), "p");
        let args = [
            "--name=p",
            &fa,
            "--rw=read",
            "--bs=4k",
            "--number_ios=1",
            pre,
        ];
        assert!(ssdready_in(d.path(), &args).1.status.success());
        ssdready_io::target::cache::resident_fraction(&p, 0, 8 << 20).unwrap()
    };
    let with = cached("--pre_read=1");
    let without = cached("--pre_read=0");
    assert!(with > 0.99, "pre_read left {with} of the file cached");
    assert!(
        without < 0.5,
        "without pre_read {without} of the file is cached"
    );
}

/// unlink_each_loop: the file is removed before each loop after the first
/// and made again by the loop's writes (fio alike: same count, same size
/// after).
#[test]
fn unlink_each_loop_removes_the_file_between_loops() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for who in ["ours", "fio"] {
        if who == "fio" && !have_fio() {
            continue;
        }
        let f = file_arg(d.path(), who);
        // 50 I/Os a loop (fio's number_ios × loops): 64, 64, then 22.
        let args = [
            "--name=u",
            &f,
            "--size=256k",
            "--bs=4k",
            "--rw=write",
            "--loops=3",
            "--unlink_each_loop=1",
            "--number_ios=50",
        ];
        let (v, out) = match who {
            "ours" => ssdready_in(d.path(), &args),
            _ => fio_in(d.path(), &args),
        };
        assert!(
            out.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(ios(&v, "write"), 150, "{who}");
    }
    let ours = std::fs::metadata(d.path().join("ours")).unwrap();
    assert_eq!(
        ours.len(),
        22 * 4096,
        "the last loop started from an empty file"
    );
    if have_fio() {
        let fio = std::fs::metadata(d.path().join("fio")).unwrap();
        assert_eq!(ours.len(), fio.len(), "the last loop's file");
    }
}

/// Buffered time-based random reads of a small file: fio drops the page
/// cache at every pass over it (and hints POSIX_FADV_RANDOM), so the
/// device serves every read; with invalidate=0 the file stays cached after
/// the first pass. ssdready's and the kernel's counts show the same.
#[test]
fn invalidate_drops_the_cache_at_every_pass_of_a_buffered_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    if on_tmpfs(d.path()) {
        eprintln!(
            "skipped: {} is tmpfs, whose pages cannot be dropped",
            d.path().display()
        );
        return;
    }
    let f = file_arg(d.path(), "b");
    let device_share = |inv: &str| {
        let args = [
            "--name=b",
            &f,
            "--size=2m",
            "--bs=4k",
            "--rw=randread",
            "--ioengine=psync",
            "--time_based",
            "--runtime=1",
            inv,
        ];
        let (v, out) = native_in(d.path(), &args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let app = v["jobs"][0]["read"]["ios"].as_u64().unwrap() as f64;
        let disks = v["phases"][0]["disks"].as_array().unwrap();
        if disks.is_empty() {
            return None;
        }
        let dev: u64 = disks
            .iter()
            .map(|x| x["read_ios"].as_u64().unwrap_or(0))
            .sum();
        Some((dev as f64 / app, app))
    };
    let Some((kept, app_kept)) = device_share("--invalidate=0") else {
        eprintln!("skipped: the file system is not on a block device");
        return;
    };
    let (dropped, app_dropped) = device_share("--invalidate=1").unwrap();
    assert!(
        app_dropped > 1024.0,
        "several passes over 512 blocks: {app_dropped}"
    );
    assert!(
        dropped > 0.5,
        "invalidate=1: the device served {dropped} of the reads"
    );
    assert!(
        kept < 0.2,
        "invalidate=0: the device served {kept} of {app_kept} reads"
    );
}

/// Think time waits for the queue to empty and sleeps: completions do not
/// include the think time, the thread sleeps rather than spins, and a job
/// of 32 I/Os with 20 ms after every 8 completed takes at least its three
/// thinks (none after the last I/O), as fio's.
#[test]
fn thinktime_drains_the_queue_and_sleeps() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = file_arg(d.path(), "t");
    let args = [
        "--name=t",
        &f,
        "--size=1m",
        "--bs=4k",
        "--rw=randread",
        "--ioengine=libaio",
        "--iodepth=8",
        "--thinktime=20ms",
        "--thinktime_blocks=8",
        "--number_ios=32",
    ];
    let (ours, out) = ssdready_in(d.path(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j = &ours["jobs"][0];
    let clat = j["read"]["clat_ns"]["mean"].as_f64().unwrap();
    assert!(
        clat < 10e6,
        "completion latency {clat} ns includes think time"
    );
    let runtime = j["job_runtime"].as_u64().unwrap();
    // Three thinks of 20 ms, after 8, 16 and 24 completions: as in fio,
    // none after the last I/O (fio 3.33: 68-72 ms; four thinks gave 85-94).
    assert!((58..400).contains(&runtime), "{runtime} ms");
    let cpu = j["usr_cpu"].as_f64().unwrap() + j["sys_cpu"].as_f64().unwrap();
    assert!(cpu < 30.0, "the worker spun: {cpu} % CPU");
    if have_fio() {
        let (theirs, _) = fio_in(d.path(), &args);
        let rt = theirs["jobs"][0]["job_runtime"].as_u64().unwrap();
        assert_eq!(ios(&theirs, "read"), 32);
        // fio thinks as often: at least its three 20 ms sleeps too. (How
        // far a sleep overshoots depends on the machine's load: the two
        // runtimes are not compared; that the thinks are three, after the
        // queue drained, is run's virtual-time test
        // `thinks_come_after_every_eighth_completion_but_the_last`.)
        assert!(rt >= 58, "fio's runtime {rt} ms (ours {runtime} ms)");
    }
}

/// thinktime_blocks_type=issue counts issued I/Os, thinktime_spin spins
/// part of each think, thinktime_iotime thinks after that long of I/O: on
/// the null engine (no device), the job's length follows each rule.
#[test]
fn thinktime_variants_follow_fios_rules() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let runtime = |extra: &[&str]| {
        let mut a = vec![
            "--name=v",
            "--ioengine=null",
            "--size=1m",
            "--rw=read",
            "--bs=4k",
        ];
        a.extend_from_slice(extra);
        let (v, out) = ssdready_in(d.path(), &a);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            v["jobs"][0]["job_runtime"].as_u64().unwrap(),
            v["jobs"][0]["usr_cpu"].as_f64().unwrap(),
        )
    };
    // 20 I/Os, 10 ms after every 5 issued: 4 thinks.
    let (t, _) = runtime(&[
        "--number_ios=20",
        "--thinktime=10ms",
        "--thinktime_blocks=5",
        "--thinktime_blocks_type=issue",
    ]);
    // At least the 4 thinks' 40 ms; a loaded machine oversleeps, so up to
    // 190 ms, short of the 19 thinks (190 ms at least) of a think after
    // every I/O.
    assert!((38..190).contains(&t), "{t} ms");
    // Spinning 9 of every 10 ms shows as CPU; sleeping does not (on a busy
    // machine the spinning thread gets less than a whole CPU: compare).
    let (t, spun) = runtime(&[
        "--number_ios=10",
        "--thinktime=10ms",
        "--thinktime_spin=9ms",
    ]);
    assert!(t >= 95, "{t} ms");
    let (_, slept) = runtime(&["--number_ios=10", "--thinktime=10ms"]);
    assert!(
        spun > 5.0 && spun > 5.0 * slept,
        "spun {spun} % vs slept {slept} %"
    );
    // A time-based second at 1000 IOPS, thinking 50 ms after every 50 ms
    // of I/O, the rate not catching up on the thinks: half the second is
    // I/O, so 500–560 I/Os (559 at load 8 on 2 vCPUs), where no think
    // gives the rate's 1000; 750 lies between, and a loaded machine only
    // issues fewer. So the floor is 100: a think after every I/O (about
    // 20) fails it. The rule's timing itself is workload::jobflow's test.
    let (v, out) = ssdready_in(
        d.path(),
        &[
            "--name=v",
            "--ioengine=null",
            "--size=1m",
            "--rw=read",
            "--bs=4k",
            "--time_based",
            "--runtime=1",
            "--rate_iops=1000",
            "--rate_ignore_thinktime=1",
            "--thinktime=50ms",
            "--thinktime_iotime=50ms",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let n = ios(&v, "read");
    assert!(
        (100..=750).contains(&n),
        "{n} I/Os in a second of half thinking"
    );
}

/// write_barrier is accepted and, as with fio's psync, libaio and io_uring
/// engines (only its libpmem engine honours barriers), changes nothing: the
/// same writes, and a warning that says so.
#[test]
fn write_barrier_is_accepted_and_changes_nothing_as_in_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = file_arg(d.path(), "w");
    let args = [
        "--name=w",
        &f,
        "--size=256k",
        "--bs=4k",
        "--rw=write",
        "--write_barrier=4",
    ];
    let (ours, out) = ssdready_in(d.path(), &args);
    assert!(out.status.success());
    assert_eq!(ios(&ours, "write"), 64);
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("write_barrier has no effect with ioengine=psync"),
        "{e}"
    );
    if have_fio() {
        assert_eq!(ios(&fio_in(d.path(), &args).0, "write"), 64);
    }
}
