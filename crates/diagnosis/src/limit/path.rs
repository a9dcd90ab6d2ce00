//! The candidates along the I/O's path: the apparatus (the emulated
//! drive's daemon), the device against its basis, the file system (the
//! I/O scheduler is `scheduler`'s), a lock, the submitting thread, completions, the submission
//! path, and a rate limit below the host. Each holds only with positive
//! evidence; the device needs a basis, the submission path its submitting
//! thread busy, and "below the host" needs the host idle while the I/Os
//! wait at the device, or a virtual disk that held them full while depth
//! and threads bought nothing.

use super::configured::DEVICE_BUSY_PCT;
use super::found::{cost_beyond_error, pct, Found, Test};
use super::view::{Shared, View};
use ssdready_core::units::fmt_count;
use ssdready_measured::basis::ANALYTIC_MODEL;
use ssdready_measured::record::TargetKind;

/// The drive's daemon's serving threads busy with work, at least.
pub const DAEMON_BUSY_PCT: f64 = 85.0;
/// The device delivers at least this share of its basis.
pub const DEVICE_PCT: f64 = 90.0;
/// Device requests (or bytes) per file I/O above which the file system
/// multiplies the I/O.
pub const FS_AMPLIFICATION: f64 = 1.3;
/// The file costs at least this share of the raw device's IOPS.
pub const FS_COST_PCT: f64 = 10.0;
pub const LOCK_SHARE_PCT: f64 = 15.0;
pub const THREAD_BUSY_PCT: f64 = 85.0;
pub const COMPLETION_SHARE_PCT: f64 = 50.0;
/// The hypervisor's steal on the CPUs the study may use, at least this
/// share, leaves the CPU's shares of the latency unexplained (a one-CPU
/// cpuset whose CPU the host took 58–69 % of showed 50 % and more of the
/// latency after the completion).
pub const STOLEN_SHARE_PCT: f64 = 20.0;
pub const SUBMISSION_SHARE_PCT: f64 = 50.0;
/// The submitting thread busy at least this share of the time the
/// hypervisor left it, for the submission path to hold: below it, the
/// host counts as idle ([`IDLE_THREAD_PCT`]).
pub const SUBMITTING_BUSY_PCT: f64 = IDLE_THREAD_PCT;
/// More threads, as many I/Os in flight in all, gained at least this
/// share over one thread as deep: the device took more.
pub const THREADS_GAIN_PCT: f64 = 10.0;
/// A decomposition speaks for the I/Os when it joined at least this share.
pub const JOINED_PCT: f64 = 90.0;
pub use super::configured::IDLE_THREAD_PCT;
/// "Nothing on the host busy": the thread below [`IDLE_THREAD_PCT`] and
/// the allowed CPUs below this.
pub const IDLE_CPUS_PCT: f64 = 85.0;
/// The I/Os wait at the device: it held at least this share of them, or
/// was busy at least this share of the time.
pub const AT_DEVICE_PCT: f64 = 70.0;
/// Or the latency decomposition gives driver and device at least this
/// share of each I/O's time.
pub const DEVICE_SHARE_PCT: f64 = 50.0;
/// The I/Os waited above the device: it held less than this share of
/// them, with at least [`ABOVE_DEVICE_MIN_QD`] in flight, and was not
/// busy all the time.
pub const ABOVE_DEVICE_PCT: f64 = 50.0;
pub const ABOVE_DEVICE_MIN_QD: u32 = 4;

pub(super) fn margin(v: f64, th: f64) -> Option<f64> {
    Some(100.0 * (v - th).abs() / th)
}

