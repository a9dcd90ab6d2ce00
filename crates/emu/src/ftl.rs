//! The flash translation layer: page-level mapping, out-of-place writes
//! striped over dies, greedy or FIFO garbage collection, TRIM, erase counts
//! and write-amplification accounting. Pure bookkeeping: time is the
//! device's business ([`crate::device`]); the FTL reports how much GC work a
//! write caused on which die.
//!
//! Layout: die `d` owns blocks `d·B .. (d+1)·B`; physical page `p` is page
//! `p % P` of block `p / P`. Each die has a host write frontier and a GC
//! write frontier (relocated data does not mix with new writes), each an
//! open block, and keeps at least `gc_fg_free` free blocks after every host
//! write: a write that would leave fewer first cleans victims on its die
//! (foreground GC). Below `gc_bg_free` free blocks a die cleans one victim
//! after each write to it (background GC), so GC work is spread over the
//! writes instead of stalling one write for a whole block's worth of
//! cleanings.
//!
//! **Why GC always makes progress.** A cleaning needs at most one free block
//! (for its frontier) and gives one back, so a die never runs out of free
//! blocks as long as some full block has an invalid page whenever foreground
//! GC runs (then the die has at most `gc_fg_free` free blocks). That holds while the die holds fewer valid pages than its limit,
//! `(B − gc_fg_free − 2) × P` ([`crate::geometry`]). Writes are striped
//! round-robin, but a die at its quota (halfway between its even share of
//! the data and that limit) is skipped: without this, patterns whose last
//! copy of each page always lands on the same dies (512 B sequential writes
//! rewrite each 4 KiB page 8 times, so with 32 dies every page ends on one
//! of 4 of them) pile all the data on a few dies until their GC finds
//! nothing to reclaim. Greedy never picks a victim without an invalid page;
//! FIFO cleans in order and so passes over at most one queue of fully valid
//! blocks before it reaches one with an invalid page.
//!
//! The model's operations return [`FtlError`] instead of panicking; with
//! parameters that passed `Params::check` the only errors are bugs, which
//! the property test (`tests/ftl_props.rs`) looks for through [`Ftl::check`].

use crate::config::{GcPolicy, Params};
use crate::geometry::Geometry;
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    Open,
    Full,
}

impl State {
    fn name(self) -> &'static str {
        match self {
            State::Free => "Free",
            State::Open => "Open",
            State::Full => "Full",
        }
    }
}

/// An invariant of the FTL found broken ([`Ftl::check`]): a bug of the
/// model, with the pages, blocks or die where it shows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Invariant {
    #[error("l2p[{lpn}]={ppn} but p2l[{ppn}] is not {lpn}")]
    L2p { lpn: usize, ppn: u32 },
    #[error("p2l[{ppn}]={lpn} but l2p[{lpn}] is not {ppn}")]
    P2l { ppn: usize, lpn: u32 },
    #[error("page {ppn} is mapped beyond block {block}'s write pointer")]
    BeyondWritePointer { ppn: usize, block: usize },
    #[error("block {block}: valid {valid} but {mapped} mapped pages")]
    ValidCount {
        block: usize,
        valid: u32,
        mapped: u32,
    },
    #[error("die {die}: {valid} valid pages, counted {counted}, quota {quota}")]
    DieValid {
        die: u32,
        valid: u64,
        counted: u64,
        quota: u64,
    },
    #[error("die {die} has no free block")]
    NoFreeBlock { die: u32 },
    #[error("die {die}: block {block} listed as {state} is not")]
    Listed {
        die: u32,
        block: u32,
        state: &'static str,
    },
    #[error("die {die}: block {block} is listed {times} times")]
    ListedTimes { die: u32, block: u32, times: u8 },
    #[error("die {die}: block {block} is {state} with write pointer {wp}, {valid} valid")]
    BlockState {
        die: u32,
        block: u32,
        state: &'static str,
        wp: u32,
        valid: u32,
    },
}

/// GC work a write caused on its die.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcWork {
    /// Valid pages copied (programmed again on the die).
    pub moved: u64,
    /// Array reads those copies took: one per program unit of the victim
    /// (its pages across the planes, read at once) holding a valid page.
    pub reads: u64,
    /// Blocks erased.
    pub erased: u64,
}

/// WA and wear counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FtlCounters {
    pub host_pages: u64,
    pub gc_pages: u64,
    pub gc_runs: u64,
    pub erases: u64,
    pub trimmed_pages: u64,
}

