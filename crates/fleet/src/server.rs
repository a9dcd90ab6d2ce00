//! Answer an unmodified `fio --client`: the job runs on the caller's engine
//! ([`Runner`]) and the results go back as fio's own structures, so fio's
//! per-host output, its "All clients" totals, json and json+ come out of
//! fio itself.
//!
//! One run at a time: a client claims the server with its job (JOB,
//! JOBLINE or RUN; not by connecting or probing), and a second client is
//! then told the server is busy and dismissed. A client speaking a protocol
//! version not spoken here is told, in its own version's TEXT message, which
//! versions are, and dismissed. Every connection is first put to
//! [`Runner::admit`] (who may connect, and who it is: see
//! [`crate::policy`]). A refused client gets its reason as a TEXT message
//! and a STOP carrying an error ([`Refusal`]: fio's client then exits 1),
//! and is read to its end, so that fio's client prints it rather than dying
//! of SIGPIPE. Before it is accepted, a connection's first message must come
//! within [`Limits::first_wait`] and be small ([`FIRST_MAX`]); an accepted
//! client that stays silent for [`Limits::idle`] before RUN is let go, and
//! when [`MAX_OPEN`] connections are open, the oldest that has not claimed
//! the server is let go for a new one: no one holds the server by saying
//! nothing, or by opening many connections. Every wait ends on the stop
//! flag within about 100 ms.

use crate::iolog::{IoLog, STORE_COMPRESSED, XMIT_COMPRESSED};
pub use crate::listen::Client;
use crate::listen::{Listener, Stream};
use crate::pdu::{self, DiskUtil, ProbeReply};
use crate::tstat::{GroupStats, TsPdu};
use crate::wire::{self, op, Conn, Wait};
use crate::{fio_of, Error, VERSIONS};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// What a client asked for: JOBLINE arguments (without fio's own name) and
/// job files' text; who asked, and whether its logs go compressed.
#[derive(Clone, Debug, Default)]
pub struct JobRequest {
    pub args: Vec<String>,
    pub jobs: Vec<String>,
    /// Who the client is, as [`Runner::admit`] told.
    pub who: Identity,
    /// Whether the client agreed to zlib at PROBE (its jobs' logs then go
    /// compressed).
    pub zlib: bool,
}

/// Who a client is, as far as the server could tell: the local user (and
/// group, when the kernel said it) of its process; none for a client that
/// cannot be identified (another host).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Identity {
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

/// A run's results already encoded as the messages that go back (in the
/// connection's version, from the first TEXT or IOLOG to QUIT), read as
/// they are sent: a run done in another process hands them over so.
pub struct Encoded(pub Box<dyn Read + Send>);

impl std::fmt::Debug for Encoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Encoded(..)")
    }
}

/// A run's results, in the connection's protocol version.
#[derive(Debug, Default)]
pub struct RunOutput {
    pub ts: Vec<TsPdu>,
    pub groups: Vec<GroupStats>,
    /// Non-zero: the run failed (fio's `error`, an errno-like code).
    pub error: u32,
    /// Lines for the client (warnings, the failure).
    pub text: String,
    /// The jobs' sample logs, sent before the results (each an IOLOG,
    /// compressed when the client agreed to zlib at PROBE).
    pub logs: Vec<IoLog>,
    /// Disk utilisation of the block devices the jobs used, sent after
    /// the group totals.
    pub du: Vec<DiskUtil>,
    /// The job files' global options, sent (JOB_OPT) before the first
    /// job's results, as fio's server sends them for the client's
    /// `global options`.
    pub global_options: Vec<(String, String)>,
    /// The results as encoded messages, sent instead of the fields above.
    pub encoded: Option<Encoded>,
}

/// The engine behind the server.
pub trait Runner: Sync {
    /// Check a request before it runs: `Ok(jobs)` (result blocks that the
    /// run will send), or why it is refused, in one line.
    fn plan(&self, req: &JobRequest) -> Result<u32, String>;
    /// Run it; `version` is the layout the results must be in.
    fn run(&self, req: &JobRequest, version: u16, stop: Arc<AtomicBool>) -> RunOutput;
    /// What PROBE answers: this host's name, the engine's name and version.
    fn probe(&self) -> ProbeReply;
    /// Whether `client` may be served, and who it is; the refusal in one
    /// line. The default admits everyone, unidentified.
    fn admit(&self, client: &Client) -> Result<Identity, String> {
        let _ = client;
        Ok(Identity::default())
    }
}

