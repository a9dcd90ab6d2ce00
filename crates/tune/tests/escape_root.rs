//! Measuring from a cgroup of ssdready's own, on the real kernel (root,
//! cgroup v1's blkio hierarchy; skipped, saying why, elsewhere). A loop
//! device over a file in /dev/shm is throttled to 25 read IOPS in a group
//! this test makes and joins; inside an [`Escape`] its direct reads go
//! through ssdready's own group (the kernel's counters say so, the
//! throttled group's stay still), and after it they are held again. A
//! process killed inside its escape leaves a group the next recovery
//! removes. Alone in its file: it moves its whole process between groups.

use ssdready_tune::escape::Escape;
use ssdready_tune::{recover_at, Undone};
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const BLKIO: &str = "/sys/fs/cgroup/blkio";

/// The tests move their whole process between groups: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
const LIMIT_IOPS: u64 = 25;
const READS: u64 = 30;

/// Why this machine cannot run the test, if it cannot.
fn unusable() -> Option<String> {
    if ssdready_tune::store::euid() != 0 {
        return Some("needs root to make cgroups and loop devices".into());
    }
    if !Path::new(BLKIO)
        .join("blkio.throttle.read_iops_device")
        .exists()
    {
        return Some(format!(
            "no cgroup v1 blkio hierarchy with throttles at {BLKIO}"
        ));
    }
    None
}

/// A loop device over /dev/shm in a throttled blkio group this process
/// joined; everything undone on drop.
struct Plant {
    dev: String,
    backing: String,
    group: PathBuf,
    was: PathBuf,
    majmin: String,
}

impl Plant {
    fn new() -> Option<Plant> {
        let pid = std::process::id();
        let backing = format!("/dev/shm/ssdready-test-escape-{pid}.img");
        std::fs::File::create(&backing)
            .ok()?
            .set_len(16 << 20)
            .ok()?;
        let o = Command::new("losetup")
            .args(["--direct-io=on", "-f", "--show", &backing])
            .output()
            .ok()?;
        if !o.status.success() {
            eprintln!(
                "skipped: losetup failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
            let _ = std::fs::remove_file(&backing);
            return None;
        }
        let dev = String::from_utf8_lossy(&o.stdout).trim().to_string();
        let name = dev.trim_start_matches("/dev/").to_string();
        let majmin = std::fs::read_to_string(format!("/sys/block/{name}/dev"))
            .unwrap()
            .trim()
            .to_string();
        let group = Path::new(BLKIO).join(format!("ssdready-test-throttle-{pid}"));
        let was = Path::new(BLKIO).join(blkio_group().trim_start_matches('/'));
        let p = Plant {
            dev,
            backing,
            group,
            was,
            majmin,
        };
        std::fs::create_dir(&p.group).unwrap();
        std::fs::write(
            p.group.join("blkio.throttle.read_iops_device"),
            format!("{} {LIMIT_IOPS}", p.majmin),
        )
        .unwrap();
        std::fs::write(p.group.join("cgroup.procs"), pid.to_string()).unwrap();
        Some(p)
    }

    /// Reads of the device the group `dir` passed (its throttle counters).
    fn served(&self, dir: &Path) -> u64 {
        let text = std::fs::read_to_string(dir.join("blkio.throttle.io_serviced")).unwrap();
        text.lines()
            .find_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 3 && f[0] == self.majmin && f[1] == "Read")
                    .then(|| f[2].parse().ok())?
            })
            .unwrap_or(0)
    }

    /// READS direct 4 KiB reads; how long they took.
    fn read_loop(&self) -> Duration {
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&self.dev)
            .unwrap();
        let mut buf = vec![0u8; 8192];
        let at = buf.as_ptr().align_offset(4096);
        let t = Instant::now();
        for i in 0..READS {
            f.read_exact_at(&mut buf[at..at + 4096], i * 4096).unwrap();
        }
        t.elapsed()
    }
}

