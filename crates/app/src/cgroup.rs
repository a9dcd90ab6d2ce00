//! A memory cgroup of ssdready's own, holding the process while a workload
//! runs, so that the page cache it can use is limited.
//!
//! cgroup v2 is used when its hierarchy has the memory controller: the
//! group is made at the hierarchy's root (the one place where processes and
//! enabled controllers may coexist), with `memory.max`. Otherwise cgroup
//! v1's memory hierarchy (a hybrid layout, as on this project's development
//! machines): the group is made under the process's own memory cgroup, with
//! `memory.limit_in_bytes`. Either way it is named
//! `ssdready-app-PID`, the process moves into it for the timed phase and
//! back out afterwards, and the group is removed — on success, failure,
//! Ctrl-C (the workload stops, [`MemoryCgroup`]'s `Drop` runs) and panic.
//! A group left by a process that was killed outright (its PID gone, no
//! process in it) is removed by the next run.
//!
//! Page cache is charged to the cgroup whose process first reads a page;
//! pages cached before the move stay charged where they were, so the
//! caller drops the data's pages (posix_fadvise DONTNEED) once inside.

use crate::error::Error;
use ssdready_core::units::unescape_octal;
use std::path::{Path, PathBuf};

/// Which cgroup interface holds the memory controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    V1,
    V2,
}

/// Where a memory cgroup can be made, and where the process is now.
#[derive(Clone, Debug)]
pub struct Place {
    pub version: Version,
    /// The directory the group is made in.
    pub parent: PathBuf,
    /// The process's own cgroup directory (it returns there).
    pub home: PathBuf,
}

/// The memory a cgroup holds now (from its `memory.stat`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    /// Page cache charged to the group (v2 `file`, v1 `cache`).
    pub file_bytes: u64,
    /// Anonymous memory (v2 `anon`, v1 `rss`).
    pub anon_bytes: u64,
    /// Shared memory (`shmem`; counted in `file_bytes` too): a database
    /// server's shared buffers.
    pub shmem_bytes: u64,
    /// Most memory ever charged (v2 `memory.peak`, Linux 5.19 and later;
    /// v1 `memory.max_usage_in_bytes`).
    pub peak_bytes: Option<u64>,
}

/// Why no memory cgroup can be had here.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    #[error("limiting the page cache needs root (a memory cgroup is made for the run); run as root, or leave out --memory and --cache-effect")]
    NotRoot,
    /// A file of /proc could not be read.
    #[error("{path}: {err}")]
    Read {
        path: &'static str,
        err: std::io::Error,
    },
    #[error("no cgroup memory controller: neither a cgroup v2 hierarchy with 'memory' in cgroup.controllers nor a cgroup v1 'memory' hierarchy is mounted (see /proc/self/mountinfo)")]
    NoController,
}

/// Why a cgroup cannot be had here, in one line, or where to make one.
pub fn locate() -> Result<Place, CgroupError> {
    if !is_root() {
        return Err(CgroupError::NotRoot);
    }
    let read = |path: &'static str| {
        std::fs::read_to_string(path).map_err(|err| CgroupError::Read { path, err })
    };
    let mountinfo = read("/proc/self/mountinfo")?;
    let own = read("/proc/self/cgroup")?;
    locate_in(&mountinfo, &own, |p| std::fs::read_to_string(p).ok())
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("Uid:"))?.to_string();
            l.split_whitespace().nth(2).map(|e| e == "0")
        })
        .unwrap_or(false)
}

/// A mount of a cgroup file system: (mount point, root in the hierarchy,
/// file system type, super options).
fn cgroup_mounts(mountinfo: &str) -> Vec<(PathBuf, String, String, String)> {
    mountinfo
        .lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            let fstype = *r.first()?;
            if fstype != "cgroup" && fstype != "cgroup2" {
                return None;
            }
            Some((
                PathBuf::from(unescape_octal(f.get(4)?)),
                f.get(3)?.to_string(),
                fstype.to_string(),
                r.get(2).copied().unwrap_or("").to_string(),
            ))
        })
        .collect()
}

/// The process's path in a hierarchy, below the mount's own root.
fn dir_in(mount: &Path, mount_root: &str, path: &str) -> PathBuf {
    let rel = path
        .strip_prefix(mount_root.trim_end_matches('/'))
        .unwrap_or(path);
    mount.join(rel.trim_start_matches('/'))
}

