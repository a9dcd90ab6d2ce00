//! fio's `e4defrag` engine (fio 3.33's engines/e4defrag.c): the load of
//! an online defragmenter. Each write of the job is an `EXT4_IOC_MOVE_EXT`
//! ioctl that swaps the file's blocks under `[offset, offset + len)` with
//! those of a donor file at the same place — the file's data is copied
//! into the donor's blocks and the extents exchanged, so the file's
//! content does not change, only where it lies on the device.
//!
//! The donor (`donorname`, in `directory` when set) is created at start;
//! with `inplace=0` it is allocated once over `[offset, filesize)`; with
//! `inplace=1` each move allocates the donor's blocks first and frees them
//! after (`ftruncate` to 0), as fio does. The move is in blocks of the
//! donor's `st_blksize`; a move of fewer bytes than asked completes short,
//! none at all (beyond the file's end) fails with EINVAL. Reads and trims
//! fail with EINVAL (fio's own rule; a run refuses such jobs up front).
//!
//! Only ext4 has the ioctl: a target on another file system is refused
//! when the engine opens, naming the file system.

use crate::engine::{open_files, EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::sync_engine::SyncEngine;
use ssdready_core::engines::{Caps, EngineFacts, IN_CALL};
use ssdready_core::spec::{JobSpec, RwMode};
use ssdready_core::{Ddir, IoReq};
use std::fs::File;
use std::os::unix::io::AsRawFd;

/// `struct move_extent` of <linux/ext4.h> (fs/ext4/ext4.h).
#[repr(C)]
#[derive(Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = (3 << 30)
    | ((std::mem::size_of::<MoveExtent>() as libc::c_ulong) << 16)
    | ((b'f' as libc::c_ulong) << 8)
    | 15;

/// ext2/3/4's `s_magic` (statfs `f_type`).
const EXT4_SUPER_MAGIC: i64 = 0xEF53;

/// Extent moves (`EXT4_IOC_MOVE_EXT`) with a donor file.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static E4DEFRAG: EngineFacts = EngineFacts {
    options: &["donorname", "inplace"],
    refusals,
    ..EngineFacts::own("e4defrag", Caps::SYNC, IN_CALL)
};

/// What e4defrag refuses: trims and reads (its moves are writes; fio
/// fails every other I/O with EINVAL), no donor, verification, and
/// `inplace=0` without `filesize` (fio's donor allocation is then of a
/// negative length).
fn refusals(spec: &JobSpec) -> Vec<String> {
    let mut why = Vec::new();
    if spec.rw.trims() {
        why.push(format!(
            "rw={}: ioengine=e4defrag cannot trim (fio fails every trim of it with EINVAL)",
            spec.rw.name()
        ));
    }
    if !matches!(spec.rw, RwMode::Write | RwMode::RandWrite) {
        why.push(format!(
            "rw={}: ioengine=e4defrag only moves extents, which fio counts as writes (it fails every read \
             with EINVAL); use rw=write or randwrite",
            spec.rw.name()
        ));
    }
    if spec.engine_opts.donorname.is_none() {
        why.push("ioengine=e4defrag needs donorname (the donor file, e.g. donorname=file.def; fio refuses it too)".into());
    }
    if !spec.engine_opts.inplace && spec.filesize.is_none() {
        why.push(
            "ioengine=e4defrag with inplace=0 needs filesize (the donor is allocated over filesize − offset; \
             fio 3.33 fails it with EINVAL)"
                .into(),
        );
    }
    if spec.verify.on() {
        why.push(format!(
            "verify={}: ioengine=e4defrag moves extents and writes no data, so there is nothing to verify",
            spec.verify.method.map_or("pattern", |m| m.name())
        ));
    }
    why
}

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&E4DEFRAG],
    open: |setup| Ok(AnyEngine::dynamic(E4defragEngine::new(setup)?)),
};

/// See the module docs.
pub struct E4defragEngine {
    files: Vec<File>,
    donor: File,
    /// The donor's block size: the unit of a move.
    bsz: u64,
    inplace: bool,
}

fn errno() -> i64 {
    -(std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO) as i64)
}

