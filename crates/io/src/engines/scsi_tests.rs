//! Tests of the SCSI helpers: the kernel's structure layouts, the CDBs and
//! how a command's outcome is read.

use super::*;
use std::mem::{offset_of, size_of};

#[test]
fn sg_io_hdr_has_the_kernels_layout() {
    // <scsi/sg.h> on x86_64/aarch64: 88 bytes; pointers 8-aligned.
    assert_eq!(size_of::<SgIoHdr>(), 88);
    assert_eq!(offset_of!(SgIoHdr, dxfer_len), 12);
    assert_eq!(offset_of!(SgIoHdr, dxferp), 16);
    assert_eq!(offset_of!(SgIoHdr, cmdp), 24);
    assert_eq!(offset_of!(SgIoHdr, sbp), 32);
    assert_eq!(offset_of!(SgIoHdr, timeout), 40);
    assert_eq!(offset_of!(SgIoHdr, flags), 44);
    assert_eq!(offset_of!(SgIoHdr, usr_ptr), 56);
    assert_eq!(offset_of!(SgIoHdr, status), 64);
    assert_eq!(offset_of!(SgIoHdr, sb_len_wr), 67);
    assert_eq!(offset_of!(SgIoHdr, host_status), 68);
    assert_eq!(offset_of!(SgIoHdr, resid), 72);
    assert_eq!(offset_of!(SgIoHdr, info), 80);
}

#[test]
fn read_10_and_16_carry_lba_and_length_big_endian() {
    // SBC-4 §5.16: READ(10) of 8 blocks at LBA 0x12345678, FUA set.
    let c = read(0x1234_5678, 8, 512, true);
    assert_eq!(
        c.cdb.as_slice(),
        &[0x28, 0x08, 0x12, 0x34, 0x56, 0x78, 0, 0x00, 0x08, 0]
    );
    assert_eq!((c.direction, c.data_len), (SG_DXFER_FROM_DEV, 4096));
    // §5.18: READ(16) beyond 32 bits.
    let c = read(0x1_0000_0000, 0x10000, 512, false);
    assert_eq!(
        c.cdb.as_slice(),
        &[0x88, 0, 0, 0, 0, 0x01, 0, 0, 0, 0, 0, 0x01, 0, 0, 0, 0]
    );
    // The count alone can force 16 bytes (fio would truncate it).
    assert_eq!(read(0, 0x10000, 512, false).cdb.len, 16);
    assert_eq!(read(MAX_10B_LBA - 1, 1, 512, false).cdb.len, 10);
    assert_eq!(read(MAX_10B_LBA, 1, 512, false).cdb.len, 16);
}

#[test]
fn every_write_mode_builds_fios_cdb() {
    use SgWriteMode::*;
    let w = |m| write(m, 20, 4, 512, false, 0);
    // WRITE(10) 2Ah: LBA 20 = 0x14, 4 blocks, 2048 bytes.
    let c = w(Write);
    assert_eq!(c.cdb.as_slice(), &[0x2a, 0, 0, 0, 0, 0x14, 0, 0, 4, 0]);
    assert_eq!((c.direction, c.data_len), (SG_DXFER_TO_DEV, 2048));
    assert_eq!(write(Write, 20, 4, 512, true, 0).cdb.bytes[1], 0x08);
    assert_eq!(w(WriteAndVerify).cdb.bytes[..2], [0x2e, 0]);
    // WRITE SAME(10) 41h sends one block.
    let c = w(WriteSame);
    assert_eq!((c.cdb.bytes[0], c.data_len), (0x41, 512));
    // WRITE SAME(16) 93h with NDOB: 16 bytes even for a small LBA, no data.
    let c = w(WriteSameNdob);
    assert_eq!(
        c.cdb.as_slice(),
        &[0x93, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x14, 0, 0, 0, 4, 0, 0]
    );
    assert_eq!((c.direction, c.data_len), (SG_DXFER_NONE, 0));
    // VERIFY(10) 2Fh, BYTCHK 00b/01b/11b: 0, all, one block of data.
    let c = w(VerifyBytchk00);
    assert_eq!(
        (c.cdb.bytes[0], c.cdb.bytes[1], c.data_len, c.direction),
        (0x2f, 0, 0, SG_DXFER_NONE)
    );
    let c = w(VerifyBytchk01);
    assert_eq!((c.cdb.bytes[1], c.data_len), (0x02, 2048));
    let c = w(VerifyBytchk11);
    assert_eq!((c.cdb.bytes[1], c.data_len), (0x06, 512));
    // WRITE STREAM(16) 9Ah: stream 5 in bytes 10–11, length in 12–13.
    let c = write(WriteStream, 20, 4, 512, false, 5);
    assert_eq!(
        c.cdb.as_slice(),
        &[0x9a, 0, 0, 0, 0, 0, 0, 0, 0, 0x14, 0, 5, 0, 4, 0, 0]
    );
    // VERIFY(16) 8Fh past 32 bits.
    assert_eq!(
        write(VerifyBytchk01, 1 << 32, 1, 512, false, 0).cdb.bytes[..2],
        [0x8f, 0x02]
    );
}

