//! The value parsers the option table shares: whole numbers in a range
//! (never truncated to a narrower type), percentages, sizes that fit a
//! u32, block-size splits, random distributions, and fio's engine names.
//! Each returns a [`ValueError`], a short reason; `crate::options::apply`
//! adds the option and its allowed values.

use crate::arith::ArithError;
use crate::spec::*;
use crate::spec_types::{split_per_dir, DIRECTIONS};
use crate::units::{parse_fio_size as parse_size, UnitError};

/// Why an option's value could not be read. The text is the reason the
/// user reads after the option's name.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    #[error(transparent)]
    Unit(#[from] UnitError),
    #[error(transparent)]
    Arith(#[from] ArithError),
    #[error("{0} is too large (at most 4 GiB - 1)")]
    OverU32(u64),
    #[error("'{0}' is not a whole number")]
    NotWhole(String),
    #[error("must be at least {lo}, not {n}")]
    Below { lo: u64, n: u64 },
    #[error("{value} is more than {hi}")]
    Above { value: String, hi: u64 },
    #[error("'{0}' is too large")]
    TooLarge(String),
    #[error("0 is not allowed")]
    Zero,
    #[error("'{0}' is not a number")]
    NotANumber(String),
    #[error("empty bssplit")]
    EmptyBssplit,
    #[error("{0} entries (at most {MAX_BSSPLIT}, as in fio)")]
    BssplitEntries(usize),
    #[error("too many entries")]
    TooManyEntries,
    #[error("the center of '{kind}' is {center}, outside 0 to 1 (fio: a share of the range)")]
    Center { kind: String, center: f64 },
    #[error("'sequence' needs block indices, e.g. sequence:2,0,1")]
    NoSequence,
    #[error("'{0}' is not a block index (allowed: 0, 1, 2, …)")]
    NotABlockIndex(String),
    #[error("a sequence of {0} block indices (allowed: at most 64, as fio)")]
    LongSequence(usize),
    #[error("zipf θ is {0} (allowed: > 0 and not 1, as in fio)")]
    Zipf(f64),
    #[error("pareto h is {0} (allowed: 0 < h < 1)")]
    Pareto(f64),
    #[error("normal deviation is {0} (allowed: 0 ≤ deviation < 100)")]
    Normal(f64),
    #[error("'{0}' needs zones, e.g. {0}:60/10:40/90")]
    NoZones(String),
    /// One direction's zones were wrong.
    #[error("{dir} zones: {err}")]
    DirZones {
        dir: &'static str,
        err: Box<ValueError>,
    },
    /// One `access/span` item was wrong.
    #[error("'{item}': {err}")]
    Zone { item: String, err: Box<ValueError> },
    #[error("more than {MAX_ZONES} zones (fio's limit)")]
    TooManyZones,
    #[error("the shares of the I/Os add up to {0}% (allowed: 100%)")]
    ZoneShares(u32),
    #[error("the zones cover {0}% of the region (allowed: at most 100%)")]
    ZoneSpans(u64),
    #[error("'{0}' is not a distribution")]
    NotADistribution(String),
    #[error("'{0}' is not a pattern")]
    NotAPattern(String),
    #[error("'{after}' after '{mode}:' must be 1 to {max} I/Os", max = u32::MAX)]
    RandomEvery { after: String, mode: String },
    #[error("'{0}' is not a file service type")]
    NotAFileService(String),
    #[error("'{0}' is not min-max")]
    NotARange(String),
}

impl From<ValueError> for String {
    fn from(e: ValueError) -> String {
        e.to_string()
    }
}

pub(crate) fn bytes_u32(kb_base: u64, v: &str) -> Result<u32, ValueError> {
    fits_u32(parse_size(v, kb_base)?)
}

pub(crate) fn fits_u32(b: u64) -> Result<u32, ValueError> {
    u32::try_from(b).map_err(|_| ValueError::OverU32(b))
}

/// Names separated by ':', where `\:` is a colon inside a name (fio's
/// `get_next_str`); empty names are skipped.
pub fn split_names(v: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub(crate) fn uint(v: &str) -> Result<u64, ValueError> {
    v.trim()
        .parse::<u64>()
        .map_err(|_| ValueError::NotWhole(v.to_string()))
}

/// A whole number in `lo..=hi` (never truncated to fit a narrower type).
pub(crate) fn ranged(v: &str, lo: u64, hi: u64) -> Result<u64, ValueError> {
    let n = uint(v)?;
    if n < lo {
        return Err(ValueError::Below { lo, n });
    }
    if n > hi {
        return Err(ValueError::Above {
            value: v.trim().to_string(),
            hi,
        });
    }
    Ok(n)
}

/// A whole number in `lo..=hi`, as a u32 (`hi` must fit).
pub(crate) fn ranged_u32(v: &str, lo: u32, hi: u32) -> Result<u32, ValueError> {
    let n = ranged(v, lo.into(), hi.into())?;
    u32::try_from(n).map_err(|_| ValueError::TooLarge(v.to_string()))
}

pub(crate) fn nonzero_u32(v: &str) -> Result<u32, ValueError> {
    ranged_u32(v, 1, u32::MAX).map_err(|e| match uint(v) {
        Ok(0) => ValueError::Zero,
        _ => e,
    })
}

pub(crate) fn percent(v: &str) -> Result<u32, ValueError> {
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
pub(crate) const MAX_LOG_AVG_MSEC: u64 = crate::arith::MAX_TIME_NS / 1_000_000;

/// fio's limit on bssplit entries.
pub(crate) const MAX_BSSPLIT: usize = 64;

/// One direction's `bssplit` (`size/percent:size/percent…`).
pub(crate) fn parse_bssplit(kb_base: u64, v: &str) -> Result<BlockSizes, ValueError> {
    let mut parts = Vec::new();
    for item in v.split(':').filter(|p| !p.is_empty()) {
        // fio: a size without '/' has no weight yet.
        let (b, w) = item.split_once('/').unwrap_or((item, ""));
        let b = bytes_u32(kb_base, b)?;
        let w = if w.is_empty() { 0 } else { percent(w)? };
        parts.push((b, w));
    }
    if parts.is_empty() {
        return Err(ValueError::EmptyBssplit);
    }
    if parts.len() > MAX_BSSPLIT {
        return Err(ValueError::BssplitEntries(parts.len()));
    }
    // fio: entries without a weight share what is left.
    let given: u32 = parts.iter().map(|p| p.1).sum();
    let blanks = u32::try_from(parts.iter().filter(|p| p.1 == 0).count())
        .map_err(|_| ValueError::TooManyEntries)?;
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

/// `val[:center]` after a distribution's name (fio's `split_parse_distr`).
fn dist_params(
    kind: &str,
    rest: Option<&str>,
    default: f64,
) -> Result<(f64, Option<f64>), ValueError> {
    let float = |p: &str| -> Result<f64, ValueError> {
        match crate::arith::float_expr(p) {
            Some(r) => Ok(r?),
            None => p
                .trim()
                .parse::<f64>()
                .map_err(|_| ValueError::NotANumber(p.to_string())),
        }
    };
    let Some(rest) = rest.filter(|r| !r.is_empty()) else {
        return Ok((default, None));
    };
    let (val, center) = match rest.split_once(':') {
        Some((v, c)) => (float(v)?, Some(float(c)?)),
        None => (float(rest)?, None),
    };
    if let Some(c) = center {
        if !(0.0..=1.0).contains(&c) {
            return Err(ValueError::Center {
                kind: kind.to_string(),
                center: c,
            });
        }
    }
    Ok((val, center))
}

/// fio's `random_distribution`: the distribution and its center.
pub(crate) fn parse_distribution(
    v: &str,
    bytes: &dyn Fn(&str) -> Result<u64, ValueError>,
) -> Result<(Distribution, Option<f64>), ValueError> {
    let (kind, rest) = match v.split_once(':') {
        Some((k, p)) => (k, Some(p)),
        None => (v, None),
    };
    match kind {
        "random" => Ok((Distribution::Random, None)),
        "sequence" => {
            let body = rest
                .filter(|r| !r.is_empty())
                .ok_or(ValueError::NoSequence)?;
            let list = body
                .split(',')
                .map(|x| {
                    x.trim()
                        .parse::<u64>()
                        .map_err(|_| ValueError::NotABlockIndex(x.to_string()))
                })
                .collect::<Result<Vec<u64>, ValueError>>()?;
            if list.len() > 64 {
                return Err(ValueError::LongSequence(list.len()));
            }
            Ok((Distribution::Sequence(list), None))
        }
        "zipf" => {
            let (t, c) = dist_params(kind, rest, 1.1)?;
            if !(t > 0.0 && t.is_finite()) || t == 1.0 {
                return Err(ValueError::Zipf(t));
            }
            Ok((Distribution::Zipf(t), c))
        }
        "pareto" => {
            let (h, c) = dist_params(kind, rest, 0.2)?;
            if !(h > 0.0 && h < 1.0) {
                return Err(ValueError::Pareto(h));
            }
            Ok((Distribution::Pareto(h), c))
        }
        "normal" | "gauss" => {
            let (d, c) = dist_params(kind, rest, 0.0)?;
            if !(0.0..100.0).contains(&d) {
                return Err(ValueError::Normal(d));
            }
            Ok((Distribution::Normal(d), c))
        }
        "zoned" | "zoned_abs" => {
            let absolute = kind == "zoned_abs";
            let body = rest.ok_or_else(|| ValueError::NoZones(kind.to_string()))?;
            let mut dirs: [Vec<Zone>; 3] = Default::default();
            for (d, piece) in split_per_dir(body, false).into_iter().enumerate() {
                if let Some(piece) = piece {
                    dirs[d] =
                        parse_zones(piece, absolute, bytes).map_err(|e| ValueError::DirZones {
                            dir: DIRECTIONS[d],
                            err: Box::new(e),
                        })?;
                }
            }
            Ok((
                if absolute {
                    Distribution::ZonedAbs(Box::new(dirs))
                } else {
                    Distribution::Zoned(Box::new(dirs))
                },
                None,
            ))
        }
        _ => Err(ValueError::NotADistribution(kind.to_string())),
    }
}

/// fio's limit on the zones of one direction.
const MAX_ZONES: usize = 256;

/// One direction's zones, `access/span:access/span…`, checked and filled
/// as fio's `zone_split_ddir` does: access shares must add up to 100; a
/// zone without a share of the region gets an equal part of what is left.
fn parse_zones(
    v: &str,
    absolute: bool,
    bytes: &dyn Fn(&str) -> Result<u64, ValueError>,
) -> Result<Vec<Zone>, ValueError> {
    let mut zones: Vec<(Option<u32>, Option<u64>)> = Vec::new();
    for item in v.split(':') {
        if item.is_empty() {
            break;
        }
        let (a, span) = match item.split_once('/') {
            Some((a, sp)) => (a, Some(sp)),
            None => (item, None),
        };
        let access = percent(a).map_err(|e| ValueError::Zone {
            item: item.to_string(),
            err: Box::new(e),
        })?;
        let span = match span.filter(|sp| !sp.is_empty()) {
            None => None,
            Some(sp) if absolute => Some(bytes(sp)?),
            Some(sp) => match uint(sp)? {
                0 => None,
                n => Some(n.min(100)),
            },
        };
        zones.push((Some(access), span));
        if zones.len() > MAX_ZONES {
            return Err(ValueError::TooManyZones);
        }
    }
    let access: u32 = zones.iter().filter_map(|z| z.0).sum();
    if access != 100 {
        return Err(ValueError::ZoneShares(access));
    }
    let (spans, missing) = zones.iter().fold((0u64, 0u64), |(t, m), z| match z.1 {
        Some(x) => (t + x, m),
        None => (t, m + 1),
    });
    if !absolute && spans > 100 {
        return Err(ValueError::ZoneSpans(spans));
    }
    Ok(zones
        .into_iter()
        .map(|(a, sp)| Zone {
            access_pct: a.unwrap_or(0),
            span: sp.unwrap_or(if absolute || missing == 0 {
                0
            } else {
                (100 - spans) / missing
            }),
        })
        .collect())
}

/// `rw=MODE[:N]`: the mode, and for a random mode a new random offset
/// every N I/Os, for a sequential one N bytes added to each offset (which
/// may be negative: `read:-8k` reads backwards).
pub(crate) fn parse_rw(v: &str, kb_base: u64) -> Result<(RwMode, u32, i64), ValueError> {
    let (mode, postfix) = match v.split_once(':') {
        Some((m, p)) => (m, Some(p)),
        None => (v, None),
    };
    let rw = match mode {
        "read" => RwMode::Read,
        "write" => RwMode::Write,
        "randread" => RwMode::RandRead,
        "randwrite" => RwMode::RandWrite,
        "rw" | "readwrite" => RwMode::ReadWrite,
        "randrw" => RwMode::RandRw,
        "trim" => RwMode::Trim,
        "randtrim" => RwMode::RandTrim,
        _ => return Err(ValueError::NotAPattern(mode.to_string())),
    };
    let Some(p) = postfix.filter(|p| !p.is_empty()) else {
        return Ok((rw, 1, 0));
    };
    if rw.is_random() {
        let n = crate::units::parse_size(p, kb_base)?;
        let n =
            u32::try_from(n)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| ValueError::RandomEvery {
                    after: p.to_string(),
                    mode: mode.to_string(),
                })?;
        Ok((rw, n, 0))
    } else {
        let (neg, mag) = match p.trim().strip_prefix('-') {
            Some(m) => (true, m),
            None => (false, p),
        };
        let b = crate::units::parse_size(mag, kb_base)?;
        let b = i64::try_from(b).map_err(|_| ValueError::TooLarge(p.to_string()))?;
        Ok((rw, 1, if neg { -b } else { b }))
    }
}

/// `file_service_type=TYPE[:N]` (or `:θ` for the skewed ones).
pub(crate) fn parse_file_service(v: &str) -> Result<(FileService, u32, Option<f64>), ValueError> {
    let (kind, rest) = match v.split_once(':') {
        Some((k, p)) => (k, Some(p)),
        None => (v, None),
    };
    let nr = || -> Result<u32, ValueError> {
        match rest.filter(|r| !r.is_empty()) {
            None => Ok(1),
            Some(r) => ranged_u32(r, 1, u32::MAX),
        }
    };
    let svc = match kind {
        "roundrobin" => (FileService::RoundRobin, nr()?, None),
        "sequential" => (FileService::Sequential, nr()?, None),
        "random" => (FileService::Random, nr()?, None),
        "zipf" | "pareto" | "normal" | "gauss" => {
            let no_bytes = |x: &str| Err(ValueError::NotANumber(x.to_string()));
            let (d, c) = parse_distribution(v, &no_bytes)?;
            let svc = match d {
                Distribution::Zipf(t) => FileService::Zipf(t),
                Distribution::Pareto(h) => FileService::Pareto(h),
                Distribution::Normal(dev) => FileService::Normal(dev),
                _ => unreachable!("a skewed distribution"),
            };
            (svc, 1, c)
        }
        _ => return Err(ValueError::NotAFileService(kind.to_string())),
    };
    Ok(svc)
}

/// A value for each direction, as fio splits it ([`split_per_dir`]);
/// directions the value leaves out keep `current`. The option table's
/// glue: the reason comes back as text, with the direction named when the
/// value gives several.
pub(crate) fn per_dir<T: Clone, E: Into<String>>(
    v: &str,
    other_separators: bool,
    current: [T; 3],
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<[T; 3], String> {
    let pieces = split_per_dir(v, other_separators);
    let several = pieces.windows(2).any(|w| w[0] != w[1]);
    let mut out = current;
    for (d, piece) in pieces.into_iter().enumerate() {
        if let Some(p) = piece {
            out[d] = parse(p).map_err(|e| {
                let e: String = e.into();
                if several {
                    format!("{}: {e}", DIRECTIONS[d])
                } else {
                    e
                }
            })?;
        }
    }
    Ok(out)
}

/// Whether `v` is a size in zones (`8z`, fio's zonemode=zbd unit): if so,
/// `offset` and `size` keep the count until the run knows the zone size
/// ([`crate::spec_zbd::ZbdOptions`]); the other options refuse it.
pub(crate) fn refused_in_zones(s: &mut JobSpec, opt: &str, v: &str) -> bool {
    let prefix = format!("{opt}=");
    s.refused.retain(|r| !r.starts_with(&prefix));
    let zones = v
        .trim()
        .strip_suffix(['z', 'Z'])
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        .and_then(|n| n.parse::<u64>().ok());
    let slot = match opt {
        "offset" => Some(&mut s.zbd.offset_zones),
        "size" => Some(&mut s.zbd.size_zones),
        "io_size" => Some(&mut s.zbd.io_size_zones),
        _ => None,
    };
    match (slot, zones) {
        (Some(slot), z) => *slot = z,
        (None, Some(_)) => s.refused.push(format!(
            "{opt}={v}: sizes in zones are for offset, size and io_size (with zonemode=zbd)"
        )),
        (None, None) => {}
    }
    zones.is_some()
}

/// The block sizes of each direction.
pub(crate) fn bs_dirs(bs: &BlockSizes) -> [BlockSizes; 3] {
    std::array::from_fn(|d| bs.for_dir(d).clone())
}

/// `a-b` or `a:b` (fio swaps a reversed range).
pub(crate) fn parse_range(v: &str, kb: u64) -> Result<(u64, u64), ValueError> {
    let (a, b) = v
        .split_once('-')
        .or_else(|| v.split_once(':'))
        .ok_or_else(|| ValueError::NotARange(v.to_string()))?;
    let (a, b) = (parse_size(a, kb)?, parse_size(b, kb)?);
    Ok((a.min(b), a.max(b)))
}

/// fio's other engines: parsed, and a job that names one is refused when it
/// would run (fio 3.33's engines, and `page_fault`, a later one). The ones
/// ssdready runs are in [`crate::engines::all`] instead (a test checks
/// that none is in both).
pub(crate) const FIO_ENGINES: &[&str] = &[
    "libzbc",
    "page_fault",
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "rbd",
    "http",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "mtd",
    "pmemblk",
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
    "windowsaio",
    "solarisaio",
    "guasi",
    "external",
    "spdk",
];
