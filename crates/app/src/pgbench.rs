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
//! immediate`) on success, failure, Ctrl-C or SIGTERM. After a successful
//! run its files stay for inspection; after a failed or interrupted one
//! they are removed unless `keep` is set.

use crate::result::AppResult;
use crate::{device, workdir, Config, Error, Workload};
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

/// A started cluster; dropping it stops the server and, unless the run
/// succeeded or `keep` is set, removes its files.
struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    run_as: Option<RunAs>,
    started: bool,
    keep_files: bool,
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
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.started {
            let _ = self
                .cmd("pg_ctl")
                .args(["stop", "-m", "immediate", "-w", "-t", "30", "-D"])
                .arg(&self.data)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        if !self.keep_files {
            let _ = std::fs::remove_dir_all(&self.data);
        }
    }
}

/// Run `c` to its end, its output in `log`; on `stop` it is killed.
fn run_child(mut c: Command, log: &Path, stop: &AtomicBool, what: &str) -> Result<(), Error> {
    let f = std::fs::File::create(log).map_err(|e| Error::io("creating", log, e))?;
    let f2 = f.try_clone().map_err(|e| Error::io("opening", log, e))?;
    let mut child = c
        .stdin(Stdio::null())
        .stdout(f)
        .stderr(f2)
        .spawn()
        .map_err(|e| Error::Runtime(format!("starting {what}: {e}")))?;
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
    let bin = find_tools()?;
    let user = unprivileged_user()?;
    workdir::check_dir(&cfg.directory)?;
    let wd = workdir::prepare(&cfg.directory, Workload::Pgbench)?;
    if let Some((name, who)) = &user {
        check_reachable(&wd, name, *who)?;
        std::os::unix::fs::chown(&wd, Some(who.uid), Some(who.gid))
            .map_err(|e| Error::io("handing over", &wd, e))?;
    }
    let sock = wd.join("sock");
    if sock.as_os_str().len() + 20 > 107 {
        return Err(Error::BadInput(format!(
            "option '--directory': {} is too long a path for PostgreSQL's unix socket (at most ~85 bytes)",
            cfg.directory.display()
        )));
    }
    let mut cl = Cluster {
        bin,
        data: wd.join("data"),
        run_as: user.as_ref().map(|u| u.1),
        started: false,
        keep_files: cfg.keep,
    };
    let mk = |d: &Path| -> Result<(), Error> {
        std::fs::create_dir(d).map_err(|e| Error::io("making", d, e))?;
        if let Some(u) = cl.run_as {
            std::os::unix::fs::chown(d, Some(u.uid), Some(u.gid))
                .map_err(|e| Error::io("handing over", d, e))?;
        }
        Ok(())
    };
    mk(&sock)?;
    let logs = wd.join("logs");
    mk(&logs)?;
    let mut c = cl.cmd("initdb");
    c.args(["-A", "trust", "-U", SUPERUSER, "-E", "UTF8", "-D"])
        .arg(&cl.data);
    run_child(c, &wd.join("initdb.out"), &stop, "initdb")?;
    let mut c = cl.cmd("pg_ctl");
    let opts = format!(
        "-c listen_addresses='' -c unix_socket_directories='{}' -c max_connections={}",
        sock.display(),
        cfg.jobs + 10
    );
    c.args(["start", "-w", "-t", "60", "-D"])
        .arg(&cl.data)
        .arg("-o")
        .arg(opts);
    c.arg("-l").arg(wd.join("server.log"));
    cl.started = true;
    run_child(c, &wd.join("pg_ctl.out"), &stop, "pg_ctl start")?;
    let conn = |c: &mut Command| {
        c.arg("-h").arg(&sock).args(["-U", SUPERUSER]);
    };
    let mut c = cl.cmd("pgbench");
    conn(&mut c);
    c.args(["-i", "-q", "-s", &cfg.scale.to_string(), "postgres"]);
    run_child(c, &wd.join("pgbench-init.out"), &stop, "pgbench -i")?;
    workdir::sync_fs(&wd)?;
    let secs = cfg.runtime_ns.div_ceil(1_000_000_000).max(1);
    let threads = cfg
        .jobs
        .min(std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let mut c = cl.cmd("pgbench");
    conn(&mut c);
    c.args(["-n", "-l", "-P", "1", "-T", &secs.to_string()]);
    c.args(["-c", &cfg.jobs.to_string(), "-j", &threads.to_string()]);
    c.arg(format!("--log-prefix={}", logs.join("tx").display()));
    c.arg("postgres");
    let out = wd.join("pgbench.out");
    let mut window = device::Window::new(&wd);
    window.begin();
    let t0 = Instant::now();
    let ran = run_child(c, &out, &stop, "pgbench");
    let elapsed = t0.elapsed().as_nanos() as u64;
    let interrupted = matches!(ran, Err(Error::Interrupted));
    if !interrupted {
        ran?;
    }
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let (lat, logged) = latencies(&logs);
    let summary = parse_summary(&text);
    let tx = summary.transactions.unwrap_or(logged);
    let dev = window.end(tx, 0);
    let history = if interrupted {
        None
    } else {
        count_history(&cl, &sock, &wd)
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
    if let Some((name, _)) = &user {
        r.setting("cluster_user", name.clone());
    }
    r.finish(elapsed, tx, &lat, dev);
    if let Some(tps) = summary.tps {
        r.ops_per_s = tps;
        r.notes.push("transactions/s is pgbench's own figure (without the initial connection time); latencies are from its per-transaction logs".into());
    }
    r.count("transactions", tx);
    r.count("logged_transactions", logged);
    r.count("failed_transactions", summary.failed.unwrap_or(0));
    if let Some(h) = history {
        r.count("history_rows", h);
        if h != tx {
            r.notes.push(format!(
                "pgbench_history holds {h} rows but pgbench reported {tx} transactions"
            ));
        }
    }
    if secs * 1_000_000_000 != cfg.runtime_ns {
        r.notes
            .push(format!("pgbench runs whole seconds: {secs} s"));
    }
    cl.keep_files = cfg.keep || !interrupted;
    drop(cl);
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

/// Latencies (third field, µs) of every line of pgbench's transaction
/// logs in `dir`.
fn latencies(dir: &Path) -> (Histogram, u64) {
    let mut h = Histogram::new();
    let mut n = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(e.path()).unwrap_or_default();
        for line in text.lines() {
            if let Some(us) = line
                .split_whitespace()
                .nth(2)
                .and_then(|x| x.parse::<u64>().ok())
            {
                h.record(us * 1000);
                n += 1;
            }
        }
    }
    (h, n)
}

fn count_history(cl: &Cluster, sock: &Path, wd: &Path) -> Option<u64> {
    let mut c = cl.cmd("psql");
    c.arg("-h").arg(sock).args([
        "-U",
        SUPERUSER,
        "-At",
        "-c",
        "SELECT count(*) FROM pgbench_history",
        "postgres",
    ]);
    let out = wd.join("psql.out");
    run_child(c, &out, &AtomicBool::new(false), "psql").ok()?;
    std::fs::read_to_string(&out).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgbench_summary_is_read() {
        let out = "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\nnumber of clients: 2\nnumber of transactions actually processed: 1234\nnumber of failed transactions: 0 (0.000%)\nlatency average = 1.6 ms\ninitial connection time = 3.1 ms\ntps = 617.25 (without initial connection time)\n";
        assert_eq!(
            parse_summary(out),
            Summary {
                transactions: Some(1234),
                failed: Some(0),
                tps: Some(617.25)
            }
        );
    }

    #[test]
    fn transaction_logs_give_latencies() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("tx.1"),
            "0 0 1500 0 1700000000 1\n0 1 2500 0 1700000000 2\n",
        )
        .unwrap();
        std::fs::write(t.path().join("tx.1.1"), "1 0 100000 0 1700000000 3\n").unwrap();
        let (h, n) = latencies(t.path());
        assert_eq!(n, 3);
        assert_eq!(h.max(), 100_000_000);
        assert_eq!(h.min(), 1_500_000);
    }
}
