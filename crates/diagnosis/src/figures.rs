//! Figures derived from a study's runs. The names are fixed (they are how
//! results are checked): `device_limit`, `delivered_pct`, `knee_qd`,
//! `knee_latency`, `scaling_efficiency`, `platform_share_qd1`,
//! `clocks_per_io`, `saturation`; plus the sweeps' comparisons
//! ([`crate::sweeps`]), the strategies section ([`crate::strategies`]) and
//! the noise between repeats.
//!
//! Repeats of a point are combined by their median; the queue-depth curve
//! is the first target's 4 KiB random reads at one thread.

use crate::basis::{Bound, ANALYTIC_MODEL};
use crate::record::{RunRecord, TargetProfile};
use crate::sweeps::{self, Comparisons};
use serde::{Deserialize, Serialize};

/// Everything derived.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Figures {
    pub device_limit: DeviceLimit,
    /// Every measured run against the device's limit for its workload.
    pub delivered_pct: Vec<Delivered>,
    /// The 4 KiB random-read queue-depth curve: the best IOPS of a depth's
    /// repeats, the median latency.
    pub qd_curve: Vec<CurvePoint>,
    pub peak: Option<CurvePoint>,
    /// Smallest QD reaching 90 % of the peak IOPS (4 KiB random reads).
    pub knee_qd: Option<u32>,
    /// Latency at the knee.
    pub knee_latency: Option<Latency>,
    /// Emulator: the knee of the model alone (virtual time).
    pub device_knee_qd: Option<u32>,
    /// Whether the curve stopped gaining before its last depth.
    pub saturated: bool,
    pub scaling_efficiency: Vec<Scaling>,
    pub platform_share_qd1: Option<PlatformShare>,
    pub clocks_per_io: ClocksPerIo,
    pub saturation: crate::limit::Saturation,
    pub comparisons: Comparisons,
    pub noise: Vec<Noise>,
    /// The typical (median over repeated points) standard deviation between
    /// repeats, percent of their mean: how noisy the machine was.
    pub noise_pct: Option<f64>,
    /// The point whose repeats differed most.
    pub noisiest: Option<Noise>,
    /// Submission/completion strategies against async+intr (the
    /// `strategies` sweep); None when the study ran none.
    #[serde(default)]
    pub strategies: Option<crate::strategies::Section>,
    /// Application workloads against the raw figures (the `applications`
    /// sweep); empty when the study ran none.
    #[serde(default)]
    pub applications: Vec<crate::applications::AppFigure>,
    /// The study of a fleet (`study --client HOSTS`): hosts alone, then
    /// 1…N together; absent in a study of one machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<crate::fleet::Section>,
    /// The emulated drive's transport (daemon) when the target was the
    /// built-in drive behind the kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<crate::transport::Transport>,
    /// The same daemon over the QD 1 runs alone (their own stats, read
    /// around each run): what the QD 1 platform share is corrected by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_qd1: Option<crate::transport::Transport>,
    /// The platform's own peak, measured on the study's reference device
    /// (a loop device over /dev/shm) where the emulated drive's daemon
    /// would hold the studied drive's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<PlatformPeak>,
    /// The transport's own cost, measured with a zero-time drive (kernel
    /// drive only): what the less-the-transport figures take out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<crate::calibration::Calibration>,
    /// The target's block-device stack judged from its devices' counters
    /// over each run: which member or layer holds the I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<crate::stack::StackJudgement>,
    /// The study's I/O against what the device's own counters saw: when
    /// the device served too little of it, no figure is the device's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_reach: Option<crate::reach::DeviceReach>,
    /// The built-in drive's transport's own ceiling at the peak's depth
    /// (its zero-time drive), weighed against the peak.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport_ceiling: Option<crate::apparatus::TransportCeiling>,
}

/// The platform's own curve and peak on the reference device, and what
/// holds that peak.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PlatformPeak {
    /// The reference device (`/dev/loop5`, over /dev/shm).
    pub device: String,
    pub curve: Vec<CurvePoint>,
    pub peak: Option<CurvePoint>,
    /// Smallest depth reaching 90 % of its peak.
    pub knee_qd: Option<u32>,
    pub saturated: bool,
    pub saturation: crate::limit::Saturation,
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

