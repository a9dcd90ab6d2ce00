//! Nonsense that used to be accepted silently : each case
//! must end in a clean refusal (exit code 2, one line naming what, where and
//! the allowed values, nothing written) or a clean result.

use crate::common;
use common::*;
use std::path::Path;
use std::process::{Command, Output};

/// `ssdready run ARGS` (and, the same, with `--parse-only`) is refused.
fn refused(args: &[&str], needles: &[&str]) {
    for parse_only in [false, true] {
        let mut a = vec!["run", "--quiet"];
        if parse_only {
            a.push("--parse-only");
        }
        a.extend_from_slice(args);
        assert_refused(&ssdready(&a), &format!("{a:?}"), needles);
    }
}

/// As fio: `--parse-only` accepts CPUs this machine lacks (fio parses
/// them and fails when the job starts); a run refuses them before anything
/// runs.
fn refused_at_run(args: &[&str], needles: &[&str]) {
    let mut a = vec!["run", "--quiet"];
    a.extend_from_slice(args);
    assert_refused(&ssdready(&a), &format!("{a:?}"), needles);
    let mut p = vec!["run", "--quiet", "--parse-only"];
    p.extend_from_slice(args);
    let out = ssdready(&p);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{p:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn cpus_allowed_beyond_the_online_cpus_is_refused_naming_them() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    refused_at_run(
        &["--ioengine=null", "--size=1m", "--cpus_allowed=4095"],
        &[
            "option 'cpus_allowed'",
            "CPU 4095 is not available",
            "allowed: CPUs 0",
        ],
    );
    refused_at_run(
        &[
            "--ioengine=null",
            "--size=1m",
            "--cpumask=0x8000000000000000",
        ],
        &["option 'cpumask'", "CPU 63"],
    );
    refused_at_run(
        &[
            "--ioengine=io_uring",
            "--sqthread_poll",
            "--sqthread_poll_cpu=4095",
        ],
        &["option 'sqthread_poll_cpu'", "CPU 4095"],
    );
    let ok = ssdready(&[
        "run",
        "--parse-only",
        "--cpus_allowed=0",
        "--ioengine=null",
        "--size=1m",
    ]);
    assert_eq!(ok.status.code(), Some(0), "CPU 0 is always there");
}

#[test]
fn cpu_errors_in_a_job_file_name_the_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("pin.fio");
    std::fs::write(
        &f,
        "[global]\nioengine=null\nsize=1m\n\n[pinned]\ncpus_allowed=0,4000\n",
    )
    .unwrap();
    let out = ssdready(&["run", "--quiet", f.to_str().unwrap()]);
    assert_refused(
        &out,
        "job file",
        &["job 'pinned' (line 6)", "option 'cpus_allowed'"],
    );
}

#[test]
fn negative_nan_or_infinite_emulator_rates_are_refused_not_unlimited() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (param, v) in [
        ("link_mbps", "-1"),
        ("channel_mbps", "nan"),
        ("link_mbps", "inf"),
        ("op", "NaN"),
    ] {
        let target = format!("--filename=emu:x25e,{param}={v}");
        refused(
            &[&target],
            &["option 'filename'", &format!("'{param}'"), "allowed"],
        );
    }
}

#[test]
fn values_beyond_their_type_are_refused_not_truncated() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    refused(
        &["--iodepth=8", "--iodepth_batch_complete_max=4294967297"],
        &["option 'iodepth_batch_complete_max'", "4294967297"],
    );
    refused(
        &["--iodepth_batch_submit=4294967297"],
        &["option 'iodepth_batch_submit'"],
    );
    refused(&["--numjobs=4294967297"], &["option 'numjobs'", "allowed"]);
    refused(
        &["--sqthread_poll_cpu=4294967296"],
        &["option 'sqthread_poll_cpu'"],
    );
    refused(&["--bs=5g"], &["option 'bs'", "too large"]);
    refused(
        &["--log_avg_msec=18446744073709551615"],
        &["option 'log_avg_msec'"],
    );
    refused(
        &["--runtime=99999999999d"],
        &["option 'runtime'", "100 years"],
    );
    refused(
        &[
            "--ioengine=null",
            "--size=1m",
            "--offset=18446744073709551615",
        ],
        &["option 'offset'", "2^64"],
    );
    refused(
        &["--filename=emu:x25e,channels=4294967297"],
        &["'channels'", "out of range (allowed: 1 to 4096)"],
    );
    refused(
        &["--ioengine=io_uring", "--iodepth=40000"],
        &["option 'iodepth'", "32768"],
    );
}

