//! The I/O plan of one worker: which target, direction, offset and size each
//! next I/O has, and when the job's work is done.
//!
//! Random offsets without `norandommap` visit every block exactly once per
//! pass, like fio's random map, but need no bitmap: a keyed bijection on
//! `[0, 2^k)` restricted to `[0, n)` by cycle walking ([`Permutation`]) gives a
//! pseudo-random order in O(1) memory and a few nanoseconds per offset.
//! Skewed distributions (zipf, pareto, normal) draw a popularity rank and
//! scatter it over the region through the same permutation, so hot blocks are
//! spread rather than bunched at the start (fio hashes ranks for the same
//! reason).
//!
//! Everything here is deterministic in the job's `randseed` and the worker's
//! index, so runs repeat.

use crate::req::Ddir;
use crate::spec::{BlockSizes, Distribution, JobSpec, RwMode};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::Distribution as _;

/// The part of one target a worker covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Index of the target within the job.
    pub file: u32,
    /// First byte.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// A keyed pseudo-random permutation of `[0, n)`.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    mask: u64,
    half: u32,
    keys: [u64; 3],
    mults: [u64; 3],
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Permutation {
    /// A permutation of `[0, n)` chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let n = n.max(1);
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let mask = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut s = seed;
        let keys = [splitmix(&mut s), splitmix(&mut s), splitmix(&mut s)];
        let mults = [
            splitmix(&mut s) | 1,
            splitmix(&mut s) | 1,
            splitmix(&mut s) | 1,
        ];
        Permutation {
            n,
            mask,
            half: (bits / 2).max(1),
            keys,
            mults,
        }
    }

    #[inline]
    fn round(&self, mut x: u64) -> u64 {
        for r in 0..3 {
            x = (x ^ self.keys[r]) & self.mask;
            x = x.wrapping_mul(self.mults[r]) & self.mask;
            x ^= x >> self.half;
        }
        x
    }

    /// The image of `i` (which must be < n).
    #[inline]
    pub fn map(&self, i: u64) -> u64 {
        let mut y = self.round(i);
        while y >= self.n {
            y = self.round(y);
        }
        y
    }

    /// The size of the permuted set.
    pub fn len(&self) -> u64 {
        self.n
    }
    /// Always false: a permutation has at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }
}

#[derive(Clone)]
enum Skew {
    Uniform,
    Zipf(rand_distr::Zipf<f64>),
    Pareto(f64),
    Normal(rand_distr::Normal<f64>),
}

#[derive(Clone)]
struct FileState {
    region: Region,
    /// Blocks of `unit` bytes in the region.
    blocks: u64,
    /// Next sequential offset (relative), per direction.
    seq: [u64; 3],
    perm: Permutation,
    /// Position in the current pass of the permutation.
    perm_pos: u64,
    pass: u64,
}

/// The offset generator and work budget of one worker.
#[derive(Clone)]
pub struct IoPlan {
    files: Vec<FileState>,
    next_file: usize,
    rw: RwMode,
    rwmixread: u32,
    bs: BlockSizes,
    unit: u64,
    norandommap: bool,
    skew: Skew,
    rng: SmallRng,
    seed: u64,
    bytes_left: Option<u64>,
    ios_left: Option<u64>,
    /// A file whose pass just ended (its offsets start over), not yet taken.
    wrapped: Option<u32>,
}

