//! SCSI as the sg engine speaks it: command descriptor blocks (CDBs) of the
//! SCSI Block Commands (SBC-4, T10 BSR INCITS 506), the Linux SG_IO request
//! header (`struct sg_io_hdr`, `<scsi/sg.h>`), and the sense data a device
//! returns when a command fails (SPC-4, T10 INCITS 513, §4.5), decoded into
//! an errno and a line a person can read.
//!
//! Everything here is pure: building bytes and reading them. The ioctl
//! that sends them is in [`crate::engines::sg`].

use ssdready_core::spec_passthru::SgWriteMode;

/// `SG_IO` (`<scsi/sg.h>`): send one command and wait for it.
pub const SG_IO: libc::c_ulong = 0x2285;
/// `SG_GET_VERSION_NUM`: answered by the sg driver only.
pub const SG_GET_VERSION_NUM: libc::c_ulong = 0x2282;
/// No data moves.
pub const SG_DXFER_NONE: i32 = -1;
/// Data goes to the device.
pub const SG_DXFER_TO_DEV: i32 = -2;
/// Data comes from the device.
pub const SG_DXFER_FROM_DEV: i32 = -3;
/// `info & SG_INFO_CHECK`: something other than GOOD came back.
pub const SG_INFO_CHECK: u32 = 0x1;
/// `SGV4_FLAG_HIPRI`: poll for the completion (fio's `hipri`).
pub const SGV4_FLAG_HIPRI: u32 = 0x800;
/// fio's command timeout (`SCSI_TIMEOUT_MS`).
pub const TIMEOUT_MS: u32 = 30_000;
/// Room for sense data (fio's `MAX_SB`).
pub const SENSE_LEN: usize = 64;
/// The largest LBA a 10-byte CDB can carry (fio's `MAX_10B_LBA`).
pub const MAX_10B_LBA: u64 = 0xFFFF_FFFF;

/// `struct sg_io_hdr` of `<scsi/sg.h>` (the SG v3 interface), as the
/// kernel lays it out on a 64-bit machine: 88 bytes.
#[repr(C)]
#[derive(Debug)]
pub struct SgIoHdr {
    /// `'S'`.
    pub interface_id: i32,
    /// `SG_DXFER_*`.
    pub dxfer_direction: i32,
    /// CDB length.
    pub cmd_len: u8,
    /// Room at `sbp`.
    pub mx_sb_len: u8,
    /// 0: `dxferp` is one buffer.
    pub iovec_count: u16,
    /// Bytes to move.
    pub dxfer_len: u32,
    /// The data buffer.
    pub dxferp: *mut libc::c_void,
    /// The CDB.
    pub cmdp: *const u8,
    /// The sense buffer.
    pub sbp: *mut u8,
    /// Milliseconds.
    pub timeout: u32,
    /// `SG_FLAG_*`, `SGV4_FLAG_HIPRI`.
    pub flags: u32,
    /// Caller's tag.
    pub pack_id: i32,
    /// Caller's pointer.
    pub usr_ptr: *mut libc::c_void,
    /// SCSI status byte.
    pub status: u8,
    /// Shifted status (obsolete).
    pub masked_status: u8,
    /// Message status.
    pub msg_status: u8,
    /// Sense bytes written.
    pub sb_len_wr: u8,
    /// Host adapter status (`DID_*`).
    pub host_status: u16,
    /// Driver status (`DRIVER_*`).
    pub driver_status: u16,
    /// Bytes not transferred.
    pub resid: i32,
    /// Milliseconds the command took.
    pub duration: u32,
    /// `SG_INFO_*`.
    pub info: u32,
}

