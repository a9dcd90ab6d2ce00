//! Die scheduling: when each NAND die reads, programs and erases.
//!
//! **Today's NAND.** A die holds `planes` planes; a NAND page is
//! `flash_page_bytes` (16 KiB today) and holds several mapping units
//! (`page_bytes`, 4 KiB: what the FTL maps). A die programs one page in
//! every plane at once (a multi-plane program), so its *program unit* is
//! `planes × flash_page_bytes / page_bytes` mapping units; the write path
//! gathers units per die (the write buffer holds them) and programs a unit
//! once it is full. Reads go to one plane and the planes of a die read
//! independently (today's dies read their planes asynchronously); units of
//! one NAND page read by one command share one array read. A program takes
//! the time of its page type: TLC programs a word line's lower, middle and
//! upper pages with different times (`program_ns=L/M/U`), which the dies
//! take in turn; one time means every program takes it.
//!
//! **SLC cache and folding.** With `slc_cache` > 0 (a share of the logical
//! size), each die keeps its part of that cache in SLC mode: host data is programmed there at
//! `slc_program_ns` per program unit while it has room; once it is full,
//! host data goes straight to TLC at the page-type times. Data leaves the
//! SLC area by *folding* (read it, program it to TLC, erase the SLC block),
//! which a die does in its idle time: each time new work reaches a die, the
//! time it sat without program/erase work since the last (less what its
//! reads took) folds program units at `read_ns` + `program_ns` each. Folding yields to reads at
//! no cost to them, and nothing folds while a die stays busy.
//!
//! **Read priority and program/erase suspension.** A die keeps its program
//! and erase operations (host programs, GC copies, erases) in a queue. A
//! read goes first: before queued operations, and into a running one, which
//! it suspends: the operation reaches its next safe point in `suspend_ns`,
//! the read runs, and the operation resumes `resume_ns` later, every queued
//! operation after it moving back by the same time. Reads arriving while
//! an operation is suspended ride the same suspension. So writes still
//! progress, one operation lets at most `suspend_max` reads ahead of it;
//! past that, reads wait for it to end. `suspend_max=0` turns this off:
//! reads then queue behind program and erase work in submission order, as
//! in the 2009 drives the old presets model.
//!
//! **Limits.** A command's completion time is fixed when it is submitted
//! (the model's contract, [`crate::device`]). Reads submitted later may
//! push an operation back after a write waiting for it was given its
//! completion: without a write buffer, such a write completes early by at
//! most what `suspend_max` reads (and their suspensions) cost; with one,
//! the buffer's drain is recomputed from the operations' current end times,
//! so later writes see the delay. Reads of data still in the buffer are
//! served from the NAND like any other. The SLC cache is a fixed share of
//! the dies: real dynamic caches also shrink as the drive fills.

use crate::config::Params;
use std::collections::VecDeque;

/// The die timings the scheduler needs, derived once from [`Params`].
#[derive(Clone, Debug)]
pub struct NandTiming {
    pub read_ns: u64,
    pub erase_ns: u64,
    /// Program time per page type, taken in turn (at least one).
    pub program_types: Vec<u64>,
    /// Their mean: what a GC copy's program takes.
    pub program_mean: u64,
    pub slc_program_ns: u64,
    /// Mapping units per program unit (planes × units per NAND page).
    pub unit: u32,
    /// Mapping units per NAND page.
    pub units_per_page: u32,
    pub planes: u32,
    pub suspend_ns: u64,
    pub resume_ns: u64,
    pub suspend_max: u32,
    /// SLC cache per die, mapping units.
    pub slc_units: u64,
    /// FTL blocks GC reclaims per NAND erase (`flash_block_bytes`).
    pub erase_every: u64,
    /// Die time to fold one program unit out of the SLC cache.
    pub fold_ns: u64,
    pub pages_per_block: u32,
    pub blocks_per_die: u32,
}

