//! What a server job's process does to itself before it reads its order
//! ([`crate::job`]): its limits, its user, and the places it may open.
//!
//! * **Limits** (`setrlimit`): the memory it may use (`RLIMIT_DATA`, the
//!   heap and private mappings: a job's logs or buffers past it fail the
//!   job, not the server), the files it may hold open, no core dump, and no
//!   raising of its nice value or real-time priority (`RLIMIT_NICE`,
//!   `RLIMIT_RTPRIO` at 0).
//! * **The client's user**: supplementary groups, then gid, then uid (all
//!   three of each id), then checked; a process that changed its
//!   credentials is not dumpable, so the user cannot trace it either.
//! * **Places** (Landlock, Linux 5.13 and later): read, write, create and
//!   remove beneath the allowed directories; read and write the allowed
//!   devices; read `/proc` and `/sys`; `/dev/null`, `/dev/zero` and the
//!   random devices. The kernel checks every open against these rules on
//!   the file reached, after every symbolic link, `..` and `/proc/PID/cwd`
//!   was followed, so a name swapped between a check and an open leads
//!   nowhere else.
//!
//! [`read_checked`] reads an included file: opened without blocking, a
//! regular file only, the place of what was opened checked, at most 16 MiB.

use ssdready_fleet::policy::Policy;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Set the job's limits: `memory` bytes, `files` open files.
pub fn limits(memory: u64, files: u64) -> Result<(), String> {
    use nix::sys::resource::{setrlimit, Resource};
    for (r, v, what) in [
        (Resource::RLIMIT_DATA, memory, "memory"),
        (Resource::RLIMIT_NOFILE, files, "open files"),
        (Resource::RLIMIT_CORE, 0, "core dumps"),
        (Resource::RLIMIT_NICE, 0, "nice values"),
        (Resource::RLIMIT_RTPRIO, 0, "real-time priority"),
    ] {
        setrlimit(r, v, v).map_err(|e| format!("limiting {what} to {v}: {e}"))?;
    }
    Ok(())
}

/// Take user `uid`'s rights: `groups`, `gid`, `uid`, in that order, then
/// check that no way back is left.
pub fn become_user(uid: u32, gid: u32, groups: &[u32]) -> Result<(), String> {
    use nix::unistd::{getgroups, getresgid, getresuid, setgroups, setresgid, setresuid, Gid, Uid};
    let groups: Vec<Gid> = groups.iter().map(|g| Gid::from_raw(*g)).collect();
    let (u, g) = (Uid::from_raw(uid), Gid::from_raw(gid));
    setgroups(&groups).map_err(|e| format!("taking uid {uid}'s groups: {e}"))?;
    setresgid(g, g, g).map_err(|e| format!("taking gid {gid}: {e}"))?;
    setresuid(u, u, u).map_err(|e| format!("taking uid {uid}: {e}"))?;
    let (ru, rg) = (
        getresuid().map_err(|e| e.to_string())?,
        getresgid().map_err(|e| e.to_string())?,
    );
    let ids_ok = [ru.real, ru.effective, ru.saved].iter().all(|x| *x == u)
        && [rg.real, rg.effective, rg.saved].iter().all(|x| *x == g);
    let mut have = getgroups().map_err(|e| e.to_string())?;
    let mut want = groups;
    have.sort_unstable_by_key(|g| g.as_raw());
    want.sort_unstable_by_key(|g| g.as_raw());
    have.dedup();
    want.dedup();
    // Root again would now be refused (uid 0 is not uid's to take).
    let back = uid != 0 && setresuid(Uid::from_raw(0), Uid::from_raw(0), Uid::from_raw(0)).is_ok();
    if !ids_ok || have != want || back {
        return Err(format!(
            "the job's process did not become uid {uid}, gid {gid} exactly: refused"
        ));
    }
    Ok(())
}

/// End with the server: a server killed outright takes its jobs with it.
/// False when the server has already gone (the job then ends, exit 1).
#[must_use]
pub fn end_with_parent() -> bool {
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    // The server may have gone before the line above.
    nix::unistd::getppid() != nix::unistd::Pid::from_raw(1)
}

/// Confine this process (and every thread and process it starts) to the
/// allowed places. Not enforced (a kernel without Landlock) is said, for
/// the caller to decide.
pub fn confine(dirs: &[PathBuf], devices: &[PathBuf]) -> Result<bool, String> {
    use landlock::{
        Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, ABI,
    };
    let abi = ABI::V5;
    let all = AccessFs::from_all(abi);
    let err = |what: &str, e: &dyn std::fmt::Display| format!("confining the job ({what}): {e}");
    let mut rules: Vec<(PathBuf, landlock::BitFlags<AccessFs>)> = Vec::new();
    rules.extend(dirs.iter().map(|d| (d.clone(), all)));
    rules.extend(
        devices
            .iter()
            .map(|d| (d.clone(), AccessFs::from_file(abi))),
    );
    for p in ["/proc", "/sys"] {
        rules.push((p.into(), AccessFs::ReadFile | AccessFs::ReadDir));
    }
    for p in ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"] {
        if Path::new(p).exists() {
            rules.push((p.into(), AccessFs::ReadFile | AccessFs::WriteFile));
        }
    }
    let mut rs = Ruleset::default()
        .handle_access(all)
        .and_then(|r| r.create())
        .map_err(|e| err("Landlock", &e))?;
    for (p, access) in rules {
        let shown = p.display().to_string();
        let fd = PathFd::new(&p).map_err(|e| err(&shown, &e))?;
        rs = rs
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| err(&shown, &e))?;
    }
    let status = rs.restrict_self().map_err(|e| err("Landlock", &e))?;
    Ok(status.ruleset != RulesetStatus::NotEnforced)
}

/// The largest included file.
const MAX_INCLUDE_BYTES: u64 = 16 << 20;

/// Read the file at `path` for an `include`: opened without blocking or
/// taking a terminal, a regular file only, the place of what was opened
/// (wherever the name led) checked against `policy`, at most 16 MiB of
/// UTF-8. No message quotes the file's contents.
pub fn read_checked(path: &Path, policy: &Policy) -> Result<String, String> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| e.to_string())?;
    let md = f.metadata().map_err(|e| e.to_string())?;
    if !md.is_file() {
        return Err("not a regular file (allowed: a job file)".into());
    }
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", f.as_raw_fd()))
        .map_err(|e| format!("where it was opened: {e}"))?;
    policy.check_path(&opened, "include").map_err(|_| {
        format!(
            "outside the places this server allows ({}) once opened",
            policy.places()
        )
    })?;
    let mut bytes = Vec::new();
    f.take(MAX_INCLUDE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_INCLUDE_BYTES {
        return Err(format!(
            "larger than {} MiB (allowed: a fio job file)",
            MAX_INCLUDE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {} is invalid; allowed: a fio job file)",
            e.utf8_error().valid_up_to()
        )
    })
}
