//! The figures of a study's curves and runs, below the causes that weigh
//! them: the queue-depth curve (its points are the data crate's
//! [`CurvePoint`], a point's repeats combined by its [`median`]), the
//! device's limit, what each run delivered, scaling, the QD 1 platform
//! share, clocks per I/O, the noise between repeats; the helpers that find
//! a point's runs; and the emulated drive's daemon over runs.
//! [`crate::figures`] gathers them, with the causes', into
//! [`crate::figures::Figures`]; the causes see the curve through
//! [`CurveFigures`].

use serde::{Deserialize, Serialize};
use ssdready_measured::basis::{Bound, ANALYTIC_MODEL};
use ssdready_measured::curve::{median, CurvePoint};
use ssdready_measured::record::{RunRecord, TargetProfile};
use ssdready_measured::summary::Transport;

/// The curve's figures as the causes weigh them: the queue-depth curve,
/// its peak and knee, whether it stopped gaining, and the device's limit.
#[derive(Clone, Copy)]
pub struct CurveFigures<'a> {
    pub qd_curve: &'a [CurvePoint],
    pub peak: Option<&'a CurvePoint>,
    pub knee_qd: Option<u32>,
    pub saturated: bool,
    pub device_limit: &'a DeviceLimit,
    /// Throughput over threads, each against one thread as deep.
    pub scaling: &'a [Scaling],
}

/// The device's own capability (4 KiB random reads).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceLimit {
    /// None: nothing in the device bounds it (`emu:null`).
    pub iops: Option<f64>,
    pub bw_bytes_per_s: Option<f64>,
    /// `analytic model` (emulator), or `highest rate measured`: no basis
    /// for the device's own limit (then `iops` is the study's best run).
    pub basis: String,
    /// What sets it, in words.
    pub bound_by: Option<String>,
    /// Emulator: every resource's cap.
    pub bounds: Vec<Bound>,
    /// Latency of one I/O on the idle device: the model's (emulator) or the
    /// driver-and-device time at QD 1 (`--decompose`).
    pub device_latency_ns: Option<f64>,
    /// Emulator: the model's highest IOPS over the sweep, in virtual time.
    pub virtual_peak_iops: Option<f64>,
    /// Real device: driver-and-device time at the peak depth.
    pub device_time_at_peak_ns: Option<f64>,
    pub runs: Vec<String>,
}

/// One run against the limit of its workload.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Delivered {
    pub run: String,
    pub workload: String,
    pub iops: f64,
    pub limit_iops: Option<f64>,
    pub pct: Option<f64>,
    /// Emulator: IOPS against the model alone at the same point, percent.
    pub of_device_at_point_pct: Option<f64>,
}

/// Latency at a point.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Latency {
    pub qd: u32,
    pub mean_ns: f64,
    pub p99_ns: u64,
    pub run: String,
}

/// Throughput scaling over threads.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Scaling {
    pub threads: u32,
    pub qd_per_thread: u32,
    pub iops: f64,
    /// IOPS against what the threads could attain, percent: N × one
    /// thread's IOPS, or the device's modelled limit where that is lower.
    pub efficiency_pct: f64,
    /// Whole-system CPU per I/O against one thread's, percent (100: no
    /// extra cost per I/O).
    pub cpu_efficiency_pct: Option<f64>,
    /// One thread's IOPS with as many I/Os in flight as all the threads
    /// together (the QD curve at `threads × qd_per_thread`), when the study
    /// ran that depth: what depth alone gives, against which the threads
    /// are judged.
    pub depth_iops: Option<f64>,
    /// The model alone at that depth (an emulated device).
    pub depth_device_iops: Option<f64>,
    pub runs: Vec<String>,
}

