//! Emulated devices for a run: one [`SharedDevice`] per distinct `emu:…`
//! target (a job without a filename uses `emu:`, the default preset), shared
//! by the jobs that name it and kept across phases so a fill is still there
//! for the reads after it. Also the memory check that runs before any of
//! them is built ([`check_memory`]), building them interruptibly
//! ([`create`]), and the emulator's report.

use crate::failure::Failure;
use ssdready_core::result::EmuReport;
use ssdready_core::spec::{EngineKind, JobSpec};
use ssdready_emu::analytic::wa_greedy;
use ssdready_emu::config::Params;
use ssdready_emu::device::{Device, DeviceCounters};
use ssdready_emu::engine::SharedDevice;
use ssdready_emu::memory::{self, JobLoad, TimeBase};
use ssdready_io::clock::Clock;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Why a run's emulated devices are refused before anything is built, or
/// could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EmuSetupError {
    /// A target's parameters (`filename=emu:…`) refused.
    #[error("job '{job}': option 'filename': {err}")]
    Params {
        job: String,
        err: ssdready_emu::config::ParamError,
    },
    /// A device grown to hold a job's region, refused then.
    #[error("job '{job}': {err}")]
    Grown {
        job: String,
        err: ssdready_emu::config::ParamError,
    },
    /// The devices and workers would not fit in memory: `devices` are the
    /// targets' names, `grown_to` the size they were made to hold the jobs.
    #[error("{}", no_room(.devices, *.grown_to, .err))]
    NoRoom {
        devices: Vec<String>,
        grown_to: Option<u64>,
        err: Box<memory::NotEnoughMemory>,
    },
    #[error(
        "emulated device '{device}': fault_power_cut_after and fault_torn_write_rate change the stored data, and nocopy=1 keeps none; drop nocopy=1"
    )]
    FaultsOnNocopy { device: String },
    #[error(
        "emulated device '{device}': of the fault_ keys, virtual time models only latency spikes (fault_spike_rate, fault_spike_ns); the others run in real time only (ssdready run)"
    )]
    FaultsInVirtualTime { device: String },
    #[error(
        "job '{job}': temporal_merge={merge} with injected faults on '{device}' is not supported (a merged command's fault would fail every request in it); drop one of them"
    )]
    FaultsMerged {
        job: String,
        merge: &'static str,
        device: String,
    },
    #[error(
        "emulated device '{device}': zoned mode (zoned=1) runs in real time only (ssdready run); virtual time does not model zones"
    )]
    ZonedInVirtualTime { device: String },
    #[error(
        "job '{job}': temporal_merge={merge} on the zoned drive '{device}' is not supported (merged commands would bypass its write pointers)"
    )]
    ZonedMerged {
        job: String,
        merge: &'static str,
        device: String,
    },
    /// A device whose data could not be allocated.
    #[error("{device}: {err}")]
    NoData {
        device: String,
        err: ssdready_emu::memory::DataNotAllocated,
    },
}

/// [`EmuSetupError::NoRoom`]'s line: the devices named first.
fn no_room(devices: &[String], grown_to: Option<u64>, e: &memory::NotEnoughMemory) -> String {
    let names: Vec<String> = devices.iter().map(|k| format!("'{k}'")).collect();
    let how = match grown_to {
        Some(size) => format!(
            " (sized {} to hold the jobs' offset + size)",
            memory::human(size)
        ),
        None => String::new(),
    };
    match names.len() {
        0 => e.to_string(),
        1 => format!("emulated device {}{how}: {e}", names[0]),
        _ => format!("emulated devices {}{how}: {e}", names.join(" and ")),
    }
}

/// The default target of a job without a filename.
pub const DEFAULT_TARGET: &str = "emu:";

