//! NVMe as the io_uring_cmd engine speaks it: the Linux passthrough
//! structures (`struct nvme_uring_cmd` and `struct nvme_passthru_cmd` of
//! `<linux/nvme_ioctl.h>`), the I/O commands of the NVM Command Set
//! Specification 1.0 (Read, Write, Write Zeroes, Write Uncorrectable,
//! Verify, Flush, Dataset Management), the Identify Namespace data of the
//! NVMe Base Specification 2.0 (§5.17.2.1, with the NVM command set's
//! fields, NVM Command Set Specification §4.1.5.1), and the completion
//! status, decoded into an errno and a name.
//!
//! Pure: building and reading bytes. The ioctls and the ring are in
//! [`crate::engines::uring_cmd`].

use ssdready_core::spec_passthru::NvmeWriteMode;

/// `_IOWR('N', 0x41, struct nvme_passthru_cmd)`: an admin command.
pub const NVME_IOCTL_ADMIN_CMD: u32 = 0xC048_4E41;
/// `_IO('N', 0x40)`: the namespace ID of a namespace's device.
pub const NVME_IOCTL_ID: u32 = 0x4E40;
/// `_IOWR('N', 0x80, struct nvme_uring_cmd)`: an I/O command, one buffer.
pub const NVME_URING_CMD_IO: u32 = 0xC048_4E80;
/// `_IOWR('N', 0x81, struct nvme_uring_cmd)`: an I/O command, an iovec.
pub const NVME_URING_CMD_IO_VEC: u32 = 0xC048_4E81;

/// `struct nvme_uring_cmd` (72 bytes): what sits in a 128-byte SQE's
/// command area for `NVME_URING_CMD_IO`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NvmeUringCmd {
    /// Command opcode (CDW0 bits 7:0).
    pub opcode: u8,
    /// CDW0 bits 15:8.
    pub flags: u8,
    /// Reserved.
    pub rsvd1: u16,
    /// Namespace ID.
    pub nsid: u32,
    /// CDW2.
    pub cdw2: u32,
    /// CDW3.
    pub cdw3: u32,
    /// Metadata buffer address.
    pub metadata: u64,
    /// Data buffer address (or iovec array).
    pub addr: u64,
    /// Metadata bytes.
    pub metadata_len: u32,
    /// Data bytes (or iovec count).
    pub data_len: u32,
    /// CDW10.
    pub cdw10: u32,
    /// CDW11.
    pub cdw11: u32,
    /// CDW12.
    pub cdw12: u32,
    /// CDW13.
    pub cdw13: u32,
    /// CDW14.
    pub cdw14: u32,
    /// CDW15.
    pub cdw15: u32,
    /// Timeout (0: the driver's default).
    pub timeout_ms: u32,
    /// Reserved.
    pub rsvd2: u32,
}

impl NvmeUringCmd {
    /// The 80 bytes of an SQE128's command area (the first 72 used).
    pub fn to_sqe_cmd(&self) -> [u8; 80] {
        let mut b = [0u8; 80];
        b[0] = self.opcode;
        b[1] = self.flags;
        b[2..4].copy_from_slice(&self.rsvd1.to_ne_bytes());
        let words = [
            (4, self.nsid),
            (8, self.cdw2),
            (12, self.cdw3),
            (32, self.metadata_len),
            (36, self.data_len),
            (40, self.cdw10),
            (44, self.cdw11),
            (48, self.cdw12),
            (52, self.cdw13),
            (56, self.cdw14),
            (60, self.cdw15),
            (64, self.timeout_ms),
            (68, self.rsvd2),
        ];
        for (at, w) in words {
            b[at..at + 4].copy_from_slice(&w.to_ne_bytes());
        }
        b[16..24].copy_from_slice(&self.metadata.to_ne_bytes());
        b[24..32].copy_from_slice(&self.addr.to_ne_bytes());
        b
    }
}

/// `struct nvme_passthru_cmd` (72 bytes), for `NVME_IOCTL_ADMIN_CMD`: as
/// [`NvmeUringCmd`] with the command's DW0 result in place of `rsvd2`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NvmePassthruCmd {
    /// Opcode.
    pub opcode: u8,
    /// Flags.
    pub flags: u8,
    /// Reserved.
    pub rsvd1: u16,
    /// Namespace ID.
    pub nsid: u32,
    /// CDW2.
    pub cdw2: u32,
    /// CDW3.
    pub cdw3: u32,
    /// Metadata address.
    pub metadata: u64,
    /// Data address.
    pub addr: u64,
    /// Metadata bytes.
    pub metadata_len: u32,
    /// Data bytes.
    pub data_len: u32,
    /// CDW10.
    pub cdw10: u32,
    /// CDW11.
    pub cdw11: u32,
    /// CDW12.
    pub cdw12: u32,
    /// CDW13.
    pub cdw13: u32,
    /// CDW14.
    pub cdw14: u32,
    /// CDW15.
    pub cdw15: u32,
    /// Timeout.
    pub timeout_ms: u32,
    /// The completion's DW0.
    pub result: u32,
}

