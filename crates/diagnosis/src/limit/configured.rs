//! The candidates the machine's configuration sets: a cgroup I/O throttle,
//! a CPU quota, the CPUs the study may use (other processes' work on them
//! is [`super::others`]'s), the CPU the I/O's own path costs, the
//! device's request queue and the size of its requests. Each holds only
//! with positive evidence from the run itself — the rate at the
//! throttle's value, the group stopped by its quota, the allowed CPUs
//! busy, the device holding no more requests than its queue admits, or
//! completing several requests for each I/O — never from the setting
//! alone.

use super::caps::{Caps, QueueCap};
use super::found::{pct, Found, Test};
use super::view::{Shared, View};
use ssdready_core::units::fmt_count;

/// A thread busy under this share of the time is mostly idle: where it
/// fills a queue it sleeps for each free slot, and where it submits, the
/// submission path cannot be what holds the I/O.
pub const IDLE_THREAD_PCT: f64 = 70.0;

/// A throttle holds when the rate is within this band of its value. Above
/// it, for a run of a second or so: blk-throttle grants its budget in
/// slices (100 ms), and a run that starts with a fresh slice gets a burst.
pub const THROTTLE_LOW: f64 = 0.8;
pub const THROTTLE_HIGH: f64 = 1.25;
/// The CPU group was stopped in at least this share of its periods.
pub const QUOTA_THROTTLED_PCT: f64 = 20.0;
/// Or it used at least this share of its quota.
pub const QUOTA_USED: f64 = 0.85;
/// The CPUs the study may use were at least this busy.
pub const CPUS_BUSY_PCT: f64 = 90.0;
/// The I/O's own share of that busy time, at least (else: other work).
pub const OWN_SHARE_PCT: f64 = 50.0;
/// CPUs a cpuset or an affinity allows are also its limit when at least
/// this busy, the study's own process filling `ALLOWED_FILLED_PCT` of them:
/// what is left idle are the moments its thread waits for completions
/// that the kernel's workers finish on CPUs outside the set (a one-CPU
/// cpuset over a RAM loop device: CPU 0 72 % busy, 68–70 % of it the
/// study's thread). Whether lifting the set gains is the trial's to say.
pub const ALLOWED_BUSY_PCT: f64 = 70.0;
pub const ALLOWED_FILLED_PCT: f64 = 60.0;
/// The I/O's threads were kept from a CPU: of the time they were ready to
/// run, they waited at least this share on a run queue. Busy CPUs alone
/// are no evidence: work of a lower priority fills every idle moment
/// without keeping anyone waiting.
pub const WAIT_PCT: f64 = 20.0;

/// Whether the submitting threads were kept from a CPU (true where the
/// run has no waits to show it either way: a record made before they were
/// read).
pub fn kept_waiting(v: &View) -> bool {
    v.cpu_wait().is_none_or(|w| w >= WAIT_PCT)
}

/// `the submitting thread waited 34 % of the time it was ready to run…`,
/// and the drive's daemon's threads' wait where it was read.
pub(super) fn wait_words(v: &View) -> Vec<String> {
    let mut words: Vec<String> = v
        .cpu_wait()
        .map(|w| format!(
            "the submitting thread waited {} of the time it was ready to run for a CPU{} (run queues, /proc/*/task/*/schedstat)",
            pct(w),
            v.kernel_wait
                .map_or(String::new(), |k| format!(", the kernel's threads {}", pct(k)))
        ))
        .into_iter()
        .collect();
    if let Some(d) = v.daemon_wait {
        let per_io = v
            .run
            .summary
            .transport
            .as_ref()
            .and_then(|t| t.wait_ns_per_io);
        words.push(format!(
            "the drive's daemon's threads waited {} of their ready time for a CPU{} (its serving threads' /proc/PID/task/*/schedstat)",
            pct(d),
            per_io.map_or(String::new(), |ns| format!(", {:.1} µs per I/O", ns / 1e3))
        ));
    }
    words
}

/// blk-throttle accounts a group's I/O in slices of this long, seconds
/// (`throtl_slice`, 100 ms on today's kernels).
pub const THROTTLE_SLICE_S: f64 = 0.1;

