//! The built-in presets' parameters, one function each, with where every
//! figure comes from (the papers and datasheets each is fitted to); the
//! base they all start from, [`preset`] by name and the default device.

use super::modes::{CompletionMode, GcPolicy};
use super::params::{default_queues, Params};
use crate::fault::FaultParams;
use crate::stall::StallParams;
use crate::zoned::params::ZoneParams;

/// A preset by name (each one's parameters and their sources are below;
/// the calibrated ones are [`crate::calibrated`]).
pub fn preset(name: &str) -> Option<Params> {
    let mut p = base(name);
    match name {
        "x25e" => x25e(&mut p),
        "iodrive" => iodrive(&mut p),
        "dram-ssd" => dram_ssd(&mut p),
        "nvme-tlc" => nvme_tlc(&mut p),
        "nvm-lowlat" => nvm_lowlat(&mut p),
        "null" => null(&mut p),
        _ if crate::calibrated::apply(name, &mut p) => {}
        _ => return None,
    }
    Some(p)
}

impl Default for Params {
    fn default() -> Self {
        preset("nvme-tlc").expect("the default preset exists")
    }
}

fn base(name: &str) -> Params {
    Params {
        preset: name.into(),
        size: 1 << 30,
        op: 0.07,
        channels: 8,
        dies_per_channel: 4,
        pages_per_block: 64,
        page_bytes: 4096,
        read_ns: 50_000,
        program_ns: 600_000,
        erase_ns: 3_000_000,
        flash_page_bytes: 4096,
        flash_block_bytes: 0,
        planes: 1,
        program_types_ns: Vec::new(),
        slc_cache: 0.0,
        slc_program_ns: 0,
        suspend_ns: 0,
        resume_ns: 0,
        suspend_max: 0,
        channel_mbps: 800.0,
        link_mbps: 3500.0,
        fw_cmd_ns: 3_000,
        fw_per_4k_ns: 0,
        fw_units: 4,
        cmd_slots: 0,
        write_buffer: 0,
        dram: false,
        dram_cmd_ns: 0,
        dram_per_4k_ns: 0,
        gc: GcPolicy::Greedy,
        gc_bg_free: 2,
        gc_fg_free: 1,
        completion: CompletionMode::Hybrid,
        coalesce_n: 0,
        coalesce_us: 0,
        nocopy: false,
        host_ns: 0,
        cmd_bytes: 64,
        extent_bytes: 16,
        extent_ns: 0,
        cpl_ns: 0,
        iface_depth: 0,
        queues: default_queues(),
        host_cmd_ns: 0,
        irq_ns: 0,
        wake_ns: 0,
        service_exp: false,
        faults: FaultParams::off(),
        zoned: ZoneParams::default(),
        stall: StallParams::default(),
    }
}

