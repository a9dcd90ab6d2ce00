//! The options of when a job starts and ends and of the order of jobs:
//! start delay, ramp, runtime, loops and I/O counts, steady state,
//! stonewalls and `wait_for`, `exitall`, and fio's `flow` between jobs. A
//! table beside [`crate::option_table::OPTIONS`], searched by the same
//! machinery ([`crate::options::all`]).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec::*;
use crate::units::{parse_bool, parse_time_ns};

/// The table. Keep it sorted by name.
pub static FLOW_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "exit_what",
        aliases: &[],
        arity: Arity::Value,
        allowed: "group, stonewall or all",
        help: "which jobs exitall stops: the job's reporting group, every running job, or every job (later ones do not start)",
        set: |s, v| {
            s.exit_what = match v.trim().to_ascii_lowercase().as_str() {
                "group" => ExitWhat::Group,
                "stonewall" => ExitWhat::Stonewall,
                "all" => ExitWhat::All,
                _ => return Err(format!("'{v}' is not group, stonewall or all")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "exitall",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "when this job finishes, stop all others",
        set: |s, v| {
            s.exitall = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "flow",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a weight from 0 (off) to 1000",
        help: "token-based flow control: the jobs of one flow_id issue I/Os in the ratio of their weights",
        set: |s, v| {
            s.flow = ranged_u32(v, 0, 1000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "flow_id",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number (0: the default flow)",
        help: "the flow whose jobs share out their I/Os by flow weight",
        set: |s, v| {
            s.flow_id = ranged_u32(v, 0, u32::MAX)?;
            Ok(())
        },
    },
    OptionDef {
        name: "flow_sleep",
        aliases: &[],
        arity: Arity::Value,
        allowed: "microseconds (0: try again at once)",
        help: "how long a job ahead of its flow share sleeps, once its queue is empty, before it looks again",
        set: |s, v| {
            s.flow_sleep_us = ranged(v, 0, 3_600_000_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "loops",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number ≥ 1",
        help: "passes over the region (not time_based)",
        set: |s, v| {
            s.loops = nonzero_u32(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "new_group",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "start a new reporting group",
        set: |s, v| {
            s.new_group = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "number_ios",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number (0: no limit)",
        help: "stop after this many I/Os",
        set: |s, v| {
            s.number_ios = Some(uint(v)?).filter(|&n| n > 0);
            Ok(())
        },
    },
    OptionDef {
        name: "ramp_time",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time, e.g. 2s (bare numbers are seconds)",
        help: "run this long before counting",
        set: |s, v| {
            s.ramp_time_ns = parse_time_ns(v, 1_000_000_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "runtime",
        aliases: &["timeout"],
        arity: Arity::Value,
        allowed: "a time up to 100 years, e.g. 10s (bare numbers are seconds; 0: no limit)",
        help: "stop after this long",
        set: |s, v| {
            s.runtime_ns = Some(parse_time_ns(v, 1_000_000_000)?).filter(|&t| t > 0);
            Ok(())
        },
    },
    OptionDef {
        name: "startdelay",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time (bare numbers are seconds)",
        help: "wait this long before starting the job",
        set: |s, v| {
            s.startdelay_ns = parse_time_ns(v, 1_000_000_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "steadystate",
        aliases: &["ss"],
        arity: Arity::Value,
        allowed: crate::steady::SS_ALLOWED,
        help: "end the job once this criterion holds over steadystate_duration (fio's default iops_slope:0.01%)",
        set: |s, v| {
            s.steadystate = crate::steady::SsCriterion::parse(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "steadystate_duration",
        aliases: &["ss_dur"],
        arity: Arity::Value,
        allowed: "a time of whole seconds, e.g. 30s (bare numbers are seconds; 0 turns steady-state detection off)",
        help: "the rolling window steady state is judged over; one sample a second",
        set: |s, v| {
            s.ss_dur_ns = whole_seconds(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "steadystate_ramp_time",
        aliases: &["ss_ramp"],
        arity: Arity::Value,
        allowed: "a time, e.g. 10s (bare numbers are seconds)",
        help: "run this long before collecting steady-state samples",
        set: |s, v| {
            s.ss_ramp_ns = parse_time_ns(v, 1_000_000_000)?;
            Ok(())
        },
    },
    OptionDef {
        name: "stonewall",
        aliases: &["wait_for_previous"],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "wait for all earlier jobs to finish first (starts a new group)",
        set: |s, v| {
            s.stonewall = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "time_based",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "run for runtime even when the region is done (wraps around)",
        set: |s, v| {
            s.time_based = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "wait_for",
        aliases: &[],
        arity: Arity::Value,
        allowed: "the name of an earlier job",
        help: "start when every clone of the named earlier job has ended",
        set: |s, v| {
            let v = v.trim();
            if v.is_empty() {
                return Err("empty job name".into());
            }
            s.wait_for = Some(v.to_string());
            Ok(())
        },
    },
];

/// A steady-state window: fio keeps whole seconds (one sample a second);
/// a nonzero window under a second would silently turn detection off, so
/// it is refused.
fn whole_seconds(v: &str) -> Result<u64, String> {
    let ns = parse_time_ns(v, 1_000_000_000)?;
    if ns > 0 && ns < 1_000_000_000 {
        return Err(format!("'{v}' is under one second"));
    }
    Ok(ns / 1_000_000_000 * 1_000_000_000)
}