impl NandTiming {
    pub fn of(p: &Params) -> NandTiming {
        let units_per_page = (p.flash_page_bytes / p.page_bytes.max(1)).max(1);
        let unit = units_per_page.saturating_mul(p.planes.max(1));
        let program_types = if p.program_types_ns.is_empty() {
            vec![p.program_ns]
        } else {
            p.program_types_ns.clone()
        };
        let slc_units = (p.logical_pages() as f64 * p.slc_cache.clamp(0.0, 1.0)) as u64
            / u64::from(p.dies().max(1));
        NandTiming {
            read_ns: p.read_ns,
            erase_ns: p.erase_ns,
            program_mean: p.program_ns,
            program_types,
            slc_program_ns: p.slc_program_ns,
            unit,
            units_per_page,
            planes: p.planes.max(1),
            suspend_ns: p.suspend_ns,
            resume_ns: p.resume_ns,
            suspend_max: p.suspend_max,
            slc_units,
            erase_every: (p.flash_block_bytes
                / (u64::from(p.pages_per_block) * u64::from(p.page_bytes)).max(1))
            .max(1),
            // Folding one program unit: read it from SLC, program it as one
            // TLC page type (the SLC block's erase, spread over a real
            // block's hundreds of pages, is left out).
            fold_ns: p.read_ns.saturating_add(p.program_ns),
            pages_per_block: p.pages_per_block.max(1),
            blocks_per_die: p.blocks_per_die().max(1),
        }
    }

    /// Where physical unit `ppn` lives: (die, plane, NAND page id).
    #[inline]
    pub fn locate(&self, ppn: u64) -> (usize, usize, u64) {
        let ppb = u64::from(self.pages_per_block);
        let die = ppn / (ppb * u64::from(self.blocks_per_die));
        if self.unit == 1 {
            return (die as usize, 0, ppn); // one page per plane and program
        }
        let in_unit = ppn % ppb % u64::from(self.unit);
        let plane = in_unit / u64::from(self.units_per_page);
        (
            die as usize,
            plane as usize,
            ppn / u64::from(self.units_per_page),
        )
    }
}

/// Counters of the NAND scheduling, over all dies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NandCounters {
    /// Host mapping units programmed into the SLC cache.
    pub slc_units: u64,
    /// Mapping units folded from the SLC cache to TLC.
    pub folded_units: u64,
    /// Program or erase operations suspended for a read.
    pub suspensions: u64,
    /// Reads that went ahead of a queued or suspended operation.
    pub reads_ahead: u64,
}

impl NandCounters {
    /// Both counts added.
    pub fn plus(self, o: NandCounters) -> NandCounters {
        NandCounters {
            slc_units: self.slc_units + o.slc_units,
            folded_units: self.folded_units + o.folded_units,
            suspensions: self.suspensions + o.suspensions,
            reads_ahead: self.reads_ahead + o.reads_ahead,
        }
    }
}

/// A program or erase operation in a die's queue.
#[derive(Clone, Copy, Debug)]
struct PeOp {
    start: u64,
    end: u64,
    /// Reads let ahead of it so far.
    preempts: u32,
    /// Its last suspension: suspended from, resumes at (0, 0: none).
    suspended_at: u64,
    resume_at: u64,
}

/// How a read meets the operation at its die when it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Meets {
    /// No operation queued or running then.
    Nothing,
    /// The operation at this index is suspended: the read rides that suspension.
    Suspended(usize),
    /// The operation at this index is running: the read suspends it.
    Running(usize),
    /// The operation at this index is queued: the read goes first.
    Queued(usize),
}

/// A read placed on a die, between [`Die::begin_read`] and [`Die::end_read`].
#[derive(Clone, Copy, Debug)]
pub struct ReadPlan {
    /// When the array read starts.
    pub begin: u64,
    plane: usize,
    meets: Meets,
}

/// A program unit handed to the die: its sequence number and end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sealed {
    pub seq: u64,
    pub end: u64,
    pub units: u32,
    pub busy: u64,
}

/// One die's state (module docs).
#[derive(Clone, Debug)]
pub struct Die {
    /// Program/erase operations not yet known to be over (kept only when
    /// reads may suspend them).
    ops: VecDeque<PeOp>,
    /// Sequence number of `ops[0]`; operations are numbered as appended.
    seq_base: u64,
    next_seq: u64,
    /// When the die ends the program/erase work queued so far.
    pe_end: u64,
    /// Per plane, when its last read's data has crossed the channel.
    plane_free: Vec<u64>,
    read_free: u64,
    /// The last host program: (seq, end when appended).
    last_host: (u64, u64),
    /// The program unit being gathered.
    open_units: u32,
    open_ready: u64,
    open_slc: bool,
    page_type: usize,
    /// GC copies not yet making a whole program unit, and FTL blocks
    /// reclaimed not yet making a NAND erase block.
    gc_carry: u64,
    erase_carry: u64,
    /// Units in the SLC cache.
    slc_used: u64,
    /// Idle time is counted for folding from here on.
    fold_mark: u64,
    reads_ns: u64,
    reads_at_mark: u64,
    /// The last array read: (command, NAND page, when its data was read).
    last_read: (u64, u64, u64),
    /// What reads cost this die (its busy time, ns, and their NAND counts),
    /// kept here so reads need no lock but the die's; the device's totals
    /// add them ([`crate::device`]).
    pub(crate) read_busy_ns: u64,
    pub(crate) read_counts: NandCounters,
}

