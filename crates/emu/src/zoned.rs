//! Zoned mode: the emulated drive as a host-managed zoned device (an NVMe
//! ZNS namespace, or a host-managed SMR disk as Linux sees it).
//!
//! A zoned drive exposes its capacity as zones of `zone_size` bytes, each
//! written only sequentially at its **write pointer** (wp) and rewritten only
//! after a **reset** that erases it. The drive needs no flash translation
//! layer of its own: a zone maps onto erase blocks, so there is no garbage
//! collection and the write amplification is exactly 1 — the host does the
//! placement (and its own garbage collection, as fio's
//! `zone_reset_threshold` simulates). Here a zone's pages are laid over all
//! dies as a stripe (page `i` of the device on die `i mod dies`), so one
//! zone written sequentially keeps every die busy; the FTL's counters still
//! count host and NAND pages, and `write_amplification` stays 1.00.
//!
//! Keys (`emu:…,zoned=1,zone_size=64m,…`):
//! * `zoned=1` turns the mode on (flash devices only, not `dram=1`);
//! * `zone_size` (default 256 MiB; the last zone may be smaller, a runt);
//! * `zone_capacity`: the writable bytes of a zone (default `zone_size`;
//!   ZNS drives often have less, e.g. 1077 MiB in 2 GiB zones);
//! * `max_open_zones`, `max_active_zones`: 0 = no limit;
//! * `read_beyond_wp=zeros|error`: a read past a zone's write pointer
//!   returns zeros (the default, as ZNS and SMR drives do) or fails with EIO.
//!
//! **Zone states** (ZNS's and Linux's `blk_zone_cond`): empty, implicitly
//! open (a write opened it), explicitly open (an open command), closed
//! (opened, written, then closed), full. Open zones count against
//! `max_open_zones`, open and closed ones against `max_active_zones`. A
//! write to an empty or closed zone opens it implicitly; when that would pass
//! the open limit, the drive first closes its oldest implicitly open zone (as
//! ZNS drives do); when every open zone is explicitly open it refuses.
//!
//! **Errors** are what Linux reports for the device's status: a write not at
//! the write pointer, past the zone's capacity or into a full zone fails
//! with EIO (ZNS "Zone Invalid Write", "Zone Boundary Error", "Zone Is
//! Full"; the unaligned-write error fio's zbd code expects); too many open
//! zones with ETOOMANYREFS, too many active zones with EOVERFLOW (the block
//! layer's `BLK_STS_ZONE_OPEN_RESOURCE` and `_ACTIVE_RESOURCE`). A refused
//! command costs the controller's command time; nothing is written, and
//! [`ZoneCounters::writes_refused`] counts it — a host that follows the
//! write pointers never sees one.
//!
//! **Zone commands**: reset (back to empty; erases the zone's blocks: each
//! die erases its share, `⌈zone pages / dies / pages_per_block⌉` blocks, in
//! parallel; a reset of an empty zone erases nothing), finish (to full, the
//! write pointer at the zone's end), open, close. Report-zones lists every
//! zone's start, length, capacity, write pointer and state.
//!
//! Trim (deallocate) does not change a zone; only a reset does.

pub mod params;

pub use params::{BeyondWp, ZoneParams};

use crate::config::error::ParamError;
use crate::config::params::Params;
use serde::{Deserialize, Serialize};

