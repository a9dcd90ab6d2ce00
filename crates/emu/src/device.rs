//! The timing model: a command's completion time, computed when it is
//! submitted by reserving, in order, the resources it needs. Each resource
//! is busy until some time (`*_free`); reserving one moves that time on.
//!
//! * **Command slots** (optional): `cmd_slots` commands in progress at
//!   most; a command waits for the first free slot and holds it to the end.
//! * **Controller**: `fw_units` cores, each taking `fw_cmd_ns` + `fw_per_4k_ns`
//!   per 4 KiB; a command takes the first core free.
//! * **Reads**: per page, its die's plane reads (`read_ns`; pages of one
//!   NAND page read by one command share the read), then the page crosses
//!   the die's channel (`page_bytes / channel_mbps`); then the whole
//!   transfer crosses the host link. Unwritten pages need no NAND access.
//!   Reads go before a die's program and erase work and suspend it
//!   ([`crate::die`] schedules the dies).
//! * **Writes**: the data crosses the host link; with a write buffer the
//!   command completes as soon as the buffer has room (it drains at NAND
//!   speed: the buffered data of a program unit leaves when its program
//!   ends); per page, the FTL picks the die (striping), foreground GC on
//!   that die runs first (page moves and erases keep the die busy), then the
//!   page crosses the channel and joins the die's program unit, programmed
//!   once full (into the SLC cache while it has room). Without a write
//!   buffer a write's program units are programmed at once, padded.
//! * **Partial-page writes** (a write that covers part of a `page_bytes`
//!   page: sub-page block sizes, unaligned offsets) are **read-modify-write**:
//!   if the page holds data, its old copy is read from its die and crosses
//!   its channel before the merged page is programmed, out of place, as a
//!   whole page. A page written in 512 B pieces is programmed once per piece
//!   (no merging in the write buffer), as a drive without sub-page merging
//!   does; the FTL sees whole-page writes only.
//! * **Trim** costs controller time only and unmaps the pages it covers
//!   whole; a page it covers only in part keeps its data (and mapping).
//!   **Flush** waits for the buffer.
//! * **DRAM mode**: no NAND and no GC; each of the `dies` units serves a
//!   command in `dram_per_4k_ns` per 4 KiB, after `dram_cmd_ns` of latency.
//!
//! **Commands.** A command may carry several extents (a vectored read or
//! write, the "extended interface" of temporal merge, Open-Channel 2.0's
//! vector commands). What a command costs is split the way a device with
//! such an interface spends it:
//!
//! * *once per command*: the command crossing the host link (`cmd_bytes`,
//!   an NVMe submission entry's 64 B; commands queue behind each other on
//!   the link, not behind bulk data, whose packets they interleave with),
//!   the controller's command time
//!   (`fw_cmd_ns`; `dram_cmd_ns` in DRAM mode), posting the completion and
//!   its interrupt (`cpl_ns`), and the command slot it holds (`cmd_slots`);
//! * *once per extent*: its descriptor on the link (`extent_bytes`, 16 B
//!   like an NVMe range or SGL entry, fetched as a list after the command;
//!   a one-extent command carries its range inline and fetches no list) and
//!   the device's time to translate and set up its transfer (`extent_ns`,
//!   on the controller; on the DRAM unit in DRAM mode);
//! * *per page and per byte*, for each extent: NAND reads and programs, the
//!   channel, the host-link data transfer, `fw_per_4k_ns`, `dram_per_4k_ns`.
//!
//! So n extents in one command save (n − 1) × the per-command costs against
//! n commands, and pay n − 1 descriptors more on the link than the n
//! commands' inline ranges ([`Device::command_saving_ns`] states the
//! difference for commands issued one at a time). `iface_depth` (how many commands the host may
//! have outstanding) is the host's side of the interface: the engines and
//! the virtual-time simulation enforce it, not this model.
//! Pages past the end of the device are ignored. Times saturate at
//! `u64::MAX` ns rather than wrap; the ranges `Params::check` enforces keep
//! them far from it.

