//! Two small cells that let one part of the model be used either by the
//! thread that owns the whole model (`&mut`: no lock taken, so the
//! virtual-time simulation pays nothing and stays deterministic) or by
//! several threads that hold the model shared (`&`: each part behind its
//! own lock, [`crate::device`]'s shared reads).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};

/// A part of the model behind its own lock. Its holders leave nothing
/// half-done that a later holder could trip on (a panic fails the whole
/// device, [`crate::shared`]), so a poisoned one is used as it is.
#[derive(Debug, Default)]
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
