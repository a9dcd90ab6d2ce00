//! The integration tests of this crate, one module per file, built as one
//! test binary (one link instead of one per file). Tests of one file may run
//! at the same time as each other, never beside another file's: each takes
//! `ssdready_testkit::one_file_at_a_time` first, as separate binaries ran
//! one after another.

mod cloud_disk;
mod device_reach;
mod job_point;
mod job_rules;
mod many_cpus;
mod planted;
mod verdicts;

pub use ssdready_testkit::one_file_at_a_time;
