//! A power cut on a drive without power-loss protection: what its volatile
//! write cache held is gone, and the drive comes back with what its NAND
//! holds (`fault_power_cut_after=N`, [`crate::fault`]).
//!
//! A drive with a volatile write cache acknowledges a write once the data
//! is in its cache (DRAM or controller SRAM) and programs it later; a
//! power cut before the program ends loses it (the X25-E lost committed
//! InnoDB transactions that way with its cache on: Percona, 2009). The
//! host makes data durable with a **flush** (`fsync`, `fdatasync`: NVMe
//! Flush, which covers every write submitted before it, once it completes)
//! or writes with **FUA** (fio's `sync=1`/`dsync`, O_SYNC/O_DSYNC: the
//! write completes once its data is on the medium). A device with any
//! `fault_` key other than a power cut keeps the emulator's usual semantics
//! (a flush completes at once, as on a drive with power-loss protection).
//!
//! The emulator keeps the data written since it was last made durable in
//! an **undo log**: each write saves the bytes it overwrites. At the cut,
//! at time T when the N-th write reaches the device (before that write is
//! stored: it and every later write go to the restored device):
//!
//! * a write still **in flight** (modelled completion after T) keeps a
//!   drawn prefix of its 4 KiB pages (none, or some: a **torn** write) and
//!   completes with EIO: the host was never told it was written;
//! * a flush in flight at T completes with EIO and makes nothing durable;
//! * an **acknowledged** write is durable when a flush submitted after it
//!   completed by T, when it was FUA, or when the drive had programmed it:
//!   the model's write buffer ([`crate::device::Device::volatile_bytes`])
//!   holds the newest acknowledged data, so of the acknowledged writes not
//!   otherwise durable the newest, up to that many bytes, are lost, and
//!   the oldest of them may lose only its tail pages (its first pages were
//!   destaged first: torn). A device without a write buffer (DRAM mode,
//!   `write_buffer=0`) loses only what is in flight;
//! * lost bytes revert newest first to what each write overwrote, except
//!   bytes that a newer durable write holds: so overlapping lost writes
//!   give back the oldest durable contents.
//!
//! The log is bounded by the cache: an entry leaves it once a flush covers
//! it, once it is FUA and complete, or, oldest first, once the log holds
//! more than the write buffer can (a real drive has destaged it by then).
//! The device comes back at once (no restore time is modelled); its
//! timing model carries on. With several workers, the write that cuts is
//! the N-th to reach the data, and a write submitted just before the cut
//! whose data arrives just after it persists.

use crate::data::{Data, Way};
use crate::fault::{mix, TEAR_UNIT};
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

/// One write since the data was last durable.
#[derive(Debug)]
struct Entry {
    seq: u64,
    offset: u64,
    /// What it overwrote.
    old: Vec<u8>,
    /// Its modelled completion time.
    done: u64,
    /// Durable on completion (FUA).
    fua: bool,
}

impl Entry {
    fn end(&self) -> u64 {
        self.offset + self.old.len() as u64
    }
}

/// What one cut lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CutReport {
    /// Acknowledged writes that lost data (wholly or their tail pages).
    pub writes_lost: u64,
    /// Writes that kept some pages and lost others (acknowledged or not).
    pub writes_torn: u64,
    /// Writes and flushes in flight, completed with EIO.
    pub commands_aborted: u64,
    /// Bytes that reverted.
    pub bytes_lost: u64,
}

/// The undo log (module docs).
#[derive(Debug, Default)]
pub struct UndoLog {
    entries: VecDeque<Entry>,
    /// Flushes: (completion time, last write sequence covered, own sequence).
    flushes: Vec<(u64, u64, u64)>,
    seq: u64,
    /// Bytes the entries saved.
    bytes: u64,
    /// The write cache's size: more than this in the log has been destaged.
    limit: u64,
    /// Commands in flight at a cut, not yet seen completing (EIO).
    aborted: HashSet<u64>,
    seed: u64,
}

impl UndoLog {
    /// A log for a cache of `limit` bytes; tears are drawn from `seed`.
    pub fn new(limit: u64, seed: u64) -> UndoLog {
        UndoLog {
            limit,
            seed,
            ..UndoLog::default()
        }
    }

    /// Store `buf`'s first `keep` bytes at `offset` of `data` at time
    /// `now`, saving what they overwrite; the write completes at `done`.
    /// Returns its sequence number.
    pub fn write(
        &mut self,
        data: &Data,
        now: u64,
        offset: u64,
        buf: &mut [u8],
        (done, fua): (u64, bool),
    ) -> u64 {
        self.prune(now);
        let mut old = vec![0u8; buf.len()];
        data.copy(offset as usize, &mut old, Way::Out);
        data.copy(offset as usize, buf, Way::In);
        self.seq += 1;
        self.bytes += old.len() as u64;
        self.entries.push_back(Entry {
            seq: self.seq,
            offset,
            old,
            done,
            fua,
        });
        self.seq
    }

