//! The built-in engines, one file each.

pub mod fileop;
pub mod libaio;
pub mod null;
pub mod offload;
pub mod psync;
pub mod uring;
