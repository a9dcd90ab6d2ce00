//! PostgreSQL's own benchmark, pgbench, on a throwaway cluster.
//!
//! When `initdb`, `pg_ctl`, `postgres`, `psql` and `pgbench` are installed
//! (Debian: package `postgresql`, binaries under
//! `/usr/lib/postgresql/*/bin`), a cluster is made in the workload's
//! directory, started listening on a unix socket there only
//! (`listen_addresses=''`: no network), initialised at the scale asked for
//! and run with `jobs` clients for the runtime. As root the cluster runs as
//! the unprivileged user `postgres` (or `nobody`), since initdb refuses
//! root. The transaction rate is pgbench's own figure; the latency
//! percentiles come from its per-transaction logs (`--log`), and the rows
//! of `pgbench_history` are counted through `psql` as an independent check.
//!
//! The server never outlives the run: it is stopped (`pg_ctl stop -m
//! immediate`) on success, failure, Ctrl-C or SIGTERM, and by a watchdog
//! process (`sh` waiting on a pipe only this process writes) when this
//! process is killed (SIGKILL). After a successful
//! run its files stay for inspection; after a failed or interrupted one
//! they are removed unless `keep` is set.

use crate::checks::Check;
use crate::config::{Config, Workload};
use crate::error::Error;
use crate::result::AppResult;
use crate::{device, workdir};
use ssdready_core::hist::Histogram;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOOLS: [&str; 5] = ["initdb", "pg_ctl", "postgres", "psql", "pgbench"];
const SUPERUSER: &str = "ssdready";

/// The directory holding all of PostgreSQL's tools, or what is missing.
pub fn find_tools() -> Result<PathBuf, Error> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| rd.flatten().map(|e| e.path().join("bin")).collect())
        .unwrap_or_default();
    // Newest version first (directory names are major versions).
    dirs.sort_by_key(|d| {
        std::cmp::Reverse(
            d.parent()
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(0),
        )
    });
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    dirs.into_iter()
        .find(|d| TOOLS.iter().all(|t| d.join(t).is_file()))
        .ok_or_else(|| {
            Error::Missing(format!(
                "pgbench needs PostgreSQL's {} (not found under /usr/lib/postgresql/*/bin nor on PATH); install them (Debian and Ubuntu: apt-get install postgresql)",
                TOOLS.join(", ")
            ))
        })
}

/// The user a cluster runs as: ourselves, or as root an unprivileged user.
#[derive(Clone, Copy, Debug)]
struct RunAs {
    uid: u32,
    gid: u32,
}

fn unprivileged_user() -> Result<Option<(String, RunAs)>, Error> {
    use std::os::unix::fs::MetadataExt;
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX);
    if me != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    for name in ["postgres", "nobody"] {
        for line in passwd.lines() {
            let f: Vec<&str> = line.split(':').collect();
            if f.len() > 3 && f[0] == name {
                if let (Ok(uid), Ok(gid)) = (f[2].parse(), f[3].parse()) {
                    return Ok(Some((name.to_string(), RunAs { uid, gid })));
                }
            }
        }
    }
    Err(Error::Missing(
        "as root, pgbench's cluster must run as an unprivileged user (initdb refuses root), and neither 'postgres' nor 'nobody' exists in /etc/passwd".into(),
    ))
}

/// As root, every directory above the workload's must let the cluster's
/// user through.
fn check_reachable(wd: &Path, user: &str, who: RunAs) -> Result<(), Error> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    for a in wd.ancestors().skip(1) {
        let Ok(m) = std::fs::metadata(a) else {
            continue;
        };
        let mode = m.permissions().mode();
        let ok = if m.uid() == who.uid {
            mode & 0o100 != 0
        } else if m.gid() == who.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !ok {
            return Err(Error::BadInput(format!(
                "option '--directory': as root, PostgreSQL runs as user '{user}', who cannot enter {} (mode {:o}); name a directory every user can reach, or run ssdready as an ordinary user",
                a.display(),
                mode & 0o7777
            )));
        }
    }
    Ok(())
}

