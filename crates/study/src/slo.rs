//! `ssdready study --slo p99=1ms`: the highest offered load of 4 KiB
//! random reads the platform carries within a latency target
//! ([`crate::capacity`]: open-loop load curve, bisection, a
//! confirming repeat). On an emulated drive the same search runs on the
//! model alone in virtual time as well: the device's own answer beside
//! the platform's. The search runs only when it fits in what the
//! budget's clock has left, and stops at its deadline.

use crate::capacity::{point_request, search, sentence, Capacity, CapacityDoc, Slo};
use crate::clock::Deadline;
use crate::driver::Runner;
use crate::model::Skip;
use crate::plan::{Plan, Settings, CAPACITY_RUNS};
use ssdready_measured::record::{TargetKind, TargetProfile};

pub use crate::capacity::CAP;

/// What the search covers.
const WHAT: &str = "4 KiB random reads";

/// Each run of the search: a quarter of the study's runtime, 0.5 to 2 s
/// (after the study's ramp).
fn settings(p: &Plan) -> Settings {
    Settings {
        runtime_s: (p.settings.runtime_s / 4.0).clamp(0.5, 2.0),
        ..p.settings
    }
}

/// Seconds the search takes at most: [`CAPACITY_RUNS`] runs, each with
/// `overhead_s` of start-up.
pub fn estimate_s(p: &Plan, overhead_s: f64) -> f64 {
    let s = settings(p);
    CAPACITY_RUNS * (s.runtime_s + s.ramp_s + overhead_s)
}

/// The search when it fits before `d` at `overhead_s` of start-up a run
/// ([`capacity`]); else the skip that says why not.
pub fn capacity_within(
    slo: &Slo,
    targets: &[TargetProfile],
    p: &Plan,
    runner: &mut dyn Runner,
    (d, overhead_s): (&Deadline, f64),
) -> Result<Option<CapacityDoc>, Skip> {
    d.check(estimate_s(p, overhead_s), "the search takes")
        .map_err(|why| Skip {
            what: format!("capacity at a latency target ({})", slo.text()),
            why,
        })?;
    Ok(capacity(slo, targets, p, runner, (d, overhead_s)))
}

/// Run the search on the study's first target, each run (with
/// `overhead_s` of start-up) only before `d`: a run that would pass it
/// ends the search with the clock's reason. None when the plan has no
/// 4 KiB random-read point for it (nothing to base the runs on).
pub fn capacity(
    slo: &Slo,
    targets: &[TargetProfile],
    p: &Plan,
    runner: &mut dyn Runner,
    (d, overhead_s): (&Deadline, f64),
) -> Option<CapacityDoc> {
    let point = p.points.iter().find(|pt| {
        pt.rw == "randread"
            && pt.bs == 4096
            && pt.targets == [0]
            && !pt.raw_device
            && pt.members.is_empty()
    })?;
    let w = crate::jobs::workload(point, CAP, targets, None);
    let settings = settings(p);
    let base = crate::jobs::request(&w, targets, &settings, false);
    let run_s = settings.runtime_s + settings.ramp_s + overhead_s;
    let mut measure = |iops: u64, seed: u32| -> Result<_, String> {
        d.check(run_s, "its next run takes")?;
        runner
            .run(&w, &point_request(&base, iops, seed))
            .map(|o| o.summary)
            .map_err(|e| format!("{e:?}"))
    };
    let mut doc = CapacityDoc {
        what: WHAT.into(),
        target: targets[0].spec.clone(),
        ..CapacityDoc::default()
    };
    match search(slo, &mut measure) {
        Ok(c) => {
            doc.sentence = sentence(&c, WHAT);
            doc.platform = Some(c);
        }
        Err(e) => doc.error = Some(format!("the platform's search failed: {e}")),
    }
    if targets[0].kind == TargetKind::Emulator {
        let mut model = |iops: u64, seed: u32| {
            crate::virt::run(&point_request(&base, iops, seed)).map(|(s, _)| s)
        };
        match search(slo, &mut model) {
            Ok(c) => doc.device = Some(c),
            Err(e) => doc.error = Some(format!("the model's search failed: {e}")),
        }
    }
    Some(doc)
}

/// The text lines of the capacity.
pub fn text(doc: &CapacityDoc) -> String {
    let mut out = String::new();
    let k = ssdready_core::units::fmt_count;
    let ms = |ns: u64| ssdready_core::units::fmt_ns(ns as f64);
    let curve = |out: &mut String, who: &str, c: &Capacity| {
        out.push_str(&format!(
            "  load curve ({who}, open loop, latency from the schedule; peak {} IOPS closed loop):\n",
            k(c.peak_iops)
        ));
        for pt in c.points.iter().filter(|p| p.step == "curve") {
            out.push_str(&format!(
                "    offered {:>9} IOPS ({:>3.0} %): carried {:>9}  p50 {:>9}  p99 {:>9}  p99.9 {:>9}  {}\n",
                k(pt.offered_iops),
                100.0 * pt.offered_iops / c.peak_iops,
                k(pt.achieved_iops),
                ms(pt.p50_ns),
                ms(pt.p99_ns),
                ms(pt.p999_ns),
                if pt.meets { "meets" } else { "misses" }
            ));
        }
    };
    out.push_str(&format!(
        "capacity at a latency target ({} on {}):\n",
        doc.what, doc.target
    ));
    if let Some(c) = &doc.platform {
        curve(&mut out, "platform", c);
        out.push_str(&format!("  {}\n", doc.sentence));
    }
    if let Some(c) = &doc.device {
        let d = match c.sustained_iops {
            Some(s) => format!("{} IOPS", k(s)),
            None => "no load".into(),
        };
        out.push_str(&format!(
            "  the device alone (emulator model, virtual time): {d} within the target, peak {} IOPS\n",
            k(c.peak_iops)
        ));
    }
    if let Some(e) = &doc.error {
        out.push_str(&format!("  {e}\n"));
    }
    out
}