fn locate_in(
    mountinfo: &str,
    own: &str,
    read: impl Fn(&Path) -> Option<String>,
) -> Result<Place, CgroupError> {
    let mounts = cgroup_mounts(mountinfo);
    // v2, when the memory controller is on its hierarchy.
    if let Some((mnt, root, _, _)) = mounts.iter().find(|m| m.2 == "cgroup2") {
        let has_memory = read(&mnt.join("cgroup.controllers"))
            .is_some_and(|c| c.split_whitespace().any(|x| x == "memory"));
        if has_memory {
            let path = own
                .lines()
                .find_map(|l| l.strip_prefix("0::"))
                .unwrap_or("/");
            return Ok(Place {
                version: Version::V2,
                parent: mnt.clone(),
                home: dir_in(mnt, root, path),
            });
        }
    }
    // v1's memory hierarchy.
    if let Some((mnt, root, _, _)) = mounts
        .iter()
        .find(|m| m.2 == "cgroup" && m.3.split(',').any(|o| o == "memory"))
    {
        let path = own
            .lines()
            .find_map(|l| {
                let mut f = l.splitn(3, ':');
                let (_, ctl, p) = (f.next()?, f.next()?, f.next()?);
                ctl.split(',').any(|c| c == "memory").then_some(p)
            })
            .unwrap_or("/");
        let home = dir_in(mnt, root, path);
        return Ok(Place {
            version: Version::V1,
            parent: home.clone(),
            home,
        });
    }
    Err(CgroupError::NoController)
}

/// A memory cgroup holding this process until dropped.
pub struct MemoryCgroup {
    place: Place,
    dir: PathBuf,
    joined: bool,
}

fn write(path: &Path, v: &str) -> Result<(), Error> {
    std::fs::write(path, v)
        .map_err(|e| Error::Runtime(format!("writing '{v}' to {}: {e}", path.display())))
}

impl MemoryCgroup {
    /// Make a group in `place`, limited to `limit` bytes when given (not
    /// joined yet).
    pub fn create(place: &Place, limit: Option<u64>) -> Result<Self, Error> {
        remove_stale(&place.parent);
        if place.version == Version::V2 {
            let sub = place.parent.join("cgroup.subtree_control");
            let on = std::fs::read_to_string(&sub).unwrap_or_default();
            if !on.split_whitespace().any(|c| c == "memory") {
                std::fs::write(&sub, "+memory").map_err(|e| {
                    Error::Missing(format!(
                        "cannot enable the memory controller for the children of {} ({e}); a cgroup v2 root with processes in it refuses controllers",
                        place.parent.display()
                    ))
                })?;
            }
        }
        let dir = place
            .parent
            .join(format!("ssdready-app-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| {
            Error::Missing(format!("cannot make the cgroup {}: {e}", dir.display()))
        })?;
        let g = MemoryCgroup {
            place: place.clone(),
            dir,
            joined: false,
        };
        if let Some(limit) = limit {
            let file = match place.version {
                Version::V2 => "memory.max",
                Version::V1 => "memory.limit_in_bytes",
            };
            write(&g.dir.join(file), &limit.to_string())?;
        }
        Ok(g)
    }

    /// The group's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Move this process (all its threads) into the group.
    pub fn join(&mut self) -> Result<(), Error> {
        write(
            &self.dir.join("cgroup.procs"),
            &std::process::id().to_string(),
        )?;
        self.joined = true;
        Ok(())
    }

    /// Move this process back to where it was.
    pub fn leave(&mut self) -> Result<(), Error> {
        if self.joined {
            write(
                &self.place.home.join("cgroup.procs"),
                &std::process::id().to_string(),
            )?;
            self.joined = false;
        }
        Ok(())
    }

    /// The memory the group holds now.
    pub fn usage(&self) -> Usage {
        let stat = std::fs::read_to_string(self.dir.join("memory.stat")).unwrap_or_default();
        let (file, anon, peak) = match self.place.version {
            Version::V2 => ("file", "anon", "memory.peak"),
            Version::V1 => ("cache", "rss", "memory.max_usage_in_bytes"),
        };
        Usage {
            file_bytes: stat_field(&stat, file).unwrap_or(0),
            anon_bytes: stat_field(&stat, anon).unwrap_or(0),
            shmem_bytes: stat_field(&stat, "shmem").unwrap_or(0),
            peak_bytes: std::fs::read_to_string(self.dir.join(peak))
                .ok()
                .and_then(|s| s.trim().parse().ok()),
        }
    }

