//! Data on a device that nothing is using right now: signatures of
//! partition tables, file systems, volume managers, RAID, encryption and
//! swap (the formats libblkid knows best).
//!
//! Where they are looked for:
//! * at the device's start and at the start of the job's region: every
//!   signature below, weak ones (a 2-byte magic) included;
//! * at every 512-byte step of the first [`SCAN_BYTES`] of the device and of
//!   the job's region: the strong ones (8-byte magics, or shorter ones whose
//!   neighbouring fields are checked too), so a file system made on a loop
//!   device at an offset (`losetup -o 1M`) is found where it starts;
//! * in the last 128 KiB: md 0.90/1.0 superblocks and GPT's backup header;
//! * by `blkid -p` (when installed) at the device's start and at the
//!   region's, for the formats this list lacks.
//!
//! A region's blocks beyond the first [`SCAN_BYTES`] are not read: a
//! signature there, on a device nothing uses, is not found.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// How much of the device's start, and of the region's, is scanned.
pub const SCAN_BYTES: u64 = 64 << 20;

/// Why a device could not be looked at for data.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("it could not be opened to look for data ({0})")]
    Open(std::io::Error),
    #[error("its blocks could not be read to look for data ({0})")]
    Read(std::io::Error),
}

/// How far past a scanned position a signature can reach.
const REACH: u64 = 132 << 10;

/// The tail read for end-of-device superblocks.
const TAIL: u64 = 128 << 10;

/// Bytes read at a time.
const CHUNK: u64 = 4 << 20;

/// How sure a magic is by itself.
#[derive(Clone, Copy)]
enum Strength {
    /// Too short to scan for: only at the device's and the region's start.
    Weak,
    /// Enough by itself.
    Strong,
    /// Enough when the check on the bytes from the signature's base holds.
    Checked(fn(&[u8]) -> bool),
}

/// A signature: name, offset of the magic from the format's start, magic.
struct Sig(&'static str, usize, &'static [u8], Strength);

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// An ext2/3/4 superblock (at 1024): sane block size, revision and counts.
fn ext_ok(b: &[u8]) -> bool {
    let f = |o: usize| le32(b, 1024 + o);
    matches!(
        (f(0), f(4), f(20), f(24), f(76)),
        (Some(inodes), Some(blocks), Some(first), Some(log_bs), Some(rev))
            if inodes > 0 && blocks > 0 && first <= 1 && log_bs <= 6 && rev <= 1
    )
}

/// An XFS superblock: a power-of-two block size from 512 to 64 KiB.
fn xfs_ok(b: &[u8]) -> bool {
    b.get(4..8)
        .map(|x| u32::from_be_bytes(x.try_into().unwrap()))
        .is_some_and(|bs| bs.is_power_of_two() && (512..=65536).contains(&bs))
}

/// An md 1.x superblock: major version 1.
fn md1_ok(b: &[u8]) -> bool {
    le32(b, 4) == Some(1)
}

const MD_MAGIC: &[u8] = &[0xfc, 0x4e, 0x2b, 0xa9];

const SIGNATURES: &[Sig] = &[
    Sig("GPT partition table", 512, b"EFI PART", Strength::Strong),
    Sig("GPT partition table", 4096, b"EFI PART", Strength::Strong),
    Sig(
        "ext2/3/4 filesystem",
        1080,
        &[0x53, 0xef],
        Strength::Checked(ext_ok),
    ),
    Sig("XFS filesystem", 0, b"XFSB", Strength::Checked(xfs_ok)),
    Sig("btrfs filesystem", 65600, b"_BHRfS_M", Strength::Strong),
    Sig("LVM physical volume", 536, b"LVM2 001", Strength::Strong),
    Sig("LVM physical volume", 1048, b"LVM2 001", Strength::Strong),
    Sig(
        "Linux RAID (md 1.x)",
        0,
        MD_MAGIC,
        Strength::Checked(md1_ok),
    ),
    Sig(
        "LUKS encrypted volume",
        0,
        b"LUKS\xba\xbe",
        Strength::Strong,
    ),
    Sig("swap space", 4086, b"SWAPSPACE2", Strength::Strong),
    Sig("swap space", 4086, b"SWAP-SPACE", Strength::Strong),
    Sig("swap space", 65526, b"SWAPSPACE2", Strength::Strong),
    Sig(
        "F2FS filesystem",
        1024,
        &[0x10, 0x20, 0xf5, 0xf2],
        Strength::Weak,
    ),
    Sig("ISO 9660 filesystem", 32769, b"CD001", Strength::Strong),
    Sig("FAT filesystem", 54, b"FAT1", Strength::Weak),
    Sig("FAT32 filesystem", 82, b"FAT32   ", Strength::Strong),
    Sig("NTFS filesystem", 3, b"NTFS    ", Strength::Strong),
    Sig("squashfs filesystem", 0, b"hsqs", Strength::Weak),
    Sig(
        "bcache device",
        4120,
        &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca],
        Strength::Strong,
    ),
    Sig(
        "bcachefs filesystem",
        4120,
        &[0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9],
        Strength::Strong,
    ),
    Sig(
        "ZFS pool member",
        131072,
        &[0x0c, 0xb1, 0xba, 0, 0, 0, 0, 0],
        Strength::Strong,
    ),
];

