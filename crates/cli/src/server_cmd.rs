//! `ssdready server`: answer an unmodified `fio --client`, safe by default
//! on a machine shared with other people (the rules are
//! `ssdready_fleet::policy`'s; docs/fleet.md "Who may drive a server").
//!
//! The server keeps a directory of its own (`--directory`, by default
//! `$TMPDIR/ssdready-server-UID`, mode 0700): `work/` is its working
//! directory, where relative file names land and the one place jobs may
//! use unless the operator allows more; `jobs/` holds the clients' job
//! files while they are parsed, and what a killed server left there is
//! removed at the next start.

use crate::{args, fail, say};
use ssdready_fleet::policy::{self, Peer, Policy, Users};
use ssdready_fleet::server::{Client, JobFiles, JobRequest, RunOutput, Runner, Server};
use ssdready_fleet::{from_result, pdu::ProbeReply};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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
    /// (The background server's own: where it writes its process id once
    /// it listens.)
    #[arg(long = "pid-file", hide = true)]
    pid_file: Option<PathBuf>,
}

/// fio's `--server[=SPEC]` and `--daemonize=FILE` among `run`'s arguments
/// (what `fio --server=,8765 --daemonize=PIDFILE` passes): the server they
/// ask for, or `None` when there is no `--server`. SPEC is fio's:
/// `[ip:|ip6:]HOST[,PORT]`, `,PORT`, or empty; without a host the server
/// listens on loopback (fio listens on every address: serving the network
/// stays an explicit choice here). Anything else among the arguments is
/// refused in one line.
pub fn fio_switches(args: &[String]) -> Option<Result<ServerArgs, String>> {
    let spec = args.iter().find_map(|a| {
        (a == "--server")
            .then(String::new)
            .or_else(|| a.strip_prefix("--server=").map(str::to_string))
    })?;
    Some(fio_server(&spec, args))
}

fn fio_server(spec: &str, args: &[String]) -> Result<ServerArgs, String> {
    let mut daemonize = None;
    for a in args {
        if let Some(f) = a.strip_prefix("--daemonize=") {
            daemonize = Some(PathBuf::from(f));
        } else if !(a == "--server" || a.starts_with("--server=")) {
            return Err(format!(
                "option '--server': '{a}' cannot go with it (allowed beside it: --daemonize=FILE)"
            ));
        }
    }
    let bad = |why: &str| {
        format!(
            "option '--server': '{spec}' {why} (allowed: [ip:|ip6:]HOST[,PORT], ,PORT, sock:PATH)"
        )
    };
    if let Some(p) = spec.strip_prefix("sock:") {
        if p.is_empty() {
            return Err(bad("names no socket path"));
        }
    }
    let body = spec
        .strip_prefix("ip:")
        .or_else(|| spec.strip_prefix("ip6:"))
        .unwrap_or(spec);
    let (host, port) = body.rsplit_once(',').unwrap_or((body, ""));
    let port = match port {
        "" => ssdready_fleet::DEFAULT_PORT,
        _ if spec.starts_with("sock:") => ssdready_fleet::DEFAULT_PORT,
        p => p.parse().map_err(|_| bad("has no port number"))?,
    };
    let bind = match host {
        "" | "localhost" => "127.0.0.1".to_string(),
        h => h.to_string(),
    };
    let socket = spec.strip_prefix("sock:").map(PathBuf::from);
    let (bind, port) = match socket {
        Some(_) => ("127.0.0.1".to_string(), ssdready_fleet::DEFAULT_PORT),
        None => (bind, port),
    };
    Ok(ServerArgs {
        bind,
        port,
        socket,
        runs: None,
        allow_dir: Vec::new(),
        allow_device: Vec::new(),
        allow_exec: false,
        allow_user: Vec::new(),
        directory: None,
        daemonize,
        pid_file: None,
    })
}

/// The directories and devices `--allow-dir` and `--allow-device` name,
/// each as its canonical path (bad input ends here, exit 2).
fn allowed_paths(a: &ServerArgs) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let dirs: Vec<PathBuf> = a
        .allow_dir
        .iter()
        .map(|d| canonical(d, "--allow-dir", true))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| fail(2, &e));
    let devices: Vec<PathBuf> = a
        .allow_device
        .iter()
        .map(|d| canonical(d, "--allow-device", false))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| fail(2, &e));
    (dirs, devices)
}

/// The server's process id into the file `--daemonize` named (exit 1 when
/// it cannot be written).
fn write_pid(a: &ServerArgs) {
    if let Some(p) = &a.pid_file {
        let pid = format!("{}\n", std::process::id());
        if let Err(e) = ssdready_run::output::replace(p, pid.as_bytes()) {
            fail(1, &format!("option '--daemonize': {}: {e}", p.display()));
        }
    }
}

