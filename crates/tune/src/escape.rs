//! Measuring from a cgroup of ssdready's own: [`Escape::enter`] (root)
//! moves this process — every thread of it — into a fresh group
//! `ssdready-trial-PID` at the root of each hierarchy that can hold its
//! I/O or CPU (cgroup v1's `blkio`, `cpu`, `cpuacct` and `cpuset`
//! hierarchies; the v2 hierarchy when the process's group there has
//! controllers), so a run is measured without the throttle, quota or
//! cpuset of the group it was in. A v1 cpuset group gets the root's CPUs
//! and memory nodes. The user's groups are never changed: only this
//! process moves, and the groups are ssdready's own.
//!
//! The groups are recorded in a journal (`cgroups-PID.json`) before they
//! are made. Leaving ([`Escape::leave`], or drop) moves the process back to
//! the groups it was in and removes the new ones; after a SIGKILL the next
//! command's [`recover`](crate::recover) removes them (empty once their
//! process has ended). A hierarchy where the process is already at the
//! root, or whose root this mount namespace does not show, is left as it is.

pub use crate::escape_error::EscapeError;
use crate::journal::{self, Journal, TrialGroup};
use crate::owner::Owner;
use crate::registry;
use crate::undo::{undo_group, Undone, PREFIX};
pub use ssdready_measured::group_limits::Lift;
use ssdready_measured::limits::parse;
use ssdready_measured::limits::CgroupVersion;
use std::path::{Path, PathBuf};

/// The groups to make: for each hierarchy that can hold a run and where
/// the process is below the root, a group `ssdready-trial-PID` at the
/// root. `proc_cgroup` is `/proc/self/cgroup`, `mountinfo`
/// `/proc/self/mountinfo`; `read` reads a file (a v2 group's
/// `cgroup.controllers`).
pub fn plan(
    proc_cgroup: &str,
    mountinfo: &str,
    pid: u32,
    read: &dyn Fn(&Path) -> Option<String>,
) -> Vec<TrialGroup> {
    plan_lifting(proc_cgroup, mountinfo, pid, read, &Lift::all())
}

/// [`plan`] for the hierarchies `lift` leaves: a v1 hierarchy when it
/// holds one of `lift.v1`'s controllers, the v2 one when the process's
/// group there has one of `lift.v2`'s (its group of ssdready's own then
/// given `lift.keep`).
pub fn plan_lifting(
    proc_cgroup: &str,
    mountinfo: &str,
    pid: u32,
    read: &dyn Fn(&Path) -> Option<String>,
    lift: &Lift,
) -> Vec<TrialGroup> {
    let (lines, _) = parse::proc_cgroup(proc_cgroup);
    let (mounts, _) = parse::cgroup_mounts(mountinfo);
    let mut out = Vec::new();
    for l in lines.iter().filter(|l| l.path != "/") {
        let v2 = l.id == 0 && l.controllers.is_empty();
        let mount = mounts.iter().find(|m| match v2 {
            true => m.version == CgroupVersion::V2,
            false => {
                m.version == CgroupVersion::V1
                    && l.controllers.iter().all(|c| m.options.contains(c))
            }
        });
        // Only a mount that shows the hierarchy's root can make a group there.
        let Some(m) = mount.filter(|m| m.root == "/") else {
            continue;
        };
        let root = PathBuf::from(&m.mount_point);
        let back = root.join(l.path.trim_start_matches('/'));
        let wanted = match v2 {
            true => read(&back.join("cgroup.controllers"))
                .unwrap_or_default()
                .split_whitespace()
                .any(|c| lift.v2.iter().any(|x| x == c)),
            false => l.controllers.iter().any(|c| lift.v1.contains(c)),
        };
        if !wanted {
            continue;
        }
        out.push(TrialGroup {
            hierarchy: match v2 {
                true => "unified".into(),
                false => l.controllers.join(","),
            },
            dir: root.join(format!("{PREFIX}{pid}")),
            back,
            keep: match v2 {
                true => lift.keep.clone(),
                false => Vec::new(),
            },
        });
    }
    out
}

/// This process measuring from groups of its own until dropped.
pub struct Escape {
    file: PathBuf,
    journal: Journal,
    /// How many of the journal's groups were entered.
    entered: usize,
    registered: bool,
    /// Each thread's CPU affinity before a move that lifts the cpuset (the
    /// move, and [`crate::escape_only::widen_affinity`], change it): put
    /// back after leaving.
    affinity: Vec<(nix::unistd::Pid, nix::sched::CpuSet)>,
}

/// Every thread's CPU affinity now.
fn affinities() -> Vec<(nix::unistd::Pid, nix::sched::CpuSet)> {
    let tids = std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten();
    tids.filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .map(nix::unistd::Pid::from_raw)
        .filter_map(|t| Some((t, nix::sched::sched_getaffinity(t).ok()?)))
        .collect()
}

