//! The ublk transport's kernel interface, written by hand from
//! `include/uapi/linux/ublk_cmd.h`: control commands (sent as io_uring
//! `URING_CMD`s to `/dev/ublk-control`, ioctl-encoded), the per-queue I/O
//! commands, the I/O descriptor the driver shares, and the parameters of
//! a device. Each structure is encoded to the bytes the kernel reads, and
//! the tests pin every size, offset and command number.
//!
//! [`probe`] says whether ublk can be used here and why not; the server
//! is [`super::ublk_serve`]. Kernels before 6.4 know only the legacy
//! command numbers (the bare `nr`), later ones both unless built without
//! `CONFIG_BLKDEV_UBLK_LEGACY_OPCODES`: [`Opcodes`] says which to send.

/// `'u'`, the ublk ioctl type.
const UBLK_TYPE: u32 = b'u' as u32;

/// `_IOC(dir, 'u', nr, size)`.
const fn ioc(dir: u32, nr: u32, size: u32) -> u32 {
    (dir << 30) | (size << 16) | (UBLK_TYPE << 8) | nr
}
const IOR: u32 = 2;
const IOWR: u32 = 3;

/// `sizeof(struct ublksrv_ctrl_cmd)`, `ublksrv_io_cmd`, `ublksrv_io_desc`,
/// `ublksrv_ctrl_dev_info`, `ublk_param_basic`.
pub const CTRL_CMD: usize = 32;
pub const IO_CMD: usize = 16;
pub const IO_DESC: usize = 24;
pub const DEV_INFO: usize = 64;
pub const PARAM_BASIC: usize = 32;

/// Control commands (ioctl-encoded, `UBLK_F_CMD_IOCTL_ENCODE`).
pub const ADD_DEV: u32 = ioc(IOWR, 0x04, CTRL_CMD as u32);
pub const DEL_DEV: u32 = ioc(IOWR, 0x05, CTRL_CMD as u32);
pub const START_DEV: u32 = ioc(IOWR, 0x06, CTRL_CMD as u32);
pub const STOP_DEV: u32 = ioc(IOWR, 0x07, CTRL_CMD as u32);
pub const SET_PARAMS: u32 = ioc(IOWR, 0x08, CTRL_CMD as u32);
pub const GET_FEATURES: u32 = ioc(IOR, 0x13, CTRL_CMD as u32);
/// I/O commands.
pub const IO_FETCH_REQ: u32 = ioc(IOWR, 0x20, IO_CMD as u32);
pub const IO_COMMIT_AND_FETCH_REQ: u32 = ioc(IOWR, 0x21, IO_CMD as u32);

/// `UBLK_F_CMD_IOCTL_ENCODE`.
pub const F_CMD_IOCTL_ENCODE: u64 = 1 << 6;
/// `UBLK_PARAM_TYPE_BASIC`, `UBLK_ATTR_VOLATILE_CACHE`.
pub const PARAM_TYPE_BASIC: u32 = 1;
pub const ATTR_VOLATILE_CACHE: u32 = 1 << 2;
/// `UBLK_IO_OP_*`.
pub const IO_OP_READ: u8 = 0;
pub const IO_OP_WRITE: u8 = 1;
pub const IO_OP_FLUSH: u8 = 2;
pub const IO_OP_DISCARD: u8 = 3;
/// `UBLK_IO_OP_WRITE_ZEROES`.
pub const IO_OP_WRITE_ZEROES: u8 = 5;
/// `UBLK_IO_RES_ABORT`: the device is stopping; the tag is not refetched.
pub const IO_RES_ABORT: i32 = -libc::ENODEV;
/// `UBLK_PARAM_TYPE_DISCARD`.
pub const PARAM_TYPE_DISCARD: u32 = 2;

/// Which command numbers the kernel takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcodes {
    /// `_IOWR('u', nr, …)` (6.4 on).
    Encoded,
    /// The bare `nr` (6.0–6.3, and later kernels built with the legacy
    /// opcodes).
    Legacy,
}

impl Opcodes {
    /// The number to send for the ioctl-encoded command `encoded`.
    pub fn of(self, encoded: u32) -> u32 {
        match self {
            Opcodes::Encoded => encoded,
            Opcodes::Legacy => encoded & 0xff,
        }
    }
}

/// The `dev_id` field of a `struct ublksrv_ctrl_dev_info`.
pub fn dev_info_id(b: &[u8; DEV_INFO]) -> u32 {
    u32::from_le_bytes([b[12], b[13], b[14], b[15]])
}

/// `struct ublksrv_ctrl_cmd`.
pub fn ctrl_cmd(dev_id: u32, queue_id: u16, len: u16, addr: u64, data: u64) -> [u8; CTRL_CMD] {
    let mut b = [0u8; CTRL_CMD];
    b[0..4].copy_from_slice(&dev_id.to_le_bytes());
    b[4..6].copy_from_slice(&queue_id.to_le_bytes());
    b[6..8].copy_from_slice(&len.to_le_bytes());
    b[8..16].copy_from_slice(&addr.to_le_bytes());
    b[16..24].copy_from_slice(&data.to_le_bytes());
    b
}