/// Who holds the latency at QD 1.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlatformShare {
    /// Everything but the driver and device, percent of the mean.
    pub pct: f64,
    pub total_ns: f64,
    pub platform_ns: f64,
    pub device_ns: f64,
    /// (part, mean ns, share %) along the path, when decomposed.
    pub parts: Vec<(String, f64, f64)>,
    /// `latency decomposition (eBPF)`, `emulator model`, or
    /// `block-layer statistics` (above the block layer only).
    pub source: String,
    pub runs: Vec<String>,
    /// The platform's part's error, ns, where it has one (behind the
    /// kernel with a transport calibration: the calibration's spread and
    /// half the spread of the QD 1 repeats' means, combined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub err_ns: Option<f64>,
    /// How far what was taken out (the drive's transport and the daemon's
    /// lateness) exceeds the QD 1 mean less the device's own time, ns,
    /// when that is beyond `err_ns`: the parts do not add up, and the
    /// platform's 0 is a floor, not a measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overcount_ns: Option<f64>,
    /// Behind the kernel: the QD 1 mean less the time the daemon's own
    /// stamps account for (the device's time, its lateness and its reply),
    /// ns. The platform's part and the transport's together, measured
    /// without the zero-time drive: a ceiling on the platform's part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside_daemon_ns: Option<f64>,
    /// The measured mean less its parts, ns, when that is beyond the
    /// parts' error: the parts do not add up to the mean (the latency
    /// decomposition joined only some of the I/Os, or time was held where
    /// its tracepoints do not see), a part "not accounted for" is shown,
    /// and no share is claimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unaccounted_ns: Option<f64>,
    /// Of the run's I/Os, the share the decomposition joined, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined_pct: Option<f64>,
    /// The time, ns, a request waited in the block layer at QD 1 where
    /// nothing of the host held it there: the driver refused it until the
    /// device could take it (`figures::paced_at_qd1`). Neither side's
    /// cost is claimed then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced_ns: Option<f64>,
}

/// Parts that should add up to a measured mean leave time out beyond
/// this share of it (or 2 µs, whichever is more).
pub const ADD_UP_PCT: f64 = 5.0;

impl PlatformShare {
    /// Whether the parts add up to the mean (nothing left unaccounted).
    pub fn adds_up(&self) -> bool {
        self.unaccounted_ns.is_none()
    }
}

/// Clocks per I/O at QD 1 and at the peak.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClocksPerIo {
    pub qd1: Option<ClocksAt>,
    pub saturation: Option<ClocksAt>,
}

/// Clocks per I/O at one point.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClocksAt {
    pub qd: u32,
    /// Whole system, and the process alone (TSC clocks).
    pub system: Option<f64>,
    pub process: Option<f64>,
    /// (layer, clocks per I/O, share of busy %), from `--profile`.
    pub layers: Vec<(String, f64, f64)>,
    pub source: String,
    pub runs: Vec<String>,
}

/// The spread between repeats of one point.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Noise {
    pub point: String,
    pub iops: Vec<f64>,
    /// (max − min) / median, percent.
    pub spread_pct: f64,
    /// Standard deviation / mean, percent.
    pub cov_pct: f64,
    pub runs: Vec<String>,
}

/// The point id of a curve's depth: `qd-16`, `platform-qd16`.
pub fn point_at(sweep: &str, qd: u32) -> String {
    match sweep {
        "qd" => format!("qd-{qd}"),
        s => format!("{s}-qd{qd}"),
    }
}

/// The successful, uninstrumented runs of a point.
pub fn runs_of<'a>(runs: &'a [RunRecord], point: &str) -> Vec<&'a RunRecord> {
    runs.iter()
        .filter(|r| r.point == point && r.error.is_none() && !r.instrumented)
        .collect()
}

/// The instrumented run at depth `qd`: at QD 1 the QD 1 run; at any other
/// depth the one instrumented at the peak (the driver fixes the peak from
/// first measurements; medians of repeats may move it a step).
pub fn profiled(runs: &[RunRecord], qd: u32) -> Option<&RunRecord> {
    let inst = || {
        runs.iter()
            .filter(|r| r.sweep == "instrumented" && r.error.is_none())
    };
    inst()
        .find(|r| r.workload.qd == qd)
        .or_else(|| inst().find(|r| qd > 1 && r.workload.qd > 1))
}

