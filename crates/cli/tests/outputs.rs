//! Results are never thrown away or clobbered, a layout never runs away,
//! and no panic reaches a user (issue #9, items 4 and 5): every destination
//! and engine limit is checked before the first I/O, results are replaced
//! atomically, a failed write is an error, an interrupted run says so in
//! every format, and a later phase's failure keeps the earlier results.

use crate::common;

use common::{is_root, ssdready};
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run ssdready")
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig}");
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit code 2, one line on stderr containing `needle`, nothing on stdout,
/// and no more than `within` spent (the refusal comes before the run).
fn assert_refused(o: &Output, needle: &str, within: Duration, took: Duration) {
    common::assert_refused(o, "the run", &[needle]);
    assert!(took < within, "refused only after {took:?}");
}

fn timed(args: &[&str]) -> (Output, Duration) {
    let t = Instant::now();
    let o = ssdready(args);
    (o, t.elapsed())
}

/// A five-second job: a check that refuses it must come before it runs.
const LONG: [&str; 5] = [
    "--name=t",
    "--ioengine=null",
    "--size=1m",
    "--runtime=5",
    "--time_based",
];

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn output_to_dev_full_is_refused_before_the_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (o, took) = timed(&[&["run", "--quiet", "--output=/dev/full"][..], &LONG].concat());
    assert_refused(&o, "/dev/full", Duration::from_secs(2), took);
}

#[test]
fn results_to_a_full_standard_output_are_an_error_not_exit_0() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet", "--name=t", "--ioengine=null", "--size=1m"])
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("standard output"), "{}", stderr(&o));
    assert!(stderr(&o).contains("No space left"), "{}", stderr(&o));
}

#[test]
fn output_that_is_a_directory_is_refused_before_the_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let out = format!("--output={}", d.path().display());
    for cmd in [&["run"][..], &["emu", "simulate"][..]] {
        let args = [
            cmd,
            &["--quiet", &out, "--name=t", "--runtime=5", "--time_based"],
        ]
        .concat();
        let (o, took) = timed(&args);
        assert_refused(&o, "is a directory", Duration::from_secs(2), took);
    }
    assert!(files_in(d.path()).is_empty(), "nothing written");
}

#[test]
fn unwritable_output_is_refused_before_the_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // Not writable even by root.
    let (o, took) = timed(&[&["run", "--quiet", "--output=/proc/version"][..], &LONG].concat());
    assert_refused(&o, "/proc/version", Duration::from_secs(2), took);
    let (o, took) = timed(
        &[
            &["run", "--quiet", "--output=/no/such/dir/r.json"][..],
            &LONG,
        ]
        .concat(),
    );
    assert_refused(&o, "/no/such/dir", Duration::from_secs(2), took);
}

#[test]
fn bad_write_bw_log_directory_is_refused_before_the_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r.json");
    let out = format!("--output={}", out.display());
    let args = [
        &["run", "--quiet", &out][..],
        &LONG,
        &["--write_bw_log=/no/such/dir/x"],
    ]
    .concat();
    let (o, took) = timed(&args);
    assert_refused(&o, "write_bw_log", Duration::from_secs(2), took);
    assert!(files_in(d.path()).is_empty(), "nothing written");
}

#[test]
fn io_uring_iodepth_above_the_kernel_limit_is_refused_before_the_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", d.path().join("f").display());
    for depth in ["--iodepth=65536", "--iodepth=4000000000"] {
        let (o, took) = timed(&[
            "run",
            "--quiet",
            "--name=t",
            "--ioengine=io_uring",
            depth,
            &f,
            "--size=1m",
            "--runtime=5",
            "--time_based",
        ]);
        assert_refused(&o, "iodepth", Duration::from_secs(2), took);
        // io_uring's own limit, or the general one when the value is beyond it.
        assert!(
            stderr(&o).contains("32768") || stderr(&o).contains("65536"),
            "says the limit: {}",
            stderr(&o)
        );
    }
    assert!(
        files_in(d.path()).is_empty(),
        "no layout before the refusal"
    );
}

