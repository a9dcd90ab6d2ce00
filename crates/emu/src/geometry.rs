//! Checked geometry: every emulator key within its range (the ranges are
//! [`crate::config::limits`]), and the counts derived from them (dies, pages, blocks, the pages a die may hold),
//! computed without overflow. [`crate::config::Params::check`] calls
//! [`check`]; a device that passes can be modelled: its page numbers fit the
//! FTL's 32-bit maps, its times and sizes cannot overflow the timing model,
//! and garbage collection can always free a block (see [`Geometry::die_limit`]).
//!
//! Why each die needs room beyond its share of the data: the FTL keeps two
//! write frontiers per die (host writes and GC copies, each an open block)
//! and foreground GC keeps `gc_fg_free` blocks free. When a die is down to
//! `gc_fg_free` free blocks and every other block is full of valid data, no
//! victim would free anything. A die holding fewer than
//! `(blocks_per_die − gc_fg_free − 2) × pages_per_block` valid pages always
//! has a full block with an invalid page, so GC always makes progress; the
//! FTL keeps every die under that limit, and a device whose share of data
//! per die does not fit under it is refused here.

use crate::config::error::{out_of_range, ParamError};
use crate::config::limits::{int_limit, MAX_DIES, MAX_OP, MAX_PAGES, MAX_PAGE_TYPES, RATE_MBPS};
use crate::config::params::Params;

/// Counts derived from valid [`Params`] of a flash device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub dies: u32,
    pub logical_pages: u64,
    pub blocks_per_die: u32,
    pub pages_per_block: u32,
    pub physical_pages: u64,
    /// Logical pages per die if the data is spread evenly: ⌈logical / dies⌉.
    pub die_share: u64,
    /// Valid pages a die may hold while GC can still free a block: its
    /// pages less the two write frontiers and the `gc_fg_free` free blocks
    /// (module docs). 0 when the die is too small for even those.
    pub die_limit: u64,
}

impl Geometry {
    /// The geometry of `p`, without overflow; `None` when a count does not
    /// fit (the caller reports why, through [`check`]).
    pub fn of(p: &Params) -> Option<Geometry> {
        let dies = u64::from(p.channels).checked_mul(u64::from(p.dies_per_channel))?;
        if dies == 0 || p.page_bytes == 0 || p.pages_per_block == 0 || !p.op.is_finite() {
            return None;
        }
        let logical = p.size / u64::from(p.page_bytes);
        // logical ≤ 2^64 / 512 and op ≤ 100: the product is far below 2^64.
        let wanted = (logical as f64 * (1.0 + p.op.max(0.0))).ceil();
        if wanted.is_nan() || wanted >= u64::MAX as f64 / 2.0 {
            return None;
        }
        let per_die = (wanted as u64).div_ceil(dies);
        let bpd = per_die.div_ceil(u64::from(p.pages_per_block));
        let ppb = u64::from(p.pages_per_block);
        let physical = u128::from(dies) * u128::from(bpd) * u128::from(ppb);
        let usable = u128::from(bpd).saturating_sub(u128::from(p.gc_fg_free) + 2) * u128::from(ppb);
        Some(Geometry {
            dies: u32::try_from(dies).ok()?,
            logical_pages: logical,
            blocks_per_die: u32::try_from(bpd).ok()?,
            pages_per_block: p.pages_per_block,
            physical_pages: u64::try_from(physical).ok()?,
            die_share: logical.div_ceil(dies),
            die_limit: u64::try_from(usable).ok()?,
        })
    }

    /// About the bytes the FTL allocates for this geometry: its two maps
    /// and the state of every block (for memory checks).
    pub fn ftl_bytes(&self) -> u64 {
        let blocks = u64::from(self.dies) * u64::from(self.blocks_per_die);
        4 * self.logical_pages + 4 * self.physical_pages + 21 * blocks
    }

    /// The most valid pages the FTL lets a die hold: halfway between its
    /// share and its limit, so uneven write patterns (sub-page writes whose
    /// last copy always lands on the same dies) cannot push a die to where
    /// GC copies nearly full blocks, while uniform writes keep their
    /// round-robin striping.
    pub fn die_quota(&self) -> u64 {
        if self.die_share >= self.die_limit {
            return self.die_limit;
        }
        self.die_share + (self.die_limit - self.die_share) / 2
    }
}

/// Check the ranges of `p`'s keys and, for a flash device, that its
/// geometry can be modelled. One line naming the key and the allowed range.
pub fn check(p: &Params) -> Result<(), ParamError> {
    check_ranges(p)?;
    let dies = u64::from(p.channels) * u64::from(p.dies_per_channel);
    if dies > MAX_DIES {
        return Err(ParamError::TooManyDies {
            channels: p.channels,
            dies_per_channel: p.dies_per_channel,
            dies,
        });
    }
    if p.size < u64::from(p.page_bytes) {
        return Err(ParamError::SizeBelowPage {
            size: p.size,
            page_bytes: p.page_bytes,
        });
    }
    if p.dram {
        return Ok(());
    }
    check_flash(p)
}

/// Every parameter within its allowed range.
fn check_ranges(p: &Params) -> Result<(), ParamError> {
    check_int_ranges(p)?;
    check_float_ranges(p)
}

