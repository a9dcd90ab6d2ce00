//! The byte layout of fio's `struct thread_stat` for each protocol version
//! spoken, as a table of fields in order (name, element size, count).
//!
//! fio sends the structure as it sits in memory: packed (no padding), except
//! that `sync_stat` is aligned to 8 bytes and the whole structure rounds up
//! to 8; every integer little-endian; every `double` as its IEEE 754 bits
//! in a 16-byte slot (`fio_fp64_t`). An `io_stat` is max, min, samples
//! (`u64` each), mean and S (the sum of squared deviations), 56 bytes.
//!
//! | version | fio | `thread_stat` | `cmd_ts_pdu` |
//! |---|---|---|---|
//! | 97 | 3.33 (Debian 12) | 183 888 | 184 056 |
//! | 120 | 3.42 | 183 904 | 184 072 |
//!
//! Version 97 is checked against bytes captured from fio 3.33
//! (`tests/fixtures`); version 120 was written from fio 3.42's `stat.h`
//! (a `job_start` time after `groupid`, the zone-reset count moved after
//! `unit_base` with a flag, a third steady-state ring) and is checked
//! against bytes captured from a fio 3.42 built from its release tag
//! (`tests/golden_v120.rs`).

/// A field: name, size of one element, number of elements. `ALIGN8` marks
/// an alignment to 8 bytes.
type Row = (&'static str, usize, usize);
const ALIGN8: Row = ("", 0, 0);

/// fio's histogram bins per latency kind and direction.
pub const PLAT_NR: usize = 1856;
/// Latency kinds in `io_u_plat`: submission, completion, total.
pub const LAT_KINDS: usize = 3;
/// Directions: read, write, trim.
pub const DIRS: usize = 3;
/// Size of a `struct io_stat`.
pub const IO_STAT: usize = 56;
/// Size of `struct group_run_stats` (packed).
pub const GROUP_STATS: usize = 164;

const HEAD: [Row; 4] = [
    ("name", 1, 128),
    ("verror", 1, 128),
    ("error", 4, 1),
    ("thread_number", 4, 1),
];

const STATS: [Row; 37] = [
    ALIGN8,
    ("sync_stat", IO_STAT, 1),
    ("clat_stat", IO_STAT, DIRS),
    ("slat_stat", IO_STAT, DIRS),
    ("lat_stat", IO_STAT, DIRS),
    ("bw_stat", IO_STAT, DIRS),
    ("iops_stat", IO_STAT, DIRS),
    ("usr_time", 8, 1),
    ("sys_time", 8, 1),
    ("ctx", 8, 1),
    ("minf", 8, 1),
    ("majf", 8, 1),
    ("clat_percentiles", 4, 1),
    ("lat_percentiles", 4, 1),
    ("slat_percentiles", 4, 1),
    ("pad", 4, 1),
    ("percentile_precision", 8, 1),
    ("percentile_list", 16, 20),
    ("io_u_map", 8, 7),
    ("io_u_submit", 8, 7),
    ("io_u_complete", 8, 7),
    ("io_u_lat_n", 8, 10),
    ("io_u_lat_u", 8, 10),
    ("io_u_lat_m", 8, 12),
    ("io_u_plat", 8, LAT_KINDS * DIRS * PLAT_NR),
    ("io_u_sync_plat", 8, PLAT_NR),
    ("total_io_u", 8, 4),
    ("short_io_u", 8, DIRS),
    ("drop_io_u", 8, DIRS),
    ("total_submit", 8, 1),
    ("total_complete", 8, 1),
    ("io_bytes", 8, DIRS),
    ("runtime", 8, DIRS),
    ("total_run_time", 8, 1),
    ("continue_on_error", 4, 1),
    ("first_error", 4, 1),
    ("total_err_count", 8, 1),
];

const TAIL: [Row; 18] = [
    ("latency_target", 8, 1),
    ("latency_percentile", 16, 1),
    ("latency_window", 8, 1),
    ("sig_figs", 4, 1),
    ("ss_dur", 8, 1),
    ("ss_state", 4, 1),
    ("ss_head", 4, 1),
    ("ss_limit", 16, 1),
    ("ss_slope", 16, 1),
    ("ss_deviation", 16, 1),
    ("ss_criterion", 16, 1),
    ("ioprio", 4, 1),
    ("ss_iops_data_offset", 8, 1),
    ("ss_bw_data_offset", 8, 1),
    ("", 0, 0), // 120: ss_lat_data_offset
    ("clat_prio_offset", 8, DIRS),
    ("nr_clat_prio", 4, DIRS),
    ("cachehit", 8, 1),
];

/// The rows of a version, in order.
fn rows(version: u16) -> Vec<Row> {
    let mut r: Vec<Row> = HEAD.to_vec();
    let v120 = version >= 120;
    r.push(("groupid", 4, 1));
    if v120 {
        r.push(("job_start", 8, 1));
    }
    r.extend([
        ("pid", 4, 1),
        ("description", 1, 256),
        ("members", 4, 1),
        ("unified_rw_rep", 4, 1),
        ("disable_prio_stat", 4, 1),
    ]);
    r.extend(STATS);
    if v120 {
        r.extend([
            ("nr_block_infos", 8, 1),
            ("block_infos", 4, 8192),
            ("kb_base", 4, 1),
            ("unit_base", 4, 1),
            ("nr_zone_resets", 8, 1),
            ("count_zone_resets", 2, 1),
            ("pad3", 2, 1),
            ("latency_depth", 4, 1),
        ]);
    } else {
        r.extend([
            ("nr_zone_resets", 8, 1),
            ("nr_block_infos", 8, 1),
            ("block_infos", 4, 8192),
            ("kb_base", 4, 1),
            ("unit_base", 4, 1),
            ("latency_depth", 4, 1),
            ("pad3", 4, 1),
        ]);
    }
    for t in TAIL {
        if t.0.is_empty() {
            if v120 {
                r.push(("ss_lat_data_offset", 8, 1));
            }
        } else {
            r.push(t);
        }
    }
    r.push(("cachemiss", 8, 1));
    r
}

/// Field offsets of one version's `thread_stat`.
#[derive(Clone, Debug)]
pub struct Layout {
    pub version: u16,
    fields: Vec<(&'static str, usize, usize, usize)>,
    /// Size of `thread_stat`.
    pub ts_size: usize,
}

impl Layout {
    /// The layout of a protocol version; `None` for one not spoken.
    pub fn of(version: u16) -> Option<Layout> {
        if !crate::VERSIONS.contains(&version) {
            return None;
        }
        let mut off = 0usize;
        let mut fields = Vec::new();
        for (name, size, count) in rows(version) {
            if size == 0 {
                off = off.next_multiple_of(8);
                continue;
            }
            fields.push((name, off, size, count));
            off += size * count;
        }
        Some(Layout {
            version,
            fields,
            ts_size: off.next_multiple_of(8),
        })
    }

    /// Offset, element size and count of a field.
    pub fn field(&self, name: &str) -> (usize, usize, usize) {
        self.fields
            .iter()
            .find(|f| f.0 == name)
            .map(|f| (f.1, f.2, f.3))
            .unwrap_or_else(|| panic!("no field {name} in version {}", self.version))
    }

    /// Whether the version has this field.
    pub fn has(&self, name: &str) -> bool {
        self.fields.iter().any(|f| f.0 == name)
    }

    /// Size of a TS message's fixed part: `thread_stat` then
    /// `group_run_stats`, rounded up to 8.
    pub fn ts_pdu_size(&self) -> usize {
        (self.ts_size + GROUP_STATS).next_multiple_of(8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_fios_structures() {
        let l = Layout::of(97).unwrap();
        assert_eq!(l.ts_size, 183_888);
        assert_eq!(l.ts_pdu_size(), 184_056);
        assert_eq!(l.field("sync_stat").0, 544);
        assert_eq!(l.field("io_u_plat").0, 2248);
        let l = Layout::of(120).unwrap();
        assert_eq!(l.field("sync_stat").0, 552);
        assert_eq!(l.ts_size, 183_904);
        assert!(Layout::of(96).is_none());
    }
}
