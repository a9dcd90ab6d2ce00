//! What a study target is, before anything runs: an emulated drive, a RAM
//! block device, a block device (NVMe, SATA/SCSI, virtio, …), or a file on
//! some file system; its logical block size, hardware queues, I/O
//! schedulers and poll queues (read by `ssdready_probe::blockdev`); and
//! whether the study may write to it — decided by the same safety checks
//! as `run`. Nothing is changed.

use ssdready_io::target::sysfs::{major_minor, DevNode};
use ssdready_io::target::{self, TargetError, TargetNeeds};
use ssdready_measured::record::{Machine, TargetKind, TargetProfile};
use ssdready_probe::blockdev::{self, mount_of, transport};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A study target that cannot be used; each message names the target.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error(
        "target '{target}' is neither a file nor a block device (allowed: a file, a block device, emu:PRESET[,k=v…])"
    )]
    NotFileOrDevice { target: String },
    /// It could not be looked at.
    #[error("target '{target}': {err}")]
    Stat { target: String, err: std::io::Error },
    /// An emulated drive whose parameters are refused.
    #[error("target '{target}': {why}")]
    Emulator {
        target: String,
        why: ssdready_emu::config::ParamError,
    },
    #[error("target '{target}': block device {major}:{minor} is not in /sys/dev/block")]
    NotInSysfs {
        target: String,
        major: u32,
        minor: u32,
    },
    #[error("target '{target}': cannot open it for reading: {err}")]
    Unreadable { target: String, err: std::io::Error },
    #[error("target '{target}': directory {} does not exist", .dir.display())]
    NoDirectory { target: String, dir: PathBuf },
    #[error(
        "target '{target}' is an empty file: name a new file for the study to create, or one with data to read"
    )]
    EmptyFile { target: String },
    /// A file whose study region is mostly holes: its reads would be the
    /// file system's zeros, never the device's.
    #[error(
        "target '{target}' is sparse: {data} of its first {region} hold data, so the study's reads would be of holes that the file system answers without the device; lay it out first (e.g. `dd if=/dev/urandom of={target} bs=1M count={mib} conv=notrunc`), or name a new file for the study to create and lay out"
    )]
    Sparse {
        target: String,
        data: String,
        region: String,
        mib: u64,
    },
}

/// The most of a file the study reads (a full study's region on a file).
pub const FILE_REGION_MAX: u64 = 1 << 30;

/// Refuse a file whose first `FILE_REGION_MAX` bytes (or all of it) are
/// more than 1 % holes: every read of a hole is answered with zeros by the
/// file system, and no figure of the study would be the device's.
fn refuse_sparse(spec: &str, size: u64) -> Result<(), DetectError> {
    let region = size.min(FILE_REGION_MAX);
    let Ok(f) = std::fs::File::open(spec) else {
        return Ok(()); // unreadable: the run says so with its own words
    };
    let Ok(data) = ssdready_io::target::holes::data_bytes(&f, region) else {
        return Ok(()); // no answer: the device's counters will tell
    };
    if data as f64 >= 0.99 * region as f64 {
        return Ok(());
    }
    let fmt = |b: u64| ssdready_core::units::fmt_bytes(b as f64);
    Err(DetectError::Sparse {
        target: spec.into(),
        data: fmt(data),
        region: fmt(region),
        mib: region.div_ceil(1 << 20),
    })
}

/// Split `a,b,c` into targets, keeping an emulator's `k=v` parameters with
/// it (`emu:x25e,size=64m,/dev/loop0` is two targets).
pub fn split_targets(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let is_param = part.contains('=') && !part.starts_with('/') && !part.starts_with("emu");
        match out.last_mut() {
            Some(last) if is_param && last.starts_with("emu") => {
                last.push(',');
                last.push_str(part);
            }
            _ => out.push(part.to_string()),
        }
    }
    if out.is_empty() {
        out.push("emu:".into());
    }
    out
}

/// Detect one target.
pub fn detect(spec: &str, allow_destructive: bool) -> Result<TargetProfile, DetectError> {
    let mut t = detect_kind(spec, allow_destructive)?;
    // The device's timing is known where its model is: the emulator's.
    t.basis = crate::limit::basis_of(&t);
    Ok(t)
}

