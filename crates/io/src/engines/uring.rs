//! The io_uring engine.
//!
//! * `queue` writes a submission-queue entry (read/write, fixed-buffer
//!   variants with `fixedbufs`, fixed-file indices with `registerfiles`,
//!   `fallocate(PUNCH_HOLE)` for trims on files; on a block device a trim
//!   is a `BLKDISCARD` done at once after the queued batch, as fio's
//!   `do_io_u_trim`); `commit` is one
//!   `io_uring_enter` for the whole batch, carrying `GETEVENTS` as fio's
//!   does (completions are then posted in the same call); `getevents` takes at most
//!   `iodepth_batch_complete_max` completions from the completion queue (as
//!   fio resolves it: one by default, or `min` where that is more) and
//!   enters the kernel to wait only when fewer than `min` are there. fio's
//!   engine takes as many (`fio_ioring_cqring_reap`); taking the whole
//!   queue let the worker batch its next submissions into fewer
//!   `io_uring_enter` calls than fio makes.
//! * Completions arrive by interrupt (the default), or by polling the device
//!   (`hipri`, or `completion=poll` where possible → `IORING_SETUP_IOPOLL`;
//!   needs a device with poll queues, checked up front). When the worker
//!   spins on the completion queue in user space (`completion=spin`,
//!   `hybrid`, or `poll` without poll queues) the ring has no
//!   `DEFER_TASKRUN`, so completions are posted without a system call. `sqthread_poll` adds a kernel thread that polls the submission
//!   queue (`IORING_SETUP_SQPOLL`), so submission needs no syscall.
//! * The ring is created `SINGLE_ISSUER` + `DEFER_TASKRUN` where the kernel
//!   has them (6.1+; falls back to plain flags on older kernels: these are
//!   optimisations, not semantics). With deferred task work, completion
//!   processing runs only when the worker waits in `getevents`, never by
//!   interrupting it mid-submission. Measured here side by side against
//!   `COOP_TASKRUN` on a loop device over /dev/shm (4 KiB random reads, 3
//!   alternating rounds): +3.5 % IOPS and −6 % CPU per I/O at QD 1, +6 % IOPS
//!   and −8 % CPU per I/O at QD 32.

use crate::buf::AlignedBuf;
use crate::engine::{open_files, Engine, EngineError, EngineSetup, Queued};
use crate::engines::psync::trim;
use crate::target::{sysfs::DevNode, Target, TargetKind};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use ssdready_core::spec::JobSpec;
use ssdready_core::strategy::CompletionWait;
use ssdready_core::{Completion, Ddir, IoReq};
use std::fs::File;
use std::os::unix::io::AsRawFd;

/// See the module docs. Field order matters: the ring is dropped (and the
/// kernel's references to the buffers released) before the buffers.
pub struct UringEngine {
    ring: IoUring,
    bufs: Vec<AlignedBuf>,
    fds: Vec<i32>,
    _files: Vec<File>,
    fixed_files: bool,
    fixed_bufs: bool,
    iopoll: bool,
    sqpoll: bool,
    queued: usize,
    /// Per slot: the length of a pending trim (fallocate completes with 0,
    /// not a byte count), 0 for reads and writes.
    trim_len: Vec<u32>,
    /// Per target, whether it is a block device: a trim there is a
    /// `BLKDISCARD` done at once, after the queued batch, as fio's
    /// `do_io_u_trim`.
    block: Vec<bool>,
    /// Per slot, the priority of its next request (`sqe->ioprio`, fio's
    /// cmdprio; empty when no request has one of its own).
    prios: Vec<u16>,
    /// `RWF_*` flags of every read (`nowait`) and write (`nowait`, `atomic`).
    read_flags: i32,
    write_flags: i32,
    /// `force_async=N`: IOSQE_ASYNC on every Nth request (0: never), and
    /// the requests since the last one that had it (fio's `prepped`).
    force_async: u32,
    since_async: u32,
    /// The most completions one `getevents` takes unless it needs more
    /// ([`JobSpec::reap_call_max`]).
    reap_max: usize,
}