impl ZoneParams {
    /// One line naming the key and what is allowed, when the zones do not
    /// fit device `p`.
    pub fn check(&self, p: &Params) -> Result<(), ParamError> {
        if !self.zoned {
            return Ok(());
        }
        if p.dram {
            return Err(ParamError::ZonedNeedsFlash);
        }
        let (zs, cap, pb) = (self.size(), self.capacity(), u64::from(p.page_bytes.max(1)));
        let dev = p.logical_pages() * pb;
        if zs % pb != 0 || zs > dev {
            return Err(ParamError::ZoneSize {
                zone_size: zs,
                page_bytes: pb,
                device: dev,
            });
        }
        if cap == 0 || cap > zs || cap % pb != 0 {
            return Err(ParamError::ZoneCapacity {
                capacity: cap,
                page_bytes: pb,
                zone_size: zs,
            });
        }
        let zones = dev.div_ceil(zs);
        for (key, value) in [
            ("max_open_zones", self.max_open_zones),
            ("max_active_zones", self.max_active_zones),
        ] {
            if u64::from(value) > zones {
                return Err(ParamError::ZoneLimit { key, value, zones });
            }
        }
        if self.max_active_zones > 0 && self.max_open_zones > self.max_active_zones {
            return Err(ParamError::OpenAboveActive {
                open: self.max_open_zones,
                active: self.max_active_zones,
            });
        }
        Ok(())
    }
}

/// A zone's state (Linux's `blk_zone_cond`, ZNS's zone states).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ZoneCond {
    Empty,
    ImplicitOpen,
    ExplicitOpen,
    Closed,
    Full,
}

impl ZoneCond {
    fn open(self) -> bool {
        matches!(self, ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen)
    }
    fn active(self) -> bool {
        self.open() || self == ZoneCond::Closed
    }
}

/// One zone, as report-zones gives it (bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub start: u64,
    pub len: u64,
    pub capacity: u64,
    pub wp: u64,
    pub cond: ZoneCond,
}

/// A zone management command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneOp {
    Reset,
    Finish,
    Open,
    Close,
}

/// Why the drive refused a command (module docs on the errnos).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ZoneError {
    #[error("write at {offset} is not at zone {zone}'s write pointer {wp}")]
    NotAtWritePointer { zone: usize, offset: u64, wp: u64 },
    #[error("write of {len} B at {offset} passes zone {zone}'s writable end {end}")]
    PastCapacity {
        zone: usize,
        offset: u64,
        len: u64,
        end: u64,
    },
    #[error("zone {zone} is full")]
    Full { zone: usize },
    #[error(
        "zone {zone} cannot be opened: {open} zones are explicitly open (max_open_zones={open})"
    )]
    TooManyOpen { zone: usize, open: u32 },
    #[error("zone {zone} cannot be opened: {active} zones are active (max_active_zones={active})")]
    TooManyActive { zone: usize, active: u32 },
    #[error("read of {len} B at {offset} passes zone {zone}'s write pointer {wp} (read_beyond_wp=error)")]
    ReadBeyondWritePointer {
        zone: usize,
        offset: u64,
        len: u64,
        wp: u64,
    },
    #[error("zone {zone} cannot be {what} in state {cond:?}")]
    InvalidTransition {
        zone: usize,
        what: &'static str,
        cond: ZoneCond,
    },
    #[error("offset {offset} is past the last zone")]
    OutOfRange { offset: u64 },
}

/// ETOOMANYREFS and EOVERFLOW (Linux), EIO.
const ETOOMANYREFS: i32 = 109;
const EOVERFLOW: i32 = 75;
const EIO: i32 = 5;

impl ZoneError {
    /// The errno Linux reports for it.
    pub fn errno(&self) -> i32 {
        match self {
            ZoneError::TooManyOpen { .. } => ETOOMANYREFS,
            ZoneError::TooManyActive { .. } => EOVERFLOW,
            _ => EIO,
        }
    }
}

/// What the zones have seen: the report's own type, so that a new
/// counter cannot miss the report.
pub use ssdready_core::result::EmuZoneCounters as ZoneCounters;

/// The zones of a device: states, write pointers, limits ([`crate::ftl`]
/// holds them in zoned mode and asks them where a page lives).
#[derive(Clone, Debug)]
pub struct Zones {
    pub params: ZoneParams,
    zones: Vec<Zone>,
    /// Per zone: the end of the data programmed since its last reset (a
    /// finish moves the write pointer, not this), and when it was opened.
    written: Vec<u64>,
    opened_at: Vec<u64>,
    seq: u64,
    open: u32,
    active: u32,
    pub counters: ZoneCounters,
    dies: u64,
    ppb: u64,
    bpd: u64,
    page_bytes: u64,
}

