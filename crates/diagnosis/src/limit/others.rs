//! The CPUs the study may use, and whose work fills them: the I/O path's
//! own ([`io_path_cpu`]: what each I/O costs in CPU sets the rate), or
//! other processes' work on the CPUs the study may use, named by what it
//! costs the I/O, never by what it is. The only positive evidence is time
//! the study's own threads on the I/O's path — its submitting threads, the
//! drive's daemon's serving threads — spent ready to run with no CPU to run
//! on (their run-queue wait, `/proc/PID/task/TID/schedstat`), a real share
//! of the run, while other processes' work kept the CPUs busy.
//!
//! Not evidence: busy CPUs, or other processes' share of them. Work at a
//! lower priority fills every idle moment and mostly gives way at once; on
//! a virtual machine it can even keep the vCPUs from halting, and the I/O
//! gains (two `SCHED_IDLE` loops beside fio on a RAM loop device: 194K
//! IOPS without them, 215K with them; two beside fio on a cloud VM: 123.7K
//! alone, 126.3K with them). So `SCHED_IDLE` work's CPU time is not
//! counted, and where the study's own threads on the I/O's path are as
//! many as the CPUs (they keep each other waiting), only work at their own
//! priority is (two loops at nice 10 beside such a job: fio 19 % faster
//! with them) — unless the I/O's own work is too small to have kept its
//! submitting thread waiting that long ([`SHORT_BY`]): then the wait is
//! other work's whatever its priority (on another 2-vCPU machine the same
//! loops took 54 % and 59 % from fio). Nor the kernel's threads' waits: on
//! a machine with few CPUs they wait for each other and for the submitting
//! thread as long with no other work as with it.
//!
//! A policy or nice value lowers a thread only within its scheduling
//! group (its CPU cgroup, or its session's autogroup at the root): the
//! scheduler shares a CPU among groups by their weights first. Work in
//! another group than the study's threads
//! ([`ssdready_core::result::ThreadUse::apart`]) is weighed as work at the
//! I/O's own priority: two `SCHED_IDLE` loops in a session of their own
//! took 34–61 % of a RAM loop device's IOPS from fio on 2 vCPUs, two at
//! nice 10 32–64 %, as two at nice 0 did (27–64 %).

use super::configured::{backing_waits, wait_words, CPUS_BUSY_PCT, OWN_SHARE_PCT, WAIT_PCT};
use super::found::{pct, Found, Test};
use super::view::{Shared, View};
use ssdready_measured::summary::{busy_other, BUSY_CPUS};

/// The study's own threads on the I/O's path waited at least this share of
/// the run for a CPU.
pub const IO_WAIT_PCT: f64 = 10.0;
/// Other processes took at least this share of the busy CPUs: the CPUs
/// the I/O's threads waited for were busy with others' work, not only
/// with the I/O's own.
pub const OTHERS_PCT: f64 = 25.0;

/// Whether other processes' work held the I/O: the CPUs busy, other
/// processes a good part of it, the study's own threads on the I/O's path
/// kept waiting for one a real share of the run, and that wait theirs to
/// answer for ([`took_nothing`] finds no reason against it).
pub fn others_held(v: &View) -> bool {
    v.cpus_busy.is_some_and(|b| b >= CPUS_BUSY_PCT)
        && v.others_share().is_some_and(|o| o >= OTHERS_PCT)
        && v.io_wait().is_some_and(|w| w >= IO_WAIT_PCT)
        && took_nothing(v).is_none()
}

/// CPUs' worth of the busiest other processes' threads whose policy
/// matches `lower`.
fn cpus_where(v: &View, lower: fn(&ssdready_core::result::ThreadUse) -> bool) -> f64 {
    v.busiest
        .iter()
        .filter(|t| !t.kernel && lower(t))
        .map(|t| t.cpus)
        .sum()
}

/// `SCHED_IDLE` in the I/O's own scheduling group: in a group apart it
/// competes at its group's weight ([`ssdready_core::result::ThreadUse::apart`]).
fn sched_idle(t: &ssdready_core::result::ThreadUse) -> bool {
    !t.apart && t.policy.as_deref() == Some("SCHED_IDLE")
}