impl Escape {
    /// Leave this process's groups for groups of its own (root only),
    /// journaled in [`JOURNAL_DIR`](crate::JOURNAL_DIR).
    pub fn enter() -> Result<Escape, EscapeError> {
        Escape::enter_at(Path::new(crate::JOURNAL_DIR))
    }

    /// [`enter`](Escape::enter) with the journal in `journal_dir`.
    pub fn enter_at(journal_dir: &Path) -> Result<Escape, EscapeError> {
        Escape::enter_lifting_at(journal_dir, &Lift::all())
    }

    /// Leave only the groups that hold the limits `lift` lifts, for
    /// groups of its own that keep the others (root only; see
    /// [`crate::escape_only`]).
    pub fn enter_lifting(lift: &Lift) -> Result<Escape, EscapeError> {
        Escape::enter_lifting_at(Path::new(crate::JOURNAL_DIR), lift)
    }

    /// [`enter_lifting`](Escape::enter_lifting) with the journal in
    /// `journal_dir`.
    pub fn enter_lifting_at(journal_dir: &Path, lift: &Lift) -> Result<Escape, EscapeError> {
        if crate::store::euid() != 0 {
            return Err(EscapeError::NotRoot);
        }
        let read = |p: &str| {
            std::fs::read_to_string(p).map_err(|e| EscapeError::Read {
                path: p.into(),
                why: e.to_string(),
            })
        };
        let (cg, mi) = (read("/proc/self/cgroup")?, read("/proc/self/mountinfo")?);
        let owner = Owner::me();
        let groups = plan_lifting(
            &cg,
            &mi,
            owner.pid,
            &|p| std::fs::read_to_string(p).ok(),
            lift,
        );
        let file = journal::file(journal_dir, journal::CGROUPS, owner.pid);
        let mut e = Escape {
            file,
            journal: Journal::new(owner),
            entered: 0,
            registered: false,
            affinity: Vec::new(),
        };
        if groups.is_empty() {
            return Ok(e);
        }
        if !registry::register(&e.file, Path::new("/sys")) {
            return Err(EscapeError::AlreadyOpen {
                path: e.file.display().to_string(),
            });
        }
        e.registered = true;
        let widened: Vec<TrialGroup> = groups
            .iter()
            .filter(|g| crate::escape_only::lifts_cpus(g, lift))
            .cloned()
            .collect();
        if !widened.is_empty() {
            e.affinity = affinities();
        }
        e.journal.groups = groups;
        e.journal
            .save(&e.file)
            .map_err(|err| EscapeError::Journal {
                path: e.file.display().to_string(),
                why: err.to_string(),
            })?;
        for i in 0..e.journal.groups.len() {
            // On an error, the drop moves back out of those entered.
            join(&e.journal.groups[i])?;
            e.entered = i + 1;
        }
        for g in &widened {
            crate::escape_only::widen_affinity(g);
        }
        Ok(e)
    }

    /// The groups this process measures from (none: it was at the root of
    /// every hierarchy that could hold it).
    pub fn groups(&self) -> &[TrialGroup] {
        &self.journal.groups
    }

    /// Move back to the groups the process was in and remove its own;
    /// what was done, one line each (a group that could not be removed is
    /// kept in the journal for the next command).
    pub fn leave(mut self) -> Vec<Undone> {
        self.undo()
    }

    fn undo(&mut self) -> Vec<Undone> {
        if !self.registered || registry::put_back(&self.file) {
            self.journal.groups.clear();
        }
        let pid = std::process::id();
        let mut out = Vec::new();
        let mut kept = Vec::new();
        for (i, g) in std::mem::take(&mut self.journal.groups)
            .into_iter()
            .enumerate()
            .rev()
        {
            // A group never entered is removed without moving back.
            let back = (i < self.entered).then_some(pid);
            match undo_group(&g, back) {
                Some(u @ Undone::GroupKept { .. }) => {
                    kept.push(g);
                    out.push(u);
                }
                Some(u) => out.push(u),
                None => {}
            }
        }
        kept.reverse();
        self.journal.groups = kept;
        self.entered = 0;
        // A thread that ended since has nothing to put back.
        for (tid, cpus) in std::mem::take(&mut self.affinity) {
            let _ = nix::sched::sched_setaffinity(tid, &cpus);
        }
        if self.registered {
            let _ = self.journal.save(&self.file);
        }
        out
    }
}

impl Drop for Escape {
    /// Back to the groups the process was in (on a panic's unwinding too);
    /// a group that could not be removed is said on stderr.
    fn drop(&mut self) {
        for u in self.undo() {
            if !u.is_clean() {
                eprintln!("ssdready: {u}");
            }
        }
        if self.registered {
            registry::unregister(&self.file);
        }
    }
}

