//! The sg engine (fio's `ioengine=sg`): every I/O is a SCSI command sent
//! with the `SG_IO` ioctl, on a SCSI disk's block device (`/dev/sdX`) or
//! its SCSI generic node (`/dev/sgN`). The commands are built in
//! [`crate::engines::scsi`]:
//!
//! * reads are READ(10/16), writes what `sg_write_mode` says (WRITE, WRITE
//!   AND VERIFY, WRITE SAME, WRITE SAME with NDOB, WRITE STREAM, VERIFY with
//!   BYTCHK 00/01/11), trims one UNMAP per trim, fsync SYNCHRONIZE CACHE;
//! * the block size and capacity come from READ CAPACITY(10), or (16) when
//!   the device is past 2 TiB of LBAs (fio's `fio_sgio_read_capacity`);
//! * `readfua`/`writefua` set FUA; `hipri` asks the driver to poll
//!   (`SGV4_FLAG_HIPRI`).
//!
//! SG_IO is synchronous: each command completes inside its ioctl, as fio's
//! sg engine on a block device, or on `/dev/sgN` with `direct=1`. (fio
//! queues asynchronously with write(2)/read(2) on `/dev/sgN` when
//! `direct=0`; ssdready always uses SG_IO, so iodepth > 1 has no effect,
//! as with psync.) A failed command comes back as `-errno` (decoded from
//! its sense data) and its first failure is described on stderr in one
//! line: command, status, sense key, ASC/ASCQ, the LBA the device reports,
//! and the CDB.

use crate::buf::AlignedBuf;
use crate::engine::{EngineError, EngineSetup, Queued};
use crate::engines::def::{AnyEngine, EngineDef};
use crate::engines::scsi::{self, Capacity, Command, SgIoHdr, SENSE_LEN};
use crate::sync_engine::SyncEngine;
use ssdready_core::spec_passthru::SgWriteMode;
use ssdready_core::{Ddir, IoReq};
use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::Path;

/// Send `cmd` on `fd`, moving `cmd.data_len` bytes at `buf`; Ok, or
/// (errno, the readable line). `hipri` polls for the completion.
pub fn send(fd: i32, cmd: &Command, buf: *mut u8, hipri: bool) -> Result<(), (i32, String)> {
    let mut sense = [0u8; SENSE_LEN];
    let mut hdr = SgIoHdr::new(&cmd.cdb, cmd.direction, buf, cmd.data_len, &mut sense);
    if hipri {
        hdr.flags |= scsi::SGV4_FLAG_HIPRI;
    }
    // SAFETY: `hdr` is a valid sg_io_hdr (repr(C), layout checked in
    // scsi's tests); its cmdp points at `cmd.cdb` (cmd_len bytes), its sbp
    // at `sense` (mx_sb_len bytes), and its dxferp at `buf`, which the
    // caller guarantees holds dxfer_len bytes; all outlive the call, which
    // is synchronous.
    let r = unsafe { libc::ioctl(fd, scsi::SG_IO as _, &mut hdr as *mut SgIoHdr) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        return Err((errno, format!("SG_IO ioctl: {e}")));
    }
    scsi::outcome(&hdr, &cmd.cdb, &sense)
}

/// Why SG_IO failed to reach a device at all, as a clause (`does not
/// answer SG_IO (not a SCSI device)`), or None when it is a SCSI error.
fn unreachable(errno: i32) -> Option<&'static str> {
    match errno {
        libc::ENOTTY | libc::EINVAL | libc::EOPNOTSUPP => {
            Some("does not answer SG_IO (not a SCSI device)")
        }
        libc::EPERM | libc::EACCES => {
            Some("refuses SG_IO to this user (it needs CAP_SYS_RAWIO or write access)")
        }
        _ => None,
    }
}

/// READ CAPACITY of the device open at `fd`: (10), then (16) when (10)
/// says the LBA does not fit, or fails (fio's order).
pub fn read_capacity(fd: i32) -> Result<Capacity, (i32, String)> {
    let mut b10 = [0u8; 8];
    let first = send(fd, &scsi::read_capacity_10(), b10.as_mut_ptr(), false);
    if let Err((errno, m)) = &first {
        if unreachable(*errno).is_some() {
            return Err((*errno, m.clone()));
        }
    }
    if let (Ok(()), Some(c)) = (&first, scsi::parse_capacity_10(&b10)) {
        return Ok(c);
    }
    let mut b16 = [0u8; 32];
    send(fd, &scsi::read_capacity_16(), b16.as_mut_ptr(), false)?;
    Ok(scsi::parse_capacity_16(&b16))
}