/// Below the I/O's threads, in their group, but not `SCHED_IDLE`: a
/// positive nice value, or `SCHED_BATCH`.
fn niced_lower(t: &ssdready_core::result::ThreadUse) -> bool {
    !t.apart
        && !sched_idle(t)
        && (t.policy.as_deref() == Some("SCHED_BATCH") || t.nice.is_some_and(|n| n > 0))
}

/// Why other processes' CPU time, though the I/O's threads waited, took
/// nothing from them: without `SCHED_IDLE` work (which gives way to any
/// other thread at once) other processes kept less than [`OTHERS_PCT`] of
/// the busy CPUs; or the study's own threads on the I/O's path were as
/// many as the CPUs, so they kept each other waiting, and the other work
/// that could take a CPU from them ran at a lower priority. None where
/// the wait is other processes' to answer for.
fn took_nothing(v: &View) -> Option<String> {
    if own_work_cannot_explain(v).is_some() {
        return None;
    }
    let busy = v.guest_busy_cpus().filter(|b| *b > 0.0)?;
    let others = v.others_cpus.unwrap_or(v.others_share()? / 100.0 * busy);
    let idle = cpus_where(v, sched_idle).min(others);
    let preempting = 100.0 * (others - idle) / busy;
    if preempting < OTHERS_PCT {
        return Some(format!(
            "{} of it SCHED_IDLE work, which gives way to the I/O's threads at once; without it other processes kept {} of the busy CPUs: no evidence they took a CPU from the I/O",
            pct(100.0 * idle / busy),
            pct(preempting)
        ));
    }
    let own = v.run.workload.threads.max(1) as u64 + v.daemon_threads.unwrap_or(0);
    let normal = 100.0 * (others - idle - cpus_where(v, niced_lower)).max(0.0) / busy;
    (own >= v.cpus_n as u64 && normal < OTHERS_PCT).then(|| {
        format!(
            "the I/O's own {own} threads on {} CPU(s) keep each other waiting, and the other work that could take a CPU from them ran at a lower priority (a positive nice value or SCHED_BATCH; at the I/O's own priority only {}): no evidence it took a CPU from the I/O",
            v.cpus_n,
            pct(normal)
        )
    })
}

/// The I/O's own work falls short of what its thread's wait needs by this
/// factor (and by [`SHORT_CPUS`]) before the wait is others' whatever
/// their priority: room for a run queue's imbalance between CPUs.
pub const SHORT_BY: f64 = 1.25;
/// ... and by at least this many CPUs' worth.
pub const SHORT_CPUS: f64 = 0.1;

/// Why the I/O's own work cannot have kept its submitting thread waiting,
/// by the scheduler's conservation of work: a thread waits on a run queue
/// only while every CPU it may use runs another. Had they all run the
/// I/O's own work, that work would have used at least the CPUs times the
/// thread's wait, plus the thread's own time (a job of one thread: the
/// busiest is the one that waited). Where it used clearly less, other work
/// held those CPUs, whatever its priority: `SCHED_IDLE` and nice-10 loops
/// on a 2-vCPU virtual machine's CPUs took 54 % and 59 % of a RAM loop
/// device's IOPS from fio (457K alone; 213K and 191K beside two), the
/// submitting thread waiting 38 % of the run with its own work at 0.76
/// CPUs. None where the figures are missing or the bound is met.
fn own_work_cannot_explain(v: &View) -> Option<String> {
    let wait = v.thread_wait_run? / 100.0;
    let own = v.io_cpus()?;
    let busy = match v.run.workload.threads {
        0 | 1 => v.thread_busy.unwrap_or(0.0) / 100.0,
        _ => 0.0,
    };
    let needed = v.cpus_n as f64 * wait + busy;
    (needed >= SHORT_BY * own && needed - own >= SHORT_CPUS).then(|| {
        format!(
            "kept waiting by its own work alone, the submitting thread ({} of the run waiting, {} running) needs that work at {needed:.2} CPUs or more on {} CPU(s), and it used {own:.2}: other work held the CPUs, whatever its priority",
            pct(100.0 * wait),
            pct(100.0 * busy),
            v.cpus_n
        )
    })
}

