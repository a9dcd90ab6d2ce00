//! fio's `zonemode=zbd` in a run: where each job's zones come from, sizes
//! given in zones (`size=8z`), and each worker's view of the zones, whose
//! placement rules are [`ssdready_workload::zbd`]'s.
//!
//! Zones come, as in fio's `zbd_create_zone_info`, from the target:
//! * an emulated drive with `zoned=1`: its report-zones (host-managed; its
//!   `max_open_zones` is the device limit; a job's `zonesize` must match);
//! * a zoned block device (sysfs `queue/zoned` host-managed or host-aware):
//!   `BLKREPORTZONE`, and resets by `BLKRESETZONE`;
//! * anything else (a regular file, a block device or emulated drive that is
//!   not zoned): fio's emulated zones of `zonesize` bytes (`zonecapacity`
//!   writable), all empty at the start, known only to this bookkeeping; a
//!   job without `zonesize` is refused with fio's message.
//!
//! The zones of a target are shared by every job of the run that uses it
//! (fio's per-file `zbd_info`). A worker holds the table's lock from
//! placing an I/O until the engine has taken it, so writes reach a zone in
//! write-pointer order whatever the number of workers; a zone reset is done
//! then too, synchronously (fio quiesces and resets alike).

use crate::prepared::PreparedJob;
pub(crate) use crate::zbd_error::ZbdError;
pub(crate) use crate::zbd_table::lock;
use crate::zbd_table::{shared, Resetter, ZbdShared};
use ssdready_core::spec::{EngineKind, JobSpec, RwMode};
use ssdready_core::spec_io::ZoneMode;
use ssdready_emu::engine::SharedDevice;
use ssdready_io::target::zoned::{self, ZonedModel};
use ssdready_io::target::{Target, TargetKind};
use ssdready_io::EngineError;
use ssdready_workload::jobflow::FlowIo;
use ssdready_workload::jobflow::JobFlow;
use ssdready_workload::zbd::{Decision, HostZone, ZbdFile, ZbdJob};
use std::collections::BTreeMap;

use std::sync::{Arc, Mutex};

/// A worker's view: the shared zones and its own job state.
#[derive(Clone)]
pub(crate) struct WorkerZbd {
    shared: Arc<ZbdShared>,
    pub job: ZbdJob,
    mixed: bool,
    rwmix_write: u32,
    /// Why the job stopped placing I/O, once it has.
    pub eof: Option<&'static str>,
}

/// What becomes of one I/O.
pub(crate) enum Placed {
    /// Issue it as placed.
    Issue(FlowIo),
    /// A trim done as a zone reset: count it completed.
    ResetDone(FlowIo),
    /// Nothing now; ask the flow for the next I/O.
    Skip,
    /// The job can place no more I/O.
    Eof,
}

/// The zone size of `spec`'s target as far as known before it is opened:
/// an emulated zoned drive's, a zoned block device's, else `zonesize`.
fn known_zone_size(spec: &JobSpec, devices: &BTreeMap<String, Arc<SharedDevice>>) -> u64 {
    if spec.ioengine == EngineKind::Emu {
        if let Some(d) = devices.get(&spec.filename[0]).filter(|d| d.is_zoned()) {
            return d.params.zoned.size();
        }
    }
    let disk = spec.filename.first().and_then(|f| {
        let name = std::path::Path::new(f).file_name()?.to_str()?.to_string();
        zoned::zoned_info(&name).filter(|i| i.0 != ZonedModel::None)
    });
    disk.map_or(spec.zones.size, |i| i.1)
}

/// Sizes in zones (`offset=524z`, `size=8z`) made bytes; they need
/// zonemode=zbd and a zone size.
pub(crate) fn resolve_units(
    spec: &mut JobSpec,
    devices: &BTreeMap<String, Arc<SharedDevice>>,
) -> Result<(), ZbdError> {
    let z = &spec.zbd;
    let given = [
        ("offset", z.offset_zones),
        ("size", z.size_zones),
        ("io_size", z.io_size_zones),
    ];
    let Some((opt, n)) = given.iter().find_map(|(o, n)| n.map(|n| (*o, n))) else {
        return Ok(());
    };
    if spec.zones.mode != ZoneMode::Zbd {
        return Err(ZbdError::ZonesNeedZbd { opt, n });
    }
    let zs = known_zone_size(spec, devices);
    if zs == 0 {
        return Err(ZbdError::ZoneSizeUnknown { opt, n });
    }
    if let Some(n) = spec.zbd.offset_zones {
        spec.offset = n.saturating_mul(zs);
    }
    if let Some(n) = spec.zbd.size_zones {
        spec.size = Some(n.saturating_mul(zs));
    }
    if let Some(n) = spec.zbd.io_size_zones {
        spec.io_size = Some(n.saturating_mul(zs));
    }
    Ok(())
}

