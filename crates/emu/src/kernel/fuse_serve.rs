//! The FUSE + loop transport: a FUSE file system with one file, `disk`,
//! whose reads and writes are served by the emulator with its timing, and
//! a loop device with direct I/O over that file — a real block device whose
//! requests go through the system call, blk-mq, the loop driver and FUSE
//! to this daemon.
//!
//! * **Concurrency.** The INIT reply asks for `FUSE_ASYNC_DIO` (without it
//!   the kernel sends a direct-I/O file one request at a time) and sets
//!   `max_background` and `congestion_threshold` to the queue depth the
//!   drive offers, since the kernel holds asynchronous requests beyond it in
//!   its own queue. Each daemon thread reads its own clone of the
//!   connection (`FUSE_DEV_IOC_CLONE`) and serves one request from arrival
//!   to reply, so there is one more thread than requests can be in flight.
//! * **Timing.** A request is submitted to the model when it arrives; its
//!   thread replies at the modelled completion time: asleep (timer slack
//!   1 ns) until 50 µs before it and spinning the rest when it is the only
//!   request in flight, asleep all the way otherwise (spinning threads
//!   would take the CPUs the platform needs). [`super::stamps`] keeps what
//!   each request's timing was.
//! * **Priority.** Each thread runs under `SCHED_FIFO` (priority 1) where
//!   it may: a device's timing does not depend on what else the host's
//!   CPUs run, so the daemon must not wait behind the platform's threads
//!   for a CPU when its request is due (its CPU time is reported apart).
//! * **Requests.** LOOKUP, GETATTR, SETATTR (attributes do not change),
//!   OPEN, READ, WRITE, FSYNC (the model's flush), FALLOCATE (punch-hole and
//!   zero-range: a trim, zeros stored), FLUSH, RELEASE, STATFS, FORGET,
//!   INTERRUPT (ignored: every request completes within its device time),
//!   DESTROY; anything else is answered ENOSYS.
//!
//! FUSE over io_uring (`/sys/module/fuse/parameters/enable_uring`) is not
//! used: requests travel over `/dev/fuse` reads and writes; the attach says
//! whether the kernel would offer it.

use super::fuse_proto::{self as p, op, InHeader, InitIn, InitOut, Range};
use super::stamps::Stamps;
use crate::data::Way;
use crate::device::{Extent, Op};
use crate::shared::SharedDevice;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The largest READ or WRITE asked for (`max_pages` 256 × 4 KiB).
pub const MAX_IO: usize = 1 << 20;
/// Spin the last this many ns before a deadline when alone in flight.
pub const SPIN_NS: u64 = 50_000;
/// The longest single sleep (so a stop is seen within it).
const SLICE: Duration = Duration::from_millis(20);

/// What INIT settled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Negotiated {
    /// The kernel's protocol minor version.
    pub kernel_minor: u32,
    /// Whether the kernel agreed to asynchronous direct I/O.
    pub async_dio: bool,
    pub max_background: u16,
    pub max_write: u32,
}

/// What the serving threads share.
pub struct Shared {
    pub dev: Arc<SharedDevice>,
    pub stamps: Arc<Stamps>,
    pub negotiated: Mutex<Option<Negotiated>>,
    pub stop: AtomicBool,
    pub max_background: u16,
    pub block_size: u32,
}

/// How one request ended.
enum Flow {
    Reply { error: i32, body: usize },
    Silent,
    Stop,
}

/// One serving thread's state.
struct Server {
    fd: File,
    sh: Arc<Shared>,
    queue: (usize, Arc<crate::queues::Counts>),
    inbuf: Vec<u8>,
    out: Vec<u8>,
}

/// Serve requests on `fd` until the connection ends or `sh.stop` is set and
/// a request arrives. Returns why it ended.
pub fn serve(fd: File, sh: Arc<Shared>) -> String {
    let _ = ssdready_io::kdev::set_timer_slack(1);
    if ssdready_io::kdev::set_fifo(1).is_ok() {
        sh.stamps.realtime.fetch_add(1, Ordering::Relaxed);
    }
    if let Ok(mut t) = sh.stamps.tids.lock() {
        t.push(ssdready_io::kdev::thread_id());
    }
    let queue = sh.dev.queues.attach();
    let mut s = Server {
        fd,
        queue,
        inbuf: vec![0; MAX_IO + 8192],
        out: vec![0; MAX_IO + p::OUT_HEADER],
        sh,
    };
    let why = s.run();
    s.sh.dev.queues.detach(s.queue.0);
    why
}