/// ssdready's own apparatus: the drive's daemon busy all the time.
pub fn apparatus(_: &Shared, v: &View) -> Test {
    let Some(b) = v.daemon_busy else {
        return Test::No("no emulated drive's daemon on the path".into());
    };
    let n = v.daemon_threads.unwrap_or(1);
    let words = format!(
        "its {n} serving thread{} {} busy with work",
        if n == 1 { " is" } else { "s are" },
        pct(b)
    );
    // Or the CPUs were all busy, and the daemon took most of the I/O's
    // own share of them: the apparatus holds the CPUs the platform needs.
    let io = v.io_cpus().unwrap_or(0.0);
    let d = v.daemon_cpus();
    let crowds = super::configured::cpus_contended(v) && io > 0.0 && d >= 0.5 * io;
    if b < DAEMON_BUSY_PCT && !crowds {
        return match held_in_transport(v) {
            Some(held) => Test::Holds(Found {
                part: format!("the drive's transport and daemon hold the I/Os ({words})"),
                evidence: vec![held],
                setting: None,
                margin_pct: v.at_device_pct().and_then(|a| margin(a, AT_DEVICE_PCT)),
            }),
            None => Test::No(format!("the emulated drive's daemon: {words}")),
        };
    }
    if b < DAEMON_BUSY_PCT {
        return Test::Holds(Found {
            part: format!(
                "it took {d:.2} of the {io:.2} CPUs the I/O's own work used, with every CPU busy ({words})"
            ),
            evidence: vec![format!(
                "ssdready's threads {:.2} CPUs, the kernel's threads {:.2}, the drive's daemon {d:.2}; the CPUs {} busy",
                v.process_cpus.unwrap_or(0.0),
                v.kernel_cpus.unwrap_or(0.0),
                v.cpus_busy.map_or("?".into(), pct)
            )],
            setting: None,
            margin_pct: margin(d / io, 0.5),
        });
    }
    Test::Holds(Found {
        part: words,
        evidence: vec![match v.daemon_spin.filter(|s| *s >= 0.5) {
            Some(s) => format!(
                "the daemon spun {} of its time for completions due soon",
                pct(s)
            ),
            None => "the daemon did not spin".into(),
        }],
        setting: None,
        margin_pct: margin(b, DAEMON_BUSY_PCT),
    })
}

/// Where the built-in drive's I/Os waited in its transport: the loop
/// device over it held them (most of those in flight, or busy nearly all
/// the time) while the drive's model alone, at this depth, gives at least
/// twice the rate reached. Below that loop device lie only the loop
/// worker, FUSE (or ublk) and ssdready's daemon: the apparatus.
fn held_in_transport(v: &View) -> Option<String> {
    let d = v.disk?;
    let at = v.at_device_pct()?;
    let alone = v.run.device_model.as_ref().filter(|m| m.iops > 0.0)?;
    let waits = at >= AT_DEVICE_PCT || d.util_pct >= DEVICE_BUSY_PCT;
    (waits && 2.0 * v.iops <= alone.iops).then(|| {
        format!(
            "{} held {:.1} of the {} I/Os in flight on average and was busy {} of the time, while the drive's model alone gives {} IOPS at this depth and the drive reached {}: the I/Os waited below the loop device and above the model, in ssdready's transport and daemon",
            d.name,
            d.in_flight.unwrap_or(0.0),
            v.in_flight,
            pct(d.util_pct),
            fmt_count(alone.iops),
            fmt_count(v.iops)
        )
    })
}

/// The device, against its basis.
pub fn device(sh: &Shared, v: &View) -> Test {
    let l = &sh.figures.device_limit;
    let model = l.basis == ANALYTIC_MODEL;
    if !model {
        return Test::No(
            "no basis for the device's own limit (no model of it, no raw measurement, no specification): the highest rate measured is not one".into(),
        );
    }
    let of_limit = l.iops.map(|i| 100.0 * v.iops / i);
    let of_twin = v
        .run
        .device_model
        .as_ref()
        .filter(|d| d.iops > 0.0)
        .map(|d| 100.0 * v.iops / d.iops);
    let best = of_limit.into_iter().chain(of_twin).reduce(f64::max);
    let Some(best) = best.filter(|b| *b >= DEVICE_PCT) else {
        return Test::No(format!(
            "its model allows {} IOPS ({}) and {} at this depth; the study reached {} IOPS",
            l.iops.map_or("any".into(), fmt_count),
            l.bound_by.clone().unwrap_or_default(),
            v.run
                .device_model
                .as_ref()
                .map_or("?".into(), |d| fmt_count(d.iops)),
            fmt_count(v.iops)
        ));
    };
    let mut evidence = Vec::new();
    if let Some(p) = of_limit {
        evidence.push(format!("{} of the device's limit ({})", pct(p), l.basis));
    }
    if let Some(p) = of_twin {
        evidence.push(format!(
            "{} of what the model alone does at QD {}",
            pct(p),
            v.in_flight
        ));
    }
    Test::Holds(Found {
        part: l.bound_by.clone().unwrap_or_default(),
        evidence,
        setting: None,
        margin_pct: margin(best, DEVICE_PCT),
    })
}

