//! As root: each change the study knows how to try, planted where it is
//! known to hold, tried by the study's trials in turns and put back. A
//! RAM loop device (a file in /dev/shm, direct I/O) gets the bfq
//! scheduler or a small `max_sectors_kb`; a cgroup of this test's own
//! gets a read-IOPS throttle, a CPU quota or a one-CPU cpuset, and this
//! process is moved into it around the trial (the escape then runs the
//! change from a group of ssdready's own). A control with nothing planted
//! is tried too. Nothing here asserts a gain (a loaded machine must not
//! fail a test): what was tried, from what to what, its turns, and that
//! every queue file and every planted group's limit files read the same
//! after as before. Skipped, saying why, without root, losetup or the
//! cgroup controllers a plant needs. One test at a time: the cgroup
//! plants move the whole process.

use ssdready_diagnosis::facts::{Fact, Value};
use ssdready_diagnosis::limit::Cause;
use ssdready_diagnosis::trials::section::Section;
use ssdready_diagnosis::trials::{Outcome, MIN_PAIRS};
use ssdready_measured::curve::CurvePoint;
use ssdready_measured::record::{RunRecord, Verdict, Workload};
use ssdready_study::plan::{Plan, Settings};
use ssdready_study::trials::hands::HostHands;
use ssdready_study::trials::{self, Options, Trials};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// The cgroup plants move the whole process between groups: every test
/// of this file runs alone.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .and_then(|l| l.split_whitespace().nth(2))
        == Some("0")
}

