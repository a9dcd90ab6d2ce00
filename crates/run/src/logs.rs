//! Writing fio-format logs: which files a job's options ask for, and their
//! contents (rendered by `ssdready_core::iolog` and
//! `ssdready_core::iolog_hist`). Every log path is checked before the
//! first I/O ([`check_all`]) and written atomically ([`crate::output`]).
//!
//! With `log_store_compressed=1` a log is written as fio writes it:
//! `NAME.log.fz`, zlib streams of fio's binary samples (`struct io_sample`,
//! or `io_sample_offset` with `log_offset`, as fio 3.33 lays them out on a
//! little-endian 64-bit machine: time u64, value u64, ddir u32 with bit 31
//! for `log_offset` and bit 30 for `log_prio`, priority u16, 2 bytes of
//! padding, bs u64, then the offset u64), one stream per `log_compression`
//! bytes of samples (one in all without it); `fio --inflate-log=NAME.log.fz`
//! prints the text log. `log_compression` alone changes only how fio keeps
//! the log in memory: the file is the same text.

use ssdready_core::iolog::{IoLog, LogKind, Row};
use ssdready_core::iolog_hist::HistLog;
use ssdready_core::resolved::{LogConfig, LogContents, LogFile};
use ssdready_core::spec::JobSpec;
use std::io::Write as _;
use std::path::Path;

/// The log a worker keeps, if its job asks for any log (`cfg`, the job's
/// resolved logs). Log times count from the worker's start, or with
/// `log_unix_epoch` / `log_alternate_epoch` from the epoch of the clock
/// named (read now, as fio reads it when the job starts; [`check_all`]
/// has checked it).
pub fn worker_log(cfg: &LogConfig) -> Option<IoLog> {
    if !cfg.any() {
        return None;
    }
    let epoch_ms = cfg
        .epoch_clock
        .and_then(|id| clock_ms(id).ok())
        .unwrap_or(0);
    let hist = cfg
        .hist
        .is_some()
        .then(|| HistLog::new(cfg.hist_msec, cfg.hist_coarseness, epoch_ms));
    Some(
        IoLog::new(cfg.avg_msec, cfg.offset)
            .with_prio_values(cfg.prio_values)
            .with_max_value(cfg.max_value)
            .with_both(cfg.window_both)
            .with_issue_time(cfg.issue_time)
            .with_epoch_ms(epoch_ms)
            .with_hist(hist)
            .with_max_samples(cfg.max_samples),
    )
}

/// `clock_gettime(id)` in ms, as fio's `set_epoch_time` computes it.
fn clock_ms(id: i32) -> nix::Result<u64> {
    let ts = nix::time::clock_gettime(nix::time::ClockId::from_raw(id))?;
    Ok(ts.tv_sec() as u64 * 1000 + ts.tv_nsec() as u64 / 1_000_000)
}

/// (path, contents) of every log file worker `number` (1-based in the
/// run) of a job with logs `cfg` writes: with `per_job_logs=0` there is no
/// number in the name, and the workers' lines share the file
/// ([`merge_shared`]).
pub fn files_for(cfg: &LogConfig, number: u32, log: &IoLog) -> Vec<(String, Vec<u8>)> {
    cfg.files(number)
        .into_iter()
        .map(|f| {
            let bytes = match f.contents {
                LogContents::Hist => log.hist_text().unwrap_or_default().as_bytes().to_vec(),
                LogContents::Samples(k) if cfg.store_compressed => {
                    compressed(log, &log.rows(k), cfg.compression)
                }
                LogContents::Samples(k) => log.render(k).into_bytes(),
            };
            (f.path, bytes)
        })
        .collect()
}

/// A worker's sample log as fio's server sends it to its client (the
/// IOLOG message): the file name fio would give it, the worker's number,
/// fio's log type (1 latency, 4 bw, 5 iops), and the samples
/// in fio's binary layout (`samples`) — or, with `log_store_compressed`,
/// the `.log.fz` bytes as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerLog {
    pub name: String,
    pub number: u32,
    pub log_type: u32,
    pub offsets: bool,
    pub prio: bool,
    pub nr_samples: u64,
    pub data: Vec<u8>,
    pub stored_compressed: bool,
}

