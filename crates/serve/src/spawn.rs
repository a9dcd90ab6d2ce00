//! The server's side of a job's process ([`crate::job`]): started for each
//! check and each run of a client's job, with the client's credentials
//! when the server takes them and with the server's limits; what it
//! answers read with bounds; every wait ended by the stop flag (within
//! about 100 ms) or by the job's time limit.
//!
//! The process is re-executed from this program (`/proc/self/exe`), not
//! forked from the server's threads, with an environment reduced to
//! `PATH`, the locale and ssdready's own variables (the server's other
//! variables are not the client's to expand in a job file). It leads a
//! process group of its own: a stop or a time limit sends SIGTERM to the
//! group (the run ends and still sends what it measured), then SIGKILL
//! after [`GRACE`].

use crate::job::{Order, Planned};
use ssdready_fleet::server::Encoded;
use std::io::{Read, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// What one job may use.
#[derive(Clone, Copy, Debug)]
pub struct JobLimits {
    /// Bytes of memory (`RLIMIT_DATA`).
    pub memory: u64,
    /// Open files, and files in all.
    pub files: u64,
    /// Workers (threads doing I/O) in all.
    pub workers: u64,
    /// How long a run may take.
    pub time: Duration,
}

/// The user a job runs as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Creds {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

/// How long a job's check may take (parsing, resolving its files).
pub const PLAN_TIME: Duration = Duration::from_secs(30);

/// How long a stopped job has to send its results before it is killed.
pub const GRACE: Duration = Duration::from_secs(10);

/// The last bytes of a job's standard error kept for messages.
const ERR_TAIL: usize = 4096;

/// A started job's process.
pub struct Job {
    child: Child,
    out: Option<ChildStdout>,
    err: Arc<Mutex<String>>,
    limits: JobLimits,
}

impl Drop for Job {
    fn drop(&mut self) {
        signal(&self.child, nix::sys::signal::Signal::SIGKILL);
        let _ = self.child.wait();
    }
}

fn signal(child: &Child, sig: nix::sys::signal::Signal) {
    // The job leads its own process group: its commands go with it.
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(child.id() as i32), sig);
}

/// Start `cmd` from a thread that lives as long as the server: a job's
/// process ends when the thread that started it does (it asks the kernel
/// for SIGKILL when its parent goes, `PR_SET_PDEATHSIG`, which is the
/// starting thread's end), and the threads that serve a client come and go.
fn spawn_for_life(cmd: Command) -> std::io::Result<Child> {
    type Ask = (Command, mpsc::Sender<std::io::Result<Child>>);
    static SPAWNER: std::sync::OnceLock<Mutex<mpsc::Sender<Ask>>> = std::sync::OnceLock::new();
    let tx = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Ask>();
        std::thread::spawn(move || {
            for (mut cmd, answer) in rx {
                let _ = answer.send(cmd.spawn());
            }
        });
        Mutex::new(tx)
    });
    let (atx, arx) = mpsc::channel();
    let sent = tx
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .send((cmd, atx));
    match sent.ok().and_then(|()| arx.recv().ok()) {
        Some(r) => r,
        None => Err(std::io::Error::other(
            "the server's starter of jobs is gone",
        )),
    }
}

/// The variables a job's process keeps from the server's environment.
fn kept(name: &std::ffi::OsStr) -> bool {
    let n = name.to_string_lossy();
    n == "PATH" || n == "LANG" || n.starts_with("LC_") || n.starts_with("SSDREADY_")
}

/// Start a job's process for `order`, as `creds` when given.
pub fn start(order: &Order, creds: Option<&Creds>, limits: JobLimits) -> Result<Job, String> {
    use std::os::unix::process::CommandExt;
    // This very program, even if its file was replaced since, under its
    // own name (a copy installed as `fio` would otherwise act as fio).
    let mut cmd = Command::new("/proc/self/exe");
    cmd.arg0("ssdready")
        .arg(crate::job::COMMAND)
        .args(["--memory", &limits.memory.to_string()])
        // The job's files, and the program's own (its pipes, the engines').
        .args(["--files", &(limits.files + 256).to_string()]);
    if let Some(c) = creds {
        cmd.args(["--uid", &c.uid.to_string(), "--gid", &c.gid.to_string()]);
        if !c.groups.is_empty() {
            let g: Vec<String> = c.groups.iter().map(u32::to_string).collect();
            cmd.arg(format!("--groups={}", g.join(",")));
        }
    }
    cmd.env_clear()
        .envs(std::env::vars_os().filter(|(k, _)| kept(k)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child =
        spawn_for_life(cmd).map_err(|e| format!("cannot start the job's process: {e}"))?;
    let err = Arc::new(Mutex::new(String::new()));
    if let Some(mut e) = child.stderr.take() {
        let tail = err.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = e.read(&mut buf) {
                let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > ERR_TAIL {
                    let cut = t.len() - ERR_TAIL;
                    let cut = (cut..t.len()).find(|i| t.is_char_boundary(*i)).unwrap_or(0);
                    t.drain(..cut);
                }
            }
        });
    }
    let out = child.stdout.take();
    let mut job = Job {
        child,
        out,
        err,
        limits,
    };
    let text = serde_json::to_vec(order).map_err(|e| e.to_string())?;
    if let Some(mut stdin) = job.child.stdin.take() {
        // A process that ended at once (its user could not be taken) says
        // why on its standard error, read below.
        let _ = stdin.write_all(&text);
    }
    Ok(job)
}

