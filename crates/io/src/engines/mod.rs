//! The built-in engines, one file each.

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