/// Where a run went above the throttle's `limit` by no more than one
/// slice's allowance over its `window_s`: what that excess is, in words.
/// A run that starts within a slice of the group's last I/O (a phase
/// right after another: fio's next job starts only after its own wait)
/// spends what that slice had left at once.
fn slice_words(rate: f64, limit: f64, window_s: f64) -> Option<String> {
    let extra = (rate - limit) * window_s;
    let slice = limit * THROTTLE_SLICE_S;
    (rate > limit * 1.01 && window_s > 0.0 && extra <= slice * 1.05).then(|| {
        format!(
            "{} I/Os more than its {} IOPS allow over the {window_s:.1} s run: no more than one of the throttle's {:.0} ms slices allows ({} I/Os); a run that starts within a slice of the group's last I/O, as a phase right after another does, spends what that slice had left",
            fmt_count(extra),
            fmt_count(limit),
            THROTTLE_SLICE_S * 1e3,
            fmt_count(slice)
        )
    })
}

/// A cgroup I/O throttle: the rate at its value — the study's own, or the
/// group's, where other processes in the group share the throttle.
pub fn io_throttle(sh: &Shared, v: &View) -> Test {
    let w = &v.run.workload;
    let reads = !w.rw.contains("write") || w.rw == "rw" || w.rw == "randrw";
    let Some((limit, cap)) = sh.caps.io_limit(reads, w.bs) else {
        return Test::No("no cgroup I/O limit is set for the study's group on its devices".into());
    };
    let ratio = v.iops / limit;
    let unit = if cap.kind.iops() { "IOPS" } else { "bytes/s" };
    let share = super::group::io_share(v, cap);
    let within = |r: f64| (THROTTLE_LOW..=THROTTLE_HIGH).contains(&r);
    // The group's total against the throttle's own value, where others
    // in the group did a part of it that counts.
    let group_ratio = share
        .as_ref()
        .filter(|g| g.shared() && cap.value > 0.0)
        .map(|g| g.group / cap.value);
    if !within(ratio) && !group_ratio.is_some_and(within) {
        return Test::No(format!(
            "{} allows {} {unit} on {}, and the study reached {} IOPS ({} of it){}: not what held it",
            cap.setting.name,
            fmt_count(cap.value),
            cap.device,
            fmt_count(v.iops),
            pct(100.0 * ratio),
            share
                .as_ref()
                .filter(|g| g.shared())
                .map_or(String::new(), |g| format!("; {}", g.words()))
        ));
    }
    let mut evidence = vec![format!(
        "{} IOPS at QD {}, {} of the {} IOPS {} allows on {}",
        fmt_count(v.iops),
        v.in_flight,
        pct(100.0 * ratio),
        fmt_count(limit),
        cap.setting.name,
        cap.device
    )];
    evidence.extend(slice_words(v.iops, limit, v.run.summary.window_s));
    let shared = share.as_ref().filter(|g| g.shared());
    if let Some(g) = shared {
        evidence.push(format!(
            "{} ({} of the throttle's {}; blkio.throttle.io_serviced or io.stat over the run, /proc/PID/io of each process in its cgroup.procs)",
            g.words(),
            pct(100.0 * g.group / cap.value.max(1e-9)),
            fmt_count(cap.value)
        ));
    }
    evidence.extend(waiting_above_device(v));
    let part = format!(
        "{} = {} on the study's cgroup holds {} to {} {unit}",
        cap.setting.name,
        cap.setting.value,
        cap.device,
        fmt_count(cap.value)
    );
    let (part, r) = match (shared, group_ratio) {
        (Some(g), Some(gr)) if within(gr) => (
            format!(
                "{part}, for the whole group: other processes in it took {} of it ({})",
                pct(100.0 * g.others_total() / g.group.max(1e-9)),
                g.others
                    .iter()
                    .take(super::group::NAMED)
                    .map(|o| o.0.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
            .replace(" ()", ""),
            gr,
        ),
        _ => (part, ratio),
    };
    Test::Holds(Found {
        part,
        evidence,
        setting: Some(cap.setting.clone()),
        margin_pct: Some(100.0 * (r - THROTTLE_LOW) / THROTTLE_LOW),
    })
}

/// Where the I/Os waited, when the device's counters say they waited above
/// it: the device held few of them and was seldom busy.
fn waiting_above_device(v: &View) -> Option<String> {
    let d = v.disk?;
    let at = v.at_device_pct()?;
    (at < 50.0).then(|| {
        format!(
            "the device ({}) held {:.1} of the {} I/Os in flight on average and was busy {} of the time: they waited above it",
            d.name,
            d.in_flight.unwrap_or(0.0),
            v.in_flight,
            pct(d.util_pct)
        )
    })
}

/// The CPU quota: the group stopped by it, or its quota used up.
pub fn cpu_quota(sh: &Shared, v: &View) -> Test {
    let Some(q) = &sh.caps.cpu_quota else {
        return Test::No("no CPU quota is set on the study's group".into());
    };
    let throttled = v.group.and_then(|g| g.throttled_share()).map(|s| 100.0 * s);
    let used = v.group.and_then(|g| g.used_cpus()).or(v.process_cpus);
    let used_share = used.map(|u| u / q.cpus);
    let holds = throttled.is_some_and(|t| t >= QUOTA_THROTTLED_PCT)
        || used_share.is_some_and(|u| u >= QUOTA_USED);
    let used_words = used.map_or("?".into(), |u| format!("{u:.2}"));
    if !holds {
        return Test::No(format!(
            "a quota of {:.2} CPUs is set ({}), but the group used {used_words} and was stopped in {} of its periods",
            q.cpus,
            q.setting.show(),
            throttled.map_or("none".into(), pct)
        ));
    }
    let mut evidence = vec![format!(
        "the group used {used_words} of its {:.2} CPUs",
        q.cpus
    )];
    if let (Some(g), Some(tp), Some(p)) = (
        v.group,
        v.group.and_then(|g| g.throttled_periods),
        v.group.and_then(|g| g.periods),
    ) {
        evidence.push(format!(
            "the quota stopped the group {} in {tp} of {p} periods, {:.0} ms in all (cgroup {:?} cpu.stat)",
            g.cgroup,
            g.throttled_ns.unwrap_or(0) as f64 / 1e6,
            g.version
        ));
    }
    let shared = super::group::cpu_share(v);
    evidence.extend(shared.clone());
    let margin = match throttled {
        Some(t) if t >= QUOTA_THROTTLED_PCT => {
            100.0 * (t - QUOTA_THROTTLED_PCT) / QUOTA_THROTTLED_PCT
        }
        _ => 100.0 * (used_share.unwrap_or(0.0) - QUOTA_USED) / QUOTA_USED,
    };
    Test::Holds(Found {
        part: format!(
            "{} = {} gives the study's group {:.2} CPUs, and it used them{}",
            q.setting.name,
            q.setting.value,
            q.cpus,
            throttled.map_or(String::new(), |t| format!(
                ": stopped in {} of its periods",
                pct(t)
            ))
        ) + if shared.is_some() {
            ", shared with the other processes in the group"
        } else {
            ""
        },
        evidence,
        setting: Some(q.setting.clone()),
        margin_pct: Some(margin),
    })
}

/// The CPUs the study may use, fewer than are online, all busy: the
/// restriction holds it, whoever's work fills them (the share that is the
/// study's own is said).
pub fn cpus_allowed(sh: &Shared, v: &View) -> Test {
    let Some(c) = &sh.caps.cpus else {
        return Test::No("the study may use every online CPU".into());
    };
    let at_peak = cpus_allowed_at(c, v);
    // A peak that stood out at a shallow depth, the rate deeper no more
    // than a noisy repeat below it: the CPUs are weighed where the curve
    // flattened too.
    let Test::No(why) = at_peak else {
        return at_peak;
    };
    let deeper = sh
        .deepest
        .map(|d| View::of(d, sh.caps, sh.machine.cpus))
        .filter(|d| d.iops >= FLAT_AFTER_PEAK * v.iops);
    match deeper.map(|d| (cpus_allowed_at(c, &d), d)) {
        Some((Test::Holds(mut f), d)) => {
            f.evidence.insert(
                0,
                format!(
                    "at QD {}, where the rate ({:.1}K IOPS) stayed within {:.0} % of the peak's ({:.1}K at QD {}): {why} at the peak",
                    d.in_flight,
                    d.iops / 1e3,
                    100.0 * (1.0 - FLAT_AFTER_PEAK),
                    v.iops / 1e3,
                    v.in_flight
                ),
            );
            Test::Holds(f)
        }
        _ => Test::No(why),
    }
}

/// The deepest point's rate, at least this share of the peak's, counts as
/// the curve flat after its peak (a repeat of a noisy point moves as much).
pub const FLAT_AFTER_PEAK: f64 = 0.7;

/// The CPUs the study may use, weighed at one point.
fn cpus_allowed_at(c: &super::caps::CpusAllowed, v: &View) -> Test {
    let Some(busy) = v.cpus_busy else {
        return Test::No("no per-CPU figures to weigh the CPUs it may use".into());
    };
    let own = v.own_share();
    let own_words = own.map_or("an unknown share".into(), pct);
    // The study's own process filling the CPUs it may use: what is left
    // idle are the moments its thread waits for completions that the same
    // CPUs must also take, not room it could use.
    let n = c.cpus.len().max(1) as f64;
    let filled = v
        .process_cpus
        .is_some_and(|p| 100.0 * p / n >= ALLOWED_FILLED_PCT);
    if busy < CPUS_BUSY_PCT && !(busy >= ALLOWED_BUSY_PCT && filled) {
        return Test::No(format!(
            "it may use {} of {} CPUs ({}); they were {} busy",
            c.cpus.len(),
            c.online,
            c.setting.show(),
            pct(busy)
        ));
    }
    if own.is_some_and(|o| o < OWN_SHARE_PCT) && !kept_waiting(v) {
        return Test::No(format!(
            "CPUs {} were {} busy, {own_words} of it the I/O's own work, and the submitting thread was not kept waiting ({} of its ready time): what filled them gave way",
            super::found::cpu_list(&c.cpus),
            pct(busy),
            v.cpu_wait().map_or("?".into(), pct)
        ));
    }
    let mut evidence = vec![format!(
        "CPUs {} busy {}; the I/O's own work (ssdready {:.2} CPUs, the kernel's threads {:.2}) {own_words} of that",
        super::found::cpu_list(&c.cpus),
        pct(busy),
        v.process_cpus.unwrap_or(0.0),
        v.kernel_cpus.unwrap_or(0.0)
    )];
    if v.cpus_steal >= 1.0 {
        evidence.push(format!(
            "the hypervisor took {} of those CPUs' time (steal): busy, but no work of this machine's",
            pct(v.cpus_steal)
        ));
    }
    evidence.extend(wait_words(v));
    if own.is_some_and(|o| o < OWN_SHARE_PCT) {
        evidence.push("other processes took the rest of those CPUs".into());
    }
    Test::Holds(Found {
        part: format!(
            "{} = {} lets the study use {} of the {} CPUs online, and they were {} busy, {own_words} of it with the study's own work",
            c.setting.name,
            c.setting.value,
            c.cpus.len(),
            c.online,
            pct(busy)
        ),
        evidence,
        setting: Some(c.setting.clone()),
        margin_pct: Some(100.0 * (busy - ALLOWED_BUSY_PCT) / ALLOWED_BUSY_PCT),
    })
}

/// Below this growth from half the queue's size to its size, percent,
/// the device saturates as its queue fills and the queue is not named.
pub const QUEUE_GROWTH_PCT: f64 = 15.0;

/// The device's request queue: fewer requests admitted than the study
/// keeps in flight at the peak, the device holding about that many, and
/// the rate stopped growing as the queue filled.
pub fn device_queue(sh: &Shared, v: &View) -> Test {
    let q = match queue_to_weigh(sh) {
        Ok(q) => q,
        Err(why) => return Test::No(why),
    };
    let r = q.requests as f64;
    let held = |w: &View| w.disk.and_then(|d| d.in_flight);
    let deepest = sh.deepest.map(|d| View::of(d, sh.caps, sh.machine.cpus));
    let deepest_in_flight = deepest.as_ref().map_or(v.in_flight, |d| d.in_flight);
    if q.requests >= v.in_flight.max(deepest_in_flight) {
        return Test::No(format!(
            "the device's queue admits {} requests ({}), the study keeps {} in flight",
            q.requests,
            q.setting.show(),
            deepest_in_flight
        ));
    }
    // Either the peak kept more in flight than the queue admits and the
    // device held about the queue; or the device's occupancy stopped at
    // the queue's size: from the peak to a run at least twice the queue
    // deep, it stayed within half of the queue and the queue, growing by
    // at most a quarter (a freed request's tag is held a moment after the
    // device's count drops, so a small queue reads a little under full).
    let full_at_peak =
        q.requests < v.in_flight && held(v).is_some_and(|d| (0.7 * r..=1.2 * r).contains(&d));
    // A thread that fills the queue and was idle most of the time slept
    // for a free request: the queue drains while it wakes, so a small
    // queue reads well under full at the device (4 requests, 2 held).
    let waited = v.thread_busy.is_some_and(|b| b < IDLE_THREAD_PCT);
    let low = if waited { 0.4 * r } else { 0.5 * r };
    let plateau = deepest
        .as_ref()
        .filter(|d| d.in_flight >= 2 * q.requests)
        .and_then(|d| Some((held(v)?, held(d)?, d)))
        .filter(|(p, dd, _)| *p >= low && (low..=1.05 * r).contains(dd) && *dd <= 1.25 * p);
    if !full_at_peak && plateau.is_none() {
        return Test::No(format!(
            "the device's queue admits {} requests, but the device held {} on average at the peak{}",
            q.requests,
            held(v).map_or("?".into(), |d| format!("{d:.1}")),
            match deepest.as_ref().and_then(held) {
                Some(d) => format!(" and {d:.1} deeper"),
                None => String::new(),
            }
        ));
    }
    // The cap binds only where the rate stopped growing as the queue
    // filled: the knee (90 % of the peak) at half the queue or deeper. A
    // curve flat well before it was held by something else, and the queue
    // only filled behind that.
    if let Some(why) = flat_within(sh, q.requests) {
        return Test::No(why);
    }
    let seen = match plateau {
        Some((_, _, d)) if !full_at_peak => d,
        _ => v,
    };
    let evidence = queue_evidence(v, seen, held(seen), plateau);
    // The peak's own depth first: a deeper run that showed the plateau
    // is the study's, not the workload's (a job keeps what it sets).
    let kept = match seen.in_flight == v.in_flight {
        true => format!("{} in flight", v.in_flight),
        false => format!(
            "{} in flight at its peak and {} deeper",
            v.in_flight, seen.in_flight
        ),
    };
    Test::Holds(Found {
        part: format!(
            "{} = {} admits {} requests while the study keeps {kept}; the rest wait for a free one",
            q.setting.name, q.setting.value, q.requests
        ),
        evidence,
        setting: Some(q.setting.clone()),
        margin_pct: Some(100.0 * (seen.in_flight as f64 - r) / r),
    })
}

/// Requests per I/O, at least, for a split to be what the device was busy
/// with: each I/O made two requests or more.
pub const SPLIT_AT_LEAST: f64 = 2.0;

/// Pieces this large or larger are no evidence: a device streams requests
/// of 128 KiB at its bandwidth (4 MiB reads on a virtio disk that builds
/// requests of 1280 KiB are split in four, and lose nothing by it).
/// Whether raising such a size gains is the trial's to say.
pub const SMALL_REQUEST_KIB: u64 = 128;

/// The size of the block layer's requests: `max_sectors_kb` set below the
/// job's I/O (and below what the device takes), the device's own counters
/// showing each I/O made that many requests, and the device busy with
/// them. Whether raising it gains is the trial's to say (a device that
/// streams small requests as fast as large ones loses nothing).
pub fn request_size(sh: &Shared, v: &View) -> Test {
    let Some(cap) = &sh.caps.request else {
        return Test::No(
            "the largest request the block layer builds is as large as the device takes".into(),
        );
    };
    let bs = v.run.workload.bs;
    let max = cap.kib * 1024;
    if bs <= max {
        return Test::No(format!(
            "each {} I/O fits one request ({} = {} KiB)",
            crate::stack::ceiling_words::bytes(bs),
            cap.setting.name,
            cap.kib
        ));
    }
    if cap.kib >= SMALL_REQUEST_KIB {
        return Test::No(format!(
            "{} = {} KiB splits each {} I/O, into requests a device streams at its bandwidth",
            cap.setting.name,
            cap.kib,
            crate::stack::ceiling_words::bytes(bs)
        ));
    }
    let Some(d) = v.disk else {
        return Test::No("no device counters to show the I/Os split".into());
    };
    let per_io = d.ios_per_app_io().unwrap_or(0.0);
    // Each piece costs the host a request's work too: where the CPU was
    // scarce (a quota used up, the allowed CPUs busy), the pieces spent it.
    let scarce = cpu_scarce(sh.caps, v);
    let below = format!(
        "{} = {} KiB is below the job's {} I/Os",
        cap.setting.name,
        cap.kib,
        crate::stack::ceiling_words::bytes(bs)
    );
    if per_io < SPLIT_AT_LEAST {
        return Test::No(format!(
            "{below}, but {} made {per_io:.1} requests per I/O: the split was not seen",
            d.name
        ));
    }
    if d.util_pct < DEVICE_BUSY_PCT && !scarce {
        return Test::No(format!(
            "{below}, but {} was busy {}, with CPU to spare: the split is not what held it",
            d.name,
            pct(d.util_pct)
        ));
    }
    let mut evidence = split_evidence(d, per_io, v.in_flight);
    if scarce {
        evidence.push(format!(
            "the CPU the study may use was scarce, and each I/O cost the host {per_io:.0} requests' work of it"
        ));
    }
    evidence.push(format!(
        "the device takes requests of up to {} KiB (queue/max_hw_sectors_kb)",
        cap.hw_kib
    ));
    Test::Holds(Found {
        part: format!(
            "{} = {} splits each {} I/O into {:.0} requests, which {} completes one by one",
            cap.setting.name,
            cap.setting.value,
            crate::stack::ceiling_words::bytes(bs),
            bs.div_ceil(max),
            d.name
        ),
        evidence,
        setting: Some(cap.setting.clone()),
        margin_pct: Some(100.0 * (per_io / SPLIT_AT_LEAST - 1.0)),
    })
}

/// What the device's counters `d` show of a split: its requests per I/O,
/// and how busy it was with them for the study's `in_flight` I/Os.
fn split_evidence(
    d: &ssdready_measured::summary::DiskSummary,
    per_io: f64,
    in_flight: u32,
) -> Vec<String> {
    vec![
        format!(
            "{} completed {} requests for the job's {} I/Os: {per_io:.1} each (/sys/block/{}/stat)",
            d.name,
            fmt_count(d.ios as f64),
            fmt_count(d.app_ios as f64),
            d.name
        ),
        format!(
            "{} was busy {} of the run with them, holding {:.1} requests on average for the {in_flight} I/Os in flight",
            d.name,
            pct(d.util_pct),
            d.in_flight.unwrap_or(0.0),
        ),
    ]
}

/// Where the kernel split each I/O of the instrumented run into several
/// requests, why its latency split speaks for no part of the I/O's
/// latency ([`split_note`]).
pub(super) fn split_requests(sh: &Shared) -> Option<String> {
    split_note(sh.instrumented?.summary.disk.as_ref()?)
}

/// Where the device's counters `d` show each I/O split into several
/// requests: the decomposition's device part is one request's, and the
/// wait for the I/O's last request falls into its completion part, so
/// its shares are not the I/O's. Why, in words.
pub fn split_note(d: &ssdready_measured::summary::DiskSummary) -> Option<String> {
    let n = d.ios_per_app_io()?;
    (n >= SPLIT_AT_LEAST).then(|| {
        format!(
            "{} made {n:.1} requests per I/O: the latency split times each request, and an I/O waits for its last, so its shares are not the I/O's",
            d.name
        )
    })
}

/// The device's queue where it admits fewer requests than the study
/// keeps in flight and is the device's own (not a loop device's, full
/// because the disk under it is); why not, in words.
fn queue_to_weigh<'a>(sh: &Shared<'a>) -> Result<&'a QueueCap, String> {
    let Some(q) = &sh.caps.queue else {
        return Err(
            "the device's queue admits at least as many requests as the study keeps in flight"
                .into(),
        );
    };
    // A loop device's queue stays full when the disk under it is: the
    // disk giving through it what its file gives read directly says so.
    if let Some(full) = &sh.loop_disk_full {
        return Err(format!(
            "{full}: the loop device's queue is full because the disk under it is"
        ));
    }
    Ok(q)
}