impl Drop for Plant {
    fn drop(&mut self) {
        let _ = std::fs::write(
            self.was.join("cgroup.procs"),
            std::process::id().to_string(),
        );
        let _ = std::fs::remove_dir(&self.group);
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let _ = std::fs::remove_file(&self.backing);
    }
}

/// This process's blkio group, from /proc/self/cgroup.
fn blkio_group() -> String {
    std::fs::read_to_string("/proc/self/cgroup")
        .unwrap()
        .lines()
        .find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, c, p) = (f.next()?, f.next()?, f.next()?);
            c.split(',').any(|c| c == "blkio").then(|| p.to_string())
        })
        .expect("a blkio line")
}

/// At LIMIT_IOPS the reads cannot take less than this (the first of the
/// throttle's slices may let a few through at once).
fn least_held() -> Duration {
    Duration::from_millis((READS - 5) * 1000 / LIMIT_IOPS)
}

#[test]
fn a_run_from_ssdreadys_own_group_escapes_the_throttle_and_is_held_again_after() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if let Some(why) = unusable() {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let Some(p) = Plant::new() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let journals = tmp.path().join("settings");
    let before = p.served(&p.group);
    let held = p.read_loop();
    assert!(p.served(&p.group) - before >= READS);
    assert!(held >= least_held(), "throttled reads took {held:?}");

    let e = Escape::enter_at(&journals).unwrap();
    let mine = e
        .groups()
        .iter()
        .find(|g| g.hierarchy == "blkio")
        .expect("the blkio hierarchy left")
        .clone();
    assert_eq!(mine.back, p.group);
    assert_eq!(
        blkio_group(),
        format!("/ssdready-trial-{}", std::process::id())
    );
    assert_eq!(ssdready_tune::store::list(&journals).len(), 1, "journaled");
    let (throttled, own) = (p.served(&p.group), p.served(&mine.dir));
    let free = p.read_loop();
    assert_eq!(
        p.served(&p.group),
        throttled,
        "no read through the throttled group"
    );
    assert!(p.served(&mine.dir) - own >= READS);
    let undone = e.leave();
    assert!(
        undone
            .iter()
            .all(|u| matches!(u, Undone::GroupRemoved { .. })),
        "{undone:?}"
    );
    eprintln!(
        "{READS} direct reads: {:.0} IOPS in the throttled group, {:.0} IOPS from ssdready's own",
        READS as f64 / held.as_secs_f64(),
        READS as f64 / free.as_secs_f64()
    );

    assert!(!mine.dir.exists());
    assert!(ssdready_tune::store::list(&journals).is_empty());
    assert_eq!(
        PathBuf::from(BLKIO).join(blkio_group().trim_start_matches('/')),
        p.group
    );
    let before = p.served(&p.group);
    let again = p.read_loop();
    assert!(p.served(&p.group) - before >= READS, "held again after");
    assert!(again >= least_held(), "throttled again: {again:?}");
}

/// The group of the kill test's child, below the root.
fn child_group(pid: u32) -> PathBuf {
    Path::new(BLKIO).join(format!("ssdready-test-child-{pid}"))
}

/// The child of the kill test: joins a group below the root, escapes it,
/// says so, and waits to be killed.
#[test]
fn child_that_escapes_and_waits() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Ok(dir) = std::env::var("SSDREADY_TUNE_ESCAPE_CHILD") else {
        return;
    };
    let me = std::process::id();
    std::fs::create_dir(child_group(me)).unwrap();
    std::fs::write(child_group(me).join("cgroup.procs"), me.to_string()).unwrap();
    let _e = Escape::enter_at(Path::new(&dir)).unwrap();
    println!("escaped");
    std::thread::sleep(Duration::from_secs(60));
}

