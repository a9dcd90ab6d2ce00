//! The planner's sweeps, one step each: [`Planner`] holds the plan being
//! built and adds each sweep's points, or says why it is skipped.

use super::{doubling, fmt_bs, Plan, Point, Qd, StudyOptions, BS_QD, QDS};
use crate::model::{Skip, SweepDoc};
use ssdready_diagnosis::stack::ceiling;
use ssdready_measured::record::{TargetKind, TargetProfile};

/// The plan being built, and what every sweep's builder asks of the
/// targets and the options.
pub(super) struct Planner<'a> {
    pub(super) p: Plan,
    targets: &'a [TargetProfile],
    /// The study's target (the first).
    pub(super) t: &'a TargetProfile,
    o: &'a StudyOptions,
    emu: bool,
    full: bool,
    /// The engine of every point but the engine sweep's (None on an emulator).
    pub(super) engine: Option<&'static str>,
}

impl<'a> Planner<'a> {
    pub(super) fn new(targets: &'a [TargetProfile], o: &'a StudyOptions) -> Self {
        let t = &targets[0];
        let emu = t.kind == TargetKind::Emulator;
        Planner {
            p: Plan::default(),
            targets,
            t,
            o,
            emu,
            full: !o.quick,
            engine: (!emu).then_some("io_uring"),
        }
    }

    /// Whether an optional sweep runs: always in a full study, else when named.
    fn wants(&self, s: &str) -> bool {
        self.full || self.o.sweeps.iter().any(|x| x == s)
    }

    /// Add a sweep of these points (none: no sweep).
    fn sweep(&mut self, name: &str, what: String, pts: Vec<Point>) {
        if !pts.is_empty() {
            self.p.sweeps.push(SweepDoc {
                name: name.into(),
                points: pts.len(),
                what,
            });
            self.p.points.extend(pts);
        }
    }

    fn skip(&mut self, what: &str, why: impl Into<String>) {
        self.p.skipped.push(Skip {
            what: what.into(),
            why: why.into(),
        })
    }

    /// A sequential fill of a writable device, so that reads find written
    /// blocks.
    pub(super) fn fill(&mut self) {
        let t = self.t;
        if !self.emu && t.writable && t.kind != TargetKind::File {
            let mut fill = Point::new("fill", "write", 1 << 20, Qd::Fixed(8), self.engine);
            fill.writes = true;
            self.sweep(
                "fill",
                "write the region once, sequentially in 1 MiB blocks, so that reads find written blocks".into(),
                vec![fill],
            );
        } else if !self.emu && t.kind != TargetKind::File {
            self.skip(
                "preconditioning (a sequential fill before the reads)",
                "writes are refused: reads may find blocks never written, which many SSDs answer without reading flash",
            );
        }
    }

    pub(super) fn qd(&mut self) {
        let qd = QDS
            .iter()
            .map(|&q| Point::new("qd", "randread", 4096, Qd::Fixed(q), self.engine))
            .collect();
        self.sweep(
            "qd",
            "4 KiB random reads at QD 1, 2, 4 … 256, one thread; from QD 16 on, stops once two doublings add < 5 %"
                .into(),
            qd,
        );
    }

    /// The key points again, for the noise between repeats.
    pub(super) fn repeats(&mut self) {
        let repeats = self.repeat_count();
        let mut rep = Vec::new();
        for r in 2..=repeats + 1 {
            for q in [Qd::Fixed(1), Qd::BelowKnee, Qd::Knee, Qd::Peak] {
                let mut pt = Point::new("repeat", "randread", 4096, q, self.engine);
                pt.repeat = r;
                rep.push(pt);
            }
        }
        self.sweep(
            "repeat",
            format!(
                "QD 1, the knee, the depth below it and the peak {repeats} more times each: the noise between repeats"
            ),
            rep,
        );
    }

