//! A device's queue settings in sysfs: which ones ssdready changes
//! ([`ATTRS`]), reading one as a value to compare (the active scheduler
//! out of `[brackets]`, others trimmed, by `ssdready_measured`'s parser),
//! writing one, and putting one back ([`undo`]) unless another process
//! changed it since ssdready did.

use crate::journal::{Also, Setting};
use crate::Restored;
use ssdready_measured::limits::parse::queue_value;
use ssdready_measured::limits::queue_files as file;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The queue settings any Tuner may change (named once, with the rest of
/// the queue directory, by `ssdready_measured`); a Tuner is given more by
/// its caller ([`crate::Tuner::allowing`]: the study's levers table), each
/// a plain file name of the queue directory ([`plain_attr`]).
pub const ATTRS: &[&str] = file::CHANGED;

/// Whether `name` is a device name as `/sys/block` lists them (no path).
pub fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:!+".contains(c))
}

/// Whether `attr` names a file directly in a queue directory: letters,
/// digits and `_` (no path, no `iosched/` tunable: those are put back only
/// as what a scheduler switch reset).
pub fn plain_attr(attr: &str) -> bool {
    !attr.is_empty()
        && attr.len() <= 64
        && attr.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `value` may be written to a queue setting: one word of letters,
/// digits, `-` or `_`.
pub fn plain_value(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= 64
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Whether `attr` may be put back as a setting a switch reset.
pub fn plain_also(attr: &str) -> bool {
    file::RESET_BY_SCHEDULER.contains(&attr)
        || attr
            .strip_prefix("iosched/")
            .is_some_and(|n| plain_name(n) && !n.contains(':'))
}

/// What changing `attr` makes the kernel reset, as it is now.
pub fn also_of(sysfs: &Path, device: &str, attr: &str) -> Vec<Also> {
    if attr != file::SCHEDULER {
        return Vec::new();
    }
    let mut names: Vec<String> = file::RESET_BY_SCHEDULER
        .iter()
        .map(|a| a.to_string())
        .collect();
    let iosched = path(sysfs, device, "iosched");
    let mut tunables: Vec<String> = std::fs::read_dir(iosched)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().to_str().map(|n| format!("iosched/{n}")))
        .collect();
    tunables.sort();
    names.extend(tunables);
    names
        .into_iter()
        .filter(|a| plain_also(a))
        .filter_map(|a| {
            let original = read(sysfs, device, &a).ok()?;
            plain_value(&original).then_some(Also { attr: a, original })
        })
        .collect()
}

/// Put back what a switch reset, where it differs now: what was written
/// (`nr_requests to 4`), or what failed.
fn put_also(sysfs: &Path, s: &Setting) -> Result<Vec<String>, String> {
    let (mut written, mut failed) = (Vec::new(), Vec::new());
    for a in s.also.iter().filter(|a| plain_also(&a.attr)) {
        let now = read(sysfs, &s.device, &a.attr);
        if now.as_deref().ok() == Some(a.original.as_str()) {
            continue;
        }
        match write(sysfs, &s.device, &a.attr, &a.original) {
            Ok(()) => written.push(format!("{} to {}", a.attr, a.original)),
            Err(e) => failed.push(format!("{} to {}: {e}", a.attr, a.original)),
        }
    }
    match failed.is_empty() {
        true => Ok(written),
        false => Err(format!("it is back, but not {}", failed.join(", "))),
    }
}

/// `SYSFS/block/DEVICE/queue/ATTR`.
pub fn path(sysfs: &Path, device: &str, attr: &str) -> PathBuf {
    sysfs.join("block").join(device).join("queue").join(attr)
}

/// Read a setting's value (the active scheduler for `scheduler`, others
/// trimmed: [`queue_value`]).
pub fn read(sysfs: &Path, device: &str, attr: &str) -> std::io::Result<String> {
    let text = std::fs::read_to_string(path(sysfs, device, attr))?;
    Ok(queue_value(attr, &text))
}

/// Write `value` to a setting (never through a link at the setting's own
/// name; sysfs reaches the device's directory through one).
pub fn write(sysfs: &Path, device: &str, attr: &str, value: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path(sysfs, device, attr))?;
    f.write_all(value.as_bytes())
}

/// Put back every setting of a journal's `settings`, the last changed
/// first; what could not be put back stays in them. A setting that is not
/// a plain file of a queue directory of a plainly named device is never
/// written (a Tuner journals only the settings it was allowed), nor one a
/// later scheduler switch put back already.
pub fn undo_all(sysfs: &Path, settings: &mut Vec<Setting>) -> Vec<Restored> {
    let (mut out, mut kept) = (Vec::new(), Vec::new());
    while let Some(s) = settings.pop() {
        if !plain_attr(&s.attr) || !plain_name(&s.device) || s.put_back_by_switch(settings) {
            continue;
        }
        let r = undo(sysfs, &s);
        if matches!(r, Restored::Failed { .. }) {
            kept.push(s);
        }
        out.push(r);
    }
    kept.reverse();
    *settings = kept;
    out
}

/// Put a changed setting back: its original is written when the setting
/// still holds what ssdready left; when another process changed it since,
/// it is left as it is and reported.
pub fn undo(sysfs: &Path, s: &Setting) -> Restored {
    let (device, attr) = (s.device.clone(), s.attr.clone());
    let now = match read(sysfs, &s.device, &s.attr) {
        Ok(v) => v,
        Err(e) => {
            return Restored::Failed {
                device,
                attr,
                original: s.original.clone(),
                error: e.to_string(),
            }
        }
    };
    let failed = |error: String| Restored::Failed {
        device: s.device.clone(),
        attr: s.attr.clone(),
        original: s.original.clone(),
        error,
    };
    if now == s.original {
        return match put_also(sysfs, s) {
            Ok(also) => Restored::AlreadyOriginal {
                device,
                attr,
                value: now,
                also,
            },
            Err(e) => failed(e),
        };
    }
    if now != s.ours {
        return Restored::ChangedByOther {
            device,
            attr,
            now,
            ours: s.ours.clone(),
            original: s.original.clone(),
        };
    }
    if let Err(e) = write(sysfs, &s.device, &s.attr, &s.original) {
        return failed(e.to_string());
    }
    match put_also(sysfs, s) {
        Ok(also) => Restored::PutBack {
            device,
            attr,
            value: s.original.clone(),
            also,
        },
        Err(e) => failed(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_that_could_reach_another_file_are_not_plain() {
        for bad in ["", ".", "..", "../vda", "loop0/..", "a b", "x\n"] {
            assert!(!plain_name(bad), "{bad:?}");
        }
        for ok in ["loop0", "nvme0n1", "dm-0", "md127", "sda"] {
            assert!(plain_name(ok), "{ok}");
        }
        for bad in ["", "none\nbfq", "1 2", "../x", &"9".repeat(65)] {
            assert!(!plain_value(bad), "{bad:?}");
        }
        for ok in ["none", "mq-deadline", "-1", "128", "kyber"] {
            assert!(plain_value(ok), "{ok}");
        }
    }
}
