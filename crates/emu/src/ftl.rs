//! The flash translation layer: page-level mapping, out-of-place writes
//! striped over dies, greedy or FIFO garbage collection, TRIM, erase counts
//! and write-amplification accounting. Pure bookkeeping: time is the
//! device's business ([`crate::device`]); the FTL reports how much GC work a
//! write caused on which die.
//!
//! Layout: die `d` owns blocks `d·B .. (d+1)·B`; physical page `p` is page
//! `p % P` of block `p / P`. Each die has a host write frontier and a GC
//! write frontier (relocated data does not mix with new writes) and keeps at
//! least `gc_fg_free` free blocks after every write: a write to a die with
//! `gc_fg_free` or fewer first cleans victims on that die.

use crate::config::{GcPolicy, Params};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Free,
    Open,
    Full,
}

/// GC work a write caused on its die.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcWork {
    /// Valid pages copied (each a page read and a page program on the die).
    pub moved: u64,
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

/// See the module docs.
#[derive(Clone, Debug)]
pub struct Ftl {
    ppb: u32,
    dies: u32,
    bpd: u32,
    policy: GcPolicy,
    fg_free: u32,
    bg_free: u32,
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
    next_die: u32,
    pub counters: FtlCounters,
}

impl Ftl {
    /// A fresh (all-erased) FTL for `p`.
    pub fn new(p: &Params) -> Self {
        let dies = p.dies();
        let bpd = p.blocks_per_die();
        let ppb = p.pages_per_block;
        let blocks = (dies * bpd) as usize;
        let free = (0..dies)
            .map(|d| (d * bpd..(d + 1) * bpd).collect())
            .collect();
        Ftl {
            ppb,
            dies,
            bpd,
            policy: p.gc,
            fg_free: p.gc_fg_free,
            bg_free: p.gc_bg_free.max(p.gc_fg_free),
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
            next_die: 0,
            counters: FtlCounters::default(),
        }
    }

    /// Logical pages.
    pub fn logical_pages(&self) -> u64 {
        self.l2p.len() as u64
    }

    /// The die holding logical page `lpn`, or None when it was never written
    /// (or trimmed).
    pub fn die_of(&self, lpn: u64) -> Option<u32> {
        let p = self.l2p[lpn as usize];
        (p != NONE).then(|| p / self.ppb / self.bpd)
    }

    fn invalidate(&mut self, lpn: u64) {
        let p = self.l2p[lpn as usize];
        if p != NONE {
            self.p2l[p as usize] = NONE;
            self.valid[(p / self.ppb) as usize] -= 1;
            self.l2p[lpn as usize] = NONE;
        }
    }

    /// Take a page from the die's frontier (`gc` selects the GC frontier).
    fn alloc(&mut self, die: u32, gc: bool) -> u32 {
        let open = if gc {
            self.gc_open[die as usize]
        } else {
            self.host_open[die as usize]
        };
        let blk = if open != NONE && self.wp[open as usize] < self.ppb {
            open
        } else {
            if open != NONE {
                self.state[open as usize] = State::Full;
                self.fifo[die as usize].push_back(open);
            }
            let b = self.free[die as usize]
                .pop_front()
                .expect("GC keeps a free block per frontier");
            self.state[b as usize] = State::Open;
            if gc {
                self.gc_open[die as usize] = b;
            } else {
                self.host_open[die as usize] = b;
            }
            b
        };
        let page = self.wp[blk as usize];
        self.wp[blk as usize] += 1;
        blk * self.ppb + page
    }

    fn victim(&mut self, die: u32) -> Option<u32> {
        match self.policy {
            GcPolicy::Greedy => {
                let (lo, hi) = (die * self.bpd, (die + 1) * self.bpd);
                let mut best: Option<(u32, u32)> = None;
                for b in lo..hi {
                    if self.state[b as usize] == State::Full {
                        let v = self.valid[b as usize];
                        if best.is_none_or(|(_, bv)| v < bv) {
                            best = Some((b, v));
                            if v == 0 {
                                break;
                            }
                        }
                    }
                }
                if let Some((b, _)) = best {
                    let q = &mut self.fifo[die as usize];
                    if let Some(i) = q.iter().position(|&x| x == b) {
                        q.remove(i);
                    }
                }
                best.map(|(b, _)| b)
            }
            GcPolicy::Fifo => self.fifo[die as usize].pop_front(),
        }
    }

