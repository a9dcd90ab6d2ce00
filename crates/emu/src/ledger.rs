//! A device-wide resource shared by queue pairs without a lock, or a
//! shared write, per command: a ledger of its time in frames.
//!
//! The host link and the controller's cores are one per device, as on an
//! SSD; the dies and channels are many ([`crate::device::shared_reads`]
//! locks each on its own). Reserving a device-wide resource under one lock
//! (or one compare-and-swap) per command makes every worker write the same
//! cache line for every read, and that line — not the model — then limits
//! the emulator's front (about 8M reads a second, whatever the workers).
//! So each queue pair keeps its own schedule of the resource (a
//! [`LineLane`] for a link, a [`CoresLane`] for the cores: one queue pair
//! alone gets exactly the times the shared schedule gave it), and the
//! device keeps the resource's capacity in a [`Ledger`]: time cut into
//! frames, each holding `frame_ns` × units of work. A queue pair books
//! work in a frame in chunks (about 16 commands' worth, or a 32nd of the
//! frame) with one compare-and-swap on that frame's slot, and spends its
//! chunk on its own. A reservation is charged to every frame it overlaps
//! by the part of it there; when a frame cannot take its part, the
//! reservation moves to the next frame. So the work placed in any frame,
//! by all queue pairs together, never exceeds what the resource can do in
//! it: the aggregate rate is bounded by the model's, and binds only there.
//! One queue pair's own schedule never puts more than a frame's work in a
//! frame, so a queue pair alone is never moved.
//!
//! What the ledger does not model: within a frame, the queue pairs'
//! transfers overlap as if each had the resource to itself (the work
//! never exceeds the frame's, the instants may). Credit a queue pair
//! booked is given back when it moves on to later frames, so little of a
//! frame is lost: less than a command's work per queue pair and frame.

use crate::device::basics::Timeline;
use crate::locked::FreeTimes;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Bits of a slot that count the work booked in its frame (the rest is
/// the frame's number).
const USED_BITS: u32 = 24;
const USED_MASK: u64 = (1 << USED_BITS) - 1;
/// The last frame number a slot can hold.
const FRAME_MAX: u64 = u64::MAX >> USED_BITS;
/// Frames the ledger keeps: a frame this far behind the newest one booked
/// in its slot is gone, and treated as full.
const SLOTS: u64 = 256;
/// The shortest frame, ns.
const MIN_FRAME_NS: u64 = 20_000;
/// A frame holds at least this many typical commands' work.
const FRAME_COMMANDS: u64 = 512;
/// A queue pair books at least this many typical commands' work at once,
const CHUNK_COMMANDS: u64 = 16;
/// and at least this part of a frame.
const CHUNK_PARTS: u64 = 64;

/// One frame's slot: its number and the work booked in it, on cache lines
/// of its own.
#[derive(Debug, Default)]
#[repr(align(128))]
struct Slot(AtomicU64);

/// A device-wide resource's capacity, frame by frame (module docs).
#[derive(Debug)]
pub struct Ledger {
    /// A frame is 2^`shift` ns (no division per command).
    shift: u32,
    frame_ns: u64,
    units: u64,
    /// Work a frame holds: `frame_ns` × units.
    budget: u64,
    /// Work a queue pair books at once.
    chunk: u64,
    slots: Box<[Slot]>,
}

/// What booking in a frame gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Booked {
    /// This much work, ns.
    Got(u64),
    /// The frame cannot take what was needed.
    Full,
    /// The frame is older than the ledger keeps; `newer` holds its slot.
    Gone { newer: u64 },
}

impl Ledger {
    /// The ledger of `units` like resources (the controller's cores; 1 for
    /// a link), a typical command taking `unit_ns` on one.
    pub fn new(units: u64, unit_ns: u64) -> Ledger {
        let units = units.max(1);
        let want = (FRAME_COMMANDS.saturating_mul(unit_ns) / units).max(MIN_FRAME_NS);
        // A power of two at least that long, within what a slot counts.
        let most = 63 - (USED_MASK / units).leading_zeros();
        let shift = (64 - (want - 1).leading_zeros()).min(most);
        let frame_ns = 1u64 << shift;
        let budget = frame_ns * units;
        let chunk = CHUNK_COMMANDS
            .saturating_mul(unit_ns)
            .max(budget / CHUNK_PARTS)
            .min(budget);
        Ledger {
            shift,
            frame_ns,
            units,
            budget,
            chunk,
            slots: (0..SLOTS).map(|_| Slot::default()).collect(),
        }
    }

    /// The frame time `t` is in.
    fn frame_of(&self, t: u64) -> u64 {
        t >> self.shift
    }