/// The largest first message (fio's PROBE is a few dozen bytes).
pub const FIRST_MAX: usize = 64 << 10;

/// The largest message before the client has claimed the server (a job
/// file, as large as a local run reads one).
pub const JOB_MAX: usize = 16 << 20;

/// How long a client may stay silent.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// A new connection, before its first message (5 s).
    pub first_wait: Duration,
    /// An accepted client, between messages before RUN (10 s).
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            first_wait: Duration::from_secs(5),
            idle: Duration::from_secs(10),
        }
    }
}

/// A listening server.
pub struct Server {
    listener: Listener,
    limits: Limits,
}

impl Server {
    /// Listen on `addr` (a port in use is an error, said in one line).
    pub fn bind(addr: SocketAddr) -> Result<Server, Error> {
        Ok(Server {
            listener: Listener::tcp(addr)?,
            limits: Limits::default(),
        })
    }

    /// Listen on a Unix socket at `path`, made with file mode `mode` (who
    /// may connect is first the file's permission); see [`crate::listen`].
    pub fn bind_unix(path: &Path, mode: u32) -> Result<Server, Error> {
        Ok(Server {
            listener: Listener::unix(path, mode)?,
            limits: Limits::default(),
        })
    }

    /// The same server with other silence limits.
    pub fn with_limits(mut self, limits: Limits) -> Server {
        self.limits = limits;
        self
    }

    /// The TCP address listened on (none for a Unix socket).
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve until `stop` (or, with `runs`, after that many runs).
    pub fn serve(
        &self,
        runner: &dyn Runner,
        stop: &AtomicBool,
        runs: Option<u32>,
        log: &(dyn Fn(&str) + Sync),
    ) -> Result<(), Error> {
        let busy = AtomicBool::new(false);
        let open = AtomicU32::new(0);
        let done = AtomicU32::new(0);
        let waiting = Waiting::default();
        std::thread::scope(|sc| {
            while !stop.load(Relaxed) && runs.is_none_or(|n| done.load(Relaxed) < n) {
                match self.listener.accept() {
                    Ok((s, peer)) => {
                        // A connection claims the server with its job, not by
                        // connecting or probing: a readiness check that
                        // connects and leaves must not turn the next client
                        // away. When too many are open, the oldest that has
                        // not claimed the server makes room.
                        if open.load(Relaxed) >= MAX_OPEN && !waiting.let_oldest_go()
                            || open.load(Relaxed) >= 2 * MAX_OPEN
                        {
                            log(&format!("client {peer} refused: too many connections"));
                            continue;
                        }
                        open.fetch_add(1, Relaxed);
                        let (id, evicted) = waiting.add();
                        let (busy, done, open, waiting) = (&busy, &done, &open, &waiting);
                        let limits = self.limits;
                        let who = match runner.admit(&peer) {
                            Ok(who) => who,
                            Err(why) => {
                                sc.spawn(move || {
                                    log(&format!("client {peer} refused: {why}"));
                                    dismiss(s, &why, stop, &evicted);
                                    waiting.remove(id);
                                    open.fetch_sub(1, Relaxed);
                                });
                                continue;
                            }
                        };
                        sc.spawn(move || {
                            log(&format!("client {peer} connected"));
                            let place = Place {
                                waiting,
                                id,
                                evicted,
                            };
                            match connection(s, runner, stop, busy, limits, who, &place) {
                                Ok(true) => {
                                    done.fetch_add(1, Relaxed);
                                    log(&format!("client {peer}: run done"))
                                }
                                Ok(false) => log(&format!("client {peer}: left")),
                                Err(e) => log(&format!("client {peer}: {e}")),
                            }
                            waiting.remove(id);
                            open.fetch_sub(1, Relaxed);
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    Err(e) => log(&format!("accept: {e}")),
                }
            }
        });
        Ok(())
    }
}

/// Connections held open at once before the oldest one that has not
/// claimed the server is let go for a new one.
pub const MAX_OPEN: u32 = 32;

/// The connections that have not claimed the server, oldest first, each
/// with the flag that lets it go.
#[derive(Default)]
struct Waiting {
    next: AtomicU64,
    list: Mutex<VecDeque<(u64, Arc<AtomicBool>)>>,
}

impl Waiting {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(u64, Arc<AtomicBool>)>> {
        self.list.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new connection: its number and the flag that lets it go.
    fn add(&self) -> (u64, Arc<AtomicBool>) {
        let id = self.next.fetch_add(1, Relaxed);
        let flag = Arc::new(AtomicBool::new(false));
        self.lock().push_back((id, flag.clone()));
        (id, flag)
    }

    /// Connection `id` claimed the server, or ended.
    fn remove(&self, id: u64) {
        self.lock().retain(|(i, _)| *i != id);
    }

    /// Let the oldest waiting connection go; false when none waits.
    fn let_oldest_go(&self) -> bool {
        match self.lock().pop_front() {
            Some((_, flag)) => {
                flag.store(true, Relaxed);
                true
            }
            None => false,
        }
    }
}

/// A connection's place among those waiting.
struct Place<'a> {
    waiting: &'a Waiting,
    id: u64,
    /// Set when a newer connection took its place.
    evicted: Arc<AtomicBool>,
}

/// The server's one run, held by the connection that claimed it.
struct Claim<'a>(&'a AtomicBool);

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.0.store(false, Relaxed);
    }
}