    /// How many more times a key point runs: the noise between repeats.
    fn repeat_count(&self) -> u32 {
        if self.o.quick {
            2
        } else {
            4
        }
    }

    /// QD 1 and the peak with `--profile` (and `--decompose`), as root.
    pub(super) fn instrumented(&mut self) {
        if !self.o.root {
            self.skip(
                "kernel profile and latency decomposition",
                "need root (perf_event for every CPU, eBPF on the block tracepoints); run as root for clocks per I/O by layer and the platform share of latency",
            );
            return;
        }
        let pts = [Qd::Fixed(1), Qd::Peak]
            .into_iter()
            .map(|q| {
                let mut pt = Point::new("instrumented", "randread", 4096, q, self.engine);
                pt.instrumented = true;
                pt
            })
            .collect();
        let how = if self.emu {
            "--profile (CPU by layer)"
        } else {
            "--profile and --decompose (CPU by layer, latency along the I/O path)"
        };
        self.sweep(
            "instrumented",
            format!("QD 1 and the peak depth with {how}"),
            pts,
        );
    }

    pub(super) fn threads(&mut self) {
        let cpus = self.o.cpus;
        if cpus <= 1 {
            self.skip(
                "threads sweep",
                "one CPU to run on (what the CPUs online and allowed and the group's CPU quota leave)",
            );
            return;
        }
        let mut pts = Vec::new();
        let qds: &[Qd] = if self.full {
            &[Qd::Fixed(1), Qd::Peak]
        } else {
            &[Qd::Fixed(1)]
        };
        for &q in qds {
            for n in doubling(2, cpus) {
                let mut pt = Point::new("threads", "randread", 4096, q, self.engine);
                pt.threads = n;
                pts.push(pt);
            }
        }
        // The most threads at QD 1, twice: scaling is judged on its noise.
        if let Some(last) = pts.iter().rfind(|p| p.qd == Qd::Fixed(1)).cloned() {
            pts.push(Point { repeat: 2, ..last });
        }
        let what = format!(
            "{} threads of 4 KiB random reads at QD 1 each (the most twice){}",
            doubling(2, cpus)
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if self.full {
                ", then at the peak depth each"
            } else {
                ""
            }
        );
        self.sweep("threads", what, pts);
    }

    /// Writes, mixed and sequential at the peak depth (writes only where
    /// the target may be written).
    pub(super) fn mixes(&mut self) {
        let t = self.t;
        let mixes: &[&'static str] = if self.full {
            &["randwrite", "randrw", "read", "write"]
        } else {
            &["randwrite", "randrw"]
        };
        let mut pts = Vec::new();
        for &rw in mixes {
            let mut pt = Point::new("rw", rw, 4096, Qd::Peak, self.engine);
            if rw == "randrw" {
                pt.rwmixread = Some(70);
            }
            if pt.writes && !t.writable {
                continue;
            }
            pts.push(pt);
        }
        if !t.writable {
            self.skip(
                "writes (random, sequential and mixed)",
                t.write_refusal
                    .clone()
                    .unwrap_or_else(|| "the target may not be written".into()),
            );
        }
        self.sweep(
            "rw",
            format!("4 KiB {} at the peak depth", mixes.join(", ")),
            pts,
        );
    }