/// Why the targets cannot do polled I/O (the first that cannot, and the
/// sysfs file that says no), or None when all can.
pub fn iopoll_blocker(targets: &[Target]) -> Option<String> {
    for t in targets {
        let Some(dev) = t.device.as_deref() else {
            return Some(format!(
                "{} is not on a block device, so it has no poll queues",
                t.path.display()
            ));
        };
        let v = DevNode::from_disk_name(dev).and_then(|d| d.disk_attr("queue/io_poll"));
        if v.as_deref() != Some("1") {
            return Some(format!(
                "/sys/block/{dev}/queue/io_poll is {}: the device has no poll queues",
                v.unwrap_or_else(|| "missing".into())
            ));
        }
    }
    None
}

/// Check that every target can do polled I/O (`hipri`); the error names
/// the sysfs file that says no, and what to do.
pub fn check_iopoll(targets: &[Target]) -> Result<(), EngineError> {
    match iopoll_blocker(targets) {
        None => Ok(()),
        Some(why) => Err(EngineError::Unsupported(format!(
            "hipri (IOPOLL) is not possible here: {why} (drop hipri; completion=poll falls \
             back to spinning in user space; or use an NVMe device with poll_queues > 0). \
             fio would run it: the kernel then completes each I/O by interrupt while \
             io_uring_enter spins, which measures neither"
        ))),
    }
}

/// Whether a job's rings poll the device (IOPOLL): `hipri`, or
/// `completion=poll` with direct I/O on targets that all have poll queues
/// (otherwise `completion=poll` spins in user space; see
/// `ssdready_core::strategy`).
pub fn wants_iopoll(s: &JobSpec, targets: &[Target]) -> bool {
    s.hipri
        || (s.completion == Some(CompletionWait::Poll)
            && s.direct
            && iopoll_blocker(targets).is_none())
}

/// Whether the worker waits for completions in user space (spinning, or
/// hybrid sleeping then spinning) rather than in `io_uring_enter`.
pub(crate) fn waits_in_user_space(s: &JobSpec, iopoll: bool) -> bool {
    match s.completion {
        Some(CompletionWait::Spin | CompletionWait::Hybrid) => true,
        Some(CompletionWait::Poll) => !iopoll,
        _ => false,
    }
}

/// Build a ring. `user_wait`: the worker spins on the completion queue in
/// user space, so completions must be posted without its entering the
/// kernel: no `DEFER_TASKRUN` (whose task work runs only inside
/// `io_uring_enter`); the kernel then runs it when it interrupts the task.
pub(crate) fn build_ring<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    s: &JobSpec,
    entries: u32,
    iopoll: bool,
    user_wait: bool,
) -> std::io::Result<IoUring<S, C>> {
    let make = |optimised: bool| {
        let mut b = IoUring::<S, C>::builder();
        if iopoll {
            b.setup_iopoll();
        }
        if s.sqthread_poll {
            b.setup_sqpoll(1000);
            if let Some(cpu) = s.sqthread_poll_cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        } else if optimised {
            b.setup_single_issuer();
            if !user_wait {
                b.setup_defer_taskrun();
            }
        }
        b.setup_cqsize(entries * 2);
        b.build(entries)
    };
    make(true).or_else(|_| make(false))
}

/// `IORING_ENTER_GETEVENTS` (`include/uapi/linux/io_uring.h`): the enter
/// also runs the ring's pending completion work.
const ENTER_GETEVENTS: u32 = 1;

/// One `io_uring_enter` for the entries queued on `ring`, as fio's commit:
/// unless a kernel thread polls the submission queue (`sqpoll`), it
/// carries `GETEVENTS` with no minimum, so the ring's completion work
/// runs in the same call and the next reap finds what has completed
/// without entering again (with deferred task work, nothing else runs it).
///
/// # Safety
///
/// Every entry queued on `ring` must point at buffers and files that stay
/// alive, and untouched by the caller, until its completion is reaped.
pub(crate) unsafe fn submit_queued<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &mut IoUring<S, C>,
    sqpoll: bool,
) -> Result<usize, EngineError> {
    let n = match sqpoll {
        true => ring.submit(),
        false => {
            let len = ring.submission().len() as u32;
            // SAFETY: the queued entries are valid by this function's
            // contract; no argument is passed.
            unsafe {
                ring.submitter()
                    .enter::<libc::sigset_t>(len, 0, ENTER_GETEVENTS, None)
            }
        }
    };
    n.map_err(|e| EngineError::Sys {
        what: "io_uring_enter (submit)".into(),
        source: e,
    })
}