/// Every CPU the study may use busy, most of it with the I/O's own work:
/// what each I/O costs in CPU on this path, across the machine, sets the
/// rate.
pub fn io_path_cpu(sh: &Shared, v: &View) -> Test {
    if sh.caps.cpus.is_some() {
        return Test::No("the study may use only some CPUs: weighed as the CPUs allowed".into());
    }
    let (Some(busy), Some(own)) = (v.cpus_busy, v.own_share()) else {
        return Test::No("no CPU figures".into());
    };
    // The I/O's own work is most of the busy time, or more of it than other
    // processes' and the I/O's threads still waited for a CPU (the rest
    // being interrupts and softirqs taken on idle CPUs, which no thread's
    // time shows).
    let others = v.others_share().unwrap_or(100.0 - own);
    let mostly_own =
        own >= OWN_SHARE_PCT || (others < own && v.cpu_wait().is_some_and(|w| w >= WAIT_PCT));
    if busy < CPUS_BUSY_PCT || !mostly_own {
        return Test::No(format!(
            "the CPUs were {} busy, {} of it the I/O's own work, {} other processes'",
            pct(busy),
            pct(own),
            pct(others)
        ));
    }
    let io = v.io_cpus().unwrap_or(0.0);
    let per_io_us = (v.iops > 0.0).then(|| 1e6 * io / v.iops);
    let all_us = v
        .run
        .summary
        .cpu
        .as_ref()
        .map(|c| c.system_ns_per_io / 1e3)
        .filter(|u| *u > 0.0);
    let mut evidence = vec![format!(
        "the {} CPU(s) were {} busy, {} of it the I/O's own work: ssdready's threads {:.2} CPUs, the kernel's threads {:.2}{}",
        v.cpus_n,
        pct(busy),
        pct(own),
        v.process_cpus.unwrap_or(0.0),
        v.kernel_cpus.unwrap_or(0.0),
        match v.daemon_cpus() {
            d if d > 0.0 => format!(", the drive's daemon {d:.2}"),
            _ => String::new(),
        }
    )];
    if let Some(b) = busiest_words(v, true) {
        evidence.push(b);
    }
    evidence.extend(wait_words(v));
    Test::Holds(Found {
        part: match (per_io_us, all_us) {
            (Some(us), Some(all)) => format!(
                "each I/O costs {us:.1} µs of CPU in the threads on its path (ssdready's and the kernel's), {all:.1} µs of the whole machine's busy time"
            ),
            (Some(us), None) => format!(
                "each I/O costs {us:.1} µs of CPU in the threads on its path (ssdready's and the kernel's)"
            ),
            _ => "the I/O's own work fills the CPUs".into(),
        },
        evidence,
        setting: None,
        margin_pct: Some(100.0 * (busy - CPUS_BUSY_PCT) / CPUS_BUSY_PCT),
    })
}

