//! `ssdready emu attach|detach|list`: the emulated SSD as a kernel block
//! device (docs/kernel-drive.md). The daemon's records, serving loop and
//! clean-up are `ssdready_emu::kernel::daemon`; this is argv, signals and
//! what is printed.
//!
//! `attach PRESET[,key=value…]` stays in the foreground serving the drive
//! until Ctrl-C, SIGTERM, SIGHUP or `emu detach`; it prints the device's
//! path on stdout (one line, for scripts) and what it is on stderr. A
//! drive never outlives its owner: when standard output cannot take that
//! line, or is a pipe whose reader goes away, the drive is detached and the
//! command exits 1 with one line; a panic hands the drive to
//! `emu detach`, which removes it once this process has ended.

use crate::fail;
use crate::stdout::outln;
use ssdready_emu::config::Params;
use ssdready_emu::kernel::daemon::{self, Drive, Record};
use ssdready_emu::kernel::{self, ublk_serve::UblkDrive};
use ssdready_io::kdev;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Remove every attachment whose daemon is gone (root only); say so.
pub fn clean_stale() {
    for line in daemon::clean_stale() {
        crate::say(&line);
    }
}

/// The drive's parameters, checked: it can be served by the kernel and
/// fits in memory (bad input ends here, exit 2). Started by another
/// command (a study), the daemon ends with it.
fn checked_params(spec: &str) -> Result<Params, crate::Exit> {
    if let Some(parent) = std::env::var(daemon::PARENT_ENV)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        if !kdev::die_with_parent(parent, libc::SIGTERM) {
            return Err(fail(1, "emu attach: the command that started it has ended"));
        }
    }
    if let Err(e) = kernel::check_env() {
        return Err(fail(2, &format!("emu attach: {e}")));
    }
    let params = Params::parse(spec).map_err(|e| fail(2, &format!("emu attach: {e}")))?;
    if let Some(why) = kernel::unsupported(&params) {
        return Err(fail(2, &format!("emu attach: {why}")));
    }
    let need = ssdready_emu::memory::device(&params, ssdready_emu::memory::TimeBase::Real);
    if let Some(avail) = ssdready_emu::memory::available() {
        if let Err(e) = ssdready_emu::memory::check(&need, &avail) {
            return Err(fail(2, &format!("emu attach: {e}")));
        }
    }
    Ok(params)
}

/// Detach the drive and remove its mount point and files; returns the
/// line that says so and whether anything was left behind.
fn detach_drive(drive: Drive, name: &str, mnt: &Path, device: &str) -> (String, bool) {
    let summary = drive.stamps().summary();
    let left = drive.detach();
    let _ = std::fs::remove_dir(mnt);
    let _ = std::fs::remove_file(daemon::stats_path(name));
    let _ = std::fs::remove_file(daemon::record_path(name));
    if let Some(line) = daemon::put_back_uring(std::process::id()) {
        crate::say(&line);
    }
    let detached = format!(
        "detached {}: {}{}",
        device,
        summary.text(),
        daemon::leftovers(&left)
    );
    (detached, !left.is_empty())
}

