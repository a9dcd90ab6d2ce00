//! The user's job as one of the study's points: its repeats, its
//! instrumented run and its variants go through the device study's runner
//! ([`crate::real::RealRunner`]: the control groups' counters and every
//! stacked device's counters around each run, the run's own CPU, thread
//! and device figures) and are kept as the records the device study keeps
//! of a point. The diagnosis judges them with the device study's causes
//! against the caps of the limits inventory
//! ([`ssdready_diagnosis::limit::point`]), the job's reads and writes
//! apart where it does both.

use crate::driver::{Failure, Runner};
use crate::real::RealRunner;
use serde::{Deserialize, Serialize};
use ssdready_core::options::Section;
use ssdready_core::result::RunResult;
use ssdready_diagnosis::estimate::Estimate;
use ssdready_diagnosis::levers::Context;
use ssdready_diagnosis::limit::caps::Caps;
use ssdready_diagnosis::limit::{point, Saturation};
use ssdready_measured::limits::Inventory;
use ssdready_measured::record::{Machine, RunRecord, TargetProfile, Workload};
use ssdready_run::{RunFn, RunRequest};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// What holds the job (or one direction of it).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Held {
    /// `reads` or `writes` where the job's are judged apart, else empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub direction: String,
    pub saturation: Saturation,
    /// What lifting it may buy, by the device study's estimates, where a
    /// measurement of the job's says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Estimate>,
}

/// What the job's runs are judged with: its first target as the device
/// study detects one, the machine, the caps read before the runs.
pub struct Judge {
    pub target: Option<TargetProfile>,
    pub machine: Machine,
    pub caps: Caps,
    /// The levers' context: the target's queue as read, the inventory.
    pub context: Context,
}

impl Judge {
    /// The judge of the job `sections` (its target named in them) under
    /// the limits `inv`.
    pub fn of(sections: &[Section], inv: &Inventory) -> Judge {
        let j = sections.iter().position(|s| !s.global).unwrap_or(0);
        let target = crate::job::spec(sections, j)
            .filename
            .into_iter()
            .next()
            .filter(|f| !f.is_empty())
            .and_then(|f| crate::detect::detect(&f, true).ok());
        let context = Context {
            queue: target
                .as_ref()
                .and_then(|t| t.device.as_deref())
                .map(crate::trials::queue_files)
                .unwrap_or_default(),
            limits: Some(inv.clone()),
            may_raise_priority: ssdready_io::kdev::is_root(),
            ..Default::default()
        };
        Judge {
            target,
            machine: crate::detect::machine(None),
            caps: Caps::of(inv),
            context,
        }
    }

    /// What holds the job whose runs are `points`: not identified where
    /// its target is none the study could read.
    pub fn judge(&self, points: &[RunRecord], sections: &[Section]) -> Vec<Held> {
        let Some(t) = &self.target else {
            let part = "the job's target is not one the study could read, so no device, queue or limit of it to judge its runs against";
            return vec![Held {
                saturation: Saturation {
                    part: part.into(),
                    ..Default::default()
                },
                ..Default::default()
            }];
        };
        let p = crate::job_levers::point(sections);
        let levers = ssdready_diagnosis::levers::shipped();
        directions(points)
            .into_iter()
            .map(|(direction, runs)| {
                let s = point::classify_job(t, &runs, p.qd, &self.machine, &self.caps);
                Held {
                    cost: point::cost(&s, &runs, (&levers, &self.context, &p)),
                    saturation: s,
                    direction: direction.into(),
                }
            })
            .collect()
    }
}

/// A run of the job, as the point it is.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// The job as written, the repeat's number from 0.
    Repeat(usize),
    Instrumented,
    /// A variant, its number from 0.
    Variant(usize),
}

/// The job's point: its workload as the device study names one.
fn workload(sections: &[Section], target: Option<&TargetProfile>) -> Workload {
    let p = crate::job_levers::point(sections);
    Workload {
        rw: p.rw,
        bs: p.bs,
        qd: p.qd,
        threads: p.threads,
        engine: p.engine,
        direct: p.direct,
        targets: target.map(|t| vec![t.spec.clone()]).unwrap_or_default(),
        ..Default::default()
    }
}

