//! The subset of the FUSE protocol the kernel drive speaks, written by hand
//! from `include/uapi/linux/fuse.h` (protocol 7.31): request headers and
//! bodies parsed from the bytes read from `/dev/fuse`, replies built as the
//! bytes written back. Little-endian, as the kernel's structures are on
//! every architecture this project builds for.

/// `FUSE_KERNEL_VERSION` and the minor version this side speaks.
pub const MAJOR: u32 = 7;
pub const MINOR: u32 = 31;
/// The root directory's node id, and the one file's.
pub const ROOT_ID: u64 = 1;
pub const DISK_ID: u64 = 2;
/// The one file's name.
pub const DISK_NAME: &str = "disk";

/// Opcodes (`enum fuse_opcode`).
pub mod op {
    pub const LOOKUP: u32 = 1;
    pub const FORGET: u32 = 2;
    pub const GETATTR: u32 = 3;
    pub const SETATTR: u32 = 4;
    pub const OPEN: u32 = 14;
    pub const READ: u32 = 15;
    pub const WRITE: u32 = 16;
    pub const STATFS: u32 = 17;
    pub const RELEASE: u32 = 18;
    pub const FSYNC: u32 = 20;
    pub const FLUSH: u32 = 25;
    pub const INIT: u32 = 26;
    pub const INTERRUPT: u32 = 36;
    pub const DESTROY: u32 = 38;
    pub const BATCH_FORGET: u32 = 42;
    pub const FALLOCATE: u32 = 43;
}

/// INIT flags (`FUSE_ASYNC_READ`, …).
pub mod init {
    pub const ASYNC_READ: u32 = 1 << 0;
    pub const BIG_WRITES: u32 = 1 << 5;
    pub const ASYNC_DIO: u32 = 1 << 15;
    pub const PARALLEL_DIROPS: u32 = 1 << 18;
    pub const MAX_PAGES: u32 = 1 << 22;
}

/// `FUSE_INIT_EXT` (INIT `flags`: `flags2` is meaningful) and
/// `FUSE_OVER_IO_URING` (bit 41 of the 64 flags: bit 9 of `flags2`), which
/// FUSE over io_uring ([`super::fuse_uring`]) asks for.
pub const INIT_EXT: u32 = 1 << 30;
pub const OVER_IO_URING_FLAGS2: u32 = 1 << (41 - 32);

/// `sizeof(struct fuse_in_header)` and `sizeof(struct fuse_out_header)`.
pub const IN_HEADER: usize = 40;
pub const OUT_HEADER: usize = 16;
/// `sizeof(struct fuse_write_in)`: the data of a WRITE follows it.
pub const WRITE_IN: usize = 40;
/// Sizes of the replies' bodies.
pub const INIT_OUT: usize = 64;
pub const ATTR: usize = 88;
pub const ATTR_OUT: usize = 16 + ATTR;
pub const ENTRY_OUT: usize = 40 + ATTR;
pub const OPEN_OUT: usize = 16;
pub const WRITE_OUT: usize = 8;
pub const STATFS_OUT: usize = 80;

/// `FALLOC_FL_KEEP_SIZE`, `FALLOC_FL_PUNCH_HOLE`, `FALLOC_FL_ZERO_RANGE`.
pub const FALLOC_KEEP_SIZE: u32 = 0x01;
pub const FALLOC_PUNCH_HOLE: u32 = 0x02;
pub const FALLOC_ZERO_RANGE: u32 = 0x10;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// `struct fuse_in_header`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InHeader {
    pub len: u32,
    pub opcode: u32,
    pub unique: u64,
    pub nodeid: u64,
}

impl InHeader {
    /// The header of a request of `n` bytes; None when it is shorter than
    /// a header or says a length other than `n`.
    pub fn parse(b: &[u8]) -> Option<InHeader> {
        let h = InHeader::fields(b)?;
        (h.len as usize == b.len()).then_some(h)
    }

    /// The header's fields, whatever length it says (over io_uring the
    /// request's parts are in separate buffers).
    pub fn fields(b: &[u8]) -> Option<InHeader> {
        Some(InHeader {
            len: u32_at(b, 0)?,
            opcode: u32_at(b, 4)?,
            unique: u64_at(b, 8)?,
            nodeid: u64_at(b, 16)?,
        })
    }
}

/// `struct fuse_init_in`'s first fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InitIn {
    pub major: u32,
    pub minor: u32,
    pub max_readahead: u32,
    pub flags: u32,
    /// `flags2` (the upper 32 flags), 0 unless `flags` has `FUSE_INIT_EXT`.
    pub flags2: u32,
}