    /// How often the kernel's OOM killer stopped a process of the group
    /// (v2 `memory.events`, v1 `memory.oom_control`: `oom_kill`).
    pub fn oom_kills(&self) -> u64 {
        let file = match self.place.version {
            Version::V2 => "memory.events",
            Version::V1 => "memory.oom_control",
        };
        let s = std::fs::read_to_string(self.dir.join(file)).unwrap_or_default();
        stat_field(&s, "oom_kill").unwrap_or(0)
    }

    /// The processes in the group now, but this one.
    pub fn members(&self) -> Vec<i32> {
        let me = std::process::id() as i32;
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .filter(|&p| p != me)
            .collect()
    }

    /// Kill what is left in the group (processes this run started there,
    /// e.g. a server that would not stop), so that it can be removed.
    pub fn kill_members(&self) {
        use nix::sys::signal::{kill, Signal};
        for _ in 0..50 {
            let left = self.members();
            if left.is_empty() {
                return;
            }
            for p in left {
                let _ = kill(nix::unistd::Pid::from_raw(p), Signal::SIGKILL);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    /// Which interface, in words, for the result.
    pub fn describe(&self) -> String {
        match self.place.version {
            Version::V2 => format!("cgroup v2 memory.max at {}", self.dir.display()),
            Version::V1 => format!("cgroup v1 memory.limit_in_bytes at {}", self.dir.display()),
        }
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = self.leave();
        // Removal can fail briefly while the kernel finishes the move.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        eprintln!(
            "ssdready: could not remove the cgroup {} (rmdir it by hand)",
            self.dir.display()
        );
    }
}

fn stat_field(stat: &str, key: &str) -> Option<u64> {
    stat.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok())?
    })
}

/// Remove groups of ours whose process is gone and that hold no process.
fn remove_stale(parent: &Path) {
    let Ok(rd) = std::fs::read_dir(parent) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix("ssdready-app-") else {
            continue;
        };
        let gone = pid
            .parse::<u32>()
            .is_ok_and(|p| !Path::new(&format!("/proc/{p}")).exists());
        let empty = std::fs::read_to_string(e.path().join("cgroup.procs"))
            .is_ok_and(|s| s.trim().is_empty());
        if gone && empty {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
35 25 0:30 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
36 35 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
40 35 0:35 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 35 0:36 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
";

    #[test]
    fn hybrid_layout_uses_v1_memory_under_the_own_group() {
        let own = "4:memory:/jobs/a1\n1:cpu:/\n0::/\n";
        let p = locate_in(HYBRID, own, |_| Some(String::new())).unwrap();
        assert_eq!(p.version, Version::V1);
        assert_eq!(p.parent, PathBuf::from("/sys/fs/cgroup/memory/jobs/a1"));
        assert_eq!(p.home, p.parent);
    }

    #[test]
    fn unified_layout_with_memory_uses_v2_at_its_root() {
        let mi = "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n";
        let own = "0::/user.slice/session-1.scope\n";
        let p = locate_in(mi, own, |_| Some("cpu io memory pids\n".into())).unwrap();
        assert_eq!(p.version, Version::V2);
        assert_eq!(p.parent, PathBuf::from("/sys/fs/cgroup"));
        assert_eq!(
            p.home,
            PathBuf::from("/sys/fs/cgroup/user.slice/session-1.scope")
        );
        // Without the controller (and no v1 memory hierarchy): one line why.
        let e = locate_in(mi, own, |_| Some("cpu io\n".into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("no cgroup memory controller"), "{e}");
    }

    #[test]
    fn memory_stat_fields_are_read_by_name() {
        let s = "anon 4096\nfile 81920\nfile_mapped 0\n";
        assert_eq!(stat_field(s, "file"), Some(81920));
        assert_eq!(stat_field(s, "anon"), Some(4096));
        assert_eq!(stat_field(s, "shmem"), None);
    }
}
