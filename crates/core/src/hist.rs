//! A log-linear latency histogram with a documented error bound.
//!
//! ## Layout
//! Values are nanoseconds (`u64`). Values below 256 are counted exactly, one
//! bucket each. Above that, every power of two `[2^e, 2^(e+1))` is split into
//! [`SUB_BUCKETS`] = 128 equal buckets of width `2^(e-7)`. Values at or above
//! [`MAX_TRACKABLE_NS`] (2^44 ns ≈ 4.9 hours) land in the last bucket; the
//! exact minimum and maximum are kept separately.
//!
//! ## Error bound
//! A bucket's representative value is its midpoint. The width of a bucket is
//! at most `1/128` of the smallest value in it, so the representative is
//! within `1/256` ≈ **0.39 %** of any value counted in it (exact below 256 ns).
//! Percentiles are reported with that bound, and are clamped to `[min, max]`,
//! so — unlike fio — a reported p99.99 never exceeds the reported maximum.
//!
//! Mean and standard deviation are exact: the sum is kept in `u64` (exact to
//! 2^64 ns of latency added up, 584 years), the sum of squares in `u128`.
//!
//! ## Percentile definition
//! Nearest rank: the p-th percentile of N samples is the smallest recorded
//! value `v` such that at least `ceil(p/100 · N)` samples are `≤ v`.
//!
//! Recording costs a leading-zero count, two shifts and an add; there is no
//! allocation after construction and no shared state, so each worker keeps its
//! own histograms and they are merged ([`Histogram::merge`]) at the end.

use serde::{Deserialize, Serialize};

/// Buckets per power of two above 256 ns.
pub const SUB_BUCKETS: u64 = 128;
const SUB_BITS: u32 = 7;
/// Largest exponent with its own buckets: values ≥ 2^44 ns share the last one.
const MAX_EXP: u32 = 44;
/// Values at or above this many nanoseconds are clamped into the last bucket.
pub const MAX_TRACKABLE_NS: u64 = 1 << MAX_EXP;
/// Number of buckets: 256 exact ones, then 128 for each exponent 8..=43 … plus one.
pub const NUM_BUCKETS: usize = (2 * SUB_BUCKETS + (MAX_EXP as u64 - 8) * SUB_BUCKETS) as usize;
/// The documented relative error bound of a reported value (0.39 %).
pub const RELATIVE_ERROR: f64 = 1.0 / 256.0;

/// A mergeable latency histogram; see the module docs for the layout.
///
/// The number of samples is not kept: it is the sum of the buckets,
/// counted when read ([`Histogram::count`]), so that recording a value
/// touches one field less.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Histogram {
    /// A fixed-size array, so that recording needs no bounds check.
    counts: Box<[u64; NUM_BUCKETS]>,
    min: u64,
    max: u64,
    /// Exact while the values add up to less than 2^64 ns (584 years).
    sum: u64,
    sum_sq: u128,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// The bucket of `v` ns.
#[inline]
pub(crate) const fn bucket_of(v: u64) -> usize {
    // Without a branch: below 256 the leading one is taken as bit 7, so
    // the shift and the group are 0 and the bucket is the value itself.
    let msb = 63 - (v | SUB_BUCKETS).leading_zeros(); // >= 7
    let shift = msb - SUB_BITS; // 1 for [256, 512)
    let b = (shift as u64 * SUB_BUCKETS + (v >> shift)) as usize;
    // From 2^44 on the bucket would be NUM_BUCKETS or more: the last one
    // (and the compiler then knows every index is in bounds).
    if b < NUM_BUCKETS {
        b
    } else {
        NUM_BUCKETS - 1
    }
}

/// The lowest value and the width of bucket `i`.
pub(crate) const fn bucket_bounds(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB_BUCKETS {
        return (i, 1);
    }
    let group = i / SUB_BUCKETS - 1; // 1 for the first split octave
    let shift = group as u32;
    let top = i - group * SUB_BUCKETS; // in [128, 256)
    (top << shift, 1 << shift)
}

impl Histogram {
    /// An empty histogram (allocates its buckets once, about 38 KiB).
    pub fn new() -> Self {
        Histogram {
            counts: vec![0u64; NUM_BUCKETS]
                .into_boxed_slice()
                .try_into()
                .expect("NUM_BUCKETS counts"),
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
        }
    }

