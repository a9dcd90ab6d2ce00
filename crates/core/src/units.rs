//! Parsing of fio-style numbers: sizes with k/m/g/t suffixes (base 1024 unless
//! `kb_base=1000`), times with us/ms/s/m/h suffixes, CPU lists and booleans.
//! Sizes and times may also be fio's parenthesised expressions
//! (`arith`).
//!
//! Every parser returns a [`UnitError`], whose text is a short reason; the
//! caller (the option table) adds the option name and the allowed values.

pub use crate::arith::ArithError;
use crate::arith::MAX_TIME_NS;

/// Why a size, time, boolean or CPU list could not be read. The text is the
/// reason the user reads after the option's name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("empty size")]
    EmptySize,
    #[error("'{0}' is not a size")]
    NotASize(String),
    #[error("'{value}' has an unknown size suffix '{suffix}'")]
    SizeSuffix { value: String, suffix: String },
    #[error("'{0}' is too large")]
    TooLarge(String),
    #[error("'{0}' is not a time")]
    NotATime(String),
    #[error("'{value}' has an unknown time suffix '{suffix}'")]
    TimeSuffix { value: String, suffix: String },
    #[error("'{0}' is too long (at most 100 years)")]
    TooLong(String),
    /// `2*1g`: fio reads only the leading number; `trimmed` is the value
    /// to put in parentheses.
    #[error("'{value}' is arithmetic without parentheses, of which fio reads only the leading number (write it as ({trimmed}))")]
    Unparenthesised { value: String, trimmed: String },
    #[error("'{0}' is not a boolean")]
    NotABoolean(String),
    #[error("'{0}' is not a CPU number or range")]
    NotACpu(String),
    #[error("'{0}' is not a valid CPU range")]
    CpuRange(String),
    #[error("empty CPU list")]
    EmptyCpuList,
    #[error(transparent)]
    Arith(#[from] ArithError),
}

impl From<UnitError> for String {
    fn from(e: UnitError) -> String {
        e.to_string()
    }
}

fn unparenthesised(s: &str, t: &str) -> UnitError {
    UnitError::Unparenthesised {
        value: s.to_string(),
        trimmed: t.to_string(),
    }
}

/// Parse a size such as `4k`, `1M`, `512`, `2GiB`, `1.5m`. `kb_base` is 1024 or
/// 1000 and applies to plain suffixes (`k`); `KiB`-style suffixes are always
/// base 1024 and `kB`-style suffixes with `kb_base=1024` follow fio's
/// convention (they mean 1024 too).
pub fn parse_size(s: &str, kb_base: u64) -> Result<u64, UnitError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(UnitError::EmptySize);
    }
    if let Some(v) = crate::arith::size_expr(t) {
        return Ok(v?);
    }
    if crate::arith::unparenthesised(t) {
        return Err(unparenthesised(s, t));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(UnitError::NotASize(s.to_string()));
    }
    let lower = suffix.trim().to_ascii_lowercase();
    let pow = match lower.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 1,
        "m" => 2,
        "g" => 3,
        "t" => 4,
        "p" => 5,
        _ => {
            return Err(UnitError::SizeSuffix {
                value: s.to_string(),
                suffix: suffix.to_string(),
            })
        }
    };
    let base: u64 = if lower.ends_with("ib") { 1024 } else { kb_base };
    let mult = base
        .checked_pow(pow)
        .ok_or_else(|| UnitError::TooLarge(s.to_string()))?;
    if num.contains('.') {
        let v: f64 = num
            .parse()
            .map_err(|_| UnitError::NotASize(s.to_string()))?;
        let r = v * mult as f64;
        if !(r.is_finite() && r < u64::MAX as f64) {
            return Err(UnitError::TooLarge(s.to_string()));
        }
        Ok(r.round() as u64)
    } else {
        let v: u64 = num
            .parse()
            .map_err(|_| UnitError::NotASize(s.to_string()))?;
        v.checked_mul(mult)
            .ok_or_else(|| UnitError::TooLarge(s.to_string()))
    }
}

