//! The options of fio's log files ([`crate::spec_log`] and the
//! `write_*_log` prefixes, their averaging window and offsets) — a table
//! beside [`crate::option_table::OPTIONS`], searched by the same
//! machinery.

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec_log::*;
use crate::units::{parse_bool, parse_fio_size as parse_size};

/// The table. Keep it sorted by name.
pub static LOG_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "log_alternate_epoch",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help:
            "log times in ms since the epoch of log_alternate_epoch_clock_id's clock (as fio 3.33)",
        set: |s, v| {
            s.logs.alternate_epoch = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_alternate_epoch_clock_id",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a clock id of clock_gettime(2) (0: CLOCK_REALTIME, the default)",
        help: "the clock whose epoch log_unix_epoch and log_alternate_epoch count from",
        set: |s, v| {
            s.logs.epoch_clock_id = ranged(v, 0, i32::MAX as u64)? as i32;
            Ok(())
        },
    },
    OptionDef {
        name: "log_avg_msec",
        aliases: &[],
        arity: Arity::Value,
        allowed: "milliseconds, at most 100 years (0: one entry per I/O)",
        help: "average log entries over this window",
        set: |s, v| {
            s.log_avg_msec = ranged(v, 0, MAX_LOG_AVG_MSEC)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_compression",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size from 1k to 512m (fio's chunk size)",
        help: "compress logs in chunks of this size, as fio (the written log is the same text)",
        set: |s, v| {
            let n = parse_size(v, s.kb_base)?;
            let (lo, hi) = LOG_COMPRESSION_RANGE;
            if !(lo..=hi).contains(&n) {
                return Err(format!("{n} bytes is outside {lo}..={hi}"));
            }
            s.logs.compression = n;
            Ok(())
        },
    },
    OptionDef {
        name: "log_entries",
        aliases: &[],
        arity: Arity::Value,
        allowed: "1024 to 1048576",
        help: "fio's initial number of log entries (ssdready's logs grow as needed)",
        set: |s, v| {
            s.logs.entries = ranged(v, DEF_LOG_ENTRIES, MAX_LOG_ENTRIES)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_hist_coarseness",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0 to 6 (1216, 608, 304, 152, 76, 38 or 19 columns)",
        help: "histogram logs: sum 2^N of fio's latency bins per column",
        set: |s, v| {
            s.logs.hist_coarseness = ranged_u32(v, 0, MAX_HIST_COARSENESS)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_hist_msec",
        aliases: &[],
        arity: Arity::Value,
        allowed: "milliseconds (0: no histogram lines, as fio)",
        help: "histogram logs: one line per direction every this many ms",
        set: |s, v| {
            s.logs.hist_msec = ranged(v, 0, u64::from(u32::MAX))?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_issue_time",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "slat and clat logs: a last column with each I/O's issue time, ns since the job started (newer fio; needs write_lat_log and log_offset)",
        set: |s, v| {
            s.logs.issue_time = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_max_value",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "averaged logs (log_avg_msec): each window's maximum instead of its mean",
        set: |s, v| {
            (s.logs.max_value, s.logs.window_both) = (parse_bool(v)?, false);
            Ok(())
        },
    },
    OptionDef {
        name: "log_offset",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "logs: a column with each I/O's offset (fio's format with log_offset)",
        set: |s, v| {
            s.log_offset = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_store_compressed",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "write logs zlib-compressed as fio does (NAME.log.fz; read with fio --inflate-log)",
        set: |s, v| {
            s.logs.store_compressed = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_unix_epoch",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "log times in ms since the Unix epoch (the clock of log_alternate_epoch_clock_id)",
        set: |s, v| {
            s.logs.unix_epoch = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "log_window_value",
        aliases: &[],
        arity: Arity::Value,
        allowed: "avg, max, both, 0 (avg) or 1 (max)",
        help: "averaged logs (log_avg_msec): each window's mean, maximum, or both (mean, then maximum; newer fio)",
        set: |s, v| {
            (s.logs.max_value, s.logs.window_both) = match v {
                "avg" | "0" => (false, false),
                "max" | "1" => (true, false),
                "both" => (false, true),
                _ => return Err(format!("'{v}' is not a window value")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "unified_rw_reporting",
        aliases: &[],
        arity: Arity::Value,
        allowed: "none, mixed, both, 0 (none) or 1 (mixed)",
        help: "report the directions together as 'mixed' (instead of, or after, each)",
        set: |s, v| {
            s.logs.unified_rw = UnifiedRw::parse(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "write_bw_log",
        aliases: &[],
        arity: Arity::Optional,
        allowed: "a file prefix (default: the job name)",
        help: "write PREFIX_bw.N.log (KiB/s) in fio's format",
        set: |s, v| {
            s.write_bw_log = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "write_hist_log",
        aliases: &[],
        arity: Arity::Optional,
        allowed: "a file prefix (default: the job name)",
        help: "write PREFIX_clat_hist.N.log: fio's latency histogram every log_hist_msec",
        set: |s, v| {
            s.logs.hist_log = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "write_iops_log",
        aliases: &[],
        arity: Arity::Optional,
        allowed: "a file prefix (default: the job name)",
        help: "write PREFIX_iops.N.log in fio's format",
        set: |s, v| {
            s.write_iops_log = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "write_lat_log",
        aliases: &[],
        arity: Arity::Optional,
        allowed: "a file prefix (default: the job name)",
        help: "write PREFIX_{slat,clat,lat}.N.log (ns) in fio's format",
        set: |s, v| {
            s.write_lat_log = Some(v.to_string());
            Ok(())
        },
    },
];
