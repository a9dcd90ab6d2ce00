//! fio compatibility: what fio's own examples need
//! beyond the basics — trims on the asynchronous engines, NUMA placement,
//! deduplication over a working set, submission offload and poisson
//! arrivals, latency-target search and per-I/O priorities — compared with
//! fio 3.33 side by side where fio is installed.

use crate::common;
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
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t");
    for engine in ["libaio", "io_uring"] {
        std::fs::write(&f, vec![7u8; 1 << 20]).unwrap();
        let before = allocated_blocks(&f);
        let fa = format!("--filename={}", f.display());
        let ea = format!("--ioengine={engine}");
        let (v, o) = ssdready_in(
            dir.path(),
            &[
                "--name=t",
                &fa,
                &ea,
                "--rw=randtrim",
                "--bs=4k",
                "--size=1m",
                "--iodepth=8",
            ],
        );
        assert!(
            o.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(ios(&v, "trim"), 256, "{engine}");
        assert_eq!(bytes(&v, "trim"), 1 << 20, "{engine}");
        assert_eq!(v["jobs"][0]["error"], 0, "{engine}");
        let after = allocated_blocks(&f);
        assert!(
            before >= 2048 && after == 0,
            "{engine}: {before} → {after} blocks"
        );
    }
}

/// rw=randtrim on libaio and io_uring on a block device: BLKDISCARD, one
/// per block, the same I/Os and bytes as fio 3.33 (root: a loop device).
#[test]
fn randtrim_on_libaio_and_io_uring_discards_a_block_device_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(dev) = LoopDev::new("trim5", 8) else {
        return;
    };
    let fa = format!("--filename={}", dev.dev);
    for engine in ["libaio", "io_uring"] {
        let ea = format!("--ioengine={engine}");
        let args = [
            "--name=t",
            fa.as_str(),
            ea.as_str(),
            "--rw=randtrim",
            "--bs=64k",
            "--size=4m",
            "--iodepth=4",
            "--direct=1",
        ];
        let dir = tempfile::tempdir().unwrap();
        let (v, o) = ssdready_in(dir.path(), &args);
        assert!(
            o.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(
            (ios(&v, "trim"), bytes(&v, "trim")),
            (64, 4 << 20),
            "{engine}"
        );
        if have_fio() {
            let (fv, _) = fio_in(dir.path(), &args);
            assert_eq!(fv["jobs"][0]["error"], 0, "fio {engine}");
            assert_eq!(
                (ios(&fv, "trim"), bytes(&fv, "trim")),
                (64, 4 << 20),
                "fio {engine}"
            );
        }
    }
}

