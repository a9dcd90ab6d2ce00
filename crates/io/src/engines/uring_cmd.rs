//! The io_uring_cmd engine (fio's `ioengine=io_uring_cmd`, `cmd_type=nvme`):
//! NVMe I/O commands sent through io_uring passthrough
//! (`IORING_OP_URING_CMD`, `NVME_URING_CMD_IO`) on an NVMe namespace's
//! generic character device, `/dev/ngXnY`, bypassing the block layer.
//!
//! * The ring has 128-byte submission entries (`IORING_SETUP_SQE128`: the
//!   72-byte `struct nvme_uring_cmd` sits in the entry) and 32-byte
//!   completions (`IORING_SETUP_CQE32`). `sqthread_poll`, `hipri` (IOPOLL),
//!   `registerfiles` and `fixedbufs` (`IORING_URING_CMD_FIXED`) work as in
//!   the io_uring engine; `nonvectored=0` sends an iovec
//!   (`NVME_URING_CMD_IO_VEC`), otherwise one buffer (fio's choice on any
//!   kernel with IORING_OP_READ).
//! * The namespace's ID (`NVME_IOCTL_ID`) and format (Identify Namespace,
//!   `NVME_IOCTL_ADMIN_CMD`) give the LBA size and capacity.
//! * Reads are Read, writes what `write_mode` says (Write, Write Zeroes,
//!   Write Uncorrectable, Verify, or fio's percentage mix of them, chosen
//!   per write from the job's seed), trims a Dataset Management deallocate
//!   of one range, fsync a Flush. `readfua`/`writefua` set FUA, `deac` the
//!   Deallocate bit of Write Zeroes.
//! * A completion's result is 0, `-errno`, or a positive NVMe status,
//!   decoded ([`crate::engines::nvme::status_errno`]); the first failure is
//!   described on stderr in one line.
//!
//! What it does not do is refused before the run (see the CLI's passthru
//! checks): `cmd_type=bsg`, protection information, data placement, zone
//! append and zoned namespaces, more than one range per trim, and
//! namespaces formatted with metadata.

use crate::buf::AlignedBuf;
use crate::engine::{Engine, EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::engines::nvme::{self, DsmRange, Namespace, NvmePassthruCmd};
use crate::engines::uring::{
    build_ring, check_iopoll, register_buffers, register_files, ring_entries, slot_buffers,
    submit_queued, waits_in_user_space, wants_iopoll,
};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use ssdready_core::spec_passthru::NvmeWriteMode;
use ssdready_core::{Completion, Ddir, IoReq};
use std::fs::File;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Learn the namespace behind `path`, or the one line that says why
/// io_uring_cmd cannot use it.
pub fn probe(path: &Path) -> Result<Namespace, EngineError> {
    let shown = path.display();
    let needs = "io_uring_cmd needs an NVMe namespace's generic character device (/dev/ngXnY)";
    let refuse =
        |why: String| EngineError::Unsupported(format!("ioengine=io_uring_cmd: {why}: {needs}"));
    let md = std::fs::metadata(path).map_err(|e| refuse(format!("{shown}: {e}")))?;
    let ft = md.file_type();
    if ft.is_file() {
        return Err(refuse(format!("{shown} is a regular file")));
    }
    if ft.is_block_device() {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let hint = match name.strip_prefix("nvme") {
            Some(rest) if rest.contains('n') && !rest.contains('p') => {
                format!(" (/dev/ng{rest} for /dev/{name})")
            }
            _ => String::new(),
        };
        return Err(refuse(format!(
            "{shown} is a block device, not a character device{hint}"
        )));
    }
    if !ft.is_char_device() {
        return Err(refuse(format!("{shown} is not a device")));
    }
    let f = File::open(path).map_err(|e| refuse(format!("cannot open {shown}: {e}")))?;
    // SAFETY: NVME_IOCTL_ID takes no argument and returns the namespace
    // ID or -1; the descriptor is open.
    let nsid = unsafe { libc::ioctl(f.as_raw_fd(), nvme::NVME_IOCTL_ID as _) };
    if nsid <= 0 {
        let e = std::io::Error::last_os_error();
        return Err(refuse(format!(
            "{shown} does not answer NVMe ioctls ({e}): not an NVMe namespace"
        )));
    }
    let mut id = AlignedBuf::new(4096);
    let mut cmd = nvme::identify_namespace(nsid as u32, id.as_mut_ptr() as u64);
    // SAFETY: `cmd` is a valid nvme_passthru_cmd (repr(C), layout checked in
    // nvme's tests) whose addr points at 4096 writable bytes (`id`),
    // data_len 4096; both outlive the synchronous ioctl.
    let r = unsafe {
        libc::ioctl(
            f.as_raw_fd(),
            nvme::NVME_IOCTL_ADMIN_CMD as _,
            &mut cmd as *mut NvmePassthruCmd,
        )
    };
    if r != 0 {
        let why = if r > 0 {
            nvme::status_name(r as u32)
        } else {
            std::io::Error::last_os_error().to_string()
        };
        return Err(EngineError::Unsupported(format!(
            "ioengine=io_uring_cmd: Identify Namespace on {shown} failed: {why}"
        )));
    }
    let mut data = [0u8; 4096];
    data.copy_from_slice(&id.as_slice()[..4096]);
    nvme::parse_namespace(nsid as u32, &data)
        .map_err(|e| EngineError::Unsupported(format!("ioengine=io_uring_cmd: {shown}: {e}")))
}

/// `struct iovec` as plain numbers (base address, length), so that the
/// engine stays `Send`; the same 16 bytes as libc's on a 64-bit machine.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct IoVec {
    base: u64,
    len: u64,
}

