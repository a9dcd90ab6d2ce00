//! fio's log and reporting options beyond the log files themselves
//! (`write_*_log`, `log_avg_msec`, `log_offset` are in [`crate::spec`]):
//! timestamps from another clock's epoch (`log_unix_epoch`,
//! `log_alternate_epoch`, `log_alternate_epoch_clock_id`), the window's
//! maximum instead of its mean (`log_max_value`), latency histogram logs
//! (`write_hist_log`, `log_hist_msec`, `log_hist_coarseness`), compressed
//! logs (`log_compression`, `log_store_compressed`), fio's initial log size
//! (`log_entries`, accepted; ssdready's logs grow as needed) and
//! `unified_rw_reporting`. The log formats are in [`crate::iolog`].

use serde::{Deserialize, Serialize};

/// fio's `unified_rw_reporting`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnifiedRw {
    /// Per direction (`none`, `0`).
    #[default]
    None,
    /// One `mixed` direction instead (`mixed`, `1`).
    Mixed,
    /// Per direction, then `mixed` (`both`).
    Both,
}

impl UnifiedRw {
    /// fio's values: none, mixed, both, 0 (none), 1 (mixed).
    pub fn parse(v: &str) -> Result<UnifiedRw, crate::spec_types::NotOneOf> {
        match v.trim() {
            "none" | "0" => Ok(UnifiedRw::None),
            "mixed" | "1" => Ok(UnifiedRw::Mixed),
            "both" => Ok(UnifiedRw::Both),
            other => Err(crate::spec_types::NotOneOf::new(
                other,
                "one of none, mixed, both, 0, 1",
            )),
        }
    }
}

/// fio's default and smallest `log_entries`.
pub const DEF_LOG_ENTRIES: u64 = 1024;
/// fio's largest `log_entries`.
pub const MAX_LOG_ENTRIES: u64 = 1024 * DEF_LOG_ENTRIES;
/// fio's bounds of `log_compression` (bytes).
pub const LOG_COMPRESSION_RANGE: (u64, u64) = (1024, 512 << 20);
/// The largest `log_hist_coarseness` (fio: "Integer in range \[0,6\]").
pub const MAX_HIST_COARSENESS: u32 = 6;

/// The options themselves.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSpec {
    /// `log_unix_epoch`: times in ms since the Unix epoch.
    pub unix_epoch: bool,
    /// `log_alternate_epoch`: times in ms since the epoch of
    /// [`LogSpec::epoch_clock_id`]'s clock (in fio 3.33 the same as
    /// `log_unix_epoch`, whose clock is that one too).
    pub alternate_epoch: bool,
    /// `log_alternate_epoch_clock_id` (0: CLOCK_REALTIME).
    pub epoch_clock_id: i32,
    /// `log_max_value`: averaged latency logs carry the window's maximum.
    pub max_value: bool,
    /// `log_window_value=both` (newer fio): each line carries the
    /// window's mean and then its maximum.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub window_both: bool,
    /// `log_issue_time` (newer fio): a last column, the I/O's issue time
    /// in ns since the job started (slat and clat logs; 0 in the others).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub issue_time: bool,
    /// `log_entries`: fio's initial log size (no effect here).
    pub entries: u64,
    /// `write_hist_log`: the file prefix ("" for the job's name).
    pub hist_log: Option<String>,
    /// `log_hist_msec`: the interval of histogram lines (0: none).
    pub hist_msec: u64,
    /// `log_hist_coarseness`: 2^c of fio's bins summed per column.
    pub hist_coarseness: u32,
    /// `log_compression`: fio's chunk size (bytes; 0: off).
    pub compression: u64,
    /// `log_store_compressed`: write `.log.fz` files, as fio does.
    pub store_compressed: bool,
    /// `unified_rw_reporting`.
    pub unified_rw: UnifiedRw,
}

impl Default for LogSpec {
    fn default() -> Self {
        LogSpec {
            unix_epoch: false,
            alternate_epoch: false,
            epoch_clock_id: 0,
            max_value: false,
            window_both: false,
            issue_time: false,
            entries: DEF_LOG_ENTRIES,
            hist_log: None,
            hist_msec: 0,
            hist_coarseness: 0,
            compression: 0,
            store_compressed: false,
            unified_rw: UnifiedRw::None,
        }
    }
}

impl LogSpec {
    /// The clock whose epoch log times count from, if not the job's start
    /// (fio's `set_epoch_time`: either option, with the clock id).
    pub fn epoch_clock(&self) -> Option<i32> {
        (self.unix_epoch || self.alternate_epoch).then_some(self.epoch_clock_id)
    }

    /// Why the job's log options cannot run as given, if they cannot.
    pub fn refusal(&self) -> Option<String> {
        if self.hist_log.is_some() && self.store_compressed {
            // fio stores the histogram samples' memory addresses in its
            // compressed file; `fio --inflate-log` prints them as numbers.
            return Some(
                "option 'log_store_compressed' with 'write_hist_log': fio 3.33 stores memory addresses \
                 instead of the histograms in a compressed histogram log, so no tool can read one back; \
                 write the histogram log uncompressed"
                    .into(),
            );
        }
        None
    }
}