/// Positive evidence against a limit below the host: the device's queue
/// admits fewer requests than the study kept in flight (at the peak or
/// deeper), so the others waited in this host for one — unless the rate
/// had stopped growing within the queue (the device queue's own test):
/// then the rest waited for a device that took no more (a null_blk capped
/// at 20 MB/s: 5.2K IOPS from QD 32 to 256 with 64 requests).
pub(super) fn queue_short(sh: &Shared, v: &View) -> Option<String> {
    let q = sh.caps.queue.as_ref()?;
    let deepest = sh.deepest.map(|d| View::of(d, sh.caps, sh.machine.cpus));
    let kept = deepest.map_or(v.in_flight, |d| d.in_flight.max(v.in_flight));
    // Without a knee (no depth curve) nothing shows the rate flat.
    let flat = sh.figures.knee_qd.is_some() && flat_within(sh, q.requests).is_some();
    (q.requests < kept && !flat).then(|| {
        format!(
            "the device's queue admits {} requests ({}) of the {kept} the study kept in flight: the others waited in this host for one",
            q.requests,
            q.setting.show()
        )
    })
}

/// Where the rate stopped growing within a queue of `requests`: its knee
/// (90 % of the peak) below half the queue, or the last doubling of depth
/// below the queue's size adding little. Then the queue only filled
/// behind what held the rate. Why, in words.
fn flat_within(sh: &Shared, requests: u32) -> Option<String> {
    let knee = sh.figures.knee_qd.unwrap_or(0);
    if knee * 2 < requests {
        return Some(format!(
            "the device's queue admits {requests} requests and held about that many, but the rate stopped growing at QD {knee}, well before the queue filled"
        ));
    }
    saturates_as_it_fills(sh, requests)
}