use crate::config::Params;
use crate::die::{Die, NandCounters, NandTiming, Sealed};
use crate::dram::{DramUnits, SharedUnits};
use crate::ftl::{Ftl, FtlError, GcWork};
use crate::locked::{Locked, Stamp};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::Arc;

pub(crate) mod basics;
pub(crate) mod die_lanes;
pub mod queue_reads;
pub mod shared_reads;
use basics::{earliest, per_pages, Timeline};
pub use basics::{Extent, Op};

/// A logical page a command touches, and whether it covers all of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Page {
    lpn: u64,
    whole: bool,
}

/// Counters of the device.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceCounters {
    pub commands: u64,
    /// Extents over all commands (= commands when none is vectored).
    pub extents: u64,
    /// Busy time per die (or DRAM unit), ns; a read counts for its share
    /// of the die (one plane of `planes`).
    pub die_busy_ns: Vec<u64>,
}

/// The emulated device: parameters, FTL and resource clocks.
#[derive(Clone, Debug)]
pub struct Device {
    pub p: Params,
    pub ftl: Option<Ftl>,
    ctrl_free: crate::locked::FreeTimes,
    slot_free: Vec<u64>,
    /// DRAM mode: the units, link and slots ([`crate::dram`]), shared with
    /// the real-time front.
    dram: Option<SharedUnits>,
    /// Flash: each die's schedule ([`crate::die`]), behind its own lock
    /// for shared reads ([`shared_reads`]), as are the channels,
    /// the controller cores and the link.
    nand: Vec<Locked<Die>>,
    timing: NandTiming,
    chans: Vec<Locked<Timeline>>,
    link_line: Locked<Timeline>,
    /// The link as commands and extent lists cross it: their small
    /// transfers interleave with bulk data at packet granularity, so they
    /// queue behind each other, not behind data.
    cmd_line: Locked<Timeline>,
    /// Submission time of the latest command (for pruning timelines).
    t_now: Stamp,
    /// Shared reads' command numbers ([`shared_reads`]).
    read_seq: Stamp,
    /// Write buffer: (program end, die, operation, bytes) of the program
    /// units holding buffered data; the end is revised when reads have
    /// moved the operation (checked as entries leave). `buffered` also
    /// counts the units still being gathered.
    buffer: BinaryHeap<Reverse<(u64, u32, u64, u64)>>,
    buffered: u64,
    chan_ns_per_page: u64,
    link_ps_per_byte: u64,
    scratch: Vec<Page>,
    /// The latest completion time handed out: where virtual time stands.
    pub now: u64,
    pub counters: DeviceCounters,
    /// In the real-time front: the ledgers its link and controller are
    /// booked in ([`queue_reads`]).
    booking: Option<queue_reads::Booking>,
    /// Injected faults, decided per command by the real-time front
    /// ([`crate::fault`]).
    pub faults: crate::fault::FaultInjector,
    /// SLC cache, folding and suspension counts.
    pub nand_counters: NandCounters,
}

impl Device {
    /// A fresh device.
    pub fn new(p: &Params) -> Self {
        let dies = p.dies().max(1) as usize;
        let per_s = |mbps: f64, bytes: f64| {
            if mbps > 0.0 {
                (bytes / (mbps * 1e6) * 1e9).round() as u64
            } else {
                0
            }
        };
        let timing = NandTiming::of(p);
        Device {
            ftl: (!p.dram).then(|| Ftl::new(p)),
            nand: if p.dram {
                Vec::new()
            } else {
                (0..dies).map(|_| Locked::new(Die::new(&timing))).collect()
            },
            timing,
            nand_counters: NandCounters::default(),
            ctrl_free: crate::locked::FreeTimes::new(p.fw_units.max(1) as usize),
            slot_free: vec![0; p.cmd_slots as usize],
            dram: p
                .dram
                .then(|| SharedUnits(Arc::new(DramUnits::new(p, link_ps_per_byte(p))))),
            chans: (0..p.channels.max(1)).map(|_| Locked::default()).collect(),
            link_line: Locked::default(),
            cmd_line: Locked::default(),
            t_now: Stamp::default(),
            read_seq: Stamp::default(),
            buffer: BinaryHeap::new(),
            buffered: 0,
            chan_ns_per_page: per_s(p.channel_mbps, p.page_bytes as f64),
            link_ps_per_byte: link_ps_per_byte(p),
            scratch: Vec::new(),
            now: 0,
            counters: DeviceCounters {
                commands: 0,
                extents: 0,
                die_busy_ns: vec![0; dies],
            },
            faults: crate::fault::FaultInjector::new(&p.faults),
            booking: None,
            p: p.clone(),
        }
    }

