//! "Never destroy data": writes to a block device (or to a file that backs
//! one) that something uses are refused with exit code 2 and nothing
//! written, each reason naming the device and the check that found it.
//! Every case builds its own loop devices, file systems, mounts and swap
//! over /dev/shm files and removes them again (also when the test fails);
//! all skip, saying why, when not root.

use crate::common;
use common::*;
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Loop devices, mounts and swap set up for one test, undone in reverse
/// order on drop.
struct Scene {
    tag: String,
    undo: Vec<Vec<String>>,
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

fn sh(args: &[&str]) -> std::process::Output {
    Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn sh_ok(args: &[&str]) -> String {
    let o = sh(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

impl Scene {
    /// None, saying why, when not root or a tool is missing.
    fn new(tag: &str) -> Option<Scene> {
        if !is_root() {
            eprintln!("skipped: needs root to make loop devices, file systems and mounts");
            return None;
        }
        for tool in ["losetup", "mkfs.ext4", "e2fsck", "mount", "umount"] {
            if !have(tool) {
                eprintln!("skipped: {tool} is not installed");
                return None;
            }
        }
        Some(Scene {
            tag: format!("{tag}-{}", std::process::id()),
            undo: Vec::new(),
            files: Vec::new(),
            dirs: Vec::new(),
        })
    }

    /// A zero-filled file of `mb` MiB in /dev/shm.
    fn shm_file(&mut self, name: &str, mb: u64) -> String {
        let p = format!("/dev/shm/ssdready-safety-{}-{name}.img", self.tag);
        let f = std::fs::File::create(&p).unwrap();
        f.set_len(mb << 20).unwrap();
        self.files.push(p.clone().into());
        p
    }

    /// A loop device over `backing` (`extra`: e.g. `-o 1M`, `-P`).
    fn loop_over(&mut self, backing: &str, extra: &[&str]) -> String {
        let mut a = vec!["losetup", "-f", "--show"];
        a.extend_from_slice(extra);
        a.push(backing);
        let dev = sh_ok(&a);
        self.undo
            .push(vec!["losetup".into(), "-d".into(), dev.clone()]);
        dev
    }

    /// An ext4 file system on `dev` that stays still once made (no lazy
    /// initialisation writing behind the test's back).
    fn mkfs(&self, dev: &str) {
        sh_ok(&[
            "mkfs.ext4",
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            dev,
        ]);
    }

    fn dir(&mut self, name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ssdready-safety-{}-{name}", self.tag));
        std::fs::create_dir_all(&d).unwrap();
        self.dirs.push(d.clone());
        d
    }

    /// Mount `dev` (extra mount arguments in `extra`) on a new directory.
    fn mount(&mut self, dev: &str, name: &str, extra: &[&str]) -> PathBuf {
        let d = self.dir(name);
        let ds = d.display().to_string();
        let mut a = vec!["mount", "-o", "noatime"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&[dev, &ds]);
        sh_ok(&a);
        self.undo.push(vec!["umount".into(), ds]);
        sync();
        d
    }

    fn swapon(&mut self, dev: &str) {
        sh_ok(&["mkswap", dev]);
        sh_ok(&["swapon", dev]);
        self.undo.push(vec!["swapoff".into(), dev.into()]);
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        for cmd in self.undo.iter().rev() {
            let _ = Command::new(&cmd[0]).args(&cmd[1..]).output();
        }
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
        for f in &self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

fn sync() {
    let _ = Command::new("sync").status();
}

/// A checksum of a file's whole content.
fn checksum(path: &str) -> u64 {
    sync();
    let data = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut h = std::hash::DefaultHasher::new();
    h.write(&data);
    h.finish()
}

/// `e2fsck -fn` says the file system on `dev` is clean.
fn fsck_clean(dev: &str) -> bool {
    sh(&["e2fsck", "-fn", dev]).status.success()
}

/// Run ssdready; expect a refusal (exit 2, one line, nothing on stdout)
/// naming every `needle`; return the message.
fn expect_refused(args: &[&str], needles: &[&str]) -> String {
    let mut a = vec!["run", "--quiet"];
    a.extend_from_slice(args);
    let out = ssdready(&a);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{a:?} was not refused: {err}");
    assert!(out.stdout.is_empty(), "{a:?} printed a result");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{a:?}: '{err}' lacks '{n}'");
    }
    err
}

/// The case: B = a loop device at offset 1 MiB of loop device A,
/// ext4 on B, mounted. A has no holders, is not mounted itself and carries
/// no signature in its first 256 KiB; writing to it destroyed B's file
/// system.
#[test]
fn loop_on_loop_stacked_mount_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("issue") else {
        return;
    };
    let img = s.shm_file("a", 64);
    let a = s.loop_over(&img, &[]);
    let b = s.loop_over(&a, &["-o", "1M"]);
    s.mkfs(&b);
    let m = s.mount(&b, "m", &[]);
    std::fs::write(m.join("precious"), b"data").unwrap();
    sync();
    let before = checksum(&img);
    let fa = format!("--filename={a}");
    let msg = expect_refused(
        &[&fa, "--rw=randwrite", "--size=8m", "--number_ios=256"],
        &[
            &format!("{a} is the backing file of {b} (loop)"),
            &format!("mounted at {} (mountinfo)", m.display()),
        ],
    );
    eprintln!("{msg}");
    assert_eq!(checksum(&img), before, "the refused run wrote to {a}");
    // Unmount here (B stays attached) to check its file system.
    s.undo.pop();
    sh_ok(&["umount", &m.display().to_string()]);
    assert!(fsck_clean(&b), "B's file system is damaged");
}

/// Run ssdready; expect success; return stderr.
fn expect_ok(args: &[&str]) -> String {
    let mut a = vec!["run", "--quiet", "--output-format=native"];
    a.extend_from_slice(args);
    let out = ssdready(&a);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(0), "{a:?} failed: {err}");
    err
}

/// Write a DOS partition table at byte `at` of `file`: (first sector,
/// sectors) per partition, type Linux.
fn write_mbr(file: &str, at: u64, parts: &[(u32, u32)]) {
    use std::os::unix::fs::FileExt;
    let mut mbr = [0u8; 512];
    for (i, (start, len)) in parts.iter().enumerate() {
        let e = 446 + 16 * i;
        mbr[e + 4] = 0x83;
        mbr[e + 8..e + 12].copy_from_slice(&start.to_le_bytes());
        mbr[e + 12..e + 16].copy_from_slice(&len.to_le_bytes());
    }
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    let f = std::fs::OpenOptions::new().write(true).open(file).unwrap();
    f.write_all_at(&mbr, at).unwrap();
}

/// Wait (up to 5 s) for partition `n` of `dev` to appear; kernels without
/// a DOS partition parser get it from `partx -a` (util-linux, BLKPG).
/// None, saying why, when it cannot be had.
fn partition(dev: &str, n: u32) -> Option<String> {
    let p = format!("{dev}p{n}");
    if !Path::new(&p).exists() {
        if !have("partx") {
            eprintln!("skipped: the kernel did not read the partition table and partx is missing");
            return None;
        }
        let _ = sh(&["partx", "-a", dev]);
    }
    for _ in 0..500 {
        if Path::new(&p).exists() {
            return Some(p);
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("{p} did not appear");
}

/// O_EXCL from <fcntl.h> (the same on every Linux architecture Rust runs).
const O_EXCL: i32 = 0o200;

fn open_exclusive(dev: &str) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_EXCL)
        .open(dev)
}

#[test]
fn loop_on_loop_without_a_mount_is_refused_but_reads_still_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("unmounted") else {
        return;
    };
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    let b = s.loop_over(&a, &["-o", "1M"]);
    let before = checksum(&img);
    let fa = format!("--filename={a}");
    let via = format!("{a} is the backing file of {b} (loop)");
    for rw in ["write", "randwrite", "rw", "randrw", "trim", "randtrim"] {
        let rw = format!("--rw={rw}");
        expect_refused(&[&fa, &rw, "--size=8m"], &[&via]);
    }
    assert_eq!(checksum(&img), before, "a refused run wrote to {a}");
    expect_ok(&[&fa, "--rw=randread", "--size=8m", "--number_ios=64"]);
    expect_ok(&[&fa, "--rw=read", "--size=8m"]);
}

#[test]
fn loop_chain_three_deep_with_a_mounted_top_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("chain") else {
        return;
    };
    let img = s.shm_file("a", 64);
    let a = s.loop_over(&img, &[]);
    let b = s.loop_over(&a, &["-o", "2M"]);
    let c = s.loop_over(&b, &["-o", "512"]);
    s.mkfs(&c);
    let m = s.mount(&c, "m", &[]);
    let before = checksum(&img);
    let fa = format!("--filename={a}");
    expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[&format!(
            "{a} is the backing file of {b} (loop), which is the backing file of {c} (loop), \
             which is mounted at {} (mountinfo)",
            m.display()
        )],
    );
    // The middle of the chain is refused the same way, and so is the top.
    let fb = format!("--filename={b}");
    expect_refused(
        &[&fb, "--rw=write", "--size=4m"],
        &[&format!("{b} is the backing file of {c}")],
    );
    let fc = format!("--filename={c}");
    expect_refused(
        &[&fc, "--rw=write", "--size=4m"],
        &["(mountinfo)", "(O_EXCL open: device busy)"],
    );
    assert_eq!(checksum(&img), before);
    // Unmount here (C stays attached) to check its file system.
    s.undo.pop();
    sh_ok(&["umount", &m.display().to_string()]);
    assert!(fsck_clean(&c));
}