/// Where the device saturates as its queue fills: the last doubling of
/// depth below the queue's size added little, so a longer queue would
/// hold more waiting I/Os, not more I/O at the device. Why, in words.
fn saturates_as_it_fills(sh: &Shared, requests: u32) -> Option<String> {
    let at = |qd: u32| sh.figures.qd_curve.iter().find(|c| c.qd == qd);
    let (half, full) = (at(requests / 2)?, at(requests)?);
    let growth = 100.0 * (full.iops / half.iops.max(1.0) - 1.0);
    (requests >= 4 && growth < QUEUE_GROWTH_PCT).then(|| {
        format!(
            "the device's queue admits {requests} requests and held about that many, but doubling the depth from QD {} to QD {} added {growth:.0} % ({} → {} IOPS): the device saturates as its queue fills",
            half.qd,
            full.qd,
            crate::stack::ceiling_words::k(half.iops),
            crate::stack::ceiling_words::k(full.iops)
        )
    })
}

/// The evidence that the device's queue holds the I/O: what it held,
/// how far that stayed however deep the study went, and the CPU that
/// few requests at a time cost.
fn queue_evidence(
    v: &View,
    seen: &View,
    held_seen: Option<f64>,
    plateau: Option<(f64, f64, &View)>,
) -> Vec<String> {
    let mut evidence = vec![format!(
        "the device held {:.1} requests on average at QD {}",
        held_seen.unwrap_or(0.0),
        seen.in_flight
    )];
    if let Some((p, dd, d)) = plateau {
        evidence.push(format!(
            "the device held {p:.1} requests at QD {} and {dd:.1} at QD {}: no more than its queue admits, however deep the study went",
            v.in_flight, d.in_flight
        ));
        evidence.push(format!(
            "the rate peaked at QD {} ({:.1}K IOPS) and QD {} gave {:.1}K",
            v.in_flight,
            v.iops / 1e3,
            d.in_flight,
            d.iops / 1e3
        ));
    }
    // Busy CPUs do not clear it: a queue that admits few requests at a
    // time takes more wake-ups per I/O, and the CPU they cost.
    if cpus_contended(v) {
        evidence.push(format!(
            "the CPUs it may use were {} busy: with few requests admitted at a time, each costs more of them",
            pct(v.cpus_busy.unwrap_or(0.0))
        ));
    }
    evidence
}

