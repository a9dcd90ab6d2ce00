//! fio's `dev-dax` engine (fio 3.33's engines/dev-dax.c): I/O to a
//! device-DAX character device (`/dev/daxX.Y`, a persistent-memory
//! namespace in devdax mode) through a shared mapping of it. A read is a
//! `memcpy` out of the mapping, a write libpmem's `pmem_memcpy_persist`
//! into it (non-temporal stores and write-back, then a drain: every write
//! is durable when it completes); fsyncs do nothing, as in fio. The copy
//! is [`crate::engines::pmem`]'s, shared with the libpmem engine.
//!
//! The device's size is `/sys/dev/char/MAJ:MIN/size` (it has no file
//! size), its mapping granularity `…/align` (2 MiB by default), and the
//! kernel says a character device is device-DAX when
//! `/sys/dev/char/MAJ:MIN/subsystem` is the `dax` bus ([`resolve`]).
//!
//! Before a job writes one, the device's first bytes are checked for a
//! file system or other signature ([`crate::target::safety::signature`]),
//! as a block device's are: a device-DAX namespace can hold a file system
//! written through another mode.

use crate::buf::AlignedBuf;
use crate::engine::{EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::engines::libpmem::persistence_of;
use crate::engines::pmem::{Mapping, Stores};
use crate::sync_engine::SyncEngine;
use crate::target::{Target, TargetError, TargetKind, TargetNeeds};
use ssdready_core::engines::{Caps, EngineFacts, IN_CALL};
use ssdready_core::{Ddir, IoReq};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Why a path cannot be a dev-dax target.
#[derive(Debug, thiserror::Error)]
pub enum DaxError {
    /// It does not exist: no such device here (a run-time failure).
    #[error("{0}")]
    Absent(String),
    /// It is something else (a file, a block device, another character
    /// device): the request's fault.
    #[error("{0}")]
    WrongKind(String),
    /// The target check refused it (size, data on it).
    #[error(transparent)]
    Target(#[from] TargetError),
}

/// `/sys/dev/char/MAJ:MIN`, the device's sysfs directory.
fn sysfs_dir(rdev: u64) -> PathBuf {
    let (maj, min) = crate::target::sysfs::major_minor(rdev);
    PathBuf::from(format!("/sys/dev/char/{maj}:{min}"))
}

/// What this kernel offers of device-DAX, for the refusal of a missing one.
fn dax_here() -> String {
    let bus = Path::new("/sys/bus/dax/devices");
    match std::fs::read_dir(bus) {
        Err(_) => "this kernel has no dax bus (/sys/bus/dax: CONFIG_DEV_DAX is off)".into(),
        Ok(d) => {
            let names: Vec<String> = d
                .flatten()
                .map(|e| format!("/dev/{}", e.file_name().to_string_lossy()))
                .collect();
            if names.is_empty() {
                "this machine has none (/sys/bus/dax/devices is empty: no persistent memory in devdax mode, \
                 or a kernel without CONFIG_DEV_DAX)"
                    .into()
            } else {
                format!("this machine has {}", names.join(", "))
            }
        }
    }
}

/// The subsystem a character device's sysfs entry names (`dax` for
/// device-DAX), or None when sysfs does not know it.
fn subsystem(dir: &Path) -> Option<String> {
    let p = std::fs::canonicalize(dir.join("subsystem")).ok()?;
    Some(p.file_name()?.to_string_lossy().into_owned())
}

/// The size of the device-DAX character device `md` is of, from sysfs
/// (None for anything else).
pub fn device_size(md: &std::fs::Metadata) -> Option<u64> {
    if !md.file_type().is_char_device() {
        return None;
    }
    let dir = sysfs_dir(md.rdev());
    (subsystem(&dir)? == "dax").then(|| read_u64(&dir.join("size")))?
}

fn read_u64(p: &Path) -> Option<u64> {
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

/// Look at `path` for a dev-dax job: it must be a device-DAX character
/// device, large enough, and — when the job writes — hold no signature at
/// its start (unless `--allow-destructive`).
pub fn resolve(path: &Path, needs: TargetNeeds) -> Result<Target, DaxError> {
    let shown = path.display();
    let md = match std::fs::metadata(path) {
        Ok(md) => md,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(DaxError::Absent(format!(
                "{shown} does not exist: ioengine=dev-dax needs a device-DAX character device (/dev/daxX.Y), and {}",
                dax_here()
            )))
        }
        Err(e) => {
            return Err(DaxError::Target(TargetError::Io {
                path: shown.to_string(),
                source: e,
            }))
        }
    };
    let dir = dax_dir(path, &md)?;
    let size = read_u64(&dir.join("size")).ok_or_else(|| {
        DaxError::WrongKind(format!("{shown}: {}/size is unreadable", dir.display()))
    })?;
    if let Some(b) = needs.bytes.filter(|&b| b > size) {
        return Err(TargetError::Invalid(format!(
            "{shown}: the job needs {b} bytes but the device has {size} (lower size or offset)"
        ))
        .into());
    }
    let mut overridden = None;
    if needs.modifies {
        if let Some(what) = signature_at_start(path, size, align_of(&dir)) {
            let why = format!("{shown} holds data: {what} signature at byte 0 (signature)");
            if !needs.allow_destructive {
                return Err(TargetError::Refused(format!(
                    "refusing to write to {shown}: {why} (pass --allow-destructive to overwrite it)"
                ))
                .into());
            }
            overridden = Some(format!(
                "--allow-destructive: writing to {shown} although {why}"
            ));
        }
    }
    Ok(Target {
        path: path.into(),
        kind: TargetKind::Dax,
        size,
        logical_block_size: 1,
        device: None,
        discard: false,
        sector_map: None,
        devno: None,
        claims: Vec::new(),
        overridden,
    })
}

/// The sysfs directory of the device `path` (`md` its metadata), which
/// must be a device-DAX character device.
fn dax_dir(path: &Path, md: &std::fs::Metadata) -> Result<PathBuf, DaxError> {
    let shown = path.display();
    let wrong = |what: String| {
        DaxError::WrongKind(format!(
            "{shown} is {what}, not a device-DAX character device (ioengine=dev-dax maps /dev/daxX.Y; \
             for a file on a DAX file system use ioengine=libpmem)"
        ))
    };
    let ft = md.file_type();
    if !ft.is_char_device() {
        return Err(wrong(
            if ft.is_file() {
                "a regular file"
            } else if ft.is_dir() {
                "a directory"
            } else if ft.is_block_device() {
                "a block device"
            } else {
                "not a device"
            }
            .into(),
        ));
    }
    let dir = sysfs_dir(md.rdev());
    match subsystem(&dir) {
        Some(s) if s == "dax" => {}
        Some(s) => return Err(wrong(format!("a character device of the '{s}' subsystem"))),
        None => {
            return Err(wrong(format!(
                "a character device unknown to sysfs ({})",
                dir.display()
            )))
        }
    }
    Ok(dir)
}

/// The device's mapping granularity (`align`, 2 MiB when unknown).
fn align_of(dir: &Path) -> u64 {
    read_u64(&dir.join("align"))
        .filter(|a| a.is_power_of_two())
        .unwrap_or(2 << 20)
}

/// A signature in the device's first bytes: it cannot be read(2), so
/// they are mapped.
fn signature_at_start(path: &Path, size: u64, align: u64) -> Option<&'static str> {
    let f = std::fs::File::open(path).ok()?;
    let len = align.min(size) as usize;
    let map = Mapping::map_device(&f, len, false).ok()?;
    let mut head = vec![0u8; len.min(1 << 16)];
    (map.read(0, &mut head) > 0).then_some(())?;
    crate::target::safety::signature::find_signature(&head)
}

/// Copies to and from a mapping of a device-DAX character device.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static DEV_DAX: EngineFacts = EngineFacts {
    refusals: crate::engines::pmem::refusals,
    ..EngineFacts::own("dev-dax", Caps::MAPS, IN_CALL)
};

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&DEV_DAX],
    open: |setup| Ok(AnyEngine::dynamic(DevDaxEngine::new(setup)?)),
};

