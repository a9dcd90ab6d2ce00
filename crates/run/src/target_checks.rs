//! The checks on real targets that need the operating system: a device
//! that does not exist, a target this process may not open, a dev-dax
//! device that is not one; these are bad input (exit code 2), found before
//! anything is written. A target error becomes a failure here too
//! ([`target_failure`]). Below the preparation of a job's targets and the
//! passthrough checks, which call them.

use crate::failure::{bad, environmental, Failure};
use nix::errno::Errno;
use ssdready_core::spec::JobSpec;
use ssdready_io::target::{Target, TargetError, TargetNeeds};
use std::path::Path;

/// A target error as a failure: the request's fault (exit code 2) unless
/// the operating system failed in a way that is not about the request.
pub fn target_failure(job: &str, e: TargetError) -> Failure {
    match &e {
        TargetError::Io { source, .. } if !environmental(source) => {
            Failure::Runtime(format!("job '{job}': {e}"))
        }
        _ => bad(format!("job '{job}': {e}")),
    }
}

/// A dev-dax job's target: a device-DAX character device. A missing one is
/// a bad request too (exit code 2): the job names a device this machine
/// does not have, and the message says what it has.
pub fn dax_target(job: &str, name: &str, needs: TargetNeeds) -> Result<Target, Failure> {
    use ssdready_io::engines::devdax::{resolve, DaxError};
    resolve(Path::new(name), needs).map_err(|e| match e {
        // A device that does not exist is a target the job names wrongly.
        DaxError::Absent(m) => Failure::BadInput(format!("job '{job}': {m}")),
        DaxError::WrongKind(m) => bad(format!("job '{job}': {m}")),
        DaxError::Target(e) => target_failure(job, e),
    })
}

/// Before a dev-dax job's files are sized: it names its devices, and each
/// is one (the full check, writes included, is [`dax_target`]'s).
pub fn dax_names(spec: &JobSpec, allow_destructive: bool) -> Result<(), Failure> {
    if spec.filename.is_empty() {
        return Err(bad(format!(
            "job '{}': ioengine=dev-dax needs filename=/dev/daxX.Y (a device-DAX character device)",
            spec.name
        )));
    }
    let needs = TargetNeeds {
        bytes: None,
        offset: 0,
        modifies: false,
        allow_destructive,
        allow_mounted_write: false,
    };
    for name in &spec.filename {
        dax_target(&spec.name, name, needs)?;
    }
    Ok(())
}

/// Before resolving `name`: a missing path in the /dev file system (not
/// /dev/shm, a file system of its own) names a device that is not there; it
/// must not become a regular file in /dev.
pub fn check_device_exists(job: &str, name: &str) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let p = Path::new(name);
    if std::fs::symlink_metadata(p).is_ok() {
        return Ok(());
    }
    let dev_fs = |d: &Path| std::fs::metadata(d).map(|m| m.dev()).ok();
    if p.is_absolute()
        && dev_fs(parent_of(p)).is_some()
        && dev_fs(parent_of(p)) == dev_fs(Path::new("/dev"))
    {
        return Err(bad(format!(
            "job '{job}': option 'filename': {name} does not exist (no such device; lsblk lists the block devices)"
        )));
    }
    Ok(())
}

/// After resolving: can this process open the target as the job will (for
/// writing when it modifies, with O_DIRECT when direct=1), or, for a file
/// still to be created, write into its directory. (Whether the file system
/// has room for the layout is layout.rs's check, counting every file on it.)
pub fn check_access(job: &str, t: &Target, modifies: bool, direct: bool) -> Result<(), Failure> {
    let shown = t.path.display();
    let why = |what: &str, e: std::io::Error| {
        bad(format!(
            "job '{job}': cannot {what} {shown}: {e}{}",
            match e.raw_os_error().map(Errno::from_raw) {
                Some(Errno::EINVAL) if direct => " (O_DIRECT is not supported there; use direct=0)",
                Some(Errno::EACCES | Errno::EPERM) => " (check its permissions, or run as root)",
                Some(Errno::EROFS) => " (the file system is read-only)",
                _ => "",
            }
        ))
    };
    if t.path.exists() {
        let what = if modifies {
            "open for writing"
        } else {
            "open for reading"
        };
        return match t.open(modifies, direct) {
            Ok(_) => Ok(()),
            Err(e) if environmental(&e) => Err(why(what, e)),
            Err(e) => Err(Failure::Runtime(format!(
                "job '{job}': opening {shown}: {e}"
            ))),
        };
    }
    let dir = parent_of(&t.path);
    let mode = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if let Err(e) = nix::unistd::access(dir, mode) {
        return Err(why("create", std::io::Error::from_raw_os_error(e as i32)));
    }
    Ok(())
}

fn parent_of(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_and_missing_paths_are_environmental() {
        for code in [
            libc_code(Errno::EACCES),
            libc_code(Errno::ENOENT),
            libc_code(Errno::EROFS),
        ] {
            assert!(environmental(&std::io::Error::from_raw_os_error(code)));
        }
        assert!(!environmental(&std::io::Error::from_raw_os_error(
            libc_code(Errno::EIO)
        )));
        assert!(!environmental(&std::io::Error::other("x")));
    }

    fn libc_code(e: Errno) -> i32 {
        e as i32
    }
}
