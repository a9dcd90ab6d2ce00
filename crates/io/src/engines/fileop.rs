//! fio's file-operation engines (fio 3.33's engines/filecreate.c,
//! filestat.c and filedelete.c): they measure file-system metadata
//! operations, not data transfer.
//!
//! * `filecreate`: `open(O_CREAT | O_RDWR, 0600)` of each file (the file is
//!   left empty: fio lays nothing out for it);
//! * `filestat`: `stat(2)` (or `lstat`, `statx` by `stat_type`) of each file;
//! * `filedelete`: `unlink(2)` of each file.
//!
//! and their directory twins (fio's engines/fileoperations.c, after 3.33),
//! on directories named as the files would be (`jobname.N.M`):
//!
//! * `dircreate`: `mkdir(name, S_IFDIR)` of each directory — the mode bits
//!   of `S_IFDIR` are all 0, so the directories are made with mode 000, as
//!   fio makes them;
//! * `dirstat`: `stat(2)` (or `lstat`, `statx`) of each directory;
//! * `dirdelete`: `rmdir(2)` of each directory.
//!
//! dirstat and dirdelete first make the directories that are missing
//! (`mkdir(name, 0700)`, fio's setup hook), untimed. Nothing is laid out
//! for any of the three.
//!
//! As in fio, the operation is the file's *open*: it runs once per file, when
//! the job's first I/O reaches that file, and its time is the only latency
//! recorded (fio's `add_clat_sample` in the engine's open hook, into the
//! job's direction: read unless the job only writes). The job's I/Os
//! themselves are fake (fio's `FIO_FAKEIO | FIO_NOSTATS`): they complete at
//! once with their full length and count in `total_ios` and `io_bytes`, but
//! add no latency. So a job of 20 files of 4 KiB with `bs=4k` reports 20
//! I/Os, 80 KiB and 20 completion latencies, as fio does.

use crate::engine::{EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::sync_engine::SyncEngine;
use ssdready_core::engines::{Caps, EngineFacts, IN_CALL};
use ssdready_core::spec_io::StatType;
use ssdready_core::IoReq;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::time::Instant;

/// Which file operation the engine times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileOp {
    /// `open(O_CREAT)`.
    Create,
    /// `stat`, `lstat` or `statx`.
    Stat(StatType),
    /// `unlink`.
    Delete,
    /// `mkdir(S_IFDIR)`.
    DirCreate,
    /// `stat`, `lstat` or `statx` of a directory.
    DirStat(StatType),
    /// `rmdir`.
    DirDelete,
}

impl FileOp {
    /// The operation of fio's engine `name` (None: not a file-op engine).
    pub fn of_engine(name: &str, stat_type: StatType) -> Option<FileOp> {
        Some(match name {
            "filecreate" => FileOp::Create,
            "filestat" => FileOp::Stat(stat_type),
            "filedelete" => FileOp::Delete,
            "dircreate" => FileOp::DirCreate,
            "dirstat" => FileOp::DirStat(stat_type),
            "dirdelete" => FileOp::DirDelete,
            _ => return None,
        })
    }

    /// fio's name of the engine.
    fn engine_name(self) -> &'static str {
        match self {
            FileOp::Create => "filecreate",
            FileOp::Stat(_) => "filestat",
            FileOp::Delete => "filedelete",
            FileOp::DirCreate => "dircreate",
            FileOp::DirStat(_) => "dirstat",
            FileOp::DirDelete => "dirdelete",
        }
    }
}

/// open(O_CREAT) timed once per file.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static FILECREATE: EngineFacts = EngineFacts::own("filecreate", Caps::FILE_OP, IN_CALL);
/// stat(2) timed once per file.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static FILESTAT: EngineFacts = EngineFacts::own("filestat", Caps::FILE_OP, IN_CALL);
/// unlink(2) timed once per file.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static FILEDELETE: EngineFacts = EngineFacts::own("filedelete", Caps::FILE_OP, IN_CALL);
/// mkdir(2) timed once per directory.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static DIRCREATE: EngineFacts = EngineFacts::own("dircreate", Caps::DIR_OP, IN_CALL);
/// stat(2) of a directory.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static DIRSTAT: EngineFacts = EngineFacts::own("dirstat", Caps::DIR_OP, IN_CALL);
/// rmdir(2).
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static DIRDELETE: EngineFacts = EngineFacts::own("dirdelete", Caps::DIR_OP, IN_CALL);

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[
        &FILECREATE,
        &FILESTAT,
        &FILEDELETE,
        &DIRCREATE,
        &DIRSTAT,
        &DIRDELETE,
    ],
    open: |setup| {
        let op = FileOp::of_engine(setup.spec.engine().name, setup.spec.files.stat_type)
            .ok_or_else(|| {
                EngineError::Unsupported(format!(
                    "{} is not a file operation",
                    setup.spec.engine().name
                ))
            })?;
        Ok(AnyEngine::dynamic(FileOpEngine::new(setup, op)?))
    },
};

/// See the module docs.
pub struct FileOpEngine {
    op: FileOp,
    name: &'static str,
    paths: Vec<CString>,
    /// Per file: whether its operation has run.
    done: Vec<bool>,
    /// Descriptors filecreate opened (closed when the engine is dropped,
    /// as fio closes a file at the end).
    opened: Vec<std::fs::File>,
    /// The time of the operation the last `queue` ran, not yet taken.
    last_ns: Option<u64>,
}

