//! Whole-device stalls: a garbage-collection pause or a firmware hiccup
//! during which the drive makes no progress on any command.
//!
//! Keys (`emu:…,stall_every=20ms,stall_ns=2ms`; off by default):
//! * `stall_every`: the time from one stall's start to the next;
//! * `stall_ns` (or `stall`): how long each stall lasts (less than
//!   `stall_every`).
//!
//! The stalls are the last `stall_ns` of each period of `stall_every`,
//! counted from the device's time zero: a pure function of the model's
//! time, so virtual time and the real-time front, which both submit at the
//! model's time, meet the same stalls. A command in the device while a
//! stall runs is held for the stall's length (the part of it that falls in
//! its service), and one that arrives during a stall starts when it ends:
//! every command waits, whatever the queue depth, as on a drive whose
//! firmware stops answering. A command's completion moves by the stalls it
//! meets; what it reserved inside the model (a die's, a channel's time) is
//! not moved, so commands queued behind each other on one die keep their
//! order and spacing after the stall.
//!
//! Unlike `fault_spike_rate` (one command drawn at random is late), a
//! stall delays every command in flight at once: at iodepth 8 all eight
//! wait, and an open loop's arrivals during it queue up.

use crate::config::error::ParamError;
use serde::{Deserialize, Serialize};

/// The stall keys' values (both 0: off).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StallParams {
    /// From one stall's start to the next, ns.
    pub every_ns: u64,
    /// Each stall's length, ns.
    pub len_ns: u64,
}

impl StallParams {
    /// Whether the device stalls at all.
    pub fn on(&self) -> bool {
        self.every_ns > 0 && self.len_ns > 0
    }

    /// Whether it never stalls (what serialisation skips).
    pub fn is_off(&self) -> bool {
        !self.on()
    }

    /// Set key `k`; None when `k` is not a stall key.
    pub fn set(&mut self, k: &str, v: &str) -> Option<Result<(), ParamError>> {
        let time = || {
            ssdready_core::units::parse_time_ns(v, 1)
                .map_err(|why| ParamError::Unit { key: k.into(), why })
        };
        match k {
            "stall_every" | "stall_every_ns" => Some(time().map(|t| self.every_ns = t)),
            "stall" | "stall_ns" => Some(time().map(|t| self.len_ns = t)),
            _ => None,
        }
    }

    /// One line naming the key when the two do not fit.
    pub fn check(&self) -> Result<(), ParamError> {
        if self.len_ns > 0 && self.every_ns == 0 {
            return Err(ParamError::StallWithoutEvery);
        }
        if self.on() && self.len_ns >= self.every_ns {
            return Err(ParamError::StallTooLong {
                len_ns: self.len_ns,
                every_ns: self.every_ns,
            });
        }
        Ok(())
    }

