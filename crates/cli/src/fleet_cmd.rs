//! `ssdready server` (answer `fio --client`) and `ssdready run --client`
//! (drive fio servers or ssdready servers); the protocol is in
//! `ssdready_fleet`. The two calls into the run engine are in [`Engine`].

use crate::{args, fail, output, say};
use ssdready_fleet::client::{self, Host, HostRun, Request};
use ssdready_fleet::server::{JobRequest, RunOutput, Runner, Server};
use ssdready_fleet::{from_result, merge, pdu::ProbeReply};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
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

static JOB_DIRS: AtomicU64 = AtomicU64::new(0);

/// The client's job files, written to a private directory for the parser
/// (removed on drop).
struct JobFiles(PathBuf);

impl JobFiles {
    fn write(req: &JobRequest) -> Result<(JobFiles, Vec<String>), String> {
        let n = JOB_DIRS.fetch_add(1, Relaxed);
        let dir = std::env::temp_dir().join(format!("ssdready-server-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let files = JobFiles(dir);
        let mut args = Vec::new();
        for (i, text) in req.jobs.iter().enumerate() {
            let p = files.0.join(format!("job{i}.fio"));
            std::fs::write(&p, text).map_err(|e| format!("{}: {e}", p.display()))?;
            args.push(p.display().to_string());
        }
        args.extend(req.args.iter().cloned());
        Ok((files, args))
    }
}

impl Drop for JobFiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
        let logs = match crate::fleet_logs::to_wire(worker_logs, version) {
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
                du: crate::fleet_logs::disk_util(&result),
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
            let text = std::fs::read_to_string(a)
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
            fail(2, &format!("host {},{}: {e}", h.name, h.port));
        }
    }
    let runs = client::run_fleet(&hosts, &req, &stop);
    if runs
        .iter()
        .all(|r| r.ts.is_empty() && r.error.as_deref().is_some_and(|e| !e.contains("mid-run")))
    {
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
    let logs = crate::fleet_logs::write_host_logs(&runs, &req);
    for p in logs.problems.iter().chain(&logs.short) {
        say(&format!("fleet: {p}"));
    }
    let log_problems = logs.problems;
    let text = match format.as_str() {
        "normal" => summary(&runs),
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

/// The terminal summary: a line per host, the fleet, the slowest host.
fn summary(runs: &[HostRun]) -> String {
    let doc = merge::document(runs, false);
    let mut s = String::new();
    let dirs = ["read", "write", "trim"];
    let line = |v: &serde_json::Value| -> String {
        dirs.iter()
            .filter(|d| v[**d]["total_ios"].as_u64().unwrap_or(0) > 0)
            .map(|d| {
                let x = &v[*d];
                let p = &x["clat_ns"]["percentile"];
                format!(
                    "{d}: IOPS={:.0} BW={:.1}MiB/s clat p50={}ns p99={}ns p99.9={}ns",
                    x["iops"].as_f64().unwrap_or(0.0),
                    x["bw_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
                    p["50.000000"],
                    p["99.000000"],
                    p["99.900000"]
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    for (r, h) in runs
        .iter()
        .zip(doc["hosts"].as_array().into_iter().flatten())
    {
        let who = r
            .probe
            .as_ref()
            .map(|p| format!(" ({}, {})", p.hostname, p.fio_version))
            .unwrap_or_default();
        let host_doc = merge::document(std::slice::from_ref(r), false);
        match &r.error {
            None => {
                s += &format!(
                    "{},{}{}: {} jobs, {}\n",
                    r.host.name,
                    r.host.port,
                    who,
                    h["jobs"],
                    line(&host_doc["all_clients"])
                )
            }
            Some(e) => {
                s += &format!(
                    "{},{}{}: FAILED: {e} ({} jobs kept)\n",
                    r.host.name,
                    r.host.port,
                    who,
                    r.ts.len()
                )
            }
        }
    }
    s += &format!(
        "All clients ({} hosts, {} jobs): {}\n",
        doc["all_clients"]["hosts"],
        doc["all_clients"]["jobs"],
        line(&doc["all_clients"])
    );
    let slow = &doc["fleet"]["slowest"];
    if !slow.is_null() {
        s += &format!(
            "slowest host: {} ({} ms, {:.1} % of the hosts' summed time, {:.1} % past the median of the other hosts)\n",
            slow["host"].as_str().unwrap_or(""),
            slow["runtime_ms"],
            slow["share_of_fleet_time_pct"].as_f64().unwrap_or(0.0),
            slow["past_median_pct"].as_f64().unwrap_or(0.0)
        );
    }
    s
}