    /// Capacity in bytes.
    pub fn capacity(&self) -> u64 {
        self.p.logical_pages() * self.p.page_bytes as u64
    }

    /// The logical pages the extents touch (within the device), into the
    /// reusable scratch list.
    fn pages(&mut self, extents: &[Extent]) -> Vec<Page> {
        let pb = u64::from(self.p.page_bytes);
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        for e in extents {
            let end = e.offset.saturating_add(e.len);
            out.extend(self.lpns(e).map(|lpn| Page {
                lpn,
                whole: lpn * pb >= e.offset && (lpn + 1) * pb <= end,
            }));
        }
        out
    }

    /// The logical pages extent `e` touches, within the device.
    pub fn lpns(&self, e: &Extent) -> Range<u64> {
        lpn_range(&self.p, e)
    }

    /// DRAM mode: the units, for a front that reserves them without this
    /// device's lock ([`crate::dram`]).
    pub fn dram_units(&self) -> Option<Arc<DramUnits>> {
        self.dram.as_ref().map(|u| u.0.clone())
    }

    /// The counters, with the DRAM units' busy time (kept by the units)
    /// or the dies' read time (kept by the dies).
    pub fn totals(&self) -> DeviceCounters {
        DeviceCounters {
            die_busy_ns: match &self.dram {
                Some(u) => u.0.busy_ns(),
                None => {
                    let mut busy: Vec<u64> = (self.counters.die_busy_ns.iter().zip(&self.nand))
                        .map(|(b, n)| b.saturating_add(n.lock().read_busy_ns))
                        .collect();
                    self.add_lane_busy(&mut busy);
                    busy
                }
            },
            ..self.counters.clone()
        }
    }

    /// The NAND counters, with those of reads (kept by the dies).
    pub fn nand_totals(&self) -> NandCounters {
        (self.nand.iter()).fold(self.nand_counters, |c, n| c.plus(n.lock().read_counts))
    }

    /// The link's time for `bytes`, ns.
    pub(crate) fn link_ns(&self, bytes: u64) -> u64 {
        bytes.saturating_mul(self.link_ps_per_byte) / 1000
    }

    fn link(&mut self, at: u64, bytes: u64) -> u64 {
        let dur = self.link_ns(bytes);
        self.link_data(at, dur, self.t_now.load())
    }

    /// A command's own bytes (the command, its extent list) over the link.
    fn fetch(&mut self, at: u64, bytes: u64) -> u64 {
        let dur = self.link_ns(bytes);
        self.link_cmd(at, dur, self.t_now.load())
    }

    fn channel(&mut self, c: usize, at: u64) -> u64 {
        let (dur, now) = (self.chan_ns_per_page, self.t_now.load());
        self.chan_booked(c, at, dur, now)
    }

    /// Bytes a command of `extents` extents moves over the link besides its
    /// data: the command, and its extent list when it has more than one.
    pub fn command_bytes(&self, extents: usize) -> u64 {
        let list = if extents > 1 {
            (extents as u64).saturating_mul(u64::from(self.p.extent_bytes))
        } else {
            0
        };
        u64::from(self.p.cmd_bytes).saturating_add(list)
    }

