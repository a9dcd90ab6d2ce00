//! Where a lever's limit binds, and whether it could at a trial's point.
//! A limit costs only where it holds something back: a cpuset or a CPU
//! quota what parallel work would take from the CPUs it withholds, a
//! throttle or a request queue what the I/Os in flight would reach without
//! it, `max_sectors_kb` what a read larger than its requests pays, and
//! read-ahead what buffered sequential reads wait for. Each lever is tried
//! at a point where its limit can bind (`at` in the levers table); before
//! its trial [`crate::levers::cannot_bind`] says why it could not at the point resolved
//! (the study then does not try it, and says so), and after it
//! [`did_not_bind`] says why the turns' baseline shows it did not (a
//! throttle whose baseline ran well below its rate: something else held
//! it; a quota lifted while a throttle kept held its baseline at its
//! rate). A trial where the limit could not bind says nothing of the
//! limit: it is reported so and lowers no verdict.
//!
//! "Cannot bind" is never said of a limit that binds once another limit
//! of the study's groups is lifted (a cpuset of one CPU behind a quota of
//! 0.6 CPUs, a quota behind a cpuset): [`hidden_by`] names the limit in
//! front of it, and the study tries it behind the change that lifts that
//! one, the two measured together against the baseline.

use super::lever::Lever;
use super::permanent;
use crate::lever_context::{Context, Point};
use crate::trials::record::{Measured, Outcome, Trial};
use ssdready_measured::group_limits::{self, GroupLimit};
use ssdready_measured::limits::{Inventory, IoLimitKind};

/// A throttle whose trial's baseline ran below this share of its rate did
/// not bind at the trial's point (the throttle finding's own bound).
pub const THROTTLE_BOUND: f64 = 0.8;

/// Whether the point's I/O is reads, and writes.
pub(crate) fn directions(rw: &str) -> (bool, bool) {
    let mixed = rw.ends_with("rw") || rw == "readwrite";
    (rw.contains("read") || mixed, rw.contains("write") || mixed)
}

/// Why a limit of the study's groups cannot bind at `p`: a quota that
/// allows as many CPUs as the point's threads can use on the CPUs kept, a
/// cpuset that allows as many as the point's threads (or the quota kept)
/// can use, a throttle that counts none of the point's I/O.
pub fn group_cannot_bind(g: GroupLimit, inv: &Inventory, p: &Point) -> Option<String> {
    cannot_bind_without(g, inv, p, None)
}

/// The limit in front of `l`'s that hides it at `p`: a limit of the study's
/// groups that holds, without which `l`'s would bind where now it cannot;
/// with why it cannot bind while that one holds.
pub fn hidden_by(l: &Lever, cx: &Context, p: &Point) -> Option<(GroupLimit, String)> {
    let g = l.lift()?;
    let inv = cx.limits.as_ref()?;
    let why = cannot_bind_without(g, inv, p, None)?;
    group_limits::held(inv)
        .into_iter()
        .filter(|f| *f != g)
        .find(|f| cannot_bind_without(g, inv, p, Some(*f)).is_none())
        .map(|f| (f, why))
}

/// `1 thread`, `2 threads`.
fn counted(n: usize, one: &str) -> String {
    match n {
        1 => format!("1 {one}"),
        n => format!("{n} {one}s"),
    }
}

/// [`group_cannot_bind`] with the limit `lifted` (if any) lifted.
fn cannot_bind_without(
    g: GroupLimit,
    inv: &Inventory,
    p: &Point,
    lifted: Option<GroupLimit>,
) -> Option<String> {
    let online = inv.cpus.online.len().max(1);
    let threads = p.threads.max(1) as usize;
    let kept = |l: GroupLimit| lifted != Some(l);
    let cpuset = group_limits::restricting_cpuset(inv)
        .filter(|_| kept(GroupLimit::Cpuset))
        .map(|s| s.cpus.len());
    let quota = group_limits::tightest_quota(inv)
        .filter(|_| kept(GroupLimit::CpuQuota))
        .map(|q| q.cpus);
    match g {
        GroupLimit::CpuQuota => {
            let q = quota?;
            let cpus = cpuset.unwrap_or(online);
            let reach = threads.min(cpus);
            (reach as f64 <= q + 1e-9).then(|| {
                format!(
                    "the quota allows {q:.2} CPUs, and {} can use no more than {reach}: {} on the {} allowed",
                    p.describe(),
                    counted(threads, "thread"),
                    counted(cpus, "CPU")
                )
            })
        }
        GroupLimit::Cpuset => {
            let k = cpuset?;
            let mut reach = threads.min(online) as f64;
            let by_quota = quota.filter(|q| *q < reach);
            if let Some(q) = by_quota {
                reach = q;
            }
            (reach <= k as f64 + 1e-9).then(|| match by_quota {
                Some(q) => format!(
                    "the CPU quota kept allows {q:.2} CPUs, no more than the cpuset's {k}: the cpuset binds only once the quota is lifted"
                ),
                None => format!(
                    "{} runs {}, no more than the cpuset's {}",
                    p.describe(),
                    counted(threads, "thread"),
                    counted(k, "CPU")
                ),
            })
        }
        GroupLimit::IoThrottle => {
            let (reads, writes) = directions(&p.rw);
            let counted = inv.effective_io_throttles().iter().any(|t| {
                if is_read(t.kind) {
                    reads
                } else {
                    writes
                }
            });
            (!counted).then(|| format!("the throttle counts none of {}'s I/O", p.describe()))
        }
        GroupLimit::IoLatency | GroupLimit::IoWeight => None,
    }
}

