//! The limits every emulator key is checked against, below the parameters
//! and their errors: the integer keys' ranges ([`int_limit`]), the FTL's
//! and the timing model's bounds, the keys `Params::set` takes, the zone
//! size a zoned device defaults to and the presets' names. The errors
//! ([`super::error`]) name them, the checks ([`crate::geometry`]) apply them.

/// The FTL addresses pages with 32-bit numbers (`u32::MAX` means "none").
pub const MAX_PAGES: u64 = u32::MAX as u64 - 1;
/// At most this many dies (per-die state is kept for each).
pub const MAX_DIES: u64 = 65_536;
/// Per-operation times (NAND, controller, DRAM, host) are at most 1 s.
pub const MAX_OP_NS: u64 = 1_000_000_000;
/// The transfer rates (MB/s), when not 0 (no transfer time).
pub const RATE_MBPS: (f64, f64) = (1.0, 10_000_000.0);
/// Over-provisioning: physical capacity is at most 101 × logical.
pub const MAX_OP: f64 = 100.0;
/// Page types with their own program time (SLC 1 … QLC 4).
pub const MAX_PAGE_TYPES: usize = 4;

/// Integer keys: (key, smallest, largest).
const INT_LIMITS: &[(&str, u64, u64)] = &[
    ("channels", 1, 4096),
    ("dies_per_channel", 1, 4096),
    ("pages_per_block", 2, 65_536),
    ("page_bytes", 512, 1 << 20),
    ("read_ns", 0, MAX_OP_NS),
    ("program_ns", 0, MAX_OP_NS),
    ("erase_ns", 0, MAX_OP_NS),
    ("fw_cmd_ns", 0, MAX_OP_NS),
    ("fw_per_4k_ns", 0, MAX_OP_NS),
    ("fw_units", 1, 1024),
    ("cmd_slots", 0, 65_536),
    ("write_buffer", 0, 1 << 40),
    ("dram_cmd_ns", 0, MAX_OP_NS),
    ("dram_per_4k_ns", 0, MAX_OP_NS),
    ("gc_bg_free", 0, u32::MAX as u64),
    ("gc_fg_free", 1, u32::MAX as u64),
    ("coalesce_n", 0, 65_536),
    ("coalesce_us", 0, MAX_OP_NS / 1000),
    ("host_ns", 0, MAX_OP_NS),
    ("flash_page_bytes", 512, 1 << 20),
    ("planes", 1, 16),
    ("flash_block_bytes", 0, 1 << 30),
    ("slc_program_ns", 0, MAX_OP_NS),
    ("suspend_ns", 0, MAX_OP_NS),
    ("resume_ns", 0, MAX_OP_NS),
    ("suspend_max", 0, 1024),
    ("cmd_bytes", 0, 1 << 20),
    ("extent_bytes", 0, 1 << 20),
    ("extent_ns", 0, MAX_OP_NS),
    ("cpl_ns", 0, MAX_OP_NS),
    ("iface_depth", 0, 65_536),
    ("queues", 1, 65_535),
    ("host_cmd_ns", 0, MAX_OP_NS),
    ("irq_ns", 0, MAX_OP_NS),
    ("wake_ns", 0, MAX_OP_NS),
];

/// The allowed range of integer key `key`, if it has one.
pub fn int_limit(key: &str) -> Option<(u64, u64)> {
    INT_LIMITS
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|&(_, lo, hi)| (lo, hi))
}

/// The keys `Params::set` takes, for its error on an unknown one.
pub const ALLOWED_KEYS: &str = "size, op, channels, dies_per_channel, pages_per_block, \
                     page_bytes, read_ns, program_ns, erase_ns, flash_page_bytes, flash_block_bytes, planes, slc_cache, slc_program_ns, \
                     suspend_ns, resume_ns, suspend_max, channel_mbps, link_mbps, fw_cmd_ns, fw_per_4k_ns, \
                     fw_units, cmd_slots, write_buffer, dram, dram_cmd_ns, dram_per_4k_ns, gc, gc_bg_free, gc_fg_free, \
                     completion, coalesce_n, coalesce_us, nocopy, host_ns, cmd_bytes, extent_bytes, extent_ns, \
                     cpl_ns, iface_depth, queues, host_cmd_ns, irq_ns, wake_ns, service, and the fault_ keys: fault_read_error_rate, \
                     fault_read_error_at, fault_retry_rate, fault_write_error_rate, fault_corrupt_rate, fault_retries, \
                     fault_retry_ns, fault_seed; stalls: stall_every, stall_ns; zoned: zoned, zone_size, zone_capacity, max_open_zones, max_active_zones, read_beyond_wp";

/// Default zone size: 256 MiB, a host-managed SMR disk's.
pub const DEFAULT_ZONE_SIZE: u64 = 256 << 20;

/// (name, one-line description) of every preset.
pub const PRESETS: &[(&str, &str)] = &[
    ("x25e", "2009 SATA SLC drive, Intel X25-E class: ~35K read IOPS, ~3.3K sustained random-write IOPS, 250/170 MB/s"),
    ("iodrive", "2009 PCIe flash card, Fusion-io ioDrive class: ~100K read IOPS saturating at QD 4, 700/550 MB/s"),
    ("dram-ssd", "DRAM SSD, Jetspeed class: 7-8 us per 4 KiB read or write, 700 MB/s, no flash, no GC"),
    ("nvme-tlc", "current PCIe 4 TLC client drive, Samsung 980 PRO 1 TB class (calibrated): 16 dies x 4 planes, 16 KiB pages, SLC cache; ~7 GB/s reads, ~1M read IOPS, ~5.5 GB/s writes in cache, ~2 GB/s after"),
    ("dc-tlc", "PCIe 4 enterprise TLC drive, Samsung PM9A3 U.2 class (calibrated): 6.5 GB/s reads, 900K read IOPS, 3.5 GB/s writes, ~200K sustained random-write IOPS, no SLC cache"),
    ("qlc-sata", "SATA QLC drive, Samsung 870 QVO 1 TB class (calibrated): 560/530 MB/s, ~95K IOPS, 42 GB-per-TB SLC cache, 80 MB/s writes after it"),
    ("optane", "3D XPoint drive, Intel Optane P4800X class (calibrated): 8.9 us at QD 1, ~530K read and write IOPS, 2.2 GB/s, no GC"),
    ("nvm-lowlat", "generic low-latency NVM drive: ~10 us at QD 1, ~700K IOPS, no GC (calibrated Optane: optane)"),
    ("null", "zero-latency device: measures the emulator and the host, nothing else"),
];
