//! `ssdready run --client` (drive fio servers or ssdready servers); the
//! protocol is in `ssdready_fleet` (with the logs a client writes and its
//! summary). The server is `server_cmd`.

use crate::{fail, output, say};
use ssdready_cmdline::client::ClientArg;
use ssdready_fleet::client::{self, Host, HostRun, Request};
use ssdready_fleet::merge;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

/// A job file's text, bounded as a local run's job files are (a
/// `/dev/zero` is refused).
fn job_text(path: &str) -> Result<String, crate::Exit> {
    ssdready_cmdline::args::read_text(std::path::Path::new(path))
        .map_err(|e| fail(2, &format!("job file '{path}': {e}")))
}

/// Every host with the request it is sent: the shared switches, and its
/// client's own job files or else the shared ones.
fn host_requests(
    clients: &[ClientArg],
    shared: &Request,
) -> Result<Vec<(Host, Request)>, crate::Exit> {
    let mut out = Vec::new();
    for c in clients {
        let hosts = client::parse_hosts(&c.hosts)
            .map_err(|e| fail(2, &format!("option '--client': {e}")))?;
        let jobs = match c.own_jobs.is_empty() {
            true => shared.jobs.clone(),
            false => c
                .own_jobs
                .iter()
                .map(|p| job_text(p))
                .collect::<Result<_, _>>()?,
        };
        if jobs.is_empty() && !shared.args.iter().any(|a| a.starts_with("--name")) {
            return Err(fail(
                2,
                &format!(
                    "option '--client={}': no job to send (give a job file or --name=JOB ...)",
                    c.hosts
                ),
            ));
        }
        let req = Request {
            args: shared.args.clone(),
            jobs,
        };
        out.extend(hosts.into_iter().map(|h| (h, req.clone())));
    }
    Ok(out)
}

/// The shared job (job files' text and job options), the output format
/// and file; bad input ends the command (exit 2).
fn client_args(rest: &[String]) -> Result<(Request, String, Option<PathBuf>), crate::Exit> {
    let mut req = Request::default();
    let (mut format, mut out_path) = ("normal".to_string(), None);
    for a in rest {
        if let Some(f) = a.strip_prefix("--output-format=") {
            if !["normal", "json", "json+"].contains(&f) {
                return Err(fail(2, &format!("option '--output-format': '{f}' with --client (allowed: normal, json, json+)")));
            }
            format = f.to_string();
        } else if let Some(p) = a.strip_prefix("--output=") {
            out_path = Some(PathBuf::from(p));
        } else if a.starts_with('-') {
            req.args.push(a.clone());
        } else {
            req.jobs.push(job_text(a)?);
        }
    }
    Ok((req, format, out_path))
}

/// Every host must answer PROBE in a version spoken here before any runs.
fn probe_all(hosts: &[Host], stop: &AtomicBool) -> crate::Done {
    for h in hosts {
        if let Err(e) = client::probe(h, stop) {
            // Ctrl-C is 130; garbage from a host is its failure (1); an
            // unreachable host or no common version is bad input (2).
            let code = match e {
                ssdready_fleet::Error::Stopped => 130,
                ssdready_fleet::Error::Garbage(_) => 1,
                _ => 2,
            };
            return Err(fail(code, &format!("host {},{}: {e}", h.name, h.port)));
        }
    }
    Ok(())
}

/// The fleet's results in `format`: the summary, or fio's JSON (json+)
/// of every host's jobs.
fn results_text(runs: &[HostRun], format: &str) -> String {
    match format {
        "normal" => ssdready_fleet::summary::summary(runs),
        f => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let head = vec![
                (
                    "fio version".to_string(),
                    serde_json::json!(format!("ssdready-{}", env!("SSDREADY_VERSION"))),
                ),
                ("timestamp".to_string(), serde_json::json!(now)),
                (
                    "time".to_string(),
                    serde_json::json!(ssdready_report::fio_json::ctime(now)),
                ),
            ];
            let doc = merge::fio_document(runs, f == "json+", head);
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
    }
}

/// `ssdready run --client=HOSTS [--output=FILE] [--output-format=…] JOB…`.
pub fn run_client(clients: &[ClientArg], rest: &[String]) -> crate::Done {
    let (req, format, out_path) = client_args(rest)?;
    let pairs = host_requests(clients, &req)?;
    let hosts: Vec<Host> = pairs.iter().map(|(h, _)| h.clone()).collect();
    let sink = match &out_path {
        Some(p) => output::check(p, "option 'output'").map_err(|e| fail(2, &e.to_string()))?,
        None => output::Sink::Stdout,
    };
    let stop = crate::stop_on_signals()?;
    probe_all(&hosts, &stop)?;
    let runs = client::run_each(&pairs, &stop);
    // Every host refused the job: bad input, nothing ran. A host that
    // failed (garbage, a message over 64 MiB, a lost connection) or a
    // Ctrl-C ends the run partial below: exit 1, or 130.
    if !stop.load(Relaxed) && runs.iter().all(|r| r.ts.is_empty() && r.refused) {
        let r = &runs[0];
        return Err(fail(
            2,
            &format!(
                "host {},{}: {}",
                r.host.name,
                r.host.port,
                r.error.as_deref().unwrap_or("")
            ),
        ));
    }
    let sent: Vec<&Request> = pairs.iter().map(|(_, r)| r).collect();
    let logs = ssdready_fleet::logs::write_host_logs(&runs, &sent, &write_log);
    for p in logs.problems.iter().chain(&logs.short) {
        say(&format!("fleet: {p}"));
    }
    let log_problems = logs.problems;
    let text = results_text(&runs, &format);
    if let Err(e) = output::write(&sink, &text) {
        return Err(fail(1, &format!("{e} (the fleet's results are lost)")));
    }
    let code = if stop.load(Relaxed) { 130 } else { 1 };
    if !log_problems.is_empty() && runs.iter().all(|r| r.complete()) {
        let why = "fleet: partial: not every log the hosts sent was written (see above)";
        return Err(fail(code, why));
    }
    if runs.iter().any(|r| !r.complete()) {
        return Err(fail(
            code,
            "fleet: partial: not every host finished (see 'failed')",
        ));
    }
    Ok(())
}

/// A log file: a regular file only, replaced atomically.
fn write_log(path: &str, bytes: &[u8]) -> Result<(), String> {
    match output::checked(std::path::Path::new(path))? {
        output::Sink::File(p) => output::replace(&p, bytes).map_err(|e| e.to_string()),
        _ => Err("not a regular file (a host's log is written to regular files only)".into()),
    }
}