    /// The modelled saving of one command of `extents` extents against as
    /// many one-extent commands issued one after another (each once the
    /// previous has completed): (n − 1) × the per-command costs (command
    /// bytes on the link, `fw_cmd_ns` or `dram_cmd_ns`, `cpl_ns`) less the
    /// link time of the extent list, ns. Negative when the list costs more.
    /// Exact in DRAM mode; on flash the pages of one command may also
    /// overlap across dies, which saves more.
    pub fn command_saving_ns(&self, extents: u64) -> i64 {
        if extents < 2 {
            return 0;
        }
        let link = |bytes: u64| bytes.saturating_mul(self.link_ps_per_byte) / 1000;
        let cmd_ns = if self.p.dram {
            self.p.dram_cmd_ns
        } else {
            self.p.fw_cmd_ns
        };
        let per_command = link(u64::from(self.p.cmd_bytes))
            .saturating_add(cmd_ns)
            .saturating_add(self.p.cpl_ns);
        let list = link(self.command_bytes(extents as usize) - u64::from(self.p.cmd_bytes));
        ((extents - 1).saturating_mul(per_command) as i64).saturating_sub(list as i64)
    }

    /// Per-extent device time of a command of `extents` extents.
    fn extents_ns(&self, extents: u64) -> u64 {
        extents.saturating_mul(self.p.extent_ns)
    }

    /// A controller core's time for a command of `pages` pages and
    /// `extents` extents.
    pub(crate) fn controller_ns(&self, pages: u64, extents: u64) -> u64 {
        per_pages(self.p.fw_per_4k_ns, pages, self.p.page_bytes)
            .saturating_add(self.p.fw_cmd_ns)
            .saturating_add(self.extents_ns(extents))
    }

    fn controller(&mut self, t: u64, pages: u64, extents: u64) -> u64 {
        let cost = self.controller_ns(pages, extents);
        self.core(t, cost)
    }

    fn busy(&mut self, d: usize, ns: u64) {
        let b = &mut self.counters.die_busy_ns[d];
        *b = b.saturating_add(ns);
    }

    /// GC work on `die` from `from`: its copies and erases join the die's
    /// program/erase queue ([`Die::gc`]).
    fn die_work(&mut self, die: u32, from: u64, work: GcWork) {
        let d = die as usize;
        let Some(nand) = self.nand.get_mut(d).map(Locked::get_mut) else {
            return;
        };
        let busy = nand.gc(
            from,
            work.moved,
            work.reads,
            work.erased,
            self.t_now.load(),
            &self.timing,
            &mut self.nand_counters,
        );
        self.busy(d, busy);
    }

    /// Submit a command at time `t` (ns); returns its completion time, never
    /// before `t`. An error is a failure of the model (a bug: see
    /// [`FtlError`]); the device should not be used after one.
    pub fn submit(&mut self, t: u64, op: Op, extents: &[Extent]) -> Result<u64, FtlError> {
        self.counters.commands += 1;
        self.counters.extents += extents.len() as u64;
        let bytes = extents.iter().fold(0u64, |a, e| a.saturating_add(e.len));
        if let Some(u) = &self.dram {
            let pages = extents.iter().map(|e| self.lpns(e).count() as u64).sum();
            let done = u.0.submit(t, op, bytes, pages, extents.len() as u64);
            let done = self.p.stall.delay(t, done);
            self.now = self.now.max(done);
            return Ok(done);
        }
        let pages = self.pages(extents);
        // A command waits for a free slot and holds it until it completes.
        let slot = (!self.slot_free.is_empty()).then(|| earliest(&self.slot_free));
        let t = slot.map_or(t, |(_, f)| t.max(f));
        self.t_now.raise_mut(t);
        // The command and its extent list cross the link once (module docs).
        let n = extents.len() as u64;
        let fetched = self.fetch(t, self.command_bytes(extents.len()));
        let done = self.submit_flash(fetched, op, bytes, &pages, n);
        self.scratch = pages;
        let done = done?.max(t).saturating_add(self.p.cpl_ns);
        let done = self.p.stall.delay(t, done);
        if let Some((i, _)) = slot {
            self.slot_free[i] = done;
        }
        self.now = self.now.max(done);
        Ok(done)
    }