/// Whether the caps leave the CPU scarce for this run: a quota the group
/// used up, or the allowed CPUs all busy.
pub fn cpu_scarce(caps: &Caps, v: &View) -> bool {
    let quota = caps.cpu_quota.as_ref().is_some_and(|q| {
        v.group
            .and_then(|g| g.throttled_share())
            .is_some_and(|t| 100.0 * t >= QUOTA_THROTTLED_PCT)
            || v.process_cpus.is_some_and(|u| u >= QUOTA_USED * q.cpus)
    });
    quota || cpus_contended(v)
}

/// The CPUs the study may use were all busy, and the I/O's work filled
/// them or waited for them.
pub fn cpus_contended(v: &View) -> bool {
    v.cpus_busy.is_some_and(|b| b >= CPUS_BUSY_PCT)
        && (v.own_share().is_some_and(|o| o >= OWN_SHARE_PCT) || kept_waiting(v))
}

pub const DEVICE_BUSY_PCT: f64 = 90.0;

/// Share of a loop device's summed I/O time its own disk must hold, and
/// how busy that disk must be, for the I/Os to have waited there.
pub const BACKING_SHARE_PCT: f64 = 50.0;

/// Where the target is a loop device over a file on one disk: that disk's
/// own counters over the run (the stack's `members`) showing the loop
/// device's I/Os waited in it — the disk busy, holding most of the loop
/// device's I/O time, with about as many I/Os (its I/Os are the loop
/// device's, not other work's). In words, or None.
pub fn backing_waits(sh: &Shared, v: &View) -> Option<String> {
    use ssdready_measured::stack_layers::LayerKind;
    let stack = sh.target.stack.as_ref()?;
    let top = stack.layers.first()?;
    let (LayerKind::Loop { .. }, [disk]) = (&top.kind, top.under.as_slice()) else {
        return None;
    };
    let members = &v.run.context.as_ref()?.members;
    let find = |d: &str| members.iter().find(|c| c.disk == d);
    let (lo, b) = (find(&top.disk)?, find(disk)?);
    let (n, m) = (lo.ios(), b.ios());
    let ours = n >= 100 && m * 2 >= n && m <= n * 2;
    let busy = 100.0 * b.io_ticks_ms as f64 / b.window_ms.max(1) as f64;
    let share = 100.0 * b.ticks_ms() as f64 / lo.ticks_ms().max(1) as f64;
    (ours && busy >= DEVICE_BUSY_PCT && share >= BACKING_SHARE_PCT && b.ticks_ms() >= 10).then(|| {
        format!(
            "the disk under {} ({}) was busy {} of the run and its {m} I/Os took {} of the loop device's {n} I/Os' time ({:.3} ms against {:.3} ms each): they waited in the disk",
            top.disk,
            disk,
            pct(busy.min(100.0)),
            pct(share.min(100.0)),
            b.ticks_ms() as f64 / m.max(1) as f64,
            lo.ticks_ms() as f64 / n.max(1) as f64,
        )
    })
}
