//! The options about a job's files and where in them its I/Os go: how
//! many files fio makes and how they are named and sized, which file the
//! next I/O uses, and how offsets are aligned, spaced and sequenced. A
//! second part of the option table ([`crate::option_table`] has the rest;
//! [`crate::options::all`] joins them).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec::*;
use crate::spec_types::parse_amount;
use crate::units::{parse_bool, parse_fio_size as parse_size};

/// Sorted by name, like the main table.
pub static FILE_OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "ba",
        aliases: &["blockalign"],
        arity: Arity::Value,
        allowed: "a size; per direction read,write,trim (default: the smallest block size)",
        help: "random offsets are multiples of this (turns off the random map, as in fio)",
        set: |s, v| {
            let kb = s.kb_base;
            s.ba = per_dir(v, true, s.ba, |p| {
                let b = bytes_u32(kb, p)?;
                if b == 0 {
                    return Err(String::from("0 is not an alignment"));
                }
                Ok(b)
            })?;
            Ok(())
        },
    },
    OptionDef {
        name: "bs_is_seq_rand",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "per-direction block sizes are for sequential,random I/Os instead of read,write",
        set: |s, v| {
            s.bs_is_seq_rand = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "bs_unaligned",
        aliases: &["blocksize_unaligned"],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "sizes from bsrange need not be multiples of its minimum",
        set: |s, v| {
            s.bs_unaligned = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "file_service_type",
        aliases: &[],
        arity: Arity::Value,
        allowed: "roundrobin, sequential or random (each with :N I/Os per choice), zipf[:θ], pareto[:h], normal[:dev] (gauss)",
        help: "how the file of the next I/O is chosen",
        set: |s, v| {
            let (svc, nr, center) = parse_file_service(v)?;
            (s.file_service, s.file_service_nr) = (svc, nr);
            if center.is_some() {
                s.random_center = center;
            }
            Ok(())
        },
    },
    OptionDef {
        name: "filename_format",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a name with $jobname, $jobnum, $filenum (default $jobname.$jobnum.$filenum)",
        help: "names of the files fio makes when no filename is given",
        set: |s, v| {
            if v.contains("$clientuid") {
                return Err("$clientuid belongs to fio's client/server mode, which ssdready does not have".into());
            }
            s.filename_format = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "filesize",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size, or a range min-max sizes are drawn from",
        help: "each file's size (size is then only the bytes to transfer)",
        set: |s, v| {
            let kb = s.kb_base;
            let (lo, hi) = if v.contains(['-', ':']) {
                parse_range(v, kb)?
            } else {
                let b = parse_size(v, kb)?;
                (b, b)
            };
            if lo == 0 {
                return Err("a file of 0 bytes".into());
            }
            s.filesize = Some((lo, hi));
            Ok(())
        },
    },
    OptionDef {
        name: "nrfiles",
        aliases: &["nr_files"],
        arity: Arity::Value,
        allowed: "a whole number 1..=65536",
        help: "files per clone when fio makes them (size is split over them)",
        set: |s, v| {
            s.nrfiles = ranged_u32(v, 1, MAX_FILES)?;
            Ok(())
        },
    },
    OptionDef {
        name: "offset_align",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size (0: the smallest block size)",
        help: "alignment of an offset given in percent",
        set: |s, v| {
            s.offset_align = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "offset_increment",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size, or a percentage of the target (1% to 100%)",
        help: "clone N starts N times this further (disjoint regions)",
        set: |s, v| {
            let kb = s.kb_base;
            s.offset_increment = match v.trim() {
                "0" => Amount::Bytes(0),
                _ => parse_amount(v, |x| parse_size(x, kb))?,
            };
            Ok(())
        },
    },
    OptionDef {
        name: "opendir",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a directory",
        help: "every regular file below it (recursively) is a target",
        set: |s, v| {
            s.opendir = Some(v.to_string());
            Ok(())
        },
    },
    OptionDef {
        name: "openfiles",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number (0: all of the job's files)",
        help: "files kept open at once",
        set: |s, v| {
            s.openfiles = ranged_u32(v, 0, MAX_FILES)?;
            Ok(())
        },
    },
    OptionDef {
        name: "per_job_logs",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "0: every worker's log lines go to one PREFIX_bw.log (no .N), as fio",
        set: |s, v| {
            s.per_job_logs = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "rw_sequencer",
        aliases: &[],
        arity: Arity::Value,
        allowed: "sequential or identical",
        help: "with rw=randread:N, the I/Os between two random offsets: the next blocks, or the same offset",
        set: |s, v| {
            s.rw_sequencer = match v {
                "sequential" => RwSequencer::Sequential,
                "identical" => RwSequencer::Identical,
                _ => return Err(format!("'{v}' is not sequential or identical")),
            };
            Ok(())
        },
    },
];

/// The most files one clone of a job may have.
pub const MAX_FILES: u32 = 65536;