/// `struct ublksrv_ctrl_dev_info` for ADD_DEV (`dev_id` u32::MAX: any).
pub fn dev_info(queues: u16, depth: u16, max_io: u32, flags: u64) -> [u8; DEV_INFO] {
    let mut b = [0u8; DEV_INFO];
    b[0..2].copy_from_slice(&queues.to_le_bytes());
    b[2..4].copy_from_slice(&depth.to_le_bytes());
    b[8..12].copy_from_slice(&max_io.to_le_bytes());
    b[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
    b[24..32].copy_from_slice(&flags.to_le_bytes());
    b
}

/// `struct ublksrv_io_cmd`.
pub fn io_cmd(q: u16, tag: u16, result: i32, addr: u64) -> [u8; IO_CMD] {
    let mut b = [0u8; IO_CMD];
    b[0..2].copy_from_slice(&q.to_le_bytes());
    b[2..4].copy_from_slice(&tag.to_le_bytes());
    b[4..8].copy_from_slice(&result.to_le_bytes());
    b[8..16].copy_from_slice(&addr.to_le_bytes());
    b
}

/// A decoded `struct ublksrv_io_desc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoDesc {
    pub op: u8,
    pub flags: u32,
    pub nr_sectors: u32,
    pub start_sector: u64,
    pub addr: u64,
}

impl IoDesc {
    pub fn parse(b: &[u8; IO_DESC]) -> IoDesc {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let u64_at = |i: usize| u32_at(i) as u64 | (u32_at(i + 4) as u64) << 32;
        let op_flags = u32_at(0);
        IoDesc {
            op: (op_flags & 0xff) as u8,
            flags: op_flags >> 8,
            nr_sectors: u32_at(4),
            start_sector: u64_at(8),
            addr: u64_at(16),
        }
    }
}

/// `struct ublk_params` with its basic part only (`len` 40): logical
/// blocks of `1 << lbs_shift` bytes, `sectors` 512-byte sectors.
pub fn params_basic(lbs_shift: u8, max_sectors: u32, sectors: u64, cache: bool) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + PARAM_BASIC);
    b.extend(((8 + PARAM_BASIC) as u32).to_le_bytes());
    b.extend(PARAM_TYPE_BASIC.to_le_bytes());
    basic(&mut b, lbs_shift, max_sectors, sectors, cache);
    b
}

/// `struct ublk_params` with its basic and discard parts (`len` 60): one
/// discard range of at most `max_discard_sectors` per request, in units
/// of the logical block.
pub fn params_with_discard(
    lbs_shift: u8,
    max_sectors: u32,
    sectors: u64,
    cache: bool,
    max_discard_sectors: u32,
) -> Vec<u8> {
    let mut b = Vec::with_capacity(8 + PARAM_BASIC + PARAM_DISCARD);
    b.extend(((8 + PARAM_BASIC + PARAM_DISCARD) as u32).to_le_bytes());
    b.extend((PARAM_TYPE_BASIC | PARAM_TYPE_DISCARD).to_le_bytes());
    basic(&mut b, lbs_shift, max_sectors, sectors, cache);
    b.extend(0u32.to_le_bytes()); // discard_alignment
    b.extend((1u32 << lbs_shift).to_le_bytes()); // discard_granularity
    b.extend(max_discard_sectors.to_le_bytes());
    b.extend(0u32.to_le_bytes()); // max_write_zeroes_sectors
    b.extend(1u16.to_le_bytes()); // max_discard_segments
    b.extend(0u16.to_le_bytes());
    b
}

/// `sizeof(struct ublk_param_discard)`.
pub const PARAM_DISCARD: usize = 20;

fn basic(b: &mut Vec<u8>, lbs_shift: u8, max_sectors: u32, sectors: u64, cache: bool) {
    let attrs = if cache { ATTR_VOLATILE_CACHE } else { 0 };
    b.extend(attrs.to_le_bytes());
    b.extend([lbs_shift, lbs_shift, lbs_shift, lbs_shift]);
    b.extend(max_sectors.to_le_bytes());
    b.extend(0u32.to_le_bytes()); // chunk_sectors
    b.extend(sectors.to_le_bytes());
    b.extend(0u64.to_le_bytes()); // virt_boundary_mask
}

/// Kernels known to crash on the first ublk device add.
pub fn known_bad(release: &str) -> bool {
    let nums: Vec<u32> = release
        .split(|c: char| !c.is_ascii_digit())
        .take(3)
        .filter_map(|s| s.parse().ok())
        .collect();
    if matches!(nums.as_slice(), [6, 18, 4] | [6, 18, 5]) {
        return true;
    }
    // Ubuntu's 6.17 builds with the NUMA-aware queue allocation backported
    // without the tag-set reordering: generic -24 … -40, aws -1019, azure
    // -1015 … -1020 (ADD_DEV dereferences NULL in ublk_init_queues).
    let abi = release
        .strip_prefix("6.17.0-")
        .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<u32>().ok());
    match abi {
        Some(n) if release.ends_with("-aws") => n == 1019,
        Some(n) if release.ends_with("-azure") => (1015..=1020).contains(&n),
        Some(n) => (24..=40).contains(&n),
        None => false,
    }
}

