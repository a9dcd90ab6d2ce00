//! The io_uring ring a FUSE server drives when the kernel passes requests
//! through io_uring instead of `/dev/fuse` reads and writes ("FUSE over
//! io_uring", `CONFIG_FUSE_IO_URING`), behind safe functions.
//!
//! A [`Ring`] has a number of *entries*, each a pair of buffers the kernel
//! reaches into: a header (`struct fuse_uring_req_header`, [`HEADER_BYTES`])
//! and a payload (at least the connection's largest request). An entry is
//! given to the kernel once with a register command (its two buffers as an
//! iovec array in the submission), and after that with one
//! commit-and-fetch command per request: the reply goes back and the next
//! request is asked for in one submission. A request's arrival is the
//! command's completion. The ring has 128-byte submission entries (the
//! command's 80 bytes live in the second half).
//!
//! The command numbers and the layouts inside the buffers are the caller's
//! (written by hand from `include/uapi/linux/fuse.h` in the emulator's
//! `kernel::fuse_uring`); this module moves bytes and owns the memory the
//! kernel reaches into.

use crate::mem::page_size as page;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

/// `sizeof(struct fuse_uring_req_header)`: 128 bytes of in/out header,
/// 128 of the operation's own header, 32 of `struct fuse_uring_ent_in_out`.
pub const HEADER_BYTES: usize = 288;
/// `FUSE_URING_IOV_SEGS`: a register command points at two iovecs.
const IOV_SEGS: u32 = 2;
/// Where `len` sits in `struct io_uring_sqe`.
const SQE_LEN_AT: usize = 24;
/// The user data of the ring's timer and of the commands that move or
/// remove it (entries are numbered from 0).
const TIMER: u64 = 0xF000_0000_0000_0001;
const TIMER_UPDATE: u64 = 0xF000_0000_0000_0002;
const TIMER_REMOVE: u64 = 0xF000_0000_0000_0003;
/// What [`Ring::reap`] reports for the timer having fired.
pub const FIRED: usize = usize::MAX;

// A 128-byte submission entry is two plain 64-byte halves (repr(C)).
const _: () = assert!(std::mem::size_of::<squeue::Entry128>() == 128);

/// An anonymous private mapping of `len` bytes (not reserved up front:
/// a payload's pages exist once something is written there).
/// Unmapped once, in Drop.
fn map(len: usize) -> io::Result<*mut u8> {
    crate::mem::map_anon(len, libc::MAP_NORESERVE)
}

/// One FUSE-over-io_uring ring: its entries' buffers and the commands
/// that hand them to the kernel.
pub struct Ring {
    ring: IoUring<squeue::Entry128, cqueue::Entry>,
    fuse: Arc<File>,
    entries: usize,
    headers: *mut u8,
    headers_len: usize,
    payloads: *mut u8,
    payload_bytes: usize,
    payloads_len: usize,
    /// Each entry's two iovecs (header, payload), read by the kernel when
    /// the entry is registered.
    iovecs: Box<[libc::iovec]>,
    /// Commands submitted or pushed and not yet completed.
    inflight: usize,
    /// The timer's time (CLOCK_MONOTONIC ns), while one is set; its
    /// timespec stays here until the kernel has read it.
    timer: Option<u64>,
    timer_ts: Box<types::Timespec>,
}

// SAFETY: the raw pointers are the ring's own mappings; the ring is used
// by one thread at a time (it is moved to its serving thread).
unsafe impl Send for Ring {}

