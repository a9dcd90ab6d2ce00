//! The causes a study can name for what holds the I/O back, and the layer
//! each belongs to. A cause is a value, not a word: the rules test it by
//! its name ([`Cause::name`]), which the rules' parser checks against
//! [`Cause::ALL`], and study.json keeps it as a snake_case identifier
//! (a study written before, with the words of the classification it had
//! then, reads back through aliases).

use serde::{Deserialize, Serialize};
use ssdready_measured::group_limits::GroupLimit;

/// What holds the I/O back at the peak.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// The device, against its basis (its model, or the raw device read
    /// alone on this machine).
    #[serde(alias = "device")]
    Device,
    /// A rate limit below this host, with nothing on the host busy and the
    /// I/Os waiting at the device: the device, or something between it and
    /// the host (a hypervisor's limit, a volume's provisioned rate).
    BelowHost,
    /// A cgroup I/O limit on the study's group (iops or bytes per second).
    IoThrottle,
    /// The cgroup's CPU quota.
    CpuQuota,
    /// The CPUs the study may use (cpuset, affinity), all busy with its own
    /// work.
    CpusAllowed,
    /// Other processes' work on the CPUs the study may use.
    #[serde(alias = "the CPUs")]
    OtherWork,
    /// The submitting thread, CPU-bound on its own work.
    #[serde(alias = "one core")]
    OneCore,
    /// Every CPU the study may use busy with the I/O's own work: its
    /// threads, the kernel's (the loop device's worker, softirqs) and the
    /// drive's daemon: the CPU each I/O costs on this path sets the rate.
    IoPathCpu,
    /// The I/O scheduler.
    #[serde(alias = "the scheduler")]
    Scheduler,
    /// The device's request queue: fewer requests admitted than the study
    /// keeps in flight (`nr_requests`, a SCSI `queue_depth`).
    DeviceQueue,
    /// The largest request the block layer builds (`max_sectors_kb`),
    /// below the job's I/O: each I/O split into requests the device
    /// completes one by one.
    RequestSize,
    /// The file system: its cost against the raw device, or the device
    /// I/O it makes per file I/O.
    FileSystem,
    /// A kernel lock the submitting threads contend on.
    #[serde(alias = "a lock")]
    Lock,
    /// The submission path (system call, block layer) by its share of the
    /// latency.
    #[serde(alias = "submission path")]
    SubmissionPath,
    /// Completions waiting for the submitting thread to reap them.
    #[serde(alias = "completions")]
    Completions,
    /// ssdready's own apparatus: the emulated drive's daemon behind the
    /// kernel, busy all the time.
    #[serde(alias = "the drive's daemon")]
    Apparatus,
    /// The page cache: buffered writes the device did not take within the
    /// run, written back after it; the rate is the cache's.
    PageCache,
    /// No candidate had positive evidence.
    #[default]
    #[serde(alias = "unknown", alias = "")]
    NotIdentified,
}

/// Where a cause sits on the I/O's path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The device itself.
    Device,
    /// Below the host: the device or what lies between it and the host.
    BelowHost,
    /// A control group's limit (I/O or CPU).
    Cgroup,
    /// The CPUs (their number, or others' work on them).
    Cpus,
    /// The application's own thread (ssdready's worker).
    Application,
    /// The kernel's path: system call, block layer, locks, completions.
    Kernel,
    /// The I/O scheduler.
    Scheduler,
    /// The device's request queue in the block layer.
    BlockQueue,
    /// The file system.
    FileSystem,
    /// The page cache.
    PageCache,
    /// ssdready's own apparatus.
    Apparatus,
    /// Not identified.
    #[default]
    Unknown,
}

impl Cause {
    /// The cause the study names when a limit of its groups holds the I/O
    /// (none for an `io.latency` target or an `io.weight`).
    pub fn of_group_limit(g: GroupLimit) -> Option<Cause> {
        match g {
            GroupLimit::IoThrottle => Some(Cause::IoThrottle),
            GroupLimit::CpuQuota => Some(Cause::CpuQuota),
            GroupLimit::Cpuset => Some(Cause::CpusAllowed),
            GroupLimit::IoLatency | GroupLimit::IoWeight => None,
        }
    }

