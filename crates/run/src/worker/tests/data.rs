//! fio's verification and logs in the worker loop, against an engine that
//! keeps the data it is given: a read-back finds a block corrupted on the
//! way; `verify_fatal` stops at the first; `write_bw_log`, `write_iops_log`
//! and `write_lat_log` hold one line per I/O, or with `log_avg_msec` one
//! per window and direction, with fio's fields. Counts only: a loaded
//! machine does not change them.

use super::*;
use ssdready_core::iolog::LogKind;

/// A 1 MiB disk in memory: writes land in it, reads come from it, at
/// once; a write over one of `corrupt` has that byte flipped on the way.
struct Disk {
    data: Vec<u8>,
    buffers: Vec<Vec<u8>>,
    done: Vec<Completion>,
    corrupt: Vec<u64>,
    reads: Arc<Mutex<u64>>,
}

impl Disk {
    fn new(corrupt: &[u64]) -> (Self, Arc<Mutex<u64>>) {
        let reads = Arc::new(Mutex::new(0));
        let d = Disk {
            data: vec![0; 1 << 20],
            buffers: Vec::new(),
            done: Vec::new(),
            corrupt: corrupt.to_vec(),
            reads: reads.clone(),
        };
        (d, reads)
    }

    fn buf(&mut self, slot: u32) -> &mut Vec<u8> {
        let slot = slot as usize;
        if self.buffers.len() <= slot {
            self.buffers.resize(slot + 1, vec![0; 1 << 16]);
        }
        &mut self.buffers[slot]
    }
}

impl Engine for Disk {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let (at, len) = (req.offset as usize, req.len as usize);
        let mut buf = std::mem::take(self.buf(req.slot));
        match req.ddir {
            Ddir::Write => {
                self.data[at..at + len].copy_from_slice(&buf[..len]);
                for &c in self
                    .corrupt
                    .iter()
                    .filter(|&&c| (at..at + len).contains(&(c as usize)))
                {
                    self.data[c as usize] ^= 0xff;
                }
            }
            _ => {
                buf[..len].copy_from_slice(&self.data[at..at + len]);
                *self.reads.lock().unwrap() += 1;
            }
        }
        *self.buf(req.slot) = buf;
        self.done.push(Completion {
            slot: req.slot,
            result: len as i64,
        });
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        Ok(self.done.len())
    }

    fn getevents(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.done);
        Ok(())
    }

    fn completion_mode(&self) -> &'static str {
        "interrupt"
    }

    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        Some(self.buf(slot).as_mut_slice())
    }
}

/// Write 64 KiB with `verify=crc32c` and read it back, with `more`
/// options, on a disk that corrupts the bytes at `corrupt`.
fn verify_run(more: &[(&str, &str)], corrupt: &[u64]) -> (WorkerOutcome, u64) {
    let mut options = vec![
        ("rw", "write"),
        ("bs", "4k"),
        ("size", "64k"),
        ("verify", "crc32c"),
        // No state file in the working directory.
        ("verify_state_save", "0"),
    ];
    options.extend_from_slice(more);
    let c = ctx(spec(&options), Arc::default());
    let (disk, reads) = Disk::new(corrupt);
    let mut out = WorkerOutcome::empty(1);
    let mut engine = ssdready_io::AnyEngine::dynamic(disk);
    run_loop(&c, &mut engine, Wait::Engine, &mut out);
    let reads = *reads.lock().unwrap();
    (out, reads)
}

#[test]
fn a_clean_read_back_verifies_every_block() {
    let (out, reads) = verify_run(&[], &[]);
    let v = out.stats.verify.as_deref().expect("verified");
    assert_eq!((v.blocks, v.bytes, v.failed), (16, 16 * 4096, 0));
    assert_eq!(reads, 16);
    assert_eq!(out.stats.first_error, None);
}

#[test]
fn a_corrupted_block_is_found_and_reported_with_its_offset() {
    let (out, _) = verify_run(&[], &[5 * 4096 + 100]);
    let v = out.stats.verify.as_deref().expect("verified");
    assert_eq!(v.failed, 1);
    assert_eq!(v.failures[0].failure.offset / 4096, 5, "{:?}", v.failures);
    assert_eq!(out.stats.first_errno, libc::EILSEQ);
    let e = out.stats.first_error.as_deref().unwrap_or("");
    assert!(e.contains("verify failed on mock"), "{e}");
}

