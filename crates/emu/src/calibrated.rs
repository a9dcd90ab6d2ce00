//! Presets for named classes of current drives, fitted to public datasheet
//! and review figures; `ssdready_run::calibration` holds those figures with
//! their sources and measures each preset at each figure's condition (the
//! README's error table; `bench/calibration.sh`). The client PCIe 4 TLC
//! class is `nvme-tlc` ([`crate::config`]), the default preset.
//!
//! The emulated drives are small (1 GiB by default) where the real ones
//! hold terabytes: rates, latencies and spare factors carry over; sizes
//! that scale with the drive (an SLC cache) are a share of the size.

use crate::config::params::Params;

/// Set `p` to the calibrated preset `name`; false if there is none.
pub fn apply(name: &str, p: &mut Params) -> bool {
    match name {
        "dc-tlc" => dc_tlc(p),
        "qlc-sata" => qlc_sata(p),
        "optane" => optane(p),
        _ => return false,
    }
    true
}

/// A PCIe 4 enterprise TLC drive, Samsung PM9A3 U.2 class (Samsung's
/// "up to" figures for the U.2 drives, as heise, "PCIe-4.0-SSD Samsung
/// PM9A3", 2020, and ComputerBase, "Samsung PM9A3 E1.S", 2020, relay
/// them: 6,500 MB/s sequential read, 900K random 4 KiB read IOPS,
/// 3,500 MB/s sequential write, 200K random write IOPS; enterprise write
/// figures are sustained, i.e. in steady state; no SLC cache; QD 1
/// latency is not in those sources). 128-layer V6 TLC: here 32 dies × 4
/// planes of 16 KiB pages (a 64 KiB program unit).
/// * Controller: 4 cores × 4.4 µs per command = 909K commands/s, the
///   random-read figure (128 planes / 45 µs would give 2.8M).
/// * Link 6,500 MB/s: the sequential-read figure (the controller's, under
///   PCIe 4 × 4's ~7 GB/s).
/// * Programs: 600 µs per 64 KiB unit × 32 dies = 3.5 GB/s, the
///   sequential-write figure.
/// * Spare: 3.84 TB of 4 TiB (4.40 TB) of NAND, 7.68 of 8 TiB alike:
///   op 0.145. Greedy GC at
///   that spare factor amplifies random writes about 4×: 3.5 GB/s / 4 /
///   4 KiB ≈ 210K IOPS: the sustained random-write figure follows from the
///   program rate and the spare area, no further knob (the model gives
///   179K, −11 %: GC's reads and transfers take die time too).
/// * A 16 MiB write buffer (power-loss protected on such drives);
///   program/erase suspension as `nvme-tlc`.
fn dc_tlc(p: &mut Params) {
    p.channels = 8;
    p.dies_per_channel = 4;
    p.planes = 4;
    p.flash_page_bytes = 16 << 10;
    p.flash_block_bytes = 24 << 20;
    p.read_ns = 45_000;
    p.program_ns = 600_000;
    p.erase_ns = 3_500_000;
    p.channel_mbps = 1200.0;
    p.link_mbps = 6500.0;
    p.fw_cmd_ns = 4_400;
    p.write_buffer = 16 << 20;
    p.suspend_ns = 20_000;
    p.resume_ns = 15_000;
    p.suspend_max = 8;
    p.op = 0.145;
}

/// A SATA QLC drive with an SLC cache, Samsung 870 QVO 1 TB class
/// (Samsung's figures as CDRLabs' review, 2020, relays them: 560 MB/s
/// sequential read, 530 MB/s sequential write, 98K random read and 88K
/// random write IOPS at QD 32; PC Gamer's review, 2020: 80 MB/s
/// sequential writes once the cache is full; Intelligent TurboWrite: 6 GB
/// static + 36 GB dynamic SLC for 1 TB, The SSD Review on the same scheme
/// in the 860 QVO, 2018; eight 1 Tb QLC dies behind an 8-channel MKX
/// controller, Golem's review as no1geekfun relays it, 2020).
/// * SATA link, 560 MB/s of payload: sequential reads, and writes within
///   the cache (the SLC rate, 8 dies × 32 KiB / 200 µs = 1.3 GB/s, is
///   above it).
/// * Controller: one core, 10.6 µs per command = 94K IOPS, between the
///   read (98K) and write (88K) figures.
/// * QLC programs: 3.3 ms per 32 KiB unit (2 planes × 16 KiB) × 8 dies =
///   80 MB/s, the after-cache figure (it includes the drive folding its
///   cache while it writes).
/// * SLC cache: 4.2 % of the size (42 GB per TB); reads 110 µs (QLC).
fn qlc_sata(p: &mut Params) {
    p.channels = 8;
    p.dies_per_channel = 1;
    p.planes = 2;
    p.flash_page_bytes = 16 << 10;
    p.flash_block_bytes = 16 << 20;
    p.read_ns = 110_000;
    p.program_ns = 3_300_000;
    p.erase_ns = 5_000_000;
    p.slc_cache = 0.042;
    p.slc_program_ns = 200_000;
    p.channel_mbps = 800.0;
    p.link_mbps = 560.0;
    p.fw_cmd_ns = 10_600;
    p.fw_units = 1;
    p.write_buffer = 4 << 20;
    p.suspend_ns = 20_000;
    p.resume_ns = 15_000;
    p.suspend_max = 8;
}

/// A 3D XPoint drive, Intel Optane SSD DC P4800X 375 GB class (Intel's
/// figures as AnandTech, "Intel Optane SSD DC P4800X 750GB Hands-On
/// Review", 2017, lists them: 550K random 4 KiB read IOPS and 500K write
/// IOPS at QD 16, 2,400 MB/s sequential read and 2,000 MB/s write in
/// 64 KiB, typical latency under 10 µs; AnandTech's P4800X review, 2017,
/// measured 8.9 µs mean for QD 1 4 KiB random reads). No erase, no GC:
/// in-place writes, modelled as 4 units (the DRAM mode) each serving
/// 4 KiB in 7.5 µs = 533K IOPS and 2.2 GB/s for reads and writes alike,
/// plus 0.2 µs of command and 1.2 µs of PCIe 3 × 4 link (3,500 MB/s):
/// 8.9 µs at QD 1.
fn optane(p: &mut Params) {
    p.dram = true;
    p.channels = 4;
    p.dies_per_channel = 1;
    p.dram_cmd_ns = 200;
    p.dram_per_4k_ns = 7_500;
    p.link_mbps = 3500.0;
    p.fw_cmd_ns = 0;
    p.op = 0.0;
}