/// One queue depth of the curve.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CurvePoint {
    pub qd: u32,
    pub iops: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: u64,
    /// Emulator: the model alone at this depth (virtual time).
    pub device_iops: Option<f64>,
    pub device_lat_mean_ns: Option<f64>,
    pub runs: Vec<String>,
    /// Kernel drive: the mean latency less the drive's transport (its
    /// calibration at this depth), and that calibration's error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub less_transport_lat_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub less_transport_err_ns: Option<f64>,
    /// Of the mean, the time in the block layer and below, from the
    /// device's own counters (`/sys/block/X/stat`: time per request), when
    /// the device counted the same I/Os as the study (within 2 %); the rest
    /// of the mean is above the block layer. The median over the repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_ns: Option<f64>,
    /// The time the CPU quota stopped the study's group, per I/O (the
    /// group's `cpu.stat` throttled time over the I/Os), where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota_stopped_ns: Option<f64>,
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

/// The median of a list (None when empty).
pub fn median(v: &[f64]) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if s.is_empty() {
        return None;
    }
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    Some(if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    })
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

fn ids(v: &[&RunRecord]) -> Vec<String> {
    v.iter().map(|r| r.id.clone()).collect()
}

/// Derive every figure.
pub fn derive(
    targets: &[TargetProfile],
    runs: &[RunRecord],
    m: &crate::record::Machine,
    strategies: Option<crate::strategies::Section>,
    caps: &crate::limit::caps::Caps,
) -> Figures {
    let mut f = Figures {
        qd_curve: qd_curve(runs),
        ..Default::default()
    };
    f.peak = f
        .qd_curve
        .iter()
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .cloned();
    if let Some(peak) = &f.peak {
        let knee = f.qd_curve.iter().find(|c| c.iops >= 0.9 * peak.iops);
        f.knee_qd = knee.map(|c| c.qd);
        f.knee_latency = knee.map(|c| Latency {
            qd: c.qd,
            mean_ns: c.lat_mean_ns,
            p99_ns: c.lat_p99_ns,
            run: c.runs.first().cloned().unwrap_or_default(),
        });
        let dev_peak = f
            .qd_curve
            .iter()
            .filter_map(|c| c.device_iops)
            .fold(0.0, f64::max);
        f.device_knee_qd = f
            .qd_curve
            .iter()
            .find(|c| dev_peak > 0.0 && c.device_iops.is_some_and(|d| d >= 0.9 * dev_peak))
            .map(|c| c.qd);
        f.saturated = saturated(&f.qd_curve.iter().map(|c| c.iops).collect::<Vec<_>>());
    }
    f.device_limit = device_limit(&targets[0], runs, &f);
    f.delivered_pct = delivered(&targets[0], runs);
    let model_limit = f
        .device_limit
        .iops
        .filter(|_| f.device_limit.basis == "analytic model");
    f.scaling_efficiency = scaling(runs, model_limit, &f.qd_curve);
    f.transport_qd1 = crate::transport::over(&runs_of(runs, "qd-1"));
    f.platform_share_qd1 = match targets[0].emulated {
        Some(_) => model_share(&f, true)
            .map(|s| crate::transport::split(s, f.transport_qd1.as_ref()))
            .or_else(|| platform_share(runs, &f)),
        None => platform_share(runs, &f),
    };
    f.clocks_per_io = ClocksPerIo {
        qd1: clocks_at(runs, 1),
        saturation: f.peak.as_ref().and_then(|p| clocks_at(runs, p.qd)),
    };
    f.noise = noise(runs);
    f.noise_pct = median(&f.noise.iter().map(|n| n.cov_pct).collect::<Vec<_>>());
    f.noisiest = f
        .noise
        .iter()
        .max_by(|a, b| a.spread_pct.total_cmp(&b.spread_pct))
        .cloned();
    f.comparisons = sweeps::compare(runs, &f);
    f.strategies = strategies;
    f.saturation = crate::limit::classify(&targets[0], runs, &f, m, caps);
    held_at_qd1(&mut f, caps);
    f.platform = targets
        .iter()
        .find(|t| t.reference)
        .and_then(|t| platform(t, runs, m, caps));
    f
}

