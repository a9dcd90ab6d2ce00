//! What a change can buy, estimated from the study's own measurements
//! before its trial: the order the trials run in, best first, and what
//! an untested change is worth. An estimate is a ranking figure with its
//! source in words, never a result: the trial measures.
//!
//! Each estimate reads one measurement the change acts on:
//! - a large read split into N requests (`max_sectors_kb` below what the
//!   device takes): each request pays the block layer's and the device's
//!   cost per command, N of them instead of one — up to 10 % per extra
//!   request, at most 1000 % (fio's A/B of a 128-way split of 1 MiB reads
//!   gained +570 % on a loop device);
//! - a request queue full at `nr_requests`: the queue-depth curve's growth
//!   over the last doubling below the queue's size, continued for each
//!   doubling the change adds, at most what the device's known limit
//!   leaves — and nothing where the curve kept growing past the queue's
//!   size (the queue did not bind);
//! - the scheduler: its measured cost against `none` in the scheduler
//!   sweep (IOPS lost, as the gain of removing it);
//! - the engine: the engine sweep's gap at the point's depth;
//! - a throttle, quota or cpuset lifted: the headroom between the peak's
//!   rate and the device's own known limit (the model's, or the raw
//!   device's), for the lever that lifts the limit named as what holds
//!   the I/O;
//! - other work: the I/O's threads' measured wait for a CPU, as the rate
//!   they would gain without it.
//!
//! A lever none of these applies to has no estimate: it ranks after the
//! large ones and is never called large.

use super::lever::{Lever, SPLIT_AT_LEAST};
use crate::lever_context::{Candidate, Context, Point};
use crate::lever_values::Gain;
use crate::limit::Cause;
use serde::{Deserialize, Serialize};

/// An estimate from this share up is large: a quick study tries every
/// large one before any other, and the answer never calls the host's
/// figures final while one is untested.
pub const LARGE_PCT: f64 = 25.0;

/// The most an estimate claims.
pub const MOST_PCT: f64 = 1000.0;

/// What a change may buy, percent of the measure it is judged on, and
/// what says so.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub pct: f64,
    /// The measurement it comes from, in words.
    pub from: String,
}

impl Estimate {
    fn new(pct: f64, from: String) -> Option<Estimate> {
        pct.is_finite().then(|| Estimate {
            pct: pct.clamp(0.0, MOST_PCT),
            from,
        })
    }

    /// Whether it is large ([`LARGE_PCT`] or more).
    pub fn large(&self) -> bool {
        self.pct >= LARGE_PCT
    }

    /// `up to +570 % (a large read split into 128 requests)`.
    pub fn words(&self) -> String {
        format!("up to +{:.0} % ({})", self.pct, self.from)
    }
}

/// The estimate its form of values reads (the gain it names), where one
/// does.
pub fn of_values(l: &Lever, cx: &Context, p: &Point, c: &Candidate) -> Option<Estimate> {
    match l.values.as_ref()?.gain()? {
        Gain::Split => split(cx),
        Gain::QueueFull => queue_full(cx, l.attr.as_deref()?, c),
        Gain::Scheduler => scheduler(cx, c),
        Gain::EngineGap => engine_gap(cx, p, c),
        Gain::Headroom => headroom(cx, p),
        Gain::HeadroomIfCause(g) => (Cause::of_group_limit(g) == Some(cx.cause))
            .then(|| headroom(cx, p))
            .flatten(),
    }
}

fn split(cx: &Context) -> Option<Estimate> {
    let n = cx.large_read_split?;
    (n >= SPLIT_AT_LEAST).then_some(())?;
    Estimate::new(
        10.0 * (n - 1.0),
        format!("a large read split into {n:.0} requests"),
    )
}

/// The curve's IOPS at depth `qd` (one thread).
fn at(cx: &Context, qd: u64) -> Option<f64> {
    cx.curve
        .iter()
        .find(|(q, _)| u64::from(*q) == qd)
        .map(|x| x.1)
}