impl Zones {
    /// Every zone empty, for a device of `p` (checked parameters).
    pub fn new(p: &Params) -> Zones {
        let zp = &p.zoned;
        let page_bytes = u64::from(p.page_bytes.max(1));
        let dev = p.logical_pages() * page_bytes;
        let zs = zp.size().max(page_bytes);
        let zones: Vec<Zone> = (0..dev.div_ceil(zs))
            .map(|i| {
                let start = i * zs;
                let len = zs.min(dev - start);
                Zone {
                    start,
                    len,
                    capacity: zp.capacity().min(len),
                    wp: start,
                    cond: ZoneCond::Empty,
                }
            })
            .collect();
        Zones {
            params: zp.clone(),
            written: zones.iter().map(|z| z.start).collect(),
            opened_at: vec![0; zones.len()],
            zones,
            seq: 0,
            open: 0,
            active: 0,
            counters: ZoneCounters::default(),
            dies: u64::from(p.dies().max(1)),
            ppb: u64::from(p.pages_per_block.max(1)),
            bpd: u64::from(p.blocks_per_die()),
            page_bytes,
        }
    }

    /// Report-zones: every zone.
    pub fn report(&self) -> &[Zone] {
        &self.zones
    }

    /// Zones open now and active now.
    pub fn open_active(&self) -> (u32, u32) {
        (self.open, self.active)
    }

    /// The zone holding byte `offset`.
    pub fn zone_of(&self, offset: u64) -> Option<usize> {
        let zs = self.zones.first()?.len.max(1);
        let i = usize::try_from(offset / zs).ok()?;
        (i < self.zones.len()).then_some(i)
    }

    /// Move zone `i` to `cond`, keeping the open and active counts.
    fn set_cond(&mut self, i: usize, cond: ZoneCond) {
        let old = self.zones[i].cond;
        self.open -= u32::from(old.open());
        self.active -= u32::from(old.active());
        self.open += u32::from(cond.open());
        self.active += u32::from(cond.active());
        if cond.open() && !old.open() {
            self.seq += 1;
            self.opened_at[i] = self.seq;
        }
        self.zones[i].cond = cond;
    }

    /// Take the resources to open zone `i` (empty or closed): an active one
    /// if it is empty, an open one, closing the oldest implicitly open zone
    /// when the open limit is reached.
    fn take_open(&mut self, i: usize) -> Result<(), ZoneError> {
        let z = self.zones[i];
        let max_active = self.params.max_active_zones;
        if z.cond == ZoneCond::Empty && max_active > 0 && self.active >= max_active {
            return Err(ZoneError::TooManyActive {
                zone: i,
                active: self.active,
            });
        }
        let max_open = self.params.max_open_zones;
        if max_open > 0 && self.open >= max_open {
            let oldest = (0..self.zones.len())
                .filter(|&j| self.zones[j].cond == ZoneCond::ImplicitOpen)
                .min_by_key(|&j| self.opened_at[j]);
            let Some(j) = oldest else {
                return Err(ZoneError::TooManyOpen {
                    zone: i,
                    open: self.open,
                });
            };
            self.close_zone(j);
            self.counters.implicit_closes += 1;
        }
        Ok(())
    }

    fn close_zone(&mut self, j: usize) {
        let z = self.zones[j];
        let to = if z.wp == z.start {
            ZoneCond::Empty
        } else {
            ZoneCond::Closed
        };
        self.set_cond(j, to);
    }

    /// A write of `len` bytes at `offset`: accepted (the write pointer
    /// moves, the zone opens or fills) or refused (counted).
    pub fn write(&mut self, offset: u64, len: u64) -> Result<(), ZoneError> {
        let r = self.try_write(offset, len);
        if r.is_err() {
            self.counters.writes_refused += 1;
        }
        r
    }

