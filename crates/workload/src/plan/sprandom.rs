//! fio's `sprandom` preconditioning: the offsets that write a device's
//! physical capacity once and leave it as a long run of random writes
//! would, each region as full of invalid blocks as at steady state.
//!
//! The model (P. Desnoyers, "Analytic Models of SSD Write Performance",
//! ACM ToS 2012): at steady state under greedy garbage collection, a
//! block's validity `v` times the share of the device holding blocks that
//! valid is constant. The block collected has validity `1 - 1/WA`, with
//! the write amplification approximated from the over-provisioning `op` as
//! `WA = 0.5/op + 0.7`. Validities spaced evenly from 1 down to that
//! floor, each weighted by `1/v`, make a curve of validity against the
//! share of the device; sampled at equal shares it gives each of the
//! equal regions its validity, the least valid first (the oldest data).
//!
//! The writes: the logical blocks in a random order, each once (the keyed
//! permutation, in place of fio's LFSR), cut into regions of the physical
//! capacity's blocks. Each write of region `r` is kept with probability
//! `1 - validity(r)` and written again in region `r + 1` — first, or last
//! when the device has a cache (`spr_cs`), so that a block and its
//! rewrite are never in the cache together. A region's rewrites take the
//! place of as many new blocks. After the last region come the logical
//! blocks not yet written, if any.

use super::permutation::Permutation;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// The write amplification at over-provisioning `op` (the approximation
/// fio uses).
fn write_amplification(op: f64) -> f64 {
    0.5 / op + 0.7
}

/// Each region's expected fraction of valid blocks once written, the
/// least valid (the first written) first; `regions` at least 1, `op` in
/// (0, 1).
pub fn validity(regions: u32, op: f64) -> Vec<f64> {
    let n = regions.max(1) as usize;
    let floor = 1.0 - 1.0 / write_amplification(op);
    let step = |a: f64, b: f64, i: usize| {
        if n == 1 {
            a
        } else {
            a + (b - a) * i as f64 / (n - 1) as f64
        }
    };
    // Validities evenly spaced from 1 down, each holding a share 1/v.
    let v: Vec<f64> = (0..n).map(|i| step(1.0, floor, i)).collect();
    let x: Vec<f64> = v
        .iter()
        .scan(0.0, |acc, vi| {
            *acc += 1.0 / vi;
            Some(*acc)
        })
        .collect();
    // The curve sampled at equal shares, then oldest (least valid) first.
    let mut out: Vec<f64> = (0..n)
        .map(|i| interpolate(&x, &v, step(x[0], x[n - 1], i)))
        .collect();
    out.reverse();
    out
}

/// `y` at `at` on the polyline through (`xs`, `ys`), `xs` increasing;
/// the end values beyond the ends.
fn interpolate(xs: &[f64], ys: &[f64], at: f64) -> f64 {
    let i = xs.partition_point(|&x| x < at);
    if i == 0 {
        return ys[0];
    }
    if i >= xs.len() {
        return ys[ys.len() - 1];
    }
    let (x0, x1) = (xs[i - 1], xs[i]);
    if x1 - x0 < 1e-12 {
        return ys[i - 1];
    }
    ys[i - 1] + (ys[i] - ys[i - 1]) * (at - x0) / (x1 - x0)
}

/// The block sequence of one file (see the module notes).
#[derive(Clone, Debug)]
pub struct Sprandom {
    perm: Permutation,
    perm_pos: u64,
    blocks: u64,
    /// Each region's chance that a write in it is written again.
    invalid: Box<[f64]>,
    /// Blocks per region.
    per_region: u64,
    /// The region being written (`invalid.len()`: past the last).
    region: usize,
    /// New blocks still to write in this region.
    left: u64,
    /// Rewrites go last in a region (a device cache), not first.
    cache: bool,
    /// The previous region's blocks to write again, and how many are done.
    replay: Vec<u64>,
    replayed: usize,
    /// This region's blocks to write again in the next.
    staged: Vec<u64>,
    rng: SmallRng,
}

impl Sprandom {
    /// The sequence over `blocks` logical blocks of `bs` bytes with
    /// `regions` regions, over-provisioning `op` and a device cache
    /// (`cache`), from `seed`.
    pub fn new(blocks: u64, bs: u64, regions: u32, op: f64, cache: bool, seed: u64) -> Self {
        let (blocks, bs) = (blocks.max(1), bs.max(1));
        let logical = blocks.saturating_mul(bs);
        let physical = ssdready_core::spec_sprandom::physical_size(op, logical, bs) / bs;
        // Never a region without a block (the job's checks refuse that
        // when they know the size).
        let regions = u64::from(regions.max(1)).min(physical.max(1)) as u32;
        let per_region = physical / u64::from(regions);
        let invalid = validity(regions, op).iter().map(|v| 1.0 - v).collect();
        Sprandom {
            perm: Permutation::new(blocks, seed ^ 0x7370_7261_6e64_6f6d),
            perm_pos: 0,
            blocks,
            invalid,
            per_region,
            region: 0,
            left: per_region,
            cache,
            replay: Vec::new(),
            replayed: 0,
            staged: Vec::new(),
            rng: SmallRng::seed_from_u64(seed ^ 0x7370_725f_696e_7661),
        }
    }

    /// Blocks per region.
    pub fn per_region(&self) -> u64 {
        self.per_region
    }

    /// The next block to write; None when every logical block is written.
    pub fn next_block(&mut self) -> Option<u64> {
        loop {
            if (!self.cache || self.left == 0) && self.replayed < self.replay.len() {
                let b = self.replay[self.replayed];
                self.replayed += 1;
                self.stage(b);
                return Some(b);
            }
            if self.left == 0 {
                self.next_region();
                continue;
            }
            if self.perm_pos == self.blocks {
                // The rewrites still owed, then the end.
                return self.replay.get(self.replayed).copied().inspect(|_| {
                    self.replayed += 1;
                });
            }
            let b = self.perm.map(self.perm_pos);
            self.perm_pos += 1;
            self.left -= 1;
            self.stage(b);
            return Some(b);
        }
    }

    /// Keep `b` to write again in the next region, with this region's
    /// chance.
    fn stage(&mut self, b: u64) {
        if let Some(&p) = self.invalid.get(self.region) {
            if p > 0.0 && self.rng.random::<f64>() < p {
                self.staged.push(b);
            }
        }
    }

    /// This region is written: its kept blocks become the next one's
    /// rewrites, and take the place of as many new blocks.
    fn next_region(&mut self) {
        self.region += 1;
        self.replay.clear();
        self.replayed = 0;
        if self.region >= self.invalid.len() {
            // Past the last region: the logical blocks not yet written.
            self.region = self.invalid.len();
            self.staged.clear();
            self.left = u64::MAX;
            return;
        }
        std::mem::swap(&mut self.replay, &mut self.staged);
        self.left = self.per_region.saturating_sub(self.replay.len() as u64);
    }
}

#[cfg(test)]
#[path = "sprandom_tests.rs"]
mod tests;
