//! The timing of a device in DRAM mode (no NAND, no FTL: `dram-ssd`,
//! `nvm-lowlat`, `null`), in a form several threads can reserve at once.
//!
//! Such a device's state is only when each of its resources is next free:
//! its `dies` service units, the host link (a `Timeline` for data and
//! one for commands) and its command slots. The units are atomics: a
//! command takes the earliest-free unit with one compare-and-swap, retried
//! if another thread took it first, so two commands on different units
//! never wait for each other. The link and the slots are each behind their
//! own lock, taken only when the device has them (`link_mbps` > 0,
//! `cmd_slots` > 0); a resource that costs nothing (a unit of zero service
//! time, `null`'s) is never touched, since reserving it changes nothing.
//!
//! Reserving resources in this order gives the same completion times as
//! [`crate::device`]'s sequential model did for DRAM mode: the virtual-time
//! simulation, one thread, still gets identical results for the same
//! seed. The real-time front ([`crate::engine`]) calls it without the
//! model's lock.

use crate::config::Params;
use crate::device::basics::{earliest, per_pages, Op, Timeline};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// One service unit: when it is next free and how long it has been busy,
/// alone on its cache line so that units taken by different threads do
/// not share one.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Unit {
    free: AtomicU64,
    busy_ns: AtomicU64,
}

/// The resources of a DRAM-mode device (module docs).
#[derive(Debug)]
pub struct DramUnits {
    units: Vec<Unit>,
    /// Per command: `dram_cmd_ns`, `extent_ns`, `cpl_ns`.
    cmd_ns: u64,
    extent_ns: u64,
    cpl_ns: u64,
    per_4k_ns: u64,
    page_bytes: u32,
    cmd_bytes: u64,
    extent_bytes: u64,
    /// Host link, ps per byte (0: no link to model).
    link_ps_per_byte: u64,
    /// Data and commands on the link, and the latest submission time (for
    /// pruning timelines); taken only when the link is modelled.
    link: Mutex<Link>,
    /// When each command slot is next free (none: `cmd_slots` = 0).
    slots: Option<Mutex<Vec<u64>>>,
    /// `service=exp`: service times drawn from an exponential of the
    /// fixed time's mean, the n-th draw a hash of n (deterministic in
    /// virtual time, where one thread submits).
    exp_service: bool,
    draws: AtomicU64,
}

#[derive(Clone, Debug, Default)]
struct Link {
    data: Timeline,
    commands: Timeline,
    t_now: u64,
}

impl DramUnits {
    /// Idle units for `p` (`p.dies()` of them, at least one).
    pub fn new(p: &Params, link_ps_per_byte: u64) -> DramUnits {
        DramUnits {
            units: (0..p.dies().max(1)).map(|_| Unit::default()).collect(),
            cmd_ns: p.dram_cmd_ns,
            extent_ns: p.extent_ns,
            cpl_ns: p.cpl_ns,
            per_4k_ns: p.dram_per_4k_ns,
            page_bytes: p.page_bytes,
            cmd_bytes: u64::from(p.cmd_bytes),
            extent_bytes: u64::from(p.extent_bytes),
            link_ps_per_byte,
            link: Mutex::new(Link::default()),
            slots: (p.cmd_slots > 0).then(|| Mutex::new(vec![0; p.cmd_slots as usize])),
            exp_service: p.service_exp,
            draws: AtomicU64::new(0),
        }
    }

    /// A command of `extents` extents, `bytes` bytes over `pages` pages,
    /// submitted at `t`: its completion time, never before `t` (the order of
    /// [`crate::device::Device::submit`]: slot, command fetch, unit, data on
    /// the link, completion).
    pub fn submit(&self, t: u64, op: Op, bytes: u64, pages: u64, extents: u64) -> u64 {
        // A command holds its slot to the end: the slots' lock is held
        // across the reservation (a device with slots serialises there).
        let mut slots = self.slots.as_ref().map(lock);
        let slot = slots.as_deref().map(|s| earliest(s));
        let t = slot.map_or(t, |(_, f)| t.max(f));
        let list = if extents > 1 {
            extents.saturating_mul(self.extent_bytes)
        } else {
            0
        };
        let fetched = self.on_link(t, t, |l, now, dur| {
            l.commands
                .reserve(t, dur(self.cmd_bytes.saturating_add(list)), now)
        });
        let done = self
            .serve(t, fetched, op, bytes, pages, extents)
            .max(t)
            .saturating_add(self.cpl_ns);
        if let (Some(s), Some((i, _))) = (slots.as_deref_mut(), slot) {
            s[i] = done;
        }
        done
    }

    /// The unit's part and the data's transfer, from `t`, of a command
    /// submitted at `sub`.
    fn serve(&self, sub: u64, t: u64, op: Op, bytes: u64, pages: u64, extents: u64) -> u64 {
        let per_extent = extents.saturating_mul(self.extent_ns);
        if matches!(op, Op::Trim | Op::Flush) {
            return t.saturating_add(self.cmd_ns).saturating_add(per_extent);
        }
        let service = per_pages(self.per_4k_ns, pages, self.page_bytes).saturating_add(per_extent);
        let service = if self.exp_service {
            self.exp_draw(service)
        } else {
            service
        };
        let ready = t.saturating_add(self.cmd_ns);
        let data = if service == 0 {
            ready // a unit that takes no time is never busy
        } else {
            self.take_unit(ready, service)
        };
        self.on_link(sub, data, |l, now, dur| {
            l.data.reserve(data, dur(bytes), now)
        })
    }