/// The file system's cost against the raw device, measured in turns
/// beyond twice its error, percent.
pub fn file_system_cost(sh: &Shared) -> Option<f64> {
    let pairs = sh.comparisons.raw_vs_file.iter();
    cost_beyond_error(pairs.map(|p| (p.fs_cost_pct, p.fs_cost_err_pct)))
}

/// The file system: the device I/O it makes per file I/O, from the
/// device's own counters, or its cost against the raw device in turns.
pub fn file_system(sh: &Shared, v: &View) -> Test {
    if sh.target.kind != TargetKind::File {
        return Test::No("the target is not a file".into());
    }
    let reqs = v.disk.and_then(|d| d.ios_per_app_io());
    let bytes = v.disk.and_then(|d| d.bytes_per_app_byte());
    // The requests a `max_sectors_kb` below the I/O splits it into are the
    // block layer's, not the file system's.
    let split = (sh.caps.request.as_ref()).map_or(1, |c| v.run.workload.bs.div_ceil(c.kib * 1024));
    let by_fs = reqs.map(|r| r / split.max(1) as f64);
    let amp = [by_fs, bytes].into_iter().flatten().reduce(f64::max);
    let cost = file_system_cost(sh);
    let name = v.disk.map_or("the device".into(), |d| d.name.clone());
    // The device counts every process's I/O: where it read more than the
    // study's process asked of it, its counters do not measure the file
    // system.
    let others = (v.disk.and_then(|d| d.others_read_bytes())).map(|o| format!(
        "; {name} read {:.1} MiB more than the study's process asked of the block layer (/proc/self/io, its file system's reads included): other processes' I/O, which the device's counters count too, so they do not measure the file system",
        o as f64 / (1 << 20) as f64
    ));
    let by_amp = amp.filter(|a| *a >= FS_AMPLIFICATION && others.is_none());
    let by_cost = cost.filter(|c| *c >= FS_COST_PCT);
    if by_amp.is_none() && by_cost.is_none() {
        return Test::No(format!(
            "each file I/O reached {name} as {} request(s) and {}× its bytes{}{}",
            reqs.map_or("?".into(), |r| format!("{r:.2}")),
            bytes.map_or("?".into(), |b| format!("{b:.2}")),
            cost.map_or(String::new(), |c| format!(
                "; the raw device gives {} more IOPS",
                pct(c)
            )),
            others.unwrap_or_default()
        ));
    }
    let mut evidence = Vec::new();
    if let (Some(r), Some(b)) = (reqs, bytes) {
        evidence.push(format!(
            "{name}'s own counters: {r:.2} requests and {b:.2}× the bytes per {} {} of the file",
            ssdready_measured::record::fmt_bs(v.run.workload.bs),
            v.run.workload.rw
        ));
    }
    if let Some(c) = by_cost {
        evidence.push(format!(
            "the raw device beneath gives {} more IOPS, in turns",
            pct(c)
        ));
    }
    Test::Holds(Found {
        part: match by_amp {
            Some(a) => format!(
                "{} makes {a:.1}× the device I/O of each file I/O",
                sh.target
                    .filesystem
                    .clone()
                    .unwrap_or("the file system".into())
            ),
            None => format!(
                "{} costs {} of the raw device's IOPS",
                sh.target
                    .filesystem
                    .clone()
                    .unwrap_or("the file system".into()),
                pct(by_cost.unwrap_or(0.0))
            ),
        },
        evidence,
        setting: None,
        margin_pct: by_amp
            .and_then(|a| margin(a, FS_AMPLIFICATION))
            .or_else(|| by_cost.and_then(|c| margin(c, FS_COST_PCT))),
    })
}

