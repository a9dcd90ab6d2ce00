//! `ssdready emu simulate`: run jobs against emulated devices in virtual
//! time and report them exactly as a real run is reported (per-second
//! series in simulated seconds), plus the emulator's counters. There is no
//! CPU or block-layer section: no host was involved.

use crate::failure::{bad, Failure};
use crate::phases::phases_and_groups;
use crate::request::RunRequest;
use crate::run::job_result_from;
use crate::virtual_time::SimError;
use ssdready_core::result::*;
use ssdready_core::spec::JobSpec;
use ssdready_emu::config::Params;
use ssdready_emu::device::Device;
use ssdready_emu::memory::TimeBase;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// Simulate the jobs of `args`.
pub fn execute(args: &RunRequest) -> Result<RunResult, Failure> {
    let stop = args.stop.clone();
    let mut specs = crate::validate::jobs(args)?;
    crate::validate::refuse_unrunnable(&specs)?;
    refuse_unsimulable(&specs)?;
    let mut warnings = crate::emulated::assign_emulator(&mut specs);
    warnings.extend(left_out(&specs));
    warnings.retain(|w| !w.contains("brings its own engine"));
    let params = crate::emulated::params_for(&specs).map_err(bad)?;
    let mut devices = build_devices(&specs, &params, &stop)?;
    let (phases, groups) = phases_and_groups(&specs);
    let wall = std::time::Instant::now();
    let started = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mut sim = Simulated {
        jobs: (0..specs.len()).map(|_| None).collect(),
        ..Default::default()
    };
    let first = params.keys().next();
    for (pi, members) in phases.iter().enumerate() {
        if stop.load(Relaxed) {
            break;
        }
        let ctx = (&specs[..], &groups[..], &stop);
        let window = simulate_phase(ctx, pi, members, &mut devices, first, &mut sim)?;
        sim.phases.push(phase_result(members, window));
    }
    let mut failure = None;
    for (path, text) in crate::logs::merge_shared(std::mem::take(&mut sim.log_files)) {
        if let Err(e) = crate::logs::write(&path, &text) {
            failure.get_or_insert(e);
        }
    }
    if devices.len() > 1 {
        warnings.push(format!(
            "{} emulated devices were used; the emulator report covers the first",
            devices.len()
        ));
    }
    let emulator = devices.values().next().map(|d| {
        let mut r = crate::emulated::report(d, &d.totals(), "virtual", sim.free_series, d.now);
        r.simulated_ns = sim.simulated_ns;
        r.wall_ns = wall.elapsed().as_nanos() as u64;
        r
    });
    Ok(RunResult {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        started_unix_ms: started,
        interrupted: stop.load(Relaxed),
        failure,
        clock: ClockInfo {
            source: "virtual".into(),
            tsc_hz: None,
            ns_per_timestamp: 0.0,
        },
        platform: ssdready_probe::platform::collect(&[]),
        global_options: ssdready_core::options::global_options(&args.sections),
        jobs: sim.jobs.into_iter().flatten().collect(),
        phases: sim.phases,
        emulator,
        warnings,
    })
}

/// The emulated devices of `params`, checked against the memory they take
/// and built (interruptibly), each job's region checked on its device.
fn build_devices(
    specs: &[JobSpec],
    params: &BTreeMap<String, Params>,
    stop: &Arc<AtomicBool>,
) -> Result<BTreeMap<String, Device>, Failure> {
    crate::emulated::check_memory(specs, params, TimeBase::Virtual).map_err(bad)?;
    let to_build = params.clone();
    let devices: BTreeMap<String, Device> =
        crate::emulated::interruptible(stop, "building the emulated devices", move || {
            to_build
                .iter()
                .map(|(k, p)| (k.clone(), Device::new(p)))
                .collect()
        })?;
    for s in specs {
        let cap = devices[&s.filename[0]].capacity();
        crate::virtual_time::region(s, cap).map_err(|e| bad(format!("job '{}': {e}", s.name)))?;
    }
    Ok(devices)
}

/// A simulated phase: its jobs and window, nothing measured on a host.
fn phase_result(members: &[usize], window_ns: u64) -> PhaseResult {
    PhaseResult {
        jobs: members.to_vec(),
        window_ns,
        cpu: None,
        disks: Vec::new(),
        profile: None,
        decomposition: None,
        checks: Vec::new(),
        hw_counters: None,
    }
}

/// What the phases simulated so far leave for the result.
#[derive(Default)]
struct Simulated {
    jobs: Vec<Option<JobResult>>,
    phases: Vec<PhaseResult>,
    /// The first device's free blocks, per simulated second.
    free_series: Vec<u64>,
    /// Simulated time over all devices, ns.
    simulated_ns: u64,
    /// The logs `write_iolog` recorded: (path, text).
    log_files: Vec<(String, Vec<u8>)>,
}