impl Die {
    pub fn new(t: &NandTiming) -> Die {
        Die {
            ops: VecDeque::new(),
            seq_base: 0,
            next_seq: 0,
            pe_end: 0,
            plane_free: vec![0; t.planes as usize],
            read_free: 0,
            last_host: (0, 0),
            open_units: 0,
            open_ready: 0,
            open_slc: false,
            page_type: 0,
            gc_carry: 0,
            erase_carry: 0,
            slc_used: 0,
            fold_mark: 0,
            reads_ns: 0,
            reads_at_mark: 0,
            last_read: (u64::MAX, u64::MAX, 0),
            read_busy_ns: 0,
            read_counts: NandCounters::default(),
        }
    }

    /// Forget operations over by `now` (no later request starts before it).
    #[inline]
    fn prune(&mut self, now: u64) {
        while self.ops.front().is_some_and(|o| o.end <= now) {
            self.ops.pop_front();
            self.seq_base += 1;
        }
    }

    /// The current end of operation `seq`, if it is still queued (None: it
    /// was over by the current time, or its end never moves).
    pub fn op_end(&self, seq: u64) -> Option<u64> {
        let i = seq.checked_sub(self.seq_base)?;
        self.ops.get(usize::try_from(i).ok()?).map(|o| o.end)
    }

    /// When the last program or erase queued on this die ends.
    pub fn pe_end(&self) -> u64 {
        self.pe_end
    }

    /// When the program and erase work queued on this die so far ends,
    /// with the delays reads gave it: a read from then on meets none.
    pub fn pe_until(&self) -> u64 {
        let ops = self.ops.back().map_or(0, |o| o.end);
        self.pe_end.max(ops)
    }

    /// [`Die::pe_until`], or when the last read made under the die's own
    /// schedule crossed the channel, whichever is later.
    pub fn busy_until(&self) -> u64 {
        self.pe_until().max(self.read_free)
    }

    /// Take in reads made on queue pairs' own lanes of this die
    /// ([`crate::device::die_lanes`]): per plane, when their data crossed
    /// the channel (`free`); they kept the die `reads_ns`, its share
    /// `busy_ns`.
    pub(crate) fn absorb_lane_reads(&mut self, free: &[u64], reads_ns: u64, busy_ns: u64) {
        for (p, &f) in self.plane_free.iter_mut().zip(free) {
            *p = (*p).max(f);
            self.read_free = self.read_free.max(f);
        }
        self.reads_ns = self.reads_ns.saturating_add(reads_ns);
        self.read_busy_ns = self.read_busy_ns.saturating_add(busy_ns);
    }

    /// What reads left in its schedule (tests): its planes' free times,
    /// its reads' end, their die time and its share.
    #[cfg(test)]
    pub(crate) fn read_state(&self) -> (Vec<u64>, u64, u64, u64) {
        (
            self.plane_free.clone(),
            self.read_free,
            self.reads_ns,
            self.read_busy_ns,
        )
    }

    /// When the last host program on this die ends.
    pub fn host_end(&self) -> u64 {
        self.op_end(self.last_host.0).unwrap_or(self.last_host.1)
    }

    /// The data of NAND page `page` if command `cmd` has already read it.
    pub fn cached_read(&self, cmd: u64, page: u64) -> Option<u64> {
        let (c, pg, at) = self.last_read;
        (c == cmd && pg == page).then_some(at)
    }

    /// Place a read of `plane` ready at `at` (module docs): returns when its
    /// array read begins. `now` is the current submission time.
    pub fn begin_read(&mut self, at: u64, plane: usize, now: u64, t: &NandTiming) -> ReadPlan {
        let plane = plane.min(self.plane_free.len() - 1);
        let mut s = at.max(self.plane_free[plane]);
        if t.suspend_max == 0 {
            let begin = s.max(self.pe_end);
            return ReadPlan {
                begin,
                plane,
                meets: Meets::Nothing,
            };
        }
        self.prune(now);
        let meets = loop {
            let i = self.ops.partition_point(|o| o.end <= s);
            let Some(op) = self.ops.get(i) else {
                break Meets::Nothing;
            };
            if op.preempts >= t.suspend_max {
                s = op.end; // its reads are spent: wait for it
                continue;
            }
            if op.resume_at > s && op.start < s {
                break Meets::Suspended(i);
            }
            break if op.start < s {
                Meets::Running(i)
            } else {
                Meets::Queued(i)
            };
        };
        let begin = match meets {
            Meets::Suspended(i) => s.max(self.ops[i].suspended_at),
            Meets::Running(_) => s.saturating_add(t.suspend_ns),
            _ => s,
        };
        ReadPlan {
            begin,
            plane,
            meets,
        }
    }

