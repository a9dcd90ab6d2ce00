//! The ublk transport: the emulator as a ublk server, `/dev/ublkbN` a
//! block device whose requests reach this process straight from blk-mq —
//! no file system, no loop driver, no FUSE on the path, as a real NVMe
//! driver hands them to its device.
//!
//! * **Setup** (control ring on `/dev/ublk-control`): `ADD_DEV` with one
//!   queue per CPU (at most [`MAX_QUEUES`]) of the drive's interface depth,
//!   `SET_PARAMS` (logical block, capacity, the largest request, discard,
//!   a volatile cache when the model has one), then one thread per queue
//!   maps its descriptors and asks for every tag's first request
//!   (`FETCH_REQ`), and `START_DEV` makes the disk appear.
//! * **Serving.** A queue thread takes each request as its fetch completes,
//!   submits it to the model at once, moves its data (the kernel copies a
//!   write's data into the tag's buffer before the fetch completes, and a
//!   read's out of it at the commit), and commits it at the modelled
//!   completion time with `COMMIT_AND_FETCH_REQ` — which also asks for the
//!   tag's next request. Between deadlines the thread waits on its ring
//!   with a timeout (timer slack 1 ns, `SCHED_FIFO` where allowed), and
//!   spins the last [`super::fuse_serve::SPIN_NS`] when one request is in
//!   flight, as the FUSE daemon does.
//! * **Stop**: `STOP_DEV` while the queues still serve (the kernel drains
//!   the disk's requests first), then the threads end, their rings and the
//!   character device close, and `DEL_DEV` frees the device number.

use super::drive_params::{block_size, queue_depth, unsupported};
use super::error::{KernelError, ServeError};
use super::fuse_serve::SPIN_NS;
use super::stamps::Stamps;
use super::ublk::{self as u, IoDesc, Opcodes};
use crate::config::Params;
use crate::data::Way;
use crate::device::{Extent, Op};
use crate::shared::SharedDevice;
use ssdready_io::clock::Clock;
use ssdready_io::kdev;
use ssdready_io::ublk::{Control, Queue};
use std::collections::BinaryHeap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The most queues a drive gets (one per CPU up to this).
pub const MAX_QUEUES: u16 = 8;
/// The largest request (bytes): 512 KiB, each tag's buffer.
pub const MAX_IO: usize = 512 << 10;
/// How long a control command may take.
const CONTROL_LIMIT: Duration = Duration::from_secs(10);
/// The longest single wait on a queue's ring (a stop is seen within it).
const SLICE: Duration = Duration::from_millis(20);

/// What the queue threads share.
struct Shared {
    dev: Arc<SharedDevice>,
    stamps: Arc<Stamps>,
    stop: AtomicBool,
    ready: AtomicUsize,
    opcodes: Opcodes,
    /// Why each queue thread that ended did.
    ended: std::sync::Mutex<Vec<String>>,
}

/// A drive served over ublk until [`UblkDrive::detach`].
pub struct UblkDrive {
    pub path: PathBuf,
    pub dev_id: u32,
    pub queues: u16,
    pub depth: u16,
    pub block_size: u32,
    pub opcodes: Opcodes,
    control: Control,
    cdev: Option<Arc<File>>,
    shared: Arc<Shared>,
    handles: Vec<std::thread::JoinHandle<String>>,
    started: bool,
}

