//! `ssdready server`: answer an unmodified `fio --client`, safe by default
//! on a machine shared with other people (the rules are
//! `ssdready_fleet::policy`'s; docs/fleet.md "Who may drive a server").
//!
//! The server keeps a directory of its own (`--directory`, by default
//! `$TMPDIR/ssdready-server-UID`, mode 0700, or 0711 for a root server
//! that serves other users): `work/` is its working directory, where
//! relative file names land and the one place jobs may use unless the
//! operator allows more; `users/UID/` is that for another user whose jobs
//! a root server runs with that user's rights (made by the server, owned
//! by the user, mode 0700).
//!
//! Every check and every run of a client's job happens in a process of its
//! own (`ssdready_serve::job`, started by `ssdready_serve::spawn`): with the client's uid,
//! gid and groups when the server is root and the client another local
//! user, within the job limits (`--job-memory`, `--job-files`,
//! `--job-threads`, `--job-time`), and confined to the allowed places.
//! The server itself reads no job file and opens nothing a job names.

use crate::{fail, say};
use ssdready_fleet::policy::{Policy, Users};
use ssdready_fleet::server::Server;
use ssdready_serve::engine::Engine;
use ssdready_serve::fio_server;
use ssdready_serve::setup::{self, allows, own_directory, users};
use ssdready_serve::spawn::JobLimits;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ServerArgs {
    /// Address to listen on: 127.0.0.1 (this host only) unless another is
    /// named (e.g. 0.0.0.0 or :: to serve the network).
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// TCP port (fio's default 8765; 0: one the kernel picks, printed).
    #[arg(long, default_value_t = ssdready_fleet::DEFAULT_PORT)]
    port: u16,
    /// Exit after this many client runs (default: serve until interrupted).
    #[arg(long)]
    runs: Option<u32>,
    /// A directory jobs may use for their files, iologs and includes
    /// (symbolic links are followed before the check); may be given
    /// several times. The server's own work directory is always allowed.
    #[arg(long = "allow-dir", value_name = "DIR")]
    allow_dir: Vec<PathBuf>,
    /// A block device (or file) jobs may use as a target, checked as a
    /// local run checks it (a mounted or formatted device is still
    /// refused); may be given several times.
    #[arg(long = "allow-device", value_name = "DEV")]
    allow_device: Vec<PathBuf>,
    /// Let clients run commands as this server's user (exec_prerun,
    /// exec_postrun): whoever may connect can then run anything as you.
    #[arg(long = "allow-exec")]
    allow_exec: bool,
    /// A local user who may drive the server, besides its own user and
    /// root (a name or uid; 'all' for anyone on this host); may be given
    /// several times.
    #[arg(long = "allow-user", value_name = "USER")]
    allow_user: Vec<String>,
    /// The server's own directory (default: $TMPDIR/ssdready-server-UID).
    #[arg(long, value_name = "DIR")]
    directory: Option<PathBuf>,
    /// Listen on a Unix socket at this path instead of TCP (fio's
    /// `--client=sock:PATH`): mode 0600, so that only this server's user
    /// (and root) can connect, unless --allow-user names others; the
    /// connecting process's user is checked too.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["bind", "port"])]
    socket: Option<PathBuf>,
    /// Run in the background once listening, with its process id written
    /// to FILE (fio's `--daemonize`); its log goes to `server.log` in the
    /// server's directory.
    #[arg(long, value_name = "FILE")]
    daemonize: Option<PathBuf>,
    /// The memory one job may use (its logs and buffers), e.g. 4g; a job
    /// past it fails, the server goes on.
    #[arg(long = "job-memory", value_name = "SIZE", default_value = "4g")]
    job_memory: String,
    /// How long one job may run (e.g. 90s, 2h); it is then stopped and
    /// sends what it measured.
    #[arg(long = "job-time", value_name = "TIME", default_value = "24h")]
    job_time: String,
    /// The files one job may use (nrfiles or filename, times numjobs).
    #[arg(long = "job-files", value_name = "N", default_value_t = 4096)]
    job_files: u64,
    /// The workers (threads doing I/O) one job may have (numjobs added up).
    #[arg(long = "job-threads", value_name = "N", default_value_t = 256)]
    job_threads: u64,
    /// (The background server's own: where it writes its process id once
    /// it listens.)
    #[arg(long = "pid-file", hide = true)]
    pid_file: Option<PathBuf>,
}

/// fio's `--server[=SPEC]` and `--daemonize=FILE` among `run`'s arguments
/// (`ssdready_serve::fio_server`, which reads SPEC): the server they ask
/// for, with the other switches' defaults, or `None` when there is no
/// `--server`; the error is the line to refuse them with.
pub fn fio_switches(args: &[String]) -> Option<Result<ServerArgs, String>> {
    use clap::{Args, FromArgMatches};
    let s = match fio_server::switches(args, ssdready_fleet::DEFAULT_PORT)? {
        Ok(s) => s,
        Err(e) => return Some(Err(e.to_string())),
    };
    let defaults = ServerArgs::augment_args(clap::Command::new("server"))
        .try_get_matches_from(["server"])
        .and_then(|m| ServerArgs::from_arg_matches(&m))
        .map_err(|e| e.to_string());
    Some(defaults.map(|d| ServerArgs {
        bind: s.bind,
        port: s.port,
        socket: s.socket,
        daemonize: s.daemonize,
        ..d
    }))
}

