//! The two io_uring rings a ublk server drives, behind safe functions.
//!
//! * [`Control`] sends control commands (`ADD_DEV`, `SET_PARAMS`,
//!   `START_DEV`, …) to `/dev/ublk-control` as `IORING_OP_URING_CMD`s on a
//!   ring of 128-byte entries. A command's buffer is copied into memory the
//!   ring owns for as long as the kernel may read or write it, so a command
//!   that does not answer in time is abandoned without a dangling pointer.
//! * [`Queue`] is one hardware queue's ring on `/dev/ublkcN`: the I/O
//!   descriptors the driver writes (mapped read-only from the character
//!   device at the queue's fixed stride), one data buffer per tag, and the
//!   `FETCH_REQ` / `COMMIT_AND_FETCH_REQ` commands that hand a tag's result
//!   back and ask for its next request in one submission.
//!
//! The command numbers and structure layouts are the caller's (written by
//! hand from `include/uapi/linux/ublk_cmd.h` in the emulator's
//! `kernel::ublk`); this module moves bytes and owns the memory the kernel
//! reaches into.

use crate::mem::page_size as page;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `UBLK_MAX_QUEUE_DEPTH`: queue `q`'s descriptors start at `q` times this
/// many descriptors (rounded up to pages), whatever the queue's depth.
pub const MAX_QUEUE_DEPTH: usize = 4096;
/// `sizeof(struct ublksrv_io_desc)`.
pub const DESC_BYTES: usize = 24;

fn round_up(n: usize, to: usize) -> usize {
    n.div_ceil(to) * to
}

/// The byte offset in `/dev/ublkcN` of queue `q`'s descriptors.
pub fn desc_offset(q: u16, page: usize) -> usize {
    q as usize * round_up(MAX_QUEUE_DEPTH * DESC_BYTES, page)
}

/// The control ring on `/dev/ublk-control`.
pub struct Control {
    file: File,
    ring: IoUring<squeue::Entry128, cqueue::Entry>,
    /// Command buffers abandoned to the kernel (a command that timed out):
    /// kept alive as long as the ring may still complete them.
    abandoned: Vec<Box<[u8]>>,
}

impl Control {
    /// Open `/dev/ublk-control` and a ring to send its commands on.
    pub fn open() -> io::Result<Control> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC)
            .open("/dev/ublk-control")?;
        let ring = IoUring::<squeue::Entry128, cqueue::Entry>::builder().build(4)?;
        Ok(Control {
            file,
            ring,
            abandoned: Vec::new(),
        })
    }

    /// Send control command `cmd_op` with the 32-byte `struct
    /// ublksrv_ctrl_cmd` `header` (whose `addr` and `len` this fills from
    /// `buf`), and wait at most `limit` for the answer. `buf` is read and
    /// written by the kernel as the command defines. The command's result
    /// (≥ 0), or the kernel's error.
    pub fn command(
        &mut self,
        cmd_op: u32,
        header: [u8; 32],
        buf: &mut [u8],
        limit: Duration,
    ) -> io::Result<i32> {
        let mut owned: Box<[u8]> = buf.to_vec().into_boxed_slice();
        let mut cmd = [0u8; 80];
        cmd[..32].copy_from_slice(&header);
        let (addr, len) = match owned.len() {
            0 => (0u64, 0u16),
            n => (owned.as_mut_ptr() as u64, n.min(u16::MAX as usize) as u16),
        };
        cmd[6..8].copy_from_slice(&len.to_le_bytes());
        cmd[8..16].copy_from_slice(&addr.to_le_bytes());
        let sqe = opcode::UringCmd80::new(types::Fd(self.file.as_raw_fd()), cmd_op)
            .cmd(cmd)
            .build()
            .user_data(1);
        // SAFETY: the command's only pointer is `owned`, which lives until
        // its completion is reaped below or, if it is not, is kept in
        // `self.abandoned` for as long as the ring exists.
        unsafe { self.ring.submission().push(&sqe) }
            .map_err(|_| io::Error::other("the control ring is full"))?;
        let t0 = Instant::now();
        loop {
            let left = limit.saturating_sub(t0.elapsed());
            if left.is_zero() {
                self.abandoned.push(owned);
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the kernel did not answer",
                ));
            }
            let ts = types::Timespec::from(left.min(Duration::from_millis(100)));
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::ETIME | libc::EINTR)) => {}
                Err(e) => {
                    self.abandoned.push(owned);
                    return Err(e);
                }
            }
            if let Some(c) = self.ring.completion().next() {
                let res = c.result();
                if res < 0 {
                    return Err(io::Error::from_raw_os_error(-res));
                }
                buf.copy_from_slice(&owned);
                return Ok(res);
            }
        }
    }
}