impl Ring {
    /// A ring with `entries` entries, each with a payload of at least
    /// `payload_bytes`, for the FUSE connection `fuse` (`/dev/fuse` or a
    /// clone of it).
    pub fn new(fuse: Arc<File>, entries: usize, payload_bytes: usize) -> io::Result<Ring> {
        let pg = page();
        let sq = (entries as u32).next_power_of_two().max(2);
        let ring = IoUring::<squeue::Entry128, cqueue::Entry>::builder()
            .setup_cqsize(sq * 2)
            .build(sq)?;
        let headers_len = (entries * HEADER_BYTES).div_ceil(pg) * pg;
        let payload_bytes = payload_bytes.max(pg).div_ceil(pg) * pg;
        let payloads_len = payload_bytes * entries;
        let headers = map(headers_len)?;
        let payloads = match map(payloads_len) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the header mapping made above, unmapped once.
                unsafe { libc::munmap(headers as *mut libc::c_void, headers_len) };
                return Err(e);
            }
        };
        let iovecs = (0..entries)
            .flat_map(|e| {
                [
                    libc::iovec {
                        // SAFETY: within the header mapping (e < entries).
                        iov_base: unsafe { headers.add(e * HEADER_BYTES) } as *mut libc::c_void,
                        iov_len: HEADER_BYTES,
                    },
                    libc::iovec {
                        // SAFETY: within the payload mapping (e < entries).
                        iov_base: unsafe { payloads.add(e * payload_bytes) } as *mut libc::c_void,
                        iov_len: payload_bytes,
                    },
                ]
            })
            .collect();
        Ok(Ring {
            ring,
            fuse,
            entries,
            headers,
            headers_len,
            payloads,
            payload_bytes,
            payloads_len,
            iovecs,
            inflight: 0,
            timer: None,
            timer_ts: Box::new(types::Timespec::new()),
        })
    }

    /// How many entries the ring has.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Each entry's payload size.
    pub fn payload_bytes(&self) -> usize {
        self.payload_bytes
    }

    /// Commands in flight (pushed or submitted, not completed).
    pub fn inflight(&self) -> usize {
        self.inflight
    }

    /// Queue command `cmd_op` with the 80-byte command area `cmd` for
    /// entry `e` (its completion reports `e`); `register` points the
    /// submission at the entry's two buffers, as a register command must.
    pub fn push(&mut self, e: usize, cmd_op: u32, cmd: [u8; 80], register: bool) -> io::Result<()> {
        assert!(
            e < self.entries,
            "entry {e} beyond the ring's {}",
            self.entries
        );
        let mut b = opcode::UringCmd80::new(types::Fd(self.fuse.as_raw_fd()), cmd_op).cmd(cmd);
        if register {
            b = b.addr(Some(self.iovecs[2 * e..].as_ptr() as u64));
        }
        let mut sqe = b.build().user_data(e as u64);
        if register {
            // SAFETY: Entry128 is repr(C), 128 plain bytes (asserted above),
            // the first 64 a `struct io_uring_sqe` whose `len` is a u32 at
            // byte 24; no other invariant is touched.
            let bytes = unsafe { &mut *(&mut sqe as *mut squeue::Entry128 as *mut [u8; 128]) };
            bytes[SQE_LEN_AT..SQE_LEN_AT + 4].copy_from_slice(&IOV_SEGS.to_le_bytes());
        }
        if self.ring.submission().is_full() {
            self.submit_and_wait(0, None)?;
        }
        // SAFETY: the submission points at this entry's iovecs (register)
        // and, through them, at its buffers: all live in mappings and a
        // boxed slice that stay as long as the ring may use them (Drop
        // leaves the mappings in place while commands are in flight).
        unsafe { self.ring.submission().push(&sqe) }
            .map_err(|_| io::Error::other("the FUSE ring is full"))?;
        self.inflight += 1;
        Ok(())
    }

    /// The ring's timer: a completion [`FIRED`] at `mono_ns`
    /// (CLOCK_MONOTONIC, absolute), or none. An absolute timeout kept in
    /// the ring, so that a wait needs no timer of its own: the timer is
    /// moved only when its time changes (a request's arrival does not touch
    /// it). Goes with the next submission.
    pub fn set_timer(&mut self, mono_ns: Option<u64>) -> io::Result<()> {
        if mono_ns == self.timer {
            return Ok(());
        }
        let sqe = match (self.timer, mono_ns) {
            (_, Some(t)) => {
                *self.timer_ts = types::Timespec::new()
                    .sec(t / 1_000_000_000)
                    .nsec((t % 1_000_000_000) as u32);
                let ts: *const types::Timespec = &*self.timer_ts;
                match self.timer {
                    Some(_) => opcode::TimeoutUpdate::new(TIMER, ts)
                        .flags(types::TimeoutFlags::ABS)
                        .build()
                        .user_data(TIMER_UPDATE),
                    None => opcode::Timeout::new(ts)
                        .flags(types::TimeoutFlags::ABS)
                        .build()
                        .user_data(TIMER),
                }
            }
            (Some(_), None) => opcode::TimeoutRemove::new(TIMER)
                .build()
                .user_data(TIMER_REMOVE),
            (None, None) => return Ok(()),
        };
        self.timer = mono_ns;
        if self.ring.submission().is_full() {
            self.submit_and_wait(0, None)?;
        }
        // SAFETY: the only pointer is the timespec, boxed in the ring for
        // its life; the kernel copies it when the command is submitted.
        unsafe { self.ring.submission().push(&squeue::Entry128::from(sqe)) }
            .map_err(|_| io::Error::other("the FUSE ring is full"))
    }

    /// Submit what was pushed; wait for `want` completions, at most
    /// `limit` (None: without a limit when `want` > 0). A wait that ends
    /// by its limit or a signal is not an error.
    pub fn submit_and_wait(&mut self, want: usize, limit: Option<Duration>) -> io::Result<()> {
        crate::ublk::submit_and_wait(&self.ring, want, limit).map(drop)
    }

    /// Move every completion so far into `out` as (entry, result), and
    /// ([`FIRED`], 0) for the timer having fired.
    pub fn reap(&mut self, out: &mut Vec<(usize, i32)>) {
        for c in self.ring.completion() {
            match c.user_data() {
                TIMER if c.result() == -libc::ETIME => {
                    self.timer = None;
                    out.push((FIRED, 0));
                }
                // Moved after it fired: it is gone (its completion comes
                // or came as FIRED).
                TIMER_UPDATE if c.result() < 0 => self.timer = None,
                TIMER | TIMER_UPDATE | TIMER_REMOVE => {}
                e => {
                    out.push((e as usize, c.result()));
                    self.inflight = self.inflight.saturating_sub(1);
                }
            }
        }
    }

    /// Whether a completion waits to be reaped (no system call).
    pub fn ready(&mut self) -> bool {
        !self.ring.completion().is_empty()
    }

    /// Entry `e`'s header and payload. The kernel writes them only while
    /// the entry's command is in flight, between its push and its
    /// completion; the server owns them from the completion to the next
    /// commit.
    pub fn buffers(&mut self, e: usize) -> (&mut [u8], &mut [u8]) {
        assert!(
            e < self.entries,
            "entry {e} beyond the ring's {}",
            self.entries
        );
        // SAFETY: both slices lie within their mappings (e < entries), do
        // not overlap, and `&mut self` makes them unique on this side.
        unsafe {
            (
                std::slice::from_raw_parts_mut(self.headers.add(e * HEADER_BYTES), HEADER_BYTES),
                std::slice::from_raw_parts_mut(
                    self.payloads.add(e * self.payload_bytes),
                    self.payload_bytes,
                ),
            )
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        if self.inflight == 0 {
            // SAFETY: the mappings made in `new`, unmapped once, with no
            // command left that points into them.
            unsafe {
                libc::munmap(self.headers as *mut libc::c_void, self.headers_len);
                libc::munmap(self.payloads as *mut libc::c_void, self.payloads_len);
            }
        }
        // Otherwise they stay mapped: the kernel may still write a request
        // into an entry until closing the ring cancels its commands.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_register_command_carries_its_two_iovecs() {
        let Ok(f) = File::open("/dev/null") else {
            eprintln!("skipped: no /dev/null");
            return;
        };
        let mut r = match Ring::new(Arc::new(f), 3, 10_000) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("skipped: no io_uring here ({e})");
                return;
            }
        };
        assert_eq!(r.payload_bytes() % page(), 0);
        assert!(r.payload_bytes() >= 10_000);
        let (h, p) = r.buffers(2);
        assert_eq!(h.len(), HEADER_BYTES);
        h[0] = 7;
        p[0] = 9;
        assert_eq!(r.iovecs.len(), 6);
        assert_eq!(r.iovecs[5].iov_len, r.payload_bytes());
        assert_eq!(r.iovecs[4].iov_len, HEADER_BYTES);
        // SAFETY: reading back the byte just written through `buffers`.
        assert_eq!(unsafe { *(r.iovecs[4].iov_base as *const u8) }, 7);
        assert_eq!(r.inflight(), 0);
    }
}

