//! Putting back what an ended ssdready left: [`recover`] reads every
//! journal in the journal directory; one whose owner has ended (SIGKILL, a
//! crash; a reused pid is told apart by its start time) is put back —
//! each queue setting unless another process changed it since, each
//! cgroup removed when empty — and removed; what could not be put back
//! stays for the next try. A journal whose owner still runs is left to it
//! ([`held`] says which). A journal that fails its checks (not root's
//! alone, a link, too large) is not acted on.

use crate::journal::{Journal, TrialGroup};
use crate::owner::Liveness;
use crate::undo::{undo_group, Undone};
use crate::Restored;
use std::fmt;
use std::path::{Path, PathBuf};

/// What was put back of an ended ssdready's journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The ssdready process that made the change (None: a journal not
    /// read).
    pub pid: Option<u32>,
    pub journal: PathBuf,
    pub what: Undone,
}

impl fmt::Display for Recovered {
    /// One line, without the `ssdready: ` the binary puts before it: "put
    /// back /sys/block/loop0/queue/scheduler to mq-deadline, left changed
    /// by ssdready (pid 1234), which ended without putting it back".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(pid) = self.pid else {
            return write!(f, "{}", self.what);
        };
        let by = format!("ssdready (pid {pid})");
        match &self.what {
            Undone::Setting(Restored::PutBack { .. }) => write!(
                f,
                "{}, left changed by {by}, which ended without putting it back",
                self.what
            ),
            Undone::Setting(Restored::AlreadyOriginal { .. }) => write!(
                f,
                "{} (changed by {by}, which ended without putting it back)",
                self.what
            ),
            Undone::Setting(Restored::ChangedByOther { .. }) => {
                write!(f, "{}; {by} ended without putting it back", self.what)
            }
            Undone::Setting(Restored::Failed { .. }) => write!(
                f,
                "{} (left changed by {by}, which ended; tried again by the next command)",
                self.what
            ),
            Undone::GroupRemoved { .. } => write!(
                f,
                "{}, left by {by}, which ended without removing it",
                self.what
            ),
            _ => write!(f, "{} (made by {by}, which ended)", self.what),
        }
    }
}

/// A journal whose owner still runs: left to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    pub pid: u32,
    pub journal: PathBuf,
    /// What it holds changed, one line each.
    pub what: Vec<String>,
}

/// Put back every ended ssdready's journal on this host.
pub fn recover() -> Vec<Recovered> {
    recover_at(Path::new("/sys"), Path::new(crate::JOURNAL_DIR))
}

/// [`recover`] over another sysfs root and journal directory.
pub fn recover_at(sysfs_root: &Path, journal_dir: &Path) -> Vec<Recovered> {
    crate::store::list(journal_dir)
        .iter()
        .flat_map(|p| recover_journal(p, sysfs_root))
        .collect()
}

/// The journals on this host whose owner still runs.
pub fn held() -> Vec<Held> {
    held_at(Path::new(crate::JOURNAL_DIR))
}

/// [`held`] in another journal directory.
pub fn held_at(journal_dir: &Path) -> Vec<Held> {
    let mut out = Vec::new();
    for path in crate::store::list(journal_dir) {
        let Ok(Some(j)) = Journal::load(&path) else {
            continue;
        };
        if j.owner.liveness(Path::new("/proc")) != Liveness::Alive {
            continue;
        }
        let mut what: Vec<String> = j
            .settings
            .iter()
            .map(|s| {
                format!(
                    "/sys/block/{}/queue/{} set to {} (was {})",
                    s.device, s.attr, s.ours, s.original
                )
            })
            .collect();
        what.extend(
            j.groups
                .iter()
                .map(|g| format!("the cgroup {}", g.dir.display())),
        );
        out.push(Held {
            pid: j.owner.pid,
            journal: path,
            what,
        });
    }
    out
}

/// Put back one journal if its owner has ended.
pub(crate) fn recover_journal(path: &Path, sysfs: &Path) -> Vec<Recovered> {
    let mut j = match Journal::load(path) {
        Ok(Some(j)) => j,
        Ok(None) => return Vec::new(),
        Err(why) => {
            return vec![Recovered {
                pid: None,
                journal: path.into(),
                what: Undone::Ignored {
                    journal: path.into(),
                    why,
                },
            }]
        }
    };
    let pid = j.owner.pid;
    let one = |what| Recovered {
        pid: Some(pid),
        journal: path.into(),
        what,
    };
    match j.owner.liveness(Path::new("/proc")) {
        Liveness::Alive => Vec::new(),
        Liveness::Rebooted => {
            let _ = crate::store::remove(path);
            vec![one(Undone::Rebooted {
                journal: path.into(),
            })]
        }
        Liveness::Ended => {
            let out = undo_journal(&mut j, sysfs, None);
            let _ = j.save(path);
            out.into_iter().map(one).collect()
        }
    }
}

/// Undo a journal, last change first; what could not be undone stays in
/// it. `move_back`: this process's pid when its own groups are left (it
/// is moved back to its groups first).
pub(crate) fn undo_journal(j: &mut Journal, sysfs: &Path, move_back: Option<u32>) -> Vec<Undone> {
    let mut out: Vec<Undone> = (crate::sysfs::undo_all(sysfs, &mut j.settings).into_iter())
        .map(Undone::Setting)
        .collect();
    let mut kept_groups: Vec<TrialGroup> = Vec::new();
    while let Some(g) = j.groups.pop() {
        match undo_group(&g, move_back) {
            None => {}
            Some(u @ Undone::GroupKept { .. }) => {
                kept_groups.push(g);
                out.push(u);
            }
            Some(u) => out.push(u),
        }
    }
    kept_groups.reverse();
    j.groups = kept_groups;
    out
}

/// What `ssdready restore` did: the ended processes' journals put back,
/// and the running ones' left to them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub recovered: Vec<Recovered>,
    pub held: Vec<Held>,
}

impl Report {
    /// The lines to print: each thing put back, each running process and
    /// what it holds, or "nothing to put back".
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self.recovered.iter().map(|r| r.to_string()).collect();
        for h in &self.held {
            out.push(format!(
                "ssdready (pid {}) is running and holds {}: left to it (it puts them back when it ends)",
                h.pid,
                h.what.join("; ")
            ));
        }
        if out.is_empty() {
            out.push("nothing to put back".into());
        }
        out
    }

    /// Whether everything found was put back.
    pub fn clean(&self) -> bool {
        self.recovered.iter().all(|r| r.what.is_clean())
    }
}

/// Put back every ended ssdready's journal and say which running ones
/// hold theirs (`ssdready restore`).
pub fn restore_now() -> Report {
    restore_now_at(Path::new("/sys"), Path::new(crate::JOURNAL_DIR))
}

/// [`restore_now`] over another sysfs root and journal directory.
pub fn restore_now_at(sysfs_root: &Path, journal_dir: &Path) -> Report {
    Report {
        recovered: recover_at(sysfs_root, journal_dir),
        held: held_at(journal_dir),
    }
}
