//! `ssdready server` (answer `fio --client`) and `ssdready run --client`
//! (drive fio servers or ssdready servers); the protocol is in
//! `ssdready_fleet` (with the logs a client writes and its summary). The
//! two calls into the run engine are in [`Engine`].

use crate::{args, fail, output, say};
use ssdready_fleet::client::{self, Host, Request};
use ssdready_fleet::iolog::{self, IoLog, STORE_COMPRESSED};
use ssdready_fleet::server::{JobFiles, JobRequest, RunOutput, Runner, Server};
use ssdready_fleet::{from_result, merge, pdu::ProbeReply};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

#[derive(clap::Args)]
pub struct ServerArgs {
    /// Address to listen on: 127.0.0.1 (this host only) unless another is
    /// named (e.g. 0.0.0.0 or :: to serve the network).
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// TCP port (fio's default 8765).
    #[arg(long, default_value_t = ssdready_fleet::DEFAULT_PORT)]
    port: u16,
    /// Exit after this many client runs (default: serve until interrupted).
    #[arg(long)]
    runs: Option<u32>,
}

/// `ssdready server`.
pub fn server_command(a: ServerArgs) {
    let ip: IpAddr = a.bind.trim_matches(['[', ']']).parse().unwrap_or_else(|_| {
        fail(2, &format!("option '--bind': '{}' is not an IP address (allowed: e.g. 127.0.0.1, ::1, 0.0.0.0)", a.bind))
    });
    let addr = SocketAddr::new(ip, a.port);
    let server = Server::bind(addr).unwrap_or_else(|e| fail(2, &format!("option '--port': {e}")));
    let stop = crate::stop_on_signals();
    say(&format!(
        "server: listening on {} (fio protocol versions {:?}); drive it with fio --client=ip:{},{}",
        server.local_addr().unwrap_or(addr),
        ssdready_fleet::VERSIONS,
        ip,
        a.port
    ));
    let log = |m: &str| say(&format!("server: {m}"));
    if let Err(e) = server.serve(&Engine, &stop, a.runs, &log) {
        fail(1, &format!("server: {e}"));
    }
}

/// The run engine behind `ssdready server`: a job is checked and run
/// exactly as `ssdready run` would (same validation, same safety checks).
struct Engine;

fn parse(args: &[String]) -> Result<args::RunArgs, String> {
    let mut parsed = args::parse(args).map_err(|e| e.to_string())?;
    parsed.quiet = true;
    parsed.eta = args::Eta::Never;
    Ok(parsed)
}

impl Runner for Engine {
    fn plan(&self, req: &JobRequest) -> Result<u32, String> {
        let (_files, args) = JobFiles::write(req)?;
        let parsed = parse(&args)?;
        let request = parsed.request(Arc::new(AtomicBool::new(false)));
        let specs = ssdready_run::resolve(
            &request,
            ssdready_emu::memory::TimeBase::Real,
            &mut ssdready_run::SilentObserver,
        )
        .map_err(|f| f.message().to_string())?;
        Ok(specs.len() as u32)
    }

    fn run(&self, req: &JobRequest, version: u16, stop: Arc<AtomicBool>) -> RunOutput {
        let failed = |error: u32, text: String| RunOutput {
            error,
            text: format!("ssdready: {text}\n"),
            ..Default::default()
        };
        let (_files, args) = match JobFiles::write(req) {
            Ok(x) => x,
            Err(e) => return failed(5, e),
        };
        let parsed = match parse(&args) {
            Ok(p) => p,
            Err(e) => return failed(22, e),
        };
        let mut request = parsed.request(stop);
        // The jobs' logs go to the client, as fio's server sends them.
        let sink = ssdready_run::LogSink::default();
        request.log_sink = Some(sink.clone());
        let result = match ssdready_run::execute(request, &mut ssdready_run::SilentObserver) {
            Ok(r) => r,
            Err(f) => return failed(f.exit_code() as u32, f.message().to_string()),
        };
        let worker_logs = std::mem::take(&mut *sink.lock().unwrap_or_else(|p| p.into_inner()));
        let logs = match to_wire(worker_logs, version) {
            Ok(l) => l,
            Err(e) => return failed(70, e.to_string()),
        };
        let mut text: String = result
            .warnings
            .iter()
            .filter(|w| w.contains("is not sent to the client"))
            .map(|w| format!("ssdready: {w}\n"))
            .collect();
        text.extend(result.failure.as_ref().map(|f| format!("ssdready: {f}\n")));
        match from_result::fio_results(&result, version) {
            Ok((ts, groups)) => RunOutput {
                ts,
                groups,
                error: u32::from(result.failure.is_some()),
                text,
                logs,
                du: from_result::disk_util(&result),
            },
            Err(e) => failed(70, e.to_string()),
        }
    }

    fn probe(&self) -> ProbeReply {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        ProbeReply {
            hostname: host.trim().to_string(),
            fio_version: format!("ssdready-{}", env!("CARGO_PKG_VERSION")),
            // fio's os_linux and arch_x86_64 (what fio 3.33 sends on Linux x86-64).
            os: 1,
            arch: if cfg!(target_arch = "x86_64") { 1 } else { 0 },
            bpp: std::mem::size_of::<usize>() as u8,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            ..Default::default()
        }
    }
}

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

/// `ssdready run --client=HOSTS [--output=FILE] [--output-format=…] JOB…`.
pub fn run_client(host_specs: &[String], rest: &[String]) {
    let mut hosts: Vec<Host> = Vec::new();
    for h in host_specs {
        hosts.extend(
            client::parse_hosts(h).unwrap_or_else(|e| fail(2, &format!("option '--client': {e}"))),
        );
    }
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
    let sink = match &out_path {
        Some(p) => output::check(p, "option 'output'").unwrap_or_else(|e| fail(2, &e)),
        None => output::Sink::Stdout,
    };
    let stop = crate::stop_on_signals();
    // Every host must answer PROBE in a version spoken here before any runs.
    for h in &hosts {
        if let Err(e) = client::probe(h, &stop) {
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
fn to_wire(
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