impl UblkDrive {
    /// Add, configure and start a ublk device served by the model.
    pub fn attach(params: Params) -> Result<UblkDrive, KernelError> {
        u::probe()?;
        if let Some(why) = unsupported(&params) {
            return Err(KernelError::Unsupported { why });
        }
        let bs = block_size(&params);
        let depth = queue_depth(&params).min(ssdready_io::ublk::MAX_QUEUE_DEPTH as u16);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u16;
        let model_queues = params.queues.clamp(1, MAX_QUEUES as u32) as u16;
        let queues = cpus.min(model_queues).clamp(1, MAX_QUEUES);
        // Flushes always reach the model (as FSYNC does over FUSE): a
        // volatile cache makes the kernel send them.
        let cache = true;
        let dev = SharedDevice::new(params, Clock::calibrate())?;
        let mut control = Control::open().map_err(opening_control)?;
        let opcodes = pick_opcodes(&mut control);
        let flags = match opcodes {
            Opcodes::Encoded => u::F_CMD_IOCTL_ENCODE,
            Opcodes::Legacy => 0,
        };
        let mut info = u::dev_info(queues, depth, MAX_IO as u32, flags);
        let hdr = u::ctrl_cmd(u32::MAX, u16::MAX, 0, 0, 0);
        control
            .command(opcodes.of(u::ADD_DEV), hdr, &mut info, CONTROL_LIMIT)
            .map_err(|err| KernelError::Os {
                doing: "adding a ublk device",
                err,
            })?;
        let dev_id = u::dev_info_id(&info);
        let shared = Arc::new(Shared {
            dev,
            stamps: Arc::new(Stamps::default()),
            stop: AtomicBool::new(false),
            ready: AtomicUsize::new(0),
            opcodes,
            ended: std::sync::Mutex::new(Vec::new()),
        });
        let mut drive = UblkDrive {
            path: PathBuf::from(format!("/dev/ublkb{dev_id}")),
            dev_id,
            queues,
            depth,
            block_size: bs,
            opcodes,
            control,
            cdev: None,
            shared,
            handles: Vec::new(),
            started: false,
        };
        match drive.start(cache) {
            Ok(()) => Ok(drive),
            Err(e) => {
                let left = drive.detach();
                Err(match left.is_empty() {
                    true => e,
                    false => KernelError::NotRemoved {
                        err: Box::new(e),
                        left,
                    },
                })
            }
        }
    }