    /// Finish a read whose data crossed the channel at `x` (its array read
    /// ended at `read_end`): move the operations it went ahead of. Returns
    /// the die time it took (read, transfer, resume overhead).
    pub fn end_read(
        &mut self,
        plan: ReadPlan,
        x: u64,
        cached: (u64, u64, u64),
        t: &NandTiming,
        c: &mut NandCounters,
    ) -> u64 {
        let mut busy = x.saturating_sub(plan.begin);
        match plan.meets {
            Meets::Nothing => {}
            Meets::Suspended(i) => {
                let op = &mut self.ops[i];
                let resume = x.saturating_add(t.resume_ns).max(op.resume_at);
                let delay = resume - op.resume_at;
                op.resume_at = resume;
                op.preempts += 1;
                self.shift(i, delay, true);
                c.reads_ahead += 1;
            }
            Meets::Running(i) => {
                let op = &mut self.ops[i];
                op.suspended_at = plan.begin;
                op.resume_at = x.saturating_add(t.resume_ns);
                op.preempts += 1;
                let delay = op.resume_at - plan.begin;
                self.shift(i, delay, true);
                busy = busy.saturating_add(t.resume_ns);
                c.suspensions += 1;
                c.reads_ahead += 1;
            }
            Meets::Queued(i) => {
                let op = &mut self.ops[i];
                if x > op.start {
                    let delay = x - op.start;
                    op.preempts += 1;
                    self.shift(i, delay, false);
                    c.reads_ahead += 1;
                }
            }
        }
        self.plane_free[plan.plane] = self.plane_free[plan.plane].max(x);
        self.read_free = self.read_free.max(x);
        self.reads_ns = self.reads_ns.saturating_add(busy);
        self.last_read = cached;
        busy
    }

    /// A further unit of an already read page crossed the channel at `x`.
    pub fn extend_read(&mut self, plane: usize, x: u64) {
        let plane = plane.min(self.plane_free.len() - 1);
        self.plane_free[plane] = self.plane_free[plane].max(x);
        self.read_free = self.read_free.max(x);
    }

    /// Move operation `i` (its start too unless it has `started`) and the
    /// ones after it back by `delay`; an idle gap before a later operation
    /// absorbs the delay.
    fn shift(&mut self, i: usize, delay: u64, started: bool) {
        if delay == 0 {
            return;
        }
        let mut carry = delay;
        let mut prev_end = self.ops[i].end;
        {
            let op = &mut self.ops[i];
            op.end = op.end.saturating_add(delay);
            if !started {
                op.start = op.start.saturating_add(delay);
            }
        }
        for op in self.ops.iter_mut().skip(i + 1) {
            carry = carry.saturating_sub(op.start.saturating_sub(prev_end));
            if carry == 0 {
                break;
            }
            prev_end = op.end;
            op.start = op.start.saturating_add(carry);
            op.end = op.end.saturating_add(carry);
        }
        if let Some(last) = self.ops.back() {
            self.pe_end = self.pe_end.max(last.end);
        }
    }

    /// Fold SLC-cached units in the idle time before `ready` (module docs).
    /// Returns the die time folding took.
    #[inline]
    fn fold_idle(&mut self, ready: u64, t: &NandTiming, c: &mut NandCounters) -> u64 {
        if t.slc_units == 0 {
            return 0; // no cache, nothing to fold
        }
        let from = self.pe_end.max(self.fold_mark);
        if ready <= from {
            return 0;
        }
        let reads = self.reads_ns.saturating_sub(self.reads_at_mark);
        self.fold_mark = ready;
        self.reads_at_mark = self.reads_ns;
        if self.slc_used == 0 {
            return 0;
        }
        let idle = (ready - from).saturating_sub(reads);
        let groups = self.slc_used.div_ceil(u64::from(t.unit));
        // A fold time of 0 folds everything at once.
        let folded = idle
            .checked_div(t.fold_ns)
            .map_or(groups, |n| n.min(groups));
        let units = (folded * u64::from(t.unit)).min(self.slc_used);
        self.slc_used -= units;
        c.folded_units += units;
        folded.saturating_mul(t.fold_ns)
    }

