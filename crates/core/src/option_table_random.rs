//! The options of random offsets: the distribution, the generator and its
//! seed, the random map, and the share of I/Os that are random
//! (`percentage_random`) — the fields of [`crate::spec::JobSpec`] that
//! `ssdready_workload`'s offset generator reads. A table beside
//! [`crate::option_table::OPTIONS`], searched by the same machinery
//! ([`crate::options::all`]).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::units::{parse_bool, parse_fio_size as parse_size};

/// The table. Keep it sorted by name.
pub static RANDOM_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "allrandrepeat",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "as randrepeat, for every random choice (ssdready's all follow randseed)",
        set: |s, v| {
            s.randrepeat = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "norandommap",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "random offsets with repeats (default: each block once per pass)",
        set: |s, v| {
            s.norandommap = parse_bool(v)?;
            s.sprandom.norandommap_given = Some(s.norandommap);
            Ok(())
        },
    },
    OptionDef {
        name: "percentage_random",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0 to 100; per direction read,write,trim, e.g. 50,100",
        help: "random jobs: the percentage of offsets drawn at random, the rest sequential",
        set: |s, v| {
            s.percentage_random = per_dir(v, false, s.percentage_random, percent)?;
            Ok(())
        },
    },
    OptionDef {
        name: "random_distribution",
        aliases: &[],
        arity: Arity::Value,
        allowed: "random, zipf[:θ[:center]], pareto[:h[:center]], normal[:dev[:center]], zoned:A/S%:…, zoned_abs:A/SIZE:… (zones per direction separated by ',')",
        help: "distribution of random offsets",
        set: |s, v| {
            let kb = s.kb_base;
            (s.random_distribution, s.random_center) =
                parse_distribution(v, &|x: &str| Ok(parse_size(x, kb)?))?;
            Ok(())
        },
    },
    OptionDef {
        name: "random_generator",
        aliases: &[],
        arity: Arity::Value,
        allowed: "tausworthe, lfsr, tausworthe64",
        help: "lfsr: each block exactly once per pass even with norandommap (a keyed permutation, fio's order differs); tausworthe: 32 bits per offset, so without the random map at most 2^32 distinct offsets, as fio's; tausworthe64 (the default): 64 bits (ssdready's own generator for both)",
        set: |s, v| {
            s.sprandom.lfsr_given = Some(v == "lfsr");
            (s.lfsr, s.rand32) = match v {
                "lfsr" => (true, false),
                "tausworthe" => (false, true),
                "tausworthe64" => (false, false),
                _ => return Err(format!("'{v}' is not a random generator")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "random_sequence_stride",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "random_distribution=sequence: each round of the list starts its length further (newer fio)",
        set: |s, v| {
            s.random_sequence_stride = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "randrepeat",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "repeatable random pattern (default 1); 0 seeds from the clock",
        set: |s, v| {
            s.randrepeat = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "randseed",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number",
        help: "seed of every random choice (fixed by default)",
        set: |s, v| {
            s.randseed = uint(v)?;
            s.randseed_given = true;
            Ok(())
        },
    },
];