/// The job's runs through the device study's runner, each kept as a
/// record (its result left out: the document keeps the job's figures).
pub struct Points<'a> {
    runner: RealRunner<'a>,
    job: Workload,
    target: Option<TargetProfile>,
    pub records: Vec<RunRecord>,
}

impl<'a> Points<'a> {
    pub fn new(
        run: &'a mut RunFn,
        sections: &[Section],
        judge: &Judge,
        stop: &Arc<AtomicBool>,
    ) -> Points<'a> {
        let targets: Vec<TargetProfile> = judge.target.iter().cloned().collect();
        Points {
            runner: RealRunner::new(stop.clone(), &targets, Box::new(move |r| run(r))),
            job: workload(sections, judge.target.as_ref()),
            target: judge.target.clone(),
            records: Vec::new(),
        }
    }

    /// Run `request` (of the job, or of the variant `sections`) as the
    /// point `kind`; its result, or why it gave none.
    pub fn run(
        &mut self,
        kind: Kind,
        sections: &[Section],
        request: &RunRequest,
    ) -> Result<RunResult, String> {
        let w = workload(sections, self.target.as_ref());
        let started = crate::session::now_ms();
        let at = std::time::Instant::now();
        let ran = self.runner.run(&w, request);
        let mut rec = self.record(kind, w);
        (rec.started_unix_ms, rec.wall_s) = (started, at.elapsed().as_secs_f64());
        let out = match ran {
            Ok(o) => {
                (rec.summary, rec.context) = (o.summary, o.context);
                o.result.ok_or_else(|| "the run gave no result".to_string())
            }
            Err(Failure::NotApplicable(e) | Failure::Failed(e)) => Err(e),
        };
        if let Err(e) = &out {
            rec.error = Some(e.clone());
        }
        self.records.push(rec);
        out
    }

    /// The record of a run of `kind` at workload `w`: the job's own depth
    /// and depths of it as the queue-depth sweep's points, any other
    /// variant a point of its own.
    fn record(&self, kind: Kind, w: Workload) -> RunRecord {
        let qd = format!("qd-{}", w.qd);
        let (id, point, sweep, repeat) = match kind {
            Kind::Repeat(0) => (qd.clone(), qd, "qd", 1),
            Kind::Repeat(i) => (format!("{qd}#{}", i + 1), qd, "qd", i as u32 + 1),
            Kind::Instrumented => (format!("instrumented-{qd}"), qd, "instrumented", 1),
            Kind::Variant(_)
                if Workload {
                    qd: w.qd,
                    ..self.job.clone()
                } == w =>
            {
                (qd.clone(), qd, "qd", 1)
            }
            Kind::Variant(i) => (format!("variant-{i}"), format!("variant-{i}"), "job", 1),
        };
        RunRecord {
            id,
            point,
            sweep: sweep.into(),
            repeat,
            instrumented: matches!(kind, Kind::Instrumented),
            workload: w,
            clock: "real".into(),
            ..Default::default()
        }
    }
}

/// The runs to judge, whole or one direction at a time: a job that both
/// reads and writes is judged on each direction's rate apart (the
/// device's and the CPUs' figures being the run's).
pub fn directions(points: &[RunRecord]) -> Vec<(&'static str, Vec<RunRecord>)> {
    let both = points
        .iter()
        .any(|r| r.summary.read_iops > 0.0 && r.summary.write_iops > 0.0);
    if !both {
        return vec![("", points.to_vec())];
    }
    let one = |reads: bool| {
        points
            .iter()
            .cloned()
            .map(|mut r| {
                let s = &mut r.summary;
                let mine = if reads { s.read_iops } else { s.write_iops };
                s.bw_bytes_per_s *= mine / s.iops.max(1e-9);
                s.iops = mine;
                let rand = if r.workload.rw.contains("rand") {
                    "rand"
                } else {
                    ""
                };
                r.workload.rw = format!("{rand}{}", if reads { "read" } else { "write" });
                r
            })
            .collect()
    };
    vec![("reads", one(true)), ("writes", one(false))]
}

/// What holds the job, in lines.
pub fn words(held: &[Held]) -> Vec<String> {
    let mut out = Vec::new();
    for h in held {
        out.extend(point::words(&h.saturation, &h.direction));
        if let Some(c) = &h.cost {
            out.push(format!("  lifting it may buy {}", c.words()));
        }
    }
    out
}

#[cfg(test)]
#[path = "job_point_tests.rs"]
mod tests;