    /// Sequential reads of each block size the target can take.
    pub(super) fn block_sizes(&mut self) {
        let t = self.t;
        let sizes: Vec<u64> = if self.full {
            (9..=20).map(|s| 1u64 << s).collect()
        } else {
            vec![4096, 64 << 10, 1 << 20]
        };
        let mut pts = Vec::new();
        for &bs in &sizes {
            if !self.emu && bs < t.logical_block_size.max(512) {
                self.skip(
                    &format!("block size {}", fmt_bs(bs)),
                    format!(
                        "below the logical block size ({} bytes): direct I/O cannot use it",
                        t.logical_block_size
                    ),
                );
                continue;
            }
            pts.push(Point::new("bs", "read", bs, Qd::Fixed(BS_QD), self.engine));
        }
        self.sweep(
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
    }

    /// psync and libaio against io_uring (real targets only).
    pub(super) fn engines(&mut self) {
        if self.emu {
            self.skip(
                "engines psync / io_uring / libaio",
                "the emulator brings its own engine (a queue pair per thread); study a file or block device to compare engines",
            );
            return;
        }
        let mut pts = vec![
            Point::new("engine", "randread", 4096, Qd::Fixed(1), Some("psync")),
            Point::new("engine", "randread", 4096, Qd::Fixed(1), Some("libaio")),
            Point::new("engine", "randread", 4096, Qd::Peak, Some("libaio")),
        ];
        if self.full {
            let mut pt = Point::new("engine", "randread", 4096, Qd::Fixed(1), Some("psync"));
            pt.threads = self.o.cpus.max(1);
            pts.push(pt);
        }
        // QD 1 again, the engines taking turns: behind the kernel drive one
        // run of 4 KiB reads at QD 1 gave 10.6K to 15.4K IOPS on the same
        // engine, so single runs would name a faster engine by chance.
        let repeats = self.repeat_count();
        for r in 2..=repeats + 1 {
            for e in ["psync", "libaio"] {
                let mut pt = Point::new("engine", "randread", 4096, Qd::Fixed(1), Some(e));
                pt.repeat = r;
                pts.push(pt);
            }
        }
        self.sweep(
            "engine",
            format!(
                "psync and libaio against io_uring (the QD sweep's engine) at QD 1 and the peak depth; QD 1 {repeats} more times each, the engines taking turns"
            ),
            pts,
        );
    }
    /// Each I/O scheduler the device offers, at QD 1 and 32, where asked
    /// for or in a full study; in any study, the device's own scheduler
    /// against `none` where it has one: a scheduler is named as the limit
    /// only from such a comparison.
    pub(super) fn schedulers(&mut self) {
        let t = self.t;
        let scheduled = t
            .scheduler
            .as_deref()
            .is_some_and(|s| s != "none" && t.schedulers.iter().any(|x| x == "none"));
        if !self.wants("scheduler") && !scheduled {
            return;
        }
        let offered: Vec<String> = match self.wants("scheduler") {
            true => t.schedulers.clone(),
            false => vec![t.scheduler.clone().unwrap_or_default(), "none".into()],
        };
        if self.emu || t.device.is_none() {
            self.skip("I/O schedulers", "the target has no block device queue");
        } else if !self.o.root {
            self.skip(
                "I/O schedulers",
                "switching a device's scheduler needs root",
            );
        } else if offered.len() < 2 {
            self.skip("I/O schedulers", "the device offers one scheduler only");
        } else if !self.o.host_changes {
            let dev = t.device.as_deref().unwrap_or("the device");
            self.skip(
                "I/O schedulers",
                format!(
                    "comparing them switches {dev}'s scheduler ({}) under whatever else uses it: \
                     run with --try-changes to compare them (the original is put back after)",
                    t.scheduler.as_deref().unwrap_or("?")
                ),
            );
        } else {
            // In turns, several rounds, the order reversed each round: a
            // difference between schedulers is read from runs made side by
            // side, with its error from the rounds' spread.
            let rounds = self.repeat_count() + 1;
            let mut pts = Vec::new();
            for r in 1..=rounds {
                let mut order: Vec<&String> = offered.iter().collect();
                if r % 2 == 0 {
                    order.reverse();
                }
                for q in [Qd::Fixed(1), Qd::Fixed(32)] {
                    for s in &order {
                        let mut pt = Point::new("scheduler", "randread", 4096, q, self.engine);
                        pt.scheduler = Some((*s).clone());
                        pt.repeat = r;
                        pts.push(pt);
                    }
                }
            }
            let names = offered.join(", ");
            self.sweep(
                "scheduler",
                format!(
                    "4 KiB random reads at QD 1 and 32 through {names}, in turns, {rounds} rounds (the original is restored)"
                ),
                pts,
            );
        }
    }

    /// Optional: buffered reads against the direct ones.
    pub(super) fn buffered(&mut self) {
        if !self.wants("buffered") {
            return;
        }
        if self.emu {
            self.skip(
                "direct against buffered I/O",
                "the emulator has no page cache",
            );
            return;
        }
        let pts = [Qd::Fixed(1), Qd::Peak]
            .into_iter()
            .map(|q| {
                let mut pt = Point::new("buffered", "randread", 4096, q, self.engine);
                pt.direct = false;
                pt
            })
            .collect();
        self.sweep(
            "buffered",
            "buffered 4 KiB random reads at QD 1 and the peak depth, against the direct ones"
                .into(),
            pts,
        );
    }

    /// Optional: the raw device under a file's file system, against the file.
    pub(super) fn raw(&mut self) {
        if !self.wants("raw") {
            return;
        }
        let t = self.t;
        if t.kind != TargetKind::File || t.device.is_none() {
            self.skip(
                "raw device against a file",
                "the target is not a file on a block device's file system",
            );
        } else if !self.o.root {
            self.skip(
                "raw device against a file",
                "reading the raw device needs root",
            );
        } else {
            // The raw device and the file in turns, several rounds: the
            // file system's cost is read from runs made side by side.
            let rounds = self.repeat_count() + 1;
            let mut pts = Vec::new();
            for r in 1..=rounds {
                for q in [Qd::Fixed(1), Qd::Peak] {
                    for raw in [r % 2 == 1, r % 2 == 0] {
                        let mut pt = Point::new("raw", "randread", 4096, q, self.engine);
                        pt.raw_device = raw;
                        pt.repeat = r;
                        pts.push(pt);
                    }
                }
            }
            self.sweep(
                "raw",
                format!("reads of the raw device under the file system and of the file, in turns, at QD 1 and the peak depth, {rounds} rounds"),
                pts,
            );
        }
    }

    /// The stack's ceiling against its members: each physical device at
    /// the bottom of the target's stack read alone, one at a time, in
    /// turns with the stack itself, at small requests (4 KiB random reads
    /// at the deepest depth the queue-depth sweep ran: a layer that stopped
    /// scaling at a shallow peak is set against a member that still
    /// scales) and large ones (sequential reads of a stripe's
    /// width at QD 8); and, with two or more, every member at once (a job
    /// each, 4 KiB random reads at that depth each). The order is
    /// reversed each round. Reads only: a member of an array is never
    /// written. Needs root; without a stack, no sweep.
    pub(super) fn ceiling(&mut self) {
        const WHAT: &str = "the stack against its members read alone";
        let Some(stack) = self.t.stack.as_ref().map(|s| s.serving()) else {
            return;
        };
        let stack = &stack;
        if stack.physical.is_empty() {
            self.skip(
                WHAT,
                "the stack has no physical device in service at its bottom",
            );
            return;
        }
        if !self.o.root {
            self.skip(
                WHAT,
                "reading the stack's members alone needs root; run as root for the stack's ceiling against the sum of its members",
            );
            return;
        }
        let rounds = if self.o.quick { 2 } else { 3 };
        // A loop device's disk is read through its backing file: what the
        // loop device itself reads, without it.
        let members: Vec<String> = stack.physical.iter().map(|d| stack.read_alone(d)).collect();
        if let Some(f) = members
            .iter()
            .find(|m| !m.starts_with("/dev/") && !std::path::Path::new(m).is_file())
        {
            self.skip(
                WHAT,
                format!("the loop device's backing file {f} is not a file this study can read"),
            );
            return;
        }
        let large = ceiling::bandwidth_bs(stack);
        let read = |rw: &'static str, bs: u64, qd: Qd, on: Vec<String>| {
            let mut pt = Point::new("ceiling", rw, bs, qd, self.engine);
            pt.members = on;
            pt.writes = false;
            pt
        };
        let mut turn: Vec<Point> = Vec::new();
        for (rw, bs, qd) in [
            ("randread", 4096, Qd::Deepest),
            ("read", large, Qd::Fixed(ceiling::BANDWIDTH_QD)),
        ] {
            turn.push(read(rw, bs, qd, Vec::new()));
            turn.extend(members.iter().map(|m| read(rw, bs, qd, vec![m.clone()])));
            if rw == "randread" && members.len() > 1 {
                turn.push(read(rw, bs, qd, members.clone()));
            }
        }
        let mut pts = Vec::new();
        for r in 1..=rounds {
            let mut order = turn.clone();
            if r % 2 == 0 {
                order.reverse();
            }
            pts.extend(order.into_iter().map(|pt| Point { repeat: r, ..pt }));
        }
        self.sweep("ceiling", ceiling_what(stack, large, &members, rounds), pts);
    }