/// Identify (admin opcode 06h, Base Spec §5.17) of namespace `nsid`, CNS
/// 00h (Identify Namespace), CSI 0 (NVM), into a 4096-byte buffer at `addr`.
pub fn identify_namespace(nsid: u32, addr: u64) -> NvmePassthruCmd {
    NvmePassthruCmd {
        opcode: 0x06,
        nsid,
        addr,
        data_len: 4096,
        cdw10: 0x00,
        cdw11: 0,
        ..Default::default()
    }
}

/// What the engine needs of a namespace's Identify data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Namespace {
    /// Namespace ID.
    pub nsid: u32,
    /// NSZE: size in logical blocks.
    pub blocks: u64,
    /// Data bytes per logical block (2^LBADS of the format in use).
    pub lba_size: u32,
    /// Metadata bytes per logical block (MS).
    pub ms: u16,
    /// Metadata travels at the end of each block (FLBAS bit 4): an I/O's
    /// unit is then lba_size + ms bytes.
    pub extended: bool,
    /// Protection information type (DPS bits 2:0; 0: none).
    pub pi_type: u8,
}

impl Namespace {
    /// Bytes one logical block occupies in a data buffer.
    pub fn unit(&self) -> u32 {
        if self.extended {
            self.lba_size + u32::from(self.ms)
        } else {
            self.lba_size
        }
    }

    /// Bytes of data the namespace holds in the job's units.
    pub fn bytes(&self) -> u64 {
        self.blocks.saturating_mul(u64::from(self.unit()))
    }
}

/// Identify Namespace data this program cannot use.
#[derive(Debug, thiserror::Error)]
pub enum NamespaceError {
    #[error("the namespace's format index {index} is beyond its {formats} LBA formats")]
    FormatIndex { index: usize, formats: u32 },
    #[error("the namespace reports 2^{lbads}-byte logical blocks")]
    BlockSize { lbads: u8 },
}

/// Read Identify Namespace data (NVM Command Set §4.1.5.1, figure 97):
/// NSZE bytes 0–7, NLBAF byte 25, FLBAS byte 26, DPS byte 29, the LBA
/// formats from byte 128 (4 bytes each: MS 0–1, LBADS 2). The format in
/// use is FLBAS bits 3:0, plus bits 6:5 as its high bits when there are
/// more than 16 formats (fio's `fio_nvme_get_info`).
pub fn parse_namespace(nsid: u32, id: &[u8; 4096]) -> Result<Namespace, NamespaceError> {
    let mut nsze = [0u8; 8];
    nsze.copy_from_slice(&id[0..8]);
    let (nlbaf, flbas, dps) = (id[25], id[26], id[29]);
    let index = if nlbaf < 16 {
        usize::from(flbas & 0xf)
    } else {
        usize::from(flbas & 0xf) + (usize::from((flbas >> 5) & 0x3) << 4)
    };
    if index > usize::from(nlbaf) {
        return Err(NamespaceError::FormatIndex {
            index,
            formats: u32::from(nlbaf) + 1,
        });
    }
    let f = 128 + 4 * index;
    let ms = u16::from_le_bytes([id[f], id[f + 1]]);
    let lbads = id[f + 2];
    if !(9..=31).contains(&lbads) {
        return Err(NamespaceError::BlockSize { lbads });
    }
    Ok(Namespace {
        nsid,
        blocks: u64::from_le_bytes(nsze),
        lba_size: 1 << lbads,
        ms,
        extended: ms > 0 && flbas & 0x10 != 0,
        pi_type: if ms > 0 { dps & 0x7 } else { 0 },
    })
}

/// NVM command opcodes (NVM Command Set §3.3, figure 18).
pub mod opcode {
    /// Flush.
    pub const FLUSH: u8 = 0x00;
    /// Write.
    pub const WRITE: u8 = 0x01;
    /// Read.
    pub const READ: u8 = 0x02;
    /// Write Uncorrectable.
    pub const WRITE_UNCOR: u8 = 0x04;
    /// Write Zeroes.
    pub const WRITE_ZEROES: u8 = 0x08;
    /// Dataset Management.
    pub const DSM: u8 = 0x09;
    /// Verify.
    pub const VERIFY: u8 = 0x0c;
    /// Zone Append (ZNS).
    pub const ZONE_APPEND: u8 = 0x7d;
}