/// Where a run puts its workers' sample logs instead of writing them
/// ([`crate::RunRequest::log_sink`]).
pub type LogSink = std::sync::Arc<std::sync::Mutex<Vec<WorkerLog>>>;

/// Bound the sample logs of `jobs` to `max` samples in all
/// ([`crate::RunRequest::log_samples_max`]): each worker that keeps a log
/// gets an even share (at least one).
pub fn bound(jobs: &mut [crate::prepared::PreparedJob], max: u64) {
    let logging = |j: &crate::prepared::PreparedJob| j.resolved.logs.any();
    let workers: u64 = jobs
        .iter()
        .filter(|j| logging(j))
        .map(|j| u64::from(j.spec.numjobs))
        .sum();
    let share = (max / workers.max(1)).max(1);
    for j in jobs.iter_mut().filter(|j| logging(j)) {
        std::sync::Arc::make_mut(&mut j.resolved).logs.max_samples = Some(share);
    }
}

/// The error of a worker whose log reached its bound.
pub fn full_error(cfg: &LogConfig) -> String {
    let max = cfg.max_samples.unwrap_or(0);
    format!(
        "job '{}': its sample logs reached {max} {} per worker, the most this run may hold \
         (about {} MiB): the job stopped there; average them (log_avg_msec, e.g. \
         log_avg_msec=100) or shorten the job",
        cfg.job,
        if cfg.avg_msec == 0 {
            "samples"
        } else {
            "windows"
        },
        (max * 48).div_ceil(1 << 20)
    )
}

/// fio's `IO_LOG_TYPE_*` of a sample log, as fio 3.33's server sends it:
/// its three latency logs all go as `IO_LOG_TYPE_LAT` (captured).
fn log_type(k: LogKind) -> u32 {
    match k {
        LogKind::Lat | LogKind::Clat | LogKind::Slat => 1,
        LogKind::Bw => 4,
        LogKind::Iops => 5,
    }
}

/// Put a worker's sample logs in `sink`; what cannot be sent this way
/// (`write_hist_log`) comes back as warnings.
pub fn send(sink: &LogSink, cfg: &LogConfig, number: u32, log: &IoLog) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut out = Vec::new();
    for LogFile {
        option,
        path: name,
        contents,
    } in cfg.files(number)
    {
        let LogContents::Samples(k) = contents else {
            warnings.push(format!(
                "job '{}': {option} ({name}) is not sent to the client: only sample logs \
                 (write_bw_log, write_lat_log, write_iops_log) are",
                cfg.job
            ));
            continue;
        };
        let rows = log.rows(k);
        let stored = cfg.store_compressed;
        let data = if stored {
            compressed(log, &rows, cfg.compression)
        } else {
            samples(log, &rows)
        };
        out.push(WorkerLog {
            name,
            number,
            log_type: log_type(k),
            offsets: log.offsets(),
            prio: log.prio_values(),
            nr_samples: if stored { 0 } else { rows.len() as u64 },
            data,
            stored_compressed: stored,
        });
    }
    // A worker that panicked holding the lock poisoned it: the logs count.
    sink.lock().unwrap_or_else(|p| p.into_inner()).extend(out);
    warnings
}

/// fio's bits in a sample's ddir field.
const LOG_OFFSET_SAMPLE_BIT: u32 = 0x8000_0000;
const LOG_PRIO_SAMPLE_BIT: u32 = 0x4000_0000;

/// `rows` as fio's binary samples.
fn samples(log: &IoLog, rows: &[Row]) -> Vec<u8> {
    let size = if log.offsets() { 40 } else { 32 };
    let mut flags = 0;
    if log.offsets() {
        flags |= LOG_OFFSET_SAMPLE_BIT;
    }
    if log.prio_values() {
        flags |= LOG_PRIO_SAMPLE_BIT;
    }
    let mut out = Vec::with_capacity(rows.len() * size);
    for r in rows {
        out.extend_from_slice(&r.t_ms.to_le_bytes());
        out.extend_from_slice(&r.value.to_le_bytes());
        out.extend_from_slice(&(u32::from(r.ddir) | flags).to_le_bytes());
        out.extend_from_slice(&r.prio.to_le_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&u64::from(r.bs).to_le_bytes());
        if log.offsets() {
            out.extend_from_slice(&r.offset.to_le_bytes());
        }
    }
    out
}