/// Why the FTL could not serve an operation. With checked parameters only
/// `OutOfRange` comes from the caller; the others are bugs of the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FtlError {
    #[error("emulator: logical page {lpn} is beyond the device's {pages} pages")]
    OutOfRange { lpn: u64, pages: u64 },
    #[error(
        "emulator FTL: every die holds its quota of {quota} valid pages, none can take a write \
         (a bug in the model, please report it)"
    )]
    NoDie { quota: u64 },
    #[error(
        "emulator FTL: die {die} has {free} free blocks and GC finds nothing to reclaim \
         ({valid} valid pages, quota {quota}; a bug in the model, please report it)"
    )]
    Stuck {
        die: u32,
        free: usize,
        valid: u64,
        quota: u64,
    },
}

/// See the module docs.
#[derive(Clone, Debug)]
pub struct Ftl {
    ppb: u32,
    dies: u32,
    bpd: u32,
    /// Pages per program unit, the pages GC reads at once.
    read_group: u32,
    policy: GcPolicy,
    fg_free: u32,
    bg_free: u32,
    /// Most valid pages a die may hold (module docs).
    quota: u32,
    l2p: Vec<u32>,
    p2l: Vec<u32>,
    valid: Vec<u32>,
    wp: Vec<u32>,
    erase_count: Vec<u32>,
    state: Vec<State>,
    free: Vec<VecDeque<u32>>,
    fifo: Vec<VecDeque<u32>>,
    host_open: Vec<u32>,
    gc_open: Vec<u32>,
    /// Valid pages per die.
    die_valid: Vec<u32>,
    next_die: u32,
    pub counters: FtlCounters,
    /// Zoned mode: the zones place the pages ([`crate::zoned`]).
    pub zones: Option<crate::zoned::Zones>,
}

impl Ftl {
    /// A fresh (all-erased) FTL for `p`, which must have passed
    /// `Params::check` (`Params::parse` checks).
    pub fn new(p: &Params) -> Self {
        let dies = p.dies().max(1);
        let bpd = p.blocks_per_die();
        let ppb = p.pages_per_block;
        let blocks = (dies * bpd) as usize;
        let quota = Geometry::of(p).map_or(0, |g| g.die_quota());
        let free = (0..dies)
            .map(|d| (d * bpd..(d + 1) * bpd).collect())
            .collect();
        let read_group = crate::die::NandTiming::of(p).unit.clamp(1, ppb.max(1));
        Ftl {
            ppb,
            dies,
            bpd,
            read_group,
            policy: p.gc,
            fg_free: p.gc_fg_free,
            bg_free: p.gc_bg_free.max(p.gc_fg_free),
            quota: u32::try_from(quota).unwrap_or(u32::MAX),
            l2p: vec![NONE; p.logical_pages() as usize],
            p2l: vec![NONE; blocks * ppb as usize],
            valid: vec![0; blocks],
            wp: vec![0; blocks],
            erase_count: vec![0; blocks],
            state: vec![State::Free; blocks],
            free,
            fifo: vec![VecDeque::new(); dies as usize],
            host_open: vec![NONE; dies as usize],
            gc_open: vec![NONE; dies as usize],
            die_valid: vec![0; dies as usize],
            next_die: 0,
            counters: FtlCounters::default(),
            zones: p.zoned.zoned.then(|| crate::zoned::Zones::new(p)),
        }
    }

    /// Logical pages.
    pub fn logical_pages(&self) -> u64 {
        self.l2p.len() as u64
    }

    /// The physical page holding logical page `lpn`, or None when it was
    /// never written, was trimmed, or is beyond the device.
    pub fn mapping(&self, lpn: u64) -> Option<u64> {
        if let Some(z) = &self.zones {
            return z.mapping(lpn);
        }
        let p = *self.l2p.get(usize::try_from(lpn).ok()?)?;
        (p != NONE).then_some(u64::from(p))
    }

    /// The die holding logical page `lpn`, or None when it was never written
    /// (or trimmed).
    pub fn die_of(&self, lpn: u64) -> Option<u32> {
        self.mapping(lpn)
            .map(|p| (p / u64::from(self.ppb) / u64::from(self.bpd)) as u32)
    }

    /// Dies, and the most valid pages the FTL lets one hold.
    pub fn dies(&self) -> u32 {
        self.dies
    }
    pub fn die_quota(&self) -> u64 {
        self.quota.into()
    }
    /// Valid pages on `die`.
    pub fn die_valid(&self, die: u32) -> u64 {
        self.die_valid.get(die as usize).map_or(0, |&v| v.into())
    }

