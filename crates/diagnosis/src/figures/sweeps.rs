//! The sweeps' comparisons: I/O schedulers against `none`, engines against
//! each other, block sizes (bandwidth), read/write mixes, buffered against
//! direct I/O (and the page-cache hits that hide the device), the raw
//! device against a file on it, and several devices against each alone.

use crate::figures::curve::{runs_of, CurveFigures};
use serde::{Deserialize, Serialize};
use ssdready_measured::curve::median;
use ssdready_measured::record::RunRecord;

/// All comparisons.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Comparisons {
    pub schedulers: Vec<SchedulerCost>,
    pub engines: Vec<EnginePoint>,
    pub block_sizes: Vec<SizePoint>,
    pub rw: Vec<MixPoint>,
    pub buffered: Vec<BufferedPoint>,
    pub raw_vs_file: Vec<RawPoint>,
    pub devices: Option<DeviceScaling>,
}

/// One scheduler at one depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SchedulerCost {
    pub scheduler: String,
    pub qd: u32,
    pub iops: f64,
    pub lat_mean_ns: f64,
    /// IOPS lost against `none` at the same depth, percent (negative:
    /// gained): the mean of the rounds' differences when they ran in turns.
    pub cost_pct: Option<f64>,
    /// Its error: two standard errors of the rounds' differences (None
    /// with a single round).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_err_pct: Option<f64>,
    /// Mean time queued in the scheduler (`--decompose` would say; from the
    /// run's decomposition when it had one).
    pub queued_ns: Option<f64>,
    pub runs: Vec<String>,
}

/// One engine at one depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EnginePoint {
    pub engine: String,
    pub qd: u32,
    pub threads: u32,
    pub iops: f64,
    pub lat_mean_ns: f64,
    pub cpu_ns_per_io: Option<f64>,
    pub runs: Vec<String>,
}

/// One block size.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SizePoint {
    pub bs: u64,
    pub rw: String,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_mean_ns: f64,
    pub runs: Vec<String>,
}

/// One read/write mix.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MixPoint {
    pub rw: String,
    pub qd: u32,
    pub iops: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_ns: u64,
    pub runs: Vec<String>,
}

/// Buffered reads against direct ones at one depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BufferedPoint {
    pub qd: u32,
    pub buffered_iops: f64,
    pub direct_iops: Option<f64>,
    /// Reads that never reached the device, percent.
    pub cache_hit_pct: Option<f64>,
    pub runs: Vec<String>,
}

/// Reads of the raw device against the file at one depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RawPoint {
    pub qd: u32,
    pub raw_iops: f64,
    pub file_iops: Option<f64>,
    /// IOPS the file system costs against the raw device, percent: the
    /// mean of the rounds' differences when they ran in turns.
    pub fs_cost_pct: Option<f64>,
    /// Its error: two standard errors of the rounds' differences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_cost_err_pct: Option<f64>,
    /// The file's device requests per file read, from the device's own
    /// counters (the median over the file's runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_requests_per_io: Option<f64>,
    pub runs: Vec<String>,
}

/// Several devices together against each alone.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceScaling {
    pub devices: u32,
    pub alone_iops: Vec<f64>,
    pub together_iops: f64,
    /// Together against the sum of alone, percent.
    pub efficiency_pct: f64,
    pub runs: Vec<String>,
}

/// The cost of `b` against `a`, percent of `a`'s IOPS, from runs made in
/// turns: each round's pair (the same repeat number), their mean and two
/// standard errors (None with one pair). Without pairs, None.
pub fn paired_cost(a: &[&RunRecord], b: &[&RunRecord]) -> Option<(f64, Option<f64>)> {
    let d: Vec<f64> = a
        .iter()
        .filter_map(|x| {
            let y = b.iter().find(|y| y.repeat == x.repeat)?;
            (x.summary.iops > 0.0)
                .then(|| 100.0 * (x.summary.iops - y.summary.iops) / x.summary.iops)
        })
        .collect();
    let n = d.len() as f64;
    if d.is_empty() {
        return None;
    }
    let mean = d.iter().sum::<f64>() / n;
    let err = (d.len() > 1).then(|| {
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        2.0 * (var / n).sqrt()
    });
    Some((mean, err))
}

fn med(rs: &[&RunRecord], g: impl Fn(&RunRecord) -> f64) -> Option<f64> {
    median(&rs.iter().map(|r| g(r)).collect::<Vec<_>>())
}

fn ids(rs: &[&RunRecord]) -> Vec<String> {
    rs.iter().map(|r| r.id.clone()).collect()
}