/// Fitted to Polte et al.'s Device B / Foong et al.: 10 parallel units (one die per
/// channel), SATA II link; the controller (28 us per command) caps reads
/// at ~35K IOPS; QD 1 4 KiB read ≈ 28 + 25 + 82 (50 MB/s channel) +
/// 14 (link) ≈ 150 us, as Foong et al. measured 180 us including 20 us of platform.
/// * Write cache: the X25-E acknowledges writes from a volatile write
///   cache, on by default (Percona, "SSD, XFS, LVM, fsync, write cache,
///   barrier and lost transactions", 2009: committed InnoDB
///   transactions lost on a power cut with it on; G. Harrison,
///   "Disabling the Intel X-25 E write cache", 2010: random-write
///   capacity falls with `hdparm -W 0`). Intel's rated 3.3K random
///   writes (Polte et al.'s Table) are with it. Without one, each write waits
///   for its own die, and writes are striped: 1 in 10 lands on a die
///   cleaning a victim (~57 copies × 225 us + a 1.5 ms erase ≈ 14 ms),
///   so at QD 32 the queue piles up there and the dies are ~60 % busy.
///   That level also takes long to settle: the WA is steady (9.4)
///   after 7 capacities written, but IOPS keep falling as the dies'
///   cleaning stalls drift out of step, to 2.2K (−33 %) only after
///   8–12 capacities depending on the random offsets; a PTS window
///   can call any point of that slope steady (3.7K at 7× in one run,
///   2.6K at 8× in another). With a buffer a write completes once its
///   data fits, whichever die drains it, the stalls no longer gate
///   the host, and the level holds from 8× on (3.0–3.6K to 24×).
/// * Its size is not published and the sources disagree: Harrison
///   relays "a volatile 64MB write cache"; Tom's Hardware (X25-M
///   review, 2008) says the same controller's 16 MB DRAM "is not there
///   to increase performance" (it holds mapping tables). Steady 4 KiB
///   random writes at QD 32 (`characterize --quick`, 256 MiB) are
///   3.4–3.8K for 64 KiB–1 MiB, 4.0K for 4 MiB, 4.6K (the dies' bound
///   at WA 9) for 64 MiB: the rated 3.3K fits a small controller
///   buffer, not a DRAM cache. 256 KiB: one erase block (Polte et al.'s
///   conjectured 256 KB blocks) of on-controller memory.
///
/// `write_buffer=0` models the drive with its cache off.
fn x25e(p: &mut Params) {
    p.channels = 10;
    p.dies_per_channel = 1;
    p.read_ns = 25_000;
    p.program_ns = 200_000;
    p.erase_ns = 1_500_000;
    p.channel_mbps = 50.0;
    p.link_mbps = 300.0;
    p.queues = 1; // SATA: one command list (NCQ)
    p.fw_cmd_ns = 28_000;
    p.fw_units = 1;
    p.write_buffer = 256 << 10;
    p.op = 0.07;
}

/// Fitted to Polte et al.'s Device A: four command units, each holding a
/// 4 KiB read for ~40 us (2 us controller + 22 us read + 10 us channel +
/// 5.7 us link), give ~100K reads/s and saturate at QD 4; 32 dies
/// behind 8 channels for write bandwidth (~500 MB/s); link 720 MB/s.
fn iodrive(p: &mut Params) {
    p.channels = 8;
    p.dies_per_channel = 4;
    p.read_ns = 22_000;
    p.program_ns = 250_000;
    p.erase_ns = 1_000_000;
    p.channel_mbps = 400.0;
    p.link_mbps = 720.0;
    p.fw_cmd_ns = 2_000;
    p.fw_units = 4;
    p.cmd_slots = 4;
    p.write_buffer = 16 << 20;
    p.op = 0.20;
}

/// Shin: 7-8 us per 4 KiB, 700 MB/s peak: one unit of 5.6 us per 4 KiB
/// (= 730 MB/s) plus 2 us of command latency. One command at a time
/// (iface_depth=1): Shin's driver issues the next command once it has
/// seen the previous one complete (its Sync+Poll path cannot overlap
/// requests), which is why per-command costs cap small I/O there.
fn dram_ssd(p: &mut Params) {
    p.iface_depth = 1;
    p.dram = true;
    p.channels = 1;
    p.dies_per_channel = 1;
    p.dram_cmd_ns = 2_000;
    p.dram_per_4k_ns = 5_600;
    p.link_mbps = 0.0; // the 5.6 us per 4 KiB is the 700 MB/s transfer
    p.fw_cmd_ns = 0;
    p.op = 0.0;
}

