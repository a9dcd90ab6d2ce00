//! The built-in engines, one file each. An engine's file declares its
//! [`EngineDef`] (`pub static DEF`; the four engines with a variant of
//! [`AnyEngine`] have theirs in [`def`]) and, unless it is a family's own
//! engine (whose facts `core` keeps), the [`EngineFacts`] a job's parse and
//! checks use, into `ssdready_core::engines::ENGINES_IN_FILES`. [`ALL`]
//! lists the definitions, and that list is all [`open_engine`] consults.
//! docs/architecture.md has the recipe for a new engine: its file, and
//! its line here.
//!
//! `nvme`, `pmem` and `scsi` are helpers of the engines (commands, stores,
//! CDBs); `offload` wraps another engine for `io_submit_mode=offload`.

use crate::engine::{EngineError, EngineSetup};
use def::{AnyEngine, EngineDef};
use ssdready_core::engines::EngineFacts;

pub mod def;
pub mod devdax;
pub mod e4defrag;
pub mod fileop;
pub mod libaio;
pub mod libpmem;
pub mod mmap;
pub mod null;
pub mod nvme;
pub mod offload;
pub mod pmem;
pub mod posixaio;
pub mod psync;
pub mod scsi;
pub mod sg;
pub mod splice;
pub mod uring;
pub mod uring_cmd;

/// Every engine a job can name, one definition per file.
pub static ALL: &[&EngineDef] = &[
    &def::PSYNC,
    &fileop::DEF,
    &mmap::DEF,
    &splice::DEF,
    &libpmem::DEF,
    &devdax::DEF,
    &e4defrag::DEF,
    &def::URING,
    &uring_cmd::DEF,
    &def::LIBAIO,
    &posixaio::DEF,
    &sg::DEF,
    &def::NULL,
];

/// The definition that serves `facts` (none for the emulator's engine,
/// which comes with its device).
pub fn def_of(facts: &EngineFacts) -> Option<&'static EngineDef> {
    ALL.iter()
        .copied()
        .find(|d| d.serves.iter().any(|f| f.name == facts.name))
}

/// Open the engine a job asks for. Call it on the worker thread that will
/// use the engine (io_uring rings are created single-issuer).
pub fn open_engine(setup: &EngineSetup<'_>) -> Result<AnyEngine, EngineError> {
    let facts = setup.spec.engine();
    match def_of(facts) {
        Some(def) => (def.open)(setup),
        None => Err(EngineError::Unsupported(
            "the emulator engine comes with an emulated device (filename=emu:…), not from open_engine".into(),
        )),
    }
}

/// What the engines' own tests share: a file to read, and reads queued.
#[cfg(test)]
pub(crate) mod test_reads {
    use crate::engine::{Engine, EngineSetup, Queued};
    use crate::target::{resolve, Target, TargetNeeds};
    use ssdready_core::spec::JobSpec;
    use ssdready_core::{Ddir, IoReq};

    /// A file of `bytes` in a directory of its own (gone with the returned
    /// guard), resolved as a target only read.
    pub fn file_target(bytes: usize) -> (tempfile::TempDir, Target) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, vec![7u8; bytes]).unwrap();
        let needs = TargetNeeds {
            bytes: Some(bytes as u64),
            offset: 0,
            modifies: false,
            allow_destructive: false,
            allow_mounted_write: false,
        };
        let t = resolve(&p, needs).unwrap();
        (d, t)
    }

    /// `open` given the setup of a job eight deep, reaping at most
    /// `batch_max` a call (`iodepth_batch_complete_max`), on a 64 KiB
    /// file of its own.
    pub fn eight_deep<R>(batch_max: u32, open: impl FnOnce(&EngineSetup<'_>) -> R) -> R {
        let (_dir, target) = file_target(64 << 10);
        let targets = [target];
        let spec = JobSpec {
            iodepth: 8,
            iodepth_batch_complete_max: batch_max,
            ..JobSpec::default()
        };
        open(&EngineSetup {
            spec: &spec,
            targets: &targets,
            seed: 1,
        })
    }

    /// A read of 4 KiB of the first file, slot `slot` at `slot` × 4096.
    pub fn read_req(slot: u32) -> IoReq {
        IoReq {
            slot,
            file: 0,
            ddir: Ddir::Read,
            offset: u64::from(slot) * 4096,
            len: 4096,
        }
    }

    /// Queue `n` reads ([`read_req`]) and commit them.
    pub fn queue_reads<E: Engine>(e: &mut E, n: u32) {
        for slot in 0..n {
            assert_eq!(e.queue(read_req(slot)).unwrap(), Queued::Pending);
        }
        assert_eq!(e.commit().unwrap(), n as usize);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::engine_check::check;
    use ssdready_core::engines::{all, runnable, ENGINES_IN_FILES};

    #[test]
    fn every_engine_a_job_can_name_has_one_definition() {
        for facts in all() {
            let n = ALL
                .iter()
                .filter(|d| d.serves.iter().any(|f| std::ptr::eq(*f, *facts)))
                .count();
            assert_eq!(n, 1, "{}: served by {n} definitions", facts.name);
            assert_eq!(check(facts), Ok(()));
        }
        let served: usize = ALL.iter().map(|d| d.serves.len()).sum();
        assert_eq!(served, all().len());
        assert!(def_of(&ssdready_core::engines::EMU).is_none());
        assert_eq!(all().len(), 7 + ENGINES_IN_FILES.len());
    }

    #[test]
    fn allowed_values_name_each_family_then_its_engines_by_name() {
        assert_eq!(
            runnable(),
            "psync (also sync, pvsync, pvsync2, vsync), dev-dax, dircreate, dirdelete, dirstat, e4defrag, \
             falloc, filecreate, filedelete, filestat, ftruncate, libpmem, mmap, splice, io_uring, \
             io_uring_cmd, libaio, posixaio, sg or null"
        );
        let dirstat = ssdready_core::engines::find("dirstat");
        assert!(dirstat.is_some_and(|e| e.caps.dirs && e.caps.fake_io));
    }

    /// docs/options.md is the generated page of the options, whose
    /// `ioengine` lists the engines declared here (this is the first crate
    /// that links them all); regenerate it with
    /// `cargo run --release -- options --markdown > docs/options.md`.
    #[test]
    fn docs_options_md_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/options.md");
        let committed = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            committed == ssdready_core::option_doc::markdown(),
            "docs/options.md is stale: run `cargo run --release -- options --markdown > docs/options.md`"
        );
    }
}
