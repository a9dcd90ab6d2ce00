//! The emulated drive's daemon, `ssdready emu attach`: the emulated SSD
//! as a kernel block device (docs/kernel-drive.md), what it records and
//! how it is found and removed.
//!
//! Each live attachment is recorded in `/run/ssdready/emu/NAME.json` (its
//! daemon's pid, loop device, mount point), with its daemon's running
//! figures in `NAME.stats.json` (rewritten every [`STATS_EVERY_MS`],
//! atomically). An attachment whose daemon died (SIGKILL) is found by
//! [`clean_stale`] and removed: FUSE connection aborted (through fusectl),
//! loop device unbound, FUSE mount detached, directory and record deleted;
//! a killed daemon still stuck on its own connection is freed so first.
//! The daemon holds no file of its own mount (the loop device holds it,
//! [`KernelDrive::attach`]), so its own exit never waits on it. The command line (argv, the signals, what
//! is printed) is the binary's `emu_cmd`.

use super::error::KernelError;
pub use super::records::{
    make_mount_dir, put_back_uring, record_of, record_path, records, stats, stats_path,
    write_atomic, Record, FUSE, FUSE_URING,
};
use super::records::{mount_dir_pids, records_in};
use super::stamps::Stamps;
pub use super::state::RUN_DIR;
use super::state::{alive, dying};
use super::ublk_serve::UblkDrive;
use super::{self as kernel, KernelDrive};
use crate::config::Params;
use ssdready_io::kdev;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set by a command that starts `emu attach` as its child (the study): the
/// child's drive is removed when that command ends, however it ends.
pub const PARENT_ENV: &str = "SSDREADY_EMU_PARENT";

/// How often the daemon rewrites its stats file (a study reads it around
/// each run).
pub const STATS_EVERY_MS: u64 = 100;

/// An attached drive, over either transport.
pub enum Drive {
    Fuse(KernelDrive),
    Ublk(Box<UblkDrive>),
}

impl Drive {
    /// Attach `params` over `transport` (`ublk`, or [`FUSE`] /
    /// [`FUSE_URING`] with its FUSE file system mounted at `mnt`).
    pub fn attach(params: Params, transport: &str, mnt: &Path) -> Result<Drive, KernelError> {
        match transport {
            "ublk" => UblkDrive::attach(params).map(|d| Drive::Ublk(Box::new(d))),
            FUSE_URING => KernelDrive::attach(params, mnt, true).map(Drive::Fuse),
            _ => KernelDrive::attach(params, mnt, false).map(Drive::Fuse),
        }
    }
    pub fn path(&self) -> String {
        match self {
            Drive::Fuse(d) => d.loop_path.display().to_string(),
            Drive::Ublk(d) => d.path.display().to_string(),
        }
    }
    pub fn stamps(&self) -> &Stamps {
        match self {
            Drive::Fuse(d) => d.stamps(),
            Drive::Ublk(d) => d.stamps(),
        }
    }
    pub fn serving(&self) -> bool {
        match self {
            Drive::Fuse(d) => d.serving(),
            Drive::Ublk(d) => d.serving(),
        }
    }
    pub fn capacity(&self) -> u64 {
        match self {
            Drive::Fuse(d) => d.device().capacity(),
            Drive::Ublk(d) => d.device().capacity(),
        }
    }
    pub fn detach(self) -> Vec<String> {
        match self {
            Drive::Fuse(d) => d.detach(),
            Drive::Ublk(d) => d.detach(),
        }
    }
}

/// The loop devices whose backing file is inside `dir`.
fn loops_over(dir: &Path) -> Vec<u32> {
    let Ok(d) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    d.flatten()
        .filter_map(|e| {
            let n: u32 = e.file_name().to_str()?.strip_prefix("loop")?.parse().ok()?;
            let b = std::fs::read_to_string(e.path().join("loop/backing_file")).ok()?;
            Path::new(b.trim()).starts_with(dir).then_some(n)
        })
        .collect()
}

/// Remove the mount points left by attachments whose process is gone and
/// that have no record (killed before writing it): a loop device over its
/// file unbound and the FUSE mount detached first, where there are. One
/// line for each.
fn clean_mount_dirs(run_dir: &Path, alive: fn(u32) -> bool) -> Vec<String> {
    let recorded: Vec<String> = records_in(run_dir)
        .into_iter()
        .map(|r| r.mountpoint)
        .collect();
    let mut said = Vec::new();
    for (pid, dir) in mount_dir_pids(run_dir) {
        if alive(pid) || recorded.contains(&dir.display().to_string()) {
            continue;
        }
        // A dead daemon's end aborts its connection; anything else holding
        // it open would keep it: aborted here whatever holds it.
        said.extend(abort_connection(&dir).err());
        // Killed after binding its loop device: that goes first.
        for n in loops_over(&dir) {
            if kdev::loop_clear(Path::new(&format!("/dev/loop{n}"))).is_ok() {
                kernel::wait_unbound(n);
                said.push(format!("unbound /dev/loop{n}, left by pid {pid}"));
            }
        }
        let _ = kdev::umount(&dir, true);
        if std::fs::remove_dir(&dir).is_ok() {
            said.push(format!(
                "removed {}, left by an attachment whose process (pid {pid}) is gone",
                dir.display()
            ));
        }
    }
    said
}