/// See the module docs.
pub struct DevDaxEngine {
    maps: Vec<Mapping>,
    buf: AlignedBuf,
}

impl DevDaxEngine {
    /// Open and map the job's devices, each whole.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let writable = spec.modifies_target();
        let maps = setup
            .targets
            .iter()
            .map(|t| {
                let sys = |what: &str, source| EngineError::Sys {
                    what: format!("ioengine=dev-dax: {what} {}", t.path.display()),
                    source,
                };
                if t.kind != TargetKind::Dax {
                    return Err(EngineError::Unsupported(format!(
                        "ioengine=dev-dax: {} is not a device-DAX character device",
                        t.path.display()
                    )));
                }
                let f = std::fs::OpenOptions::new()
                    .read(true)
                    .write(writable)
                    .open(&t.path)
                    .map_err(|e| sys("opening", e))?;
                // The size is a multiple of the device's align, as
                // device-DAX mappings must be.
                Mapping::map_device(&f, t.size as usize, writable).map_err(|e| sys("mapping", e))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut buf = AlignedBuf::for_job(spec.bs.max() as usize, &spec.run.mem, 0)?;
        buf.fill_random(setup.seed);
        Ok(DevDaxEngine { maps, buf })
    }
}

impl SyncEngine for DevDaxEngine {
    fn name(&self) -> &'static str {
        "dev-dax"
    }
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let map = &mut self.maps[req.file as usize];
        let len = req.len as usize;
        let r = match req.ddir {
            Ddir::Read => map.read(req.offset, &mut self.buf.as_mut_slice()[..len]),
            // pmem_memcpy_persist: durable when it returns.
            Ddir::Write => map.write(
                req.offset,
                &self.buf.as_slice()[..len],
                Stores::NonTemporal,
                true,
            ),
            Ddir::Trim => -(libc::EINVAL as i64),
        };
        Ok(Queued::Done(r))
    }
    fn sync(&mut self, _slot: u32, _file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        // Every write is already durable: fio's dev-dax does nothing here.
        Ok(Queued::Done(0))
    }
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(self.buf.as_mut_slice())
    }
    fn persistence(&self) -> Option<&'static str> {
        persistence_of(&self.maps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs() -> TargetNeeds {
        TargetNeeds {
            bytes: Some(1 << 20),
            offset: 0,
            modifies: true,
            allow_destructive: false,
            allow_mounted_write: false,
        }
    }

    #[test]
    fn a_missing_device_is_absent_and_names_what_this_machine_has() {
        let e = resolve(Path::new("/dev/dax-ssdready-none.0"), needs()).unwrap_err();
        assert!(matches!(e, DaxError::Absent(_)), "{e:?}");
        let m = e.to_string();
        assert!(m.contains("needs a device-DAX character device"), "{m}");
        assert!(m.contains("/sys/bus/dax"), "{m}");
    }

    #[test]
    fn a_regular_file_or_another_char_device_is_the_wrong_kind() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, [0u8; 4096]).unwrap();
        let e = resolve(&f, needs()).unwrap_err();
        assert!(matches!(e, DaxError::WrongKind(_)), "{e:?}");
        assert!(
            e.to_string()
                .contains("is a regular file, not a device-DAX"),
            "{e}"
        );
        let e = resolve(Path::new("/dev/null"), needs()).unwrap_err();
        assert!(matches!(e, DaxError::WrongKind(_)), "{e:?}");
        assert!(e.to_string().contains("'mem' subsystem"), "{e}");
    }
}