    /// Count one value in nanoseconds.
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.record_n(v, 1);
    }

    /// Count `k` occurrences of one value.
    #[inline]
    pub fn record_n(&mut self, v: u64, k: u64) {
        let b = bucket_of(v);
        self.counts[b] += k;
        self.extremes(v);
        self.sum += v * k;
        self.sum_sq += (v as u128 * v as u128) * k as u128;
    }

    /// Count one value whose bucket ([`bucket_of`]) is known, its maximum
    /// left to the caller, who keeps the largest value itself and hands it
    /// over with [`Histogram::raise_max`] before the histogram is read.
    #[inline(always)]
    pub(crate) fn record_in_below_max(&mut self, b: usize, v: u64) {
        self.counts[b] += 1;
        if v < self.min {
            self.min = v;
        }
        self.sum += v;
        self.sum_sq += v as u128 * v as u128;
    }

    /// Count one value whose bucket is known.
    #[inline(always)]
    pub(crate) fn record_in(&mut self, b: usize, v: u64) {
        self.record_in_below_max(b, v);
        self.raise_max(v);
    }

    /// A value that may be the largest ([`Histogram::record_in_below_max`]).
    #[inline(always)]
    pub(crate) fn raise_max(&mut self, v: u64) {
        if v > self.max {
            self.max = v;
        }
    }

    /// Count one value in two histograms at once, its bucket found once
    /// (a synchronous I/O's completion and total latency are one value).
    #[inline]
    pub fn record_both(a: &mut Histogram, b: &mut Histogram, v: u64) {
        Histogram::record_both_in(a, b, bucket_of(v), v);
    }

    /// [`Histogram::record_both`] with the bucket ([`bucket_of`]) known.
    #[inline(always)]
    pub(crate) fn record_both_in(a: &mut Histogram, b: &mut Histogram, i: usize, v: u64) {
        let sq = v as u128 * v as u128;
        for h in [a, b] {
            h.counts[i] += 1;
            h.extremes(v);
            h.sum += v;
            h.sum_sq += sq;
        }
    }

    /// A new minimum or maximum: a comparison each, written only when it
    /// changes (rarely, once the first samples are in).
    #[inline(always)]
    fn extremes(&mut self, v: u64) {
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
    }

    /// Add all samples of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += *b;
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.sum = self.sum.saturating_add(other.sum);
        self.sum_sq += other.sum_sq;
    }

    /// Forget every sample (used at the end of `ramp_time`).
    pub fn clear(&mut self) {
        self.counts.fill(0);
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
        self.sum_sq = 0;
    }

    /// Number of samples (the sum of the buckets).
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// Smallest sample (0 when empty).
    pub fn min(&self) -> u64 {
        if self.min > self.max {
            0 // none yet: min is still u64::MAX and max 0
        } else {
            self.min
        }
    }
    /// Largest sample.
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Exact mean (0 when empty).
    pub fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }
    /// Exact population standard deviation.
    pub fn stddev(&self) -> f64 {
        let n = self.count();
        if n < 2 {
            return 0.0;
        }
        let n = n as f64;
        let mean = self.sum as f64 / n;
        let var = (self.sum_sq as f64 / n - mean * mean).max(0.0);
        var.sqrt()
    }
    /// Sum of all samples.
    pub fn sum(&self) -> u128 {
        u128::from(self.sum)
    }

    /// Each bucket's growth since `prev` (the counts when it was last
    /// brought up to date; empty for none): `f(bucket, added)` for each
    /// bucket that grew, and `prev` brought up to date. Only the buckets
    /// between the extremes are looked at.
    pub(crate) fn growth_since(&self, prev: &mut Vec<u64>, mut f: impl FnMut(usize, u64)) {
        if self.min > self.max {
            return; // no sample
        }
        if prev.is_empty() {
            prev.resize(NUM_BUCKETS, 0);
        }
        let (lo, hi) = (bucket_of(self.min), bucket_of(self.max));
        for (b, (&now, was)) in self.counts[lo..=hi]
            .iter()
            .zip(&mut prev[lo..=hi])
            .enumerate()
        {
            if now != *was {
                f(lo + b, now - *was);
                *was = now;
            }
        }
    }

    /// The `p`-th percentile (0 < p ≤ 100), nearest rank, reported as the
    /// midpoint of its bucket clamped to `[min, max]`.
    pub fn percentile(&self, p: f64) -> u64 {
        let n = self.count();
        if n == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
        let mut cum = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            cum += c;
            if cum >= rank {
                let (lo, w) = bucket_bounds(i);
                let mid = lo + w / 2;
                return mid.clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Non-empty buckets as (representative value in ns, count), ascending:
    /// what fio's `json+` calls `bins`.
    pub fn bins(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| {
                let (lo, w) = bucket_bounds(i);
                (lo + w / 2, c)
            })
    }
}