/// The zones of every zbd job's target, built once per target: fio's
/// `zbd_init_files` and `zbd_setup_files` checks. Errors are one line
/// naming the job.
pub(crate) fn setup(jobs: &[PreparedJob]) -> Result<Vec<Option<Arc<ZbdShared>>>, ZbdError> {
    let mut by_name: BTreeMap<String, Arc<ZbdShared>> = BTreeMap::new();
    let mut out = Vec::with_capacity(jobs.len());
    for j in jobs {
        let s = &j.spec;
        if s.zones.mode != ZoneMode::Zbd {
            out.push(None);
            continue;
        }
        let shared = shared_for(j, &mut by_name).map_err(|e| ZbdError::InJob {
            job: s.name.clone(),
            err: Box::new(e),
        })?;
        out.push(Some(shared));
    }
    Ok(out)
}

fn shared_for(
    j: &PreparedJob,
    by_name: &mut BTreeMap<String, Arc<ZbdShared>>,
) -> Result<Arc<ZbdShared>, ZbdError> {
    let s = &j.spec;
    if j.targets.len() > 1 || j.clones.iter().any(|c| c.regions.len() > 1) {
        return Err(ZbdError::SeveralFiles);
    }
    if s.verify.on() {
        return Err(ZbdError::WithVerify);
    }
    let writes = !matches!(s.rw, RwMode::Read | RwMode::RandRead);
    if writes && !s.direct && s.ioengine != EngineKind::Emu {
        // fio's zbd_using_direct_io.
        return Err(ZbdError::NotDirect);
    }
    let name = match (&j.emu, j.targets.first()) {
        (Some(_), _) => s.filename[0].clone(),
        (None, Some(t)) => t.path.display().to_string(),
        (None, None) => return Err(ZbdError::NoTarget),
    };
    let shared = match by_name.get(&name) {
        Some(sh) => sh.clone(),
        None => {
            let sh = Arc::new(build(j, &name)?);
            by_name.insert(name, sh.clone());
            sh
        }
    };
    let mut t = lock(&shared.table);
    let device_max = match (&j.emu, &shared.reset) {
        (Some(d), Resetter::Emu(_)) => d.params.zoned.max_open_zones,
        (None, Resetter::Block(_)) => j.targets[0]
            .device
            .as_deref()
            .and_then(zoned::zoned_info)
            .map_or(0, |i| i.2),
        _ => 0,
    };
    if t.max_write_zones == 0 || s.zbd.max_open_zones > 0 {
        t.limit(&s.zbd, device_max)?;
    }
    if s.zbd.job_max_open_zones > 0 && t.max_write_zones == 0 && writes {
        return Err(ZbdError::JobLimitAlone);
    }
    drop(t);
    Ok(shared)
}

/// A target's zones (module docs).
fn build(j: &PreparedJob, name: &str) -> Result<ZbdShared, ZbdError> {
    let s = &j.spec;
    let (zs, cap) = (s.zones.size, s.zbd.zone_capacity);
    if let Some(dev) = j.emu.as_ref().filter(|d| d.is_zoned()) {
        let zones = dev
            .report_zones()
            .map_err(|e| ZbdError::EmuReport { why: e.to_string() })?
            .unwrap_or_default();
        let size = dev.params.zoned.size();
        if zs > 0 && zs != size {
            return Err(ZbdError::ZoneSizeMismatch {
                target: name.to_string(),
                job: zs,
                disk: size,
            });
        }
        let host = zones
            .iter()
            .map(|z| HostZone::new(z.start, z.len, z.capacity, z.wp))
            .collect();
        return Ok(shared(
            ZbdFile::new(size, host, true),
            Resetter::Emu(dev.clone()),
            name,
        ));
    }
    if let Some(t) = j.targets.first().filter(|t| is_zoned_disk(t)) {
        return block_zones(t, s, name);
    }
    // fio's init_zone_info: emulated zones.
    if zs == 0 {
        return Err(ZbdError::ZoneSizeMissing {
            target: name.to_string(),
        });
    }
    if zs < 512 {
        return Err(ZbdError::ZoneTooSmall {
            target: name.to_string(),
        });
    }
    if cap > zs {
        return Err(ZbdError::CapacityOverSize {
            target: name.to_string(),
            cap,
            size: zs,
        });
    }
    let size = match (&j.emu, j.targets.first()) {
        (Some(d), _) => d.capacity(),
        // fio: the file as it is before the run lays it out.
        (None, Some(t)) => t.size,
        (None, None) => 0,
    };
    if size < zs {
        return Err(ZbdError::SmallerThanZone {
            target: name.to_string(),
            size,
            zone: zs,
        });
    }
    let cap = if cap == 0 { zs } else { cap };
    Ok(shared(
        ZbdFile::emulated(size, zs, cap),
        Resetter::Host,
        name,
    ))
}

fn is_zoned_disk(t: &Target) -> bool {
    t.kind == TargetKind::Block
        && t.device
            .as_deref()
            .and_then(zoned::zoned_info)
            .is_some_and(|i| i.0 != ZonedModel::None)
}

