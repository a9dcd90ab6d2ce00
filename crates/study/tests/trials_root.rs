//! As root: a small `nr_requests` planted on a loop device over /dev/shm,
//! the study's trial raises it in turns through the journaled Tuner, and
//! every `/sys/block/LOOP/queue/*` value is the same after as before.
//! Skipped, saying why, without root, /dev/shm or losetup.

use ssdready_diagnosis::figures::CurvePoint;
use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::model::{RunRecord, Workload};
use ssdready_diagnosis::trials::Outcome;
use ssdready_study::plan::{Plan, Settings};
use ssdready_study::trials::{self, Options, Trials};
use ssdready_study::trials_hands::HostHands;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn skip_reason() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let root = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        == Some("0");
    if !root {
        return Some("needs root (a loop device and its queue settings)".into());
    }
    if !Path::new("/dev/shm").is_dir() {
        return Some("no /dev/shm".into());
    }
    if Command::new("losetup").arg("--version").output().is_err() {
        return Some("no losetup".into());
    }
    None
}

/// Every queue file's text (the writable ones and the rest).
fn snapshot(disk: &str) -> BTreeMap<String, String> {
    let dir = format!("/sys/block/{disk}/queue");
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        if e.path().is_file() {
            if let Ok(v) = std::fs::read_to_string(e.path()) {
                out.insert(e.file_name().to_string_lossy().into_owned(), v);
            }
        }
    }
    out
}

/// A loop device over a file in /dev/shm, detached and removed on drop
/// with its planted setting put back (a loop device keeps its settings
/// after detach).
struct Loop {
    dev: String,
    file: String,
    planted: Vec<(String, String)>,
}

impl Drop for Loop {
    fn drop(&mut self) {
        let disk = self.dev.trim_start_matches("/dev/");
        for (attr, v) in &self.planted {
            let _ = std::fs::write(format!("/sys/block/{disk}/queue/{attr}"), v);
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.file);
    }
}

fn make_loop() -> Result<Loop, String> {
    let file = format!("/dev/shm/ssdready-trials-{}.img", std::process::id());
    let f = std::fs::File::create(&file).map_err(|e| e.to_string())?;
    f.set_len(128 << 20).map_err(|e| e.to_string())?;
    let out = Command::new("losetup")
        .args(["-f", "--show", &file])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&file);
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(Loop {
        dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
        file,
        planted: Vec::new(),
    })
}

fn plant(l: &mut Loop, attr: &str, value: &str) -> Result<(), String> {
    let disk = l.dev.trim_start_matches("/dev/").to_string();
    let path = format!("/sys/block/{disk}/queue/{attr}");
    let was = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    std::fs::write(&path, value).map_err(|e| format!("{path}: {e}"))?;
    l.planted.push((attr.into(), was.trim().to_string()));
    Ok(())
}

/// The sweeps' run at the peak: 4 KiB random reads at QD 32 on `dev`.
fn peak_run(dev: &str) -> Vec<RunRecord> {
    let w = Workload {
        rw: "randread".into(),
        bs: 4096,
        qd: 32,
        threads: 1,
        engine: Some("io_uring".into()),
        direct: true,
        targets: vec![dev.to_string()],
        ..Default::default()
    };
    vec![RunRecord {
        id: "qd-32".into(),
        point: "qd-32".into(),
        sweep: "qd".into(),
        repeat: 1,
        workload: w,
        ..Default::default()
    }]
}

/// Runs of half a second over 64 MiB.
fn short_plan() -> Plan {
    Plan {
        settings: Settings {
            runtime_s: 0.5,
            ramp_s: 0.0,
            region_bytes: 64 << 20,
        },
        overhead_s: 0.2,
        ..Default::default()
    }
}

#[test]
fn a_planted_small_nr_requests_is_raised_in_turns_and_every_queue_setting_put_back() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let mut lp = match make_loop() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("skipped: no loop device: {e}");
            return;
        }
    };
    let disk = lp.dev.trim_start_matches("/dev/").to_string();
    if let Err(e) = plant(&mut lp, "nr_requests", "4") {
        eprintln!("skipped: cannot plant nr_requests: {e}");
        return;
    }
    let before = snapshot(&disk);
    let t = ssdready_study::detect::detect(&lp.dev, false).expect("the loop device is detected");
    let targets = vec![t];
    // What the sweeps found: the peak at QD 32, held by the device's queue.
    let runs = peak_run(&lp.dev);
    let mut j = ssdready_study::judge(&targets, &Default::default(), &[], false);
    j.figures.peak = Some(CurvePoint {
        qd: 32,
        ..Default::default()
    });
    j.figures.saturation.limit = Cause::DeviceQueue;
    j.facts.clear();
    let plan = short_plan();
    let stop = Arc::new(AtomicBool::new(false));
    let run_fn = |r: &ssdready_run::RunRequest| {
        ssdready_run::execute(r.clone(), &mut ssdready_run::SilentObserver)
    };
    let mut runner = ssdready_study::real::RealRunner::new(stop, &targets, Box::new(run_fn));
    let mut hands = HostHands::new(trials::queue_disks(&targets[0]), true);
    let o = Options {
        quick: true,
        root: true,
        asked: true,
        budget_s: 60.0,
        queue: trials::queue_files(&disk),
        ..Default::default()
    };
    let s = trials::run(
        &mut Trials {
            targets: &targets,
            plan: &plan,
            runs: &runs,
            runner: &mut runner,
            hands: &mut hands,
        },
        &mut j,
        &o,
    )
    .expect("the nr_requests lever applies");
    let left = hands.finish();
    assert!(left.is_empty(), "{left:?}");
    let after = snapshot(&disk);
    assert_eq!(before, after, "a queue setting was left changed");
    let t = s
        .trials
        .iter()
        .find(|t| t.lever == "nr-requests")
        .unwrap_or_else(|| panic!("{:?}", s.untested));
    assert_eq!((t.from.as_str(), t.to.as_str()), ("4", "64"));
    assert_eq!(
        t.turns.len(),
        ssdready_diagnosis::trials::MIN_PAIRS,
        "{:?}",
        t.error
    );
    assert_ne!(t.outcome, Outcome::Failed);
    eprintln!("{}", ssdready_diagnosis::trials_text::section(&s));
}
