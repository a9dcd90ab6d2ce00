//! The planner: from the detected targets, the machine and the time budget,
//! the sweeps to run and each point's `ssdready run` options.
//!
//! Every study sweeps queue depth (4 KiB random reads, QD 1…256 in ×2
//! steps, stopping once saturated) and repeats its key points (QD 1 and the
//! peak) to measure noise; then threads, read/write mixes and block sizes.
//! Real targets add the engines (psync, io_uring, libaio); the full study
//! (or `--sweeps`) adds the I/O schedulers, direct against buffered I/O, the
//! raw device against a file on its file system, and several devices
//! together. A root study of a stack reads each physical member alone, in
//! turns with the stack (its ceiling against its members). Studies in real time add Shin's submission strategies
//! (`crate::strategies`). A point's queue depth may be `peak`, resolved when the
//! queue-depth sweep has run. The budget sets each run's length.

use crate::model::{PlanDoc, Skip, SweepDoc};
pub use ssdready_measured::record::{fmt_bs, Workload};
use ssdready_measured::record::{TargetKind, TargetProfile};

#[cfg(test)]
mod ceiling_tests;
mod sweeps;
use sweeps::Planner;

/// What a study was asked for.
#[derive(Clone, Debug, Default)]
pub struct StudyOptions {
    pub quick: bool,
    /// Seconds.
    pub budget_s: f64,
    /// Optional sweeps asked for by name (`scheduler`, `buffered`, `raw`,
    /// `devices`), added to a quick study too.
    pub sweeps: Vec<String>,
    /// Whether `--profile` / `--decompose` are permitted (root).
    pub root: bool,
    /// Whether the study may change the target device's settings (the
    /// scheduler sweep switches its elevator): asked with `--try-changes`,
    /// or a device the study made itself, and this study holds the
    /// device's lock. Never otherwise, root or not.
    pub host_changes: bool,
    pub cpus: u32,
    /// Run the strategies sweep (Shin's experiment). Real time only:
    /// in virtual time the model has no host whose completions the
    /// strategies change.
    pub strategies: bool,
}

/// The optional sweeps `--sweeps` may name.
pub const OPTIONAL_SWEEPS: &[&str] = &["scheduler", "buffered", "raw", "devices", "applications"];

/// A queue depth, or one the queue-depth sweep decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qd {
    Fixed(u32),
    /// The depth of the highest IOPS in the queue-depth sweep.
    Peak,
    /// The sweep's knee (the smallest depth reaching 90 % of the peak).
    Knee,
    /// The depth below the knee (half of it): repeated so that a knee
    /// pushed up by one unlucky run can come down.
    BelowKnee,
    /// The deepest depth the queue-depth sweep ran: where a layer that
    /// stopped scaling is set against what under it still scales.
    Deepest,
}

/// A planned point.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub sweep: &'static str,
    pub rw: &'static str,
    pub bs: u64,
    pub qd: Qd,
    pub threads: u32,
    pub engine: Option<&'static str>,
    pub direct: bool,
    pub scheduler: Option<String>,
    pub rwmixread: Option<u32>,
    /// Indexes into the study's targets; `raw` points read the file's device.
    pub targets: Vec<usize>,
    /// Read the raw device under the file instead of the file.
    pub raw_device: bool,
    /// Physical members of the target's stack (`/dev/nullb0`) read instead
    /// of the target (the `ceiling` sweep): one alone, or every one at once,
    /// a job each. Reads only. Empty: the targets.
    pub members: Vec<String>,
    pub instrumented: bool,
    /// 1 for a first measurement; 2… for repeats.
    pub repeat: u32,
    /// Whether it needs write permission.
    pub writes: bool,
    /// The strategy of a `strategies` point.
    pub strategy: Option<&'static str>,
}

/// Run length and coverage, for every point alike.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Settings {
    pub runtime_s: f64,
    pub ramp_s: f64,
    pub region_bytes: u64,
}

/// The plan.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub points: Vec<Point>,
    pub settings: Settings,
    pub skipped: Vec<Skip>,
    pub sweeps: Vec<SweepDoc>,
    /// Seconds of overhead per run besides its runtime (start-up, fill).
    pub overhead_s: f64,
    /// Seconds a full study spends beyond its points (the capacity
    /// search, the transport's calibration, the applications section),
    /// estimated so that the whole study fits its budget.
    pub beyond_s: f64,
    /// The whole study's budget (seconds), which its clock keeps (0: none
    /// said).
    pub budget_s: f64,
}

