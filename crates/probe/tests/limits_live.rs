//! The inventory of limits on limits planted for real (root only): a v1
//! blkio throttle on a loop device over /dev/shm, a CPU quota with the
//! throttled periods it causes, a cpuset of one CPU, and a group on the
//! cgroup v2 hierarchy. Each test makes its own groups and loop device and
//! removes them when it ends, passed or failed; each skips, saying why,
//! when not root or when the controller it needs is not mounted.

use ssdready_measured::limits::counters::Resource;
use ssdready_measured::limits::parse::{self, CgroupMount};
use ssdready_measured::limits::{CgroupVersion, CpuAllowance, IoLimitKind};
use ssdready_probe::limits::{counters, inventory};
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// Where this process sees the hierarchy with `controller` mounted (v1), or
/// the cgroup2 mount; None (with the reason printed) when not root or it
/// is not mounted.
fn mount(controller: Option<&str>) -> Option<String> {
    if !is_root() {
        eprintln!("skipped: needs root to make cgroups");
        return None;
    }
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let (mounts, _) = parse::cgroup_mounts(&info);
    let found = mounts.iter().find(|m: &&CgroupMount| match controller {
        Some(c) => m.version == CgroupVersion::V1 && m.options.iter().any(|o| o == c),
        None => m.version == CgroupVersion::V2,
    });
    match found.filter(|m| m.root == "/") {
        Some(m) => Some(m.mount_point.clone()),
        None => {
            let what = controller.map_or("cgroup v2".to_string(), |c| {
                format!("the cgroup v1 {c} controller")
            });
            eprintln!("skipped: {what} is not mounted here (at its root)");
            None
        }
    }
}

/// Groups made, a child in them and a loop device, all removed on drop.
#[derive(Default)]
struct Plant {
    dirs: Vec<PathBuf>,
    child: Option<Child>,
    loopdev: Option<(String, String)>,
}

impl Plant {
    /// A new group `name` below `parent` (a mount point or a group).
    fn group(&mut self, parent: &str, name: &str) -> String {
        let dir = format!("{parent}/{name}");
        std::fs::create_dir(&dir).unwrap_or_else(|e| panic!("mkdir {dir}: {e}"));
        self.dirs.push(dir.clone().into());
        dir
    }
    fn set(&self, file: &str, value: &str) {
        std::fs::write(file, value).unwrap_or_else(|e| panic!("writing '{value}' to {file}: {e}"));
    }
    /// A shell child that waits for a line on its stdin before it runs
    /// `then`, so it can be put in its groups first.
    fn child(&mut self, then: &str) -> u32 {
        let c = Command::new("sh")
            .args(["-c", &format!("read _; {then}")])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("sh starts");
        let pid = c.id();
        self.child = Some(c);
        pid
    }
    fn join(&self, group: &str) {
        let pid = self.child.as_ref().unwrap().id();
        self.set(&format!("{group}/cgroup.procs"), &pid.to_string());
    }
    fn go(&mut self) {
        let c = self.child.as_mut().unwrap();
        let input = c.stdin.as_mut().unwrap();
        input
            .write_all(b"go\n")
            .and_then(|_| input.flush())
            .unwrap();
    }
    /// The next line the child prints.
    fn line(&mut self) -> String {
        use std::io::BufRead;
        let out = self.child.as_mut().unwrap().stdout.as_mut().unwrap();
        let mut l = String::new();
        std::io::BufReader::new(out).read_line(&mut l).unwrap();
        l.trim().to_string()
    }
    /// A loop device over a /dev/shm file, with direct I/O: (path, MAJ, MIN).
    fn loop_device(&mut self) -> Option<(String, u32, u32)> {
        let backing = format!("/dev/shm/ssdready-test-limits-{}.img", std::process::id());
        std::fs::File::create(&backing)
            .ok()?
            .set_len(64 << 20)
            .ok()?;
        let out = Command::new("losetup")
            .args(["--direct-io=on", "-f", "--show", &backing])
            .output();
        let dev = match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            other => {
                eprintln!("skipped: losetup failed: {other:?}");
                let _ = std::fs::remove_file(&backing);
                return None;
            }
        };
        self.loopdev = Some((dev.clone(), backing));
        let rdev = std::fs::metadata(&dev).ok()?.rdev();
        let (maj, min) = (
            nix::sys::stat::major(rdev) as u32,
            nix::sys::stat::minor(rdev) as u32,
        );
        Some((dev, maj, min))
    }
}