/// The queue-depth sweep's deepest run that succeeded.
pub fn deepest_qd_run(runs: &[RunRecord]) -> Option<&RunRecord> {
    runs.iter()
        .filter(|r| r.sweep == "qd" && r.error.is_none())
        .max_by_key(|r| r.workload.qd)
}

pub(crate) fn ids(v: &[&RunRecord]) -> Vec<String> {
    v.iter().map(|r| r.id.clone()).collect()
}

/// Whether the last two doublings each added less than 5 % over the best
/// before them (the queue-depth sweep's stop rule).
pub fn saturated(iops: &[f64]) -> bool {
    saturated_within(iops, SATURATED_PCT)
}

/// A doubling of depth that adds less than this, percent, adds nothing:
/// the queue-depth sweep's stop rule.
pub const SATURATED_PCT: f64 = 5.0;

/// Whether the last two doublings each added less than `pct` percent over
/// the best before them. The judge passes the larger of the stop rule's
/// 5 % and the repeats' noise: a curve's point is its best repeat, so a
/// point repeated three times stands higher by chance than one run once,
/// and a rise within the noise is no rise.
pub fn saturated_within(iops: &[f64], pct: f64) -> bool {
    let n = iops.len();
    if n < 3 {
        return false;
    }
    let best_before = |k: usize| iops[..k].iter().copied().fold(0.0, f64::max);
    let more = 1.0 + pct.max(0.0) / 100.0;
    iops[n - 1] < more * best_before(n - 1) && iops[n - 2] < more * best_before(n - 2)
}

/// The queue depths of a study's queue-depth sweep, each once, in order.
pub fn qd_sweep_depths(runs: &[RunRecord]) -> Vec<u32> {
    let mut qds: Vec<u32> = runs
        .iter()
        .filter(|r| r.sweep == "qd" && r.error.is_none())
        .map(|r| r.workload.qd)
        .collect();
    qds.sort_unstable();
    qds.dedup();
    qds
}

pub(crate) fn qd_curve(runs: &[RunRecord]) -> Vec<CurvePoint> {
    curve_of(runs, "qd", &qd_sweep_depths(runs))
}

/// The curve of a sweep whose points are `SWEEP-qd{N}` (the queue-depth
/// sweep's are `qd-{N}`) at depths `qds`.
pub(crate) fn curve_of(runs: &[RunRecord], sweep: &str, qds: &[u32]) -> Vec<CurvePoint> {
    qds.iter()
        .copied()
        .filter_map(|qd| {
            let rs = runs_of(runs, &point_at(sweep, qd));
            let m = |g: &dyn Fn(&RunRecord) -> f64| {
                median(&rs.iter().map(|r| g(r)).collect::<Vec<_>>())
            };
            let dev = rs.iter().find_map(|r| r.device_model.clone());
            Some(CurvePoint {
                qd,
                // Interference (other work, an idle CPU's wake-up) only
                // lowers throughput: the best repeat is what the platform
                // can deliver; latency is the repeats' median.
                iops: rs.iter().map(|r| r.summary.iops).reduce(f64::max)?,
                lat_mean_ns: m(&|r| r.summary.lat_mean_ns)?,
                lat_p99_ns: m(&|r| r.summary.lat_p99_ns as f64)? as u64,
                device_iops: dev.as_ref().map(|d| d.iops),
                device_lat_mean_ns: dev.as_ref().map(|d| d.lat_mean_ns),
                runs: ids(&rs),
                less_transport_lat_ns: None,
                less_transport_err_ns: None,
                block_ns: median(&rs.iter().filter_map(|r| block_ns(r)).collect::<Vec<_>>()),
                quota_stopped_ns: median(
                    &rs.iter()
                        .filter_map(|r| {
                            let g = r.context.as_ref()?.cgroups.as_ref()?.quota_level()?;
                            let ns = g.throttled_ns.filter(|n| *n > 0)?;
                            (r.summary.ios > 0).then(|| ns as f64 / r.summary.ios as f64)
                        })
                        .collect::<Vec<_>>(),
                ),
            })
        })
        .collect()
}

