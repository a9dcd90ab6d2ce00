//! "Never destroy data": before a job writes to a block device, check that
//! nothing lives on it. A device is refused when it (or one of its
//! partitions) is mounted or used as swap, when other devices are stacked on
//! it (LVM, RAID, dm-crypt), when it has partitions, or when its first blocks
//! carry a known signature (partition tables, filesystems, LVM, RAID, LUKS,
//! swap). `--allow-destructive` skips the check.

use super::sysfs::DevNode;
use std::io::Read;
use std::path::Path;

/// (name, byte offset, magic bytes) of the signatures we look for. The list
/// follows libblkid's probes for the most common formats.
const SIGNATURES: &[(&str, usize, &[u8])] = &[
    ("GPT partition table", 512, b"EFI PART"),
    ("ext2/3/4 filesystem", 1080, &[0x53, 0xef]),
    ("XFS filesystem", 0, b"XFSB"),
    ("btrfs filesystem", 65600, b"_BHRfS_M"),
    ("LVM physical volume", 536, b"LVM2 001"),
    ("LVM physical volume", 1048, b"LVM2 001"),
    ("Linux RAID (md 1.1)", 0, &[0xfc, 0x4e, 0x2b, 0xa9]),
    ("Linux RAID (md 1.2)", 4096, &[0xfc, 0x4e, 0x2b, 0xa9]),
    ("LUKS encrypted volume", 0, b"LUKS\xba\xbe"),
    ("swap space", 4086, b"SWAPSPACE2"),
    ("swap space", 4086, b"SWAP-SPACE"),
    ("F2FS filesystem", 1024, &[0x10, 0x20, 0xf5, 0xf2]),
    ("ISO 9660 filesystem", 32769, b"CD001"),
    ("FAT filesystem", 54, b"FAT1"),
    ("FAT32 filesystem", 82, b"FAT32   "),
    ("NTFS filesystem", 3, b"NTFS    "),
    (
        "bcache device",
        4120,
        &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca],
    ),
];

/// How many leading bytes to read for the signature check.
const PROBE_BYTES: usize = 0x40000;

/// Find a signature in the first bytes of a device.
pub fn find_signature(head: &[u8]) -> Option<&'static str> {
    for (name, off, magic) in SIGNATURES {
        if head.len() >= off + magic.len() && &head[*off..off + magic.len()] == *magic {
            return Some(name);
        }
    }
    // An MBR: boot signature plus at least one non-empty partition entry.
    if head.len() >= 512 && head[510] == 0x55 && head[511] == 0xaa {
        let has_entry = (0..4).any(|i| {
            let e = &head[446 + 16 * i..446 + 16 * (i + 1)];
            e[4] != 0 // partition type
        });
        if has_entry {
            return Some("MBR partition table");
        }
    }
    None
}

fn mounted_devnos() -> Vec<String> {
    let s = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    s.lines()
        .filter_map(|l| l.split_whitespace().nth(2).map(String::from))
        .collect()
}

fn swap_devices() -> Vec<String> {
    let s = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    s.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

/// Why writing to `path` (device `dev`) would destroy data, or None.
pub fn why_unsafe_to_write(path: &Path, dev: &DevNode) -> Option<String> {
    let mounted = mounted_devnos();
    let mut nodes = vec![dev.clone()];
    if !dev.is_partition {
        for p in dev.partitions() {
            if let Some(n) = std::fs::read_to_string(format!("/sys/block/{}/{p}/dev", dev.disk))
                .ok()
                .and_then(|d| {
                    let (a, b) = d.trim().split_once(':')?;
                    DevNode::from_major_minor(a.parse().ok()?, b.parse().ok()?)
                })
            {
                nodes.push(n);
            }
        }
    }
    for n in &nodes {
        if mounted.contains(&n.devno) {
            return Some(format!("/dev/{} is mounted", n.name));
        }
        let swaps = swap_devices();
        if swaps.iter().any(|s| s.ends_with(&format!("/{}", n.name))) {
            return Some(format!("/dev/{} is in use as swap", n.name));
        }
        let holders = n.holders();
        if !holders.is_empty() {
            return Some(format!("/dev/{} is held by {}", n.name, holders.join(", ")));
        }
    }
    if !dev.is_partition {
        let parts = dev.partitions();
        if !parts.is_empty() {
            return Some(format!("it has partitions ({})", parts.join(", ")));
        }
    }
    let mut head = vec![0u8; PROBE_BYTES];
    match std::fs::File::open(path) {
        Ok(mut f) => {
            let mut got = 0;
            while got < head.len() {
                match f.read(&mut head[got..]) {
                    Ok(0) => break,
                    Ok(n) => got += n,
                    Err(e) => {
                        return Some(format!(
                            "its first blocks could not be read to check for data ({e})"
                        ))
                    }
                }
            }
            head.truncate(got);
        }
        Err(e) => return Some(format!("it could not be opened to check for data ({e})")),
    }
    find_signature(&head).map(|s| format!("{s} signature found on it"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_are_found_where_they_live() {
        let mut head = vec![0u8; PROBE_BYTES];
        assert_eq!(find_signature(&head), None);
        head[1080] = 0x53;
        head[1081] = 0xef;
        assert_eq!(find_signature(&head), Some("ext2/3/4 filesystem"));
        let mut head = vec![0u8; PROBE_BYTES];
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
        let mut head = vec![0u8; 1024];
        head[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(find_signature(&head), Some("GPT partition table"));
    }
}