#[test]
fn libaio_iodepth_above_aio_max_nr_is_refused_before_the_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let max: u64 = std::fs::read_to_string("/proc/sys/fs/aio-max-nr")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(65536);
    // Two workers of just over half the limit each: every depth is valid on
    // its own, the machine cannot grant them together.
    let Some(depth) = Some(max / 2 + 1).filter(|&d| d <= 65536) else {
        eprintln!("skipped: fs.aio-max-nr is too large to exceed with valid depths");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (o, took) = timed(&[
        "run",
        "--quiet",
        "--name=t",
        "--ioengine=libaio",
        &format!("--iodepth={depth}"),
        "--numjobs=2",
        &format!("--filename={}", d.path().join("f").display()),
        "--size=1m",
        "--runtime=5",
        "--time_based",
    ]);
    assert_refused(&o, "aio-max-nr", Duration::from_secs(2), took);
    assert!(
        files_in(d.path()).is_empty(),
        "no layout before the refusal"
    );
}

#[test]
fn layout_larger_than_the_free_space_is_refused_before_writing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let (o, took) = timed(&[
        "run",
        "--quiet",
        "--name=t",
        &format!("--filename={}", f.display()),
        "--offset=1p",
        "--size=1m",
    ]);
    assert_refused(&o, "free", Duration::from_secs(2), took);
    assert!(
        stderr(&o).contains("1125899907891200 bytes") || stderr(&o).contains("1.00 PiB"),
        "{}",
        stderr(&o)
    );
    assert!(!f.exists(), "nothing written");
}

/// Bytes the file system holding `dir` has free for a layout.
fn available(dir: &Path) -> u64 {
    let o = Command::new("stat")
        .args(["-f", "-c", "%a %S"])
        .arg(dir)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&o.stdout);
    let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
    v[0] * v[1]
}

/// A layout size that cannot finish in the ~0.4 s before the signal (half
/// the free space, at most 16 GiB), or None with the reason printed.
fn long_layout(dir: &Path) -> Option<u64> {
    let size = (available(dir) / 2).min(16 << 30);
    if size < 4 << 30 {
        eprintln!("skipped: {size} bytes free for a layout may be laid out before the signal");
        return None;
    }
    Some(size)
}

/// Lay out `size` bytes on `f` and interrupt with `sig` after `after`;
/// returns the output and how long the process took to go after it.
fn interrupt_layout(f: &Path, size: u64, sig: &str, after: Duration) -> (Output, Duration) {
    let child = spawn(&[
        "run",
        "--quiet",
        "--name=t",
        "--rw=read",
        &format!("--filename={}", f.display()),
        &format!("--size={size}"),
    ]);
    std::thread::sleep(after);
    let t = Instant::now();
    signal(&child, sig);
    let o = child.wait_with_output().unwrap();
    (o, t.elapsed())
}

#[test]
fn interrupted_layout_removes_the_file_it_created_and_stops_promptly() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let Some(size) = long_layout(d.path()) else {
        return;
    };
    for sig in ["INT", "TERM", "HUP"] {
        let (o, took) = interrupt_layout(&f, size, sig, Duration::from_millis(400));
        assert_eq!(o.status.code(), Some(130), "SIG{sig}: {}", stderr(&o));
        assert!(stderr(&o).contains("laying out"), "{}", stderr(&o));
        assert!(o.stdout.is_empty(), "nothing measured, nothing reported");
        // The stop is seen within ~100 ms, but a write(2) already in the
        // kernel may be held by dirty-page throttling for seconds when other
        // work fills the disk, and removing a large half-written file takes
        // its own time: 10 s still tells a prompt stop from a layout of
        // several GiB run to its end.
        assert!(
            took < Duration::from_secs(10),
            "SIG{sig}: stopped after {took:?}"
        );
        assert!(!f.exists(), "SIG{sig}: the half-laid-out file was left");
    }
}

#[test]
fn interrupted_layout_puts_a_users_file_back_as_it_was() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("f");
    let mine = vec![0x5a_u8; 12345];
    std::fs::write(&f, &mine).unwrap();
    let Some(size) = long_layout(d.path()) else {
        return;
    };
    let (o, _) = interrupt_layout(&f, size, "TERM", Duration::from_millis(400));
    assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&f).unwrap(),
        mine,
        "the user's file is as it was"
    );
}

