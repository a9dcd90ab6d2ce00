//! What a server lets its clients do: who may connect, which job options
//! travel, and which places a job may read and write.
//!
//! A server often runs as root on a machine other people log in to, while
//! fio's protocol has no authentication. So the defaults are closed:
//!
//! * **Who**: a client on this host is identified by the owner of its
//!   socket (the kernel's socket table, `/proc/net/tcp*`); only the
//!   server's own user and root may drive it, unless the operator names
//!   more (`--allow-user`). A client on another host cannot be identified:
//!   it reaches the server only when the operator binds an address other
//!   than loopback, and is then trusted as the network lets it in.
//! * **What travels**: job options only. A switch of `run` itself
//!   (`--allow-destructive`, `--output`, …) is refused, and so is a job
//!   file path in the job line (job files travel as their text).
//! * **Commands**: `exec_prerun` and `exec_postrun` are refused unless the
//!   server was started with `--allow-exec`.
//! * **Places**: every path a job names (targets, directories, iologs,
//!   pattern files, includes, mmap'd memory, donor files) must resolve,
//!   symbolic links followed, inside a directory or onto a device the
//!   operator allowed. The default is the server's own scratch directory.
//!
//! The checks are pure functions of the policy and the paths' resolution,
//! so they are tested here without a server.

use std::net::{IpAddr, SocketAddr};
use std::path::{Component, Path, PathBuf};

/// Why a server refuses what a client sent; nothing of a refused path's
/// contents is said.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(
        "'{arg}': a job file path in the job line is not accepted from the network \
         (allowed: job options; job files travel as their text)"
    )]
    JobFilePath { arg: String },
    #[error(
        "'--{key}' is not a job option; a server takes job options only \
         (switches of the command line stay with whoever starts the server)"
    )]
    NotAJobOption { key: String },
    #[error(
        "option '{option}' runs a command as this server's user: refused \
         (the server's operator allows it with --allow-exec)"
    )]
    Command { option: String },
    #[error("option '{option}' lifts a safety check: only the server's operator may give it")]
    OperatorOnly { option: String },
    #[error(
        "option '{option}={value}' raises the job's priority ({what}): only a client that \
         is root may (allowed: {allowed})"
    )]
    Priority {
        option: String,
        value: String,
        what: &'static str,
        allowed: &'static str,
    },
    /// A path outside the allowed places (`what` names the option).
    #[error("{what}: '{}' is outside the places this server allows ({places})", .path.display())]
    Outside {
        what: String,
        path: PathBuf,
        places: String,
    },
}

/// Which local users may connect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Users {
    /// Any user (`--allow-user all`).
    All,
    /// These uids.
    Only(Vec<u32>),
}

/// What the operator allowed when starting the server.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Directories a job may use, canonical (symbolic links resolved).
    pub dirs: Vec<PathBuf>,
    /// Devices (or single files) a job may use, canonical.
    pub devices: Vec<PathBuf>,
    /// Whether a job may run commands (`exec_prerun`, `exec_postrun`).
    pub exec: bool,
    /// Who may connect from this host.
    pub users: Users,
}

/// Options that run a command as the server's user.
const COMMAND_OPTIONS: &[&str] = &["exec_prerun", "exec_postrun"];

/// Options that only the operator may give: they lift a safety check.
const OPERATOR_OPTIONS: &[&str] = &["allow_mounted_write"];

/// Options whose value names paths a job reads or writes (targets are
/// checked after resolution, from the job's file list).
const PATH_OPTIONS: &[&str] = &[
    "directory",
    "opendir",
    "read_iolog",
    "write_iolog",
    "replay_redirect",
    "merge_blktrace_file",
    "donorname",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "write_hist_log",
];

/// The switches fio's client forwards on the job line besides the job
/// options (those its `l_opts` table marks `FIO_CLIENT_FLAG`, fio 3.33):
/// they belong to the client, which writes the output itself, and a
/// server ignores them, as fio's server does — all but [`KEPT_SWITCHES`].
pub const CLIENT_SWITCHES: &[&str] = &[
    "output",
    "latency-log",
    "bandwidth-log",
    "minimal",
    "output-format",
    "version",
    "help",
    "cmdhelp",
    "enghelp",
    "showcmd",
    "readonly",
    "eta",
    "eta-interval",
    "eta-newline",
    "debug",
    "parse-only",
    "section",
    "inflate-log",
    "alloc-size",
    "profile",
    "warnings-fatal",
    "max-jobs",
    "terse-version",
    "status-interval",
    "merge-blktrace-only",
];

/// The client's switches that shape the run itself and are applied on the
/// server as fio's server applies them: `--section` (which jobs run) and
/// `--readonly` (which refuses every write).
pub const KEPT_SWITCHES: &[&str] = &["section", "readonly"];