impl Drop for Plant {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        for d in self.dirs.iter().rev() {
            if let Err(e) = std::fs::remove_dir(d) {
                eprintln!("could not remove {}: {e}", d.display());
            }
        }
        if let Some((dev, backing)) = self.loopdev.take() {
            let _ = Command::new("losetup").args(["-d", &dev]).status();
            let _ = std::fs::remove_file(backing);
        }
    }
}

fn name(what: &str) -> String {
    format!("ssdready-test-limits-{what}-{}", std::process::id())
}

#[test]
fn a_v1_read_iops_throttle_is_found_on_the_childs_group_and_counts_its_reads() {
    let Some(blkio) = mount(Some("blkio")) else {
        return;
    };
    let mut p = Plant::default();
    let Some((dev, maj, min)) = p.loop_device() else {
        return;
    };
    let g = p.group(&blkio, &name("iops"));
    p.set(
        &format!("{g}/blkio.throttle.read_iops_device"),
        &format!("{maj}:{min} 5000"),
    );
    let dd = format!(
        "dd if={dev} of=/dev/null iflag=direct bs=4k count=200 2>/dev/null; echo done; read _"
    );
    let pid = p.child(&dd);
    p.join(&g);
    let inv = inventory(pid, &[(maj, min)]);
    let eff = inv.effective_io_throttles();
    assert_eq!(eff.len(), 1, "{:?}", inv.io_throttles);
    let t = eff[0];
    assert_eq!(
        (t.kind, t.value, t.version),
        (IoLimitKind::ReadIops, 5000, CgroupVersion::V1)
    );
    assert_eq!(t.cgroup, format!("/{}", name("iops")));
    assert_eq!(t.source, format!("{g}/blkio.throttle.read_iops_device"));
    assert_eq!(t.device, format!("{maj}:{min}"));
    let before = counters(pid, &[(maj, min)]);
    p.go();
    assert_eq!(p.line(), "done", "dd ran");
    let d = before.delta(&counters(pid, &[(maj, min)]));
    let io =
        d.io.iter()
            .find(|c| c.device == t.device)
            .expect("the group's I/O on the device");
    assert!(
        io.count.reads >= 200 && io.count.read_bytes >= 200 * 4096,
        "{io:?}"
    );
    assert_eq!(io.disk.as_deref(), Some(dev.trim_start_matches("/dev/")));
}

#[test]
fn a_v1_parents_throttle_is_listed_as_not_holding_the_child() {
    let Some(blkio) = mount(Some("blkio")) else {
        return;
    };
    let mut p = Plant::default();
    let Some((_, maj, min)) = p.loop_device() else {
        return;
    };
    let parent = p.group(&blkio, &name("parent"));
    let child = p.group(&parent, "child");
    p.set(
        &format!("{parent}/blkio.throttle.read_bps_device"),
        &format!("{maj}:{min} 52428800"),
    );
    let pid = p.child("exec sleep 600");
    p.join(&child);
    let inv = inventory(pid, &[(maj, min)]);
    let t = &inv.io_throttles;
    assert_eq!(t.len(), 1, "{t:?}");
    assert_eq!(
        (t[0].kind, t[0].value, t[0].applies),
        (IoLimitKind::ReadBps, 52_428_800, false)
    );
    assert!(inv.effective_io_throttles().is_empty());
    assert_eq!(
        inv.cgroup_with("blkio").unwrap().path,
        format!("/{}/child", name("parent"))
    );
}