/// A 1 TB PCIe 4 TLC client drive, Samsung 980 PRO class (Samsung's
/// figures, 2020, as Notebookcheck relays them: 7,000 MB/s sequential
/// read; 5,000 MB/s sequential write within the 42 GB SLC cache,
/// 2,000 MB/s after it; 1M random 4 KiB read and write IOPS at QD 32
/// × 16 threads; 22K IOPS = 45 µs for QD 1 reads). 16 dies × 4 planes
/// (512 Gb dies), 16 KiB pages: a program unit is 64 KiB; planes read
/// independently: 64 read units.
/// * Controller: 4 cores × 4 µs per command = 1.0M commands/s, the
///   datasheet's random read and write IOPS.
/// * Reads: 37 µs array read (Samsung's 6th-generation V-NAND, 2019
///   press release: reads under 45 µs) + 4 µs controller + 3.4 µs channel (1,200 MB/s,
///   ONFI 4 / Toggle 4 class) + 0.6 µs link = 45 µs at QD 1, the
///   datasheet's 22K IOPS (the host's own cost comes on top: fio on
///   Linux adds a few µs); 64 units / 40.4 µs = 1.58M IOPS, so the
///   controller bounds random reads; 1 MiB reads are bound by the
///   7,000 MB/s link (PCIe 4 × 4).
/// * SLC cache: 4.2 % of the size (42 GB per TB: 43 MiB of the 1 GiB
///   default); 190 µs per SLC program unit: 16 × 64 KiB / 190 µs =
///   5.5 GB/s (4 KiB random writes: 1.0M IOPS, the controller).
/// * TLC: page types lower/middle/upper 190/386/996 µs: the lower page
///   programs like an SLC page, middle and upper in FEMU's TLC ratio
///   (2,225 : 5,734 µs), scaled so the mean, 524 µs, gives the
///   datasheet's 2.0 GB/s after the cache (16 × 64 KiB / 524 µs).
/// * 3.5 ms erases (3D TLC tBERS 3–5 ms) of 24 MiB multi-plane blocks
///   (hundreds of word lines: an erase is under 2 % of the time that
///   programs one); the FTL's blocks are 256 KiB (64 pages: a small
///   emulated drive needs many; 256 MiB still fits), so GC erases once
///   per 96 of them. A 16 MiB write buffer gathers program units.
/// * Program/erase suspension (Wu & He, FAST 2012; Zambelli et al.,
///   Electronics 2021, on 3D NAND): 20 µs to the next safe point,
///   15 µs to resume, at most 8 reads ahead of one operation: each
///   costs it at most 37 + 3.4 + 15 µs, so a 524 µs program keeps at
///   least 524 / (524 + 8 × 55.4) = 54 % of its rate under any reads.
fn nvme_tlc(p: &mut Params) {
    p.channels = 8;
    p.dies_per_channel = 2;
    p.planes = 4;
    p.flash_page_bytes = 16 << 10;
    p.read_ns = 37_000;
    p.program_types_ns = vec![190_000, 386_000, 996_000];
    p.program_ns = 524_000;
    p.erase_ns = 3_500_000;
    p.flash_block_bytes = 24 << 20;
    p.slc_cache = 0.042;
    p.slc_program_ns = 190_000;
    p.channel_mbps = 1200.0;
    p.link_mbps = 7000.0;
    p.fw_cmd_ns = 4_000;
    p.write_buffer = 16 << 20;
    p.suspend_ns = 20_000;
    p.resume_ns = 15_000;
    p.suspend_max = 8;
}

/// Optane-class: 7 units of 10 us per 4 KiB.
fn nvm_lowlat(p: &mut Params) {
    p.dram = true;
    p.channels = 7;
    p.dies_per_channel = 1;
    p.dram_cmd_ns = 0;
    p.dram_per_4k_ns = 10_000;
    p.link_mbps = 3500.0;
    p.fw_cmd_ns = 0;
    p.op = 0.0;
}

/// A zero-latency device: the emulator and the host, nothing else.
fn null(p: &mut Params) {
    p.dram = true;
    p.channels = 1;
    p.dies_per_channel = 1;
    p.dram_cmd_ns = 0;
    p.dram_per_4k_ns = 0;
    p.link_mbps = 0.0;
    p.fw_cmd_ns = 0;
    p.op = 0.0;
}