    fn index(&self, lpn: u64) -> Result<usize, FtlError> {
        usize::try_from(lpn)
            .ok()
            .filter(|&l| l < self.l2p.len())
            .ok_or(FtlError::OutOfRange {
                lpn,
                pages: self.logical_pages(),
            })
    }

    fn die_of_block(&self, b: u32) -> usize {
        (b / self.bpd) as usize
    }

    fn invalidate(&mut self, l: usize) {
        let p = self.l2p[l];
        if p != NONE {
            let b = p / self.ppb;
            self.p2l[p as usize] = NONE;
            self.valid[b as usize] -= 1;
            let d = self.die_of_block(b);
            self.die_valid[d] -= 1;
            self.l2p[l] = NONE;
        }
    }

    fn map(&mut self, l: usize, p: u32) {
        let b = p / self.ppb;
        self.p2l[p as usize] = l as u32;
        self.l2p[l] = p;
        self.valid[b as usize] += 1;
        let d = self.die_of_block(b);
        self.die_valid[d] += 1;
    }

    fn stuck(&self, die: u32) -> FtlError {
        FtlError::Stuck {
            die,
            free: self.free[die as usize].len(),
            valid: self.die_valid(die),
            quota: self.die_quota(),
        }
    }

    /// Take a page from the die's frontier (`gc` selects the GC frontier).
    fn alloc(&mut self, die: u32, gc: bool) -> Result<u32, FtlError> {
        let d = die as usize;
        let open = if gc {
            self.gc_open[d]
        } else {
            self.host_open[d]
        };
        let blk = if open != NONE && self.wp[open as usize] < self.ppb {
            open
        } else {
            if open != NONE {
                self.state[open as usize] = State::Full;
                self.fifo[d].push_back(open);
            }
            let Some(b) = self.free[d].pop_front() else {
                return Err(self.stuck(die));
            };
            self.state[b as usize] = State::Open;
            if gc {
                self.gc_open[d] = b;
            } else {
                self.host_open[d] = b;
            }
            b
        };
        let page = self.wp[blk as usize];
        self.wp[blk as usize] += 1;
        Ok(blk * self.ppb + page)
    }

    /// The next block to clean on `die`: greedy, the full block with the
    /// fewest valid pages, if it has an invalid one (cleaning a fully valid
    /// block frees nothing); FIFO, the least recently closed block.
    fn victim(&mut self, die: u32) -> Option<u32> {
        let d = die as usize;
        match self.policy {
            GcPolicy::Greedy => {
                let (lo, hi) = (die * self.bpd, (die + 1) * self.bpd);
                let mut best: Option<(u32, u32)> = None;
                for b in lo..hi {
                    if self.state[b as usize] == State::Full {
                        let v = self.valid[b as usize];
                        if v < self.ppb && best.is_none_or(|(_, bv)| v < bv) {
                            best = Some((b, v));
                            if v == 0 {
                                break;
                            }
                        }
                    }
                }
                let (b, _) = best?;
                if let Some(i) = self.fifo[d].iter().position(|&x| x == b) {
                    self.fifo[d].remove(i);
                }
                Some(b)
            }
            GcPolicy::Fifo => self.fifo[d].pop_front(),
        }
    }

    /// Array reads that copying block `b`'s valid pages takes: one per
    /// program unit (its pages across the planes) holding a valid page.
    fn reads_to_copy(&self, b: u32) -> u64 {
        let base = (b * self.ppb) as usize;
        let written = &self.p2l[base..base + self.wp[b as usize] as usize];
        if self.read_group == 1 {
            return u64::from(self.valid[b as usize]);
        }
        written
            .chunks(self.read_group as usize)
            .filter(|g| g.iter().any(|&l| l != NONE))
            .count() as u64
    }

    /// Clean victim `b` on `die`: copy its valid pages to the GC frontier and
    /// erase it. Returns the pages it freed (`ppb` − copies).
    fn clean(&mut self, die: u32, b: u32, work: &mut GcWork) -> Result<u32, FtlError> {
        self.counters.gc_runs += 1;
        let base = b * self.ppb;
        let mut moved = 0;
        work.reads += self.reads_to_copy(b);
        for p in base..base + self.wp[b as usize] {
            let lpn = self.p2l[p as usize];
            if lpn != NONE {
                let np = self.alloc(die, true)?;
                self.p2l[p as usize] = NONE;
                self.valid[b as usize] -= 1;
                self.p2l[np as usize] = lpn;
                self.l2p[lpn as usize] = np;
                self.valid[(np / self.ppb) as usize] += 1;
                moved += 1;
            }
        }
        work.moved += u64::from(moved);
        self.counters.gc_pages += u64::from(moved);
        let bi = b as usize;
        self.wp[bi] = 0;
        self.state[bi] = State::Free;
        self.erase_count[bi] = self.erase_count[bi].saturating_add(1);
        self.free[die as usize].push_back(b);
        work.erased += 1;
        self.counters.erases += 1;
        Ok(self.ppb - moved)
    }

