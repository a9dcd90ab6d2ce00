//! The options that pace a job: rate limits and minimums per direction,
//! their averaging cycle, and think time between I/Os. A table beside
//! [`crate::option_table::OPTIONS`], searched by the same machinery
//! ([`crate::options::all`]).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::units::{parse_bool, parse_fio_size as parse_size, parse_time_ns};

/// The table. Keep it sorted by name.
pub static RATE_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "rate",
        aliases: &[],
        arity: Arity::Value,
        allowed: "bytes per second with suffix, e.g. 100m (0: no limit); per direction read,write,trim, e.g. 1m,500k",
        help: "bandwidth cap per worker, for each direction",
        set: |s, v| {
            let kb = s.kb_base;
            s.rate_bytes = per_dir(v, true, s.rate_bytes, |p| {
                Ok::<_, String>(Some(parse_size(p, kb)?).filter(|&r| r > 0))
            })?;
            Ok(())
        },
    },
    OptionDef {
        name: "rate_cycle",
        aliases: &["ratecycle"],
        arity: Arity::Value,
        allowed: "milliseconds, at least 1",
        help: "the window over which rate_min and rate_iops_min are checked (default 1000)",
        set: |s, v| {
            s.rate_cycle_ms = ranged(v, 1, 3_600_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "rate_ignore_thinktime",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "rate limits count think time as time at the rate (no catching up after it)",
        set: |s, v| {
            s.rate_ignore_thinktime = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "rate_iops",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number (0: no limit); per direction read,write,trim, e.g. 500,100",
        help: "IOPS cap per worker, for each direction",
        set: |s, v| {
            let kb = s.kb_base;
            s.rate_iops = per_dir(v, true, s.rate_iops, |p| {
                Ok::<_, String>(Some(parse_size(p, kb)?).filter(|&r| r > 0))
            })?;
            Ok(())
        },
    },
    OptionDef {
        name: "rate_iops_min",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number (0: none); per direction read,write,trim",
        help: "the least IOPS per worker: slower over a rate_cycle (after the first 2 s), the job ends with an error",
        set: |s, v| {
            let kb = s.kb_base;
            s.rate_iops_min = per_dir(v, true, s.rate_iops_min, |p| {
                Ok::<_, String>(Some(parse_size(p, kb)?).filter(|&r| r > 0))
            })?;
            Ok(())
        },
    },
    OptionDef {
        name: "rate_min",
        aliases: &["ratemin"],
        arity: Arity::Value,
        allowed: "bytes per second with suffix, e.g. 1m (0: none); per direction read,write,trim",
        help: "the least bandwidth per worker: slower over a rate_cycle (after the first 2 s), the job ends with an error",
        set: |s, v| {
            let kb = s.kb_base;
            s.rate_min_bytes = per_dir(v, true, s.rate_min_bytes, |p| {
                Ok::<_, String>(Some(parse_size(p, kb)?).filter(|&r| r > 0))
            })?;
            Ok(())
        },
    },
    OptionDef {
        name: "thinktime",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time (bare numbers are microseconds)",
        help: "pause after every thinktime_blocks I/Os",
        set: |s, v| {
            s.thinktime_ns = parse_time_ns(v, 1_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "thinktime_blocks",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number ≥ 1",
        help: "I/Os between pauses",
        set: |s, v| {
            s.thinktime_blocks = nonzero_u32(v)?;
            s.thinktime_blocks_given = true;
            Ok(())
        },
    },
];