    /// Every cause, in the order the study weighs them: the apparatus, the
    /// page cache (where the rate measured it, no limit below speaks for
    /// the rate) and the limits set on the machine first (what an engineer can change at
    /// once, their evidence the most direct), the device against its basis,
    /// the block layer's settings and the file system (they hold whatever
    /// else runs), other work on the CPUs (it comes and goes), the host's
    /// own work (a lock, the submitting thread, every CPU busy with the
    /// I/O's path, completions, submission), and last the rate limit below
    /// the host, named only when nothing on the host is.
    pub const ALL: [Cause; 18] = [
        Cause::Apparatus,
        Cause::PageCache,
        Cause::IoThrottle,
        Cause::CpuQuota,
        Cause::CpusAllowed,
        Cause::Device,
        Cause::DeviceQueue,
        Cause::RequestSize,
        Cause::Scheduler,
        Cause::FileSystem,
        Cause::OtherWork,
        Cause::Lock,
        Cause::OneCore,
        Cause::IoPathCpu,
        Cause::Completions,
        Cause::SubmissionPath,
        Cause::BelowHost,
        Cause::NotIdentified,
    ];

    /// The cause in the words the rules and the text use.
    pub fn name(self) -> &'static str {
        match self {
            Cause::Device => "device",
            Cause::BelowHost => "a rate limit below this host",
            Cause::IoThrottle => "an I/O throttle",
            Cause::CpuQuota => "a CPU quota",
            Cause::CpusAllowed => "the CPUs allowed",
            Cause::OtherWork => "other work",
            Cause::OneCore => "one core",
            Cause::IoPathCpu => "the I/O path's CPU",
            Cause::Scheduler => "the scheduler",
            Cause::DeviceQueue => "the device's queue",
            Cause::RequestSize => "the request size",
            Cause::FileSystem => "the file system",
            Cause::Lock => "a lock",
            Cause::SubmissionPath => "submission path",
            Cause::Completions => "completions",
            Cause::Apparatus => "the drive's daemon",
            Cause::PageCache => "the page cache",
            Cause::NotIdentified => "not identified",
        }
    }

    /// The cause of a name (the rules' words).
    pub fn of_name(name: &str) -> Option<Cause> {
        Cause::ALL.into_iter().find(|c| c.name() == name)
    }

    /// The layer it belongs to.
    pub fn layer(self) -> Layer {
        match self {
            Cause::Device => Layer::Device,
            Cause::BelowHost => Layer::BelowHost,
            Cause::IoThrottle | Cause::CpuQuota => Layer::Cgroup,
            Cause::CpusAllowed | Cause::OtherWork | Cause::IoPathCpu => Layer::Cpus,
            Cause::OneCore => Layer::Application,
            Cause::Scheduler => Layer::Scheduler,
            Cause::DeviceQueue | Cause::RequestSize => Layer::BlockQueue,
            Cause::FileSystem => Layer::FileSystem,
            Cause::PageCache => Layer::PageCache,
            Cause::Lock | Cause::SubmissionPath | Cause::Completions => Layer::Kernel,
            Cause::Apparatus => Layer::Apparatus,
            Cause::NotIdentified => Layer::Unknown,
        }
    }

    /// Whether spending CPU to save latency (polling, spinning) would
    /// spend what is scarce.
    pub fn cpu_is_scarce(self) -> bool {
        matches!(
            self,
            Cause::CpuQuota
                | Cause::CpusAllowed
                | Cause::OtherWork
                | Cause::OneCore
                | Cause::IoPathCpu
        )
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_has_one_name_and_comes_back_from_it() {
        for c in Cause::ALL {
            assert_eq!(Cause::of_name(c.name()), Some(c));
        }
        let mut names: Vec<&str> = Cause::ALL.iter().map(|c| c.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Cause::ALL.len());
        assert_eq!(Cause::of_name("the CPUs"), None);
    }

    #[test]
    fn a_cause_is_kept_as_an_identifier() {
        assert_eq!(
            serde_json::to_string(&Cause::IoThrottle).unwrap(),
            "\"io_throttle\""
        );
        assert_eq!(
            serde_json::from_str::<Cause>("\"below_host\"").unwrap(),
            Cause::BelowHost
        );
        assert_eq!(Cause::CpuQuota.layer(), Layer::Cgroup);
        // A study of the schema's first version said the cause in words.
        for (old, now) in [
            ("one core", Cause::OneCore),
            ("the CPUs", Cause::OtherWork),
            ("unknown", Cause::NotIdentified),
        ] {
            assert_eq!(
                serde_json::from_str::<Cause>(&format!("\"{old}\"")).unwrap(),
                now
            );
        }
    }
}
