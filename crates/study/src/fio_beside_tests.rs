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

/// A change that leaves a file while it is made: the stand-in fio reads
/// its rate from it.
struct Flag(std::path::PathBuf);

impl Change for Flag {
    fn apply(&mut self) -> Result<(), String> {
        std::fs::write(&self.0, "").map_err(|e| e.to_string())
    }
    fn revert(&mut self) -> Result<(), String> {
        std::fs::remove_file(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn the_hosts_best_change_is_run_by_fio_in_turns_and_an_over_claim_is_said() {
    use ssdready_diagnosis::trials::{judge_trial, Measured, Trial, Turn};
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let flag = dir.path().join("made");
    // A stand-in for fio: 1000 IOPS as written, 1300 with the change.
    let fake = dir.path().join("fio");
    let json = r#"{"jobs":[{"jobname":"j","error":0,"read":{"io_bytes":4096,"iops":RATE,"bw_bytes":4096000,"clat_ns":{"mean":1000}},"write":{"io_bytes":0}}]}"#;
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo fio-3.33; exit 0; }}\ncat >/dev/null\nif [ -e {f} ]; then r=1300; else r=1000; fi\necho '{j}' | sed \"s/RATE/$r/\"\n",
        f = flag.display(),
        j = json
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let s = sections("[j]\nfilename=/tmp/x\nrw=randread\n");
    let fio = find_in(&s, dir.path().as_os_str(), (later(), &stop)).unwrap();
    let mut beside = Beside::new(Ok(fio.lasting(crate::clock::RunBudget::new(later(), 0.1))));
    beside.doc.as_written = Some(RunFigures::default());
    // The study's trial: +50 % in three pairs, a narrow interval.
    let m = |iops| Measured {
        iops,
        ..Default::default()
    };
    let mut t = Trial {
        lever: "nr-requests".into(),
        from: "4".into(),
        to: "128".into(),
        turns: [1.0, 1.01, 0.99]
            .iter()
            .map(|w| Turn {
                baseline: m(1000.0),
                change: m(1500.0 * w),
            })
            .collect(),
        ..Default::default()
    };
    judge_trial(&mut t);
    beside.host(&t, &s, &mut Flag(flag.clone()), &stop);
    let h = beside.doc.host.as_ref().expect("fio's turn of the change");
    assert!((h.fio_gain_pct - 30.0).abs() < 1e-6, "{h:?}");
    assert!(!h.agrees);
    let line = beside.doc.lines.last().unwrap();
    assert!(
        line.starts_with("nr-requests 4 → 128: +50.0 %")
            && line.ends_with("the study over-claims: expect fio's figure"),
        "{line}"
    );
    assert!(!flag.exists(), "the change put back");
}