/// Queue depths of the sweep.
pub const QDS: &[u32] = &[1, 2, 4, 8, 16, 32, 64, 128, 256];
/// The queue depth of the block-size sweep.
pub const BS_QD: u32 = 16;

impl Plan {
    /// Estimated seconds for the points from `from` on, and what the study
    /// does beyond them.
    pub fn eta_s(&self, from: usize) -> f64 {
        let per = self.settings.runtime_s + self.settings.ramp_s + self.overhead_s;
        self.points.len().saturating_sub(from) as f64 * per + self.beyond_s
    }
    /// The plan as recorded in study.json.
    pub fn doc(&self) -> PlanDoc {
        PlanDoc {
            runtime_s: self.settings.runtime_s,
            ramp_s: self.settings.ramp_s,
            region_bytes: self.settings.region_bytes,
            points: self.points.len(),
            eta_s: self.eta_s(0),
            sweeps: self.sweeps.clone(),
        }
    }
}

impl Point {
    fn new(
        sweep: &'static str,
        rw: &'static str,
        bs: u64,
        qd: Qd,
        engine: Option<&'static str>,
    ) -> Self {
        Point {
            sweep,
            rw,
            bs,
            qd,
            threads: 1,
            engine,
            direct: true,
            scheduler: None,
            rwmixread: None,
            targets: vec![0],
            raw_device: false,
            members: Vec::new(),
            instrumented: false,
            repeat: 1,
            writes: rw.contains("write") || rw == "randrw" || rw == "rw",
            strategy: None,
        }
    }

    /// The point's identifier once its queue depth is known; repeats add
    /// `#N`.
    pub fn id(&self, qd: u32) -> String {
        let base = match self.sweep {
            "qd" | "repeat" | "instrumented" => format!("qd-{qd}"),
            "threads" => format!("threads-{}x{qd}", self.threads),
            "rw" => format!("rw-{}-qd{qd}", self.rw),
            "bs" => format!("bs-{}-{}", fmt_bs(self.bs), self.rw),
            "engine" if self.threads > 1 => format!(
                "engine-{}-{}x{qd}",
                self.engine.unwrap_or("emu"),
                self.threads
            ),
            "engine" => format!("engine-{}-qd{qd}", self.engine.unwrap_or("emu")),
            "scheduler" => format!(
                "sched-{}-qd{qd}",
                self.scheduler.as_deref().unwrap_or("none")
            ),
            "buffered" => format!("buffered-qd{qd}"),
            "platform" => format!("platform-qd{qd}"),
            "raw" if self.raw_device => format!("raw-device-qd{qd}"),
            "raw" => format!("raw-file-qd{qd}"),
            "ceiling" => {
                let who = match self.members.as_slice() {
                    [] => "stack".to_string(),
                    [m] if m.starts_with("/dev/") => {
                        m.trim_start_matches("/dev/").replace('/', "!")
                    }
                    [_] => "loop-file".to_string(),
                    _ => "members-at-once".to_string(),
                };
                match self.rw {
                    "read" => format!("ceiling-{who}-{}-read-qd{qd}", fmt_bs(self.bs)),
                    _ => format!("ceiling-{who}-qd{qd}"),
                }
            }
            "devices" => format!(
                "devices-{}-qd{qd}",
                self.targets
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join("+")
            ),
            "fill" => "fill".to_string(),
            "strategies" => format!(
                "strategy-{}-{}",
                self.strategy.unwrap_or("?"),
                crate::strategies::pattern_of(self.rw).unwrap_or(self.rw)
            ),
            s => format!("{s}-qd{qd}"),
        };
        let base = if self.instrumented {
            format!("{base}-profiled")
        } else {
            base
        };
        if self.repeat > 1 {
            format!("{base}#{}", self.repeat)
        } else {
            base
        }
    }

    /// The point id without the repeat suffix (repeats share it).
    pub fn point_id(&self, qd: u32) -> String {
        let id = self.id(qd);
        id.split('#').next().unwrap_or(&id).to_string()
    }
}