#[test]
fn a_group_left_by_a_killed_process_is_removed_by_the_next_recovery() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if let Some(why) = unusable() {
        eprintln!("skipped: {why}");
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let journals = tmp.path().join("settings");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "escape_root::child_that_escapes_and_waits",
            "--nocapture",
        ])
        .env("SSDREADY_TUNE_ESCAPE_CHILD", &journals)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut seen = String::new();
    let mut byte = [0u8; 1];
    while !seen.contains("escaped") && out.read(&mut byte).unwrap_or(0) == 1 {
        seen.push(byte[0] as char);
    }
    let dir = Path::new(BLKIO).join(format!("ssdready-trial-{}", child.id()));
    let made = dir.is_dir();
    child.kill().unwrap();
    child.wait().unwrap();
    let _ = std::fs::remove_dir(child_group(child.id()));
    assert!(seen.contains("escaped") && made, "{seen}");
    assert!(dir.is_dir(), "a SIGKILL leaves the group");
    let r = recover_at(Path::new("/sys"), &journals);
    assert!(
        r.iter()
            .any(|r| r.what == Undone::GroupRemoved { dir: dir.clone() }),
        "{r:?}"
    );
    assert!(r.iter().all(|r| r.what.is_clean()), "{r:?}");
    assert!(
        r[0].to_string().contains("which ended without removing it"),
        "{}",
        r[0]
    );
    assert!(!dir.exists());
    assert!(ssdready_tune::store::list(&journals).is_empty());
}

const CPUSET: &str = "/sys/fs/cgroup/cpuset";

/// The CPUs a thread spawned now may run on.
fn new_threads_cpus() -> usize {
    std::thread::spawn(|| {
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        (0..nix::sched::CpuSet::count())
            .filter(|c| set.is_set(*c).unwrap_or(false))
            .count()
    })
    .join()
    .unwrap()
}

#[test]
fn a_cpuset_lifted_twice_gives_every_cpu_both_times() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if ssdready_tune::store::euid() != 0 || !Path::new(CPUSET).join("cpuset.cpus").exists() {
        return eprintln!("skipped: needs root and a cgroup v1 cpuset hierarchy at {CPUSET}");
    }
    let all = std::fs::read_to_string(Path::new(CPUSET).join("cpuset.cpus")).unwrap();
    let online = ssdready_measured::limits::parse::cpu_list(&all)
        .unwrap()
        .len();
    if online < 2 {
        return eprintln!("skipped: a one-CPU cpuset needs two CPUs to be a limit");
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let me = std::process::id();
    let group = Path::new(CPUSET).join(format!("ssdready-test-cpuset-{me}"));
    std::fs::create_dir(&group).unwrap();
    /// Back to the root cpuset, the group removed, on a failure too.
    struct Planted(PathBuf);
    impl Drop for Planted {
        fn drop(&mut self) {
            let me = std::process::id().to_string();
            let _ = std::fs::write(Path::new(CPUSET).join("cgroup.procs"), me);
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let planted = Planted(group.clone());
    let mems = std::fs::read_to_string(Path::new(CPUSET).join("cpuset.mems")).unwrap();
    std::fs::write(group.join("cpuset.mems"), mems.trim()).unwrap();
    std::fs::write(group.join("cpuset.cpus"), "0").unwrap();
    std::fs::write(group.join("cgroup.procs"), me.to_string()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let journals = tmp.path().join("settings");
    let lift = ssdready_measured::group_limits::lift(
        ssdready_measured::group_limits::GroupLimit::Cpuset,
        None,
    );
    let mut seen = Vec::new();
    for _ in 0..2 {
        let e = Escape::enter_lifting_at(&journals, &lift).unwrap();
        let free = new_threads_cpus();
        let undone = e.leave();
        seen.push((free, new_threads_cpus(), undone.len()));
    }
    drop(planted);
    assert!(!group.exists());
    // Since Linux 6.2 a move keeps a thread within the mask it last asked
    // for: the affinity put back after the first lift must not hold the
    // second one to the planted CPU.
    assert_eq!(seen, [(online, 1, 1), (online, 1, 1)]);
}
