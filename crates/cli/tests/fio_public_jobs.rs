//! Job files in the shape people write them — Ceph's RBD and RADOS jobs,
//! SPDK's plug-in by path, an RDMA client, cloud providers' disk
//! benchmarks, PerfKitBenchmarker, ChromiumOS, kubestr, kbench, fio-plot,
//! OpenZFS's perf tests, Windows line endings, a header without its `]`,
//! IEC suffixes (`1Mi`), colon lists, CPU lists beyond this machine
//! (`tests/public_jobs/`, re-typed and shortened from public projects,
//! never fio's own examples). Every one parses (`--parse-only`, exit 0)
//! with the jobs fio 3.33 makes of it; where fio is installed, fio must
//! accept each file too and name the same jobs (`fio --showcmd`). A run of
//! a job whose engine needs a library refuses it, naming what is missing.

use crate::common;
use common::fio::have_fio;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The environment the files' `${VAR}`s need (as their scripts set them).
const ENV: &[(&str, &str)] = &[
    ("BS", "4k"),
    ("POOL", "rbd"),
    ("IODEPTH", "32"),
    ("RW", "randwrite"),
    ("FILENAME", "/tmp/ssdready-public-chromeos"),
    ("FILESIZE", "16m"),
    ("VERIFY_ONLY", "0"),
    ("RUNTIME", "10"),
    ("DIRECTORY", "/tmp"),
    ("BLOCKSIZE", "128k"),
    ("SYNC_TYPE", "0"),
    ("NUMJOBS", "4"),
];

/// Each file and the jobs fio 3.33 makes of it (`fio --showcmd`).
const FILES: &[(&str, &[&str])] = &[
    ("ceph-rados.fio", &["write-4m"]),
    ("ceph-rbd-env.fio", &["test-job1", "test-job2"]),
    ("ceph-rbd.fio", &["rbd_iodepth32"]),
    ("chromiumos-8k-async-randwrite.fio", &["8k_async_randwrite"]),
    ("cloud-disk-iops.fio", &["read_iops"]),
    ("cloud-disk-throughput.fio", &["write_throughput"]),
    ("cpus-allowed-split.fio", &["randread"]),
    ("crlf-line-endings.fio", &["seq-read"]),
    ("fio-plot-bench.fio", &["iotest"]),
    ("kbench-mixed.fio", &["rand-rw"]),
    ("kubestr.fio", &["read_iops", "write_iops"]),
    ("missing-bracket.fio", &["rand-rea"]),
    ("openzfs-perf.fio", &["job"]),
    (
        "perfkit-parent.fio",
        &["rand_4k_read_100%-io-depth-1-num-jobs-1"],
    ),
    ("rdma-client.fio", &["rdma-client"]),
    ("sd-card-a1.fio", &["prepare-file", "rand-4k-write"]),
    ("size-colon-list.fio", &["seq-write"]),
    ("spdk-plugin-path.fio", &["test"]),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/public_jobs")
}

fn tool(program: &str, args: &[&str]) -> Output {
    let mut c = Command::new(program);
    c.args(args).current_dir(std::env::temp_dir());
    for (k, v) in ENV {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn ssdready(args: &[&str]) -> Output {
    tool(env!("CARGO_BIN_EXE_ssdready"), args)
}

/// Job names of `fio --showcmd`: each `--name=` starts a job, except one
/// right after another, which renames it (a `name=` line in a section).
fn fio_jobs(showcmd: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut after_name = false;
    for tok in showcmd.trim().split(" --") {
        match tok.strip_prefix("name=") {
            Some(n) if after_name => *names.last_mut().unwrap() = n.trim().to_string(),
            Some(n) => names.push(n.trim().to_string()),
            None => {}
        }
        after_name = tok.starts_with("name=");
    }
    names
}

#[test]
fn every_public_job_file_parses_with_fios_jobs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let on_disk = std::fs::read_dir(dir()).unwrap().count();
    assert_eq!(
        on_disk,
        FILES.len(),
        "a file in tests/public_jobs without its entry"
    );
    let fio = have_fio();
    if !fio {
        eprintln!("fio is not installed: checking ssdready against the recorded job names only");
    }
    for (file, jobs) in FILES {
        let path = dir().join(file);
        let p = path.to_str().unwrap();
        let out = ssdready(&["run", "--parse-only", p]);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let got: Vec<&str> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|j| j["spec"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(&got, jobs, "{file}");
    }
    if !fio {
        return;
    }
    // fio takes about half a second to start: the files in parallel.
    // `--showcmd` fails as `--parse-only` does on what fio refuses.
    std::thread::scope(|scope| {
        for (file, jobs) in FILES {
            scope.spawn(move || {
                let path = dir().join(file);
                let show = tool("fio", &["--showcmd", path.to_str().unwrap()]);
                assert!(
                    show.status.success(),
                    "fio refuses {file}: {}",
                    String::from_utf8_lossy(&show.stderr)
                );
                let names = fio_jobs(&String::from_utf8_lossy(&show.stdout));
                assert_eq!(names, *jobs, "fio's jobs of {file}");
            });
        }
    });
}

#[test]
fn sizes_and_lists_mean_what_fio_reads() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let job = |file: &str| -> Value {
        let out = ssdready(&["run", "--parse-only", dir().join(file).to_str().unwrap()]);
        assert!(out.status.success(), "{file}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v[0]["spec"].clone()
    };
    // bs=1Mi, size=10Gi: the SI path, kb_base 1024 (fio 3.33: 1048576).
    let t = job("cloud-disk-throughput.fio");
    assert_eq!(t["bs"]["fixed"], 1 << 20);
    assert_eq!(t["size"], 10u64 << 30);
    // size=64m:64m: the last element.
    assert_eq!(job("size-colon-list.fio")["size"], 64u64 << 20);
}

#[test]
fn a_run_refuses_what_this_machine_lacks_naming_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (file, says) in [
        ("ceph-rbd.fio", "librbd"),
        ("ceph-rados.fio", "librados"),
        ("rdma-client.fio", "libibverbs"),
        ("spdk-plugin-path.fio", "/usr/src/spdk/build/fio/spdk_nvme"),
    ] {
        let out = ssdready(&["run", dir().join(file).to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{file}: {err}"
        );
        assert!(out.stdout.is_empty(), "{file}");
    }
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cpus < 64 {
        let out = ssdready(&[
            "run",
            dir().join("cpus-allowed-split.fio").to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("cpus_allowed") && err.contains("not available"),
            "{err}"
        );
    }
}

#[test]
fn an_engine_option_belongs_to_its_engine() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&[
        "run",
        "--parse-only",
        "--name=j",
        "--ioengine=libaio",
        "--pool=rbd",
        "--size=1m",
        "--filename=/tmp/ssdready-public-x",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("'pool'") && err.contains("ioengine=rbd"),
        "{err}"
    );
}