/// What sg needs to know of a target before the run, or the one line that
/// says why it cannot use it (`ioengine=sg: PATH …: sg needs …`).
pub fn probe(path: &Path) -> Result<Capacity, EngineError> {
    let shown = path.display();
    let needs = "sg needs /dev/sgN or a SCSI disk's block device (/dev/sdX)";
    let f = File::open(path).map_err(|e| {
        EngineError::Unsupported(format!("ioengine=sg: cannot open {shown}: {e} ({needs})"))
    })?;
    let cap = read_capacity(f.as_raw_fd()).map_err(|(errno, m)| {
        EngineError::Unsupported(match unreachable(errno) {
            Some(why) => format!("ioengine=sg: {shown} {why}: {needs}"),
            None => format!("ioengine=sg: READ CAPACITY on {shown} failed: {m}"),
        })
    })?;
    if cap.block_size == 0 || !cap.block_size.is_power_of_two() {
        return Err(EngineError::Unsupported(format!(
            "ioengine=sg: {shown} reports a block size of {} bytes (READ CAPACITY), which sg cannot address",
            cap.block_size
        )));
    }
    Ok(cap)
}

/// Offset and length in bytes → (LBA, blocks), or EINVAL when either is
/// not a whole number of `block_size` blocks (fio: "read/write not sector
/// aligned"), or the count does not fit 32 bits.
pub fn lba_range(offset: u64, len: u32, block_size: u32) -> Result<(u64, u32), i32> {
    let bs = u64::from(block_size);
    if bs == 0 || !offset.is_multiple_of(bs) || !u64::from(len).is_multiple_of(bs) {
        return Err(libc::EINVAL);
    }
    Ok((offset / bs, len / block_size))
}

/// The engine's definition (see [`crate::engines`]).
pub static DEF: EngineDef = EngineDef {
    serves: &[&ssdready_core::engines::SG],
    open: |setup| Ok(AnyEngine::dynamic(SgEngine::new(setup)?)),
};

/// See the module docs.
pub struct SgEngine {
    files: Vec<File>,
    caps: Vec<Capacity>,
    bufs: Vec<AlignedBuf>,
    mode: SgWriteMode,
    readfua: bool,
    writefua: bool,
    hipri: bool,
    /// Per target, the stream WRITE STREAM writes to, and whether it was
    /// opened here (closed again on drop).
    streams: Vec<(u16, bool)>,
    /// The first failure was described on stderr.
    told: bool,
    job: String,
}

