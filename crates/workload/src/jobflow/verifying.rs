//! The flow's verification: the reads that check what the job wrote
//! (after each pass, every `verify_backlog` writes, or replayed with
//! `experimental_verify`), `verify_only`'s dry run, and the state saved
//! and loaded between runs (`verify_state_save`, `verify_state_load`).

use super::written::Piece;
use super::{splitmix, trim, vstate, FlowIo, JobFlow, Stage, Tag};
use crate::verify::{state::SavedState, Expect, Layout};
use ssdready_core::req::Ddir;

impl JobFlow {
    /// Verify only what a saved state vouches for (`verify_state_load`).
    pub fn with_state(mut self, s: SavedState) -> Self {
        self.state = Some(s);
        self
    }

    /// How blocks are laid out for verification, when the job verifies.
    #[inline]
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// Blocks verification left unchecked because a loaded state could not
    /// vouch for them.
    pub fn skipped_by_state(&self) -> u64 {
        self.skipped_by_state
    }

    /// The state to save when the job ends (`verify_state_save`): writes
    /// issued and the last completed ones.
    /// With `verify_policy=fsynced`, only the writes before the last
    /// fsync that completed.
    pub fn saved_state(&self, name: &str, index: u64) -> SavedState {
        let vstate::SyncPoint { issued, completed } = match &self.fsynced {
            Some(f) => f.safe(),
            None => self.sync_point(),
        };
        SavedState {
            depth: self.depth as u32,
            files: self.recent.len() as u32,
            issued,
            index,
            name: name.to_string(),
            completed,
        }
    }

    /// Writes issued so far and the last completed ones, newest first.
    pub(super) fn sync_point(&self) -> vstate::SyncPoint {
        let mut completed = Vec::new();
        for (f, ring) in self.recent.iter().enumerate() {
            completed.extend(ring.iter().rev().map(|&o| (f as u64, o)));
        }
        vstate::SyncPoint {
            issued: self.c.writes_issued,
            completed,
        }
    }

    /// (I/Os, bytes) per direction that a `verify_only` dry run counted as
    /// done without doing them (fio counts them in the job's statistics);
    /// zero after the first call.
    pub fn take_dry_run(&mut self) -> [(u64, u64); 3] {
        std::mem::take(&mut self.dry_counts)
    }

    /// The seed of write number `generation`'s data.
    pub(super) fn seed_for(&self, generation: u64) -> u64 {
        splitmix(self.seed ^ generation.wrapping_mul(0x2545_f491_4f6c_dd1d))
    }

    /// `verify_only` on a writing job: what the pass would write, logged
    /// without writing (fio's `do_dry_run`).
    pub(super) fn dry_run_pass(&mut self) {
        while !self.pass_over() {
            let Some((file, ddir, offset, len)) = self.plan.next_io() else {
                self.plan_done = true;
                break;
            };
            self.count_issue(ddir, len);
            self.c.bytes_done += u64::from(len);
            let d = &mut self.dry_counts[ddir.idx()];
            (d.0, d.1) = (d.0 + 1, d.1 + u64::from(len));
            if ddir == Ddir::Write {
                let generation = self.c.writes_issued;
                self.c.writes_issued += 1;
                let p = Piece {
                    file,
                    offset,
                    len,
                    generation,
                    seed: 0,
                };
                self.written.add(p);
                if let Some(t) = self.trims.as_deref_mut() {
                    // The writing job trimmed the same blocks: expect them so.
                    t.written(p);
                    while t.leftover().is_some() {}
                }
                // fio counts a dry run's writes as completed ones (its
                // saved state lists them).
                self.note_completed_write(file, offset);
            }
        }
        self.stage = Stage::PassEnd;
    }