impl Server {
    fn run(&mut self) -> String {
        loop {
            let n = match self.fd.read(&mut self.inbuf) {
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // ENOENT: the request was interrupted before it was read.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => continue,
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                    return "the file system was unmounted".into()
                }
                Err(e) => return format!("reading /dev/fuse: {e}"),
            };
            let arrived = self.sh.dev.clock.now();
            let Some(h) = InHeader::parse(&self.inbuf[..n]) else {
                return format!("a malformed request of {n} bytes from the kernel");
            };
            let timed = matches!(h.opcode, op::READ | op::WRITE | op::FSYNC | op::FALLOCATE);
            if timed {
                self.sh.stamps.arrive(arrived);
            }
            let (flow, due) = self.handle(h, n, arrived);
            if let Some(due) = due {
                wait_until(&self.sh, due);
            }
            let start = self.sh.dev.clock.now();
            match flow {
                Flow::Reply { error, body } => self.reply(h.unique, error, body),
                Flow::Silent => {}
                Flow::Stop => {
                    self.reply(h.unique, 0, 0);
                    return "the kernel ended the connection (DESTROY)".into();
                }
            }
            if timed {
                let end = self.sh.dev.clock.now();
                self.sh.stamps.served(due.map(|d| (arrived, d)), start, end);
            }
        }
    }

    /// Write the reply whose body is `out[OUT_HEADER..OUT_HEADER + body]`.
    fn reply(&mut self, unique: u64, error: i32, body: usize) {
        let body = if error == 0 { body } else { 0 };
        let hdr = p::out_header(unique, error, body);
        self.out[..p::OUT_HEADER].copy_from_slice(&hdr);
        // ENOENT: the request was aborted meanwhile; nothing to do.
        let _ = self.fd.write(&self.out[..p::OUT_HEADER + body]);
    }

    fn put(&mut self, bytes: &[u8]) -> Flow {
        self.out[p::OUT_HEADER..p::OUT_HEADER + bytes.len()].copy_from_slice(bytes);
        Flow::Reply {
            error: 0,
            body: bytes.len(),
        }
    }

    /// Answer one request; the time its reply is due, for timed ones.
    fn handle(&mut self, h: InHeader, n: usize, t: u64) -> (Flow, Option<u64>) {
        let cap = self.sh.dev.capacity();
        let bs = self.sh.block_size;
        let err = |e: i32| Flow::Reply { error: -e, body: 0 };
        let flow = match h.opcode {
            op::INIT => self.init(n),
            op::LOOKUP => {
                let name = p::lookup_name(&self.inbuf[p::IN_HEADER..n]);
                if h.nodeid == p::ROOT_ID && name == p::DISK_NAME.as_bytes() {
                    self.put(&p::entry_out(cap, bs))
                } else {
                    err(libc::ENOENT)
                }
            }
            op::GETATTR | op::SETATTR => match h.nodeid {
                p::ROOT_ID | p::DISK_ID => self.put(&p::attr_out(h.nodeid, cap, bs)),
                _ => err(libc::ENOENT),
            },
            op::OPEN => self.put(&p::open_out(1)),
            op::STATFS => self.put(&p::statfs_out(cap, bs)),
            op::FLUSH | op::RELEASE => Flow::Reply { error: 0, body: 0 },
            op::FORGET | op::BATCH_FORGET | op::INTERRUPT => Flow::Silent,
            op::DESTROY => Flow::Stop,
            op::READ | op::WRITE | op::FSYNC | op::FALLOCATE => return self.io(h.opcode, n, t),
            _ => err(libc::ENOSYS),
        };
        (flow, None)
    }

    fn init(&mut self, n: usize) -> Flow {
        let Some(k) = InitIn::parse(&self.inbuf[p::IN_HEADER..n]) else {
            return Flow::Reply {
                error: -libc::EPROTO,
                body: 0,
            };
        };
        let want = p::init::ASYNC_READ
            | p::init::BIG_WRITES
            | p::init::ASYNC_DIO
            | p::init::PARALLEL_DIROPS
            | p::init::MAX_PAGES;
        let flags = want & k.flags;
        let pages = flags & p::init::MAX_PAGES != 0;
        let max_write = if pages { MAX_IO as u32 } else { 128 << 10 };
        let mb = self.sh.max_background;
        let out = InitOut {
            max_readahead: k.max_readahead,
            flags,
            max_background: mb,
            congestion_threshold: mb,
            max_write,
            max_pages: if pages { (MAX_IO / 4096) as u16 } else { 0 },
        };
        if let Ok(mut g) = self.sh.negotiated.lock() {
            *g = Some(Negotiated {
                kernel_minor: k.minor,
                async_dio: flags & p::init::ASYNC_DIO != 0,
                max_background: mb,
                max_write,
            });
        }
        self.put(&out.bytes())
    }

    /// A timed request: submitted to the model now, its data moved, its
    /// reply due at the modelled completion.
    fn io(&mut self, opcode: u32, n: usize, t: u64) -> (Flow, Option<u64>) {
        let body = &self.inbuf[p::IN_HEADER..n];
        let range = match opcode {
            op::READ | op::WRITE => Range::of_rw(body),
            op::FALLOCATE => Range::of_fallocate(body),
            _ => Some(Range {
                offset: 0,
                size: 0,
                mode: 0,
            }),
        };
        let Some(r) = range else {
            return (self.failed(libc::EPROTO), None);
        };
        let cap = self.sh.dev.capacity();
        let len = r.size.min(cap.saturating_sub(r.offset));
        let (dop, data_len) = match opcode {
            op::READ => (Op::Read, len),
            op::WRITE if len < r.size => return (self.failed(libc::ENOSPC), None),
            op::WRITE => (Op::Write, len),
            op::FSYNC => (Op::Flush, 0),
            _ if r.mode & !(p::FALLOC_KEEP_SIZE | p::FALLOC_PUNCH_HOLE | p::FALLOC_ZERO_RANGE)
                != 0
                || r.mode & (p::FALLOC_PUNCH_HOLE | p::FALLOC_ZERO_RANGE) == 0 =>
            {
                return (self.failed(libc::EOPNOTSUPP), None)
            }
            _ => (Op::Trim, len),
        };
        if len == 0 && dop != Op::Flush {
            // A read at or past the end: nothing, at once.
            self.count(dop, 0);
            return (Flow::Reply { error: 0, body: 0 }, Some(t));
        }
        let submitted = if dop == Op::Flush {
            self.sh.dev.submit(t, Op::Flush, &[]).map(|d| (d, None))
        } else {
            let e = Extent {
                offset: r.offset,
                len,
            };
            self.sh
                .dev
                .submit_faulty((self.queue.0, &self.queue.1), t, dop, e)
                .map(|(d, f)| (d, f.errno))
        };
        let (due, errno) = match submitted {
            Ok(x) => x,
            Err(_) => return (self.failed(libc::EIO), Some(t)),
        };
        if let Some(e) = errno {
            return (self.failed(e.abs()), Some(due));
        }
        let moved = self.move_data(dop, r.offset as usize, data_len as usize);
        if !moved {
            return (self.failed(libc::EIO), Some(due));
        }
        self.count(dop, data_len);
        let body = match dop {
            Op::Read => data_len as usize,
            Op::Write => {
                let w = p::write_out(data_len as u32);
                self.out[p::OUT_HEADER..p::OUT_HEADER + w.len()].copy_from_slice(&w);
                w.len()
            }
            _ => 0,
        };
        (Flow::Reply { error: 0, body }, Some(due))
    }

    fn failed(&self, errno: i32) -> Flow {
        self.sh.stamps.errors.fetch_add(1, Ordering::Relaxed);
        Flow::Reply {
            error: -errno,
            body: 0,
        }
    }

    fn count(&self, dop: Op, bytes: u64) {
        let s = &self.sh.stamps;
        let c = match dop {
            Op::Read => &s.reads,
            Op::Write => &s.writes,
            Op::Flush => &s.flushes,
            Op::Trim => &s.trims,
        };
        c.fetch_add(1, Ordering::Relaxed);
        s.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Move a request's data as its command's DMA would.
    fn move_data(&mut self, dop: Op, at: usize, len: usize) -> bool {
        let data = &self.sh.dev.data;
        let nocopy = self.sh.dev.params.nocopy;
        match dop {
            Op::Read => {
                let buf = &mut self.out[p::OUT_HEADER..p::OUT_HEADER + len];
                if nocopy {
                    buf.fill(0);
                    return true;
                }
                data.copy(at, buf, Way::Out)
            }
            Op::Write => {
                let from = p::IN_HEADER + p::WRITE_IN;
                nocopy || data.copy(at, &mut self.inbuf[from..from + len], Way::In)
            }
            Op::Trim if !nocopy => zero(data, at, len),
            _ => true,
        }
    }
}

/// Store zeros over `len` bytes at `at` (a trimmed range reads back as
/// zeros), a chunk at a time; false when the data store refuses.
pub fn zero(data: &crate::data::Data, at: usize, len: usize) -> bool {
    let mut zeros = vec![0u8; len.min(1 << 20)];
    let mut o = 0;
    while o < len {
        let l = zeros.len().min(len - o);
        if !data.copy(at + o, &mut zeros[..l], Way::In) {
            return false;
        }
        o += l;
    }
    true
}

/// Wait until the clock reads `due`: sleeping (at most [`SLICE`] at a
/// time, so a stop is seen), and spinning the last [`SPIN_NS`] when this
/// is the only request in flight.
pub fn wait_until(sh: &Shared, due: u64) {
    let clock = &sh.dev.clock;
    loop {
        let now = clock.now();
        if now >= due || sh.stop.load(Ordering::Relaxed) {
            return;
        }
        let alone = sh.stamps.inflight.load(Ordering::Relaxed) <= 1;
        let spin = if alone { SPIN_NS } else { 0 };
        let left = due - now;
        if left > spin {
            std::thread::sleep(Duration::from_nanos(left - spin).min(SLICE));
        } else {
            std::hint::spin_loop();
        }
    }
}