/// The integer parameters of every device, by name, with their values.
fn int_params(p: &Params) -> [(&'static str, u64); 28] {
    [
        ("channels", p.channels.into()),
        ("dies_per_channel", p.dies_per_channel.into()),
        ("pages_per_block", p.pages_per_block.into()),
        ("page_bytes", p.page_bytes.into()),
        ("read_ns", p.read_ns),
        ("program_ns", p.program_ns),
        ("erase_ns", p.erase_ns),
        ("fw_cmd_ns", p.fw_cmd_ns),
        ("fw_per_4k_ns", p.fw_per_4k_ns),
        ("fw_units", p.fw_units.into()),
        ("cmd_slots", p.cmd_slots.into()),
        ("write_buffer", p.write_buffer),
        ("dram_cmd_ns", p.dram_cmd_ns),
        ("dram_per_4k_ns", p.dram_per_4k_ns),
        ("gc_bg_free", p.gc_bg_free.into()),
        ("gc_fg_free", p.gc_fg_free.into()),
        ("coalesce_n", p.coalesce_n.into()),
        ("coalesce_us", p.coalesce_us),
        ("host_ns", p.host_ns),
        ("cmd_bytes", p.cmd_bytes.into()),
        ("extent_bytes", p.extent_bytes.into()),
        ("extent_ns", p.extent_ns),
        ("cpl_ns", p.cpl_ns),
        ("iface_depth", p.iface_depth.into()),
        ("queues", p.queues.into()),
        ("host_cmd_ns", p.host_cmd_ns),
        ("irq_ns", p.irq_ns),
        ("wake_ns", p.wake_ns),
    ]
}

/// The NAND array's integer parameters, by name, with their values.
fn nand_params(p: &Params) -> [(&'static str, u64); 7] {
    [
        ("flash_page_bytes", p.flash_page_bytes.into()),
        ("flash_block_bytes", p.flash_block_bytes),
        ("planes", p.planes.into()),
        ("slc_program_ns", p.slc_program_ns),
        ("suspend_ns", p.suspend_ns),
        ("resume_ns", p.resume_ns),
        ("suspend_max", p.suspend_max.into()),
    ]
}

/// The integer parameters within their limits, the page types' count, and
/// `page_bytes` a power of two.
fn check_int_ranges(p: &Params) -> Result<(), ParamError> {
    let types = p.program_types_ns.iter().map(|&t| ("program_ns", t));
    for (k, v) in int_params(p).into_iter().chain(nand_params(p)).chain(types) {
        let (lo, hi) = int_limit(k).unwrap_or((0, u64::MAX));
        if !(lo..=hi).contains(&v) {
            return Err(out_of_range(k, v));
        }
    }
    if p.program_types_ns.len() > MAX_PAGE_TYPES {
        return Err(ParamError::PageTypes {
            count: p.program_types_ns.len(),
        });
    }
    if !p.page_bytes.is_power_of_two() {
        return Err(ParamError::PageNotPowerOfTwo {
            page_bytes: p.page_bytes,
        });
    }
    Ok(())
}

/// The rates and fractions within their limits.
fn check_float_ranges(p: &Params) -> Result<(), ParamError> {
    for (key, value) in [("channel_mbps", p.channel_mbps), ("link_mbps", p.link_mbps)] {
        if !(value == 0.0 || (RATE_MBPS.0..=RATE_MBPS.1).contains(&value)) {
            return Err(ParamError::Rate { key, value });
        }
    }
    if !(0.0..=1.0).contains(&p.slc_cache) {
        return Err(ParamError::SlcCache { value: p.slc_cache });
    }
    if !(0.0..=MAX_OP).contains(&p.op) {
        return Err(ParamError::Op { value: p.op });
    }
    Ok(())
}

/// The NAND array: pages of whole mapping units, and program units
/// (`planes` pages) that fill erase blocks exactly.
fn check_nand(p: &Params) -> Result<(), ParamError> {
    if !p.flash_page_bytes.is_power_of_two() || p.flash_page_bytes < p.page_bytes {
        return Err(ParamError::FlashPage {
            flash_page_bytes: p.flash_page_bytes,
            page_bytes: p.page_bytes,
        });
    }
    let unit = u64::from(p.planes) * u64::from(p.flash_page_bytes / p.page_bytes);
    if !u64::from(p.pages_per_block).is_multiple_of(unit) {
        return Err(ParamError::ProgramUnit {
            pages_per_block: p.pages_per_block,
            unit,
            planes: p.planes,
            flash_page_bytes: p.flash_page_bytes,
            page_bytes: p.page_bytes,
        });
    }
    Ok(())
}

fn check_flash(p: &Params) -> Result<(), ParamError> {
    check_nand(p)?;
    if p.op <= 0.0 {
        return Err(ParamError::NoSpareArea);
    }
    let logical = p.size / u64::from(p.page_bytes);
    if logical > MAX_PAGES {
        return Err(ParamError::TooManyPages {
            size: p.size,
            logical,
            page_bytes: p.page_bytes,
        });
    }
    let g = Geometry::of(p)
        .filter(|g| g.physical_pages <= MAX_PAGES)
        .ok_or(ParamError::TooManyPhysicalPages {
            size: p.size,
            op: p.op,
        })?;
    if g.die_share > g.die_limit {
        return Err(ParamError::DieOverfull {
            dies: g.dies,
            die_share: g.die_share,
            die_limit: g.die_limit,
            blocks_per_die: g.blocks_per_die,
            pages_per_block: g.pages_per_block,
            gc_fg_free: p.gc_fg_free,
        });
    }
    if p.gc_bg_free > g.blocks_per_die {
        return Err(ParamError::GcBgFree {
            gc_bg_free: p.gc_bg_free,
            blocks_per_die: g.blocks_per_die,
        });
    }
    let alpha = p.alpha_effective();
    if alpha < 1.005 {
        return Err(ParamError::SpareFactor {
            blocks_per_die: g.blocks_per_die,
            reserved: p.reserved_blocks_per_die(),
            alpha,
        });
    }
    Ok(())
}
