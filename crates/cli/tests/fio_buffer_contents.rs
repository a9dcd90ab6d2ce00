//! fio compatibility: options that stopped a job as
//! "not supported yet" — write-buffer contents (`buffer_pattern`,
//! `zero_buffers`, `refill_buffers`, `scramble_buffers`) and the other
//! options that were refused — compared with fio 3.33 side by side where fio is installed.

use crate::common;
use common::fio::*;
use std::path::Path;

/// Write 256 KiB in 4 KiB blocks to file `name` in `dir` with `extra`
/// options, with ssdready (`s`) and, when installed, fio (`f`); the files'
/// contents, ssdready's first.
fn written(dir: &Path, extra: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (file, run) in [
        ("--filename=s", ssdready_in as Runner),
        ("--filename=f", fio_in),
    ] {
        if file == "--filename=f" && !have_fio() {
            break;
        }
        let mut args = vec!["--name=j", file, "--size=256k", "--rw=write", "--bs=4k"];
        args.extend_from_slice(extra);
        let (_, o) = run(dir, &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out.push(std::fs::read(dir.join(&file["--filename=".len()..])).unwrap());
    }
    out
}

/// `ssdready run` in `dir`, its output as it is (a run that fails prints
/// no JSON).
fn raw_in(dir: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .current_dir(dir)
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

type Runner = fn(&Path, &[&str]) -> (serde_json::Value, std::process::Output);

#[test]
fn buffer_pattern_fills_every_written_byte_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &["--buffer_pattern=0xdeadbeef\"ab\""]) {
        assert_eq!(data.len(), 256 << 10);
        let want: Vec<u8> = [0xde, 0xad, 0xbe, 0xef, b'a', b'b'].to_vec();
        // The pattern restarts at every 4 KiB block, as fio's buffers do.
        for block in data.chunks(4096) {
            for (i, b) in block.iter().enumerate() {
                assert_eq!(*b, want[i % want.len()], "byte {i}");
            }
        }
    }
}

#[test]
fn zero_buffers_writes_zeros_without_scrambling_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &["--zero_buffers"]) {
        assert!(data.iter().all(|&b| b == 0));
    }
}

/// Whether each 512-byte sector of `data` carries its own offset at the
/// start of one of its 8 cache lines (fio's small_content_scramble).
fn sectors_carry_their_offsets(data: &[u8]) -> bool {
    data.chunks(512)
        .enumerate()
        .all(|(i, s)| (0..8).any(|l| s[l * 64..l * 64 + 8] == ((i * 512) as u64).to_ne_bytes()))
}

#[test]
fn writes_are_scrambled_with_their_offsets_by_default_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &[]) {
        assert!(sectors_carry_their_offsets(&data));
    }
    // scramble_buffers=0: the one buffer is written as it is, 64 times.
    for data in written(d.path(), &["--scramble_buffers=0"]) {
        assert!(!sectors_carry_their_offsets(&data));
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), 1);
    }
    // zero_buffers with an explicit scramble_buffers=1: zeros, scrambled.
    for data in written(d.path(), &["--zero_buffers", "--scramble_buffers=1"]) {
        assert!(sectors_carry_their_offsets(&data));
    }
}

#[test]
fn refill_buffers_writes_distinct_random_blocks_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &["--refill_buffers", "--scramble_buffers=0"]) {
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), 64);
        assert!(!sectors_carry_their_offsets(&data));
    }
}

#[test]
fn a_buffer_pattern_with_an_offset_format_is_refused_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let o = common::ssdready(&["run", "--parse-only", "--name=j", "--buffer_pattern=%o"]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("buffer_pattern") && e.contains("%o"), "{e}");
}