/// Remove the temporary files that processes now gone left in `run_dir`
/// (`.NAME.ssdready-PID-N.tmp`: killed while writing a record or its
/// stats). How many were removed.
fn clean_temp_files(run_dir: &Path, alive: fn(u32) -> bool) -> usize {
    let Ok(d) = std::fs::read_dir(run_dir) else {
        return 0;
    };
    let writer = |n: &str| -> Option<u32> {
        let (_, rest) = n
            .strip_prefix('.')?
            .strip_suffix(".tmp")?
            .rsplit_once(".ssdready-")?;
        rest.split_once('-')?.0.parse().ok()
    };
    d.flatten()
        .filter(|e| {
            let pid = writer(&e.file_name().to_string_lossy());
            pid.is_some_and(|p| !alive(p)) && std::fs::remove_file(e.path()).is_ok()
        })
        .count()
}

/// Abort the FUSE connection of a dead daemon's mount at `mnt`, if it is
/// still mounted: whatever still waits for an answer from it ends (a
/// daemon that closed a file of its own mount waits forever, unkillable,
/// for its own answer), and its loop device's I/O fails at once instead of
/// holding up its unbinding. The connection's number, if there was one;
/// the line saying why it could not be aborted.
fn abort_connection(mnt: &Path) -> Result<Option<u32>, String> {
    super::fusectl::abort(mnt, Path::new(RUN_DIR)).map_err(|why| {
        format!(
            "could not abort the FUSE connection of {}: {why}",
            mnt.display()
        )
    })
}

/// Free the daemons on their way out that wait on their own FUSE
/// connection ([`dying`]: killed, yet still there): their connections
/// aborted, each awaited for at most 2 s. One line for each.
fn free_dying(run_dir: &Path) -> Vec<String> {
    let mut said = Vec::new();
    let recorded = records_in(run_dir)
        .into_iter()
        .map(|r| (r.pid, PathBuf::from(r.mountpoint)));
    for (pid, mnt) in recorded.chain(mount_dir_pids(run_dir)) {
        if !alive(pid) || !dying(pid) {
            continue;
        }
        let line = match abort_connection(&mnt) {
            Ok(None) => continue,
            Ok(Some(n)) => format!("aborted FUSE connection {n} of {}", mnt.display()),
            Err(why) => why,
        };
        let t0 = Instant::now();
        while alive(pid) && t0.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let state = if alive(pid) {
            "still there"
        } else {
            "now gone"
        };
        said.push(format!(
            "{line}: its daemon, pid {pid}, was killed yet stuck waiting on it; {state}"
        ));
    }
    said
}

/// Remove what a dead daemon left: returns what was removed, one line each.
pub fn clean(r: &Record) -> Vec<String> {
    let mut done = Vec::new();
    if let Some(id) = r.ublk_id {
        if kernel::ublk_serve::delete(id).is_ok() {
            done.push(format!("deleted {}", r.device));
        }
        let _ = std::fs::remove_file(stats_path(&r.name));
        let _ = std::fs::remove_file(record_path(&r.name));
        return done;
    }
    done.extend(abort_connection(Path::new(&r.mountpoint)).err());
    let backing = format!("/sys/block/loop{}/loop/backing_file", r.loop_index);
    let ours = Path::new(&r.mountpoint).join(kernel::fuse_proto::DISK_NAME);
    let bound = std::fs::read_to_string(&backing).is_ok_and(|b| Path::new(b.trim()) == ours);
    if bound && kdev::loop_clear(Path::new(&r.device)).is_ok() {
        kernel::wait_unbound(r.loop_index);
        done.push(format!("unbound {}", r.device));
    }
    let mnt = Path::new(&r.mountpoint);
    if kdev::umount(mnt, true).is_ok() {
        done.push(format!("unmounted {}", r.mountpoint));
    }
    let _ = std::fs::remove_dir(mnt);
    let _ = std::fs::remove_file(stats_path(&r.name));
    let _ = std::fs::remove_file(record_path(&r.name));
    done
}