impl FileOpEngine {
    /// An engine for the job's targets (nothing is opened here).
    pub fn new(setup: &EngineSetup<'_>, op: FileOp) -> Result<Self, EngineError> {
        let paths = setup
            .targets
            .iter()
            .map(|t| {
                CString::new(t.path.as_os_str().as_bytes()).map_err(|_| {
                    EngineError::Unsupported(format!(
                        "{}: a file name with a NUL byte",
                        t.path.display()
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if matches!(op, FileOp::DirStat(_) | FileOp::DirDelete) {
            make_dirs(&paths)?;
        }
        Ok(FileOpEngine {
            op,
            name: op.engine_name(),
            done: vec![false; paths.len()],
            paths,
            opened: Vec::new(),
            last_ns: None,
        })
    }

    /// Run the operation on file `i`: Ok, or the errno.
    fn run_op(&mut self, i: usize) -> Result<(), i32> {
        let path = &self.paths[i];
        let ok = match self.op {
            FileOp::Create => {
                // SAFETY: path is a NUL-terminated string that outlives the
                // call; open returns a new descriptor or -1.
                let fd = unsafe {
                    libc::open(
                        path.as_ptr(),
                        libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
                        0o600 as libc::c_uint,
                    )
                };
                if fd >= 0 {
                    // SAFETY: fd was just opened and is owned by nothing else.
                    self.opened.push(unsafe {
                        <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd)
                    });
                }
                fd >= 0
            }
            FileOp::Stat(t) | FileOp::DirStat(t) => stat(path, t),
            FileOp::Delete => {
                // SAFETY: path is a NUL-terminated string that outlives the call.
                let r = unsafe { libc::unlink(path.as_ptr()) };
                r == 0
            }
            // SAFETY: path is a NUL-terminated string that outlives the call.
            FileOp::DirCreate => (unsafe { libc::mkdir(path.as_ptr(), libc::S_IFDIR) }) == 0,
            // SAFETY: path is a NUL-terminated string that outlives the call.
            FileOp::DirDelete => (unsafe { libc::rmdir(path.as_ptr()) }) == 0,
        };
        if ok {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO))
        }
    }
}

/// fio's setup of dirstat and dirdelete: `mkdir(name, 0700)` of each
/// directory, one that is there already being fine.
fn make_dirs(paths: &[CString]) -> Result<(), EngineError> {
    for p in paths {
        // SAFETY: p is a NUL-terminated string that outlives the call.
        if unsafe { libc::mkdir(p.as_ptr(), 0o700) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(EngineError::Sys {
                    what: format!("creating directory {}", p.to_string_lossy()),
                    source: e,
                });
            }
        }
    }
    Ok(())
}

/// `stat`, `lstat` or `statx` of `path`; whether it succeeded.
fn stat(path: &CString, t: StatType) -> bool {
    match t {
        StatType::Stat | StatType::Lstat => {
            // SAFETY: an all-zero `struct stat` is a valid value to overwrite.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: path is NUL-terminated; st is a valid out-pointer.
            let r = unsafe {
                if t == StatType::Stat {
                    libc::stat(path.as_ptr(), &mut st)
                } else {
                    libc::lstat(path.as_ptr(), &mut st)
                }
            };
            r == 0
        }
        StatType::Statx => {
            // fio stats the absolute path (realpath), from no directory.
            let Ok(abs) = std::fs::canonicalize(std::ffi::OsStr::from_bytes(path.as_bytes()))
            else {
                return false;
            };
            let Ok(abs) = CString::new(abs.as_os_str().as_bytes()) else {
                return false;
            };
            // SAFETY: an all-zero `struct statx` is a valid value to overwrite.
            let mut st: libc::statx = unsafe { std::mem::zeroed() };
            // SAFETY: abs is NUL-terminated; st is a valid out-pointer.
            let r = unsafe { libc::statx(-1, abs.as_ptr(), 0, libc::STATX_ALL, &mut st) };
            r == 0
        }
    }
}

impl SyncEngine for FileOpEngine {
    fn name(&self) -> &'static str {
        self.name
    }
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let i = req.file as usize;
        if !self.done[i] {
            self.done[i] = true;
            let t0 = Instant::now();
            let r = self.run_op(i);
            self.last_ns = Some(t0.elapsed().as_nanos() as u64);
            if let Err(errno) = r {
                self.last_ns = None;
                return Ok(Queued::Done(-(errno as i64)));
            }
        }
        Ok(Queued::Done(req.len as i64))
    }
    fn fake_io(&self) -> bool {
        true
    }
    fn take_op_latency(&mut self) -> Option<u64> {
        self.last_ns.take()
    }
    fn reopen(&mut self, _files: Vec<std::fs::File>) -> Result<(), EngineError> {
        // A new loop runs every file's operation again, as fio opens the
        // files again.
        self.done.iter_mut().for_each(|d| *d = false);
        self.opened.clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_types_follow_fio_names() {
        assert_eq!(
            FileOp::of_engine("filestat", StatType::Lstat),
            Some(FileOp::Stat(StatType::Lstat))
        );
        assert_eq!(
            FileOp::of_engine("filestat", StatType::Stat),
            Some(FileOp::Stat(StatType::Stat))
        );
        assert_eq!(FileOp::of_engine("psync", StatType::Stat), None);
    }

    #[test]
    fn stat_of_a_missing_file_fails_and_of_a_present_one_succeeds() {
        let dir = std::env::temp_dir().join(format!("ssdready-fileop-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("x");
        std::fs::write(&f, b"x").unwrap();
        let c = CString::new(f.as_os_str().as_bytes()).unwrap();
        for t in [StatType::Stat, StatType::Lstat, StatType::Statx] {
            assert!(stat(&c, t), "{t:?}");
        }
        std::fs::remove_file(&f).unwrap();
        for t in [StatType::Stat, StatType::Lstat, StatType::Statx] {
            assert!(!stat(&c, t), "{t:?}");
        }
        std::fs::remove_dir(&dir).unwrap();
    }
}
