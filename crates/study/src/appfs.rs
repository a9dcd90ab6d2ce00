//! A file system of the study's own on a block-device target, for the
//! applications section: the workloads need files, and a device the study
//! may write (the same safety checks as `run`: it holds no file system or
//! other signature) gets an ext4 made on it, mounted in a directory of the
//! study's, used, unmounted and its signature wiped again, so the device is
//! left as the safety checks found it (no file system on it) and a later
//! study may write to it again. Root and `mkfs.ext4` are needed; without
//! them the section says what is missing. The mount is recorded first
//! (`ssdready_emu::kernel::mounts`): a study killed with it mounted leaves
//! a record that `emu list`, the drive's own daemon or the next study
//! finds, and they unmount and wipe it.

use ssdready_measured::record::{TargetKind, TargetProfile};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// An ext4 made and mounted by the study; unmounted and wiped on drop.
pub struct MadeFs {
    dev: String,
    dir: PathBuf,
    mounted: bool,
    /// The mount's record, where `emu list` or the next study finds it
    /// should this process be killed; removed once the mount is undone.
    record: Option<ssdready_emu::kernel::mounts::Recorded>,
}

/// Why the study's own file system could not be made (or undone).
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// A tool could not be started.
    #[error("{name}: {err} (apt-get install e2fsprogs util-linux)")]
    Missing { name: String, err: std::io::Error },
    /// A tool failed (`stderr`: what it said).
    #[error("{name} {args}: {stderr}")]
    Failed {
        name: String,
        args: String,
        stderr: String,
    },
    #[error("the target is not writable: {why}")]
    NotWritable { why: String },
    #[error("making a file system on {target} and mounting it needs root")]
    NotRoot { target: String },
    /// The mount point.
    #[error("creating {}: {err}", .path.display())]
    Dir { path: PathBuf, err: std::io::Error },
    /// The mount's record could not be written.
    #[error(transparent)]
    Record(ssdready_emu::kernel::KernelError),
}

/// Whether the target is a block device the section can make its own file
/// system on (not that it may: [`make`] checks that).
pub fn applies(t: &TargetProfile) -> bool {
    matches!(t.kind, TargetKind::BlockDevice | TargetKind::RamDevice)
}

fn tool(name: &str, args: &[&str]) -> Result<(), FsError> {
    let o = Command::new(name)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|err| FsError::Missing {
            name: name.into(),
            err,
        })?;
    match o.status.success() {
        true => Ok(()),
        false => Err(FsError::Failed {
            name: name.into(),
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&o.stderr).trim().to_string(),
        }),
    }
}

/// Make ext4 (4 KiB blocks) on the target and mount it.
pub fn make(t: &TargetProfile) -> Result<MadeFs, FsError> {
    if let Some(why) = &t.write_refusal {
        return Err(FsError::NotWritable { why: why.clone() });
    }
    if !ssdready_io::kdev::is_root() {
        return Err(FsError::NotRoot {
            target: t.spec.clone(),
        });
    }
    // What a killed study left (its mount keeps the device busy).
    ssdready_emu::kernel::mounts::clean_stale();
    let dir = std::env::temp_dir().join(format!("ssdready-study-fs-{}", std::process::id()));
    std::fs::create_dir(&dir).map_err(|err| FsError::Dir {
        path: dir.clone(),
        err,
    })?;
    let mut fs = MadeFs {
        dev: t.spec.clone(),
        dir,
        mounted: false,
        record: None,
    };
    fs.record = Some(
        ssdready_emu::kernel::mounts::record(&t.spec, &fs.dir, true).map_err(FsError::Record)?,
    );
    // No discard: the raw sweeps' data is the study's anyway, and a TRIM
    // of the whole device changes what its next reads measure.
    tool(
        "mkfs.ext4",
        &["-q", "-F", "-b", "4096", "-E", "nodiscard", &t.spec],
    )?;
    let d = fs.dir.display().to_string();
    tool("mount", &["-t", "ext4", &t.spec, &d])?;
    fs.mounted = true;
    Ok(fs)
}

impl MadeFs {
    /// The mounted file system's root.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Unmount, wipe the signature and remove the directory; what could
    /// not be undone, in words.
    pub fn remove(&mut self) -> Vec<String> {
        let mut left = Vec::new();
        if self.mounted {
            let d = self.dir.display().to_string();
            if let Err(e) = tool("umount", &[&d]) {
                left.push(e.to_string());
                return left;
            }
            self.mounted = false;
            if let Err(e) = tool("wipefs", &["-q", "-a", &self.dev]) {
                left.push(e.to_string());
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
        self.record = None;
        left
    }
}

impl Drop for MadeFs {
    fn drop(&mut self) {
        self.remove();
    }
}
