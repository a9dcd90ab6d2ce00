//! The server's setup, checked before anything is made: the users who may
//! connect, the allowed places (canonical), the job limits, the server's
//! own directory (`work/`, and `users/` for a root server's other users),
//! and the start-up line that says what the server allows. Each error is
//! the one line the operator reads (the binary exits 2 with it).

use crate::spawn::JobLimits;
use ssdready_fleet::policy::{self, Policy, Users};
use std::path::{Path, PathBuf};

/// The job limits the switches give: `memory` a size of 64 MiB or more,
/// `time` 1 s or more, `files` and `workers` 1 or more; the error is the
/// line that says which and why.
pub fn job_limits(memory: &str, time: &str, files: u64, workers: u64) -> Result<JobLimits, String> {
    use ssdready_core::units::{parse_size, parse_time_ns};
    let job_memory = parse_size(memory, 1024)
        .ok()
        .filter(|m| *m >= 64 << 20)
        .ok_or_else(|| {
            format!("option '--job-memory': '{memory}' is not a size of 64 MiB or more (allowed: e.g. 512m, 4g)")
        })?;
    let job_time = parse_time_ns(time, 1_000_000_000)
        .ok()
        .filter(|t| *t >= 1_000_000_000)
        .ok_or_else(|| {
            format!("option '--job-time': '{time}' is not a time of 1 s or more (allowed: e.g. 90s, 30m, 24h)")
        })?;
    for (what, v) in [("--job-files", files), ("--job-threads", workers)] {
        if v == 0 {
            return Err(format!("option '{what}': 0 (allowed: 1 or more)"));
        }
    }
    Ok(JobLimits {
        memory: job_memory,
        files,
        workers,
        time: std::time::Duration::from_nanos(job_time),
    })
}

/// The users who may connect: the server's own, root, and those named.
pub fn users(named: &[String], me: u32, passwd: &str) -> Result<Users, String> {
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
pub fn canonical(p: &Path, what: &str, dir: bool) -> Result<PathBuf, String> {
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

/// Make (or take back) the server's directory, its user's own (mode 0700,
/// 0711 when `traversable`: other users' directories lie below it), and
/// its `work` subdirectory (0700): that, canonical. Refused when either is
/// a symbolic link or belongs to another user.
pub fn own_directory(home: &Path, me: u32, traversable: bool) -> Result<PathBuf, String> {
    let mode = if traversable { 0o711 } else { 0o700 };
    private_dir(home, mode, me).map_err(|e| {
        format!("{e} (a symbolic link is refused: the server's directory must be its own)")
    })?;
    let work = home.join("work");
    private_dir(&work, 0o700, me)?;
    if traversable {
        private_dir(&home.join("users"), 0o711, me)?;
    }
    work.canonicalize()
        .map_err(|e| format!("{}: {e}", work.display()))
}

/// Make the directory `p` with `mode`, or take it back when it is already
/// a directory (not a symbolic link) of user `owner`; its mode set to
/// `mode` whatever the umask.
pub fn private_dir(p: &Path, mode: u32, owner: u32) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let shown = p.display();
    match std::fs::DirBuilder::new().mode(mode).create(p) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("{shown}: {e}")),
    }
    let md = std::fs::symlink_metadata(p).map_err(|e| format!("{shown}: {e}"))?;
    if !md.is_dir() {
        return Err(format!("{shown} is not a directory"));
    }
    if md.uid() != owner {
        return Err(format!(
            "{shown} belongs to uid {}, not to uid {owner}: another user may have made it",
            md.uid()
        ));
    }
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("{shown}: {e}"))
}

/// The start-up line: who may connect, where jobs may go, and commands.
pub fn allows(p: &Policy, local_only: bool, passwd: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_limits_below_their_floors_are_refused_naming_the_switch() {
        let l = job_limits("512m", "90s", 10, 2).unwrap();
        assert_eq!((l.memory, l.files, l.workers), (512 << 20, 10, 2));
        assert_eq!(l.time.as_secs(), 90);
        let e = job_limits("1k", "90s", 10, 2).unwrap_err();
        assert!(e.starts_with("option '--job-memory': '1k'"), "{e}");
        let e = job_limits("4g", "500ms", 10, 2).unwrap_err();
        assert!(e.starts_with("option '--job-time': '500ms'"), "{e}");
        let e = job_limits("4g", "1h", 10, 0).unwrap_err();
        assert_eq!(e, "option '--job-threads': 0 (allowed: 1 or more)");
    }

    #[test]
    fn the_users_are_the_servers_own_root_and_those_named() {
        let passwd = "alice:x:1001:1001::/home/alice:/bin/sh\n";
        match users(&["alice".into()], 1000, passwd).unwrap() {
            Users::Only(v) => assert_eq!(v, [0, 1000, 1001]),
            Users::All => panic!("all"),
        }
        assert!(matches!(users(&["all".into()], 1000, ""), Ok(Users::All)));
        let e = users(&["nobody-here".into()], 1000, passwd).unwrap_err();
        assert!(
            e.contains("'nobody-here' is not a user of this host"),
            "{e}"
        );
    }

    #[test]
    fn a_link_in_place_of_the_servers_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let me = nix::unistd::geteuid().as_raw();
        let home = d.path().join("home");
        let work = own_directory(&home, me, false).unwrap();
        assert_eq!(work, home.join("work").canonicalize().unwrap());
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&home, &link).unwrap();
        let e = own_directory(&link, me, false).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        assert!(e.contains("a symbolic link is refused"), "{e}");
    }
}
