//! Targets of the passthrough engines (`ioengine=sg`, `io_uring_cmd`):
//! devices spoken to in their own command set, so they are checked in it
//! before the run.
//!
//! * What the job asks of the engine that ssdready does not implement is
//!   refused first, in one line naming it (exit code 2).
//! * Each target must be the right kind of device — sg: a SCSI disk's
//!   block device or `/dev/sgN` that answers SG_IO; io_uring_cmd: an NVMe
//!   namespace's generic character device `/dev/ngXnY` — and its block
//!   size and capacity come from the device itself (READ CAPACITY,
//!   Identify Namespace). A target that cannot do it is refused naming
//!   what is missing.
//! * Writes go through the same data-safety checks as any block device
//!   ([`ssdready_io::target::safety`]), on the block device behind the
//!   node (`/dev/sg2` → `/dev/sdc`, `/dev/ng0n1` → `/dev/nvme0n1`); a node
//!   with no block device behind it is written only with
//!   `--allow-destructive`.
//! * Every block size and the job's offset must be whole logical blocks of
//!   the device.

use crate::failure::{bad, Failure};
use ssdready_core::spec::{EngineKind, JobSpec};
use ssdready_core::spec_io::ZoneMode;
use ssdready_core::spec_passthru::{CmdType, NvmeWriteMode};
use ssdready_io::target::{self, Target, TargetKind, TargetNeeds};
use ssdready_workload::plan::Region;
use std::path::{Path, PathBuf};

/// Whether the job's engine is a passthrough engine.
pub(crate) fn is_passthru(spec: &JobSpec) -> bool {
    matches!(spec.ioengine, EngineKind::Sg | EngineKind::UringCmd)
}

/// What a job asks of a passthrough engine that ssdready does not
/// implement, as one line ([`unsupported`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Unsupported {
    #[error(
        "zonemode=zbd with ioengine={engine}: zones of a device spoken to through passthrough \
         (zone report and reset as NVMe/SCSI commands) are not supported yet; use the block \
         device with ioengine=io_uring or psync"
    )]
    Zbd { engine: &'static str },
    #[error(
        "cmd_type=bsg: SCSI commands over io_uring (/dev/bsg) are not supported yet; \
         ioengine=sg sends the same commands through SG_IO"
    )]
    Bsg,
    #[error(
        "pi_chk/md_per_io_size: NVMe end-to-end protection information (metadata buffers, \
         guard and tag generation) is not supported yet"
    )]
    ProtectionInfo,
    #[error("dataplacement={0} (fdp, plids): NVMe data placement is not supported yet")]
    DataPlacement(String),
    #[error(
        "num_range={0}: trims of several ranges in one Dataset Management command are not \
         supported yet (num_range=1 sends one range per trim)"
    )]
    NumRange(u32),
    #[error(
        "write_mode=zone_append: Zone Append needs a zoned namespace, which io_uring_cmd \
         does not support yet"
    )]
    ZoneAppend,
}

/// What the job asks of its engine that ssdready does not implement;
/// None when it can run.
pub(crate) fn unsupported(spec: &JobSpec) -> Option<Unsupported> {
    let p = &spec.passthru;
    if spec.zones.mode == ZoneMode::Zbd {
        return Some(Unsupported::Zbd {
            engine: spec.ioengine.name(),
        });
    }
    if spec.ioengine != EngineKind::UringCmd {
        return None;
    }
    if p.cmd_type == CmdType::Bsg {
        return Some(Unsupported::Bsg);
    }
    if p.pi_chk.is_some() || p.md_per_io_size > 0 {
        return Some(Unsupported::ProtectionInfo);
    }
    if let Some(dp) = &p.data_placement {
        return Some(Unsupported::DataPlacement(dp.clone()));
    }
    if p.num_range > 1 && spec.rw.trims() {
        return Some(Unsupported::NumRange(p.num_range));
    }
    if p.write_mode
        .iter()
        .any(|m| m.0 == NvmeWriteMode::ZoneAppend)
    {
        return Some(Unsupported::ZoneAppend);
    }
    None
}

