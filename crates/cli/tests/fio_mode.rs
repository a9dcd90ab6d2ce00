//! ssdready called as `fio` (a link of that name): fio's command line,
//! defaults and stderr, which only the binary under that name can show.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A directory holding a `fio` link to the binary.
fn fio_link() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("fio");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ssdready"), &link).unwrap();
    (d, link)
}

fn fio(link: &Path, cwd: &Path, args: &[&str]) -> Output {
    Command::new(link)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

#[test]
fn the_version_names_fio_and_ssdready() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let o = fio(&link, d.path(), &["--version"]);
    assert!(o.status.success());
    let v = String::from_utf8_lossy(&o.stdout);
    assert!(v.starts_with("fio-3.") && v.contains("(ssdready "), "{v}");
}

/// A job without a filename writes fio's file in the current directory
/// (not the emulator), with fio's switches the test runner passes, and
/// nothing on stderr.
#[test]
fn a_job_without_a_filename_uses_fios_file_and_keeps_stderr_quiet() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let o = fio(
        &link,
        d.path(),
        &[
            "--max-jobs=16",
            "--output-format=json",
            "--output=out.json",
            "--name=job",
            "--rw=write",
            "--size=64k",
            "--bs=4k",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let f = d.path().join("job.0.0");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 64 << 10);
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out.json")).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["write"]["io_kbytes"], 64);
}

#[test]
fn readonly_refuses_writes_and_max_jobs_caps_workers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let job = ["--name=r", "--ioengine=null", "--size=1m"];
    let mut a = vec!["--readonly"];
    a.extend(job);
    a.push("--rw=randwrite");
    let o = fio(&link, d.path(), &a);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--readonly"));
    let mut a = job.to_vec();
    a.extend(["--rw=randread", "--readonly"]);
    assert!(fio(&link, d.path(), &a).status.success());
    let mut a = vec!["--max-jobs=2"];
    a.extend(job);
    a.push("--numjobs=3");
    let o = fio(&link, d.path(), &a);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("--max-jobs=2"), "{e}");
    let o = fio(&link, d.path(), &["--nosuchswitch", "--name=x"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn parse_debug_says_the_steady_state_threshold() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let o = fio(
        &link,
        d.path(),
        &[
            "--parse-only",
            "--debug=parse",
            "--ss_dur=10s",
            "--ss=bw:.1%",
            "--ss_ramp=5",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("set steady state threshold to 0.100000%"),
        "{out}"
    );
}

/// `--inflate-log` prints what `log_store_compressed=1` wrote: one line per
/// I/O, with its offset.
/// `--debug=io` prints one completion line per I/O in fio's layout (fio's
/// `t/t64-switch.sh` reads the offsets from them), and leaves nothing in
/// the temporary directory.
#[test]
fn debug_io_prints_a_line_per_io_and_leaves_no_file() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let tmp = tempfile::tempdir().unwrap();
    let o = Command::new(&link)
        .args([
            "--debug=io",
            "--name=t",
            "--ioengine=null",
            "--size=64k",
            "--bs=4k",
            "--rw=read",
        ])
        .current_dir(d.path())
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let out = String::from_utf8_lossy(&o.stdout);
    let offsets: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("io ") && l.contains(" complete: "))
        .map(|l| l.split("off=").nth(1).unwrap().split(',').next().unwrap())
        .collect();
    let want: Vec<String> = (0..16).map(|i| format!("0x{:x}", i * 4096)).collect();
    assert_eq!(offsets, want, "{out}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
    // No --name: the options form the one job, whose I/Os are printed too.
    let o = Command::new(&link)
        .args(["--debug=io", "--ioengine=null", "--size=8k", "--bs=4k"])
        .current_dir(d.path())
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.matches(" complete: ").count(), 2, "{out}");
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn inflate_log_reads_a_compressed_log_back() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let o = fio(
        &link,
        d.path(),
        &[
            "--name=job",
            "--ioengine=null",
            "--filesize=1m",
            "--bs=128k",
            "--rw=write",
            "--write_bw_log=test",
            "--per_job_logs=0",
            "--log_offset=1",
            "--log_store_compressed=1",
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let o = fio(&link, d.path(), &["--inflate-log=test_bw.log.fz"]);
    assert!(o.status.success(), "{o:?}");
    let text = String::from_utf8_lossy(&o.stdout);
    let offs: Vec<u64> = text
        .lines()
        .map(|l| l.split(", ").nth(4).unwrap().parse().unwrap())
        .collect();
    assert_eq!(offs, (0..8).map(|i| (i * 128) << 10).collect::<Vec<_>>());
}

/// `--server=,PORT --daemonize=FILE` (fio's t/client_server.py): the server
/// runs in the background, its pid in FILE, accepting on the port.
#[test]
fn daemonize_starts_the_server_in_the_background() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let pidfile = d.path().join("server.pid");
    let o = fio(
        &link,
        d.path(),
        &[
            &format!("--server=,{port}"),
            &format!("--daemonize={}", pidfile.display()),
        ],
    );
    assert!(o.status.success(), "{o:?}");
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let up = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    let _ = Command::new("kill").arg(pid.to_string()).status();
    assert!(up, "nothing accepts on port {port}");
}

/// A pid file name that is a link (planted in a shared directory) is
/// refused before the server starts: the link is kept, and nothing is
/// written through it.
#[test]
fn daemonize_refuses_a_pid_file_planted_as_a_link_and_keeps_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let secret = d.path().join("secret");
    std::fs::write(&secret, "root's\n").unwrap();
    let pidfile = d.path().join("server.pid");
    std::os::unix::fs::symlink(&secret, &pidfile).unwrap();
    let o = fio(
        &link,
        d.path(),
        &["--server=,1", &format!("--daemonize={}", pidfile.display())],
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("symbolic link"), "{e}");
    assert!(std::fs::symlink_metadata(&pidfile)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root's\n");
}

/// `--aux-path=DIR`: the verify state file goes there, not in the current
/// directory; a missing directory is refused.
#[test]
fn aux_path_holds_the_verify_state_file() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let aux = d.path().join("aux");
    std::fs::create_dir(&aux).unwrap();
    let job = [
        "--name=vs",
        "--rw=write",
        "--size=64k",
        "--bs=4k",
        "--verify=crc32c",
        "--verify_state_save=1",
    ];
    let mut a = vec![format!("--aux-path={}", aux.display())];
    a.extend(job.iter().map(|s| s.to_string()));
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let o = fio(&link, d.path(), &a);
    assert!(o.status.success(), "{o:?}");
    assert!(aux.join("local-vs-0-verify.state").exists());
    assert!(!d.path().join("local-vs-0-verify.state").exists());
    let mut a = vec!["--aux-path=/no/such/dir"];
    a.extend(job);
    assert_eq!(fio(&link, d.path(), &a).status.code(), Some(2));
}

