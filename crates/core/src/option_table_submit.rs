//! The options of submission and completion: the engine, the queue depth
//! and its batches, io_uring's polling and registered buffers, the
//! completion wait and interrupt coalescing ([`crate::strategy`]), and the
//! temporal merge layer. A table beside [`crate::option_table::OPTIONS`],
//! searched by the same machinery ([`crate::options::all`]).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec::*;
use crate::units::{parse_bool, parse_fio_size as parse_size, parse_time_ns};

/// The table. Keep it sorted by name.
pub static SUBMIT_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "coalesce_n",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0..=65536 completions (0: no count limit)",
        help: "ssdready: interrupt coalescing, deliver completions n at a time",
        set: |s, v| {
            s.coalesce.get_or_insert_with(Default::default).n = ranged_u32(v, 0, 65_536)?;
            Ok(())
        },
    },
    OptionDef {
        name: "coalesce_us",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time up to 10s (bare numbers are µs; 0: no time limit)",
        help: "ssdready: interrupt coalescing, hold a completion at most this long",
        set: |s, v| {
            let ns = parse_time_ns(v, 1_000)?;
            if ns > 10_000_000_000 {
                return Err(format!("{v} is more than 10 s"));
            }
            s.coalesce.get_or_insert_with(Default::default).us = ns / 1_000;
            Ok(())
        },
    },
    OptionDef {
        name: "completion",
        aliases: &[],
        arity: Arity::Value,
        allowed: "interrupt, poll, spin or hybrid",
        help: "ssdready: how completions are waited for (poll: iopoll if possible, else spin)",
        set: |s, v| {
            s.completion = Some(crate::strategy::CompletionWait::parse(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "fixedbufs",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: register the I/O buffers with the kernel",
        set: |s, v| {
            s.fixedbufs = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "hipri",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: polled completions (IORING_SETUP_IOPOLL); needs poll queues",
        set: |s, v| {
            s.hipri = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number 1..=65536",
        help: "I/Os kept in flight per worker",
        set: |s, v| {
            s.iodepth = ranged_u32(v, 1, MAX_IODEPTH)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth_batch_complete_max",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0..=iodepth (0: iodepth; libaio asks io_getevents for iodepth_batch_complete_min, as fio)",
        help: "most completions reaped per call",
        set: |s, v| {
            s.iodepth_batch_complete_max = ranged_u32(v, 0, MAX_IODEPTH)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth_batch_complete_min",
        aliases: &["iodepth_batch_complete"],
        arity: Arity::Value,
        allowed: "0..=iodepth",
        help: "fewest completions waited for per call",
        set: |s, v| {
            s.iodepth_batch_complete_min = ranged_u32(v, 0, MAX_IODEPTH)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth_batch_submit",
        aliases: &["iodepth_batch"],
        arity: Arity::Value,
        allowed: "1..=iodepth (0 means 1)",
        help: "I/Os queued before one submit call",
        set: |s, v| {
            s.iodepth_batch_submit = ranged_u32(v, 0, MAX_IODEPTH)?.max(1);
            Ok(())
        },
    },
    OptionDef {
        name: "ioengine",
        aliases: &[],
        arity: Arity::Value,
        allowed: crate::option_def::ENGINE_NAMES,
        help: "how I/O is issued; without filename, fio's files (jobname.N.M) rather than the emulator",
        set: |s, v| {
            s.ioengine_given = true;
            s.engine_named = None;
            s.refused.retain(|r| !r.starts_with("ioengine="));
            s.ioengine = match crate::engines::find(v) {
                // fio's names for the family's calls (sync, pvsync, ...)
                // and the engines of their own are kept as named; see
                // crate::engines for what each is.
                Some(e) => {
                    if v != e.kind.name() {
                        s.engine_named = Some(v.to_string());
                    }
                    e.kind
                }
                _ if crate::option_table_library::needs(v).is_some() => {
                    let needs = crate::option_table_library::needs(v).unwrap_or_default();
                    s.engine_named = Some(v.to_string());
                    s.refused.push(format!(
                        "ioengine={v}: needs {needs}, which this build of ssdready does not have \
                         (ssdready runs {})",
                        crate::engines::runnable()
                    ));
                    EngineKind::Psync
                }
                _ if FIO_ENGINES.contains(&v) => {
                    s.engine_named = Some(v.to_string());
                    s.refused.push(format!(
                        "ioengine={v}: fio's '{v}' engine is not supported yet (ssdready runs {})",
                        crate::engines::runnable()
                    ));
                    // The nearest engine ssdready has, so that the job's
                    // other options are checked as fio checks them.
                    EngineKind::Psync
                }
                _ => return Err(format!("'{v}' is not an engine")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "merge_max",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number of extents, 1 to 4096 (default 64)",
        help: "temporal merge: most requests (extents) in one vectored command",
        set: |s, v| {
            s.merge_max = ranged_u32(v, 1, MAX_MERGE_EXTENTS)?;
            Ok(())
        },
    },
    OptionDef {
        name: "merge_max_bytes",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size, e.g. 1m (default 0: no limit besides merge_max)",
        help: "temporal merge: most bytes in one vectored command",
        set: |s, v| {
            s.merge_max_bytes = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "merge_window_us",
        aliases: &[],
        arity: Arity::Value,
        allowed: "whole microseconds, 0 to 1000000 (default 20; 0: no merging)",
        help: "temporal merge: how long a command gathers requests after its first",
        set: |s, v| {
            s.merge_window_ns = ranged(v, 0, MAX_MERGE_WINDOW_US)? * 1000;
            Ok(())
        },
    },
    OptionDef {
        name: "registerfiles",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: register the target files",
        set: |s, v| {
            s.registerfiles = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "sqthread_poll",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: a kernel thread polls the submission queue (SQPOLL)",
        set: |s, v| {
            s.sqthread_poll = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "sqthread_poll_cpu",
        aliases: &[],
        arity: Arity::Value,
        allowed: "an online CPU number",
        help: "io_uring: pin the SQPOLL thread",
        set: |s, v| {
            s.sqthread_poll_cpu = Some(ranged_u32(v, 0, 4095)?);
            Ok(())
        },
    },
    OptionDef {
        name: "temporal_merge",
        aliases: &[],
        arity: Arity::Value,
        allowed: "off, stm or atm",
        help: "merge concurrent requests into vectored commands (emulator): stm synchronous, atm asynchronous",
        set: |s, v| {
            s.temporal_merge = match v {
                "off" | "0" | "none" => TemporalMerge::Off,
                "stm" => TemporalMerge::Stm,
                "atm" => TemporalMerge::Atm,
                _ => return Err(format!("'{v}' is not off, stm or atm")),
            };
            Ok(())
        },
    },
];
