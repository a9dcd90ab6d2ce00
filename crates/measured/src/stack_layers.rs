//! The stack itself, as the probe reads it: its layers from the target
//! down to the physical devices, what the kernel says of each, and every
//! device's own counters ([`MemberCounters`]).

use serde::{Deserialize, Serialize};

/// The stack under a target (`targets[].stack` in study.json).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    /// The whole disk the target's I/O reaches first (`md0`, `dm-2`).
    pub target: String,
    /// Every device in the stack, each once, the target first, then each
    /// layer's devices under it, breadth first.
    pub layers: Vec<StackLayer>,
    /// The physical devices at the bottom (no device under them).
    pub physical: Vec<String>,
    /// What is stacked on the target (its `holders/`), which a study of the
    /// target does not go through.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub above: Vec<String>,
    /// What could not be read, each with where and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Each device's counters from the stack's reading at detection to the
    /// study's end: everything the study did to it — its runs, and what it
    /// read outside them (the safety checks' look for data before writing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub over_study: Vec<MemberCounters>,
    /// Each device's counters as read at detection (absolute, not kept in
    /// study.json): where [`Stack::over_study`] starts.
    #[serde(skip)]
    pub at_detection: Vec<MemberCounters>,
}

/// One device of the stack.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackLayer {
    /// The kernel's name (`md0`, `dm-1`, `nullb0`, `sda1`).
    pub disk: String,
    /// `MAJ:MIN`.
    pub device: String,
    /// How many layers above it, the target's 0.
    pub depth: u32,
    pub kind: LayerKind,
    /// The devices directly under it, by name.
    #[serde(default)]
    pub under: Vec<String>,
    /// Where it was read (`/sys/block/md0`).
    pub source: String,
    /// Its size in bytes (`size` × 512), where read: a member read alone
    /// is read within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    /// `queue/nr_requests`: the requests its queue admits at once, where
    /// it has a request queue (a whole disk driven through blk-mq).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nr_requests: Option<u32>,
}

/// What a device of the stack is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LayerKind {
    /// An md array (`/sys/block/mdN/md`).
    Md {
        /// `raid0`, `raid1`, `raid5`, `raid10`, `linear`…
        level: Option<String>,
        /// `md/chunk_size`, bytes (0 on levels without chunks).
        chunk_bytes: Option<u64>,
        raid_disks: Option<u32>,
        /// `md/degraded`: how many of its disks are missing (RAID 1/4/5/6/10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        degraded: Option<u32>,
        members: Vec<MdMember>,
    },
    /// A device-mapper device (`/sys/block/dm-N/dm`).
    Dm {
        /// `dm/name`: its name under /dev/mapper.
        name: Option<String>,
        /// Its table, one line per target.
        targets: Vec<DmTarget>,
        /// How the table was read: `DM_TABLE_STATUS ioctl`, `dmsetup
        /// table`, or why it was not.
        table_source: String,
        /// A crypt target's cipher (`aes-xts-plain64`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cipher: Option<String>,
    },
    /// A loop device and its backing file.
    Loop { backing_file: Option<String> },
    /// A partition of a whole disk.
    Partition {
        of: String,
        start_sector: Option<u64>,
    },
    /// A device with nothing under it: `nvme`, `virtio`, `scsi`, `sata`,
    /// `null_blk`, `brd`, …
    Physical { transport: String },
}

impl Default for LayerKind {
    fn default() -> Self {
        LayerKind::Physical {
            transport: "unknown".into(),
        }
    }
}

/// One member of an md array, as `md/dev-X/` shows it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MdMember {
    pub disk: String,
    /// `md/dev-X/state` (`in_sync`, `faulty`, `spare`, `write_mostly`…).
    pub state: Option<String>,
    /// `md/dev-X/slot` (`none` for a spare: then absent).
    pub slot: Option<u32>,
}

/// One line of a device-mapper table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DmTarget {
    pub start_sector: u64,
    pub sectors: u64,
    /// `linear`, `striped`, `crypt`, `delay`, `raid`, `thin`…
    pub target_type: String,
    /// Its parameters as the kernel prints them, a crypt target's key
    /// replaced by `-`.
    pub params: String,
}

impl DmTarget {
    /// A table line `START LEN TYPE PARAMS` (as `dmsetup table` prints it).
    pub fn parse(line: &str) -> Option<DmTarget> {
        let mut f = line.trim().splitn(4, ' ');
        let start_sector = f.next()?.parse().ok()?;
        let sectors = f.next()?.parse().ok()?;
        let target_type = f.next()?.to_string();
        let params = f.next().unwrap_or("").trim().to_string();
        Some(DmTarget::new(start_sector, sectors, target_type, &params))
    }