/// CDW12 bit 30: Force Unit Access (Read, Write, Write Zeroes).
pub const CDW12_FUA: u32 = 1 << 30;
/// CDW12 bit 25: Deallocate (Write Zeroes).
pub const CDW12_DEAC: u32 = 1 << 25;

/// Offset and length in bytes → (SLBA, NLB 0-based), or EINVAL when not
/// a whole number of `unit`-byte blocks (fio's `get_slba`/`get_nlb`), or
/// more than 65536 blocks (NLB is 16 bits).
pub fn lba_range(offset: u64, len: u32, unit: u32) -> Result<(u64, u16), i32> {
    let u = u64::from(unit);
    if u == 0 || len == 0 || !offset.is_multiple_of(u) || !u64::from(len).is_multiple_of(u) {
        return Err(libc::EINVAL);
    }
    let blocks = u64::from(len) / u;
    let nlb = u16::try_from(blocks - 1).map_err(|_| libc::EINVAL)?;
    Ok((offset / u, nlb))
}

/// A read or write command (NVM Command Set §3.2.4 Read, §3.2.6 Write and
/// alike): SLBA in CDW10 (low) and CDW11 (high), NLB in CDW12 bits 15:0,
/// `cdw12_flags` (FUA, DEAC) or'ed in. Data commands carry the buffer;
/// Write Zeroes, Write Uncorrectable and Verify carry none.
pub fn rw(
    op: u8,
    nsid: u32,
    slba: u64,
    nlb: u16,
    cdw12_flags: u32,
    addr: u64,
    len: u32,
) -> NvmeUringCmd {
    let data = matches!(op, opcode::READ | opcode::WRITE | opcode::ZONE_APPEND);
    NvmeUringCmd {
        opcode: op,
        nsid,
        cdw10: slba as u32,
        cdw11: (slba >> 32) as u32,
        cdw12: u32::from(nlb) | cdw12_flags,
        addr: if data { addr } else { 0 },
        data_len: if data { len } else { 0 },
        ..Default::default()
    }
}

/// The opcode a write becomes under `write_mode`.
pub fn write_opcode(mode: NvmeWriteMode) -> u8 {
    match mode {
        NvmeWriteMode::Write => opcode::WRITE,
        NvmeWriteMode::Uncor => opcode::WRITE_UNCOR,
        NvmeWriteMode::Zeroes => opcode::WRITE_ZEROES,
        NvmeWriteMode::Verify => opcode::VERIFY,
        NvmeWriteMode::ZoneAppend => opcode::ZONE_APPEND,
    }
}

/// One Dataset Management range (NVM Command Set §3.2.3, figure 39):
/// context attributes, length in logical blocks (1-based), starting LBA.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DsmRange {
    /// Context attributes.
    pub cattr: u32,
    /// Logical blocks (not 0-based).
    pub nlb: u32,
    /// Starting LBA.
    pub slba: u64,
}

/// Dataset Management with the Attribute – Deallocate bit (CDW11 bit 2)
/// of `ranges` ranges at `addr`: NR (CDW10 bits 7:0) is 0-based.
pub fn deallocate(nsid: u32, addr: u64, ranges: u32) -> NvmeUringCmd {
    NvmeUringCmd {
        opcode: opcode::DSM,
        nsid,
        addr,
        data_len: ranges * std::mem::size_of::<DsmRange>() as u32,
        cdw10: ranges - 1,
        cdw11: 1 << 2,
        ..Default::default()
    }
}

/// Flush (NVMe Base Specification 2.0 §7.1): the namespace's volatile
/// write cache to media.
pub fn flush(nsid: u32) -> NvmeUringCmd {
    NvmeUringCmd {
        opcode: opcode::FLUSH,
        nsid,
        ..Default::default()
    }
}

