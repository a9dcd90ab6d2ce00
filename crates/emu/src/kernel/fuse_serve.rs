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
//!   waits: no thread hand-off. With nothing pending a thread sleeps in
//!   `read(2)` on a blocking clone of its own, and replies through the
//!   file each request was read from (the kernel looks a reply up among
//!   the requests read from that file).
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

use super::due::{Early, WakeCost};
pub use super::fuse_handle::{zero, Negotiated, Shared, MAX_IO};
use super::fuse_handle::{Flow, Handler};
use super::fuse_proto::{self as p, InHeader};
use ssdready_io::kdev::{Poller, TIMER_TOKEN};
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::Ordering;
use std::sync::Arc;
/// Spin the last this many ns before a deadline when alone in flight (the
/// ublk server's wait).
pub const SPIN_NS: u64 = 50_000;
/// The most serving threads (one per CPU up to it).
pub const MAX_THREADS: usize = 8;
/// A timed wait's CPU cost is sampled once in this many timed waits (two
/// `clock_gettime` system calls each time).
const WAKE_SAMPLE: u32 = 8;
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
        .and_then(|v| parse_threads(&v))
        .unwrap_or(cpus.div_ceil(2));
    want.clamp(1, MAX_THREADS).min(depth.max(1) as usize)
}

/// [`THREADS_ENV`]'s value as a number of serving threads, if it is a
/// whole number from 1 to [`MAX_THREADS`] (`emu attach` refuses any other
/// value: [`super::check_env`]).
pub fn parse_threads(v: &str) -> Option<usize> {
    let n = v.trim().parse::<usize>().ok()?;
    (1..=MAX_THREADS).contains(&n).then_some(n)
}

/// One serving thread's state.
struct Server {
    fd: File,
    /// A blocking clone of the connection, read when nothing is pending:
    /// an idle thread sleeps in `read(2)` itself, with no `epoll_wait` in
    /// front of it.
    idle_fd: File,
    sh: Arc<Shared>,
    h: Handler,
    poll: Poller,
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
    let setup = ssdready_io::kdev::clone_fuse(&fd).and_then(|idle| {
        ssdready_io::kdev::set_nonblocking(&fd)?;
        let p = Poller::new(4)?;
        p.add(&fd, FUSE_TOKEN, true)?;
        Ok((idle, p))
    });
    let (idle_fd, poll) = match setup {
        Ok(x) => x,
        Err(e) => return format!("setting up the wait on /dev/fuse: {e}"),
    };
    let mut s = Server {
        fd,
        idle_fd,
        h: Handler::new(sh.clone()),
        poll,
        early: Early::default(),
        wake: WakeCost::default(),
        sh,
    };
    s.run()
}

/// A reply's slot: the non-blocking clone it was read from, or the
/// thread's blocking one.
const IDLE: usize = 1;

impl Server {
    fn run(&mut self) -> String {
        // The time the timer is armed for (clock ns), if it is.
        let mut armed: Option<u64> = None;
        let mut waits: u32 = 0;
        loop {
            if let Some(why) = self.answer_due() {
                return why;
            }
            if self.h.due.is_empty() && armed.is_none() {
                if let Some(why) = self.take_one(true) {
                    return why;
                }
                continue;
            }
            let now = self.sh.dev.clock.now();
            let target = self.h.due.next_due().map(|d| self.early.wake_for(d));
            if target != armed {
                let after = target.map(|t| t.saturating_sub(now));
                if let Err(e) = self.poll.arm(after) {
                    return format!("arming the daemon's timer: {e}");
                }
                armed = target;
            }
            let (mut fired, mut input) = (false, false);
            // The thread's CPU time, read around one timed wait in
            // WAKE_SAMPLE (each read is a system call).
            waits = waits.wrapping_add(1);
            let sample = armed.is_some() && waits.is_multiple_of(WAKE_SAMPLE);
            let cpu = if sample {
                ssdready_io::kdev::thread_cpu_ns()
            } else {
                0
            };
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
                if sample && !input {
                    let spent = ssdready_io::kdev::thread_cpu_ns().saturating_sub(cpu);
                    self.wake.learn(spent);
                }
                armed = None;
            }
            if input {
                if let Some(why) = self.take_one(false) {
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
            let next = self.h.due.next_due()?;
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
                // The spin's time, less the requests read during it (work).
                let (spin_from, mut work) = (now, 0);
                while now < self.h.due.next_due().unwrap_or(next) {
                    if self.sh.stop.load(Ordering::Relaxed) {
                        break;
                    }
                    if poll {
                        let seen = self.sh.stamps.arrived.load(Ordering::Relaxed);
                        let why = self.take_one(false);
                        if self.sh.stamps.arrived.load(Ordering::Relaxed) != seen {
                            work += clock.now().saturating_sub(now);
                        }
                        if let Some(why) = why {
                            return Some(why);
                        }
                    } else {
                        std::hint::spin_loop();
                    }
                    now = clock.now();
                }
                self.sh
                    .stamps
                    .spun(now.saturating_sub(spin_from).saturating_sub(work));
            }
            while let Some(mut r) = self.h.due.pop_due(now) {
                let start = clock.now();
                let fd = if r.slot == IDLE {
                    &mut self.idle_fd
                } else {
                    &mut self.fd
                };
                send(fd, &mut r.buf, r.unique, r.error, r.len);
                let end = clock.now();
                self.sh.stamps.served(Some((r.arrived, r.due)), start, end);
                self.h.due.recycle(r.buf);
            }
        }
    }

    /// Read one request (none when another thread took it first; waiting
    /// for one when `idle`) and answer it at once, or queue it for its
    /// modelled completion. Returns why serving must end, if it must.
    fn take_one(&mut self, idle: bool) -> Option<String> {
        let fd = if idle {
            &mut self.idle_fd
        } else {
            &mut self.fd
        };
        let n = match fd.read(&mut self.h.inbuf) {
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
        let Some(h) = InHeader::parse(&self.h.inbuf[..n]) else {
            return Some(format!("a malformed request of {n} bytes from the kernel"));
        };
        let flow = self.h.take(h, n, arrived, if idle { IDLE } else { 0 });
        let fd = if idle {
            &mut self.idle_fd
        } else {
            &mut self.fd
        };
        match flow {
            Flow::Reply { error, body } => {
                send(fd, &mut self.h.out, h.unique, error, p::OUT_HEADER + body);
                None
            }
            Flow::Queued | Flow::Silent => None,
            Flow::Stop => {
                send(fd, &mut self.h.out, h.unique, 0, p::OUT_HEADER);
                Some("the kernel ended the connection (DESTROY)".into())
            }
        }
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
