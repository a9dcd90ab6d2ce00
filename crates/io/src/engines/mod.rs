//! The built-in engines, one file each. An engine's file declares its
//! [`EngineDef`] (`pub static DEF`); [`ALL`] lists them, and that list is
//! all [`crate::open_engine`] consults. docs/architecture.md has the
//! recipe for a new engine.
//!
//! `nvme`, `pmem` and `scsi` are helpers of the engines (commands, stores,
//! CDBs); `offload` wraps another engine for `io_submit_mode=offload`.

use crate::engine::EngineDef;
use ssdready_core::engines::EngineFacts;

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
    &psync::DEF,
    &fileop::DEF,
    &mmap::DEF,
    &splice::DEF,
    &libpmem::DEF,
    &devdax::DEF,
    &e4defrag::DEF,
    &uring::DEF,
    &uring_cmd::DEF,
    &libaio::DEF,
    &posixaio::DEF,
    &sg::DEF,
    &null::DEF,
];

/// The definition that serves `facts` (none for the emulator's engine,
/// which comes with its device).
pub fn def_of(facts: &EngineFacts) -> Option<&'static EngineDef> {
    ALL.iter()
        .copied()
        .find(|d| d.serves.iter().any(|f| f.name == facts.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_a_job_can_name_has_one_definition() {
        for facts in ssdready_core::engines::ENGINES {
            let n = ALL
                .iter()
                .filter(|d| d.serves.iter().any(|f| f.name == facts.name))
                .count();
            assert_eq!(n, 1, "{}: served by {n} definitions", facts.name);
        }
        let served: usize = ALL.iter().map(|d| d.serves.len()).sum();
        assert_eq!(served, ssdready_core::engines::ENGINES.len());
        assert!(def_of(&ssdready_core::engines::EMU).is_none());
    }
}