/// The signature whose format would start at `b[0]`; weak ones (and an
/// MBR) only when `anchored`.
fn match_at(b: &[u8], anchored: bool) -> Option<&'static str> {
    for Sig(name, off, magic, strength) in SIGNATURES {
        if b.get(*off..off + magic.len()) != Some(*magic) {
            continue;
        }
        let ok = match strength {
            Strength::Weak => anchored,
            Strength::Strong => true,
            Strength::Checked(check) => check(b) || anchored,
        };
        if ok {
            return Some(name);
        }
    }
    // An MBR: boot signature plus at least one non-empty partition entry.
    let mbr = anchored && b.len() >= 512 && b[510] == 0x55 && b[511] == 0xaa;
    if mbr && (0..4).any(|i| b[446 + 16 * i + 4] != 0) {
        return Some("MBR partition table");
    }
    None
}

/// A signature at the start of `head` (a device's first blocks).
pub fn find_signature(head: &[u8]) -> Option<&'static str> {
    match_at(head, true)
}

/// End-of-device superblocks in `tail`, the last bytes of a device of
/// `size` bytes: (name, byte offset).
pub fn find_in_tail(tail: &[u8], size: u64) -> Vec<(&'static str, u64)> {
    let start = size - tail.len() as u64;
    let at = |off: u64| {
        off.checked_sub(start)
            .and_then(|i| tail.get(i as usize..))
            .unwrap_or(&[])
    };
    let sectors = size / 512;
    let md090 = (size & !0xffff).saturating_sub(0x10000);
    let md10 = (sectors.saturating_sub(16) & !7) * 512;
    let mut hits = Vec::new();
    if size >= 0x20000 && at(md090).starts_with(MD_MAGIC) && le32(at(md090), 4) == Some(0) {
        hits.push(("Linux RAID (md 0.90)", md090));
    }
    if size >= 0x10000 && at(md10).starts_with(MD_MAGIC) && md1_ok(at(md10)) {
        hits.push(("Linux RAID (md 1.0)", md10));
    }
    for lba in [512, 4096] {
        if size > lba && at(size - lba).starts_with(b"EFI PART") {
            hits.push(("GPT backup partition table", size - lba));
        }
    }
    hits
}

/// What the probe found: a format and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hit {
    /// The format.
    pub what: String,
    /// Its first byte on the device.
    pub at: u64,
    /// How many more places the same format was found.
    pub more: u32,
    /// `signature` (this list) or `blkid`.
    pub check: &'static str,
}

fn note(hits: &mut Vec<Hit>, what: &str, at: u64, check: &'static str) {
    match hits.iter_mut().find(|h| h.what == what && h.check == check) {
        Some(h) => h.more += 1,
        None => hits.push(Hit {
            what: what.to_string(),
            at,
            more: 0,
            check,
        }),
    }
}

