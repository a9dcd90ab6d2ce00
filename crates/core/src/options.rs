//! The option table: one entry per option, driving parsing, validation
//! messages and `ssdready options`. Command-line `--name=value` pairs (and, in
//! a later step, fio job-file lines) go through [`apply`]; nothing else sets a
//! [`JobSpec`] field.
//!
//! Options are applied in order, as fio does: `kb_base` affects the sizes that
//! follow it; `rwmixwrite` sets `rwmixread` to its complement.

use crate::spec::*;
use crate::units::{parse_bool, parse_cpu_list, parse_size, parse_time_ns};

/// Whether an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    /// `--opt=value`.
    Value,
    /// `--opt` alone means on; `--opt=0|1` also accepted.
    Flag,
    /// `--opt` alone gives the empty string (a default the setter picks);
    /// `--opt=value` gives the value.
    Optional,
}

/// One option of the table.
pub struct OptionDef {
    /// fio's name.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// Value or flag.
    pub arity: Arity,
    /// The allowed values, as shown in errors and `ssdready options`.
    pub allowed: &'static str,
    /// One line of help.
    pub help: &'static str,
    /// Applies a value (already known to be present for `Arity::Value`).
    pub set: fn(&mut JobSpec, &str) -> Result<(), String>,
}

fn size_u32(s: &JobSpec, v: &str) -> Result<u32, String> {
    let b = parse_size(v, s.kb_base)?;
    u32::try_from(b).map_err(|_| format!("'{v}' is too large (at most 4 GiB - 1)"))
}

fn uint(v: &str) -> Result<u64, String> {
    v.trim()
        .parse::<u64>()
        .map_err(|_| format!("'{v}' is not a whole number"))
}

fn nonzero_u32(v: &str) -> Result<u32, String> {
    let n = uint(v)?;
    if n == 0 {
        return Err("0 is not allowed".into());
    }
    u32::try_from(n).map_err(|_| format!("'{v}' is too large"))
}

fn percent(v: &str) -> Result<u32, String> {
    let n = uint(v)?;
    if n > 100 {
        return Err(format!("{n} is over 100"));
    }
    Ok(n as u32)
}

fn parse_bssplit(s: &JobSpec, v: &str) -> Result<BlockSizes, String> {
    let mut parts = Vec::new();
    for item in v.split(':').filter(|p| !p.is_empty()) {
        let (b, w) = item
            .split_once('/')
            .ok_or_else(|| format!("'{item}' is not size/percent"))?;
        let b = size_u32(s, b)?;
        let w = if w.is_empty() { 0 } else { percent(w)? };
        parts.push((b, w));
    }
    if parts.is_empty() {
        return Err("empty bssplit".into());
    }
    // fio: entries without a weight share what is left.
    let given: u32 = parts.iter().map(|p| p.1).sum();
    let blanks = parts.iter().filter(|p| p.1 == 0).count() as u32;
    if blanks > 0 && given < 100 {
        let share = (100 - given) / blanks;
        let mut rest = (100 - given) % blanks;
        for p in parts.iter_mut().filter(|p| p.1 == 0) {
            p.1 = share + u32::from(rest > 0);
            rest = rest.saturating_sub(1);
        }
    }
    Ok(BlockSizes::Split(parts))
}