/// A small deterministic generator for the write-mode mix (xorshift64*).
struct Pick(u64);

impl Pick {
    fn percent(&mut self) -> u32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32 % 100
    }
}

/// The mode of one write: the first whose cumulative share exceeds a
/// draw in 0..100 (fio's `fio_ioring_cmd_prep_write_split`).
pub fn pick_mode(mix: &[(NvmeWriteMode, u32)], draw: u32) -> NvmeWriteMode {
    let mut sum = 0;
    for &(m, p) in mix {
        sum += p;
        if draw < sum {
            return m;
        }
    }
    mix.last().map_or(NvmeWriteMode::Write, |x| x.0)
}

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&ssdready_core::engines::IO_URING_CMD],
    open: |setup| Ok(AnyEngine::dynamic(UringCmdEngine::new(setup)?)),
};

/// See the module docs. Field order matters: the ring is dropped (and the
/// kernel's references to the buffers released) before the buffers.
pub struct UringCmdEngine {
    ring: IoUring<squeue::Entry128, cqueue::Entry32>,
    bufs: Vec<AlignedBuf>,
    iovecs: Vec<IoVec>,
    dsm: Vec<DsmRange>,
    /// Per slot, the bytes its request moves (a command completes with 0).
    lens: Vec<u32>,
    fds: Vec<i32>,
    _files: Vec<File>,
    ns: Vec<Namespace>,
    fixed_files: bool,
    fixed_bufs: bool,
    vectored: bool,
    iopoll: bool,
    sqpoll: bool,
    mix: Vec<(NvmeWriteMode, u32)>,
    pick: Pick,
    readfua: bool,
    writefua: bool,
    deac: bool,
    queued: usize,
    told: bool,
    job: String,
    /// The most completions one `getevents` takes unless it needs more, as
    /// the io_uring engine ([`ssdready_core::spec::JobSpec::reap_call_max`]).
    reap_max: usize,
}