    /// Append a program or erase operation of `dur` ready at `ready`:
    /// after the work queued and the reads placed. Returns (seq, end, fold busy).
    #[inline]
    fn push_op(
        &mut self,
        ready: u64,
        dur: u64,
        now: u64,
        t: &NandTiming,
        c: &mut NandCounters,
    ) -> (u64, u64, u64) {
        let folded = self.fold_idle(ready, t, c);
        if t.suspend_max > 0 {
            self.prune(now);
        }
        let start = ready.max(self.pe_end).max(self.read_free);
        let end = start.saturating_add(dur);
        self.pe_end = end;
        self.fold_mark = self.fold_mark.max(end);
        self.reads_at_mark = self.reads_ns;
        let seq = self.next_seq;
        self.next_seq += 1;
        if t.suspend_max > 0 {
            self.ops.push_back(PeOp {
                start,
                end,
                preempts: 0,
                suspended_at: 0,
                resume_at: 0,
            });
        } else {
            self.seq_base = self.next_seq;
        }
        (seq, end, folded)
    }

    /// A host mapping unit whose data is on the die's register at `ready`
    /// joins the program unit being gathered; a full unit is programmed.
    #[inline]
    pub fn add_unit(
        &mut self,
        ready: u64,
        now: u64,
        t: &NandTiming,
        c: &mut NandCounters,
    ) -> Option<Sealed> {
        let mut folded = 0;
        if self.open_units == 0 {
            folded = self.fold_idle(ready, t, c);
            self.open_slc = self.slc_used + u64::from(t.unit) <= t.slc_units;
            self.open_ready = ready;
        }
        self.open_units += 1;
        self.open_ready = self.open_ready.max(ready);
        if self.open_slc {
            self.slc_used += 1;
            c.slc_units += 1;
        }
        if self.open_units < t.unit {
            return None;
        }
        self.seal(now, t, c).map(|mut s| {
            s.busy += folded;
            s
        })
    }

    /// Whether a program unit is being gathered.
    pub fn has_open(&self) -> bool {
        self.open_units > 0
    }

    /// Program the unit being gathered, full or not (a partial one is
    /// padded: it takes a whole program).
    #[inline]
    pub fn seal(&mut self, now: u64, t: &NandTiming, c: &mut NandCounters) -> Option<Sealed> {
        if self.open_units == 0 {
            return None;
        }
        let dur = if self.open_slc {
            t.slc_program_ns
        } else {
            // Page types in turn (page_type stays below their number).
            let d = t
                .program_types
                .get(self.page_type)
                .copied()
                .unwrap_or(t.program_mean);
            self.page_type += 1;
            if self.page_type >= t.program_types.len() {
                self.page_type = 0;
            }
            d
        };
        let (seq, end, folded) = self.push_op(self.open_ready, dur, now, t, c);
        self.last_host = (seq, end);
        let units = std::mem::take(&mut self.open_units);
        Some(Sealed {
            seq,
            end,
            units,
            busy: dur.saturating_add(folded),
        })
    }