    fn submit_flash(
        &mut self,
        t: u64,
        op: Op,
        bytes: u64,
        pages: &[Page],
        extents: u64,
    ) -> Result<u64, FtlError> {
        let npages = pages.len() as u64;
        Ok(match op {
            Op::Read => {
                let ready = self.controller(t, npages, extents);
                let mut data_at = ready;
                for pg in pages {
                    data_at = data_at.max(self.read_page(pg.lpn, ready));
                }
                self.link(data_at, bytes)
            }
            Op::Write => {
                let ready = self.controller(t, npages, extents);
                let arrived = self.link(ready, bytes);
                let programmed = self.program_pages(arrived, pages)?;
                if self.p.write_buffer == 0 {
                    programmed
                } else {
                    self.buffered_completion(arrived, programmed, bytes)
                }
            }
            Op::Trim => {
                let done = self.controller(t, 0, extents);
                if let Some(ftl) = self.ftl.as_mut() {
                    for pg in pages.iter().filter(|pg| pg.whole) {
                        ftl.trim(pg.lpn)?;
                    }
                }
                done
            }
            Op::Flush => self.controller(t, 0, 0).max(self.flush_nand()),
        })
    }

    /// Read logical page `lpn` from its die, starting no earlier than `at`;
    /// returns when its data has crossed the channel (`at` when the page is
    /// unmapped: no NAND access). The die places the read ([`Die::begin_read`]).
    fn read_page(&mut self, lpn: u64, at: u64) -> u64 {
        self.read_page_booked(lpn, at, self.counters.commands, self.t_now.load())
    }

    /// [`Device::read_page`] for command number `cmd`, through `&self`: the
    /// die's lock, then its channel's, are all it takes (uncontended for
    /// the owner of the whole model). Its die time and NAND counts are
    /// kept by the die.
    pub(crate) fn read_page_as(&self, lpn: u64, at: u64, cmd: u64, now: u64) -> u64 {
        let dur = self.chan_ns_per_page;
        let channel = |c: usize, from: u64| self.chans[c].lock().reserve(from, dur, now);
        self.read_page_with(lpn, (at, cmd, now), channel)
    }

    /// [`Device::read_page_as`] with `channel(c, from)` reserving channel
    /// `c`'s transfer of the page from `from` (returning its end): the
    /// device's own schedule of the channel, or a queue pair's lane of it
    /// ([`queue_reads`]).
    pub(crate) fn read_page_with(
        &self,
        lpn: u64,
        (at, cmd, now): (u64, u64, u64),
        channel: impl FnMut(usize, u64) -> u64,
    ) -> u64 {
        match self.page_at(lpn) {
            Some(at_page) => self.read_die(at_page, (at, cmd, now), channel).0,
            None => at,
        }
    }

    /// Where logical page `lpn`'s data is: its die, plane and NAND page
    /// (None: unmapped, or on no die).
    #[inline]
    pub(crate) fn page_at(&self, lpn: u64) -> Option<(usize, usize, u64)> {
        let ppn = self.ftl.as_ref().and_then(|f| f.mapping(lpn))?;
        let (d, plane, page) = self.timing.locate(ppn);
        (d < self.nand.len()).then_some((d, plane, page))
    }

