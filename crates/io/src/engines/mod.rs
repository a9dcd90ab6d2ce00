//! The built-in engines, one file each.

pub mod null;
pub mod psync;
pub mod uring;