impl InitIn {
    pub fn parse(body: &[u8]) -> Option<InitIn> {
        let flags = u32_at(body, 12)?;
        let ext = flags & INIT_EXT != 0;
        Some(InitIn {
            major: u32_at(body, 0)?,
            minor: u32_at(body, 4)?,
            max_readahead: u32_at(body, 8)?,
            flags,
            flags2: if ext {
                u32_at(body, 16).unwrap_or(0)
            } else {
                0
            },
        })
    }
}

/// The range of a READ or WRITE (`fuse_read_in` / `fuse_write_in`:
/// `fh`, `offset`, `size` first), or a FALLOCATE's (`fh`, `offset`,
/// `length`, `mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub offset: u64,
    pub size: u64,
    /// FALLOCATE's mode (0 otherwise).
    pub mode: u32,
}

impl Range {
    /// A READ's or WRITE's range.
    pub fn of_rw(body: &[u8]) -> Option<Range> {
        Some(Range {
            offset: u64_at(body, 8)?,
            size: u32_at(body, 16)? as u64,
            mode: 0,
        })
    }

    /// A FALLOCATE's range and mode.
    pub fn of_fallocate(body: &[u8]) -> Option<Range> {
        Some(Range {
            offset: u64_at(body, 8)?,
            size: u64_at(body, 16)?,
            mode: u32_at(body, 24)?,
        })
    }
}

/// A LOOKUP's name (NUL-terminated in the body).
pub fn lookup_name(body: &[u8]) -> &[u8] {
    body.split(|&c| c == 0).next().unwrap_or(&[])
}

/// Bytes written little-endian, in order.
#[derive(Default)]
pub struct Out(pub Vec<u8>);

impl Out {
    pub fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn zeros(mut self, n: usize) -> Self {
        self.0.resize(self.0.len() + n, 0);
        self
    }
}

/// `struct fuse_out_header` for a reply of `body_len` bytes (error 0 or
/// −errno).
pub fn out_header(unique: u64, error: i32, body_len: usize) -> [u8; OUT_HEADER] {
    let mut h = [0u8; OUT_HEADER];
    h[0..4].copy_from_slice(&((OUT_HEADER + body_len) as u32).to_le_bytes());
    h[4..8].copy_from_slice(&error.to_le_bytes());
    h[8..16].copy_from_slice(&unique.to_le_bytes());
    h
}

/// What INIT's reply says.
#[derive(Clone, Copy, Debug)]
pub struct InitOut {
    pub max_readahead: u32,
    pub flags: u32,
    pub max_background: u16,
    pub congestion_threshold: u16,
    pub max_write: u32,
    pub max_pages: u16,
    /// `flags2` (read by the kernel when `flags` has `FUSE_INIT_EXT`).
    pub flags2: u32,
}

impl InitOut {
    /// `struct fuse_init_out`.
    pub fn bytes(&self) -> Vec<u8> {
        Out::default()
            .u32(MAJOR)
            .u32(MINOR)
            .u32(self.max_readahead)
            .u32(self.flags)
            .u16(self.max_background)
            .u16(self.congestion_threshold)
            .u32(self.max_write)
            .u32(1) // time_gran: 1 ns
            .u16(self.max_pages)
            .u16(0) // map_alignment
            .u32(self.flags2)
            .zeros(28)
            .0
    }
}

/// `struct fuse_attr` of node `ino`: a directory, or the file of `size` bytes.
pub fn attr(ino: u64, size: u64, blksize: u32) -> Vec<u8> {
    let (mode, nlink) = match ino {
        ROOT_ID => (0o040755, 2),
        _ => (0o100600, 1),
    };
    Out::default()
        .u64(ino)
        .u64(size)
        .u64(size.div_ceil(512))
        .zeros(24) // atime, mtime, ctime
        .zeros(12) // their nanoseconds
        .u32(mode)
        .u32(nlink)
        .u32(0) // uid
        .u32(0) // gid
        .u32(0) // rdev
        .u32(blksize)
        .u32(0) // flags
        .0
}

/// `struct fuse_attr_out` (attributes valid for an hour: they never change).
pub fn attr_out(ino: u64, size: u64, blksize: u32) -> Vec<u8> {
    let mut o = Out::default().u64(3600).u32(0).u32(0).0;
    o.extend(attr(ino, size, blksize));
    o
}

/// `struct fuse_entry_out` of the file.
pub fn entry_out(size: u64, blksize: u32) -> Vec<u8> {
    let mut o = Out::default()
        .u64(DISK_ID)
        .u64(1) // generation
        .u64(3600)
        .u64(3600)
        .u32(0)
        .u32(0)
        .0;
    o.extend(attr(DISK_ID, size, blksize));
    o
}

