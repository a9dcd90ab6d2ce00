//! `ssdready emu attach|detach|list`: the emulated SSD as a kernel block
//! device (docs/kernel-drive.md).
//!
//! `attach PRESET[,key=value…]` stays in the foreground serving the drive
//! until Ctrl-C, SIGTERM, SIGHUP or `emu detach`; it prints the device's
//! path on stdout (one line, for scripts) and what it is on stderr. Each
//! live attachment is recorded in `/run/ssdready/emu/NAME.json` (its
//! daemon's pid, loop device, mount point), with its daemon's running
//! figures in `NAME.stats.json` (rewritten every half second, atomically).
//! An attachment whose daemon died (SIGKILL) is found by the next `list`
//! or `attach` and removed: loop device unbound, FUSE mount detached,
//! directory and record deleted.

use crate::fail;
use serde::{Deserialize, Serialize};
use ssdready_emu::config::Params;
use ssdready_emu::kernel::ublk_serve::UblkDrive;
use ssdready_emu::kernel::{self, stamps::Stamps, stamps::Summary, KernelDrive};
use ssdready_io::kdev;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Set by a command that starts `emu attach` as its child (the study): the
/// child's drive is removed when that command ends, however it ends.
pub const PARENT_ENV: &str = "SSDREADY_EMU_PARENT";

/// How often the daemon rewrites its stats file (a study reads it around
/// each run).
pub const STATS_EVERY_MS: u64 = 100;

/// Where attachments are recorded.
pub const RUN_DIR: &str = "/run/ssdready/emu";

/// One live attachment.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    pub name: String,
    pub pid: u32,
    pub device: String,
    pub loop_index: u32,
    pub mountpoint: String,
    pub spec: String,
    pub preset: String,
    pub transport: String,
    pub block_size: u32,
    pub queue_depth: u16,
    pub started_unix: u64,
    /// The ublk device number (transport ublk).
    #[serde(default)]
    pub ublk_id: Option<u32>,
}

/// An attached drive, over either transport.
enum Drive {
    Fuse(KernelDrive),
    Ublk(Box<UblkDrive>),
}

impl Drive {
    fn path(&self) -> String {
        match self {
            Drive::Fuse(d) => d.loop_path.display().to_string(),
            Drive::Ublk(d) => d.path.display().to_string(),
        }
    }
    fn stamps(&self) -> &Stamps {
        match self {
            Drive::Fuse(d) => d.stamps(),
            Drive::Ublk(d) => d.stamps(),
        }
    }
    fn serving(&self) -> bool {
        match self {
            Drive::Fuse(d) => d.serving(),
            Drive::Ublk(d) => d.serving(),
        }
    }
    fn capacity(&self) -> u64 {
        match self {
            Drive::Fuse(d) => d.device().capacity(),
            Drive::Ublk(d) => d.device().capacity(),
        }
    }
    fn detach(self) -> Vec<String> {
        match self {
            Drive::Fuse(d) => d.detach(),
            Drive::Ublk(d) => d.detach(),
        }
    }
}

fn record_path(name: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{name}.json"))
}

/// The stats file of attachment `name`.
pub fn stats_path(name: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{name}.stats.json"))
}

/// Write `text` to `path` atomically (a temporary file renamed over it).
fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

/// Every recorded attachment (live or not).
pub fn records() -> Vec<Record> {
    let Ok(dir) = std::fs::read_dir(RUN_DIR) else {
        return Vec::new();
    };
    let mut v: Vec<Record> = dir
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.ends_with(".json") && !n.ends_with(".stats.json")
        })
        .filter_map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok())
        .collect();
    v.sort_by_key(|r| r.loop_index);
    v
}

/// The attachment serving block device `dev` (`/dev/loopN`), if any.
pub fn record_of(dev: &str) -> Option<Record> {
    let canon = std::fs::canonicalize(dev).ok();
    records().into_iter().find(|r| {
        r.device == dev || canon.as_deref() == Some(Path::new(&r.device)) || r.name == dev
    })
}

/// The daemon's latest figures for attachment `name`.
pub fn stats(name: &str) -> Option<Summary> {
    serde_json::from_str(&std::fs::read_to_string(stats_path(name)).ok()?).ok()
}

/// Whether daemon `pid` still runs (an exited one not yet reaped by its
/// parent is a zombie: gone).
fn alive(pid: u32) -> bool {
    let named = std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .is_ok_and(|c| c.trim_end().starts_with("ssdready"));
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let zombie = state
        .rsplit_once(") ")
        .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X'));
    named && !zombie
}