/// Why a target is refused for `ioengine=e4defrag`.
#[derive(Debug, thiserror::Error)]
pub enum Ext4Error {
    /// The target, or its directory, could not be opened.
    #[error("{}: {err}", .path.display())]
    Open {
        path: std::path::PathBuf,
        err: std::io::Error,
    },
    /// `statfs` failed.
    #[error("statfs of {}: {err}", .path.display())]
    Statfs {
        path: std::path::PathBuf,
        err: std::io::Error,
    },
    /// The target is on another file system.
    #[error(
        "ioengine=e4defrag moves extents with EXT4_IOC_MOVE_EXT, which only ext4 has; {} is on {fs} \
         (statfs magic {magic:#x}); put the job's files on an ext4 file system",
        .path.display()
    )]
    NotExt4 {
        path: std::path::PathBuf,
        fs: String,
        magic: i64,
    },
}

/// Refuse a target not on ext4, before anything is written: `path`, or
/// the directory it will be made in. The message names the file system.
pub fn check_ext4(path: &std::path::Path) -> Result<(), Ext4Error> {
    let on = if path.exists() {
        path
    } else {
        path.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."))
    };
    let f = File::open(on).map_err(|err| Ext4Error::Open {
        path: on.to_path_buf(),
        err,
    })?;
    match not_ext4(&f).map_err(|err| Ext4Error::Statfs {
        path: on.to_path_buf(),
        err,
    })? {
        None => Ok(()),
        Some((fs, magic)) => Err(Ext4Error::NotExt4 {
            path: path.to_path_buf(),
            fs,
            magic,
        }),
    }
}

