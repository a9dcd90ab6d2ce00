//! Virtual time: a point's jobs on the emulator model alone, through the
//! deterministic simulator — the device's own answer at that point, next to
//! the real-time run that includes the platform. Each run gets a fresh
//! device per target, as a real run does; phases (the fill, then the
//! measured jobs) run in order on it.

use ssdready_core::hist::Histogram;
use ssdready_core::options::build_jobs;
use ssdready_core::spec::JobSpec;
use ssdready_core::stats::WorkerStats;
use ssdready_emu::device::Device;
use ssdready_measured::record::DeviceSide;
use ssdready_measured::summary::{PointSummary, FILL_JOB};
use ssdready_run::RunRequest;
use std::collections::BTreeMap;

/// Simulated seconds of a measured job at most (the model is
/// deterministic: a longer window adds nothing but time).
pub const MAX_VIRTUAL_S: f64 = 1.0;
/// Wall-clock seconds a virtual run may take before it is given up.
pub const MAX_WALL_S: f64 = 20.0;

/// Why a point could not run in virtual time.
#[derive(Debug, thiserror::Error)]
pub enum VirtError {
    /// The request's jobs are refused.
    #[error(transparent)]
    Jobs(#[from] ssdready_core::spec::SpecError),
    #[error("virtual time needs an emulated target, not {target}")]
    NotEmulated { target: String },
    /// The emulated drive's parameters are refused.
    #[error(transparent)]
    Params(#[from] ssdready_emu::config::ParamError),
    #[error("{target} has zero latency: on the model alone virtual time would not advance")]
    ZeroLatency { target: String },
    /// The simulation refused the jobs or failed.
    #[error(transparent)]
    Simulation(#[from] ssdready_run::virtual_time::SimError),
    #[error("the model took more than {MAX_WALL_S} s of wall time")]
    WallTime,
}

/// Run the point's jobs (the request's sections; its run switches do not
/// apply to the model) on the model in virtual time. Every target must be
/// an emulator (`emu:…`).
pub fn run(request: &RunRequest) -> Result<(PointSummary, DeviceSide), VirtError> {
    let mut specs = build_jobs(&request.sections)?;
    let mut devices: BTreeMap<String, Device> = BTreeMap::new();
    for s in &mut specs {
        let name = s.filename.first().cloned().unwrap_or_default();
        if !name.starts_with("emu") {
            return Err(VirtError::NotEmulated { target: name });
        }
        if !devices.contains_key(&name) {
            let mut p = crate::limit::params_of(&name)?;
            let bounded = ssdready_emu::analytic::limit::model_limit(
                &p,
                ssdready_emu::analytic::limit::Access::Read,
                4096,
            )
            .iops;
            if bounded.is_none() && p.host_ns == 0 {
                return Err(VirtError::ZeroLatency { target: name });
            }
            if let Some(size) = s.size {
                p.size = p.size.max((s.offset + size).div_ceil(1 << 20) << 20);
            }
            devices.insert(name.clone(), Device::new(&p));
        }
        if let Some(rt) = s.runtime_ns.as_mut() {
            *rt = (*rt).min((MAX_VIRTUAL_S * 1e9) as u64);
        }
    }
    let (fill, measured): (Vec<JobSpec>, Vec<JobSpec>) =
        specs.into_iter().partition(|s| s.name == FILL_JOB);
    let mut workers: Vec<WorkerStats> = Vec::new();
    let wall = std::time::Instant::now();
    for (phase, collect) in [(fill, false), (measured, true)] {
        for (name, dev) in devices.iter_mut() {
            let jobs: Vec<JobSpec> = phase
                .iter()
                .filter(|s| s.filename.first() == Some(name))
                .cloned()
                .collect();
            if jobs.is_empty() {
                continue;
            }
            let out = ssdready_run::virtual_time::simulate(dev, &jobs, &|| {
                wall.elapsed().as_secs_f64() > MAX_WALL_S
            })?;
            if wall.elapsed().as_secs_f64() > MAX_WALL_S {
                return Err(VirtError::WallTime);
            }
            if collect {
                workers.extend(out.workers.into_iter().flatten());
            }
        }
    }
    Ok(summarise(&workers))
}

fn summarise(workers: &[WorkerStats]) -> (PointSummary, DeviceSide) {
    let mut s = PointSummary::default();
    let mut lat = Histogram::new();
    let window = workers.iter().map(|w| w.measured_ns).max().unwrap_or(0);
    let secs = window as f64 / 1e9;
    for w in workers {
        for (i, d) in w.dirs.iter().enumerate() {
            let Some(d) = d else { continue };
            s.ios += d.ios;
            let rate = if secs > 0.0 { d.ios as f64 / secs } else { 0.0 };
            s.iops += rate;
            s.bw_bytes_per_s += if secs > 0.0 {
                d.bytes as f64 / secs
            } else {
                0.0
            };
            match i {
                0 => s.read_iops += rate,
                1 => s.write_iops += rate,
                _ => {}
            }
            lat.merge(&d.lat);
        }
    }
    s.window_s = secs;
    s.lat_mean_ns = lat.mean();
    if lat.count() > 0 {
        s.lat_p50_ns = lat.percentile(50.0);
        s.lat_p99_ns = lat.percentile(99.0);
        s.lat_p999_ns = lat.percentile(99.9);
    }
    let d = DeviceSide {
        iops: s.iops,
        bw_bytes_per_s: s.bw_bytes_per_s,
        lat_mean_ns: s.lat_mean_ns,
        lat_p99_ns: s.lat_p99_ns as f64,
    };
    (s, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request from a command line.
    fn opts(v: &[&str]) -> RunRequest {
        let mut r = RunRequest::default();
        r.options(v).expect("a command line");
        r
    }

    #[test]
    fn a_zero_latency_model_is_refused_not_looped_on() {
        let e = run(&opts(&[
            "--name=m",
            "--filename=emu:null",
            "--runtime=1s",
            "--time_based",
        ]))
        .unwrap_err()
        .to_string();
        assert!(e.contains("zero latency"), "{e}");
    }

    #[test]
    fn x25e_qd1_reads_after_a_fill_take_the_modelled_latency() {
        let o = opts(&[
            "--name=fill",
            "--filename=emu:x25e",
            "--rw=write",
            "--bs=1m",
            "--iodepth=8",
            "--size=16m",
            "--name=m",
            "--stonewall",
            "--filename=emu:x25e",
            "--rw=randread",
            "--bs=4k",
            "--iodepth=1",
            "--size=16m",
            "--runtime=500ms",
            "--time_based",
        ]);
        let (s, d) = run(&o).unwrap();
        assert!((145_000.0..155_000.0).contains(&d.lat_mean_ns), "{d:?}");
        assert!((6_400.0..6_900.0).contains(&s.iops), "{}", s.iops);
        assert_eq!(s.write_iops, 0.0, "the fill is not measured");
    }
}