/// Whether the ublk transport can serve a drive here; if not, why (one
/// clause naming what is missing).
pub fn probe() -> Result<(), super::error::KernelError> {
    if !std::path::Path::new("/dev/ublk-control").exists() {
        return Err(super::error::KernelError::NoUblkControl);
    }
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let release = release.trim();
    if known_bad(release) {
        return Err(super::error::KernelError::UblkCrashes {
            release: release.to_string(),
        });
    }
    if !ssdready_io::kdev::is_root() {
        return Err(super::error::KernelError::UblkNotRoot);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_numbers_match_the_uapi() {
        // _IOWR('u', 0x04, struct ublksrv_ctrl_cmd) etc., as the kernel and
        // ublksrv compute them.
        assert_eq!(ADD_DEV, 0xc020_7504);
        assert_eq!(DEL_DEV, 0xc020_7505);
        assert_eq!(START_DEV, 0xc020_7506);
        assert_eq!(STOP_DEV, 0xc020_7507);
        assert_eq!(SET_PARAMS, 0xc020_7508);
        assert_eq!(GET_FEATURES, 0x8020_7513);
        assert_eq!(IO_FETCH_REQ, 0xc010_7520);
        assert_eq!(IO_COMMIT_AND_FETCH_REQ, 0xc010_7521);
    }

    #[test]
    fn structures_have_the_uapi_layout() {
        let c = ctrl_cmd(3, 0xffff, 64, 0x1122_3344_5566_7788, 9);
        assert_eq!(c.len(), 32);
        assert_eq!(&c[0..4], &[3, 0, 0, 0]);
        assert_eq!(&c[4..8], &[0xff, 0xff, 64, 0]);
        assert_eq!(c[8], 0x88);
        assert_eq!(c[16], 9);
        let d = dev_info(2, 128, 1 << 20, F_CMD_IOCTL_ENCODE);
        assert_eq!(&d[0..4], &[2, 0, 128, 0]);
        assert_eq!(&d[8..12], &(1u32 << 20).to_le_bytes());
        assert_eq!(&d[12..16], &[0xff; 4]);
        assert_eq!(d[24], 1 << 6);
        let i = io_cmd(1, 7, -5, 0xabc);
        assert_eq!(&i[0..8], &[1, 0, 7, 0, 0xfb, 0xff, 0xff, 0xff]);
        let p = params_basic(12, 2048, 131072, true);
        assert_eq!(p.len(), 40);
        assert_eq!(&p[0..8], &[40, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(p[8], 4);
        assert_eq!(p[12], 12);
        assert_eq!(&p[24..32], &131072u64.to_le_bytes());
    }

    #[test]
    fn descriptors_decode_and_queues_map_by_pages() {
        let mut b = [0u8; IO_DESC];
        b[0..4].copy_from_slice(&(IO_OP_WRITE as u32 | (1 << 13) << 8).to_le_bytes());
        b[4..8].copy_from_slice(&8u32.to_le_bytes());
        b[8..16].copy_from_slice(&4096u64.to_le_bytes());
        let d = IoDesc::parse(&b);
        assert_eq!(
            (d.op, d.flags, d.nr_sectors, d.start_sector),
            (1, 1 << 13, 8, 4096)
        );
        assert_eq!(Opcodes::Legacy.of(ADD_DEV), 0x04);
        assert_eq!(Opcodes::Legacy.of(IO_COMMIT_AND_FETCH_REQ), 0x21);
        assert_eq!(Opcodes::Encoded.of(START_DEV), START_DEV);
        let mut info = dev_info(1, 64, 1 << 20, 0);
        info[12..16].copy_from_slice(&7u32.to_le_bytes());
        assert_eq!(dev_info_id(&info), 7);
        let p = params_with_discard(12, 2048, 131072, false, 2048);
        assert_eq!(p.len(), 60);
        assert_eq!(&p[0..8], &[60, 0, 0, 0, 3, 0, 0, 0]);
        // discard_granularity at 44, max_discard_sectors at 48,
        // max_discard_segments at 56.
        assert_eq!(&p[44..48], &4096u32.to_le_bytes());
        assert_eq!(&p[48..52], &2048u32.to_le_bytes());
        assert_eq!(&p[56..58], &[1, 0]);
    }

    #[test]
    fn known_bad_kernels_are_named() {
        assert!(known_bad("6.18.4"));
        assert!(known_bad("6.18.5-arch1"));
        assert!(!known_bad("6.18.6"));
        assert!(!known_bad("6.18.0-1-amd64"));
        assert!(!known_bad("6.1.4"));
        assert!(known_bad("6.17.0-35-generic"));
        assert!(!known_bad("6.17.0-41-generic"));
        assert!(!known_bad("6.17.0-14-generic"));
        assert!(known_bad("6.17.0-1019-aws"));
        assert!(!known_bad("6.17.0-1020-aws"));
        assert!(known_bad("6.17.0-1016-azure"));
    }
}
