//! What every part of the device model shares, below the device and its
//! DRAM units: a command's operation and byte range ([`Op`], [`Extent`]),
//! and the resources' time keeping ([`Timeline`], [`earliest`],
//! [`per_pages`]).

use std::collections::VecDeque;

/// A shared transfer resource (a channel, the host link) that serves
/// whoever is ready: reservations fill the earliest gap long enough, so a
/// transfer whose data is ready early does not queue behind one reserved
/// for later (no head-of-line blocking from submission order).
#[derive(Clone, Debug, Default)]
pub(crate) struct Timeline {
    /// Disjoint busy intervals sorted by start (and so by end).
    busy: VecDeque<(u64, u64)>,
}

impl Timeline {
    /// Reserve `dur` ns starting no earlier than `at`; intervals ending
    /// before `now` (no later request can start before its submission) are
    /// forgotten. Returns the end of the transfer.
    pub(crate) fn reserve(&mut self, at: u64, dur: u64, now: u64) -> u64 {
        self.reserve_admitted(at, dur, now, |_| Ok(()))
    }

    /// [`Timeline::reserve`], where `admit` may refuse the place found
    /// (its start) and name a time to look again from
    /// ([`crate::ledger`]: a frame with no room left).
    pub(crate) fn reserve_admitted(
        &mut self,
        at: u64,
        dur: u64,
        now: u64,
        mut admit: impl FnMut(u64) -> Result<(), u64>,
    ) -> u64 {
        if dur == 0 {
            return at;
        }
        let mut at = at;
        loop {
            let (i, start) = self.place(at, dur, now);
            match admit(start) {
                Ok(()) => return self.book(i, start, dur),
                Err(from) => at = from.max(start.saturating_add(1)),
            }
        }
    }

    /// Where [`Timeline::reserve`] would put `dur` ns from `at`: the index
    /// of its interval and its start (intervals ending before `now` are
    /// forgotten). Nothing is booked.
    #[inline]
    fn place(&mut self, at: u64, dur: u64, now: u64) -> (usize, u64) {
        let end = |s: u64| s.saturating_add(dur);
        while self.busy.front().is_some_and(|&(_, e)| e <= now) {
            self.busy.pop_front();
        }
        // Most reservations: after every interval booked (no search).
        if self.busy.back().is_none_or(|&(_, e)| e <= at) {
            return (self.busy.len(), at);
        }
        // First interval that ends after `at`: everything before it is past.
        let mut i = self.busy.partition_point(|&(_, e)| e <= at);
        let mut start = at;
        while i < self.busy.len() {
            let (s, e) = self.busy[i];
            if s >= end(start) {
                break;
            }
            start = start.max(e);
            i += 1;
        }
        (i, start)
    }

    /// Book `dur` ns from `start` at index `i`, as [`Timeline::place`]
    /// gave them; returns the end.
    #[inline]
    fn book(&mut self, i: usize, start: u64, dur: u64) -> u64 {
        let end = start.saturating_add(dur);
        if i == self.busy.len() {
            self.busy.push_back((start, end));
        } else {
            self.busy.insert(i, (start, end));
        }
        end
    }
}

/// A command's operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Trim,
    Flush,
}

/// A byte range of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub offset: u64,
    pub len: u64,
}

/// `per_4k_ns` per 4 KiB for `pages` pages of `page_bytes`, saturating.
pub(crate) fn per_pages(per_4k_ns: u64, pages: u64, page_bytes: u32) -> u64 {
    let ns = u128::from(per_4k_ns) * u128::from(pages) * u128::from(page_bytes) / 4096;
    u64::try_from(ns).unwrap_or(u64::MAX)
}

/// The index and time of the earliest-free of some resources ((0, 0) for none).
pub(crate) fn earliest(free: &[u64]) -> (usize, u64) {
    free.iter()
        .copied()
        .enumerate()
        .min_by_key(|&(_, f)| f)
        .unwrap_or((0, 0))
}