#[test]
fn partitions_of_a_stacked_loop_are_found() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("stackparts") else {
        return;
    };
    let img = s.shm_file("a", 64);
    // A partition table 1 MiB into the file: loop B (offset 1 MiB, -P)
    // sees it, loop A only has it in the middle.
    write_mbr(&img, 1 << 20, &[(2048, 16384), (18432, 16384)]);
    let a = s.loop_over(&img, &[]);
    let b = s.loop_over(&a, &["-o", "1M", "-P"]);
    let Some(p2) = partition(&b, 2) else {
        return;
    };
    s.mkfs(&p2);
    let m = s.mount(&p2, "m", &[]);
    let before = checksum(&img);
    let fa = format!("--filename={a}");
    expect_refused(
        &[&fa, "--rw=randwrite", "--size=32m"],
        &[&format!(
            "{a} is the backing file of {b} (loop), which has partition {p2} (partitions), \
             which is mounted at {} (mountinfo)",
            m.display()
        )],
    );
    assert_eq!(checksum(&img), before);
}

#[test]
fn a_partition_target_is_checked_and_a_mounted_sibling_does_not_block_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("parts") else {
        return;
    };
    let img = s.shm_file("a", 64);
    write_mbr(&img, 0, &[(2048, 32768), (34816, 32768)]);
    let a = s.loop_over(&img, &["-P"]);
    let (Some(p1), Some(p2)) = (partition(&a, 1), partition(&a, 2)) else {
        return;
    };
    s.mkfs(&p1);
    let m = s.mount(&p1, "m", &[]);
    let before = checksum(&img);
    let f1 = format!("--filename={p1}");
    expect_refused(
        &[&f1, "--rw=write", "--size=4m"],
        &[
            &format!("{p1} is mounted at {} (mountinfo)", m.display()),
            "(O_EXCL",
        ],
    );
    let fa = format!("--filename={a}");
    expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[
            &format!("{a} has partition {p1} (partitions), which is mounted at"),
            &format!("{a} has partitions: {p1}, {p2} (partitions)"),
            "MBR partition table signature at byte 0 (signature)",
        ],
    );
    // A symlink (as in /dev/disk/by-id) to the mounted partition.
    let links = s.dir("by-id");
    let link = links.join("usb-Test_Disk-part1");
    std::os::unix::fs::symlink(&p1, &link).unwrap();
    let fl = format!("--filename={}", link.display());
    expect_refused(
        &[&fl, "--rw=write", "--size=4m"],
        &[
            &format!("refusing to write to {} ({p1})", link.display()),
            "(mountinfo)",
        ],
    );
    std::fs::remove_file(&link).unwrap();
    assert_eq!(checksum(&img), before, "a refused run wrote");
    // The free sibling partition may be written; p1's file system survives.
    let f2 = format!("--filename={p2}");
    expect_ok(&[
        &f2,
        "--rw=randwrite",
        "--size=8m",
        "--number_ios=256",
        "--direct=1",
    ]);
    // Unmount here (the disk stays attached) to check p1's file system.
    s.undo.pop();
    sh_ok(&["umount", &m.display().to_string()]);
    assert!(fsck_clean(&p1), "writing p2 damaged p1");
}

