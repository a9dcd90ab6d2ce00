//! The jobs' logs and disk figures across fio's protocol: what
//! `ssdready server` sends (the run's sample logs as IOLOG messages, its
//! block devices' utilisation as DU), and what `ssdready run --client`
//! writes from the logs its hosts send: `NAME.HOST`, as fio's client names
//! them (`NAME.HOST,PORT` when two hosts of the fleet share a name).
//!
//! A host names the file; the client writes it only if the job asked for
//! it: the name must be a log of a prefix one of the job's
//! `write_{bw,lat,iops,hist}_log` options gave (or of a job's name, for an
//! option with no value), and the path passes the checks of every path
//! ssdready writes (never a block device; a regular file, replaced
//! atomically).

use ssdready_core::result::RunResult;
use ssdready_fleet::client::{HostRun, Request};
use ssdready_fleet::iolog::{self, IoLog, STORE_COMPRESSED};
use ssdready_fleet::pdu::DiskUtil;
use ssdready_fleet::Error;
use ssdready_run::{output, WorkerLog};
use std::path::Path;

/// The run's worker logs as IOLOG messages of protocol `version`
/// (their samples come in fio 3.33's layout, version 97's).
pub fn to_wire(logs: Vec<WorkerLog>, version: u16) -> Result<Vec<IoLog>, Error> {
    logs.into_iter()
        .map(|w| {
            let mut l = IoLog {
                nr_samples: w.nr_samples,
                thread_number: w.number,
                log_type: w.log_type,
                compressed: if w.stored_compressed {
                    STORE_COMPRESSED
                } else {
                    0
                },
                per_job_logs: 1,
                name: w.name,
                data: w.data,
                ..Default::default()
            };
            if version != 97 && !w.stored_compressed {
                l.data = iolog::encode_samples(version, &l.samples(97)?)?;
            }
            Ok(l)
        })
        .collect()
}

/// The block devices' utilisation over the run, one DU per disk (a disk
/// in several phases summed), as fio's server sends it.
pub fn disk_util(result: &RunResult) -> Vec<DiskUtil> {
    let mut out: Vec<DiskUtil> = Vec::new();
    for p in &result.phases {
        for d in &p.disks {
            let i = match out.iter().position(|u| u.name == d.name) {
                Some(i) => i,
                None => {
                    out.push(DiskUtil {
                        name: d.name.clone(),
                        ..Default::default()
                    });
                    out.len() - 1
                }
            };
            let u = &mut out[i];
            u.ios[0] += d.read_ios;
            u.ios[1] += d.write_ios;
            u.merges[0] += d.read_merges;
            u.merges[1] += d.write_merges;
            u.sectors[0] += d.read_sectors;
            u.sectors[1] += d.write_sectors;
            u.ticks[0] += d.read_ticks_ms;
            u.ticks[1] += d.write_ticks_ms;
            u.io_ticks += d.io_ticks_ms;
            u.time_in_queue += d.time_in_queue_ms;
            u.msec += p.window_ns / 1_000_000;
        }
    }
    out
}

/// The log options' prefixes a request names, and its jobs' names (the
/// prefix of a log option given no value).
fn log_prefixes(req: &Request) -> Vec<String> {
    const OPTS: [&str; 4] = [
        "write_bw_log",
        "write_lat_log",
        "write_iops_log",
        "write_hist_log",
    ];
    let mut out = Vec::new();
    let lines = req
        .jobs
        .iter()
        .flat_map(|t| t.lines())
        .map(str::trim)
        .chain(req.args.iter().map(|a| a.trim_start_matches('-')));
    for l in lines {
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            out.push(name.trim().to_string());
        } else if let Some(name) = l.strip_prefix("name=") {
            out.push(name.trim().to_string());
        } else if let Some(o) = OPTS.iter().find(|o| l.starts_with(**o)) {
            let v = l[o.len()..].trim_start();
            if let Some(v) = v.strip_prefix('=') {
                out.push(v.trim().to_string());
            }
        }
    }
    out.retain(|p| !p.is_empty() && p != "global");
    out
}