    fn try_write(&mut self, offset: u64, len: u64) -> Result<(), ZoneError> {
        let i = self
            .zone_of(offset)
            .ok_or(ZoneError::OutOfRange { offset })?;
        let z = self.zones[i];
        if z.cond == ZoneCond::Full {
            return Err(ZoneError::Full { zone: i });
        }
        if offset != z.wp {
            return Err(ZoneError::NotAtWritePointer {
                zone: i,
                offset,
                wp: z.wp,
            });
        }
        let end = z.start + z.capacity;
        if offset.saturating_add(len) > end {
            return Err(ZoneError::PastCapacity {
                zone: i,
                offset,
                len,
                end,
            });
        }
        if matches!(z.cond, ZoneCond::Empty | ZoneCond::Closed) {
            self.take_open(i)?;
            self.set_cond(i, ZoneCond::ImplicitOpen);
        }
        self.zones[i].wp += len;
        self.written[i] = self.zones[i].wp;
        if self.zones[i].wp == end {
            self.set_cond(i, ZoneCond::Full);
        }
        Ok(())
    }

    /// A read of `len` bytes at `offset`: refused only with
    /// `read_beyond_wp=error` when it passes a write pointer (past one, the
    /// data is zeros: a reset zeroes the zone's data).
    pub fn read(&mut self, offset: u64, len: u64) -> Result<(), ZoneError> {
        if self.params.read_beyond_wp == BeyondWp::Zeros {
            return Ok(());
        }
        let end = offset.saturating_add(len.max(1));
        let mut at = offset;
        while at < end {
            let Some(i) = self.zone_of(at) else {
                break;
            };
            let z = self.zones[i];
            if z.cond != ZoneCond::Full && end.min(z.start + z.len) > z.wp {
                self.counters.reads_refused += 1;
                return Err(ZoneError::ReadBeyondWritePointer {
                    zone: i,
                    offset,
                    len,
                    wp: z.wp,
                });
            }
            at = z.start + z.len;
        }
        Ok(())
    }

    /// Zone management command `op` on zone `i`; returns the blocks each
    /// die erases for it (a reset of a zone that held data).
    pub fn manage(&mut self, op: ZoneOp, i: usize) -> Result<u64, ZoneError> {
        let z = *self.zones.get(i).ok_or(ZoneError::OutOfRange {
            offset: (i as u64).saturating_mul(self.zones.first().map_or(0, |z| z.len)),
        })?;
        let invalid = |what| ZoneError::InvalidTransition {
            zone: i,
            what,
            cond: z.cond,
        };
        match op {
            ZoneOp::Reset => {
                let had_data = self.written[i] > z.start;
                self.set_cond(i, ZoneCond::Empty);
                self.zones[i].wp = z.start;
                self.written[i] = z.start;
                self.counters.resets += 1;
                if had_data {
                    let blocks = self.erase_blocks(i);
                    self.counters.erased_blocks += blocks * self.dies;
                    return Ok(blocks);
                }
            }
            ZoneOp::Finish => {
                if z.cond != ZoneCond::Full {
                    if !z.cond.active() {
                        self.take_open(i)?;
                    }
                    self.set_cond(i, ZoneCond::Full);
                    self.zones[i].wp = z.start + z.capacity;
                }
                self.counters.finishes += 1;
            }
            ZoneOp::Open => match z.cond {
                ZoneCond::ExplicitOpen => {}
                ZoneCond::Full => return Err(invalid("opened")),
                ZoneCond::ImplicitOpen => self.set_cond(i, ZoneCond::ExplicitOpen),
                ZoneCond::Empty | ZoneCond::Closed => {
                    self.take_open(i)?;
                    self.set_cond(i, ZoneCond::ExplicitOpen);
                    self.counters.explicit_opens += 1;
                }
            },
            ZoneOp::Close => match z.cond {
                ZoneCond::Closed => {}
                ZoneCond::ImplicitOpen | ZoneCond::ExplicitOpen => {
                    self.close_zone(i);
                    self.counters.closes += 1;
                }
                ZoneCond::Empty | ZoneCond::Full => return Err(invalid("closed")),
            },
        }
        Ok(0)
    }