#[test]
fn zero_where_zero_is_meaningless_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for opt in [
        "--numjobs=0",
        "--loops=0",
        "--thinktime_blocks=0",
        "--iodepth=0",
        "--bs=0",
        "--size=0",
    ] {
        let name = opt.trim_start_matches("--").split('=').next().unwrap();
        refused(
            &["--ioengine=null", "--size=1m", opt],
            &[&format!("option '{name}'")],
        );
    }
}

#[test]
fn an_empty_job_file_or_one_with_only_global_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("empty.fio", ""),
        ("comments.fio", "; nothing\n"),
        ("global.fio", "[global]\nbs=4k\n"),
    ] {
        let f = d.path().join(name);
        std::fs::write(&f, text).unwrap();
        refused(&[f.to_str().unwrap()], &["no jobs in", name]);
        let with_job = ssdready(&[
            "run",
            "--parse-only",
            f.to_str().unwrap(),
            "--name=x",
            "--ioengine=null",
            "--size=1m",
        ]);
        assert_eq!(
            with_job.status.code(),
            Some(0),
            "{name} with a --name job: its globals apply"
        );
    }
}

#[test]
fn a_job_file_that_is_not_text_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    refused(&["/dev/zero"], &["/dev/zero", "larger than 16 MiB"]);
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("binary.fio");
    std::fs::write(&f, [b'[', b'j', b']', b'\n', 0xff, 0xfe, b'\n']).unwrap();
    refused(&[f.to_str().unwrap()], &["not UTF-8"]);
    refused(&[d.path().to_str().unwrap()], &["is a directory"]);
}

#[test]
fn parse_only_validates_emulator_targets() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = ssdready(&["run", "--parse-only", "--filename=emu:nope"]);
    assert_refused(
        &out,
        "emu:nope",
        &["unknown emulator preset 'nope'", "allowed: x25e"],
    );
    let out = ssdready(&[
        "run",
        "--parse-only",
        "--filename=emu:x25e,size=128m",
        "--size=256m",
    ]);
    assert_refused(&out, "region", &["exceeds the emulated device"]);
    let out = ssdready(&["run", "--parse-only", "--filename=emu:x25e,colour=red"]);
    assert_refused(&out, "key", &["unknown emulator parameter 'colour'"]);
    let out = ssdready(&["run", "--parse-only", "--filename=emu:x25e,size=128m"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn control_characters_in_a_job_name_are_refused_on_one_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    refused(
        &["--name=two\nlines", "--ioengine=null", "--size=1m"],
        &["option 'name'", "control characters"],
    );
}

#[test]
fn ramdev_sizes_of_zero_or_beyond_memory_are_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (size, needle) in [
        ("0", "at least 1m"),
        ("1k", "whole number of MiB"),
        ("1p", "memory available"),
    ] {
        let out = ssdready(&["ramdev", "create", "--kind=loop", &format!("--size={size}")]);
        assert_refused(&out, size, &["option 'size'", needle]);
    }
    let out = ssdready(&["ramdev", "create", "--kind=floppy"]);
    assert_refused(
        &out,
        "kind",
        &["option 'kind'", "allowed: auto, null_blk, loop, zram"],
    );
}

#[test]
fn a_device_that_does_not_exist_is_refused_not_created_in_dev() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let path = format!("/dev/ssdready-no-such-device-{}", std::process::id());
    let fa = format!("--filename={path}");
    let out = ssdready(&["run", "--quiet", &fa, "--size=1m", "--rw=write"]);
    assert_refused(&out, &path, &[&path, "does not exist"]);
    assert!(
        !Path::new(&path).exists(),
        "a regular file was made in /dev"
    );
}

