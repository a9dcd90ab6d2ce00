//! "Never destroy data": before a job writes (or trims) a block device, or
//! a regular file, find everything that uses it. The checks, in layers, each
//! finding naming the device and the check that found it:
//!
//! 1. users, from one reading of sysfs, `/proc/self/mountinfo` and
//!    `/proc/swaps` ([`walk`]): mounts by device number or source
//!    (mountinfo, bind mounts included), swap (swaps), devices stacked on it
//!    (holders, slaves: dm, md, bcache), loop devices over it or over a
//!    file on its file system (loop, followed up the stack and down to what
//!    a loop or dm device is built on), partitions in use (partitions);
//! 2. partitions: a whole disk that has any is refused;
//! 3. signatures of partition tables, file systems, RAID, LVM, LUKS, swap
//!    at its start, at the job region's start and scanned over the first
//!    64 MiB of both, at its end, and by `blkid -p` ([`signature`]);
//! 4. the final gate: an exclusive open (O_EXCL), which the kernel refuses
//!    while anything holds the device; kept for the run ([`claim`]).
//!
//! A regular file is checked for loop devices over it and swap in it.
//! Read-only jobs are not checked. `--allow-destructive` overrides a
//! refusal; what it overrode is then given as a warning. A mounted file
//! system on the target (or on a loop device over it) needs fio's
//! `allow_mounted_write=1` on top, as fio does.

pub mod claim;
pub mod signature;
pub mod snapshot;
pub mod walk;

use super::sysfs::DevNode;
use snapshot::{FileId, Snapshot};
use std::fs::File;
use std::path::Path;
use std::sync::Arc;

/// What checking a target found.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Why writing would destroy data, one sentence each; empty when none.
    pub reasons: Vec<String>,
    /// Exclusive claims to hold for the run.
    pub claims: Vec<Arc<File>>,
    /// Whether a reason is a mounted file system on the target, or on a
    /// loop device over it: `--allow-destructive` alone does not override
    /// it; fio's `allow_mounted_write=1` is needed too.
    pub mounted: bool,
}

/// Whether a finding's chain ends in a mounted file system.
fn is_mount(f: &walk::Finding) -> bool {
    f.links.iter().any(|l| l.check == "mountinfo")
}

/// Check the block device at `path` (`dev` in sysfs, `size` bytes) before a
/// job writes `[offset, offset + len)` of it.
pub fn check_block_device(path: &Path, dev: &DevNode, size: u64, offset: u64, len: u64) -> Verdict {
    let snap = Snapshot::of_system();
    let (mut reasons, mounted) = users(&snap, &dev.name);
    reasons.extend(signatures(path, &dev.name, size, offset, len));
    let (busy, claims) = gate(&snap, path, dev);
    reasons.extend(busy);
    if reasons.is_empty() {
        signature::forget_probed_pages(path);
    }
    Verdict {
        reasons,
        claims,
        mounted,
    }
}

/// Layers 1 and 2: users found in the tables, and partitions; and whether
/// one is a mounted file system.
fn users(snap: &Snapshot, name: &str) -> (Vec<String>, bool) {
    let found = walk::users_of_device(snap, name);
    let mounted = found.iter().any(is_mount);
    let mut reasons: Vec<String> = found.iter().map(ToString::to_string).collect();
    if let Some(b) = snap.blocks.get(name).filter(|b| !b.partitions.is_empty()) {
        let p: Vec<String> = b.partitions.iter().map(|p| format!("/dev/{p}")).collect();
        reasons.push(format!(
            "/dev/{name} has partitions: {} (partitions)",
            p.join(", ")
        ));
    }
    (reasons, mounted)
}

/// Layer 3: signatures.
fn signatures(path: &Path, name: &str, size: u64, offset: u64, len: u64) -> Vec<String> {
    match signature::probe(path, size, offset, len) {
        Ok(hits) => hits
            .iter()
            .map(|h| {
                let more = match h.more {
                    0 => String::new(),
                    1 => " and 1 more place".to_string(),
                    n => format!(" and {n} more places"),
                };
                format!(
                    "/dev/{name} holds data: {} signature at byte {}{more} ({})",
                    h.what, h.at, h.check
                )
            })
            .collect(),
        Err(e) => vec![format!("/dev/{name}: {e} (signature)")],
    }
}

/// Layer 4, the final gate: open exclusively what the job's writes reach;
/// (reasons it could not be, claims to keep).
fn gate(snap: &Snapshot, path: &Path, dev: &DevNode) -> (Vec<String>, Vec<Arc<File>>) {
    let mut reasons = Vec::new();
    let mut claims = Vec::new();
    for (p, devno, shown) in gate_devices(snap, path, dev) {
        match claim::claim(&p, devno) {
            Ok(f) => claims.push(f),
            Err(claim::ClaimError::Busy) => reasons.push(format!(
                "{shown} is held exclusively by another user: a mounted file system, swap, RAID, \
                 device-mapper or another program (O_EXCL open: device busy)"
            )),
            Err(claim::ClaimError::Changed) => reasons.push(format!(
                "{} no longer opens {shown}, the device that was checked (O_EXCL)",
                p.display()
            )),
            Err(claim::ClaimError::Other(e)) => reasons.push(format!(
                "{shown} could not be opened exclusively to check it: {e} (O_EXCL)"
            )),
        }
    }
    (reasons, claims)
}

/// The devices to open exclusively: the target, then down through loop
/// backing devices (a partition's disk is skipped: its other partitions
/// may rightly be in use). (path to open, device number, name shown).
fn gate_devices(
    snap: &Snapshot,
    path: &Path,
    dev: &DevNode,
) -> Vec<(std::path::PathBuf, snapshot::Devno, String)> {
    let devno = parse(&dev.devno);
    let mut out = vec![(path.to_path_buf(), devno, format!("/dev/{}", dev.name))];
    let mut cur = snap.blocks.get(&dev.name);
    for _ in 0..32 {
        let Some(b) = cur else { break };
        let b = match &b.parent {
            Some(disk) => match snap.blocks.get(disk) {
                Some(d) => d,
                None => break,
            },
            None => b,
        };
        cur = match &b.backing {
            Some((_, FileId::Block(d))) => snap.by_devno(*d),
            _ => None,
        };
        if let Some(x) = cur {
            let p = Path::new("/dev").join(&x.name);
            if p.exists() {
                let shown = format!("/dev/{} (the backing device of /dev/{})", x.name, b.name);
                out.push((p, x.devno, shown));
            }
        }
    }
    out
}

fn parse(devno: &str) -> snapshot::Devno {
    devno
        .split_once(':')
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .unwrap_or((0, 0))
}

/// Check the regular file at `path` (identity `id`) before a job writes
/// it: loop devices over it (mounted or not) and swap in it.
pub fn check_file(path: &Path, id: FileId) -> Verdict {
    let snap = Snapshot::of_system();
    let found = walk::users_of_file(&snap, id, &path.display().to_string());
    Verdict {
        reasons: found.iter().map(ToString::to_string).collect(),
        claims: Vec::new(),
        mounted: found.iter().any(is_mount),
    }
}

#[cfg(test)]
mod tests;
