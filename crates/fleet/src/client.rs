//! Drive fio servers (or ssdready servers): one thread per host, each
//! PROBE → JOBLINE/JOB → RUN → (SEND_ETA while running) → TS, GS, TEXT →
//! STOP, QUIT. A host that does not answer, dies mid-run or sends garbage
//! is named with what happened; what it sent before is kept and the other
//! hosts' results are unaffected.

use crate::iolog::IoLog;
use crate::pdu::{self, DiskUtil, ProbeReply};
use crate::tstat::{GroupStats, TsPdu};
use crate::wire::{self, op, Wait};
use crate::{Error, VERSIONS};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::unix::fs::FileTypeExt;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// How long a host may take to accept the connection and answer PROBE.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a running host may stay silent (it is asked for its ETA every
/// second, which fio answers even with no job running).
pub const SILENCE_TIMEOUT: Duration = Duration::from_secs(15);

/// One host to drive, as named and as resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// As the user wrote it (without fio's `ip:` / `ip6:` prefix).
    pub name: String,
    pub port: u16,
    pub addr: SocketAddr,
}

/// A host, a host list or a host file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error("host '{host}': local sockets are not supported (allowed: HOST[,PORT])")]
    LocalSocket { host: String },
    #[error("host '{host}': unclosed '[' (allowed: [ADDR]:PORT)")]
    UnclosedBracket { host: String },
    #[error("host '{host}': port '{port}' (allowed: 1 to 65535)")]
    Port { host: String, port: String },
    /// The name did not resolve.
    #[error("host '{host}': {err}")]
    Resolve { host: String, err: std::io::Error },
    #[error("host '{host}': no address")]
    NoAddress { host: String },
    #[error(
        "host file '{spec}': is a FIFO (allowed: a regular file of hosts, or HOST[,PORT] list)"
    )]
    Fifo { spec: String },
    /// A host file that could not be read, or holds no text.
    #[error("host file '{spec}': {why}")]
    File { spec: String, why: HostFileError },
    #[error("no host in '{spec}' (allowed: HOST[,PORT], a list, or a host file)")]
    NoHost { spec: String },
}

/// Why a host file's text could not be had.
#[derive(Debug, thiserror::Error)]
pub enum HostFileError {
    #[error("{0}")]
    Io(std::io::Error),
    #[error("larger than 1 MiB (allowed: a file of host names)")]
    TooLarge,
    #[error("not text (allowed: a file of host names)")]
    NotText,
}

/// Parse one host as fio's `--client` takes it: `HOST`, `HOST,PORT`,
/// `ip:HOST,PORT`, `ip6:HOST,PORT`, or `HOST:PORT` / `[V6]:PORT`.
pub fn parse_host(s: &str) -> Result<Host, HostError> {
    let s = s.trim();
    let (v6, rest) = if let Some(r) = s.strip_prefix("ip6:") {
        (true, r)
    } else if let Some(r) = s.strip_prefix("ip4:").or_else(|| s.strip_prefix("ip:")) {
        (false, r)
    } else {
        (false, s)
    };
    if rest.starts_with("sock:") || s.starts_with("sock:") {
        return Err(HostError::LocalSocket { host: s.into() });
    }
    let (name, port) = if let Some((h, p)) = rest.rsplit_once(',') {
        (h.to_string(), Some(p))
    } else if let Some(r) = rest.strip_prefix('[') {
        let (h, p) = r
            .split_once(']')
            .ok_or_else(|| HostError::UnclosedBracket { host: s.into() })?;
        (h.to_string(), p.strip_prefix(':'))
    } else if !v6 && rest.matches(':').count() == 1 {
        let (h, p) = rest.split_once(':').expect("one colon");
        (h.to_string(), Some(p))
    } else {
        (rest.to_string(), None)
    };
    let port = match port {
        None | Some("") => crate::DEFAULT_PORT,
        Some(p) => p
            .parse::<u16>()
            .ok()
            .filter(|&p| p > 0)
            .ok_or_else(|| HostError::Port {
                host: s.into(),
                port: p.into(),
            })?,
    };
    // fio: no host name (`,8765`) is this host; the name stays empty, as
    // fio's results give it.
    let connect_to = if name.is_empty() {
        "localhost"
    } else {
        name.as_str()
    };
    let addr = (connect_to, port)
        .to_socket_addrs()
        .map_err(|err| HostError::Resolve {
            host: s.into(),
            err,
        })?
        .find(|a| a.is_ipv6() == v6 || !v6)
        .ok_or_else(|| HostError::NoAddress { host: s.into() })?;
    Ok(Host { name, port, addr })
}

/// The most a host file may hold (read stops one byte past it, so a
/// `/dev/zero` or a runaway file costs no more memory than this).
pub const MAX_HOST_FILE_BYTES: u64 = 1 << 20;