    /// A flush submitted now, completing at `done`: it covers every write
    /// logged so far. Returns its sequence number.
    pub fn flush(&mut self, done: u64) -> u64 {
        let covers = self.seq;
        self.seq += 1;
        self.flushes.push((done, covers, self.seq));
        self.seq
    }

    /// Forget what is durable at `now` (module docs on the bound).
    fn prune(&mut self, now: u64) {
        let mut covered = 0;
        self.flushes.retain(|&(done, covers, _)| {
            if done <= now {
                covered = covered.max(covers);
            }
            done > now
        });
        while let Some(e) = self.entries.front() {
            let complete = e.done <= now;
            let durable = e.seq <= covered || (complete && (e.fua || self.bytes > self.limit));
            if !durable {
                break;
            }
            self.bytes -= e.old.len() as u64;
            self.entries.pop_front();
        }
    }

    /// Whether command `seq` was in flight at a cut (it then fails); asks
    /// once.
    pub fn aborted(&mut self, seq: u64) -> bool {
        self.aborted.remove(&seq)
    }

    /// Cut the power at `now`, the write buffer holding `cached` bytes of
    /// acknowledged writes' data: revert `data` to what is durable.
    pub fn cut(&mut self, data: &Data, now: u64, cached: u64) -> CutReport {
        self.prune(now);
        let mut report = CutReport::default();
        for &(_, _, seq) in &self.flushes {
            self.aborted.insert(seq);
            report.commands_aborted += 1;
        }
        let in_flight: u64 = self
            .entries
            .iter()
            .filter(|e| e.done > now)
            .map(|e| e.old.len() as u64)
            .sum();
        let mut window = cached.saturating_sub(in_flight);
        // Byte ranges a newer durable write (or durable prefix) holds.
        let mut settled: Vec<(u64, u64)> = Vec::new();
        for e in self.entries.iter().rev() {
            let len = e.old.len() as u64;
            let kept = if e.done > now {
                self.aborted.insert(e.seq);
                report.commands_aborted += 1;
                // A drawn prefix of its pages reached the medium.
                (mix(self.seed, e.seq, e.offset) % len.div_ceil(TEAR_UNIT)) * TEAR_UNIT
            } else if e.fua || window == 0 {
                len
            } else {
                let lose = len.min(window);
                window -= lose;
                (len - lose) / TEAR_UNIT * TEAR_UNIT
            };
            if kept < len {
                let reverted = revert(data, e, e.offset + kept, &settled);
                report.bytes_lost += reverted;
                if e.done <= now && reverted > 0 {
                    report.writes_lost += 1;
                }
                if kept > 0 {
                    report.writes_torn += 1;
                }
            }
            if kept > 0 {
                settled.push((e.offset, e.offset + kept));
            }
        }
        self.entries.clear();
        self.flushes.clear();
        self.bytes = 0;
        report
    }
}

/// Restore entry `e`'s saved bytes from `from` to its end, except those in
/// `settled`; returns how many were restored.
fn revert(data: &Data, e: &Entry, from: u64, settled: &[(u64, u64)]) -> u64 {
    let mut pieces = vec![(from, e.end())];
    for &(s, t) in settled {
        pieces = pieces
            .into_iter()
            .flat_map(|(a, b)| {
                if t <= a || b <= s {
                    vec![(a, b)]
                } else {
                    [(a, s.max(a)), (t.min(b), b)]
                        .into_iter()
                        .filter(|(x, y)| x < y)
                        .collect()
                }
            })
            .collect();
    }
    let mut n = 0;
    for (a, b) in pieces {
        let at = (a - e.offset) as usize..(b - e.offset) as usize;
        let mut old = e.old[at].to_vec();
        data.copy(a as usize, &mut old, Way::In);
        n += b - a;
    }
    n
}

/// A device's power-cut state.
pub struct Power {
    log: Mutex<UndoLog>,
    /// Writes that have reached the data.
    pub(crate) writes: AtomicU64,
    pub(crate) cut_after: u64,
}

impl Power {
    /// The state for a device with `p`, when it asks for a power cut and
    /// keeps data (not `nocopy`); its cache is the model's write buffer
    /// (none in DRAM mode).
    pub fn of(p: &crate::config::Params) -> Option<Power> {
        let f = &p.faults;
        let cache = if p.dram { 0 } else { p.write_buffer };
        (f.power_cut() && !p.nocopy).then(|| Power::new(cache, f.power_cut_after, f.seed))
    }

    /// The state for a device with `cache` bytes of write cache.
    pub fn new(cache: u64, cut_after: u64, seed: u64) -> Power {
        Power {
            log: Mutex::new(UndoLog::new(cache, seed)),
            writes: AtomicU64::new(0),
            cut_after,
        }
    }

