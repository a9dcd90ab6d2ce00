//! NVMe interrupt coalescing (feature 0x08, "Interrupt Coalescing"): an
//! aggregation threshold (completion entries, 0's based, 8 bits) and an
//! aggregation time (100 µs units, 8 bits) for the controller. Set with
//! `nvme set-feature` (nvme-cli) for the phase of a job that asks
//! (`coalesce_n`, `coalesce_us`), and put back to the value read before
//! when the phase ends.
//!
//! Refused, before any I/O, with the reason, where it cannot apply: a
//! target not on a block device, a device that is not NVMe (loop, virtio,
//! SCSI, RAM disks have no such feature), no root, no nvme-cli, or values
//! the feature cannot hold.

use crate::prepared::PreparedJob;
use ssdready_io::target::Target;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The feature's id.
const FEATURE: &str = "0x08";

/// Why interrupt coalescing cannot be set, or was not.
#[derive(Debug, thiserror::Error)]
pub enum CoalesceError {
    #[error(
        "interrupt coalescing is not available here: {} is not on a block device \
         (no device interrupts to coalesce)",
        .path.display()
    )]
    NotBlockDevice { path: PathBuf },
    /// `kind` says what the device is, in words.
    #[error(
        "interrupt coalescing is not available here: /dev/{dev} is {kind}, not NVMe: \
         interrupt coalescing is NVMe's feature 0x08, which ssdready sets only on NVMe devices"
    )]
    NotNvme { dev: String, kind: &'static str },
    #[error(
        "interrupt coalescing is not available here: the NVMe controller of /dev/{dev} was \
         not found (/sys/block/{dev}/device)"
    )]
    NoController { dev: String },
    #[error(
        "interrupt coalescing is not available here: setting an NVMe feature is an admin \
         command and needs root"
    )]
    NotRoot,
    #[error(
        "interrupt coalescing is not available here: the nvme command (nvme-cli) is not \
         installed; install it to set feature 0x08"
    )]
    NoNvmeCli,
    #[error("option 'coalesce_n': {n} is more than NVMe's 256 (allowed on NVMe: 0..=256)")]
    TooManyCompletions { n: u32 },
    #[error(
        "option 'coalesce_us': {us} µs cannot be set on NVMe (allowed: multiples of 100 \
         up to 25500: the feature counts in 100 µs units)"
    )]
    BadTime { us: u64 },
    /// `args`: the nvme command's arguments, space-separated.
    #[error("running nvme {args}: {err}")]
    NvmeNotRun { args: String, err: std::io::Error },
    #[error("nvme {args} failed: {stderr}")]
    NvmeFailed { args: String, stderr: String },
    #[error("could not read the interrupt coalescing of {dev} to put it back: {output}")]
    Unreadable { dev: String, output: String },
}

/// The controllers (`nvme0`) of a job's targets, when coalescing can be set
/// on every one; else why not.
pub fn controllers(targets: &[Target]) -> Result<Vec<String>, CoalesceError> {
    let mut out = Vec::new();
    for t in targets {
        let Some(dev) = t.device.as_deref() else {
            return Err(CoalesceError::NotBlockDevice {
                path: t.path.clone(),
            });
        };
        if !dev.starts_with("nvme") {
            return Err(CoalesceError::NotNvme {
                dev: dev.to_string(),
                kind: kind_of(dev),
            });
        }
        let ctrl = controller_of(dev).ok_or_else(|| CoalesceError::NoController {
            dev: dev.to_string(),
        })?;
        if !out.contains(&ctrl) {
            out.push(ctrl);
        }
    }
    if !crate::sys::is_root() {
        return Err(CoalesceError::NotRoot);
    }
    if nvme_cli().is_none() {
        return Err(CoalesceError::NoNvmeCli);
    }
    Ok(out)
}

/// What kind of device a non-NVMe disk name is, in words.
fn kind_of(dev: &str) -> &'static str {
    let starts = |p: &str| dev.starts_with(p);
    if starts("loop") {
        "a loop device (its I/O completes in kernel threads, without interrupts)"
    } else if starts("vd") {
        "a virtio-blk disk (virtio has no coalescing feature ssdready can set)"
    } else if starts("sd") {
        "a SCSI/SATA disk"
    } else if starts("zram") || starts("ram") || starts("nullb") || starts("pmem") {
        "a RAM-backed device, without interrupts"
    } else if starts("dm-") {
        "a device-mapper device"
    } else if starts("md") {
        "an md RAID device"
    } else {
        "not an NVMe device"
    }
}

/// `nvme0n1` → `nvme0`, from /sys/block/nvme0n1/device.
fn controller_of(dev: &str) -> Option<String> {
    let link = std::fs::canonicalize(Path::new("/sys/block").join(dev).join("device")).ok()?;
    let name = link.file_name()?.to_str()?.to_string();
    let digits = name.strip_prefix("nvme")?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(name)
}

fn nvme_cli() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("nvme"))
        .find(|p| p.is_file())
}