/// `attr`: the queue file of the requests the queue admits.
fn queue_full(cx: &Context, attr: &str, c: &Candidate) -> Option<Estimate> {
    let now: u64 = cx.queue.get(attr)?.trim().parse().ok()?;
    let want: u64 = c.value.parse().ok()?;
    let (full, half) = (at(cx, now)?, at(cx, (now / 2).max(1))?);
    let deepest = cx.curve.iter().max_by_key(|x| x.0)?;
    // The curve kept growing past the queue's size, and nothing shows the
    // queue full: it did not bind. Where the diagnosis named the queue, or
    // found it holding too behind another cause (its positive evidence:
    // the device held about what it admits), or the device's own counters
    // show it full at the peak, it binds, however the curve grew past it
    // (more I/Os in flight still amortise their submissions while they
    // wait for a request).
    let also = cx.facts.contains_key("device_queue_also");
    let binds = cx.cause == Cause::DeviceQueue || also || filled(cx, now);
    if u64::from(deepest.0) > now && deepest.1 > 1.15 * full && !binds {
        return Estimate::new(0.0, format!("the curve grew past QD {now}"));
    }
    let growth = (full / half.max(1.0)).max(1.0);
    // No deeper than the study went: what lies beyond it was not measured.
    let reach = want.min(u64::from(deepest.0).max(now));
    let doublings = (reach as f64 / now.max(1) as f64).log2().max(0.0);
    let mut pct = 100.0 * (growth.powf(doublings) - 1.0);
    if let Some(limit) = cx.device_limit_iops {
        pct = pct.min(100.0 * (limit / full.max(1.0) - 1.0));
    }
    Estimate::new(
        pct,
        format!(
            "the queue full at {now}: the curve grew {:.0} % from QD {} to {now}",
            100.0 * (growth - 1.0),
            (now / 2).max(1)
        ),
    )
}

/// Whether the device held, at the peak, at least 70 % of the requests
/// its queue admits (its own in-flight counter, averaged over the run; a
/// freed request's tag is held a moment after the count drops, so a full
/// small queue reads a little under its size): the queue was full, as
/// the diagnosis of the device's queue reads it.
fn filled(cx: &Context, nr_requests: u64) -> bool {
    cx.facts
        .get("device_in_flight_peak")
        .and_then(|f| f.num())
        .is_some_and(|n| n >= 0.7 * nr_requests as f64)
}

fn scheduler(cx: &Context, c: &Candidate) -> Option<Estimate> {
    (c.value == "none").then_some(())?;
    let (name, qd, cost) = cx
        .scheduler_costs
        .iter()
        .filter(|(_, _, cost)| *cost > 0.0)
        .max_by_key(|x| x.1)?;
    Estimate::new(
        100.0 * cost / (100.0 - cost).max(1.0),
        format!("{name} cost {cost:.0} % of IOPS at QD {qd} against none"),
    )
}

fn engine_gap(cx: &Context, p: &Point, c: &Candidate) -> Option<Estimate> {
    let iops = |e: &str| {
        cx.engines_measured
            .iter()
            .find(|(x, qd, _)| x == e && *qd == p.qd)
            .map(|m| m.2)
    };
    let (own, other) = (iops(p.engine.as_deref()?)?, iops(&c.value)?);
    Estimate::new(
        100.0 * (other / own.max(1.0) - 1.0),
        format!(
            "the engine sweep: {} against {} at QD {}",
            c.value,
            p.engine.as_deref()?,
            p.qd
        ),
    )
}

fn headroom(cx: &Context, p: &Point) -> Option<Estimate> {
    let held = matches!(
        cx.cause,
        Cause::IoThrottle | Cause::CpuQuota | Cause::CpusAllowed
    );
    let (limit, peak) = (cx.device_limit_iops?, cx.peak_iops?);
    held.then_some(())?;
    Estimate::new(
        100.0 * (limit / peak.max(1.0) - 1.0),
        format!(
            "{} held {} at {:.0} IOPS against the device's {:.0}",
            cx.cause.name(),
            p.describe(),
            peak,
            limit
        ),
    )
}