    /// Blocks per die a reset of zone `i` erases: its share of the stripe.
    fn erase_blocks(&self, i: usize) -> u64 {
        let pages = self.zones[i].len / self.page_bytes;
        pages.div_ceil(self.dies).div_ceil(self.ppb).max(1)
    }

    /// The die logical page `lpn` is programmed on (the stripe).
    pub fn die_of(&self, lpn: u64) -> u32 {
        (lpn % self.dies) as u32
    }

    /// The physical page of logical page `lpn` when it holds data programmed
    /// since its zone's last reset (None: no NAND access to read it).
    pub fn mapping(&self, lpn: u64) -> Option<u64> {
        let byte = lpn.checked_mul(self.page_bytes)?;
        let i = self.zone_of(byte)?;
        if byte >= self.written[i] {
            return None;
        }
        let die = lpn % self.dies;
        let on_die = lpn / self.dies;
        let block = (on_die / self.ppb).min(self.bpd.saturating_sub(1));
        Some((die * self.bpd + block) * self.ppb + on_die % self.ppb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zones(extra: &str) -> Zones {
        let p = Params::parse(&format!("x25e,size=128m,zoned=1,zone_size=8m{extra}")).unwrap();
        Zones::new(&p)
    }

    const MB: u64 = 1 << 20;
    const Z: u64 = 8 * MB;

    #[test]
    fn a_zone_size_of_zero_is_refused_not_replaced_by_the_default() {
        let e = Params::parse("x25e,size=128m,zoned=1,zone_size=0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'zone_size': 0 is not a zone size"), "{e}");
        assert!(e.contains("256 MiB"), "{e}");
    }

    #[test]
    fn a_zone_goes_empty_open_full_and_back_by_reset() {
        let mut z = zones("");
        assert_eq!(z.report().len(), 16);
        assert_eq!(z.report()[1].cond, ZoneCond::Empty);
        z.write(Z, MB).unwrap();
        assert_eq!(z.report()[1].cond, ZoneCond::ImplicitOpen);
        assert_eq!(z.report()[1].wp, Z + MB);
        assert_eq!(z.open_active(), (1, 1));
        z.write(Z + MB, Z - MB).unwrap();
        assert_eq!(z.report()[1].cond, ZoneCond::Full);
        assert_eq!(z.open_active(), (0, 0));
        assert!(matches!(
            z.write(2 * Z - 4096, 4096),
            Err(ZoneError::Full { zone: 1 })
        ));
        assert!(
            z.manage(ZoneOp::Reset, 1).unwrap() > 0,
            "a reset of written zone erases"
        );
        assert_eq!(z.report()[1].cond, ZoneCond::Empty);
        assert_eq!(z.report()[1].wp, Z);
        assert_eq!(
            z.manage(ZoneOp::Reset, 1).unwrap(),
            0,
            "an empty zone erases nothing"
        );
        assert_eq!(z.counters.resets, 2);
    }

    #[test]
    fn writes_off_the_write_pointer_are_refused_with_eio() {
        let mut z = zones("");
        z.write(0, 8192).unwrap();
        let e = z.write(0, 4096).unwrap_err();
        assert!(
            matches!(e, ZoneError::NotAtWritePointer { wp: 8192, .. }),
            "{e}"
        );
        assert_eq!(e.errno(), 5);
        assert!(z.write(16384, 4096).is_err(), "a gap is refused too");
        assert!(z.write(8192, Z).is_err(), "past the zone's end");
        assert_eq!(z.counters.writes_refused, 3);
        assert_eq!(z.report()[0].wp, 8192, "refused writes move nothing");
    }

    #[test]
    fn zone_capacity_limits_the_writable_part() {
        let mut z = zones(",zone_capacity=6m");
        assert_eq!(z.report()[0].capacity, 6 * MB);
        z.write(0, 6 * MB).unwrap();
        assert_eq!(z.report()[0].cond, ZoneCond::Full);
        assert!(matches!(z.write(6 * MB, 4096), Err(ZoneError::Full { .. })));
    }

    #[test]
    fn the_open_limit_closes_implicit_zones_and_refuses_explicit_ones() {
        let mut z = zones(",max_open_zones=2");
        z.write(0, 4096).unwrap();
        z.write(Z, 4096).unwrap();
        // A third zone: the oldest implicitly open one (zone 0) is closed.
        z.write(2 * Z, 4096).unwrap();
        assert_eq!(z.report()[0].cond, ZoneCond::Closed);
        assert_eq!(z.open_active(), (2, 3));
        assert_eq!(z.counters.implicit_closes, 1);
        // Both open zones explicitly open: a fourth is refused.
        z.manage(ZoneOp::Open, 1).unwrap();
        z.manage(ZoneOp::Open, 2).unwrap();
        let e = z.write(3 * Z, 4096).unwrap_err();
        assert!(matches!(e, ZoneError::TooManyOpen { .. }), "{e}");
        assert_eq!(e.errno(), 109);
        z.manage(ZoneOp::Close, 2).unwrap();
        z.write(3 * Z, 4096).unwrap();
    }

    #[test]
    fn the_active_limit_counts_closed_zones() {
        let mut z = zones(",max_open_zones=2,max_active_zones=2");
        z.write(0, 4096).unwrap();
        z.write(Z, 4096).unwrap();
        z.manage(ZoneOp::Close, 0).unwrap();
        let e = z.write(2 * Z, 4096).unwrap_err();
        assert!(matches!(e, ZoneError::TooManyActive { .. }), "{e}");
        assert_eq!(e.errno(), 75);
        // Finishing a zone frees its active resource.
        z.manage(ZoneOp::Finish, 0).unwrap();
        assert_eq!(z.report()[0].wp, Z);
        z.write(2 * Z, 4096).unwrap();
    }

    #[test]
    fn invalid_transitions_are_refused() {
        let mut z = zones("");
        assert!(z.manage(ZoneOp::Close, 0).is_err(), "close an empty zone");
        z.manage(ZoneOp::Finish, 0).unwrap();
        assert!(z.manage(ZoneOp::Open, 0).is_err(), "open a full zone");
        assert!(z.manage(ZoneOp::Reset, 99).is_err());
    }

    #[test]
    fn reads_past_the_write_pointer_fail_only_when_asked() {
        let mut zeros = zones("");
        assert!(zeros.read(0, MB).is_ok());
        let mut strict = zones(",read_beyond_wp=error");
        strict.write(0, MB).unwrap();
        assert!(strict.read(0, MB).is_ok());
        assert!(strict.read(MB - 4096, 8192).is_err());
        strict.manage(ZoneOp::Finish, 0).unwrap();
        assert!(strict.read(MB, 8192).is_ok(), "a full zone reads whole");
        assert_eq!(strict.counters.reads_refused, 1);
    }

    #[test]
    fn pages_are_striped_over_the_dies_and_mapped_once_written() {
        let mut z = zones("");
        assert_eq!(z.mapping(0), None);
        z.write(0, 8 * 4096).unwrap();
        let dies: Vec<u32> = (0..8).map(|l| z.die_of(l)).collect();
        assert_eq!(dies, (0..8).map(|d| d % z.dies as u32).collect::<Vec<_>>());
        assert!(z.mapping(7).is_some());
        assert_eq!(z.mapping(8), None);
    }

    #[test]
    fn bad_keys_name_the_key() {
        for kv in [
            "zone_size=3000",
            "zone_size=1g",
            "zone_capacity=16m",
            "max_open_zones=99",
            "max_open_zones=4,max_active_zones=2",
            "read_beyond_wp=maybe",
        ] {
            let e = Params::parse(&format!("x25e,size=128m,zoned=1,zone_size=8m,{kv}"))
                .unwrap_err()
                .to_string();
            let key = kv.split('=').next().unwrap();
            assert!(e.contains(key), "{kv}: {e}");
        }
        assert!(Params::parse("dram-ssd,size=128m,zoned=1,zone_size=8m").is_err());
    }
}