fn parse_distribution(v: &str) -> Result<Distribution, String> {
    let (kind, param) = match v.split_once(':') {
        Some((k, p)) => (k, Some(p)),
        None => (v, None),
    };
    let num = |p: Option<&str>| -> Result<f64, String> {
        let p = p.ok_or_else(|| format!("'{kind}' needs a parameter, e.g. {kind}:1.2"))?;
        if p.contains(':') {
            return Err(format!(
                "the ':offset' part of '{kind}:{p}' is not supported yet"
            ));
        }
        p.parse::<f64>()
            .map_err(|_| format!("'{p}' is not a number"))
    };
    match kind {
        "random" => Ok(Distribution::Random),
        "zipf" => {
            let t = num(param)?;
            if !(t > 0.0 && t.is_finite()) {
                return Err("zipf θ must be > 0".into());
            }
            Ok(Distribution::Zipf(t))
        }
        "pareto" => {
            let h = num(param)?;
            if !(h > 0.0 && h < 1.0) {
                return Err("pareto h must be in (0, 1)".into());
            }
            Ok(Distribution::Pareto(h))
        }
        "normal" | "gauss" => {
            let s = num(param)?;
            if !(s > 0.0 && s <= 100.0) {
                return Err("normal σ must be in (0, 100] percent".into());
            }
            Ok(Distribution::Normal(s))
        }
        _ => Err(format!("'{kind}' is not a distribution")),
    }
}

/// fio's other engines: recognised, refused as "not supported yet".
const FIO_ENGINES: &[&str] = &[
    "posixaio",
    "pvsync2",
    "vsync",
    "mmap",
    "splice",
    "sg",
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "falloc",
    "e4defrag",
    "rbd",
    "http",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "mtd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "libiscsi",
    "nbd",
    "libcufile",
    "dfs",
    "nfs",
    "exec",
    "xnvme",
    "io_uring_cmd",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "windowsaio",
    "solarisaio",
    "guasi",
    "external",
    "spdk",
];

