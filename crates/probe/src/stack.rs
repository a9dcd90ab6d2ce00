//! The block-device stack under a device, read from sysfs: from the
//! target's whole disk (or partition) down each device's `slaves/` (md
//! and device-mapper members), a partition's disk and a loop device's
//! backing file to the physical devices, each layer named — an md array's
//! level, chunk, disks and each member's state (`md/`), a device-mapper
//! device's name (`dm/name`) and table (the `DM_TABLE_STATUS` ioctl, or
//! `dmsetup table` where the ioctl cannot be made, saying which) with a
//! crypt target's cipher, a loop device's backing file — and what is
//! stacked above it (`holders/`). Every device's counters
//! (`/sys/class/block/X/stat`) are read around a run for
//! [`MemberCounters`]. Read through [`Sys`], so tests use a fake tree.

use crate::disk::{parse_stat, DiskStat};
use crate::sys::Sys;
use ssdready_io::target::sysfs::major_minor;
use ssdready_measured::stack_layers::{
    DmTarget, LayerKind, MdMember, MemberCounters, Stack, StackLayer,
};
use std::os::unix::fs::MetadataExt;

/// A device-mapper table and how it was read (or why not).
pub type TableRead = (Vec<DmTarget>, String);

/// Reads device-mapper device `name`'s table: the live one is
/// [`dm_table`]; tests give their own.
pub type TableReader<'a> = &'a dyn Fn(&str) -> TableRead;