    /// Clean one victim block on `die`.
    fn gc_one(&mut self, die: u32, work: &mut GcWork) -> bool {
        let Some(b) = self.victim(die) else {
            return false;
        };
        self.counters.gc_runs += 1;
        let base = b * self.ppb;
        for p in base..base + self.ppb {
            let lpn = self.p2l[p as usize];
            if lpn != NONE {
                let np = self.alloc(die, true);
                self.p2l[p as usize] = NONE;
                self.p2l[np as usize] = lpn;
                self.l2p[lpn as usize] = np;
                self.valid[(np / self.ppb) as usize] += 1;
                work.moved += 1;
                self.counters.gc_pages += 1;
            }
        }
        self.valid[b as usize] = 0;
        self.wp[b as usize] = 0;
        self.state[b as usize] = State::Free;
        self.erase_count[b as usize] += 1;
        self.free[die as usize].push_back(b);
        work.erased += 1;
        self.counters.erases += 1;
        true
    }

    /// Write logical page `lpn`: returns the die it went to and the
    /// foreground GC that had to run there first.
    pub fn write(&mut self, lpn: u64) -> (u32, GcWork) {
        let die = self.next_die;
        self.next_die = if die + 1 == self.dies { 0 } else { die + 1 };
        self.invalidate(lpn);
        let mut work = GcWork::default();
        // Keep fg_free blocks free *after* this write takes one, so GC always
        // has a block for its own frontier. The bound stops a FIFO device whose
        // victims are all fully valid from cycling forever.
        let mut rounds = 0;
        while (self.free[die as usize].len() as u32) <= self.fg_free && rounds < self.bpd {
            if !self.gc_one(die, &mut work) {
                break;
            }
            rounds += 1;
        }
        let p = self.alloc(die, false);
        self.p2l[p as usize] = lpn as u32;
        self.l2p[lpn as usize] = p;
        self.valid[(p / self.ppb) as usize] += 1;
        self.counters.host_pages += 1;
        (die, work)
    }

    /// Background GC: clean one victim on `die` if it is below the
    /// background threshold.
    pub fn background(&mut self, die: u32) -> GcWork {
        let mut work = GcWork::default();
        if (self.free[die as usize].len() as u32) < self.bg_free {
            self.gc_one(die, &mut work);
        }
        work
    }

    /// TRIM logical page `lpn`.
    pub fn trim(&mut self, lpn: u64) {
        if self.l2p[lpn as usize] != NONE {
            self.counters.trimmed_pages += 1;
        }
        self.invalidate(lpn);
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

    /// Check the invariants (tests): maps agree, valid counts match.
    pub fn check(&self) -> Result<(), String> {
        for (lpn, &p) in self.l2p.iter().enumerate() {
            if p != NONE && self.p2l[p as usize] != lpn as u32 {
                return Err(format!(
                    "l2p[{lpn}]={p} but p2l[{p}]={}",
                    self.p2l[p as usize]
                ));
            }
        }
        for b in 0..self.valid.len() {
            let base = b as u32 * self.ppb;
            let n = (base..base + self.ppb)
                .filter(|&p| self.p2l[p as usize] != NONE)
                .count() as u32;
            if n != self.valid[b] {
                return Err(format!(
                    "block {b}: valid {} but {n} mapped pages",
                    self.valid[b]
                ));
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
        let dies: Vec<u32> = (0..4).map(|l| f.write(l).0).collect();
        assert_eq!(dies, [0, 1, 0, 1]);
        for l in 4..f.logical_pages() {
            f.write(l);
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
            f.write(lpn);
        }
        f.check().unwrap();
        assert!(f.counters.gc_runs > 0);
        assert!(f.write_amplification() > 1.2);
        for l in 0..n {
            assert!(f.die_of(l).is_some());
        }
        f.trim(0);
        assert_eq!(f.die_of(0), None);
        f.check().unwrap();
    }
}