/// The one line that says which jobs run on the built-in emulator only
/// because they name no target and no engine (fio would make files for
/// them in the current directory); None when there are none.
pub fn default_target_note(specs: &[JobSpec]) -> Option<String> {
    let jobs: Vec<String> = specs
        .iter()
        .filter(|s| s.filename.is_empty() && s.on_emulator())
        .map(|s| format!("'{}'", s.name))
        .collect();
    let (first, more) = jobs.split_first()?;
    let who = match more.len() {
        0 => format!("job {first} names"),
        n => format!("jobs {first} and {n} more name"),
    };
    Some(format!(
        "note: {who} no filename, directory or ioengine: running on the built-in SSD emulator ({DEFAULT_TARGET}nvme-tlc); fio would use files in the current directory (add ioengine= or directory= for that, or filename=)"
    ))
}

/// Point jobs without a filename at the default emulated device and mark
/// emulator jobs as using its engine. Returns warnings.
pub fn assign_emulator(specs: &mut [JobSpec]) -> Vec<String> {
    let mut warnings = Vec::new();
    for s in specs.iter_mut().filter(|s| s.on_emulator()) {
        if s.filename.is_empty() {
            s.filename = vec![DEFAULT_TARGET.to_string()];
        }
        if s.filename.len() > 1 {
            warnings.push(format!(
                "job '{}': only the first of several emulator targets is used",
                s.name
            ));
            s.filename.truncate(1);
        }
        if !matches!(s.ioengine, EngineKind::Psync | EngineKind::Emu) {
            warnings.push(format!(
                "job '{}': ioengine={} does not apply: the emulator target brings its own engine",
                s.name,
                s.ioengine.name()
            ));
        }
        s.ioengine = EngineKind::Emu;
    }
    warnings
}

/// Parse every emulator target's parameters. When a target does not set
/// `size=`, the device is made large enough for the jobs that use it (at
/// least the preset's size).
pub fn params_for(specs: &[JobSpec]) -> Result<BTreeMap<String, Params>, EmuSetupError> {
    let mut out: BTreeMap<String, Params> = BTreeMap::new();
    for s in specs.iter().filter(|s| s.ioengine == EngineKind::Emu) {
        let name = &s.filename[0];
        let body = name
            .strip_prefix("emu:")
            .or_else(|| name.strip_prefix("emu"))
            .unwrap_or("");
        let mut p = Params::parse(body).map_err(|err| EmuSetupError::Params {
            job: s.name.clone(),
            err,
        })?;
        let explicit = body
            .split(',')
            .any(|kv| kv.trim_start().starts_with("size="));
        if let (false, Some(size)) = (explicit, s.size) {
            // The last clone's region, when offset_increment spaces them.
            let step = s.offset_increment.bytes().unwrap_or(0);
            let last = step.saturating_mul(u64::from(s.numjobs.saturating_sub(1)));
            let need = (s.offset + last + size).div_ceil(1 << 20) << 20;
            if need > p.size {
                p.size = need;
                p.check().map_err(|err| EmuSetupError::Grown {
                    job: s.name.clone(),
                    err,
                })?;
            }
        }
        match out.get_mut(name) {
            Some(prev) if prev.size < p.size => *prev = p,
            Some(_) => {}
            None => {
                out.insert(name.clone(), p);
            }
        }
    }
    Ok(out)
}

