//! The options of fio's `zonemode=zbd` (`ssdready_workload::zbd`): a table beside
//! [`crate::option_table::OPTIONS`], searched by the same machinery
//! ([`crate::options::all`]). `zonemode` and `zonesize` (the emulated
//! zones' size) are in [`crate::option_table_io`].

use crate::option_def::{Arity, OptionDef};
use crate::option_values::ranged_u32;
use crate::units::{parse_bool, parse_fio_size as parse_size};

/// fio's limit on write zones (`ZBD_MAX_WRITE_ZONES`).
pub const MAX_WRITE_ZONES: u32 = 4096;

/// A fraction from 0 to 1.
fn fraction(v: &str) -> Result<f64, String> {
    match v.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!("'{v}' is not a number from 0 to 1")),
    }
}

/// The table. Keep it sorted by name.
pub static ZBD_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "ignore_zone_limits",
        aliases: &[],
        arity: Arity::Optional,
        allowed: "0 or 1",
        help: "zonemode=zbd: ignore the device's open-zone limit (max_open_zones alone counts)",
        set: |s, v| {
            s.zbd.ignore_zone_limits = v.is_empty() || parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "job_max_open_zones",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number from 0 (no limit) to 4096",
        help: "zonemode=zbd: zones one job writes at once",
        set: |s, v| {
            s.zbd.job_max_open_zones = ranged_u32(v, 0, MAX_WRITE_ZONES)?;
            Ok(())
        },
    },
    OptionDef {
        name: "max_open_zones",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number from 0 (the device's limit) to 4096",
        help: "zonemode=zbd: zones written at once on the device",
        set: |s, v| {
            s.zbd.max_open_zones = ranged_u32(v, 0, MAX_WRITE_ZONES)?;
            Ok(())
        },
    },
    OptionDef {
        name: "read_beyond_wp",
        aliases: &[],
        arity: Arity::Optional,
        allowed: "0 or 1",
        help: "zonemode=zbd: let reads pass write pointers (default: only written data is read)",
        set: |s, v| {
            s.zbd.read_beyond_wp = v.is_empty() || parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "zone_reset_frequency",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a number from 0 to 1",
        help: "zonemode=zbd: past zone_reset_threshold, reset a zone every 1/frequency writes",
        set: |s, v| {
            s.zbd.reset_frequency = fraction(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "zone_reset_threshold",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a number from 0 to 1",
        help: "zonemode=zbd: share of the job's size written in its zones before threshold resets",
        set: |s, v| {
            s.zbd.reset_threshold = fraction(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "zonecapacity",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size (emulated zones' writable part; 0: zonesize)",
        help: "zonemode=zbd: bytes writable in each emulated zone",
        set: |s, v| {
            s.zbd.zone_capacity = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
];