#[test]
fn loop_over_a_file_on_the_targets_file_system_is_found_even_lazily_unmounted() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("fsfile") else {
        return;
    };
    let img = s.shm_file("a", 64);
    let a = s.loop_over(&img, &[]);
    s.mkfs(&a);
    let m = s.mount(&a, "m", &[]);
    let inner = m.join("disk.img");
    std::fs::File::create(&inner)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let c = s.loop_over(&inner.display().to_string(), &[]);
    let fa = format!("--filename={a}");
    expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[
            &format!("{a} is mounted at {} (mountinfo)", m.display()),
            &format!(
                "{a} holds {}, the backing file of {c} (loop)",
                inner.display()
            ),
        ],
    );
    // Detached from the tree, the file system lives on through the loop.
    sh_ok(&["umount", "-l", &m.display().to_string()]);
    sync();
    let before = checksum(&img);
    let msg = expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[
            &format!("the backing file of {c} (loop)"),
            "(O_EXCL open: device busy)",
        ],
    );
    assert!(!msg.contains("(mountinfo)"), "{msg}");
    assert_eq!(checksum(&img), before);
}

#[test]
fn a_bind_mount_left_after_the_original_is_unmounted_is_found() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("bind") else {
        return;
    };
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    s.mkfs(&a);
    let m1 = s.mount(&a, "m1", &[]);
    std::fs::create_dir(m1.join("sub")).unwrap();
    let sub = m1.join("sub").display().to_string();
    let m2 = s.mount(&sub, "m2", &["--bind"]);
    sh_ok(&["umount", &m1.display().to_string()]);
    let before = checksum(&img);
    let fa = format!("--filename={a}");
    let msg = expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[&format!(
            "{a} is mounted at {} (bind of /sub) (mountinfo)",
            m2.display()
        )],
    );
    assert!(!msg.contains(&format!("{} ", m1.display())), "{msg}");
    assert_eq!(checksum(&img), before);
}