#[test]
fn interrupted_run_says_so_in_every_output_format() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    for (fmt, sig) in [
        ("json", "INT"),
        ("json+", "TERM"),
        ("native", "HUP"),
        ("normal", "INT"),
    ] {
        let out = d.path().join(format!("r.{fmt}"));
        let child = spawn(&[
            "run",
            "--quiet",
            &format!("--output-format={fmt}"),
            &format!("--output={}", out.display()),
            "--name=t",
            "--ioengine=null",
            "--size=1m",
            "--runtime=30",
            "--time_based",
        ]);
        std::thread::sleep(Duration::from_millis(700));
        let t = Instant::now();
        signal(&child, sig);
        let o = child.wait_with_output().unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "{fmt}: {:?}",
            t.elapsed()
        );
        assert_eq!(o.status.code(), Some(130), "{fmt}: {}", stderr(&o));
        let text = std::fs::read_to_string(&out).unwrap();
        match fmt {
            "normal" => assert!(text.contains("INTERRUPTED"), "{text}"),
            "native" => {
                let v: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(v["interrupted"], true);
            }
            _ => {
                let v: Value = serde_json::from_str(&text).unwrap();
                assert_eq!(v["jobs"][0]["ssdready"]["interrupted"], true, "{fmt}");
            }
        }
    }
}

#[test]
fn fio_json_of_a_complete_run_says_it_was_not_interrupted() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let o = ssdready(&[
        "run",
        "--quiet",
        "--output-format=json",
        "--name=t",
        "--ioengine=null",
        "--size=1m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["ssdready"]["interrupted"], false);
    assert_eq!(v["jobs"][0]["ssdready"]["failure"], Value::Null);
}

#[test]
fn second_phase_that_fails_to_start_keeps_the_first_phases_results() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", d.path().join("f").display());
    let out = d.path().join("r.json");
    // Phase 1 removes the file (unlink=1) that phase 2 then cannot open.
    let o = ssdready(&[
        "run",
        "--quiet",
        "--output-format=json",
        &format!("--output={}", out.display()),
        "--name=a",
        &f,
        "--size=1m",
        "--unlink=1",
        "--name=b",
        "--stonewall",
        &f,
        "--size=1m",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("phase 2 of 2"), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "phase 1's job is reported");
    assert_eq!(jobs[0]["jobname"], "a");
    assert_eq!(jobs[0]["read"]["io_bytes"], 1 << 20);
    let failure = jobs[0]["ssdready"]["failure"].as_str().unwrap();
    assert!(failure.contains("job 'b'"), "{failure}");
}

/// Make `path` unwritable even for root (immutable), or for its owner;
/// false when neither works here.
fn make_unwritable(path: &Path) -> bool {
    if is_root() {
        Command::new("chattr")
            .arg("+i")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success())
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o444)).is_ok()
    }
}

#[test]
fn target_of_a_later_phase_that_cannot_be_opened_is_refused_before_the_first_io() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let locked = d.path().join("locked");
    std::fs::write(&locked, vec![0u8; 1 << 20]).unwrap();
    if !make_unwritable(&locked) {
        eprintln!("skipped: cannot make a file unwritable here (chattr +i)");
        return;
    }
    let target = format!("--filename={}", locked.display());
    let args = [
        &["run", "--quiet"][..],
        &LONG,
        &["--name=w", "--stonewall", "--rw=write", &target],
    ]
    .concat();
    let (o, took) = timed(&args);
    let _ = Command::new("chattr").arg("-i").arg(&locked).status();
    assert_refused(&o, "cannot open", Duration::from_secs(2), took);
    assert!(stderr(&o).contains("job 'w'"), "{}", stderr(&o));
}

#[test]
fn worker_panic_is_an_internal_error_not_a_crash() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet", "--name=t", "--ioengine=null", "--size=1m"])
        .args(["--numjobs=4"])
        .env("SSDREADY_INJECT_PANIC", "worker")
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(70), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(
        e.contains("internal error") && e.contains("worker/steps"),
        "{e}"
    );
    assert!(
        !e.contains("RUST_BACKTRACE") && !e.contains("PoisonError"),
        "{e}"
    );
}