/// The entries of an ordinary ring (64-byte submissions, 16-byte completions).
type PlainSqe = squeue::Entry;
type PlainCqe = cqueue::Entry;

/// The most entries a ring may have on any kernel (`IORING_MAX_ENTRIES`):
/// the same limit the option check applies.
const MAX_ENTRIES: u32 = ssdready_core::spec::MAX_URING_DEPTH;
/// The most buffers `fixedbufs` may register (`IORING_MAX_REG_BUFFERS`).
const MAX_FIXED_BUFFERS: u32 = 1 << 14;

/// The ring size for `depth` I/Os in flight: the next power of two.
pub(crate) fn ring_entries(depth: u32) -> Result<u32, EngineError> {
    match depth.checked_next_power_of_two() {
        Some(n) if n <= MAX_ENTRIES => Ok(n),
        _ => Err(EngineError::Unsupported(format!(
            "option 'iodepth': {depth} is more than an io_uring can hold \
             (the kernel allows at most {MAX_ENTRIES} entries; use iodepth={MAX_ENTRIES} or less)"
        ))),
    }
}

/// Create and drop a ring as each worker of `spec` will, so that a depth or
/// a setup flag this kernel refuses is found before the first I/O of the
/// run. The message says what to change.
pub fn check_ring(spec: &JobSpec) -> Result<(), EngineError> {
    let depth = spec.depth().get();
    let entries = ring_entries(depth)?;
    if spec.fixedbufs && depth > MAX_FIXED_BUFFERS {
        return Err(EngineError::Unsupported(format!(
            "option 'iodepth': {depth} buffers cannot be registered (fixedbufs): the kernel \
             allows at most {MAX_FIXED_BUFFERS} (lower iodepth, or drop fixedbufs)"
        )));
    }
    let user_wait = waits_in_user_space(spec, spec.hipri);
    let e = match build_ring::<PlainSqe, PlainCqe>(spec, entries, spec.hipri, user_wait) {
        Ok(_) => return Ok(()),
        Err(e) => e,
    };
    let largest = (0..entries.trailing_zeros())
        .rev()
        .map(|k| 1u32 << k)
        .find(|&n| build_ring::<PlainSqe, PlainCqe>(spec, n, spec.hipri, user_wait).is_ok());
    Err(EngineError::Unsupported(match largest {
        Some(n) => format!(
            "option 'iodepth': this kernel refuses an io_uring of {entries} entries for \
             iodepth={depth} ({e}); the largest it accepts with these settings is {n} \
             (use iodepth={n} or less)"
        ),
        None => format!(
            "this kernel refuses to create an io_uring ({e}); io_uring may be disabled \
             (sysctl kernel.io_uring_disabled) or limited (ulimit -l): use ioengine=psync or libaio"
        ),
    }))
}

/// The descriptors of `files`, registered with `ring` when the job asks
/// (`registerfiles`).
pub(crate) fn register_files<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    spec: &JobSpec,
    ring: &IoUring<S, C>,
    files: &[File],
) -> Result<Vec<i32>, EngineError> {
    let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
    if spec.registerfiles {
        ring.submitter()
            .register_files(&fds)
            .map_err(|e| EngineError::Sys {
                what: "registering files (registerfiles)".into(),
                source: e,
            })?;
    }
    Ok(fds)
}

/// One buffer per slot, of the job's largest block, slot `i`'s filled from
/// the seed plus `i`.
pub(crate) fn slot_buffers(
    setup: &EngineSetup<'_>,
    depth: u32,
) -> Result<Vec<AlignedBuf>, EngineError> {
    let spec = setup.spec;
    (0..depth)
        .map(|i| {
            let mut b = AlignedBuf::for_job(spec.bs.max() as usize, &spec.run.mem, i as usize)?;
            b.fill_random(setup.seed.wrapping_add(u64::from(i)));
            Ok(b)
        })
        .collect()
}