/// Swap that the kernel may page into cannot be checksummed whole: the
/// header page must survive.
fn swap_header(dev: &str) -> Vec<u8> {
    use std::os::unix::fs::FileExt;
    let mut b = vec![0u8; 4096];
    std::fs::File::open(dev)
        .unwrap()
        .read_exact_at(&mut b, 0)
        .unwrap();
    b
}

#[test]
fn swap_on_the_device_or_on_a_loop_over_it_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("swap") else {
        return;
    };
    if !have("mkswap") || !have("swapon") {
        eprintln!("skipped: mkswap/swapon are not installed");
        return;
    }
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    s.swapon(&a);
    let header = swap_header(&a);
    let fa = format!("--filename={a}");
    expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[
            &format!("{a} is in use as swap (swaps)"),
            "(O_EXCL open: device busy)",
        ],
    );
    assert_eq!(swap_header(&a), header);
    let img2 = s.shm_file("b", 32);
    let x = s.loop_over(&img2, &[]);
    let y = s.loop_over(&x, &[]);
    s.swapon(&y);
    let header = swap_header(&y);
    let fx = format!("--filename={x}");
    expect_refused(
        &[&fx, "--rw=randtrim", "--size=4m"],
        &[&format!(
            "{x} is the backing file of {y} (loop), which is in use as swap (swaps)"
        )],
    );
    assert_eq!(swap_header(&y), header);
    // Swap on a partition: its disk is refused.
    let img3 = s.shm_file("c", 32);
    write_mbr(&img3, 0, &[(2048, 16384)]);
    let d = s.loop_over(&img3, &["-P"]);
    let Some(p1) = partition(&d, 1) else {
        return;
    };
    s.swapon(&p1);
    let fd = format!("--filename={d}");
    expect_refused(
        &[&fd, "--rw=write", "--size=4m"],
        &[&format!(
            "{d} has partition {p1} (partitions), which is in use as swap (swaps)"
        )],
    );
}

