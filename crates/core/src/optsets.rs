//! The options fio documents that ssdready does not implement as such, in two
//! sets — so that nothing in a job file is silently ignored:
//!
//! * [`IGNORED`]: accepted and ignored on purpose, each with the reason
//!   (cosmetic, or already ssdready's behaviour);
//! * [`NOT_YET`]: recognised but not supported yet: a job that uses one stops
//!   with `option 'X' is not supported yet`.
//!
//! The lists cover every option of fio 3.33's `--cmdhelp=all` and the
//! io_uring and libaio engine options; `every_fio_option_is_classified` in
//! the tests keeps it so.

/// (option, why it is ignored).
pub static IGNORED: &[(&str, &str)] = &[
    ("allow_file_create", "missing files are always created (laid out) when a size is given"),
    ("allrandrepeat", "every random choice already follows randseed"),
    ("bwavgtime", "bandwidth is sampled once per second"),
    ("clocksource", "ssdready uses the constant TSC, else CLOCK_MONOTONIC (reported in the result)"),
    ("create_serialize", "files are laid out one after another before any job starts"),
    ("disable_bw_measurement", "bandwidth is always measured (per-second counters cost nothing per I/O)"),
    ("disable_clat", "latencies are always measured (two timestamps per batch)"),
    ("disable_lat", "latencies are always measured (two timestamps per batch)"),
    ("disable_slat", "latencies are always measured (two timestamps per batch)"),
    ("disk_util", "device statistics are always collected"),
    ("error_dump", "the first error of a job is always reported"),
    ("gtod_cpu", "timestamps are cheap (TSC); no timekeeping thread is needed"),
    ("gtod_reduce", "timestamps are cheap (TSC); they are always taken"),
    ("iopsavgtime", "IOPS are sampled once per second"),
    ("per_job_logs", "logs are always written per worker (fio's default)"),
    ("random_generator", "random offsets come from ssdready's keyed permutation (same coverage, different order than fio's)"),
    ("scramble_buffers", "write buffers are filled with random bytes once"),
    ("significant_figures", "output precision is fixed"),
    ("stats", "statistics are always collected"),
    ("thread", "ssdready always runs workers as threads"),
    ("unit_base", "output is in bytes"),
];

/// Recognised, not supported yet.
pub static NOT_YET: &[&str] = &[
    "atomic",
    "ba",
    "block_error_percentiles",
    "bs_unaligned",
    "buffer_compress_chunk",
    "buffer_compress_percentage",
    "buffer_pattern",
    "cgroup",
    "cgroup_nodelete",
    "cgroup_weight",
    "cmd_type",
    "cmdprio",
    "cmdprio_bssplit",
    "cmdprio_class",
    "cmdprio_percentage",
    "continue_on_error",
    "create_fsync",
    "create_only",
    "dedupe_global",
    "dedupe_mode",
    "dedupe_percentage",
    "dedupe_working_set_percentage",
    "exec_postrun",
    "exec_prerun",
    "exit_what",
    "exitall_on_error",
    "file_append",
    "file_service_type",
    "filename_format",
    "filesize",
    "fill_device",
    "flow",
    "flow_id",
    "flow_sleep",
    "force_async",
    "gid",
    "hugepage-size",
    "ignore_error",
    "ignore_zone_limits",
    "io_submit_mode",
    "iodepth_low",
    "ioscheduler",
    "job_max_open_zones",
    "latency_percentile",
    "latency_run",
    "latency_target",
    "latency_window",
    "lockfile",
    "lockmem",
    "log_alternate_epoch",
    "log_alternate_epoch_clock_id",
    "log_compression",
    "log_compression_cpus",
    "log_entries",
    "log_hist_coarseness",
    "log_hist_msec",
    "log_max_value",
    "log_offset",
    "log_prio",
    "log_store_compressed",
    "log_unix_epoch",
    "max_latency",
    "max_open_zones",
    "mem",
    "merge_blktrace_file",
    "merge_blktrace_iters",
    "merge_blktrace_scalars",
    "nice",
    "nonvectored",
    "nowait",
    "nrfiles",
    "numa_cpu_nodes",
    "numa_mem_policy",
    "offset_align",
    "offset_increment",
    "opendir",
    "openfiles",
    "percentage_random",
    "prio",
    "prioclass",
    "profile",
    "rate_cycle",
    "rate_ignore_thinktime",
    "rate_iops_min",
    "rate_min",
    "rate_process",
    "read_beyond_wp",
    "read_iolog",
    "read_iolog_chunked",
    "refill_buffers",
    "replay_align",
    "replay_no_stall",
    "replay_redirect",
    "replay_scale",
    "replay_skip",
    "replay_time_scale",
    "rw_sequencer",
    "serialize_overlap",
    "steadystate",
    "steadystate_duration",
    "steadystate_ramp_time",
    "sync_file_range",
    "trim_backlog",
    "trim_backlog_batch",
    "trim_percentage",
    "trim_verify_zero",
    "uid",
    "uncached",
    "unified_rw_reporting",
    "unique_filename",
    "userspace_reap",
    "verify_async",
    "wait_for",
    "write_hint",
    "write_hist_log",
    "write_iolog",
    "zero_buffers",
    "zone_reset_frequency",
    "zone_reset_threshold",
    "zonecapacity",
    "zonemode",
    "zonerange",
    "zonesize",
    "zoneskip",
    "ss",
    "ss_dur",
    "ss_ramp",
    "allow_mounted_write",
];

/// Why `name` is ignored, if it is.
pub fn ignored(name: &str) -> Option<&'static str> {
    IGNORED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| *why)
}

/// Whether `name` is a known fio option that is not supported yet.
pub fn not_yet(name: &str) -> bool {
    NOT_YET.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option fio 3.33 lists (`fio --cmdhelp=all`, plus the io_uring
    /// and libaio engine options) is supported, ignored or not-yet.
    #[test]
    fn every_fio_option_is_classified() {
        let fio = include_str!("../tests/data/fio-3.33-options.txt");
        let mut missing = Vec::new();
        for name in fio.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if crate::options::find(name).is_none() && ignored(name).is_none() && !not_yet(name) {
                missing.push(name);
            }
        }
        assert!(missing.is_empty(), "unclassified fio options: {missing:?}");
    }

    #[test]
    fn the_sets_do_not_overlap() {
        for (n, _) in IGNORED {
            assert!(!not_yet(n), "{n}");
            assert!(crate::options::find(n).is_none(), "{n}");
        }
        for n in NOT_YET {
            assert!(
                crate::options::find(n).is_none(),
                "{n} is supported and not-yet"
            );
        }
    }
}