/// A lock: its functions' share of the busy CPU.
pub fn lock(sh: &Shared, _: &View) -> Test {
    let Some(p) = sh.profile else {
        return Test::No("no kernel profile (it needs root)".into());
    };
    if p.lock_share_pct < LOCK_SHARE_PCT {
        return Test::No(format!(
            "{} of the busy CPU in lock functions",
            pct(p.lock_share_pct)
        ));
    }
    Test::Holds(Found {
        part: p.lock_functions.join(", "),
        evidence: vec![format!(
            "{} of the busy CPU in lock functions",
            pct(p.lock_share_pct)
        )],
        setting: None,
        margin_pct: margin(p.lock_share_pct, LOCK_SHARE_PCT),
    })
}

/// The submitting thread, CPU-bound on its own work.
pub fn one_core(sh: &Shared, v: &View) -> Test {
    let (Some(raw), Some(b)) = (v.thread_busy, v.thread_busy_of_guest()) else {
        return Test::No("no per-thread CPU figures".into());
    };
    // Where the hypervisor took part of the CPUs' time, the thread is
    // weighed against what it left.
    let busy = if b - raw >= 1.0 {
        format!(
            "the submitting thread was {} busy: {} of the time the hypervisor left (it took {})",
            pct(raw),
            pct(b),
            pct(v.cpus_steal)
        )
    } else {
        format!("the submitting thread was {} busy", pct(raw))
    };
    if b < THREAD_BUSY_PCT {
        return Test::No(busy);
    }
    Test::Holds(Found {
        part: super::found::core_part(sh.target.kind == TargetKind::Emulator, sh.profile),
        evidence: vec![busy],
        setting: None,
        margin_pct: margin(b, THREAD_BUSY_PCT),
    })
}

/// A part of the latency decomposition, when it speaks for the I/Os (it
/// joined nearly all of them): its share, percent.
fn share(sh: &Shared, names: &[&str]) -> Result<f64, String> {
    let d = sh
        .decomposition
        .ok_or("no latency decomposition (it needs root)")?;
    let checks = sh
        .instrumented
        .map_or(&[][..], |r| &r.summary.checks_disagree[..]);
    if let Some(c) = checks.iter().find(|c| distrusts(c, "decomposition")) {
        return Err(format!(
            "the instrumented run's cross-check disagreed ({c}): its latency decomposition speaks for nothing"
        ));
    }
    if let Some(j) = d.joined_pct.filter(|j| *j < JOINED_PCT) {
        return Err(format!(
            "the latency decomposition joined only {} of the I/Os: its shares do not speak for the rest",
            pct(j)
        ));
    }
    if let Some(why) = super::configured::split_requests(sh) {
        return Err(why);
    }
    Ok(d.parts
        .iter()
        .filter(|p| names.contains(&p.0.as_str()))
        .map(|p| p.2)
        .sum())
}

/// Whether a cross-check's words (`…: DISAGREE; do not trust
/// disks.above_block_mean_ns, decomposition`) distrust the figure `mark`.
fn distrusts(check: &str, mark: &str) -> bool {
    (check.split_once("; do not trust ")).is_some_and(|(_, m)| m.split(", ").any(|x| x == mark))
}

/// Completions waiting for the submitting thread.
pub fn completions(sh: &Shared, v: &View) -> Test {
    if super::configured::cpu_scarce(sh.caps, v) {
        return Test::No(
            "the CPU the study may use was scarce: a late reap is the CPU's doing".into(),
        );
    }
    if let Some(no) = stolen(v, "a late reap") {
        return no;
    }
    // The thread that fills a full queue sleeps in the kernel for a free
    // request: the I/Os that finish meanwhile wait for it there.
    if let Test::Holds(q) = super::configured::device_queue(sh, v) {
        return Test::No(format!(
            "{}: the submitting thread sleeps for a free request while finished I/Os wait for it, the queue's doing",
            q.part
        ));
    }
    match share(sh, &["completion to the app"]) {
        Err(why) => Test::No(why),
        Ok(s) if s < COMPLETION_SHARE_PCT => {
            Test::No(format!("completion to the app: {} of the latency", pct(s)))
        }
        Ok(s) => Test::Holds(Found {
            part: "finished I/Os wait for the submitting thread to reap them".into(),
            evidence: vec![format!("completion to the app: {} of the latency", pct(s))],
            setting: None,
            margin_pct: margin(s, COMPLETION_SHARE_PCT),
        }),
    }
}