/// fio's `.log.fz`: zlib streams (default level, as fio's
/// `Z_DEFAULT_COMPRESSION`) of the binary samples, `chunk` bytes of
/// samples each (whole samples; 0: one stream).
fn compressed(log: &IoLog, rows: &[Row], chunk: u64) -> Vec<u8> {
    let raw = samples(log, rows);
    let size = if log.offsets() { 40 } else { 32 };
    let per = if chunk == 0 {
        raw.len().max(1)
    } else {
        (chunk as usize / size).max(1) * size
    };
    let mut out = Vec::new();
    for piece in raw.chunks(per) {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing to a Vec cannot fail.
        let _ = z.write_all(piece);
        out.extend(z.finish().unwrap_or_default());
    }
    out
}

/// Log files of the same path (workers of `per_job_logs=0` jobs) as one,
/// their texts one after another in worker order — fio appends each
/// worker's lines to the shared file.
pub fn merge_shared(files: Vec<(String, Vec<u8>)>) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::with_capacity(files.len());
    for (path, bytes) in files {
        match out.iter_mut().find(|(p, _)| *p == path) {
            Some((_, b)) => b.extend_from_slice(&bytes),
            None => out.push((path, bytes)),
        }
    }
    out
}

/// Check, before the first I/O, that every log file the jobs will write can
/// be written, and that the clocks their times count from can be read.
/// Workers are numbered from 1 in job order, `numjobs` each, as the run
/// numbers them.
/// `paths` false: the logs go to a [`LogSink`], only the clocks are checked.
pub fn check_all(specs: &[JobSpec], paths: bool) -> Result<(), String> {
    let mut number = 1u32;
    let mut dirs_checked = std::collections::HashSet::new();
    for s in specs {
        let cfg = LogConfig::new(s);
        if let Some(id) = cfg.epoch_clock {
            clock_ms(id).map_err(|e| {
                format!(
                    "job '{}': option 'log_alternate_epoch_clock_id': clock {id} cannot be read ({e}); \
                     allowed: a clock id of clock_gettime(2), e.g. 0 (CLOCK_REALTIME) or 1 (CLOCK_MONOTONIC)",
                    s.name
                )
            })?;
        }
        for _ in 0..s.numjobs {
            let files = if paths { cfg.files(number) } else { Vec::new() };
            for LogFile { option, path, .. } in files {
                let path = Path::new(&path);
                // A new file in a directory already checked needs no check.
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                if !dirs_checked.insert(dir) && !path.exists() {
                    continue;
                }
                let what = format!("job '{}': option '{option}'", s.name);
                crate::output::check(path, &what)?;
            }
            number += 1;
        }
    }
    Ok(())
}