impl SgIoHdr {
    /// A header for `cdb` moving `len` bytes at `buf` in `direction`, with
    /// sense room at `sense`. The caller keeps all three alive while the
    /// header is in use.
    pub fn new(
        cdb: &Cdb,
        direction: i32,
        buf: *mut u8,
        len: u32,
        sense: &mut [u8; SENSE_LEN],
    ) -> Self {
        SgIoHdr {
            interface_id: i32::from(b'S'),
            dxfer_direction: if len == 0 { SG_DXFER_NONE } else { direction },
            cmd_len: cdb.len,
            mx_sb_len: SENSE_LEN as u8,
            iovec_count: 0,
            dxfer_len: len,
            dxferp: if len == 0 {
                std::ptr::null_mut()
            } else {
                buf.cast()
            },
            cmdp: cdb.bytes.as_ptr(),
            sbp: sense.as_mut_ptr(),
            timeout: TIMEOUT_MS,
            flags: 0,
            pack_id: 0,
            usr_ptr: std::ptr::null_mut(),
            status: 0,
            masked_status: 0,
            msg_status: 0,
            sb_len_wr: 0,
            host_status: 0,
            driver_status: 0,
            resid: 0,
            duration: 0,
            info: 0,
        }
    }
}

/// A CDB: up to 16 bytes, `len` of them used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cdb {
    /// The bytes (unused ones zero).
    pub bytes: [u8; 16],
    /// 6, 10 or 16.
    pub len: u8,
}

impl Cdb {
    fn new(len: u8, opcode: u8) -> Self {
        let mut bytes = [0; 16];
        bytes[0] = opcode;
        Cdb { bytes, len }
    }

    /// The used bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// LBA and block count in the 10-byte layout (LBA in bytes 2–5,
    /// TRANSFER LENGTH in 7–8) or the 16-byte one (8 bytes of LBA from byte
    /// 2, 4 bytes of length from byte 10): SBC-4 §5.16/§5.18 and alike.
    fn lba_blocks(mut self, lba: u64, blocks: u32) -> Self {
        if self.len == 10 {
            self.bytes[2..6].copy_from_slice(&(lba as u32).to_be_bytes());
            self.bytes[7..9].copy_from_slice(&(blocks as u16).to_be_bytes());
        } else {
            self.bytes[2..10].copy_from_slice(&lba.to_be_bytes());
            self.bytes[10..14].copy_from_slice(&blocks.to_be_bytes());
        }
        self
    }
}

/// Whether an access at `lba` of `blocks` fits a 10-byte CDB. fio looks
/// at the LBA alone (and truncates a count over 65535); ssdready also
/// moves to 16 bytes when the count does not fit 16 bits.
pub fn fits_10(lba: u64, blocks: u32) -> bool {
    lba < MAX_10B_LBA && blocks <= 0xFFFF
}

/// What a request of the engine becomes on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Command {
    /// The CDB.
    pub cdb: Cdb,
    /// `SG_DXFER_*`.
    pub direction: i32,
    /// Bytes moved (0: none).
    pub data_len: u32,
}

/// FUA: bit 3 of byte 1 of READ/WRITE (SBC-4 §5.16 table 67).
const FUA: u8 = 0x08;

/// READ(10) 28h (SBC-4 §5.16) or READ(16) 88h (§5.18).
pub fn read(lba: u64, blocks: u32, block_size: u32, fua: bool) -> Command {
    let mut c = if fits_10(lba, blocks) {
        Cdb::new(10, 0x28)
    } else {
        Cdb::new(16, 0x88)
    };
    if fua {
        c.bytes[1] |= FUA;
    }
    Command {
        cdb: c.lba_blocks(lba, blocks),
        direction: SG_DXFER_FROM_DEV,
        data_len: blocks.saturating_mul(block_size),
    }
}

