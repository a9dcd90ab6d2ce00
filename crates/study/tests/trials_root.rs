//! As root: a small `nr_requests` planted on a loop device over /dev/shm,
//! the study's trial raises it in turns through the journaled Tuner, and
//! every `/sys/block/LOOP/queue/*` value is the same after as before.
//! Skipped, saying why, without root, /dev/shm or losetup. The loop
//! device and its planting are `trials_plants_root`'s.

use crate::trials_plants_root::{plant_queue, ram_loop, snapshot};
use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::trials::Outcome;
use ssdready_measured::curve::CurvePoint;
use ssdready_measured::record::{RunRecord, Workload};
use ssdready_study::plan::{Plan, Settings};
use ssdready_study::trials::hands::HostHands;
use ssdready_study::trials::{self, Options, Trials};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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
    let mut lp = match ram_loop("nr-requests") {
        Ok(l) => l,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let disk = lp.disk.clone();
    if let Err(e) = plant_queue(&mut lp, "nr_requests", "4") {
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
    eprintln!("{}", ssdready_diagnosis::trials::text::section(&s));
}