/// iodepth=16 with iodepth_low=4 on an emulated device (asynchronous, so
/// the queue really fills): the depth distribution is fio's shape for a
/// queue that drains to 4 before refilling (fio 3.33 on a file here: 4:
/// 25 %, 8: 66.4 %, 16: 8.3 %), not the full queue of iodepth=16 alone.
/// The device is a slow one (x25e, ~150 µs reads): completions then come
/// one at a time, as from a real drive; on a device faster than the loop
/// they come in bursts whose size depends on the CPU, and so would the
/// shape.
#[test]
fn iodepth_low_lets_a_full_queue_drain_before_refilling_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let level = |low: &str| {
        let (v, _) = ssdready_in(
            d.path(),
            &[
                "--name=j",
                "--filename=emu:x25e,size=128m",
                "--size=64m",
                "--bs=4k",
                "--rw=randread",
                "--iodepth=16",
                low,
                "--number_ios=20000",
            ],
        );
        v["jobs"][0]["iodepth_level"].clone()
    };
    let full = level("--iodepth_low=0");
    assert!(full["16"].as_f64().unwrap() > 40.0, "{full}");
    let low = level("--iodepth_low=4");
    let (l4, l8, l16) = (
        low["4"].as_f64().unwrap(),
        low["8"].as_f64().unwrap(),
        low["16"].as_f64().unwrap(),
    );
    // Wide margins: on a loaded machine the loop returns late to a queue
    // that kept draining, and a few per cent move from 8 to depths 1–2
    // (at load 7 on 2 vCPUs: 4: 25.0, 8: 64.5, 16: 8.1). The full
    // queue's 16 (above 40 %, about 89 here) stays far outside.
    assert!((l4 - 25.0).abs() < 5.0, "{low}");
    assert!((l8 - 66.4).abs() < 10.0, "{low}");
    assert!((l16 - 8.3).abs() < 5.0, "{low}");
}

/// A read slower than max_latency (1 µs: every one on a file) ends the job
/// with ETIMEDOUT after that one I/O, exit code 1 — as fio 3.33 (error
/// 110, total_ios 1, exit code 1).
#[test]
fn max_latency_ends_the_job_with_etimedout_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("f"), vec![7u8; 1 << 20]).unwrap();
    let args = [
        "--name=j",
        "--filename=f",
        "--size=1m",
        "--bs=4k",
        "--rw=randread",
        "--ioengine=psync",
        "--max_latency=1",
    ];
    let mut runs = vec![ssdready_in(d.path(), &args)];
    if have_fio() {
        runs.push(fio_in(d.path(), &args));
    }
    for (v, o) in runs {
        assert_eq!(o.status.code(), Some(1));
        let j = &v["jobs"][0];
        assert_eq!(j["error"], 110, "{j}");
        assert_eq!(j["read"]["total_ios"], 1, "{j}");
    }
}

/// Every mem= kind that needs no huge pages writes the same 1 MiB as fio;
/// the huge ones, without reserved huge pages, are refused naming what is
/// missing (fio 3.33 crashes there: a double free).
#[test]
fn every_mem_kind_moves_the_data_and_huge_pages_are_named_when_missing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let buf_file = format!("--mem=mmapshared:{}", d.path().join("mb").display());
    for mem in [
        "--mem=malloc",
        "--iomem=shm",
        "--mem=mmap",
        buf_file.as_str(),
    ] {
        let args = [
            "--name=j",
            "--filename=f",
            "--size=1m",
            "--bs=64k",
            "--rw=write",
            "--ioengine=libaio",
            "--iodepth=4",
            "--iomem_align=128k",
            "--buffer_pattern=0x5a",
            mem,
        ];
        let (v, o) = ssdready_in(d.path(), &args);
        assert!(
            o.status.success(),
            "{mem}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(v["jobs"][0]["write"]["io_bytes"], 1 << 20, "{mem}");
        let data = std::fs::read(d.path().join("f")).unwrap();
        assert!(data.iter().all(|&b| b == 0x5a), "{mem}");
        assert!(!d.path().join("mb").exists(), "the buffer file is removed");
    }
    let free = std::fs::read_to_string("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");
    if free.map(|f| f.trim() == "0").unwrap_or(false) {
        for mem in ["--mem=mmaphuge", "--mem=shmhuge"] {
            let o = raw_in(
                d.path(),
                &[
                    "--name=j",
                    "--filename=f",
                    "--size=1m",
                    "--ioengine=psync",
                    mem,
                ],
            );
            let e = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(2), "{e}");
            assert!(
                e.contains("no free huge pages") && e.contains("nr_hugepages"),
                "{e}"
            );
        }
    }
}