/// Make a group and move this process into it.
fn join(g: &TrialGroup) -> Result<(), EscapeError> {
    let dir = g.dir.display().to_string();
    match std::fs::create_dir(&g.dir) {
        Ok(()) => {}
        // A group of this pid's from an earlier process: empty, or refused.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_dir(&g.dir)
                .and_then(|_| std::fs::create_dir(&g.dir))
                .map_err(|err| EscapeError::Make {
                    dir: dir.clone(),
                    err,
                })?;
        }
        Err(err) => return Err(EscapeError::Make { dir, err }),
    }
    if g.hierarchy.split(',').any(|c| c == "cpuset") {
        // A v1 cpuset group takes no process before it has CPUs and nodes.
        let root = g.dir.parent().unwrap_or(Path::new("/"));
        for f in ["cpuset.cpus", "cpuset.mems"] {
            std::fs::read_to_string(root.join(f))
                .and_then(|v| std::fs::write(g.dir.join(f), v.trim()))
                .map_err(|err| EscapeError::Make {
                    dir: format!("{dir} ({f})"),
                    err,
                })?;
        }
    }
    crate::escape_only::keep(g)?;
    let me = std::process::id().to_string();
    std::fs::write(g.dir.join("cgroup.procs"), &me).map_err(|err| EscapeError::Move { dir, err })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate
31 25 0:27 / /sys/fs/cgroup/blkio rw,nosuid shared:10 - cgroup cgroup rw,blkio
32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:11 - cgroup cgroup rw,cpu,cpuacct
33 25 0:29 / /sys/fs/cgroup/cpuset rw,nosuid shared:12 - cgroup cgroup rw,cpuset
34 25 0:30 / /sys/fs/cgroup/memory rw,nosuid shared:13 - cgroup cgroup rw,memory
35 25 0:31 /lxc/c1 /sys/fs/cgroup/pids rw,nosuid shared:14 - cgroup cgroup rw,pids
";

    fn none(_: &Path) -> Option<String> {
        None
    }

    #[test]
    fn the_groups_that_can_hold_a_run_are_left_for_the_roots_and_no_other() {
        let cg = "\
12:pids:/lxc/c1/x
6:memory:/user.slice
5:cpuset:/pinned
4:cpu,cpuacct:/quota/a
3:blkio:/throttled
0::/user.slice/session-1.scope
";
        let g = plan(cg, MOUNTINFO, 77, &none);
        let names: Vec<&str> = g.iter().map(|g| g.hierarchy.as_str()).collect();
        assert_eq!(names, ["cpuset", "cpu,cpuacct", "blkio"]);
        assert_eq!(
            g[1].dir,
            Path::new("/sys/fs/cgroup/cpu,cpuacct/ssdready-trial-77")
        );
        assert_eq!(g[1].back, Path::new("/sys/fs/cgroup/cpu,cpuacct/quota/a"));
        assert_eq!(g[2].back, Path::new("/sys/fs/cgroup/blkio/throttled"));
    }

    #[test]
    fn a_v2_group_is_left_only_when_it_has_a_controller_that_can_hold_a_run() {
        let cg = "0::/user.slice/app.scope\n";
        let with = |text: &'static str| {
            move |p: &Path| {
                (p == Path::new("/sys/fs/cgroup/unified/user.slice/app.scope/cgroup.controllers"))
                    .then(|| text.to_string())
            }
        };
        let g = plan(cg, MOUNTINFO, 9, &with("cpu io memory pids"));
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].hierarchy, "unified");
        assert_eq!(
            g[0].dir,
            Path::new("/sys/fs/cgroup/unified/ssdready-trial-9")
        );
        assert!(plan(cg, MOUNTINFO, 9, &with("memory pids")).is_empty());
        assert!(plan(cg, MOUNTINFO, 9, &with("")).is_empty());
    }

    #[test]
    fn a_process_at_the_roots_already_makes_no_group() {
        let cg = "3:blkio:/\n4:cpu,cpuacct:/\n0::/\n";
        assert!(plan(cg, MOUNTINFO, 1, &none).is_empty());
    }

    #[test]
    fn a_group_not_named_as_ssdready_names_its_own_is_never_removed() {
        let t = tempfile::tempdir().unwrap();
        let g = TrialGroup {
            hierarchy: "blkio".into(),
            dir: t.path().join("user-group"),
            back: t.path().into(),
            keep: Vec::new(),
        };
        std::fs::create_dir(&g.dir).unwrap();
        match undo_group(&g, None) {
            Some(Undone::GroupKept { why, .. }) => assert!(why.contains("never removed")),
            other => panic!("{other:?}"),
        }
        assert!(g.dir.is_dir());
        let gone = TrialGroup {
            dir: t.path().join("ssdready-trial-1"),
            ..g
        };
        assert_eq!(undo_group(&gone, None), None);
    }
}