fn detect_kind(spec: &str, allow_destructive: bool) -> Result<TargetProfile, DetectError> {
    if spec == "emu" || spec.starts_with("emu:") {
        return emulator(spec);
    }
    let path = Path::new(spec);
    match std::fs::metadata(path) {
        Ok(md) if md.file_type().is_block_device() => block(spec, &md, allow_destructive),
        Ok(md) if md.is_file() => file(spec, Some(&md), allow_destructive),
        Ok(_) => Err(DetectError::NotFileOrDevice {
            target: spec.into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => file(spec, None, allow_destructive),
        Err(err) => Err(DetectError::Stat {
            target: spec.into(),
            err,
        }),
    }
}

fn emulator(spec: &str) -> Result<TargetProfile, DetectError> {
    let p = crate::limit::params_of(spec).map_err(|why| DetectError::Emulator {
        target: spec.into(),
        why,
    })?;
    let dev = ssdready_emu::device::Device::new(&p);
    Ok(TargetProfile {
        spec: spec.into(),
        kind: TargetKind::Emulator,
        transport: "emulator".into(),
        size_bytes: dev.capacity(),
        logical_block_size: 512,
        hw_queues: None,
        writable: true,
        emulator_params: p.pairs(),
        ..Default::default()
    })
}

fn queue_info(t: &mut TargetProfile, disk: &str) {
    let q = blockdev::queue(disk);
    t.schedulers = q.schedulers;
    t.scheduler = q.scheduler;
    t.logical_block_size = q.logical_block_size;
    t.poll_queues = q.poll_queues;
    t.rotational = q.rotational;
    t.hw_queues = q.hw_queues;
}

/// Whether `run` would write `bytes` (None: the target as it is) to the
/// target: its safety checks decide, with `allow` as --allow-destructive.
fn writable(t: &mut TargetProfile, bytes: Option<u64>, allow: bool) {
    let needs = TargetNeeds {
        bytes,
        offset: 0,
        modifies: true,
        allow_destructive: allow,
        allow_mounted_write: false,
    };
    match target::resolve(Path::new(&t.spec), needs) {
        Ok(_) => t.writable = true,
        Err(TargetError::Refused(m) | TargetError::Invalid(m)) => t.write_refusal = Some(m),
        Err(e) => t.write_refusal = Some(e.to_string()),
    }
}

fn block(spec: &str, md: &std::fs::Metadata, allow: bool) -> Result<TargetProfile, DetectError> {
    let (maj, min) = major_minor(md.rdev());
    let dev = DevNode::from_major_minor(maj, min).ok_or_else(|| DetectError::NotInSysfs {
        target: spec.into(),
        major: maj,
        minor: min,
    })?;
    std::fs::File::open(spec).map_err(|err| DetectError::Unreadable {
        target: spec.into(),
        err,
    })?;
    let (transport, ram) = transport(&dev.disk);
    let backing = blockdev::loop_backing(&dev.disk);
    let backing_fs = backing.as_ref().and_then(|b| {
        let m = std::fs::metadata(b).ok()?;
        let (a, b) = major_minor(m.dev());
        mount_of(a, b).map(|x| x.0)
    });
    let ram = ram || matches!(backing_fs.as_deref(), Some("tmpfs" | "ramfs"));
    let mut t = TargetProfile {
        spec: spec.into(),
        kind: if ram {
            TargetKind::RamDevice
        } else {
            TargetKind::BlockDevice
        },
        transport: transport.into(),
        device: Some(dev.disk.clone()),
        size_bytes: dev.size_bytes(),
        backing: backing.map(|b| match &backing_fs {
            Some(fs) => format!("{b} ({fs})"),
            None => b,
        }),
        ..Default::default()
    };
    if let Some(r) = ssdready_emu::kernel::daemon::record_of(spec) {
        t.backing = Some(format!(
            "the emulated {} drive served by ssdready emu attach (pid {}, {})",
            r.spec, r.pid, r.transport
        ));
        t.emulated = Some(match r.spec.starts_with("emu") {
            true => r.spec.clone(),
            false => format!("emu:{}", r.spec),
        });
    }
    queue_info(&mut t, &dev.disk);
    t.stack = stack_of(maj, min);
    writable(&mut t, None, allow);
    Ok(t)
}

fn file(
    spec: &str,
    md: Option<&std::fs::Metadata>,
    allow: bool,
) -> Result<TargetProfile, DetectError> {
    let path = Path::new(spec);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let st_dev = match md {
        Some(m) => m.dev(),
        None => std::fs::metadata(dir)
            .map_err(|_| DetectError::NoDirectory {
                target: spec.into(),
                dir: dir.to_path_buf(),
            })?
            .dev(),
    };
    let (maj, min) = major_minor(st_dev);
    let node = (maj != 0)
        .then(|| DevNode::from_major_minor(maj, min))
        .flatten();
    let (fs, mnt) = mount_of(maj, min).unzip();
    let mut t = TargetProfile {
        spec: spec.into(),
        kind: TargetKind::File,
        transport: node
            .as_ref()
            .map_or("none", |n| transport(&n.disk).0)
            .into(),
        device: node.as_ref().map(|n| n.disk.clone()),
        raw_device: node.as_ref().map(|n| format!("/dev/{}", n.name)),
        filesystem: fs,
        mount_point: mnt,
        size_bytes: md.map_or(0, |m| m.len()),
        created_by_study: md.is_none(),
        ..Default::default()
    };
    if let Some(n) = &node {
        queue_info(&mut t, &n.disk);
        t.stack = stack_of(maj, min);
    } else {
        t.logical_block_size = 512;
    }
    match md {
        None => writable(&mut t, Some(1 << 20), allow),
        Some(m) if m.len() == 0 => {
            return Err(DetectError::EmptyFile {
                target: spec.into(),
            })
        }
        Some(m) => {
            refuse_sparse(spec, m.len())?;
            match allow {
                false => t.write_refusal = Some(format!(
                    "{spec} exists: the study writes only to files it creates (name a new file, or pass --allow-destructive)"
                )),
                true => writable(&mut t, None, allow),
            }
        }
    }
    Ok(t)
}

/// The stack under device `maj:min` where there is one (more than the
/// device itself), with its devices' counters now: read before the safety
/// checks read the target, so that the study's count covers them.
fn stack_of(maj: u32, min: u32) -> Option<ssdready_measured::stack_layers::Stack> {
    let mut s = ssdready_probe::stack::stack_of(maj, min).filter(|s| s.is_stacked())?;
    s.at_detection = ssdready_probe::stack::snapshot(&s.disks());
    Some(s)
}

/// The machine, and how busy it is before the study starts (a 300 ms
/// sample of /proc/stat).
pub fn machine(tsc_hz: Option<f64>) -> Machine {
    let p = ssdready_probe::platform::collect(&[]);
    let busy = || ssdready_probe::cpu::system_now().map(|(s, _)| (s.busy_ticks(), s.total_ticks()));
    let a = busy();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let b = busy();
    let background_busy_pct = match (a, b) {
        (Some((b0, t0)), Some((b1, t1))) if t1 > t0 => {
            Some(100.0 * (b1 - b0) as f64 / (t1 - t0) as f64)
        }
        _ => None,
    };
    Machine {
        kernel: p.kernel,
        cpu_model: p.cpu_model,
        cpus: p.cpus_online,
        root: ssdready_run::sys::is_root(),
        background_busy_pct,
        tsc_hz,
        lab: std::env::var(ssdready_measured::record::LAB_ENV)
            .ok()
            .filter(|v| !v.is_empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emulator_parameters_stay_with_their_target() {
        assert_eq!(
            split_targets("emu:x25e,size=64m,op=0.28,/dev/loop0"),
            vec!["emu:x25e,size=64m,op=0.28", "/dev/loop0"]
        );
        assert_eq!(split_targets(""), vec!["emu:"]);
        assert_eq!(split_targets("/dev/a,/dev/b"), vec!["/dev/a", "/dev/b"]);
    }

    #[test]
    fn an_emulator_is_detected_with_its_parameters() {
        let t = detect("emu:iodrive,size=256m", false).unwrap();
        assert_eq!(t.kind, TargetKind::Emulator);
        assert_eq!(t.size_bytes, 256 << 20);
        assert!(t.writable);
        assert!(detect("emu:nope", false)
            .unwrap_err()
            .to_string()
            .contains("allowed: x25e"));
    }

    #[test]
    fn an_existing_file_is_read_only_and_a_new_one_is_created() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("data");
        let t = detect(f.to_str().unwrap(), false).unwrap();
        assert!(t.writable && t.created_by_study, "{t:?}");
        std::fs::write(&f, vec![1u8; 8192]).unwrap();
        let t = detect(f.to_str().unwrap(), false).unwrap();
        assert!(!t.writable);
        assert!(t
            .write_refusal
            .unwrap()
            .contains("only to files it creates"));
        assert!(t.filesystem.is_some());
    }
}