/// Read the client's first message and answer, in its version, that it
/// cannot be served (unless the server stops, or a newer connection takes
/// this one's place, first).
fn dismiss(mut s: Stream, why: &str, stop: &AtomicBool, evicted: &AtomicBool) {
    let end = Instant::now() + Duration::from_secs(2);
    let v = loop {
        if stop.load(Relaxed) || evicted.load(Relaxed) || Instant::now() >= end {
            return;
        }
        let w = Wait {
            stop,
            deadline: Some(Instant::now() + wire::POLL),
        };
        match wire::recv_at_most(&mut *s, &VERSIONS, &w, FIRST_MAX) {
            Ok(Some(m)) => break m.version,
            Err(Error::Version { got, .. }) => break got,
            Err(Error::Timeout) => continue,
            _ => return,
        }
    };
    refuse(&mut *s, v, why, Refusal::NotAdmitted, stop);
}

/// Why a client is refused, as the error number its STOP carries: fio's
/// client prints `client <host>: exited with error N` and exits 1, where a
/// bare QUIT would leave it exiting 0 with only the TEXT line said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Refusal {
    /// The job (its options, paths or limits): EINVAL.
    Job = 22,
    /// Another client holds the server: EBUSY.
    Busy = 16,
    /// The connecting user may not drive this server: EACCES.
    NotAdmitted = 13,
    /// A protocol version or message this server does not take: EPROTO.
    Protocol = 71,
    /// The client went quiet before RUN: ETIMEDOUT.
    Quiet = 110,
}

/// Tell the client why (a TEXT line, a STOP with the refusal's error, then
/// QUIT), and read what it still sends until it closes (at most 2 s):
/// fio's client goes on sending its job before it reads, and a closed
/// socket would kill it with SIGPIPE before it printed the reason.
fn refuse(s: &mut dyn Conn, version: u16, why: &str, kind: Refusal, stop: &AtomicBool) {
    let line = format!("ssdready server: {why}\n");
    let _ = wire::send(s, version, op::TEXT, 0, &pdu::text(1, &line));
    let _ = wire::send(s, version, op::STOP, 0, &pdu::stop(kind as u32, 0));
    let _ = wire::send(s, version, op::QUIT, 0, &[]);
    s.shutdown_write();
    drain(s, Duration::from_secs(2), stop);
}

/// Read and drop what the peer sends until it closes, `limit`, or `stop`.
fn drain(s: &mut dyn Conn, limit: Duration, stop: &AtomicBool) {
    let end = Instant::now() + limit;
    let _ = s.set_read_timeout(Some(wire::POLL));
    let mut buf = [0u8; 4096];
    while Instant::now() < end && !stop.load(Relaxed) {
        match s.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return,
        }
    }
}

