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
//!   its own queue. A few serving threads (one per two CPUs, at most
//!   [`MAX_THREADS`]) each read their own clone of the connection
//!   (`FUSE_DEV_IOC_CLONE`, non-blocking) and keep many requests in flight:
//!   a request is read, submitted to the model at its arrival, its data
//!   moved and its reply written into a buffer that waits in the thread's
//!   [`super::due::DueQueue`] until its modelled completion. One
//!   `epoll_wait` per wake-up sleeps until the next request or the
//!   thread's timer (a `timerfd`, re-armed only when the earliest
//!   completion changes; `EPOLLEXCLUSIVE`: a request wakes one thread), so
//!   a request costs its read, its reply's write and its share of the
//!   waits: no thread hand-off.
//! * **Timing.** Everything due at a wake-up is answered in it, earliest
//!   first. The timer is asked to fire a little before the completion, by
//!   its learnt overshoot ([`super::due::Early`], at most 20 µs, timer
//!   slack 1 ns), and the rest is spun: never early, and late only by what
//!   the overshoot exceeds what was learnt. A completion nearer than what a
//!   timer's wake-up costs the thread ([`super::due::WakeCost`], learnt
//!   from its own CPU time) is spun to, reading requests meanwhile.
//!   [`super::stamps`] keeps what each request's timing was.
//! * **Requests.** LOOKUP, GETATTR, SETATTR (attributes do not change),
//!   OPEN, READ, WRITE, FSYNC (the model's flush), FALLOCATE (punch-hole and
//!   zero-range: a trim, zeros stored), FLUSH, RELEASE, STATFS, FORGET,
//!   INTERRUPT (ignored: every request completes within its device time),
//!   DESTROY; anything else is answered ENOSYS.
//!
//! FUSE over io_uring (`/sys/module/fuse/parameters/enable_uring`) is not
//! used: requests travel over `/dev/fuse` reads and writes; the attach says
//! whether the kernel would offer it.

use super::due::{DueQueue, Early, Pending, WakeCost};
use super::fuse_proto::{self as p, op, InHeader, InitIn, InitOut, Range};
use super::stamps::Stamps;
use crate::data::Way;
use crate::device::{Extent, Op};
use crate::shared::SharedDevice;
use ssdready_io::kdev::{Poller, TIMER_TOKEN};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The largest READ or WRITE asked for (`max_pages` 256 × 4 KiB).
pub const MAX_IO: usize = 1 << 20;
/// Spin the last this many ns before a deadline when alone in flight (the
/// ublk server's wait).
pub const SPIN_NS: u64 = 50_000;
/// The most serving threads (one per CPU up to it).
pub const MAX_THREADS: usize = 8;
/// The connection's token in the thread's poller.
const FUSE_TOKEN: u64 = 1;

/// Overrides the number of serving threads (1..=[`MAX_THREADS`]).
pub const THREADS_ENV: &str = "SSDREADY_EMU_THREADS";

/// How many serving threads a drive of queue depth `depth` gets here: one
/// per two CPUs (or [`THREADS_ENV`]), at most [`MAX_THREADS`] and the
/// depth. One thread keeping more requests batches more completions into
/// a wake-up; on the 2-vCPU development machine one thread cost 25 µs of
/// CPU per I/O at QD 16 and 32 where two cost 31 (bench/kernel-drive.sh).
pub fn thread_count(depth: u16) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let want = std::env::var(THREADS_ENV)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(cpus.div_ceil(2));
    want.clamp(1, MAX_THREADS).min(depth.max(1) as usize)
}

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
    poll: Poller,
    due: DueQueue,
    early: Early,
    wake: WakeCost,
}

/// Serve requests on `fd` until the connection ends. Returns why it ended.
pub fn serve(fd: File, sh: Arc<Shared>) -> String {
    let _ = ssdready_io::kdev::set_timer_slack(1);
    if ssdready_io::kdev::set_fifo(1).is_ok() {
        sh.stamps.realtime.fetch_add(1, Ordering::Relaxed);
    }
    if let Ok(mut t) = sh.stamps.tids.lock() {
        t.push(ssdready_io::kdev::thread_id());
    }
    let poll = ssdready_io::kdev::set_nonblocking(&fd)
        .and_then(|()| Poller::new(4))
        .and_then(|p| p.add(&fd, FUSE_TOKEN, true).map(|()| p));
    let poll = match poll {
        Ok(p) => p,
        Err(e) => return format!("setting up the wait on /dev/fuse: {e}"),
    };
    let queue = sh.dev.queues.attach();
    let mut s = Server {
        fd,
        queue,
        inbuf: vec![0; MAX_IO + 8192],
        out: vec![0; 4096 + p::OUT_HEADER],
        poll,
        due: DueQueue::default(),
        early: Early::default(),
        wake: WakeCost::default(),
        sh,
    };
    let why = s.run();
    s.sh.dev.queues.detach(s.queue.0);
    why
}

