//! The scheduling group a process's threads compete in: the CPU
//! controller's cgroup it is in, or, where that is the root and the kernel
//! groups sessions (`/proc/sys/kernel/sched_autogroup_enabled`), its
//! session's autogroup (`/proc/PID/autogroup`).
//!
//! The scheduler shares a CPU first among groups, by each group's weight,
//! then among a group's threads by their nice values and policies. So a
//! thread's nice value or `SCHED_IDLE` lowers it only against threads of
//! its own group: two `SCHED_IDLE` loops started with `setsid` (a session,
//! hence an autogroup, of their own) took 34–61 % of a RAM loop device's
//! IOPS from fio on 2 vCPUs, as much as loops at nice 0 did. Work in
//! another group is weighed at its group's weight, whatever it says of
//! itself.

use std::path::Path;

/// The group of process `pid`, as a key two processes share exactly when
/// they compete as one group (`cgroup:/a/b` or `autogroup:/autogroup-42`);
/// None where it cannot be read (the process is gone).
pub fn of(pid: u32) -> Option<String> {
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = match v1_cpu_path(&cgroup) {
        Some(p) => p.to_string(),
        None => v2_cpu_path(&cgroup, &|dir| {
            std::fs::read_to_string(
                Path::new(V2_ROOT)
                    .join(dir.trim_start_matches('/'))
                    .join("cgroup.subtree_control"),
            )
            .ok()
        })?,
    };
    if path != "/" || !autogroups() {
        return Some(format!("cgroup:{path}"));
    }
    let auto = std::fs::read_to_string(format!("/proc/{pid}/autogroup")).ok();
    Some(group_key(&path, auto.as_deref()))
}

/// Where the unified hierarchy is mounted.
const V2_ROOT: &str = "/sys/fs/cgroup";

fn autogroups() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/sched_autogroup_enabled")
        .is_ok_and(|s| s.trim() == "1")
}

/// The key of a group at the CPU controller's `path`, with the process's
/// `/proc/PID/autogroup` text where it was read: its autogroup where the
/// path is the root.
pub fn group_key(path: &str, autogroup: Option<&str>) -> String {
    match (path, autogroup.and_then(|a| a.split_whitespace().next())) {
        ("/", Some(a)) => format!("autogroup:{a}"),
        _ => format!("cgroup:{path}"),
    }
}

/// The path of a cgroup v1 hierarchy that holds the `cpu` controller, from
/// `/proc/PID/cgroup` (`1:cpu,cpuacct:/user.slice`).
pub fn v1_cpu_path(cgroup: &str) -> Option<&str> {
    cgroup.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        controllers.split(',').any(|c| c == "cpu").then_some(path)
    })
}

/// The unified hierarchy's path at which the `cpu` controller last acts
/// on a process whose `/proc/PID/cgroup` reads `cgroup` (`0::/a/b/c`):
/// the deepest ancestor below which each parent enables `cpu` in its
/// `cgroup.subtree_control` (`control(dir)` reads it; unread: not
/// enabled). `/` where no level enables it.
pub fn v2_cpu_path(cgroup: &str, control: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let full = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mut at = String::from("/");
    for part in full.split('/').filter(|p| !p.is_empty()) {
        let enabled = control(&at).is_some_and(|c| c.split_whitespace().any(|x| x == "cpu"));
        if !enabled {
            break;
        }
        at = match at.as_str() {
            "/" => format!("/{part}"),
            _ => format!("{at}/{part}"),
        };
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v1_cpu_hierarchy_gives_the_path_whatever_its_companions() {
        let text = "9:name=systemd:/\n2:cpuacct:/\n1:cpu,cpuacct:/batch\n0::/\n";
        assert_eq!(v1_cpu_path(text), Some("/batch"));
        assert_eq!(v1_cpu_path("2:cpuacct:/x\n0::/a\n"), None);
    }

    #[test]
    fn the_unified_path_stops_where_a_parent_does_not_enable_cpu() {
        let control = |dir: &str| match dir {
            "/" => Some("cpuset cpu io memory pids".to_string()),
            "/user.slice" => Some("memory pids".to_string()),
            _ => None,
        };
        let got = v2_cpu_path("0::/user.slice/user-1000.slice/session-3.scope\n", &control);
        assert_eq!(got.as_deref(), Some("/user.slice"));
        let none = |_: &str| None;
        assert_eq!(
            v2_cpu_path("0::/system.slice/x.service\n", &none).as_deref(),
            Some("/")
        );
        assert_eq!(v2_cpu_path("1:cpu:/\n", &none), None);
    }

    #[test]
    fn at_the_root_a_session_is_a_group_of_its_own() {
        assert_eq!(
            group_key("/", Some("/autogroup-1614 nice 0\n")),
            "autogroup:/autogroup-1614"
        );
        assert_eq!(group_key("/", None), "cgroup:/");
        assert_eq!(
            group_key("/batch", Some("/autogroup-9 nice 0")),
            "cgroup:/batch"
        );
    }

    #[test]
    fn this_process_and_its_child_share_a_group_and_setsid_parts_them_where_autogroups_act() {
        let me = of(std::process::id()).expect("this process's group");
        let child = std::process::Command::new("sleep").arg("5").spawn();
        let Ok(mut child) = child else {
            eprintln!("skipped: no sleep(1) to start");
            return;
        };
        let theirs = of(child.id());
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(theirs.as_deref(), Some(me.as_str()));
        if !me.starts_with("autogroup:") {
            eprintln!("skipped the setsid half: this process's group is {me}, not an autogroup");
            return;
        }
        let Ok(mut own) = std::process::Command::new("setsid")
            .args(["sleep", "5"])
            .spawn()
        else {
            eprintln!("skipped the setsid half: no setsid(1)");
            return;
        };
        // setsid(1) forks where it leads a group already; its child is the
        // sleep. Read whichever is the session's leader now.
        std::thread::sleep(std::time::Duration::from_millis(50));
        let theirs = of(own.id());
        let _ = own.kill();
        let _ = own.wait();
        if let Some(t) = theirs {
            assert_ne!(t, me, "a new session is a new autogroup");
        }
    }
}