#[test]
fn main_thread_panic_prints_one_line_naming_it_an_internal_error() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet", "--name=t", "--ioengine=null", "--size=1m"])
        .env("SSDREADY_INJECT_PANIC", "main")
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(70), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
    assert!(
        e.contains("internal error") && e.contains("main.rs:"),
        "{e}"
    );
}

#[test]
fn panic_holding_the_emulators_lock_keeps_earlier_phases_and_names_the_panic() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r.json");
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "run",
            "--quiet",
            "--output-format=native",
            &format!("--output={}", out.display()),
            "--name=a",
            "--ioengine=null",
            "--size=1m",
            "--name=b",
            "--stonewall",
            "--filename=emu:nvme-tlc",
            "--numjobs=3",
            "--runtime=1",
            "--time_based",
        ])
        .env("SSDREADY_INJECT_PANIC", "worker:b")
        .output()
        .unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(70), "{e}");
    assert!(!e.contains("PoisonError"), "the panic, not its echo: {e}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["name"], "a");
    let failure = v["failure"].as_str().unwrap();
    assert!(failure.contains("worker/steps"), "{failure}");
}

#[test]
fn a_worker_that_cannot_start_stops_its_phase_before_any_io() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet"])
        .args(LONG)
        .args(["--name=b", "--ioengine=null", "--size=1m"])
        .env("SSDREADY_INJECT_PANIC", "open:b")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(70), "{}", stderr(&o));
    assert!(
        t.elapsed() < Duration::from_secs(2),
        "job t ran its 5 s: {:?}",
        t.elapsed()
    );
}

#[test]
fn output_is_replaced_whole_and_leaves_no_temporary_file() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r.json");
    std::fs::write(&out, "previous results").unwrap();
    let o = ssdready(&[
        "run",
        "--quiet",
        "--output-format=native",
        &format!("--output={}", out.display()),
        "--name=t",
        "--ioengine=null",
        "--size=1m",
        &format!("--write_bw_log={}", d.path().join("y").display()),
        &format!("--write_iops_log={}", d.path().join("x").display()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["failure"], Value::Null);
    assert_eq!(files_in(d.path()), ["r.json", "x_iops.1.log", "y_bw.1.log"]);
}

/// A small tmpfs mounted for one test (root only), unmounted on drop.
struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn new(size: &str) -> Option<SmallFs> {
        if !is_root() {
            eprintln!("skipped: needs root to mount a small tmpfs");
            return None;
        }
        let d = tempfile::tempdir().ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(d.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!("skipped: mount -t tmpfs failed");
            return None;
        }
        Some(SmallFs(d))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn results_on_a_disk_that_fills_up_keep_the_previous_file_and_exit_1() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(fs) = SmallFs::new("2m") else {
        return;
    };
    let dir = fs.0.path();
    let out = dir.join("r.json");
    std::fs::write(&out, "previous results").unwrap();
    // The layout takes every byte left, so the results no longer fit.
    let left = available(dir);
    let o = ssdready(&[
        "run",
        "--quiet",
        "--output-format=json+",
        &format!("--output={}", out.display()),
        "--name=t",
        "--rw=read",
        &format!("--filename={}", dir.join("f").display()),
        &format!("--size={left}"),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("No space left"), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "previous results");
    assert_eq!(files_in(dir), ["f", "r.json"], "no temporary file left");
}

#[test]
fn output_on_a_full_file_system_is_refused_before_the_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(fs) = SmallFs::new("1m") else {
        return;
    };
    let dir = fs.0.path();
    let left = available(dir);
    std::fs::write(dir.join("filler"), vec![1u8; left as usize]).unwrap();
    let out = format!("--output={}", dir.join("r.json").display());
    let (o, took) = timed(&[&["run", "--quiet", &out][..], &LONG].concat());
    assert_refused(&o, "full", Duration::from_secs(2), took);
    assert_eq!(files_in(dir), ["filler"]);
}
