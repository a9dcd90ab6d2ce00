//! The per-second series of a direction: for each second of the measured
//! window, its completions, bytes and a coarse log-linear histogram of
//! their total latency (latency over time, heat maps).
//!
//! A worker does not count these per I/O: each second's sample is the
//! growth of the direction's own counters since the second before
//! ([`SecondMark`], [`crate::stats::DirStats::close_second`]), taken when the
//! first completion of a later second arrives and at the end. Only the
//! second's largest latency is kept per I/O (an exact maximum cannot be
//! recovered from totals). The run's histogram's buckets are finer than
//! the series' and never straddle one of them, so a second's histogram is
//! the growth of the run's, bucket by bucket (`SEC_OF_BUCKET`).

use crate::hist::{bucket_bounds, Histogram, NUM_BUCKETS};
use serde::{Deserialize, Serialize};

/// Latency buckets of a [`SecSample`]: 4 per power of two (log-linear),
/// values 0–3 ns exact, everything from 2^40 ns (~18 min) in the last.
pub const SEC_LAT_BUCKETS: usize = 156;
/// Largest value with its own per-second bucket, ns (2^40 − 1).
const SEC_LAT_MAX: u64 = (1 << 40) - 1;

/// The per-second latency bucket of `v` ns: below 4 the value itself;
/// above, `4·(e − 1) + s` for `v` in `[2^e, 2^(e+1))` and `s` its two bits
/// below the leading one. A bucket's midpoint is within 12.5 % of any value
/// in it.
#[inline]
pub const fn sec_lat_bucket(v: u64) -> usize {
    if v < 4 {
        return v as usize;
    }
    let v = if v < SEC_LAT_MAX { v } else { SEC_LAT_MAX };
    let e = 63 - v.leading_zeros(); // >= 2
    (4 * (e - 1) + ((v >> (e - 2)) & 3) as u32) as usize
}

/// The per-second bucket of every value in each bucket of the run's
/// histogram ([`crate::hist`]: its buckets are finer and never straddle a
/// per-second one), so that a latency's bucket is found once per I/O.
pub(crate) static SEC_OF_BUCKET: [u8; NUM_BUCKETS] = {
    let mut t = [0u8; NUM_BUCKETS];
    let mut i = 0;
    while i < NUM_BUCKETS {
        t[i] = sec_lat_bucket(bucket_bounds(i).0) as u8;
        i += 1;
    }
    t
};

/// The lowest value of per-second latency bucket `b`, ns.
pub fn sec_lat_bucket_low(b: usize) -> u64 {
    if b < 4 {
        return b as u64;
    }
    let (e, s) = (b as u32 / 4 + 1, b as u64 % 4);
    (4 + s) << (e - 2)
}

/// One second of the per-second series: completions, bytes, and the
/// total latency of the I/Os that completed in it (sum, maximum and a
/// log-linear histogram, [`sec_lat_bucket`]). About 650 bytes, allocated
/// when the second starts; recording a latency is an add, a max and a
/// leading-zero count.
///
/// Serialised as `{ios, bytes, lat_mean_ns, lat_p99_ns, lat_max_ns,
/// lat_buckets: {first, counts}}` (docs/result-schema.md); results written
/// before the latency fields existed read back with them empty.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "SecSampleJson", into = "SecSampleJson")]
#[repr(C)] // the counts apart, as in `DirStats`
pub struct SecSample {
    /// I/Os completed in that second.
    pub ios: u64,
    /// Sum of their latencies, ns.
    pub lat_sum_ns: u128,
    /// Bytes completed in that second.
    pub bytes: u64,
    /// The largest, ns.
    pub lat_max_ns: u64,
    /// I/Os by latency bucket ([`sec_lat_bucket`]).
    pub lat_buckets: [u32; SEC_LAT_BUCKETS],
}

impl Default for SecSample {
    fn default() -> Self {
        SecSample {
            ios: 0,
            bytes: 0,
            lat_sum_ns: 0,
            lat_max_ns: 0,
            lat_buckets: [0; SEC_LAT_BUCKETS],
        }
    }
}

impl SecSample {
    /// Count one I/O's latency.
    #[inline]
    pub fn record_lat(&mut self, lat: u64) {
        self.record_lat_in(sec_lat_bucket(lat), lat);
    }

    /// Count one I/O's latency, its bucket ([`sec_lat_bucket`]) known.
    #[inline(always)]
    fn record_lat_in(&mut self, b: usize, lat: u64) {
        self.lat_sum_ns += u128::from(lat);
        if lat > self.lat_max_ns {
            self.lat_max_ns = lat;
        }
        if let Some(b) = self.lat_buckets.get_mut(b) {
            // No saturation needed: 2^32 I/Os in one second are beyond
            // any device (and the bucket's count of one worker's second).
            *b = b.wrapping_add(1);
        }
    }