/// Register `bufs` with `ring`'s kernel (`fixedbufs`).
///
/// # Safety
///
/// The kernel reads and writes the buffers until the ring is dropped: the
/// caller keeps them, unmoved (they are heap allocations: moving the
/// vector does not move them) and not freed, until after the ring is
/// dropped.
pub(crate) unsafe fn register_buffers<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &IoUring<S, C>,
    bufs: &mut [AlignedBuf],
) -> Result<(), EngineError> {
    let iov: Vec<libc::iovec> = bufs
        .iter_mut()
        .map(|b| libc::iovec {
            iov_base: b.as_mut_ptr().cast(),
            iov_len: b.len(),
        })
        .collect();
    // SAFETY: every iovec points into one of `bufs`, which the caller
    // keeps alive and in place for as long as the ring (this function's
    // contract).
    unsafe { ring.submitter().register_buffers(&iov) }.map_err(|e| EngineError::Sys {
        what: "registering buffers (fixedbufs); raise the memlock limit (ulimit -l)".into(),
        source: e,
    })
}

impl UringEngine {
    /// Create the ring, open and (optionally) register files and buffers.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        if spec.hipri {
            check_iopoll(setup.targets)?;
        }
        let depth = spec.depth().get();
        let entries = ring_entries(depth)?;
        let iopoll = wants_iopoll(spec, setup.targets);
        let user_wait = waits_in_user_space(spec, iopoll);
        let ring = build_ring(spec, entries, iopoll, user_wait).map_err(|e| EngineError::Sys {
            what: format!("creating an io_uring with {entries} entries"),
            source: e,
        })?;
        let files = open_files(setup)?;
        let fds = register_files(spec, &ring, &files)?;
        let mut bufs = slot_buffers(setup, depth)?;
        if spec.fixedbufs {
            // SAFETY: the buffers are this engine's, kept in it after the
            // ring (declared first, so dropped first).
            unsafe { register_buffers(&ring, &mut bufs)? };
        }
        Ok(UringEngine {
            ring,
            bufs,
            fds,
            _files: files,
            fixed_files: spec.registerfiles,
            fixed_bufs: spec.fixedbufs,
            iopoll,
            sqpoll: spec.sqthread_poll,
            queued: 0,
            trim_len: vec![0; depth as usize],
            block: setup
                .targets
                .iter()
                .map(|t| t.kind == TargetKind::Block)
                .collect(),
            prios: Vec::new(),
            read_flags: if spec.access.nowait {
                libc::RWF_NOWAIT
            } else {
                0
            },
            write_flags: if spec.access.nowait {
                libc::RWF_NOWAIT
            } else {
                0
            } | if spec.access.atomic {
                libc::RWF_ATOMIC
            } else {
                0
            },
            force_async: spec.access.force_async,
            since_async: 0,
            reap_max: spec.reap_call_max() as usize,
        })
    }

    fn sqe(&mut self, req: IoReq) -> squeue::Entry {
        let slot = req.slot as usize;
        let buf = self.bufs[slot].as_mut_ptr();
        let len = req.len;
        let prio = self.prios.get(slot).copied().unwrap_or(0);
        macro_rules! with_fd {
            ($mk:expr) => {
                if self.fixed_files {
                    $mk(types::Fixed(req.file))
                } else {
                    $mk(types::Fd(self.fds[req.file as usize]))
                }
            };
        }
        let e = match (req.ddir, self.fixed_bufs) {
            (Ddir::Read, false) => {
                with_fd!(|fd| opcode::Read::new(fd, buf, len)
                    .offset(req.offset)
                    .ioprio(prio)
                    .rw_flags(self.read_flags)
                    .build())
            }
            (Ddir::Read, true) => {
                with_fd!(|fd| opcode::ReadFixed::new(fd, buf, len, slot as u16)
                    .offset(req.offset)
                    .ioprio(prio)
                    .rw_flags(self.read_flags)
                    .build())
            }
            (Ddir::Write, false) => {
                with_fd!(|fd| opcode::Write::new(fd, buf.cast_const(), len)
                    .offset(req.offset)
                    .ioprio(prio)
                    .rw_flags(self.write_flags)
                    .build())
            }
            (Ddir::Write, true) => {
                with_fd!(
                    |fd| opcode::WriteFixed::new(fd, buf.cast_const(), len, slot as u16)
                        .offset(req.offset)
                        .ioprio(prio)
                        .rw_flags(self.write_flags)
                        .build()
                )
            }
            (Ddir::Trim, _) => with_fd!(|fd| opcode::Fallocate::new(fd, len as u64)
                .offset(req.offset)
                .mode(libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE)
                .build()),
        };
        let e = e.user_data(req.slot as u64);
        if self.force_async > 0 {
            // fio's force_async: every Nth request goes to io_uring's
            // worker threads at once rather than being tried inline.
            self.since_async += 1;
            if self.since_async == self.force_async {
                self.since_async = 0;
                return e.flags(squeue::Flags::ASYNC);
            }
        }
        e
    }

    /// Put an entry in the submission queue (submitting what is there when
    /// it is full).
    fn push(&mut self, e: squeue::Entry) -> Result<Queued, EngineError> {
        loop {
            // SAFETY: a buffer the entry points at is self.bufs[slot], which
            // stays alive and untouched by us until its completion is reaped
            // (the worker does not reuse a slot before that); its fd is ours.
            if unsafe { self.ring.submission().push(&e) }.is_ok() {
                break;
            }
            self.commit()?;
        }
        self.queued += 1;
        Ok(Queued::Pending)
    }

    /// Take at most `limit` completions from the completion queue; the
    /// rest stay there for the next call.
    fn drain(&mut self, out: &mut Vec<Completion>, limit: usize) -> usize {
        let before = out.len();
        for c in self.ring.completion().take(limit) {
            let slot = c.user_data() as u32;
            let mut result = c.result() as i64;
            let trim = std::mem::take(&mut self.trim_len[slot as usize]);
            if trim > 0 && result == 0 {
                result = trim as i64;
            }
            out.push(Completion { slot, result });
        }
        out.len() - before
    }
}

