//! The planner: from the detected targets, the machine and the time budget,
//! the sweeps to run and each point's `ssdready run` options.
//!
//! Every study sweeps queue depth (4 KiB random reads, QD 1…256 in ×2
//! steps, stopping once saturated) and repeats its key points (QD 1 and the
//! peak) to measure noise; then threads, read/write mixes and block sizes.
//! Real targets add the engines (psync, io_uring, libaio); the full study
//! (or `--sweeps`) adds the I/O schedulers, direct against buffered I/O, the
//! raw device against a file on its file system, and several devices
//! together. Studies in real time add Shin's submission strategies
//! (`crate::strategies`). A point's queue depth may be `peak`, resolved when the
//! queue-depth sweep has run. The budget sets each run's length.

use crate::model::{PlanDoc, Skip, SweepDoc, TargetKind, TargetProfile};
use serde::{Deserialize, Serialize};

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
    pub cpus: u32,
    /// Run the strategies sweep (Shin's experiment). Real time only:
    /// in virtual time the model has no host whose completions the
    /// strategies change.
    pub strategies: bool,
}

/// The optional sweeps `--sweeps` may name.
pub const OPTIONAL_SWEEPS: &[&str] = &["scheduler", "buffered", "raw", "devices", "applications"];

/// One run's workload, resolved.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Workload {
    pub rw: String,
    pub bs: u64,
    /// Queue depth per thread.
    pub qd: u32,
    pub threads: u32,
    /// None on an emulator (it brings its own engine).
    pub engine: Option<String>,
    pub direct: bool,
    /// The I/O scheduler set for this run (scheduler sweep only).
    pub scheduler: Option<String>,
    pub rwmixread: Option<u32>,
    /// Target paths (several: one job per target, together).
    pub targets: Vec<String>,
    /// The submission/completion strategy (`strategies` sweep only; its
    /// options, `crate::strategies::STRATEGIES`, go to the measured job).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
}

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
}

/// Queue depths of the sweep.
pub const QDS: &[u32] = &[1, 2, 4, 8, 16, 32, 64, 128, 256];
/// The queue depth of the block-size sweep.
pub const BS_QD: u32 = 16;