#[test]
fn unmap_parameter_list_follows_sbc4() {
    // SBC-4 §5.31.2, two ranges: data length 8+32−2 = 38, descriptors 32.
    let (c, list) = unmap(&[(0x10, 8), (0x1_0000_0000, 1)]);
    assert_eq!(c.cdb.as_slice(), &[0x42, 0, 0, 0, 0, 0, 0, 0, 40, 0]);
    assert_eq!(c.data_len, 40);
    assert_eq!(list.len(), 40);
    assert_eq!(&list[..8], &[0, 38, 0, 32, 0, 0, 0, 0]);
    assert_eq!(
        &list[8..24],
        &[0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 8, 0, 0, 0, 0]
    );
    assert_eq!(&list[24..36], &[0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
}

#[test]
fn capacity_and_sync_cache_and_stream_control() {
    assert_eq!(
        read_capacity_10().cdb.as_slice(),
        &[0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(
        read_capacity_16().cdb.as_slice(),
        &[0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0]
    );
    // 2 GiB of 512-byte blocks: last LBA 0x3FFFFF.
    let c = parse_capacity_10(&[0, 0x3f, 0xff, 0xff, 0, 0, 2, 0]).unwrap();
    assert_eq!(
        c,
        Capacity {
            max_lba: 0x3f_ffff,
            block_size: 512
        }
    );
    assert_eq!(c.bytes(), 2 << 30);
    assert_eq!(
        parse_capacity_10(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0x10, 0]),
        None
    );
    let mut b = [0u8; 32];
    b[3] = 0x01; // last LBA 0x1_0000_0000 (bytes 0–7)
    b[10] = 0x10; // 4096-byte blocks
    assert_eq!(
        parse_capacity_16(&b),
        Capacity {
            max_lba: 0x1_0000_0000,
            block_size: 4096
        }
    );
    assert_eq!(
        synchronize_cache().cdb.as_slice(),
        &[0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    );
    assert_eq!(stream_control(true, 0).cdb.bytes[..2], [0x9e, 0x34]);
    assert_eq!(
        stream_control(false, 7).cdb.bytes[..6],
        [0x9e, 0x54, 0, 0, 0, 7]
    );
}

#[test]
fn fixed_and_descriptor_sense_decode_alike() {
    // Fixed (SPC-4 §4.5.3): VALID, MISCOMPARE, info 0x15, ASC 1Dh.
    let mut f = [0u8; 18];
    f[0] = 0xf0;
    f[2] = 0x0e;
    f[3..7].copy_from_slice(&0x15u32.to_be_bytes());
    f[7] = 10;
    f[12] = 0x1d;
    let s = decode_sense(&f).unwrap();
    assert_eq!(
        s,
        Sense {
            key: 0xe,
            asc: 0x1d,
            ascq: 0,
            info: Some(0x15)
        }
    );
    assert_eq!(sense_errno(&s, 0x2f), libc::EIO);
    // Descriptor (§4.5.2): MEDIUM ERROR 11h/00h with an information
    // descriptor (type 0, length 0Ah, VALID) of LBA 0x1_0000_0001.
    let mut d = vec![0x72, 0x03, 0x11, 0x00, 0, 0, 0, 12, 0x00, 0x0a, 0x80, 0];
    d.extend_from_slice(&0x1_0000_0001u64.to_be_bytes());
    let s = decode_sense(&d).unwrap();
    assert_eq!(
        s,
        Sense {
            key: 0x3,
            asc: 0x11,
            ascq: 0,
            info: Some(0x1_0000_0001)
        }
    );
    assert_eq!(sense_errno(&s, 0x28), libc::ENODATA);
    assert_eq!(decode_sense(&[0x00, 0, 0]), None);
    // UNMAP the device refuses: EREMOTEIO, as the kernel's BLK_STS_TARGET.
    let s = Sense {
        key: 0x5,
        asc: 0x20,
        ascq: 0,
        info: None,
    };
    assert_eq!(sense_errno(&s, 0x42), libc::EREMOTEIO);
    assert_eq!(sense_errno(&s, 0x28), libc::EIO);
}

#[test]
fn a_failed_command_reads_as_one_line() {
    let cdb = read(0x21, 1, 512, false).cdb;
    let mut sense = [0u8; SENSE_LEN];
    sense[..14].copy_from_slice(&[0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x21, 0]);
    let mut hdr = SgIoHdr::new(
        &cdb,
        SG_DXFER_FROM_DEV,
        std::ptr::null_mut(),
        512,
        &mut sense.clone(),
    );
    hdr.status = 0x02;
    hdr.info = SG_INFO_CHECK;
    hdr.sb_len_wr = 18;
    let (errno, msg) = outcome(&hdr, &cdb, &sense).unwrap_err();
    assert_eq!(errno, libc::EIO);
    assert_eq!(
        msg,
        "SCSI command 28h; CHECK CONDITION (0x02); sense key ILLEGAL REQUEST (0x5), \
         ASC/ASCQ 0x21/0x00 LOGICAL BLOCK ADDRESS OUT OF RANGE; cdb 28 00 00 00 00 21 00 00 01 00"
    );
    assert!(!msg.contains('\n'));
    hdr.status = 0;
    hdr.info = 0;
    assert!(outcome(&hdr, &cdb, &sense).is_ok());
}