/// The platform's own peak on the reference device `t`, from the
/// `platform` sweep: its curve, knee and what holds its peak.
fn platform(
    t: &TargetProfile,
    runs: &[RunRecord],
    m: &crate::record::Machine,
    caps: &crate::limit::caps::Caps,
) -> Option<PlatformPeak> {
    let mut qds: Vec<u32> = runs
        .iter()
        .filter(|r| r.sweep == "platform" && r.error.is_none())
        .map(|r| r.workload.qd)
        .collect();
    qds.sort_unstable();
    qds.dedup();
    let curve = curve_of(runs, "platform", &qds);
    let peak = curve
        .iter()
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .cloned()?;
    let knee_qd = curve
        .iter()
        .find(|c| c.iops >= 0.9 * peak.iops)
        .map(|c| c.qd);
    let saturated = saturated(&curve.iter().map(|c| c.iops).collect::<Vec<_>>());
    // Judged as its own study: its curve, its peak, no model of it.
    let own = Figures {
        qd_curve: curve.clone(),
        peak: Some(peak.clone()),
        knee_qd,
        saturated,
        device_limit: DeviceLimit {
            basis: crate::basis::HIGHEST_MEASURED.into(),
            iops: Some(peak.iops),
            ..Default::default()
        },
        ..Default::default()
    };
    let saturation = crate::limit::classify_points(t, runs, &own, m, caps, "platform");
    Some(PlatformPeak {
        device: t.spec.clone(),
        curve,
        peak: Some(peak),
        knee_qd,
        saturated,
        saturation,
    })
}

