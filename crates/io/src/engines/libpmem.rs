//! fio's `libpmem` engine (fio 3.33's engines/libpmem.c): each file is
//! mapped whole (libpmem's `pmem_map_file`); a read is a `memcpy` out of
//! the mapping, a write libpmem's `pmem_memcpy` into it, an fsync of the
//! job a `pmem_drain`. `direct=1` makes the writes non-temporal stores,
//! `sync=1` (or `dsync`) drains after every write. How the writes become
//! durable — cache-line write-back on persistent memory, `msync` on any
//! other file — is [`crate::engines::pmem`]'s, and the result says which
//! (`persistence`: `dax` or `msync`).
//!
//! Unlike fio 3.33, which stops a job whose file is not on persistent
//! memory ("file_name does not point to persistent memory"), the job runs
//! on the msync path: the numbers are then of the page cache and msync,
//! which the result says.

use crate::buf::AlignedBuf;
use crate::engine::{EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::engines::pmem::{Mapping, Stores};
use crate::sync_engine::SyncEngine;
use ssdready_core::engines::{Caps, EngineFacts, IN_CALL};
use ssdready_core::spec_io::SyncIo;
use ssdready_core::{Ddir, IoReq};
use std::fs::File;

/// Copies to and from a mapping of a file on persistent memory.
#[linkme::distributed_slice(ssdready_core::engines::ENGINES_IN_FILES)]
pub static LIBPMEM: EngineFacts = EngineFacts {
    refusals: crate::engines::pmem::refusals,
    ..EngineFacts::own("libpmem", Caps::MAPS, IN_CALL)
};

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&LIBPMEM],
    open: |setup| Ok(AnyEngine::dynamic(LibpmemEngine::new(setup)?)),
};

/// See the module docs.
pub struct LibpmemEngine {
    maps: Vec<Mapping>,
    buf: AlignedBuf,
    stores: Stores,
    drain_each: bool,
    writable: bool,
}

/// Map every file of `files` (`names` for the messages).
fn map_all(files: &[File], names: &[String], writable: bool) -> Result<Vec<Mapping>, EngineError> {
    files
        .iter()
        .zip(names)
        .map(|(f, name)| {
            let sys = |what: &str, source| EngineError::Sys {
                what: format!("ioengine=libpmem: {what} {name}"),
                source,
            };
            let md = f.metadata().map_err(|e| sys("size of", e))?;
            if std::os::unix::fs::FileTypeExt::is_block_device(&md.file_type()) {
                return Err(EngineError::Unsupported(format!(
                    "ioengine=libpmem maps files, and {name} is a block device (allowed: a file, \
                     on a DAX file system for persistent memory; for a block device use a block \
                     engine such as io_uring or psync; for /dev/daxX.Y, ioengine=dev-dax)"
                )));
            }
            let len = md.len();
            if len == 0 {
                return Err(EngineError::Unsupported(format!(
                    "ioengine=libpmem: {name} is empty, there is nothing to map (give the job a size)"
                )));
            }
            Mapping::map_file(f, len as usize, writable).map_err(|e| sys("mapping", e))
        })
        .collect()
}

/// The persistence path of a set of mappings, for the result.
pub(crate) fn persistence_of(maps: &[Mapping]) -> Option<&'static str> {
    let first = maps.first()?.persistence();
    Some(if maps.iter().all(|m| m.persistence() == first) {
        first.name()
    } else {
        "dax+msync"
    })
}

impl LibpmemEngine {
    /// Open and map the job's files.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let writable = spec.modifies_target();
        let names: Vec<String> = setup
            .targets
            .iter()
            .map(|t| t.path.display().to_string())
            .collect();
        let files = setup
            .targets
            .iter()
            .zip(&names)
            .map(|(t, name)| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(writable)
                    .open(&t.path)
                    .map_err(|e| EngineError::Sys {
                        what: format!("opening {name}"),
                        source: e,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut buf = AlignedBuf::for_job(spec.bs.max() as usize, &spec.run.mem, 0)?;
        buf.fill_random(setup.seed);
        Ok(LibpmemEngine {
            maps: map_all(&files, &names, writable)?,
            buf,
            stores: if spec.direct {
                Stores::NonTemporal
            } else {
                Stores::Temporal
            },
            drain_each: spec.files.sync_io != SyncIo::None,
            writable,
        })
    }
}

impl SyncEngine for LibpmemEngine {
    fn name(&self) -> &'static str {
        "libpmem"
    }
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let map = &mut self.maps[req.file as usize];
        let len = req.len as usize;
        let r = match req.ddir {
            Ddir::Read => map.read(req.offset, &mut self.buf.as_mut_slice()[..len]),
            Ddir::Write => map.write(
                req.offset,
                &self.buf.as_slice()[..len],
                self.stores,
                self.drain_each,
            ),
            Ddir::Trim => -(libc::EINVAL as i64),
        };
        Ok(Queued::Done(r))
    }
    fn sync(&mut self, _slot: u32, file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        Ok(Queued::Done(self.maps[file as usize].drain()))
    }
    fn buffer(&mut self, _slot: u32) -> Option<&mut [u8]> {
        Some(self.buf.as_mut_slice())
    }
    fn reopen(&mut self, files: Vec<File>) -> Result<(), EngineError> {
        let names: Vec<String> = (0..files.len())
            .map(|i| format!("file {i} of the job"))
            .collect();
        self.maps = map_all(&files, &names, self.writable)?;
        Ok(())
    }
    fn persistence(&self) -> Option<&'static str> {
        persistence_of(&self.maps)
    }
}