impl Policy {
    /// A job line's arguments as the server uses them: job options and
    /// [`KEPT_SWITCHES`], with the client's own switches
    /// ([`CLIENT_SWITCHES`]) left out; anything else is refused.
    pub fn job_args(&self, args: &[String]) -> Result<Vec<String>, PolicyError> {
        let mut kept = Vec::with_capacity(args.len());
        for a in args {
            let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')) else {
                return Err(PolicyError::JobFilePath { arg: a.clone() });
            };
            let key = body.split_once('=').map_or(body, |p| p.0);
            if KEPT_SWITCHES.contains(&key) || ssdready_core::options::find(key).is_some() {
                kept.push(format!("--{body}"));
            } else if !CLIENT_SWITCHES.contains(&key) {
                return Err(PolicyError::NotAJobOption { key: key.into() });
            }
        }
        Ok(kept)
    }

    /// Check one job option as written (`key` as given, aliases allowed).
    /// `base` resolves relative paths (the server's working directory).
    pub fn check_option(
        &self,
        key: &str,
        value: Option<&str>,
        base: &Path,
    ) -> Result<(), PolicyError> {
        let name = ssdready_core::options::find(key).map_or(key, |d| d.name);
        // A flag given bare is set: `allow_mounted_write` is
        // `allow_mounted_write=1`.
        let set = value.is_none_or(|v| v.trim() != "0");
        let value = value.unwrap_or("");
        if COMMAND_OPTIONS.contains(&name) && !value.trim().is_empty() && !self.exec {
            return Err(PolicyError::Command {
                option: name.into(),
            });
        }
        if OPERATOR_OPTIONS.contains(&name) && set {
            return Err(PolicyError::OperatorOnly {
                option: name.into(),
            });
        }
        let mut paths: Vec<String> = Vec::new();
        if PATH_OPTIONS.contains(&name) {
            paths.extend(
                ssdready_core::option_values::split_names(value)
                    .into_iter()
                    .filter(|p| !p.is_empty()),
            );
        }
        if name == "buffer_pattern" || name == "verify_pattern" {
            paths.extend(pattern_files(value).into_iter().map(str::to_string));
        }
        if name == "mem" {
            if let Some((_, p)) = value.split_once(':') {
                paths.push(p.to_string());
            }
        }
        for p in paths {
            self.check_path(&base.join(&p), &format!("option '{name}'"))?;
        }
        Ok(())
    }

    /// Check that option `key` does not raise the job's priority above what
    /// a user who is not root may: a negative `nice`, or the real-time I/O
    /// class (`prioclass`, `cmdprio_class`, `cmdprio_bssplit`). Put to
    /// every client not known as root, whatever rights its job runs with.
    pub fn check_priority(key: &str, value: Option<&str>) -> Result<(), PolicyError> {
        let name = ssdready_core::options::find(key).map_or(key, |d| d.name);
        let v = value.unwrap_or("").trim();
        let refuse = |what, allowed| {
            Err(PolicyError::Priority {
                option: name.into(),
                value: v.into(),
                what,
                allowed,
            })
        };
        let rt = |class: &str| class.trim() == "1";
        match name {
            "nice" if v.parse::<i64>().is_ok_and(|n| n < 0) => {
                refuse("a nice value below 0", "nice=0 to 19")
            }
            "prioclass" if rt(v) => refuse("the real-time I/O class", "prioclass=0, 2 or 3"),
            "cmdprio_class" if v.split(',').any(rt) => {
                refuse("the real-time I/O class", "cmdprio_class=2 or 3")
            }
            "cmdprio_bssplit"
                if v.split([',', ':'])
                    .any(|e| e.split('/').nth(2).is_some_and(rt)) =>
            {
                refuse(
                    "the real-time I/O class",
                    "classes 2 or 3 in cmdprio_bssplit",
                )
            }
            _ => Ok(()),
        }
    }

    /// Check an `include` of a job file.
    pub fn check_include(&self, path: &Path) -> Result<(), PolicyError> {
        self.check_path(path, "include")
    }

    /// Check a path a job would use: it resolves (symbolic links followed)
    /// inside an allowed directory, or onto an allowed device. The error
    /// names the path and the allowed places, and nothing of its contents.
    pub fn check_path(&self, path: &Path, what: &str) -> Result<(), PolicyError> {
        let resolved = resolve(path);
        let ok = resolved.as_ref().is_some_and(|r| {
            self.dirs.iter().any(|d| r.starts_with(d)) || self.devices.iter().any(|d| r == d)
        });
        if ok {
            return Ok(());
        }
        Err(PolicyError::Outside {
            what: what.into(),
            path: path.to_path_buf(),
            places: self.places(),
        })
    }

    /// The allowed places, for messages.
    pub fn places(&self) -> String {
        let mut v: Vec<String> = self
            .dirs
            .iter()
            .map(|d| format!("{}/", d.display()))
            .collect();
        v.extend(self.devices.iter().map(|d| d.display().to_string()));
        if v.is_empty() {
            "none".into()
        } else {
            v.join(", ")
        }
    }

    /// Whether a local user may connect.
    pub fn admits_uid(&self, uid: u32) -> bool {
        match &self.users {
            Users::All => true,
            Users::Only(v) => v.contains(&uid),
        }
    }
}