/// A host file's text, read up to [`MAX_HOST_FILE_BYTES`] + 1 bytes.
fn read_host_file(p: &std::path::Path) -> Result<String, HostFileError> {
    use std::io::Read;
    let f = std::fs::File::open(p).map_err(HostFileError::Io)?;
    let mut bytes = Vec::new();
    f.take(MAX_HOST_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(HostFileError::Io)?;
    if bytes.len() as u64 > MAX_HOST_FILE_BYTES {
        return Err(HostFileError::TooLarge);
    }
    String::from_utf8(bytes).map_err(|_| HostFileError::NotText)
}

/// The hosts of `--client`: a file with one host per line (`#` comments),
/// or a comma-free list separated by spaces or semicolons.
pub fn parse_hosts(spec: &str) -> Result<Vec<Host>, HostError> {
    let p = std::path::Path::new(spec);
    let text = match std::fs::metadata(p) {
        Ok(m) if m.file_type().is_fifo() => return Err(HostError::Fifo { spec: spec.into() }),
        Ok(m) if !m.is_dir() => read_host_file(p).map_err(|why| HostError::File {
            spec: spec.into(),
            why,
        })?,
        _ => spec.replace(';', "\n"),
    };
    let hosts: Vec<Host> = text
        .lines()
        .flat_map(|l| l.split_whitespace().take_while(|w| !w.starts_with('#')))
        .map(parse_host)
        .collect::<Result<_, _>>()?;
    if hosts.is_empty() {
        return Err(HostError::NoHost { spec: spec.into() });
    }
    Ok(hosts)
}

/// What to send each host.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// Arguments for JOBLINE (fio's own name is put first), if any.
    pub args: Vec<String>,
    /// Job files' text, one JOB each.
    pub jobs: Vec<String>,
}

/// What one host did.
#[derive(Clone, Debug)]
pub struct HostRun {
    pub host: Host,
    pub version: Option<u16>,
    pub probe: Option<ProbeReply>,
    /// Jobs and result blocks the host announced (START).
    pub jobs_announced: u32,
    pub stats_announced: u32,
    pub ts: Vec<TsPdu>,
    pub groups: Vec<GroupStats>,
    /// Text the host sent (its log lines).
    pub text: String,
    /// The jobs' sample logs the host sent (IOLOG), inflated.
    pub logs: Vec<IoLog>,
    /// Logs refused (corrupted, or inflating past their declared size),
    /// each named; the rest of the host's results are kept.
    pub log_errors: Vec<String>,
    /// Disk utilisation the host sent (DU).
    pub du: Vec<DiskUtil>,
    /// Whether the host agreed to zlib at PROBE.
    pub zlib: bool,
    /// The run's error and signal (STOP).
    pub stop: Option<(u32, u32)>,
    /// What went wrong, if anything.
    pub error: Option<String>,
    /// The host refused the job, or speaks no version spoken here (bad
    /// input: exit code 2 when every host did), as opposed to failing.
    pub refused: bool,
    /// Seconds from RUN to the last result.
    pub wall_s: f64,
    /// The job files' global options as the host read them (JOB_OPT),
    /// for fio's `global options`.
    pub global_options: Vec<(String, String)>,
}

impl HostRun {
    /// Finished cleanly with every result block it announced.
    pub fn complete(&self) -> bool {
        self.error.is_none()
            && self.stop.is_some_and(|s| s == (0, 0))
            && self.ts.len() as u32 >= self.stats_announced
    }
}

