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
//!
//! At depth a thread may also *hold* arrivals ([`wait_nr`], off unless
//! [`HOLD_ENV`] asks for it): when the next completion's wake-up is near
//! (within [`HoldPolicy`]'s share of the mean device time), it waits for
//! that wake-up alone instead of returning for each request that arrives
//! meanwhile, and handles those requests then. A held request reaches the
//! model late by at most that hold, which the daemon counts as lateness.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The most a thread wakes before a completion (and so spins), ns.
pub const MAX_EARLY_NS: u64 = 20_000;
/// What [`Early`] starts from, ns.
pub const START_EARLY_NS: u64 = 2_000;
/// The most a thread spins rather than sleeping, ns (what a timer's wake
/// may cost it at most, as learnt).
pub const MAX_SPIN_NS: u64 = 30_000;

/// Holds arrivals for at most this share of the mean device time unless
/// [`HOLD_ENV`] says otherwise: none. Holding for 2 % of it (within the
/// 3 % lateness goal) saved no measurable CPU on the development machine
/// and added lateness under load (bench/kernel-drive.sh,
/// docs/kernel-drive.md): over FUSE over io_uring a request reaches the
/// daemon as task work, which wakes the thread in the kernel whatever its
/// `wait_nr`; a hold saves only the return to user space.
pub const HOLD_SHARE: f64 = 0.0;
/// The share of the mean device time (in per cent, 0 to 10) a thread may
/// hold an arrival for; 0 (the default) wakes for each arrival.
pub const HOLD_ENV: &str = "SSDREADY_EMU_HOLD";

/// How long a serving thread may hold an arrival: a share of the running
/// mean device time ([`DeviceMean`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldPolicy {
    pub share: f64,
}

impl Default for HoldPolicy {
    fn default() -> Self {
        HoldPolicy { share: HOLD_SHARE }
    }
}

impl HoldPolicy {
    /// The policy [`HOLD_ENV`] asks for (per cent, 0 to 10), else the
    /// default (`emu attach` has refused any other value before serving:
    /// [`super::check_env`]).
    pub fn from_env() -> HoldPolicy {
        let v = std::env::var(HOLD_ENV).ok();
        Self::parse(v.as_deref()).unwrap_or_default()
    }
    /// `percent` as a policy, if it is a number from 0 to 10.
    pub fn parse(percent: Option<&str>) -> Option<HoldPolicy> {
        let p: f64 = percent?.trim().parse().ok()?;
        (0.0..=10.0)
            .contains(&p)
            .then_some(HoldPolicy { share: p / 100.0 })
    }
    /// The longest hold for a mean device time of `mean_ns`, ns.
    pub fn max_ns(&self, mean_ns: u64) -> u64 {
        (mean_ns as f64 * self.share) as u64
    }
}

/// How many completions a thread's wait asks for (its `wait_nr`) at `now`,
/// given when its timer will wake it (`timer`, with requests pending) and
/// the mean device time: `hold` (more than every request that can arrive)
/// when that wake-up is at most `policy`'s hold away, so that arrivals
/// wait for it; otherwise 1, so that an arrival wakes the thread at once
/// (always so with nothing pending: at queue depth 1 a request is never
/// held).
pub fn wait_nr(
    policy: HoldPolicy,
    now: u64,
    timer: Option<u64>,
    mean_ns: u64,
    hold: usize,
) -> usize {
    match timer {
        Some(t) if t > now && t - now <= policy.max_ns(mean_ns) => hold,
        _ => 1,
    }
}

/// The running mean of the device time of the requests a thread served
/// (what bounds a hold), ns.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceMean {
    ns: u64,
}

impl DeviceMean {
    /// A request took `device_ns` of device time.
    pub fn learn(&mut self, device_ns: u64) {
        let (e, c) = (self.ns as i64, device_ns as i64);
        self.ns = if self.ns == 0 { c } else { e + (c - e) / 16 } as u64;
    }
    pub fn ns(&self) -> u64 {
        self.ns
    }
}

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
    fn an_arrival_is_held_only_when_the_next_wake_is_within_the_share() {
        assert_eq!(HoldPolicy::default().max_ns(1_000_000), 0, "off by default");
        let pol = HoldPolicy::parse(Some("2")).unwrap();
        let mean = 450_000; // 2 % of it: 9 µs
        assert_eq!(pol.max_ns(mean), 9_000);
        let now = 1_000_000;
        // Nothing pending (queue depth 1): an arrival wakes the thread.
        assert_eq!(wait_nr(pol, now, None, mean, 33), 1);
        // The next completion's wake 5 µs away: arrivals wait for it.
        assert_eq!(wait_nr(pol, now, Some(now + 5_000), mean, 33), 33);
        assert_eq!(wait_nr(pol, now, Some(now + 9_000), mean, 33), 33);
        // Farther than the hold allows: an arrival wakes the thread.
        assert_eq!(wait_nr(pol, now, Some(now + 9_001), mean, 33), 1);
        // A wake already due is no wait to hold for.
        assert_eq!(wait_nr(pol, now, Some(now), mean, 33), 1);
        // Nothing learnt of the device yet, or holding turned off: no hold.
        assert_eq!(wait_nr(pol, now, Some(now + 1), 0, 33), 1);
        let off = HoldPolicy::parse(Some("0")).unwrap();
        assert_eq!(wait_nr(off, now, Some(now + 1), mean, 33), 1);
    }

    #[test]
    fn the_hold_share_is_read_in_per_cent_and_bad_values_are_refused() {
        assert_eq!(
            HoldPolicy::parse(Some("3")),
            Some(HoldPolicy { share: 0.03 })
        );
        assert_eq!(
            HoldPolicy::parse(Some(" 0.5 ")).map(|p| p.max_ns(100_000)),
            Some(500)
        );
        for bad in ["-1", "11", "two", ""] {
            assert_eq!(HoldPolicy::parse(Some(bad)), None, "{bad}");
        }
        assert_eq!(HoldPolicy::parse(None), None);
    }

    #[test]
    fn the_device_mean_follows_the_served_requests() {
        let mut m = DeviceMean::default();
        m.learn(100_000);
        assert_eq!(m.ns(), 100_000);
        for _ in 0..200 {
            m.learn(400_000);
        }
        assert!(m.ns() > 390_000 && m.ns() <= 400_000, "{}", m.ns());
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