/// A completion status as the driver returns it in `cqe->res` when
/// positive: Status Code bits 7:0, Status Code Type 10:8, More 13, Do Not
/// Retry 14 (Base Spec §4.6.1.2, figure 101).
pub fn status_name(status: u32) -> String {
    let code = status & 0x7ff;
    let name = match code {
        0x001 => "Invalid Command Opcode",
        0x002 => "Invalid Field in Command",
        0x004 => "Data Transfer Error",
        0x006 => "Internal Error",
        0x00b => "Invalid Namespace or Format",
        0x080 => "LBA Out of Range",
        0x081 => "Capacity Exceeded",
        0x082 => "Namespace Not Ready",
        0x083 => "Reservation Conflict",
        0x180 => "Conflicting Attributes",
        0x181 => "Invalid Protection Information",
        0x182 => "Attempted Write to Read Only Range",
        0x1b9 => "Zone Is Full",
        0x1bc => "Zone Invalid Write",
        0x280 => "Write Fault",
        0x281 => "Unrecovered Read Error",
        0x282 => "End-to-end Guard Check Error",
        0x283 => "End-to-end Application Tag Check Error",
        0x284 => "End-to-end Reference Tag Check Error",
        0x285 => "Compare Failure",
        0x286 => "Access Denied",
        0x287 => "Deallocated or Unwritten Logical Block",
        0x370 => "Internal Path Error",
        _ => "",
    };
    let kind = match code >> 8 {
        0 => "generic",
        1 => "command specific",
        2 => "media and data integrity",
        3 => "path related",
        _ => "vendor specific",
    };
    let dnr = if status & (1 << 14) != 0 {
        ", do not retry"
    } else {
        ""
    };
    if name.is_empty() {
        format!("NVMe status 0x{code:03x} ({kind}{dnr})")
    } else {
        format!("NVMe status 0x{code:03x} {name} ({kind}{dnr})")
    }
}