/// A cluster; dropping it stops the server and, unless the run succeeded
/// or `keep` is set, removes its files.
pub(crate) struct Cluster {
    pub(crate) bin: PathBuf,
    /// The workload's directory (logs, outputs).
    pub(crate) wd: PathBuf,
    /// The cluster's data directory.
    pub(crate) data: PathBuf,
    pub(crate) sock: PathBuf,
    run_as: Option<RunAs>,
    /// The unprivileged user it runs as (root only).
    pub(crate) user: Option<String>,
    /// The server's options (`pg_ctl start -o`).
    opts: String,
    started: bool,
    pub(crate) keep_files: bool,
    /// Stops the server when this process ends, however it ends.
    watchdog: Option<std::process::Child>,
}

impl Cluster {
    fn cmd(&self, tool: &str) -> Command {
        let mut c = Command::new(self.bin.join(tool));
        c.env("LC_ALL", "C").env_remove("PGDATA").process_group(0);
        if let Some(u) = self.run_as {
            c.uid(u.uid).gid(u.gid);
            c.env("HOME", self.data.parent().unwrap_or(&self.data));
        }
        c
    }

    /// Start the server (its processes join the caller's cgroup).
    pub(crate) fn start(&mut self, stop: &AtomicBool) -> Result<(), Error> {
        // One watchdog for the cluster's life: a second one would stop the
        // server of the next start when the first one's pipe closed.
        if self.watchdog.is_none() {
            self.watchdog = Some(self.watchdog()?);
        }
        let mut c = self.cmd("pg_ctl");
        c.args(["start", "-w", "-t", "60", "-D"])
            .arg(&self.data)
            .arg("-o")
            .arg(&self.opts);
        c.arg("-l").arg(self.wd.join("server.log"));
        self.started = true;
        let mut dog = self.watchdog.as_mut().and_then(|w| w.stdin.take());
        let r = run_child_then(
            c,
            &self.wd.join("pg_ctl.out"),
            stop,
            "pg_ctl start",
            |pid| {
                tell(&mut dog, &format!("start {pid}"));
            },
        );
        // A pg_ctl killed on `stop` may have forked a server that is still
        // starting: the watchdog is left to wait for it.
        if !matches!(r, Err(Error::Interrupted)) {
            tell(&mut dog, "started");
        }
        if let Some(w) = self.watchdog.as_mut() {
            w.stdin = dog;
        }
        r
    }

    /// Stop the server cleanly (a checkpoint first: its files are then
    /// whole and it starts again without recovery).
    /// On `stop` pg_ctl is killed and the server left to [`Cluster::halt`].
    pub(crate) fn shut_down(&mut self, stop: &AtomicBool) -> Result<(), Error> {
        let mut c = self.cmd("pg_ctl");
        c.args(["stop", "-m", "fast", "-w", "-t", "60", "-D"])
            .arg(&self.data);
        run_child(c, &self.wd.join("pg_ctl-stop.out"), stop, "pg_ctl stop")?;
        self.started = false;
        Ok(())
    }