/// Other processes' work on the CPUs, where the study may use them all:
/// the CPUs busy, other processes at least [`OTHERS_PCT`] of it, and the
/// study's own threads on the I/O's path waiting at least [`IO_WAIT_PCT`]
/// of the run for a CPU. Where they hardly waited, other processes' CPU
/// time is not a limit, whatever its share.
pub fn other_work(sh: &Shared, v: &View) -> Test {
    if sh.caps.cpus.is_some() {
        return Test::No("the study may use only some CPUs: weighed as the CPUs allowed".into());
    }
    let (Some(busy), Some(others)) = (v.cpus_busy, v.others_share()) else {
        return Test::No("no CPU figures".into());
    };
    // A loop device's disk busy with its I/Os and holding their time: the
    // disk, not a CPU, is what they waited for.
    if let Some(disk) = backing_waits(sh, v) {
        return Test::No(disk);
    }
    if busy < CPUS_BUSY_PCT {
        return Test::No(format!(
            "the CPUs it may use were {} busy, {} of it other processes' work",
            pct(busy),
            pct(others)
        ));
    }
    let named = top_others(v).map_or(String::new(), |t| format!(" ({t})"));
    let Some(wait) = v.io_wait() else {
        return Test::No(format!(
            "other processes took {} of the busy CPUs{named}, but no run-queue wait was read for the I/O's threads: their CPU time alone is no evidence",
            pct(others)
        ));
    };
    if wait < IO_WAIT_PCT {
        return Test::No(format!(
            "other processes took {} of the busy CPUs{named}, but the I/O's threads waited {} of the run for a CPU: their CPU time is not a limit here",
            pct(others),
            pct(wait)
        ));
    }
    if others < OTHERS_PCT {
        return Test::No(format!(
            "the I/O's threads waited {} of the run for a CPU, but other processes took only {} of the busy CPUs: the I/O's own work kept them waiting",
            pct(wait),
            pct(others)
        ));
    }
    if let Some(why) = took_nothing(v) {
        return Test::No(format!(
            "the I/O's threads waited {} of the run for a CPU and other processes took {} of the busy CPUs{named}, {why}",
            pct(wait),
            pct(others)
        ));
    }
    Test::Holds(Found {
        part: format!(
            "other processes kept {} waiting for a CPU {} of the run, on CPUs {} busy, {} of it their work{named}",
            held_words(v),
            pct(wait),
            pct(busy),
            pct(others)
        ),
        evidence: evidence(sh, v, busy, others),
        setting: None,
        margin_pct: Some(100.0 * (wait - IO_WAIT_PCT) / IO_WAIT_PCT),
    })
}

/// What other work held the I/O with: the CPUs' time, the waits, who.
fn evidence(sh: &Shared, v: &View, busy: f64, others: f64) -> Vec<String> {
    let mut evidence = vec![format!(
        "the {} CPU(s) it may use were {} busy; the I/O's own work used {:.2} CPUs of that, other processes {}",
        v.cpus_n,
        pct(busy),
        v.io_cpus().unwrap_or(0.0),
        pct(others)
    )];
    evidence.extend(io_wait_words(v));
    if let Some(b) = busiest_words(v, false) {
        evidence.push(b);
    }
    if let Some(short) = own_work_cannot_explain(v) {
        evidence.push(short);
    } else if lower_priority(v) {
        evidence.push("work at a lower priority in the I/O's own scheduling group (SCHED_IDLE, SCHED_BATCH or a positive nice value) is among them: SCHED_IDLE work is not counted (it gives way at once), the rest still kept the I/O's threads from a CPU".into());
    }
    if let Some(b) = sh.machine.background_busy_pct.filter(|b| *b >= 10.0) {
        evidence.push(format!(
            "other work kept the CPUs {} busy before the study began",
            pct(b)
        ));
    }
    evidence
}

/// `the submitting thread waited 24 % of the run for a CPU…`, and the
/// drive's daemon's serving threads' wait where it was read; the kernel's
/// threads' wait, said as theirs, decides nothing.
fn io_wait_words(v: &View) -> Vec<String> {
    let mut words = Vec::new();
    let estimated = v
        .run
        .summary
        .cpu
        .as_ref()
        .is_some_and(|c| c.thread_wait_run_pct.is_none());
    if let Some(w) = v.thread_wait_run {
        words.push(format!(
            "the submitting thread waited {} of the run on a run queue for a CPU ({}/proc/PID/task/TID/schedstat)",
            pct(w),
            if estimated {
                "estimated from its share of its ready time; "
            } else {
                ""
            }
        ));
    }
    if let Some(k) = v.kernel_wait {
        words.push(format!(
            "the kernel's threads waited {} of their ready time, not weighed: on few CPUs they wait for each other and for the submitting thread with no other work too",
            pct(k)
        ));
    }
    if let Some(d) = v.daemon_wait_run {
        let per_io = v
            .run
            .summary
            .transport
            .as_ref()
            .and_then(|t| t.wait_ns_per_io);
        words.push(format!(
            "the drive's daemon's serving threads waited {} of the run for a CPU ({}{}their /proc/PID/task/TID/schedstat)",
            pct(d),
            v.daemon_wait
                .map_or(String::new(), |r| format!("{} of their ready time, ", pct(r))),
            per_io.map_or(String::new(), |ns| format!("{:.1} µs per I/O; ", ns / 1e3))
        ));
    }
    words
}