    fn start(&mut self, cache: bool) -> Result<(), KernelError> {
        let cap = self.shared.dev.capacity();
        let shift = self.block_size.trailing_zeros() as u8;
        let mut params = u::params_with_discard(
            shift,
            (MAX_IO / 512) as u32,
            cap / 512,
            cache,
            (MAX_IO / 512) as u32,
        );
        let hdr = u::ctrl_cmd(self.dev_id, u16::MAX, 0, 0, 0);
        self.control
            .command(
                self.opcodes.of(u::SET_PARAMS),
                hdr,
                &mut params,
                CONTROL_LIMIT,
            )
            .map_err(|err| KernelError::Os {
                doing: "setting the ublk device's parameters",
                err,
            })?;
        let cpath = format!("/dev/ublkc{}", self.dev_id);
        let cdev = Arc::new(open_waiting(Path::new(&cpath))?);
        self.cdev = Some(cdev.clone());
        for q in 0..self.queues {
            let (sh, cdev, depth) = (self.shared.clone(), cdev.clone(), self.depth);
            let h = std::thread::Builder::new()
                .name(format!("ssdready-ublk{q}"))
                .spawn(move || {
                    let why = serve_queue(sh.clone(), cdev, q, depth);
                    if let Ok(mut v) = sh.ended.lock() {
                        v.push(format!("queue {q}: {why}"));
                    }
                    why
                })
                .map_err(|err| KernelError::Os {
                    doing: "starting a queue thread",
                    err,
                })?;
            self.handles.push(h);
        }
        let t0 = Instant::now();
        while self.shared.ready.load(Ordering::Acquire) < self.queues as usize {
            if let Some(h) = self.handles.iter().position(|h| h.is_finished()) {
                let why = self.handles.remove(h).join().unwrap_or_default();
                return Err(KernelError::UblkQueue { why });
            }
            if t0.elapsed() > Duration::from_secs(5) {
                return Err(KernelError::UblkQueuesLate);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let pid = std::process::id() as u64;
        let hdr = u::ctrl_cmd(self.dev_id, u16::MAX, 0, 0, pid);
        self.control
            .command(self.opcodes.of(u::START_DEV), hdr, &mut [], CONTROL_LIMIT)
            .map_err(|err| KernelError::Os {
                doing: "starting the ublk device",
                err,
            })?;
        self.started = true;
        open_waiting(&self.path).map(drop)
    }

    /// The daemon's stamps.
    pub fn stamps(&self) -> &Stamps {
        &self.shared.stamps
    }

    /// The emulated device.
    pub fn device(&self) -> &Arc<SharedDevice> {
        &self.shared.dev
    }

    /// Whether every queue thread is still serving.
    pub fn serving(&self) -> bool {
        self.handles.iter().all(|h| !h.is_finished())
    }

    /// Why the queue threads that ended did, one clause each.
    pub fn why_ended(&self) -> Vec<String> {
        self.shared
            .ended
            .lock()
            .map(|v| v.clone())
            .unwrap_or_default()
    }

    /// Stop the disk (while the queues still serve its last requests), end
    /// the queue threads and delete the device. What could not be undone,
    /// one clause each.
    pub fn detach(mut self) -> Vec<String> {
        let mut left = Vec::new();
        let op = |c| self.opcodes.of(c);
        let (stop, del) = (op(u::STOP_DEV), op(u::DEL_DEV));
        let hdr = u::ctrl_cmd(self.dev_id, u16::MAX, 0, 0, 0);
        if self.started {
            if let Err(e) = self.control.command(stop, hdr, &mut [], CONTROL_LIMIT) {
                left.push(format!("stopping {}: {e}", self.path.display()));
            }
        }
        self.shared.stop.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
        // DEL_DEV waits until every reference to the character device is
        // closed.
        self.cdev = None;
        if let Err(e) = self.control.command(del, hdr, &mut [], CONTROL_LIMIT) {
            left.push(format!("deleting ublk device {}: {e}", self.dev_id));
        }
        left
    }
}

/// Delete ublk device `dev_id` whose server is gone (a stale attachment).
pub fn delete(dev_id: u32) -> Result<(), KernelError> {
    let mut c = Control::open().map_err(opening_control)?;
    let ops = pick_opcodes(&mut c);
    let hdr = u::ctrl_cmd(dev_id, u16::MAX, 0, 0, 0);
    c.command(ops.of(u::STOP_DEV), hdr, &mut [], CONTROL_LIMIT)
        .ok();
    c.command(ops.of(u::DEL_DEV), hdr, &mut [], CONTROL_LIMIT)
        .map(drop)
        .map_err(|err| KernelError::DeleteUblk { dev_id, err })
}

fn opening_control(err: std::io::Error) -> KernelError {
    KernelError::Os {
        doing: "opening /dev/ublk-control",
        err,
    }
}

/// Encoded command numbers where the kernel answers `GET_FEATURES` (6.5
/// on) and lists them; the legacy ones otherwise.
fn pick_opcodes(c: &mut Control) -> Opcodes {
    let mut features = [0u8; 8];
    let hdr = u::ctrl_cmd(u32::MAX, u16::MAX, 0, 0, 0);
    match c.command(u::GET_FEATURES, hdr, &mut features, CONTROL_LIMIT) {
        Ok(_) if u64::from_le_bytes(features) & u::F_CMD_IOCTL_ENCODE != 0 => Opcodes::Encoded,
        _ => Opcodes::Legacy,
    }
}

/// Open `path` read-write, waiting up to 2 s for its node to appear.
fn open_waiting(path: &Path) -> Result<File, KernelError> {
    let t0 = Instant::now();
    loop {
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
        {
            Ok(f) => return Ok(f),
            Err(e) if t0.elapsed() < Duration::from_secs(2) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(err) => {
                return Err(KernelError::Open {
                    path: path.to_path_buf(),
                    err,
                })
            }
        }
    }
}

/// A request waiting for its modelled completion: (due, tag, result),
/// earliest first.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Due(std::cmp::Reverse<u64>, u16, i32, u64);

/// One queue thread: fetch every tag, then serve until stopped. Returns
/// why it ended.
fn serve_queue(sh: Arc<Shared>, cdev: Arc<File>, q: u16, depth: u16) -> String {
    let _ = kdev::set_timer_slack(1);
    if kdev::set_fifo(1).is_ok() {
        sh.stamps.realtime.fetch_add(1, Ordering::Relaxed);
    }
    if let Ok(mut t) = sh.stamps.tids.lock() {
        t.push(kdev::thread_id());
    }
    let mut queue = match Queue::new(cdev, q, depth, MAX_IO) {
        Ok(q) => q,
        Err(e) => return format!("queue {q}: {e}"),
    };
    for tag in 0..depth {
        if let Err(e) = queue.push(sh.opcodes.of(u::IO_FETCH_REQ), tag, 0) {
            return format!("queue {q}: fetching tag {tag}: {e}");
        }
    }
    if let Err(e) = queue.submit_and_wait(0, None) {
        return format!("queue {q}: {e}");
    }
    sh.ready.fetch_add(1, Ordering::Release);
    let attached = sh.dev.queues.attach();
    let why = Server {
        sh: &sh,
        queue,
        modelq: (attached.0, attached.1.clone()),
        pending: BinaryHeap::new(),
        done: Vec::with_capacity(depth as usize),
        committed: Vec::with_capacity(depth as usize),
    }
    .run();
    sh.dev.queues.detach(attached.0);
    why
}

struct Server<'a> {
    sh: &'a Shared,
    queue: Queue,
    modelq: (usize, Arc<crate::queues::Counts>),
    pending: BinaryHeap<Due>,
    done: Vec<(u16, i32)>,
    /// The timings of the requests committed in one submission (reused).
    committed: Vec<Option<(u64, u64)>>,
}

impl Server<'_> {
    fn run(&mut self) -> String {
        let clock = &self.sh.dev.clock;
        let commit = self.sh.opcodes.of(u::IO_COMMIT_AND_FETCH_REQ);
        loop {
            self.done.clear();
            self.queue.reap(&mut self.done);
            for i in 0..self.done.len() {
                let (tag, res) = self.done[i];
                match res {
                    0 => self.take(tag),
                    u::IO_RES_ABORT => {}
                    e => return format!("the driver failed a command with error {e}"),
                }
            }
            let now = clock.now();
            if self.pending.peek().is_some_and(|d| d.0 .0 <= now) {
                if let Err(e) = self.commit_due(commit, now) {
                    return e.to_string();
                }
            }
            let stopping = self.sh.stop.load(Ordering::Relaxed);
            if stopping && self.pending.is_empty() {
                return "stopped".into();
            }
            if self.queue.inflight() == 0 && self.pending.is_empty() {
                return "the driver aborted every tag (the device stopped)".into();
            }
            let turn = clock.now();
            let wait = match self.pending.peek() {
                None => Some(SLICE),
                Some(d) => {
                    let left = d.0 .0.saturating_sub(clock.now());
                    let alone = self.pending.len() == 1
                        && self.sh.stamps.inflight.load(Ordering::Relaxed) <= 1;
                    let spin = if alone { SPIN_NS } else { 0 };
                    match left > spin {
                        true => Some(Duration::from_nanos(left - spin).min(SLICE)),
                        false => None,
                    }
                }
            };
            let r = match wait {
                Some(d) => self.queue.submit_and_wait(1, Some(d)),
                None => {
                    std::hint::spin_loop();
                    self.sh.stamps.spun(clock.now().saturating_sub(turn));
                    Ok(())
                }
            };
            if let Err(e) = r {
                return format!("waiting on the queue's ring: {e}");
            }
        }
    }

