//! What limits saturation: at the peak of the queue-depth sweep, which part
//! stops IOPS from growing — the device, one core (the submitting thread is
//! CPU-bound), the submission path, completions, a lock, the scheduler, or
//! all CPUs — with the evidence that decides it.
//!
//! The tests run in order; the first that holds names the limit:
//! 1. **device**: the platform delivers ≥ 90 % of the device (an emulator:
//!    of its analytic limit, or of the model alone at the same depth; a real
//!    device: driver and device hold ≥ 70 % of the latency);
//! 2. **the drive's daemon** (the drive behind the kernel): its serving
//!    threads are ≥ 85 % busy with work (their CPU per I/O less the time
//!    they spun for a completion due soon, × IOPS, per thread): the
//!    apparatus holds the peak, not the platform;
//! 3. **a lock**: ≥ 15 % of busy CPU samples in lock functions;
//! 4. **one core**: the submitting thread is ≥ 85 % busy (its own CPU time);
//! 5. **completions**: ≥ 50 % of the latency is completion to the app;
//! 6. **submission path**: ≥ 50 % of the latency is above the block layer
//!    on submission plus the block layer;
//! 7. **the scheduler**: the scheduler sweep shows `none` ≥ 10 % faster at
//!    QD 32, or ≥ 20 % of busy samples in the io-scheduler layer;
//! 8. **the CPUs**: all CPUs ≥ 90 % busy (other work included);
//! 9. **device**, inferred: a real device while neither the submitting
//!    thread (< 70 %) nor the CPUs (< 85 %) are busy, and driver and device
//!    hold the largest part of the latency (or there is no decomposition).

use crate::figures::{median, profiled, runs_of, Figures};
use crate::model::{Machine, RunRecord, TargetKind, TargetProfile};
use serde::{Deserialize, Serialize};

/// Thresholds of the tests above (percent).
pub const DEVICE_PCT: f64 = 90.0;
pub const DEVICE_SHARE_PCT: f64 = 70.0;
pub const LOCK_SHARE_PCT: f64 = 15.0;
pub const THREAD_BUSY_PCT: f64 = 85.0;
pub const DAEMON_BUSY_PCT: f64 = 85.0;
pub const COMPLETION_SHARE_PCT: f64 = 50.0;
pub const SUBMISSION_SHARE_PCT: f64 = 50.0;
pub const SCHED_COST_PCT: f64 = 10.0;
pub const SCHED_LAYER_PCT: f64 = 20.0;
pub const SYSTEM_BUSY_PCT: f64 = 90.0;

/// The verdict on saturation and what it rests on.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Saturation {
    /// `device`, `a lock`, `one core`, `completions`, `submission path`,
    /// `the scheduler`, `the CPUs`, or `unknown`.
    pub limit: String,
    /// Which part of it, in words.
    pub part: String,
    pub qd: u32,
    pub iops: f64,
    pub evidence: Vec<String>,
    pub delivered_pct: Option<f64>,
    /// Emulator: IOPS against the model alone at the same depth, percent.
    pub of_device_at_point_pct: Option<f64>,
    pub thread_busy_pct: Option<f64>,
    pub system_busy_pct: Option<f64>,
    /// Behind the kernel: the drive's daemon's serving threads, percent
    /// of their time busy with work (CPU per I/O less spinning, × IOPS,
    /// over the threads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_busy_pct: Option<f64>,
    /// Behind the kernel: percent of the serving threads' time spent
    /// spinning for a completion due soon (time they had to spare).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_spin_pct: Option<f64>,
    /// How many serving threads the daemon had (with `daemon_busy_pct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_threads: Option<u64>,
    pub device_share_pct: Option<f64>,
    pub completion_share_pct: Option<f64>,
    pub submission_share_pct: Option<f64>,
    pub lock_share_pct: Option<f64>,
    /// How far the deciding figure was past its threshold, percent of the
    /// threshold (None when inferred without one).
    pub margin_pct: Option<f64>,
    pub runs: Vec<String>,
}

fn pct(x: f64) -> String {
    format!("{x:.0} %")
}

