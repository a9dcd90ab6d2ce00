//! A queue pair's reads of a die on its own lane.
//!
//! A die is the model's own resource, shared by every queue pair as on an
//! SSD. Locked per read, its lock and its state (the planes' free times,
//! the last read) were written by every read, by another CPU's read last
//! with a chance of (N−1)/N at N workers: that traffic, not the model,
//! held the front at 0.7–0.8 of the model's limit on 16 CPUs (taking the
//! die out of each read gave the model's limit at 8 and 16 workers).
//!
//! So each queue pair keeps its own schedule of each die's planes and
//! its own last read there ([`DieLanes`]), and the die's capacity —
//! `planes` array reads at a time — is kept in a ledger
//! ([`crate::ledger`]), booked a chunk at a time, as the link, the
//! controller and the channels are ([`super::queue_reads`]). A queue pair
//! alone gets exactly the times the die's own schedule gave it; several
//! never put more array reads in a frame than the die's planes can do.
//!
//! A read goes on its lane only where it can meet no program or erase:
//! from the time the die's queued program and erase work ends (`until`,
//! raised by the holder of the whole model after each of its commands,
//! and by the reads that delay that work). Before it, the read takes the
//! die's lock and its state, as [`Device::read_shared_batch`] does, with
//! the suspensions it makes.
//!
//! What the lanes' reads did to each die (when their data crossed, the
//! time they kept it) is tallied per queue pair ([`Tally`]: its owner
//! alone writes it, with plain stores) and taken into the die by the
//! holder of the whole model before each of its commands, so programs
//! start after those reads as after any; the device's totals add the
//! tallies. Not modelled: a read on a lane and a read under the die's
//! lock at the same moment may overlap on one plane (both within the
//! die's capacity over a frame).

use super::Device;
use crate::config::Params;
use crate::ledger::{Credit, Ledger};
use crate::locked::Stamp;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// The dies' capacities, until when each may meet program or erase work,
/// and the tallies of the queue pairs' lanes (module docs).
#[derive(Debug)]
pub struct DieBooks {
    dies: Vec<DieBook>,
    tallies: Mutex<Vec<Arc<Tally>>>,
    /// Whether a lane read since the model was last held alone.
    read: Flag,
}

/// One die's ledger, and the end of its program and erase work.
#[derive(Debug)]
struct DieBook {
    ledger: Ledger,
    until: Until,
}

#[derive(Debug, Default)]
#[repr(align(128))]
struct Until(Stamp);

#[derive(Debug, Default)]
#[repr(align(128))]
struct Flag(AtomicBool);

/// What one queue pair's lane reads did to each die since the model was
/// last held alone (module docs).
#[derive(Debug)]
pub struct Tally(Box<[DieTally]>);

/// The most planes a die has (the parameters' limit).
const MAX_PLANES: usize = 16;

/// On cache lines of its own: its owner writes it on every read.
#[derive(Debug, Default)]
#[repr(align(128))]
struct DieTally {
    /// Per plane, when its last read's data crossed the channel.
    free: [AtomicU64; MAX_PLANES],
    /// The die time the reads took, and the die's share of it.
    reads_ns: AtomicU64,
    busy_ns: AtomicU64,
}

/// A plain add by the only writer (module docs): no read-modify-write.
#[inline]
fn bump(a: &AtomicU64, by: u64) {
    a.store(a.load(Relaxed).saturating_add(by), Relaxed);
}

/// One queue pair's lanes on the dies (module docs).
#[derive(Debug)]
pub struct DieLanes {
    planes: usize,
    /// Per die and plane, when its last read's data crossed the channel.
    plane_free: Vec<u64>,
    /// Per die, the last array read: (command, NAND page, its end).
    last: Vec<(u64, u64, u64)>,
    credits: Vec<Credit>,
    tally: Arc<Tally>,
}

/// How many dies and planes a device of `p` has.
fn shape(p: &Params) -> (usize, usize) {
    let dies = if p.dram { 0 } else { p.dies().max(1) as usize };
    (dies, (p.planes as usize).clamp(1, MAX_PLANES))
}

impl DieBooks {
    /// The books of a device of `p`.
    pub(super) fn new(p: &Params) -> DieBooks {
        let (dies, planes) = shape(p);
        let book = || DieBook {
            ledger: Ledger::new(planes as u64, p.read_ns.max(1)),
            until: Until::default(),
        };
        DieBooks {
            dies: (0..dies).map(|_| book()).collect(),
            tallies: Mutex::new(Vec::new()),
            read: Flag::default(),
        }
    }

    /// Until when die `d` may meet work of its own schedule (tests).
    #[cfg(test)]
    pub(crate) fn until(&self, d: usize) -> u64 {
        self.dies[d].until.0.load()
    }

    /// The length of die `d`'s ledger's frames, ns (tests).
    #[cfg(test)]
    pub(crate) fn frame(&self, d: usize) -> u64 {
        self.dies[d].ledger.frame().0
    }