/// `FOPEN_NOFLUSH` (`fuse_open_out.open_flags`): the kernel sends no
/// FLUSH when a file opened so is closed. Nothing is cached to flush, and
/// a FLUSH waits uninterruptibly for its answer: a process closing the
/// file while the daemon cannot answer (the daemon itself, killed) would
/// wait forever. Kernels without it (before 5.16) ignore the bit.
pub const FOPEN_NOFLUSH: u32 = 1 << 5;

/// `struct fuse_open_out` (handle `fh`; the page cache is bypassed by the
/// opener's O_DIRECT, not forced; no FLUSH on close: [`FOPEN_NOFLUSH`]).
pub fn open_out(fh: u64) -> Vec<u8> {
    Out::default().u64(fh).u32(FOPEN_NOFLUSH).u32(0).0
}

/// `struct fuse_write_out`.
pub fn write_out(size: u32) -> Vec<u8> {
    Out::default().u32(size).u32(0).0
}

/// `struct fuse_statfs_out` of a file system of `size` bytes, all used.
pub fn statfs_out(size: u64, bsize: u32) -> Vec<u8> {
    Out::default()
        .u64(size / bsize as u64) // blocks
        .u64(0) // bfree
        .u64(0) // bavail
        .u64(2) // files
        .u64(0) // ffree
        .u32(bsize)
        .u32(255) // namelen
        .u32(bsize) // frsize
        .u32(0)
        .zeros(24)
        .0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_have_the_uapi_sizes() {
        let init = InitOut {
            max_readahead: 0,
            flags: 0,
            max_background: 1,
            congestion_threshold: 1,
            max_write: 4096,
            max_pages: 1,
            flags2: 0,
        };
        assert_eq!(init.bytes().len(), INIT_OUT);
        assert_eq!(attr(DISK_ID, 1 << 20, 4096).len(), ATTR);
        assert_eq!(attr_out(DISK_ID, 1 << 20, 4096).len(), ATTR_OUT);
        assert_eq!(entry_out(1 << 20, 4096).len(), ENTRY_OUT);
        assert_eq!(open_out(2).len(), OPEN_OUT);
        // open_flags follows the 8-byte handle: no FLUSH on close.
        assert_eq!(u32_at(&open_out(2), 8), Some(FOPEN_NOFLUSH));
        assert_eq!(write_out(2).len(), WRITE_OUT);
        assert_eq!(statfs_out(1 << 20, 4096).len(), STATFS_OUT);
    }

    #[test]
    fn fields_sit_at_the_uapi_offsets() {
        let init = InitOut {
            max_readahead: 7,
            flags: init::ASYNC_DIO,
            max_background: 32,
            congestion_threshold: 24,
            max_write: 1 << 20,
            max_pages: 256,
            flags2: super::OVER_IO_URING_FLAGS2,
        }
        .bytes();
        assert_eq!(u32_at(&init, 12), Some(init::ASYNC_DIO));
        assert_eq!(&init[16..20], &[32, 0, 24, 0]);
        assert_eq!(u32_at(&init, 20), Some(1 << 20));
        assert_eq!(&init[28..30], &[0, 1]);
        // fuse_init_out.flags2 at 32 (after max_pages and map_alignment).
        assert_eq!(u32_at(&init, 32), Some(1 << 9));
        let a = attr(DISK_ID, 8192, 4096);
        assert_eq!(u64_at(&a, 8), Some(8192));
        assert_eq!(u32_at(&a, 60), Some(0o100600));
        assert_eq!(u32_at(&a, 80), Some(4096));
        let h = out_header(9, -5, 8);
        assert_eq!(u32_at(&h, 0), Some(24));
        assert_eq!(u32_at(&h, 4), Some((-5i32) as u32));
        assert_eq!(u64_at(&h, 8), Some(9));
    }

    #[test]
    fn requests_parse_and_bad_lengths_are_refused() {
        let mut req = Out::default()
            .u32(40 + 40)
            .u32(op::READ)
            .u64(77)
            .u64(DISK_ID)
            .zeros(16)
            .0;
        req.extend(Out::default().u64(2).u64(4096).u32(8192).zeros(20).0);
        let h = InHeader::parse(&req).unwrap();
        assert_eq!((h.opcode, h.unique, h.nodeid), (op::READ, 77, DISK_ID));
        let r = Range::of_rw(&req[IN_HEADER..]).unwrap();
        assert_eq!((r.offset, r.size), (4096, 8192));
        assert!(InHeader::parse(&req[..60]).is_none());
        assert!(InHeader::parse(&req[..10]).is_none());
        assert_eq!(lookup_name(b"disk\0"), b"disk");
    }
}