/// The errno of a status, as the Linux NVMe driver maps it for block I/O
/// (`nvme_error_status`): LBA out of range EREMOTEIO (BLK_STS_TARGET),
/// capacity exceeded ENOSPC, unsupported commands EOPNOTSUPP, media errors
/// ENODATA (BLK_STS_MEDIUM), protection-information errors EILSEQ,
/// reservation conflict EBADE, everything else EIO.
pub fn status_errno(status: u32) -> i32 {
    match status & 0x7ff {
        0x080 => libc::EREMOTEIO,
        0x081 => libc::ENOSPC,
        0x001 | 0x002 | 0x00b | 0x180 => libc::EOPNOTSUPP,
        0x280 | 0x281 | 0x285 | 0x286 | 0x287 | 0x182 => libc::ENODATA,
        0x181 | 0x282..=0x284 => libc::EILSEQ,
        0x083 => libc::EBADE,
        _ => libc::EIO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn passthrough_structures_have_the_kernels_layout() {
        assert_eq!(size_of::<NvmeUringCmd>(), 72);
        assert_eq!(size_of::<NvmePassthruCmd>(), 72);
        assert_eq!(offset_of!(NvmeUringCmd, nsid), 4);
        assert_eq!(offset_of!(NvmeUringCmd, metadata), 16);
        assert_eq!(offset_of!(NvmeUringCmd, addr), 24);
        assert_eq!(offset_of!(NvmeUringCmd, data_len), 36);
        assert_eq!(offset_of!(NvmeUringCmd, cdw10), 40);
        assert_eq!(offset_of!(NvmeUringCmd, cdw12), 48);
        assert_eq!(offset_of!(NvmeUringCmd, timeout_ms), 64);
        assert_eq!(offset_of!(NvmePassthruCmd, result), 68);
        assert_eq!(size_of::<DsmRange>(), 16);
        assert_eq!(offset_of!(DsmRange, slba), 8);
        // _IOWR('N', n, 72 bytes) = 3 << 30 | 72 << 16 | 'N' << 8 | n.
        let iowr = |n: u32| 3 << 30 | 72 << 16 | u32::from(b'N') << 8 | n;
        assert_eq!(NVME_IOCTL_ADMIN_CMD, iowr(0x41));
        assert_eq!(NVME_URING_CMD_IO, iowr(0x80));
        assert_eq!(NVME_URING_CMD_IO_VEC, iowr(0x81));
    }

    #[test]
    fn the_sqe_command_area_is_the_structure_byte_for_byte() {
        let c = rw(
            opcode::WRITE,
            1,
            0x1_0000_0002,
            7,
            CDW12_FUA,
            0xdead_beef,
            4096,
        );
        let b = c.to_sqe_cmd();
        // SAFETY: NvmeUringCmd is repr(C) plain data of 72 bytes.
        let raw: [u8; 72] = unsafe { std::mem::transmute(c) };
        assert_eq!(&b[..72], &raw[..]);
        assert_eq!(&b[72..], &[0u8; 8]);
    }

    #[test]
    fn read_and_write_commands_follow_the_nvm_command_set() {
        // 4 KiB blocks: 32 KiB at 8 GiB + 4 KiB = SLBA 0x200001, NLB 7.
        let (slba, nlb) = lba_range((8 << 30) + 4096, 32768, 4096).unwrap();
        assert_eq!((slba, nlb), (0x20_0001, 7));
        let c = rw(opcode::READ, 1, slba, nlb, CDW12_FUA, 0x1000, 32768);
        assert_eq!(
            (c.opcode, c.cdw10, c.cdw11, c.cdw12),
            (0x02, 0x20_0001, 0, 0x4000_0007)
        );
        assert_eq!((c.addr, c.data_len), (0x1000, 32768));
        // Past 32 bits of LBA: the high half in CDW11.
        let c = rw(opcode::WRITE, 3, 0x1_2345_6789, 0, 0, 0x1000, 512);
        assert_eq!(
            (c.opcode, c.nsid, c.cdw10, c.cdw11, c.cdw12),
            (0x01, 3, 0x2345_6789, 1, 0)
        );
        // Write Zeroes with DEAC: no data pointer.
        let c = rw(opcode::WRITE_ZEROES, 1, 8, 1, CDW12_DEAC, 0x1000, 8192);
        assert_eq!((c.cdw12, c.addr, c.data_len), (0x0200_0001, 0, 0));
        assert_eq!(write_opcode(NvmeWriteMode::Uncor), 0x04);
        assert_eq!(write_opcode(NvmeWriteMode::Verify), 0x0c);
        // Extended LBAs: 4096 + 64 bytes a block.
        assert_eq!(lba_range(4160 * 3, 4160 * 2, 4160), Ok((3, 1)));
        assert_eq!(lba_range(4096, 4096, 4160), Err(libc::EINVAL));
        assert_eq!(lba_range(0, 65537 * 512, 512), Err(libc::EINVAL));
        assert_eq!(lba_range(0, 65536 * 512, 512), Ok((0, 0xffff)));
    }

    #[test]
    fn a_trim_is_one_deallocate_range_and_fsync_a_flush() {
        let c = deallocate(1, 0x2000, 1);
        assert_eq!((c.opcode, c.cdw10, c.cdw11, c.data_len), (0x09, 0, 4, 16));
        assert_eq!(deallocate(1, 0x2000, 8).cdw10, 7);
        let f = flush(5);
        assert_eq!((f.opcode, f.nsid, f.addr, f.cdw12), (0, 5, 0, 0));
        let i = identify_namespace(2, 0x3000);
        assert_eq!((i.opcode, i.nsid, i.data_len, i.cdw10), (0x06, 2, 4096, 0));
    }

    #[test]
    fn identify_namespace_gives_the_format_in_use() {
        let mut id = [0u8; 4096];
        id[0..8].copy_from_slice(&0x1000_0000u64.to_le_bytes());
        id[25] = 1; // two formats
        id[26] = 0x01; // format 1 in use, metadata separate
        id[128 + 2] = 9; // format 0: 512 bytes
        id[132..134].copy_from_slice(&8u16.to_le_bytes());
        id[132 + 2] = 12; // format 1: 4096 + 8
        id[29] = 0x01; // PI type 1
        let ns = parse_namespace(1, &id).unwrap();
        assert_eq!(
            ns,
            Namespace {
                nsid: 1,
                blocks: 0x1000_0000,
                lba_size: 4096,
                ms: 8,
                extended: false,
                pi_type: 1
            }
        );
        assert_eq!((ns.unit(), ns.bytes()), (4096, 1 << 40));
        id[26] = 0x11; // extended LBA
        let ns = parse_namespace(1, &id).unwrap();
        assert_eq!((ns.extended, ns.unit()), (true, 4104));
        // More than 16 formats: FLBAS bits 6:5 are the index's high bits.
        id[25] = 20;
        id[26] = 0x20 | 0x02; // index 16 + 2 = 18
        id[128 + 4 * 18 + 2] = 9;
        assert_eq!(parse_namespace(1, &id).unwrap().lba_size, 512);
        id[26] = 0x0f;
        id[25] = 3;
        assert!(parse_namespace(1, &id).is_err());
    }

    #[test]
    fn statuses_read_as_names_and_errnos() {
        assert_eq!(
            status_name(0x80),
            "NVMe status 0x080 LBA Out of Range (generic)"
        );
        assert_eq!(
            status_name(0x4285),
            "NVMe status 0x285 Compare Failure (media and data integrity, do not retry)"
        );
        assert_eq!(status_name(0x1ff), "NVMe status 0x1ff (command specific)");
        assert_eq!(status_errno(0x80), libc::EREMOTEIO);
        assert_eq!(status_errno(0x4281), libc::ENODATA);
        assert_eq!(status_errno(0x282), libc::EILSEQ);
        assert_eq!(status_errno(0x2), libc::EOPNOTSUPP);
        assert_eq!(status_errno(0x6), libc::EIO);
    }
}