/// Whether the last two doublings each added less than 5 % over the best
/// before them (the queue-depth sweep's stop rule).
pub fn saturated(iops: &[f64]) -> bool {
    let n = iops.len();
    if n < 3 {
        return false;
    }
    let best_before = |k: usize| iops[..k].iter().copied().fold(0.0, f64::max);
    iops[n - 1] < 1.05 * best_before(n - 1) && iops[n - 2] < 1.05 * best_before(n - 2)
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

fn qd_curve(runs: &[RunRecord]) -> Vec<CurvePoint> {
    curve_of(runs, "qd", &qd_sweep_depths(runs))
}

/// The curve of a sweep whose points are `SWEEP-qd{N}` (the queue-depth
/// sweep's are `qd-{N}`) at depths `qds`.
fn curve_of(runs: &[RunRecord], sweep: &str, qds: &[u32]) -> Vec<CurvePoint> {
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
fn block_ns(r: &RunRecord) -> Option<f64> {
    r.summary.disk.as_ref()?.own_block_mean_ns()
}

fn device_limit(t: &TargetProfile, runs: &[RunRecord], f: &Figures) -> DeviceLimit {
    if let Some(b) = t.basis.as_ref().filter(|b| b.source == ANALYTIC_MODEL) {
        let l = &b.read_4k;
        let virt = f
            .qd_curve
            .iter()
            .filter_map(|c| c.device_iops)
            .reduce(f64::max);
        return DeviceLimit {
            iops: l.iops,
            bw_bytes_per_s: l.bw_bytes_per_s,
            basis: "analytic model".into(),
            bound_by: l
                .bound_by
                .clone()
                .or(Some("nothing: the device has zero latency".into())),
            bounds: l.bounds.clone(),
            device_latency_ns: Some(l.idle_latency_ns),
            virtual_peak_iops: virt,
            device_time_at_peak_ns: None,
            runs: Vec::new(),
        };
    }
    let best = runs
        .iter()
        .filter(|r| {
            r.error.is_none()
                && r.workload.rw == "randread"
                && r.workload.bs == 4096
                && r.workload.targets.len() == 1
                && r.workload.targets[0] == t.spec
                && r.workload.direct
        })
        .max_by(|a, b| a.summary.iops.total_cmp(&b.summary.iops));
    let dev_ns = |qd: Option<u32>| {
        qd.and_then(|q| profiled(runs, q))
            .and_then(|r| r.summary.decomposition.as_ref()?.device_ns)
    };
    DeviceLimit {
        iops: best.map(|r| r.summary.iops),
        bw_bytes_per_s: best.map(|r| r.summary.bw_bytes_per_s),
        basis: crate::basis::HIGHEST_MEASURED.into(),
        bound_by: best.map(|r| {
            format!(
                "the best run ({}): not the device's own limit, for which there is no basis",
                r.id
            )
        }),
        bounds: Vec::new(),
        device_latency_ns: dev_ns(Some(1)),
        virtual_peak_iops: None,
        device_time_at_peak_ns: dev_ns(f.peak.as_ref().map(|p| p.qd)),
        runs: best.map(|r| vec![r.id.clone()]).unwrap_or_default(),
    }
}

/// The device's limit for a run's workload, where its basis is a model
/// (recorded with the run); None otherwise: the highest rate measured for
/// the same workload is no limit to deliver a share of.
fn limit_for(t: &TargetProfile, r: &RunRecord) -> Option<f64> {
    t.basis
        .as_ref()
        .filter(|b| b.source == ANALYTIC_MODEL)
        .and(r.model_limit_iops)
}

fn delivered(t: &TargetProfile, runs: &[RunRecord]) -> Vec<Delivered> {
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
                    crate::record::fmt_bs(w.bs),
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
fn scaling(
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
fn attainable(linear: f64, device_limit_iops: Option<f64>) -> f64 {
    device_limit_iops.map_or(linear, |l| linear.min(l))
}

/// The platform's share at QD 1 against the model's device time (the same
/// I/Os on the model alone, in virtual time): on the in-process emulator the
/// platform is ssdready and the emulator's front; behind the kernel it is
/// every layer from the system call to the emulated drive's transport.
fn model_share(f: &Figures, kernel: bool) -> Option<PlatformShare> {
    let c = f.qd_curve.iter().find(|c| c.qd == 1)?;
    let dev = c.device_lat_mean_ns?;
    let platform = (c.lat_mean_ns - dev).max(0.0);
    let (name, source) = match kernel {
        true => (
            "the platform: system call, block layer, driver and the drive's transport",
            "emulator model behind the kernel: the same I/Os on the model alone, in virtual time",
        ),
        false => (
            "ssdready and the emulator front",
            "emulator model: the same I/Os on the model alone, in virtual time",
        ),
    };
    Some(PlatformShare {
        pct: if c.lat_mean_ns > 0.0 {
            100.0 * platform / c.lat_mean_ns
        } else {
            0.0
        },
        total_ns: c.lat_mean_ns,
        platform_ns: platform,
        device_ns: dev,
        parts: vec![
            (name.into(), platform, 0.0),
            ("device (the model)".into(), dev, 0.0),
        ],
        source: source.into(),
        runs: c.runs.clone(),
        err_ns: None,
        overcount_ns: None,
        outside_daemon_ns: None,
        unaccounted_ns: None,
        joined_pct: None,
    })
}

/// The QD 1 split from the latency decomposition, held against the run's
/// own mean over all its I/Os: the joined I/Os' parts add up to their own
/// mean, which leaves out what the decomposition did not join (a throttled
/// bio released by another task, say). Beyond [`ADD_UP_PCT`] the remainder
/// is its own part and no share is claimed.
fn decomposed_share(
    r: &RunRecord,
    d: &crate::summary::DecompSummary,
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
    }
}

/// A limit set on the machine that holds even one I/O in flight (a rate
/// throttle at QD 1's rate, a CPU quota that stopped the group at QD 1):
/// its wait lies above the block layer, in no part a split measures, so
/// the QD 1 split claims no share for the platform; what it leaves is said
/// as not accounted for (queueing gives the throttle's: 1/R).
fn held_at_qd1(f: &mut Figures, caps: &crate::limit::caps::Caps) {
    let Some(c) = f.qd_curve.iter().find(|c| c.qd == 1) else {
        return;
    };
    let throttled = caps.io_limit(true, 4096).is_some_and(|(rate, _)| {
        let r = c.iops / rate;
        (crate::limit::configured::THROTTLE_LOW..=crate::limit::configured::THROTTLE_HIGH)
            .contains(&r)
    });
    let stopped = c.quota_stopped_ns.is_some_and(|s| s >= 0.1 * c.lat_mean_ns);
    let Some(p) = f.platform_share_qd1.as_mut() else {
        return;
    };
    if !(throttled || stopped) || p.unaccounted_ns.is_some() {
        return;
    }
    let measured: f64 = match p.parts.is_empty() {
        true => p.device_ns,
        false => p.parts.iter().map(|x| x.1).sum::<f64>() - p.platform_ns.max(0.0),
    };
    let left = (p.total_ns - measured).max(0.0);
    p.unaccounted_ns = Some(left);
    p.source.push_str(match throttled {
        true => "; an I/O throttle held QD 1: its wait is above the block layer, with the system call's time",
        false => "; the CPU quota stopped the group at QD 1: its wait is above the block layer, with the system call's time",
    });
}

fn platform_share(runs: &[RunRecord], f: &Figures) -> Option<PlatformShare> {
    if let Some(r) = profiled(runs, 1) {
        if let Some(d) = &r.summary.decomposition {
            if let (Some(pct), Some(dev)) = (d.platform_share_pct, d.device_ns) {
                return Some(decomposed_share(r, d, pct, dev));
            }
        }
    }
    if let Some(s) = model_share(f, false) {
        return Some(s);
    }
    let rs = runs_of(runs, "qd-1");
    // Only where the device counted the study's I/Os: a device time is
    // never taken from requests the study did not issue.
    let (r, block) = rs.iter().find_map(|r| Some((r, block_ns(r)?)))?;
    let total = r.summary.lat_mean_ns;
    Some(PlatformShare {
        pct: 100.0 * (total - block).max(0.0) / total.max(1.0),
        total_ns: total,
        platform_ns: (total - block).max(0.0),
        device_ns: block,
        parts: Vec::new(),
        source: "block-layer statistics (/sys/block/X/stat): the block layer counts as device, so the platform share is a lower bound".into(),
        runs: vec![r.id.clone()],
        err_ns: None,
        overcount_ns: None,
        outside_daemon_ns: None,
        unaccounted_ns: None,
        joined_pct: None,
    })
}

fn clocks_at(runs: &[RunRecord], qd: u32) -> Option<ClocksAt> {
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

fn noise(runs: &[RunRecord]) -> Vec<Noise> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_needs_two_flat_doublings() {
        assert!(!saturated(&[1.0, 2.0, 4.0]));
        assert!(!saturated(&[1.0, 2.0, 2.05, 3.0]));
        assert!(saturated(&[1.0, 2.0, 2.05, 2.06]));
        assert!(saturated(&[1.0, 2.0, 1.9, 1.95]));
    }

    /// The dram-ssd study on 16 cores: one thread 123.7K IOPS, 16 threads
    /// 99.2K, device limit 131.6K. Against 16 × one thread that read as
    /// "scale poorly" (5 %); the device is the bound: 75 % of it.
    #[test]
    fn threads_on_a_saturated_device_are_judged_against_its_limit() {
        assert_eq!(attainable(16.0 * 123.7e3, Some(131.6e3)), 131.6e3);
        assert_eq!(attainable(2.0 * 10e3, Some(131.6e3)), 20e3);
        assert_eq!(attainable(16.0 * 123.7e3, None), 16.0 * 123.7e3);
    }

    /// Each thread count is set beside one thread at the same total depth,
    /// when the QD curve has that depth.
    #[test]
    fn threads_are_set_beside_the_same_depth_on_one_thread() {
        let run = |id: &str, sweep: &str, qd: u32, threads: u32, iops: f64| RunRecord {
            id: id.into(),
            point: id.into(),
            sweep: sweep.into(),
            workload: crate::record::Workload {
                qd,
                threads,
                ..Default::default()
            },
            summary: crate::summary::PointSummary {
                iops,
                ..Default::default()
            },
            ..Default::default()
        };
        let runs = [
            run("qd-1", "qd", 1, 1, 14_851.0),
            run("threads-2x1", "threads", 1, 2, 18_200.0),
            run("threads-4x1", "threads", 1, 4, 30_000.0),
        ];
        let curve = [CurvePoint {
            qd: 2,
            iops: 17_884.0,
            device_iops: Some(44_145.0),
            runs: vec!["qd-2".into()],
            ..Default::default()
        }];
        let s = scaling(&runs, None, &curve);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].threads, s[0].depth_iops), (2, Some(17_884.0)));
        assert_eq!(s[0].depth_device_iops, Some(44_145.0));
        assert_eq!(s[0].runs, ["threads-2x1", "qd-1", "qd-2"]);
        assert!((s[0].efficiency_pct - 100.0 * 18_200.0 / 29_702.0).abs() < 1e-9);
        // No QD 4 on the curve: nothing to set four threads beside.
        assert_eq!((s[1].threads, s[1].depth_iops), (4, None));
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