/// What a write becomes under `sg_write_mode` (fio's `fio_sgio_prep`), for
/// `blocks` blocks of `block_size` bytes at `lba`. `stream` is the stream
/// of WRITE STREAM.
pub fn write(
    mode: SgWriteMode,
    lba: u64,
    blocks: u32,
    block_size: u32,
    fua: bool,
    stream: u16,
) -> Command {
    let short = fits_10(lba, blocks);
    let pick = |op10: u8, op16: u8| {
        if short {
            Cdb::new(10, op10)
        } else {
            Cdb::new(16, op16)
        }
    };
    let all = blocks.saturating_mul(block_size);
    let (mut c, data_len) = match mode {
        // WRITE(10) 2Ah (SBC-4 §5.40), WRITE(16) 8Ah (§5.42).
        SgWriteMode::Write => {
            let mut c = pick(0x2a, 0x8a);
            if fua {
                c.bytes[1] |= FUA;
            }
            (c, all)
        }
        // WRITE AND VERIFY(10) 2Eh (§5.44), (16) 8Eh (§5.46), BYTCHK 0.
        SgWriteMode::WriteAndVerify => (pick(0x2e, 0x8e), all),
        // WRITE SAME(10) 41h (§5.48), (16) 93h (§5.50): one block of data.
        SgWriteMode::WriteSame => (pick(0x41, 0x93), block_size),
        SgWriteMode::WriteSameNdob => return write_same_ndob(lba, blocks),
        SgWriteMode::WriteStream => return write_stream(lba, blocks, all, fua, stream),
        // VERIFY(10) 2Fh (§5.33), (16) 8Fh (§5.35); BYTCHK in byte 1 bits
        // 2:1 (table 61): 00b no data, 01b compare all, 11b one block.
        SgWriteMode::VerifyBytchk00 => (pick(0x2f, 0x8f), 0),
        SgWriteMode::VerifyBytchk01 => {
            let mut c = pick(0x2f, 0x8f);
            c.bytes[1] |= 0x02;
            (c, all)
        }
        SgWriteMode::VerifyBytchk11 => {
            let mut c = pick(0x2f, 0x8f);
            c.bytes[1] |= 0x06;
            (c, block_size)
        }
    };
    c = c.lba_blocks(lba, blocks);
    Command {
        cdb: c,
        direction: if data_len == 0 {
            SG_DXFER_NONE
        } else {
            SG_DXFER_TO_DEV
        },
        data_len,
    }
}

/// WRITE SAME(16) with NDOB (byte 1 bit 0): no data-out buffer.
fn write_same_ndob(lba: u64, blocks: u32) -> Command {
    let mut c = Cdb::new(16, 0x93);
    c.bytes[1] |= 0x01;
    Command {
        cdb: c.lba_blocks(lba, blocks),
        direction: SG_DXFER_NONE,
        data_len: 0,
    }
}

/// WRITE STREAM(16) 9Ah (§5.52): LBA 2–9, STR_ID 10–11, TRANSFER LENGTH
/// 12–13; `all` bytes of data.
fn write_stream(lba: u64, blocks: u32, all: u32, fua: bool, stream: u16) -> Command {
    let mut c = Cdb::new(16, 0x9a);
    if fua {
        c.bytes[1] |= FUA;
    }
    c.bytes[2..10].copy_from_slice(&lba.to_be_bytes());
    c.bytes[10..12].copy_from_slice(&stream.to_be_bytes());
    c.bytes[12..14].copy_from_slice(&(blocks as u16).to_be_bytes());
    Command {
        cdb: c,
        direction: SG_DXFER_TO_DEV,
        data_len: all,
    }
}

/// SYNCHRONIZE CACHE(10) 35h (SBC-4 §5.27): LBA 0 and NUMBER OF LOGICAL
/// BLOCKS 0 — the whole medium (fio sends the same).
pub fn synchronize_cache() -> Command {
    Command {
        cdb: Cdb::new(10, 0x35),
        direction: SG_DXFER_NONE,
        data_len: 0,
    }
}

/// UNMAP 42h (SBC-4 §5.31) of the ranges (LBA, blocks): the CDB (PARAMETER
/// LIST LENGTH in bytes 7–8) and its parameter list (§5.31.2: UNMAP DATA
/// LENGTH = n−2, BLOCK DESCRIPTOR DATA LENGTH = 16·ranges, then one 16-byte
/// descriptor per range: LBA 0–7, NUMBER OF LOGICAL BLOCKS 8–11).
pub fn unmap(ranges: &[(u64, u32)]) -> (Command, Vec<u8>) {
    let descriptors = 16 * ranges.len();
    let mut list = vec![0u8; 8 + descriptors];
    list[0..2].copy_from_slice(&((descriptors + 6) as u16).to_be_bytes());
    list[2..4].copy_from_slice(&(descriptors as u16).to_be_bytes());
    for (i, &(lba, blocks)) in ranges.iter().enumerate() {
        let d = 8 + 16 * i;
        list[d..d + 8].copy_from_slice(&lba.to_be_bytes());
        list[d + 8..d + 12].copy_from_slice(&blocks.to_be_bytes());
    }
    let mut c = Cdb::new(10, 0x42);
    c.bytes[7..9].copy_from_slice(&(list.len() as u16).to_be_bytes());
    let len = list.len() as u32;
    (
        Command {
            cdb: c,
            direction: SG_DXFER_TO_DEV,
            data_len: len,
        },
        list,
    )
}

