//! The final gate: an exclusive open (`O_EXCL` on a block device), which
//! fails with EBUSY while a mounted file system, swap, md, device-mapper,
//! bcache or another program holds the device — in any mount namespace,
//! whatever the tables above missed. The descriptor is then kept for the
//! whole run, so nothing can mount the device, swap on it or build a
//! device on it while the job writes (loop devices, which take no claim,
//! excepted). Jobs of one run share a claim on the same device.
//!
//! Also here: asking the loop driver what a loop device is backed by.

use super::snapshot::{file_id, Devno, FileId};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

/// Claims this process holds, by device.
static CLAIMS: Mutex<Vec<(Devno, Weak<File>)>> = Mutex::new(Vec::new());

/// Why an exclusive open failed.
#[derive(Debug)]
pub enum ClaimError {
    /// EBUSY: someone else holds the device exclusively.
    Busy,
    /// Another error (permissions, a vanished device…).
    Other(std::io::Error),
    /// The path no longer opens the device that was checked.
    Changed,
}

/// Open `path` (device `devno`) exclusively, or share this process's claim
/// on it.
pub fn claim(path: &Path, devno: Devno) -> Result<Arc<File>, ClaimError> {
    let mut held = CLAIMS.lock().unwrap_or_else(|p| p.into_inner());
    held.retain(|(_, w)| w.strong_count() > 0);
    if let Some(f) = held
        .iter()
        .find(|(d, _)| *d == devno)
        .and_then(|(_, w)| w.upgrade())
    {
        return Ok(f);
    }
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::EBUSY) => ClaimError::Busy,
            _ => ClaimError::Other(e),
        })?;
    let md = f.metadata().map_err(ClaimError::Other)?;
    if file_id(&md) != FileId::Block(devno) {
        return Err(ClaimError::Changed);
    }
    let f = Arc::new(f);
    held.push((devno, Arc::downgrade(&f)));
    Ok(f)
}

/// `LOOP_GET_STATUS64` from linux/loop.h.
const LOOP_GET_STATUS64: libc::c_ulong = 0x4C05;

/// `struct loop_info64` from linux/loop.h.
#[repr(C)]
struct LoopInfo64 {
    lo_device: u64,
    lo_inode: u64,
    lo_rdevice: u64,
    lo_offset: u64,
    lo_sizelimit: u64,
    lo_number: u32,
    lo_encrypt_type: u32,
    lo_encrypt_key_size: u32,
    lo_flags: u32,
    lo_file_name: [u8; 64],
    lo_crypt_name: [u8; 64],
    lo_encrypt_key: [u8; 32],
    lo_init: [u64; 2],
}

/// What the loop device at `dev_path` is backed by, as the driver knows it
/// (right even when the backing file was renamed, deleted or lies in
/// another mount namespace). None when it cannot be asked.
pub fn loop_status(dev_path: &str) -> Option<FileId> {
    use std::os::unix::io::AsRawFd;
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(dev_path)
        .ok()?;
    // SAFETY: all-zero bytes are a valid LoopInfo64 (integers and arrays).
    let mut info: LoopInfo64 = unsafe { std::mem::zeroed() };
    // SAFETY: LOOP_GET_STATUS64 writes one struct loop_info64, which
    // LoopInfo64 matches field for field, through a pointer we own.
    let rc = unsafe { libc::ioctl(f.as_raw_fd(), LOOP_GET_STATUS64 as _, &mut info) };
    if rc != 0 {
        return None;
    }
    let split = crate::target::sysfs::major_minor;
    Some(if info.lo_rdevice != 0 {
        FileId::Block(split(info.lo_rdevice))
    } else {
        FileId::File {
            dev: split(info.lo_device),
            ino: info.lo_inode,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_info64_has_the_kernels_layout() {
        assert_eq!(std::mem::size_of::<LoopInfo64>(), 232);
    }

    #[test]
    fn a_regular_file_cannot_be_claimed_as_a_device() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        assert!(matches!(claim(&p, (7, 0)), Err(ClaimError::Changed)));
        assert!(loop_status(p.to_str().unwrap()).is_none());
    }
}