/// One client's session. `Ok(true)`: a run was done and answered.
fn connection(
    s: Stream,
    runner: &dyn Runner,
    stop: &AtomicBool,
    busy: &AtomicBool,
    limits: Limits,
    who: Identity,
    place: &Place<'_>,
) -> Result<bool, Error> {
    let mut ss = Session::new(s, stop, who);
    let mut running: Option<(mpsc::Receiver<RunOutput>, Instant)> = None;
    let mut heard = Instant::now();
    std::thread::scope(|sc| loop {
        if let Some((rx, _)) = &running {
            if let Ok(out) = rx.try_recv() {
                let v = ss.version.expect("a version before RUN");
                send_results(&mut *ss.s, v, ss.zlib, out)?;
                linger(&mut *ss.s, stop);
                return Ok(true);
            }
        }
        if stop.load(Relaxed) {
            ss.run_stop.store(true, Relaxed);
        }
        // A newer connection took the place of this one, which had not
        // claimed the server.
        if ss.claim.is_none() && place.evicted.load(Relaxed) {
            return Ok(false);
        }
        let m = match ss.next(running.is_some(), stop, ss.max_message())? {
            Next::Message(m) => m,
            Next::Again if running.is_none() => match ss.quiet_too_long(heard, &limits) {
                Some(end) => return end,
                None => continue,
            },
            Next::Again => continue,
            Next::Closed => return Ok(false),
        };
        heard = Instant::now();
        let v = *ss.version.get_or_insert(m.version);
        if matches!(m.opcode, op::JOB | op::JOBLINE | op::RUN) {
            ss.claim_server(v, busy)?;
            place.waiting.remove(place.id);
        }
        match m.opcode {
            op::PROBE => ss.probe(&m, v, runner)?,
            op::JOBLINE | op::JOB if running.is_none() => ss.job(&m, v, runner)?,
            op::RUN if running.is_none() => {
                ss.announce_run(v)?;
                let (tx, rx) = mpsc::channel();
                let (req, run_stop) = (ss.req.clone(), ss.run_stop.clone());
                sc.spawn(move || {
                    let _ = tx.send(runner.run(&req, v, run_stop));
                });
                running = Some((rx, Instant::now()));
            }
            op::SEND_ETA => ss.eta(&m, v, running.as_ref().map(|r| r.1))?,
            op::QUIT => {
                ss.run_stop.store(true, Relaxed);
                if running.is_none() {
                    return Ok(false);
                }
            }
            op::EXIT => {
                ss.run_stop.store(true, Relaxed);
                return Ok(false);
            }
            other => return Err(ss.unsupported(v, other)),
        }
    })
}