#[test]
fn a_file_larger_than_its_file_system_is_refused_before_layout() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("huge");
    let fa = format!("--filename={}", f.display());
    let out = ssdready(&["run", "--quiet", &fa, "--size=1p", "--rw=write"]);
    assert_refused(&out, "1p", &["option 'size'", "free"]);
    assert!(!f.exists(), "the file was created");
}

/// Run the binary as `nobody` when root (setpriv), else as is.
fn as_unprivileged(args: &[&str]) -> Option<Output> {
    if !is_root() {
        return Some(ssdready(args));
    }
    let out = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_ssdready"),
        ])
        .args(args)
        .output();
    match out {
        Ok(o) if !String::from_utf8_lossy(&o.stderr).contains("setpriv:") => Some(o),
        other => {
            eprintln!("skipped: cannot drop to nobody with setpriv: {other:?}");
            None
        }
    }
}

#[test]
fn permission_errors_exit_2_with_the_path_and_the_reason() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("locked");
    std::fs::create_dir(&dir).unwrap();
    let f = dir.join("data");
    std::fs::write(&f, vec![0u8; 1 << 20]).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    if !is_root() {
        // The owner can read a 0600 file; take that away.
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o555)).unwrap();
    }
    let read = format!("--filename={}", f.display());
    let Some(out) = as_unprivileged(&["run", "--quiet", &read, "--rw=read"]) else {
        return;
    };
    assert_refused(&out, "read", &[f.to_str().unwrap(), "Permission denied"]);
    let new = dir.join("new");
    let create = format!("--filename={}", new.display());
    let Some(out) = as_unprivileged(&["run", "--quiet", &create, "--size=1m", "--rw=write"]) else {
        return;
    };
    assert_refused(
        &out,
        "create",
        &[new.to_str().unwrap(), "Permission denied"],
    );
    assert!(!new.exists());
    let Some(out) = as_unprivileged(&["ramdev", "create", "--size=8m"]) else {
        return;
    };
    assert_refused(&out, "ramdev", &["needs root"]);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Start a run that does nothing for 5 s, interrupt it after 1 s.
fn interrupted_before_any_io(format: &str) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "run",
            "--quiet",
            "--ioengine=null",
            "--size=1m",
            "--startdelay=5",
            "--runtime=1",
            "--time_based",
        ])
        .arg(format!("--output-format={format}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1000));
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    child.wait_with_output().unwrap()
}

#[test]
fn per_io_figures_are_not_printed_for_zero_ios() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let out = interrupted_before_any_io("normal");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{text}");
    assert!(text.contains("no I/O completed"), "{text}");
    assert!(
        !text.contains("cpu per I/O ("),
        "per-I/O figures of nothing: {text}"
    );
    assert!(!text.contains("NaN") && !text.contains(" inf"), "{text}");
    let out = interrupted_before_any_io("native");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("native JSON");
    let cpu = &v["phases"][0]["cpu"];
    assert_eq!(cpu["ios"], 0, "{cpu}");
    assert_eq!(
        cpu["per_io"]["process_ns"], 0.0,
        "no per-I/O cost made up: {cpu}"
    );
    assert_eq!(cpu["per_io"]["system_ns"], 0.0, "{cpu}");
}

#[test]
fn checks_that_need_no_target_are_made_by_parse_only_too() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    refused(
        &[
            "--filename=/tmp/ssdready-never-made",
            "--size=1m",
            "--ioengine=psync",
            "--cmdprio_percentage=10",
        ],
        &["option 'cmdprio_percentage'", "psync"],
    );
    refused(
        &[
            "--filename=/tmp/ssdready-never-a:/tmp/ssdready-never-b",
            "--size=4k",
        ],
        &[
            "option 'size'",
            "split over 2 files",
            "allowed: size ≥ 8192",
        ],
    );
    refused(
        &[
            "--ioengine=null",
            "--size=1m",
            "--write_bw_log=/no/such/dir/x",
        ],
        &["option 'write_bw_log'", "/no/such/dir does not exist"],
    );
}