fn doubling(from: u32, to: u32) -> Vec<u32> {
    let mut v = Vec::new();
    let mut t = from;
    while t < to {
        v.push(t);
        t *= 2;
    }
    v.push(to);
    v.dedup();
    v
}

/// Make the plan: the sweeps in the order they run.
pub fn plan(targets: &[TargetProfile], o: &StudyOptions) -> Plan {
    let mut pl = Planner::new(targets, o);
    pl.fill();
    pl.qd();
    pl.repeats();
    pl.instrumented();
    pl.threads();
    pl.mixes();
    pl.block_sizes();
    pl.engines();
    if o.strategies {
        strategies(&mut pl.p, pl.t, o, pl.engine);
    }
    pl.schedulers();
    pl.buffered();
    pl.raw();
    pl.ceiling();
    pl.platform();
    pl.devices();
    pl.p
}

/// Shin's experiment on the study's target: every submission/completion
/// strategy (`crate::strategies`) on 4 KiB random reads from 16 threads,
/// one request each at a time, and on random writes in a full study of a
/// writable target. A quick study leaves out hybrid polling. A strategy the
/// target cannot take is refused by `run` on its first point, and the
/// driver then tries it on no other pattern (`refused_everywhere`).
fn strategies(p: &mut Plan, t: &TargetProfile, o: &StudyOptions, engine: Option<&'static str>) {
    use crate::strategies::{STRATEGIES, THREADS};
    let mut rws = vec!["randread"];
    if !o.quick && t.writable {
        rws.push("randwrite");
    }
    let mut pts = Vec::new();
    let mut names = Vec::new();
    for s in STRATEGIES.iter().filter(|s| !o.quick || s.name != "hybrid") {
        if s.needs_io_uring() && t.kind == TargetKind::Emulator {
            p.skipped.push(Skip {
                what: format!("strategy {}", s.name),
                why: crate::strategies::NOT_ON_THE_EMULATOR.into(),
            });
            continue;
        }
        names.push(s.name);
        for &rw in &rws {
            let mut pt = Point::new(
                "strategies",
                rw,
                crate::strategies::BS,
                Qd::Fixed(1),
                engine,
            );
            pt.threads = THREADS;
            pt.strategy = Some(s.name);
            pts.push(pt);
        }
    }
    if o.quick {
        p.skipped.push(Skip {
            what: "strategy hybrid".into(),
            why: "--quick: a full study runs it".into(),
        });
    }
    p.sweeps.push(SweepDoc {
        name: "strategies".into(),
        points: pts.len(),
        what: format!(
            "{} on 4 KiB {} from {THREADS} threads at QD 1 each (the experiment of Shin, \"Achieving Peak Device Throughput for Random IO Workload\"; what the target refuses is skipped with run's reason)",
            names.join(", "),
            rws.join(" and ")
        ),
    });
    p.points.extend(pts);
}

/// Set each run's length and region to fit the budget: a quick study runs
/// 1 s points; a full one divides its budget among its points (2–60 s each,
/// with a ramp of a fifth of that on real devices).
pub fn fit_budget(p: &mut Plan, targets: &[TargetProfile], o: &StudyOptions) {
    let t = &targets[0];
    let emu = t.kind == TargetKind::Emulator;
    let region: u64 = match (emu, t.kind, o.quick) {
        (true, _, _) => 32 << 20,
        (_, TargetKind::File, true) => 256 << 20,
        (_, TargetKind::File, false) => 1 << 30,
        (_, _, true) => 1 << 30,
        (_, _, false) => 8 << 30,
    };
    let region = if t.size_bytes > 0 && !t.created_by_study {
        region
            .min(t.size_bytes / (1 << 20) * (1 << 20))
            .max(1 << 20)
    } else {
        region
    };
    // Start-up of a run (clock calibration, threads, inventory; on a real
    // target also its control groups' counters and, for the drive behind
    // the kernel, its twin on the model), and on an emulator the fill each
    // run begins with (a fresh device per run).
    p.overhead_s = if emu {
        0.15 + crate::limit::fill_seconds(t, region)
    } else {
        0.25
    };
    let n = p.points.len().max(1) as f64;
    let (runtime, ramp) = if o.quick {
        (1.0, 0.0)
    } else {
        let ramp_share = if emu { 0.0 } else { 0.2 };
        let (fixed, runs) = beyond_points(t, o, p.overhead_s);
        let left = (o.budget_s - fixed).max(0.0);
        let r = ((left - n * p.overhead_s) / (n * (1.0 + ramp_share) + runs)).clamp(1.0, 60.0);
        p.beyond_s = fixed + runs * r;
        if r < 2.0 {
            p.skipped.push(Skip {
                what: "full-length runs".into(),
                why: format!(
                    "a budget of {:.0} s leaves {r:.1} s per run for {n} runs; raise --budget for steadier figures",
                    o.budget_s
                ),
            });
        }
        (r, (r * ramp_share).min(2.0))
    };
    p.settings = Settings {
        runtime_s: (runtime * 10.0).round() / 10.0,
        ramp_s: (ramp * 10.0).round() / 10.0,
        region_bytes: region,
    };
}

