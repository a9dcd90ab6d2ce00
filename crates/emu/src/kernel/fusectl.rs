//! A FUSE connection ended from outside its daemon, through the FUSE
//! control file system (`fusectl`, `/sys/fs/fuse/connections/N/abort`):
//! what frees a process waiting for an answer that a dead or dying daemon
//! will never give, and ends the I/O its loop device still has in flight.
//! The next command uses it on what such a daemon left, before the loop
//! device is unbound and the mount detached.

use ssdready_io::kdev;
use std::path::{Path, PathBuf};

/// Where the system mounts fusectl.
pub const CONNECTIONS: &str = "/sys/fs/fuse/connections";

/// The connection number of the FUSE mount at `mountpoint` in `mountinfo`
/// (`/proc/self/mountinfo`'s text): the mount's device number, which names
/// its directory in fusectl. Read from the table, not from the mount (a
/// stat of a mount whose daemon is gone may wait).
pub fn connection_in(mountinfo: &str, mountpoint: &Path) -> Option<u32> {
    let want = mountpoint.to_str()?;
    mountinfo.lines().find_map(|l| {
        let (head, tail) = l.split_once(" - ")?;
        let fields: Vec<&str> = head.split(' ').collect();
        let fstype = tail.split(' ').next()?;
        let fuse = fstype == "fuse" || fstype.starts_with("fuse.");
        if !fuse || *fields.get(4)? != want {
            return None;
        }
        let (major, minor) = fields.get(2)?.split_once(':')?;
        let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
        Some((major << 20) | minor)
    })
}

/// Where fusectl is mounted in `mountinfo`, if it is.
fn fusectl_in(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (head, tail) = l.split_once(" - ")?;
        let dir = head.split(' ').nth(4)?;
        (tail.split(' ').next()? == "fusectl").then(|| PathBuf::from(dir))
    })
}

/// Abort the FUSE connection of the mount at `mountpoint`: `Ok(Some(n))`
/// names the connection aborted, `Ok(None)` says no FUSE file system is
/// mounted there. Where fusectl is not mounted, it is mounted on a
/// directory of `run_dir` for the time of it (root only).
pub fn abort(mountpoint: &Path, run_dir: &Path) -> Result<Option<u32>, String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("reading /proc/self/mountinfo: {e}"))?;
    let Some(n) = connection_in(&info, mountpoint) else {
        return Ok(None);
    };
    if let Some(dir) = fusectl_in(&info) {
        return write_abort(&dir, n).map(|()| Some(n));
    }
    let dir = run_dir.join("fusectl");
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let done = kdev::mount_fusectl(&dir)
        .map_err(|e| format!("mounting fusectl on {}: {e}", dir.display()))
        .and_then(|()| {
            let r = write_abort(&dir, n);
            let _ = kdev::umount(&dir, true);
            r
        });
    let _ = std::fs::remove_dir(&dir);
    done.map(|()| Some(n))
}

fn write_abort(dir: &Path, n: u32) -> Result<(), String> {
    let p = dir.join(n.to_string()).join("abort");
    std::fs::write(&p, "1").map_err(|e| format!("writing {}: {e}", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "\
22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/vda rw
40 22 0:41 / /run/ssdready/emu/emu-12.mnt rw,nosuid,nodev,noatime - fuse ssdready-emu rw,user_id=0
41 22 0:42 / /mnt/other rw - fuse.sshfs host: rw
43 30 0:40 / /sys/fs/fuse/connections rw,relatime - fusectl none rw
";

    #[test]
    fn a_mount_s_connection_is_its_device_number() {
        let at = |p: &str| connection_in(INFO, Path::new(p));
        assert_eq!(at("/run/ssdready/emu/emu-12.mnt"), Some(41));
        assert_eq!(at("/mnt/other"), Some(42));
        // Not FUSE, or not mounted: no connection.
        assert_eq!(at("/"), None);
        assert_eq!(at("/run/ssdready/emu/emu-13.mnt"), None);
        let big = "50 1 3:7 / /x rw - fuse a rw\n";
        assert_eq!(connection_in(big, Path::new("/x")), Some((3 << 20) | 7));
    }

    #[test]
    fn fusectl_is_found_where_it_is_mounted() {
        assert_eq!(fusectl_in(INFO), Some(PathBuf::from(CONNECTIONS)));
        assert_eq!(fusectl_in(INFO.lines().next().unwrap()), None);
    }

    #[test]
    fn nothing_mounted_there_is_nothing_to_abort() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(abort(dir.path(), dir.path()), Ok(None));
    }
}