    /// Lanes for one more queue pair, its tally kept here.
    pub(super) fn lanes(&self, p: &Params) -> DieLanes {
        let lanes = DieLanes::new(p);
        lock(&self.tallies).push(lanes.tally.clone());
        lanes
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl DieLanes {
    /// Lanes on a device of `p`, tallied nowhere (its reads never go on
    /// them: [`DieBooks::lanes`] gives those that do).
    pub(super) fn new(p: &Params) -> DieLanes {
        let (dies, planes) = shape(p);
        DieLanes {
            planes,
            plane_free: vec![0; dies * planes],
            last: vec![(u64::MAX, u64::MAX, 0); dies],
            credits: vec![Credit::default(); dies],
            tally: Arc::new(Tally((0..dies).map(|_| DieTally::default()).collect())),
        }
    }

    /// How many times they went to the dies' ledgers.
    pub(super) fn visits(&self) -> u64 {
        self.credits.iter().map(Credit::visits).sum()
    }
}

impl Device {
    /// A page read by a queue pair on its `lanes` of the dies (module
    /// docs), its transfer reserved by `channel(c, from)`: when its data
    /// crossed the channel.
    pub(crate) fn read_page_lane(
        &self,
        lpn: u64,
        (at, cmd, now): (u64, u64, u64),
        (books, lanes): (&DieBooks, &mut DieLanes),
        mut channel: impl FnMut(usize, u64) -> u64,
    ) -> u64 {
        let Some((d, plane, page)) = self.page_at(lpn) else {
            return at;
        };
        let (Some(book), Some(tally)) = (books.dies.get(d), lanes.tally.0.get(d)) else {
            return self.read_die((d, plane, page), (at, cmd, now), channel).0;
        };
        if at < book.until.0.load() {
            // The die's own schedule may hold work this read meets.
            let (x, until) = self.read_die((d, plane, page), (at, cmd, now), channel);
            if until > book.until.0.load() {
                book.until.0.raise(until);
            }
            return x;
        }
        if !books.read.0.load(Relaxed) {
            books.read.0.store(true, Relaxed);
        }
        let c = d % self.chans.len();
        let planes = u64::from(self.timing.planes);
        let plane = plane.min(lanes.planes - 1);
        let free = &mut lanes.plane_free[d * lanes.planes + plane];
        let (last_cmd, last_page, last_end) = lanes.last[d];
        let x = if (last_cmd, last_page) == (cmd, page) {
            // Another unit of a page this command has read: its transfer.
            let x = channel(c, last_end.max(at));
            bump(&tally.busy_ns, self.chan_ns_per_page / planes);
            x
        } else {
            let mut begin = at.max(*free);
            while let Err(from) = lanes.credits[d].charge(&book.ledger, begin, self.p.read_ns) {
                begin = from.max(begin.saturating_add(1));
            }
            let read_end = begin.saturating_add(self.p.read_ns);
            let x = channel(c, read_end);
            let busy = x.saturating_sub(begin);
            lanes.last[d] = (cmd, page, read_end);
            bump(&tally.reads_ns, busy);
            // A read holds one plane: its share of the die.
            bump(&tally.busy_ns, busy / planes);
            x
        };
        *free = (*free).max(x);
        tally.free[plane].store(*free, Relaxed);
        x
    }

    /// Before a command that holds the model alone: the lanes' reads into
    /// their dies (module docs). No lane reads meanwhile: each holds the
    /// model shared while it reads.
    pub(crate) fn absorb_lane_reads(&mut self) {
        let Some(b) = &self.booking else { return };
        let books = b.ledgers.die_books();
        if !books.read.0.swap(false, Relaxed) {
            return;
        }
        let mut tallies = lock(&books.tallies);
        for t in tallies.iter() {
            for (die, dt) in self.nand.iter_mut().zip(t.0.iter()) {
                let free = dt.free.each_ref().map(|f| f.swap(0, Relaxed));
                let reads = dt.reads_ns.swap(0, Relaxed);
                let busy = dt.busy_ns.swap(0, Relaxed);
                die.get_mut().absorb_lane_reads(&free, reads, busy);
            }
        }
        // A queue pair gone leaves nothing more to take in.
        tallies.retain(|t| Arc::strong_count(t) > 1);
    }

    /// After a command that held the model alone, or once the device
    /// books: until when each die may meet program or erase work.
    pub(crate) fn publish_die_ends(&mut self) {
        let Some(b) = &self.booking else { return };
        for (die, book) in self.nand.iter_mut().zip(&b.ledgers.die_books().dies) {
            let until = die.get_mut().pe_until();
            if until > book.until.0.load() {
                book.until.0.raise(until);
            }
        }
    }

    /// The lanes' die time not yet taken into the dies, added to `busy`
    /// (one figure a die).
    pub(crate) fn add_lane_busy(&self, busy: &mut [u64]) {
        let Some(b) = &self.booking else { return };
        for t in lock(&b.ledgers.die_books().tallies).iter() {
            for (x, dt) in busy.iter_mut().zip(t.0.iter()) {
                *x = x.saturating_add(dt.busy_ns.load(Relaxed));
            }
        }
    }
}
