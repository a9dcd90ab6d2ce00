//! What a FUSE request asks of the emulated drive, whatever carried it
//! (`/dev/fuse` reads and writes in [`super::fuse_serve`], io_uring in
//! [`super::fuse_uring_serve`]): the untimed requests answered at once
//! (LOOKUP, GETATTR, OPEN, STATFS, INIT, …) and the timed ones (READ,
//! WRITE, FSYNC, FALLOCATE) submitted to the model at their arrival, their
//! data moved and their reply written into a buffer that waits in the
//! thread's [`DueQueue`] until the modelled completion.
//!
//! A request is handed over laid out as `/dev/fuse` gives it: its
//! `fuse_in_header`, the operation's own header, then its data, in
//! [`Handler::inbuf`].

use super::due::{DueQueue, Pending};
use super::fuse_proto::{self as p, op, InHeader, InitIn, InitOut, Range};
use super::stamps::Stamps;
use crate::data::Way;
use crate::device::{Extent, Op};
use crate::shared::SharedDevice;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The largest READ or WRITE asked for (`max_pages` 256 × 4 KiB).
pub const MAX_IO: usize = 1 << 20;

/// What INIT settled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Negotiated {
    /// The kernel's protocol minor version.
    pub kernel_minor: u32,
    /// Whether the kernel agreed to asynchronous direct I/O.
    pub async_dio: bool,
    pub max_background: u16,
    pub max_write: u32,
    /// Whether the kernel agreed to pass requests through io_uring.
    pub io_uring: bool,
}

/// What the serving threads share.
pub struct Shared {
    pub dev: Arc<SharedDevice>,
    pub stamps: Arc<Stamps>,
    pub negotiated: Mutex<Option<Negotiated>>,
    pub stop: AtomicBool,
    pub max_background: u16,
    pub block_size: u32,
    /// Ask the kernel for FUSE over io_uring at INIT.
    pub uring: bool,
}

/// How one request ended.
pub enum Flow {
    /// Answer now: the reply's header goes in `out[..OUT_HEADER]`, its
    /// body of `body` bytes after it.
    Reply { error: i32, body: usize },
    /// A timed request: queued in [`Handler::due`] for its modelled
    /// completion, its reply written.
    Queued,
    /// No reply (FORGET, INTERRUPT).
    Silent,
    /// DESTROY: answer, then end.
    Stop,
}

/// One serving thread's requests: the model's queue it submits on, the
/// request being handled, and the replies waiting for their completion.
pub struct Handler {
    pub sh: Arc<Shared>,
    queue: (usize, Arc<crate::queues::Counts>),
    /// The request, laid out as read from `/dev/fuse`.
    pub inbuf: Vec<u8>,
    /// An untimed request's reply (header and body).
    pub out: Vec<u8>,
    pub due: DueQueue,
}

impl Drop for Handler {
    fn drop(&mut self) {
        self.sh.dev.queues.detach(self.queue.0);
    }
}

impl Handler {
    pub fn new(sh: Arc<Shared>) -> Handler {
        let queue = sh.dev.queues.attach();
        Handler {
            queue,
            inbuf: vec![0; MAX_IO + 8192],
            out: vec![0; 4096 + p::OUT_HEADER],
            due: DueQueue::default(),
            sh,
        }
    }

    /// Handle the request of `n` bytes in [`Self::inbuf`] (header `h`),
    /// which arrived at `arrived`: a timed one is queued for its modelled
    /// completion with `slot` (where its reply goes back), the rest
    /// answered.
    pub fn take(&mut self, h: InHeader, n: usize, arrived: u64, slot: usize) -> Flow {
        if matches!(h.opcode, op::READ | op::WRITE | op::FSYNC | op::FALLOCATE) {
            self.sh.stamps.arrive(arrived);
            let mut pending = self.io(h, n, arrived);
            pending.slot = slot;
            self.due.push(pending);
            return Flow::Queued;
        }
        self.handle(h, n)
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
        let mut flags = want & k.flags;
        let pages = flags & p::init::MAX_PAGES != 0;
        // FUSE over io_uring: asked for when the attach wants it and the
        // kernel offers it (it offers it only while enable_uring is on).
        let uring_bit = p::OVER_IO_URING_FLAGS2;
        let io_uring = self.sh.uring && k.flags2 & uring_bit != 0;
        if io_uring {
            flags |= p::INIT_EXT;
        }
        let max_write = if pages { MAX_IO as u32 } else { 128 << 10 };
        let mb = self.sh.max_background;
        let out = InitOut {
            max_readahead: k.max_readahead,
            flags,
            max_background: mb,
            congestion_threshold: mb,
            max_write,
            max_pages: if pages { (MAX_IO / 4096) as u16 } else { 0 },
            flags2: if io_uring { uring_bit } else { 0 },
        };
        if let Ok(mut g) = self.sh.negotiated.lock() {
            *g = Some(Negotiated {
                kernel_minor: k.minor,
                async_dio: flags & p::init::ASYNC_DIO != 0,
                max_background: mb,
                max_write,
                io_uring,
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
            slot: 0,
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
        self.sh.stamps.count(dop, bytes);
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
