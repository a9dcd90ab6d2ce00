//! The options of I/O logs: recording a job's requests (`write_iolog`)
//! and replaying a trace (`read_iolog` and the `replay_*` and
//! `merge_blktrace_*` options). A part of the option table
//! ([`crate::options::all`] joins the parts); what they do is in
//! `ssdready_workload::replay`.

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec_replay::Skip;
use crate::units::{parse_bool, parse_fio_size as parse_size};

/// Sorted by name, like the main table.
pub static REPLAY_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "merge_blktrace_file",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a file name",
        help: "merge the blktraces of read_iolog by time into this file, and replay it",
        set: |s, v| {
            s.iolog.merge_file = Some(non_empty(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "merge_blktrace_iters",
        aliases: &[],
        arity: Arity::Value,
        allowed: "whole numbers ≥ 1 separated by ':', one per trace of read_iolog",
        help: "how many times each trace is merged in (merge_blktrace_file)",
        set: |s, v| {
            s.iolog.merge_iters = v
                .split(':')
                .map(|p| {
                    // fio reads the list as numbers and keeps the whole part.
                    let x: f64 = p.trim().parse().map_err(|_| format!("'{p}' is not a number"))?;
                    if !(1.0..=1e6).contains(&x) {
                        return Err(format!("'{p}' is not 1 to 1000000"));
                    }
                    Ok(x as u32)
                })
                .collect::<Result<_, String>>()?;
            Ok(())
        },
    },
    OptionDef {
        name: "merge_blktrace_scalars",
        aliases: &[],
        arity: Arity::Value,
        allowed: "percentages > 0 separated by ':', one per trace of read_iolog",
        help: "each trace's times as a percentage of the recorded ones (merge_blktrace_file)",
        set: |s, v| {
            s.iolog.merge_scalars = v
                .split(':')
                .map(|p| {
                    let x: f64 = p.trim().parse().map_err(|_| format!("'{p}' is not a number"))?;
                    if !(x > 0.0 && x.is_finite()) {
                        return Err(format!("'{p}' is not a percentage above 0"));
                    }
                    Ok(x)
                })
                .collect::<Result<_, String>>()?;
            Ok(())
        },
    },
    OptionDef {
        name: "read_iolog",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a trace: fio's iolog (version 2 or 3) or a blktrace binary; several separated by ':' go to the job's clones in turn",
        help: "replay the trace's requests, with its timing, instead of the job's pattern",
        set: |s, v| {
            let names = split_names(v);
            if names.is_empty() {
                return Err("no file named".into());
            }
            s.iolog.read = names;
            Ok(())
        },
    },
    OptionDef {
        name: "read_iolog_chunked",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "read the trace as the replay goes rather than whole before it",
        set: |s, v| {
            s.iolog.chunked = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "replay_align",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a power of two, e.g. 4k",
        help: "replayed offsets are rounded down to a multiple of this",
        set: |s, v| {
            let a = parse_size(v, s.kb_base)?;
            if a != 0 && !a.is_power_of_two() {
                return Err(format!("{a} is not a power of two"));
            }
            s.iolog.align = a;
            Ok(())
        },
    },
    OptionDef {
        name: "replay_no_stall",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "replay as fast as possible, in order, ignoring the trace's timing",
        set: |s, v| {
            s.iolog.no_stall = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "replay_redirect",
        aliases: &[],
        arity: Arity::Value,
        allowed: "one target: a file, a block device or emu:PRESET",
        help: "every replayed request goes to this target, whatever file or device the trace names",
        set: |s, v| {
            s.iolog.redirect = Some(non_empty(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "replay_scale",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number ≥ 1",
        help: "replayed offsets are divided by this",
        set: |s, v| {
            s.iolog.scale = u64::from(ranged_u32(v, 1, u32::MAX)?);
            Ok(())
        },
    },
    OptionDef {
        name: "replay_skip",
        aliases: &[],
        arity: Arity::Value,
        allowed: "read, write, trim, sync, separated by ','",
        help: "leave these requests of the trace out",
        set: |s, v| {
            s.iolog.skip = Skip::parse(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "replay_time_scale",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a percentage ≥ 1 (100: the trace's rate; 200: twice as fast)",
        help: "the trace's I/O rate is replayed at this percentage",
        set: |s, v| {
            s.iolog.time_scale = ranged_u32(v, 1, u32::MAX)?;
            Ok(())
        },
    },
    OptionDef {
        name: "write_iolog",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a file name; several separated by ':' for the job's clones, one each",
        help: "record every request issued, in fio's iolog version 3",
        set: |s, v| {
            s.iolog.write = Some(non_empty(v)?);
            Ok(())
        },
    },
];

fn non_empty(v: &str) -> Result<String, String> {
    match v.trim() {
        "" => Err("an empty file name".into()),
        t => Ok(t.to_string()),
    }
}