/// Where the host took much of the CPUs the study may use: a share of the
/// latency that is CPU work (submitting, reaping) stretches with the
/// steal, so it measures the hypervisor, and shortening that work would
/// not gain what it shows.
fn stolen(v: &View, what: &str) -> Option<Test> {
    (v.cpus_steal >= STOLEN_SHARE_PCT).then(|| {
        Test::No(format!(
            "the hypervisor took {} of the CPUs the study may use: {what} may be its doing",
            pct(v.cpus_steal)
        ))
    })
}

/// The submission path by its share of the latency, where the thread
/// that pays its cost was busy: time in the block layer spent waiting
/// while the submitting thread idled is a queue, not the path's cost.
pub fn submission(sh: &Shared, v: &View) -> Test {
    if let Some(full) = &sh.loop_disk_full {
        return Test::No(format!(
            "{full}: the time before the disk is the queue for it"
        ));
    }
    if let Some(no) = stolen(v, "a slow submission") {
        return no;
    }
    if let Some(idle) = submitter_idle(v) {
        return Test::No(idle);
    }
    if let Some(full) = device_full(sh, v) {
        return Test::No(format!(
            "{full}: the time in the block layer is the queue for a device that takes no more"
        ));
    }
    match share(
        sh,
        &["above block, submission", "block layer and scheduler"],
    ) {
        Err(why) => Test::No(why),
        Ok(s) if s < SUBMISSION_SHARE_PCT => Test::No(format!(
            "submission and block layer: {} of the latency",
            pct(s)
        )),
        Ok(s) => Test::Holds(Found {
            part: sh
                .profile
                .map(|p| super::found::top_layers(&p.layers, 3))
                .unwrap_or_default(),
            evidence: vec![format!(
                "submission and block layer: {} of the latency",
                pct(s)
            )],
            setting: None,
            margin_pct: margin(s, SUBMISSION_SHARE_PCT),
        }),
    }
}
/// Why the submitting thread's CPU speaks against a submission path that
/// holds the rate: it was idle most of the time (it waited for its I/Os),
/// or no per-thread figure shows it busy.
fn submitter_idle(v: &View) -> Option<String> {
    let Some(b) = v.thread_busy_of_guest() else {
        return Some("no per-thread CPU figures to show the submitting thread busy".into());
    };
    (b < SUBMITTING_BUSY_PCT).then(|| {
        format!(
            "the submitting thread was {} busy: a submission path whose cost held the rate keeps the thread that pays it busy; the rest of its time it waited for its I/Os",
            pct(v.thread_busy.unwrap_or(b))
        )
    })
}

/// Positive evidence that the I/Os waited for the device itself, on a
/// virtual disk whose backend's limits this host cannot see: it held most
/// of the I/Os in flight and was busy nearly all the time, while depth
/// (the curve stopped growing) and threads (where the study measured
/// them) bought nothing. Requests in the block layer then wait for a
/// device that takes no more: its limit, or what lies below this host.
fn device_full(sh: &Shared, v: &View) -> Option<String> {
    sh.caps.unseen.as_ref()?;
    let (d, at) = (v.disk?, v.at_device_pct()?);
    let full = at >= AT_DEVICE_PCT && d.util_pct >= DEVICE_BUSY_PCT;
    if !(full && sh.figures.saturated) {
        return None;
    }
    let threads = match threads_bought(sh) {
        Some((_, gain)) if gain >= THREADS_GAIN_PCT => return None,
        Some((words, _)) => format!(", and {words}"),
        None => String::new(),
    };
    Some(format!(
        "{} held {:.1} of the {} I/Os in flight on average and was busy {} of the time; the rate stopped growing with depth{threads}",
        d.name,
        d.in_flight.unwrap_or(0.0),
        v.in_flight,
        pct(d.util_pct)
    ))
}