/// Simulate the jobs `members` of phase `pi`, each device once, in order
/// of first use (a device named by jobs that are not neighbours must not be
/// simulated twice). Returns the phase's window: its longest worker's.
fn simulate_phase(
    (specs, groups, stop): (&[JobSpec], &[u32], &Arc<AtomicBool>),
    pi: usize,
    members: &[usize],
    devices: &mut BTreeMap<String, Device>,
    first: Option<&String>,
    sim: &mut Simulated,
) -> Result<u64, Failure> {
    let mut names: Vec<&String> = Vec::new();
    for &i in members {
        if !names.contains(&&specs[i].filename[0]) {
            names.push(&specs[i].filename[0]);
        }
    }
    let mut window = 0u64;
    for name in names {
        let idx: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| &specs[i].filename[0] == name)
            .collect();
        let phase_specs: Vec<_> = idx.iter().map(|&i| specs[i].clone()).collect();
        let dev = devices.get_mut(name).expect("a device per target");
        let start = dev.now;
        let stop_ref = stop.clone();
        let phase_groups: Vec<u32> = idx.iter().map(|&i| groups[i]).collect();
        let stop_fn = move || stop_ref.load(Relaxed);
        let out =
            crate::virtual_time::simulate_in_groups(dev, &phase_specs, &phase_groups, &stop_fn)
                .map_err(|e| match e {
                    SimError::Refused(m) => Failure::BadInput(m),
                    SimError::Model(m) => Failure::Runtime(m),
                })?;
        sim.simulated_ns += out.end_ns - start;
        if Some(name) == first {
            sim.free_series.extend(out.free_blocks.iter().copied());
        }
        for ((k, workers), steady) in idx.iter().zip(out.workers).zip(out.steadystate) {
            let s = &specs[*k];
            window = window.max(workers.iter().map(|w| w.measured_ns).max().unwrap_or(0));
            let records = workers.iter().filter_map(|w| w.iolog_record.as_deref());
            sim.log_files
                .extend(records.map(|(p, t)| (p.clone(), t.clone().into_bytes())));
            // Numbered as a run numbers its workers: in job order, from 1.
            let first: u32 = 1 + specs[..*k].iter().map(|j| j.numjobs).sum::<u32>();
            let logs = ssdready_core::resolved::LogConfig::new(s);
            for (n, w) in workers.iter().enumerate() {
                if let Some(log) = &w.log {
                    let files = crate::logs::files_for(&logs, first + n as u32, log);
                    sim.log_files.extend(files);
                }
            }
            let target = TargetInfo {
                path: s.filename[0].clone(),
                kind: "emulator".into(),
                size_bytes: dev.capacity(),
                device: None,
            };
            let mut r = job_result_from(s, groups[*k], pi, "virtual", vec![target], workers);
            r.steadystate = steady;
            sim.jobs[*k] = Some(r);
        }
    }
    Ok(window)
}

/// What virtual time cannot do at all: targets other than the emulator.
fn refuse_unsimulable(specs: &[JobSpec]) -> Result<(), Failure> {
    if let Some(s) = specs.iter().find(|s| !s.on_emulator()) {
        return Err(bad(format!(
            "job '{}': emu simulate runs jobs on emulated devices only, not on {} (drop filename, or use emu:PRESET)",
            s.name,
            if s.filename.is_empty() { "the null engine".to_string() } else { s.filename.join(":") }
        )));
    }
    Ok(())
}

/// What virtual time leaves out, one warning per job: the data verify
/// would check, the cost of syncs.
fn left_out(specs: &[JobSpec]) -> Vec<String> {
    let mut warnings = Vec::new();
    for s in specs {
        if s.verify.on() {
            warnings.push(format!(
                "job '{}': verify's reads are issued and timed in virtual time (emu simulate), \
                 but the model keeps no data to check them with; run the job with 'ssdready run' \
                 to check the data",
                s.name
            ));
        }
        let unmodelled: Vec<&str> = [
            (s.files.fsync_every > 0, "fsync"),
            (s.files.fdatasync_every > 0, "fdatasync"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| *n)
        .collect();
        if !unmodelled.is_empty() {
            warnings.push(format!(
                "job '{}': {} no time in virtual time (emu simulate): the model has no \
                 cache to write back; run the job with 'ssdready run' for their cost",
                s.name,
                unmodelled.join(" and ")
                    + if unmodelled.len() == 1 {
                        " takes"
                    } else {
                        " take"
                    }
            ));
        }
    }
    warnings
}
