//! `ssdready run --client` (drive fio servers or ssdready servers); the
//! protocol is in `ssdready_fleet` (with the logs a client writes and its
//! summary). The server is `server_cmd`.

use crate::{fail, output, say};
use ssdready_fleet::client::{self, Host, Request};
use ssdready_fleet::iolog::{self, IoLog, STORE_COMPRESSED};
use ssdready_fleet::merge;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

/// `run --client=HOSTS …`: the `--client` values and the other arguments,
/// or `None` when there is no `--client`.
pub fn client_split(args: &[String]) -> Option<(Vec<String>, Vec<String>)> {
    let mut hosts = Vec::new();
    let mut rest = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(v) = a.strip_prefix("--client=") {
            hosts.push(v.to_string());
        } else if a == "--client" {
            hosts.push(it.next().cloned().unwrap_or_default());
        } else {
            rest.push(a.clone());
        }
    }
    (!hosts.is_empty()).then_some((hosts, rest))
}

/// The job to send (job files' text and job options), the output format
/// and file; bad input ends the command (exit 2).
fn client_args(rest: &[String]) -> (Request, String, Option<PathBuf>) {
    let mut req = Request::default();
    let (mut format, mut out_path) = ("normal".to_string(), None);
    for a in rest {
        if let Some(f) = a.strip_prefix("--output-format=") {
            if !["normal", "json", "json+"].contains(&f) {
                fail(2, &format!("option '--output-format': '{f}' with --client (allowed: normal, json, json+)"));
            }
            format = f.to_string();
        } else if let Some(p) = a.strip_prefix("--output=") {
            out_path = Some(PathBuf::from(p));
        } else if a.starts_with('-') {
            req.args.push(a.clone());
        } else {
            // Bounded as a local run's job files are (a `/dev/zero` is refused).
            let text = crate::args::read_text(std::path::Path::new(a))
                .unwrap_or_else(|e| fail(2, &format!("job file '{a}': {e}")));
            req.jobs.push(text);
        }
    }
    if req.jobs.is_empty() && !req.args.iter().any(|a| a.starts_with("--name")) {
        fail(
            2,
            "option '--client': no job to send (give a job file or --name=JOB ...)",
        );
    }
    (req, format, out_path)
}

/// Every host must answer PROBE in a version spoken here before any runs.
fn probe_all(hosts: &[Host], stop: &AtomicBool) {
    for h in hosts {
        if let Err(e) = client::probe(h, stop) {
            // Ctrl-C is 130; garbage from a host is its failure (1); an
            // unreachable host or no common version is bad input (2).
            let code = match e {
                ssdready_fleet::Error::Stopped => 130,
                ssdready_fleet::Error::Garbage(_) => 1,
                _ => 2,
            };
            fail(code, &format!("host {},{}: {e}", h.name, h.port));
        }
    }
}

/// `ssdready run --client=HOSTS [--output=FILE] [--output-format=…] JOB…`.
pub fn run_client(host_specs: &[String], rest: &[String]) {
    let mut hosts: Vec<Host> = Vec::new();
    for h in host_specs {
        hosts.extend(
            client::parse_hosts(h).unwrap_or_else(|e| fail(2, &format!("option '--client': {e}"))),
        );
    }
    let (req, format, out_path) = client_args(rest);
    let sink = match &out_path {
        Some(p) => output::check(p, "option 'output'").unwrap_or_else(|e| fail(2, &e)),
        None => output::Sink::Stdout,
    };
    let stop = crate::stop_on_signals();
    probe_all(&hosts, &stop);
    let runs = client::run_fleet(&hosts, &req, &stop);
    // Every host refused the job: bad input, nothing ran. A host that
    // failed (garbage, a message over 64 MiB, a lost connection) or a
    // Ctrl-C ends the run partial below: exit 1, or 130.
    if !stop.load(Relaxed) && runs.iter().all(|r| r.ts.is_empty() && r.refused) {
        let r = &runs[0];
        fail(
            2,
            &format!(
                "host {},{}: {}",
                r.host.name,
                r.host.port,
                r.error.as_deref().unwrap_or("")
            ),
        );
    }
    let logs = ssdready_fleet::logs::write_host_logs(&runs, &req, &write_log);
    for p in logs.problems.iter().chain(&logs.short) {
        say(&format!("fleet: {p}"));
    }
    let log_problems = logs.problems;
    let text = match format.as_str() {
        "normal" => ssdready_fleet::summary::summary(&runs),
        f => {
            let doc = merge::document(&runs, f == "json+");
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
    };
    if let Err(e) = output::write(&sink, &text) {
        fail(1, &format!("{e} (the fleet's results are lost)"));
    }
    if !log_problems.is_empty() && runs.iter().all(|r| r.complete()) {
        say("fleet: partial: not every log the hosts sent was written (see above)");
        std::process::exit(if stop.load(Relaxed) { 130 } else { 1 });
    }
    if runs.iter().any(|r| !r.complete()) {
        say("fleet: partial: not every host finished (see 'failed')");
        std::process::exit(if stop.load(Relaxed) { 130 } else { 1 });
    }
}

/// The run's worker logs as IOLOG messages of protocol `version`
/// (their samples come in fio 3.33's layout, version 97's).
pub(crate) fn to_wire(
    logs: Vec<ssdready_run::WorkerLog>,
    version: u16,
) -> Result<Vec<IoLog>, ssdready_fleet::Error> {
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

/// A log file: a regular file only, replaced atomically.
fn write_log(path: &str, bytes: &[u8]) -> Result<(), String> {
    match output::checked(std::path::Path::new(path))? {
        output::Sink::File(p) => output::replace(&p, bytes).map_err(|e| e.to_string()),
        _ => Err("not a regular file (a host's log is written to regular files only)".into()),
    }
}