/// Remove every attachment whose daemon is gone, and every recorded
/// mount whose owner is gone ([`super::mounts`]) (root only); one line for
/// each, saying what was removed.
pub fn clean_stale() -> Vec<String> {
    if !kdev::is_root() {
        return Vec::new();
    }
    if let Err(why) = super::state::check_tree(Path::new(RUN_DIR)) {
        if Path::new(RUN_DIR).exists() {
            return vec![format!(
                "ignoring {RUN_DIR} ({why}); nothing in it is acted on"
            )];
        }
    }
    // Killed daemons stuck on their own connection are freed first.
    let mut said = free_dying(Path::new(RUN_DIR));
    // A dead study's mounts next: they keep its drive's device busy.
    said.extend(super::mounts::clean_stale());
    let stale: Vec<Record> = records().into_iter().filter(|r| !alive(r.pid)).collect();
    for r in &stale {
        let done = clean(r);
        said.push(format!(
            "removed a stale emulated drive {} (its daemon, pid {}, is gone){}",
            r.device,
            r.pid,
            if done.is_empty() {
                String::new()
            } else {
                format!(": {}", done.join(", "))
            }
        ));
    }
    said.extend(clean_mount_dirs(Path::new(RUN_DIR), alive));
    let temps = clean_temp_files(Path::new(RUN_DIR), alive);
    if temps > 0 {
        said.push(format!(
            "removed {temps} temporary file(s) in {RUN_DIR} left by killed daemons"
        ));
    }
    // Also when the attachment that turned it on was killed before its
    // record was written: the switch's own record says it was turned on.
    said.extend(put_back_uring(0));
    said
}

/// The transport `want` (auto, fuse, fuse-uring, ublk) resolves to here,
/// or the one line saying why none can serve.
pub fn pick_transport(want: &str) -> Result<&'static str, KernelError> {
    let ublk = kernel::ublk::probe();
    match want {
        "ublk" => ublk
            .map(|_| "ublk")
            .map_err(|why| KernelError::UblkUnusable { why: Box::new(why) }),
        "auto" if ublk.is_ok() => Ok("ublk"),
        "fuse-uring" => match kernel::fuse_uring_missing() {
            None => Ok(FUSE_URING),
            Some(missing) => Err(KernelError::FuseUringUnusable { missing }),
        },
        "fuse" | "auto" => match kernel::fuse_missing() {
            None => Ok(FUSE),
            Some(missing) => Err(KernelError::FuseUnusable { missing }),
        },
        other => Err(KernelError::NotATransport {
            value: other.to_string(),
        }),
    }
}

/// The record of a drive just attached: `name` (`emu-PID`), served by
/// this process, its FUSE mount at `mnt`.
pub fn record(
    name: &str,
    drive: &Drive,
    mnt: &Path,
    spec: &str,
    params: &Params,
    transport: &str,
) -> Record {
    let (loop_index, ublk_id, queue_depth) = match drive {
        Drive::Fuse(d) => (d.loop_index, None, kernel::queue_depth(params)),
        Drive::Ublk(d) => (0, Some(d.dev_id), d.depth),
    };
    Record {
        name: name.to_string(),
        pid: std::process::id(),
        device: drive.path(),
        loop_index,
        ublk_id,
        mountpoint: mnt.display().to_string(),
        spec: spec.to_string(),
        preset: params.preset.clone(),
        transport: transport.into(),
        block_size: kernel::block_size(params),
        queue_depth,
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    }
}

/// What detaching left behind, as a clause of the line that says so.
pub fn leftovers(left: &[String]) -> String {
    match left.is_empty() {
        true => String::new(),
        false => format!("; NOT removed: {}", left.join("; ")),
    }
}

