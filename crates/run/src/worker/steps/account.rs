//! The loop's account step: one finished I/O into the statistics
//! (latencies, bytes, per-second samples, logs, the kernel's split of its
//! time), or into the job's error, sync or verification counts.

use super::features::Features;
use super::{Loop, Slot};
use crate::worker::verify;
use ssdready_core::spec::ErrorKind;
use ssdready_core::Ddir;
use ssdready_io::Engine;
use ssdready_workload::jobflow::{FlowIo, Tag};

impl Loop<'_> {
    /// Account one finished I/O: `res` bytes or `-errno`, finished at `t`;
    /// `sync` when it completed inside `queue` (no separate submission).
    #[inline(always)]
    pub(super) fn account<E: Engine, F: Features>(
        &mut self,
        engine: &mut E,
        slot: u32,
        s: Slot,
        res: i64,
        t: u64,
        sync: bool,
    ) {
        let ddir = s.ddir;
        if s.special {
            if self.account_special(engine, slot, &s, res, t) {
                return;
            }
        } else if !F::FULL && res >= 0 {
            self.flow.completed_lean(s.len);
        } else {
            self.flow.completed_plain(ddir, s.len, res >= 0);
        }
        if res < 0 {
            self.account_error(&s, ddir, res);
            return;
        }
        if F::FULL {
            self.completed_full(slot, &s, res, t);
        }
        if !self.measuring {
            // Counted for the progress display only (while measuring, the
            // stats count it: [`Loop::live`]).
            self.unmeasured_ios[ddir.idx()] += 1;
            self.unmeasured_bytes[ddir.idx()] += res as u64;
            return;
        }
        self.second(t);
        let short = (res as u64) < s.len as u64;
        if F::FULL && self.fake_io {
            // fio's FIO_NOSTATS: only the file operation's time, as clat.
            let d = self.stats.dir(ddir);
            d.count(res as u64, short);
            if let Some(ns) = self.op_lat.take() {
                d.clat.record(ns);
            }
            return;
        }
        let lat = t.saturating_sub(s.issue_ns);
        let total = match self.open_loop.as_deref().filter(|_| F::FULL) {
            Some(o) => o.completed(self.stats, slot, ddir, s.issue_ns, t),
            None => lat,
        };
        let d = self.stats.dir(ddir);
        let (slat, clat) = if sync {
            if total == lat {
                // Completion and total latency are one value.
                d.count_sync(res as u64, short, lat);
            } else {
                d.count_lat(res as u64, short, total);
                d.clat.record(lat);
            }
            (0, lat)
        } else {
            d.count_lat(res as u64, short, total);
            let slat = s.submit_ns.saturating_sub(s.issue_ns);
            let clat = t.saturating_sub(s.submit_ns);
            d.slat.record(slat);
            d.clat.record(clat);
            (slat, clat)
        };
        if F::FULL {
            let slat = if sync {
                // fio logs no submission latency for a synchronous engine's I/O.
                ssdready_core::iolog::NO_SLAT
            } else {
                slat
            };
            self.recorded_full(slot, &s, res, t, [slat, clat, lat]);
        }
    }

    /// A special request's completion (sync, sync range, verifying read)
    /// told to the flow and counted; true when it is accounted in full.
    #[inline(always)]
    fn account_special<E: Engine>(
        &mut self,
        engine: &mut E,
        slot: u32,
        s: &Slot,
        res: i64,
        t: u64,
    ) -> bool {
        let io = self.special[slot as usize];
        self.flow.completed(&io, res >= 0);
        match io {
            FlowIo::Sync { data_only, file } => {
                if let Some(a) = self.access.as_deref_mut() {
                    a.synced(file);
                }
                self.account_sync(s, data_only, res, t);
                true
            }
            FlowIo::SyncRange { file } => {
                if let Some(a) = self.access.as_deref_mut() {
                    a.synced(file);
                }
                self.account_sync_range(s, res, t);
                true
            }
            FlowIo::Rw {
                file,
                offset,
                tag: Tag::Check(expect),
                ..
            } if res >= 0 => {
                self.check_read(engine, slot, file, offset, &expect, res);
                false
            }
            FlowIo::Rw { .. } => false,
        }
    }

    /// A successful I/O's effects beyond the statistics, measured or not:
    /// what it wrote (`serialize_overlap`), `max_latency`,
    /// `latency_target`'s search.
    #[inline(always)]
    fn completed_full(&mut self, slot: u32, s: &Slot, res: i64, t: u64) {
        let offset = self.offsets[slot as usize];
        if let (Ddir::Write, Some(a)) = (s.ddir, self.access.as_deref_mut()) {
            a.wrote(s.file, offset, res as u64);
        }
        self.check_max_latency(s, offset, t);
        if let Some(l) = self.lat.as_deref_mut() {
            if let Err(lat) = l.completed(t.saturating_sub(s.issue_ns), t) {
                self.latency_missed(lat);
            }
        }
    }

    /// A measured I/O's records beyond the latencies: its priority's
    /// statistics, its line in the I/O log (`[slat, clat, lat]`), the
    /// kernel's split of its time.
    #[inline(always)]
    fn recorded_full(&mut self, slot: u32, s: &Slot, res: i64, t: u64, lats: [u64; 3]) {
        let (ddir, [_, clat, lat]) = (s.ddir, lats);
        if let Some(p) = self.prio.as_deref() {
            p.record(self.stats.dir(ddir), ddir, s.prio, clat, lat);
        }
        if let Some(log) = &mut self.stats.log {
            let since = t.saturating_sub(self.start);
            let prio = self.prio.as_deref().map_or(0, |p| p.value(ddir, s.prio));
            let offset = self.offsets[slot as usize];
            log.record_prio(since, ddir, res as u32, offset, lats, prio);
            if log.full() && !self.done_issuing {
                self.log_full();
            }
        }
        let (dev, sector) = self.kernel.get(slot as usize).copied().unwrap_or_default();
        if let (Some(j), true) = (self.join, dev != 0) {
            // The issue on the kernel's clock: the completion's
            // CLOCK_MONOTONIC minus the latency.
            let issue_mono = self.mono_now.saturating_sub(lat);
            let split = self.stats.io_split.get_or_insert_with(Box::default);
            split.record(issue_mono, self.mono_now, j.lookup(dev, sector));
        }
    }

    /// A completed sync: counted, with its latency, as fio's `sync` section
    /// (a failure is the job's error).
    fn account_sync(&mut self, s: &Slot, data_only: bool, res: i64, t: u64) {
        if res < 0 {
            if self.measuring {
                self.stats.errors += 1;
            }
            let what = if data_only { "fdatasync" } else { "fsync" };
            let errno = -res as i32;
            if self.goes_past(ErrorKind::Write, errno) {
                let e = std::io::Error::from_raw_os_error(errno);
                self.stats.go_past(errno, || format!("{what}: {e}"));
                return;
            }
            if self.stats.first_error.is_none() {
                self.stats.first_errno = -res as i32;
                self.stats.first_error = Some(format!(
                    "{what}: {}",
                    std::io::Error::from_raw_os_error(-res as i32)
                ));
            }
            self.done_issuing = true;
            return;
        }
        if !self.measuring {
            return;
        }
        let st = self.stats.sync.get_or_insert_with(Box::default);
        if data_only {
            st.fdatasyncs += 1;
        } else {
            st.fsyncs += 1;
        }
        st.lat.record(t.saturating_sub(s.issue_ns));
    }

    /// A completed `sync_file_range`: counted with fio's syncs (in the
    /// `sync` latency, not in its `total_ios`, which counts fsyncs).
    fn account_sync_range(&mut self, s: &Slot, res: i64, t: u64) {
        if res < 0 {
            let e = std::io::Error::from_raw_os_error(-res as i32);
            if self.measuring {
                self.stats.errors += 1;
            }
            if self.stats.first_error.is_none() {
                self.stats.first_errno = -res as i32;
                self.stats.first_error = Some(format!("sync_file_range: {e}"));
            }
            self.done_issuing = true;
            return;
        }
        if !self.measuring {
            return;
        }
        let st = self.stats.sync.get_or_insert_with(Box::default);
        st.sync_ranges += 1;
        st.lat.record(t.saturating_sub(s.issue_ns));
    }

    /// Check the data a verification read brought back; `verify_fatal`
    /// stops the job at the first failure.
    #[cold]
    fn check_read<E: Engine>(
        &mut self,
        engine: &mut E,
        slot: u32,
        file: u32,
        offset: u64,
        expect: &ssdready_workload::verify::Expect,
        res: i64,
    ) {
        if self.flow.checks_nothing() {
            return; // verify=null: pretend, as fio
        }
        let (Some(layout), Some(buf)) = (self.flow.layout(), engine.buffer(slot)) else {
            return; // no data moved (the null engine): nothing to check, as fio
        };
        let name = match self.ctx.targets.get(file as usize) {
            Some(t) => t.path.display().to_string(),
            None => self.ctx.job.errors.first_file.clone(),
        };
        let buf = &mut buf[..res.max(0) as usize];
        let v = &self.ctx.job.errors;
        let found = verify::check(
            layout,
            buf,
            &name,
            offset,
            expect,
            verify::Handling {
                fatal: v.verify_fatal,
                dump: v.verify_dump,
                go_past: self.goes_past(ErrorKind::Verify, verify::EILSEQ),
            },
            self.stats,
        );
        if found.failures > 0 && self.ctx.job.errors.verify_fatal {
            self.done_issuing = true;
        }
    }

    /// Whether an error of this kind is counted and gone past
    /// (`continue_on_error`, `ignore_error`).
    pub(super) fn goes_past(&self, kind: ErrorKind, errno: i32) -> bool {
        self.ctx.job.errors.goes_past(kind, errno)
    }

    /// A failed I/O: counted, the first one kept with its reason; fio stops
    /// a job at its first error unless `continue_on_error` or `ignore_error`
    /// covers it.
    #[cold]
    fn account_error(&mut self, s: &Slot, ddir: Ddir, res: i64) {
        if self.ctx.job.errors.is_full(-res as i32) {
            // fio's fill_device: a full device or file system is the end of
            // the job, not an error (the I/O counts, as in fio's total_ios).
            if self.measuring {
                self.stats.dir(ddir).count_outside_series();
            }
            self.done_issuing = true;
            return;
        }
        if self.measuring {
            self.stats.errors += 1;
        }
        let errno = -res as i32;
        let kind = if ddir == Ddir::Read {
            ErrorKind::Read
        } else {
            ErrorKind::Write
        };
        if self.goes_past(kind, errno) {
            self.stats.go_past(errno, || {
                format!(
                    "{} of {} bytes: {}",
                    ddir.name(),
                    s.len,
                    std::io::Error::from_raw_os_error(errno)
                )
            });
            return;
        }
        if self.stats.first_error.is_none() {
            self.stats.first_errno = -res as i32;
            self.stats.first_error = Some(format!(
                "{} of {} bytes: {}",
                ddir.name(),
                s.len,
                std::io::Error::from_raw_os_error(-res as i32)
            ));
        }
        self.done_issuing = true;
    }
}
