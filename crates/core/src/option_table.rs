//! The option table itself: one [`OptionDef`] per supported option. The
//! value parsers they share are in [`crate::option_values`];
//! `crate::options` holds the machinery (lookup, suggestions, applying,
//! building jobs from sections).

use crate::option_def::{Arity, OptionDef};
use crate::option_values::*;
use crate::spec::*;
use crate::spec_types::parse_amount;
use crate::units::{parse_bool, parse_cpu_list, parse_fio_size as parse_size, parse_time_ns};

use crate::engines::RUNNABLE_ENGINES;

/// The table. Keep it sorted by name; `ssdready options` prints it in order.
pub static OPTIONS: &[OptionDef] = &[
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
        name: "coalesce_n",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0..=65536 completions (0: no count limit)",
        help: "ssdready: interrupt coalescing, deliver completions n at a time",
        set: |s, v| {
            s.coalesce.get_or_insert_with(Default::default).n = ranged_u32(v, 0, 65_536)?;
            Ok(())
        },
    },
    OptionDef {
        name: "coalesce_us",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a time up to 10s (bare numbers are µs; 0: no time limit)",
        help: "ssdready: interrupt coalescing, hold a completion at most this long",
        set: |s, v| {
            let ns = parse_time_ns(v, 1_000)?;
            if ns > 10_000_000_000 {
                return Err(format!("{v} is more than 10 s"));
            }
            s.coalesce.get_or_insert_with(Default::default).us = ns / 1_000;
            Ok(())
        },
    },
    OptionDef {
        name: "completion",
        aliases: &[],
        arity: Arity::Value,
        allowed: "interrupt, poll, spin or hybrid",
        help: "ssdready: how completions are waited for (poll: iopoll if possible, else spin)",
        set: |s, v| {
            s.completion = Some(crate::strategy::CompletionWait::parse(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "cpumask",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a bit mask of online CPUs, e.g. 0x3 or 3",
        help: "CPUs the job's workers may run on, as a mask",
        set: |s, v| {
            let m = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
                Some(h) => u64::from_str_radix(h, 16),
                None => v.parse::<u64>(),
            }
            .map_err(|_| format!("'{v}' is not a mask"))?;
            let cpus: Vec<usize> = (0..64).filter(|b| m >> b & 1 == 1).collect();
            if cpus.is_empty() {
                return Err("empty mask".into());
            }
            s.cpus_allowed = Some(cpus);
            Ok(())
        },
    },
    OptionDef {
        name: "cpus_allowed",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a list of online CPUs, e.g. 0-3,6",
        help: "CPUs the job's workers may run on",
        set: |s, v| {
            s.cpus_allowed = Some(parse_cpu_list(v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "cpus_allowed_policy",
        aliases: &[],
        arity: Arity::Value,
        allowed: "shared or split",
        help: "shared: every clone on all listed CPUs; split: one CPU per clone",
        set: |s, v| {
            s.cpus_allowed_policy = match v {
                "shared" => CpusPolicy::Shared,
                "split" => CpusPolicy::Split,
                _ => return Err(format!("'{v}' is not shared or split")),
            };
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
        name: "fixedbufs",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: register the I/O buffers with the kernel",
        set: |s, v| {
            s.fixedbufs = parse_bool(v)?;
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
        name: "hipri",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: polled completions (IORING_SETUP_IOPOLL); needs poll queues",
        set: |s, v| {
            s.hipri = parse_bool(v)?;
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
        name: "iodepth",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number 1..=65536",
        help: "I/Os kept in flight per worker",
        set: |s, v| {
            s.iodepth = ranged_u32(v, 1, MAX_IODEPTH)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth_batch_complete_max",
        aliases: &[],
        arity: Arity::Value,
        allowed: "0..=iodepth (0: iodepth)",
        help: "most completions reaped per call",
        set: |s, v| {
            s.iodepth_batch_complete_max = ranged_u32(v, 0, MAX_IODEPTH)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth_batch_complete_min",
        aliases: &["iodepth_batch_complete"],
        arity: Arity::Value,
        allowed: "0..=iodepth",
        help: "fewest completions waited for per call",
        set: |s, v| {
            s.iodepth_batch_complete_min = ranged_u32(v, 0, MAX_IODEPTH)?;
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth_batch_submit",
        aliases: &["iodepth_batch"],
        arity: Arity::Value,
        allowed: "1..=iodepth (0 means 1)",
        help: "I/Os queued before one submit call",
        set: |s, v| {
            s.iodepth_batch_submit = ranged_u32(v, 0, MAX_IODEPTH)?.max(1);
            Ok(())
        },
    },
    OptionDef {
        name: "ioengine",
        aliases: &[],
        arity: Arity::Value,
        allowed: RUNNABLE_ENGINES,
        help: "how I/O is issued; without filename, fio's files (jobname.N.M) rather than the emulator",
        set: |s, v| {
            s.ioengine_given = true;
            s.engine_named = None;
            s.refused.retain(|r| !r.starts_with("ioengine="));
            s.ioengine = match crate::engines::find(v) {
                // fio's names for the family's calls (sync, pvsync, ...)
                // and the engines of their own are kept as named; see
                // crate::engines for what each is.
                Some(e) => {
                    if v != e.kind.name() {
                        s.engine_named = Some(v.to_string());
                    }
                    e.kind
                }
                _ if crate::option_table_library::needs(v).is_some() => {
                    let needs = crate::option_table_library::needs(v).unwrap_or_default();
                    s.engine_named = Some(v.to_string());
                    s.refused.push(format!(
                        "ioengine={v}: needs {needs}, which this build of ssdready does not have \
                         (ssdready runs {RUNNABLE_ENGINES})"
                    ));
                    EngineKind::Psync
                }
                _ if FIO_ENGINES.contains(&v) => {
                    s.engine_named = Some(v.to_string());
                    s.refused.push(format!(
                        "ioengine={v}: fio's '{v}' engine is not supported yet (ssdready runs {RUNNABLE_ENGINES})"
                    ));
                    // The nearest engine ssdready has, so that the job's
                    // other options are checked as fio checks them.
                    EngineKind::Psync
                }
                _ => return Err(format!("'{v}' is not an engine")),
            };
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
        name: "merge_max",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number of extents, 1 to 4096 (default 64)",
        help: "temporal merge: most requests (extents) in one vectored command",
        set: |s, v| {
            s.merge_max = ranged_u32(v, 1, MAX_MERGE_EXTENTS)?;
            Ok(())
        },
    },
    OptionDef {
        name: "merge_max_bytes",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size, e.g. 1m (default 0: no limit besides merge_max)",
        help: "temporal merge: most bytes in one vectored command",
        set: |s, v| {
            s.merge_max_bytes = parse_size(v, s.kb_base)?;
            Ok(())
        },
    },
    OptionDef {
        name: "merge_window_us",
        aliases: &[],
        arity: Arity::Value,
        allowed: "whole microseconds, 0 to 1000000 (default 20; 0: no merging)",
        help: "temporal merge: how long a command gathers requests after its first",
        set: |s, v| {
            s.merge_window_ns = ranged(v, 0, MAX_MERGE_WINDOW_US)? * 1000;
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
        name: "registerfiles",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: register the target files",
        set: |s, v| {
            s.registerfiles = parse_bool(v)?;
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
    OptionDef {
        name: "sqthread_poll",
        aliases: &[],
        arity: Arity::Flag,
        allowed: "0 or 1",
        help: "io_uring: a kernel thread polls the submission queue (SQPOLL)",
        set: |s, v| {
            s.sqthread_poll = parse_bool(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "sqthread_poll_cpu",
        aliases: &[],
        arity: Arity::Value,
        allowed: "an online CPU number",
        help: "io_uring: pin the SQPOLL thread",
        set: |s, v| {
            s.sqthread_poll_cpu = Some(ranged_u32(v, 0, 4095)?);
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
        name: "temporal_merge",
        aliases: &[],
        arity: Arity::Value,
        allowed: "off, stm or atm",
        help: "merge concurrent requests into vectored commands (emulator): stm synchronous, atm asynchronous",
        set: |s, v| {
            s.temporal_merge = match v {
                "off" | "0" | "none" => TemporalMerge::Off,
                "stm" => TemporalMerge::Stm,
                "atm" => TemporalMerge::Atm,
                _ => return Err(format!("'{v}' is not off, stm or atm")),
            };
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