    /// Foreground GC before a host write: clean until the die will still
    /// have `gc_fg_free` free blocks once the write has taken its page (a
    /// new block only when its frontier is full). Ends (module docs); the
    /// bound on fruitless FIFO cleanings only turns a bug into an error.
    fn foreground(&mut self, die: u32, work: &mut GcWork) -> Result<(), FtlError> {
        let h = self.host_open[die as usize];
        let takes_block = usize::from(h == NONE || self.wp[h as usize] == self.ppb);
        let mut fruitless = 0u32;
        while self.free[die as usize].len() < self.fg_free as usize + takes_block {
            let Some(b) = self.victim(die) else {
                return Err(self.stuck(die));
            };
            if self.clean(die, b, work)? > 0 {
                fruitless = 0;
            } else {
                fruitless += 1;
                if fruitless > self.bpd {
                    return Err(self.stuck(die));
                }
            }
        }
        Ok(())
    }

    /// The die for the next host write: round-robin, skipping dies at their
    /// quota. One always has room: the quotas add up to at least the
    /// logical pages, and the page being written is not mapped.
    fn choose_die(&mut self) -> Result<u32, FtlError> {
        let next = |d: u32| if d + 1 == self.dies { 0 } else { d + 1 };
        let mut d = self.next_die;
        for _ in 0..self.dies {
            if self.die_valid[d as usize] < self.quota {
                self.next_die = next(d);
                return Ok(d);
            }
            d = next(d);
        }
        Err(FtlError::NoDie {
            quota: self.die_quota(),
        })
    }

    /// Write logical page `lpn` (a whole page: the device turns partial
    /// writes into read-modify-write): returns the die it went to and the
    /// foreground GC that had to run there first.
    pub fn write(&mut self, lpn: u64) -> Result<(u32, GcWork), FtlError> {
        let l = self.index(lpn)?;
        if let Some(z) = &self.zones {
            self.counters.host_pages += 1; // no GC: written where the zone says
            return Ok((z.die_of(lpn), GcWork::default()));
        }
        self.invalidate(l);
        let die = self.choose_die()?;
        let mut work = GcWork::default();
        self.foreground(die, &mut work)?;
        let p = self.alloc(die, false)?;
        self.map(l, p);
        self.counters.host_pages += 1;
        Ok((die, work))
    }

    /// Background GC: clean one victim on `die` if it is below the
    /// background threshold.
    pub fn background(&mut self, die: u32) -> Result<GcWork, FtlError> {
        let mut work = GcWork::default();
        if die < self.dies && self.free[die as usize].len() < self.bg_free as usize {
            if let Some(b) = self.victim(die) {
                self.clean(die, b, &mut work)?;
            }
        }
        Ok(work)
    }

    /// TRIM logical page `lpn`.
    pub fn trim(&mut self, lpn: u64) -> Result<(), FtlError> {
        let l = self.index(lpn)?;
        if self.l2p[l] != NONE {
            self.counters.trimmed_pages += 1;
        }
        self.invalidate(l);
        Ok(())
    }

    /// Free blocks on all dies.
    pub fn free_blocks(&self) -> u64 {
        self.free.iter().map(|f| f.len() as u64).sum()
    }

    /// (min, mean, max) erase count over all blocks.
    pub fn erase_stats(&self) -> (u32, f64, u32) {
        let min = self.erase_count.iter().copied().min().unwrap_or(0);
        let max = self.erase_count.iter().copied().max().unwrap_or(0);
        let mean = self.erase_count.iter().map(|&e| e as f64).sum::<f64>()
            / self.erase_count.len().max(1) as f64;
        (min, mean, max)
    }

    /// Write amplification so far: NAND page programs per host page program.
    pub fn write_amplification(&self) -> f64 {
        let c = &self.counters;
        if c.host_pages == 0 {
            0.0
        } else {
            (c.host_pages + c.gc_pages) as f64 / c.host_pages as f64
        }
    }

    /// Check every invariant (tests, the property test): the maps are
    /// inverse to each other and only map written pages; valid counts per
    /// block and per die match the map; every block is in exactly one of
    /// its die's free list, write frontiers and closed queue; free blocks are
    /// erased; no die is over its quota or out of free blocks.
    pub fn check(&self) -> Result<(), Invariant> {
        self.check_maps()?;
        (0..self.dies).try_for_each(|d| self.check_die(d))
    }