/// A run's time per request in the block layer and below, from the
/// device's counters, when the device counted the study's I/Os (within 2 %:
/// no other I/O on it, no split requests).
pub(crate) fn block_ns(r: &RunRecord) -> Option<f64> {
    r.summary.disk.as_ref()?.own_block_mean_ns()
}

/// The device's limit for a run's workload, where its basis is a model
/// (recorded with the run); None otherwise: the highest rate measured for
/// the same workload is no limit to deliver a share of.
pub(crate) fn limit_for(t: &TargetProfile, r: &RunRecord) -> Option<f64> {
    t.basis
        .as_ref()
        .filter(|b| b.source == ANALYTIC_MODEL)
        .and(r.model_limit_iops)
}

pub(crate) fn delivered(t: &TargetProfile, runs: &[RunRecord]) -> Vec<Delivered> {
    runs.iter()
        .filter(|r| r.error.is_none() && r.clock == "real" && r.workload.targets.len() == 1)
        .filter(|r| r.sweep != "fill")
        .filter(|r| r.workload.targets[0] == t.spec)
        .map(|r| {
            let limit = limit_for(t, r);
            let w = &r.workload;
            Delivered {
                run: r.id.clone(),
                workload: format!(
                    "{} {} QD {} × {} thread(s){}",
                    w.rw,
                    ssdready_measured::record::fmt_bs(w.bs),
                    w.qd,
                    w.threads,
                    if w.direct { "" } else { " buffered" }
                ),
                iops: r.summary.iops,
                limit_iops: limit,
                pct: limit
                    .filter(|&l| l > 0.0)
                    .map(|l| 100.0 * r.summary.iops / l),
                of_device_at_point_pct: r
                    .device_model
                    .as_ref()
                    .filter(|d| d.iops > 0.0)
                    .map(|d| 100.0 * r.summary.iops / d.iops),
            }
        })
        .collect()
}

/// Thread scaling: each thread count's IOPS against what it could attain,
/// N × one thread's IOPS, or the device's modelled limit where that is
/// lower (16 threads on a device one thread already saturates do not
/// "scale poorly": the device is the bound).
pub(crate) fn scaling(
    runs: &[RunRecord],
    device_limit_iops: Option<f64>,
    curve: &[CurvePoint],
) -> Vec<Scaling> {
    let mut out = Vec::new();
    let mut points: Vec<(u32, u32)> = runs
        .iter()
        .filter(|r| r.sweep == "threads" && r.error.is_none())
        .map(|r| (r.workload.qd, r.workload.threads))
        .collect();
    points.sort_unstable();
    points.dedup();
    for (qd, threads) in points {
        let one = runs_of(runs, &format!("qd-{qd}"));
        let many = runs_of(runs, &format!("threads-{threads}x{qd}"));
        let med = |v: &[&RunRecord], g: &dyn Fn(&RunRecord) -> Option<f64>| {
            median(&v.iter().filter_map(|r| g(r)).collect::<Vec<_>>())
        };
        let (Some(i1), Some(it)) = (
            med(&one, &|r| Some(r.summary.iops)),
            med(&many, &|r| Some(r.summary.iops)),
        ) else {
            continue;
        };
        let cpu = |r: &RunRecord| r.summary.cpu.as_ref().map(|c| c.system_ns_per_io);
        let cpu_eff = match (med(&one, &cpu), med(&many, &cpu)) {
            (Some(a), Some(b)) if b > 0.0 => Some(100.0 * a / b),
            _ => None,
        };
        let depth = curve.iter().find(|c| c.qd == threads * qd);
        out.push(Scaling {
            threads,
            qd_per_thread: qd,
            iops: it,
            efficiency_pct: 100.0 * it / attainable(threads as f64 * i1, device_limit_iops),
            cpu_efficiency_pct: cpu_eff,
            depth_iops: depth.map(|c| c.iops),
            depth_device_iops: depth.and_then(|c| c.device_iops),
            runs: ids(&many)
                .into_iter()
                .chain(ids(&one))
                .chain(depth.into_iter().flat_map(|c| c.runs.iter().cloned()))
                .collect(),
        });
    }
    out
}