#[test]
fn a_cpu_quota_is_found_and_its_throttled_periods_counted() {
    let Some(cpu) = mount(Some("cpu")) else {
        return;
    };
    let mut p = Plant::default();
    let g = p.group(&cpu, &name("quota"));
    p.set(&format!("{g}/cpu.cfs_period_us"), "100000");
    p.set(&format!("{g}/cpu.cfs_quota_us"), "10000");
    // The same group in cpuacct, where v1 keeps the usage when the two
    // hierarchies are mounted apart.
    let acct = mount(Some("cpuacct"))
        .filter(|a| *a != cpu)
        .map(|a| p.group(&a, &name("quota")));
    let pid = p.child("while :; do :; done");
    p.join(&g);
    if let Some(a) = &acct {
        p.join(a);
    }
    let inv = inventory(pid, &[]);
    let q = inv.cpu_quota().expect("the quota is found");
    assert_eq!(
        (q.quota_us, q.period_us, q.version),
        (10_000, 100_000, CgroupVersion::V1)
    );
    assert_eq!(
        q.source,
        format!("{g}/cpu.cfs_quota_us, {g}/cpu.cfs_period_us")
    );
    assert!((inv.cpus.usable - 0.1).abs() < 1e-9 && inv.cpus.held_by == CpuAllowance::Quota);
    let before = counters(pid, &[]);
    p.go();
    // Wait (bounded) until the kernel has throttled it a few times.
    let deadline = Instant::now() + Duration::from_secs(30);
    let d = loop {
        std::thread::sleep(Duration::from_millis(50));
        let d = before.delta(&counters(pid, &[]));
        let thr = d
            .quota_level()
            .and_then(|c| c.throttled_periods)
            .unwrap_or(0);
        if thr >= 3 || Instant::now() > deadline {
            break d;
        }
    };
    let c = d.quota_level().expect("the quota's level is counted");
    assert_eq!(c.cgroup, format!("/{}", name("quota")));
    assert!(c.throttled_periods.unwrap_or(0) >= 3, "{c:?}");
    assert!(
        c.throttled_share().unwrap() > 0.0 && c.throttled_per_second().unwrap() > 0.0,
        "{c:?}"
    );
    if acct.is_some() {
        // It cannot use more than its quota (a period's worth of slack).
        let used = c.quota_used().expect("usage read from cpuacct");
        assert!(
            used > 0.0 && used < 1.0 + 0.1 / d.seconds.max(0.1) + 0.5,
            "{c:?}"
        );
    }
}

#[test]
fn a_cpuset_of_one_cpu_holds_the_usable_cpus() {
    let Some(cpuset) = mount(Some("cpuset")) else {
        return;
    };
    let online = std::fs::read_to_string("/sys/devices/system/cpu/online").unwrap();
    let online = parse::cpu_list(&online).unwrap();
    let last = *online.last().unwrap();
    let mut p = Plant::default();
    let g = p.group(&cpuset, &name("cpuset"));
    let mems = std::fs::read_to_string(format!("{cpuset}/cpuset.mems")).unwrap();
    p.set(&format!("{g}/cpuset.mems"), mems.trim());
    p.set(&format!("{g}/cpuset.cpus"), &last.to_string());
    let pid = p.child("exec sleep 600");
    p.join(&g);
    let inv = inventory(pid, &[]);
    let s = inv.cpuset.as_ref().expect("the cpuset is read");
    assert_eq!(
        (s.cpus.as_slice(), s.cgroup.clone()),
        (&[last][..], format!("/{}", name("cpuset")))
    );
    assert_eq!(inv.affinity.as_ref().unwrap().cpus, [last]);
    assert_eq!((inv.cpus.usable, inv.cpus.set.clone()), (1.0, vec![last]));
    if online.len() > 1 {
        assert_eq!(inv.cpus.held_by, CpuAllowance::Cpuset);
    }
}

#[test]
fn a_group_on_the_v2_hierarchy_is_found_with_its_pressure() {
    let Some(v2) = mount(None) else { return };
    let mut p = Plant::default();
    let g = p.group(&v2, &name("v2"));
    let pid = p.child("exec sleep 600");
    p.join(&g);
    let inv = inventory(pid, &[]);
    let c = inv
        .cgroups
        .iter()
        .find(|c| c.version == CgroupVersion::V2)
        .expect("the v2 group");
    assert_eq!(
        (c.path.clone(), c.dir.clone()),
        (format!("/{}", name("v2")), Some(g.clone()))
    );
    let n = counters(pid, &[]);
    if Path::new(&format!("{g}/io.pressure")).exists() {
        let io = n.pressure.iter().find(|x| x.resource == Resource::Io);
        assert_eq!(
            io.map(|x| x.source.clone()),
            Some(format!("{g}/io.pressure")),
            "{n:?}"
        );
    } else {
        eprintln!("no pressure files in {g} (PSI off): only the group is checked");
    }
}