/// The files a pattern value reads (its `'path'` pieces).
pub fn pattern_files(value: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = value;
    while let Some(i) = rest.find(['\'', '"']) {
        let q = rest.as_bytes()[i] as char;
        let body = &rest[i + 1..];
        let Some(end) = body.find(q) else { break };
        if q == '\'' {
            out.push(&body[..end]);
        }
        rest = &body[end + 1..];
    }
    out
}

/// `path` made absolute (from the working directory) and canonical: the longest existing ancestor
/// canonicalized (symbolic links followed), the rest appended. `None` when
/// the rest climbs (`..`) or nothing of it exists.
pub fn resolve(path: &Path) -> Option<PathBuf> {
    let abs;
    let path = if path.is_absolute() {
        path
    } else {
        abs = std::env::current_dir().ok()?.join(path);
        &abs
    };
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    // A name that exists as a dangling symbolic link: refuse, its target
    // could be made later.
    if path.symlink_metadata().is_ok() {
        return None;
    }
    let mut rest = Vec::new();
    let mut cur = path;
    loop {
        let name = cur.file_name()?;
        rest.push(name.to_owned());
        cur = cur.parent()?;
        if let Ok(base) = cur.canonicalize() {
            let mut out = base;
            for n in rest.iter().rev() {
                out.push(n);
            }
            let climbs = Path::new(&out)
                .components()
                .any(|c| matches!(c, Component::ParentDir));
            return (!climbs).then_some(out);
        }
    }
}

/// A local user by name or number, from `/etc/passwd`'s text.
pub fn uid_of(user: &str, passwd: &str) -> Option<u32> {
    if let Ok(n) = user.parse() {
        return Some(n);
    }
    passwd.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == user).then_some(())?;
        f.nth(1)?.parse().ok()
    })
}

/// The name of `uid` in `/etc/passwd`'s text, or the number.
pub fn user_name(uid: u32, passwd: &str) -> String {
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 2 && f[2].parse() == Ok(uid)).then(|| f[0].to_string())
        })
        .unwrap_or_else(|| uid.to_string())
}

/// Who is at the other end of a TCP connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// A socket of this host, owned by this uid.
    Local(u32),
    /// An address of this host whose socket cannot be found open (it
    /// closed, or it is in another state): cannot be identified.
    Unknown,
    /// Another host.
    Remote,
}

/// Identify the client of the connection `server` ← `client` from the
/// kernel's socket tables (the texts of `/proc/net/tcp` and `tcp6`).
/// `is_local` tells whether an address belongs to this host.
pub fn identify(
    server: SocketAddr,
    client: SocketAddr,
    tables: &[String],
    is_local: &dyn Fn(IpAddr) -> bool,
) -> Peer {
    let (s, c) = (plain(server), plain(client));
    for t in tables {
        for line in t.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 8 {
                continue;
            }
            let (Some(local), Some(remote)) = (parse_addr(f[1]), parse_addr(f[2])) else {
                continue;
            };
            if local == c && remote == s {
                // Only an open (ESTABLISHED) socket says who owns it: a
                // closed one lingers as a minisocket that shows uid 0.
                return match (f[3], f[7].parse()) {
                    ("01", Ok(uid)) => Peer::Local(uid),
                    _ => Peer::Unknown,
                };
            }
        }
    }
    if c.ip().is_loopback() || is_local(c.ip()) {
        Peer::Unknown
    } else {
        Peer::Remote
    }
}

/// An IPv4-mapped IPv6 address as IPv4.
fn plain(a: SocketAddr) -> SocketAddr {
    match a.ip() {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), a.port()),
            None => a,
        },
        IpAddr::V4(_) => a,
    }
}

/// `0100007F:1F6D` (IPv4) or 32 hex digits `:PORT` (IPv6), as the kernel
/// prints them: 32-bit words in the host's byte order.
fn parse_addr(s: &str) -> Option<SocketAddr> {
    let (ip, port) = s.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let word = |i: usize| -> Option<[u8; 4]> {
        Some(
            u32::from_str_radix(ip.get(i * 8..i * 8 + 8)?, 16)
                .ok()?
                .to_ne_bytes(),
        )
    };
    let addr = match ip.len() {
        8 => IpAddr::from(word(0)?),
        32 => {
            let mut b = [0u8; 16];
            for i in 0..4 {
                b[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            IpAddr::from(b)
        }
        _ => return None,
    };
    Some(plain(SocketAddr::new(addr, port)))
}

#[cfg(test)]
mod tests;