/// Runs the capacity search makes at most (its peak, its curve, the
/// bisection and the confirming repeat), each at most 2 s long.
pub const CAPACITY_RUNS: f64 = 20.0;
/// Runs of the applications section at the points' length (four
/// workloads with 1 and 4 jobs, the cache effect), and the seconds each
/// takes to set up.
pub const APP_RUNS: f64 = 10.0;
pub const APP_SETUP_S: f64 = 3.0;
/// Seconds each run of the transport's calibration takes besides its
/// runtime (start-up, and the wait for the daemon's figures; 0.1 s was
/// measured on two loaded CPUs).
pub const CALIBRATION_RUN_S: f64 = 0.25;

/// What a full study does beyond its points: (seconds whatever the
/// points' length, runs of the points' length).
fn beyond_points(t: &TargetProfile, o: &StudyOptions, overhead_s: f64) -> (f64, f64) {
    let mut fixed = CAPACITY_RUNS * (2.0 + overhead_s);
    let mut runs = 0.0;
    if t.kind == TargetKind::BlockDevice && t.emulated.is_some() {
        let cal = ssdready_diagnosis::transport::calibration::RUNTIME_S + CALIBRATION_RUN_S;
        let repeats = ssdready_diagnosis::transport::calibration::REPEATS as f64;
        fixed += QDS.len() as f64 * repeats * 2.0 * cal;
    }
    let apps = o.sweeps.iter().any(|s| s == "applications");
    if t.kind != TargetKind::Emulator || apps {
        fixed += APP_RUNS * APP_SETUP_S;
        runs += APP_RUNS;
    }
    (fixed, runs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emu() -> TargetProfile {
        TargetProfile {
            spec: "emu:x25e".into(),
            kind: TargetKind::Emulator,
            writable: true,
            logical_block_size: 512,
            ..Default::default()
        }
    }

    pub(super) fn opts(quick: bool) -> StudyOptions {
        StudyOptions {
            quick,
            budget_s: 600.0,
            cpus: 2,
            ..Default::default()
        }
    }

    #[test]
    fn quick_emulator_plan_sweeps_qd_and_skips_engines() {
        let p = plan(&[emu()], &opts(true));
        let qd: Vec<_> = p.points.iter().filter(|x| x.sweep == "qd").collect();
        assert_eq!(qd.len(), 9);
        assert!(p.points.iter().all(|x| x.engine.is_none()));
        assert!(p.skipped.iter().any(|s| s.what.contains("engines")));
        assert!(p.skipped.iter().any(|s| s.what.contains("profile")));
    }

    #[test]
    fn read_only_targets_plan_no_writes_and_say_why() {
        let mut t = emu();
        t.writable = false;
        t.write_refusal = Some("/dev/x is mounted".into());
        let p = plan(&[t], &opts(false));
        assert!(p.points.iter().all(|x| !x.writes));
        let s = p
            .skipped
            .iter()
            .find(|s| s.what.contains("writes"))
            .unwrap();
        assert!(s.why.contains("mounted"));
    }

    #[test]
    fn a_full_study_fits_its_budget_and_a_quick_one_a_minute() {
        let t = vec![emu()];
        for (quick, budget, most) in [
            (false, 600.0, 630.0),
            (false, 120.0, 130.0),
            (true, 600.0, 75.0),
        ] {
            let o = StudyOptions {
                budget_s: budget,
                ..opts(quick)
            };
            let mut p = plan(&t, &o);
            fit_budget(&mut p, &t, &o);
            let eta = p.eta_s(0);
            assert!(eta <= most, "quick {quick} budget {budget}: eta {eta}");
            assert!(quick || p.beyond_s > 0.0, "the capacity search is counted");
            assert!(quick || eta >= 0.8 * budget, "uses its budget: {eta}");
            assert!(p.settings.runtime_s >= 1.0);
        }
    }

    #[test]
    fn the_default_root_study_fits_its_budget_with_its_calibration_and_applications() {
        // The built-in drive behind the kernel: its points, the capacity
        // search, the transport's calibration and the applications section
        // together within 10 min.
        let t = vec![TargetProfile {
            spec: "/dev/loop9".into(),
            kind: TargetKind::BlockDevice,
            device: Some("loop9".into()),
            emulated: Some("emu:".into()),
            writable: true,
            logical_block_size: 4096,
            ..Default::default()
        }];
        let o = StudyOptions {
            root: true,
            ..opts(false)
        };
        let mut p = plan(&t, &o);
        fit_budget(&mut p, &t, &o);
        let eta = p.eta_s(0);
        assert!(eta <= 600.0 + 1.0, "eta {eta}");
        assert!(eta >= 0.8 * 600.0, "uses its budget: {eta}");
        // The calibration alone: 9 depths, 3 repeats, 2 devices.
        let (fixed, runs) = beyond_points(&t[0], &o, p.overhead_s);
        assert!(fixed >= 9.0 * 3.0 * 2.0 * 0.5, "{fixed}");
        assert_eq!(runs, APP_RUNS);
        let (emu_fixed, emu_runs) = beyond_points(&emu(), &opts(false), p.overhead_s);
        assert!(emu_fixed < fixed && emu_runs == 0.0);
    }

    /// A writable RAM block device.
    pub(super) fn loop7() -> TargetProfile {
        TargetProfile {
            spec: "/dev/loop7".into(),
            kind: TargetKind::RamDevice,
            device: Some("loop7".into()),
            writable: true,
            logical_block_size: 4096,
            ..Default::default()
        }
    }

    #[test]
    fn a_full_study_of_a_block_device_adds_the_optional_sweeps_where_they_apply() {
        let t = TargetProfile {
            schedulers: vec!["none".into(), "mq-deadline".into()],
            scheduler: Some("none".into()),
            ..loop7()
        };
        let o = StudyOptions {
            root: true,
            host_changes: true,
            ..opts(false)
        };
        let p = plan(&[t], &o);
        let names: Vec<&str> = p.sweeps.iter().map(|s| s.name.as_str()).collect();
        for s in ["fill", "qd", "engine", "scheduler", "buffered"] {
            assert!(names.contains(&s), "{s}: {names:?}");
        }
        assert!(p.skipped.iter().any(|s| s.what.contains("raw device")));
        assert!(
            p.skipped.iter().any(|s| s.what == "block size 512"),
            "{:?}",
            p.skipped
        );
    }

    #[test]
    fn a_quick_study_as_root_weighs_the_devices_scheduler_against_none() {
        let t = TargetProfile {
            schedulers: vec!["none".into(), "mq-deadline".into(), "bfq".into()],
            scheduler: Some("bfq".into()),
            ..loop7()
        };
        let o = StudyOptions {
            root: true,
            host_changes: true,
            ..opts(true)
        };
        let p = plan(std::slice::from_ref(&t), &o);
        let used: std::collections::BTreeSet<&str> = p
            .points
            .iter()
            .filter(|x| x.sweep == "scheduler")
            .filter_map(|x| x.scheduler.as_deref())
            .collect();
        assert_eq!(
            used,
            ["bfq", "none"].into_iter().collect(),
            "{:?}",
            p.sweeps
        );
        // With no scheduler to weigh, a quick study has no such sweep; nor
        // without root, which may not switch it.
        let none = TargetProfile {
            scheduler: Some("none".into()),
            ..t.clone()
        };
        let p = plan(&[none], &o);
        assert!(p.points.iter().all(|x| x.sweep != "scheduler"));
        let p = plan(&[t], &opts(true));
        assert!(p.points.iter().all(|x| x.sweep != "scheduler"));
        assert!(p.skipped.iter().any(|s| s.why.contains("needs root")));
    }

    #[test]
    fn a_root_study_switches_a_host_devices_scheduler_only_when_asked() {
        let t = TargetProfile {
            schedulers: vec!["none".into(), "mq-deadline".into(), "bfq".into()],
            scheduler: Some("bfq".into()),
            ..loop7()
        };
        for quick in [true, false] {
            let o = StudyOptions {
                root: true,
                ..opts(quick)
            };
            let p = plan(std::slice::from_ref(&t), &o);
            assert!(
                p.points.iter().all(|x| x.sweep != "scheduler"),
                "quick {quick}: {:?}",
                p.sweeps
            );
            let s = p
                .skipped
                .iter()
                .find(|s| s.what == "I/O schedulers")
                .expect("the sweep left out is said");
            assert!(s.why.contains("--try-changes"), "{}", s.why);
            assert!(s.why.contains("loop7's scheduler (bfq)"), "{}", s.why);
        }
    }

    /// The engines' QD 1 points run again, taking turns, and every point
    /// of a plan has an id of its own (a many-thread engine point once
    /// shared the one-thread point's id, and so its median).
    #[test]
    fn engines_repeat_at_qd1_taking_turns_and_ids_are_unique() {
        let t = loop7();
        for quick in [true, false] {
            let o = StudyOptions {
                root: true,
                cpus: 4,
                ..opts(quick)
            };
            let p = plan(std::slice::from_ref(&t), &o);
            let engine: Vec<String> = p
                .points
                .iter()
                .filter(|x| x.sweep == "engine" && x.qd == Qd::Fixed(1))
                .map(|x| x.id(1))
                .collect();
            let more = if quick { 2 } else { 4 };
            let turns: Vec<String> = (2..=more + 1)
                .flat_map(|r| {
                    [
                        format!("engine-psync-qd1#{r}"),
                        format!("engine-libaio-qd1#{r}"),
                    ]
                })
                .collect();
            assert!(engine.ends_with(&turns), "{engine:?}");
            assert_eq!(engine.contains(&"engine-psync-4x1".to_string()), !quick);
            // Points whose depth the study fixes later are named at two
            // depths: only the repeats of the knee and the peak may meet.
            let at = |x: &Point| match x.qd {
                Qd::Fixed(q) => x.id(q),
                _ => x.id(32),
            };
            let all: Vec<String> = p
                .points
                .iter()
                .filter(|x| x.sweep != "repeat")
                .map(at)
                .collect();
            let mut ids = all.clone();
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), all.len(), "quick {quick}: {all:?}");
        }
    }

    #[test]
    fn the_strategies_sweep_is_shins_threads_and_a_quick_study_leaves_out_hybrid() {
        let with = |quick| StudyOptions {
            strategies: true,
            ..opts(quick)
        };
        let pts = |o: &StudyOptions| -> Vec<Point> {
            plan(&[emu()], o)
                .points
                .into_iter()
                .filter(|x| x.sweep == "strategies")
                .collect()
        };
        // On the in-process emulator, SQPOLL (io_uring's) is skipped.
        let quick = pts(&with(true));
        assert_eq!(quick.len(), 5, "{quick:?}");
        assert!(!quick.iter().any(|x| x.strategy == Some("sqpoll")));
        assert!(quick
            .iter()
            .all(|x| x.threads == 16 && x.qd == Qd::Fixed(1)));
        assert!(quick.iter().all(|x| x.rw == "randread"));
        assert!(!quick.iter().any(|x| x.strategy == Some("hybrid")));
        assert_eq!(quick[2].id(1), "strategy-stm+poll-randread");
        let full = pts(&with(false));
        assert_eq!(full.len(), 12, "6 strategies × random reads and writes");
        let skipped = plan(&[emu()], &with(false)).skipped;
        assert!(
            skipped
                .iter()
                .any(|s| s.what == "strategy sqpoll" && s.why.contains("io_uring")),
            "{skipped:?}"
        );
        assert!(pts(&opts(true)).is_empty(), "not asked for: none");
    }

    #[test]
    fn ids_name_the_point_and_the_repeat() {
        let mut pt = Point::new("repeat", "randread", 4096, Qd::Peak, None);
        pt.repeat = 3;
        assert_eq!(pt.id(16), "qd-16#3");
        assert_eq!(pt.point_id(16), "qd-16");
        assert_eq!(fmt_bs(1 << 20), "1m");
        assert_eq!(fmt_bs(512), "512");
        assert_eq!(doubling(2, 6), vec![2, 4, 6]);
    }
}
