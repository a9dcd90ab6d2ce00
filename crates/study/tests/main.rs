//! The integration tests of this crate, one module per file, built as one
//! test binary (one link instead of one per file). Tests of one file may run
//! at the same time as each other, never beside another file's: each takes
//! `ssdready_testkit::one_file_at_a_time` first, as separate binaries ran
//! one after another.

mod ground_truth;
mod session;
mod session_job;
mod trials_plants_root;
mod trials_root;

pub use ssdready_testkit::one_file_at_a_time;
