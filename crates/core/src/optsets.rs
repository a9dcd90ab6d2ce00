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
    ("threads", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("numruns", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("block", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("dir", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("unique_filename", "only fio's client/server mode prefixes generated file names; ssdready has no such mode"),
    ("unit_base", "output is in bytes"),
];

/// Recognised, not supported yet.
pub static NOT_YET: &[&str] = &[
    "atomic",
    "block_error_percentiles",
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
    "iomem_align",
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
    "numa_cpu_nodes",
    "numa_mem_policy",
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
    "serialize_overlap",
    "sync_file_range",
    "trim_backlog",
    "trim_backlog_batch",
    "trim_percentage",
    "trim_verify_zero",
    "uid",
    "uncached",
    "unified_rw_reporting",
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
    "allow_mounted_write",
];

/// fio's other names for options outside the option table (the `alias`
/// fields of fio 3.33's options.c; aliases of supported options are in the
/// table itself): (alias, fio's name).
pub static ALIASES: &[(&str, &str)] = &[
    ("disable_bw", "disable_bw_measurement"),
    ("fill_fs", "fill_device"),
    ("iomem", "mem"),
    ("mem_align", "iomem_align"),
    ("ratecycle", "rate_cycle"),
    ("ratemin", "rate_min"),
    ("ss", "steadystate"),
    ("ss_dur", "steadystate_duration"),
    ("ss_ramp", "steadystate_ramp_time"),
];

/// fio's name for `name` (itself unless it is one of [`ALIASES`]).
pub fn canonical(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, n)| n)
}

/// Why `name` (or the option it is an alias of) is ignored, if it is.
pub fn ignored(name: &str) -> Option<&'static str> {
    let name = canonical(name);
    IGNORED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, why)| *why)
}

/// Whether `name` (or the option it is an alias of) is a known fio option
/// that is not supported yet.
pub fn not_yet(name: &str) -> bool {
    NOT_YET.contains(&canonical(name))
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

    /// Every alias of fio 3.33's options.c resolves: to a supported option
    /// (in the table) or to an ignored or not-yet one, never to 'unknown'.
    #[test]
    fn every_fio_alias_is_known() {
        let fio_aliases = [
            ("readwrite", "rw"),
            ("iodepth_batch_submit", "iodepth_batch"),
            ("iodepth_batch_complete", "iodepth_batch_complete_min"),
            ("io_limit", "io_size"),
            ("fill_fs", "fill_device"),
            ("fileoffset", "offset"),
            ("blocksize", "bs"),
            ("blockalign", "ba"),
            ("blocksize_range", "bsrange"),
            ("blocksize_unaligned", "bs_unaligned"),
            ("nr_files", "nrfiles"),
            ("timeout", "runtime"),
            ("iomem", "mem"),
            ("mem_align", "iomem_align"),
            ("ratemin", "rate_min"),
            ("ratecycle", "rate_cycle"),
            ("wait_for_previous", "stonewall"),
            ("disable_bw", "disable_bw_measurement"),
            ("ss", "steadystate"),
            ("ss_dur", "steadystate_duration"),
            ("ss_ramp", "steadystate_ramp_time"),
        ];
        assert_eq!(fio_aliases.len(), 21, "fio 3.33 has 21 aliases");
        for (alias, name) in fio_aliases {
            match crate::options::find(alias) {
                Some(d) => assert_eq!(
                    crate::options::find(name).map(|o| o.name),
                    Some(d.name),
                    "{alias}"
                ),
                None => {
                    assert_eq!(canonical(alias), name, "{alias}");
                    assert!(ignored(alias).is_some() || not_yet(alias), "{alias}");
                }
            }
        }
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