/// The directories and devices `--allow-dir` and `--allow-device` name,
/// each as its canonical path (bad input ends here, exit 2).
type Allowed = (Vec<PathBuf>, Vec<PathBuf>);

fn allowed_paths(a: &ServerArgs) -> Result<Allowed, crate::Exit> {
    let dirs: Vec<PathBuf> = a
        .allow_dir
        .iter()
        .map(|d| setup::canonical(d, "--allow-dir", true))
        .collect::<Result<_, _>>()
        .map_err(|e| fail(2, &e))?;
    let devices: Vec<PathBuf> = a
        .allow_device
        .iter()
        .map(|d| setup::canonical(d, "--allow-device", false))
        .collect::<Result<_, _>>()
        .map_err(|e| fail(2, &e))?;
    Ok((dirs, devices))
}

/// The server's process id into the file `--daemonize` named (exit 1 when
/// it cannot be written).
fn write_pid(a: &ServerArgs) -> crate::Done {
    if let Some(p) = &a.pid_file {
        let pid = format!("{}\n", std::process::id());
        if let Err(e) = ssdready_io::writer::replace_entry(p, pid.as_bytes()) {
            return Err(fail(
                1,
                &format!("option '--daemonize': {}: {e}", p.display()),
            ));
        }
    }
    Ok(())
}

/// The job limits the switches give (bad input ends here, exit 2).
fn job_limits(a: &ServerArgs) -> Result<JobLimits, crate::Exit> {
    let mut limits = setup::job_limits(&a.job_memory, &a.job_time, a.job_files, a.job_threads)
        .map_err(|e| fail(2, &e))?;
    // At most half the memory limit the server runs under (its jobs share it).
    let inv = ssdready_probe::limits::inventory(std::process::id(), &[]);
    let group = inv.memory_limit().map(|m| (m.bytes, m.source.as_str()));
    let (memory, note) = ssdready_fleet::bounds::job_memory(limits.memory, group);
    note.inspect(|n| eprintln!("ssdready: server: {n}"));
    limits.memory = memory;
    Ok(limits)
}

/// `ssdready server`.
pub fn command(a: ServerArgs) -> crate::Done {
    let ip: IpAddr = a.bind.trim_matches(['[', ']']).parse().map_err(|_| {
        fail(2, &format!("option '--bind': '{}' is not an IP address (allowed: e.g. 127.0.0.1, ::1, 0.0.0.0)", a.bind))
    })?;
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let me = nix::unistd::geteuid().as_raw();
    let users = users(&a.allow_user, me, &passwd).map_err(|e| fail(2, &e))?;
    let home = a
        .directory
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("ssdready-server-{me}")));
    // Every switch checked before anything is made (bad input writes nothing).
    let (dirs, devices) = allowed_paths(&a)?;
    let limits = job_limits(&a)?;
    // Only the server's user and root: the socket file's mode alone decides.
    let owner_only = matches!(&users, Users::Only(v) if v.iter().all(|&u| u == 0 || u == me));
    // A root server that serves others makes them directories of their own
    // below its own, which they must be able to pass through.
    let traversable = me == 0 && !owner_only;
    let own_dir = || {
        own_directory(&home, me, traversable)
            .map_err(|e| fail(2, &format!("option '--directory': {e}")))
    };
    if let Some(pid_file) = &a.daemonize {
        own_dir()?;
        return background(&a, &home, pid_file);
    }
    let server = match &a.socket {
        Some(p) => Server::bind_unix(p, if owner_only { 0o600 } else { 0o666 })
            .map_err(|e| fail(2, &format!("option '--socket': {e}")))?,
        None => Server::bind(SocketAddr::new(ip, a.port))
            .map_err(|e| fail(2, &format!("option '--port': {e}")))?,
    };
    let work = own_dir()?;
    let policy = Policy {
        dirs: std::iter::once(work.clone()).chain(dirs).collect(),
        devices,
        exec: a.allow_exec,
        users,
    };
    write_pid(&a)?;
    if let Err(e) = std::env::set_current_dir(&work) {
        return Err(fail(1, &format!("server: {}: {e}", work.display())));
    }
    let stop = crate::stop_on_signals()?;
    let (on, client) = match (&a.socket, server.local_addr()) {
        (Some(p), _) => (p.display().to_string(), format!("sock:{}", p.display())),
        (None, addr) => {
            let addr = addr.unwrap_or(SocketAddr::new(ip, a.port));
            (addr.to_string(), format!("{},{}", addr.ip(), addr.port()))
        }
    };
    say(&format!(
        "server: listening on {on} (fio protocol versions {:?}); drive it with fio --client={client}",
        ssdready_fleet::VERSIONS,
    ));
    let local_only = ip.is_loopback() || a.socket.is_some();
    say(&format!("server: {}", allows(&policy, local_only, &passwd)));
    let log = |m: &str| say(&format!("server: {m}"));
    let engine = Engine {
        policy,
        home,
        work,
        me,
        limits,
        passwd,
        stop: stop.clone(),
    };
    server
        .serve(&engine, &stop, a.runs, &log)
        .map_err(|e| fail(1, &format!("server: {e}")))
}