/// READ CAPACITY(10) 25h (SBC-4 §5.20): 8 bytes back.
pub fn read_capacity_10() -> Command {
    Command {
        cdb: Cdb::new(10, 0x25),
        direction: SG_DXFER_FROM_DEV,
        data_len: 8,
    }
}

/// READ CAPACITY(16): SERVICE ACTION IN(16) 9Eh, service action 10h
/// (SBC-4 §5.21), ALLOCATION LENGTH 32 in bytes 10–13.
pub fn read_capacity_16() -> Command {
    let mut c = Cdb::new(16, 0x9e);
    c.bytes[1] = 0x10;
    c.bytes[10..14].copy_from_slice(&32u32.to_be_bytes());
    Command {
        cdb: c,
        direction: SG_DXFER_FROM_DEV,
        data_len: 32,
    }
}

/// STREAM CONTROL: SERVICE ACTION IN(16) 9Eh, service action 14h (SBC-4
/// §5.32), STR_CTL in byte 1 bits 6:5 (01b open, 10b close), STR_ID in
/// bytes 4–5, ALLOCATION LENGTH 8 in bytes 10–13.
pub fn stream_control(open: bool, stream: u16) -> Command {
    let mut c = Cdb::new(16, 0x9e);
    c.bytes[1] = if open { 0x34 } else { 0x54 };
    if !open {
        c.bytes[4..6].copy_from_slice(&stream.to_be_bytes());
    }
    c.bytes[10..14].copy_from_slice(&8u32.to_be_bytes());
    Command {
        cdb: c,
        direction: SG_DXFER_FROM_DEV,
        data_len: 8,
    }
}

/// A device's capacity, from READ CAPACITY.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// The last LBA.
    pub max_lba: u64,
    /// Bytes per logical block.
    pub block_size: u32,
}

impl Capacity {
    /// Bytes on the device: (last LBA + 1) × block size, as fio's
    /// `fio_sgio_get_file_size`.
    pub fn bytes(&self) -> u64 {
        (self.max_lba + 1).saturating_mul(u64::from(self.block_size))
    }
}

/// READ CAPACITY(10) parameter data (SBC-4 §5.20.2): RETURNED LOGICAL
/// BLOCK ADDRESS in bytes 0–3 (FFFFFFFFh: ask READ CAPACITY(16)), LOGICAL
/// BLOCK LENGTH IN BYTES in 4–7. None when (16) is needed.
pub fn parse_capacity_10(b: &[u8; 8]) -> Option<Capacity> {
    let lba = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    (u64::from(lba) != MAX_10B_LBA).then(|| Capacity {
        max_lba: u64::from(lba),
        block_size: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
    })
}

/// READ CAPACITY(16) parameter data (SBC-4 §5.21.2): LBA in bytes 0–7,
/// block length in 8–11.
pub fn parse_capacity_16(b: &[u8; 32]) -> Capacity {
    let mut lba = [0; 8];
    lba.copy_from_slice(&b[0..8]);
    Capacity {
        max_lba: u64::from_be_bytes(lba),
        block_size: u32::from_be_bytes([b[8], b[9], b[10], b[11]]),
    }
}

/// Sense data, decoded (SPC-4 §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sense {
    /// SENSE KEY.
    pub key: u8,
    /// ADDITIONAL SENSE CODE.
    pub asc: u8,
    /// ADDITIONAL SENSE CODE QUALIFIER.
    pub ascq: u8,
    /// The INFORMATION field, when valid (usually the failing LBA).
    pub info: Option<u64>,
}