impl Plan {
    /// Estimated seconds for the points from `from` on.
    pub fn eta_s(&self, from: usize) -> f64 {
        let per = self.settings.runtime_s + self.settings.ramp_s + self.overhead_s;
        self.points.len().saturating_sub(from) as f64 * per
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
            "engine" => format!("engine-{}-qd{qd}", self.engine.unwrap_or("emu")),
            "scheduler" => format!(
                "sched-{}-qd{qd}",
                self.scheduler.as_deref().unwrap_or("none")
            ),
            "buffered" => format!("buffered-qd{qd}"),
            "raw" => format!("raw-device-qd{qd}"),
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

/// `4k`, `512`, `1m`.
pub fn fmt_bs(bs: u64) -> String {
    if bs >= 1 << 20 && bs.is_multiple_of(1 << 20) {
        format!("{}m", bs >> 20)
    } else if bs >= 1024 && bs.is_multiple_of(1024) {
        format!("{}k", bs >> 10)
    } else {
        bs.to_string()
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

/// Make the plan.
pub fn plan(targets: &[TargetProfile], o: &StudyOptions) -> Plan {
    let t = &targets[0];
    let emu = t.kind == TargetKind::Emulator;
    let full = !o.quick;
    let wants = |s: &str| full || o.sweeps.iter().any(|x| x == s);
    let engine = (!emu).then_some("io_uring");
    let mut p = Plan::default();
    let sweep = |p: &mut Plan, name: &str, what: String, pts: Vec<Point>| {
        if !pts.is_empty() {
            p.sweeps.push(SweepDoc {
                name: name.into(),
                points: pts.len(),
                what,
            });
            p.points.extend(pts);
        }
    };
    let skip = |p: &mut Plan, what: &str, why: String| {
        p.skipped.push(Skip {
            what: what.into(),
            why,
        })
    };

    if !emu && t.writable && t.kind != TargetKind::File {
        let mut fill = Point::new("fill", "write", 1 << 20, Qd::Fixed(8), engine);
        fill.writes = true;
        sweep(
            &mut p,
            "fill",
            "write the region once, sequentially in 1 MiB blocks, so that reads find written blocks".into(),
            vec![fill],
        );
    } else if !emu && t.kind != TargetKind::File {
        skip(
            &mut p,
            "preconditioning (a sequential fill before the reads)",
            "writes are refused: reads may find blocks never written, which many SSDs answer without reading flash".into(),
        );
    }
    let qd = QDS
        .iter()
        .map(|&q| Point::new("qd", "randread", 4096, Qd::Fixed(q), engine))
        .collect();
    sweep(
        &mut p,
        "qd",
        "4 KiB random reads at QD 1, 2, 4 … 256, one thread; from QD 16 on, stops once two doublings add < 5 %"
            .into(),
        qd,
    );

    let repeats = if o.quick { 2 } else { 4 };
    let mut rep = Vec::new();
    for r in 2..=repeats + 1 {
        for q in [Qd::Fixed(1), Qd::BelowKnee, Qd::Knee, Qd::Peak] {
            let mut pt = Point::new("repeat", "randread", 4096, q, engine);
            pt.repeat = r;
            rep.push(pt);
        }
    }
    sweep(
        &mut p,
        "repeat",
        format!(
            "QD 1, the knee, the depth below it and the peak {repeats} more times each: the noise between repeats"
        ),
        rep,
    );

    if o.root {
        let pts = [Qd::Fixed(1), Qd::Peak]
            .into_iter()
            .map(|q| {
                let mut pt = Point::new("instrumented", "randread", 4096, q, engine);
                pt.instrumented = true;
                pt
            })
            .collect();
        let how = if emu {
            "--profile (CPU by layer)"
        } else {
            "--profile and --decompose (CPU by layer, latency along the I/O path)"
        };
        sweep(
            &mut p,
            "instrumented",
            format!("QD 1 and the peak depth with {how}"),
            pts,
        );
    } else {
        skip(
            &mut p,
            "kernel profile and latency decomposition",
            "need root (perf_event for every CPU, eBPF on the block tracepoints); run as root for clocks per I/O by layer and the platform share of latency".into(),
        );
    }

    if o.cpus > 1 {
        let mut pts = Vec::new();
        let qds: &[Qd] = if full {
            &[Qd::Fixed(1), Qd::Peak]
        } else {
            &[Qd::Fixed(1)]
        };
        for &q in qds {
            for n in doubling(2, o.cpus) {
                let mut pt = Point::new("threads", "randread", 4096, q, engine);
                pt.threads = n;
                pts.push(pt);
            }
        }
        // The most threads at QD 1, twice: scaling is judged on its noise.
        if let Some(last) = pts.iter().rfind(|p| p.qd == Qd::Fixed(1)).cloned() {
            pts.push(Point { repeat: 2, ..last });
        }
        sweep(
            &mut p,
            "threads",
            format!(
                "{} threads of 4 KiB random reads at QD 1 each (the most twice){}",
                doubling(2, o.cpus)
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if full {
                    ", then at the peak depth each"
                } else {
                    ""
                }
            ),
            pts,
        );
    } else {
        skip(&mut p, "threads sweep", "one CPU online".into());
    }

    let mixes: &[&'static str] = if full {
        &["randwrite", "randrw", "read", "write"]
    } else {
        &["randwrite", "randrw"]
    };
    let mut pts = Vec::new();
    for &rw in mixes {
        let mut pt = Point::new("rw", rw, 4096, Qd::Peak, engine);
        if rw == "randrw" {
            pt.rwmixread = Some(70);
        }
        if pt.writes && !t.writable {
            continue;
        }
        pts.push(pt);
    }
    if !t.writable {
        skip(
            &mut p,
            "writes (random, sequential and mixed)",
            t.write_refusal
                .clone()
                .unwrap_or_else(|| "the target may not be written".into()),
        );
    }
    sweep(
        &mut p,
        "rw",
        format!("4 KiB {} at the peak depth", mixes.join(", ")),
        pts,
    );

    let sizes: Vec<u64> = if full {
        (9..=20).map(|s| 1u64 << s).collect()
    } else {
        vec![4096, 64 << 10, 1 << 20]
    };
    let mut pts = Vec::new();
    for &bs in &sizes {
        if !emu && bs < t.logical_block_size.max(512) {
            skip(
                &mut p,
                &format!("block size {}", fmt_bs(bs)),
                format!(
                    "below the logical block size ({} bytes): direct I/O cannot use it",
                    t.logical_block_size
                ),
            );
            continue;
        }
        pts.push(Point::new("bs", "read", bs, Qd::Fixed(BS_QD), engine));
    }
    sweep(
        &mut p,
        "bs",
        format!(
            "sequential reads of {} at QD {BS_QD}",
            sizes
                .iter()
                .map(|&b| fmt_bs(b))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        pts,
    );

    if emu {
        skip(
            &mut p,
            "engines psync / io_uring / libaio",
            "the emulator brings its own engine (a queue pair per thread); study a file or block device to compare engines".into(),
        );
    } else {
        let mut pts = vec![
            Point::new("engine", "randread", 4096, Qd::Fixed(1), Some("psync")),
            Point::new("engine", "randread", 4096, Qd::Fixed(1), Some("libaio")),
            Point::new("engine", "randread", 4096, Qd::Peak, Some("libaio")),
        ];
        if full {
            let mut pt = Point::new("engine", "randread", 4096, Qd::Fixed(1), Some("psync"));
            pt.threads = o.cpus.max(1);
            pts.push(pt);
        }
        sweep(
            &mut p,
            "engine",
            "psync and libaio against io_uring (the QD sweep's engine) at QD 1 and the peak depth"
                .into(),
            pts,
        );
    }

    if o.strategies {
        strategies(&mut p, t, o, engine);
    }
    optional_sweeps(&mut p, targets, o, &wants, engine);
    p
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
    // Start-up of a run (clock calibration, threads, inventory), and on an
    // emulator the fill each run begins with (a fresh device per run).
    let fill_s = if emu {
        crate::limit::fill_seconds(t, region)
    } else {
        0.0
    };
    p.overhead_s = 0.15 + fill_s;
    let n = p.points.len().max(1) as f64;
    let (runtime, ramp) = if o.quick {
        (1.0, 0.0)
    } else {
        let ramp_share = if emu { 0.0 } else { 0.2 };
        let r = ((o.budget_s / n - p.overhead_s) / (1.0 + ramp_share)).clamp(1.0, 60.0);
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

fn optional_sweeps(
    p: &mut Plan,
    targets: &[TargetProfile],
    o: &StudyOptions,
    wants: &dyn Fn(&str) -> bool,
    engine: Option<&'static str>,
) {
    let t = &targets[0];
    let emu = t.kind == TargetKind::Emulator;
    let add = |p: &mut Plan, name: &str, what: String, pts: Vec<Point>| {
        p.sweeps.push(SweepDoc {
            name: name.into(),
            points: pts.len(),
            what,
        });
        p.points.extend(pts);
    };
    let skip = |p: &mut Plan, what: &str, why: &str| {
        p.skipped.push(Skip {
            what: what.into(),
            why: why.into(),
        })
    };
    let key = [Qd::Fixed(1), Qd::Fixed(32)];

    if wants("scheduler") {
        if emu || t.device.is_none() {
            skip(p, "I/O schedulers", "the target has no block device queue");
        } else if !o.root {
            skip(
                p,
                "I/O schedulers",
                "switching a device's scheduler needs root",
            );
        } else if t.schedulers.len() < 2 {
            skip(p, "I/O schedulers", "the device offers one scheduler only");
        } else {
            let mut pts = Vec::new();
            for s in &t.schedulers {
                for q in key {
                    let mut pt = Point::new("scheduler", "randread", 4096, q, engine);
                    pt.scheduler = Some(s.clone());
                    pts.push(pt);
                }
            }
            let names = t.schedulers.join(", ");
            add(
                p,
                "scheduler",
                format!(
                    "4 KiB random reads at QD 1 and 32 through {names} (the original is restored)"
                ),
                pts,
            );
        }
    }
    if wants("buffered") {
        if emu {
            skip(
                p,
                "direct against buffered I/O",
                "the emulator has no page cache",
            );
        } else {
            let pts = [Qd::Fixed(1), Qd::Peak]
                .into_iter()
                .map(|q| {
                    let mut pt = Point::new("buffered", "randread", 4096, q, engine);
                    pt.direct = false;
                    pt
                })
                .collect();
            add(
                p,
                "buffered",
                "buffered 4 KiB random reads at QD 1 and the peak depth, against the direct ones"
                    .into(),
                pts,
            );
        }
    }
    if wants("raw") {
        if t.kind != TargetKind::File || t.device.is_none() {
            skip(
                p,
                "raw device against a file",
                "the target is not a file on a block device's file system",
            );
        } else if !o.root {
            skip(
                p,
                "raw device against a file",
                "reading the raw device needs root",
            );
        } else {
            let pts = [Qd::Fixed(1), Qd::Peak]
                .into_iter()
                .map(|q| {
                    let mut pt = Point::new("raw", "randread", 4096, q, engine);
                    pt.raw_device = true;
                    pt
                })
                .collect();
            add(
                p,
                "raw",
                "reads of the raw device under the file system at QD 1 and the peak depth, against the file".into(),
                pts,
            );
        }
    }
    if targets.len() > 1 {
        let mut pts = Vec::new();
        for i in 1..targets.len() {
            let mut pt = Point::new("devices", "randread", 4096, Qd::Peak, engine);
            pt.targets = vec![i];
            pts.push(pt);
        }
        let mut all = Point::new("devices", "randread", 4096, Qd::Peak, engine);
        all.targets = (0..targets.len()).collect();
        pts.push(all);
        add(
            p,
            "devices",
            format!(
                "each other device alone, then all {} together, at the peak depth",
                targets.len()
            ),
            pts,
        );
    } else if o.sweeps.iter().any(|s| s == "devices") {
        skip(
            p,
            "several devices",
            "give several targets, comma-separated",
        );
    }
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

    fn opts(quick: bool) -> StudyOptions {
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
            assert!(quick || eta >= 0.8 * budget, "uses its budget: {eta}");
            assert!(p.settings.runtime_s >= 1.0);
        }
    }

    #[test]
    fn a_full_study_of_a_block_device_adds_the_optional_sweeps_where_they_apply() {
        let t = TargetProfile {
            spec: "/dev/loop7".into(),
            kind: TargetKind::RamDevice,
            device: Some("loop7".into()),
            schedulers: vec!["none".into(), "mq-deadline".into()],
            scheduler: Some("none".into()),
            writable: true,
            logical_block_size: 4096,
            ..Default::default()
        };
        let o = StudyOptions {
            root: true,
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
        let quick = pts(&with(true));
        assert_eq!(quick.len(), 6, "{quick:?}");
        assert!(quick
            .iter()
            .all(|x| x.threads == 16 && x.qd == Qd::Fixed(1)));
        assert!(quick.iter().all(|x| x.rw == "randread"));
        assert!(!quick.iter().any(|x| x.strategy == Some("hybrid")));
        assert_eq!(quick[2].id(1), "strategy-stm+poll-randread");
        let full = pts(&with(false));
        assert_eq!(full.len(), 14, "7 strategies × random reads and writes");
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