/// Parse a size as fio reads one in a job option: [`parse_size`]'s
/// numbers and expressions, with fio's suffix rules (`get_mult_bytes` in
/// fio's parse.c). A suffix is read by its first letters, case ignored:
/// `k`, `kb` and `ki` multiply by `kb_base`; the IEC forms `kib` … `pib`
/// multiply by 1024 when `kb_base=1000` and, in fio's default
/// compatibility mode (`kb_base=1024`), by 1000 — fio documents this
/// inversion ("power-of-10 values with IEC prefixes") and ssdready keeps it,
/// so that a job means the same bytes to both. A colon list (`1g:2g`) is
/// read as fio reads it for a single-valued option: each element must be a
/// size and the last one is the value.
pub fn parse_fio_size(s: &str, kb_base: u64) -> Result<u64, UnitError> {
    let t = s.trim();
    if t.contains(':') && !t.starts_with('(') {
        let mut last = Err(UnitError::NotASize(s.to_string()));
        for part in t.split(':') {
            last = Ok(parse_fio_size(part, kb_base)?);
        }
        return last;
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let lower = suffix.trim().to_ascii_lowercase();
    let iec = lower.len() == 3 && lower.ends_with("ib");
    if num.is_empty() || t.starts_with('(') || !iec {
        // `ki`, `mi`, … are fio's SI-path spellings: the letter decides.
        let plain = match lower.as_str() {
            l if l.len() == 2 && l.ends_with('i') && !l.starts_with('i') => {
                format!("{num}{}", &l[..1])
            }
            _ => t.to_string(),
        };
        return parse_size(&plain, kb_base);
    }
    let base = if kb_base == 1000 { 1024 } else { 1000 };
    parse_size(&format!("{num}{}", &lower[..1]), base)
}

/// Parse a duration into nanoseconds. A bare number is in `default_unit_ns`
/// (fio: seconds for runtime/ramp_time, microseconds for thinktime). At most
/// `MAX_TIME_NS` (a hundred years).
pub fn parse_time_ns(s: &str, default_unit_ns: u64) -> Result<u64, UnitError> {
    let t = s.trim();
    if let Some(v) = crate::arith::time_expr(t, default_unit_ns) {
        return Ok(v?);
    }
    if crate::arith::unparenthesised(t) {
        return Err(unparenthesised(s, t));
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    if num.is_empty() {
        return Err(UnitError::NotATime(s.to_string()));
    }
    let unit: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" => default_unit_ns,
        "ns" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => {
            return Err(UnitError::TimeSuffix {
                value: s.to_string(),
                suffix: suffix.to_string(),
            })
        }
    };
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError::NotATime(s.to_string()))?;
    let r = v * unit as f64;
    if !(r.is_finite() && r <= MAX_TIME_NS as f64) {
        return Err(UnitError::TooLong(s.to_string()));
    }
    Ok(r.round() as u64)
}

/// fio booleans: `1`/`0`, also `true`/`false`, `yes`/`no`, `on`/`off`.
pub fn parse_bool(s: &str) -> Result<bool, UnitError> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(UnitError::NotABoolean(s.to_string())),
    }
}

/// CPUs written as the kernel writes a CPU list (`0-3,6,8-9`), sorted and
/// without repeats; empty for none. The inverse of [`parse_cpu_list`].
pub fn fmt_cpu_list(cpus: impl IntoIterator<Item = usize>) -> String {
    let mut v: Vec<usize> = cpus.into_iter().collect();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

/// (year, month 1-12, day 1-31) of a day counted from 1970-01-01 (Howard
/// Hinnant's civil_from_days), for UTC dates without a date crate.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m as u32, d as u32)
}