/// `emu attach`.
pub fn attach(spec: &str, transport: &str) -> crate::Done {
    let params = checked_params(spec)?;
    let transport = daemon::pick_transport(transport).map_err(|e| fail(2, &e.to_string()))?;
    clean_stale();
    let stop = crate::stop_on_signals()?;
    let name = format!("emu-{}", std::process::id());
    let mnt = daemon::make_mount_dir(&name).map_err(|e| fail(1, &e))?;
    let drive = match Drive::attach(params.clone(), transport, &mnt) {
        Ok(d) => d,
        Err(e) => {
            let _ = std::fs::remove_dir(&mnt);
            return Err(fail(1, &format!("emu attach: {e}")));
        }
    };
    let rec = daemon::record(&name, &drive, &mnt, spec, &params, transport);
    let text = serde_json::to_string_pretty(&rec).expect("a record serialises");
    if let Err(e) = daemon::write_atomic(&daemon::record_path(&name), &text) {
        let left = drive.detach();
        let _ = std::fs::remove_dir(&mnt);
        return Err(fail(
            1,
            &format!("recording the attachment: {e}{}", daemon::leftovers(&left)),
        ));
    }
    ATTACHED.get_or_init(|| rec.device.clone());
    let mut lost = announce(&rec, &drive).err();
    if ssdready_run::panics::injected("attach") {
        panic!("injected panic while serving {}", rec.device);
    }
    if lost.is_none() {
        let gone = watch_stdout(&stop);
        if let Some(why) = daemon::serve_until_stopped(&drive, &name, &stop) {
            crate::say(&why);
        }
        if gone.load(Ordering::Relaxed) {
            lost = Some("standard output's reader went away".into());
        }
    }
    // A mount its owner left on the drive (a killed study's ext4) keeps
    // the device busy: remove it first.
    for line in ssdready_emu::kernel::mounts::clean_stale() {
        crate::say(&line);
    }
    let (detached, left_behind) = detach_drive(drive, &name, &mnt, &rec.device);
    // A drive whose owner can no longer hear from it is not left behind.
    if let Some(why) = lost {
        return Err(fail(1, &format!("emu attach: {why}; {detached}")));
    }
    crate::say(&detached);
    match left_behind {
        true => Err(crate::Exit(1)),
        false => Ok(()),
    }
}

/// The device this process serves, for [`on_panic`].
static ATTACHED: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Called by the panic hook: a daemon that panics must not leave its drive
/// behind. A separate `ssdready emu detach DEV` waits for this process to
/// end and removes the loop device, the FUSE mount and the record (as it
/// does for a daemon that was killed). Returns the clause that says so.
pub fn on_panic() -> Option<String> {
    let dev = ATTACHED.get()?;
    let exe = std::env::current_exe().ok()?;
    use std::os::unix::process::CommandExt;
    let spawned = std::process::Command::new(exe)
        .args(["emu", "detach", dev])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
    Some(match spawned {
        Ok(_) => format!("; {dev} is being detached"),
        Err(e) => format!("; detaching {dev} failed ({e}): ssdready emu list removes it"),
    })
}