impl Server {
    fn run(&mut self) -> String {
        // The time the timer is armed for (clock ns), if it is.
        let mut armed: Option<u64> = None;
        loop {
            if let Some(why) = self.answer_due() {
                return why;
            }
            let now = self.sh.dev.clock.now();
            let target = self.due.next_due().map(|d| self.early.wake_for(d));
            if target != armed {
                let after = target.map(|t| t.saturating_sub(now));
                if let Err(e) = self.poll.arm(after) {
                    return format!("arming the daemon's timer: {e}");
                }
                armed = target;
            }
            let (mut fired, mut input) = (false, false);
            let cpu = ssdready_io::kdev::thread_cpu_ns();
            match self.poll.wait(None) {
                Ok(ready) => {
                    for &(token, _) in ready {
                        fired |= token == TIMER_TOKEN;
                        input |= token == FUSE_TOKEN;
                    }
                }
                Err(e) => return format!("waiting on /dev/fuse: {e}"),
            }
            if let (true, Some(t)) = (fired, armed) {
                self.early.learn(self.sh.dev.clock.now().saturating_sub(t));
                if !input {
                    let spent = ssdready_io::kdev::thread_cpu_ns().saturating_sub(cpu);
                    self.wake.learn(spent);
                }
                armed = None;
            }
            if input {
                if let Some(why) = self.take_one() {
                    return why;
                }
            }
        }
    }

    /// Reply to every pending request whose modelled completion has come,
    /// spinning for one due within the timer's learnt overshoot or nearer
    /// than a timer's wake-up costs (reading requests meanwhile). Returns
    /// why serving must end, if a request read meanwhile says so.
    fn answer_due(&mut self) -> Option<String> {
        let clock = self.sh.dev.clock;
        loop {
            let mut now = clock.now();
            let next = self.due.next_due()?;
            let stop = self.sh.stop.load(Ordering::Relaxed);
            if stop {
                now = u64::MAX;
            } else if next > now {
                let near = self.early.ns().max(self.wake.spin_below());
                if next - now > near {
                    return None;
                }
                // Spin; requests arriving meanwhile are read as they come
                // (the one read may be due sooner: checked each turn).
                let poll = next - now > self.early.ns();
                while now < self.due.next_due().unwrap_or(next) {
                    if self.sh.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if poll {
                        if let Some(why) = self.take_one() {
                            return Some(why);
                        }
                    } else {
                        std::hint::spin_loop();
                    }
                    now = clock.now();
                }
            }
            while let Some(mut r) = self.due.pop_due(now) {
                let start = clock.now();
                send(&mut self.fd, &mut r.buf, r.unique, r.error, r.len);
                let end = clock.now();
                self.sh.stamps.served(Some((r.arrived, r.due)), start, end);
                self.due.recycle(r.buf);
            }
        }
    }

    /// Read one request (none when another thread took it first) and
    /// answer it at once, or queue it for its modelled completion. Returns
    /// why serving must end, if it must.
    fn take_one(&mut self) -> Option<String> {
        let n = match self.fd.read(&mut self.inbuf) {
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::WouldBlock => return None,
            Err(e) if e.kind() == ErrorKind::Interrupted => return None,
            // ENOENT: the request was interrupted before it was read.
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return None,
            Err(e) if e.raw_os_error() == Some(libc::ENODEV) => {
                return Some("the file system was unmounted".into())
            }
            Err(e) => return Some(format!("reading /dev/fuse: {e}")),
        };
        let arrived = self.sh.dev.clock.now();
        let Some(h) = InHeader::parse(&self.inbuf[..n]) else {
            return Some(format!("a malformed request of {n} bytes from the kernel"));
        };
        if matches!(h.opcode, op::READ | op::WRITE | op::FSYNC | op::FALLOCATE) {
            self.sh.stamps.arrive(arrived);
            let pending = self.io(h, n, arrived);
            self.due.push(pending);
            return None;
        }
        match self.handle(h, n) {
            Flow::Reply { error, body } => {
                send(
                    &mut self.fd,
                    &mut self.out,
                    h.unique,
                    error,
                    p::OUT_HEADER + body,
                );
                None
            }
            Flow::Silent => None,
            Flow::Stop => {
                send(&mut self.fd, &mut self.out, h.unique, 0, p::OUT_HEADER);
                Some("the kernel ended the connection (DESTROY)".into())
            }
        }
    }

    fn put(&mut self, bytes: &[u8]) -> Flow {
        self.out[p::OUT_HEADER..p::OUT_HEADER + bytes.len()].copy_from_slice(bytes);
        Flow::Reply {
            error: 0,
            body: bytes.len(),
        }
    }