fn read_at(f: &File, off: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// Scan `[start, end)` at 512-byte steps from `start`.
fn scan(
    f: &File,
    start: u64,
    end: u64,
    size: u64,
    anchors: &[u64],
    hits: &mut Vec<Hit>,
) -> std::io::Result<()> {
    let mut cs = start;
    while cs < end {
        let ce = (cs + CHUNK).min(end);
        let buf = read_at(f, cs, (ce + REACH).min(size) - cs)?;
        for base in (cs..ce).step_by(512) {
            let i = (base - cs) as usize;
            if let Some(name) = match_at(&buf[i.min(buf.len())..], anchors.contains(&base)) {
                note(hits, name, base, "signature");
            }
        }
        cs = ce;
    }
    Ok(())
}

/// Look for signatures on the device at `path` (`size` bytes) where a job
/// writing `[offset, offset + len)` would care. Err: it could not be read.
pub fn probe(path: &Path, size: u64, offset: u64, len: u64) -> Result<Vec<Hit>, ProbeError> {
    let f = File::open(path).map_err(ProbeError::Open)?;
    let err = ProbeError::Read;
    let mut hits = Vec::new();
    let head_end = size.min(SCAN_BYTES);
    let region_end = size
        .min(offset.saturating_add(len))
        .min(offset.saturating_add(SCAN_BYTES));
    let anchors = [0, offset];
    scan(&f, 0, head_end, size, &anchors, &mut hits).map_err(err)?;
    if offset < region_end {
        // The region's own 512-byte grid; where it overlaps the head, only
        // bases off the head's grid are new.
        let start = if offset.is_multiple_of(512) {
            offset.max(head_end)
        } else {
            offset
        };
        scan(&f, start, region_end, size, &anchors, &mut hits).map_err(err)?;
    }
    let tail_len = size.min(TAIL);
    let tail = read_at(&f, size - tail_len, tail_len).map_err(err)?;
    for (name, at) in find_in_tail(&tail, size) {
        note(&mut hits, name, at, "signature");
    }
    let mut starts = vec![0];
    if offset != 0 && offset < size {
        starts.push(offset);
    }
    for at in starts {
        if !hits.iter().any(|h| h.at == at) {
            if let Some(what) = blkid(path, at) {
                note(&mut hits, &what, at, "blkid");
            }
        }
    }
    Ok(hits)
}

/// Leave no probed pages in the page cache to speed up a later buffered
/// read. Only for a device found free: on a used one this would also start
/// writing back its user's dirty pages.
pub fn forget_probed_pages(path: &Path) {
    use std::os::unix::io::AsRawFd;
    if let Ok(f) = File::open(path) {
        // SAFETY: posix_fadvise takes plain integers and a descriptor we own.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    }
}

/// `blkid -p` (low-level probe, no cache) at byte `offset`: the format it
/// names, if any. None when blkid is missing, finds nothing or hangs.
fn blkid(path: &Path, offset: u64) -> Option<String> {
    use std::process::{Command, Stdio};
    let mut child = Command::new("blkid")
        .args(["-p", "-o", "export", "-O", &offset.to_string()])
        .arg(path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    };
    let mut out = String::new();
    std::io::Read::read_to_string(child.stdout.as_mut()?, &mut out).ok()?;
    blkid_format(status.code(), &out)
}

/// The format in `blkid -p -o export` output (exit code `code`).
pub fn blkid_format(code: Option<i32>, out: &str) -> Option<String> {
    if code == Some(8) {
        return Some("several signatures (blkid: ambivalent result)".into());
    }
    if code != Some(0) {
        return None;
    }
    let get = |k: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(k)?.strip_prefix('=').map(str::to_string))
    };
    if let Some(t) = get("TYPE") {
        let usage = get("USAGE").unwrap_or_else(|| "signature".into());
        return Some(format!("{t} {usage}"));
    }
    get("PTTYPE").map(|t| format!("{t} partition table"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext_superblock(b: &mut [u8], base: usize) {
        let sb = base + 1024;
        b[sb..sb + 4].copy_from_slice(&2048u32.to_le_bytes());
        b[sb + 4..sb + 8].copy_from_slice(&8192u32.to_le_bytes());
        b[sb + 24..sb + 28].copy_from_slice(&2u32.to_le_bytes());
        b[sb + 76..sb + 80].copy_from_slice(&1u32.to_le_bytes());
        b[sb + 56] = 0x53;
        b[sb + 57] = 0xef;
    }

    #[test]
    fn signatures_are_found_where_they_live() {
        let mut head = vec![0u8; 0x40000];
        assert_eq!(find_signature(&head), None);
        head[1080] = 0x53;
        head[1081] = 0xef;
        assert_eq!(find_signature(&head), Some("ext2/3/4 filesystem"));
        assert_eq!(
            match_at(&head, false),
            None,
            "a bare 2-byte magic is not scanned for"
        );
        let mut head = vec![0u8; 0x40000];
        head[0..4].copy_from_slice(b"XFSB");
        assert_eq!(find_signature(&head), Some("XFS filesystem"));
        let mut head = vec![0u8; 1024];
        head[510] = 0x55;
        head[511] = 0xaa;
        assert_eq!(
            find_signature(&head),
            None,
            "boot signature without partitions"
        );
        head[446 + 4] = 0x83;
        assert_eq!(find_signature(&head), Some("MBR partition table"));
        assert_eq!(
            match_at(&head, false),
            None,
            "an MBR counts only at the start"
        );
        let mut head = vec![0u8; 1024];
        head[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(find_signature(&head), Some("GPT partition table"));
    }

    #[test]
    fn a_checked_ext_superblock_is_found_off_the_start() {
        let mut b = vec![0u8; 8192];
        ext_superblock(&mut b, 0);
        assert_eq!(match_at(&b, false), Some("ext2/3/4 filesystem"));
        b[1024 + 24] = 9; // block size 512 KiB: not ext
        assert_eq!(match_at(&b, false), None);
    }

    #[test]
    fn the_scan_finds_a_file_system_at_an_offset_and_counts_repeats() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("dev");
        let mut b = vec![0u8; 12 << 20];
        ext_superblock(&mut b, 1 << 20);
        ext_superblock(&mut b, 9 << 20); // a backup superblock
        b[(5 << 20) + 4096 + 4086..(5 << 20) + 4096 + 4096].copy_from_slice(b"SWAPSPACE2");
        std::fs::write(&p, &b).unwrap();
        let hits = probe(&p, b.len() as u64, 0, 8 << 20).unwrap();
        let ext = hits.iter().find(|h| h.what.starts_with("ext")).unwrap();
        assert_eq!((ext.at, ext.more, ext.check), (1 << 20, 1, "signature"));
        let swap = hits.iter().find(|h| h.what == "swap space").unwrap();
        // The magic fits a 4 KiB-page header and, further back, a 64 KiB one.
        let magic = (5 << 20) + 4096 + 4086;
        assert_eq!(swap.at, magic - 65526, "the first base that fits");
    }

    #[test]
    fn the_region_is_scanned_on_its_own_grid() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("dev");
        let size = (SCAN_BYTES + (8 << 20)) as usize;
        let mut b = vec![0u8; size];
        let at = SCAN_BYTES as usize + (1 << 20) + 1000;
        b[at..at + 4].copy_from_slice(b"hsqs"); // weak: only at the region's start
        std::fs::write(&p, &b).unwrap();
        let hits = probe(&p, size as u64, at as u64, 1 << 20).unwrap();
        assert_eq!(hits.len(), 1, "{hits:?}");
        assert_eq!(hits[0].at, at as u64);
        let hits = probe(&p, size as u64, 0, 1 << 20).unwrap();
        assert!(hits.is_empty(), "beyond the scanned head: {hits:?}");
    }

    #[test]
    fn end_of_device_superblocks_are_found() {
        let size = 64u64 << 20;
        let mut tail = vec![0u8; TAIL as usize];
        let start = size - TAIL;
        let md10 = (((size / 512) - 16) & !7) * 512;
        let i = (md10 - start) as usize;
        tail[i..i + 4].copy_from_slice(MD_MAGIC);
        tail[i + 4] = 1;
        let j = TAIL as usize - 512;
        tail[j..j + 8].copy_from_slice(b"EFI PART");
        let hits = find_in_tail(&tail, size);
        assert_eq!(
            hits,
            vec![
                ("Linux RAID (md 1.0)", md10),
                ("GPT backup partition table", size - 512)
            ]
        );
        let mut tail = vec![0u8; TAIL as usize];
        let md090 = size - 0x10000;
        let k = (md090 - start) as usize;
        tail[k..k + 4].copy_from_slice(MD_MAGIC);
        assert_eq!(
            find_in_tail(&tail, size),
            vec![("Linux RAID (md 0.90)", md090)]
        );
    }

    #[test]
    fn blkid_output_is_read() {
        let out = "DEVNAME=/dev/loop0\nUUID=x\nBLOCK_SIZE=4096\nTYPE=ext4\nUSAGE=filesystem\n";
        assert_eq!(
            blkid_format(Some(0), out).as_deref(),
            Some("ext4 filesystem")
        );
        let out = "DEVNAME=/dev/loop0\nPTUUID=1\nPTTYPE=dos\n";
        assert_eq!(
            blkid_format(Some(0), out).as_deref(),
            Some("dos partition table")
        );
        assert_eq!(blkid_format(Some(2), ""), None);
        assert!(blkid_format(Some(8), "").unwrap().contains("ambivalent"));
        assert_eq!(blkid_format(Some(0), "PART_ENTRY_SCHEME=dos\n"), None);
    }
}