/// What the most threads the study ran gave against one thread as deep:
/// in words, and the gain, percent.
fn threads_bought(sh: &Shared) -> Option<(String, f64)> {
    let s = sh
        .figures
        .scaling
        .iter()
        .filter(|s| s.threads > 1 && s.depth_iops.is_some_and(|d| d > 0.0))
        .max_by_key(|s| s.threads)?;
    let depth = s.depth_iops?;
    let gain = 100.0 * (s.iops / depth - 1.0);
    let words = format!(
        "{} threads at QD {} gave {} IOPS, one thread at QD {} {}",
        s.threads,
        s.qd_per_thread,
        fmt_count(s.iops),
        s.threads * s.qd_per_thread,
        fmt_count(depth)
    );
    Some((words, gain))
}

/// A rate limit below the host: the rate stopped growing with depth while
/// nothing on the host was busy, and the I/Os waited at the device — or,
/// on a virtual disk, the device held them full whatever the host did
/// ([`device_full`]).
pub fn below_host(sh: &Shared, v: &View) -> Test {
    if sh.target.kind == TargetKind::Emulator {
        return Test::No("the emulator runs inside ssdready: no host below it".into());
    }
    if v.daemon_threads.is_some() {
        return Test::No(
            "below the device lies ssdready's own drive (its transport and daemon), weighed as the apparatus".into(),
        );
    }
    if !sh.figures.saturated {
        return Test::No("the rate still grew with depth at the deepest point".into());
    }
    if let Test::Holds(f) = super::configured::request_size(sh, v) {
        return Test::No(format!(
            "the device was busy with requests this host made small: {}",
            f.part
        ));
    }
    let busy_host = busy_host(v);
    // A loop device's own disk, counted by the kernel per run, shows where
    // its I/Os waited whatever the host's CPUs did.
    let backing = super::configured::backing_waits(sh, v);
    let full_device = device_full(sh, v);
    if let (Some(b), None, None) = (busy_host, &backing, &full_device) {
        return Test::No(b);
    }
    let at = v.at_device_pct();
    let util = v.disk.map(|d| d.util_pct);
    // The latency decomposition, where it speaks for the I/Os, shows it
    // too: the driver and device hold most of each I/O's time.
    let dev_share = share(sh, &["driver and device"])
        .ok()
        .filter(|s| *s >= DEVICE_SHARE_PCT);
    let full = sh.loop_disk_full.clone();
    if backing.is_none() && full.is_none() {
        if let Some(why) = waited_above(v, at).or_else(|| super::configured::queue_short(sh, v)) {
            return Test::No(why);
        }
    }
    let waits = at.is_some_and(|a| a >= AT_DEVICE_PCT)
        || util.is_some_and(|u| u >= DEVICE_BUSY_PCT)
        || dev_share.is_some()
        || backing.is_some()
        || full.is_some();
    if !waits {
        return Test::No(match (at, v.disk) {
            (Some(a), Some(d)) => format!(
                "the device ({}) held only {} of the I/Os in flight and was busy {} of the time: they waited above it, in the host",
                d.name,
                pct(a),
                pct(d.util_pct)
            ),
            _ => "no device counters or latency decomposition to show where the I/Os waited".into(),
        });
    }
    let mut evidence = below_host_evidence(sh, v, dev_share, backing);
    if let Some(f) = full {
        evidence.insert(0, f);
    }
    if let Some((words, _)) = full_device.and_then(|_| threads_bought(sh)) {
        evidence.push(format!("depth and threads bought nothing: {words}"));
    }
    let name = below_host_name(sh, v);
    Test::Holds(Found {
        part: match &sh.caps.unseen {
            Some(_) => format!(
                "the device {name} or what lies between it and this host (the hypervisor's limit for it, a volume's provisioned rate)"
            ),
            None => format!("the device {name} or what lies between it and this host"),
        },
        evidence,
        setting: None,
        margin_pct: at
            .and_then(|a| margin(a, AT_DEVICE_PCT))
            .or_else(|| dev_share.and_then(|s| margin(s, DEVICE_SHARE_PCT))),
    })
}

