//! Targets: the files and block devices a job does I/O on.
//!
//! A target goes through three steps, all before the first measured I/O:
//! 1. [`resolve`] looks at it without changing anything: kind, size, logical
//!    block size, the block device its I/O lands on, and — for writes to a
//!    block device — whether that would destroy data ([`safety`]).
//! 2. [`layout()`] creates or extends a regular file to the size the job needs,
//!    writing real data so reads hit allocated blocks (fio's "laying out");
//!    it stops on request and then leaves the file as it found it.
//! 3. [`Target::open`] opens one descriptor per worker, with O_DIRECT when
//!    asked.

pub mod cache;
pub mod fiemap;
pub mod holes;
pub mod layout;
pub mod safety;
pub mod space;
pub mod sysfs;
mod types;
pub mod zoned;

pub use layout::{layout, LayoutEnd, Prep};
pub use types::{SectorMap, Target, TargetError, TargetKind, TargetNeeds};

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Look at `path` and decide whether the job may use it. Changes nothing.
pub fn resolve(path: &Path, needs: TargetNeeds) -> Result<Target, TargetError> {
    let shown = path.display().to_string();
    match std::fs::metadata(path) {
        Ok(md) if md.file_type().is_block_device() => block_target(path, &shown, &md, needs),
        Ok(md) if md.is_file() => {
            let size = md.len();
            if needs.bytes.is_none() && size == 0 {
                return Err(TargetError::Invalid(format!(
                    "{shown} is empty and no size was given (set size, e.g. size=1g)"
                )));
            }
            let mut t = file_target(path, size, md.dev());
            if needs.modifies {
                let v = safety::check_file(path, safety::snapshot::file_id(&md));
                t.overridden = Guard::judge(&shown, v, needs)?.overridden;
            }
            Ok(t)
        }
        Ok(_) => Err(TargetError::Invalid(format!(
            "{shown} is neither a regular file nor a block device"
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => new_file_target(path, &shown, needs),
        Err(e) => Err(TargetError::Io {
            path: shown,
            source: e,
        }),
    }
}

/// [`resolve`] of a block device (`md` its metadata; `shown` its path as
/// messages name it).
fn block_target(
    path: &Path,
    shown: &str,
    md: &std::fs::Metadata,
    needs: TargetNeeds,
) -> Result<Target, TargetError> {
    let (maj, min) = sysfs::major_minor(md.rdev());
    let dev = sysfs::DevNode::from_major_minor(maj, min).ok_or_else(|| {
        TargetError::Invalid(format!(
            "{shown}: block device {maj}:{min} is not in /sys/dev/block"
        ))
    })?;
    let size = dev.size_bytes();
    let mut guard = Guard::default();
    if needs.modifies {
        let len = match needs.bytes {
            Some(b) => b.saturating_sub(needs.offset),
            None => size.saturating_sub(needs.offset),
        };
        let v = safety::check_block_device(path, &dev, size, needs.offset, len);
        let node = format!("/dev/{}", dev.name);
        let who = if shown == node {
            shown.to_string()
        } else {
            format!("{shown} ({node})")
        };
        guard = Guard::judge(&who, v, needs)?;
    }
    if let Some(b) = needs.bytes {
        if b > size {
            return Err(TargetError::Invalid(format!(
                "{shown}: the job needs {b} bytes but the device has {size} (lower size or offset)"
            )));
        }
    }
    Ok(Target {
        path: path.into(),
        kind: TargetKind::Block,
        size,
        logical_block_size: dev.disk_attr_u64("queue/logical_block_size").unwrap_or(512),
        discard: dev.disk_attr_u64("queue/discard_max_bytes").unwrap_or(0) > 0,
        sector_map: Some(SectorMap::new(maj, min, &dev, None)),
        device: Some(dev.disk),
        devno: Some((maj, min)),
        claims: guard.claims,
        overridden: guard.overridden,
    })
}

/// [`resolve`] of a file that does not exist yet: the job creates it, in
/// a directory that must exist.
fn new_file_target(path: &Path, shown: &str, needs: TargetNeeds) -> Result<Target, TargetError> {
    if needs.bytes.is_none() {
        return Err(TargetError::Invalid(format!(
            "{shown} does not exist and no size was given to create it (set size, e.g. size=1g)"
        )));
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let pmd = std::fs::metadata(parent).map_err(|_| {
        TargetError::Invalid(format!(
            "{shown}: directory {} does not exist",
            parent.display()
        ))
    })?;
    Ok(file_target(path, 0, pmd.dev()))
}

/// A directory that fio's directory engines (dircreate, dirstat,
/// dirdelete) operate on: no data is read or written there.
pub fn directory(path: &Path) -> Target {
    let dev = std::fs::metadata(path).map(|m| m.dev()).unwrap_or(0);
    file_target(path, 0, dev)
}

fn file_target(path: &Path, size: u64, st_dev: u64) -> Target {
    let (maj, min) = sysfs::major_minor(st_dev);
    let dev = if maj == 0 {
        None
    } else {
        sysfs::DevNode::from_major_minor(maj, min)
    };
    Target {
        path: path.into(),
        kind: TargetKind::File,
        size,
        logical_block_size: dev
            .as_ref()
            .and_then(|d| d.disk_attr_u64("queue/logical_block_size"))
            .unwrap_or(512),
        device: dev.map(|d| d.disk),
        discard: true,
        sector_map: None,
        devno: None,
        claims: Vec::new(),
        overridden: None,
    }
}

/// What the safety check leaves a target: its claims, and what
/// `--allow-destructive` overrode.
#[derive(Default)]
struct Guard {
    claims: Vec<std::sync::Arc<File>>,
    overridden: Option<String>,
}

impl Guard {
    /// Refuse `who` when the verdict found users, unless forced: by
    /// `--allow-destructive`, and where a file system on it is mounted, by
    /// `allow_mounted_write=1` too (as fio).
    fn judge(who: &str, v: safety::Verdict, needs: TargetNeeds) -> Result<Guard, TargetError> {
        if v.reasons.is_empty() {
            return Ok(Guard {
                claims: v.claims,
                overridden: None,
            });
        }
        let why = v.reasons.join("; ");
        let mounted_refused = v.mounted && !needs.allow_mounted_write;
        if !needs.allow_destructive || mounted_refused {
            let how = match (v.mounted, needs.allow_destructive) {
                (false, _) => "pass --allow-destructive to overwrite it",
                (true, false) => {
                    "a mounted file system: pass --allow-destructive and allow_mounted_write=1 to \
                     overwrite it"
                }
                (true, true) => {
                    "a mounted file system: --allow-destructive is not enough, allow_mounted_write=1 \
                     is needed too, as fio needs it"
                }
            };
            return Err(TargetError::Refused(format!(
                "refusing to write to {who}: {why} ({how})"
            )));
        }
        Ok(Guard {
            claims: v.claims,
            overridden: Some(format!(
                "--allow-destructive: writing to {who} although {why}"
            )),
        })
    }
}

/// Why a file's sector map could not be had.
#[derive(Debug, thiserror::Error)]
pub enum SectorMapError {
    /// The file could not be looked at or opened.
    #[error("{0}")]
    Io(std::io::Error),
    #[error("its file system is not on a block device ({major}:{minor})")]
    NotOnBlockDevice { major: u32, minor: u32 },
    #[error("FIEMAP: {0}")]
    Fiemap(std::io::Error),
    #[error("the file system reports no written extents")]
    NoExtents,
}

/// For a file on a block device, its sector map from the file system's
/// extent map (after layout: the blocks must be allocated and written).
/// None, with the reason, when it cannot be had.
pub fn file_sector_map(t: &Target) -> Result<SectorMap, SectorMapError> {
    use std::os::unix::fs::MetadataExt;
    let md = std::fs::metadata(&t.path).map_err(SectorMapError::Io)?;
    let (maj, min) = sysfs::major_minor(md.dev());
    let dev =
        sysfs::DevNode::from_major_minor(maj, min).ok_or(SectorMapError::NotOnBlockDevice {
            major: maj,
            minor: min,
        })?;
    let f = std::fs::File::open(&t.path).map_err(SectorMapError::Io)?;
    let x = fiemap::extents(&f).map_err(SectorMapError::Fiemap)?;
    if x.is_empty() {
        return Err(SectorMapError::NoExtents);
    }
    Ok(SectorMap::new(maj, min, &dev, Some(x)))
}

/// `F_SET_RW_HINT` and `F_SET_FILE_RW_HINT` (`F_LINUX_SPECIFIC_BASE` +
/// 12 and + 14, include/uapi/linux/fcntl.h; libc exports neither).
const F_SET_RW_HINT: libc::c_int = 1036;
const F_SET_FILE_RW_HINT: libc::c_int = 1038;

/// fio's `write_hint`: the hint on the inode (`F_SET_RW_HINT`), or, with
/// O_DIRECT, on the descriptor (`F_SET_FILE_RW_HINT`), as fio 3.33 does;
/// a refusal fails the open, as it fails fio's job.
fn set_write_hint(
    f: &File,
    hint: ssdready_core::spec_access::WriteHint,
    direct: bool,
) -> std::io::Result<()> {
    let (cmd, name) = match direct {
        true => (F_SET_FILE_RW_HINT, "F_SET_FILE_RW_HINT"),
        false => (F_SET_RW_HINT, "F_SET_RW_HINT"),
    };
    let value: u64 = hint.value();
    // SAFETY: both commands read one u64 through the pointer, which points
    // at a live local for the duration of the call.
    let rc = unsafe { libc::fcntl(f.as_raw_fd(), cmd, &value as *const u64) };
    if rc == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    let why = match (direct, e.raw_os_error()) {
        (true, Some(libc::EINVAL)) => {
            " (fio 3.33 sets the hint per descriptor with direct=1, and Linux 5.17 removed \
             F_SET_FILE_RW_HINT: fio's job fails the same way; use direct=0)"
        }
        _ => "",
    };
    Err(std::io::Error::new(
        e.kind(),
        format!("write_hint: fcntl({name}): {e}{why}"),
    ))
}

/// What `statx(2)` says of `path`'s torn-write protection (`STATX_WRITE_ATOMIC`,
/// Linux 6.11+): the smallest and largest atomic write unit in bytes; None
/// when the kernel does not report it (older kernels) or the file has none.
pub fn atomic_write_units(path: &Path) -> std::io::Result<Option<(u32, u32)>> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // struct statx is 256 bytes; stx_mask is at 0, stx_atomic_write_unit_min
    // and _max at 0xa8 and 0xac (include/uapi/linux/stat.h).
    let mut buf = [0u8; 256];
    // SAFETY: statx writes at most sizeof(struct statx) = 256 bytes into
    // the buffer, and reads the NUL-terminated path, both alive for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_statx,
            libc::AT_FDCWD,
            c.as_ptr(),
            0,
            libc::STATX_WRITE_ATOMIC,
            buf.as_mut_ptr(),
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let word = |at: usize| u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
    let (min, max) = (word(0xa8), word(0xac));
    Ok((word(0) & libc::STATX_WRITE_ATOMIC != 0 && max > 0).then_some((min, max)))
}

impl Target {
    /// Open a descriptor for one worker.
    pub fn open(&self, write: bool, direct: bool) -> std::io::Result<File> {
        self.open_flags(write, false, if direct { libc::O_DIRECT } else { 0 })
    }

    /// Open a descriptor as a worker of `spec` does: for writing when the
    /// job modifies the target, with O_DIRECT, O_SYNC or O_DSYNC as asked,
    /// creating a missing file when the job writes and its files are made
    /// at open (`create_on_open`, `unlink_each_loop`); then give the job's
    /// access hint (`fadvise_hint`).
    pub fn open_for(&self, spec: &ssdready_core::JobSpec) -> std::io::Result<File> {
        use ssdready_core::spec_io::SyncIo;
        let write = spec.modifies_target();
        let mut flags = if spec.direct { libc::O_DIRECT } else { 0 };
        flags |= match spec.files.sync_io {
            SyncIo::None => 0,
            SyncIo::Sync => libc::O_SYNC,
            SyncIo::Dsync => libc::O_DSYNC,
        };
        let create = write
            && self.kind == TargetKind::File
            && (spec.files.create_on_open || spec.files.unlink_each_loop || spec.fill_device);
        let f = self.open_flags(write, create, flags)?;
        cache::advise(&f, spec);
        if let Some(hint) = spec.access.write_hint {
            set_write_hint(&f, hint, spec.direct)?;
        }
        Ok(f)
    }

    fn open_flags(&self, write: bool, create: bool, flags: i32) -> std::io::Result<File> {
        let mut o = OpenOptions::new();
        o.read(true).write(write).create(create);
        o.custom_flags(flags);
        let f = o.open(&self.path)?;
        if let Some(d) = self.devno {
            let now = safety::snapshot::file_id(&f.metadata()?);
            if now != safety::snapshot::FileId::Block(d) {
                return Err(std::io::Error::other(format!(
                    "{} is no longer block device {}:{}, the one checked before the run",
                    self.path.display(),
                    d.0,
                    d.1
                )));
            }
        }
        Ok(f)
    }

    /// Drop the target's pages from the page cache (fio's `invalidate`):
    /// see [`cache::invalidate`]. A missing file has none.
    pub fn drop_cache(&self, offset: u64, len: u64) -> std::io::Result<()> {
        let f = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        cache::invalidate(&f, self.kind, offset, len)
    }

    /// For O_DIRECT: check that every size and offset is a multiple of the
    /// logical block size; the message says what to change.
    pub fn check_direct_alignment(&self, sizes: &[u32], offset: u64) -> Result<(), TargetError> {
        let lbs = self.logical_block_size.max(1);
        let what = match &self.device {
            Some(d) => format!(
                "{}'s logical block size {lbs} (device {d})",
                self.path.display()
            ),
            None => format!("{}'s logical block size {lbs}", self.path.display()),
        };
        for &b in sizes {
            if !(b as u64).is_multiple_of(lbs) {
                return Err(TargetError::Invalid(format!(
                    "option 'bs': {b} is not a multiple of {what} with direct=1 \
                     (use bs={} or a multiple of {lbs}, or direct=0)",
                    (b as u64).div_ceil(lbs) * lbs
                )));
            }
        }
        if !offset.is_multiple_of(lbs) {
            return Err(TargetError::Invalid(format!(
                "option 'offset': {offset} is not a multiple of {what} with direct=1 (use offset={})",
                offset / lbs * lbs
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn needs(bytes: Option<u64>) -> TargetNeeds {
        TargetNeeds {
            bytes,
            offset: 0,
            modifies: true,
            allow_destructive: false,
            allow_mounted_write: false,
        }
    }

    #[test]
    fn a_mounted_file_system_is_written_only_with_allow_mounted_write_on_top_of_allow_destructive()
    {
        let verdict = |mounted| safety::Verdict {
            reasons: vec!["/dev/loop1 is mounted at /mnt/one (mountinfo)".into()],
            claims: Vec::new(),
            mounted,
        };
        let forced = TargetNeeds {
            allow_destructive: true,
            ..needs(None)
        };
        let both = TargetNeeds {
            allow_mounted_write: true,
            ..forced
        };
        let refused = |r: Result<Guard, TargetError>| match r {
            Err(TargetError::Refused(m)) => m,
            _ => panic!("not refused"),
        };
        let m = refused(Guard::judge("/dev/loop1", verdict(true), forced));
        assert!(m.contains("allow_mounted_write=1 is needed too"), "{m}");
        let m = refused(Guard::judge("/dev/loop1", verdict(true), needs(None)));
        assert!(
            m.contains("--allow-destructive and allow_mounted_write=1"),
            "{m}"
        );
        let g = Guard::judge("/dev/loop1", verdict(true), both).unwrap();
        assert!(g.overridden.is_some());
        // Another kind of user: --allow-destructive alone overrides it.
        assert!(Guard::judge("/dev/loop1", verdict(false), forced).is_ok());
        // allow_mounted_write alone overrides nothing.
        let alone = TargetNeeds {
            allow_mounted_write: true,
            ..needs(None)
        };
        assert!(Guard::judge("/dev/loop1", verdict(true), alone).is_err());
    }

    #[test]
    fn missing_file_needs_a_size_and_an_existing_directory() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        assert!(matches!(
            resolve(&p, needs(None)),
            Err(TargetError::Invalid(_))
        ));
        let t = resolve(&p, needs(Some(1 << 20))).unwrap();
        assert_eq!(t.kind, TargetKind::File);
        assert_eq!(t.size, 0);
        assert!(!p.exists(), "resolve must not create the file");
        assert!(resolve(&d.path().join("no/such/f"), needs(Some(1))).is_err());
    }

    #[test]
    fn a_refusal_names_every_reason_and_force_turns_it_into_a_warning() {
        let v = || safety::Verdict {
            reasons: vec!["a (x)".into(), "b (y)".into()],
            claims: Vec::new(),
            mounted: false,
        };
        let forced = TargetNeeds {
            allow_destructive: true,
            ..needs(None)
        };
        let e = Guard::judge("/dev/q", v(), needs(None)).err().unwrap();
        assert!(matches!(e, TargetError::Refused(_)));
        assert_eq!(
            e.to_string(),
            "refusing to write to /dev/q: a (x); b (y) (pass --allow-destructive to overwrite it)"
        );
        let g = Guard::judge("/dev/q", v(), forced).unwrap();
        assert_eq!(
            g.overridden.as_deref(),
            Some("--allow-destructive: writing to /dev/q although a (x); b (y)")
        );
        let free = Guard::judge("/dev/q", safety::Verdict::default(), needs(None)).unwrap();
        assert!(free.overridden.is_none());
    }

    #[test]
    fn direct_alignment_message_says_what_to_change() {
        let t = Target {
            path: "/dev/x".into(),
            kind: TargetKind::Block,
            size: 1 << 30,
            logical_block_size: 4096,
            device: Some("x".into()),
            discard: false,
            sector_map: None,
            devno: None,
            claims: Vec::new(),
            overridden: None,
        };
        let e = t
            .check_direct_alignment(&[6144], 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("use bs=8192"), "{e}");
        assert!(t.check_direct_alignment(&[8192], 4096).is_ok());
        assert!(t.check_direct_alignment(&[4096], 512).is_err());
    }
}