/// Summary of a histogram as it appears in results.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatSummary {
    /// Number of samples.
    pub n: u64,
    /// Minimum, ns.
    pub min_ns: u64,
    /// Maximum, ns.
    pub max_ns: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// Population standard deviation, ns.
    pub stddev_ns: f64,
    /// (percentile, value in ns), in the order requested.
    pub percentiles: Vec<(f64, u64)>,
}

impl LatSummary {
    /// Summarise `h` at the given percentiles.
    pub fn of(h: &Histogram, pcts: &[f64]) -> Self {
        LatSummary {
            n: h.count(),
            min_ns: h.min(),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stddev_ns: h.stddev(),
            percentiles: pcts.iter().map(|&p| (p, h.percentile(p))).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_the_range_contiguously() {
        let mut next = 0;
        for i in 0..NUM_BUCKETS {
            let (lo, w) = bucket_bounds(i);
            assert_eq!(lo, next, "bucket {i}");
            assert_eq!(bucket_of(lo), i);
            assert_eq!(bucket_of(lo + w - 1), i);
            next = lo + w;
        }
        assert_eq!(next, MAX_TRACKABLE_NS);
        assert_eq!(bucket_of(u64::MAX), NUM_BUCKETS - 1);
    }

    #[test]
    fn representative_is_within_the_documented_error() {
        let mut v = 1u64;
        while v < MAX_TRACKABLE_NS {
            let (lo, w) = bucket_bounds(bucket_of(v));
            let mid = (lo + w / 2) as f64;
            let err = (mid - v as f64).abs() / v as f64;
            assert!(err <= RELATIVE_ERROR, "v={v} mid={mid} err={err}");
            v = v * 3 / 2 + 1;
        }
    }

    #[test]
    fn exact_moments_and_clamped_percentiles() {
        let mut h = Histogram::new();
        for v in [100u64, 200, 300, 400] {
            h.record(v);
        }
        assert_eq!(h.count(), 4);
        assert_eq!(h.mean(), 250.0);
        assert!((h.stddev() - 111.803398).abs() < 1e-3);
        assert_eq!(h.percentile(50.0), 200);
        assert_eq!(h.percentile(100.0), 400);
        assert_eq!(h.percentile(99.99), 400);
        let mut g = Histogram::new();
        g.record(1_000_000);
        h.merge(&g);
        assert_eq!(h.max(), 1_000_000);
        assert_eq!(h.percentile(100.0), 1_000_000);
        let (mut a, mut b, mut one) = (Histogram::new(), Histogram::new(), Histogram::new());
        for v in [0, 7, 255, 256, 300, 1 << 20, u64::MAX] {
            Histogram::record_both(&mut a, &mut b, v);
            one.record(v);
        }
        assert_eq!(a, one, "record_both counts as record");
        assert_eq!(b, one, "record_both counts as record");
        h.clear();
        assert_eq!(h.count(), 0);
        assert_eq!(h.percentile(50.0), 0);
        h.record(7);
        assert_eq!(h.min(), 7);
    }

    /// Percentiles of a known distribution (exponential, mean 20 µs) fall
    /// within the documented error of the exact order statistics.
    #[test]
    fn percentiles_of_a_known_distribution_are_within_error() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
        let mut h = Histogram::new();
        let mut all = Vec::new();
        for _ in 0..200_000 {
            let u: f64 = rng.random::<f64>();
            let v = (-(1.0 - u).ln() * 20_000.0) as u64 + 50;
            h.record(v);
            all.push(v);
        }
        all.sort_unstable();
        for p in [1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99] {
            let rank = ((p / 100.0) * all.len() as f64).ceil() as usize;
            let exact = all[rank - 1] as f64;
            let got = h.percentile(p) as f64;
            let err = (got - exact).abs() / exact;
            assert!(
                err <= RELATIVE_ERROR,
                "p{p}: exact {exact} got {got} err {err}"
            );
        }
        // And against the analytic quantiles, within sampling noise.
        let q99 = -(0.01f64).ln() * 20_000.0 + 50.0;
        assert!((h.percentile(99.0) as f64 - q99).abs() / q99 < 0.03);
    }
}