/// Remove what a dead daemon left: returns what was removed, one line each.
fn clean(r: &Record) -> Vec<String> {
    let mut done = Vec::new();
    if let Some(id) = r.ublk_id {
        if kernel::ublk_serve::delete(id).is_ok() {
            done.push(format!("deleted {}", r.device));
        }
        let _ = std::fs::remove_file(stats_path(&r.name));
        let _ = std::fs::remove_file(record_path(&r.name));
        return done;
    }
    let backing = format!("/sys/block/loop{}/loop/backing_file", r.loop_index);
    let ours = Path::new(&r.mountpoint).join(ssdready_emu::kernel::fuse_proto::DISK_NAME);
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

/// Remove every attachment whose daemon is gone (root only); say so.
pub fn clean_stale() {
    if !kdev::is_root() {
        return;
    }
    for r in records().iter().filter(|r| !alive(r.pid)) {
        let done = clean(r);
        crate::say(&format!(
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
}

/// The transport `want` (auto, fuse, ublk) resolves to here, or the one
/// line saying why none can serve.
fn pick_transport(want: &str) -> Result<&'static str, String> {
    let ublk = kernel::ublk::probe();
    match want {
        "ublk" => ublk
            .map(|_| "ublk")
            .map_err(|why| format!("transport ublk cannot be used here: {why}")),
        "auto" if ublk.is_ok() => Ok("ublk"),
        "fuse" | "auto" => match kernel::fuse_missing() {
            None => Ok("fuse+loop"),
            Some(m) => Err(format!("emu attach needs {m}")),
        },
        other => Err(format!(
            "option '--transport': '{other}' is not a transport (allowed: auto, fuse, ublk)"
        )),
    }
}

/// `emu attach`.
pub fn attach(spec: &str, transport: &str) {
    // Started by another command (a study): never outlive it.
    if let Some(parent) = std::env::var(PARENT_ENV)
        .ok()
        .and_then(|v| v.parse::<u32>().ok())
    {
        if !kdev::die_with_parent(parent, libc::SIGTERM) {
            fail(1, "emu attach: the command that started it has ended");
        }
    }
    let params = Params::parse(spec).unwrap_or_else(|e| fail(2, &format!("emu attach: {e}")));
    if let Some(why) = kernel::unsupported(&params) {
        fail(2, &format!("emu attach: {why}"));
    }
    let need = ssdready_emu::memory::device(&params, ssdready_emu::memory::TimeBase::Real);
    if let Some(avail) = ssdready_emu::memory::available() {
        if let Err(e) = ssdready_emu::memory::check(&need, &avail) {
            fail(2, &format!("emu attach: {e}"));
        }
    }
    let transport = pick_transport(transport).unwrap_or_else(|e| fail(2, &e));
    clean_stale();
    let stop = crate::stop_on_signals();
    let name = format!("emu-{}", std::process::id());
    let mnt = Path::new(RUN_DIR).join(format!("{name}.mnt"));
    if let Err(e) = std::fs::create_dir_all(&mnt) {
        fail(1, &format!("creating {}: {e}", mnt.display()));
    }
    let preset = params.preset.clone();
    let depth = kernel::queue_depth(&params);
    let block_size = kernel::block_size(&params);
    let attached = match transport {
        "ublk" => UblkDrive::attach(params).map(|d| Drive::Ublk(Box::new(d))),
        _ => KernelDrive::attach(params, &mnt).map(Drive::Fuse),
    };
    let drive = match attached {
        Ok(d) => d,
        Err(e) => {
            let _ = std::fs::remove_dir(&mnt);
            fail(1, &format!("emu attach: {e}"));
        }
    };
    let (loop_index, ublk_id, queue_depth) = match &drive {
        Drive::Fuse(d) => (d.loop_index, None, depth),
        Drive::Ublk(d) => (0, Some(d.dev_id), d.depth),
    };
    let rec = Record {
        name: name.clone(),
        pid: std::process::id(),
        device: drive.path(),
        loop_index,
        ublk_id,
        mountpoint: mnt.display().to_string(),
        spec: spec.to_string(),
        preset,
        transport: transport.into(),
        block_size,
        queue_depth,
        started_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    };
    let text = serde_json::to_string_pretty(&rec).expect("a record serialises");
    if let Err(e) = write_atomic(&record_path(&name), &text) {
        let left = drive.detach();
        let _ = std::fs::remove_dir(&mnt);
        fail(
            1,
            &format!("recording the attachment: {e}{}", leftovers(&left)),
        );
    }
    announce(&rec, &drive);
    serve_until_stopped(&drive, &name, &stop);
    let summary = drive.stamps().summary();
    let left = drive.detach();
    let _ = std::fs::remove_dir(&mnt);
    let _ = std::fs::remove_file(stats_path(&name));
    let _ = std::fs::remove_file(record_path(&name));
    crate::say(&format!(
        "detached {}: {}{}",
        rec.device,
        summary.text(),
        leftovers(&left)
    ));
    if !left.is_empty() {
        std::process::exit(1);
    }
}

fn leftovers(left: &[String]) -> String {
    match left.is_empty() {
        true => String::new(),
        false => format!("; NOT removed: {}", left.join("; ")),
    }
}

fn announce(rec: &Record, drive: &Drive) {
    use std::io::Write;
    println!("{}", rec.device);
    let _ = std::io::stdout().flush();
    let cap = drive.capacity();
    let drive = match drive {
        Drive::Fuse(d) => d,
        Drive::Ublk(d) => return announce_ublk(rec, d, cap),
    };
    let neg = drive.negotiated().unwrap_or_default();
    let dio = match neg.async_dio {
        true => format!("async direct I/O, max_background {}", neg.max_background),
        false => "NO async direct I/O (the kernel did not agree: one request at a time)".into(),
    };
    crate::say(&format!(
        "emulated {} drive ({}, {}-byte blocks) at {} over FUSE + loop ({dio}, {} daemon threads{}, \
         max request {} KiB; FUSE over io_uring: {}; ublk: {})",
        rec.preset,
        ssdready_emu::memory::human(cap),
        rec.block_size,
        rec.device,
        drive.threads,
        match drive.stamps().realtime.load(Ordering::Relaxed) {
            0 => " (not real-time: SCHED_FIFO refused; a loaded host makes them late)".to_string(),
            n if n as usize == drive.threads => " under SCHED_FIFO".to_string(),
            n => format!(" ({n} under SCHED_FIFO)"),
        },
        neg.max_write / 1024,
        kernel::fuse_uring_state(),
        kernel::ublk::probe().err().unwrap_or_else(|| "available".into()),
    ));
    crate::say(&format!(
        "study it with: ssdready study {dev}  (or ssdready run --filename={dev} …); \
         stop with Ctrl-C, or: ssdready emu detach {dev}",
        dev = rec.device
    ));
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

/// Serve until a signal; refresh the stats file every half second.
fn serve_until_stopped(drive: &Drive, name: &str, stop: &std::sync::atomic::AtomicBool) {
    let mut last = Instant::now() - Duration::from_secs(1);
    while !stop.load(Ordering::Relaxed) {
        if !drive.serving() {
            let why = match drive {
                Drive::Ublk(d) => d.why_ended().join("; "),
                Drive::Fuse(_) => "the FUSE connection was lost".into(),
            };
            crate::say(&format!(
                "emu attach: a daemon thread ended ({why}); detaching"
            ));
            break;
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
}

/// `emu detach DEV` / `--all`.
pub fn detach(device: Option<&str>, all: bool) {
    if !kdev::is_root() {
        fail(2, "emu detach needs root");
    }
    let targets: Vec<Record> = match (device, all) {
        (_, true) => records(),
        (Some(d), false) => match record_of(d) {
            Some(r) => vec![r],
            None => fail(
                2,
                &format!("emu detach: {d} is not an emulated drive attached by ssdready (see: ssdready emu list)"),
            ),
        },
        (None, false) => fail(2, "emu detach: name a device (e.g. /dev/loop3), or --all"),
    };
    for r in targets {
        if alive(r.pid) && kdev::signal(r.pid, libc::SIGTERM) {
            let t0 = Instant::now();
            while alive(r.pid) && t0.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        if alive(r.pid) {
            fail(
                1,
                &format!(
                    "emu detach: the daemon of {} (pid {}) did not stop within 10 s",
                    r.device, r.pid
                ),
            );
        }
        if record_path(&r.name).exists() {
            clean(&r);
        }
        println!("detached {}", r.device);
    }
}

/// `emu list`.
pub fn list() {
    clean_stale();
    let recs = records();
    if recs.is_empty() {
        println!("no emulated drives attached");
        return;
    }
    for r in recs {
        println!(
            "{}\t{}\t{}\tpid {}\t{}-byte blocks, queue depth {}",
            r.device, r.spec, r.transport, r.pid, r.block_size, r.queue_depth
        );
        if let Some(s) = stats(&r.name) {
            println!("    {}", s.text());
        }
    }
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