/// Set `stop` (and the flag returned) when standard output is a pipe whose
/// reader went away: the drive's owner is gone.
fn watch_stdout(
    stop: &std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let gone = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (g, s) = (gone.clone(), stop.clone());
    std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            if ssdready_io::written::stdout_reader_gone() {
                g.store(true, Ordering::Relaxed);
                s.store(true, Ordering::Relaxed);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    gone
}

/// Print the device's path on stdout (the error: stdout cannot take it)
/// and what it is on stderr.
fn announce(rec: &Record, drive: &Drive) -> Result<(), String> {
    crate::stdout::write(&format!("{}\n", rec.device))?;
    let cap = drive.capacity();
    let drive = match drive {
        Drive::Fuse(d) => d,
        Drive::Ublk(d) => {
            announce_ublk(rec, d, cap);
            return Ok(());
        }
    };
    if let Some(line) = &drive.uring_switch {
        crate::say(line);
    }
    let (reset, failed) = &drive.queue_reset;
    if !reset.is_empty() {
        let each: Vec<String> = reset.iter().map(|r| r.to_string()).collect();
        crate::say(&format!(
            "{}'s queue set as a new drive's (a loop device keeps its last user's settings): {}",
            rec.device,
            each.join(", ")
        ));
    }
    for f in failed {
        crate::say(&format!("warning: {f}"));
    }
    let neg = drive.negotiated().unwrap_or_default();
    let dio = match neg.async_dio {
        true => format!("async direct I/O, max_background {}", neg.max_background),
        false => "NO async direct I/O (the kernel did not agree: one request at a time)".into(),
    };
    let uring = match drive.uring {
        Some((queues, per_queue)) => format!(
            "requests over io_uring: {queues} queue{} (one per possible CPU) of {per_queue} entries, \
             no read or write system call per request",
            if queues == 1 { "" } else { "s" }
        ),
        None => kernel::fuse_uring_state(),
    };
    crate::say(&format!(
        "emulated {} drive ({}, {}-byte blocks) at {} over FUSE + loop ({dio}, {} daemon thread{}{}, \
         max request {} KiB; FUSE over io_uring: {}; ublk: {})",
        rec.preset,
        ssdready_emu::memory::human(cap),
        rec.block_size,
        rec.device,
        drive.threads,
        if drive.threads == 1 { "" } else { "s" },
        match drive.stamps().realtime.load(Ordering::Relaxed) {
            0 => " (not real-time: SCHED_FIFO refused; a loaded host makes them late)".to_string(),
            n if n as usize == drive.threads => " under SCHED_FIFO".to_string(),
            n => format!(" ({n} under SCHED_FIFO)"),
        },
        neg.max_write / 1024,
        uring,
        kernel::ublk::probe().map_or_else(|e| e.to_string(), |()| "available".into()),
    ));
    crate::say(&format!(
        "study it with: ssdready study {dev}  (or ssdready run --filename={dev} …); \
         stop with Ctrl-C, or: ssdready emu detach {dev}",
        dev = rec.device
    ));
    Ok(())
}

fn announce_ublk(rec: &Record, d: &UblkDrive, cap: u64) {
    let threads = d.queues as u64;
    crate::say(&format!(
        "emulated {} drive ({}, {}-byte blocks) at {} over ublk ({} queue{} of depth {}, {} command \
         numbers, {}; requests go from blk-mq to this process, no file system or loop driver on the path)",
        rec.preset,
        ssdready_emu::memory::human(cap),
        rec.block_size,
        rec.device,
        d.queues,
        if d.queues == 1 { "" } else { "s" },
        d.depth,
        match d.opcodes {
            kernel::ublk::Opcodes::Encoded => "ioctl-encoded",
            kernel::ublk::Opcodes::Legacy => "legacy",
        },
        match d.stamps().realtime.load(Ordering::Relaxed) {
            0 => "not real-time: SCHED_FIFO refused; a loaded host makes them late".to_string(),
            n if n == threads => "queue threads under SCHED_FIFO".to_string(),
            n => format!("{n} of {threads} queue threads under SCHED_FIFO"),
        },
    ));
    crate::say(&format!(
        "study it with: ssdready study {dev}  (or ssdready run --filename={dev} …); \
         stop with Ctrl-C, or: ssdready emu detach {dev}",
        dev = rec.device
    ));
}

/// `emu detach DEV` / `--all`.
pub fn detach(device: Option<&str>, all: bool) -> crate::Done {
    if !kdev::is_root() {
        return Err(fail(2, "emu detach needs root"));
    }
    let targets: Vec<Record> = match (device, all) {
        (_, true) => daemon::records(),
        (Some(d), false) => match daemon::record_of(d) {
            Some(r) => vec![r],
            None => {
                clean_stale();
                return Err(fail(
                    2,
                    &format!("emu detach: {d} is not an emulated drive attached by ssdready (see: ssdready emu list)"),
                ));
            }
        },
        (None, false) => {
            return Err(fail(
                2,
                "emu detach: name a device (e.g. /dev/loop3), or --all",
            ))
        }
    };
    for r in targets {
        if let Err(e) = daemon::stop_daemon(&r) {
            return Err(fail(1, &e.to_string()));
        }
        outln!("detached {}", r.device)?;
    }
    // What a daemon killed before its record was written left (its mount
    // point, the io_uring switch it turned on) goes too.
    clean_stale();
    Ok(())
}

/// `emu list`.
pub fn list() -> crate::Done {
    clean_stale();
    let recs = daemon::records();
    if recs.is_empty() {
        return outln!("no emulated drives attached");
    }
    for r in recs {
        outln!(
            "{}\t{}\t{}\tpid {}\t{}-byte blocks, queue depth {}",
            r.device,
            r.spec,
            r.transport,
            r.pid,
            r.block_size,
            r.queue_depth
        )?;
        if let Some(s) = daemon::stats(&r.name) {
            outln!("    {}", s.text())?;
        }
    }
    Ok(())
}