/// Decode sense data in fixed format (response code 70h/71h, §4.5.3: key
/// in byte 2 bits 3:0, INFORMATION in 3–6 when VALID, ASC 12, ASCQ 13) or
/// descriptor format (72h/73h, §4.5.2: key in byte 1, ASC 2, ASCQ 3, and
/// an information descriptor, type 00h, with VALID and 8 bytes from 4).
pub fn decode_sense(sb: &[u8]) -> Option<Sense> {
    let code = sb.first()? & 0x7f;
    match code {
        0x70 | 0x71 => {
            if sb.len() < 14 {
                return (sb.len() >= 3).then(|| Sense {
                    key: sb[2] & 0x0f,
                    asc: 0,
                    ascq: 0,
                    info: None,
                });
            }
            let valid = sb[0] & 0x80 != 0;
            Some(Sense {
                key: sb[2] & 0x0f,
                asc: sb[12],
                ascq: sb[13],
                info: valid.then(|| u64::from(u32::from_be_bytes([sb[3], sb[4], sb[5], sb[6]]))),
            })
        }
        0x72 | 0x73 => {
            if sb.len() < 4 {
                return None;
            }
            let total = (8 + usize::from(*sb.get(7).unwrap_or(&0))).min(sb.len());
            let mut info = None;
            let mut d = 8;
            while d + 2 <= total {
                let (kind, len) = (sb[d], usize::from(sb[d + 1]));
                if kind == 0x00 && len >= 0x0a && d + 12 <= total && sb[d + 2] & 0x80 != 0 {
                    let mut v = [0; 8];
                    v.copy_from_slice(&sb[d + 4..d + 12]);
                    info = Some(u64::from_be_bytes(v));
                }
                d += 2 + len;
            }
            Some(Sense {
                key: sb[1] & 0x0f,
                asc: sb[2],
                ascq: sb[3],
                info,
            })
        }
        _ => None,
    }
}

/// The sense key's name (SPC-4 §4.5.6, table 51).
pub fn sense_key_name(key: u8) -> &'static str {
    match key {
        0x0 => "NO SENSE",
        0x1 => "RECOVERED ERROR",
        0x2 => "NOT READY",
        0x3 => "MEDIUM ERROR",
        0x4 => "HARDWARE ERROR",
        0x5 => "ILLEGAL REQUEST",
        0x6 => "UNIT ATTENTION",
        0x7 => "DATA PROTECT",
        0x8 => "BLANK CHECK",
        0x9 => "VENDOR SPECIFIC",
        0xa => "COPY ABORTED",
        0xb => "ABORTED COMMAND",
        0xd => "VOLUME OVERFLOW",
        0xe => "MISCOMPARE",
        0xf => "COMPLETED",
        _ => "RESERVED",
    }
}

/// The commonest additional sense codes (SPC-4 Annex D, table D.1), for a
/// readable message; None for the others (their numbers are printed).
pub fn asc_name(asc: u8, ascq: u8) -> Option<&'static str> {
    Some(match (asc, ascq) {
        (0x04, 0x00) => "LOGICAL UNIT NOT READY, CAUSE NOT REPORTABLE",
        (0x04, 0x01) => "LOGICAL UNIT IS IN PROCESS OF BECOMING READY",
        (0x0c, 0x00) => "WRITE ERROR",
        (0x10, 0x01) => "LOGICAL BLOCK GUARD CHECK FAILED",
        (0x11, 0x00) => "UNRECOVERED READ ERROR",
        (0x1a, 0x00) => "PARAMETER LIST LENGTH ERROR",
        (0x1d, 0x00) => "MISCOMPARE DURING VERIFY OPERATION",
        (0x20, 0x00) => "INVALID COMMAND OPERATION CODE",
        (0x21, 0x00) => "LOGICAL BLOCK ADDRESS OUT OF RANGE",
        (0x24, 0x00) => "INVALID FIELD IN CDB",
        (0x25, 0x00) => "LOGICAL UNIT NOT SUPPORTED",
        (0x26, 0x00) => "INVALID FIELD IN PARAMETER LIST",
        (0x27, 0x00) => "WRITE PROTECTED",
        (0x27, 0x07) => "SPACE ALLOCATION FAILED WRITE PROTECT",
        (0x28, 0x00) => "NOT READY TO READY CHANGE, MEDIUM MAY HAVE CHANGED",
        (0x29, 0x00) => "POWER ON, RESET, OR BUS DEVICE RESET OCCURRED",
        (0x2a, 0x01) => "MODE PARAMETERS CHANGED",
        (0x3a, 0x00) => "MEDIUM NOT PRESENT",
        (0x44, 0x00) => "INTERNAL TARGET FAILURE",
        (0x5d, 0x00) => "FAILURE PREDICTION THRESHOLD EXCEEDED",
        _ => return None,
    })
}

