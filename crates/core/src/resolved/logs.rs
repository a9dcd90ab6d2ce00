//! What a job's logs need (`write_bw_log`, `write_iops_log`,
//! `write_lat_log`, `write_hist_log`, `log_avg_msec`, `log_offset`,
//! `per_job_logs` and the `log_*` options of [`crate::spec_log`]): the
//! files a worker writes, with fio's names, and how its samples are kept.

use crate::iolog::LogKind;
use crate::spec::JobSpec;

/// What a log file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogContents {
    /// One of the sample logs.
    Samples(LogKind),
    /// `write_hist_log`.
    Hist,
}

/// One log file a worker writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogFile {
    /// The option that asks for it.
    pub option: &'static str,
    /// Its path, as fio names it.
    pub path: String,
    /// What it holds.
    pub contents: LogContents,
}

/// A job's logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// The job's name (in messages, and the files' prefix when the option
    /// gives none).
    pub job: String,
    /// `per_job_logs`: one file per worker, numbered.
    pub per_job: bool,
    /// The file prefixes of `write_bw_log`, `write_iops_log`,
    /// `write_lat_log` and `write_hist_log`, when asked for (the job's
    /// name where the option gives none).
    pub bw: Option<String>,
    pub iops: Option<String>,
    pub lat: Option<String>,
    pub hist: Option<String>,
    /// `log_store_compressed`: `.log.fz` files of fio's binary samples.
    pub store_compressed: bool,
    /// `log_compression`: bytes of samples per zlib stream (0: one).
    pub compression: u64,
    /// `log_avg_msec` (0: a line per I/O).
    pub avg_msec: u64,
    /// `log_offset`: the offset column.
    pub offset: bool,
    /// `log_prio`: the priority column holds the priority value.
    pub prio_values: bool,
    /// `log_max_value`.
    pub max_value: bool,
    /// `log_window_value=both`.
    pub window_both: bool,
    /// `log_issue_time`.
    pub issue_time: bool,
    /// The clock whose epoch times count from (`log_unix_epoch`,
    /// `log_alternate_epoch`); None: the worker's start.
    pub epoch_clock: Option<i32>,
    /// `log_hist_msec`.
    pub hist_msec: u64,
    /// `log_hist_coarseness`.
    pub hist_coarseness: u32,
    /// The most samples (per-I/O lines, or averaging windows) one worker's
    /// log may hold: a bound the caller sets (a server, for a remote
    /// client's job); None: no bound but the run's length.
    pub max_samples: Option<u64>,
}

impl LogConfig {
    /// The logs of `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        let prefix = |p: &Option<String>| {
            p.as_ref().map(|p| match p.is_empty() {
                true => spec.name.clone(),
                false => p.clone(),
            })
        };
        let l = &spec.logs;
        LogConfig {
            job: spec.name.clone(),
            per_job: spec.per_job_logs,
            bw: prefix(&spec.write_bw_log),
            iops: prefix(&spec.write_iops_log),
            lat: prefix(&spec.write_lat_log),
            hist: prefix(&l.hist_log),
            store_compressed: l.store_compressed,
            compression: l.compression,
            avg_msec: spec.log_avg_msec,
            offset: spec.log_offset,
            prio_values: spec.sched.log_prio,
            max_value: l.max_value,
            window_both: l.window_both,
            issue_time: l.issue_time,
            epoch_clock: l.epoch_clock(),
            hist_msec: l.hist_msec,
            hist_coarseness: l.hist_coarseness,
            max_samples: None,
        }
    }

    /// Whether the job asks for any log file.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.iops.is_some() || self.lat.is_some() || self.hist.is_some()
    }

    /// The files worker `number` (1-based in the run) writes, as fio names
    /// them: `PREFIX_bw.N.log`, `PREFIX_iops.N.log`, `PREFIX_slat.N.log`,
    /// `_clat`, `_lat`, `PREFIX_clat_hist.N.log`; without `per_job_logs`
    /// no `.N` (the workers share the file); `.log.fz` when stored
    /// compressed.
    pub fn files(&self, number: u32) -> Vec<LogFile> {
        let number = match self.per_job {
            true => format!(".{number}"),
            false => String::new(),
        };
        let ext = match self.store_compressed {
            true => "log.fz",
            false => "log",
        };
        let mut out = Vec::new();
        let mut file = |option, prefix: &str, suffix: &str, contents| {
            out.push(LogFile {
                option,
                path: format!("{prefix}_{suffix}{number}.{ext}"),
                contents,
            })
        };
        if let Some(p) = &self.bw {
            file("write_bw_log", p, "bw", LogContents::Samples(LogKind::Bw));
        }
        if let Some(p) = &self.iops {
            file(
                "write_iops_log",
                p,
                "iops",
                LogContents::Samples(LogKind::Iops),
            );
        }
        if let Some(p) = &self.lat {
            for k in [LogKind::Slat, LogKind::Clat, LogKind::Lat] {
                file("write_lat_log", p, k.suffix(), LogContents::Samples(k));
            }
        }
        if let Some(p) = &self.hist {
            file("write_hist_log", p, "clat_hist", LogContents::Hist);
        }
        out
    }
}