    /// Commit every request due by `now` in one submission.
    fn commit_due(&mut self, commit: u32, now: u64) -> Result<(), ServeError> {
        let clock = &self.sh.dev.clock;
        let start = clock.now();
        self.committed.clear();
        while self.pending.peek().is_some_and(|d| d.0 .0 <= now) {
            let Due(due, tag, result, arrived) = self.pending.pop().expect("peeked");
            self.queue
                .push(commit, tag, result)
                .map_err(|err| ServeError::CommitTag { tag, err })?;
            self.committed
                .push((arrived != u64::MAX).then_some((arrived, due.0)));
        }
        self.queue
            .submit_and_wait(0, None)
            .map_err(|err| ServeError::Commit { err })?;
        let end = clock.now();
        for t in &self.committed {
            self.sh.stamps.served(*t, start, end);
        }
        Ok(())
    }

    /// A request arrived on `tag`: submit it to the model, move its data,
    /// and schedule its commit.
    fn take(&mut self, tag: u16) {
        let clock = &self.sh.dev.clock;
        let t = clock.now();
        let d = IoDesc::parse(&self.queue.desc(tag));
        let offset = d.start_sector * 512;
        let len = d.nr_sectors as u64 * 512;
        let cap = self.sh.dev.capacity();
        let timed = matches!(
            d.op,
            u::IO_OP_READ
                | u::IO_OP_WRITE
                | u::IO_OP_FLUSH
                | u::IO_OP_DISCARD
                | u::IO_OP_WRITE_ZEROES
        );
        self.sh.stamps.arrive(t);
        let data = matches!(d.op, u::IO_OP_READ | u::IO_OP_WRITE);
        let beyond = d.op != u::IO_OP_FLUSH && offset + len > cap;
        let too_big = data && len as usize > self.queue.buf_bytes();
        let (due, result) = if !timed {
            (t, -libc::EOPNOTSUPP)
        } else if beyond || too_big {
            (t, -libc::EIO)
        } else {
            self.serve(tag, d.op, offset, len, t)
        };
        if result < 0 {
            self.sh.stamps.errors.fetch_add(1, Ordering::Relaxed);
        }
        let arrived = if timed { t } else { u64::MAX };
        self.pending
            .push(Due(std::cmp::Reverse(due), tag, result, arrived));
    }