    /// An exponentially distributed time of mean `mean` ns (`service=exp`).
    fn exp_draw(&self, mean: u64) -> u64 {
        let n = self.draws.fetch_add(1, Ordering::Relaxed);
        let h = crate::fault::mix(0x6578_7073_6572_7669, n, 0);
        // A uniform draw in (0, 1], then the inverse of the distribution.
        let u = ((h >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        (-u.ln() * mean as f64).round() as u64
    }

    /// Reserve the earliest-free unit for `service` ns from `ready`;
    /// returns the end of the service.
    fn take_unit(&self, ready: u64, service: u64) -> u64 {
        loop {
            let (i, at) = self
                .units
                .iter()
                .enumerate()
                .map(|(i, u)| (i, u.free.load(Ordering::Acquire)))
                .min_by_key(|&(_, f)| f)
                .unwrap_or((0, 0));
            let end = ready.max(at).saturating_add(service);
            let u = &self.units[i];
            if u.free
                .compare_exchange(at, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                u.busy_ns.fetch_add(service, Ordering::Relaxed);
                return end;
            }
        }
    }

    /// `reserve` on the link for a command submitted at `sub`, with the
    /// link's pruning time (the latest submission: no later reservation
    /// starts before it) and a transfer time for bytes; `at` unchanged when
    /// the link is not modelled.
    fn on_link(
        &self,
        sub: u64,
        at: u64,
        reserve: impl FnOnce(&mut Link, u64, &dyn Fn(u64) -> u64) -> u64,
    ) -> u64 {
        if self.link_ps_per_byte == 0 {
            return at;
        }
        let mut l = lock(&self.link);
        l.t_now = l.t_now.max(sub);
        let now = l.t_now;
        let dur = |bytes: u64| bytes.saturating_mul(self.link_ps_per_byte) / 1000;
        reserve(&mut l, now, &dur)
    }

    /// Busy time per unit, ns.
    pub fn busy_ns(&self) -> Vec<u64> {
        self.units
            .iter()
            .map(|u| u.busy_ns.load(Ordering::Relaxed))
            .collect()
    }
}

impl Clone for DramUnits {
    /// An independent copy of the units' state.
    fn clone(&self) -> Self {
        DramUnits {
            units: self
                .units
                .iter()
                .map(|u| Unit {
                    free: AtomicU64::new(u.free.load(Ordering::Relaxed)),
                    busy_ns: AtomicU64::new(u.busy_ns.load(Ordering::Relaxed)),
                })
                .collect(),
            link: Mutex::new(lock(&self.link).clone()),
            slots: self.slots.as_ref().map(|s| Mutex::new(lock(s).clone())),
            draws: AtomicU64::new(self.draws.load(Ordering::Relaxed)),
            ..*self
        }
    }
}

/// A lock whose holder cannot leave it inconsistent (every update is one
/// assignment), so a poisoned one is used as it is.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// [`DramUnits`] shared between a [`crate::device::Device`] and the
/// real-time front; cloning the device copies them (a clone is a device
/// of its own).
#[derive(Debug)]
pub struct SharedUnits(pub Arc<DramUnits>);

impl Clone for SharedUnits {
    fn clone(&self) -> Self {
        SharedUnits(Arc::new((*self.0).clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_reserving_at_once_never_share_a_unit_period() {
        // 4 units of 1 µs per 4 KiB, 4 threads × 2,000 reads all at t = 0:
        // each unit serves its reads back to back, so the completions are
        // exactly 1, 2, … 2,000 µs, four times over, whoever took which.
        let p = Params::parse("null,channels=4,dram_per_4k_ns=1000").unwrap();
        let units = Arc::new(DramUnits::new(&p, 0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let u = units.clone();
                std::thread::spawn(move || {
                    (0..2000)
                        .map(|_| u.submit(0, Op::Read, 4096, 1, 1))
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        let mut done: Vec<u64> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        done.sort_unstable();
        let expect: Vec<u64> = (1..=2000u64).flat_map(|i| [i * 1000; 4]).collect();
        assert_eq!(done, expect);
        assert_eq!(units.busy_ns(), vec![2_000_000; 4]);
    }

    #[test]
    fn a_clone_is_a_device_of_its_own() {
        let p = Params::parse("null,dram_per_4k_ns=1000").unwrap();
        let a = SharedUnits(Arc::new(DramUnits::new(&p, 0)));
        assert_eq!(a.0.submit(0, Op::Read, 4096, 1, 1), 1000);
        let b = a.clone();
        assert_eq!(b.0.submit(0, Op::Read, 4096, 1, 1), 2000);
        assert_eq!(
            a.0.submit(0, Op::Read, 4096, 1, 1),
            2000,
            "b's read is not a's"
        );
    }
}
