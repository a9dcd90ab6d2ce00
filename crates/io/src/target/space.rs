//! Free space of a file system (`statvfs`), so that a layout or a result
//! file that cannot fit is refused before anything is written.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Bytes free on the file system that holds a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FreeSpace {
    /// Free to unprivileged users (`f_bavail`): what a layout may use, so
    /// that it never eats the blocks a file system keeps for root.
    pub available: u64,
    /// Free in all (`f_bfree`): root may use the reserved blocks too.
    pub free: u64,
}

/// The free space of the file system that holds `path` (which must exist).
pub fn free_space(path: &Path) -> std::io::Result<FreeSpace> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: statvfs is plain old data; all-zero is a valid value of it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated string that outlives the call and `st`
    // is a valid, writable statvfs.
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let unit = st.f_frsize as u64;
    Ok(FreeSpace {
        available: (st.f_bavail as u64).saturating_mul(unit),
        free: (st.f_bfree as u64).saturating_mul(unit),
    })
}

/// `n` bytes for a message: `1099511627776 bytes (1.0 TiB)`.
pub fn show_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{n} bytes ({v:.1} {})", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_of_an_existing_directory_is_known() {
        let d = tempfile::tempdir().unwrap();
        let f = free_space(d.path()).unwrap();
        assert!(f.free >= f.available);
        assert!(free_space(&d.path().join("missing")).is_err());
    }

    #[test]
    fn byte_counts_read_in_binary_units() {
        assert_eq!(show_bytes(512), "512 bytes");
        assert_eq!(show_bytes(1 << 40), "1099511627776 bytes (1.0 TiB)");
        assert_eq!(show_bytes(3 << 19), "1572864 bytes (1.5 MiB)");
    }
}