/// Connect and PROBE, trying each spoken version until one is answered
/// (a fio of another version closes the connection at once).
fn connect(h: &Host, stop: &AtomicBool) -> Result<(TcpStream, u16, ProbeReply), Error> {
    let mut last = None;
    for v in VERSIONS {
        let mut s = TcpStream::connect_timeout(&h.addr, CONNECT_TIMEOUT)
            .map_err(|e| Error::Io(format!("connect: {e}")))?;
        let _ = s.set_nodelay(true);
        wire::send(
            &mut s,
            v,
            op::PROBE,
            1,
            // zlib offered, as fio's client: only logs come compressed.
            &pdu::client_probe(pdu::PROBE_ZLIB, &h.addr.ip().to_string()),
        )?;
        let w = Wait {
            stop,
            deadline: Some(Instant::now() + CONNECT_TIMEOUT),
        };
        match wire::recv(&mut s, &VERSIONS, &w) {
            Ok(Some(m)) if m.opcode == op::PROBE => {
                if m.version != v {
                    return Err(Error::Version {
                        got: m.version,
                        spoken: vec![v],
                    });
                }
                return Ok((s, v, ProbeReply::parse(&m.payload)?));
            }
            Ok(Some(m)) if m.opcode == op::TEXT => {
                // An ssdready server refusing the version says why.
                last = Some(Error::Refused(
                    pdu::parse_text(&m.payload)?.trim().to_string(),
                ));
            }
            Ok(Some(m)) => {
                return Err(Error::Garbage(format!(
                    "{} in answer to PROBE",
                    op::name(m.opcode)
                )))
            }
            Ok(None) => {
                last = Some(Error::Refused(format!(
                    "closed the connection at PROBE (a fio speaking none of versions {VERSIONS:?}?)"
                )))
            }
            Err(e @ Error::Version { .. }) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(Error::Timeout))
}

/// Check that a host answers PROBE in a version spoken here (then hang up).
pub fn probe(h: &Host, stop: &AtomicBool) -> Result<(u16, ProbeReply), Error> {
    connect(h, stop).map(|(_, v, p)| (v, p))
}

/// Drive one host through a run.
pub fn run_host(h: &Host, req: &Request, stop: &AtomicBool) -> HostRun {
    let mut r = empty_run(h);
    if let Err(e) = drive(h, req, stop, &mut r) {
        r.refused = matches!(e, Error::Refused(_) | Error::Version { .. });
        r.error = Some(e.to_string());
    }
    r
}

/// The job (its options as a JOBLINE, its files as JOBs), then RUN.
fn send_job(s: &mut TcpStream, v: u16, req: &Request) -> Result<(), Error> {
    if !req.args.is_empty() {
        let mut args = vec!["fio".to_string()];
        args.extend(req.args.iter().cloned());
        wire::send(s, v, op::JOBLINE, 0, &pdu::jobline(&args))?;
    }
    for j in &req.jobs {
        wire::send(s, v, op::JOB, 0, &pdu::job(j))?;
    }
    wire::send(s, v, op::RUN, 0, &[])
}

/// One message from the server into `r`; true when the server quit after
/// running the job (a QUIT before any result, with no STOP or a STOP
/// carrying an error, is the job refused).
fn take(r: &mut HostRun, v: u16, m: &wire::Message, t0: Instant) -> Result<bool, Error> {
    match m.opcode {
        op::START => {
            let (jobs, stats) = pdu::parse_start(&m.payload)?;
            r.jobs_announced += jobs;
            r.stats_announced += stats;
        }
        op::TS => {
            r.ts.push(TsPdu::parse(v, &m.payload)?);
            r.wall_s = t0.elapsed().as_secs_f64();
        }
        op::GS => r.groups.push(GroupStats::parse(&m.payload)?),
        op::TEXT => r.text.push_str(&pdu::parse_text(&m.payload)?),
        op::STOP => r.stop = Some(pdu::parse_stop(&m.payload)?),
        op::IOLOG => match IoLog::parse(v, &m.payload) {
            Ok(l) => r.logs.push(l),
            Err(e) => r.log_errors.push(e.to_string()),
        },
        op::DU => r.du.push(DiskUtil::parse(&m.payload)?),
        op::QUIT => {
            if r.ts.is_empty() && r.stop.is_none_or(|(error, _)| error != 0) {
                let why = r.text.trim();
                return Err(Error::Refused(if why.is_empty() {
                    "quit without running (the job was refused)".into()
                } else {
                    why.lines().last().unwrap_or(why).to_string()
                }));
            }
            return Ok(true);
        }
        op::JOB_OPT => {
            let (global, name, value) = pdu::parse_job_opt(&m.payload)?;
            if global {
                r.global_options.push((name, value));
            }
        }
        // Progress: not needed for the result.
        op::ETA | op::SERVER_START | op::ADD_JOB => {}
        other => {
            return Err(Error::Garbage(format!(
                "unexpected {} from the server",
                op::name(other)
            )))
        }
    }
    Ok(false)
}

/// Run the job on one host: connect, send it, then take the server's
/// messages into `r` until it quits, asking for progress while it is quiet.
fn drive(h: &Host, req: &Request, stop: &AtomicBool, r: &mut HostRun) -> Result<(), Error> {
    let (mut s, v, probe) = connect(h, stop)?;
    r.version = Some(v);
    r.zlib = probe.flags & pdu::PROBE_ZLIB != 0;
    r.probe = Some(probe);
    send_job(&mut s, v, req)?;
    let t0 = Instant::now();
    let mut last_heard = Instant::now();
    let mut next_eta = Instant::now() + Duration::from_secs(1);
    loop {
        let w = Wait {
            stop,
            deadline: Some(Instant::now() + Duration::from_millis(250)),
        };
        let m = match wire::recv(&mut s, &[v], &w) {
            Ok(Some(m)) => m,
            Ok(None) => {
                return Err(Error::Io(if r.stop.is_some() {
                    "closed the connection after STOP without QUIT".into()
                } else {
                    format!(
                        "connection lost mid-run: closed by the server ({} of {} result blocks received)",
                        r.ts.len(),
                        r.stats_announced
                    )
                }))
            }
            Err(Error::Timeout) => {
                if last_heard.elapsed() > SILENCE_TIMEOUT {
                    return Err(Error::Io(format!(
                        "silent for {} s mid-run",
                        SILENCE_TIMEOUT.as_secs()
                    )));
                }
                if Instant::now() >= next_eta {
                    wire::send(&mut s, v, op::SEND_ETA, 2, &[])?;
                    next_eta = Instant::now() + Duration::from_secs(1);
                }
                continue;
            }
            Err(Error::Io(e)) => {
                return Err(Error::Io(format!(
                    "connection lost mid-run: {e} ({} of {} result blocks received)",
                    r.ts.len(),
                    r.stats_announced
                )))
            }
            Err(Error::Stopped) => {
                // Ask the host to stop its jobs; keep what came.
                let _ = wire::send(&mut s, v, op::QUIT, 0, &[]);
                return Err(Error::Stopped);
            }
            Err(e) => return Err(e),
        };
        last_heard = Instant::now();
        if take(r, v, &m, t0)? {
            return Ok(());
        }
    }
}

/// Drive every host at once; one result per host, in the given order.
pub fn run_fleet(hosts: &[Host], req: &Request, stop: &AtomicBool) -> Vec<HostRun> {
    let pairs: Vec<(Host, Request)> = hosts.iter().map(|h| (h.clone(), req.clone())).collect();
    run_each(&pairs, stop)
}

/// Drive every host at once with its own request (fio's client: each
/// `--client` may have job files of its own); one result per host, in
/// the given order.
pub fn run_each(pairs: &[(Host, Request)], stop: &AtomicBool) -> Vec<HostRun> {
    std::thread::scope(|sc| {
        let handles: Vec<_> = pairs
            .iter()
            .map(|(h, req)| sc.spawn(move || run_host(h, req, stop)))
            .collect();
        handles
            .into_iter()
            .zip(pairs.iter().map(|(h, _)| h))
            .map(|(t, h)| {
                t.join().unwrap_or_else(|_| {
                    let mut r = empty_run(h);
                    r.error = Some("internal error: the host's thread panicked".into());
                    r
                })
            })
            .collect()
    })
}

pub(crate) fn empty_run(h: &Host) -> HostRun {
    HostRun {
        host: h.clone(),
        version: None,
        probe: None,
        jobs_announced: 0,
        stats_announced: 0,
        ts: Vec::new(),
        groups: Vec::new(),
        text: String::new(),
        logs: Vec::new(),
        log_errors: Vec::new(),
        du: Vec::new(),
        zlib: false,
        stop: None,
        error: None,
        refused: false,
        wall_s: 0.0,
        global_options: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_as_fios_client_option() {
        let h = parse_host("ip:127.0.0.1,4444").unwrap();
        assert_eq!((h.name.as_str(), h.port), ("127.0.0.1", 4444));
        assert_eq!(parse_host("127.0.0.1").unwrap().port, 8765);
        assert_eq!(parse_host("127.0.0.1:9").unwrap().port, 9);
        let h = parse_host("ip6:::1,4444").unwrap();
        assert!(h.addr.is_ipv6());
        assert_eq!(parse_host("[::1]:5").unwrap().port, 5);
        assert!(parse_host("127.0.0.1,99999").is_err());
        assert!(parse_host("sock:/tmp/x").is_err());
        assert_eq!(parse_hosts("127.0.0.1,1;127.0.0.1,2").unwrap().len(), 2);
        // A comment ends its line, not the list.
        let h = parse_hosts("# the fleet;127.0.0.1,1 # first;127.0.0.1,2").unwrap();
        assert_eq!(h.iter().map(|h| h.port).collect::<Vec<_>>(), [1, 2]);
        assert!(parse_hosts("# none").is_err());
    }

    #[test]
    fn an_endless_host_file_is_read_no_further_than_1_mib() {
        let e = parse_hosts("/dev/zero").unwrap_err().to_string();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        let d = std::env::temp_dir().join(format!("ssdready-hosts-{}", std::process::id()));
        std::fs::write(&d, "127.0.0.1,1\n".repeat(100_000)).unwrap();
        let e = parse_hosts(d.to_str().unwrap()).unwrap_err().to_string();
        let _ = std::fs::remove_file(&d);
        assert!(e.contains("larger than 1 MiB"), "{e}");
    }

    #[test]
    fn an_empty_host_list_does_not_name_the_option_itself() {
        // The caller names `--client` once.
        let e = parse_hosts("").unwrap_err().to_string();
        assert!(!e.contains("--client") && e.contains("no host"), "{e}");
    }
}