impl Engine for UringEngine {
    fn name(&self) -> &'static str {
        "io_uring"
    }

    fn set_prio(&mut self, slot: u32, prio: u16) -> Result<(), EngineError> {
        if self.prios.is_empty() {
            self.prios = vec![0; self.bufs.len()];
        }
        self.prios[slot as usize] = prio;
        Ok(())
    }

    #[inline]
    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        debug_assert!(
            (req.slot as usize) < self.bufs.len(),
            "slot {} of {} slots (see Engine's slot contract)",
            req.slot,
            self.bufs.len()
        );
        if req.ddir == Ddir::Trim {
            let f = req.file as usize;
            if self.block[f] {
                self.commit()?;
                let kind = TargetKind::Block;
                return Ok(Queued::Done(trim(
                    &self._files[f],
                    kind,
                    req.offset,
                    req.len,
                )));
            }
            self.trim_len[req.slot as usize] = req.len;
        }
        let e = self.sqe(req);
        self.push(e)
    }

    // SAFETY: the entry points at self.bufs[slot], which stays alive
    // and untouched by us until its completion is reaped (the worker
    // does not reuse a slot before that), and at an fd we own.

    #[inline]
    fn commit(&mut self) -> Result<usize, EngineError> {
        if self.queued == 0 {
            return Ok(0);
        }
        // SAFETY: each queued entry points at a slot's buffer and an fd this
        // engine keeps, untouched, until its completion is reaped (`queue`).
        let n = unsafe { submit_queued(&mut self.ring, self.sqpoll)? };
        self.queued = 0;
        Ok(n)
    }

    #[inline]
    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let limit = self.reap_max.max(min);
        let mut got = self.drain(out, limit);
        while got < min || (self.iopoll && got == 0 && min > 0) {
            match self.ring.submit_and_wait(min - got) {
                Ok(_) => {}
                Err(e)
                    if e.raw_os_error() == Some(libc::EINTR)
                        || e.raw_os_error() == Some(libc::EAGAIN) => {}
                Err(e) => {
                    return Err(EngineError::Sys {
                        what: "io_uring_enter (wait)".into(),
                        source: e,
                    });
                }
            }
            got += self.drain(out, limit - got);
        }
        Ok(())
    }

    /// `IORING_OP_FSYNC` (with `IORING_FSYNC_DATASYNC` for fdatasync),
    /// reported by `getevents` like any I/O, as fio's io_uring engine does.
    fn sync(&mut self, slot: u32, file: u32, data_only: bool) -> Result<Queued, EngineError> {
        let flags = if data_only {
            types::FsyncFlags::DATASYNC
        } else {
            types::FsyncFlags::empty()
        };
        let e = if self.fixed_files {
            opcode::Fsync::new(types::Fixed(file)).flags(flags).build()
        } else {
            opcode::Fsync::new(types::Fd(self.fds[file as usize]))
                .flags(flags)
                .build()
        };
        self.push(e.user_data(u64::from(slot)))
    }

    fn sync_range(
        &mut self,
        slot: u32,
        file: u32,
        range: (u64, u64),
        flags: u32,
    ) -> Result<Queued, EngineError> {
        let (offset, len) = range;
        let len = u32::try_from(len).unwrap_or(0); // 0: to the file's end
        let e = if self.fixed_files {
            opcode::SyncFileRange::new(types::Fixed(file), len)
                .offset(offset)
                .flags(flags)
                .build()
        } else {
            opcode::SyncFileRange::new(types::Fd(self.fds[file as usize]), len)
                .offset(offset)
                .flags(flags)
                .build()
        };
        self.push(e.user_data(u64::from(slot)))
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        debug_assert!(
            (slot as usize) < self.bufs.len(),
            "slot {slot} past the engine's slots"
        );
        self.bufs
            .get_mut(slot as usize)
            .map(AlignedBuf::as_mut_slice)
    }

    fn reopen(&mut self, files: Vec<File>) -> Result<(), EngineError> {
        let fds: Vec<i32> = files.iter().map(|f| f.as_raw_fd()).collect();
        if self.fixed_files {
            self.ring
                .submitter()
                .register_files_update(0, &fds)
                .map_err(|e| EngineError::Sys {
                    what: "updating registered files (registerfiles)".into(),
                    source: e,
                })?;
        }
        self.fds = fds;
        self._files = files;
        Ok(())
    }

    fn completion_mode(&self) -> &'static str {
        match (self.iopoll, self.sqpoll) {
            (true, true) => "sqpoll+iopoll",
            (true, false) => "iopoll",
            (false, true) => "sqpoll+interrupt",
            (false, false) => "interrupt",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::test_reads::{eight_deep, queue_reads};

    /// Eight reads of a file, all completed in the ring, then one
    /// `getevents` per `mins`: how many completions each took (None where
    /// this kernel gives no io_uring).
    fn takes(batch_max: u32, mins: &[usize]) -> Option<Vec<usize>> {
        eight_deep(batch_max, |setup| {
            let mut e = match UringEngine::new(setup) {
                Ok(e) => e,
                Err(why) => {
                    eprintln!("skipped: no io_uring here ({why})");
                    return None;
                }
            };
            queue_reads(&mut e, 8);
            loop {
                let ready = e.ring.completion().len();
                if ready == 8 {
                    break;
                }
                e.ring.submit_and_wait(8 - ready).unwrap();
            }
            let (mut each, mut slots) = (Vec::new(), Vec::new());
            for &min in mins {
                let mut out = Vec::new();
                e.getevents(min, &mut out).unwrap();
                assert!(out.iter().all(|c| c.result == 4096));
                slots.extend(out.iter().map(|c| c.slot));
                each.push(out.len());
            }
            slots.sort_unstable();
            slots.dedup();
            assert_eq!(slots.len(), each.iter().sum::<usize>(), "each read once");
            Some(each)
        })
    }

    #[test]
    fn each_reap_takes_one_completion_unless_the_job_allows_or_needs_more() {
        let Some(default) = takes(0, &[0, 1, 3, 0, 2]) else {
            return;
        };
        // fio's default: one a call, or the minimum asked; what is left
        // stays in the ring for the next call.
        assert_eq!(default, vec![1, 1, 3, 1, 2]);
        assert_eq!(takes(4, &[0, 1, 0]).unwrap(), vec![4, 4, 0]);
        assert_eq!(
            takes(64, &[0]).unwrap(),
            vec![8],
            "never more than the depth"
        );
    }

    #[test]
    fn a_depth_beyond_any_kernels_ring_is_refused_with_the_limit() {
        assert_eq!(ring_entries(1).unwrap(), 1);
        assert_eq!(ring_entries(20_000).unwrap(), 32768);
        for depth in [32769, 65536, u32::MAX] {
            let e = ring_entries(depth).unwrap_err().to_string();
            assert!(e.contains("iodepth") && e.contains("32768"), "{e}");
        }
    }

    #[test]
    fn fixed_buffers_beyond_the_kernels_limit_are_refused() {
        let spec = JobSpec {
            iodepth: 20_000,
            fixedbufs: true,
            ..JobSpec::default()
        };
        let e = check_ring(&spec).unwrap_err().to_string();
        assert!(e.contains("16384"), "{e}");
    }
}