#[cfg(test)]
mod wait_tests {
    use super::*;
    use std::time::Instant;

    /// A wait for more completions than will come ends when the ring's
    /// timer fires (moved once), not at its own limit, on a quiet ring.
    #[test]
    fn the_rings_timer_ends_a_wait_for_more_completions_than_come() {
        let Ok(f) = File::open("/dev/null") else {
            eprintln!("skipped: no /dev/null");
            return;
        };
        let mut r = match Ring::new(Arc::new(f), 4, 4096) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("skipped: no io_uring here ({e})");
                return;
            }
        };
        let now = crate::clock::posix_clock_ns(libc::CLOCK_MONOTONIC);
        r.set_timer(Some(now + 5_000_000)).unwrap();
        r.submit_and_wait(0, None).unwrap();
        r.set_timer(Some(now + 2_000_000)).unwrap();
        r.submit_and_wait(0, None).unwrap();
        let t0 = Instant::now();
        r.submit_and_wait(5, Some(Duration::from_secs(2))).unwrap();
        let took = t0.elapsed();
        let mut out = Vec::new();
        r.reap(&mut out);
        assert_eq!(out, vec![(FIRED, 0)]);
        eprintln!(
            "took {took:?}, ended {} µs after now",
            (crate::clock::posix_clock_ns(libc::CLOCK_MONOTONIC) - now) / 1000
        );
        assert!(took < Duration::from_millis(1_000), "{took:?}");
        assert!(took >= Duration::from_micros(1_500), "{took:?}");
    }
}
