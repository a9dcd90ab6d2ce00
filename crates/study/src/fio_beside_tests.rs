use super::*;
use std::ffi::OsStr;
use std::sync::atomic::AtomicBool;

fn later() -> Instant {
    Instant::now() + Duration::from_secs(600)
}

/// A job file's sections, as `study --job` reads it.
fn sections(text: &str) -> Vec<Section> {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("job.fio");
    std::fs::write(&f, text).unwrap();
    let arg = f.to_str().unwrap().to_string();
    ssdready_cmdline::args::parse(&[arg]).unwrap().sections
}

#[test]
fn an_emulated_drive_and_a_missing_fio_are_said_and_not_run() {
    let stop = AtomicBool::new(false);
    let emu = sections("[j]\nfilename=emu:nvme-tlc\nrw=randread\n");
    let e = find_in(&emu, OsStr::new("/usr/bin:/bin"), (later(), &stop))
        .err()
        .unwrap();
    assert!(e.contains("emulated drive"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let file = sections("[j]\nfilename=/tmp/x\nrw=randread\n");
    let e = find_in(&file, dir.path().as_os_str(), (later(), &stop))
        .err()
        .unwrap();
    assert!(e.contains("not installed"), "{e}");
}

#[test]
fn a_fio_on_path_that_is_ssdready_itself_is_no_check() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fio");
    std::fs::write(&fake, "#!/bin/sh\necho 'fio-3.33 (ssdready 0.1.0)'\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stop = AtomicBool::new(false);
    let file = sections("[j]\nfilename=/tmp/x\nrw=randread\n");
    let e = find_in(&file, dir.path().as_os_str(), (later(), &stop))
        .err()
        .unwrap();
    assert!(e.contains("not fio itself"), "{e}");
}

#[test]
fn a_stop_kills_fio_and_every_process_of_its_group() {
    // A stand-in for fio that forks a child, as fio forks a process per
    // job; both must be gone once the stop is seen.
    let stop = Arc::new(AtomicBool::new(false));
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("child");
    let script = format!("sleep 60 & echo $! > {}; wait", pid_file.display());
    let s = stop.clone();
    let setter = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        s.store(true, Relaxed);
    });
    let at = Instant::now();
    let r = run(Path::new("/bin/sh"), &["-c", &script], "", (&stop, 600.0));
    setter.join().unwrap();
    assert!(r.unwrap_err().contains("stopped"));
    assert!(at.elapsed() < Duration::from_secs(30), "{:?}", at.elapsed());
    let child: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The child was killed with its group; once its parent (reaped here)
    // is gone, init reaps it: wait for that, a while at most.
    let gone = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        !Path::new(&format!("/proc/{child}")).exists()
            || std::fs::read_to_string(format!("/proc/{child}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
    });
    assert!(gone, "the forked child {child} outlived the stop");
}

#[test]
fn a_run_past_its_time_is_killed_and_an_exit_with_an_error_says_fios_line() {
    let stop = AtomicBool::new(false);
    let e = run(Path::new("/bin/sh"), &["-c", "sleep 60"], "", (&stop, 0.3)).unwrap_err();
    assert!(e.contains("ran past"), "{e}");
    let e = run(
        Path::new("/bin/sh"),
        &["-c", "cat >/dev/null; echo 'fio: bad option' >&2; exit 1"],
        "[j]\n",
        (&stop, 60.0),
    )
    .unwrap_err();
    assert!(e.contains("fio: bad option"), "{e}");
}

#[test]
fn fio_itself_runs_a_job_given_on_its_input_and_its_figures_are_read() {
    let stop = AtomicBool::new(false);
    let fio = match find(&sections("[j]\nfilename=/tmp/x\n"), later(), &stop) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("skipped: {e}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("data");
    let job = format!(
        "[global]\nfilename={}\nsize=4m\nbs=4k\nruntime=1\n[reader]\nrw=randread\n",
        file.display()
    );
    let s = sections(&job);
    let mut fio = fio.lasting(crate::clock::RunBudget::new(later(), 1.0));
    let f = fio.run(&s, &stop).unwrap();
    assert_eq!(f.jobs.len(), 1);
    assert!(f.iops() > 0.0 && f.together.write.is_none(), "{f:?}");
}
