//! The block layer's queue directory (`/sys/block/DISK/queue`), each file
//! ssdready reads or changes named once, with what the kernel does to
//! them: its one reader (`ssdready-probe`'s queue directory), its one
//! writer (`ssdready-tune`'s sysfs), the emulator's kernel drive that sets
//! a new drive's queue, the inventory's words ([`super::text`]) and the
//! levers of the queue kind all spell a file by these names.

/// The I/O scheduler: `none [mq-deadline] kyber`, the active one in
/// brackets (read by [`super::parse::active_scheduler`]).
pub const SCHEDULER: &str = "scheduler";
/// The requests the block layer queues per hardware queue.
pub const NR_REQUESTS: &str = "nr_requests";
/// Whether the block layer tries to merge requests (0, 1 or 2).
pub const NOMERGES: &str = "nomerges";
/// Where a completion runs (0, 1 or 2).
pub const RQ_AFFINITY: &str = "rq_affinity";
/// The block layer's per-device statistics (0 or 1).
pub const IOSTATS: &str = "iostats";
/// Writeback throttling's latency target, µs (0: off; -1 written: the
/// kernel's default).
pub const WBT_LAT_USEC: &str = "wbt_lat_usec";
/// How far the kernel reads ahead of buffered reads, KiB.
pub const READ_AHEAD_KB: &str = "read_ahead_kb";
/// The largest request the block layer builds, KiB.
pub const MAX_SECTORS_KB: &str = "max_sectors_kb";
/// The largest request the device takes, KiB (read only).
pub const MAX_HW_SECTORS_KB: &str = "max_hw_sectors_kb";
/// Whether the device has poll queues (1: it has).
pub const IO_POLL: &str = "io_poll";
/// The classic polling's sleep before it polls (-1: none).
pub const IO_POLL_DELAY: &str = "io_poll_delay";
/// The device's volatile write cache (`write back`, `write through`).
pub const WRITE_CACHE: &str = "write_cache";
/// Whether the device is a spinning disk (read only).
pub const ROTATIONAL: &str = "rotational";
/// The device's logical block size, bytes (read only).
pub const LOGICAL_BLOCK_SIZE: &str = "logical_block_size";
/// The device's physical block size, bytes (read only).
pub const PHYSICAL_BLOCK_SIZE: &str = "physical_block_size";

/// The settings any change of ssdready's may make: a lever of the queue
/// kind adds its own to these (`ssdready-tune`'s `Tuner::allowing`).
pub const CHANGED: &[&str] = &[
    SCHEDULER,
    NR_REQUESTS,
    NOMERGES,
    RQ_AFFINITY,
    IOSTATS,
    WBT_LAT_USEC,
    READ_AHEAD_KB,
    MAX_SECTORS_KB,
    IO_POLL,
    IO_POLL_DELAY,
];

/// What a scheduler switch resets besides the scheduler's own tunables
/// (`iosched/*`): the requests queued (to the new scheduler's default)
/// and writeback throttling's target.
pub const RESET_BY_SCHEDULER: &[&str] = &[NR_REQUESTS, WBT_LAT_USEC];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_changed_is_a_plain_name_of_the_queue_directory() {
        for f in CHANGED.iter().chain(RESET_BY_SCHEDULER) {
            assert!(f.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{f}");
        }
        assert!(RESET_BY_SCHEDULER.iter().all(|f| CHANGED.contains(f)));
        assert!(!CHANGED.contains(&MAX_HW_SECTORS_KB), "read only");
    }
}
