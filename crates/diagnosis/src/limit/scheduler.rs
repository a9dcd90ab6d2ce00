//! The device's I/O scheduler as what holds a point: its cost at depth
//! against `none`, measured in turns, or its share of the busy CPU in an
//! instrumented run; never where the device held the I/Os while the host
//! idled (the scheduler then passed them on as fast as they went).

use super::configured::DEVICE_BUSY_PCT;
use super::found::{cost_beyond_error, pct, Found, Test};
use super::path::{busy_host, margin, AT_DEVICE_PCT};
use super::view::{Shared, View};

/// The scheduler's measured cost at depth, or its share of busy CPU. On
/// a loop device at QD 64 × 2 with libaio (one `io_getevents` per I/O,
/// as fio) the io-scheduler layer took 10–11 % of the busy CPU under
/// mq-deadline and kyber and 17–26 % under bfq, which fio's turns
/// measured at +46 to +65 % for none.
pub const SCHED_COST_PCT: f64 = 10.0;
pub const SCHED_LAYER_PCT: f64 = 15.0;
/// The device's scheduler's cost at depth (QD 32 and deeper) against
/// `none`, measured in turns beyond twice its error, percent.
pub fn scheduler_cost(sh: &Shared) -> Option<f64> {
    let at_depth = sh
        .comparisons
        .schedulers
        .iter()
        .filter(|c| c.qd >= 32 && Some(&c.scheduler) == sh.target.scheduler.as_ref());
    cost_beyond_error(at_depth.map(|c| (c.cost_pct, c.cost_err_pct)))
}

/// The I/O scheduler: its measured cost at depth against `none`, beyond
/// the comparison's error, or its share of the busy CPU — unless, at this
/// point, the device held the I/Os and the host idled ([`passed_on`]).
pub fn scheduler(sh: &Shared, v: &View) -> Test {
    let t = sh.target;
    let cost = scheduler_cost(sh);
    let layer = sh
        .profile
        .and_then(|p| p.layers.iter().find(|l| l.0 == "io-scheduler"))
        .map(|l| l.1);
    let by_cost = cost.filter(|c| *c >= SCHED_COST_PCT);
    let by_layer = layer.filter(|l| *l >= SCHED_LAYER_PCT);
    // What would name it, as said where the device was full and the host
    // idle: the scheduler then passed the I/Os on as fast as they went.
    let held = match (by_cost, by_layer) {
        (Some(c), _) => format!(
            "none's {} more IOPS at QD 32, in turns, is a cost where the device still took more",
            pct(c)
        ),
        (None, Some(l)) => format!(
            "its {} of the busy CPU is the cost of a host that idled",
            pct(l)
        ),
        (None, None) => return Test::No(not_held(sh, cost)),
    };
    if let Some(why) = passed_on(v) {
        return Test::No(format!(
            "{why}: the scheduler passed them on as fast as the device took them ({held})"
        ));
    }
    let mut evidence = Vec::new();
    if let Some(c) = by_cost {
        evidence.push(format!(
            "none gives {} more IOPS at QD 32 and deeper, in turns",
            pct(c)
        ));
    }
    if let Some(l) = by_layer {
        evidence.push(format!(
            "{} of the busy CPU in the io-scheduler layer",
            pct(l)
        ));
    }
    Test::Holds(Found {
        part: format!(
            "{} on {}",
            t.scheduler.clone().unwrap_or_default(),
            t.device.clone().unwrap_or_default()
        ),
        evidence,
        setting: t.device.as_ref().map(|d| super::caps::Setting {
            name: "queue/scheduler".into(),
            value: t.scheduler.clone().unwrap_or_default(),
            path: format!("/sys/block/{d}/queue/scheduler"),
        }),
        margin_pct: by_cost
            .and_then(|c| margin(c, SCHED_COST_PCT))
            .or_else(|| by_layer.and_then(|l| margin(l, SCHED_LAYER_PCT))),
    })
}

/// Why a scheduler with neither a cost at depth nor a share of the CPU to
/// show held nothing: the deepest comparison as measured, its error
/// included, or no scheduler at all.
fn not_held(sh: &Shared, cost: Option<f64>) -> String {
    let t = sh.target;
    let measured = sh
        .comparisons
        .schedulers
        .iter()
        .filter(|c| Some(&c.scheduler) == t.scheduler.as_ref())
        .filter_map(|c| Some((c.qd, c.cost_pct?, c.cost_err_pct)))
        .max_by_key(|c| c.0);
    match (&t.scheduler, cost, measured) {
        (Some(s), Some(c), _) if s != "none" => {
            format!("{s} costs {} at depth against none", pct(c))
        }
        (Some(s), None, Some((qd, c, e))) if s != "none" => format!(
            "{s} costs {} ± {} against none at QD {qd}, in turns: not beyond twice its error",
            pct(c),
            pct(e.unwrap_or(0.0))
        ),
        (Some(s), _, _) => format!("the device's scheduler is {s}; no cost measured at depth"),
        _ => "the device has no I/O scheduler to weigh".into(),
    }
}

/// Positive evidence that a scheduler whose cost (measured at a shallower
/// depth) or share of the CPU would name it did not hold this point: the device held most of the
/// I/Os in flight and was busy nearly all the time, while the host idled
/// (a scheduler that held the rate would keep the I/Os from the device,
/// or keep the CPUs busy paying for its work). In words.
fn passed_on(v: &View) -> Option<String> {
    let (d, at) = (v.disk?, v.at_device_pct()?);
    let full = at >= AT_DEVICE_PCT && d.util_pct >= DEVICE_BUSY_PCT;
    (full && busy_host(v).is_none()).then(|| {
        format!(
            "{} held {:.1} of the {} I/Os in flight and was busy {} of the time, while the submitting thread was {} busy and the CPUs it may use {}",
            d.name,
            d.in_flight.unwrap_or(0.0),
            v.in_flight,
            pct(d.util_pct),
            v.thread_busy.map_or("?".into(), pct),
            v.cpus_busy.map_or("?".into(), pct),
        )
    })
}