/// `--readonly` refuses, as fio does, a job that would create its file,
/// extend a short one or remove it (`unlink=1`); the file is left as it was.
#[test]
fn readonly_refuses_creating_extending_or_unlinking_a_file_and_leaves_it_as_it_was() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let job = |file: &str, extra: &[&str]| {
        let mut a = vec![
            "--readonly".to_string(),
            "--name=r".into(),
            format!("--filename={file}"),
            "--rw=read".into(),
            "--size=64k".into(),
            "--bs=4k".into(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        fio(&link, d.path(), &a)
    };
    let refused = |o: &Output, what: &str| {
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(e.contains(what) && e.contains("--readonly"), "{e}");
        assert_eq!(e.trim().lines().count(), 1, "{e}");
    };
    refused(&job("missing", &[]), "would be created");
    assert!(!d.path().join("missing").exists());
    std::fs::write(d.path().join("short"), vec![7u8; 4096]).unwrap();
    refused(&job("short", &[]), "would be extended");
    assert_eq!(
        std::fs::metadata(d.path().join("short")).unwrap().len(),
        4096
    );
    std::fs::write(d.path().join("whole"), vec![7u8; 64 << 10]).unwrap();
    refused(&job("whole", &["--unlink=1"]), "unlink=1");
    assert!(d.path().join("whole").exists());
    let o = job("whole", &[]);
    assert!(o.status.success(), "{o:?}");
}

#[test]
fn inflate_log_refuses_bytes_that_are_not_a_log_in_one_line_exit_2() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    let junk: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(d.path().join("junk.fz"), junk).unwrap();
    let o = fio(&link, d.path(), &["--inflate-log=junk.fz"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("not a compressed fio log"), "{e}");
    assert!(o.stdout.is_empty());
    let o = fio(&link, d.path(), &["--inflate-log=/dev/zero"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("not a regular file"), "{e}");
}

/// Ctrl-C while a job waits for its verify state on a FIFO with nothing on
/// its other end ends the run as an interruption: one line, exit 130.
#[test]
fn ctrl_c_while_waiting_on_a_verify_state_fifo_exits_130() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (d, link) = fio_link();
    std::fs::write(d.path().join("vs.0.0"), vec![0u8; 64 << 10]).unwrap();
    let fifo = d.path().join("local-vs-0-verify.state");
    let made = Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skipped: mkfifo is missing");
        return;
    }
    let mut child = Command::new(&link)
        .args([
            "--name=vs",
            "--filename=vs.0.0",
            "--rw=read",
            "--size=64k",
            "--bs=4k",
            "--verify=crc32c",
            "--verify_state_load=1",
        ])
        .current_dir(d.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The hook: the FIFO is open in the child (it waits on it now).
    let fds = format!("/proc/{}/fd", child.id());
    let waiting = || {
        std::fs::read_dir(&fds)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| std::fs::read_link(e.path()).is_ok_and(|t| t == fifo))
    };
    let t0 = std::time::Instant::now();
    while !waiting() {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(60),
            "the run never opened the FIFO"
        );
        if let Ok(Some(st)) = child.try_wait() {
            panic!("the run ended before waiting on the FIFO: {st}");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let o = child.wait_with_output().unwrap();
    let e = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("verify_state_load"), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}
