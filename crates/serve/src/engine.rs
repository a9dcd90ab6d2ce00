//! The run engine behind `ssdready server`: who a client is, and its jobs
//! checked and run in processes of their own (`spawn`,
//! `job`) exactly as `ssdready run` would check and run them (same
//! validation, same safety checks, never `--allow-destructive`), with the
//! server's policy on top.
//!
//! Whose rights a job runs with:
//!
//! | server | client | the job runs as | kept to the allowed places by |
//! |---|---|---|---|
//! | root | another local user | that user (uid, gid, groups from the user database) | the kernel's permissions, and Landlock |
//! | root | root | root | Landlock |
//! | any | another host (`--bind`) | the server's user | Landlock, required |
//! | not root | any | the server's user | Landlock, required for others than the server's user |
//!
//! Only a client known as root may raise a job's priority (a negative
//! nice, the real-time I/O class); a job that runs as its user could not
//! anyway, and one that runs with the server's rights for another host is
//! refused it by the policy.

use crate::job::{Mode, Order, Planned};
use crate::spawn::{self, Creds, JobLimits};
use ssdready_fleet::pdu::ProbeReply;
use ssdready_fleet::policy::{self, Peer, Policy, Users};
use ssdready_fleet::server::{Client, Identity, JobRequest, RunOutput, Runner};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub struct Engine {
    pub policy: Policy,
    /// The server's own directory, and its working directory in it.
    pub home: PathBuf,
    pub work: PathBuf,
    /// The server's user.
    pub me: u32,
    pub limits: JobLimits,
    pub passwd: String,
    /// The server's stop flag (a check in progress ends with it).
    pub stop: Arc<AtomicBool>,
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

    /// The user a job of `who` runs as: `None` for the server's own rights
    /// (a server that is not root cannot take another's; root and
    /// unidentified clients keep them).
    fn credentials(&self, who: &Identity) -> Result<Option<Creds>, String> {
        let uid = match who.uid {
            Some(u) if self.me == 0 && u != 0 => u,
            _ => return Ok(None),
        };
        use nix::unistd::{getgrouplist, Uid, User};
        let user = User::from_uid(Uid::from_raw(uid)).ok().flatten();
        let (gid, groups) = match (user, who.gid) {
            (Some(u), _) => {
                let name = std::ffi::CString::new(u.name.clone()).map_err(|e| e.to_string())?;
                let groups = getgrouplist(&name, u.gid)
                    .map_err(|e| format!("the groups of user {}: {e}", u.name))?;
                (u.gid.as_raw(), groups.iter().map(|g| g.as_raw()).collect())
            }
            (None, Some(g)) => (g, vec![g]),
            (None, None) => {
                return Err(format!(
                    "uid {uid} has no entry in the user database: its groups are unknown, so \
                     its jobs cannot be given its rights: refused"
                ))
            }
        };
        Ok(Some(Creds { uid, gid, groups }))
    }

    /// The working directory of another user's jobs: `users/UID` in the
    /// server's directory, made by the server and given to the user.
    fn user_work(&self, c: &Creds) -> Result<PathBuf, String> {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let d = self.home.join("users").join(c.uid.to_string());
        let shown = d.display();
        match std::fs::DirBuilder::new().mode(0o700).create(&d) {
            Ok(()) => std::os::unix::fs::chown(&d, Some(c.uid), Some(c.gid))
                .map_err(|e| format!("{shown}: {e}"))?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("{shown}: {e}")),
        }
        let md = std::fs::symlink_metadata(&d).map_err(|e| format!("{shown}: {e}"))?;
        if !md.is_dir() || md.uid() != c.uid {
            return Err(format!(
                "{shown} is not a directory of uid {}: refused",
                c.uid
            ));
        }
        d.canonicalize().map_err(|e| format!("{shown}: {e}"))
    }

    /// The order for a job's process, and the user it runs as.
    fn order(
        &self,
        req: &JobRequest,
        mode: Mode,
        version: u16,
    ) -> Result<(Order, Option<Creds>), String> {
        let creds = self.credentials(&req.who)?;
        let work = match &creds {
            Some(c) => self.user_work(c)?,
            None => self.work.clone(),
        };
        let others = self
            .policy
            .dirs
            .iter()
            .filter(|d| **d != self.work)
            .cloned();
        let root_client = req.who.uid == Some(0);
        let own_user = req.who.uid.is_some_and(|u| u == self.me || u == 0);
        let order = Order {
            mode,
            args: req.args.clone(),
            jobs: req.jobs.clone(),
            version,
            zlib: req.zlib,
            dirs: std::iter::once(work.clone()).chain(others).collect(),
            work,
            devices: self.policy.devices.clone(),
            exec: self.policy.exec,
            root_client,
            confine_required: creds.is_none() && !own_user,
            max_workers: self.limits.workers,
            max_files: self.limits.files,
        };
        Ok((order, creds))
    }

    fn start(&self, req: &JobRequest, mode: Mode, version: u16) -> Result<spawn::Job, String> {
        let (order, creds) = self.order(req, mode, version)?;
        spawn::start(&order, creds.as_ref(), self.limits)
    }
}

fn failed(error: u32, text: String) -> RunOutput {
    RunOutput {
        error,
        text: format!("ssdready: {text}\n"),
        ..Default::default()
    }
}

impl Runner for Engine {
    fn plan(&self, req: &JobRequest) -> Result<u32, String> {
        let job = self.start(req, Mode::Plan, ssdready_fleet::VERSIONS[0])?;
        match spawn::plan(job, &self.stop)? {
            Planned::Jobs(n) => Ok(n),
            Planned::Refused(why) => Err(why),
        }
    }

    fn run(&self, req: &JobRequest, version: u16, stop: Arc<AtomicBool>) -> RunOutput {
        let job = match self.start(req, Mode::Run, version) {
            Ok(j) => j,
            Err(e) => return failed(1, e),
        };
        match spawn::run(job, &stop) {
            Ok(encoded) => RunOutput {
                encoded: Some(encoded),
                ..Default::default()
            },
            Err(e) => failed(1, e),
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

    fn admit(&self, client: &Client) -> Result<Identity, String> {
        // Who it is matters to a root server even when anyone may connect:
        // the job runs with that user's rights.
        if self.policy.users == Users::All && self.me != 0 {
            return Ok(Identity::default());
        }
        let (local, peer) = match *client {
            Client::Tcp { local, peer } => (local, peer),
            Client::Unix {
                uid: Some(uid),
                gid,
            } => {
                self.admit_uid(uid)?;
                return Ok(Identity {
                    uid: Some(uid),
                    gid,
                });
            }
            Client::Unix { uid: None, .. } => {
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
            Peer::Local(uid) => {
                self.admit_uid(uid)?;
                Ok(Identity {
                    uid: Some(uid),
                    gid: None,
                })
            }
            Peer::Unknown => Err(
                "cannot tell which user of this host connected (its socket is not open): refused"
                    .into(),
            ),
            Peer::Remote => Ok(Identity::default()),
        }
    }
}