/// The I/O's threads' wait for a CPU, as what other work costs: only
/// where other processes held those CPUs (`other_work_peak`, which counts
/// other work only where it kept the I/O's threads waiting); a wait for
/// the I/O's own threads on too few CPUs is no other work's, and neither
/// priority nor pinning moves it.
pub(crate) fn waited(cx: &Context) -> Option<Estimate> {
    let others = cx.facts.get("other_work_peak").and_then(|f| f.num());
    others.filter(|o| *o >= crate::limit::others::OTHERS_PCT)?;
    let w = cx.cpu_wait_pct.filter(|w| *w >= 10.0)?;
    Estimate::new(
        100.0 * w / (100.0 - w).max(1.0),
        format!("the I/O's threads waited {w:.0} % of their time for a CPU"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::levers::{estimate, shipped};

    /// A measured figure, as the facts hold it.
    fn fact_of(n: f64) -> crate::facts::Fact {
        crate::facts::Fact::of(crate::facts::Value::Num(n), "count", Vec::new())
    }

    fn lever(id: &str) -> Lever {
        shipped().into_iter().find(|l| l.id == id).unwrap()
    }

    fn point(qd: u32) -> Point {
        Point {
            rw: "randread".into(),
            bs: 4096,
            qd,
            threads: 1,
            engine: Some("io_uring".into()),
            direct: true,
            sizes: String::new(),
        }
    }

    fn cand(v: &str) -> Candidate {
        Candidate {
            value: v.into(),
            options: Vec::new(),
        }
    }

    #[test]
    fn a_large_read_split_many_ways_is_a_large_estimate_and_a_split_in_two_a_small_one() {
        let l = lever("max-sectors");
        let mut cx = Context {
            large_read_split: Some(128.0),
            ..Default::default()
        };
        let e = estimate(&l, &cx, &point(8), &cand("1280")).unwrap();
        assert!(e.large() && e.pct == MOST_PCT, "{e:?}");
        assert!(
            e.words().contains("split into 128 requests"),
            "{}",
            e.words()
        );
        cx.large_read_split = Some(2.0);
        let e = estimate(&l, &cx, &point(8), &cand("1280")).unwrap();
        assert!(!e.large(), "{e:?}");
        cx.large_read_split = None;
        assert_eq!(estimate(&l, &cx, &point(8), &cand("1280")), None);
    }

    #[test]
    fn a_full_queue_is_estimated_from_the_curves_last_doubling_and_the_devices_limit() {
        let l = lever("nr-requests");
        let mut cx = Context {
            curve: vec![
                (1, 10e3),
                (2, 19e3),
                (4, 34e3),
                (8, 35e3),
                (16, 35e3),
                (32, 35e3),
            ],
            ..Default::default()
        };
        cx.queue.insert("nr_requests".into(), "4".into());
        // 19K → 34K over the last doubling (+79 %), three doublings to
        // 32, the deepest the study went (not to 64: beyond it nothing was
        // measured).
        let e = estimate(&l, &cx, &point(32), &cand("64")).unwrap();
        assert!((e.pct - 473.0).abs() < 1.0, "{e:?}");
        // The device's limit bounds it: 70K is +106 % over the 34K at the
        // queue's size.
        cx.device_limit_iops = Some(70e3);
        let e = estimate(&l, &cx, &point(32), &cand("64")).unwrap();
        assert!((e.pct - 105.9).abs() < 0.1, "{e:?}");
        // A curve that kept growing past the queue's size: no gain there.
        cx.curve = vec![(2, 19e3), (4, 34e3), (8, 50e3), (16, 60e3)];
        let e = estimate(&l, &cx, &point(16), &cand("64")).unwrap();
        assert_eq!(e.pct, 0.0, "{e:?}");
        // Unless the device's own counters show the queue full at the
        // peak: the queue binds there, the growth past it was the
        // submissions' amortising.
        let fact = |cx: &mut Context, n: f64| {
            let f = fact_of(n);
            cx.facts.insert("device_in_flight_peak".into(), f);
            estimate(&l, cx, &point(16), &cand("64")).unwrap()
        };
        let e = fact(&mut cx, 2.8);
        assert!(e.pct > 25.0, "{e:?}");
        assert_eq!(fact(&mut cx, 2.0).pct, 0.0);
        // Or where the diagnosis found the queue holding too, behind a
        // CPU quota it named first.
        cx.cause = Cause::CpuQuota;
        let also =
            crate::facts::Fact::of(crate::facts::Value::Text("yes".into()), "text", Vec::new());
        cx.facts.insert("device_queue_also".into(), also);
        let e = fact(&mut cx, 2.0);
        assert!(e.pct > 25.0, "{e:?}");
        cx.facts.remove("device_queue_also");
        // Or where the diagnosis named the queue, on its own evidence.
        cx.cause = Cause::DeviceQueue;
        let e = fact(&mut cx, 2.0);
        assert!(e.pct > 25.0, "{e:?}");
    }

    #[test]
    fn the_schedulers_measured_cost_is_what_none_buys_back() {
        let l = lever("scheduler");
        let cx = Context {
            scheduler_costs: vec![("bfq".into(), 1, 5.0), ("bfq".into(), 32, 20.0)],
            ..Default::default()
        };
        let e = estimate(&l, &cx, &point(32), &cand("none")).unwrap();
        assert!((e.pct - 25.0).abs() < 0.1, "{e:?}");
        assert!(e.from.contains("QD 32"), "{}", e.from);
        assert_eq!(estimate(&l, &cx, &point(32), &cand("kyber")), None);
    }

    #[test]
    fn a_lifted_limit_is_worth_its_headroom_only_where_the_limit_holds() {
        let l = lever("io-throttle");
        let mut cx = Context {
            device_limit_iops: Some(100e3),
            peak_iops: Some(8e3),
            cause: Cause::IoThrottle,
            ..Default::default()
        };
        let e = estimate(&l, &cx, &point(32), &cand("outside")).unwrap();
        assert!(e.large(), "{e:?}");
        cx.cause = Cause::Device;
        assert_eq!(estimate(&l, &cx, &point(32), &cand("outside")), None);
        // The quota's lever has none while the throttle is what holds.
        cx.cause = Cause::IoThrottle;
        let q = lever("cpu-quota");
        assert_eq!(estimate(&q, &cx, &point(32), &cand("outside")), None);
        cx.cause = Cause::CpuQuota;
        assert!(estimate(&q, &cx, &point(32), &cand("outside")).is_some());
        cx.cause = Cause::IoThrottle;
        cx.device_limit_iops = None;
        assert_eq!(estimate(&l, &cx, &point(32), &cand("outside")), None);
    }

    #[test]
    fn other_works_cost_is_the_cpu_wait_of_the_ios_threads() {
        let l = lever("priority");
        let mut cx = Context {
            cpu_wait_pct: Some(40.0),
            ..Default::default()
        };
        // The threads waited, but no other process held the CPUs: the
        // I/O's own threads on too few of them; no estimate.
        assert_eq!(estimate(&l, &cx, &point(32), &cand("nice=-10")), None);
        let others = fact_of(60.0);
        cx.facts.insert("other_work_peak".into(), others);
        let e = estimate(&l, &cx, &point(32), &cand("nice=-10")).unwrap();
        assert!((e.pct - 66.7).abs() < 0.1, "{e:?}");
        cx.cpu_wait_pct = Some(3.0);
        assert_eq!(estimate(&l, &cx, &point(32), &cand("nice=-10")), None);
    }
}
