//! The options of fio's `e4defrag` engine (fio 3.33's engines/e4defrag.c:
//! `donorname`, `inplace`), a table beside
//! [`crate::option_table::OPTIONS`] searched by the same machinery
//! ([`crate::options::all`]). What a run refuses of a job of an engine is
//! in the engine's file (`EngineFacts::refusals`).
//!
//! e4defrag simulates defragmentation: each write of the job is an
//! `EXT4_IOC_MOVE_EXT` that swaps the file's blocks with a donor file's
//! (`donorname`, in `directory` when the job has one). With `inplace=0`
//! the donor is allocated once, over `filesize` − `offset`; with
//! `inplace=1` each move allocates the donor's blocks first and frees them
//! after (`fallocate`, then `ftruncate` to 0).

use crate::option_def::{Arity, OptionDef};
use crate::spec::JobSpec;
use crate::units::parse_bool;

pub use crate::spec_types::EngineOptions;

/// The table. Keep it sorted by name.
pub static ENGINE_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "donorname",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a file name (in directory when the job has one)",
        help: "ioengine=e4defrag: the file whose blocks are swapped in",
        set: |s, v| {
            if v.is_empty() {
                return Err("an empty file name".into());
            }
            s.engine_opts.donorname = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "inplace",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0 or 1",
        help: "ioengine=e4defrag: allocate and free the donor's blocks in each move",
        set: |s, v| {
            s.engine_opts.inplace = parse_bool(v)?;
            Ok(())
        },
    },
];

/// Whether the job's engine reads and writes a memory mapping of its
/// targets (fio's `libpmem` and `dev-dax`): no descriptor I/O, so
/// `direct` picks the kind of stores rather than O_DIRECT.
pub fn maps_targets(spec: &JobSpec) -> bool {
    spec.engine().caps.maps_targets
}

/// The donor file's path: `donorname` in the job's (first) directory, as
/// fio joins them.
pub fn donor_path(spec: &JobSpec) -> Option<String> {
    let name = spec.engine_opts.donorname.as_deref()?;
    Some(match spec.directory.as_deref() {
        Some(d) => format!("{}/{name}", d.split(':').next().unwrap_or(d)),
        None => name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_donor_is_in_the_jobs_first_directory() {
        let mut s = JobSpec::default();
        s.engine_opts.donorname = Some("file.def".into());
        s.directory = Some("/a:/b".into());
        assert_eq!(donor_path(&s).as_deref(), Some("/a/file.def"));
        s.directory = None;
        assert_eq!(donor_path(&s).as_deref(), Some("file.def"));
    }
}