/// The table of device-mapper device `name`: the `DM_TABLE_STATUS`
/// ioctl, else `dmsetup table NAME`, else empty with both reasons.
pub fn dm_table(name: &str) -> TableRead {
    let ioctl = match ssdready_io::dm::table(name) {
        Ok(t) => {
            let lines = t
                .into_iter()
                .map(|l| DmTarget::new(l.start, l.length, l.target_type, &l.params))
                .collect();
            return (lines, "DM_TABLE_STATUS ioctl".into());
        }
        Err(e) => e,
    };
    let dmsetup = std::process::Command::new("dmsetup")
        .args(["table", name])
        .stdin(std::process::Stdio::null())
        .output();
    match dmsetup {
        Ok(o) if o.status.success() => {
            let text = String::from_utf8_lossy(&o.stdout);
            (
                text.lines().filter_map(DmTarget::parse).collect(),
                format!("dmsetup table (the DM_TABLE_STATUS ioctl failed: {ioctl})"),
            )
        }
        Ok(o) => (
            Vec::new(),
            format!(
                "unread: the DM_TABLE_STATUS ioctl failed ({ioctl}); dmsetup table: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
        ),
        Err(e) => (
            Vec::new(),
            format!("unread: the DM_TABLE_STATUS ioctl failed ({ioctl}); dmsetup: {e}"),
        ),
    }
}

/// The name of device number `maj:min` (a whole disk or a partition).
fn name_of(s: Sys, maj: u32, min: u32) -> Option<String> {
    let dir = std::fs::canonicalize(s.path(&format!("/sys/dev/block/{maj}:{min}"))).ok()?;
    Some(dir.file_name()?.to_string_lossy().into_owned())
}

/// The device named `name` as one layer (without its depth).
fn layer(s: Sys, name: &str, tables: TableReader) -> StackLayer {
    let class = format!("/sys/class/block/{name}");
    let device = s.read(&format!("{class}/dev")).unwrap_or_default();
    let slaves = s.list(&format!("{class}/slaves"));
    let (kind, under) = if s.exists(&format!("{class}/partition")) {
        let of = std::fs::canonicalize(s.path(&class))
            .ok()
            .and_then(|p| Some(p.parent()?.file_name()?.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let start_sector = s
            .read(&format!("{class}/start"))
            .and_then(|v| v.parse().ok());
        (
            LayerKind::Partition {
                of: of.clone(),
                start_sector,
            },
            vec![of],
        )
    } else if s.exists(&format!("{class}/md")) {
        (md(s, name), slaves)
    } else if s.exists(&format!("{class}/dm/name")) {
        let dm_name = s.read(&format!("{class}/dm/name"));
        let (targets, table_source) = match &dm_name {
            Some(n) => tables(n),
            None => (Vec::new(), "unread: no dm/name".into()),
        };
        let cipher = targets.iter().find_map(DmTarget::cipher);
        (
            LayerKind::Dm {
                name: dm_name,
                targets,
                table_source,
                cipher,
            },
            slaves,
        )
    } else if let Some(file) = s.read(&format!("{class}/loop/backing_file")) {
        let under = std::fs::metadata(s.path(&file))
            .ok()
            .map(|m| major_minor(m.dev()))
            .filter(|(a, _)| *a != 0)
            .and_then(|(a, b)| name_of(s, a, b));
        (
            LayerKind::Loop {
                backing_file: Some(file),
            },
            under.into_iter().collect(),
        )
    } else {
        let model = s.read(&format!("{class}/device/model")).unwrap_or_default();
        let transport = crate::limits_dev::kind(s, name, &model).0;
        (LayerKind::Physical { transport }, slaves)
    };
    let kind_is_leaf = matches!(kind, LayerKind::Physical { .. });
    StackLayer {
        disk: name.to_string(),
        device,
        depth: 0,
        kind,
        under,
        source: format!("/sys/block/{name}"),
        size_bytes: s
            .read(&format!("{class}/size"))
            .and_then(|v| v.parse::<u64>().ok())
            .map(|n| n * 512),
        // md and device-mapper pass bios on: their nr_requests admits
        // nothing; only a device below with its own queue has one.
        nr_requests: kind_is_leaf
            .then(|| crate::queue_dir::read(s, name).settings.nr_requests)
            .flatten()
            .and_then(|v| u32::try_from(v).ok()),
    }
}

/// An md array's level, chunk, disks and members.
fn md(s: Sys, name: &str) -> LayerKind {
    let m = |f: &str| s.read(&format!("/sys/block/{name}/md/{f}"));
    let members = s
        .list(&format!("/sys/block/{name}/md"))
        .into_iter()
        .filter_map(|e| e.strip_prefix("dev-").map(str::to_string))
        .map(|disk| MdMember {
            state: m(&format!("dev-{disk}/state")),
            slot: m(&format!("dev-{disk}/slot")).and_then(|v| v.parse().ok()),
            disk,
        })
        .collect();
    LayerKind::Md {
        level: m("level"),
        chunk_bytes: m("chunk_size").and_then(|v| v.parse().ok()),
        raid_disks: m("raid_disks").and_then(|v| v.parse().ok()),
        degraded: m("degraded").and_then(|v| v.parse().ok()),
        members,
    }
}

/// The stack under device `maj:min`, read under `s` (None when it is not
/// in `/sys/dev/block`).
pub fn stack_at(s: Sys, maj: u32, min: u32, tables: TableReader) -> Option<Stack> {
    let top = name_of(s, maj, min)?;
    let mut out = Stack {
        target: top.clone(),
        above: s.list(&format!("/sys/class/block/{top}/holders")),
        ..Default::default()
    };
    let mut todo = std::collections::VecDeque::from([(top, 0u32)]);
    // A stack is a few levels deep; the bound stops a loop of links.
    while let Some((name, depth)) = todo.pop_front() {
        if out.layers.len() >= 64 {
            out.notes
                .push("more than 64 devices: the stack is cut there".into());
            break;
        }
        if out.layers.iter().any(|l| l.disk == name) {
            continue;
        }
        if !s.exists(&format!("/sys/class/block/{name}")) {
            out.notes.push(format!(
                "{name}: not in /sys/class/block (gone while read?)"
            ));
            continue;
        }
        let mut l = layer(s, &name, tables);
        l.depth = depth;
        if let LayerKind::Dm { table_source, .. } = &l.kind {
            if table_source.starts_with("unread") {
                out.notes.push(format!("{name}'s table: {table_source}"));
            }
        }
        todo.extend(l.under.iter().map(|u| (u.clone(), depth + 1)));
        out.layers.push(l);
    }
    out.physical = out
        .layers
        .iter()
        .filter(|l| l.under.is_empty())
        .map(|l| l.disk.clone())
        .collect();
    Some(out)
}

/// The stack under device `maj:min` on this machine.
pub fn stack_of(maj: u32, min: u32) -> Option<Stack> {
    stack_at(Sys::new(std::path::Path::new("/")), maj, min, &dm_table)
}

/// Every device's counters now: (name, its stat) for those readable.
pub fn counters_at(s: Sys, disks: &[String]) -> Vec<(String, DiskStat)> {
    disks
        .iter()
        .filter_map(|d| {
            let text = s.read(&format!("/sys/class/block/{d}/stat"))?;
            Some((d.clone(), parse_stat(&text)?))
        })
        .collect()
}

/// The counters of every stack device `disks` now, on this machine.
pub fn counters_now(disks: &[String]) -> Vec<(String, DiskStat)> {
    counters_at(Sys::new(std::path::Path::new("/")), disks)
}

/// Every device's counters now, absolute (a window of 0), for
/// [`Stack::close`].
pub fn snapshot(disks: &[String]) -> Vec<MemberCounters> {
    let now = counters_now(disks);
    let zero: Vec<(String, DiskStat)> = now
        .iter()
        .map(|(d, _)| (d.clone(), DiskStat::default()))
        .collect();
    deltas(&zero, &now, 0)
}

/// Each device's counters after less before, as the kernel counts them;
/// a device read only once is left out.
pub fn deltas(
    before: &[(String, DiskStat)],
    after: &[(String, DiskStat)],
    window_ms: u64,
) -> Vec<MemberCounters> {
    before
        .iter()
        .filter_map(|(d, a)| {
            let b = &after.iter().find(|x| &x.0 == d)?.1;
            let z = |x: u64, y: u64| y.saturating_sub(x);
            Some(MemberCounters {
                disk: d.clone(),
                read_ios: z(a.read_ios, b.read_ios),
                read_merges: z(a.read_merges, b.read_merges),
                read_sectors: z(a.read_sectors, b.read_sectors),
                read_ticks_ms: z(a.read_ticks, b.read_ticks),
                write_ios: z(a.write_ios, b.write_ios),
                write_merges: z(a.write_merges, b.write_merges),
                write_sectors: z(a.write_sectors, b.write_sectors),
                write_ticks_ms: z(a.write_ticks, b.write_ticks),
                io_ticks_ms: z(a.io_ticks, b.io_ticks),
                time_in_queue_ms: z(a.time_in_queue, b.time_in_queue),
                window_ms,
            })
        })
        .collect()
}

#[cfg(test)]
#[path = "stack_tests.rs"]
mod tests;
