//! The options of fio's `sprandom` preconditioning
//! ([`crate::spec_sprandom`]): `sprandom`, `spr_num_regions`, `spr_op`,
//! `spr_cs` — a table beside [`crate::option_table::OPTIONS`], searched by
//! the same machinery.

use crate::option_def::{Arity, OptionDef};
use crate::units::{parse_bool, parse_size};

/// The table. Keep it sorted by name.
pub static SPRANDOM_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "spr_cs",
        aliases: &[],
        arity: Arity::Value,
        allowed: "bytes with suffix, e.g. 32k (0: no cache, the default)",
        help: "sprandom: the device's cache; invalidating writes wait one region so the cache never holds a block and its rewrite",
        set: |s, v| {
            s.sprandom.cache = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "spr_num_regions",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number, at least 1 (default 100)",
        help: "sprandom: the regions the device is divided into (more: finer validity steps)",
        set: |s, v| {
            let n: u32 = v
                .trim()
                .parse()
                .map_err(|_| format!("'{v}' is not a whole number"))?;
            if n == 0 {
                return Err("0 regions (allowed: at least 1)".into());
            }
            s.sprandom.regions = n;
            Ok(())
        },
    },
    OptionDef {
        name: "spr_op",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a ratio in (0, 1), e.g. 0.15 (the default)",
        help: "sprandom: the device's over-provisioning ratio, as its maker states it",
        set: |s, v| {
            let op: f64 = v
                .trim()
                .parse()
                .map_err(|_| format!("'{v}' is not a number"))?;
            if !(op > 0.0 && op < 1.0) {
                return Err(format!("{op} is outside (0, 1)"));
            }
            s.sprandom.op = op;
            Ok(())
        },
    },
    OptionDef {
        name: "sprandom",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "precondition for steady-state random writes: write the physical capacity once, leaving regions as invalid as at steady state (fio's SPRandom; sets random_generator=lfsr and norandommap)",
        set: |s, v| {
            s.sprandom.on = parse_bool(v)?;
            Ok(())
        },
    },
];