    /// Submit one request to the model and move its data; (due, result).
    fn serve(&mut self, tag: u16, op: u8, offset: u64, len: u64, t: u64) -> (u64, i32) {
        let dev = &self.sh.dev;
        let dop = match op {
            u::IO_OP_READ => Op::Read,
            u::IO_OP_WRITE => Op::Write,
            u::IO_OP_FLUSH => Op::Flush,
            _ => Op::Trim,
        };
        let submitted = match dop {
            Op::Flush => dev.submit(t, Op::Flush, &[]).map(|d| (d, None)),
            _ => dev
                .submit_faulty(
                    (self.modelq.0, &self.modelq.1),
                    t,
                    dop,
                    Extent { offset, len },
                )
                .map(|(d, f)| (d, f.errno)),
        };
        let (due, errno) = match submitted {
            Ok(x) => x,
            Err(_) => return (t, -libc::EIO),
        };
        if let Some(e) = errno {
            return (due, -e.abs());
        }
        if !self.move_data(tag, dop, offset as usize, len as usize) {
            return (due, -libc::EIO);
        }
        let moved = if matches!(dop, Op::Read | Op::Write) {
            len
        } else {
            0
        };
        self.sh.stamps.count(dop, moved);
        // Reads and writes answer the bytes moved; the rest 0.
        (due, moved as i32)
    }

    /// Move a request's data as its command's DMA would.
    fn move_data(&mut self, tag: u16, dop: Op, at: usize, len: usize) -> bool {
        let dev = &self.sh.dev;
        let nocopy = dev.params.nocopy;
        match dop {
            Op::Read => {
                let buf = &mut self.queue.buf(tag)[..len];
                if nocopy {
                    buf.fill(0);
                    return true;
                }
                dev.data.copy(at, buf, Way::Out)
            }
            Op::Write => nocopy || dev.data.copy(at, &mut self.queue.buf(tag)[..len], Way::In),
            Op::Trim if !nocopy => super::fuse_serve::zero(&dev.data, at, len),
            _ => true,
        }
    }
}
