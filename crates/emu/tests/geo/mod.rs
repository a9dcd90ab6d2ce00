//! Random device geometries for property tests, shared by the emulator's
//! own (`crates/emu/tests/ftl_props.rs`: commands on the model) and the
//! virtual-time loop's (`crates/run/tests/virtual_props.rs`: jobs on it),
//! which includes this file by path.

use proptest::prelude::*;
use ssdready_emu::config::{preset, GcPolicy, Params};

/// A device description; `fits` builds the size from the blocks so the
/// geometry leaves each die `spare` blocks (less `shave` pages) beyond its
/// share of the data: from one block short of what GC needs (refused) to
/// plenty; otherwise size and op are drawn freely (often refused: that path
/// must refuse cleanly).
#[derive(Clone, Debug)]
pub struct Geo {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub pages_per_block: u32,
    pub page_bytes: u32,
    pub blocks: u32,
    pub spare: u32,
    pub shave: u64,
    pub fits: bool,
    pub free_op: f64,
    pub odd_bytes: u64,
    pub gc: GcPolicy,
    pub gc_fg_free: u32,
    pub gc_bg_free: u32,
    pub write_buffer: u64,
    pub cmd_slots: u32,
    pub nand: Nand,
}

/// The NAND array and its scheduling.
#[derive(Clone, Debug)]
pub struct Nand {
    /// log2 of planes and of mapping units per NAND page (reduced until a
    /// program unit divides the block).
    pub planes_log: u32,
    pub page_log: u32,
    pub page_types: bool,
    pub slc_cache: f64,
    pub suspend_max: u32,
}

impl Geo {
    pub fn params(&self) -> Params {
        let mut p = preset("nvme-tlc").expect("preset");
        p.channels = self.channels;
        p.dies_per_channel = self.dies_per_channel;
        p.pages_per_block = self.pages_per_block;
        p.page_bytes = self.page_bytes;
        let dies = u64::from(self.channels * self.dies_per_channel);
        let ppb = u64::from(self.pages_per_block);
        let data_blocks = u64::from(self.blocks.saturating_sub(self.spare).max(1));
        let per_die = (data_blocks * ppb).saturating_sub(self.shave % ppb).max(1);
        let logical = dies * per_die;
        p.op = if self.fits {
            (u64::from(self.blocks) * ppb) as f64 / per_die as f64 - 1.0
        } else {
            self.free_op
        };
        p.size = logical * u64::from(self.page_bytes) + self.odd_bytes % u64::from(self.page_bytes);
        p.gc = self.gc;
        p.gc_fg_free = self.gc_fg_free;
        p.gc_bg_free = self.gc_bg_free;
        p.write_buffer = self.write_buffer;
        p.cmd_slots = self.cmd_slots;
        let (mut a, mut b) = (self.nand.planes_log, self.nand.page_log);
        while !self.pages_per_block.is_multiple_of(1 << (a + b)) {
            (a, b) = (a.saturating_sub(1), if a == 0 { b - 1 } else { b });
        }
        p.planes = 1 << a;
        p.flash_page_bytes = self.page_bytes << b;
        p.program_types_ns = if self.nand.page_types {
            vec![100_000, 300_000, 900_000]
        } else {
            Vec::new()
        };
        p.slc_cache = self.nand.slc_cache;
        p.suspend_max = self.nand.suspend_max;
        p
    }
}

pub fn geo() -> impl Strategy<Value = Geo> {
    let shape = (
        1u32..=3,
        1u32..=3,
        prop_oneof![2u32..=8, Just(16u32), Just(32), Just(64)],
        prop_oneof![Just(512u32), Just(1024), Just(4096), Just(16384)],
        4u32..=40,
    );
    let gc = (
        prop_oneof![Just(GcPolicy::Greedy), Just(GcPolicy::Fifo)],
        1u32..=3,
        0u32..=6,
    );
    let rest = (
        (0u32..=7, any::<u64>()),
        prop::bool::weighted(0.8),
        0.001f64..2.0,
        any::<u64>(),
        prop_oneof![Just(0u64), Just(64 << 10), Just(1 << 20)],
        prop_oneof![Just(0u32), Just(1), Just(4)],
    );
    let nand = (
        0u32..=2,
        0u32..=2,
        any::<bool>(),
        prop_oneof![Just(0.0f64), Just(0.1), Just(0.5)],
        prop_oneof![Just(0u32), Just(1), Just(8)],
    )
        .prop_map(
            |(planes_log, page_log, page_types, slc_cache, suspend_max)| Nand {
                planes_log,
                page_log,
                page_types,
                slc_cache,
                suspend_max,
            },
        );
    (shape, gc, rest, nand).prop_map(
        |(
            (ch, dpc, ppb, pb, blocks),
            (gc, fg, bg),
            ((extra, shave), fits, op, odd, wb, slots),
            nand,
        )| {
            Geo {
                channels: ch,
                dies_per_channel: dpc,
                pages_per_block: ppb,
                page_bytes: pb,
                // Blocks for the data, the frontiers, the GC reserve and the
                // spare: at spare = fg + 1 a die is a block short (module docs of
                // geometry), at fg + 2 it holds exactly its limit.
                blocks: blocks + fg + 1 + extra,
                spare: fg + 1 + extra,
                shave,
                fits,
                free_op: op,
                odd_bytes: odd,
                gc,
                gc_fg_free: fg,
                gc_bg_free: bg.min(fg + extra),
                write_buffer: wb,
                cmd_slots: slots,
                nand,
            }
        },
    )
}

/// Refused geometries: one line, naming the emulator.
pub fn refused_cleanly(e: impl std::fmt::Display) -> Result<(), TestCaseError> {
    let e = e.to_string();
    prop_assert!(e.starts_with("emulator"), "refusal without context: {e}");
    prop_assert_eq!(e.lines().count(), 1, "refusal on several lines: {}", e);
    Ok(())
}