/// Remove the job directories of servers that are gone, saying how many.
fn remove_stale_jobs(jobs: &Path) {
    let stale = JobFiles::clean_stale(jobs);
    if !stale.is_empty() {
        say(&format!(
            "server: removed {} job director{} left by servers that are gone",
            stale.len(),
            if stale.len() == 1 { "y" } else { "ies" }
        ));
    }
}

/// `ssdready server`.
pub fn command(a: ServerArgs) {
    let ip: IpAddr = a.bind.trim_matches(['[', ']']).parse().unwrap_or_else(|_| {
        fail(2, &format!("option '--bind': '{}' is not an IP address (allowed: e.g. 127.0.0.1, ::1, 0.0.0.0)", a.bind))
    });
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let me = nix::unistd::geteuid().as_raw();
    let users = users(&a.allow_user, me, &passwd).unwrap_or_else(|e| fail(2, &e));
    let home = a
        .directory
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("ssdready-server-{me}")));
    // Every switch checked before anything is made (bad input writes nothing).
    let (dirs, devices) = allowed_paths(&a);
    let own_dir = || {
        own_directory(&home, me).unwrap_or_else(|e| fail(2, &format!("option '--directory': {e}")))
    };
    if let Some(pid_file) = &a.daemonize {
        own_dir();
        background(&a, &home, pid_file);
    }
    // Only the server's user and root: the socket file's mode alone decides.
    let owner_only = matches!(&users, Users::Only(v) if v.iter().all(|&u| u == 0 || u == me));
    let server = match &a.socket {
        Some(p) => Server::bind_unix(p, if owner_only { 0o600 } else { 0o666 })
            .unwrap_or_else(|e| fail(2, &format!("option '--socket': {e}"))),
        None => Server::bind(SocketAddr::new(ip, a.port))
            .unwrap_or_else(|e| fail(2, &format!("option '--port': {e}"))),
    };
    let (work, jobs) = own_dir();
    let policy = Policy {
        dirs: std::iter::once(work.clone()).chain(dirs).collect(),
        devices,
        exec: a.allow_exec,
        users,
    };
    write_pid(&a);
    remove_stale_jobs(&jobs);
    if let Err(e) = std::env::set_current_dir(&work) {
        fail(1, &format!("server: {}: {e}", work.display()));
    }
    let stop = crate::stop_on_signals();
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
        jobs,
        passwd,
    };
    if let Err(e) = server.serve(&engine, &stop, a.runs, &log) {
        fail(1, &format!("server: {e}"));
    }
}

/// `--daemonize`: start this same server in the background (a session of
/// its own, its output in `server.log` in its directory), wait until it
/// listens and has written its process id, then exit 0; or say why it did
/// not start, exit 2.
fn background(a: &ServerArgs, home: &Path, pid_file: &Path) -> ! {
    use std::os::unix::process::CommandExt;
    match ssdready_run::output::checked(pid_file) {
        Ok(ssdready_run::output::Sink::File(_)) => {}
        Ok(_) => fail(
            2,
            &format!(
                "option '--daemonize': {} is not a regular file",
                pid_file.display()
            ),
        ),
        Err(e) => fail(2, &format!("option '--daemonize': {e}")),
    }
    let _ = std::fs::remove_file(pid_file);
    let log_path = home.join("server.log");
    let log = std::fs::File::create(&log_path)
        .unwrap_or_else(|e| fail(1, &format!("{}: {e}", log_path.display())));
    let exe = std::env::current_exe()
        .unwrap_or_else(|e| fail(1, &format!("cannot find this program: {e}")));
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("server").args(same_server(a, home));
    let mut child = cmd
        .arg("--pid-file")
        .arg(pid_file)
        .stdin(std::process::Stdio::null())
        .stdout(log.try_clone().unwrap_or_else(|e| fail(1, &e.to_string())))
        .stderr(log)
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| fail(1, &format!("cannot start the server: {e}")));
    let stop = crate::stop_flag();
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            let text = std::fs::read_to_string(&log_path).unwrap_or_default();
            let last = text
                .lines()
                .last()
                .unwrap_or("")
                .trim_start_matches("ssdready: ");
            fail(
                st.code().unwrap_or(1).max(1),
                &format!("the server did not start: {last}"),
            );
        }
        let written = std::fs::read_to_string(pid_file).unwrap_or_default();
        if written.trim() == child.id().to_string() {
            std::process::exit(0);
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            let _ = child.kill();
            fail(130, "interrupted while the server started");
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
    if let Some(p) = &a.socket {
        // `--socket` goes alone: no --bind/--port.
        v.drain(..4);
        v.extend(["--socket".into(), p.into()]);
    }
    v
}

