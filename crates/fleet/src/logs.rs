//! The jobs' logs across fio's protocol, on the client's side: what
//! `ssdready run --client` writes from the logs its hosts send: `NAME.HOST`,
//! as fio's client names them (`NAME.HOST,PORT` when two hosts of the fleet
//! share a name).
//!
//! A host names the file; the client writes it only if the job asked for
//! it: the name must be a log of a prefix one of the job's
//! `write_{bw,lat,iops,hist}_log` options gave (or of a job's name, for an
//! option with no value), and the path passes the checks of every path
//! ssdready writes (the caller's writer: never a block device; a regular
//! file, replaced atomically).

use crate::client::{HostRun, Request};
use crate::iolog::{self, STORE_COMPRESSED};

/// Writes one log: its path and bytes; the error is one line.
pub type WriteLog<'a> = dyn Fn(&str, &[u8]) -> Result<(), String> + 'a;

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

/// Write every host's logs with `write_log` (a path, its bytes; the error
/// is one line). `reqs[i]` is what host `i` was sent (the last one for
/// the hosts past the end: one request for all).
pub fn write_host_logs(runs: &[HostRun], reqs: &[&Request], write_log: &WriteLog<'_>) -> Written {
    let mut w = Written::default();
    let (written, problems) = (&mut w.paths, &mut w.problems);
    for (i, r) in runs.iter().enumerate() {
        let prefixes = reqs
            .get(i)
            .or(reqs.last())
            .map(|q| log_prefixes(q))
            .unwrap_or_default();
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

    #[test]
    fn a_log_the_job_did_not_ask_for_is_refused_and_one_it_did_is_written_per_host() {
        let req = Request {
            args: Vec::new(),
            jobs: vec!["[r]\nwrite_lat_log=lg\n".into()],
        };
        let log = |name: &str| crate::iolog::IoLog {
            name: name.into(),
            compressed: STORE_COMPRESSED,
            data: b"0, 1, 0, 4096, 0\n".to_vec(),
            ..Default::default()
        };
        let mut run = crate::client::empty_run(&crate::client::Host {
            name: "a".into(),
            port: 8765,
            addr: "127.0.0.1:8765".parse().unwrap(),
        });
        run.version = Some(97);
        run.logs = vec![log("lg_lat.1.log"), log("/etc/passwd")];
        let seen = std::cell::RefCell::new(Vec::new());
        let w = write_host_logs(&[run], &[&req], &|p, b| {
            seen.borrow_mut().push((p.to_string(), b.to_vec()));
            Ok(())
        });
        assert_eq!(w.paths, vec!["lg_lat.1.log.a".to_string()]);
        assert_eq!(seen.borrow()[0].1, b"0, 1, 0, 4096, 0\n");
        assert_eq!(w.problems.len(), 1);
        assert!(
            w.problems[0].contains("'/etc/passwd' refused"),
            "{:?}",
            w.problems
        );
    }
}
