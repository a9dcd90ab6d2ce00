//! What the machine's configuration says can cap the study's I/O, as the
//! diagnosis weighs it: the cgroup I/O throttles on the devices the I/O
//! reaches, the CPU quota, the CPUs the study may use, the device's
//! request queue and the largest request it builds, and what this host
//! cannot see below a virtual disk.
//! Each comes with the setting that holds it (its name, value and file),
//! so that advice can name what to change. Made from the inventory of
//! limits ([`ssdready_measured::limits::Inventory`]); a test can write one by hand.

use serde::{Deserialize, Serialize};
use ssdready_measured::limits::{CgroupVersion, DeviceRole, Inventory, IoLimitKind};

/// A setting on the machine: what it is, its value, and where it is read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    /// Its name (`blkio.throttle.read_iops_device`, `cpu.max`,
    /// `queue/nr_requests`).
    pub name: String,
    /// Its value as written there (`7:0 5000`).
    pub value: String,
    /// The file it is read from.
    pub path: String,
}

impl Setting {
    /// `blkio.throttle.read_iops_device = 7:0 5000 (/sys/fs/…)`.
    pub fn show(&self) -> String {
        format!("{} = {} ({})", self.name, self.value, self.path)
    }
}

/// Which I/O a throttle counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IoKind {
    ReadIops,
    WriteIops,
    ReadBps,
    WriteBps,
}

impl IoKind {
    /// Whether it counts I/Os (else bytes).
    pub fn iops(self) -> bool {
        matches!(self, IoKind::ReadIops | IoKind::WriteIops)
    }
    /// Whether it counts reads.
    pub fn reads(self) -> bool {
        matches!(self, IoKind::ReadIops | IoKind::ReadBps)
    }
}

/// An I/O throttle on a device the study's I/O reaches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoCap {
    pub kind: IoKind,
    /// I/Os or bytes per second.
    pub value: f64,
    /// The device it is set on (`loop0`).
    pub device: String,
    pub setting: Setting,
}

/// The CPU quota of the study's group (the smallest on its path).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpuQuota {
    /// CPUs' worth of time per period (quota / period).
    pub cpus: f64,
    pub setting: Setting,
}

/// The CPUs the study may use, when fewer than are online.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpusAllowed {
    pub cpus: Vec<u32>,
    pub online: u32,
    /// The cpuset, or the affinity mask, that restricts them.
    pub setting: Setting,
}

/// The device's request queue: how many requests it admits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueueCap {
    pub requests: u32,
    pub setting: Setting,
}

/// The largest request the block layer builds on the target's device,
/// where the device takes larger: a setting, below which larger I/O is
/// split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RequestCap {
    /// `max_sectors_kb`, KiB.
    pub kib: u64,
    /// `max_hw_sectors_kb`: the most it may be raised to, KiB.
    pub hw_kib: u64,
    pub setting: Setting,
}

/// Everything that can cap the study's I/O.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Caps {
    pub io: Vec<IoCap>,
    pub cpu_quota: Option<CpuQuota>,
    pub cpus: Option<CpusAllowed>,
    pub queue: Option<QueueCap>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<RequestCap>,
    /// A virtual disk: what this host cannot see below it, in words.
    pub unseen: Option<String>,
}

