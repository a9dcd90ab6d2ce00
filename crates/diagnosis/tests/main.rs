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

/// The text of the gzipped fixture `name` (under `tests/fixtures`).
pub fn gunzip(name: &str) -> Vec<u8> {
    use std::io::Read;
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut text = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_end(&mut text)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    text
}