/// Refuse what the engine cannot do (before any device is touched), and
/// settle what passthrough makes moot: no page cache to drop.
pub(crate) fn check_job(spec: &mut JobSpec) -> Result<(), Unsupported> {
    if let Some(why) = unsupported(spec) {
        return Err(why);
    }
    // The commands bypass the page cache: fio's invalidate has nothing to do.
    spec.invalidate = false;
    Ok(())
}

/// A device as the engine sees it: its capacity in the job's bytes and
/// the size of one logical block.
pub(crate) struct Device {
    pub bytes: u64,
    pub unit: u64,
}

/// Ask the device at `path` (see the module docs); the error is the one
/// line naming what is missing.
pub(crate) fn probe(spec: &JobSpec, path: &str) -> Result<Device, Failure> {
    let p = Path::new(path);
    if std::fs::symlink_metadata(p).is_err() {
        let needs = match spec.ioengine {
            EngineKind::Sg => "sg needs /dev/sgN or a SCSI disk's block device (/dev/sdX)",
            _ => "io_uring_cmd needs an NVMe namespace's generic character device (/dev/ngXnY)",
        };
        return Err(bad(format!(
            "job '{}': ioengine={}: {path} does not exist: {needs}",
            spec.name,
            spec.ioengine.name()
        )));
    }
    let in_job = |e: ssdready_io::EngineError| bad(format!("job '{}': {e}", spec.name));
    match spec.ioengine {
        EngineKind::Sg => {
            if p.is_file() {
                return Err(bad(format!(
                    "job '{}': ioengine=sg: {path} is a regular file: sg needs /dev/sgN or a SCSI \
                     disk's block device (/dev/sdX)",
                    spec.name
                )));
            }
            let c = ssdready_io::engines::sg::probe(p).map_err(in_job)?;
            Ok(Device {
                bytes: c.bytes(),
                unit: u64::from(c.block_size),
            })
        }
        _ => {
            let ns = ssdready_io::engines::uring_cmd::probe(p).map_err(in_job)?;
            if ns.ms > 0 {
                return Err(bad(format!(
                    "job '{}': ioengine=io_uring_cmd: {path} is formatted with {} bytes of metadata \
                     per block{}: metadata buffers and protection information are not supported yet \
                     (use a format without metadata)",
                    spec.name,
                    ns.ms,
                    if ns.extended { " (extended LBAs)" } else { "" }
                )));
            }
            Ok(Device {
                bytes: ns.bytes(),
                unit: u64::from(ns.unit()),
            })
        }
    }
}

/// The block device behind a passthrough node, when there is one:
/// `/dev/sdX` itself, `/dev/sgN` → the disk in
/// `/sys/class/scsi_generic/sgN/device/block/`, `/dev/ngXnY` → `/dev/nvmeXnY`.
fn block_behind(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let md = std::fs::metadata(path).ok()?;
    if md.file_type().is_block_device() {
        return Some(path.into());
    }
    let name = std::fs::canonicalize(path)
        .ok()?
        .file_name()?
        .to_str()?
        .to_string();
    if let Some(rest) = name.strip_prefix("ng") {
        let disk = format!("nvme{rest}");
        return Path::new("/sys/block")
            .join(&disk)
            .exists()
            .then(|| Path::new("/dev").join(disk));
    }
    let dir = Path::new("/sys/class/scsi_generic")
        .join(&name)
        .join("device/block");
    let disk = std::fs::read_dir(dir).ok()?.flatten().next()?.file_name();
    Some(Path::new("/dev").join(disk))
}