/// The points of a sweep, each with its runs (repeats share a point).
fn points<'a>(runs: &'a [RunRecord], sweep: &str) -> Vec<Vec<&'a RunRecord>> {
    let mut names: Vec<&str> = runs
        .iter()
        .filter(|r| r.sweep == sweep && r.error.is_none())
        .map(|r| r.point.as_str())
        .collect();
    names.dedup();
    let mut seen = Vec::new();
    names.retain(|n| {
        let new = !seen.contains(n);
        seen.push(n);
        new
    });
    names.into_iter().map(|n| runs_of(runs, n)).collect()
}

/// Compare every sweep that ran.
pub fn compare(runs: &[RunRecord], f: &CurveFigures) -> Comparisons {
    let mut engines = engines(runs);
    qd_engine_points(runs, f, &mut engines);
    Comparisons {
        schedulers: schedulers(runs),
        engines,
        block_sizes: block_sizes(runs),
        rw: mixes(runs),
        buffered: buffered(runs, f),
        raw_vs_file: raw_vs_file(runs, f),
        devices: device_scaling(runs, f),
    }
}

/// Each scheduler at each depth, and its cost against `none` there.
fn schedulers(runs: &[RunRecord]) -> Vec<SchedulerCost> {
    let mut out = Vec::new();
    let sched = points(runs, "scheduler");
    for rs in &sched {
        let w = &rs[0].workload;
        let name = w.scheduler.clone().unwrap_or_default();
        let none = sched.iter().find(|o| {
            o[0].workload.scheduler.as_deref() == Some("none") && o[0].workload.qd == w.qd
        });
        let iops = med(rs, |r| r.summary.iops).unwrap_or(0.0);
        let base = none.and_then(|o| med(o, |r| r.summary.iops));
        let paired = none.and_then(|o| paired_cost(o, rs));
        out.push(SchedulerCost {
            scheduler: name,
            qd: w.qd,
            iops,
            lat_mean_ns: med(rs, |r| r.summary.lat_mean_ns).unwrap_or(0.0),
            cost_pct: paired
                .map(|p| p.0)
                .or_else(|| base.filter(|&b| b > 0.0).map(|b| 100.0 * (b - iops) / b)),
            cost_err_pct: paired.and_then(|p| p.1),
            queued_ns: rs
                .iter()
                .find_map(|r| r.summary.decomposition.as_ref()?.scheduler_queue_ns),
            runs: ids(rs),
        });
    }
    out
}

fn engines(runs: &[RunRecord]) -> Vec<EnginePoint> {
    let mut out = Vec::new();
    for rs in points(runs, "engine") {
        let w = &rs[0].workload;
        out.push(EnginePoint {
            engine: w.engine.clone().unwrap_or_default(),
            qd: w.qd,
            threads: w.threads,
            iops: med(&rs, |r| r.summary.iops).unwrap_or(0.0),
            lat_mean_ns: med(&rs, |r| r.summary.lat_mean_ns).unwrap_or(0.0),
            cpu_ns_per_io: median(
                &rs.iter()
                    .filter_map(|r| r.summary.cpu.as_ref().map(|c| c.system_ns_per_io))
                    .collect::<Vec<_>>(),
            ),
            runs: ids(&rs),
        });
    }
    out
}

/// The queue-depth sweep's engine at the engines' depths, from that sweep:
/// the median of its repeats, as each other engine's (the curve's point is
/// its best repeat, which stands higher by chance than a median).
fn qd_engine_points(runs: &[RunRecord], f: &CurveFigures, engines: &mut Vec<EnginePoint>) {
    let curve = |qd: u32| f.qd_curve.iter().find(|c| c.qd == qd);
    let qd_engine = runs
        .iter()
        .find(|r| r.sweep == "qd")
        .and_then(|r| r.workload.engine.clone());
    if let (Some(e), false) = (qd_engine, engines.is_empty()) {
        let mut depths: Vec<u32> = engines
            .iter()
            .filter(|p| p.threads == 1)
            .map(|p| p.qd)
            .collect();
        depths.dedup();
        for qd in depths {
            if let Some(cp) = curve(qd) {
                let rs = runs_of(runs, &format!("qd-{qd}"));
                engines.push(EnginePoint {
                    engine: e.clone(),
                    qd,
                    threads: 1,
                    iops: med(&rs, |r| r.summary.iops).unwrap_or(cp.iops),
                    lat_mean_ns: cp.lat_mean_ns,
                    cpu_ns_per_io: median(
                        &rs.iter()
                            .filter_map(|r| r.summary.cpu.as_ref().map(|c| c.system_ns_per_io))
                            .collect::<Vec<_>>(),
                    ),
                    runs: cp.runs.clone(),
                });
            }
        }
    }
}

fn block_sizes(runs: &[RunRecord]) -> Vec<SizePoint> {
    let mut out = Vec::new();
    for rs in points(runs, "bs") {
        let w = &rs[0].workload;
        out.push(SizePoint {
            bs: w.bs,
            rw: w.rw.clone(),
            iops: med(&rs, |r| r.summary.iops).unwrap_or(0.0),
            bw_bytes_per_s: med(&rs, |r| r.summary.bw_bytes_per_s).unwrap_or(0.0),
            lat_mean_ns: med(&rs, |r| r.summary.lat_mean_ns).unwrap_or(0.0),
            runs: ids(&rs),
        });
    }
    out
}

