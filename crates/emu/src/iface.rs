//! The host's side of a device's command interface: how many commands it
//! may have outstanding (`iface_depth`). A device without a command queue
//! (Shin's DRAM SSD behind its driver) takes one command; the host issues
//! the next only once it has *seen* the previous one complete, so the time
//! from a completion to the host's noticing it — a poll loop's next look,
//! or an interrupt and a wake-up — is time the device sits idle. That is
//! what makes interrupts cost throughput, not only latency, on such a
//! device, and what temporal merge amortises.
//!
//! An [`Interface`] is a counting gate shared by everything that issues
//! commands to one device (the engines of every worker, a merge layer's
//! winners or dispatcher). A permit is taken before a command is submitted
//! and given back when the host has seen its completion. Waiting for a
//! permit spins (a polling host) or sleeps (an interrupt-driven one).
//! A wait is bounded by the command ahead: every holder gives its permit
//! back when it sees its completion, or when it is dropped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How a host waits for a permit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// Spin on the gate (a polling host: no sleep, a busy core).
    Spin,
    /// Sleep until a permit is given back (an interrupt-driven host).
    Sleep,
}

/// At most `limit` commands outstanding (0: no limit, every call passes).
#[derive(Debug, Default)]
pub struct Interface {
    limit: usize,
    busy: AtomicUsize,
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    freed: Condvar,
}

impl Interface {
    /// A gate of `limit` permits (0: none needed).
    pub fn new(limit: u32) -> Interface {
        Interface {
            limit: limit as usize,
            ..Interface::default()
        }
    }

    /// Whether commands need a permit.
    pub fn limited(&self) -> bool {
        self.limit > 0
    }

    /// Take a permit if one is free.
    pub fn try_acquire(&self) -> bool {
        if self.limit == 0 {
            return true;
        }
        self.busy
            .fetch_update(Ordering::Acquire, Ordering::Relaxed, |b| {
                (b < self.limit).then_some(b + 1)
            })
            .is_ok()
    }

    /// Take a permit, waiting as `how` says.
    pub fn acquire(&self, how: Wait) {
        while !self.try_acquire() {
            match how {
                Wait::Spin => std::hint::spin_loop(),
                Wait::Sleep => {
                    let guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                    self.sleepers.fetch_add(1, Ordering::SeqCst);
                    if self.busy.load(Ordering::SeqCst) >= self.limit {
                        // The timeout only guards against a missed wake-up.
                        let _ = self.freed.wait_timeout(guard, Duration::from_millis(1));
                    }
                    self.sleepers.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
    }

    /// Wait up to `max` for a permit to be free, as `how` says, without
    /// taking it; whether one is.
    pub fn acquire_within(&self, how: Wait, max: Duration) -> bool {
        let t = std::time::Instant::now();
        while self.limit > 0 && self.busy.load(Ordering::Acquire) >= self.limit {
            let Some(left) = max.checked_sub(t.elapsed()).filter(|l| !l.is_zero()) else {
                return false;
            };
            match how {
                Wait::Spin => std::hint::spin_loop(),
                Wait::Sleep => {
                    let guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
                    self.sleepers.fetch_add(1, Ordering::SeqCst);
                    if self.busy.load(Ordering::SeqCst) >= self.limit {
                        let slice = left.min(Duration::from_millis(1));
                        let _ = self.freed.wait_timeout(guard, slice);
                    }
                    self.sleepers.fetch_sub(1, Ordering::SeqCst);
                }
            }
        }
        true
    }

    /// Give a permit back (the host has seen its command complete).
    pub fn release(&self) {
        if self.limit == 0 {
            return;
        }
        let _ = self
            .busy
            .fetch_update(Ordering::Release, Ordering::Relaxed, |b| b.checked_sub(1));
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.freed.notify_one();
        }
    }

    /// Permits in use.
    pub fn in_use(&self) -> usize {
        self.busy.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn an_unlimited_interface_never_waits() {
        let i = Interface::new(0);
        for _ in 0..1000 {
            assert!(i.try_acquire());
        }
        i.release();
        assert_eq!(i.in_use(), 0);
    }

    #[test]
    fn a_depth_one_interface_admits_one_command_at_a_time() {
        for how in [Wait::Spin, Wait::Sleep] {
            let i = Arc::new(Interface::new(1));
            let inside = Arc::new(AtomicUsize::new(0));
            let most = Arc::new(AtomicUsize::new(0));
            let threads: Vec<_> = (0..4)
                .map(|_| {
                    let (i, inside, most) = (i.clone(), inside.clone(), most.clone());
                    std::thread::spawn(move || {
                        for _ in 0..200 {
                            i.acquire(how);
                            let n = inside.fetch_add(1, Ordering::SeqCst) + 1;
                            most.fetch_max(n, Ordering::SeqCst);
                            std::hint::spin_loop();
                            inside.fetch_sub(1, Ordering::SeqCst);
                            i.release();
                        }
                    })
                })
                .collect();
            for t in threads {
                t.join().unwrap();
            }
            assert_eq!(most.load(Ordering::SeqCst), 1, "{how:?}");
            assert_eq!(i.in_use(), 0);
        }
    }
}