/// The table. Keep it sorted by name; `ssdready options` prints it in order.
pub static OPTIONS: &[OptionDef] = &[
    OptionDef {
        name: "bs",
        aliases: &["blocksize"],
        arity: Arity::Value,
        allowed: "a size with optional k/m/g suffix, e.g. 4k",
        help: "block size of every I/O",
        set: |s, v| {
            s.bs = BlockSizes::Fixed(size_u32(s, v)?);
            Ok(())
        },
    },
    OptionDef {
        name: "bsrange",
        aliases: &["blocksize_range"],
        arity: Arity::Value,
        allowed: "min-max sizes, e.g. 4k-64k",
        help: "block sizes drawn uniformly from a range (multiples of min)",
        set: |s, v| {
            let (a, b) = v
                .split_once('-')
                .ok_or_else(|| format!("'{v}' is not min-max"))?;
            let (min, max) = (size_u32(s, a)?, size_u32(s, b)?);
            if min > max {
                return Err(format!("min {min} is larger than max {max}"));
            }
            s.bs = BlockSizes::Range { min, max };
            Ok(())
        },
    },
    OptionDef {
        name: "bssplit",
        aliases: &[],
        arity: Arity::Value,
        allowed: "size/percent pairs separated by ':', e.g. 4k/70:64k/30",
        help: "weighted mix of block sizes",
        set: |s, v| {
            s.bs = parse_bssplit(s, v)?;
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
        name: "cpumask",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a CPU bit mask, e.g. 0x3 or 3",
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
        allowed: "a CPU list, e.g. 0-3,6",
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
        allowed: "a directory path",
        help: "prefix for relative filenames (filename is still needed)",
        set: |s, v| {
            s.directory = Some(v.to_string());
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
            let names: Vec<String> = v
                .split(':')
                .filter(|p| !p.is_empty())
                .map(String::from)
                .collect();
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
        allowed: "a size, e.g. 10g",
        help: "bytes to transfer before the job ends (default: size)",
        set: |s, v| {
            s.io_size = Some(parse_size(v, s.kb_base)?);
            Ok(())
        },
    },
    OptionDef {
        name: "iodepth",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number ≥ 1",
        help: "I/Os kept in flight per worker",
        set: |s, v| {
            s.iodepth = nonzero_u32(v).map_err(|e| format!("{e} (iodepth must be at least 1)"))?;
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
            s.iodepth_batch_complete_max = uint(v)? as u32;
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
            s.iodepth_batch_complete_min = uint(v)? as u32;
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
            s.iodepth_batch_submit = (uint(v)? as u32).max(1);
            Ok(())
        },
    },
    OptionDef {
        name: "ioengine",
        aliases: &[],
        arity: Arity::Value,
        allowed: "psync (also sync, pvsync), io_uring, libaio or null",
        help: "how I/O is issued",
        set: |s, v| {
            s.ioengine = match v {
                // sync (read/write after lseek) and pvsync (preadv) move the
                // same bytes at the same offsets as pread/pwrite.
                "psync" | "sync" | "pvsync" => EngineKind::Psync,
                "io_uring" => EngineKind::IoUring,
                "libaio" => EngineKind::Libaio,
                "null" => EngineKind::Null,
                _ if FIO_ENGINES.contains(&v) => {
                    return Err(format!("fio's '{v}' engine is not supported yet"))
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
        allowed: "milliseconds (0: one entry per I/O)",
        help: "average log entries over this window",
        set: |s, v| {
            s.log_avg_msec = uint(v)?;
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
            Ok(())
        },
    },
    OptionDef {
        name: "number_ios",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number ≥ 1",
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
        allowed: "a whole number ≥ 1",
        help: "clones of the job, each a worker thread",
        set: |s, v| {
            s.numjobs = nonzero_u32(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "offset",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a size",
        help: "start of the region within each target",
        set: |s, v| {
            s.offset = parse_size(v, s.kb_base)?;
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
        allowed: "random, zipf:θ, pareto:h, normal:σ",
        help: "distribution of random offsets",
        set: |s, v| {
            s.random_distribution = parse_distribution(v)?;
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
            Ok(())
        },
    },
    OptionDef {
        name: "rate",
        aliases: &[],
        arity: Arity::Value,
        allowed: "bytes per second with suffix, e.g. 100m",
        help: "bandwidth cap per worker",
        set: |s, v| {
            s.rate_bytes = Some(parse_size(v, s.kb_base)?).filter(|&r| r > 0);
            Ok(())
        },
    },
    OptionDef {
        name: "rate_iops",
        aliases: &[],
        arity: Arity::Value,
        allowed: "a whole number",
        help: "IOPS cap per worker",
        set: |s, v| {
            s.rate_iops = Some(uint(v)?).filter(|&r| r > 0);
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
        allowed: "a time, e.g. 10s (bare numbers are seconds)",
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
        allowed: "read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim",
        help: "I/O pattern",
        set: |s, v| {
            s.rw = match v {
                "read" => RwMode::Read,
                "write" => RwMode::Write,
                "randread" => RwMode::RandRead,
                "randwrite" => RwMode::RandWrite,
                "rw" | "readwrite" => RwMode::ReadWrite,
                "randrw" => RwMode::RandRw,
                "trim" => RwMode::Trim,
                "randtrim" => RwMode::RandTrim,
                _ => return Err(format!("'{v}' is not a pattern")),
            };
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
        allowed: "a size, e.g. 1g",
        help: "bytes of each target the job covers",
        set: |s, v| {
            s.size = Some(parse_size(v, s.kb_base)?);
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
        allowed: "a CPU number",
        help: "io_uring: pin the SQPOLL thread",
        set: |s, v| {
            s.sqthread_poll_cpu = Some(uint(v)? as u32);
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

/// Look an option up by name or alias.
pub fn find(name: &str) -> Option<&'static OptionDef> {
    OPTIONS
        .iter()
        .find(|o| o.name == name || o.aliases.contains(&name))
}

/// The closest option names, for "did you mean".
pub fn suggest(name: &str) -> Option<&'static str> {
    fn dist(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                cur.push(
                    (prev[j] + usize::from(ca != *cb))
                        .min(prev[j + 1] + 1)
                        .min(cur[j] + 1),
                );
            }
            prev = cur;
        }
        prev[b.len()]
    }
    OPTIONS
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .map(|n| (dist(name, n), n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

/// Apply one `name[=value]` to a spec: a supported option sets its field;
/// an ignored one is noted in `spec.ignored`; a not-yet one or an unknown one
/// is an error.
pub fn apply(spec: &mut JobSpec, name: &str, value: Option<&str>) -> Result<(), SpecError> {
    let Some(def) = find(name) else {
        if let Some(why) = crate::optsets::ignored(name) {
            spec.ignored.push(format!("{name}: {why}"));
            return Ok(());
        }
        if crate::optsets::not_yet(name) {
            return Err(SpecError::new(name, "is not supported yet"));
        }
        let hint = suggest(name)
            .map(|s| format!("; did you mean '{s}'?"))
            .unwrap_or_default();
        return Err(SpecError::new(
            name,
            format!("unknown option (see 'ssdready options'){hint}"),
        ));
    };
    let v = match (def.arity, value) {
        (Arity::Flag, None) => "1",
        (Arity::Optional, None) => "",
        (Arity::Value, None) | (Arity::Value, Some("")) => {
            return Err(SpecError::new(
                def.name,
                format!("needs a value (allowed: {})", def.allowed),
            ))
        }
        (_, Some(v)) => v,
    };
    (def.set)(spec, v)
        .map_err(|m| SpecError::new(def.name, format!("{m} (allowed: {})", def.allowed)))
}

/// One `name[=value]` as written, with where it was written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawOption {
    /// Option name.
    pub key: String,
    /// Value, if any.
    pub value: Option<String>,
    /// `line N` (or `FILE line N` in an included file); None on the command line.
    pub at: Option<String>,
}

impl RawOption {
    /// An option given on the command line.
    pub fn cli(key: &str, value: Option<&str>) -> Self {
        RawOption {
            key: key.into(),
            value: value.map(String::from),
            at: None,
        }
    }
}

/// A `[global]` or job section, from a job file or the command line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    /// The job's name (`global` for a global section).
    pub name: String,
    /// Whether this is a `[global]` section.
    pub global: bool,
    /// The options in order.
    pub options: Vec<RawOption>,
}

/// The global options in effect for the last job, for fio's `global options`.
pub fn global_options(sections: &[Section]) -> Vec<(String, String)> {
    sections
        .iter()
        .filter(|s| s.global)
        .flat_map(|s| s.options.iter())
        .map(|o| (o.key.clone(), o.value.clone().unwrap_or_default()))
        .collect()
}

/// Build validated specs from sections in order: every job starts from the
/// defaults, then every global section seen so far (fio's rule: a `[global]`
/// applies to the jobs after it), then its own options. With no job section,
/// the globals form one job named `job`.
pub fn build_jobs(sections: &[Section]) -> Result<Vec<JobSpec>, SpecError> {
    let mut globals: Vec<&RawOption> = Vec::new();
    let mut out = Vec::new();
    let implicit = [Section {
        name: "job".into(),
        global: false,
        options: Vec::new(),
    }];
    let has_jobs = sections.iter().any(|s| !s.global);
    let all: Vec<&Section> = sections
        .iter()
        .chain(if has_jobs { &[][..] } else { &implicit[..] })
        .collect();
    for sec in all {
        if sec.global {
            globals.extend(sec.options.iter());
            continue;
        }
        let mut spec = JobSpec {
            name: sec.name.clone(),
            ..JobSpec::default()
        };
        for o in &globals {
            apply(&mut spec, &o.key, o.value.as_deref())
                .map_err(|e| e.in_job(&sec.name).at(o.at.as_deref()))?;
        }
        for o in &sec.options {
            apply(&mut spec, &o.key, o.value.as_deref())
                .map_err(|e| e.in_job(&sec.name).at(o.at.as_deref()))?;
            spec.options_given
                .push((o.key.clone(), o.value.clone().unwrap_or_default()));
        }
        spec.name = sec.name.clone();
        if spec.stonewall {
            spec.new_group = true;
        }
        if let Some(dir) = &spec.directory {
            for f in spec.filename.iter_mut() {
                if !f.starts_with('/') {
                    *f = format!("{}/{f}", dir.trim_end_matches('/'));
                }
            }
        }
        spec.validate()?;
        out.push(spec);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(s: &[(&str, &str)]) -> Vec<RawOption> {
        s.iter().map(|(k, v)| RawOption::cli(k, Some(v))).collect()
    }

    fn global(s: &[(&str, &str)]) -> Section {
        Section {
            name: "global".into(),
            global: true,
            options: kv(s),
        }
    }

    #[test]
    fn table_is_sorted_and_unique() {
        let names: Vec<_> = OPTIONS.iter().map(|o| o.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names.len(), sorted.len());
        for n in &names {
            assert!(find(n).is_some());
        }
    }

    #[test]
    fn globals_then_job_options() {
        let secs = [
            global(&[
                ("filename", "/x"),
                ("bs", "4k"),
                ("iodepth", "8"),
                ("ioengine", "io_uring"),
            ]),
            Section {
                name: "a".into(),
                global: false,
                options: kv(&[("bs", "8k")]),
            },
        ];
        let specs = build_jobs(&secs).unwrap();
        assert_eq!(specs[0].bs, BlockSizes::Fixed(8192));
        assert_eq!(specs[0].iodepth, 8);
        assert_eq!(specs[0].filename, vec!["/x".to_string()]);
    }

    #[test]
    fn bad_values_name_the_option_and_the_allowed_values() {
        let mut s = JobSpec::default();
        let e = apply(&mut s, "bs", Some("4q")).unwrap_err();
        assert_eq!(e.option, "bs");
        assert!(e.message.contains("allowed"), "{e}");
        let e = apply(&mut s, "iodepth", Some("0")).unwrap_err();
        assert!(e.to_string().contains("at least 1"), "{e}");
        let e = apply(&mut s, "exitall_on_error", None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "option 'exitall_on_error' is not supported yet"
        );
        apply(&mut s, "thread", None).unwrap();
        assert!(s.ignored[0].starts_with("thread: "));
        let e = apply(&mut s, "iodeph", Some("4")).unwrap_err();
        assert!(e.to_string().contains("did you mean 'iodepth'"), "{e}");
        let e = apply(&mut s, "rw", Some("randomread")).unwrap_err();
        assert!(e.to_string().contains("randread"), "{e}");
    }

    #[test]
    fn bs_larger_than_size_is_refused() {
        let e =
            build_jobs(&[global(&[("filename", "/x"), ("size", "4k"), ("bs", "8k")])]).unwrap_err();
        assert_eq!(e.option, "bs");
    }

    #[test]
    fn missing_filename_means_the_emulator() {
        let j = build_jobs(&[global(&[("rw", "read")])]).unwrap();
        assert!(j[0].on_emulator(), "no filename: the emulator");
        assert!(build_jobs(&[global(&[("ioengine", "null"), ("size", "1m")])]).is_ok());
        let j = build_jobs(&[global(&[("filename", "emu:x25e,size=1g")])]).unwrap();
        assert_eq!(j[0].filename, vec!["emu:x25e,size=1g".to_string()]);
        assert!(j[0].on_emulator());
    }

    #[test]
    fn bssplit_fills_blank_weights() {
        let mut s = JobSpec::default();
        apply(&mut s, "bssplit", Some("4k/50:8k/:64k/")).unwrap();
        assert_eq!(
            s.bs,
            BlockSizes::Split(vec![(4096, 50), (8192, 25), (65536, 25)])
        );
    }

    #[test]
    fn distributions_parse() {
        let mut s = JobSpec::default();
        apply(&mut s, "random_distribution", Some("zipf:1.2")).unwrap();
        assert_eq!(s.random_distribution, Distribution::Zipf(1.2));
        assert!(apply(&mut s, "random_distribution", Some("pareto:1.5")).is_err());
        assert!(apply(&mut s, "random_distribution", Some("zipf")).is_err());
        let e = apply(&mut s, "random_distribution", Some("zipf:1.2:0.5")).unwrap_err();
        assert!(e.to_string().contains("not supported yet"), "{e}");
    }
}