impl IoPlan {
    /// The plan of worker `worker` (0-based clone index) of `spec` over `regions`.
    pub fn new(spec: &JobSpec, regions: &[Region], worker: u32) -> Self {
        let seed = spec.randseed ^ (worker as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let unit = spec.bs.min().max(1) as u64;
        let files: Vec<FileState> = regions
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let blocks = (r.len / unit).max(1);
                FileState {
                    region: *r,
                    blocks,
                    seq: [0; 3],
                    perm: Permutation::new(blocks, seed ^ ((i as u64) << 32)),
                    perm_pos: 0,
                    pass: 0,
                }
            })
            .collect();
        let blocks0 = files.first().map(|f| f.blocks).unwrap_or(1) as f64;
        let skew = match spec.random_distribution {
            Distribution::Random => Skew::Uniform,
            Distribution::Zipf(t) => match rand_distr::Zipf::new(blocks0, t) {
                Ok(z) => Skew::Zipf(z),
                Err(_) => Skew::Uniform,
            },
            Distribution::Pareto(h) => Skew::Pareto(h.ln() / (1.0 - h).ln()),
            Distribution::Normal(sigma) => {
                match rand_distr::Normal::new(blocks0 / 2.0, (sigma / 100.0 * blocks0).max(1.0)) {
                    Ok(n) => Skew::Normal(n),
                    Err(_) => Skew::Uniform,
                }
            }
        };
        let total: u64 = regions.iter().map(|r| r.len).sum();
        let bytes_left = if spec.time_based {
            None
        } else {
            Some(
                spec.io_size
                    .unwrap_or(total)
                    .saturating_mul(spec.loops as u64),
            )
        };
        IoPlan {
            files,
            next_file: 0,
            rw: spec.rw,
            rwmixread: spec.rwmixread,
            bs: spec.bs.clone(),
            unit,
            norandommap: spec.norandommap,
            skew,
            rng: SmallRng::seed_from_u64(seed),
            seed,
            bytes_left,
            ios_left: spec.number_ios,
            wrapped: None,
        }
    }

    /// The target whose pass over its region ended with the last I/O
    /// given (its offsets started over), once.
    pub fn take_wrap(&mut self) -> Option<u32> {
        self.wrapped.take()
    }

    /// Bytes still to issue (None when time based).
    pub fn bytes_left(&self) -> Option<u64> {
        self.bytes_left
    }

    #[inline]
    fn ddir(&mut self) -> Ddir {
        match self.rw {
            RwMode::Read | RwMode::RandRead => Ddir::Read,
            RwMode::Write | RwMode::RandWrite => Ddir::Write,
            RwMode::Trim | RwMode::RandTrim => Ddir::Trim,
            RwMode::ReadWrite | RwMode::RandRw => {
                if self.rng.random_range(0..100u32) < self.rwmixread {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
        }
    }

    #[inline]
    fn block_size(&mut self) -> u64 {
        match &self.bs {
            BlockSizes::Fixed(b) => *b as u64,
            BlockSizes::Range { min, max } => {
                let (min, max) = (*min as u64, *max as u64);
                let mut b = self.rng.random_range(min..=max);
                if min.is_power_of_two() {
                    b &= !(min - 1);
                }
                b.clamp(min, max)
            }
            BlockSizes::Split(v) => {
                let mut r = self.rng.random_range(0..100u32);
                for &(b, w) in v {
                    if r < w {
                        return b as u64;
                    }
                    r -= w;
                }
                v.last().map(|p| p.0 as u64).unwrap_or(self.unit)
            }
        }
    }

    #[inline]
    fn random_block(&mut self, fi: usize) -> u64 {
        let f = &mut self.files[fi];
        match &self.skew {
            Skew::Uniform if !self.norandommap => {
                if f.perm_pos == f.blocks {
                    self.wrapped = Some(f.region.file);
                    f.pass += 1;
                    f.perm_pos = 0;
                    f.perm = Permutation::new(f.blocks, self.seed ^ ((fi as u64) << 32) ^ f.pass);
                }
                let b = f.perm.map(f.perm_pos);
                f.perm_pos += 1;
                b
            }
            Skew::Uniform => self.rng.random_range(0..f.blocks),
            Skew::Zipf(z) => {
                let rank = (z.sample(&mut self.rng) as u64).saturating_sub(1) % f.blocks;
                f.perm.map(rank)
            }
            Skew::Pareto(pow) => {
                let u: f64 = self.rng.random();
                let rank = ((f.blocks - 1) as f64 * u.powf(*pow)) as u64;
                f.perm.map(rank.min(f.blocks - 1))
            }
            Skew::Normal(n) => loop {
                let x = n.sample(&mut self.rng);
                if x >= 0.0 && x < f.blocks as f64 {
                    break f.perm.map(x as u64);
                }
            },
        }
    }

    /// The next I/O as (file, direction, absolute offset, length), or None
    /// when the job's budget (io_size × loops, number_ios) is spent.
    #[inline]
    pub fn next_io(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        if self.ios_left == Some(0) {
            return None;
        }
        let mut len = self.block_size();
        if let Some(left) = self.bytes_left {
            if left < len {
                len = left / self.unit * self.unit;
                if len == 0 {
                    return None;
                }
            }
        }
        let fi = self.next_file;
        self.next_file = if fi + 1 == self.files.len() {
            0
        } else {
            fi + 1
        };
        let ddir = self.ddir();
        let rel = if self.rw.is_random() {
            let b = self.random_block(fi);
            b * self.unit
        } else {
            let f = &mut self.files[fi];
            let d = ddir.idx();
            if f.seq[d] + len > f.region.len {
                f.seq[d] = 0;
                self.wrapped = Some(f.region.file);
            }
            let o = f.seq[d];
            f.seq[d] += len;
            o
        };
        let f = &self.files[fi];
        let len = len.min(f.region.len);
        // A large block drawn near the end slides back to fit the region.
        let rel = if rel + len > f.region.len {
            (f.region.len - len) / self.unit * self.unit
        } else {
            rel
        };
        if let Some(left) = &mut self.bytes_left {
            *left -= len;
        }
        if let Some(n) = &mut self.ios_left {
            *n -= 1;
        }
        Some((f.region.file, ddir, f.region.offset + rel, len as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::JobSpec;

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 3, 7, 100, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let y = p.map(i) as usize;
                assert!(!seen[y], "n={n} repeated {y}");
                seen[y] = true;
            }
        }
    }

    fn region(len: u64) -> Vec<Region> {
        vec![Region {
            file: 0,
            offset: 0,
            len,
        }]
    }

    #[test]
    fn random_with_map_touches_every_block_once_and_moves_exactly_size() {
        let spec = JobSpec {
            rw: RwMode::RandRead,
            size: Some(1 << 20),
            ..JobSpec::default()
        };
        let mut p = IoPlan::new(&spec, &region(1 << 20), 0);
        let mut seen = vec![0u32; 256];
        let mut bytes = 0;
        while let Some((_, d, off, len)) = p.next_io() {
            assert_eq!(d, Ddir::Read);
            assert_eq!(off % 4096, 0);
            seen[(off / 4096) as usize] += 1;
            bytes += len as u64;
        }
        assert_eq!(bytes, 1 << 20);
        assert!(seen.iter().all(|&c| c == 1));
    }

    #[test]
    fn sequential_write_covers_the_region_in_order() {
        let spec = JobSpec {
            rw: RwMode::Write,
            bs: BlockSizes::Fixed(8192),
            ..JobSpec::default()
        };
        let mut p = IoPlan::new(
            &spec,
            &[Region {
                file: 0,
                offset: 4096,
                len: 65536,
            }],
            0,
        );
        let offs: Vec<u64> = std::iter::from_fn(|| p.next_io()).map(|x| x.2).collect();
        assert_eq!(offs, (0..8).map(|i| 4096 + i * 8192).collect::<Vec<_>>());
    }

    #[test]
    fn number_ios_and_loops_bound_the_work() {
        let spec = JobSpec {
            number_ios: Some(10),
            time_based: true,
            ..JobSpec::default()
        };
        let mut p = IoPlan::new(&spec, &region(1 << 20), 0);
        assert_eq!(std::iter::from_fn(|| p.next_io()).count(), 10);
        let spec = JobSpec {
            loops: 3,
            ..JobSpec::default()
        };
        let mut p = IoPlan::new(&spec, &region(1 << 16), 0);
        assert_eq!(std::iter::from_fn(|| p.next_io()).count(), 48);
    }

    #[test]
    fn rwmix_follows_the_ratio() {
        let spec = JobSpec {
            rw: RwMode::RandRw,
            rwmixread: 70,
            time_based: true,
            ..JobSpec::default()
        };
        let mut p = IoPlan::new(&spec, &region(1 << 30), 0);
        let reads = (0..100_000)
            .filter(|_| p.next_io().unwrap().1 == Ddir::Read)
            .count();
        assert!((69_000..71_000).contains(&reads), "{reads}");
    }

    #[test]
    fn zipf_concentrates_accesses() {
        let spec = JobSpec {
            rw: RwMode::RandRead,
            random_distribution: Distribution::Zipf(1.2),
            time_based: true,
            ..JobSpec::default()
        };
        let mut p = IoPlan::new(&spec, &region(1 << 30), 0);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            *counts.entry(p.next_io().unwrap().2).or_insert(0u32) += 1;
        }
        let mut v: Vec<u32> = counts.values().copied().collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        let top: u32 = v.iter().take(v.len() / 100).sum();
        assert!(top > 50_000, "top 1% of touched blocks got {top} of 100000");
    }

    #[test]
    fn same_seed_same_offsets() {
        let spec = JobSpec {
            rw: RwMode::RandRead,
            norandommap: true,
            time_based: true,
            ..JobSpec::default()
        };
        let a: Vec<_> = {
            let mut p = IoPlan::new(&spec, &region(1 << 30), 3);
            (0..100).map(|_| p.next_io().unwrap()).collect()
        };
        let mut p = IoPlan::new(&spec, &region(1 << 30), 3);
        let b: Vec<_> = (0..100).map(|_| p.next_io().unwrap()).collect();
        assert_eq!(a, b);
    }
}
