//! A queue pair's reads on its own lanes of the device-wide resources.
//!
//! In the real-time front, the host link (commands and data), the
//! controller's cores and each channel are kept in ledgers
//! ([`crate::ledger`]): each queue pair reserves them on its own schedule
//! ([`Lanes`], owned by its worker) and books their capacity frame by
//! frame, a chunk at a time, so workers on different queue pairs write no
//! common cache line per read for them. The die a page is on is locked,
//! as for any shared read ([`super::shared_reads`]: the program/erase
//! work a read suspends is state, not a rate), only while such work may meet
//! the read: otherwise each queue pair reads a die on its own lane too
//! ([`super::die_lanes`]). A queue pair alone gets the times
//! [`Device::read_shared_batch`] gives; several together never put more
//! work in a frame than the resource can do in it.
//!
//! Commands that hold the model alone (writes, trims, flushes, GC's
//! program transfers) reserve the device's own schedules of these
//! resources, as in
//! virtual time, and, once the device is [`Device::book_in`] its
//! ledgers, book what they take there too, so the queue pairs' reads and
//! the device's other commands share one capacity. The virtual-time
//! simulation never books: its device has no ledgers.

use super::die_lanes::{DieBooks, DieLanes};
use super::shared_reads::SharedRead;
use super::Device;
use crate::ledger::{CoresLane, Credit, Ledger, LineLane};
use std::sync::Arc;

/// The ledgers of a device's link (as commands cross it, as data does),
/// of its controller's cores, its channels and its dies.
#[derive(Debug)]
pub struct Ledgers {
    cmd: Ledger,
    data: Ledger,
    cores: Ledger,
    chans: Vec<Ledger>,
    dies: DieBooks,
}

impl Ledgers {
    /// Lanes for one more queue pair: its reads of the dies are tallied
    /// here ([`super::die_lanes`]).
    pub fn lanes(&self, p: &crate::config::Params) -> Lanes {
        Lanes {
            dies: self.dies.lanes(p),
            ..Lanes::new(p)
        }
    }

    pub(super) fn die_books(&self) -> &DieBooks {
        &self.dies
    }
}

/// One queue pair's lanes on them (module docs).
#[derive(Debug)]
pub struct Lanes {
    cmd: LineLane,
    data: LineLane,
    cores: CoresLane,
    chans: Vec<LineLane>,
    dies: DieLanes,
}

impl Lanes {
    /// Lanes on a device of parameters `p` for reads that never reach a
    /// die ([`Ledgers::lanes`] gives those whose reads may).
    pub fn new(p: &crate::config::Params) -> Lanes {
        Lanes {
            cmd: LineLane::default(),
            data: LineLane::default(),
            cores: CoresLane::new(p.fw_units as usize),
            chans: vec![LineLane::default(); p.channels.max(1) as usize],
            dies: DieLanes::new(p),
        }
    }

    /// How many times they went to the ledgers (each a write of a cache
    /// line other queue pairs may write).
    pub fn visits(&self) -> u64 {
        let lines = [&self.cmd, &self.data].into_iter().chain(&self.chans);
        let lines: u64 = lines.map(|l| l.credit().visits()).sum();
        lines + self.cores.credit().visits() + self.dies.visits()
    }
}

/// What a device that holds the model alone books in its ledgers: the
/// ledgers, and its credit in each.
#[derive(Debug, Clone)]
pub(crate) struct Booking {
    pub(super) ledgers: Arc<Ledgers>,
    cmd: Credit,
    data: Credit,
    cores: Credit,
    chans: Vec<Credit>,
}

impl Device {
    /// The ledgers of this device's link and controller.
    pub fn ledgers(&self) -> Ledgers {
        let page = self.link_ns(u64::from(self.p.page_bytes)).max(1);
        Ledgers {
            cmd: Ledger::new(1, self.link_ns(self.command_bytes(1)).max(1)),
            data: Ledger::new(1, page),
            cores: Ledger::new(u64::from(self.p.fw_units), self.controller_ns(1, 1).max(1)),
            chans: (self.chans.iter())
                .map(|_| Ledger::new(1, self.chan_ns_per_page.max(1)))
                .collect(),
            dies: DieBooks::new(&self.p),
        }
    }

    /// From now on, book what commands holding the model alone take of
    /// the link and the controller in `ledgers` (module docs).
    pub fn book_in(&mut self, ledgers: Arc<Ledgers>) {
        self.booking = Some(Booking {
            chans: vec![Credit::default(); ledgers.chans.len()],
            ledgers,
            cmd: Credit::default(),
            data: Credit::default(),
            cores: Credit::default(),
        });
        self.publish_die_ends();
    }