/// The users who may connect: the server's own, root, and those named.
fn users(named: &[String], me: u32, passwd: &str) -> Result<Users, String> {
    if named.iter().any(|u| u == "all") {
        return Ok(Users::All);
    }
    let mut v = vec![me, 0];
    for u in named {
        v.push(policy::uid_of(u, passwd).ok_or_else(|| {
            format!("option '--allow-user': '{u}' is not a user of this host (allowed: a user name, a uid, or all)")
        })?);
    }
    v.sort_unstable();
    v.dedup();
    Ok(Users::Only(v))
}

/// An allowed place, canonical; it must exist (a directory for `--allow-dir`).
fn canonical(p: &Path, what: &str, dir: bool) -> Result<PathBuf, String> {
    let c = p
        .canonicalize()
        .map_err(|e| format!("option '{what}': {}: {e}", p.display()))?;
    if dir && !c.is_dir() {
        return Err(format!(
            "option '{what}': {} is not a directory",
            p.display()
        ));
    }
    Ok(c)
}

/// Make (or take back) the server's directory, private to its user: its
/// `work` and `jobs` subdirectories, canonical. Refused when it is a
/// symbolic link or belongs to another user.
fn own_directory(home: &Path, me: u32) -> Result<(PathBuf, PathBuf), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let shown = home.display();
    match std::fs::DirBuilder::new().mode(0o700).create(home) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{shown}: {e}")),
    }
    let md = std::fs::symlink_metadata(home).map_err(|e| format!("{shown}: {e}"))?;
    if !md.is_dir() {
        return Err(format!(
            "{shown} is not a directory (a symbolic link is refused: the server's directory must be its own)"
        ));
    }
    if md.uid() != me {
        return Err(format!(
            "{shown} belongs to uid {}, not to this server's user (uid {me}): another user may have made it",
            md.uid()
        ));
    }
    std::fs::set_permissions(home, std::fs::Permissions::from_mode(0o700))
        .map_err(|e| format!("{shown}: {e}"))?;
    let mut out = Vec::new();
    for sub in ["work", "jobs"] {
        let p = home.join(sub);
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{}: {e}", p.display())),
        }
        let c = p
            .canonicalize()
            .map_err(|e| format!("{}: {e}", p.display()))?;
        if !c.starts_with(home.canonicalize().map_err(|e| e.to_string())?) || !c.is_dir() {
            return Err(format!("{} is not a directory of its own", p.display()));
        }
        out.push(c);
    }
    Ok((out.remove(0), out.remove(0)))
}

/// The start-up line: who may connect, where jobs may go, and commands.
fn allows(p: &Policy, local_only: bool, passwd: &str) -> String {
    let who = match &p.users {
        Users::All => "any user of this host".to_string(),
        Users::Only(v) => v
            .iter()
            .map(|u| policy::user_name(*u, passwd))
            .collect::<Vec<_>>()
            .join(", "),
    };
    let remote = if local_only {
        "from this host only"
    } else {
        "and any host the network lets reach this port"
    };
    format!(
        "allows: clients {who} ({remote}); jobs in {}; commands {}",
        p.places(),
        if p.exec {
            "allowed (--allow-exec)"
        } else {
            "refused (--allow-exec allows them)"
        }
    )
}

/// The run engine behind `ssdready server`: a job is checked against the
/// server's policy, then checked and run exactly as `ssdready run` would
/// (same validation, same safety checks, never `--allow-destructive`).
struct Engine {
    policy: Policy,
    jobs: PathBuf,
    passwd: String,
}

impl Engine {
    /// The request's job files written and parsed, every option and path
    /// checked against the policy.
    fn checked(&self, req: &JobRequest) -> Result<(JobFiles, args::RunArgs), String> {
        self.policy
            .check_args(&req.args)
            .map_err(|e| e.to_string())?;
        for text in &req.jobs {
            self.check_includes(text)?;
        }
        let (files, all) = JobFiles::write(&self.jobs, req).map_err(|e| e.to_string())?;
        let mut parsed = args::parse(&all).map_err(|e| e.to_string())?;
        parsed.quiet = true;
        parsed.eta = args::Eta::Never;
        parsed.allow_destructive = false;
        let base = std::env::current_dir().map_err(|e| e.to_string())?;
        for s in &parsed.sections {
            for o in &s.options {
                self.policy
                    .check_option(&o.key, o.value.as_deref(), &base)
                    .map_err(|e| in_job(&s.name, e.to_string()))?;
            }
        }
        Ok((files, parsed))
    }