/// Whether `name` is a log file a job with these prefixes writes:
/// `PREFIX_KIND[.N].log[.fz]`.
fn asked_for(name: &str, prefixes: &[String]) -> bool {
    let Some(stem) = name
        .strip_suffix(".log")
        .or_else(|| name.strip_suffix(".log.fz"))
    else {
        return false;
    };
    let stem = match stem.rsplit_once('.') {
        Some((s, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => s,
        _ => stem,
    };
    ["_clat_hist", "_bw", "_iops", "_slat", "_clat", "_lat"]
        .iter()
        .filter_map(|k| stem.strip_suffix(k))
        .any(|p| prefixes.iter().any(|q| q == p))
}

/// What became of the logs the hosts sent.
#[derive(Default)]
pub struct Written {
    /// The paths written.
    pub paths: Vec<String>,
    /// One line per log refused or not written (the run is partial).
    pub problems: Vec<String>,
    /// One line per log written with fewer samples than its host declared
    /// (fio's server cuts its zlib stream short; the run is not partial).
    pub short: Vec<String>,
}

/// Write every host's logs.
pub fn write_host_logs(runs: &[HostRun], req: &Request) -> Written {
    let prefixes = log_prefixes(req);
    let mut w = Written::default();
    let (written, problems) = (&mut w.paths, &mut w.problems);
    for r in runs {
        let shared = runs.iter().filter(|o| o.host.name == r.host.name).count() > 1;
        let host = if shared {
            format!("{},{}", r.host.name, r.host.port)
        } else {
            r.host.name.clone()
        };
        let who = format!("host {},{}", r.host.name, r.host.port);
        problems.extend(r.log_errors.iter().map(|e| format!("{who}: {e}")));
        let version = r.version.unwrap_or(97);
        for l in &r.logs {
            if l.log_type == iolog::LOG_TYPE_HIST {
                problems.push(format!(
                    "{who}: log '{}' not written: histogram logs are not decoded here",
                    l.name
                ));
                continue;
            }
            if !asked_for(&l.name, &prefixes) {
                problems.push(format!(
                    "{who}: log '{}' refused: the job names no such log (allowed: PREFIX_KIND[.N].log of its write_*_log options)",
                    l.name
                ));
                continue;
            }
            let path = format!("{}.{host}", l.name);
            let bytes = if l.compressed == STORE_COMPRESSED {
                Ok(l.data.clone())
            } else {
                l.text(version).map(String::into_bytes)
            };
            let res = bytes
                .map_err(|e| e.to_string())
                .and_then(|b| write_log(&path, &b));
            match res {
                Ok(()) => {
                    let held = l.held(version);
                    if held < l.nr_samples {
                        w.short.push(format!(
                            "{who}: log '{path}': {held} of the {} samples it declared \
                             (its zlib stream ended early, as fio's server sends it; \
                             fio's own client fills the rest from uninitialized memory)",
                            l.nr_samples
                        ));
                    }
                    written.push(path)
                }
                Err(e) => problems.push(format!("{who}: log '{path}': {e}")),
            }
        }
    }
    w
}

/// A log file: a regular file only, replaced atomically.
fn write_log(path: &str, bytes: &[u8]) -> Result<(), String> {
    match output::checked(Path::new(path))? {
        output::Sink::File(p) => output::replace(&p, bytes).map_err(|e| e.to_string()),
        _ => Err("not a regular file (a host's log is written to regular files only)".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_logs_the_job_asked_for_are_written() {
        let req = Request {
            args: vec!["--write_iops_log=fleet/io".into()],
            jobs: vec!["[global]\nwrite_lat_log=lg\n[r]\nwrite_bw_log\n".into()],
        };
        let p = log_prefixes(&req);
        for ok in [
            "lg_lat.1.log",
            "lg_clat.12.log",
            "lg_slat.log",
            "r_bw.1.log",
            "fleet/io_iops.2.log",
            "lg_lat.1.log.fz",
        ] {
            assert!(asked_for(ok, &p), "{ok}");
        }
        for bad in [
            "/etc/passwd",
            "lg_lat.1.txt",
            "other_lat.1.log",
            "../lg_lat.1.log",
            "lg_foo.1.log",
            "global_bw.1.log",
        ] {
            assert!(!asked_for(bad, &p), "{bad}");
        }
    }
}