    /// A target, its key withheld when it is a crypt target.
    pub fn new(start_sector: u64, sectors: u64, target_type: String, params: &str) -> DmTarget {
        let params = if target_type == "crypt" {
            redact_crypt_key(params)
        } else {
            params.to_string()
        };
        DmTarget {
            start_sector,
            sectors,
            target_type,
            params,
        }
    }

    /// A crypt target's cipher: the first parameter.
    pub fn cipher(&self) -> Option<String> {
        (self.target_type == "crypt")
            .then(|| self.params.split_whitespace().next().map(str::to_string))
            .flatten()
    }
}

/// A crypt table's parameters (`cipher key iv_offset device offset …`)
/// with the key replaced by `-`: a study is shared, a key never is.
pub fn redact_crypt_key(params: &str) -> String {
    let mut f: Vec<&str> = params.split_whitespace().collect();
    if f.len() > 1 {
        f[1] = "-";
    }
    f.join(" ")
}

impl Stack {
    /// The layer named `disk`.
    pub fn layer(&self, disk: &str) -> Option<&StackLayer> {
        self.layers.iter().find(|l| l.disk == disk)
    }

    /// The first layer from the top that spreads I/O over several devices
    /// (an md array, a striped or multi-target dm table): its members are
    /// the peers the judging compares.
    pub fn spreading_layer(&self) -> Option<&StackLayer> {
        self.layers.iter().find(|l| l.under.len() >= 2)
    }

    /// The stack with only the physical devices in service: those under
    /// an md member marked `faulty` (and under nothing else) left out, as
    /// the array no longer reads them.
    pub fn serving(&self) -> Stack {
        let mut out = self.clone();
        let faulty: Vec<&str> = self
            .layers
            .iter()
            .filter_map(|l| match &l.kind {
                LayerKind::Md { members, .. } => Some(members),
                _ => None,
            })
            .flatten()
            .filter(|m| m.state.as_deref().is_some_and(|s| s.contains("faulty")))
            .map(|m| m.disk.as_str())
            .collect();
        if faulty.is_empty() {
            return out;
        }
        // What is under a serving layer serves: walk down from the target,
        // never through a faulty member.
        let mut serving = vec![self.target.clone()];
        let mut i = 0;
        while i < serving.len() && i < 4096 {
            if let Some(l) = self.layer(&serving[i]) {
                for u in &l.under {
                    if !faulty.contains(&u.as_str()) && !serving.contains(u) {
                        serving.push(u.clone());
                    }
                }
            }
            i += 1;
        }
        out.physical.retain(|p| serving.contains(p));
        out
    }

    /// The physical devices under `disk`, walking down its layers.
    fn physical_under<'a>(&'a self, disk: &'a str) -> Vec<&'a str> {
        let mut seen: Vec<&str> = vec![disk];
        let mut i = 0;
        while i < seen.len() && i < 4096 {
            if let Some(l) = self.layer(seen[i]) {
                for u in &l.under {
                    if !seen.contains(&u.as_str()) {
                        seen.push(u);
                    }
                }
            }
            i += 1;
        }
        seen.into_iter()
            .filter(|d| self.physical.iter().any(|p| p == d))
            .collect()
    }

    /// The backing file of a loop device that lies on the physical device
    /// `disk` alone: what that loop device reads, so what reading `disk`
    /// "alone" means for it. Reading the whole disk would measure a
    /// different thing (and, where it holds the root file system, is often
    /// refused).
    pub fn loop_file_on(&self, disk: &str) -> Option<&str> {
        self.layers.iter().find_map(|l| match &l.kind {
            LayerKind::Loop {
                backing_file: Some(f),
            } if self.physical_under(&l.disk) == [disk] => Some(f.as_str()),
            _ => None,
        })
    }

    /// The path that reads physical member `disk` alone: a loop device's
    /// backing file where `disk` is under one ([`Stack::loop_file_on`]),
    /// else its node (`cciss!c0d0` → `/dev/cciss/c0d0`).
    pub fn read_alone(&self, disk: &str) -> String {
        match self.loop_file_on(disk) {
            Some(f) => f.to_string(),
            None => format!("/dev/{}", disk.replace('!', "/")),
        }
    }

    /// Whether there is anything stacked: more than one device.
    pub fn is_stacked(&self) -> bool {
        self.layers.len() > 1
    }

    /// Each layer in one line, indented by depth, for the terminal.
    pub fn lines(&self) -> Vec<String> {
        self.layers
            .iter()
            .map(|l| {
                format!(
                    "{}{} ({}): {}",
                    "  ".repeat(l.depth as usize),
                    l.disk,
                    l.device,
                    l.kind.describe()
                )
            })
            .collect()
    }
}