/// Refuse, before anything is allocated, a run whose emulated devices
/// (`params`) and workers would not fit in this machine's memory: the
/// estimate of [`ssdready_emu::memory`] (devices for the whole run, buffers
/// and statistics of the largest phase) against what is available less a
/// headroom. The message names the devices, the figures by item and what to
/// change.
pub fn check_memory(
    specs: &[JobSpec],
    params: &BTreeMap<String, Params>,
    time: TimeBase,
) -> Result<(), EmuSetupError> {
    check_faults(specs, params, time)?;
    check_zoned_devices(specs, params, time == TimeBase::Virtual)?;
    let Some(avail) = memory::available() else {
        return Ok(()); // no /proc/meminfo: nothing to compare with
    };
    let (phases, _) = crate::phases::phases_and_groups(specs);
    let load = |s: &JobSpec| {
        let mut l = JobLoad::of(s);
        // The emulator's engine keeps no buffers on a nocopy device.
        let on = (s.ioengine == EngineKind::Emu).then(|| params.get(&s.filename[0]));
        if on.flatten().is_some_and(|p| p.nocopy) {
            l.buffers = 0;
        }
        l
    };
    let loads: Vec<Vec<JobLoad>> = phases
        .iter()
        .map(|members| members.iter().map(|&i| load(&specs[i])).collect())
        .collect();
    let devices: Vec<&Params> = params.values().collect();
    let need = memory::estimate(&devices, &loads, time);
    memory::check(&need, &avail).map_err(|err| {
        let grown = params.iter().any(|(k, p)| {
            !k.contains("size=")
                && ssdready_emu::config::preset(&p.preset).is_some_and(|d| d.size < p.size)
        });
        EmuSetupError::NoRoom {
            devices: params.keys().cloned().collect(),
            grown_to: grown.then(|| params.values().map(|p| p.size).max().unwrap_or(0)),
            err: Box::new(err),
        }
    })
}

/// Injected faults run in real time, through the emulator's own queue
/// pairs: virtual time and temporal merge refuse them, saying so.
fn check_faults(
    specs: &[JobSpec],
    params: &BTreeMap<String, Params>,
    time: TimeBase,
) -> Result<(), EmuSetupError> {
    for (name, p) in params.iter().filter(|(_, p)| p.faults.any()) {
        let f = &p.faults;
        if p.nocopy && (f.power_cut() || f.torn_write_rate > 0.0) {
            return Err(EmuSetupError::FaultsOnNocopy {
                device: name.clone(),
            });
        }
        if time == TimeBase::Virtual && !f.only_spikes() {
            return Err(EmuSetupError::FaultsInVirtualTime {
                device: name.clone(),
            });
        }
        if let Some(s) = merging_job(specs, name) {
            return Err(EmuSetupError::FaultsMerged {
                job: s.name.clone(),
                merge: s.temporal_merge.name(),
                device: name.clone(),
            });
        }
    }
    Ok(())
}

/// The first job that sends temporal-merge commands to the emulated
/// device `name` (merged commands bypass per-request device behaviour:
/// injected faults, zone write pointers).
pub(crate) fn merging_job<'a>(specs: &'a [JobSpec], name: &str) -> Option<&'a JobSpec> {
    specs.iter().find(|s| {
        s.ioengine == EngineKind::Emu
            && s.filename[0] == name
            && s.temporal_merge != ssdready_core::spec::TemporalMerge::Off
    })
}

/// The checks of a run's emulated devices on resolved jobs (`--parse-only`):
/// their parameters and the memory check.
pub fn check_resolved(specs: &[JobSpec], time: TimeBase) -> Result<(), EmuSetupError> {
    let mut on_devices = specs.to_vec();
    assign_emulator(&mut on_devices);
    let params = params_for(&on_devices)?;
    check_memory(&on_devices, &params, time)
}

/// Run `work` on a thread of its own and wait for it, looking at `stop`
/// every 20 ms: building a large device's FTL takes seconds, and Ctrl-C
/// must not wait for it. On a stop request the run ends at once
/// ([`Failure::Interrupted`]; the builder thread is left to finish on its
/// own): nothing has run and nothing has been written yet.
pub fn interruptible<T: Send + 'static>(
    stop: &AtomicBool,
    what: &str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Failure> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("emu-setup".into())
        .spawn(move || {
            let _ = tx.send(work());
        });
    let Ok(handle) = spawned else {
        return Err(no_thread(what));
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(v) => return Ok(v),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) if stop.load(Relaxed) => {
                return Err(Failure::Interrupted(format!(
                    "interrupted while {what}; nothing ran and nothing was written"
                )));
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => return Err(no_thread(what)),
            },
        }
    }
}