    /// The platform's own peak on the reference device (a loop device over
    /// /dev/shm the study made beside the emulated drive behind the kernel):
    /// 4 KiB random reads at doubling depths, the deeper ones repeated, on
    /// the kernel's path without the drive's daemon.
    pub(super) fn platform(&mut self) {
        let Some(i) = self.targets.iter().position(|t| t.reference) else {
            return;
        };
        let repeats = if self.o.quick { 1 } else { 2 };
        let mut pts = Vec::new();
        for r in 1..=repeats + 1 {
            for q in [1, 2, 4, 8, 16, 32, 64, 128] {
                if r > 1 && q < 16 {
                    continue;
                }
                let mut pt = Point::new("platform", "randread", 4096, Qd::Fixed(q), self.engine);
                pt.targets = vec![i];
                pt.repeat = r;
                pts.push(pt);
            }
        }
        self.sweep(
            "platform",
            format!(
                "the platform's own peak: 4 KiB random reads at QD 1 … 128 on {} (RAM, the kernel's path without the drive's daemon), QD 16 and deeper {repeats} more time(s)",
                self.targets[i].spec
            ),
            pts,
        );
    }

    /// Several targets: each other device alone, then all together (the
    /// reference device is none of them).
    pub(super) fn devices(&mut self) {
        let n = self.targets.iter().filter(|t| !t.reference).count();
        if n > 1 {
            let mut pts = Vec::new();
            for i in 1..n {
                let mut pt = Point::new("devices", "randread", 4096, Qd::Peak, self.engine);
                pt.targets = vec![i];
                pts.push(pt);
            }
            let mut all = Point::new("devices", "randread", 4096, Qd::Peak, self.engine);
            all.targets = (0..n).collect();
            pts.push(all);
            self.sweep(
                "devices",
                format!("each other device alone, then all {n} together, at the peak depth"),
                pts,
            );
        } else if self.o.sweeps.iter().any(|s| s == "devices") {
            self.skip("several devices", "give several targets, comma-separated");
        }
    }
}

/// The `ceiling` sweep in words: what is read, at which sizes and depths,
/// and each physical member as it is read alone.
fn ceiling_what(
    stack: &ssdready_measured::stack_layers::Stack,
    large: u64,
    members: &[String],
    rounds: u32,
) -> String {
    let at_once = match members.len() {
        1 => "",
        _ => ", and all of them at once (a job each, 4 KiB random reads at that depth each)",
    };
    format!(
        "4 KiB random reads at the deepest depth of the queue-depth sweep and {} sequential reads at QD {} of {} and of each of its physical members alone ({}){at_once}, read-only, in turns, {rounds} rounds",
        fmt_bs(large),
        ceiling::BANDWIDTH_QD,
        stack.target,
        stack
            .physical
            .iter()
            .map(|d| match stack.loop_file_on(d) {
                Some(f) => format!("{d}, through the loop device's file {f}"),
                None => d.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    )
}
