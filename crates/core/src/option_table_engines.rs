//! The options of fio's `e4defrag` engine (fio 3.33's engines/e4defrag.c:
//! `donorname`, `inplace`), a table beside
//! [`crate::option_table::OPTIONS`] searched by the same machinery
//! ([`crate::options::all`]), and what a run refuses of the memory-mapped
//! engines (`libpmem`, `dev-dax`) and of `e4defrag`, as fio's engines
//! refuse it in their `init` or fail it per I/O.
//!
//! e4defrag simulates defragmentation: each write of the job is an
//! `EXT4_IOC_MOVE_EXT` that swaps the file's blocks with a donor file's
//! (`donorname`, in `directory` when the job has one). With `inplace=0`
//! the donor is allocated once, over `filesize` − `offset`; with
//! `inplace=1` each move allocates the donor's blocks first and frees them
//! after (`fallocate`, then `ftruncate` to 0).

use crate::option_def::{Arity, OptionDef};
use crate::spec::{JobSpec, RwMode};
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

/// Why a run refuses a job of the `libpmem`, `dev-dax` or `e4defrag`
/// engine (empty: it runs, or it names another engine).
pub fn engine_refusals(spec: &JobSpec) -> Vec<String> {
    let mut why = Vec::new();
    let Some(engine @ ("libpmem" | "dev-dax" | "e4defrag")) = spec.engine_named.as_deref() else {
        return why;
    };
    if spec.rw.trims() {
        why.push(format!(
            "rw={}: ioengine={engine} cannot trim (fio fails every trim of it with EINVAL)",
            spec.rw.name()
        ));
    }
    if engine == "e4defrag" {
        why.extend(e4defrag_refusals(spec));
        return why;
    }
    // fio's init of both mmap engines.
    let page = 4096;
    if !u64::from(spec.bs.min()).is_multiple_of(page)
        && (spec.files.fsync_every > 0 || spec.files.fdatasync_every > 0)
    {
        why.push(format!(
            "bs={}: ioengine={engine} maps its files, so with fsync or fdatasync every block size must be a \
             multiple of the {page}-byte page (fio refuses it too)",
            spec.bs.min()
        ));
    }
    why
}

/// What e4defrag refuses: reads (its moves are writes; fio fails every
/// read with EINVAL), no donor, verification, and `inplace=0` without
/// `filesize` (fio's donor allocation is then of a negative length).
fn e4defrag_refusals(spec: &JobSpec) -> Vec<String> {
    let mut why = Vec::new();
    if !matches!(spec.rw, RwMode::Write | RwMode::RandWrite) {
        why.push(format!(
            "rw={}: ioengine=e4defrag only moves extents, which fio counts as writes (it fails every read \
             with EINVAL); use rw=write or randwrite",
            spec.rw.name()
        ));
    }
    if spec.engine_opts.donorname.is_none() {
        why.push("ioengine=e4defrag needs donorname (the donor file, e.g. donorname=file.def; fio refuses it too)".into());
    }
    if !spec.engine_opts.inplace && spec.filesize.is_none() {
        why.push(
            "ioengine=e4defrag with inplace=0 needs filesize (the donor is allocated over filesize − offset; \
             fio 3.33 fails it with EINVAL)"
                .into(),
        );
    }
    if spec.verify.on() {
        why.push(format!(
            "verify={}: ioengine=e4defrag moves extents and writes no data, so there is nothing to verify",
            spec.verify.method.map_or("pattern", |m| m.name())
        ));
    }
    why
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

    fn job(text: &str) -> JobSpec {
        let mut s = JobSpec::default();
        for kv in text.split_whitespace() {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (crate::options::find(k).unwrap().set)(&mut s, v).unwrap();
        }
        s
    }

    #[test]
    fn e4defrag_refuses_reads_and_a_missing_donor_or_filesize() {
        let ok = job("ioengine=e4defrag rw=write donorname=d filesize=1m");
        assert!(
            engine_refusals(&ok).is_empty(),
            "{:?}",
            engine_refusals(&ok)
        );
        let read = job("ioengine=e4defrag rw=randrw donorname=d filesize=1m");
        assert!(engine_refusals(&read)[0].contains("rw=randrw"));
        let no_donor = job("ioengine=e4defrag rw=write filesize=1m");
        assert!(engine_refusals(&no_donor)[0].contains("needs donorname"));
        let no_size = job("ioengine=e4defrag rw=write donorname=d");
        assert!(engine_refusals(&no_size)[0].contains("needs filesize"));
        let inplace = job("ioengine=e4defrag rw=write donorname=d inplace=1");
        assert!(engine_refusals(&inplace).is_empty());
    }

    #[test]
    fn the_donor_is_in_the_jobs_first_directory() {
        let s = job("ioengine=e4defrag donorname=file.def directory=/a:/b");
        assert_eq!(donor_path(&s).as_deref(), Some("/a/file.def"));
        let s = job("ioengine=e4defrag donorname=file.def");
        assert_eq!(donor_path(&s).as_deref(), Some("file.def"));
    }

    #[test]
    fn the_mapped_engines_refuse_trims_and_other_engines_nothing() {
        let s = job("ioengine=libpmem rw=randtrim");
        assert!(engine_refusals(&s)[0].contains("cannot trim"));
        assert!(maps_targets(&job("ioengine=dev-dax")));
        assert!(!maps_targets(&job("ioengine=psync")));
        assert!(engine_refusals(&job("ioengine=psync rw=randtrim")).is_empty());
    }
}
