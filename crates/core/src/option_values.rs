//! The value parsers the option table shares: whole numbers in a range
//! (never truncated to a narrower type), percentages, sizes that fit a
//! u32, block-size splits, random distributions, and fio's engine names.
//! Each returns a short reason; `crate::options::apply` adds the option
//! and its allowed values.

use crate::spec::*;
use crate::units::parse_size;

pub(crate) fn size_u32(s: &JobSpec, v: &str) -> Result<u32, String> {
    let b = parse_size(v, s.kb_base)?;
    u32::try_from(b).map_err(|_| format!("'{v}' is too large (at most 4 GiB - 1)"))
}

pub(crate) fn uint(v: &str) -> Result<u64, String> {
    v.trim()
        .parse::<u64>()
        .map_err(|_| format!("'{v}' is not a whole number"))
}

/// A whole number in `lo..=hi` (never truncated to fit a narrower type).
pub(crate) fn ranged(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let n = uint(v)?;
    if n < lo {
        return Err(format!("must be at least {lo}, not {n}"));
    }
    if n > hi {
        return Err(format!("{} is more than {hi}", v.trim()));
    }
    Ok(n)
}

/// A whole number in `lo..=hi`, as a u32 (`hi` must fit).
pub(crate) fn ranged_u32(v: &str, lo: u32, hi: u32) -> Result<u32, String> {
    let n = ranged(v, lo.into(), hi.into())?;
    u32::try_from(n).map_err(|_| format!("'{v}' is too large"))
}

pub(crate) fn nonzero_u32(v: &str) -> Result<u32, String> {
    ranged_u32(v, 1, u32::MAX).map_err(|e| match uint(v) {
        Ok(0) => "0 is not allowed".to_string(),
        _ => e,
    })
}

pub(crate) fn percent(v: &str) -> Result<u32, String> {
    ranged_u32(v, 0, 100)
}

/// The most I/Os a worker may keep in flight: io_uring's IORING_MAX_ENTRIES
/// is 32768, and a deeper queue is no longer a measurement of a device.
pub const MAX_IODEPTH: u32 = 65536;
/// The most extents in one vectored command of the temporal merge layer.
pub const MAX_MERGE_EXTENTS: u32 = 4096;
/// The longest temporal merge window, µs (1 s).
pub const MAX_MERGE_WINDOW_US: u64 = 1_000_000;
/// The most clones (worker threads) of one job.
pub const MAX_NUMJOBS: u32 = 4096;
/// The longest log averaging window: 100 years, in milliseconds.
pub(crate) const MAX_LOG_AVG_MSEC: u64 = crate::units::MAX_TIME_NS / 1_000_000;

/// fio's limit on bssplit entries.
pub(crate) const MAX_BSSPLIT: usize = 64;

pub(crate) fn parse_bssplit(s: &JobSpec, v: &str) -> Result<BlockSizes, String> {
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
    if parts.len() > MAX_BSSPLIT {
        return Err(format!(
            "{} entries (at most {MAX_BSSPLIT}, as in fio)",
            parts.len()
        ));
    }
    // fio: entries without a weight share what is left.
    let given: u32 = parts.iter().map(|p| p.1).sum();
    let blanks = u32::try_from(parts.iter().filter(|p| p.1 == 0).count())
        .map_err(|_| "too many entries".to_string())?;
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

pub(crate) fn parse_distribution(v: &str) -> Result<Distribution, String> {
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
pub(crate) const FIO_ENGINES: &[&str] = &[
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
