//! A serving thread's requests waiting for their modelled completion, and
//! when to wake for them.
//!
//! A daemon thread keeps every request it has submitted to the model in a
//! queue ordered by modelled completion ([`DueQueue`]), sleeps until the
//! earliest one (or the next request, whichever comes first) in one
//! system call, and answers everything due in that one wake-up. A sleep
//! ends a little after the time asked for: [`Early`] learns by how much
//! and the thread asks to wake that much before the completion, spinning
//! only what is left (a few microseconds), so replies are neither early
//! (a reply never precedes its modelled completion) nor late by the
//! timer's overshoot. A completion nearer than what a timer's wake-up
//! costs the thread in CPU ([`WakeCost`], learnt) is spun to instead,
//! reading requests meanwhile: on a virtual machine, where programming and
//! taking a timer exits to the hypervisor, that is the cheaper wait.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The most a thread wakes before a completion (and so spins), ns.
pub const MAX_EARLY_NS: u64 = 20_000;
/// What [`Early`] starts from, ns.
pub const START_EARLY_NS: u64 = 2_000;
/// The most a thread spins rather than sleeping, ns (what a timer's wake
/// may cost it at most, as learnt).
pub const MAX_SPIN_NS: u64 = 30_000;

/// One request waiting for its modelled completion: its reply (header and
/// body) already written in `buf`, `len` bytes of it to send.
#[derive(Debug)]
pub struct Pending {
    pub due: u64,
    pub arrived: u64,
    pub unique: u64,
    pub error: i32,
    pub len: usize,
    pub buf: Vec<u8>,
    /// Where the reply goes back: over `/dev/fuse`, the clone of the
    /// connection it was read from (the kernel finds a request among those
    /// read from the file the reply is written to); over io_uring, the
    /// ring entry that carried it.
    pub slot: usize,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    /// Reversed: the earliest completion is the heap's greatest.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.due, o.unique).cmp(&(self.due, self.unique))
    }
}

/// The pending requests, earliest completion first, and the reply buffers
/// they return to.
#[derive(Default)]
pub struct DueQueue {
    heap: BinaryHeap<Pending>,
    pool: Vec<Vec<u8>>,
}

impl DueQueue {
    /// A buffer of `len` bytes for a reply (reused when one is free).
    pub fn buffer(&mut self, len: usize) -> Vec<u8> {
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b.resize(len, 0);
        b
    }
    /// Give a sent reply's buffer back.
    pub fn recycle(&mut self, b: Vec<u8>) {
        self.pool.push(b);
    }
    pub fn push(&mut self, p: Pending) {
        self.heap.push(p);
    }
    /// The earliest modelled completion waiting.
    pub fn next_due(&self) -> Option<u64> {
        self.heap.peek().map(|p| p.due)
    }
    /// The earliest request if it is due by `now`.
    pub fn pop_due(&mut self, now: u64) -> Option<Pending> {
        match self.heap.peek() {
            Some(p) if p.due <= now => self.heap.pop(),
            _ => None,
        }
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// What a wake-up by the timer costs the thread in CPU (the wait's system
/// call, the switches, and on a virtual machine the exits to program and
/// take the timer: 15–25 µs on the development machine, 1–3 µs on bare
/// metal), learnt as a running mean, and so how close a completion must be
/// for spinning to it to cost less than sleeping.
#[derive(Clone, Copy, Debug, Default)]
pub struct WakeCost {
    ns: u64,
}

impl WakeCost {
    /// A wait that ended by the timer cost the thread `cpu_ns` of CPU.
    pub fn learn(&mut self, cpu_ns: u64) {
        let (e, c) = (self.ns as i64, cpu_ns.min(10 * MAX_SPIN_NS) as i64);
        self.ns = if self.ns == 0 { c } else { e + (c - e) / 8 } as u64;
    }
    /// Spin to a completion this near rather than sleep for it, ns.
    pub fn spin_below(&self) -> u64 {
        self.ns.min(MAX_SPIN_NS)
    }
}

/// How long before a completion to ask to be woken: the timer's recent
/// overshoot, learnt quickly upwards (a late reply is an error in the
/// model's timing) and slowly downwards (an early wake costs only a short
/// spin), within 0..[`MAX_EARLY_NS`].
#[derive(Clone, Copy, Debug)]
pub struct Early {
    ns: u64,
}

impl Default for Early {
    fn default() -> Self {
        Early { ns: START_EARLY_NS }
    }
}

impl Early {
    pub fn ns(&self) -> u64 {
        self.ns
    }
    /// A timed wait asked to end at T ended `overshoot` ns after it.
    pub fn learn(&mut self, overshoot: u64) {
        let e = self.ns;
        self.ns = if overshoot > e {
            e + (overshoot - e) / 4
        } else {
            e - (e - overshoot) / 32
        }
        .min(MAX_EARLY_NS);
    }
    /// When to ask to be woken for a completion at `due`.
    pub fn wake_for(&self, due: u64) -> u64 {
        due.saturating_sub(self.ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(due: u64, unique: u64) -> Pending {
        Pending {
            due,
            arrived: 0,
            unique,
            error: 0,
            len: 0,
            buf: Vec::new(),
            slot: 0,
        }
    }

    #[test]
    fn requests_come_out_in_completion_order_and_only_when_due() {
        let mut q = DueQueue::default();
        q.push(p(300, 1));
        q.push(p(100, 2));
        q.push(p(200, 3));
        q.push(p(100, 4));
        assert_eq!(q.next_due(), Some(100));
        assert!(q.pop_due(99).is_none());
        let got: Vec<u64> = std::iter::from_fn(|| q.pop_due(250))
            .map(|p| p.unique)
            .collect();
        assert_eq!(got, vec![2, 4, 3]);
        assert_eq!(q.len(), 1);
        assert_eq!(q.next_due(), Some(300));
    }

    #[test]
    fn a_recycled_buffer_is_reused_at_the_size_asked() {
        let mut q = DueQueue::default();
        let mut b = q.buffer(16);
        b[0] = 9;
        let cap = b.capacity();
        q.recycle(b);
        let b = q.buffer(8);
        assert_eq!(b, vec![0; 8]);
        assert_eq!(b.capacity(), cap);
    }

    #[test]
    fn a_completion_is_spun_to_when_nearer_than_a_wake_costs() {
        let mut w = WakeCost::default();
        assert_eq!(w.spin_below(), 0, "nothing learnt: always sleep");
        w.learn(16_000);
        assert_eq!(w.spin_below(), 16_000);
        for _ in 0..100 {
            w.learn(2_000);
        }
        assert!(w.spin_below() < 2_200, "{}", w.spin_below());
        for _ in 0..100 {
            w.learn(1_000_000);
        }
        assert_eq!(w.spin_below(), MAX_SPIN_NS);
    }

    #[test]
    fn the_early_wake_follows_the_overshoot_fast_up_and_slowly_down() {
        let mut e = Early::default();
        for _ in 0..40 {
            e.learn(10_000);
        }
        assert!(e.ns() > 9_000 && e.ns() <= 10_000, "{}", e.ns());
        e.learn(0);
        assert!(
            e.ns() > 9_000,
            "one quick wake barely lowers it: {}",
            e.ns()
        );
        for _ in 0..400 {
            e.learn(1_000);
        }
        assert!(e.ns() < 1_200, "{}", e.ns());
        for _ in 0..100 {
            e.learn(1_000_000);
        }
        assert_eq!(e.ns(), MAX_EARLY_NS);
        assert_eq!(e.wake_for(5_000), 0);
        assert_eq!(e.wake_for(25_000), 5_000);
    }
}