    /// When frame `f` begins.
    fn start_of(&self, f: u64) -> u64 {
        f.checked_shl(self.shift)
            .filter(|s| s >> self.shift == f)
            .unwrap_or(u64::MAX)
    }

    /// Book at least `need` and at most `want` ns of work in frame `f`,
    /// with one compare-and-swap on its slot (retried only when another
    /// queue pair booked in between).
    fn book(&self, f: u64, need: u64, want: u64) -> Booked {
        let slot = &self.slots[(f % SLOTS) as usize].0;
        let mut cur = slot.load(Relaxed);
        loop {
            let (tag, used) = (cur >> USED_BITS, cur & USED_MASK);
            let used = match tag.cmp(&f) {
                std::cmp::Ordering::Less => 0, // a frame long past: reused
                std::cmp::Ordering::Equal => used,
                std::cmp::Ordering::Greater => return Booked::Gone { newer: tag },
            };
            let left = self.budget - used;
            if left < need {
                return Booked::Full;
            }
            let got = want.clamp(need, left);
            let new = f << USED_BITS | (used + got);
            match slot.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                Ok(_) => return Booked::Got(got),
                Err(now) => cur = now,
            }
        }
    }

    /// Where in frame `f` a command moved there from a full frame begins:
    /// after the work booked there so far, as if the frame's work were
    /// done in the order it was booked (a read of its slot, no write).
    fn position(&self, f: u64) -> u64 {
        let v = self.slots[(f % SLOTS) as usize].0.load(Relaxed);
        let used = if v >> USED_BITS == f {
            v & USED_MASK
        } else {
            0
        };
        self.start_of(f).saturating_add(used / self.units)
    }

    /// Give back `ns` of work booked in frame `f` and not spent, while the
    /// ledger still keeps the frame.
    fn give_back(&self, f: u64, ns: u64) {
        let slot = &self.slots[(f % SLOTS) as usize].0;
        let mut cur = slot.load(Relaxed);
        while cur >> USED_BITS == f {
            let new = cur - ns.min(cur & USED_MASK);
            match slot.compare_exchange_weak(cur, new, Relaxed, Relaxed) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    /// The work booked in the frame `t` is in (tests).
    #[cfg(test)]
    pub(crate) fn booked_at(&self, t: u64) -> u64 {
        let f = self.frame_of(t);
        let v = self.slots[(f % SLOTS) as usize].0.load(Relaxed);
        if v >> USED_BITS == f {
            v & USED_MASK
        } else {
            0
        }
    }

    /// Its frame's length and the work a frame holds, ns.
    pub fn frame(&self) -> (u64, u64) {
        (self.frame_ns, self.budget)
    }
}

/// Frames a queue pair holds credit in at once.
const HELD: usize = 4;

/// One queue pair's credit in a ledger: work booked and not yet spent, in
/// a few frames. Owned by its worker (`&mut`): spending it writes nothing
/// another worker reads. Credit in a frame it stops holding (to hold a
/// later one) goes back to the ledger, so one queue pair alone books no
/// more in a frame than its own schedule puts there, and is never moved.
#[derive(Debug, Clone)]
pub struct Credit {
    /// (frame + 1, ns left); frame 0 + 1 so that (0, _) is an empty entry.
    held: [(u64, u64); HELD],
    /// The entry spent from last (where the next command looks first),
    last: usize,
    /// and the bounds of its frame, `[lo, hi)` ns: a command within them
    /// that its credit covers is charged without another look (`lo > hi`
    /// when the entry holds no frame).
    lo: u64,
    hi: u64,
    /// The last frame (+ 1) found full, and the part it could not take:
    /// as much or more is not asked for there again (should others give
    /// some back, this queue pair only moves on sooner than it had to).
    full: (u64, u64),
    /// How many times it wrote the ledger (each a write of a cache line
    /// other queue pairs write).
    visits: u64,
}

impl Default for Credit {
    fn default() -> Credit {
        Credit {
            held: [(0, 0); HELD],
            last: 0,
            lo: 1,
            hi: 0,
            full: (0, 0),
            visits: 0,
        }
    }
}

impl Credit {
    /// How many times it wrote the ledger.
    pub fn visits(&self) -> u64 {
        self.visits
    }

    /// Charge the reservation `[start, start + dur)` to the frames it
    /// overlaps; `Err(t)`: a frame cannot take its part, try again from `t`
    /// (parts already charged to earlier frames are spent: a frame's work
    /// is only ever overstated).
    #[inline]
    pub fn charge(&mut self, ledger: &Ledger, start: u64, dur: u64) -> Result<(), u64> {
        // Most commands: within the frame whose credit was spent from
        // last, and covered by it (a few compares, no look at the ledger).
        let e = &mut self.held[self.last % HELD];
        if dur <= e.1 && start >= self.lo && start.saturating_add(dur) <= self.hi {
            e.1 -= dur;
            return Ok(());
        }
        if dur == 0 {
            return Ok(());
        }
        self.charge_frames(ledger, start, dur)
    }

    /// [`Credit::charge`] where the last frame's credit does not do: each
    /// frame the reservation overlaps charged its part.
    #[inline(never)]
    fn charge_frames(&mut self, ledger: &Ledger, start: u64, dur: u64) -> Result<(), u64> {
        let end = start.saturating_add(dur);
        let mut s = start;
        while s < end {
            let f = ledger.frame_of(s);
            if f > FRAME_MAX {
                return Ok(()); // beyond any time a run reaches: not kept
            }
            let next = ledger.start_of(f + 1);
            let part = end.min(next) - s;
            self.spend(ledger, f, part)?;
            s = next;
        }
        Ok(())
    }

    /// Spend `part` ns in frame `f`, booking more there first if needed.
    fn spend(&mut self, ledger: &Ledger, f: u64, part: u64) -> Result<(), u64> {
        let key = f + 1;
        let i = match self.held.iter().position(|&(k, _)| k == key) {
            Some(i) => i,
            None => {
                // The oldest frame's credit makes room, given back.
                let i = (0..HELD).min_by_key(|&i| self.held[i].0).unwrap_or(0);
                self.give_back(ledger, i);
                self.held[i] = (key, 0);
                if i == self.last {
                    (self.lo, self.hi) = (1, 0);
                }
                i
            }
        };
        let left = self.held[i].1;
        if left < part {
            let need = part - left;
            if self.full.0 == key && need >= self.full.1 {
                return Err(ledger.position(f + 1));
            }
            match ledger.book(f, need, ledger.chunk) {
                Booked::Got(g) => {
                    self.visits += 1;
                    self.held[i].1 += g;
                    // Moving on to a later frame: what is left in earlier
                    // ones goes back while others may still use it.
                    for j in 0..HELD {
                        if self.held[j].0 < key {
                            self.give_back(ledger, j);
                        }
                    }
                }
                Booked::Full => {
                    self.full = (key, need);
                    return Err(ledger.position(f + 1));
                }
                Booked::Gone { newer } => {
                    let from = (f + 1).max((newer + 1).saturating_sub(SLOTS));
                    return Err(ledger.start_of(from));
                }
            }
        }
        self.held[i].1 -= part;
        if self.last != i || self.lo > self.hi {
            self.last = i;
            (self.lo, self.hi) = (ledger.start_of(f), ledger.start_of(f + 1));
        }
        Ok(())
    }

    /// Give entry `i`'s credit back to the ledger.
    fn give_back(&mut self, ledger: &Ledger, i: usize) {
        let (k, left) = self.held[i];
        if k > 0 && left > 0 {
            self.visits += 1;
            ledger.give_back(k - 1, left);
            self.held[i].1 = 0;
        }
    }
}

/// A queue pair's own schedule of a link, and its credit in the link's
/// ledger (module docs).
#[derive(Debug, Default, Clone)]
pub struct LineLane {
    line: Timeline,
    credit: Credit,
}

impl LineLane {
    /// Reserve `dur` ns on the link from `at` (intervals ending before
    /// `now` forgotten, as [`Timeline::reserve`]); returns the end.
    #[inline]
    pub fn reserve(&mut self, ledger: &Ledger, at: u64, dur: u64, now: u64) -> u64 {
        let credit = &mut self.credit;
        (self.line).reserve_admitted(at, dur, now, |s| credit.charge(ledger, s, dur))
    }

    /// Its credit (tests, counts).
    pub fn credit(&self) -> &Credit {
        &self.credit
    }
}

/// A queue pair's own schedule of the controller's cores, and its credit
/// in their ledger (module docs).
#[derive(Debug, Clone)]
pub struct CoresLane {
    free: FreeTimes,
    credit: Credit,
}

impl CoresLane {
    /// `units` cores, free from time 0.
    pub fn new(units: usize) -> CoresLane {
        CoresLane {
            free: FreeTimes::new(units.max(1)),
            credit: Credit::default(),
        }
    }

    /// Take the earliest free core at `t` for `cost` ns (as
    /// [`FreeTimes::take_mut`]); returns when it is done.
    #[inline]
    pub fn take(&mut self, ledger: &Ledger, t: u64, cost: u64) -> u64 {
        let credit = &mut self.credit;
        (self.free).take_mut_admitted(t, cost, |s| credit.charge(ledger, s, cost))
    }

    /// Its credit (tests, counts).
    pub fn credit(&self) -> &Credit {
        &self.credit
    }
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