/// One queue of a ublk device: its ring, descriptors and data buffers.
pub struct Queue {
    ring: IoUring<squeue::Entry128, cqueue::Entry>,
    cdev: Arc<File>,
    q: u16,
    depth: u16,
    descs: *const u8,
    descs_len: usize,
    bufs: *mut u8,
    buf_bytes: usize,
    bufs_len: usize,
    /// Commands submitted and not yet completed.
    inflight: usize,
    /// Entries pushed and not yet submitted.
    pushed: usize,
}

impl Queue {
    /// Map queue `q`'s descriptors (`depth` of them) from `cdev`
    /// (`/dev/ublkcN`), allocate one `buf_bytes` buffer per tag and a ring
    /// with room for every tag's command.
    pub fn new(cdev: Arc<File>, q: u16, depth: u16, buf_bytes: usize) -> io::Result<Queue> {
        let pg = page();
        let entries = (depth as u32).next_power_of_two().max(2);
        let ring = IoUring::<squeue::Entry128, cqueue::Entry>::builder()
            .setup_cqsize(entries * 2)
            .build(entries)?;
        let descs_len = round_up(depth as usize * DESC_BYTES, pg);
        // SAFETY: a fresh read-only shared mapping of the character device
        // at the queue's offset; the kernel checks the range. Unmapped once,
        // in Drop.
        let descs = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                descs_len,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                cdev.as_raw_fd(),
                desc_offset(q, pg) as libc::off_t,
            )
        };
        if descs == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let buf_bytes = round_up(buf_bytes.max(pg), pg);
        let bufs_len = buf_bytes * depth as usize;
        // Unmapped once, in Drop (or left mapped while the kernel may
        // still reach it).
        let bufs = match crate::mem::map_anon(bufs_len, libc::MAP_POPULATE) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the descriptor mapping made above, unmapped once.
                unsafe { libc::munmap(descs, descs_len) };
                return Err(e);
            }
        };
        Ok(Queue {
            ring,
            cdev,
            q,
            depth,
            descs: descs as *const u8,
            descs_len,
            bufs,
            buf_bytes,
            bufs_len,
            inflight: 0,
            pushed: 0,
        })
    }

    /// The queue's depth (tags 0 … depth − 1).
    pub fn depth(&self) -> u16 {
        self.depth
    }

    /// Each tag's buffer size.
    pub fn buf_bytes(&self) -> usize {
        self.buf_bytes
    }

    /// Commands in flight (submitted or pushed, not completed).
    pub fn inflight(&self) -> usize {
        self.inflight
    }

    /// Queue a command for `tag`: `cmd_op` (fetch, or commit-and-fetch
    /// with `result`), the `struct ublksrv_io_cmd` pointing at the tag's
    /// buffer.
    pub fn push(&mut self, cmd_op: u32, tag: u16, result: i32) -> io::Result<()> {
        assert!(tag < self.depth, "tag {tag} beyond the queue's depth");
        let mut cmd = [0u8; 80];
        cmd[0..2].copy_from_slice(&self.q.to_le_bytes());
        cmd[2..4].copy_from_slice(&tag.to_le_bytes());
        cmd[4..8].copy_from_slice(&result.to_le_bytes());
        let addr = self.bufs as u64 + tag as u64 * self.buf_bytes as u64;
        cmd[8..16].copy_from_slice(&addr.to_le_bytes());
        let sqe = opcode::UringCmd80::new(types::Fd(self.cdev.as_raw_fd()), cmd_op)
            .cmd(cmd)
            .build()
            .user_data(tag as u64);
        if self.ring.submission().is_full() {
            self.submit_and_wait(0, None)?;
        }
        // SAFETY: the command points at this tag's buffer, which stays
        // mapped while the ring exists with commands in flight (Drop leaves
        // it mapped if any are).
        unsafe { self.ring.submission().push(&sqe) }
            .map_err(|_| io::Error::other("the queue's ring is full"))?;
        self.inflight += 1;
        self.pushed += 1;
        Ok(())
    }

    /// Submit what was pushed; wait for `want` completions, at most
    /// `limit` (None: without a limit when `want` > 0).
    pub fn submit_and_wait(&mut self, want: usize, limit: Option<Duration>) -> io::Result<()> {
        let n = submit_and_wait(&self.ring, want, limit)?;
        self.pushed = self.pushed.saturating_sub(n);
        Ok(())
    }

    /// Move every completion so far into `out` as (tag, result).
    pub fn reap(&mut self, out: &mut Vec<(u16, i32)>) {
        for c in self.ring.completion() {
            out.push((c.user_data() as u16, c.result()));
            self.inflight = self.inflight.saturating_sub(1);
        }
    }

    /// Tag `tag`'s descriptor, as the driver last wrote it.
    pub fn desc(&self, tag: u16) -> [u8; DESC_BYTES] {
        assert!(tag < self.depth, "tag {tag} beyond the queue's depth");
        let mut d = [0u8; DESC_BYTES];
        for (i, b) in d.iter_mut().enumerate() {
            // SAFETY: within the mapped descriptor array (tag < depth);
            // volatile since the kernel writes it.
            *b = unsafe { std::ptr::read_volatile(self.descs.add(tag as usize * DESC_BYTES + i)) };
        }
        d
    }

    /// Tag `tag`'s data buffer (the request's data is there on a write;
    /// a read's data goes there before its commit).
    pub fn buf(&mut self, tag: u16) -> &mut [u8] {
        assert!(tag < self.depth, "tag {tag} beyond the queue's depth");
        // SAFETY: within the buffer mapping; `&mut self` makes the slice
        // unique on this side; the kernel touches a tag's buffer only
        // between its fetch completing and its commit, when the server owns
        // it.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.bufs.add(tag as usize * self.buf_bytes),
                self.buf_bytes,
            )
        }
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // SAFETY: the descriptor mapping made in `new`, unmapped once.
        unsafe { libc::munmap(self.descs as *mut libc::c_void, self.descs_len) };
        if self.inflight == 0 {
            // SAFETY: the buffer mapping made in `new`, unmapped once, with
            // no command left that points into it.
            unsafe { libc::munmap(self.bufs as *mut libc::c_void, self.bufs_len) };
        }
        // Otherwise the buffers stay mapped: the kernel may still copy into
        // them until it cancels the commands with the ring.
    }
}