    /// The keys as `emu show` lists them (none when off).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        match self.on() {
            true => vec![
                ("stall_every", self.every_ns.to_string()),
                ("stall_ns", self.len_ns.to_string()),
            ],
            false => Vec::new(),
        }
    }

    /// The completion of a command in the device from `t` whose service
    /// would end at `done` without stalls, with the stalls it meets added
    /// (module docs). Closed form: O(1) however many periods it spans.
    pub fn delay(&self, t: u64, done: u64) -> u64 {
        if !self.on() {
            return done;
        }
        if done <= t {
            return self.start(t).max(done);
        }
        let (every, len) = (self.every_ns, self.len_ns);
        let work = every - len;
        let mut need = done - t;
        let at = self.start(t);
        // Work possible in this period before its stall.
        let room = work - at % every;
        if need <= room {
            return at + need;
        }
        need -= room;
        // From the next period's start: whole periods, then the rest.
        let next = at - at % every + every;
        let k = (need - 1) / work;
        next.saturating_add(k.saturating_mul(every))
            .saturating_add(need - k * work)
    }

    /// `t`, or the end of the stall it falls in.
    fn start(&self, t: u64) -> u64 {
        if !self.on() {
            return t;
        }
        let phase = t % self.every_ns;
        match phase >= self.every_ns - self.len_ns {
            true => t - phase + self.every_ns,
            false => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn s() -> StallParams {
        // Stalls at [8, 10) ms, [18, 20) ms, …
        StallParams {
            every_ns: 10 * MS,
            len_ns: 2 * MS,
        }
    }

    /// Step through time 1 µs at a time, working only outside stalls.
    fn slow(p: &StallParams, t: u64, done: u64) -> u64 {
        let step = 1_000;
        let (mut at, mut need) = (t, done - t);
        while need > 0 {
            let stalled = at % p.every_ns >= p.every_ns - p.len_ns;
            if !stalled {
                need = need.saturating_sub(step);
            }
            at += step;
        }
        at
    }

    #[test]
    fn a_command_waits_out_every_stall_it_meets() {
        let p = s();
        // Done before the stall: untouched.
        assert_eq!(p.delay(MS, 3 * MS), 3 * MS);
        // Ends exactly where the stall starts: untouched.
        assert_eq!(p.delay(MS, 8 * MS), 8 * MS);
        // In flight when it starts: held its 2 ms.
        assert_eq!(p.delay(7 * MS, 9 * MS), 11 * MS);
        // Arrives during it: starts at its end.
        assert_eq!(p.delay(9 * MS, 9 * MS + 100_000), 10 * MS + 100_000);
        // A zero-time command arriving in it completes at its end.
        assert_eq!(p.delay(9 * MS, 9 * MS), 10 * MS);
        // Spans three stalls.
        assert_eq!(p.delay(0, 25 * MS), 31 * MS);
        // Off: nothing moves.
        assert_eq!(StallParams::default().delay(9 * MS, 9 * MS + 5), 9 * MS + 5);
    }

    #[test]
    fn the_closed_form_agrees_with_stepping_through_time() {
        let p = s();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = (x % (50 * MS)) / 1_000 * 1_000;
            let d = (x >> 32) % (30 * MS) / 1_000 * 1_000 + 1_000;
            assert_eq!(p.delay(t, t + d), slow(&p, t, t + d), "t {t} d {d}");
        }
    }

    #[test]
    fn stall_keys_are_checked_with_one_line() {
        let mut p = StallParams::default();
        assert!(p.set("stall_every", "20ms").unwrap().is_ok());
        assert!(p.set("stall", "2ms").unwrap().is_ok());
        assert_eq!(p.every_ns, 20 * MS);
        assert!(p.check().is_ok());
        assert_eq!(p.pairs().len(), 2);
        assert!(p.set("stall_ns", "soon").unwrap().is_err());
        assert!(p.set("stall_other", "1").is_none());
        p.len_ns = 20 * MS;
        assert!(p
            .check()
            .unwrap_err()
            .to_string()
            .contains("not shorter than stall_every"));
        let only = StallParams {
            every_ns: 0,
            len_ns: MS,
        };
        assert!(only
            .check()
            .unwrap_err()
            .to_string()
            .contains("needs 'stall_every'"));
        assert!(StallParams::default().pairs().is_empty());
    }

    /// `null` with 8 units of 100 µs per 4 KiB read, stalling 5 ms in
    /// every 20 ms.
    const STALLING: &str =
        "null,size=1m,channels=8,dram_per_4k_ns=100us,stall_every=20ms,stall_ns=5ms";

    fn read(i: u64) -> crate::device::Extent {
        crate::device::Extent {
            offset: (i % 256) * 4096,
            len: 4096,
        }
    }

    #[test]
    fn every_command_in_flight_waits_out_the_stall_at_iodepth_8() {
        use crate::device::{Device, Op};
        let p = crate::config::Params::parse(STALLING).unwrap();
        let mut stalling = Device::new(&p);
        let mut steady = Device::new(&crate::config::Params {
            stall: StallParams::default(),
            ..p.clone()
        });
        // Eight reads submitted 50 µs before the stall at 15 ms: all eight
        // are held its 5 ms, not one of them.
        let t = 15 * MS - 50_000;
        for i in 0..8 {
            let a = stalling.submit(t, Op::Read, &[read(i)]).unwrap();
            let b = steady.submit(t, Op::Read, &[read(i)]).unwrap();
            assert_eq!(a - b, 5 * MS, "read {i}");
        }
        // One arriving during it starts at its end.
        let late = stalling.submit(17 * MS, Op::Read, &[read(9)]).unwrap();
        assert_eq!(late, 20 * MS + 100_000);
    }

    #[test]
    fn the_real_time_front_meets_the_stalls_virtual_time_does() {
        use crate::device::{Device, Op};
        use crate::engine::SharedDevice;
        // The real-time front: a closed loop at iodepth 8 submitting to the
        // shared device at the clock's time (what its engine does for each
        // command), for 100 ms: five periods, five stalls.
        let clock = ssdready_io::clock::Clock::calibrate();
        let p = crate::config::Params::parse(STALLING).unwrap();
        let shared = SharedDevice::new(p.clone(), clock).unwrap();
        let counts = crate::queues::Counts::default();
        let mut real = Vec::new();
        let mut due = std::collections::BinaryHeap::new();
        let t0 = clock.now();
        while clock.now() - t0 < 100 * MS {
            let now = clock.now();
            while due.len() < 8 {
                let (done, _) = shared
                    .submit_faulty((0, &counts), now, Op::Read, read(real.len() as u64))
                    .unwrap();
                real.push((now, done));
                due.push(std::cmp::Reverse(done));
            }
            while due.peek().is_some_and(|d| d.0 <= clock.now()) {
                due.pop();
            }
        }
        // Virtual time: the model given the same commands at the same
        // times completes each at the same time, stalls included. However
        // late a loaded machine ran the loop, the times agree exactly.
        let mut dev = Device::new(&p);
        for (i, &(t, done)) in real.iter().enumerate() {
            let v = dev.submit(t, Op::Read, &[read(i as u64)]).unwrap();
            assert_eq!(v, done, "command {i} at {t}");
        }
        // And the stalls were met: commands held for most of one.
        let held = real.iter().filter(|(t, d)| d - t >= 4 * MS).count();
        assert!(held >= 1, "no command of {} met a stall", real.len());
    }

    #[test]
    fn a_flash_read_meets_the_same_stalls_shared_or_alone() {
        use crate::device::{Device, Extent, Op};
        let p = crate::config::Params::parse("nvme-tlc,size=256m,stall_every=1ms,stall_ns=200us")
            .unwrap();
        let mut alone = Device::new(&p);
        let ext = |page: u64, pages: u64| Extent {
            offset: page * 4096,
            len: pages * 4096,
        };
        for i in (0..4096).step_by(32) {
            alone.submit(0, Op::Write, &[ext(i, 32)]).unwrap();
        }
        let shared = alone.clone();
        let (mut t, mut held) = (10 * MS, 0);
        for i in 0..2_000u64 {
            t += 7_919;
            let e = ext(i * 37 % 4096, 1);
            let a = alone.submit(t, Op::Read, &[e]).unwrap();
            assert_eq!(a, shared.read_shared(t, &e), "read {i} at {t}");
            held += usize::from(a - t > 200_000);
        }
        assert!(held > 100, "{held} reads held by a stall");
    }
}