/// Why this machine cannot make a RAM loop device, if it cannot.
fn loop_unusable() -> Option<String> {
    if !is_root() {
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

/// Every queue file's text.
pub(crate) fn snapshot(disk: &str) -> BTreeMap<String, String> {
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

/// A loop device over a file in /dev/shm with direct I/O, its planted
/// settings put back before it is detached (a loop device keeps them).
pub(crate) struct Loop {
    pub(crate) dev: String,
    pub(crate) disk: String,
    file: String,
    planted: Vec<(String, String)>,
}

impl Drop for Loop {
    fn drop(&mut self) {
        for (attr, v) in self.planted.iter().rev() {
            let _ = std::fs::write(format!("/sys/block/{}/queue/{attr}", self.disk), v);
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.file);
    }
}

fn make_loop(name: &str) -> Result<Loop, String> {
    let file = format!("/dev/shm/ssdready-plants-{name}-{}.img", std::process::id());
    let f = std::fs::File::create(&file).map_err(|e| e.to_string())?;
    f.set_len(128 << 20).map_err(|e| e.to_string())?;
    let out = Command::new("losetup")
        .args(["--direct-io=on", "-f", "--show", &file])
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&file);
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    Ok(Loop {
        disk: dev.trim_start_matches("/dev/").to_string(),
        dev,
        file,
        planted: Vec::new(),
    })
}

/// A RAM loop device, or why not (printed by the caller as a skip).
pub(crate) fn ram_loop(name: &str) -> Result<Loop, String> {
    if let Some(why) = loop_unusable() {
        return Err(why);
    }
    make_loop(name).map_err(|e| format!("no loop device: {e}"))
}

pub(crate) fn plant_queue(l: &mut Loop, attr: &str, value: &str) -> Result<(), String> {
    let path = format!("/sys/block/{}/queue/{attr}", l.disk);
    let was = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
    let was = match attr {
        "scheduler" => ssdready_measured::limits::parse::schedulers(&was)
            .0
            .unwrap_or_else(|| "none".into()),
        _ => was.trim().to_string(),
    };
    std::fs::write(&path, value).map_err(|e| format!("{path}: {e}"))?;
    l.planted.push((attr.into(), was));
    Ok(())
}

/// What the sweeps found, as the trials read it.
struct Found {
    cause: Cause,
    /// Verdict rules that fired.
    fired: Vec<&'static str>,
    /// Facts that exist (value 50).
    facts: Vec<&'static str>,
    /// Runs beside the QD 32 peak's.
    runs: Vec<RunRecord>,
}

/// The study's trials on `dev` after a QD 32 peak of 4 KiB random reads,
/// with `found`; every change put back by the hands (asserted).
fn try_changes(dev: &str, found: Found) -> Section {
    let disk = dev.trim_start_matches("/dev/").to_string();
    let t = ssdready_study::detect::detect(dev, false).expect("the loop device is detected");
    let targets = vec![t];
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
    let mut runs = vec![RunRecord {
        id: "qd-32".into(),
        point: "qd-32".into(),
        sweep: "qd".into(),
        repeat: 1,
        workload: w,
        ..Default::default()
    }];
    runs.extend(found.runs);
    let mut j = ssdready_study::judge(&targets, &Default::default(), &[], false);
    j.figures.peak = Some(CurvePoint {
        qd: 32,
        ..Default::default()
    });
    j.figures.saturation.limit = found.cause;
    j.facts.clear();
    for f in found.facts {
        j.facts.insert(
            f.into(),
            Fact {
                value: Value::Num(50.0),
                unit: "pct".into(),
                noise_pct: None,
                margin_pct: None,
                err: None,
                disagree: None,
                runs: Vec::new(),
            },
        );
    }
    j.verdicts = found
        .fired
        .iter()
        .map(|r| Verdict {
            rule: r.to_string(),
            ..Default::default()
        })
        .collect();
    let plan = Plan {
        settings: Settings {
            runtime_s: 0.4,
            ramp_s: 0.0,
            region_bytes: 64 << 20,
        },
        overhead_s: 0.2,
        ..Default::default()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let run_fn = |r: &ssdready_run::RunRequest| {
        ssdready_run::execute(r.clone(), &mut ssdready_run::SilentObserver)
    };
    let mut runner = ssdready_study::real::RealRunner::new(stop, &targets, Box::new(run_fn));
    let mut hands = HostHands::new(trials::queue_disks(&targets[0]), true);
    // What can cap this process's I/O on the device, as the study reads
    // it: the planted group's limits, each lifted on its own.
    let devices: Vec<(u32, u32)> = ssdready_probe::limits_dev::device_of_path(Path::new(dev))
        .ok()
        .flatten()
        .into_iter()
        .collect();
    let o = Options {
        quick: true,
        root: true,
        asked: true,
        budget_s: 120.0,
        queue: trials::queue_files(&disk),
        limits: Some(ssdready_probe::limits::inventory(
            std::process::id(),
            &devices,
        )),
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
    .expect("a lever applies");
    let left = hands.finish();
    assert!(left.is_empty(), "left changed: {left:?}");
    eprintln!("{}", ssdready_diagnosis::trials::text::section(&s));
    s
}

/// The trial of `lever`, its turns all done, from → to as given.
fn assert_tried(s: &Section, lever: &str, from: &str, to: &str) {
    let t = s
        .trials
        .iter()
        .find(|t| t.lever == lever)
        .unwrap_or_else(|| panic!("{lever} not tried: {:?}", s.untested));
    assert_eq!((t.from.as_str(), t.to.as_str()), (from, to));
    assert_eq!(t.turns.len(), MIN_PAIRS, "{:?}", t.error);
    assert_ne!(t.outcome, Outcome::Failed, "{:?}", t.error);
    assert!(t.main_gain().is_some(), "no gain computed on its measure");
}

#[test]
fn a_planted_bfq_scheduler_is_tried_against_none_and_put_back() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut lp = match ram_loop("bfq") {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    if let Err(e) = plant_queue(&mut lp, "scheduler", "bfq") {
        return eprintln!("skipped: this kernel offers no bfq on a loop device: {e}");
    }
    let before = snapshot(&lp.disk);
    let s = try_changes(
        &lp.dev,
        Found {
            cause: Cause::Scheduler,
            fired: vec![],
            facts: vec![],
            runs: vec![],
        },
    );
    assert_eq!(
        before,
        snapshot(&lp.disk),
        "a queue setting was left changed"
    );
    assert!(before["scheduler"].contains("[bfq]"));
    assert_tried(&s, "scheduler", "bfq", "none");
}

/// What the block-size sweep saw under 8 KiB requests: each 1 MiB read
/// of its 100 counted by the device as 128 requests, the bytes agreeing.
fn split_reads(dev: &str) -> RunRecord {
    use ssdready_core::result::{DiskResult, PhaseResult, RunResult};
    let mut res = RunResult::default();
    res.phases.push(PhaseResult {
        disks: vec![DiskResult {
            name: dev.trim_start_matches("/dev/").into(),
            read_ios: 100 * 128,
            read_sectors: 100 * 2048,
            app_ios: 100,
            app_bytes: 100 << 20,
            ..Default::default()
        }],
        ..Default::default()
    });
    RunRecord {
        id: "bs-1m".into(),
        point: "bs-1m".into(),
        sweep: "bs".into(),
        repeat: 1,
        workload: Workload {
            rw: "read".into(),
            bs: 1 << 20,
            qd: 8,
            threads: 1,
            engine: Some("io_uring".into()),
            direct: true,
            targets: vec![dev.to_string()],
            ..Default::default()
        },
        result: Some(res),
        ..Default::default()
    }
}

#[test]
fn a_planted_small_max_sectors_is_raised_to_the_hardware_limit_and_put_back() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut lp = match ram_loop("maxsect") {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    if let Err(e) = plant_queue(&mut lp, "max_sectors_kb", "8") {
        return eprintln!("skipped: cannot plant max_sectors_kb: {e}");
    }
    let hw = snapshot(&lp.disk)["max_hw_sectors_kb"].trim().to_string();
    let before = snapshot(&lp.disk);
    let s = try_changes(
        &lp.dev,
        Found {
            cause: Cause::Device,
            fired: vec![],
            facts: vec![],
            runs: vec![split_reads(&lp.dev)],
        },
    );
    assert_eq!(
        before,
        snapshot(&lp.disk),
        "a queue setting was left changed"
    );
    assert_tried(&s, "max-sectors", "8", &hw);
    let t = s.trials.iter().find(|t| t.lever == "max-sectors").unwrap();
    // Its point: large sequential reads, judged on bandwidth.
    assert_eq!((t.point.rw.as_str(), t.point.bs), ("read", 1 << 20));
    assert_eq!(t.measure, ssdready_diagnosis::levers::Metric::Bandwidth);
}

#[test]
fn a_ram_loop_device_with_nothing_planted_is_tried_and_every_setting_put_back() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lp = match ram_loop("control") {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let before = snapshot(&lp.disk);
    let s = try_changes(
        &lp.dev,
        Found {
            cause: Cause::DeviceQueue,
            fired: vec!["scheduler-limit"],
            facts: vec![],
            runs: vec![],
        },
    );
    assert_eq!(
        before,
        snapshot(&lp.disk),
        "a queue setting was left changed"
    );
    assert!(!s.trials.is_empty(), "{:?}", s.untested);
    // nr_requests is at the loop driver's depth already: nothing to raise
    // (the kernel refuses more without a scheduler).
    let depth = ssdready_probe::blockdev::driver_depth(&lp.disk).map(|d| d.to_string());
    if depth.as_deref() == Some(before["nr_requests"].trim()) {
        assert!(s.trials.iter().all(|t| t.lever != "nr-requests"));
    }
    for t in &s.trials {
        assert_ne!(t.outcome, Outcome::Failed, "{}: {:?}", t.lever, t.error);
        assert_eq!(t.turns.len(), MIN_PAIRS, "{}: {:?}", t.lever, t.error);
    }
}

// ---- cgroup plants ---------------------------------------------------

/// A cgroup of this test's own with a limit, this process in it until
/// drop, which moves it back to the groups it was in and removes the
/// group.
struct Group {
    dir: PathBuf,
    /// Where this process was (its group's directory).
    back: PathBuf,
    /// The limit files snapshotted.
    files: Vec<&'static str>,
}

impl Drop for Group {
    fn drop(&mut self) {
        let pid = std::process::id().to_string();
        let _ = std::fs::write(self.back.join("cgroup.procs"), &pid);
        // A thread that is ending may hold the group a moment.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

impl Group {
    fn snapshot(&self) -> BTreeMap<String, String> {
        self.files
            .iter()
            .filter_map(|f| {
                Some((
                    f.to_string(),
                    std::fs::read_to_string(self.dir.join(f)).ok()?,
                ))
            })
            .collect()
    }
}

/// The cgroup v1 hierarchy of `controller`, or the v2 one; None: neither.
fn hierarchy(v1: &str, v2: &str) -> Option<(PathBuf, bool)> {
    let h = Path::new("/sys/fs/cgroup").join(v1);
    if h.join("cgroup.procs").exists() {
        return Some((h, true));
    }
    let root = Path::new("/sys/fs/cgroup");
    let ctl = std::fs::read_to_string(root.join("cgroup.controllers")).ok()?;
    ctl.split_whitespace()
        .any(|c| c == v2)
        .then(|| (root.to_path_buf(), false))
}

/// This process's group in a hierarchy (`/` at its root).
fn own_group(v1: &str, is_v1: bool) -> String {
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let mut p = l.splitn(3, ':');
            Some((p.next()?, p.next()?, p.next()?))
        })
        .find(|(id, ctl, _)| match is_v1 {
            true => ctl.split(',').any(|c| c == v1),
            false => *id == "0",
        })
        .map_or("/".into(), |(_, _, path)| path.to_string())
}

/// Make a group in the `v1` (or v2 `v2`) hierarchy, write `limits` in
/// it, and move this process in. Err: why the plant cannot be made here.
fn plant_group(
    name: &str,
    (v1, v2): (&str, &str),
    limits: &[(&'static str, &'static str, String)],
) -> Result<Group, String> {
    if !is_root() {
        return Err("needs root (a cgroup of its own)".into());
    }
    let (root, is_v1) = hierarchy(v1, v2)
        .ok_or_else(|| format!("no cgroup v1 {v1} hierarchy nor a v2 {v2} controller"))?;
    if !is_v1 {
        std::fs::write(root.join("cgroup.subtree_control"), format!("+{v2}"))
            .map_err(|e| format!("enabling v2 {v2}: {e}"))?;
    }
    let back = root.join(own_group(v1, is_v1).trim_start_matches('/'));
    let dir = root.join(format!("ssdready-test-plant-{name}-{}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let files = limits
        .iter()
        .map(|(v1f, v2f, _)| if is_v1 { *v1f } else { *v2f })
        .collect();
    let g = Group { dir, back, files };
    for (v1f, v2f, value) in limits {
        let f = g.dir.join(if is_v1 { v1f } else { v2f });
        std::fs::write(&f, value).map_err(|e| format!("{}: {e}", f.display()))?;
    }
    std::fs::write(g.dir.join("cgroup.procs"), std::process::id().to_string())
        .map_err(|e| format!("moving this process into {}: {e}", g.dir.display()))?;
    Ok(g)
}

/// The lever that lifts a planted group's limit tried on a RAM loop
/// device, alone, with its own permanent line naming the group; the
/// group's limits the same after, this process back where it was.
fn cgroup_plant(
    (name, lever, to): (&str, &str, &str),
    cause: Cause,
    group: impl FnOnce(&Loop) -> Result<Group, String>,
) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lp = match ram_loop(name) {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let g = match group(&lp) {
        Ok(g) => g,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let (before, queue) = (g.snapshot(), snapshot(&lp.disk));
    assert!(
        !before.is_empty(),
        "no limit file read in {}",
        g.dir.display()
    );
    let s = try_changes(
        &lp.dev,
        Found {
            cause,
            fired: vec![],
            facts: vec![],
            runs: vec![],
        },
    );
    assert_eq!(before, g.snapshot(), "a limit of the planted group changed");
    assert_eq!(
        queue,
        snapshot(&lp.disk),
        "a queue setting was left changed"
    );
    // The escape put this process back in the planted group after each
    // run: it is there still.
    let procs = std::fs::read_to_string(g.dir.join("cgroup.procs")).unwrap_or_default();
    let pid = std::process::id().to_string();
    assert!(
        procs.lines().any(|p| p == pid),
        "not back in the planted group"
    );
    let dir = g.dir.clone();
    drop(g);
    assert!(!dir.exists(), "the planted group was not removed");
    assert_tried(&s, lever, "in the study's group", to);
    let t = s.trials.iter().find(|t| t.lever == lever).unwrap();
    let group_name = dir.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        t.permanent.contains(&format!("/{group_name}/")),
        "{}",
        t.permanent
    );
}

fn majmin(l: &Loop) -> Result<String, String> {
    std::fs::read_to_string(format!("/sys/block/{}/dev", l.disk))
        .map(|s| s.trim().to_string())
        .map_err(|e| e.to_string())
}

#[test]
fn a_planted_read_iops_throttle_is_lifted_from_a_group_of_ssdreadys_own() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let lifted = ("throttle", "io-throttle", "without the I/O throttle");
    cgroup_plant(lifted, Cause::IoThrottle, |l| {
        let mm = majmin(l)?;
        let (_, is_v1) = hierarchy("blkio", "io").ok_or("no blkio or io controller")?;
        let limit = match is_v1 {
            true => format!("{mm} 2000"),
            false => format!("{mm} riops=2000"),
        };
        plant_group(
            "throttle",
            ("blkio", "io"),
            &[("blkio.throttle.read_iops_device", "io.max", limit)],
        )
    });
}

#[test]
fn a_planted_cpu_quota_is_lifted_from_a_group_of_ssdreadys_own() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let lifted = ("quota", "cpu-quota", "without the CPU quota");
    cgroup_plant(lifted, Cause::CpuQuota, |_| {
        let (_, is_v1) = hierarchy("cpu", "cpu").ok_or("no cpu controller")?;
        let limits: Vec<(&str, &str, String)> = match is_v1 {
            true => vec![
                ("cpu.cfs_period_us", "cpu.max", "100000".into()),
                ("cpu.cfs_quota_us", "cpu.max", "30000".into()),
            ],
            false => vec![("cpu.max", "cpu.max", "30000 100000".into())],
        };
        plant_group("quota", ("cpu", "cpu"), &limits)
    });
}

#[test]
fn a_planted_one_cpu_cpuset_is_lifted_from_a_group_of_ssdreadys_own() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        return eprintln!("skipped: a one-CPU cpuset needs two CPUs to be a limit");
    }
    let lifted = ("cpuset", "cpuset", "without the cpuset");
    cgroup_plant(lifted, Cause::CpusAllowed, |_| {
        let (root, is_v1) = hierarchy("cpuset", "cpuset").ok_or("no cpuset controller")?;
        let mems = std::fs::read_to_string(root.join(match is_v1 {
            true => "cpuset.mems",
            false => "cpuset.mems.effective",
        }))
        .map_err(|e| format!("cpuset.mems: {e}"))?;
        let limits: Vec<(&str, &str, String)> = vec![
            ("cpuset.mems", "cpuset.mems", mems.trim().to_string()),
            ("cpuset.cpus", "cpuset.cpus", "0".into()),
        ];
        plant_group("cpuset", ("cpuset", "cpuset"), &limits)
    });
}

/// Busy loops at normal priority, one per CPU, killed when dropped.
struct Hogs(Vec<std::process::Child>);

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn other_work_at_normal_priority_is_weighed_by_raising_the_ios_threads_priority() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let lp = match ram_loop("hogs") {
        Ok(l) => l,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let _hogs = Hogs(
        (0..cpus)
            .filter_map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .ok()
            })
            .collect(),
    );
    let before = snapshot(&lp.disk);
    let s = try_changes(
        &lp.dev,
        Found {
            cause: Cause::OtherWork,
            fired: vec!["other-work-limit"],
            facts: vec![],
            runs: vec![],
        },
    );
    assert_eq!(before, snapshot(&lp.disk), "a queue setting was changed");
    // As root the counterfactual comes first: the study's threads ahead
    // of the busy loops, its job's own option, gone with its runs.
    assert_eq!(s.trials[0].lever, "priority", "{:?}", s.trials);
    assert_tried(&s, "priority", "the study's job", "nice=-10");
    let t = &s.trials[0];
    assert!(
        t.change_options.iter().any(|o| o == "--nice=-10"),
        "{:?}",
        t.change_options
    );
    assert!(!t.baseline_options.iter().any(|o| o.starts_with("--nice")));
}