/// Resolve one target for the span `r` its clones cover: the safety checks
/// on the block device behind it, the device's own size and block size,
/// and the job's alignment to it.
pub(crate) fn target(
    spec: &JobSpec,
    name: &str,
    r: Region,
    allow_destructive: bool,
) -> Result<Target, Failure> {
    let job = &spec.name;
    let in_job = |m: String| bad(format!("job '{job}': {m}"));
    let dev = probe(spec, name)?;
    for bs in spec.bs.all() {
        if !u64::from(bs).is_multiple_of(dev.unit) {
            return Err(in_job(format!(
                "option 'bs': {bs} is not a whole number of {name}'s {}-byte logical blocks \
                 (ioengine={} sends whole blocks)",
                dev.unit,
                spec.ioengine.name()
            )));
        }
    }
    if !r.offset.is_multiple_of(dev.unit) {
        return Err(in_job(format!(
            "option 'offset': {} is not a whole number of {name}'s {}-byte logical blocks",
            r.offset, dev.unit
        )));
    }
    if r.offset + r.len > dev.bytes {
        return Err(in_job(format!(
            "{name}: the job needs {} bytes but the device has {} (lower size or offset)",
            r.offset + r.len,
            dev.bytes
        )));
    }
    let modifies = spec.modifies_target();
    let mut t = match block_behind(Path::new(name)) {
        Some(disk) => {
            let needs = TargetNeeds {
                bytes: Some(r.offset + r.len),
                offset: r.offset,
                modifies,
                allow_destructive,
                allow_mounted_write: spec.access.allow_mounted_write,
            };
            let mut t = target::resolve(&disk, needs)
                .map_err(|e| crate::target_checks::target_failure(job, e))?;
            t.path = name.into();
            t
        }
        None if modifies && !allow_destructive => {
            return Err(Failure::BadInput(format!(
                "job '{job}': refusing to write to {name}: no block device behind it, so what it \
                 holds cannot be checked (pass --allow-destructive to write to it)"
            )));
        }
        None => Target {
            path: name.into(),
            kind: TargetKind::Block,
            size: dev.bytes,
            logical_block_size: dev.unit,
            device: None,
            discard: true,
            sector_map: None,
            devno: None,
            claims: Vec::new(),
            overridden: modifies.then(|| {
                format!("--allow-destructive: writing to {name}, whose contents cannot be checked")
            }),
        },
    };
    t.size = dev.bytes;
    t.logical_block_size = dev.unit;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(kv: &[(&str, &str)]) -> JobSpec {
        let mut s = JobSpec::default();
        for (k, v) in kv {
            ssdready_core::options::apply(&mut s, k, Some(v)).unwrap();
        }
        s
    }

    #[test]
    fn what_io_uring_cmd_does_not_implement_is_named() {
        let base = [("ioengine", "io_uring_cmd"), ("rw", "randwrite")];
        assert_eq!(unsupported(&job(&base)), None);
        for (opt, val, says) in [
            ("cmd_type", "bsg", "cmd_type=bsg"),
            ("pi_chk", "GUARD", "protection information"),
            ("md_per_io_size", "64", "protection information"),
            ("fdp", "1", "dataplacement=fdp"),
            ("write_mode", "zone_append", "zone_append"),
            ("zonemode", "zbd", "zonemode=zbd"),
        ] {
            let mut kv = base.to_vec();
            kv.push((opt, val));
            let why = unsupported(&job(&kv))
                .map(|u| u.to_string())
                .unwrap_or_default();
            assert!(why.contains(says), "{opt}={val}: {why}");
        }
        // num_range matters for trims only.
        let mut kv = base.to_vec();
        kv.push(("num_range", "8"));
        assert_eq!(unsupported(&job(&kv)), None);
        kv[1] = ("rw", "randtrim");
        assert!(unsupported(&job(&kv))
            .unwrap()
            .to_string()
            .contains("num_range=8"));
        // Mixed write modes without zone append run.
        let kv = [
            ("ioengine", "io_uring_cmd"),
            ("write_mode", "write/50:zeroes/50"),
        ];
        assert_eq!(unsupported(&job(&kv)), None);
    }

    #[test]
    fn a_missing_node_names_what_the_engine_needs() {
        let s = job(&[("ioengine", "sg"), ("name", "j")]);
        let e = probe(&s, "/dev/no-such-sg")
            .err()
            .unwrap()
            .message()
            .to_string();
        assert!(
            e.contains("/dev/no-such-sg does not exist: sg needs /dev/sgN"),
            "{e}"
        );
    }
}
