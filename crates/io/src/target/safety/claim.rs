//! The final gate: an exclusive open (`O_EXCL` on a block device), which
//! fails with EBUSY while a mounted file system, swap, md, device-mapper,
//! bcache or another program holds the device — in any mount namespace,
//! whatever the tables above missed. The descriptor is then kept for the
//! whole run, so nothing can mount the device, swap on it or build a
//! device on it while the job writes (loop devices, which take no claim,
//! excepted). Jobs of one run share a claim on the same device.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_cannot_be_claimed_as_a_device() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, b"x").unwrap();
        assert!(matches!(claim(&p, (7, 0)), Err(ClaimError::Changed)));
    }
}