/// Days from 1970-01-01 of a (year, month 1-12, day 1-31) date, the inverse
/// of [`civil_from_days`] (Howard Hinnant's days_from_civil).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A CPU list such as `0-3,6,8-9`.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, UnitError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a, b),
            None => (part, part),
        };
        let a: usize = a
            .parse()
            .map_err(|_| UnitError::NotACpu(part.to_string()))?;
        let b: usize = b
            .parse()
            .map_err(|_| UnitError::NotACpu(part.to_string()))?;
        if b < a || b > 4095 {
            return Err(UnitError::CpuRange(part.to_string()));
        }
        out.extend(a..=b);
    }
    if out.is_empty() {
        return Err(UnitError::EmptyCpuList);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The kernel's octal escapes (`\040` for a space, `\134` for a
/// backslash) undone, as `/proc/*/mountinfo` and `/proc/mounts` write a
/// path; a backslash not followed by three octal digits is kept.
pub fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (b[i], oct) {
            (b'\\', Some(d)) => {
                let v = d.iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
                out.push(v as u8);
                i += 4;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Format a byte count with a binary unit that fits (`4.00 KiB`).
pub fn fmt_bytes(v: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = v;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} {}", UNITS[0])
    } else {
        format!("{v:.2} {}", UNITS[i])
    }
}

/// Format nanoseconds with a unit that fits (`812 ns`, `18.2 µs`, `1.52 ms`).
pub fn fmt_ns(ns: f64) -> String {
    if ns < 1_000.0 {
        format!("{ns:.0} ns")
    } else if ns < 1_000_000.0 {
        format!("{:.2} µs", ns / 1e3)
    } else if ns < 1_000_000_000.0 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// Format a rate with a decimal prefix (`312.4K`, `1.20M`).
pub fn fmt_count(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1}K", v / 1e3)
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio_suffixes() {
        assert_eq!(parse_size("4k", 1024).unwrap(), 4096);
        assert_eq!(parse_size("4K", 1000).unwrap(), 4000);
        assert_eq!(parse_size("4KiB", 1000).unwrap(), 4096);
        assert_eq!(parse_size("1m", 1024).unwrap(), 1 << 20);
        assert_eq!(parse_size("2g", 1024).unwrap(), 2 << 30);
        assert_eq!(parse_size("512", 1024).unwrap(), 512);
        assert_eq!(parse_size("1.5k", 1024).unwrap(), 1536);
        assert!(parse_size("4q", 1024).is_err());
        assert!(parse_size("k", 1024).is_err());
        assert!(parse_size("", 1024).is_err());
        assert!(parse_size("99999999999999999999", 1024).is_err());
    }

    #[test]
    fn fio_sizes_follow_fios_suffix_rules() {
        // Measured with fio 3.33 (null engine, io_bytes): 1Mi = 1048576,
        // 1MiB = 1000000 by default; with kb_base=1000 the other way round.
        assert_eq!(parse_fio_size("1Mi", 1024).unwrap(), 1 << 20);
        assert_eq!(parse_fio_size("1MiB", 1024).unwrap(), 1_000_000);
        assert_eq!(parse_fio_size("1MiB", 1000).unwrap(), 1 << 20);
        assert_eq!(parse_fio_size("1Mi", 1000).unwrap(), 1_000_000);
        assert_eq!(parse_fio_size("4KiB", 1000).unwrap(), 4096);
        assert_eq!(parse_fio_size("4k", 1024).unwrap(), 4096);
        assert_eq!(parse_fio_size("4KB", 1024).unwrap(), 4096);
        assert_eq!(parse_fio_size("2Gi", 1024).unwrap(), 2 << 30);
        assert_eq!(parse_fio_size("1Ti", 1024).unwrap(), 1 << 40);
        assert_eq!(parse_fio_size("1m:2m", 1024).unwrap(), 2 << 20);
        assert_eq!(parse_fio_size("2m:1m", 1024).unwrap(), 1 << 20);
        assert_eq!(parse_fio_size("(4*1k)", 1024).unwrap(), 4096);
        assert!(parse_fio_size("1m:x", 1024).is_err());
        assert!(parse_fio_size("4q", 1024).is_err());
        assert!(parse_fio_size("4ii", 1024).is_err());
    }

    #[test]
    fn times_default_to_the_given_unit() {
        assert_eq!(parse_time_ns("10", 1_000_000_000).unwrap(), 10_000_000_000);
        assert_eq!(parse_time_ns("10s", 1).unwrap(), 10_000_000_000);
        assert_eq!(parse_time_ns("250ms", 1).unwrap(), 250_000_000);
        assert_eq!(parse_time_ns("5us", 1).unwrap(), 5_000);
        assert_eq!(parse_time_ns("2m", 1).unwrap(), 120_000_000_000);
        assert!(parse_time_ns("10y", 1).is_err());
        assert!(parse_time_ns("36501d", 1).is_err());
        assert!(parse_time_ns("36499d", 1).is_ok());
        assert!(parse_time_ns("99999999999999999999", 1_000_000_000).is_err());
        for bad in ["-1", "nan", "inf", "1e400", "", ".", "1..2s"] {
            assert!(parse_time_ns(bad, 1).is_err(), "{bad}");
        }
    }

    #[test]
    fn civil_dates_of_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_414), (2025, 11, 22));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        for days in [-800_000, -1, 0, 11_016, 20_414, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn cpu_lists_print_as_the_kernel_writes_them() {
        assert_eq!(fmt_cpu_list([3, 0, 1, 2, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(fmt_cpu_list([5, 5]), "5");
        assert_eq!(fmt_cpu_list([]), "");
        let v = parse_cpu_list("0-3,6,8-9").unwrap();
        assert_eq!(fmt_cpu_list(v), "0-3,6,8-9");
    }

    #[test]
    fn cpu_lists_expand_ranges() {
        assert_eq!(parse_cpu_list("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }

    #[test]
    fn the_kernels_octal_escapes_are_undone_and_a_lone_backslash_kept() {
        assert_eq!(unescape_octal("/mnt/a\\040b\\011c"), "/mnt/a b\tc");
        assert_eq!(unescape_octal("x\\134y"), "x\\y");
        assert_eq!(unescape_octal("x\\9y\\04"), "x\\9y\\04");
        assert_eq!(unescape_octal("\\777"), "\u{fffd}");
    }
}