    /// A process that stops the server when this one ends, even by
    /// SIGKILL: it waits on a pipe whose only writer is this process, and
    /// the kernel closes that pipe when this process ends, however it ends.
    /// (PR_SET_PDEATHSIG cannot reach the server: `pg_ctl` starts it as a
    /// daemon, not as a child of this process.)
    ///
    /// A server still starting has no PID file, and `pg_ctl stop` finds no
    /// server without one; so this process says `start PID` when it starts
    /// `pg_ctl start` and `started` when that ends, and a watchdog woken
    /// during a start first waits for that `pg_ctl` (its `-t 60`, at most
    /// 70 s; a zombie counts as ended), then up to 5 s for the PID file of
    /// a server it forked before it was killed, and stops what is there.
    fn watchdog(&self) -> Result<std::process::Child, Error> {
        let mut c = Command::new("sh");
        c.env("LC_ALL", "C").env_remove("PGDATA").process_group(0);
        if let Some(u) = self.run_as {
            c.uid(u.uid).gid(u.gid);
        }
        c.args(["-c", WATCHDOG])
            .arg(self.bin.join("pg_ctl"))
            .arg(&self.data)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| Error::Runtime(format!("starting the server's watchdog (sh): {e}")))
    }

    /// Stop the server at once, if it may be running (errors ignored).
    pub(crate) fn halt(&mut self) {
        if self.started {
            let _ = self
                .cmd("pg_ctl")
                .args(["stop", "-m", "immediate", "-w", "-t", "30", "-D"])
                .arg(&self.data)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            self.started = false;
        }
        // The server is down: the watchdog's stop finds nothing to stop
        // (unless a start was cut short: then it waits for that server).
        if let Some(mut w) = self.watchdog.take() {
            drop(w.stdin.take());
            let _ = w.wait();
        }
    }

    /// One pgbench transaction per client, outside any measurement.
    pub(crate) fn warm_up(&self, jobs: u32, stop: &AtomicBool) -> Result<(), Error> {
        let mut c = self.cmd("pgbench");
        c.arg("-h").arg(&self.sock).args(["-U", SUPERUSER]);
        c.args(["-n", "-t", "1", "-c", &jobs.to_string(), "postgres"]);
        run_child(c, &self.wd.join("pgbench-warm.out"), stop, "pgbench -t 1")
    }

    /// Run one SQL statement through psql; its output, trimmed.
    pub(crate) fn psql(&self, sql: &str) -> Result<String, Error> {
        let mut c = self.cmd("psql");
        c.arg("-h")
            .arg(&self.sock)
            .args(["-U", SUPERUSER, "-At", "-c", sql, "postgres"]);
        let out = self.wd.join("psql.out");
        run_child(c, &out, &AtomicBool::new(false), "psql")?;
        Ok(std::fs::read_to_string(&out)
            .map_err(|e| Error::io("reading", &out, e))?
            .trim()
            .to_string())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.halt();
        if !self.keep_files {
            let _ = std::fs::remove_dir_all(&self.data);
        }
    }
}

/// Run `c` to its end, its output in `log`; on `stop` it is killed.
fn run_child(c: Command, log: &Path, stop: &AtomicBool, what: &str) -> Result<(), Error> {
    run_child_then(c, log, stop, what, |_| {})
}

/// A line to the watchdog (see [`Cluster::watchdog`]); a watchdog that is
/// gone is not an error here (its stop is a safety net).
fn tell(dog: &mut Option<std::process::ChildStdin>, line: &str) {
    use std::io::Write;
    if let Some(w) = dog {
        let _ = writeln!(w, "{line}");
    }
}

/// The watchdog's script: `$0` is `pg_ctl`, `$1` the data directory.
const WATCHDOG: &str = r#"pid=
while read -r word arg; do
  case $word in start) pid=$arg ;; started) pid= ;; esac
