//! The options of what the report shows: the latency percentiles and
//! their list, and the grouping of jobs' results. A table beside
//! [`crate::option_table::OPTIONS`], searched by the same machinery
//! ([`crate::options::all`]).

use crate::option_def::{Arity, OptionDef};
use crate::units::parse_bool;

/// The table. Keep it sorted by name.
pub static REPORT_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "clat_percentiles",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fio JSON: percentiles of completion latency (default 1)",
        set: |s, v| {
            s.clat_percentiles = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "group_reporting",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fio output: one entry per reporting group, summed",
        set: |s, v| {
            s.group_reporting = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "lat_percentiles",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fio JSON: percentiles of total latency",
        set: |s, v| {
            s.lat_percentiles = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "percentile_list",
        aliases: &[],
        arity: Arity::Value,
        allowed: "percentiles in (0, 100] separated by ':', e.g. 50:99:99.9",
        help: "latency percentiles to report",
        set: |s, v| {
            s.percentile_list_given = true;
            let mut l = Vec::new();
            for p in v.split(':').filter(|p| !p.is_empty()) {
                let x: f64 = p.parse().map_err(|_| format!("'{p}' is not a number"))?;
                if !(x > 0.0 && x <= 100.0) {
                    return Err(format!("{x} is outside (0, 100]"));
                }
                l.push(x);
            }
            if l.is_empty() {
                return Err("empty list".into());
            }
            s.percentile_list = l;
            Ok(())
        },
    },
    OptionDef {
        name: "slat_percentiles",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "fio JSON: percentiles of submission latency",
        set: |s, v| {
            s.slat_percentiles = parse_bool(v)?;
            Ok(())
        },
    },
];