/// Serve until `stop`; refresh the stats file every [`STATS_EVERY_MS`].
/// Returns why serving ended early (a daemon thread ended), if it did.
pub fn serve_until_stopped(drive: &Drive, name: &str, stop: &AtomicBool) -> Option<String> {
    let mut last = Instant::now() - Duration::from_secs(1);
    while !stop.load(Ordering::Relaxed) {
        if !drive.serving() {
            let why = match drive {
                Drive::Ublk(d) => d.why_ended().join("; "),
                Drive::Fuse(_) => "the FUSE connection was lost".into(),
            };
            return Some(format!(
                "emu attach: a daemon thread ended ({why}); detaching"
            ));
        }
        if last.elapsed() >= Duration::from_millis(STATS_EVERY_MS) {
            let s = drive.stamps().summary();
            if let Ok(t) = serde_json::to_string(&s) {
                let _ = write_atomic(&stats_path(name), &t);
            }
            last = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Stop the daemon of `r` (SIGTERM; it removes what it made) and remove
/// what it left; the error is one line.
pub fn stop_daemon(r: &Record) -> Result<(), KernelError> {
    if alive(r.pid) && kdev::signal(r.pid, libc::SIGTERM) {
        let t0 = Instant::now();
        while alive(r.pid) && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    if alive(r.pid) {
        return Err(KernelError::DaemonLingers {
            device: r.device.clone(),
            pid: r.pid,
        });
    }
    if record_path(&r.name).exists() {
        clean(r);
    }
    Ok(())
}

/// What a study of the in-process drive leaves out, and how to add it:
/// `missing` names what this machine lacks for the kernel drive (None: the
/// user asked for the in-process drive).
pub fn study_note(missing: Option<&str>) -> String {
    let how = match missing {
        None => "as --in-process asks; without it, as root, the study attaches \
                 the drive behind the kernel and measures the whole platform (docs/kernel-drive.md)"
            .to_string(),
        Some(m) => format!(
            "studying it behind the kernel (system calls, block layer, driver on the path) needs {m}: \
             as root, ssdready study attaches it itself (docs/kernel-drive.md)"
        ),
    };
    format!(
        "studying the built-in drive in-process (the device alone: no system call, block layer or \
         driver on its path); {how}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::records::uring_in_use;

    #[test]
    fn leftovers_are_named_only_when_there_are_some() {
        assert_eq!(leftovers(&[]), "");
        assert_eq!(
            leftovers(&["/dev/loop3".into(), "/run/x.mnt".into()]),
            "; NOT removed: /dev/loop3; /run/x.mnt"
        );
    }

    #[test]
    fn an_unknown_transport_is_refused_naming_the_allowed_ones() {
        let e = pick_transport("nbd").unwrap_err().to_string();
        assert!(
            e.contains("'nbd' is not a transport (allowed: auto, fuse, fuse-uring, ublk)"),
            "{e}"
        );
    }

    #[test]
    fn an_empty_mount_point_left_by_a_killed_attachment_is_removed_by_the_next_run() {
        let run = tempfile::tempdir().unwrap();
        let dead = run.path().join("emu-4000001.mnt");
        let live = run.path().join("emu-4000002.mnt");
        std::fs::create_dir(&dead).unwrap();
        std::fs::create_dir(&live).unwrap();
        let said = clean_mount_dirs(run.path(), |pid| pid == 4000002);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("pid 4000001"), "{said:?}");
        assert!(!dead.exists() && live.exists());
    }

    #[test]
    fn a_temporary_file_of_a_killed_writer_is_removed_and_a_live_one_kept() {
        let run = tempfile::tempdir().unwrap();
        let dead = run.path().join(".emu-7.json.ssdready-4000001-0.tmp");
        let live = run.path().join(".emu-8.stats.json.ssdready-4000002-3.tmp");
        let other = run.path().join("emu-8.json");
        for f in [&dead, &live, &other] {
            std::fs::write(f, "{}").unwrap();
        }
        assert_eq!(clean_temp_files(run.path(), |pid| pid == 4000002), 1);
        assert!(!dead.exists() && live.exists() && other.exists());
    }

    #[test]
    fn an_attachment_killed_before_its_record_leaves_the_switch_to_be_put_back() {
        let run = tempfile::tempdir().unwrap();
        std::fs::create_dir(run.path().join("emu-4000001.mnt")).unwrap();
        // Under way (alive, no record yet): the switch stays on for it.
        assert!(uring_in_use(run.path(), 0, |_| true));
        // Killed before its record was written: nothing holds the switch.
        assert!(!uring_in_use(run.path(), 0, |_| false));
        // The one that is detaching does not hold it either.
        assert!(!uring_in_use(run.path(), 4000001, |_| true));
    }

    #[test]
    fn an_attachment_record_other_users_can_write_is_not_listed() {
        let run = tempfile::tempdir().unwrap();
        let r = Record {
            name: "emu-4000001".into(),
            pid: 4000001,
            device: "/dev/loop9".into(),
            loop_index: 9,
            mountpoint: "/run/ssdready/emu/emu-4000001.mnt".into(),
            spec: "dram-ssd".into(),
            preset: "dram-ssd".into(),
            transport: FUSE_URING.into(),
            block_size: 4096,
            queue_depth: 32,
            started_unix: 0,
            ublk_id: None,
        };
        let path = run.path().join("emu-4000001.json");
        super::super::state::write(&path, serde_json::to_string(&r).unwrap().as_bytes()).unwrap();
        assert_eq!(records_in(run.path()).len(), 1);
        assert!(uring_in_use(run.path(), 0, |_| true));
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(records_in(run.path()).is_empty());
    }

    #[test]
    fn a_process_that_is_not_ssdready_is_not_a_live_daemon() {
        // pid 1 is init, never ssdready; a pid past pid_max exists nowhere.
        assert!(!alive(1));
        assert!(!alive(u32::MAX - 1));
    }

    #[test]
    fn the_study_note_says_what_the_in_process_drive_leaves_out() {
        let n = study_note(Some("root"));
        assert!(n.contains("needs root") && n.contains("in-process"), "{n}");
        assert!(study_note(None).contains("as --in-process asks"));
    }
}