done
alive() { s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; s=${s##*") "}; [ "${s%% *}" != Z ]; }
if [ -n "$pid" ]; then
  i=0
  while alive "$pid" && [ $i -lt 700 ]; do sleep 0.1; i=$((i+1)); done
  i=0
  while [ ! -f "$1/postmaster.pid" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
fi
[ -f "$1/postmaster.pid" ] || exit 0
exec "$0" stop -m immediate -w -t 30 -D "$1""#;

/// [`run_child`], calling `spawned` with the child's PID once it runs.
fn run_child_then(
    mut c: Command,
    log: &Path,
    stop: &AtomicBool,
    what: &str,
    spawned: impl FnOnce(u32),
) -> Result<(), Error> {
    let f = std::fs::File::create(log).map_err(|e| Error::io("creating", log, e))?;
    let f2 = f.try_clone().map_err(|e| Error::io("opening", log, e))?;
    let mut child = c
        .stdin(Stdio::null())
        .stdout(f)
        .stderr(f2)
        .spawn()
        .map_err(|e| Error::Runtime(format!("starting {what}: {e}")))?;
    spawned(child.id());
    loop {
        if let Some(st) = child
            .try_wait()
            .map_err(|e| Error::Runtime(format!("waiting for {what}: {e}")))?
        {
            if st.success() {
                return Ok(());
            }
            let out = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = out.lines().rev().take(3).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(Error::Runtime(format!(
                "{what} failed ({st}): {} (its output: {})",
                tail.join(" / "),
                log.display()
            )));
        }
        if stop.load(Ordering::Relaxed) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Interrupted);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Run pgbench on a throwaway cluster.
pub fn run(cfg: &Config, stop: Arc<AtomicBool>) -> Result<AppResult, Error> {
    let mut cl = setup(cfg, &stop, "")?;
    let r = measure(cfg, &cl, stop)?;
    cl.keep_files = cfg.keep || !r.interrupted;
    Ok(r)
}

/// Make a cluster in the workload's directory, start it with the server
/// options `extra` added, and initialise pgbench's tables at the scale
/// asked for; the server is left running.
pub(crate) fn setup(cfg: &Config, stop: &AtomicBool, extra: &str) -> Result<Cluster, Error> {
    let bin = find_tools()?;
    let user = unprivileged_user()?;
    workdir::check_dir(&cfg.directory)?;
    // Every refusal before anything is made: nothing is left behind.
    let planned = workdir::workdir_of(&cfg.directory, Workload::Pgbench);
    if let Some((name, who)) = &user {
        check_reachable(&planned, name, *who)?;
    }
    let sock = planned.join("sock");
    if sock.as_os_str().len() + 20 > 107 {
        return Err(Error::BadInput(format!(
            "option '--directory': {} is too long a path for PostgreSQL's unix socket (at most ~85 bytes)",
            cfg.directory.display()
        )));
    }
    let wd = workdir::prepare(&cfg.directory, Workload::Pgbench)?;
    if let Some((_, who)) = &user {
        std::os::unix::fs::chown(&wd, Some(who.uid), Some(who.gid))
            .map_err(|e| Error::io("handing over", &wd, e))?;
    }
    let opts = format!(
        "-c listen_addresses='' -c unix_socket_directories='{}' -c max_connections={} {extra}",
        sock.display(),
        cfg.jobs + 10
    );
    let mut cl = Cluster {
        bin,
        data: wd.join("data"),
        sock,
        wd: wd.clone(),
        run_as: user.as_ref().map(|u| u.1),
        user: user.map(|u| u.0),
        opts,
        started: false,
        keep_files: cfg.keep,
        watchdog: None,
    };
    let mk = |d: &Path| -> Result<(), Error> {
        std::fs::create_dir(d).map_err(|e| Error::io("making", d, e))?;
        if let Some(u) = cl.run_as {
            std::os::unix::fs::chown(d, Some(u.uid), Some(u.gid))
                .map_err(|e| Error::io("handing over", d, e))?;
        }
        Ok(())
    };
    mk(&cl.sock)?;
    mk(&wd.join("logs"))?;
    let mut c = cl.cmd("initdb");
    c.args(["-A", "trust", "-U", SUPERUSER, "-E", "UTF8", "-D"])
        .arg(&cl.data);
    run_child(c, &wd.join("initdb.out"), stop, "initdb")?;
    cl.start(stop)?;
    let mut c = cl.cmd("pgbench");
    c.arg("-h").arg(&cl.sock).args(["-U", SUPERUSER]);
    c.args(["-i", "-q", "-s", &cfg.scale.to_string(), "postgres"]);
    run_child(c, &wd.join("pgbench-init.out"), stop, "pgbench -i")?;
    workdir::sync_fs(&wd)?;
    Ok(cl)
}

/// The timed phase: pgbench against the running server, with the
/// device's counters around it and its figures checked against its logs
/// and `pgbench_history`.
pub(crate) fn measure(
    cfg: &Config,
    cl: &Cluster,
    stop: Arc<AtomicBool>,
) -> Result<AppResult, Error> {
    let wd = &cl.wd;
    let logs = wd.join("logs");
    // A fresh set of transaction logs for this run.
    for e in std::fs::read_dir(&logs).into_iter().flatten().flatten() {
        let _ = std::fs::remove_file(e.path());
    }
    let rows_before = count_history(cl).unwrap_or(0);
    let secs = cfg.runtime_ns.div_ceil(1_000_000_000).max(1);
    let threads = cfg
        .jobs
        .min(std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let mut c = cl.cmd("pgbench");
    c.arg("-h").arg(&cl.sock).args(["-U", SUPERUSER]);
    c.args(["-n", "-l", "-P", "1", "-T", &secs.to_string()]);
    c.args(["-c", &cfg.jobs.to_string(), "-j", &threads.to_string()]);
    c.arg(format!("--log-prefix={}", logs.join("tx").display()));
    c.arg("postgres");
    let out = wd.join("pgbench.out");
    let mut window = device::Window::new(wd);
    window.begin();
    let t0 = Instant::now();
    let ran = run_child(c, &out, &stop, "pgbench");
    let elapsed = t0.elapsed().as_nanos() as u64;
    let interrupted = matches!(ran, Err(Error::Interrupted));
    if !interrupted {
        ran?;
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let log = latencies(&logs);
    let (lat, logged) = (&log.lat, log.n);
    let summary = parse_summary(&text);
    let tx = summary.transactions.unwrap_or(logged);
    let dev = window.end(tx, 0);
    let history = if interrupted {
        None
    } else {
        count_history(cl).map(|h| h.saturating_sub(rows_before))
    };
    let mut r = AppResult {
        name: Workload::Pgbench.name().into(),
        op: "transaction".into(),
        directory: wd.display().to_string(),
        jobs: cfg.jobs,
        scale: cfg.scale,
        seed: cfg.seed,
        interrupted,
        ..Default::default()
    };
    r.setting("pgbench_threads", threads);
    r.setting("runtime_s", secs);
    r.setting("postgresql_bin", cl.bin.display().to_string());
    if let Some(name) = &cl.user {
        r.setting("cluster_user", name.clone());
    }
    r.finish(elapsed, tx, lat, dev);
    if let Some(tps) = summary.tps {
        r.ops_per_s = tps;
        r.notes.push("transactions/s is pgbench's own figure (without the initial connection time); latencies are from its per-transaction logs".into());
    }
    r.count("transactions", tx);
    r.count("logged_transactions", logged);
    r.count("failed_transactions", summary.failed.unwrap_or(0));
    if let Some(h) = history {
        r.count("history_rows", h);
    }
    for c in checks(&summary, &log, history) {
        r.check(c);
    }
    if secs * 1_000_000_000 != cfg.runtime_ns {
        r.notes
            .push(format!("pgbench runs whole seconds: {secs} s"));
    }
    Ok(r)
}

#[derive(Debug, Default, PartialEq)]
struct Summary {
    transactions: Option<u64>,
    failed: Option<u64>,
    tps: Option<f64>,
}

/// The figures of pgbench's closing summary.
fn parse_summary(text: &str) -> Summary {
    let mut s = Summary::default();
    let first_number = |rest: &str| -> Option<String> {
        let t = rest.trim_start();
        let n: String = t
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        (!n.is_empty()).then_some(n)
    };
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("number of transactions actually processed:") {
            s.transactions = first_number(rest).and_then(|n| n.parse().ok());
        } else if let Some(rest) = line.strip_prefix("number of failed transactions:") {
            s.failed = first_number(rest).and_then(|n| n.parse().ok());
        } else if let Some(rest) = line.strip_prefix("tps =") {
            if s.tps.is_none() || line.contains("without initial connection") {
                s.tps = first_number(rest).and_then(|n| n.parse().ok());
            }
        }
    }
    s
}

/// What pgbench's per-transaction logs say.
#[derive(Debug, Default)]
struct TxLog {
    lat: Histogram,
    n: u64,
    /// The first transaction's start and the last one's end, µs since the
    /// epoch (each line has its end and its latency).
    first_start_us: Option<u64>,
    last_end_us: Option<u64>,
}

impl TxLog {
    /// Transactions/s over the logs' own span.
    fn rate(&self) -> Option<f64> {
        let (a, b) = (self.first_start_us?, self.last_end_us?);
        (b > a && self.n > 0).then(|| self.n as f64 * 1e6 / (b - a) as f64)
    }
}

/// The lines of pgbench's transaction logs in `dir`: `client transaction
/// latency_us script epoch_s epoch_us …`.
fn latencies(dir: &Path) -> TxLog {
    let mut log = TxLog::default();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for line in text.lines() {
            let f: Vec<u64> = line
                .split_whitespace()
                .map_while(|x| x.parse().ok())
                .collect();
            let Some(&us) = f.get(2) else { continue };
            log.lat.record(us * 1000);
            log.n += 1;
            if let (Some(&s), Some(&u)) = (f.get(4), f.get(5)) {
                let end = s * 1_000_000 + u;
                let start = end.saturating_sub(us);
                log.first_start_us = Some(log.first_start_us.map_or(start, |x| x.min(start)));
                log.last_end_us = Some(log.last_end_us.map_or(end, |x| x.max(end)));
            }
        }
    }
    log
}

/// pgbench's transactions and rate against its logs and PostgreSQL's
/// `pgbench_history`.
fn checks(summary: &Summary, log: &TxLog, history: Option<u64>) -> Vec<Check> {
    let mut v = Vec::new();
    let Some(tx) = summary.transactions else {
        return v;
    };
    v.push(
        Check::new(
            "logged_transactions",
            "transactions in pgbench's per-transaction logs",
            log.n as f64,
            "pgbench's reported transactions",
            tx as f64,
            0.0,
        )
        .with_note("pgbench counted transactions its logs do not hold, or the reverse"),
    );
    if let Some(h) = history {
        v.push(
            Check::new(
                "history_rows",
                "pgbench's reported transactions",
                tx as f64,
                "rows PostgreSQL committed to pgbench_history",
                h as f64,
                0.0,
            )
            .with_note("a transaction reported that did not commit, or one committed that was not reported"),
        );
    }
    if let (Some(tps), Some(ours), Some(a), Some(b)) =
        (summary.tps, log.rate(), log.first_start_us, log.last_end_us)
    {
        // pgbench times its window from its connections to its end; the
        // logs' span starts at the first transaction and ends at the last:
        // they may differ by about a transaction at each end (its 99th
        // percentile).
        let span_ns = (b - a) * 1000;
        let tol = crate::checks::rate_tolerance(log.n, 2 * log.lat.percentile(99.0), span_ns);
        v.push(
            Check::new(
                "pgbench_tps",
                "transactions/s over the per-transaction logs' span",
                ours,
                "pgbench's reported tps",
                tps,
                ours * tol,
            )
            .with_note("pgbench's rate is not the one its own transaction logs give"),
        );
    }
    v
}

/// The rows of `pgbench_history` now.
fn count_history(cl: &Cluster) -> Option<u64> {
    cl.psql("SELECT count(*) FROM pgbench_history")
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
#[path = "pgbench_tests.rs"]
mod tests;