    /// The reads of one queue pair, fetched together, on its own `lanes`
    /// (module docs): each read's completion time into `done`. Each read
    /// reserves, in order, its command on the link, a controller core,
    /// each page's die and channel, and its data on the link, as
    /// [`Device::read_shared_batch`] does; the lanes' reads of the dies are
    /// taken into them before the model is next held alone
    /// ([`Device::absorb_lane_reads`]).
    pub fn read_lanes_batch(
        &self,
        (ledgers, lanes): (&Ledgers, &mut Lanes),
        reads: &[SharedRead],
        done: &mut [u64],
    ) {
        debug_assert_eq!(reads.len(), done.len());
        let (cmd_ns, chan_ns) = (self.link_ns(self.command_bytes(1)), self.chan_ns_per_page);
        for (r, d) in reads.iter().zip(done.iter_mut()) {
            let fetched = lanes.cmd.reserve(&ledgers.cmd, r.t, cmd_ns, r.t);
            let pages = self.lpns(&r.extent);
            let cost = self.controller_ns(pages.end - pages.start, 1);
            let ready = lanes.cores.take(&ledgers.cores, fetched, cost);
            let (chans, ledger, dies) = (&mut lanes.chans, &ledgers.chans, &mut lanes.dies);
            let data_at = pages.fold(ready, |x, lpn| {
                let channel = |c: usize, from| chans[c].reserve(&ledger[c], from, chan_ns, r.t);
                let on = (&ledgers.dies, &mut *dies);
                x.max(self.read_page_lane(lpn, (ready, r.cmd, r.t), on, channel))
            });
            let dur = self.link_ns(r.extent.len);
            let x = lanes.data.reserve(&ledgers.data, data_at, dur, r.t);
            *d = self
                .p
                .stall
                .delay(r.t, x.max(r.t).saturating_add(self.p.cpl_ns));
        }
    }

    /// Reserve `dur` ns of the link's data from `at`, for a command
    /// holding the model alone (booked when the device books).
    pub(super) fn link_data(&mut self, at: u64, dur: u64, now: u64) -> u64 {
        let line = self.link_line.get_mut();
        match self.booking.as_mut() {
            None => line.reserve(at, dur, now),
            Some(b) => {
                let (credit, ledger) = (&mut b.data, &b.ledgers.data);
                line.reserve_admitted(at, dur, now, |s| credit.charge(ledger, s, dur))
            }
        }
    }

    /// [`Device::link_data`] for a command's own bytes.
    pub(super) fn link_cmd(&mut self, at: u64, dur: u64, now: u64) -> u64 {
        let line = self.cmd_line.get_mut();
        match self.booking.as_mut() {
            None => line.reserve(at, dur, now),
            Some(b) => {
                let (credit, ledger) = (&mut b.cmd, &b.ledgers.cmd);
                line.reserve_admitted(at, dur, now, |s| credit.charge(ledger, s, dur))
            }
        }
    }

    /// Reserve `dur` ns of channel `c` from `at`, for a command holding
    /// the model alone (booked when the device books).
    pub(super) fn chan_booked(&mut self, c: usize, at: u64, dur: u64, now: u64) -> u64 {
        let line = self.chans[c].get_mut();
        match self.booking.as_mut() {
            None => line.reserve(at, dur, now),
            Some(b) => {
                let (credit, ledger) = (&mut b.chans[c], &b.ledgers.chans[c]);
                line.reserve_admitted(at, dur, now, |s| credit.charge(ledger, s, dur))
            }
        }
    }

    /// A page read by a command holding the model alone
    /// ([`Device::read_page_as`]; its channel booked when the device books).
    pub(super) fn read_page_booked(&mut self, lpn: u64, at: u64, cmd: u64, now: u64) -> u64 {
        let Some(mut b) = self.booking.take() else {
            return self.read_page_as(lpn, at, cmd, now);
        };
        let dur = self.chan_ns_per_page;
        let x = self.read_page_with(lpn, (at, cmd, now), |c, from| {
            let (credit, ledger) = (&mut b.chans[c], &b.ledgers.chans[c]);
            let mut line = self.chans[c].lock();
            line.reserve_admitted(from, dur, now, |s| credit.charge(ledger, s, dur))
        });
        self.booking = Some(b);
        x
    }

    /// A controller core from `t` for `cost` ns, for a command holding the
    /// model alone (booked when the device books).
    pub(super) fn core(&mut self, t: u64, cost: u64) -> u64 {
        match self.booking.as_mut() {
            None => self.ctrl_free.take_mut(t, cost),
            Some(b) => {
                let (credit, ledger) = (&mut b.cores, &b.ledgers.cores);
                (self.ctrl_free).take_mut_admitted(t, cost, |s| credit.charge(ledger, s, cost))
            }
        }
    }

    /// Hold the device's own schedules' locks (the link's for commands and
    /// data, each channel's), as a reader that took them would (tests:
    /// readers on lanes never wait).
    #[cfg(test)]
    pub(crate) fn hold_links(&self) -> Vec<LinkGuard<'_>> {
        let lines = [&self.cmd_line, &self.link_line].into_iter();
        lines.chain(&self.chans).map(|l| l.lock()).collect()
    }
}

/// Hold every die's lock (tests: readers on lanes of dies with no
/// program work to meet never wait).
#[cfg(test)]
impl Device {
    pub(crate) fn hold_dies(&self) -> Vec<std::sync::MutexGuard<'_, crate::die::Die>> {
        self.nand.iter().map(|n| n.lock()).collect()
    }
}

/// A lock on one of the device's link schedules (tests).
#[cfg(test)]
pub(crate) type LinkGuard<'a> = std::sync::MutexGuard<'a, super::basics::Timeline>;

#[cfg(test)]
#[path = "queue_reads_tests.rs"]
mod tests;