impl<'a> Session<'a> {
    /// A session on `s` with `who`'s request yet to come.
    fn new(s: Stream, stop: &'a AtomicBool, who: Identity) -> Self {
        Session {
            stop,
            claim: None,
            s,
            req: JobRequest {
                who,
                ..JobRequest::default()
            },
            version: None,
            planned: 0,
            zlib: false,
            run_stop: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The largest message taken next: a whole run's once the server is
    /// claimed, a job's once the client spoke, else a first message's.
    fn max_message(&self) -> usize {
        match (&self.claim, self.version) {
            (Some(_), _) => wire::MAX_MESSAGE,
            (None, Some(_)) => JOB_MAX,
            (None, None) => FIRST_MAX,
        }
    }

    /// Before RUN, a client quiet too long is let go: `Some` of how the
    /// session ends, `None` to keep waiting.
    fn quiet_too_long(&mut self, heard: Instant, limits: &Limits) -> Option<Result<bool, Error>> {
        match (self.claim.is_some(), self.version) {
            (false, _) if heard.elapsed() >= limits.first_wait => Some(Ok(false)),
            (true, Some(v)) if heard.elapsed() >= limits.idle => {
                let why = format!(
                    "no message for {:.1} s before RUN: this client is let go",
                    limits.idle.as_secs_f64()
                );
                Some(Err(self.refuse(v, why, Refusal::Quiet)))
            }
            _ => None,
        }
    }

    /// The server for this client alone, from its first message on; a
    /// second client is refused while one is served.
    fn claim_server(&mut self, v: u16, busy: &'a AtomicBool) -> Result<(), Error> {
        if self.claim.is_none() {
            if busy.swap(true, Relaxed) {
                return Err(self.refuse(
                    v,
                    "busy: this server runs one client at a time".into(),
                    Refusal::Busy,
                ));
            }
            self.claim = Some(Claim(busy));
        }
        Ok(())
    }

    /// RUN: one SERVER_START per job announced (a RUN without a job is
    /// refused).
    fn announce_run(&mut self, v: u16) -> Result<(), Error> {
        if self.planned == 0 {
            return Err(self.refuse(v, "RUN without a job".into(), Refusal::Job));
        }
        for _ in 0..self.planned {
            wire::send(&mut *self.s, v, op::SERVER_START, 0, &[])?;
        }
        Ok(())
    }

    /// A message this server does not take: the client is told why and
    /// any run stopped.
    fn unsupported(&mut self, v: u16, opcode: u16) -> Error {
        let why = format!(
            "{} is not supported by this server (job files are sent by the client)",
            op::name(opcode)
        );
        let e = self.refuse(v, why, Refusal::Protocol);
        self.run_stop.store(true, Relaxed);
        e
    }
}

/// A client's session as its messages arrive: the jobs asked for, the
/// protocol version spoken, the jobs announced, and the stop flag of its run.
struct Session<'a> {
    /// The server's stop flag.
    stop: &'a AtomicBool,
    /// The server's one run, once this client has claimed it.
    claim: Option<Claim<'a>>,
    s: Stream,
    req: JobRequest,
    /// The client's version, from its first message on.
    version: Option<u16>,
    /// Jobs announced to the client so far (START).
    planned: u32,
    /// Whether the jobs' logs go compressed (agreed at PROBE).
    zlib: bool,
    run_stop: Arc<AtomicBool>,
}

/// What the next receive brought.
enum Next {
    Message(wire::Message),
    /// Nothing yet: poll again.
    Again,
    /// The client closed the connection.
    Closed,
}

impl Session<'_> {
    /// The next message, within one poll interval. While a run is going,
    /// the stop flag only stops the run; its results still go back.
    fn next(&mut self, running: bool, stop: &AtomicBool, max: usize) -> Result<Next, Error> {
        let never = AtomicBool::new(false);
        let w = Wait {
            stop: if running { &never } else { stop },
            deadline: Some(Instant::now() + wire::POLL),
        };
        let spoken: &[u16] = match self.version {
            Some(ref v) => std::slice::from_ref(v),
            None => &VERSIONS,
        };
        match wire::recv_at_most(&mut *self.s, spoken, &w, max) {
            Ok(Some(m)) => Ok(Next::Message(m)),
            Ok(None) => {
                self.run_stop.store(true, Relaxed);
                Ok(Next::Closed)
            }
            Err(Error::Timeout) => Ok(Next::Again),
            Err(Error::Version { got, .. }) => {
                refuse(
                    &mut *self.s,
                    got,
                    &unspoken_version(got),
                    Refusal::Protocol,
                    stop,
                );
                self.run_stop.store(true, Relaxed);
                Err(Error::Refused(format!(
                    "client spoke protocol version {got}"
                )))
            }
            Err(e) => {
                self.run_stop.store(true, Relaxed);
                Err(e)
            }
        }
    }

    /// Refuse the client (a line, a STOP with the refusal's error, then
    /// QUIT): the session's error.
    fn refuse(&mut self, v: u16, why: String, kind: Refusal) -> Error {
        // Free the server before waiting for this client to close.
        self.claim = None;
        refuse(&mut *self.s, v, &why, kind, self.stop);
        Error::Refused(why)
    }

    /// SEND_ETA: the jobs running and for how long (none before RUN).
    fn eta(&mut self, m: &wire::Message, v: u16, started: Option<Instant>) -> Result<(), Error> {
        let (n, elapsed) = match started {
            Some(t0) => (self.planned, t0.elapsed().as_secs()),
            None => (0, 0),
        };
        let eta = pdu::eta(n, elapsed, 0, [0; 3], [0; 3]);
        wire::send(&mut *self.s, v, op::ETA, m.tag, &eta)
    }

    /// PROBE: this host's reply; zlib when the client offers it, as fio's
    /// server (only the jobs' logs are compressed).
    fn probe(&mut self, m: &wire::Message, v: u16, runner: &dyn Runner) -> Result<(), Error> {
        let flags = pdu::client_probe_flags(&m.payload)?;
        let mut p = runner.probe();
        self.zlib = flags & pdu::PROBE_ZLIB != 0;
        self.req.zlib = self.zlib;
        p.flags = if self.zlib { pdu::PROBE_ZLIB } else { 0 };
        wire::send(&mut *self.s, v, op::PROBE, m.tag, &p.bytes())
    }