impl LayerKind {
    /// In words.
    pub fn describe(&self) -> String {
        match self {
            LayerKind::Md {
                level,
                chunk_bytes,
                raid_disks,
                degraded,
                members,
            } => {
                let mut s = format!("md {}", level.as_deref().unwrap_or("(level unread)"));
                if let Some(c) = chunk_bytes.filter(|c| *c > 0) {
                    s.push_str(&format!(", chunk {}", crate::summary::fmt_bs(c)));
                }
                if let Some(n) = raid_disks {
                    s.push_str(&format!(", {n} disks"));
                }
                if let Some(n) = degraded.filter(|n| *n > 0) {
                    s.push_str(&format!(", DEGRADED: {n} missing"));
                }
                let m: Vec<String> = members
                    .iter()
                    .map(|m| format!("{} {}", m.disk, m.state.as_deref().unwrap_or("?")))
                    .collect();
                if !m.is_empty() {
                    s.push_str(&format!(" [{}]", m.join(", ")));
                }
                s
            }
            LayerKind::Dm {
                name,
                targets,
                table_source,
                cipher,
            } => {
                let types: Vec<&str> = targets.iter().map(|t| t.target_type.as_str()).collect();
                let mut s = format!(
                    "device-mapper {} ({}; table from {table_source})",
                    name.as_deref().unwrap_or("(unnamed)"),
                    if types.is_empty() {
                        "table unread".to_string()
                    } else {
                        types.join(", ")
                    }
                );
                if let Some(c) = cipher {
                    s.push_str(&format!(", cipher {c}"));
                }
                s
            }
            LayerKind::Loop { backing_file } => format!(
                "loop over {}",
                backing_file.as_deref().unwrap_or("(no backing file)")
            ),
            LayerKind::Partition { of, start_sector } => match start_sector {
                Some(s) => format!("partition of {of} from sector {s}"),
                None => format!("partition of {of}"),
            },
            LayerKind::Physical { transport } => format!("physical ({transport})"),
        }
    }
}

/// One device's counters over one run: the difference of its
/// `/sys/block/X/stat` after the run and before, as the kernel keeps them
/// (Documentation/block/stat.rst): no scaling.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberCounters {
    pub disk: String,
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    /// Milliseconds between the two readings.
    pub window_ms: u64,
}

impl MemberCounters {
    pub fn ios(&self) -> u64 {
        self.read_ios + self.write_ios
    }
    pub fn bytes(&self) -> u64 {
        (self.read_sectors + self.write_sectors) * 512
    }
    pub fn ticks_ms(&self) -> u64 {
        self.read_ticks_ms + self.write_ticks_ms
    }

    /// These counters less an earlier reading of the same device, over
    /// `window_ms`.
    pub fn since(&self, before: &MemberCounters, window_ms: u64) -> MemberCounters {
        let z = |a: u64, b: u64| a.saturating_sub(b);
        MemberCounters {
            disk: self.disk.clone(),
            read_ios: z(self.read_ios, before.read_ios),
            read_merges: z(self.read_merges, before.read_merges),
            read_sectors: z(self.read_sectors, before.read_sectors),
            read_ticks_ms: z(self.read_ticks_ms, before.read_ticks_ms),
            write_ios: z(self.write_ios, before.write_ios),
            write_merges: z(self.write_merges, before.write_merges),
            write_sectors: z(self.write_sectors, before.write_sectors),
            write_ticks_ms: z(self.write_ticks_ms, before.write_ticks_ms),
            io_ticks_ms: z(self.io_ticks_ms, before.io_ticks_ms),
            time_in_queue_ms: z(self.time_in_queue_ms, before.time_in_queue_ms),
            window_ms,
        }
    }
}

impl Stack {
    /// Every device's counters now (`now`, absolute) less those read at
    /// detection, into [`Stack::over_study`].
    pub fn close(&mut self, now: &[MemberCounters], window_ms: u64) {
        self.over_study = now
            .iter()
            .filter_map(|n| {
                let b = self.at_detection.iter().find(|b| b.disk == n.disk)?;
                Some(n.since(b, window_ms))
            })
            .collect();
    }

    /// Every device's name.
    pub fn disks(&self) -> Vec<String> {
        self.layers.iter().map(|l| l.disk.clone()).collect()
    }
}

/// A layer's kind, short: `md raid5`, `device-mapper NAME (delay)`.
pub fn short_kind(l: &StackLayer) -> String {
    match &l.kind {
        LayerKind::Md { level, .. } => format!("md {}", level.as_deref().unwrap_or("array")),
        LayerKind::Dm { name, targets, .. } => {
            let t: Vec<&str> = targets.iter().map(|t| t.target_type.as_str()).collect();
            format!(
                "device-mapper {} ({})",
                name.as_deref().unwrap_or(&l.disk),
                t.join(", ")
            )
        }
        LayerKind::Loop { .. } => "loop device".into(),
        LayerKind::Partition { of, .. } => format!("partition of {of}"),
        LayerKind::Physical { transport } => transport.clone(),
    }
}
