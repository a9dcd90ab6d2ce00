//! A device-mapper device's table, read with the `DM_TABLE_STATUS` ioctl
//! on `/dev/mapper/control` (what `dmsetup table` does), with the
//! structures written by hand from `include/uapi/linux/dm-ioctl.h`. Only
//! reads: nothing here changes a table.

use std::io;
use std::os::unix::io::AsRawFd;

/// `DM_VERSION_MAJOR`: the interface version asked for (4.0.0: the kernel
/// answers with its own).
const DM_VERSION: [u32; 3] = [4, 0, 0];
/// `DM_STATUS_TABLE_FLAG`: the table, not the status.
const DM_STATUS_TABLE_FLAG: u32 = 1 << 4;
/// `DM_BUFFER_FULL_FLAG`: the answer did not fit.
const DM_BUFFER_FULL_FLAG: u32 = 1 << 8;
/// `DM_NAME_LEN`, `DM_UUID_LEN`.
const DM_NAME_LEN: usize = 128;
const DM_UUID_LEN: usize = 129;

/// `struct dm_ioctl`.
#[repr(C)]
#[derive(Clone, Copy)]
struct DmIoctl {
    version: [u32; 3],
    data_size: u32,
    data_start: u32,
    target_count: u32,
    open_count: i32,
    flags: u32,
    event_nr: u32,
    padding: u32,
    dev: u64,
    name: [u8; DM_NAME_LEN],
    uuid: [u8; DM_UUID_LEN],
    data: [u8; 7],
}

/// `struct dm_target_spec`, followed by its parameters (NUL-terminated).
#[repr(C)]
#[derive(Clone, Copy)]
struct DmTargetSpec {
    sector_start: u64,
    length: u64,
    status: i32,
    next: u32,
    target_type: [u8; 16],
}

const HEADER: usize = std::mem::size_of::<DmIoctl>();
const SPEC: usize = std::mem::size_of::<DmTargetSpec>();

/// `DM_TABLE_STATUS`: `_IOWR(0xfd, 12, struct dm_ioctl)`.
const DM_TABLE_STATUS: u32 = (3 << 30) | ((HEADER as u32) << 16) | (0xfd << 8) | 12;

/// One line of a table: start, length (sectors), type, parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableLine {
    pub start: u64,
    pub length: u64,
    pub target_type: String,
    pub params: String,
}

fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// The table of device-mapper device `name` (its name under /dev/mapper).
/// Needs `/dev/mapper/control` and CAP_SYS_ADMIN; the error says which
/// was missing.
pub fn table(name: &str) -> io::Result<Vec<TableLine>> {
    if name.is_empty() || name.len() >= DM_NAME_LEN {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "device-mapper name '{name}': 1 to {} bytes",
                DM_NAME_LEN - 1
            ),
        ));
    }
    let control = std::fs::File::open("/dev/mapper/control")?;
    let mut size = 16 << 10;
    loop {
        // u64 words keep the buffer aligned for the structures.
        let mut buf = vec![0u64; size / 8];
        let mut head = DmIoctl {
            version: DM_VERSION,
            data_size: size as u32,
            data_start: HEADER as u32,
            target_count: 0,
            open_count: 0,
            flags: DM_STATUS_TABLE_FLAG,
            event_nr: 0,
            padding: 0,
            dev: 0,
            name: [0; DM_NAME_LEN],
            uuid: [0; DM_UUID_LEN],
            data: [0; 7],
        };
        head.name[..name.len()].copy_from_slice(name.as_bytes());
        // SAFETY: `buf` is `size` bytes, 8-byte aligned, at least HEADER
        // long; DmIoctl is plain old data written over its first bytes.
        unsafe { std::ptr::write(buf.as_mut_ptr() as *mut DmIoctl, head) };
        // SAFETY: the kernel reads and writes at most `data_size` bytes of
        // `buf`, which is that long and lives across the call.
        let rc = unsafe {
            libc::ioctl(
                control.as_raw_fd(),
                DM_TABLE_STATUS as libc::c_ulong,
                buf.as_mut_ptr(),
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        let bytes: &[u8] =
            // SAFETY: `buf` is `size` initialised bytes; u8 has no
            // alignment or validity needs.
            unsafe { std::slice::from_raw_parts(buf.as_ptr() as *const u8, size) };
        // SAFETY: the first HEADER bytes are a DmIoctl the kernel filled;
        // read_unaligned makes no alignment claim.
        let out: DmIoctl = unsafe { std::ptr::read_unaligned(bytes.as_ptr() as *const DmIoctl) };
        if out.flags & DM_BUFFER_FULL_FLAG != 0 && size < (4 << 20) {
            size *= 4;
            continue;
        }
        return parse(bytes, &out);
    }
}

/// The target specs of an answer.
fn parse(bytes: &[u8], head: &DmIoctl) -> io::Result<Vec<TableLine>> {
    let bad = |why: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("DM_TABLE_STATUS: {why}"),
        )
    };
    let start = head.data_start as usize;
    let mut out = Vec::new();
    let mut at = start;
    for i in 0..head.target_count {
        if at + SPEC > bytes.len() {
            return Err(bad("a target past the end of the answer"));
        }
        // SAFETY: SPEC bytes at `at` are inside `bytes` (checked above);
        // read_unaligned makes no alignment claim and the struct is plain
        // old data.
        let spec: DmTargetSpec =
            unsafe { std::ptr::read_unaligned(bytes[at..].as_ptr() as *const DmTargetSpec) };
        out.push(TableLine {
            start: spec.sector_start,
            length: spec.length,
            target_type: cstr(&spec.target_type),
            params: cstr(&bytes[at + SPEC..]),
        });
        let next = start + spec.next as usize;
        if next <= at && i + 1 < head.target_count {
            return Err(bad("a target's next offset does not move forward"));
        }
        at = next;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_structures_have_the_kernels_sizes_and_the_ioctl_its_number() {
        assert_eq!(HEADER, 312);
        assert_eq!(SPEC, 40);
        // dmsetup's DM_TABLE_STATUS on x86-64 and arm64.
        assert_eq!(DM_TABLE_STATUS, 0xC138_FD0C);
    }

    #[test]
    fn an_answer_of_two_targets_is_read_in_order() {
        let mut b = vec![0u8; 1024];
        let mut put_spec = |at: usize, start: u64, len: u64, ty: &str, params: &str, next: u32| {
            b[at..at + 8].copy_from_slice(&start.to_ne_bytes());
            b[at + 8..at + 16].copy_from_slice(&len.to_ne_bytes());
            b[at + 20..at + 24].copy_from_slice(&next.to_ne_bytes());
            b[at + 24..at + 24 + ty.len()].copy_from_slice(ty.as_bytes());
            b[at + SPEC..at + SPEC + params.len()].copy_from_slice(params.as_bytes());
        };
        put_spec(HEADER, 0, 1024, "linear", "7:0 0", 48);
        put_spec(HEADER + 48, 1024, 2048, "delay", "7:1 0 50", 96);
        let head = DmIoctl {
            version: DM_VERSION,
            data_size: 1024,
            data_start: HEADER as u32,
            target_count: 2,
            open_count: 0,
            flags: 0,
            event_nr: 0,
            padding: 0,
            dev: 0,
            name: [0; DM_NAME_LEN],
            uuid: [0; DM_UUID_LEN],
            data: [0; 7],
        };
        let t = parse(&b, &head).unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].target_type, "linear");
        assert_eq!(t[0].params, "7:0 0");
        assert_eq!((t[1].start, t[1].length), (1024, 2048));
        assert_eq!(t[1].params, "7:1 0 50");
        let short = DmIoctl {
            target_count: 30,
            ..head
        };
        assert!(parse(&b, &short).is_err());
    }

    #[test]
    fn a_name_too_long_or_empty_is_refused_before_any_call() {
        assert_eq!(table("").unwrap_err().kind(), io::ErrorKind::InvalidInput);
        assert_eq!(
            table(&"x".repeat(200)).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
    }
}