/// What `linear` IOPS can reach under a device limit (when there is one).
pub(crate) fn attainable(linear: f64, device_limit_iops: Option<f64>) -> f64 {
    device_limit_iops.map_or(linear, |l| linear.min(l))
}

/// The QD 1 split from the latency decomposition, held against the run's
/// own mean over all its I/Os: the joined I/Os' parts add up to their own
/// mean, which leaves out what the decomposition did not join (a throttled
/// bio released by another task, say). Beyond [`ADD_UP_PCT`] the remainder
/// is its own part and no share is claimed.
pub(crate) fn decomposed_share(
    r: &RunRecord,
    d: &ssdready_measured::summary::DecompSummary,
    pct: f64,
    dev: f64,
) -> PlatformShare {
    let sum: f64 = d.parts.iter().map(|p| p.1).sum();
    let mean = if r.summary.lat_mean_ns > 0.0 {
        r.summary.lat_mean_ns
    } else {
        sum
    };
    let left = mean - sum;
    let unaccounted = (left.abs() > (ADD_UP_PCT / 100.0 * mean).max(2_000.0)).then_some(left);
    let mut parts: Vec<(String, f64, f64)> = d
        .parts
        .iter()
        .map(|p| (p.0.clone(), p.1, 100.0 * p.1 / mean.max(1.0)))
        .collect();
    if let Some(u) = unaccounted {
        parts.push(("not accounted for".into(), u, 100.0 * u / mean.max(1.0)));
    }
    PlatformShare {
        pct,
        total_ns: mean,
        platform_ns: sum - dev,
        device_ns: dev,
        parts,
        source: "latency decomposition (eBPF on the block tracepoints)".into(),
        runs: vec![r.id.clone()],
        err_ns: None,
        overcount_ns: None,
        outside_daemon_ns: None,
        unaccounted_ns: unaccounted,
        joined_pct: d.joined_pct,
        paced_ns: None,
    }
}

pub(crate) fn clocks_at(runs: &[RunRecord], qd: u32) -> Option<ClocksAt> {
    if let Some(r) = profiled(runs, qd) {
        if let Some(p) = &r.summary.profile {
            let cpu = r.summary.cpu.as_ref();
            return Some(ClocksAt {
                qd,
                system: cpu.and_then(|c| c.system_clocks_per_io),
                process: cpu.and_then(|c| c.process_clocks_per_io),
                layers: p
                    .layers
                    .iter()
                    .filter_map(|(l, share, _, clocks)| Some((l.clone(), (*clocks)?, *share)))
                    .collect(),
                source: "--profile (sampled on every CPU, classified by kernel layer)".into(),
                runs: vec![r.id.clone()],
            });
        }
    }
    let rs = runs_of(runs, &format!("qd-{qd}"));
    let med = |g: &dyn Fn(&RunRecord) -> Option<f64>| {
        median(&rs.iter().filter_map(|r| g(r)).collect::<Vec<_>>())
    };
    let system = med(&|r| r.summary.cpu.as_ref()?.system_clocks_per_io);
    let process = med(&|r| r.summary.cpu.as_ref()?.process_clocks_per_io);
    (system.is_some() || process.is_some()).then(|| ClocksAt {
        qd,
        system,
        process,
        layers: Vec::new(),
        source: rs
            .iter()
            .find_map(|r| r.summary.cpu.as_ref().map(|c| c.source.clone()))
            .unwrap_or_default(),
        runs: ids(&rs),
    })
}