/// Submit what was pushed to `ring`; wait for `want` completions, at most
/// `limit` (None: without a limit when `want` > 0). Returns the entries
/// submitted; a wait that ends by its limit or a signal is not an error
/// (0). Shared by the ublk and FUSE rings.
pub(crate) fn submit_and_wait(
    ring: &IoUring<squeue::Entry128, cqueue::Entry>,
    want: usize,
    limit: Option<Duration>,
) -> io::Result<usize> {
    let r = match limit {
        Some(d) if want > 0 => {
            let ts = types::Timespec::from(d);
            let args = types::SubmitArgs::new().timespec(&ts);
            ring.submitter().submit_with_args(want, &args)
        }
        _ => ring.submitter().submit_and_wait(want),
    };
    match r {
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::ETIME | libc::EINTR | libc::EBUSY)
            ) =>
        {
            Ok(0)
        }
        r => r,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_map_at_the_fixed_stride() {
        // 4096 descriptors × 24 bytes = 98304, page-aligned on 4 KiB pages,
        // 131072 on 64 KiB ones: queue q starts at q times that, whatever
        // the queue's depth.
        assert_eq!(desc_offset(0, 4096), 0);
        assert_eq!(desc_offset(1, 4096), 98_304);
        assert_eq!(desc_offset(3, 4096), 3 * 98_304);
        assert_eq!(desc_offset(1, 65_536), 131_072);
    }

    #[test]
    fn the_control_device_is_refused_cleanly_where_missing() {
        if std::path::Path::new("/dev/ublk-control").exists() {
            eprintln!("skipped: /dev/ublk-control exists here");
            return;
        }
        let e = Control::open().err().expect("no control device");
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }
}