/// Positive evidence against a limit below the host: the device held few
/// of the many I/Os the study kept in flight (`at`, percent) and was
/// seldom busy. They waited above it (a throttle, a queue, the host's own
/// path), whatever else says so.
fn waited_above(v: &View, at: Option<f64>) -> Option<String> {
    let (a, d) = (at?, v.disk?);
    let few = a < ABOVE_DEVICE_PCT && v.in_flight >= ABOVE_DEVICE_MIN_QD;
    (few && d.util_pct < DEVICE_BUSY_PCT).then(|| {
        format!(
            "the device ({}) held {:.1} of the {} I/Os in flight on average ({}) and was busy {} of the time: they waited above it, in the host",
            d.name,
            d.in_flight.unwrap_or(0.0),
            v.in_flight,
            pct(a),
            pct(d.util_pct)
        )
    })
}

/// What kept the host busy enough to be what held the I/O, where
/// something did (or no CPU figures to show it idle).
pub(super) fn busy_host(v: &View) -> Option<String> {
    // Busy CPUs count against it only where the I/O's work filled them or
    // waited for them: a lower priority's work fills idle moments alone.
    let contended = v.own_share().is_some_and(|o| o >= 50.0) || super::configured::kept_waiting(v);
    match (v.thread_busy, v.cpus_busy) {
        (Some(t), _) if t >= IDLE_THREAD_PCT => {
            Some(format!("the submitting thread was {} busy", pct(t)))
        }
        (_, Some(c)) if c >= IDLE_CPUS_PCT && contended => Some(format!(
            "the CPUs it may use were {} busy{}",
            pct(c),
            v.cpu_wait().map_or(String::new(), |w| format!(
                ", and the submitting thread waited {} of its ready time for one",
                pct(w)
            ))
        )),
        (None, None) => Some("no CPU figures to show the host idle".into()),
        _ => None,
    }
}

/// The evidence that the I/Os waited below the host: the host idle, the
/// device busy and full, its time per I/O growing with depth.
fn below_host_evidence(
    sh: &Shared,
    v: &View,
    dev_share: Option<f64>,
    backing: Option<String>,
) -> Vec<String> {
    let mut evidence = vec![format!(
        "the submitting thread {} busy, the CPUs it may use {} busy{}",
        v.thread_busy.map_or("?".into(), pct),
        v.cpus_busy.map_or("?".into(), pct),
        match (v.cpus_busy, v.cpu_wait()) {
            (Some(c), Some(w)) if c >= IDLE_CPUS_PCT => format!(
                " (by work that gave way: the submitting thread waited {} of its ready time for a CPU)",
                pct(w)
            ),
            _ => String::new(),
        }
    )];
    if let Some(d) = v.disk.filter(|d| d.in_flight.is_some()) {
        evidence.push(format!(
            "{} held {:.1} of the {} I/Os in flight on average and was busy {} of the time",
            d.name,
            d.in_flight.unwrap_or(0.0),
            v.in_flight,
            pct(d.util_pct)
        ));
    }
    if let Some(s) = dev_share {
        evidence.push(format!(
            "driver and device: {} of each I/O's latency",
            pct(s)
        ));
    }
    evidence.extend(backing);
    let l = &sh.figures.device_limit;
    if let (Some(a), Some(b)) = (l.device_latency_ns, l.device_time_at_peak_ns) {
        evidence.push(format!(
            "the driver-and-device time per I/O grows from {:.1} µs at QD 1 to {:.1} µs at QD {}: the queue is below the host",
            a / 1e3,
            b / 1e3,
            v.in_flight
        ));
    }
    if let Some(u) = &sh.caps.unseen {
        evidence.push(u.clone());
    }
    evidence
}

/// The device below the host, named: a loop device's, the disk its file
/// is on.
fn below_host_name(sh: &Shared, v: &View) -> String {
    let name = v
        .disk
        .map(|d| d.name.clone())
        .or_else(|| sh.target.device.clone())
        .unwrap_or_else(|| "the device".into());
    // A loop device's I/O reaches the disk its file is on: that disk.
    match sh.target.stack.as_ref().and_then(|st| st.layers.first()) {
        Some(l)
            if matches!(
                l.kind,
                ssdready_measured::stack_layers::LayerKind::Loop { .. }
            ) && l.under.len() == 1 =>
        {
            format!("{} (under {name}, whose file is on it)", l.under[0])
        }
        _ => name,
    }
}