/// exec_prerun and exec_postrun run in the job's worker thread, before and
/// after its I/O, their output in jobname.prerun.txt / postrun.txt, as
/// fio; the prerun shell inherits the worker's nice value (`nice=5`).
#[test]
fn exec_prerun_and_postrun_write_their_output_files_with_the_jobs_nice() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let (_, o) = ssdready_in(
        d.path(),
        &[
            "--name=hooks",
            "--filename=f",
            "--size=64k",
            "--rw=write",
            "--nice=5",
            "--exec_prerun=nice; test -e f && echo laid-out",
            "--exec_postrun=wc -c < f",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let pre = std::fs::read_to_string(d.path().join("hooks.prerun.txt")).unwrap();
    assert_eq!(pre, "5\nlaid-out\n");
    let post = std::fs::read_to_string(d.path().join("hooks.postrun.txt")).unwrap();
    assert_eq!(post.trim(), "65536");
    // A failing prerun fails the job (exit code 1), no I/O.
    let o = raw_in(
        d.path(),
        &[
            "--name=bad",
            "--filename=g",
            "--size=64k",
            "--rw=write",
            "--exec_prerun=exit 3",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("exec_prerun") && e.contains("bad.prerun.txt"),
        "{e}"
    );
}

/// Two jobs: one fails at its first I/O (max_latency=1 on a file); with
/// exitall_on_error the other, time-based for 20 s, ends with it.
#[test]
fn exitall_on_error_ends_every_job_when_one_fails() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let job = d.path().join("j.fio");
    std::fs::write(
        &job,
        "[global]\nexitall_on_error\nsize=1m\nbs=4k\nfilename=f\n\
         [slow]\nrw=randread\ntime_based\nruntime=20\n\
         [fails]\nrw=randread\nioengine=psync\nmax_latency=1\n",
    )
    .unwrap();
    std::fs::write(d.path().join("f"), vec![1u8; 1 << 20]).unwrap();
    let t = std::time::Instant::now();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .current_dir(d.path())
        .args(["run", "j.fio", "--output-format=json"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        t.elapsed().as_secs() < 15,
        "the time-based job was not ended"
    );
}

#[test]
fn uid_gid_and_cgroups_are_refused_with_the_reason_and_exit_2() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for opt in [
        "--uid=1000",
        "--gid=1000",
        "--cgroup=x",
        "--cgroup_weight=100",
    ] {
        let o = common::ssdready(&["run", "--name=j", "--size=1m", opt]);
        assert_eq!(o.status.code(), Some(2), "{opt}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains("threads of one process"), "{opt}: {e}");
    }
}

#[test]
fn lockmem_pins_memory_for_the_job_or_names_the_limit() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let o = common::ssdready(&["run", "--name=j", "--size=1m", "--lockmem=1m"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() || e.contains("memlock"), "{e}");
    let o = common::ssdready(&["run", "--name=j", "--size=1m", "--lockmem=64t"]);
    assert_ne!(o.status.code(), Some(0));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("lockmem"), "{e}");
}

/// create_fsync=0 (fio's default is 1) still lays the file out before the
/// job: the same 1 MiB file and I/O count as fio.
#[test]
fn create_fsync_off_still_lays_the_file_out_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let args = |f: &'static str| {
        [
            f,
            "--name=j",
            "--size=1m",
            "--rw=randread",
            "--bs=4k",
            "--create_fsync=0",
        ]
    };
    let (v, o) = ssdready_in(d.path(), &args("--filename=s"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::metadata(d.path().join("s")).unwrap().len(),
        1 << 20
    );
    assert_eq!(ios(&v, "read"), 256);
    if have_fio() {
        let (f, _) = fio_in(d.path(), &args("--filename=f"));
        assert_eq!(ios(&f, "read"), 256);
    }
}
