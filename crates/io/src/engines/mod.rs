//! The built-in engines, one file each.

pub mod devdax;
pub mod e4defrag;
pub mod fileop;
pub mod libaio;
pub mod libpmem;
pub mod null;
pub mod offload;
pub mod pmem;
pub mod psync;
pub mod uring;
