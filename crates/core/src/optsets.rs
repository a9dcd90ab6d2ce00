//! The options fio documents that ssdready does not implement as such, in two
//! sets — so that nothing in a job file is silently ignored:
//!
//! * [`IGNORED`]: accepted and ignored on purpose, each with the reason
//!   (cosmetic, or already ssdready's behaviour);
//! * [`REFUSED_AT_RUN`]: parsed (a job file that uses one still passes
//!   `--parse-only`, and fio's own values that change nothing are accepted),
//!   but a job that sets one to anything else is refused when it would run,
//!   with the reason, exit code 2; nothing is written;
//! * [`NOT_YET`]: recognised but not supported yet: a job that uses one stops
//!   with `option 'X' is not supported yet`.
//!
//! The lists cover every option of fio 3.33's `--cmdhelp=all` and the
//! io_uring and libaio engine options; `every_fio_option_is_classified` in
//! the tests keeps it so.

/// (option, why it is ignored).
pub static IGNORED: &[(&str, &str)] = &[
    ("allow_file_create", "missing files are always created (laid out) when a size is given"),
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
    ("log_compression_cpus", "logs are compressed once, when written, by the thread that writes them"),
    ("significant_figures", "output precision is fixed"),
    ("stats", "statistics are always collected"),
    ("thread", "ssdready always runs workers as threads; `run` and `study` measure in a session of their own, as fio's job processes, unless a section sets `thread`: then in the caller's, as fio's threads"),
    ("threads", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("numruns", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("block", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("dir", "an option of fio's tiobench profile; fio ignores it unless profile=tiobench"),
    ("unique_filename", "only fio's client/server mode prefixes generated file names; ssdready has no such mode"),
    ("unit_base", "output is in bytes"),
    ("verify_async", "verification runs in the worker that reads the block; fio's verify threads only move that work"),
    ("verify_async_cpus", "verification runs in the worker that reads the block (no verify threads to place)"),
    ("softrandommap", "the random map never fails to allocate (a keyed permutation, or fio's map, sized at the start)"),
    ("verifysort", "deprecated in fio, which accepts it with a warning and does nothing"),
    ("verifysort_nr", "deprecated in fio, which accepts it with a warning and does nothing"),
    ("flow_watermark", "deprecated in fio, which accepts it with a warning and does nothing"),
];

/// Why a job that uses an option is refused when it runs.
const CGROUP: &str = "fio puts each job's process in a cgroup; ssdready's jobs are threads of one process, and a cgroup's \
     I/O weight or limits would apply to every job at once (run ssdready itself in a cgroup instead)";
const SWITCH_USER: &str = "fio switches each job's process to this user or group; ssdready's jobs are threads of one process \
     and share its credentials (run ssdready as that user instead, e.g. with setpriv or sudo -u)";

/// Options parsed and refused when the job runs: (option, fio's values that
/// change nothing and are accepted, why any other value is refused).
pub static REFUSED_AT_RUN: &[(&str, &[&str], &str)] = &[
    (
        "rwmixcycle",
        &[],
        "a deprecated fio option, which fio 3.33 refuses too (the mix follows rwmixread/rwmixwrite)",
    ),
    (
        "percentage_sequential",
        &[],
        "a deprecated fio option, which fio 3.33 refuses too (use percentage_random)",
    ),
    (
        "block_error_percentiles",
        &["0"],
        "trim error percentiles (for fio's mtd engine) are not supported",
    ),
    ("cgroup", &[], CGROUP),
    ("cgroup_nodelete", &["0"], CGROUP),
    ("cgroup_weight", &["0"], CGROUP),
    ("gid", &[], SWITCH_USER),
    (
        "uncached",
        &["0"],
        "an option of fio's pvsync2 and mmap engines (RWF_UNCACHED), which is not supported yet",
    ),
    ("uid", &[], SWITCH_USER),
];

/// Recognised, not supported yet.
pub static NOT_YET: &[&str] = &[];

/// fio's other names for options outside the option table (the `alias`
/// fields of fio 3.33's options.c; aliases of supported options are in the
/// table itself): (alias, fio's name).
pub static ALIASES: &[(&str, &str)] = &[
    ("disable_bw", "disable_bw_measurement"),
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

/// What a job that sets `name` (or the option it is an alias of) to
/// `value` cannot run with: None when the option is not refused at run
/// time, or when `value` is one of fio's values that change nothing.
pub fn refused_at_run(name: &str, value: Option<&str>) -> Option<Option<&'static str>> {
    let name = canonical(name);
    let (_, noop, why) = REFUSED_AT_RUN.iter().find(|(n, _, _)| *n == name)?;
    let v = value.unwrap_or("1").trim();
    Some((!noop.iter().any(|n| n.eq_ignore_ascii_case(v))).then_some(*why))
}

/// Whether `name` (or the option it is an alias of) is a known fio option
/// that is not supported yet.
pub fn not_yet(name: &str) -> bool {
    NOT_YET.contains(&canonical(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option fio 3.33 lists (`fio --cmdhelp=all`, every `.name` of
    /// its options.c — `--cmdhelp=all` leaves out some, such as
    /// `bs_is_seq_rand` and the deprecated ones — plus the io_uring and
    /// libaio engine options) is supported, ignored or not-yet.
    #[test]
    fn every_fio_option_is_classified() {
        let fio = include_str!("../tests/data/fio-3.33-options.txt");
        let mut missing = Vec::new();
        for name in fio.lines().map(str::trim).filter(|l| !l.is_empty()) {
            if crate::options::find(name).is_none()
                && ignored(name).is_none()
                && !not_yet(name)
                && refused_at_run(name, None).is_none()
            {
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
                    assert!(
                        ignored(alias).is_some()
                            || not_yet(alias)
                            || refused_at_run(alias, None).is_some(),
                        "{alias}"
                    );
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
            assert!(refused_at_run(n, None).is_none(), "{n}");
        }
        for (n, _, _) in REFUSED_AT_RUN {
            assert!(crate::options::find(n).is_none(), "{n}");
            assert!(ignored(n).is_none(), "{n}");
        }
    }
}