/// The file system `f` is on, by its statfs magic, when it is not ext4:
/// (name, magic).
fn not_ext4(f: &File) -> std::io::Result<Option<(String, i64)>> {
    // SAFETY: an all-zero statfs is a valid value to overwrite.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open; st is a valid out-pointer.
    if unsafe { libc::fstatfs(f.as_raw_fd(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let magic = st.f_type as i64;
    let name = match magic {
        EXT4_SUPER_MAGIC => return Ok(None),
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x0102_1994 => "tmpfs",
        0xF2F5_2010 => "f2fs",
        0x794C_7630 => "overlayfs",
        0x6969 => "nfs",
        _ => "another file system",
    };
    Ok(Some((name.to_string(), magic)))
}

impl E4defragEngine {
    /// Open the job's files and the donor; refuse files not on ext4.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let files = open_files(setup)?;
        for (f, t) in files.iter().zip(setup.targets) {
            let fs = not_ext4(f).map_err(|e| EngineError::Sys {
                what: format!("statfs of {}", t.path.display()),
                source: e,
            })?;
            if let Some((fs, magic)) = fs {
                let refusal = Ext4Error::NotExt4 {
                    path: t.path.clone(),
                    fs,
                    magic,
                };
                return Err(EngineError::Unsupported(refusal.to_string()));
            }
        }
        let donor_path =
            ssdready_core::option_table_engines::donor_path(spec).ok_or_else(|| {
                EngineError::Unsupported(
                    "ioengine=e4defrag needs donorname (the donor file)".into(),
                )
            })?;
        let sys = |what: &str, source| EngineError::Sys {
            what: format!("ioengine=e4defrag: {what} donor file {donor_path}"),
            source,
        };
        let donor = {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .open(&donor_path)
                .map_err(|e| sys("opening", e))?
        };
        let inplace = spec.engine_opts.inplace;
        if !inplace {
            // fio: fallocate(donor, 0, start_offset, file_size_high - start_offset).
            let high = spec.filesize.map_or(0, |(_, hi)| hi);
            let len = high as i64 - spec.offset as i64;
            if fallocate(&donor, spec.offset, len) != 0 {
                return Err(sys("allocating", std::io::Error::last_os_error()));
            }
        }
        let bsz = donor
            .metadata()
            .map_err(|e| sys("looking at", e))?
            .blksize();
        Ok(E4defragEngine {
            files,
            donor,
            bsz: bsz.max(1),
            inplace,
        })
    }

    /// One move of `[offset, offset + len)` of file `file`: the bytes moved
    /// or `-errno`, as fio counts it.
    fn defrag(&mut self, file: usize, offset: u64, len: u32) -> i64 {
        if self.inplace && fallocate(&self.donor, offset, i64::from(len)) != 0 {
            return errno();
        }
        let orig_start = offset / self.bsz;
        let mut me = MoveExtent {
            donor_fd: self.donor.as_raw_fd() as u32,
            orig_start,
            donor_start: orig_start,
            len: (offset + u64::from(len)).div_ceil(self.bsz) - orig_start,
            ..MoveExtent::default()
        };
        // SAFETY: EXT4_IOC_MOVE_EXT reads and updates a struct move_extent,
        // which `me` is (repr(C)), valid for the duration of the call.
        let rc = unsafe {
            libc::ioctl(
                self.files[file].as_raw_fd(),
                EXT4_IOC_MOVE_EXT as _,
                &mut me,
            )
        };
        let r = if rc != 0 {
            errno()
        } else {
            match (me.moved_len * self.bsz).min(u64::from(len)) {
                // Access beyond the file's end.
                0 => -(libc::EINVAL as i64),
                moved => moved as i64,
            }
        };
        if self.inplace {
            // SAFETY: ftruncate takes plain integers on an open descriptor.
            if unsafe { libc::ftruncate(self.donor.as_raw_fd(), 0) } != 0 && r >= 0 {
                return errno();
            }
        }
        r
    }
}

/// `fallocate(f, 0, offset, len)`: 0 or −1 (errno set).
fn fallocate(f: &File, offset: u64, len: i64) -> libc::c_int {
    // SAFETY: fallocate takes plain integers on an open descriptor.
    unsafe { libc::fallocate(f.as_raw_fd(), 0, offset as libc::off_t, len as libc::off_t) }
}

use std::os::unix::fs::MetadataExt;

impl SyncEngine for E4defragEngine {
    fn name(&self) -> &'static str {
        "e4defrag"
    }
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        Ok(Queued::Done(match req.ddir {
            Ddir::Write => self.defrag(req.file as usize, req.offset, req.len),
            Ddir::Read | Ddir::Trim => -(libc::EINVAL as i64),
        }))
    }
    fn sync(&mut self, _slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        Ok(Queued::Done(crate::engine::sync_file(
            &self.files[file as usize],
            data_only,
        )))
    }
    fn reopen(&mut self, files: Vec<File>) -> Result<(), EngineError> {
        self.files = files;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use ssdready_core::spec::JobSpec;

    fn job(text: &str) -> JobSpec {
        ssdready_core::options::job_of(text).expect("a valid job")
    }

    #[test]
    fn a_job_refuses_reads_trims_and_a_missing_donor_or_filesize() {
        let ok = job("ioengine=e4defrag rw=write donorname=d filesize=1m");
        assert!(ok.refusals().is_empty(), "{:?}", ok.refusals());
        let read = job("ioengine=e4defrag rw=randrw donorname=d filesize=1m");
        assert!(read.refusals()[0].contains("rw=randrw"));
        let trim = job("ioengine=e4defrag rw=trim donorname=d filesize=1m");
        assert!(trim.refusals()[0].contains("cannot trim"));
        let no_donor = job("ioengine=e4defrag rw=write filesize=1m");
        assert!(no_donor.refusals()[0].contains("needs donorname"));
        let no_size = job("ioengine=e4defrag rw=write donorname=d");
        assert!(no_size.refusals()[0].contains("needs filesize"));
        let inplace = job("ioengine=e4defrag rw=write donorname=d inplace=1");
        assert!(inplace.refusals().is_empty());
    }
    use super::*;

    #[test]
    fn the_ioctl_number_is_the_kernels() {
        // _IOWR('f', 15, struct move_extent) with its 40 bytes.
        assert_eq!(std::mem::size_of::<MoveExtent>(), 40);
        assert_eq!(EXT4_IOC_MOVE_EXT, 0xC028_660F);
    }

    #[test]
    fn tmpfs_is_named_as_not_ext4() {
        let Ok(f) = File::open("/dev/shm") else {
            eprintln!("skipped: no /dev/shm");
            return;
        };
        let (name, magic) = not_ext4(&f).unwrap().expect("/dev/shm is tmpfs");
        assert_eq!((name.as_str(), magic), ("tmpfs", 0x0102_1994));
    }
}
