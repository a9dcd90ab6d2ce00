//! fio's verify trims (`trim_percentage`, `trim_backlog`,
//! `trim_backlog_batch`, `trim_verify_zero`): of the blocks a job writes
//! with verification, `trim_percentage` percent are chosen to be trimmed
//! (evenly spread by write number: of writes 0..n, ⌊n·pct/100⌋ are
//! chosen, so a `verify_only` job knows which; fio draws each at random),
//! and whenever the blocks written and not yet
//! verified reach a multiple of `trim_backlog` (and the last request
//! completed was not a trim) a batch of up to `trim_backlog_batch` of the
//! chosen ones is trimmed (fio's `check_get_trim`). Those left when the
//! pass ends are trimmed then. Reading a trimmed block back must give
//! zeroes (`trim_verify_zero`, the default); otherwise it is not verified.
//! Trims do not count in the pass's bytes or `number_ios`.

use super::written::Piece;
use ssdready_core::spec_verify::TrimSpec;
use std::collections::{HashSet, VecDeque};

/// The trims of one worker.
#[derive(Debug)]
pub(super) struct Trims {
    spec: TrimSpec,
    /// Blocks written but not verified (fio's `io_hist_len`) when the job
    /// does not verify them.
    logged: u64,
    /// Chosen, not yet trimmed (fio's `trim_list`).
    chosen: VecDeque<Piece>,
    /// Trims left in the batch under way.
    batch_left: u64,
    /// The last request completed was a trim.
    last_was_trim: bool,
    /// Trimmed blocks not yet read back: (file, offset).
    trimmed: HashSet<(u32, u64)>,
}

/// What verifying a written block means after the trims.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Readback {
    /// Not trimmed: its data.
    Data,
    /// Trimmed: zeroes.
    Zeroes,
    /// Trimmed and `trim_verify_zero=0`: nothing to check.
    Skip,
}

impl Trims {
    pub fn new(spec: TrimSpec) -> Self {
        Trims {
            spec,
            logged: 0,
            chosen: VecDeque::new(),
            batch_left: 0,
            last_was_trim: false,
            trimmed: HashSet::new(),
        }
    }

    /// A write with verify headers completed.
    pub fn written(&mut self, p: Piece) {
        self.logged += 1;
        // A newer write of a trimmed block is data again.
        self.trimmed.remove(&(p.file, p.offset));
        let (pct, n) = (u64::from(self.spec.percentage), p.generation);
        if (n + 1) * pct / 100 > n * pct / 100 {
            self.chosen.push_back(p);
        }
    }

    /// A request completed: `trim` when it was one of these trims.
    pub fn completed(&mut self, trim: bool) {
        self.last_was_trim = trim;
    }

    /// The next block to trim, if one is due; `unverified`: the blocks
    /// written and not yet verified (None: the job does not verify them).
    pub fn next(&mut self, unverified: Option<u64>) -> Option<Piece> {
        if self.chosen.is_empty() {
            self.batch_left = 0;
            return None;
        }
        if self.batch_left > 0 {
            self.batch_left -= 1;
            return self.take();
        }
        let hist = unverified.unwrap_or(self.logged);
        if !hist.is_multiple_of(self.spec.backlog) || self.last_was_trim {
            return None;
        }
        let batch = match self.spec.batch {
            0 => self.spec.backlog,
            b => b,
        };
        self.batch_left = batch - 1;
        self.take()
    }

    /// A chosen block left when the pass ends.
    pub fn leftover(&mut self) -> Option<Piece> {
        self.take()
    }

    fn take(&mut self) -> Option<Piece> {
        let p = self.chosen.pop_front()?;
        self.trimmed.insert((p.file, p.offset));
        Some(p)
    }

    /// What reading back the block `p` checks.
    pub fn readback(&mut self, p: &Piece) -> Readback {
        if self.trimmed.is_empty() || !self.trimmed.remove(&(p.file, p.offset)) {
            return Readback::Data;
        }
        match self.spec.zero {
            true => Readback::Zeroes,
            false => Readback::Skip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(i: u64) -> Piece {
        Piece {
            file: 0,
            offset: i * 4096,
            len: 4096,
            generation: i,
            seed: i,
        }
    }

    fn trims(percentage: u32, backlog: u64, batch: u64) -> Trims {
        Trims::new(TrimSpec {
            percentage,
            backlog,
            batch,
            zero: true,
        })
    }

    #[test]
    fn the_share_chosen_is_the_percentage() {
        for pct in [1, 10, 33, 50, 99, 100] {
            let mut t = trims(pct, 1, 0);
            for i in 0..1000 {
                t.written(piece(i));
            }
            assert_eq!(t.chosen.len() as u32, pct * 10, "{pct}%");
        }
    }

    #[test]
    fn a_batch_comes_at_each_multiple_of_the_backlog() {
        let mut t = trims(50, 4, 0);
        for i in 0..3 {
            t.written(piece(i));
        }
        assert_eq!(t.next(None), None, "3 written: not a multiple of 4");
        t.written(piece(3));
        // Blocks 1 and 3 were chosen: the batch of 4 trims both.
        assert_eq!(t.next(None), Some(piece(1)));
        t.completed(true);
        assert_eq!(t.next(None), Some(piece(3)));
        assert_eq!(t.next(None), None);
        assert_eq!(t.readback(&piece(1)), Readback::Zeroes);
        assert_eq!(t.readback(&piece(1)), Readback::Data, "read once");
        assert_eq!(t.readback(&piece(2)), Readback::Data);
        // Rewritten after its trim: data again.
        t.written(piece(3));
        assert_eq!(t.readback(&piece(3)), Readback::Data);
    }

    #[test]
    fn no_trim_right_after_a_trim_completed() {
        let mut t = trims(100, 1, 1);
        t.written(piece(0));
        t.written(piece(1));
        assert_eq!(t.next(Some(2)), Some(piece(0)));
        t.completed(true);
        assert_eq!(t.next(Some(2)), None);
        t.completed(false);
        assert_eq!(t.next(Some(2)), Some(piece(1)));
        assert_eq!(t.leftover(), None);
    }
}
