//! The options of how a job's worker runs ([`crate::spec_run`]): queue
//! refill, latency limit, errors ending the run, nice, commands run before
//! and after, and where I/O buffers live — a table beside
//! [`crate::option_table::OPTIONS`], searched by the same machinery.

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::units::{parse_bool, parse_fio_size as parse_size, parse_time_ns};

/// The table. Keep it sorted by name.
pub static RUN_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "create_fsync",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fsync a file once it is laid out (default 1, as fio)",
        set: |s, v| {
            s.run.create_fsync = Some(parse_bool(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "exec_postrun",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a shell command",
        help: "run after the job's last I/O (each worker; output in jobname.postrun.txt)",
        set: |s, v| {
            s.run.exec_postrun = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "exec_prerun",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a shell command",
        help: "run before the job's first I/O (each worker; output in jobname.prerun.txt; failure ends the job)",
        set: |s, v| {
            s.run.exec_prerun = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "exitall_on_error",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "a job that ends with an error ends every job of the run",
        set: |s, v| {
            s.run.exitall_on_error = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "hugepage-size",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a power-of-two size of at least 4k, e.g. 2m or 1g (default 2m)",
        help: "huge page size for mem=shmhuge / mmaphuge (buffers are rounded to it)",
        set: |s, v| {
            let n = parse_size(v, s.kb_base)?;
            if n < 4096 || !n.is_power_of_two() {
                return Err(format!("{v} is not a power of two of at least 4k"));
            }
            s.run.mem.hugepage_size = n;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth_low",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number 0..=65536 (0 or above iodepth: iodepth)",
        help: "once the queue is full, let it drain to this depth before filling it again",
        set: |s, v| {
            s.run.iodepth_low = ranged_u32(v, 0, 65_536)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iomem_align",
        aliases: &["mem_align"],
        arity: Arity::Value,
        allowed: "a power-of-two size, e.g. 4k (0: a page)",
        help: "I/O buffers start at a multiple of this",
        set: |s, v| {
            let n = parse_size(v, s.kb_base)?;
            if n != 0 && !n.is_power_of_two() {
                return Err(format!("{v} is not a power of two"));
            }
            s.run.mem.align = n;
            Ok(())
        },
    },
    OptionDef {
        name: "lockmem",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size, e.g. 1g (0: none)",
        help: "pin this much memory with mlock while the job runs (less memory for the cache)",
        set: |s, v| {
            s.run.lockmem = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "max_latency",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time (bare numbers are µs); per direction read,write,trim (0: none)",
        help: "an I/O slower than this (issue to completion) ends the job with ETIMEDOUT",
        set: |s, v| {
            s.run.max_latency_ns = per_dir(v, false, s.run.max_latency_ns, |p| parse_time_ns(p, 1_000))?;
            Ok(())
        },
    },
    OptionDef {
        name: "mem",
        aliases: &["iomem"],
        arity: Arity::Value,
        allowed: "malloc, shm, shmhuge, mmap, mmaphuge or mmapshared; the mmap types take :FILE",
        help: "where I/O buffers are allocated",
        set: |s, v| Ok(s.run.mem.parse_kind(v)?),
    },
    OptionDef {
        name: "nice",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number -20..=19",
        help: "the nice value of the job's worker threads",
        set: |s, v| {
            let n: i32 = v.trim().parse().map_err(|_| format!("'{v}' is not a whole number"))?;
            if !(-20..=19).contains(&n) {
                return Err(format!("{n} is outside -20..=19"));
            }
            s.run.nice = n;
            Ok(())
        },
    },
];