fn no_thread(what: &str) -> Failure {
    Failure::Runtime(format!("could not start a thread for {what}"))
}

/// Create the shared devices (interruptibly, see [`interruptible`]).
pub fn create(
    params: BTreeMap<String, Params>,
    clock: Clock,
    stop: &AtomicBool,
) -> Result<BTreeMap<String, Arc<SharedDevice>>, Failure> {
    interruptible(stop, "building the emulated devices", move || {
        params
            .into_iter()
            .map(|(k, p)| {
                SharedDevice::new(p, clock)
                    .map(|d| (k.clone(), d))
                    .map_err(|err| EmuSetupError::NoData { device: k, err })
            })
            .collect::<Result<_, EmuSetupError>>()
    })?
    .map_err(|e| Failure::Runtime(e.to_string()))
}

/// The emulator's report for one device.
pub fn report(
    dev: &Device,
    totals: &DeviceCounters,
    clock: &str,
    free_blocks: Vec<u64>,
    window_ns: u64,
) -> EmuReport {
    let p = &dev.p;
    let mut r = EmuReport {
        clock: clock.into(),
        params: p.pairs(),
        free_blocks_series: free_blocks,
        die_utilisation_pct: totals
            .die_busy_ns
            .iter()
            .map(|&b| {
                if window_ns > 0 {
                    (100.0 * b as f64 / window_ns as f64).min(100.0)
                } else {
                    0.0
                }
            })
            .collect(),
        commands: totals.commands,
        extents: totals.extents,
        ..EmuReport::default()
    };
    if let Some(f) = &dev.ftl {
        let c = f.counters;
        let (min, mean, max) = f.erase_stats();
        r.host_pages_written = c.host_pages;
        r.nand_pages_written = c.host_pages + c.gc_pages;
        r.write_amplification = f.write_amplification();
        r.alpha_effective = p.alpha_effective();
        r.wa_greedy_predicted = wa_greedy(p.alpha_effective(), p.pages_per_block as f64);
        r.gc_runs = c.gc_runs;
        r.gc_pages_moved = c.gc_pages;
        r.trimmed_pages = c.trimmed_pages;
        r.erase_count_min = min;
        r.erase_count_mean = mean;
        r.erase_count_max = max;
    }
    if dev.p.faults.any() {
        r.faults = Some(dev.faults.counts);
    }
    r.zones = emu_zones(dev);
    let n = dev.nand_totals();
    r.slc_pages_written = n.slc_units;
    r.slc_pages_folded = n.folded_units;
    r.pe_suspensions = n.suspensions;
    r.reads_ahead_of_pe = n.reads_ahead;
    r
}

/// An emulated zoned drive's zone counters for its report (None when it is
/// not zoned).
pub(crate) fn emu_zones(
    dev: &ssdready_emu::device::Device,
) -> Option<ssdready_core::result::EmuZones> {
    let z = dev.ftl.as_ref()?.zones.as_ref()?;
    let (open, active) = z.open_active();
    Some(ssdready_core::result::EmuZones {
        zones: z.report().len() as u64,
        open,
        active,
        counters: z.counters,
    })
}

/// Zoned emulated drives run in real time through the emulator's own queue
/// pairs, where every command meets the zones: virtual time and temporal
/// merge (whose commands do not) refuse them, saying so.
pub(crate) fn check_zoned_devices(
    specs: &[JobSpec],
    params: &BTreeMap<String, ssdready_emu::config::Params>,
    virtual_time: bool,
) -> Result<(), EmuSetupError> {
    for (name, _) in params.iter().filter(|(_, p)| p.zoned.zoned) {
        if virtual_time {
            return Err(EmuSetupError::ZonedInVirtualTime {
                device: name.clone(),
            });
        }
        if let Some(s) = merging_job(specs, name) {
            return Err(EmuSetupError::ZonedMerged {
                job: s.name.clone(),
                merge: s.temporal_merge.name(),
                device: name.clone(),
            });
        }
    }
    Ok(())
}