    /// [`Device::read_page_with`] of a page at `(die, plane, page)`, under
    /// the die's lock: when its data crossed the channel, and until when
    /// the die's own schedule then holds work ([`Die::busy_until`]).
    pub(crate) fn read_die(
        &self,
        (d, plane, page): (usize, usize, u64),
        (at, cmd, now): (u64, u64, u64),
        mut channel: impl FnMut(usize, u64) -> u64,
    ) -> (u64, u64) {
        let mut die = self.nand[d].lock();
        let c = d % self.chans.len();
        let dur = self.chan_ns_per_page;
        let planes = u64::from(self.timing.planes);
        if let Some(read_end) = die.cached_read(cmd, page) {
            // Another unit of a page this command has read: its transfer.
            let x = channel(c, read_end.max(at));
            die.extend_read(plane, x);
            die.read_busy_ns = die.read_busy_ns.saturating_add(dur / planes);
            return (x, die.busy_until());
        }
        let plan = die.begin_read(at, plane, now, &self.timing);
        let read_end = plan.begin.saturating_add(self.p.read_ns);
        let x = channel(c, read_end);
        let mut counts = die.read_counts;
        let busy = die.end_read(plan, x, (cmd, page, read_end), &self.timing, &mut counts);
        die.read_counts = counts;
        // A read holds one plane: its share of the die.
        die.read_busy_ns = die.read_busy_ns.saturating_add(busy / planes);
        (x, die.busy_until())
    }

    /// Program the pages of a write whose data arrived at `arrived`, with
    /// foreground GC before and background GC after each, and the read of
    /// read-modify-write for partial pages (module docs). Each page joins
    /// its die's program unit; without a write buffer the units this write
    /// left open are programmed now. Returns when the last program ended
    /// (for a buffered write: `arrived`; the buffer tracks the programs).
    fn program_pages(&mut self, arrived: u64, pages: &[Page]) -> Result<u64, FtlError> {
        let mut programmed = arrived;
        let page_bytes = u64::from(self.p.page_bytes);
        for pg in pages {
            let merged = if pg.whole {
                arrived
            } else {
                self.read_page(pg.lpn, arrived)
            };
            let Some(ftl) = self.ftl.as_mut() else {
                break;
            };
            let (die, work) = ftl.write(pg.lpn)?;
            self.die_work(die, arrived, work);
            let d = die as usize;
            let c = d % self.chans.len();
            let xfer_end = self.channel(c, merged);
            if self.p.write_buffer > 0 {
                self.buffered = self.buffered.saturating_add(page_bytes);
            }
            let now = self.t_now.load();
            let sealed = self.nand.get_mut(d).and_then(|n| {
                n.get_mut()
                    .add_unit(xfer_end, now, &self.timing, &mut self.nand_counters)
            });
            if let Some(s) = sealed {
                programmed = programmed.max(self.sealed(d, s));
            }
            // Background GC right after, on the same die.
            if let Some(ftl) = self.ftl.as_mut() {
                let bg = ftl.background(die)?;
                self.die_work(die, xfer_end, bg);
            }
        }
        if self.p.write_buffer == 0 && self.timing.unit > 1 {
            programmed = programmed.max(self.seal_open().unwrap_or(0));
        }
        Ok(programmed)
    }

    /// Account a program unit handed to die `d`; returns its end.
    fn sealed(&mut self, d: usize, s: Sealed) -> u64 {
        self.busy(d, s.busy);
        if self.p.write_buffer > 0 {
            let bytes = u64::from(s.units) * u64::from(self.p.page_bytes);
            self.buffer.push(Reverse((s.end, d as u32, s.seq, bytes)));
        }
        s.end
    }

    /// Program every die's open program unit; returns when the last ends
    /// (None: none was open).
    fn seal_open(&mut self) -> Option<u64> {
        let mut last = None;
        let now = self.t_now.load();
        for d in 0..self.nand.len() {
            let die = self.nand[d].get_mut();
            if !die.has_open() {
                continue;
            }
            if let Some(s) = die.seal(now, &self.timing, &mut self.nand_counters) {
                last = last.max(Some(self.sealed(d, s)));
            }
        }
        last
    }

    /// A flush: program what is gathered; returns when every die's host
    /// programs end.
    fn flush_nand(&mut self) -> u64 {
        self.seal_open();
        (self.nand.iter_mut())
            .map(|n| n.get_mut().host_end())
            .max()
            .unwrap_or(0)
    }