    /// The read that checks `p`; None when there is nothing to check (a
    /// trimmed block with `trim_verify_zero=0`).
    pub(super) fn check_of(&mut self, p: &Piece) -> Option<FlowIo> {
        let readback = match self.trims.as_deref_mut() {
            Some(t) => t.readback(p),
            None => trim::Readback::Data,
        };
        let expect = match readback {
            trim::Readback::Skip => return None,
            trim::Readback::Zeroes => Expect {
                zeroes: true,
                ..Expect::default()
            },
            trim::Readback::Data if self.check_generation => Expect {
                generation: Some(p.generation),
                seed: Some(p.seed),
                zeroes: false,
            },
            trim::Readback::Data => Expect::default(),
        };
        Some(FlowIo::Rw {
            file: p.file,
            ddir: Ddir::Read,
            offset: p.offset,
            len: p.len,
            tag: Tag::Check(expect),
        })
    }

    /// fio's `check_get_trim`: a trim of a chosen written block when one
    /// is due (`trim_backlog`), or at the pass's end (`leftover`).
    pub(super) fn trim_io(&mut self, leftover: bool) -> Option<FlowIo> {
        let unverified = self.verify_phase.then(|| self.written.len() as u64);
        let t = self.trims.as_deref_mut()?;
        let p = match leftover {
            true => t.leftover(),
            false => t.next(unverified),
        }?;
        Some(FlowIo::Rw {
            file: p.file,
            ddir: Ddir::Trim,
            offset: p.offset,
            len: p.len,
            tag: Tag::Plain,
        })
    }

    /// fio's `check_get_verify`: with `verify_backlog`, a batch of reads
    /// whenever the unverified writes reach a multiple of it.
    pub(super) fn backlog_read(&mut self) -> Option<FlowIo> {
        let backlog = self.backlog?;
        if self.written.is_empty() {
            return None;
        }
        if self.batch_left == 0 {
            if !(self.written.len() as u64).is_multiple_of(backlog) || self.last_completed_read {
                return None;
            }
            self.batch_left = self.backlog_batch;
        }
        loop {
            let p = self.written.pop()?;
            if let Some(io) = self.check_of(&p) {
                self.batch_left -= 1;
                self.c.rw_issued += 1;
                return Some(io);
            }
        }
    }

    /// The next block of the verification pass, if any.
    pub(super) fn verify_read(&mut self) -> Option<FlowIo> {
        if self.experimental {
            return self.replay_read();
        }
        loop {
            let p = self.written.pop()?;
            if let Some(io) = self.verify_check(p) {
                return Some(io);
            }
        }
    }

    /// The read that checks `p` in the verification pass; None: nothing to
    /// check (from here on, when a loaded state cannot vouch for it).
    fn verify_check(&mut self, p: Piece) -> Option<FlowIo> {
        if let Some(s) = &self.state {
            // A write the saved job never issued (or, fsynced, issued after
            // its last sync) is not there to check: stop, as newer fio.
            if p.generation >= s.issued
                || s.should_stop(self.c.verified, u64::from(p.file), p.offset)
            {
                self.skipped_by_state += 1 + self.written.len() as u64;
                while self.written.pop().is_some() {}
                return None;
            }
        }
        self.check_of(&p)
    }

    /// `experimental_verify`: the pass's writes replayed from its start.
    pub(super) fn replay_read(&mut self) -> Option<FlowIo> {
        while self.replay_written < self.c.pass_written {
            let (file, ddir, offset, len) = self.replay.as_mut()?.next_io()?;
            if ddir != Ddir::Write {
                continue;
            }
            self.replay_written += u64::from(len);
            let generation = self.replay_generation;
            self.replay_generation += 1;
            let p = Piece {
                file,
                offset,
                len,
                generation,
                seed: self.seed_for(generation),
            };
            if let Some(io) = self.check_of(&p) {
                return Some(io);
            }
        }
        None
    }

    /// Remember the last `depth` completed writes of each file.
    pub(super) fn note_completed_write(&mut self, file: u32, offset: u64) {
        let n = self.recent.len();
        let ring = &mut self.recent[file as usize % n];
        if ring.len() == self.depth {
            ring.pop_front();
        }
        ring.push_back(offset);
    }
}