impl SgEngine {
    /// Open the job's targets and learn their block sizes.
    pub fn new(setup: &EngineSetup<'_>) -> Result<Self, EngineError> {
        let spec = setup.spec;
        let p = &spec.passthru;
        let mut files = Vec::new();
        let mut caps = Vec::new();
        let mut streams = Vec::new();
        for t in setup.targets {
            caps.push(probe(&t.path)?);
            let f = std::fs::OpenOptions::new()
                .read(true)
                .write(spec.modifies_target())
                .open(&t.path)
                .map_err(|e| EngineError::Sys {
                    what: format!("opening {}", t.path.display()),
                    source: e,
                })?;
            let stream = if p.sg_write_mode != SgWriteMode::WriteStream || p.stream_id != 0 {
                (p.stream_id, false)
            } else {
                (open_stream(&f, &t.path)?, true)
            };
            streams.push(stream);
            files.push(f);
        }
        let depth = spec.effective_iodepth().max(1);
        let bufs = (0..depth)
            .map(|i| {
                let mut b = AlignedBuf::for_job(spec.bs.max() as usize, &spec.run.mem, i as usize)?;
                b.fill_random(setup.seed.wrapping_add(u64::from(i)));
                Ok(b)
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        Ok(SgEngine {
            files,
            caps,
            bufs,
            mode: p.sg_write_mode,
            readfua: p.readfua,
            writefua: p.writefua,
            hipri: spec.hipri,
            streams,
            told: false,
            job: spec.name.clone(),
        })
    }

    /// The command for `req`, or EINVAL when it is not block aligned.
    fn command(&self, req: &IoReq) -> Result<(Command, Option<Vec<u8>>), i32> {
        let f = req.file as usize;
        let bs = self.caps[f].block_size;
        let (lba, blocks) = lba_range(req.offset, req.len, bs)?;
        Ok(match req.ddir {
            Ddir::Read => (scsi::read(lba, blocks, bs, self.readfua), None),
            Ddir::Write => (
                scsi::write(self.mode, lba, blocks, bs, self.writefua, self.streams[f].0),
                None,
            ),
            Ddir::Trim => {
                let (c, list) = scsi::unmap(&[(lba, blocks)]);
                (c, Some(list))
            }
        })
    }

    /// A failed command: its errno, described once on stderr.
    fn failed(&mut self, errno: i32, msg: String) -> i64 {
        if !self.told {
            self.told = true;
            eprintln!("ssdready: job '{}': ioengine=sg: {msg}", self.job);
        }
        -i64::from(errno)
    }
}

/// STREAM CONTROL (open) on `f`: the stream ID the device assigned.
fn open_stream(f: &File, path: &Path) -> Result<u16, EngineError> {
    let mut b = [0u8; 8];
    send(
        f.as_raw_fd(),
        &scsi::stream_control(true, 0),
        b.as_mut_ptr(),
        false,
    )
    .map_err(|(_, m)| {
        EngineError::Unsupported(format!(
            "ioengine=sg: sg_write_mode=write_stream: opening a stream on {} failed: {m}",
            path.display()
        ))
    })?;
    // SBC-4 §5.32.3: ASSIGNED_STR_ID in bytes 4–5.
    Ok(u16::from_be_bytes([b[4], b[5]]))
}

impl Drop for SgEngine {
    fn drop(&mut self) {
        for (f, &(id, opened)) in self.files.iter().zip(&self.streams) {
            if opened {
                let mut b = [0u8; 8];
                // A stream left open is the device's to reclaim; nothing to do on failure.
                let _ = send(
                    f.as_raw_fd(),
                    &scsi::stream_control(false, id),
                    b.as_mut_ptr(),
                    false,
                );
            }
        }
    }
}

impl SyncEngine for SgEngine {
    fn name(&self) -> &'static str {
        "sg"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let (cmd, list) = match self.command(&req) {
            Ok(c) => c,
            Err(errno) => return Ok(Queued::Done(-i64::from(errno))),
        };
        let fd = self.files[req.file as usize].as_raw_fd();
        let buf = match &list {
            Some(l) => l.as_ptr().cast_mut(),
            None => self.bufs[req.slot as usize].as_mut_ptr(),
        };
        Ok(Queued::Done(match send(fd, &cmd, buf, self.hipri) {
            Ok(()) => i64::from(req.len),
            Err((errno, m)) => self.failed(errno, m),
        }))
    }

    /// SYNCHRONIZE CACHE(10) of the whole medium (fio's sg engine sends
    /// the same for fsync and fdatasync).
    fn sync(&mut self, _slot: u32, file: u32, _data_only: bool) -> Result<Queued, EngineError> {
        let fd = self.files[file as usize].as_raw_fd();
        let cmd = scsi::synchronize_cache();
        Ok(Queued::Done(
            match send(fd, &cmd, std::ptr::null_mut(), false) {
                Ok(()) => 0,
                Err((errno, m)) => self.failed(errno, m),
            },
        ))
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.bufs
            .get_mut(slot as usize)
            .map(AlignedBuf::as_mut_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_and_lengths_become_lbas_or_einval() {
        assert_eq!(lba_range(0, 512, 512), Ok((0, 1)));
        assert_eq!(lba_range(10240, 10240, 512), Ok((20, 20)));
        assert_eq!(lba_range(8192, 65536, 4096), Ok((2, 16)));
        assert_eq!(lba_range(512, 4096, 4096), Err(libc::EINVAL));
        assert_eq!(lba_range(4096, 1000, 4096), Err(libc::EINVAL));
        assert_eq!(lba_range(0, 512, 0), Err(libc::EINVAL));
    }

    #[test]
    fn a_regular_file_does_not_answer_sg_io() {
        let dir = std::env::temp_dir().join(format!("ssdready-sg-{}", std::process::id()));
        std::fs::write(&dir, [0u8; 4096]).unwrap();
        let e = probe(&dir).unwrap_err().to_string();
        std::fs::remove_file(&dir).unwrap();
        assert!(
            e.contains("does not answer SG_IO (not a SCSI device)"),
            "{e}"
        );
        assert!(e.starts_with("ioengine=sg: ") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn a_missing_device_is_named() {
        let e = probe(Path::new("/nonexistent/sg9"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot open /nonexistent/sg9") && e.contains("sg needs"),
            "{e}"
        );
    }
}