#[test]
fn an_exclusive_holder_is_the_final_gate() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("excl") else {
        return;
    };
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    let fa = format!("--filename={a}");
    // Held by another program: no table shows it, only the exclusive open.
    let before = checksum(&img);
    let held = open_exclusive(&a).unwrap();
    let msg = expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[
            &format!("{a} is held exclusively by another user"),
            "(O_EXCL open: device busy)",
        ],
    );
    assert!(
        !msg.contains("(mountinfo)") && !msg.contains("(loop)"),
        "{msg}"
    );
    assert_eq!(checksum(&img), before);
    drop(held);
    // Mounted (read-only: it writes nothing) in another mount namespace:
    // not in our mountinfo.
    if !have("unshare") {
        eprintln!("skipped the mount-namespace case: unshare is not installed");
        return;
    }
    s.mkfs(&a);
    let m = s.dir("ns");
    let mut child = Command::new("unshare")
        .args(["-m", "sh", "-c"])
        .arg(format!("mount -o ro {a} {} && exec sleep 60", m.display()))
        .spawn()
        .unwrap();
    let mut busy = false;
    for _ in 0..500 {
        if open_exclusive(&a).is_err() {
            busy = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let before = checksum(&img);
    let result = busy.then(|| {
        expect_refused(
            &[&fa, "--rw=write", "--size=4m", "--offset=8m"],
            &["(O_EXCL open: device busy)"],
        )
    });
    let _ = child.kill();
    let _ = child.wait();
    let msg = result.expect("the mount in the other namespace never held the device");
    assert!(!msg.contains("(mountinfo)"), "{msg}");
    assert_eq!(checksum(&img), before);
}

#[test]
fn allow_destructive_overrides_and_says_what_it_overrode() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("force") else {
        return;
    };
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    let b = s.loop_over(&a, &["-o", "1M"]);
    let fa = format!("--filename={a}");
    let err = expect_ok(&[&fa, "--rw=write", "--size=4m", "--allow-destructive"]);
    let want = format!(
        "ssdready: warning: --allow-destructive: writing to {a} although {a} is the backing file of {b} (loop)"
    );
    assert!(err.contains(&want), "{err}");
}

#[test]
fn the_device_is_claimed_for_the_whole_run() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("claim") else {
        return;
    };
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    let child = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args([
            "run",
            "--quiet",
            "--output-format=native",
            "--rw=randwrite",
            "--size=8m",
        ])
        .args(["--time_based", "--runtime=3", "--rate_iops=200"])
        .arg(format!("--filename={a}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let during = open_exclusive(&a).map(drop);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e = during.expect_err("the device could be claimed (and mounted) mid-run");
    assert_eq!(e.raw_os_error(), Some(16), "EBUSY: {e}");
    open_exclusive(&a).expect("the claim is released after the run");
}

#[test]
fn a_regular_file_that_backs_a_mounted_loop_is_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("backfile") else {
        return;
    };
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    s.mkfs(&a);
    let m = s.mount(&a, "m", &[]);
    let before = checksum(&img);
    let fi = format!("--filename={img}");
    expect_refused(
        &[&fi, "--rw=randwrite", "--size=8m"],
        &[&format!(
            "{img} is the backing file of {a} (loop), which is mounted at {} (mountinfo)",
            m.display()
        )],
    );
    assert_eq!(checksum(&img), before);
    // Reading it is fine; so is writing a file nothing uses.
    expect_ok(&[&fi, "--rw=randread", "--size=8m", "--number_ios=64"]);
    let other = s.shm_file("free", 8);
    expect_ok(&[&format!("--filename={other}"), "--rw=write", "--size=8m"]);
}

