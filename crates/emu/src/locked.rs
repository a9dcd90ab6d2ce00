//! Two small cells that let one part of the model be used either by the
//! thread that owns the whole model (`&mut`: no lock taken, so the
//! virtual-time simulation pays nothing and stays deterministic) or by
//! several threads that hold the model shared (`&`: each part behind its
//! own lock, [`crate::device`]'s shared reads, or, for the controller's
//! cores, atomics: [`FreeTimes`]).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};

/// A part of the model behind its own lock. Its holders leave nothing
/// half-done that a later holder could trip on (a panic fails the whole
/// device, [`crate::shared`]), so a poisoned one is used as it is. Each
/// is on cache lines of its own (two, for the adjacent-line prefetch), so
/// that threads holding two dies' or two channels' locks, side by side in
/// the model's lists, do not pass one line back and forth.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Locked<T>(Mutex<T>);

impl<T> Locked<T> {
    pub fn new(v: T) -> Locked<T> {
        Locked(Mutex::new(v))
    }

    /// The part, for the owner of the whole model: no lock.
    #[inline]
    pub fn get_mut(&mut self) -> &mut T {
        self.0.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// The part, for one of several threads sharing the model.
    #[inline]
    pub fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl<T: Clone> Clone for Locked<T> {
    /// An independent copy (a cloned device is a device of its own).
    fn clone(&self) -> Self {
        Locked::new(self.lock().clone())
    }
}

/// A time or count that only grows, readable and raisable by any thread.
#[derive(Debug, Default)]
pub struct Stamp(AtomicU64);

impl Stamp {
    #[inline]
    pub fn load(&self) -> u64 {
        self.0.load(Relaxed)
    }

    /// Raise it to `v` if it is below; returns the value after.
    #[inline]
    pub fn raise(&self, v: u64) -> u64 {
        self.0.fetch_max(v, Relaxed).max(v)
    }

    /// Raise it to `v` if it is below, for its only user (a plain store).
    #[inline]
    pub fn raise_mut(&mut self, v: u64) {
        let s = self.0.get_mut();
        *s = (*s).max(v);
    }

    /// Its value before adding one.
    #[inline]
    pub fn next(&self) -> u64 {
        self.0.fetch_add(1, Relaxed)
    }
}

impl Clone for Stamp {
    fn clone(&self) -> Self {
        Stamp(AtomicU64::new(self.load()))
    }
}

/// When each of a few like resources (a controller's cores) is next free:
/// a command takes the earliest free one. The owner of the whole model
/// takes it with plain loads and stores; threads sharing the model take it
/// with one compare-and-swap, no lock: the core found earliest is still
/// the earliest when the swap succeeds (free times only grow), so the
/// result is the one a lock would give for the same order of commands.
#[derive(Debug, Default)]
pub struct FreeTimes(Vec<AtomicU64>);

impl FreeTimes {
    /// `n` resources, free from time 0.
    pub fn new(n: usize) -> FreeTimes {
        FreeTimes((0..n).map(|_| AtomicU64::new(0)).collect())
    }

    /// The earliest free resource's index and time, the first of equals
    /// ((0, 0) for none).
    fn earliest(&self) -> (usize, u64) {
        let mut best: Option<(usize, u64)> = None;
        for (i, f) in self.0.iter().enumerate() {
            let f = f.load(Relaxed);
            if best.is_none_or(|(_, b)| f < b) {
                best = Some((i, f));
            }
        }
        best.unwrap_or((0, 0))
    }

    /// Take the earliest free resource at `t` for `cost` ns; returns when
    /// it is done. For the owner of the whole model.
    pub fn take_mut(&mut self, t: u64, cost: u64) -> u64 {
        self.take_mut_admitted(t, cost, |_| Ok(()))
    }

    /// [`FreeTimes::take_mut`], where `admit` may refuse the start found
    /// and name a time to look again from ([`crate::ledger`]).
    pub fn take_mut_admitted(
        &mut self,
        t: u64,
        cost: u64,
        mut admit: impl FnMut(u64) -> Result<(), u64>,
    ) -> u64 {
        let mut t = t;
        loop {
            let (i, f) = self.earliest();
            let start = t.max(f);
            if let Err(from) = admit(start) {
                t = from.max(start.saturating_add(1));
                continue;
            }
            let end = start.saturating_add(cost);
            if let Some(c) = self.0.get_mut(i) {
                *c.get_mut() = end;
            }
            return end;
        }
    }

    /// [`FreeTimes::take_mut`] for one of several threads (type docs).
    pub fn take(&self, t: u64, cost: u64) -> u64 {
        loop {
            let (i, f) = self.earliest();
            let end = t.max(f).saturating_add(cost);
            let Some(c) = self.0.get(i) else {
                return end;
            };
            if c.compare_exchange(f, end, Relaxed, Relaxed).is_ok() {
                return end;
            }
        }
    }
}

impl Clone for FreeTimes {
    fn clone(&self) -> Self {
        FreeTimes(
            self.0
                .iter()
                .map(|f| AtomicU64::new(f.load(Relaxed)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_side_by_side_share_no_cache_line() {
        let parts: Vec<Locked<u64>> = (0..3).map(Locked::new).collect();
        let at = |i: usize| &parts[i] as *const Locked<u64> as usize;
        assert!(at(1) - at(0) >= 128 && at(2) - at(1) >= 128);
        assert_eq!(at(0) % 128, 0);
    }

    #[test]
    fn free_times_give_the_earliest_as_the_owner_and_threads_alike() {
        let mut a = FreeTimes::new(3);
        let b = a.clone();
        for (t, cost) in [(0, 5), (0, 7), (1, 2), (2, 4), (10, 1), (3, 9), (3, 3)] {
            assert_eq!(a.take_mut(t, cost), b.take(t, cost), "at {t} for {cost}");
        }
    }

    #[test]
    fn threads_taking_free_times_at_once_never_share_a_slot() {
        // 4 threads × 1,000 commands of 10 ns at time 0 on 2 resources:
        // exactly the ends 10, 20, …, 20,000, each twice (one per
        // resource), whoever took which.
        let f = FreeTimes::new(2);
        let mut ends: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..1000).map(|_| f.take(0, 10)).collect::<Vec<_>>()))
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        ends.sort_unstable();
        let want: Vec<u64> = (1..=2000).flat_map(|k| [k * 10, k * 10]).collect();
        assert_eq!(ends, want);
    }
}