    /// Bytes of written data still only in the write buffer at `t` (their
    /// program not ended, or their unit still being gathered): what a power
    /// cut then loses on a drive without power-loss protection.
    pub fn volatile_bytes(&self, t: u64) -> u64 {
        let filed: u64 = self.buffer.iter().map(|Reverse((_, _, _, b))| b).sum();
        let programming: u64 = self
            .buffer
            .iter()
            .filter(|Reverse((end, d, seq, _))| self.buffer_end(*end, *d, *seq) > t)
            .map(|Reverse((_, _, _, b))| b)
            .sum();
        self.buffered.saturating_sub(filed) + programming
    }

    /// The current end of buffer entry (`end` as filed, die `d`, operation
    /// `seq`): later, if reads have moved the operation.
    fn buffer_end(&self, end: u64, d: u32, seq: u64) -> u64 {
        self.nand
            .get(d as usize)
            .and_then(|n| n.lock().op_end(seq))
            .map_or(end, |e| e.max(end))
    }

    /// With a write buffer, a write completes when its data fits in the
    /// buffer: the oldest buffered data leaves as the programs of its
    /// program units end (at their current end: reads may have moved them).
    /// The write's pages are already counted in `buffered`; when only units
    /// still being gathered fill the buffer, they are programmed now.
    fn buffered_completion(&mut self, arrived: u64, _programmed: u64, _bytes: u64) -> u64 {
        while let Some(&Reverse((end, d, seq, b))) = self.buffer.peek() {
            if end > arrived {
                break;
            }
            self.buffer.pop();
            let now_end = self.buffer_end(end, d, seq);
            if now_end > end {
                self.buffer.push(Reverse((now_end, d, seq, b)));
            } else {
                self.buffered = self.buffered.saturating_sub(b);
            }
        }
        let mut complete = arrived;
        while self.buffered > self.p.write_buffer {
            match self.buffer.pop() {
                Some(Reverse((end, d, seq, b))) => {
                    let now_end = self.buffer_end(end, d, seq);
                    if now_end > end {
                        self.buffer.push(Reverse((now_end, d, seq, b)));
                        continue;
                    }
                    self.buffered = self.buffered.saturating_sub(b);
                    complete = complete.max(end);
                }
                None => {
                    if self.seal_open().is_none() {
                        break;
                    }
                }
            }
        }
        complete
    }

    /// Zoned mode: a command that only takes the controller and erases
    /// `blocks` FTL blocks on every die (a zone reset; 0: a refused or
    /// management command); returns its completion ([`crate::zoned`]).
    pub(crate) fn zone_command(&mut self, t: u64, blocks: u64) -> u64 {
        self.counters.commands += 1;
        self.t_now.raise_mut(t);
        let mut done = self.controller(t, 0, 1);
        for d in (0..self.nand.len()).filter(|_| blocks > 0) {
            let work = GcWork {
                erased: blocks,
                ..GcWork::default()
            };
            self.die_work(d as u32, done, work);
            done = done.max(self.nand[d].get_mut().pe_end());
        }
        let done = done.saturating_add(self.p.cpl_ns);
        self.now = self.now.max(done);
        done
    }

    /// Free erase blocks (0 in DRAM mode).
    pub fn free_blocks(&self) -> u64 {
        self.ftl.as_ref().map(|f| f.free_blocks()).unwrap_or(0)
    }
}

/// The logical pages extent `e` touches on a device of `p`.
pub fn lpn_range(p: &Params, e: &Extent) -> Range<u64> {
    let pb = u64::from(p.page_bytes.max(1));
    let first = e.offset / pb;
    let stop = e
        .offset
        .saturating_add(e.len.max(1))
        .div_ceil(pb)
        .min(p.logical_pages());
    first..stop.max(first)
}

/// The host link's time per byte, ps (0: not modelled).
fn link_ps_per_byte(p: &Params) -> u64 {
    if p.link_mbps > 0.0 {
        (1e6 / p.link_mbps).round() as u64
    } else {
        0
    }
}

#[cfg(test)]
mod command_costs;
#[cfg(test)]
mod tests;