fn mixes(runs: &[RunRecord]) -> Vec<MixPoint> {
    let mut out = Vec::new();
    for rs in points(runs, "rw") {
        let w = &rs[0].workload;
        out.push(MixPoint {
            rw: w.rw.clone(),
            qd: w.qd,
            iops: med(&rs, |r| r.summary.iops).unwrap_or(0.0),
            read_iops: med(&rs, |r| r.summary.read_iops).unwrap_or(0.0),
            write_iops: med(&rs, |r| r.summary.write_iops).unwrap_or(0.0),
            lat_mean_ns: med(&rs, |r| r.summary.lat_mean_ns).unwrap_or(0.0),
            lat_p99_ns: med(&rs, |r| r.summary.lat_p99_ns as f64).unwrap_or(0.0) as u64,
            runs: ids(&rs),
        });
    }
    out
}

/// Buffered reads against the direct ones of the queue-depth sweep.
fn buffered(runs: &[RunRecord], f: &CurveFigures) -> Vec<BufferedPoint> {
    let curve = |qd: u32| f.qd_curve.iter().find(|c| c.qd == qd);
    let mut out = Vec::new();
    for rs in points(runs, "buffered") {
        let qd = rs[0].workload.qd;
        out.push(BufferedPoint {
            qd,
            buffered_iops: med(&rs, |r| r.summary.iops).unwrap_or(0.0),
            direct_iops: curve(qd).map(|p| p.iops),
            cache_hit_pct: median(
                &rs.iter()
                    .filter_map(|r| r.summary.disk.as_ref()?.cache_hit_pct)
                    .collect::<Vec<_>>(),
            ),
            runs: ids(&rs),
        });
    }
    out
}

/// The raw device against the file of the queue-depth sweep.
fn raw_vs_file(runs: &[RunRecord], f: &CurveFigures) -> Vec<RawPoint> {
    let curve = |qd: u32| f.qd_curve.iter().find(|c| c.qd == qd);
    let mut out = Vec::new();
    let pts = points(runs, "raw");
    for rs in pts.iter().filter(|rs| is_raw(rs[0])) {
        let qd = rs[0].workload.qd;
        let raw = med(rs, |r| r.summary.iops).unwrap_or(0.0);
        // The file's runs made in turns with the raw device's, else the
        // queue-depth sweep's.
        let file_rs = pts.iter().find(|f| !is_raw(f[0]) && f[0].workload.qd == qd);
        let paired = file_rs.and_then(|f| paired_cost(rs, f));
        let file = match file_rs {
            Some(f) => med(f, |r| r.summary.iops),
            None => curve(qd).map(|p| p.iops),
        };
        let reqs = file_rs.and_then(|f| {
            median(
                &f.iter()
                    .filter_map(|r| r.summary.disk.as_ref()?.ios_per_app_io())
                    .collect::<Vec<_>>(),
            )
        });
        out.push(RawPoint {
            qd,
            raw_iops: raw,
            file_iops: file,
            fs_cost_pct: paired.map(|p| p.0).or_else(|| {
                file.filter(|_| raw > 0.0)
                    .map(|fi| 100.0 * (raw - fi) / raw)
            }),
            fs_cost_err_pct: paired.and_then(|p| p.1),
            file_requests_per_io: reqs,
            runs: ids(rs)
                .into_iter()
                .chain(file_rs.map(|f| ids(f)).unwrap_or_default())
                .collect(),
        });
    }
    out
}

/// Whether a run of the raw sweep read the raw device (not the file).
fn is_raw(r: &RunRecord) -> bool {
    r.id.starts_with("raw-device")
}

fn device_scaling(runs: &[RunRecord], f: &CurveFigures) -> Option<DeviceScaling> {
    let pts = points(runs, "devices");
    let together = pts.iter().find(|rs| rs[0].workload.targets.len() > 1)?;
    let first = f.peak.as_ref()?;
    let mut alone = vec![first.iops];
    let mut ids_all = first.runs.clone();
    for rs in pts.iter().filter(|rs| rs[0].workload.targets.len() == 1) {
        alone.push(med(rs, |r| r.summary.iops)?);
        ids_all.extend(ids(rs));
    }
    let t = med(together, |r| r.summary.iops)?;
    ids_all.extend(ids(together));
    let sum: f64 = alone.iter().sum();
    Some(DeviceScaling {
        devices: together[0].workload.targets.len() as u32,
        together_iops: t,
        efficiency_pct: if sum > 0.0 { 100.0 * t / sum } else { 0.0 },
        alone_iops: alone,
        runs: ids_all,
    })
}