pub(crate) fn noise(runs: &[RunRecord]) -> Vec<Noise> {
    let mut points: Vec<&str> = runs
        .iter()
        .filter(|r| r.repeat > 1)
        .map(|r| r.point.as_str())
        .collect();
    points.dedup();
    points.sort_unstable();
    points.dedup();
    points
        .into_iter()
        .filter_map(|p| {
            let rs = runs_of(runs, p);
            let v: Vec<f64> = rs.iter().map(|r| r.summary.iops).collect();
            if v.len() < 2 {
                return None;
            }
            let med = median(&v)?;
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
            let (lo, hi) = v
                .iter()
                .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
            Some(Noise {
                point: p.to_string(),
                spread_pct: if med > 0.0 {
                    100.0 * (hi - lo) / med
                } else {
                    0.0
                },
                cov_pct: if mean > 0.0 {
                    100.0 * var.sqrt() / mean
                } else {
                    0.0
                },
                iops: v,
                runs: ids(&rs),
            })
        })
        .collect()
}

/// The daemon over `runs` (each run's own figures, weighted by its I/Os);
/// None when no run has them.
pub fn over(runs: &[&RunRecord]) -> Option<Transport> {
    let ts: Vec<&Transport> = runs
        .iter()
        .filter_map(|r| r.summary.transport.as_ref())
        .filter(|t| t.ios > 0)
        .collect();
    let n: u64 = ts.iter().map(|t| t.ios).sum();
    if n == 0 {
        return None;
    }
    let w =
        |f: fn(&Transport) -> f64| ts.iter().map(|t| f(t) * t.ios as f64).sum::<f64>() / n as f64;
    let mut t = Transport {
        name: ts[0].name.clone(),
        ios: n,
        device_ns_mean: w(|t| t.device_ns_mean),
        late_ns_mean: w(|t| t.late_ns_mean),
        late_ns_max: ts.iter().map(|t| t.late_ns_max).max().unwrap_or(0),
        reply_ns_mean: w(|t| t.reply_ns_mean),
        daemon_cpu_ns_per_io: w(|t| t.daemon_cpu_ns_per_io),
        threads: ts.iter().map(|t| t.threads).max().unwrap_or(0),
        spin_ns_per_io: w(|t| t.spin_ns_per_io),
        // Only where every run read it: a part would weigh as the whole.
        wait_ns_per_io: ts
            .iter()
            .all(|t| t.wait_ns_per_io.is_some())
            .then(|| w(|t| t.wait_ns_per_io.unwrap_or(0.0))),
        wait_pct: None,
    };
    t.wait_pct = t.ready_wait_pct();
    Some(t)
}

/// The QD 1 platform share with the drive's transport taken out of the
/// platform's part: the daemon's lateness behind the model and its reply
/// are the emulated drive's cost, not the kernel's (its own part, beside
/// the platform and the device).
pub fn split(mut s: PlatformShare, t: Option<&Transport>) -> PlatformShare {
    let Some(t) = t else { return s };
    let own = (t.late_ns_mean + t.reply_ns_mean)
        .min(s.platform_ns)
        .max(0.0);
    if own <= 0.0 || s.total_ns <= 0.0 {
        return s;
    }
    s.platform_ns -= own;
    s.pct = 100.0 * s.platform_ns / s.total_ns;
    if let Some(p) = s.parts.first_mut() {
        p.0 = "the platform: system call, block layer, driver".into();
        p.1 = s.platform_ns;
    }
    s.parts.insert(
        1,
        (
            format!(
                "the drive's transport ({}: the daemon's lateness and reply)",
                t.name
            ),
            own,
            0.0,
        ),
    );
    s.source
        .push_str("; the daemon's lateness and reply over the QD 1 runs taken out");
    s
}
