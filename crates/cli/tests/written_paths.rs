//! Paths ssdready writes that are not a job's target, and the inputs it
//! reads: a block device is never written (the history database, outputs,
//! iologs, reports), the history database is only ever a regular file
//! (FIFOs, /dev/null, /dev/zero, a damaged file: one line, exit code 2),
//! waits on a FIFO end on a signal, endless inputs are read no further
//! than a bound, and a job with more files than the open-files limit is
//! refused before anything is laid out.

use crate::common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ssdready"))
}

fn out(args: &[&str], dir: &std::path::Path) -> (i32, String) {
    let o = bin()
        .args(args)
        .current_dir(dir)
        .env("XDG_DATA_HOME", dir)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn first_bytes(dev: &str) -> Vec<u8> {
    let mut b = vec![0u8; 64 << 10];
    std::fs::File::open(dev)
        .unwrap()
        .read_exact(&mut b)
        .unwrap();
    b
}

#[test]
fn a_block_device_is_never_written_as_database_output_iolog_or_report() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(l) = common::LoopDev::new("written", 16) else {
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let before = first_bytes(&l.dev);
    let db = format!("--db={}", l.dev);
    let link = d.path().join("link");
    std::os::unix::fs::symlink(&l.dev, &link).unwrap();
    let via_link = format!("--db={}", link.display());
    let job = ["run", "--name=j", "--ioengine=null", "--size=1m", "--quiet"];
    let output = format!("--output={}", l.dev);
    let iolog = format!("--write_iolog={}", l.dev);
    let report = format!("--report={}", l.dev);
    let save = ["--save", db.as_str()];
    let runs: [Vec<&str>; 7] = [
        vec!["history", &db],
        vec!["history", &via_link],
        vec!["compare", "1", "2", &db],
        [&job[..], &save[..]].concat(),
        [&job[..], &[output.as_str()]].concat(),
        [&job[..], &[iolog.as_str()]].concat(),
        [&job[..], &[report.as_str()]].concat(),
    ];
    for args in &runs {
        let (code, err) = out(args, d.path());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains("block device"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
    assert!(first_bytes(&l.dev) == before, "the device's bytes changed");
}

/// A loop device as root, else `/dev/null` (a character device: the
/// writer refuses it just the same), and its first bytes now.
fn victim() -> (Option<common::LoopDev>, String) {
    match common::LoopDev::new("planted", 16) {
        Some(l) => {
            let dev = l.dev.clone();
            (Some(l), dev)
        }
        None => (None, "/dev/null".into()),
    }
}

#[test]
fn man_pages_never_go_through_a_planted_link_to_a_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (_l, dev) = victim();
    let before = (dev != "/dev/null").then(|| first_bytes(&dev));
    let d = tempfile::tempdir().unwrap();
    let man = d.path().join("man");
    std::fs::create_dir(&man).unwrap();
    // The temporary names a writer might use, and a page's own name.
    let pid_free = man.join(".ssdready.1.tmp");
    std::os::unix::fs::symlink(&dev, &pid_free).unwrap();
    std::os::unix::fs::symlink(&dev, man.join("ssdready-run.1")).unwrap();
    let (code, err) = out(&["man", man.to_str().unwrap()], d.path());
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("ssdready-run.1") && err.contains("device"),
        "{err}"
    );
    if let Some(b) = before {
        assert!(first_bytes(&dev) == b, "the device's bytes changed");
    }
    // Without the planted page name, the pages are written, the link kept.
    std::fs::remove_file(man.join("ssdready-run.1")).unwrap();
    let (code, err) = out(&["man", man.to_str().unwrap()], d.path());
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::symlink_metadata(&pid_free).unwrap().is_symlink());
    assert!(man.join("ssdready-run.1").is_file());
}