/// Write one log file; the error names it.
pub fn write(path: &str, bytes: &[u8]) -> Result<(), String> {
    let sink = crate::output::check(Path::new(path), "log")?;
    match (std::str::from_utf8(bytes), &sink) {
        (Ok(text), _) => Ok(crate::output::write(&sink, text)?),
        (Err(_), crate::output::Sink::File(p)) => {
            crate::output::replace(p, bytes).map_err(|e| format!("writing {}: {e}", p.display()))
        }
        (Err(_), _) => Err(format!(
            "{path}: a compressed log (log_store_compressed) can only be written to a regular file"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::req::Ddir;
    use std::io::Read as _;

    /// The logs of a job `j` written as `options` (key, value) say.
    fn config(options: &[(&str, &str)]) -> LogConfig {
        let mut s = JobSpec {
            name: "j".into(),
            ..JobSpec::default()
        };
        for (k, v) in options {
            (ssdready_core::options::find(k).unwrap().set)(&mut s, v).unwrap();
        }
        LogConfig::new(&s)
    }

    /// A log of `n` reads.
    fn reads(n: u64) -> IoLog {
        let mut log = IoLog::new(0, false);
        for i in 0..n {
            log.record(i * 1_000_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        }
        log
    }

    #[test]
    fn each_worker_has_its_own_numbered_files() {
        let cfg = config(&[("write_bw_log", ""), ("write_iops_log", "io")]);
        let files: Vec<(String, usize)> = [(1, reads(2)), (2, reads(3))]
            .iter()
            .flat_map(|(n, log)| files_for(&cfg, *n, log))
            .map(|(p, b)| (p, String::from_utf8(b).unwrap().lines().count()))
            .collect();
        let want = [
            ("j_bw.1.log", 2),
            ("io_iops.1.log", 2),
            ("j_bw.2.log", 3),
            ("io_iops.2.log", 3),
        ];
        let want: Vec<(String, usize)> = want.iter().map(|(p, n)| (p.to_string(), *n)).collect();
        assert_eq!(files, want);
    }

    #[test]
    fn per_job_logs_0_puts_every_workers_lines_in_one_file() {
        let cfg = config(&[("write_lat_log", ""), ("per_job_logs", "0")]);
        let mut files = files_for(&cfg, 1, &reads(2));
        files.extend(files_for(&cfg, 2, &reads(3)));
        let merged = merge_shared(files);
        let got: Vec<(&str, usize)> = merged
            .iter()
            .map(|(p, b)| (p.as_str(), b.split(|&c| c == b'\n').count() - 1))
            .collect();
        assert_eq!(
            got,
            [("j_slat.log", 5), ("j_clat.log", 5), ("j_lat.log", 5)]
        );
    }

    #[test]
    fn compressed_samples_are_fios_io_sample_layout() {
        let mut log = IoLog::new(0, true).with_prio_values(true);
        log.record_prio(3_000_000, Ddir::Write, 4096, 8192, [1, 2, 3], 0x6001);
        let z = compressed(&log, &log.rows(LogKind::Clat), 0);
        let mut raw = Vec::new();
        flate2::read::ZlibDecoder::new(&z[..])
            .read_to_end(&mut raw)
            .unwrap();
        assert_eq!(raw.len(), 40);
        assert_eq!(u64::from_le_bytes(raw[0..8].try_into().unwrap()), 3);
        assert_eq!(u64::from_le_bytes(raw[8..16].try_into().unwrap()), 2);
        assert_eq!(
            u32::from_le_bytes(raw[16..20].try_into().unwrap()),
            1 | LOG_OFFSET_SAMPLE_BIT | LOG_PRIO_SAMPLE_BIT
        );
        assert_eq!(u16::from_le_bytes(raw[20..22].try_into().unwrap()), 0x6001);
        assert_eq!(u64::from_le_bytes(raw[24..32].try_into().unwrap()), 4096);
        assert_eq!(u64::from_le_bytes(raw[32..40].try_into().unwrap()), 8192);
    }

    #[test]
    fn log_compression_cuts_streams_at_whole_samples() {
        let mut log = IoLog::new(0, false);
        for i in 0..100 {
            log.record(i * 1_000_000, Ddir::Read, 4096, 0, [1, 2, 3]);
        }
        let rows = log.rows(LogKind::Lat);
        let one = compressed(&log, &rows, 0);
        let many = compressed(&log, &rows, 1024);
        // 3200 bytes of samples in 1024-byte chunks: 4 zlib streams (each
        // starts with 0x78 0x9c), not 1.
        let streams = |b: &[u8]| {
            let mut n = 0;
            let mut rest = b;
            while !rest.is_empty() {
                let mut d = flate2::bufread::ZlibDecoder::new(rest);
                let mut out = Vec::new();
                d.read_to_end(&mut out).unwrap();
                assert_eq!(out.len() % 32, 0);
                rest = &rest[d.total_in() as usize..];
                n += 1;
            }
            n
        };
        assert_eq!(streams(&one), 1);
        assert_eq!(streams(&many), 4);
    }
}
