//! Bad input: one line naming the option and the allowed values, exit code 2,
//! and nothing written. Refusal to destroy data.

use crate::common;
use common::*;

fn expect_bad(args: &[&str], needle: &str) {
    let mut a = vec!["run"];
    a.extend_from_slice(args);
    let out = ssdready(&a);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} printed a result");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "{args:?}: '{err}' lacks '{needle}'");
}

#[test]
fn bad_input_is_one_line_exit_2_and_writes_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("target");
    let out = dir.path().join("out.json");
    let fa = format!("--filename={}", f.display());
    let oa = format!("--output={}", out.display());
    expect_bad(&[&fa, "--size=1m", "--bs=4q", &oa], "option 'bs'");
    expect_bad(&[&fa, "--size=1m", "--iodepth=0", &oa], "at least 1");
    expect_bad(&[&fa, "--size=1m", "--iodeph=4"], "did you mean 'iodepth'");
    expect_bad(&[&fa, "--size=4k", "--bs=8k"], "larger than size");
    expect_bad(
        &["--filename=emu:nope", &oa],
        "unknown emulator preset 'nope'",
    );
    expect_bad(
        &["--filename=emu:x25e,colour=red", &oa],
        "unknown emulator parameter 'colour'",
    );
    expect_bad(
        &["--filename=emu:x25e,size=128m", "--size=256m"],
        "exceeds the emulated device",
    );
    expect_bad(&[&fa, "--size=1m", "--rw=randomread"], "randread");
    expect_bad(&[&fa, "--size=1m", "--output-format=xml"], "normal, json");
    expect_bad(&["--ioengine=null"], "needs size");
    expect_bad(
        &[&fa, "--size=1m", "--ioengine=psync", "--hipri"],
        "only applies to ioengine=io_uring",
    );
    expect_bad(
        &["--filename=/no/such/dir/f", "--size=1m"],
        "does not exist",
    );
    assert!(!f.exists(), "the target was created");
    assert!(!out.exists(), "the output was written");
}

#[test]
fn hipri_on_a_device_without_poll_queues_says_which_sysfs_file() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("poll", 16) else {
        return;
    };
    let dev = format!("--filename={}", l.dev);
    expect_bad(
        &[
            &dev,
            "--ioengine=io_uring",
            "--hipri",
            "--direct=1",
            "--runtime=1",
        ],
        "queue/io_poll is 0",
    );
}

#[test]
fn writes_to_a_device_with_a_filesystem_are_refused_unless_forced() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = LoopDev::new("safety", 16) else {
        return;
    };
    // An ext4 superblock magic at byte 1080.
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&l.dev)
            .unwrap();
        f.seek(SeekFrom::Start(1080)).unwrap();
        f.write_all(&[0x53, 0xef]).unwrap();
        f.sync_all().unwrap();
    }
    let dev = format!("--filename={}", l.dev);
    expect_bad(
        &[&dev, "--rw=write", "--size=1m"],
        "ext2/3/4 filesystem signature",
    );
    // Reads are always allowed.
    let r = run_json(&[&dev, "--rw=read", "--size=1m"]);
    assert_eq!(r["jobs"][0]["read"]["bytes"], 1 << 20);
    // Forced writes go through.
    let r = run_json(&[&dev, "--rw=write", "--size=1m", "--allow-destructive"]);
    assert_eq!(r["jobs"][0]["write"]["bytes"], 1 << 20);
}

#[test]
fn sigint_stops_promptly_and_still_reports() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "run",
            "--output-format=native",
            "--quiet",
            "--ioengine=null",
            "--size=1g",
            "--runtime=60",
            "--time_based",
            "--rate_iops=5000",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let t = std::time::Instant::now();
    nix_kill(child.id());
    let out = child.wait_with_output().unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_secs(2),
        "took {:?} to stop",
        t.elapsed()
    );
    assert_eq!(out.status.code(), Some(130));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("results still printed as JSON");
    assert_eq!(v["interrupted"], true);
    assert!(v["jobs"][0]["read"]["ios"].as_u64().unwrap() > 1000);
}

fn nix_kill(pid: u32) {
    std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .unwrap();
}

#[test]
fn client_inputs_are_bounded_and_named_once() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // An endless host file, an endless job file, an empty host list.
    expect_bad(&["--client=/dev/zero", "--name=j"], "larger than 1 MiB");
    expect_bad(&["--client=127.0.0.1,1", "/dev/zero"], "larger than 16 MiB");
    expect_bad(&["--client=", "--name=j"], "no host in ''");
    let out = ssdready(&["run", "--client=", "--name=j"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("--client").count(), 1, "{err}");
}

#[test]
fn a_command_line_that_does_not_parse_is_one_line_and_exit_2() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for args in [
        &["server", "--port", "65536"][..],
        &["server", "--port", "-1"],
        &["no-such-command"],
        &["app", "sqlite", "--scale", "99999999999"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("--help"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
