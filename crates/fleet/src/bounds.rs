//! What a remote client can make the server hold, and the bound of each
//! (docs/fleet.md lists them for the operator):
//!
//! - a message: [`crate::server::FIRST_MAX`] before the client is
//!   accepted, [`crate::server::JOB_MAX`] until it claims the server,
//!   [`crate::wire::MAX_MESSAGE`] after; a compressed log inflates to at
//!   most [`crate::iolog::MAX_INFLATED`];
//! - connections: [`crate::server::MAX_OPEN`], the oldest that has not
//!   claimed the server let go for a new one;
//! - a job: its own process, with the operator's `--job-memory`
//!   (`RLIMIT_DATA`; at most half the memory limit the server runs under,
//!   [`job_memory`]), `--job-files` and `--job-time`, and its sample logs
//!   bounded below that memory ([`log_samples`]), so that a job with
//!   per-I/O logs ends with an error the client reads rather than being
//!   killed for memory;
//! - the results: copied from the job's process to the client as they
//!   come, never held by the server.

/// What one sample of a job's logs may cost until it is sent, bytes: the
/// sample itself (48), the lines of one log made from it at a time (56),
/// each of up to five logs' encoded lines (slat, clat, lat, bw, IOPS: 32
/// each) and their message, with room to spare.
pub const LOG_SAMPLE_COST: u64 = 512;

/// The fewest samples a job may keep, however small its memory.
pub const LOG_SAMPLES_MIN: u64 = 1024;

/// The most samples one client's job may keep in its sample logs (all its
/// workers together), for a job that may use `job_memory` bytes: at most
/// about half of it, whatever its logs ask.
pub fn log_samples(job_memory: u64) -> u64 {
    (job_memory / 2 / LOG_SAMPLE_COST).max(LOG_SAMPLES_MIN)
}

/// The least memory a job is given, whatever limit the server runs under.
pub const JOB_MEMORY_MIN: u64 = 64 << 20;

/// The memory one job may use: what the operator asked (`--job-memory`),
/// at most half the memory limit the server runs under (`group`: its
/// control group's smallest, bytes, and the file that says it), which the
/// job's process shares with it: a job stopped at its own bound leaves the
/// server, and the clients after it, their memory. The note says so when
/// it lowers what was asked.
pub fn job_memory(asked: u64, group: Option<(u64, &str)>) -> (u64, Option<String>) {
    let Some((limit, source)) = group.filter(|(l, _)| asked > l / 2) else {
        return (asked, None);
    };
    let memory = (limit / 2).max(JOB_MEMORY_MIN);
    let mib = |b: u64| b >> 20;
    let note = format!(
        "a job may use {} MiB, not the {} MiB of --job-memory: half the memory limit this server runs under ({} MiB, {source}), which its jobs share",
        mib(memory),
        mib(asked),
        mib(limit)
    );
    (memory, Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_gets_at_most_half_the_servers_memory_limit() {
        let src = "/sys/fs/cgroup/memory/x/memory.limit_in_bytes";
        assert_eq!(job_memory(4 << 30, None), (4 << 30, None));
        assert_eq!(
            job_memory(512 << 20, Some((8 << 30, src))),
            (512 << 20, None)
        );
        let (m, note) = job_memory(4 << 30, Some((1536 << 20, src)));
        assert_eq!(m, 768 << 20);
        let note = note.unwrap();
        assert!(
            note.contains("768 MiB, not the 4096 MiB") && note.contains(src),
            "{note}"
        );
        assert_eq!(job_memory(4 << 30, Some((64 << 20, src))).0, JOB_MEMORY_MIN);
    }

    #[test]
    fn the_samples_a_job_keeps_fit_in_half_its_memory() {
        for mem in [64u64 << 20, 512 << 20, 4 << 30] {
            let n = log_samples(mem);
            assert!(n * LOG_SAMPLE_COST <= mem / 2, "{mem}: {n}");
            assert!(n * LOG_SAMPLE_COST * 2 > mem / 2, "{mem}: {n} is far below");
        }
        assert_eq!(log_samples(0), LOG_SAMPLES_MIN);
    }
}