/// `--daemonize`: start this same server in the background (a session of
/// its own, its output in `server.log` in its directory), wait until it
/// listens and has written its process id, then exit 0; or say why it did
/// not start, exit 2.
fn background(a: &ServerArgs, home: &Path, pid_file: &Path) -> crate::Done {
    use std::os::unix::process::CommandExt;
    // A link there is refused and left as it is: the pid file is written
    // without following one (a new file renamed over the name).
    if std::fs::symlink_metadata(pid_file).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(fail(
            2,
            &format!(
                "option '--daemonize': {} is a symbolic link (name the file itself)",
                pid_file.display()
            ),
        ));
    }
    match ssdready_run::output::checked(pid_file) {
        Ok(ssdready_run::output::Sink::File(_)) => {}
        Ok(_) => {
            return Err(fail(
                2,
                &format!(
                    "option '--daemonize': {} is not a regular file",
                    pid_file.display()
                ),
            ))
        }
        Err(e) => return Err(fail(2, &format!("option '--daemonize': {e}"))),
    }
    let log_path = home.join("server.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| fail(1, &format!("{}: {e}", log_path.display())))?;
    let exe =
        std::env::current_exe().map_err(|e| fail(1, &format!("cannot find this program: {e}")))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("server").args(same_server(a, home));
    let mut child = cmd
        .arg("--pid-file")
        .arg(pid_file)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().map_err(|e| fail(1, &e.to_string()))?)
        .stderr(log)
        .process_group(0)
        .spawn()
        .map_err(|e| fail(1, &format!("cannot start the server: {e}")))?;
    let stop = crate::stop_flag();
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            let last = text
                .lines()
                .last()
                .unwrap_or("")
                .trim_start_matches("ssdready: ");
            return Err(fail(
                st.code().unwrap_or(1).max(1),
                &format!("the server did not start: {last}"),
            ));
        }
        let written = std::fs::read_to_string(pid_file).unwrap_or_default();
        if written.trim() == child.id().to_string() {
            return Ok(());
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = child.kill();
            return Err(fail(130, "interrupted while the server started"));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The switches of `server` that start the same server as `a` (in `home`).
fn same_server(a: &ServerArgs, home: &Path) -> Vec<std::ffi::OsString> {
    let mut v: Vec<std::ffi::OsString> = vec![
        "--bind".into(),
        a.bind.clone().into(),
        "--port".into(),
        a.port.to_string().into(),
        "--directory".into(),
        home.into(),
    ];
    if let Some(n) = a.runs {
        v.extend(["--runs".into(), n.to_string().into()]);
    }
    for d in &a.allow_dir {
        v.extend(["--allow-dir".into(), d.into()]);
    }
    for d in &a.allow_device {
        v.extend(["--allow-device".into(), d.into()]);
    }
    for u in &a.allow_user {
        v.extend(["--allow-user".into(), u.into()]);
    }
    if a.allow_exec {
        v.push("--allow-exec".into());
    }
    for (k, val) in [
        ("--job-memory", a.job_memory.clone()),
        ("--job-time", a.job_time.clone()),
        ("--job-files", a.job_files.to_string()),
        ("--job-threads", a.job_threads.to_string()),
    ] {
        v.extend([k.into(), val.into()]);
    }
    if let Some(p) = &a.socket {
        // `--socket` goes alone: no --bind/--port.
        v.drain(..4);
        v.extend(["--socket".into(), p.into()]);
    }
    v
}

/// `ssdready server-job`'s switches ([`ssdready_serve::job::Rights`]).
#[derive(clap::Args)]
pub struct JobArgs {
    /// Run as this user (the server is root and the client is that user).
    #[arg(long)]
    pub uid: Option<u32>,
    #[arg(long)]
    pub gid: Option<u32>,
    /// Supplementary groups, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub groups: Vec<u32>,
    /// The memory the job may use, bytes (RLIMIT_DATA).
    #[arg(long)]
    pub memory: u64,
    /// The files the job may hold open (RLIMIT_NOFILE).
    #[arg(long)]
    pub files: u64,
}

/// `ssdready server-job` (hidden): one client's job, in a process of its
/// own that the server started ([`ssdready_serve::job`]); any failure is
/// exit code 1, its line on stderr for the server to read.
pub fn job(a: JobArgs) -> crate::Done {
    use ssdready_serve::job::{self, JobError, Rights};
    let rights = Rights {
        uid: a.uid,
        gid: a.gid,
        groups: a.groups,
        memory: a.memory,
        files: a.files,
    };
    let said = |e: JobError| match e {
        JobError::ServerGone => crate::Exit(1),
        e => fail(1, &e.to_string()),
    };
    job::take_rights(&rights).map_err(said)?;
    let order = job::read_order().map_err(said)?;
    let stop = crate::stop_on_signals()?;
    job::answer(&order, rights.memory, stop).map_err(said)
}