/// A zoned block device's zones (BLKREPORTZONE), opened for resets when
/// the job writes or trims (the run's safety checks passed already).
fn block_zones(t: &Target, s: &JobSpec, name: &str) -> Result<ZbdShared, ZbdError> {
    let modifies = !matches!(s.rw, RwMode::Read | RwMode::RandRead);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(modifies)
        .open(&t.path)
        .map_err(|err| ZbdError::OpenForReport {
            target: name.to_string(),
            err,
        })?;
    let zones = zoned::report_zones(&file).map_err(|err| ZbdError::ReportFailed {
        target: name.to_string(),
        err,
    })?;
    if zones.iter().any(|z| z.conventional) {
        return Err(ZbdError::Conventional {
            target: name.to_string(),
        });
    }
    let size = zones.first().map_or(0, |z| z.len);
    if s.zones.size > 0 && s.zones.size != size {
        return Err(ZbdError::ZoneSizeMismatch {
            target: name.to_string(),
            job: s.zones.size,
            disk: size,
        });
    }
    let host = zones
        .iter()
        .map(|z| {
            let wp = if z.full { z.start + z.capacity } else { z.wp };
            HostZone::new(z.start, z.len, z.capacity, wp)
        })
        .collect();
    Ok(shared(
        ZbdFile::new(size, host, true),
        Resetter::Block(file),
        name,
    ))
}

/// Worker `view`'s zbd state, when its job has zones.
pub(crate) fn for_worker(
    shared: Option<&Arc<ZbdShared>>,
    spec: &JobSpec,
    region: Option<&ssdready_workload::plan::Region>,
) -> Option<WorkerZbd> {
    let (shared, r) = (shared?, region?);
    let min_bs: [u64; 3] = std::array::from_fn(|d| u64::from(spec.bs.for_dir(d).min()));
    let job = lock(&shared.table).job(r.offset, r.len, min_bs, spec.rw.is_random(), &spec.zbd);
    Some(WorkerZbd {
        shared: shared.clone(),
        job,
        mixed: matches!(spec.rw, RwMode::ReadWrite | RwMode::RandRw),
        rwmix_write: 100 - spec.rwmixread.min(100),
        eof: None,
    })
}

impl WorkerZbd {
    /// The shared table (to hold its lock while an I/O is placed and queued).
    pub fn table(&self) -> Arc<Mutex<ZbdFile>> {
        self.shared.table.clone()
    }

    /// Place `io` on the zones (`t`: the table, locked), resetting a zone
    /// first when the rules say so; the flow is told what moved.
    pub fn place(
        &mut self,
        t: &mut ZbdFile,
        plan: &mut JobFlow,
        io: FlowIo,
    ) -> Result<Placed, EngineError> {
        let FlowIo::Rw {
            file,
            ddir,
            offset,
            len,
            tag,
        } = io
        else {
            return Ok(Placed::Issue(io));
        };
        let ddir = t.adjust_ddir(&self.job, ddir, self.mixed, self.rwmix_write);
        let planned = u64::from(len);
        let rw = |offset: u64, len: u64| FlowIo::Rw {
            file,
            ddir,
            offset,
            len: len as u32,
            tag,
        };
        Ok(match t.adjust(&mut self.job, ddir, offset, planned) {
            Decision::Io { offset, len, reset } => {
                if let Some(z) = reset {
                    self.reset(t, z)?;
                }
                plan.zbd_moved(file, ddir, planned, len, 0, offset + len);
                Placed::Issue(rw(offset, len))
            }
            Decision::ResetOnly { zone, offset, len } => {
                self.reset(t, zone)?;
                plan.zbd_moved(file, ddir, planned, len, 0, offset + len);
                Placed::ResetDone(rw(offset, len))
            }
            Decision::Skip { to } => {
                plan.zbd_moved(file, ddir, planned, 0, to - offset, to);
                Placed::Skip
            }
            Decision::Eof(why) => {
                self.eof = Some(why);
                Placed::Eof
            }
        })
    }

    /// Reset zone `z` on the device (nothing for emulated zones).
    fn reset(&self, t: &ZbdFile, z: usize) -> Result<(), EngineError> {
        let fail = |e: String| EngineError::Sys {
            what: format!(
                "{}: resetting the write pointer of zone {z}",
                self.shared.name
            ),
            source: std::io::Error::other(e),
        };
        match &self.shared.reset {
            Resetter::Host => Ok(()),
            Resetter::Emu(dev) => dev
                .manage_zone(ssdready_emu::zoned::ZoneOp::Reset, z)?
                .map_err(|e| fail(e.to_string())),
            Resetter::Block(f) => {
                let zone = t.zones[z];
                zoned::reset_zones(f, zone.start, zone.len).map_err(|e| fail(e.to_string()))
            }
        }
    }
}