    /// Answer one untimed request.
    fn handle(&mut self, h: InHeader, n: usize) -> Flow {
        let cap = self.sh.dev.capacity();
        let bs = self.sh.block_size;
        let err = |e: i32| Flow::Reply { error: -e, body: 0 };
        match h.opcode {
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
            _ => err(libc::ENOSYS),
        }
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
    /// reply written, due at the modelled completion.
    fn io(&mut self, h: InHeader, n: usize, t: u64) -> Pending {
        let (error, body, due, moved) = self.submit(h.opcode, n, t);
        let body = if error == 0 { body } else { 0 };
        let mut buf = self.due.buffer(p::OUT_HEADER + body);
        if error == 0 && body > 0 {
            if h.opcode == op::READ {
                let (r, cap) = (
                    Range::of_rw(&self.inbuf[p::IN_HEADER..n]),
                    self.sh.dev.capacity(),
                );
                let at = r.map_or(0, |r| r.offset.min(cap)) as usize;
                if !self.read_into(at, &mut buf[p::OUT_HEADER..]) {
                    return self.pending(h, t, due, self.failed(libc::EIO), buf);
                }
            } else {
                let w = p::write_out(moved as u32);
                buf[p::OUT_HEADER..].copy_from_slice(&w[..body]);
            }
        }
        self.pending(h, t, due, error, buf)
    }

    fn pending(&self, h: InHeader, t: u64, due: u64, error: i32, buf: Vec<u8>) -> Pending {
        let len = if error == 0 { buf.len() } else { p::OUT_HEADER };
        Pending {
            due: due.max(t),
            arrived: t,
            unique: h.unique,
            error,
            len,
            buf,
        }
    }

    /// Submit a timed request to the model at `t` and move a write's or a
    /// trim's data: (error, reply body length, modelled completion, bytes
    /// moved). A read's body length is its data's; a write's is its
    /// `write_out`.
    fn submit(&mut self, opcode: u32, n: usize, t: u64) -> (i32, usize, u64, u64) {
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
            return (self.failed(libc::EPROTO), 0, t, 0);
        };
        let cap = self.sh.dev.capacity();
        let len = r.size.min(cap.saturating_sub(r.offset));
        let (dop, data_len) = match opcode {
            op::READ => (Op::Read, len),
            op::WRITE if len < r.size => return (self.failed(libc::ENOSPC), 0, t, 0),
            op::WRITE => (Op::Write, len),
            op::FSYNC => (Op::Flush, 0),
            _ if r.mode & !(p::FALLOC_KEEP_SIZE | p::FALLOC_PUNCH_HOLE | p::FALLOC_ZERO_RANGE)
                != 0
                || r.mode & (p::FALLOC_PUNCH_HOLE | p::FALLOC_ZERO_RANGE) == 0 =>
            {
                return (self.failed(libc::EOPNOTSUPP), 0, t, 0)
            }
            _ => (Op::Trim, len),
        };
        if len == 0 && dop != Op::Flush {
            // A read at or past the end: nothing, at once.
            self.count(dop, 0);
            return (0, 0, t, 0);
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
            Err(_) => return (self.failed(libc::EIO), 0, t, 0),
        };
        if let Some(e) = errno {
            return (self.failed(e.abs()), 0, due, 0);
        }
        if !self.move_in(dop, r.offset as usize, data_len as usize) {
            return (self.failed(libc::EIO), 0, due, 0);
        }
        self.count(dop, data_len);
        let body = match dop {
            Op::Read => data_len as usize,
            Op::Write => p::write_out(data_len as u32).len(),
            _ => 0,
        };
        (0, body, due, data_len)
    }

    /// The reply's error field for `errno`, counted as an error.
    fn failed(&self, errno: i32) -> i32 {
        self.sh.stamps.errors.fetch_add(1, Ordering::Relaxed);
        -errno
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

    /// Move a write's or a trim's data into the store, as the command's
    /// DMA would; false when the store refuses.
    fn move_in(&mut self, dop: Op, at: usize, len: usize) -> bool {
        let data = &self.sh.dev.data;
        let nocopy = self.sh.dev.params.nocopy;
        match dop {
            Op::Write => {
                let from = p::IN_HEADER + p::WRITE_IN;
                nocopy || data.copy(at, &mut self.inbuf[from..from + len], Way::In)
            }
            Op::Trim if !nocopy => zero(data, at, len),
            _ => true,
        }
    }

    /// A read's data, out of the store into its reply.
    fn read_into(&self, at: usize, buf: &mut [u8]) -> bool {
        if self.sh.dev.params.nocopy {
            buf.fill(0);
            return true;
        }
        self.sh.dev.data.copy(at, buf, Way::Out)
    }
}

/// Write the reply whose header goes in `buf[..OUT_HEADER]` and whose
/// body follows it; `len` bytes in all (the header alone on an error).
fn send(fd: &mut File, buf: &mut [u8], unique: u64, error: i32, len: usize) {
    let body = if error == 0 {
        len.saturating_sub(p::OUT_HEADER)
    } else {
        0
    };
    buf[..p::OUT_HEADER].copy_from_slice(&p::out_header(unique, error, body));
    // ENOENT: the request was aborted meanwhile; nothing to do.
    let _ = fd.write(&buf[..p::OUT_HEADER + body]);
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