impl Job {
    /// The last line the process wrote on its standard error (a
    /// backtrace's notes left out), and whether it ran out of memory.
    fn last_words(&self) -> (String, bool) {
        let t = self.err.lock().unwrap_or_else(|p| p.into_inner());
        let words = t
            .lines()
            .rev()
            .map(|l| l.trim().trim_start_matches("ssdready: "))
            .find(|l| !l.is_empty() && !l.starts_with("note:") && !l.starts_with("stack backtrace"))
            .unwrap_or("")
            .to_string();
        (words, t.contains("memory allocation of"))
    }

    /// Why the process ended without an answer.
    fn ended(&mut self, timed_out: bool) -> String {
        use std::os::unix::process::ExitStatusExt;
        let status = self.child.wait().ok();
        let (words, out_of_memory) = self.last_words();
        if timed_out {
            return format!(
                "the job ran past the time a job may take on this server ({} s; its operator \
                 sets --job-time)",
                self.limits.time.as_secs()
            );
        }
        if out_of_memory {
            return format!(
                "the job ran out of the memory a job may use on this server ({} MiB; its \
                 operator sets --job-memory)",
                self.limits.memory >> 20
            );
        }
        let how = match status {
            Some(s) if s.signal().is_some() => {
                format!("killed by signal {}", s.signal().unwrap_or(0))
            }
            Some(s) => format!("ended with exit code {}", s.code().unwrap_or(0)),
            None => "ended".into(),
        };
        match words.is_empty() {
            true => format!("the job's process {how} without an answer"),
            false => format!("the job's process {how}: {words}"),
        }
    }
}

/// The first bytes the process writes (up to `max`), or none when it ends
/// without writing, read in a thread; the stream itself comes back with
/// them.
fn first_bytes(out: ChildStdout, max: usize) -> mpsc::Receiver<(Vec<u8>, ChildStdout)> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = out;
        let mut buf = vec![0u8; max];
        let mut n = 0;
        loop {
            match out.read(&mut buf[n..]) {
                Ok(0) | Err(_) => break,
                Ok(k) => {
                    n += k;
                    // A check's answer is one line; a run's first byte
                    // is enough to know it answers.
                    if n == max || buf[..n].ends_with(b"\n") {
                        break;
                    }
                }
            }
        }
        buf.truncate(n);
        let _ = tx.send((buf, out));
    });
    rx
}

/// The answer to a check, within [`PLAN_TIME`] and the stop flag.
pub fn plan(mut job: Job, stop: &AtomicBool) -> Result<Planned, String> {
    let out = job.out.take().ok_or("the job's process has no output")?;
    let rx = first_bytes(out, 64 << 10);
    let t0 = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((line, _)) if !line.is_empty() => {
                return serde_json::from_slice(&line)
                    .map_err(|e| format!("the job's check answered garbage: {e}"));
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Disconnected) => return Err(job.ended(false)),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if stop.load(Relaxed) {
            return Err("the server is stopping".into());
        }
        if t0.elapsed() > PLAN_TIME {
            return Err(format!(
                "checking the job took more than {} s: refused",
                PLAN_TIME.as_secs()
            ));
        }
    }
}

/// A run's results as they come from its process.
struct Results {
    first: std::io::Cursor<Vec<u8>>,
    out: ChildStdout,
    _job: Job,
}

impl Read for Results {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self.first.read(buf)? {
            0 => self.out.read(buf),
            n => Ok(n),
        }
    }
}

/// Wait for a run's results: once the process starts answering, its
/// messages, to be copied to the client as they come. `stop` (the client
/// left, the server stops) and the time limit end the run (SIGTERM: it
/// still answers with what it measured), and after [`GRACE`] the process.
pub fn run(mut job: Job, stop: &AtomicBool) -> Result<Encoded, String> {
    use nix::sys::signal::Signal::{SIGKILL, SIGTERM};
    let out = job.out.take().ok_or("the job's process has no output")?;
    let rx = first_bytes(out, 1);
    let t0 = Instant::now();
    let mut ended: Option<Instant> = None;
    let mut timed_out = false;
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((first, out)) if !first.is_empty() => {
                return Ok(Encoded(Box::new(Results {
                    first: std::io::Cursor::new(first),
                    out,
                    _job: job,
                })))
            }
            Ok(_) | Err(mpsc::RecvTimeoutError::Disconnected) => return Err(job.ended(timed_out)),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let late = t0.elapsed() > job.limits.time;
        match ended {
            None if stop.load(Relaxed) || late => {
                timed_out = late;
                signal(&job.child, SIGTERM);
                ended = Some(Instant::now());
            }
            Some(t) if t.elapsed() > GRACE => signal(&job.child, SIGKILL),
            _ => {}
        }
    }
}