/// The errno a failed command becomes, following the Linux block layer's
/// reading of the same sense (`scsi_io_completion_action` and
/// `blk_errors`): a medium error is ENODATA (BLK_STS_MEDIUM), a protection
/// check (ASC 10h) EILSEQ (BLK_STS_PROTECTION), thin-provisioning space
/// exhausted (27h/07h) ENOSPC (BLK_STS_NOSPC), an UNMAP or WRITE SAME the
/// target does not support (ASC 20h/24h) EREMOTEIO (BLK_STS_TARGET), and
/// everything else EIO — so a MISCOMPARE of VERIFY is EIO, as in fio.
pub fn sense_errno(s: &Sense, opcode: u8) -> i32 {
    match s.key {
        0x3 => libc::ENODATA,
        0xb if s.asc == 0x10 => libc::EILSEQ,
        0x7 if s.asc == 0x27 && s.ascq == 0x07 => libc::ENOSPC,
        0x5 if matches!(s.asc, 0x20 | 0x24) && matches!(opcode, 0x42 | 0x41 | 0x93) => {
            libc::EREMOTEIO
        }
        _ => libc::EIO,
    }
}

/// The SCSI status byte's name (SAM-5 §5.3.1).
fn status_name(status: u8) -> &'static str {
    match status {
        0x00 => "GOOD",
        0x02 => "CHECK CONDITION",
        0x04 => "CONDITION MET",
        0x08 => "BUSY",
        0x18 => "RESERVATION CONFLICT",
        0x28 => "TASK SET FULL",
        0x30 => "ACA ACTIVE",
        0x40 => "TASK ABORTED",
        _ => "unknown status",
    }
}

/// What a finished header says: Ok, or (errno, a readable line naming the
/// command, the status, the sense key and ASC/ASCQ, the LBA the device
/// reports, and the CDB) — fio's `fio_sgio_errdetails`, decoded.
pub fn outcome(hdr: &SgIoHdr, cdb: &Cdb, sense: &[u8]) -> Result<(), (i32, String)> {
    if hdr.info & SG_INFO_CHECK == 0 && hdr.status == 0 && hdr.host_status == 0 {
        return Ok(());
    }
    let op = cdb.bytes[0];
    let mut msg = format!("SCSI command {:02x}h", op);
    let mut errno = libc::EIO;
    if hdr.host_status != 0 {
        msg.push_str(&format!("; host status 0x{:02x}", hdr.host_status));
    }
    if hdr.driver_status & 0x0f != 0 {
        msg.push_str(&format!("; driver status 0x{:02x}", hdr.driver_status));
    }
    if hdr.status != 0 {
        msg.push_str(&format!(
            "; {} (0x{:02x})",
            status_name(hdr.status),
            hdr.status
        ));
    }
    let written = usize::from(hdr.sb_len_wr).min(sense.len());
    if let Some(s) = decode_sense(&sense[..written]) {
        errno = sense_errno(&s, op);
        msg.push_str(&format!(
            "; sense key {} (0x{:x}), ASC/ASCQ 0x{:02x}/0x{:02x}",
            sense_key_name(s.key),
            s.key,
            s.asc,
            s.ascq
        ));
        if let Some(n) = asc_name(s.asc, s.ascq) {
            msg.push_str(&format!(" {n}"));
        }
        if let Some(i) = s.info {
            msg.push_str(&format!(", information 0x{i:x}"));
        }
    }
    if hdr.resid != 0 {
        msg.push_str(&format!(
            "; {} of {} bytes not transferred",
            hdr.resid, hdr.dxfer_len
        ));
    }
    let bytes: Vec<String> = cdb.as_slice().iter().map(|b| format!("{b:02x}")).collect();
    msg.push_str(&format!("; cdb {}", bytes.join(" ")));
    Err((errno, msg))
}

#[cfg(test)]
#[path = "scsi_tests.rs"]
mod tests;
