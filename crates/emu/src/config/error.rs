//! Why an emulator target's parameters are refused: [`ParamError`], one
//! variant per check, each carrying the key and the values it names. Its
//! text is one line that names the key and the allowed values. Below the
//! parameters: it names only the limits ([`super::limits`]).

use super::limits::{
    int_limit, ALLOWED_KEYS, DEFAULT_ZONE_SIZE, MAX_DIES, MAX_OP, MAX_PAGES, MAX_PAGE_TYPES,
    PRESETS, RATE_MBPS,
};
use std::path::PathBuf;

/// An emulator parameter, a device file or a whole device refused.
#[derive(Debug, thiserror::Error)]
pub enum ParamError {
    // One key's value, as written.
    #[error("emulator parameter '{key}': '{value}' is not a whole number")]
    NotWhole { key: String, value: String },
    #[error("emulator parameter '{key}': '{value}' is not a whole number (0: no limit)")]
    NotCount { key: String, value: String },
    #[error("emulator parameter '{key}': '{value}' is not a number")]
    NotNumber { key: String, value: String },
    #[error(
        "emulator parameter '{key}': '{value}' is not a probability (allowed: 0 to 1, e.g. 1e-4)"
    )]
    NotProbability { key: String, value: String },
    /// A size, time or boolean the units parser refused (`why` says why).
    #[error("emulator parameter '{key}': {why}")]
    Unit {
        key: String,
        why: ssdready_core::units::UnitError,
    },
    /// A `fault_read_error_at` range the size parser refused.
    #[error("emulator parameter '{key}': {why} (allowed: OFFSET[+LEN]:…, e.g. 1m+4k:2g)")]
    Range {
        key: String,
        why: ssdready_core::units::UnitError,
    },
    /// A value not among the key's choices.
    #[error("emulator parameter '{key}': '{value}' (allowed: {allowed})")]
    Choice {
        key: String,
        value: String,
        allowed: &'static str,
    },
    /// An integer outside the key's limits (those of
    /// [`super::limits::int_limit`], when it has some).
    #[error("emulator parameter '{key}': {value} is out of range{}", limits(.key))]
    OutOfRange { key: String, value: u64 },
    /// A number outside the range `allowed` states.
    #[error("emulator parameter '{key}': {value} (allowed: {allowed})")]
    NotAllowed {
        key: String,
        value: u64,
        allowed: String,
    },
    #[error("emulator parameter '{key}': {ns} ns is out of range (allowed: 0 to 1 s)")]
    TimeOver1s { key: String, ns: u64 },
    #[error(
        "emulator parameter '{key}': {count} page types (allowed: 1 to {MAX_PAGE_TYPES}, e.g. 190us/386us/996us)"
    )]
    PageTypesWritten { key: String, count: usize },
    #[error("unknown emulator preset '{name}' (allowed: {})", preset_names())]
    UnknownPreset { name: String },
    #[error("'{text}' is not key=value")]
    NotKeyValue { text: String },
    #[error("unknown emulator parameter '{key}' (allowed: {})", ALLOWED_KEYS)]
    UnknownKey { key: String },

    // A device file.
    /// The file could not be read, or its TOML is refused.
    #[error("emulator device file {}: {why}", .path.display())]
    DeviceFile { path: PathBuf, why: DeviceFileError },
    /// TOML that does not parse (its message on one line).
    #[error("{0}")]
    Toml(String),
    #[error(
        "unknown emulator preset '{name}' in key 'preset' (allowed: {})",
        preset_names()
    )]
    TomlPreset { name: String },
    #[error("key 'preset': {value} is not a preset name (a string, e.g. preset = \"nvme-tlc\")")]
    TomlPresetKind { value: String },
    #[error("key '{key}': a {kind} (allowed: a number, a string or a boolean)")]
    TomlValueKind { key: String, kind: &'static str },

    // The whole device.
    #[error(
        "emulator parameter 'service': exp applies to DRAM-mode units (dram=1, e.g. the \
         dram-ssd and nvm-lowlat presets); a NAND device's times come from its flash model"
    )]
    ExpNeedsDram,
    #[error(
        "emulator: channels × dies_per_channel = {channels} × {dies_per_channel} = {dies} dies (allowed: at most {MAX_DIES})"
    )]
    TooManyDies {
        channels: u32,
        dies_per_channel: u32,
        dies: u64,
    },
    #[error(
        "emulator parameter 'size': {size} B does not hold one page of page_bytes={page_bytes} B"
    )]
    SizeBelowPage { size: u64, page_bytes: u32 },
    #[error(
        "emulator parameter 'program_ns': {count} page types (allowed: 1 to {MAX_PAGE_TYPES})"
    )]
    PageTypes { count: usize },
    #[error(
        "emulator parameter 'page_bytes': {page_bytes} is not a power of two (allowed: 512, 1k, 2k, … 1m)"
    )]
    PageNotPowerOfTwo { page_bytes: u32 },
    #[error(
        "emulator parameter '{key}': {value:?} is out of range (allowed: 0 for no transfer time, or {} to {} MB/s)",
        RATE_MBPS.0,
        RATE_MBPS.1
    )]
    Rate { key: &'static str, value: f64 },
    #[error(
        "emulator parameter 'slc_cache': {value:?} is out of range (allowed: 0 to 1, or 0% to 100%, a share of the size)"
    )]
    SlcCache { value: f64 },
    #[error(
        "emulator parameter 'op': {value:?} is out of range (allowed: 0 to {MAX_OP:?}, a fraction of the logical size)"
    )]
    Op { value: f64 },
    #[error(
        "emulator parameter 'flash_page_bytes': {flash_page_bytes} (allowed: a power of two, at least page_bytes={page_bytes}; \
         the NAND page holds whole mapping units)"
    )]
    FlashPage {
        flash_page_bytes: u32,
        page_bytes: u32,
    },
    #[error(
        "emulator parameter 'pages_per_block': {pages_per_block} is not a whole number of program units of {unit} pages \
         (planes={planes} × flash_page_bytes={flash_page_bytes} / page_bytes={page_bytes}); allowed: multiples of {unit}"
    )]
    ProgramUnit {
        pages_per_block: u32,
        unit: u64,
        planes: u32,
        flash_page_bytes: u32,
        page_bytes: u32,
    },
    #[error(
        "emulator parameter 'op': must be > 0 for a flash device (set dram=1 for a device without GC)"
    )]
    NoSpareArea,
    #[error(
        "emulator parameter 'size': {size} B is {logical} pages of {page_bytes} B; the FTL maps at most {MAX_PAGES} \
         (allowed: up to {} B at this page_bytes; raise page_bytes or lower size)",
        max_bytes(.page_bytes)
    )]
    TooManyPages {
        size: u64,
        logical: u64,
        page_bytes: u32,
    },
    #[error(
        "emulator: size={size} with op={op} is more than the FTL's {MAX_PAGES} physical pages; lower size or op"
    )]
    TooManyPhysicalPages { size: u64, op: f64 },
    #[error(
        "emulator: each of the {dies} dies must hold {die_share} pages of data but can keep at most {die_limit} valid while GC \
         still frees blocks ({blocks_per_die} blocks of {pages_per_block} pages, less the host and GC write frontiers and gc_fg_free={gc_fg_free}); \
         raise size or op, or lower pages_per_block, gc_fg_free or the number of dies"
    )]
    DieOverfull {
        dies: u32,
        die_share: u64,
        die_limit: u64,
        blocks_per_die: u32,
        pages_per_block: u32,
        gc_fg_free: u32,
    },
    #[error(
        "emulator parameter 'gc_bg_free': {gc_bg_free} is out of range (allowed: 0 to {blocks_per_die}, the blocks per die)"
    )]
    GcBgFree {
        gc_bg_free: u32,
        blocks_per_die: u32,
    },
    #[error(
        "emulator: {blocks_per_die} blocks per die leave no spare area once GC keeps {reserved} free \
         (spare factor {alpha:.3}, at least 1.005); raise size or op, or lower pages_per_block, \
         gc_bg_free or the number of dies"
    )]
    SpareFactor {
        blocks_per_die: u32,
        reserved: u32,
        alpha: f64,
    },
    #[error(
        "emulator parameter 'stall_ns': a stall needs 'stall_every' (the time from one \
         stall's start to the next, e.g. stall_every=20ms)"
    )]
    StallWithoutEvery,
    #[error(
        "emulator parameter 'stall_ns': {len_ns} ns is not shorter than stall_every ({every_ns} ns) \
         (allowed: less, or the device would never work)"
    )]
    StallTooLong { len_ns: u64, every_ns: u64 },
    #[error(
        "emulator parameter '{key}': 0 is not a zone size (allowed: a positive size \
         such as 64m; leave it out for the default, {} MiB)",
        DEFAULT_ZONE_SIZE >> 20
    )]
    ZeroZoneSize { key: String },
    #[error("emulator parameter 'zoned': zoned mode needs a flash device (dram=0)")]
    ZonedNeedsFlash,
    #[error(
        "emulator parameter 'zone_size': {zone_size} B (allowed: a multiple of page_bytes={page_bytes} up to the device's {device} B)"
    )]
    ZoneSize {
        zone_size: u64,
        page_bytes: u64,
        device: u64,
    },
    #[error(
        "emulator parameter 'zone_capacity': {capacity} B (allowed: a multiple of page_bytes={page_bytes} up to zone_size={zone_size})"
    )]
    ZoneCapacity {
        capacity: u64,
        page_bytes: u64,
        zone_size: u64,
    },
    #[error(
        "emulator parameter '{key}': {value} (allowed: 0 (no limit) to the device's {zones} zones)"
    )]
    ZoneLimit {
        key: &'static str,
        value: u32,
        zones: u64,
    },
    #[error(
        "emulator parameter 'max_open_zones': {open} is above max_active_zones={active} (an open zone is active)"
    )]
    OpenAboveActive { open: u32, active: u32 },
}

