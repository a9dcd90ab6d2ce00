//! Zoned block devices (SMR disks, NVMe ZNS namespaces, zoned null_blk) as
//! Linux exposes them: the model and limits in sysfs (`queue/zoned`,
//! `queue/chunk_sectors`, `queue/max_open_zones`), the zones by the
//! `BLKREPORTZONE` ioctl and their write pointers reset by `BLKRESETZONE`
//! (`linux/blkzoned.h`). fio's zonemode=zbd reads a device this way
//! (oslib/linux-blkzoned.c).

use std::fs::File;
use std::os::fd::AsRawFd;

/// A device's zoned model (`queue/zoned`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZonedModel {
    None,
    HostAware,
    HostManaged,
}

/// What sysfs says of whole disk `disk` (`sda`, `nvme0n2`): its model,
/// zone size in bytes and open-zone limit (0: none); None when sysfs has
/// no such disk.
pub fn zoned_info(disk: &str) -> Option<(ZonedModel, u64, u32)> {
    let q = format!("/sys/block/{disk}/queue");
    let read = |f: &str| std::fs::read_to_string(format!("{q}/{f}")).ok();
    let model = match read("zoned")?.trim() {
        "host-managed" => ZonedModel::HostManaged,
        "host-aware" => ZonedModel::HostAware,
        _ => ZonedModel::None,
    };
    let num = |f: &str| {
        read(f)
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    let zone_bytes = num("chunk_sectors") * 512;
    Some((model, zone_bytes, num("max_open_zones") as u32))
}

/// `struct blk_zone` (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct BlkZone {
    start: u64,
    len: u64,
    wp: u64,
    kind: u8,
    cond: u8,
    non_seq: u8,
    reset: u8,
    resv: [u8; 4],
    capacity: u64,
    reserved: [u8; 24],
}

/// `struct blk_zone_report` header (16 bytes), followed by the zones (the
/// report is built in a `u64` buffer; this states its layout).
#[allow(dead_code)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct BlkZoneReport {
    sector: u64,
    nr_zones: u32,
    flags: u32,
}

/// `struct blk_zone_range`.
#[repr(C)]
struct BlkZoneRange {
    sector: u64,
    nr_sectors: u64,
}

const BLKREPORTZONE: u64 = 0xC010_1282; // _IOWR(0x12, 130, struct blk_zone_report)
const BLKRESETZONE: u64 = 0x4010_1283; // _IOW(0x12, 131, struct blk_zone_range)
const BLK_ZONE_REP_CAPACITY: u32 = 1;
const BLK_ZONE_TYPE_CONVENTIONAL: u8 = 1;
const BLK_ZONE_COND_FULL: u8 = 0xE;
const BLK_ZONE_COND_OFFLINE: u8 = 0xF;

/// One reported zone, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReportedZone {
    pub start: u64,
    pub len: u64,
    pub capacity: u64,
    pub wp: u64,
    pub conventional: bool,
    pub full: bool,
    pub offline: bool,
}

/// Every zone of the device open as `dev` (BLKREPORTZONE, in batches).
pub fn report_zones(dev: &File) -> std::io::Result<Vec<ReportedZone>> {
    const BATCH: usize = 4096;
    let mut out = Vec::new();
    let mut sector = 0u64;
    loop {
        // Header, then BATCH zones: in u64s so the buffer is aligned.
        let words = (16 + BATCH * 64) / 8;
        let mut buf = vec![0u64; words];
        buf[0] = sector; // blk_zone_report.sector
        buf[1] = BATCH as u64; // nr_zones (in: room, out: reported), flags 0
                               // SAFETY: `buf` is a live, 8-byte-aligned buffer of 16 + BATCH × 64
                               // bytes, the size the report's nr_zones promises the kernel; the
                               // kernel writes only within it.
        let r = unsafe { libc::ioctl(dev.as_raw_fd(), BLKREPORTZONE as _, buf.as_mut_ptr()) };
        if r < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let n = (buf[1] & 0xffff_ffff) as usize;
        let flags = (buf[1] >> 32) as u32;
        if n == 0 {
            break;
        }
        for i in 0..n.min(BATCH) {
            let w = &buf[2 + i * 8..2 + (i + 1) * 8];
            let z = BlkZone {
                start: w[0],
                len: w[1],
                wp: w[2],
                kind: w[3] as u8,
                cond: (w[3] >> 8) as u8,
                capacity: w[4],
                ..BlkZone::default()
            };
            let cap = if flags & BLK_ZONE_REP_CAPACITY != 0 {
                z.capacity
            } else {
                z.len
            };
            out.push(ReportedZone {
                start: z.start * 512,
                len: z.len * 512,
                capacity: cap * 512,
                wp: z.wp * 512,
                conventional: z.kind == BLK_ZONE_TYPE_CONVENTIONAL,
                full: z.cond == BLK_ZONE_COND_FULL,
                offline: z.cond == BLK_ZONE_COND_OFFLINE,
            });
            sector = z.start + z.len;
        }
    }
    Ok(out)
}

/// Reset the write pointers of the zones in `start`..`start + len` bytes
/// (BLKRESETZONE; the device must be open for writing).
pub fn reset_zones(dev: &File, start: u64, len: u64) -> std::io::Result<()> {
    let range = BlkZoneRange {
        sector: start / 512,
        nr_sectors: len / 512,
    };
    // SAFETY: `range` is a live `struct blk_zone_range` the kernel only reads.
    let r = unsafe { libc::ioctl(dev.as_raw_fd(), BLKRESETZONE as _, &range) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structs_have_the_kernels_sizes() {
        assert_eq!(std::mem::size_of::<BlkZone>(), 64);
        assert_eq!(std::mem::size_of::<BlkZoneReport>(), 16);
        assert_eq!(std::mem::size_of::<BlkZoneRange>(), 16);
        // _IOWR(0x12, 130, 16 bytes) and _IOW(0x12, 131, 16 bytes).
        assert_eq!(BLKREPORTZONE, (3 << 30) | (16 << 16) | (0x12 << 8) | 130);
        assert_eq!(BLKRESETZONE, (1 << 30) | (16 << 16) | (0x12 << 8) | 131);
    }

    #[test]
    fn a_regular_file_is_not_a_zoned_device() {
        let f = File::open("/proc/self/exe").unwrap();
        assert!(report_zones(&f).is_err());
        assert_eq!(zoned_info("no-such-disk"), None);
    }
}