/// The top layers of a profile as `io_uring 41 %, block-core 26 %`.
pub fn top_layers(layers: &[(String, f64, f64, Option<f64>)], n: usize) -> String {
    layers
        .iter()
        .filter(|l| l.1 >= 5.0)
        .take(n)
        .map(|l| format!("{} {}", l.0, pct(l.1)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Classify the limit at the peak of the queue-depth curve.
pub fn classify(
    t: &TargetProfile,
    runs: &[RunRecord],
    f: &Figures,
    machine: &Machine,
) -> Saturation {
    let Some(peak) = &f.peak else {
        return Saturation {
            limit: "unknown".into(),
            part: "no queue-depth run completed".into(),
            ..Default::default()
        };
    };
    let plain = runs_of(runs, &format!("qd-{}", peak.qd));
    let inst = profiled(runs, peak.qd);
    let m = |g: &dyn Fn(&RunRecord) -> Option<f64>| {
        median(&plain.iter().filter_map(|r| g(r)).collect::<Vec<_>>())
    };
    let decomp = inst.and_then(|r| r.summary.decomposition.clone());
    let profile = inst.and_then(|r| r.summary.profile.clone());
    let share = |name: &str| {
        decomp
            .as_ref()
            .and_then(|d| d.parts.iter().find(|p| p.0 == name).map(|p| p.2))
    };
    let mut s = Saturation {
        qd: peak.qd,
        iops: peak.iops,
        // Against the best observed, the peak is 100 % by definition.
        delivered_pct: f
            .device_limit
            .iops
            .filter(|_| f.device_limit.basis == "analytic model")
            .map(|l| 100.0 * peak.iops / l),
        of_device_at_point_pct: peak.device_iops.map(|d| 100.0 * peak.iops / d),
        thread_busy_pct: m(&|r| r.summary.cpu.as_ref()?.thread_busy_max_pct),
        system_busy_pct: m(&|r| r.summary.cpu.as_ref().map(|c| c.system_busy_pct)),
        daemon_busy_pct: m(&|r| daemon_share(r, |t| t.daemon_cpu_ns_per_io - t.spin_ns_per_io)),
        daemon_spin_pct: m(&|r| daemon_share(r, |t| t.spin_ns_per_io)),
        daemon_threads: plain
            .iter()
            .filter_map(|r| r.summary.transport.as_ref().map(|t| t.threads))
            .find(|n| *n > 0),
        device_share_pct: share("driver and device"),
        completion_share_pct: share("completion to the app"),
        submission_share_pct: share("above block, submission")
            .map(|a| a + share("block layer and scheduler").unwrap_or(0.0)),
        lock_share_pct: profile.as_ref().map(|p| p.lock_share_pct),
        runs: peak
            .runs
            .iter()
            .cloned()
            .chain(inst.map(|r| r.id.clone()))
            .collect(),
        ..Default::default()
    };
    s.evidence = evidence(&s, machine.cpus);
    let (limit, part, margin) = decide(t, &s, f, profile.as_ref(), machine);
    s.limit = limit.into();
    s.part = part;
    s.margin_pct = margin;
    s
}

/// A run's daemon threads' share of their time spent on `per_io` (ns of
/// CPU per I/O), percent (behind the kernel, with the thread count known).
fn daemon_share(r: &RunRecord, per_io: fn(&crate::transport::Transport) -> f64) -> Option<f64> {
    let t = r.summary.transport.as_ref()?;
    (t.threads > 0 && r.summary.iops > 0.0)
        .then(|| 100.0 * per_io(t).max(0.0) * r.summary.iops / 1e9 / t.threads as f64)
}

fn evidence(s: &Saturation, cpus: u32) -> Vec<String> {
    let mut e = Vec::new();
    if let Some(d) = s.delivered_pct {
        e.push(format!("{} of the device's limit at QD {}", pct(d), s.qd));
    }
    if let Some(d) = s.of_device_at_point_pct {
        e.push(format!(
            "{} of what the model alone does at QD {}",
            pct(d),
            s.qd
        ));
    }
    if let Some(b) = s.thread_busy_pct {
        e.push(format!("the submitting thread is {} busy", pct(b)));
    }
    if let Some(b) = s.system_busy_pct {
        e.push(format!("all {cpus} CPUs are {} busy", pct(b)));
    }
    if let (Some(b), Some(n)) = (s.daemon_busy_pct, s.daemon_threads) {
        e.push(format!(
            "the drive's daemon's {n} serving thread{} {} busy with work{}",
            if n == 1 { " is" } else { "s are" },
            pct(b),
            match s.daemon_spin_pct.filter(|p| *p >= 0.5) {
                Some(p) => format!(" and {} spinning for completions", pct(p)),
                None => String::new(),
            }
        ));
    }
    for (what, v) in [
        ("driver and device", s.device_share_pct),
        ("completion to the app", s.completion_share_pct),
        ("submission and block layer", s.submission_share_pct),
    ] {
        if let Some(v) = v {
            e.push(format!("{what}: {} of the latency", pct(v)));
        }
    }
    if let Some(l) = s.lock_share_pct.filter(|&l| l > 1.0) {
        e.push(format!("{} of busy CPU in lock functions", pct(l)));
    }
    e
}

/// A classification: what limits, the part of it, and the margin past its
/// threshold (percent).
type Decision = (&'static str, String, Option<f64>);

fn ge(v: Option<f64>, th: f64) -> bool {
    v.is_some_and(|v| v >= th)
}

fn margin(v: Option<f64>, th: f64) -> Option<f64> {
    v.map(|v| 100.0 * (v - th).abs() / th)
}

/// The tests in order; the first that holds decides.
fn decide(
    t: &TargetProfile,
    s: &Saturation,
    f: &Figures,
    profile: Option<&crate::summary::ProfileSummary>,
    m: &Machine,
) -> Decision {
    // The device's timing is known (the model's limit): the built-in
    // emulator, in process or behind the kernel.
    let emu = t.kind == TargetKind::Emulator || t.emulated.is_some();
    device_decision(s, f, emu)
        .or_else(|| daemon_decision(s))
        .or_else(|| host_decision(t, s, profile))
        .or_else(|| scheduler_decision(t, f, profile))
        .or_else(|| {
            ge(s.system_busy_pct, SYSTEM_BUSY_PCT).then(|| {
                (
                    "the CPUs",
                    cpus_part(s, profile, m),
                    margin(s.system_busy_pct, SYSTEM_BUSY_PCT),
                )
            })
        })
        .or_else(|| waiting_device(s, emu))
        .unwrap_or(("unknown", "no test held: see the evidence".into(), None))
}

/// The device: it delivers what its model allows (an emulator), or holds
/// most of the latency.
fn device_decision(s: &Saturation, f: &Figures, emu: bool) -> Option<Decision> {
    let device_part = || {
        if emu {
            f.device_limit.bound_by.clone().unwrap_or_default()
        } else {
            match (
                f.device_limit.device_latency_ns,
                f.device_limit.device_time_at_peak_ns,
            ) {
                (Some(a), Some(b)) => format!(
                    "its time per I/O grows from {:.1} µs at QD 1 to {:.1} µs at QD {}",
                    a / 1e3,
                    b / 1e3,
                    s.qd
                ),
                _ => "the host waits for it".into(),
            }
        }
    };
    if emu && (ge(s.delivered_pct, DEVICE_PCT) || ge(s.of_device_at_point_pct, DEVICE_PCT)) {
        let best = [s.delivered_pct, s.of_device_at_point_pct]
            .into_iter()
            .flatten()
            .reduce(f64::max);
        return Some(("device", device_part(), margin(best, DEVICE_PCT)));
    }
    if !emu && ge(s.device_share_pct, DEVICE_SHARE_PCT) {
        return Some((
            "device",
            device_part(),
            margin(s.device_share_pct, DEVICE_SHARE_PCT),
        ));
    }
    None
}

/// The drive's daemon: its serving threads are busy all the time, so the
/// apparatus, not the platform, holds the peak.
fn daemon_decision(s: &Saturation) -> Option<Decision> {
    if !ge(s.daemon_busy_pct, DAEMON_BUSY_PCT) {
        return None;
    }
    let n = s.daemon_threads.unwrap_or(1);
    Some((
        "the drive's daemon",
        format!(
            "its {n} serving thread{} {} busy with work",
            if n == 1 { " is" } else { "s are" },
            pct(s.daemon_busy_pct.unwrap_or(0.0))
        ),
        margin(s.daemon_busy_pct, DAEMON_BUSY_PCT),
    ))
}

/// The host's own limits: a lock, one core, completions, the submission
/// path.
fn host_decision(
    t: &TargetProfile,
    s: &Saturation,
    profile: Option<&crate::summary::ProfileSummary>,
) -> Option<Decision> {
    if ge(s.lock_share_pct, LOCK_SHARE_PCT) {
        let names = profile
            .map(|p| p.lock_functions.join(", "))
            .unwrap_or_default();
        return Some(("a lock", names, margin(s.lock_share_pct, LOCK_SHARE_PCT)));
    }
    if ge(s.thread_busy_pct, THREAD_BUSY_PCT) {
        return Some((
            "one core",
            core_part(t.kind == TargetKind::Emulator, profile),
            margin(s.thread_busy_pct, THREAD_BUSY_PCT),
        ));
    }
    if ge(s.completion_share_pct, COMPLETION_SHARE_PCT) {
        return Some((
            "completions",
            "finished I/Os wait for the submitting thread to reap them".into(),
            margin(s.completion_share_pct, COMPLETION_SHARE_PCT),
        ));
    }
    if ge(s.submission_share_pct, SUBMISSION_SHARE_PCT) {
        let part = profile
            .map(|p| top_layers(&p.layers, 3))
            .unwrap_or_default();
        return Some((
            "submission path",
            part,
            margin(s.submission_share_pct, SUBMISSION_SHARE_PCT),
        ));
    }
    None
}

/// The I/O scheduler: its measured cost at depth, or its share of the CPU.
fn scheduler_decision(
    t: &TargetProfile,
    f: &Figures,
    profile: Option<&crate::summary::ProfileSummary>,
) -> Option<Decision> {
    let sched_cost = f
        .comparisons
        .schedulers
        .iter()
        .filter(|c| c.qd >= 32 && Some(&c.scheduler) == t.scheduler.as_ref())
        .filter_map(|c| c.cost_pct)
        .reduce(f64::max);
    let sched_layer = profile
        .and_then(|p| p.layers.iter().find(|l| l.0 == "io-scheduler"))
        .map(|l| l.1);
    (ge(sched_cost, SCHED_COST_PCT) || ge(sched_layer, SCHED_LAYER_PCT)).then(|| {
        (
            "the scheduler",
            format!(
                "{} on {}",
                t.scheduler.clone().unwrap_or_default(),
                t.device.clone().unwrap_or_default()
            ),
            margin(sched_cost.or(sched_layer), SCHED_COST_PCT),
        )
    })
}

/// A real device the host waits on: nothing on the host busy, and driver
/// and device the largest part of the latency (or no decomposition).
fn waiting_device(s: &Saturation, emu: bool) -> Option<Decision> {
    let device_largest = match s.device_share_pct {
        None => true,
        Some(d) => {
            d >= s.completion_share_pct.unwrap_or(0.0) && d >= s.submission_share_pct.unwrap_or(0.0)
        }
    };
    if emu
        || !device_largest
        || !s.thread_busy_pct.is_some_and(|b| b < 70.0)
        || !s.system_busy_pct.is_some_and(|b| b < 85.0)
    {
        return None;
    }
    let why = match s.device_share_pct {
        Some(d) => format!(
            "nothing on the host is busy while it waits, and driver and device hold the largest part of the latency ({})",
            pct(d)
        ),
        None => "nothing on the host is busy while it waits (no decomposition: inferred)".into(),
    };
    Some(("device", why, None))
}

fn cpus_part(
    s: &Saturation,
    profile: Option<&crate::summary::ProfileSummary>,
    m: &Machine,
) -> String {
    let thread = s.thread_busy_pct.map_or(String::new(), |b| {
        format!("the submitting thread runs only {} of the time; ", pct(b))
    });
    let others = profile
        .and_then(|p| p.layers.iter().find(|l| l.0 == "other user"))
        .filter(|l| l.1 >= 10.0)
        .map(|l| format!("other processes take {} of the busy CPU", pct(l.1)))
        .or_else(|| {
            m.background_busy_pct.filter(|&b| b >= 10.0).map(|b| {
                format!(
                    "other work kept the CPUs {} busy before the study began",
                    pct(b)
                )
            })
        })
        .unwrap_or_else(|| {
            "other threads (kernel workers, other processes) compete with it".into()
        });
    thread + &others
}

/// What the CPU-bound thread's core does: the profile's layers (shares of
/// all busy CPU) without other processes, which are named apart.
fn core_part(emu: bool, profile: Option<&crate::summary::ProfileSummary>) -> String {
    let own = profile.map(|p| {
        let mine: Vec<_> = p
            .layers
            .iter()
            .filter(|l| l.0 != "other user")
            .cloned()
            .collect();
        let others = p
            .layers
            .iter()
            .find(|l| l.0 == "other user")
            .map_or(0.0, |l| l.1);
        (mine, others)
    });
    match own {
        Some((layers, others)) if !layers.is_empty() => {
            let mut s = top_layers(&layers, 3);
            if others >= 20.0 {
                s.push_str(&format!(
                    "; other processes took {} of the busy CPU",
                    pct(others)
                ));
            }
            s
        }
        _ if emu => "ssdready's worker loop and the emulator's queue pair (the emulator runs in the process: no kernel below it)".into(),
        _ => "its own CPU time (run as root for the split by layer)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn top_layers_skip_the_small_ones() {
        let l = vec![
            ("io_uring".to_string(), 41.0, 0.0, None),
            ("block-core".to_string(), 26.0, 0.0, None),
            ("memory".to_string(), 3.0, 0.0, None),
        ];
        assert_eq!(top_layers(&l, 3), "io_uring 41 %, block-core 26 %");
    }

    /// Behind the kernel, a daemon whose one serving thread is busy all the
    /// time holds the peak; one with time to spare does not.
    #[test]
    fn a_busy_daemon_thread_holds_the_peak_behind_the_kernel() {
        let t = TargetProfile {
            emulated: Some("nvme-tlc".into()),
            ..Default::default()
        };
        let f = Figures {
            peak: Some(crate::figures::CurvePoint {
                qd: 128,
                iops: 83_500.0,
                device_iops: Some(997_000.0),
                runs: vec!["qd-128".into()],
                ..Default::default()
            }),
            ..Default::default()
        };
        let run = |cpu_ns: f64, threads: u64, spin_ns: f64| {
            let mut r = RunRecord {
                id: "qd-128".into(),
                point: "qd-128".into(),
                ..Default::default()
            };
            r.summary.iops = 83_500.0;
            r.summary.transport = Some(crate::transport::Transport {
                daemon_cpu_ns_per_io: cpu_ns,
                threads,
                spin_ns_per_io: spin_ns,
                ..Default::default()
            });
            r
        };
        let m = Machine {
            cpus: 2,
            ..Default::default()
        };
        // 11.8 µs × 83.5K IOPS = 98.5 % of one thread.
        let s = classify(&t, &[run(11_800.0, 1, 0.0)], &f, &m);
        assert_eq!(s.limit, "the drive's daemon");
        assert!(
            s.part
                .contains("its 1 serving thread is 99 % busy with work"),
            "{}",
            s.part
        );
        // A thread that spent most of that spinning for completions had
        // time to spare: 8 µs of the 11.8 spun leaves 32 % of work.
        let s = classify(&t, &[run(11_800.0, 1, 8_000.0)], &f, &m);
        assert_ne!(s.limit, "the drive's daemon");
        assert!(
            s.evidence
                .iter()
                .any(|e| e.contains("serving thread is 32 % busy with work and 67 % spinning")),
            "{:?}",
            s.evidence
        );
        // Two threads: each half busy, so not the daemon.
        let s = classify(&t, &[run(11_800.0, 2, 0.0)], &f, &m);
        assert_ne!(s.limit, "the drive's daemon");
        assert_eq!(s.daemon_busy_pct.map(|b| b.round()), Some(49.0));
        // An older daemon without its thread count: nothing said.
        let s = classify(&t, &[run(11_800.0, 0, 0.0)], &f, &m);
        assert_eq!(s.daemon_busy_pct, None);
    }
}