/// The `prios` array of a direction: (class, level, samples).
fn prios(v: &Value, dir: &str) -> Vec<(u64, u64, u64)> {
    v["jobs"][0][dir]["prios"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| {
                    let n = p["clat_ns"]["N"].as_u64().unwrap_or(0);
                    (
                        p["prioclass"].as_u64().unwrap(),
                        p["prio"].as_u64().unwrap(),
                        n,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The last column of a latency log: how many lines carry each value.
fn prio_column(path: &std::path::Path) -> std::collections::BTreeMap<String, u64> {
    let mut m = std::collections::BTreeMap::new();
    for l in std::fs::read_to_string(path).unwrap().lines() {
        let last = l.rsplit(", ").next().unwrap().trim().to_string();
        *m.entry(last).or_insert(0) += 1;
    }
    m
}

/// cmdprio_percentage=30 with cmdprio_class=1/cmdprio=3 over a thread
/// priority of 2/7, on libaio and io_uring: about 30 % of the reads carry
/// real-time level 3 in the request, the JSON splits completion latency
/// per priority (the thread's first) and log_prio writes each I/O's value,
/// as fio 3.33 does.
#[test]
fn cmdprio_percentage_splits_latency_per_priority_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("p");
    std::fs::write(&f, vec![1u8; 8 << 20]).unwrap();
    let fa = format!("--filename={}", f.display());
    for engine in ["libaio", "io_uring"] {
        let ea = format!("--ioengine={engine}");
        let args = [
            "--name=p",
            fa.as_str(),
            ea.as_str(),
            "--rw=randread",
            "--bs=4k",
            "--size=8m",
            "--iodepth=8",
            "--direct=1",
            "--prioclass=2",
            "--prio=7",
            "--cmdprio_percentage=30",
            "--cmdprio_class=1",
            "--cmdprio=3",
            "--write_lat_log=pl",
            "--log_prio=1",
        ];
        let mut tools: Vec<(&str, Value)> = Vec::new();
        let (v, o) = ssdready_in(dir.path(), &args);
        assert!(
            o.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        tools.push(("ssdready", v));
        let ours = prio_column(&dir.path().join("pl_clat.1.log"));
        if have_fio() {
            tools.push(("fio", fio_in(dir.path(), &args).0));
            let theirs = prio_column(&dir.path().join("pl_clat.1.log"));
            assert_eq!(
                ours.keys().collect::<Vec<_>>(),
                theirs.keys().collect::<Vec<_>>(),
                "{engine}: log priority values"
            );
        }
        assert_eq!(
            ours.keys().collect::<Vec<_>>(),
            ["0x2003", "0x4007"],
            "{engine}"
        );
        for (who, v) in &tools {
            let p = prios(v, "read");
            assert_eq!(p.len(), 2, "{who} {engine}: {p:?}");
            assert_eq!(
                (p[0].0, p[0].1, p[1].0, p[1].1),
                (2, 7, 1, 3),
                "{who} {engine}"
            );
            let share = p[1].2 as f64 / (p[0].2 + p[1].2) as f64;
            assert!((share - 0.30).abs() < 0.05, "{who} {engine}: {share}");
            assert_eq!(p[0].2 + p[1].2, 2048, "{who} {engine}");
        }
    }
}

/// cmdprio_bssplit: only the 64 KiB reads get a priority of their own,
/// 25 % real-time 1 and 75 % idle; 1 MiB reads keep the thread's.
#[test]
fn cmdprio_bssplit_gives_priorities_by_block_size() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("b");
    std::fs::write(&f, vec![1u8; 32 << 20]).unwrap();
    let fa = format!("--filename={}", f.display());
    let args = [
        "--name=b",
        fa.as_str(),
        "--ioengine=libaio",
        "--rw=randread",
        "--bssplit=64k/50:1m/50",
        "--size=32m",
        "--iodepth=4",
        "--direct=1",
        "--norandommap",
        "--cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1m/0",
        "--write_lat_log=bl",
        "--log_prio=1",
        "--number_ios=2000",
    ];
    let (v, o) = ssdready_in(dir.path(), &args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let log = std::fs::read_to_string(dir.path().join("bl_clat.1.log")).unwrap();
    let (mut small, mut big) = (
        std::collections::BTreeMap::new(),
        std::collections::BTreeMap::new(),
    );
    for l in log.lines() {
        let f: Vec<&str> = l.split(", ").collect();
        let m = if f[3] == "65536" {
            &mut small
        } else {
            &mut big
        };
        *m.entry(f[4].to_string()).or_insert(0u64) += 1;
    }
    assert_eq!(big.keys().collect::<Vec<_>>(), ["0x0000"], "{big:?}");
    assert_eq!(
        small.keys().collect::<Vec<_>>(),
        ["0x2001", "0x6002"],
        "{small:?}"
    );
    let rt = small["0x2001"] as f64 / (small["0x2001"] + small["0x6002"]) as f64;
    assert!((rt - 0.25).abs() < 0.06, "{rt}");
    assert_eq!(prios(&v, "read").len(), 3);
}

/// io_submit_mode=offload with rate_iops: I/Os go through the submitter
/// threads at the rate asked; rate_process=poisson keeps the mean rate
/// with uneven gaps. (fio 3.33 hangs at the end of an offload job here,
/// so there is no side-by-side run.)
#[test]
fn offload_and_poisson_submission_keep_the_rate() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("o");
    std::fs::write(&f, vec![1u8; 4 << 20]).unwrap();
    let fa = format!("--filename={}", f.display());
    for process in ["linear", "poisson"] {
        let pa = format!("--rate_process={process}");
        let (v, o) = ssdready_in(
            dir.path(),
            &[
                "--name=o",
                &fa,
                "--ioengine=libaio",
                "--direct=1",
                "--rw=randread",
                "--bs=4k",
                "--iodepth=8",
                "--io_submit_mode=offload",
                "--rate_iops=400",
                &pa,
                "--number_ios=400",
                "--size=4m",
                "--write_lat_log=ol",
            ],
        );
        assert!(
            o.status.success(),
            "{process}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(ios(&v, "read"), 400, "{process}");
        // Above 460 is beyond chance (three standard deviations of 400
        // random gaps) and beyond the rate; a loaded machine only
        // lengthens the run, so the floor is half the rate.
        let iops = v["jobs"][0]["read"]["iops"].as_f64().unwrap();
        assert!((200.0..460.0).contains(&iops), "{process}: {iops}");
        let log = std::fs::read_to_string(dir.path().join("ol_lat.1.log")).unwrap();
        assert_eq!(log.lines().count(), 400, "{process}: one log line per I/O");
    }
}

/// numa_cpu_nodes / numa_mem_policy: node 0 runs; a node the machine lacks
/// is refused before anything runs, exit 2, naming the nodes there are.
#[test]
fn numa_nodes_the_machine_lacks_are_refused_and_node_0_runs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let fa = format!("--filename={}", dir.path().join("n").display());
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--quiet",
            "--name=n",
            fa.as_str(),
            "--size=1m",
            "--ioengine=libaio",
        ];
        a.extend_from_slice(extra);
        ssdready(&a)
    };
    let o = run(&["--numa_cpu_nodes=0", "--numa_mem_policy=bind:0"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["--numa_mem_policy=interleave:0-4095"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("NUMA node") && err.contains("nodes here:"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// latency_target on the null engine (every I/O meets it): the search
/// doubles the depth up to iodepth, runs one final window there and ends
/// the job long before its runtime, reporting fio's latency_* keys — the
/// same depth as fio 3.33.
#[test]
fn latency_target_search_settles_and_ends_the_job_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--name=l",
        "--ioengine=null",
        "--size=1g",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=8",
        "--latency_target=10ms",
        "--latency_window=50ms",
        "--latency_percentile=99.9",
        "--time_based",
        "--runtime=10",
    ];
    let mut tools = vec![("ssdready", ssdready_in(dir.path(), &args).0)];
    if have_fio() {
        tools.push(("fio", fio_in(dir.path(), &args).0));
    }
    for (who, v) in &tools {
        let j = &v["jobs"][0];
        assert_eq!(j["latency_depth"], 8, "{who}");
        assert_eq!(j["latency_target"], 10_000_000, "{who}");
        assert_eq!(j["latency_window"], 50_000, "{who}");
        assert_eq!(j["latency_percentile"], 99.9, "{who}");
        let ms = j["job_runtime"].as_u64().unwrap();
        assert!(ms < 2_000, "{who}: ran {ms} ms, the search should end it");
    }
}

/// The 4 KiB blocks of `path`.
fn blocks(path: &std::path::Path) -> Vec<Vec<u8>> {
    std::fs::read(path)
        .unwrap()
        .chunks(4096)
        .map(<[u8]>::to_vec)
        .collect()
}

/// fio's dedupe-global example, scaled down: with dedupe_global=1 about
/// half of job a's blocks also appear in job b's file (the shared working
/// set), without it none — as in fio 3.33 (0.54 and 0 there).
#[test]
fn dedupe_global_shares_the_working_set_between_jobs_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    for global in [1, 0] {
        let job = format!(
            "[global]\nioengine=libaio\niodepth=16\nsize=8m\ndedupe_mode=working_set\n\
             dedupe_global={global}\ndedupe_percentage=50\nblocksize=4k\nrw=write\n\
             buffer_compress_percentage=50\ndedupe_working_set_percentage=50\n[a]\n[b]\n"
        );
        let jf = dir.path().join("d.fio");
        std::fs::write(&jf, job).unwrap();
        let mut runs = vec!["ssdready"];
        if have_fio() {
            runs.push("fio");
        }
        for who in runs {
            for f in ["a.0.0", "b.0.0"] {
                let _ = std::fs::remove_file(dir.path().join(f));
            }
            let jfs = jf.to_str().unwrap();
            let o = if who == "fio" {
                fio_in(dir.path(), &[jfs]).1
            } else {
                ssdready_in(dir.path(), &[jfs]).1
            };
            assert!(
                o.status.success(),
                "{who}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let (a, b) = (
                blocks(&dir.path().join("a.0.0")),
                blocks(&dir.path().join("b.0.0")),
            );
            let in_b: std::collections::HashSet<&Vec<u8>> = b.iter().collect();
            let shared = a.iter().filter(|x| in_b.contains(x)).count() as f64 / a.len() as f64;
            if global == 1 {
                assert!((0.40..0.70).contains(&shared), "{who}: {shared}");
            } else {
                assert_eq!(shared, 0.0, "{who}");
            }
        }
    }
}