    fn check_maps(&self) -> Result<(), Invariant> {
        for (lpn, &p) in self.l2p.iter().enumerate() {
            if p != NONE && self.p2l.get(p as usize) != Some(&(lpn as u32)) {
                return Err(Invariant::L2p { lpn, ppn: p });
            }
        }
        let mut count = vec![0u32; self.valid.len()];
        for (p, &lpn) in self.p2l.iter().enumerate() {
            if lpn == NONE {
                continue;
            }
            let (b, page) = (p / self.ppb as usize, p as u32 % self.ppb);
            if self.l2p.get(lpn as usize) != Some(&(p as u32)) {
                return Err(Invariant::P2l { ppn: p, lpn });
            }
            if page >= self.wp[b] {
                return Err(Invariant::BeyondWritePointer { ppn: p, block: b });
            }
            count[b] += 1;
        }
        match (0..count.len()).find(|&b| count[b] != self.valid[b]) {
            Some(b) => Err(Invariant::ValidCount {
                block: b,
                valid: self.valid[b],
                mapped: count[b],
            }),
            None => Ok(()),
        }
    }

    fn check_die(&self, die: u32) -> Result<(), Invariant> {
        let d = die as usize;
        let blocks = die * self.bpd..(die + 1) * self.bpd;
        let valid: u64 = blocks
            .clone()
            .map(|b| u64::from(self.valid[b as usize]))
            .sum();
        if valid != self.die_valid(die) || valid > self.die_quota() {
            return Err(Invariant::DieValid {
                die,
                valid,
                counted: self.die_valid(die),
                quota: self.die_quota(),
            });
        }
        if self.free[d].is_empty() {
            return Err(Invariant::NoFreeBlock { die });
        }
        // Where each block is: free list, a frontier, the closed queue.
        let mut seen = vec![0u8; self.bpd as usize];
        let opens = [self.host_open[d], self.gc_open[d]];
        let listed = self.free[d].iter().map(|&b| (b, State::Free));
        let listed = listed.chain(
            opens
                .iter()
                .filter(|&&b| b != NONE)
                .map(|&b| (b, State::Open)),
        );
        for (b, want) in listed.chain(self.fifo[d].iter().map(|&b| (b, State::Full))) {
            if !blocks.contains(&b) || self.state[b as usize] != want {
                return Err(Invariant::Listed {
                    die,
                    block: b,
                    state: want.name(),
                });
            }
            seen[(b - blocks.start) as usize] += 1;
        }
        if let Some(i) = seen.iter().position(|&n| n != 1) {
            return Err(Invariant::ListedTimes {
                die,
                block: blocks.start + i as u32,
                times: seen[i],
            });
        }
        for b in blocks {
            let (s, w, v) = (
                self.state[b as usize],
                self.wp[b as usize],
                self.valid[b as usize],
            );
            let ok = match s {
                State::Free => w == 0 && v == 0,
                State::Open => w <= self.ppb,
                State::Full => w == self.ppb,
            };
            if !ok {
                return Err(Invariant::BlockState {
                    die,
                    block: b,
                    state: s.name(),
                    wp: w,
                    valid: v,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Params {
        Params::parse("nvme-tlc,size=4m,op=0.25,channels=2,dies=1,pages_per_block=16").unwrap()
    }

    #[test]
    fn sequential_fill_has_no_amplification_and_stripes_over_dies() {
        let p = small();
        let mut f = Ftl::new(&p);
        let dies: Vec<u32> = (0..4).map(|l| f.write(l).unwrap().0).collect();
        assert_eq!(dies, [0, 1, 0, 1]);
        for l in 4..f.logical_pages() {
            f.write(l).unwrap();
        }
        assert_eq!(f.write_amplification(), 1.0);
        f.check().unwrap();
    }

    #[test]
    fn overwrites_trigger_gc_and_keep_the_maps_consistent() {
        let p = small();
        let mut f = Ftl::new(&p);
        let n = f.logical_pages();
        let mut x = 12345u64;
        for i in 0..n * 6 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lpn = if i < n { i } else { x % n };
            f.write(lpn).unwrap();
        }
        f.check().unwrap();
        assert!(f.counters.gc_runs > 0);
        assert!(f.write_amplification() > 1.2);
        for l in 0..n {
            assert!(f.die_of(l).is_some());
        }
        f.trim(0).unwrap();
        assert_eq!(f.die_of(0), None);
        f.check().unwrap();
    }
}
