//! Why a `zonemode=zbd` job is refused: [`ZbdError`], one variant per
//! check (fio's texts where fio has one), each carrying the target, the
//! option or the sizes its message names.

use ssdready_workload::zbd::TooManyOpenZones;

/// A zbd job refused before any I/O.
#[derive(Debug, thiserror::Error)]
pub enum ZbdError {
    // Sizes in zones (`size=8z`).
    #[error("option '{opt}={n}z': sizes in zones need zonemode=zbd")]
    ZonesNeedZbd { opt: &'static str, n: u64 },
    #[error(
        "option '{opt}={n}z': the zone size is not known (set zonesize, or use a zoned target)"
    )]
    ZoneSizeUnknown { opt: &'static str, n: u64 },

    /// One of the others, for job `job`.
    #[error("job '{job}': {err}")]
    InJob { job: String, err: Box<ZbdError> },
    #[error("zonemode=zbd with several files is not supported yet")]
    SeveralFiles,
    #[error("zonemode=zbd with verify is not supported yet")]
    WithVerify,
    #[error("Using direct I/O is mandatory for writing to ZBD drives (set direct=1)")]
    NotDirect,
    #[error("zonemode=zbd needs a file, a block device or an emulated drive")]
    NoTarget,
    #[error(transparent)]
    OpenZones(#[from] TooManyOpenZones),
    #[error("'job_max_open_zones' cannot be used without a global open zones limit")]
    JobLimitAlone,

    // A target's zones (`target`: its name).
    /// The emulated drive's zone report failed (its message).
    #[error("{why}")]
    EmuReport { why: String },
    #[error("{target}: job parameter zonesize {job} does not match disk zone size {disk}")]
    ZoneSizeMismatch { target: String, job: u64, disk: u64 },
    #[error(
        "{target}: Specifying the zone size is mandatory for regular file/block device with --zonemode=zbd"
    )]
    ZoneSizeMissing { target: String },
    #[error("{target}: zone size must be at least 512 bytes for --zonemode=zbd")]
    ZoneTooSmall { target: String },
    #[error("{target}: job parameter zonecapacity {cap} is larger than zone size {size}")]
    CapacityOverSize { target: String, cap: u64, size: u64 },
    #[error("{target}: file/device size {size} is smaller than zone size {zone}")]
    SmallerThanZone {
        target: String,
        size: u64,
        zone: u64,
    },
    #[error("{target}: opening for zone reports: {err}")]
    OpenForReport { target: String, err: std::io::Error },
    #[error("{target}: report zones failed ({err})")]
    ReportFailed { target: String, err: std::io::Error },
    #[error("{target}: conventional zones are not supported yet with zonemode=zbd")]
    Conventional { target: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_job_and_the_target_in_one_line() {
        let e = ZbdError::InJob {
            job: "w".into(),
            err: Box::new(ZbdError::ZoneSizeMismatch {
                target: "/dev/nullb0".into(),
                job: 1 << 20,
                disk: 4 << 20,
            }),
        };
        assert_eq!(
            e.to_string(),
            "job 'w': /dev/nullb0: job parameter zonesize 1048576 does not match disk zone size 4194304"
        );
        let e = ZbdError::ZonesNeedZbd { opt: "size", n: 8 };
        assert_eq!(
            e.to_string(),
            "option 'size=8z': sizes in zones need zonemode=zbd"
        );
    }
}