/// Why a device file could not be used (after its path).
#[derive(Debug, thiserror::Error)]
pub enum DeviceFileError {
    #[error("{0}")]
    Io(std::io::Error),
    #[error("not a regular file (allowed: a TOML file of emulator parameters)")]
    NotRegular,
    #[error("larger than 1 MiB (a drive has a few dozen keys)")]
    TooLarge,
    #[error("not UTF-8 text (allowed: a TOML file)")]
    NotUtf8,
    /// Its keys are refused.
    #[error("{0}")]
    Content(Box<ParamError>),
}

/// `key = value` outside the key's range.
pub(crate) fn out_of_range(key: &str, value: u64) -> ParamError {
    ParamError::OutOfRange {
        key: key.into(),
        value,
    }
}

/// ` (allowed: LO to HI)` for a key with limits.
fn limits(key: &str) -> String {
    match int_limit(key) {
        Some((lo, hi)) => format!(" (allowed: {lo} to {hi})"),
        None => String::new(),
    }
}

/// The most bytes the FTL maps at `page_bytes`.
fn max_bytes(page_bytes: &u32) -> u64 {
    MAX_PAGES * u64::from(*page_bytes)
}

fn preset_names() -> String {
    PRESETS.iter().map(|p| p.0).collect::<Vec<_>>().join(", ")
}