/// The feature's value for `n` completions (0: the most, 256) and `us`
/// µs; an error names the limit.
pub fn feature_value(n: u32, us: u64) -> Result<u32, CoalesceError> {
    if n > 256 {
        return Err(CoalesceError::TooManyCompletions { n });
    }
    if us > 25_500 || !us.is_multiple_of(100) {
        return Err(CoalesceError::BadTime { us });
    }
    let thr = if n == 0 { 255 } else { n - 1 };
    Ok(((us / 100) as u32) << 8 | thr)
}

/// The current value in `nvme get-feature` output ("Current value:0x…").
pub fn parse_current(text: &str) -> Option<u32> {
    let lower = text.to_ascii_lowercase();
    let at = lower.find("current value:")? + "current value:".len();
    let v = lower[at..].trim_start();
    let hex = v.strip_prefix("0x")?;
    let end = hex
        .find(|c: char| !c.is_ascii_hexdigit())
        .unwrap_or(hex.len());
    u32::from_str_radix(&hex[..end], 16).ok()
}

fn run_nvme(args: &[&str]) -> Result<String, CoalesceError> {
    let out =
        Command::new("nvme")
            .args(args)
            .output()
            .map_err(|err| CoalesceError::NvmeNotRun {
                args: args.join(" "),
                err,
            })?;
    if !out.status.success() {
        return Err(CoalesceError::NvmeFailed {
            args: args.join(" "),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Coalescing set on controllers for a phase; dropping it puts back what
/// each had.
#[derive(Default)]
pub struct Applied {
    previous: Vec<(String, u32)>,
}

impl Drop for Applied {
    fn drop(&mut self) {
        for (ctrl, v) in self.previous.drain(..) {
            let dev = format!("/dev/{ctrl}");
            let value = v.to_string();
            if let Err(e) = run_nvme(&[
                "set-feature",
                &dev,
                "--feature-id",
                FEATURE,
                "--value",
                &value,
            ]) {
                crate::observer::notices::warning(format!(
                    "putting back interrupt coalescing on {dev}: {e}"
                ));
            }
        }
    }
}

/// Set the coalescing of every job of a phase (`members` of `jobs`) that
/// asks for it on real devices (the emulator applies its own).
pub fn apply(jobs: &[PreparedJob], members: &[usize]) -> Result<Applied, CoalesceError> {
    let mut applied = Applied::default();
    for j in members
        .iter()
        .map(|&i| &jobs[i])
        .filter(|j| j.emu.is_none())
    {
        let (spec, targets) = (&j.spec, &j.targets);
        let Some(c) = spec.coalesce.filter(|c| c.n > 0 || c.us > 0) else {
            continue;
        };
        let value = feature_value(c.n, c.us)?;
        for ctrl in controllers(targets)? {
            if applied.previous.iter().any(|(c, _)| *c == ctrl) {
                continue;
            }
            let dev = format!("/dev/{ctrl}");
            let now = run_nvme(&["get-feature", &dev, "--feature-id", FEATURE])?;
            let old = parse_current(&now).ok_or_else(|| CoalesceError::Unreadable {
                dev: dev.clone(),
                output: now.clone(),
            })?;
            run_nvme(&[
                "set-feature",
                &dev,
                "--feature-id",
                FEATURE,
                "--value",
                &value.to_string(),
            ])?;
            applied.previous.push((ctrl, old));
        }
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_feature_value_packs_time_and_zero_based_threshold() {
        assert_eq!(feature_value(8, 200).unwrap(), (2 << 8) | 7);
        assert_eq!(feature_value(0, 0).unwrap(), 255);
        assert_eq!(feature_value(256, 25_500).unwrap(), (255 << 8) | 255);
        let refused = |n, us| feature_value(n, us).unwrap_err().to_string();
        assert_eq!(
            refused(257, 0),
            "option 'coalesce_n': 257 is more than NVMe's 256 (allowed on NVMe: 0..=256)"
        );
        assert!(refused(1, 150).contains("multiples of 100"));
        assert!(refused(1, 25_600).contains("25500"));
    }

    #[test]
    fn the_current_value_is_read_from_nvme_cli_output() {
        let out = "get-feature:0x08 (Interrupt Coalescing), Current value:0x00020a\n";
        assert_eq!(parse_current(out), Some(0x20a));
        assert_eq!(parse_current("nothing"), None);
    }

    #[test]
    fn non_nvme_devices_are_named_in_the_refusal() {
        assert!(kind_of("loop0").contains("loop"));
        assert!(kind_of("vda").contains("virtio"));
        assert!(kind_of("xyz").contains("not an NVMe"));
        let e = CoalesceError::NotNvme {
            dev: "loop0".into(),
            kind: "a loop device",
        };
        assert_eq!(
            e.to_string(),
            "interrupt coalescing is not available here: /dev/loop0 is a loop device, not NVMe: \
             interrupt coalescing is NVMe's feature 0x08, which ssdready sets only on NVMe devices"
        );
    }
}