    /// JOBLINE or JOB: add to the request, and announce the jobs it adds
    /// (START), refusing a request the runner cannot plan.
    fn job(&mut self, m: &wire::Message, v: u16, runner: &dyn Runner) -> Result<(), Error> {
        let req = &mut self.req;
        if m.opcode == op::JOBLINE {
            let args = pdu::jobline_args(&m.payload)?;
            req.args.extend(args.into_iter().skip(1));
        } else {
            req.jobs.push(pdu::job_text(&m.payload)?);
        }
        let defines_jobs = !req.jobs.is_empty() || req.args.iter().any(|a| a.starts_with("--name"));
        let total = if defines_jobs {
            match runner.plan(req) {
                Ok(n) => n,
                Err(why) => return Err(self.refuse(v, why, Refusal::Job)),
            }
        } else {
            0
        };
        // fio's client adds up what each START announces.
        let new = total.saturating_sub(self.planned);
        self.planned = total;
        wire::send(&mut *self.s, v, op::START, 0, &pdu::start(new, new))
    }
}

/// The refusal of a protocol version not spoken here, naming those that are.
fn unspoken_version(got: u16) -> String {
    format!(
        "fio protocol version {got} is not spoken here; spoken: {}",
        VERSIONS
            .iter()
            .map(|v| format!("{v} ({})", fio_of(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The results to the client: encoded by the run, copied as they come;
/// otherwise encoded here ([`write_results`]).
fn send_results(s: &mut dyn Conn, v: u16, zlib: bool, out: RunOutput) -> Result<(), Error> {
    match out.encoded {
        Some(Encoded(mut r)) => std::io::copy(&mut r, s)
            .map(drop)
            .map_err(|e| Error::Io(format!("sending the results: {e}"))),
        None => write_results(s, v, zlib, &out),
    }
}

/// The logs (IOLOG), the global options (JOB_OPT), TS per job, GS per
/// group, DU per disk, STOP with the run's error, QUIT: fio's server's
/// order, in protocol version `v`; the logs compressed when `zlib`.
pub fn write_results(w: &mut dyn Write, v: u16, zlib: bool, out: &RunOutput) -> Result<(), Error> {
    let mut send = |opcode: u16, payload: &[u8]| {
        w.write_all(&wire::encode(v, opcode, 0, payload))
            .map_err(|e| Error::Io(format!("sending {}: {e}", op::name(opcode))))
    };
    if !out.text.is_empty() {
        let level = u32::from(out.error != 0);
        send(op::TEXT, &pdu::text(level, &out.text))?;
    }
    for l in &out.logs {
        let mut l = l.clone();
        if l.compressed != STORE_COMPRESSED {
            l.compressed = if zlib { XMIT_COMPRESSED } else { 0 };
        }
        let bytes = l.encode(v, 0)?;
        w.write_all(&bytes)
            .map_err(|e| Error::Io(format!("sending IOLOG: {e}")))?;
    }
    let mut send = |opcode: u16, payload: &[u8]| {
        w.write_all(&wire::encode(v, opcode, 0, payload))
            .map_err(|e| Error::Io(format!("sending {}: {e}", op::name(opcode))))
    };
    for (k, val) in &out.global_options {
        send(op::JOB_OPT, &pdu::job_opt(true, 0, k, val))?;
    }
    for t in &out.ts {
        send(op::TS, &t.bytes())?;
    }
    for g in &out.groups {
        send(op::GS, &g.bytes())?;
    }
    for d in &out.du {
        send(op::DU, &d.bytes())?;
    }
    send(op::STOP, &pdu::stop(out.error, 0))?;
    send(op::QUIT, &[])
}

/// Give the client a moment to read and close first.
fn linger(s: &mut dyn Conn, stop: &AtomicBool) {
    let w = Wait {
        stop,
        deadline: Some(Instant::now() + Duration::from_secs(2)),
    };
    while let Ok(Some(_)) = wire::recv(s, &VERSIONS, &w) {}
}