impl Caps {
    /// The tightest throttle of `reads` that counts what a workload of
    /// `bs`-byte I/Os moves, in I/Os per second, with the throttle.
    pub fn io_limit(&self, reads: bool, bs: u64) -> Option<(f64, &IoCap)> {
        self.io
            .iter()
            .filter(|c| c.kind.reads() == reads)
            .map(|c| {
                let iops = if c.kind.iops() {
                    c.value
                } else {
                    c.value / bs.max(1) as f64
                };
                (iops, c)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }
}

impl Caps {
    /// The caps from the inventory of a study's limits: the throttles that
    /// apply on the devices its I/O reaches, the smallest CPU quota on its
    /// groups' path, the CPUs it may run on when fewer than are online, the
    /// target's device queue (`nr_requests`, or a SCSI `queue_depth` when
    /// smaller), and what a virtual disk hides below this host.
    pub fn of(inv: &Inventory) -> Caps {
        let io = inv
            .effective_io_throttles()
            .into_iter()
            .map(|t| IoCap {
                kind: match t.kind {
                    IoLimitKind::ReadIops => IoKind::ReadIops,
                    IoLimitKind::WriteIops => IoKind::WriteIops,
                    IoLimitKind::ReadBps => IoKind::ReadBps,
                    IoLimitKind::WriteBps => IoKind::WriteBps,
                },
                value: t.value as f64,
                device: t.disk.clone().unwrap_or_else(|| t.device.clone()),
                setting: match t.version {
                    CgroupVersion::V1 => Setting {
                        name: t.kind.v1_file().into(),
                        value: format!("{} {}", t.device, t.value),
                        path: t.source.clone(),
                    },
                    CgroupVersion::V2 => Setting {
                        name: "io.max".into(),
                        value: format!("{} {}={}", t.device, t.kind.v2_key(), t.value),
                        path: t.source.clone(),
                    },
                },
            })
            .collect();
        let cpu_quota = inv.cpu_quota().map(|q| CpuQuota {
            cpus: q.cpus,
            setting: match q.version {
                CgroupVersion::V1 => Setting {
                    name: "cpu.cfs_quota_us".into(),
                    value: format!("{} (period {} µs)", q.quota_us, q.period_us),
                    path: q.source.clone(),
                },
                CgroupVersion::V2 => Setting {
                    name: "cpu.max".into(),
                    value: format!("{} {}", q.quota_us, q.period_us),
                    path: q.source.clone(),
                },
            },
        });
        Caps {
            io,
            cpu_quota,
            cpus: cpus_allowed(inv),
            queue: queue(inv),
            request: request(inv),
            unseen: inv.devices.iter().find_map(|d| d.unseen.clone()),
        }
    }
}

impl Caps {
    /// One line for each cap, with the setting that holds it.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .io
            .iter()
            .map(|c| format!("{} on {}", c.setting.show(), c.device))
            .collect();
        if let Some(q) = &self.cpu_quota {
            out.push(format!(
                "a CPU quota of {:.2} CPUs: {}",
                q.cpus,
                q.setting.show()
            ));
        }
        if let Some(c) = &self.cpus {
            out.push(format!(
                "{} of the {} CPUs online: {}",
                c.cpus.len(),
                c.online,
                c.setting.show()
            ));
        }
        out
    }
}

/// The CPUs the process may run on, when fewer than are online, with the
/// setting that restricts them (the cpuset, else the affinity mask).
fn cpus_allowed(inv: &Inventory) -> Option<CpusAllowed> {
    let c = &inv.cpus;
    if c.set.is_empty() || c.set.len() >= c.online.len() {
        return None;
    }
    let list = |v: &[u32]| {
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let setting = match (&inv.cpuset, &inv.affinity) {
        (Some(s), _) if s.cpus.len() < c.online.len() => Setting {
            name: std::path::Path::new(&s.source)
                .file_name()
                .map_or("cpuset.cpus".into(), |n| n.to_string_lossy().into_owned()),
            value: list(&s.cpus),
            path: s.source.clone(),
        },
        (_, Some(a)) => Setting {
            name: "the affinity mask".into(),
            value: list(&a.cpus),
            path: a.source.clone(),
        },
        _ => Setting {
            name: "the CPUs allowed".into(),
            value: list(&c.set),
            path: String::new(),
        },
    };
    Some(CpusAllowed {
        cpus: c.set.clone(),
        online: c.online.len() as u32,
        setting,
    })
}

/// The target's device's largest request, where a setting holds it below
/// what the device takes.
fn request(inv: &Inventory) -> Option<RequestCap> {
    let d = inv.devices.iter().find(|d| d.role == DeviceRole::Target)?;
    let (kib, hw_kib) = (d.queue.max_sectors_kb?, d.queue.max_hw_sectors_kb?);
    (kib < hw_kib).then(|| RequestCap {
        kib,
        hw_kib,
        setting: Setting {
            name: "queue/max_sectors_kb".into(),
            value: kib.to_string(),
            path: format!("/sys/block/{}/queue/max_sectors_kb", d.disk),
        },
    })
}

/// The target's device queue: the requests it admits.
fn queue(inv: &Inventory) -> Option<QueueCap> {
    let d = inv.devices.iter().find(|d| d.role == DeviceRole::Target)?;
    let q = &d.queue;
    let nr = q.nr_requests.map(|n| (n, "queue/nr_requests"));
    let depth = q.queue_depth.map(|n| (n, "device/queue_depth"));
    let (n, file) = [nr, depth].into_iter().flatten().min_by_key(|x| x.0)?;
    Some(QueueCap {
        requests: n.min(u32::MAX as u64) as u32,
        setting: Setting {
            name: file.into(),
            value: n.to_string(),
            path: format!("/sys/block/{}/{file}", d.disk),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(kind: IoKind, value: f64) -> IoCap {
        IoCap {
            kind,
            value,
            device: "loop0".into(),
            setting: Setting::default(),
        }
    }

    #[test]
    fn a_request_size_is_a_cap_only_below_what_the_device_takes() {
        use ssdready_measured::limits::{Device, QueueSettings};
        let with = |kib: u64, hw_kib: u64| {
            let mut inv = ssdready_measured::group_limits::fixtures::v1_plant();
            inv.devices = vec![Device {
                device: "7:3".into(),
                disk: "loop3".into(),
                role: DeviceRole::Target,
                transport: "loop".into(),
                model: None,
                virtual_disk: false,
                unseen: None,
                queue: QueueSettings {
                    max_sectors_kb: Some(kib),
                    max_hw_sectors_kb: Some(hw_kib),
                    ..Default::default()
                },
                source: "/sys/block/loop3".into(),
            }];
            Caps::of(&inv).request
        };
        let r = with(4, 1280).expect("4 KiB of 1280 is a setting below the device");
        assert_eq!((r.kib, r.hw_kib), (4, 1280));
        assert_eq!(r.setting.path, "/sys/block/loop3/queue/max_sectors_kb");
        // As large as the device takes: nothing of this host to raise.
        assert!(with(128, 128).is_none());
    }

    #[test]
    fn the_tightest_throttle_is_taken_in_ios_per_second() {
        let c = Caps {
            io: vec![
                cap(IoKind::ReadIops, 5_000.0),
                cap(IoKind::ReadBps, 50.0 * 1048576.0),
                cap(IoKind::WriteIops, 10.0),
            ],
            ..Default::default()
        };
        // 4 KiB: 50 MiB/s is 12,800 I/Os a second; the iops throttle is
        // tighter. 1 MiB: the bandwidth throttle is (50 a second).
        assert_eq!(c.io_limit(true, 4096).unwrap().0, 5_000.0);
        let (iops, which) = c.io_limit(true, 1 << 20).unwrap();
        assert_eq!((iops, which.kind), (50.0, IoKind::ReadBps));
        assert_eq!(c.io_limit(false, 4096).unwrap().0, 10.0);
        assert!(Caps::default().io_limit(true, 4096).is_none());
    }
}