    /// `include` lines name places the policy allows (and no variable,
    /// which could expand to another place after this check).
    fn check_includes(&self, text: &str) -> Result<(), String> {
        for line in text.lines() {
            let t = line.trim_start();
            let Some(file) = t
                .strip_prefix("include")
                .filter(|r| r.starts_with([' ', '\t']))
                .map(str::trim)
            else {
                continue;
            };
            if file.contains('$') {
                return Err(format!(
                    "include {file}: a variable in an included file's name is refused by a server"
                ));
            }
            self.policy
                .check_include(Path::new(file))
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Every file the jobs will use lies in an allowed place.
    fn check_targets(&self, specs: &[ssdready_core::spec::JobSpec]) -> Result<(), String> {
        use ssdready_workload::fileset::{self, PathInfo};
        let info = |p: &str| match std::fs::metadata(p) {
            Ok(md) => PathInfo {
                exists: true,
                regular: md.is_file(),
                size: md.len(),
            },
            Err(_) => PathInfo::default(),
        };
        let list = |d: &str| -> Result<Vec<String>, String> {
            self.policy
                .check_path(Path::new(d), "option 'opendir'")
                .map_err(|e| e.to_string())?;
            Ok(Vec::new())
        };
        for s in specs {
            if s.ioengine == ssdready_core::spec::EngineKind::Null
                || (s.on_emulator() && s.filename.is_empty())
            {
                continue;
            }
            for clone in 0..s.numjobs.max(1) {
                let names = fileset::names(s, clone, &info, &list).map_err(|e| e.to_string())?;
                for n in names
                    .iter()
                    .filter(|n| *n != "emu" && !n.starts_with("emu:"))
                {
                    self.policy
                        .check_path(Path::new(n), "target")
                        .map_err(|e| in_job(&s.name, e.to_string()))?;
                }
            }
        }
        Ok(())
    }

    /// The request checked, parsed and resolved: its jobs.
    fn resolved(
        &self,
        req: &JobRequest,
        stop: Arc<AtomicBool>,
    ) -> Result<(JobFiles, ssdready_run::RunRequest, usize), (u32, String)> {
        let (files, parsed) = self.checked(req).map_err(|e| (1, e))?;
        let request = parsed.request(stop);
        let specs = ssdready_run::resolve(
            &request,
            ssdready_emu::memory::TimeBase::Real,
            &mut ssdready_run::SilentObserver,
        )
        .map_err(|f| (22, f.message().to_string()))?;
        self.check_targets(&specs).map_err(|e| (1, e))?;
        Ok((files, request, specs.len()))
    }
}

fn in_job(job: &str, e: String) -> String {
    if job == "global" {
        e
    } else {
        format!("job '{job}': {e}")
    }
}

impl Engine {
    /// A local user: allowed, or why not.
    fn admit_uid(&self, uid: u32) -> Result<(), String> {
        if self.policy.admits_uid(uid) {
            return Ok(());
        }
        Err(format!(
            "user {} (uid {uid}) may not drive this server (its operator allows others with --allow-user)",
            policy::user_name(uid, &self.passwd)
        ))
    }
}

impl Runner for Engine {
    fn plan(&self, req: &JobRequest) -> Result<u32, String> {
        self.resolved(req, Arc::new(AtomicBool::new(false)))
            .map(|(_, _, n)| n as u32)
            .map_err(|(_, e)| e)
    }

    fn run(&self, req: &JobRequest, version: u16, stop: Arc<AtomicBool>) -> RunOutput {
        let failed = |error: u32, text: String| RunOutput {
            error,
            text: format!("ssdready: {text}\n"),
            ..Default::default()
        };
        let (_files, mut request) = match self.resolved(req, stop) {
            Ok((f, r, _)) => (f, r),
            Err((code, e)) => return failed(code, e),
        };
        // The jobs' logs go to the client, as fio's server sends them.
        let sink = ssdready_run::LogSink::default();
        request.log_sink = Some(sink.clone());
        let result = match ssdready_run::execute(request, &mut ssdready_run::SilentObserver) {
            Ok(r) => r,
            Err(f) => return failed(f.exit_code() as u32, f.message().to_string()),
        };
        let worker_logs = std::mem::take(&mut *sink.lock().unwrap_or_else(|p| p.into_inner()));
        let logs = match crate::fleet_cmd::to_wire(worker_logs, version) {
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
                global_options: result.global_options.clone(),
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

    fn admit(&self, client: &Client) -> Result<(), String> {
        if self.policy.users == Users::All {
            return Ok(());
        }
        let (local, peer) = match *client {
            Client::Tcp { local, peer } => (local, peer),
            Client::Unix { uid: Some(uid) } => return self.admit_uid(uid),
            Client::Unix { uid: None } => {
                return Err("cannot tell which user connected to the socket: refused".into())
            }
        };
        let tables: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        // An address is this host's when a socket can be bound to it.
        let is_local = |ip: IpAddr| std::net::UdpSocket::bind((ip, 0)).is_ok();
        match policy::identify(local, peer, &tables, &is_local) {
            Peer::Local(uid) => self.admit_uid(uid),
            Peer::Unknown => Err(
                "cannot tell which user of this host connected (its socket is not open): refused"
                    .into(),
            ),
            Peer::Remote => Ok(()),
        }
    }
}