/// Whose wait other work is named for: the drive's daemon's threads where
/// they waited more than the submitting ones, else the I/O's threads.
fn held_words(v: &View) -> &'static str {
    match (v.thread_wait_run, v.daemon_wait_run) {
        (t, Some(d)) if t.is_none_or(|t| d > t) => "the drive's daemon's threads",
        _ => "the I/O's threads",
    }
}

/// `yes (pid 9, SCHED_IDLE, nice 19), rustc (pid 12)`: the busiest other
/// processes, each once.
fn top_others(v: &View) -> Option<String> {
    let each: Vec<String> = once_each(v.busiest.iter().filter(|t| busy_other(t)))
        .map(thread_label)
        .collect();
    (!each.is_empty()).then(|| each.join(", "))
}

/// The first three threads of `threads` of distinct processes: a process
/// named once, by its first (busiest) thread.
fn once_each<'a>(
    threads: impl Iterator<Item = &'a ssdready_core::result::ThreadUse>,
) -> impl Iterator<Item = &'a ssdready_core::result::ThreadUse> {
    let mut seen: Vec<u32> = Vec::new();
    threads
        .filter(move |t| {
            let new = !seen.contains(&t.pid);
            seen.push(t.pid);
            new
        })
        .take(3)
}

/// A thread as named with its policy and nice value where they are not
/// the default's: `yes (pid 9, SCHED_IDLE, nice 19)`.
fn thread_label(t: &ssdready_core::result::ThreadUse) -> String {
    let mut s = format!("{} (pid {}", t.name, t.pid);
    if let Some(p) = t.policy.as_deref().filter(|p| *p != "SCHED_OTHER") {
        s.push_str(&format!(", {p}"));
    }
    if let Some(n) = t.nice.filter(|n| *n != 0) {
        s.push_str(&format!(", nice {n}"));
    }
    if t.apart {
        s.push_str(", another scheduling group");
    }
    s.push(')');
    s
}

/// The busy other processes at a lower priority within the study's own
/// scheduling group (`SCHED_IDLE`, `SCHED_BATCH` or a positive nice
/// value), each once with its CPUs (`sh (pid 9, nice 10) 0.44 CPUs`):
/// work that gives way to the study's threads, but not to a process in a
/// group of its own, as each of fio's job processes is (it starts a
/// session, hence an autogroup, of its own). None where there is none.
pub fn lower_in_own_group<'a>(
    busiest: impl IntoIterator<Item = &'a ssdready_core::result::ThreadUse>,
) -> Option<String> {
    let lower = busiest
        .into_iter()
        .filter(|t| busy_other(t) && (sched_idle(t) || niced_lower(t)));
    let each: Vec<String> = once_each(lower)
        .map(|t| format!("{} {:.2} CPUs", thread_label(t), t.cpus))
        .collect();
    (!each.is_empty()).then(|| each.join(", "))
}

/// Whether the busiest other processes ran at a lower priority than the
/// I/O's threads, in their scheduling group.
fn lower_priority(v: &View) -> bool {
    v.busiest
        .iter()
        .filter(|t| busy_other(t))
        .any(|t| sched_idle(t) || niced_lower(t))
}

/// `busiest: kworker/u8:2+loop0 0.71 CPUs, yes (pid 9, SCHED_IDLE, nice
/// 19) 0.40 CPUs` (kernel threads only, or other processes only).
pub fn busiest_words(v: &View, kernel: bool) -> Option<String> {
    let each: Vec<String> = v
        .busiest
        .iter()
        .filter(|t| t.kernel == kernel && t.cpus >= BUSY_CPUS)
        .map(|t| match kernel {
            true => format!("{} {:.2} CPUs", t.name, t.cpus),
            false => format!("{} {:.2} CPUs", thread_label(t), t.cpus),
        })
        .collect();
    (!each.is_empty()).then(|| {
        format!(
            "busiest {}: {}",
            if kernel {
                "kernel threads"
            } else {
                "other processes"
            },
            each.join(", ")
        )
    })
}