#[test]
fn exec_prerun_output_never_lands_in_a_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (_l, dev) = victim();
    let before = (dev != "/dev/null").then(|| first_bytes(&dev));
    let d = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&dev, d.path().join("j.prerun.txt")).unwrap();
    let marker = d.path().join("ran");
    let cmd = format!("--exec_prerun=touch {}; echo written", marker.display());
    let args = [
        "run",
        "--name=j",
        "--ioengine=null",
        "--size=1m",
        "--quiet",
        &cmd,
    ];
    let (code, err) = out(&args, d.path());
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains("j.prerun.txt") && err.contains("device"),
        "{err}"
    );
    assert!(!marker.exists(), "the command ran");
    if let Some(b) = before {
        assert!(first_bytes(&dev) == b, "the device's bytes changed");
    }
}

#[test]
fn the_history_database_is_only_ever_a_regular_file() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let good = d.path().join("h.db");
    let (code, err) = out(
        &[
            "run",
            "--name=j",
            "--ioengine=null",
            "--size=1m",
            "--quiet",
            "--save",
            &format!("--db={}", good.display()),
        ],
        d.path(),
    );
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&good).unwrap();
    let cut = d.path().join("cut.db");
    std::fs::write(&cut, &bytes[..bytes.len().min(3000)]).unwrap();
    for (db, says) in [
        (fifo.display().to_string(), "FIFO"),
        ("/dev/null".into(), "character device"),
        ("/dev/zero".into(), "character device"),
        (cut.display().to_string(), "damaged"),
    ] {
        let t = Instant::now();
        let (code, err) = out(&["history", &format!("--db={db}")], d.path());
        assert_eq!(code, 2, "{db}: {err}");
        assert!(
            err.contains(says) && err.lines().count() == 1,
            "{db}: {err}"
        );
        assert!(t.elapsed() < Duration::from_secs(5), "{db}: waited");
    }
}

#[test]
fn a_fifo_with_no_peer_ends_on_a_signal() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let f = fifo.display().to_string();
    // A job file on a FIFO, with --parse-only too: read before anything else.
    for opt in [
        "--read_iolog",
        "--output",
        "--write_iolog",
        "job file",
        "--parse-only",
    ] {
        let args: Vec<String> = match opt {
            "job file" => vec!["run".into(), f.clone()],
            "--parse-only" => vec!["run".into(), opt.into(), f.clone()],
            _ => vec![
                "run".into(),
                "--name=j".into(),
                "--ioengine=null".into(),
                "--size=64k".into(),
                "--quiet".into(),
                format!("{opt}={f}"),
            ],
        };
        let mut c = bin()
            .args(&args)
            .current_dir(d.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        let asked = Instant::now();
        assert!(Command::new("kill")
            .args(["-TERM", &c.id().to_string()])
            .status()
            .unwrap()
            .success());
        let st = c.wait().unwrap();
        assert!(
            asked.elapsed() < Duration::from_millis(1000),
            "{opt}: {:?}",
            asked.elapsed()
        );
        assert_eq!(st.code(), Some(130), "{opt}");
    }
}

#[test]
fn endless_inputs_are_read_no_further_than_a_bound() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let (code, err) = out(
        &[
            "run",
            "--parse-only",
            "--name=j",
            "--ioengine=null",
            "--size=1m",
            "--read_iolog=/dev/zero",
        ],
        d.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("/dev/zero line 1") && err.contains("longer than"),
        "{err}"
    );
    let (code, err) = out(
        &[
            "run",
            "--name=j",
            "--filename=emu:file=/proc/self/pagemap",
            "--size=1m",
            "--runtime=1",
            "--quiet",
        ],
        d.path(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("larger than 1 MiB"), "{err}");
}

#[test]
fn more_files_than_the_open_files_limit_are_refused_up_front() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    // Under a lower limit, through the shell's ulimit.
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 1024 && exec {} run --name=j --ioengine=psync --nrfiles=4096 --filesize=4k --quiet --directory={}",
            env!("CARGO_BIN_EXE_ssdready"),
            d.path().display()
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("open-files limit"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(60));
}