fn is_read(k: IoLimitKind) -> bool {
    matches!(k, IoLimitKind::ReadIops | IoLimitKind::ReadBps)
}

/// The tightest throttle on the point's I/O, in I/Os per second at its
/// block size.
pub fn throttle_iops(inv: &Inventory, p: &Point) -> Option<f64> {
    let (reads, writes) = directions(&p.rw);
    inv.effective_io_throttles()
        .iter()
        .filter(|t| if is_read(t.kind) { reads } else { writes })
        .map(|t| match t.kind {
            IoLimitKind::ReadIops | IoLimitKind::WriteIops => t.value as f64,
            _ => t.value as f64 / p.bs.max(1) as f64,
        })
        .min_by(f64::total_cmp)
}

/// Whether a throttle counts every direction of the point's I/O (a
/// write throttle holds none of a mix's reads).
fn throttled_whole(inv: &Inventory, p: &Point) -> bool {
    let (reads, writes) = directions(&p.rw);
    let of = |read: bool| {
        inv.effective_io_throttles()
            .iter()
            .any(|t| is_read(t.kind) == read)
    };
    (!reads || of(true)) && (!writes || of(false))
}

/// Why a trial's limit did not bind at its point, from its turns: a
/// throttle lifted whose baseline ran below [`THROTTLE_BOUND`] of its
/// rate (something else held the I/O there); a quota or a cpuset lifted
/// while a throttle kept of all of the point's I/O held the baseline at
/// [`THROTTLE_BOUND`] of its rate or more (the throttle holds the I/O
/// whatever the CPUs do), unless lifting it bought beyond the noise.
pub fn did_not_bind(l: &Lever, cx: &Context, t: &Trial) -> Option<String> {
    let g = l.lift()?;
    let inv = cx.limits.as_ref()?;
    if t.turns.is_empty() {
        return None;
    }
    let limit = throttle_iops(inv, &t.point)?;
    let base = t.turns.iter().map(|x| x.baseline.iops).sum::<f64>() / t.turns.len() as f64;
    match g {
        GroupLimit::IoThrottle => (base > 0.0 && base < THROTTLE_BOUND * limit).then(|| {
            format!(
                "its baseline ran at {base:.0} IOPS, below the throttle's {limit:.0}: something else held the I/O at this point"
            )
        }),
        // A quota that bought beyond the noise bound; and one behind a
        // throttle of only some of the point's I/O binds on the rest.
        GroupLimit::CpuQuota | GroupLimit::Cpuset
            if t.outcome == Outcome::Better || !throttled_whole(inv, &t.point) =>
        {
            None
        }
        GroupLimit::CpuQuota | GroupLimit::Cpuset => (base >= THROTTLE_BOUND * limit).then(|| {
            format!(
                "the I/O throttle kept held its baseline at {base:.0} IOPS (its rate {limit:.0}): {} could not bind while it holds",
                g.words()
            )
        }),
        GroupLimit::IoLatency | GroupLimit::IoWeight => None,
    }
}

/// What a trial's turns say beyond its gains, for the device study's
/// trials and the job's: whether its limit bound at its point
/// ([`did_not_bind`]), and for a limit of the study's groups how to lift
/// it for good — its unit's property and its cgroupfs write, raised to
/// what the changed runs reached on average.
pub fn after_turns(trial: &mut Trial, l: &Lever, cx: &Context) {
    trial.unbound = did_not_bind(l, cx, trial);
    let (Some(g), Some(inv)) = (l.lift(), cx.limits.as_ref()) else {
        return;
    };
    let n = trial.turns.len().max(1) as f64;
    let mean =
        |f: &dyn Fn(&Measured) -> f64| trial.turns.iter().map(|t| f(&t.change)).sum::<f64>() / n;
    let reached = permanent::Reached {
        iops: mean(&|m| m.iops),
        bw_bytes_per_s: mean(&|m| m.bw_bytes_per_s),
        threads: trial.point.threads,
        mixed: directions(&trial.point.rw) == (true, true),
    };
    let reached = (!trial.turns.is_empty()).then_some(&reached);
    let lines = permanent::lines(g, inv, reached);
    if !lines.is_empty() {
        trial.permanent = lines.join("\n");
    }
}

#[cfg(test)]
#[path = "binding_tests.rs"]
mod tests;