    /// Add another worker's second.
    pub fn merge(&mut self, o: &SecSample) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.lat_sum_ns += o.lat_sum_ns;
        self.lat_max_ns = self.lat_max_ns.max(o.lat_max_ns);
        for (a, b) in self.lat_buckets.iter_mut().zip(&o.lat_buckets) {
            *a = a.saturating_add(*b);
        }
    }

    /// I/Os with a recorded latency.
    pub fn lat_count(&self) -> u64 {
        self.lat_buckets.iter().map(|&c| u64::from(c)).sum()
    }

    /// Mean latency, ns (0 without latencies).
    pub fn lat_mean_ns(&self) -> f64 {
        match self.lat_count() {
            0 => 0.0,
            n => self.lat_sum_ns as f64 / n as f64,
        }
    }

    /// The `p`-th percentile of the second's latencies (nearest rank), as
    /// the midpoint of its bucket clamped to the maximum: within 12.5 %.
    /// 0 without latencies.
    pub fn lat_percentile(&self, p: f64) -> u64 {
        let n = self.lat_count();
        if n == 0 {
            return 0;
        }
        let rank = ((p / 100.0 * n as f64).ceil() as u64).clamp(1, n);
        let mut seen = 0u64;
        for (b, &c) in self.lat_buckets.iter().enumerate() {
            seen += u64::from(c);
            if seen >= rank {
                let (lo, hi) = (sec_lat_bucket_low(b), sec_lat_bucket_low(b + 1));
                return ((lo + hi) / 2).min(self.lat_max_ns);
            }
        }
        self.lat_max_ns
    }
}

/// The JSON form of a [`SecSample`]: the mean and p99 spelled out, the
/// histogram as its non-empty stretch.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SecSampleJson {
    ios: u64,
    bytes: u64,
    #[serde(default)]
    lat_mean_ns: f64,
    #[serde(default)]
    lat_p99_ns: u64,
    #[serde(default)]
    lat_max_ns: u64,
    #[serde(default)]
    lat_buckets: SecBucketsJson,
}

/// Buckets `first`, `first + 1`, … and their counts.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SecBucketsJson {
    first: usize,
    counts: Vec<u32>,
}

impl From<SecSample> for SecSampleJson {
    fn from(s: SecSample) -> Self {
        let used = |c: &u32| *c > 0;
        let first = s.lat_buckets.iter().position(used).unwrap_or(0);
        let end = s.lat_buckets.iter().rposition(used).map_or(0, |l| l + 1);
        SecSampleJson {
            ios: s.ios,
            bytes: s.bytes,
            lat_mean_ns: s.lat_mean_ns(),
            lat_p99_ns: s.lat_percentile(99.0),
            lat_max_ns: s.lat_max_ns,
            lat_buckets: SecBucketsJson {
                first,
                counts: s.lat_buckets[first..end.max(first)].to_vec(),
            },
        }
    }
}

impl From<SecSampleJson> for SecSample {
    fn from(j: SecSampleJson) -> Self {
        let mut s = SecSample {
            ios: j.ios,
            bytes: j.bytes,
            lat_max_ns: j.lat_max_ns,
            ..SecSample::default()
        };
        let start = j.lat_buckets.first.min(SEC_LAT_BUCKETS);
        for (a, c) in s.lat_buckets[start..].iter_mut().zip(&j.lat_buckets.counts) {
            *a = *c;
        }
        s.lat_sum_ns = (j.lat_mean_ns.max(0.0) * s.lat_count() as f64).round() as u128;
        s
    }
}

/// Where a direction's counters stood when its last second closed (module
/// docs): the next second's sample is their growth since.
#[derive(Clone, Debug, Default)]
pub struct SecondMark {
    ios: u64,
    bytes: u64,
    lat_sum: u128,
    /// The run's latency histogram's bucket counts then (allocated at the
    /// first close).
    lat_counts: Vec<u64>,
}

impl SecondMark {
    /// The sample of the second that ends now: what the counters (`ios`,
    /// `bytes`, the latency histogram `lat`) gained since the mark, with
    /// `lat_max_ns` the second's largest latency; the mark moves to now.
    pub(crate) fn close(
        &mut self,
        ios: u64,
        bytes: u64,
        lat: &Histogram,
        lat_max_ns: u64,
    ) -> SecSample {
        let mut s = SecSample {
            ios: ios - self.ios,
            bytes: bytes - self.bytes,
            lat_sum_ns: lat.sum() - self.lat_sum,
            lat_max_ns,
            ..SecSample::default()
        };
        lat.growth_since(&mut self.lat_counts, |b, n| {
            let c = &mut s.lat_buckets[usize::from(SEC_OF_BUCKET[b])];
            *c = c.wrapping_add(n as u32);
        });
        (self.ios, self.bytes, self.lat_sum) = (ios, bytes, lat.sum());
        s
    }

    /// One I/O counted outside the series (it shows in the direction's
    /// totals only).
    pub(crate) fn skip_io(&mut self) {
        self.ios += 1;
    }

    /// Back to nothing counted (the counters were cleared).
    pub(crate) fn clear(&mut self) {
        (self.ios, self.bytes, self.lat_sum) = (0, 0, 0);
        self.lat_counts.fill(0);
    }
}