impl UringCmdEngine {
    /// Create the ring, learn the namespaces, open and (optionally)
    /// register files and buffers.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let p = &spec.passthru;
        if spec.hipri {
            check_iopoll(setup.targets)?;
        }
        let ns = setup
            .targets
            .iter()
            .map(|t| probe(&t.path))
            .collect::<Result<Vec<_>, _>>()?;
        let depth = spec.depth().get();
        let entries = ring_entries(depth)?;
        let iopoll = wants_iopoll(spec, setup.targets);
        let ring = build_ring::<squeue::Entry128, cqueue::Entry32>(
            spec,
            entries,
            iopoll,
            waits_in_user_space(spec, iopoll),
        )
        .map_err(|e| EngineError::Sys {
            what: format!(
                "creating an io_uring with 128-byte entries (SQE128, CQE32) of {entries} entries"
            ),
            source: e,
        })?;
        let files = setup
            .targets
            .iter()
            .map(|t| {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(spec.modifies_target())
                    .open(&t.path)
                    .map_err(|e| EngineError::Sys {
                        what: format!("opening {}", t.path.display()),
                        source: e,
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let fds = register_files(spec, &ring, &files)?;
        let mut bufs = slot_buffers(setup, depth)?;
        let iovecs: Vec<IoVec> = bufs
            .iter_mut()
            .map(|b| IoVec {
                base: b.as_mut_ptr() as u64,
                len: b.len() as u64,
            })
            .collect();
        if spec.fixedbufs {
            // SAFETY: the buffers are this engine's, kept in it after the
            // ring (declared first, so dropped first).
            unsafe { register_buffers(&ring, &mut bufs)? };
        }
        Ok(UringCmdEngine {
            ring,
            bufs,
            iovecs,
            dsm: vec![DsmRange::default(); depth as usize],
            lens: vec![0; depth as usize],
            fds,
            _files: files,
            ns,
            fixed_files: spec.registerfiles,
            fixed_bufs: spec.fixedbufs,
            vectored: p.nonvectored == 0,
            iopoll,
            sqpoll: spec.sqthread_poll,
            mix: p.write_mode.clone(),
            pick: Pick(setup.seed | 1),
            readfua: p.readfua,
            writefua: p.writefua,
            deac: p.deac,
            queued: 0,
            told: false,
            job: spec.name.clone(),
            reap_max: spec.reap_call_max() as usize,
        })
    }

    /// The NVMe command for `req`, or the errno it fails with at once.
    fn command(&mut self, req: &IoReq) -> Result<nvme::NvmeUringCmd, i32> {
        let slot = req.slot as usize;
        let ns = self.ns[req.file as usize];
        let (slba, nlb) = nvme::lba_range(req.offset, req.len, ns.unit())?;
        let addr = if self.vectored {
            self.iovecs[slot].len = u64::from(req.len);
            std::ptr::addr_of!(self.iovecs[slot]) as u64
        } else {
            self.bufs[slot].as_mut_ptr() as u64
        };
        let len = if self.vectored { 1 } else { req.len };
        Ok(match req.ddir {
            Ddir::Read => {
                let fua = if self.readfua { nvme::CDW12_FUA } else { 0 };
                nvme::rw(nvme::opcode::READ, ns.nsid, slba, nlb, fua, addr, len)
            }
            Ddir::Write => {
                let mode = match self.mix.as_slice() {
                    [(m, _)] => *m,
                    mix => pick_mode(mix, self.pick.percent()),
                };
                let op = nvme::write_opcode(mode);
                let mut flags = 0;
                if self.writefua && matches!(op, nvme::opcode::WRITE | nvme::opcode::WRITE_ZEROES) {
                    flags |= nvme::CDW12_FUA;
                }
                if self.deac && op == nvme::opcode::WRITE_ZEROES {
                    flags |= nvme::CDW12_DEAC;
                }
                nvme::rw(op, ns.nsid, slba, nlb, flags, addr, len)
            }
            Ddir::Trim => {
                self.dsm[slot] = DsmRange {
                    cattr: 0,
                    nlb: u32::from(nlb) + 1,
                    slba,
                };
                nvme::deallocate(ns.nsid, std::ptr::addr_of!(self.dsm[slot]) as u64, 1)
            }
        })
    }

    fn push(
        &mut self,
        cmd: &nvme::NvmeUringCmd,
        file: u32,
        slot: u32,
        data: bool,
    ) -> Result<Queued, EngineError> {
        let op = if self.vectored && data {
            nvme::NVME_URING_CMD_IO_VEC
        } else {
            nvme::NVME_URING_CMD_IO
        };
        let mut e = if self.fixed_files {
            opcode::UringCmd80::new(types::Fixed(file), op)
        } else {
            opcode::UringCmd80::new(types::Fd(self.fds[file as usize]), op)
        }
        .cmd(cmd.to_sqe_cmd());
        if self.fixed_bufs && data && !self.vectored {
            e = e.buf_index(Some(slot as u16));
        }
        let entry = e.build().user_data(u64::from(slot));
        loop {
            // SAFETY: the command points at self.bufs[slot], self.iovecs[slot]
            // or self.dsm[slot], which stay alive and untouched until its
            // completion is reaped (the worker does not reuse a slot before
            // that); its fd is ours.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                break;
            }
            self.commit()?;
        }
        self.queued += 1;
        Ok(Queued::Pending)
    }

    /// Take at most `limit` completions; the rest stay for the next call.
    fn drain(&mut self, out: &mut Vec<Completion>, limit: usize) -> usize {
        let before = out.len();
        let mut failures = Vec::new();
        for c in self.ring.completion().take(limit) {
            let slot = c.user_data() as u32;
            let res = c.result();
            let result = match res {
                0 => i64::from(self.lens[slot as usize]),
                r if r < 0 => i64::from(r),
                status => {
                    failures.push(nvme::status_name(status as u32));
                    -i64::from(nvme::status_errno(status as u32))
                }
            };
            out.push(Completion { slot, result });
        }
        if let Some(m) = failures.first().filter(|_| !self.told) {
            self.told = true;
            eprintln!("ssdready: job '{}': ioengine=io_uring_cmd: {m}", self.job);
        }
        out.len() - before
    }
}

impl Engine for UringCmdEngine {
    fn name(&self) -> &'static str {
        "io_uring_cmd"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let cmd = match self.command(&req) {
            Ok(c) => c,
            Err(errno) => return Ok(Queued::Done(-i64::from(errno))),
        };
        self.lens[req.slot as usize] = req.len;
        let data = cmd.data_len != 0 && cmd.opcode != nvme::opcode::DSM;
        self.push(&cmd, req.file, req.slot, data)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        if self.queued == 0 {
            return Ok(0);
        }
        // SAFETY: each queued command points at a slot's buffer (and its
        // iovec or range) and an fd this engine keeps, untouched, until its
        // completion is reaped (`push`).
        let n = unsafe { submit_queued(&mut self.ring, self.sqpoll)? };
        self.queued = 0;
        Ok(n)
    }

    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        let limit = self.reap_max.max(min);
        let mut got = self.drain(out, limit);
        while got < min || (self.iopoll && got == 0 && min > 0) {
            match self.ring.submit_and_wait(min - got) {
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EAGAIN)) => {}
                Err(e) => {
                    return Err(EngineError::Sys {
                        what: "io_uring_enter (wait)".into(),
                        source: e,
                    })
                }
            }
            got += self.drain(out, limit - got);
        }
        Ok(())
    }

    /// A Flush of the namespace, reported by `getevents` (fio sends the
    /// same for fsync and fdatasync).
    fn sync(&mut self, slot: u32, file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        self.lens[slot as usize] = 0;
        let cmd = nvme::flush(self.ns[file as usize].nsid);
        self.push(&cmd, file, slot, false)
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.bufs
            .get_mut(slot as usize)
            .map(AlignedBuf::as_mut_slice)
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

    #[test]
    fn the_iovec_copy_has_libcs_layout() {
        assert_eq!(
            std::mem::size_of::<IoVec>(),
            std::mem::size_of::<libc::iovec>()
        );
        assert_eq!(
            std::mem::offset_of!(IoVec, len),
            std::mem::offset_of!(libc::iovec, iov_len)
        );
    }

    #[test]
    fn the_write_mix_follows_its_percentages() {
        use NvmeWriteMode::*;
        let mix = [(Write, 40), (Zeroes, 30), (Uncor, 20), (Verify, 10)];
        assert_eq!(pick_mode(&mix, 0), Write);
        assert_eq!(pick_mode(&mix, 39), Write);
        assert_eq!(pick_mode(&mix, 40), Zeroes);
        assert_eq!(pick_mode(&mix, 89), Uncor);
        assert_eq!(pick_mode(&mix, 99), Verify);
        let mut p = Pick(12345);
        let mut n = [0u32; 4];
        for _ in 0..100_000 {
            let m = pick_mode(&mix, p.percent());
            n[mix.iter().position(|x| x.0 == m).unwrap()] += 1;
        }
        for (i, &(_, pct)) in mix.iter().enumerate() {
            let share = f64::from(n[i]) / 1000.0;
            assert!(
                (share - f64::from(pct)).abs() < 1.0,
                "{:?}: {share}%",
                mix[i].0
            );
        }
    }

    #[test]
    fn a_regular_file_or_block_device_is_refused_naming_the_char_device() {
        let f = std::env::temp_dir().join(format!("ssdready-ngtest-{}", std::process::id()));
        std::fs::write(&f, [0u8; 512]).unwrap();
        let e = probe(&f).unwrap_err().to_string();
        std::fs::remove_file(&f).unwrap();
        assert!(e.contains("is a regular file: io_uring_cmd needs"), "{e}");
        // /dev/null is a character device that is no NVMe namespace.
        let e = probe(Path::new("/dev/null")).unwrap_err().to_string();
        assert!(e.contains("/dev/null does not answer NVMe ioctls"), "{e}");
        assert!(!e.contains('\n'));
    }
}