#[test]
fn two_loops_over_one_file_and_a_loop_over_a_mounted_device_are_refused() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("down") else {
        return;
    };
    let img = s.shm_file("a", 32);
    let a = s.loop_over(&img, &[]);
    let c = s.loop_over(&img, &[]);
    s.mkfs(&c);
    let m = s.mount(&c, "m", &[]);
    let before = checksum(&img);
    let fa = format!("--filename={a}");
    expect_refused(
        &[&fa, "--rw=write", "--size=4m"],
        &[&format!(
            "{a} is backed by {img} (loop), which is the backing file of {c} (loop), which is mounted at {}",
            m.display()
        )],
    );
    // A loop device over the mounted device itself.
    let d = s.loop_over(&c, &[]);
    let fd = format!("--filename={d}");
    expect_refused(
        &[&fd, "--rw=write", "--size=4m"],
        &[
            &format!(
                "{d} is backed by {c} (loop), which is mounted at {} (mountinfo)",
                m.display()
            ),
            &format!("{c} (the backing device of {d}) is held exclusively"),
        ],
    );
    assert_eq!(checksum(&img), before);
}

#[test]
fn a_file_system_left_at_an_offset_is_found_by_the_signature_scan() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("offsetfs") else {
        return;
    };
    let img = s.shm_file("a", 64);
    let a = s.loop_over(&img, &[]);
    let b = s.loop_over(&a, &["-o", "3M"]);
    s.mkfs(&b);
    sh_ok(&["losetup", "-d", &b]);
    s.undo.pop(); // B is gone already
    let before = checksum(&img);
    let fa = format!("--filename={a}");
    // Nothing uses it any more, but its first 256 KiB are empty and the
    // file system starts 3 MiB in.
    expect_refused(
        &[&fa, "--rw=randwrite", "--size=8m"],
        &["ext2/3/4 filesystem signature at byte 3145728"],
    );
    expect_refused(
        &[&fa, "--rw=write", "--offset=3m", "--size=1m"],
        &["ext2/3/4 filesystem signature at byte 3145728"],
    );
    assert_eq!(checksum(&img), before);
    // A clean device is written.
    let clean = s.shm_file("clean", 32);
    let c = s.loop_over(&clean, &[]);
    expect_ok(&[
        &format!("--filename={c}"),
        "--rw=randwrite",
        "--size=8m",
        "--number_ios=256",
    ]);
    assert_ne!(checksum(&clean), 0);
}

/// As fio: a device holding a mounted file system, or the backing file of
/// a mounted loop device, is not written or trimmed with
/// `--allow-destructive` alone; `allow_mounted_write=1` is needed too.
#[test]
fn a_mounted_file_system_is_not_trimmed_or_written_with_allow_destructive_alone() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let Some(mut s) = Scene::new("mounted") else {
        return;
    };
    let img = s.shm_file("m", 64);
    let a = s.loop_over(&img, &[]);
    s.mkfs(&a);
    let m = s.mount(&a, "m", &[]);
    std::fs::write(m.join("precious"), b"data").unwrap();
    sync();
    let before = checksum(&img);
    let (fa, fi) = (format!("--filename={a}"), format!("--filename={img}"));
    let need = "allow_mounted_write=1 is needed too";
    expect_refused(
        &[&fa, "--rw=trim", "--size=8m", "--allow-destructive"],
        &[need],
    );
    expect_refused(
        &[&fi, "--rw=write", "--size=8m", "--allow-destructive"],
        &[need],
    );
    assert_eq!(checksum(&img), before, "a refused run wrote to {img}");
    s.undo.pop();
    sh_ok(&["umount", &m.display().to_string()]);
    assert!(fsck_clean(&a), "the file system is damaged");
}