#[test]
fn verify_fatal_stops_at_the_first_bad_block() {
    let bad = [3 * 4096 + 7, 9 * 4096 + 7, 12 * 4096 + 7];
    let (all, reads_all) = verify_run(&[("continue_on_error", "verify")], &bad);
    let va = all.stats.verify.as_deref().expect("verified");
    assert_eq!((va.failed, reads_all), (3, 16), "every block read back");
    assert_eq!(all.stats.continued, 3);
    let (fatal, reads) = verify_run(&[("verify_fatal", "1")], &bad);
    let vf = fatal.stats.verify.as_deref().expect("verified");
    assert_eq!(vf.failed, 1);
    assert!(reads < 16, "went on reading after a fatal failure: {reads}");
    assert_eq!(fatal.stats.first_errno, libc::EILSEQ);
}

/// A run of `options` on the scripted engine, with its worker's log.
fn logged(options: &[(&str, &str)]) -> (WorkerOutcome, ssdready_core::iolog::IoLog) {
    let (mock, _) = Mock::new(Duration::ZERO, Box::new(|_, len| i64::from(len)));
    let mut out = run_mock(&ctx(spec(options), Arc::default()), mock);
    let log = *out.stats.log.take().expect("the job keeps a log");
    (out, log)
}

/// The fields of each line of `text`.
fn fields(text: &str) -> Vec<usize> {
    text.lines().map(|l| l.split(", ").count()).collect()
}

#[test]
fn unaveraged_logs_have_a_line_per_io_with_fios_fields() {
    let (out, log) = logged(&[
        ("rw", "randrw"),
        ("bs", "4k"),
        ("size", "128k"),
        ("write_bw_log", "x"),
        ("write_iops_log", "x"),
        ("write_lat_log", "x"),
    ]);
    let ios = dir(&out, Ddir::Read).ios + dir(&out, Ddir::Write).ios;
    assert_eq!(ios, 32);
    for k in [LogKind::Bw, LogKind::Iops, LogKind::Clat, LogKind::Lat] {
        let text = log.render(k);
        // time, value, direction, block size, priority
        assert_eq!(fields(&text), vec![5; 32], "{k:?}:\n{text}");
    }
    let reads = log
        .rows(LogKind::Iops)
        .iter()
        .filter(|r| r.ddir == 0)
        .count();
    assert_eq!(reads as u64, dir(&out, Ddir::Read).ios);
    assert!(log.rows(LogKind::Lat).iter().all(|r| r.bs == 4096));
}

#[test]
fn log_offset_adds_the_offset_to_every_line() {
    let (_, log) = logged(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "64k"),
        ("write_lat_log", "x"),
        ("log_offset", "1"),
    ]);
    let text = log.render(LogKind::Clat);
    assert_eq!(fields(&text), vec![6; 16], "{text}");
    let offsets: Vec<u64> = log.rows(LogKind::Clat).iter().map(|r| r.offset).collect();
    assert_eq!(offsets, (0..16).map(|i| i * 4096).collect::<Vec<_>>());
}

/// With `log_avg_msec` longer than the job, the latency logs have one line
/// for each direction, at the job's end, and the rate logs none: the
/// window was never whole (fio writes the same), whatever the machine's
/// load.
#[test]
fn log_avg_msec_averages_a_window_into_a_line_per_direction() {
    let (out, log) = logged(&[
        ("rw", "randrw"),
        ("bs", "4k"),
        ("size", "128k"),
        ("write_bw_log", "x"),
        ("write_iops_log", "x"),
        ("write_lat_log", "x"),
        ("log_avg_msec", "600000"),
    ]);
    assert!(dir(&out, Ddir::Read).ios > 0 && dir(&out, Ddir::Write).ios > 0);
    for k in [LogKind::Clat, LogKind::Lat] {
        let rows = log.rows(k);
        let dirs: Vec<u8> = rows.iter().map(|r| r.ddir).collect();
        assert_eq!(dirs, vec![0, 1], "{k:?}");
        let end_ms = out.stats.measured_ns / 1_000_000;
        assert!(
            rows.iter().all(|r| r.t_ms <= end_ms + 1 && r.bs == 0),
            "{k:?}: {rows:?}"
        );
        assert_eq!(fields(&log.render(k)), vec![5, 5], "{k:?}");
    }
    for k in [LogKind::Bw, LogKind::Iops] {
        assert_eq!(log.render(k), "", "{k:?}");
    }
}
