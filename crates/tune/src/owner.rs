//! Who wrote a journal, told so that a reused process id is not taken for
//! the owner: the pid, the process's start time (field 22 of
//! `/proc/PID/stat`, in clock ticks since boot) and the boot it ran in
//! (`/proc/sys/kernel/random/boot_id`). The owner is alive only when a
//! process with that pid exists, started at that time, in this boot, and
//! is not a zombie.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A journal's owner.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub pid: u32,
    /// Field 22 of `/proc/PID/stat` (clock ticks after boot).
    pub start_time: u64,
    /// The kernel's boot id when the journal was written.
    pub boot_id: String,
}

/// What became of a journal's owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// Running: its journal is not touched.
    Alive,
    /// Ended (or a zombie, or another process took its pid).
    Ended,
    /// The machine restarted since the journal was written (a restart
    /// resets every queue setting and removes every cgroup).
    Rebooted,
}

/// The state letter and start time of `/proc/PID/stat`'s text.
pub fn parse_stat(text: &str) -> Option<(char, u64)> {
    // The command name (field 2) is in parentheses and may hold anything.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    // Field 3 is f[0]; field 22 is f[19].
    Some((state, f.get(19)?.parse().ok()?))
}

/// The boot id, or "" when the kernel does not say.
fn boot_id(proc_root: &Path) -> String {
    std::fs::read_to_string(proc_root.join("sys/kernel/random/boot_id"))
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

impl Owner {
    /// This process.
    pub fn me() -> Owner {
        Owner::of(Path::new("/proc"), std::process::id()).unwrap_or(Owner {
            pid: std::process::id(),
            start_time: 0,
            boot_id: String::new(),
        })
    }

    /// Process `pid` as `proc_root` (`/proc`) shows it; None when it does
    /// not exist.
    pub fn of(proc_root: &Path, pid: u32) -> Option<Owner> {
        let text = std::fs::read_to_string(proc_root.join(format!("{pid}/stat"))).ok()?;
        let (_, start_time) = parse_stat(&text)?;
        Some(Owner {
            pid,
            start_time,
            boot_id: boot_id(proc_root),
        })
    }

    /// Whether this owner still runs.
    pub fn liveness(&self, proc_root: &Path) -> Liveness {
        let now = boot_id(proc_root);
        if !self.boot_id.is_empty() && !now.is_empty() && now != self.boot_id {
            return Liveness::Rebooted;
        }
        let stat = std::fs::read_to_string(proc_root.join(format!("{}/stat", self.pid)));
        match stat.ok().as_deref().and_then(parse_stat) {
            Some((state, start)) if start == self.start_time && !matches!(state, 'Z' | 'X') => {
                Liveness::Alive
            }
            _ => Liveness::Ended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_time_is_read_past_a_name_with_spaces_and_parentheses() {
        let line =
            "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(parse_stat(line), Some(('S', 987654)));
        assert_eq!(parse_stat("1 (x) S 1"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_or_a_missing_one_is_not() {
        let me = Owner::me();
        assert!(me.start_time > 0);
        let proc_root = Path::new("/proc");
        assert_eq!(me.liveness(proc_root), Liveness::Alive);
        let reused = Owner {
            start_time: me.start_time + 1,
            ..me.clone()
        };
        assert_eq!(reused.liveness(proc_root), Liveness::Ended);
        let gone = Owner {
            pid: u32::MAX - 1,
            ..me.clone()
        };
        assert_eq!(gone.liveness(proc_root), Liveness::Ended);
        let before = Owner {
            boot_id: "another-boot".into(),
            ..me
        };
        assert_eq!(before.liveness(proc_root), Liveness::Rebooted);
    }
}