    /// Garbage-collection work from `from`: `moved` units copied (their
    /// source pages taking `reads` array reads), `erased` FTL blocks
    /// reclaimed. Copies are programmed a program unit at a time, and a NAND
    /// block is erased per `erase_every` FTL blocks (the rest waits for the
    /// next cleaning); each copy and each erase is one operation reads
    /// can go ahead of (one operation in all when they cannot). Returns the
    /// die time.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn gc(
        &mut self,
        from: u64,
        moved: u64,
        reads: u64,
        erased: u64,
        now: u64,
        t: &NandTiming,
        c: &mut NandCounters,
    ) -> u64 {
        if moved == 0 && reads == 0 && erased == 0 {
            return 0;
        }
        self.gc_carry += moved;
        let programs = self.gc_carry / u64::from(t.unit);
        self.gc_carry %= u64::from(t.unit);
        self.erase_carry += erased;
        let erased = self.erase_carry / t.erase_every;
        self.erase_carry %= t.erase_every;
        let read_ns = reads.saturating_mul(t.read_ns);
        let total = read_ns
            .saturating_add(programs.saturating_mul(t.program_mean))
            .saturating_add(erased.saturating_mul(t.erase_ns));
        let mut busy = total;
        if t.suspend_max == 0 {
            busy += self.push_op(from, total, now, t, c).2;
            return busy;
        }
        if programs == 0 && reads > 0 {
            busy += self.push_op(from, read_ns, now, t, c).2;
        }
        for k in 0..programs {
            // The reads spread over the copies, the remainder on the first.
            let share = reads / programs + u64::from(k == 0) * (reads % programs);
            let dur = share
                .saturating_mul(t.read_ns)
                .saturating_add(t.program_mean);
            busy += self.push_op(from, dur, now, t, c).2;
        }
        for _ in 0..erased {
            busy += self.push_op(from, t.erase_ns, now, t, c).2;
        }
        busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(suspend_max: u32) -> NandTiming {
        let mut p = crate::config::preset("nvme-tlc").unwrap();
        p.suspend_max = suspend_max;
        NandTiming::of(&p)
    }

    fn read(d: &mut Die, at: u64, t: &NandTiming, c: &mut NandCounters) -> u64 {
        let plan = d.begin_read(at, 0, at, t);
        let x = plan.begin + t.read_ns;
        d.end_read(plan, x, (u64::MAX, u64::MAX, 0), t, c);
        x
    }

    #[test]
    fn a_read_suspends_a_running_program_which_ends_later_by_the_read() {
        let t = timing(8);
        let mut c = NandCounters::default();
        let mut d = Die::new(&t);
        let (seq, end, _) = d.push_op(0, 1_000_000, 0, &t, &mut c);
        let x = read(&mut d, 100_000, &t, &mut c);
        assert_eq!(x, 100_000 + t.suspend_ns + t.read_ns);
        let moved = d.op_end(seq).unwrap();
        assert_eq!(moved, end + t.read_ns + t.resume_ns);
        assert_eq!(c.suspensions, 1);
    }

    #[test]
    fn reads_go_before_queued_operations_and_the_queue_moves_back() {
        let t = timing(8);
        let mut c = NandCounters::default();
        let mut d = Die::new(&t);
        let (a, _, _) = d.push_op(0, 1_000_000, 0, &t, &mut c);
        let (b, b_end, _) = d.push_op(0, 1_000_000, 0, &t, &mut c);
        // A read at 2 ms would once have waited for both; it suspends the
        // first, and the second moves back with it.
        let x = read(&mut d, 500_000, &t, &mut c);
        assert!(x < 600_000, "{x}");
        assert_eq!(
            d.op_end(b).unwrap(),
            b_end + (x + t.resume_ns - 500_000 - t.suspend_ns)
        );
        assert!(d.op_end(a).unwrap() < d.op_end(b).unwrap());
    }

    #[test]
    fn an_operation_lets_at_most_suspend_max_reads_ahead() {
        let t = timing(3);
        let mut c = NandCounters::default();
        let mut d = Die::new(&t);
        let (seq, _, _) = d.push_op(0, 2_000_000, 0, &t, &mut c);
        let mut at = 10_000;
        let mut lat = Vec::new();
        for _ in 0..3 {
            let x = read(&mut d, at, &t, &mut c);
            lat.push(x - at);
            at = x;
        }
        assert!(lat.iter().all(|&l| l < 100_000), "{lat:?}");
        let end = d.op_end(seq).unwrap();
        let x = read(&mut d, at, &t, &mut c);
        assert_eq!(
            x,
            end + t.read_ns,
            "the fourth read waits for the operation"
        );
        assert_eq!(c.reads_ahead, 3);
    }

    #[test]
    fn without_suspension_reads_queue_behind_program_work() {
        let t = timing(0);
        let mut c = NandCounters::default();
        let mut d = Die::new(&t);
        let (_, end, _) = d.push_op(0, 1_000_000, 0, &t, &mut c);
        assert_eq!(read(&mut d, 10_000, &t, &mut c), end + t.read_ns);
    }

    #[test]
    fn idle_time_folds_the_slc_cache() {
        let t = timing(8);
        let mut c = NandCounters::default();
        let mut d = Die::new(&t);
        for i in 0..u64::from(t.unit) * 4 {
            d.add_unit(i, 0, &t, &mut c);
        }
        assert_eq!(d.slc_used, u64::from(t.unit) * 4);
        // Idle long enough for two folds, then new work arrives.
        let idle_from = d.pe_end;
        d.add_unit(idle_from + 2 * t.fold_ns + 1, idle_from, &t, &mut c);
        assert_eq!(c.folded_units, 2 * u64::from(t.unit));
    }
}
