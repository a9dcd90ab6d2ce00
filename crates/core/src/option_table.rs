//! The main option table: a job's name and shape — its targets and
//! sizes, the I/O pattern and mix, block sizes, clones, direct or buffered
//! I/O. One [`OptionDef`] per option; the other parts of a job have their
//! own tables (`option_table_*`, listed in [`crate::options::TABLES`]).
//! The value parsers they share are in [`crate::option_values`];
//! `crate::options` holds the machinery (lookup, suggestions, applying,
//! building jobs from sections).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec::*;
use crate::spec_types::parse_amount;
use crate::units::{parse_bool, parse_fio_size as parse_size};

/// The table. Keep it sorted by name; `ssdready options` prints it in order.
pub static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "bs",
        aliases: &["blocksize"],
        arity: Arity::Value,
        allowed: "a size with optional k/m/g suffix, e.g. 4k; per direction read,write,trim, e.g. 4k,64k",
        help: "block size of every I/O",
        set: |s, v| {
            let kb = s.kb_base;
            let dirs = per_dir(v, true, bs_dirs(&s.bs), |p| {
                bytes_u32(kb, p).map(BlockSizes::Fixed)
            })?;
            s.bs = BlockSizes::from_dirs(dirs);
            Ok(())
        },
    },
    OptionDef {
        name: "bsrange",
        aliases: &["blocksize_range"],
        arity: Arity::Value,
        allowed: "min-max sizes, e.g. 4k-64k; per direction read,write,trim, e.g. 1k-4k,2k-8k",
        help: "block sizes drawn from a range (multiples of min), as fio draws them",
        set: |s, v| {
            let kb = s.kb_base;
            let dirs = per_dir(v, false, bs_dirs(&s.bs), |p| {
                let (min, max) = parse_range(p, kb)?;
                let (min, max) = (fits_u32(min)?, fits_u32(max)?);
                Ok::<_, ValueError>(if min == max {
                    BlockSizes::Fixed(min)
                } else {
                    BlockSizes::Range { min, max }
                })
            })?;
            s.bs = BlockSizes::from_dirs(dirs);
            Ok(())
        },
    },
    OptionDef {
        name: "bssplit",
        aliases: &[],
        arity: Arity::Value,
        allowed: "size/percent pairs separated by ':', e.g. 4k/70:64k/30; per direction read,write,trim separated by ','",
        help: "weighted mix of block sizes",
        set: |s, v| {
            let kb = s.kb_base;
            let dirs = per_dir(v, false, bs_dirs(&s.bs), |p| parse_bssplit(kb, p))?;
            s.bs = BlockSizes::from_dirs(dirs);
            Ok(())
        },
    },
    OptionDef {
        name: "buffered",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "the opposite of direct",
        set: |s, v| {
            s.direct = !parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "description",
        aliases: &[],
        arity: Arity::Value,
        allowed: "any text",
        help: "free text shown with the job",
        set: |s, v| {
            s.description = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "direct",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "O_DIRECT: bypass the page cache",
        set: |s, v| {
            s.direct = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "directory",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a directory path, or several separated by ':' (dealt to the clones)",
        help: "where files are: generated ones (jobname.N.M) and relative filenames",
        set: |s, v| {
            s.directory = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "filename",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a path or colon-separated paths (files or block devices), or emu:PRESET[,key=value...]",
        help: "the target(s); I/O goes round-robin over several; none: the SSD emulator (emu:nvme-tlc)",
        set: |s, v| {
            // The emulator's spec is one target, colons and all.
            if v == "emu" || v.starts_with("emu:") {
                s.filename = vec![v.to_string()];
                return Ok(());
            }
            let names = split_names(v);
            if names.is_empty() {
                return Err("empty filename".into());
            }
            s.filename = names;
            Ok(())
        },
    },
    OptionDef {
        name: "invalidate",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "drop the targets' page cache before the job (default 1)",
        set: |s, v| {
            s.invalidate = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "io_size",
        aliases: &["io_limit"],
        arity: Arity::Value,
        allowed: "a size, e.g. 10g (0: size)",
        help: "bytes to transfer before the job ends (default: size)",
        set: |s, v| {
            s.io_size = Some(parse_size(v, s.kb_base)?).filter(|&b| b > 0);
            Ok(())
        },
    },
    OptionDef {
        name: "kb_base",
        aliases: &[],
        arity: Arity::Value,
        allowed: "1024 or 1000",
        help: "what k means in the sizes that follow",
        set: |s, v| {
            s.kb_base = match v {
                "1024" => 1024,
                "1000" => 1000,
                _ => return Err(format!("'{v}' is not 1024 or 1000")),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "name",
        aliases: &[],
        arity: Arity::Value,
        allowed: "any text",
        help: "the job's name; on the command line it starts a new job",
        set: |s, v| {
            s.name = v.to_string();
            Ok(())
        },
    },
    OptionDef {
        name: "numjobs",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number 1..=4096",
        help: "clones of the job, each a worker thread",
        set: |s, v| {
            s.numjobs = ranged_u32(v, 1, MAX_NUMJOBS)?;
            Ok(())
        },
    },
    OptionDef {
        name: "offset",
        aliases: &["fileoffset"],
        arity: Arity::Value,
        allowed: "a size, or a percentage of the target (0% to 100%)",
        help: "start of the region within each target",
        set: |s, v| {
            if refused_in_zones(s, "offset", v) {
                return Ok(());
            }
            let kb = s.kb_base;
            // fio takes 0% as the start (fio's uring-cmd-fdp.fio has it).
            let v = if v.trim() == "0%" { "0" } else { v };
            match parse_amount(v, |x| parse_size(x, kb))? {
                Amount::Bytes(b) => (s.offset, s.offset_percent) = (b, None),
                Amount::Percent(p) => (s.offset, s.offset_percent) = (0, Some(p)),
            }
            Ok(())
        },
    },
    OptionDef {
        name: "rw",
        aliases: &["readwrite"],
        arity: Arity::Value,
        allowed: "read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite; :N after a random one: a new offset every N I/Os; :SIZE after a sequential one: skip SIZE (negative: backwards)",
        help: "I/O pattern",
        set: |s, v| {
            s.refused.retain(|r| !r.starts_with("rw="));
            // fio's trimwrite (trim a block, then write it) is its trim
            // pattern with a write after each trim.
            let (trims_then_writes, pattern) = match v.strip_prefix("trimwrite") {
                Some(rest) => (true, format!("trim{rest}")),
                None => match v.strip_prefix("randtrimwrite") {
                    Some(rest) => (true, format!("randtrim{rest}")),
                    None => (false, v.to_string()),
                },
            };
            (s.rw, s.rw_seq_nr, s.rw_seq_add) = parse_rw(&pattern, s.kb_base)?;
            s.trim_then_write = trims_then_writes;
            Ok(())
        },
    },
    OptionDef {
        name: "rwmixread",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0..=100",
        help: "percent of reads in rw/randrw",
        set: |s, v| {
            s.rwmixread = percent(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "rwmixwrite",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0..=100",
        help: "percent of writes in rw/randrw",
        set: |s, v| {
            s.rwmixread = 100 - percent(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "size",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size, e.g. 1g, or a percentage of each target (1% to 100%)",
        help: "bytes the job covers (split over its files)",
        set: |s, v| {
            if refused_in_zones(s, "size", v) {
                return Ok(());
            }
            let kb = s.kb_base;
            match parse_amount(v, |x| parse_size(x, kb))? {
                Amount::Bytes(b) => (s.size, s.size_percent) = (Some(b), None),
                Amount::Percent(p) => (s.size, s.size_percent) = (None, Some(p)),
            }
            Ok(())
        },
    },
    OptionDef {
        name: "unlink",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "remove the job's regular files when it is done",
        set: |s, v| {
            s.unlink = parse_bool(v)?;
            Ok(())
        },
    },
];