    pub(crate) fn log(&self) -> std::sync::MutexGuard<'_, UndoLog> {
        // The log is consistent between calls: a panic cannot leave half an entry.
        self.log.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A command's result `res`, or EIO when it was in flight at a cut.
    pub fn result(&self, seq: u64, res: i64) -> i64 {
        if seq > 0 && self.log().aborted(seq) {
            -5
        } else {
            res
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KB4: usize = 4096;

    fn block(data: &Data, page: usize) -> u8 {
        let mut b = [0u8; 1];
        data.copy(page * KB4, &mut b, Way::Out);
        b[0]
    }

    fn write(
        log: &mut UndoLog,
        data: &Data,
        now: u64,
        page: usize,
        pages: usize,
        v: u8,
        done: u64,
    ) -> u64 {
        let mut buf = vec![v; pages * KB4];
        log.write(data, now, (page * KB4) as u64, &mut buf, (done, false))
    }

    #[test]
    fn overlapping_lost_writes_give_back_the_oldest_durable_contents() {
        let data = Data::zeroed(1 << 20).unwrap();
        let mut log = UndoLog::new(1 << 20, 1);
        write(&mut log, &data, 0, 0, 1, 1, 10); // made durable by the flush
        let f = log.flush(20);
        write(&mut log, &data, 30, 0, 1, 2, 40);
        write(&mut log, &data, 50, 0, 1, 3, 60);
        write(&mut log, &data, 70, 1, 1, 4, 80);
        assert_eq!(block(&data, 0), 3);
        let r = log.cut(&data, 100, 1 << 20);
        assert_eq!((block(&data, 0), block(&data, 1)), (1, 0));
        assert_eq!(r.writes_lost, 3);
        assert_eq!(r.bytes_lost, 3 * KB4 as u64);
        assert!(!log.aborted(f), "the flush had completed");
    }

    #[test]
    fn a_newer_fua_write_keeps_its_bytes_when_an_older_cached_one_reverts() {
        let data = Data::zeroed(1 << 20).unwrap();
        let mut log = UndoLog::new(1 << 20, 1);
        write(&mut log, &data, 0, 0, 2, 7, 10); // cached, two pages
        let mut fua = vec![9u8; KB4];
        log.write(&data, 20, KB4 as u64, &mut fua, (30, true));
        let r = log.cut(&data, 100, 1 << 20);
        assert_eq!((block(&data, 0), block(&data, 1)), (0, 9));
        assert_eq!((r.writes_lost, r.bytes_lost), (1, KB4 as u64));
    }

    #[test]
    fn only_the_newest_cached_bytes_are_lost_and_the_boundary_write_is_torn() {
        let data = Data::zeroed(1 << 20).unwrap();
        let mut log = UndoLog::new(1 << 20, 1);
        write(&mut log, &data, 0, 0, 4, 1, 10);
        write(&mut log, &data, 20, 4, 4, 2, 30);
        // 6 pages still cached: the second write, and the last 2 of the first.
        let r = log.cut(&data, 100, 6 * KB4 as u64);
        let pages: Vec<u8> = (0..8).map(|p| block(&data, p)).collect();
        assert_eq!(pages, [1, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!((r.writes_lost, r.writes_torn), (2, 1));
    }

    #[test]
    fn writes_and_flushes_in_flight_fail_and_keep_at_most_a_prefix() {
        let data = Data::zeroed(1 << 20).unwrap();
        let mut log = UndoLog::new(0, 3); // no cache: only in-flight data is lost
        write(&mut log, &data, 0, 0, 1, 5, 10);
        let w = write(&mut log, &data, 20, 8, 8, 6, 500);
        let f = log.flush(600);
        let r = log.cut(&data, 100, 0);
        assert_eq!(block(&data, 0), 5, "acknowledged, no cache: durable");
        let kept = (8..16).take_while(|&p| block(&data, p) == 6).count();
        assert!((8..16).skip(kept).all(|p| block(&data, p) == 0), "a prefix");
        assert!(kept < 8);
        assert_eq!((r.writes_lost, r.commands_aborted), (0, 2));
        assert_eq!(r.bytes_lost, ((8 - kept) * KB4) as u64);
        assert!(log.aborted(w) && log.aborted(f));
        assert!(!log.aborted(w), "asked once");
    }

    #[test]
    fn the_log_keeps_no_more_than_the_cache_holds() {
        let data = Data::zeroed(1 << 20).unwrap();
        let mut log = UndoLog::new(4 * KB4 as u64, 1);
        for i in 0..32 {
            write(&mut log, &data, i * 10, i as usize, 1, 1, i * 10 + 5);
        }
        assert!(log.bytes <= 5 * KB4 as u64, "{}", log.bytes);
        let r = log.cut(&data, 1_000, 1 << 20);
        assert!(r.writes_lost <= 5, "{r:?}");
        assert_eq!(block(&data, 0), 1, "the oldest were destaged");
    }
}
