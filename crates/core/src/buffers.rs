//! What a write carries when fio's buffer options ask for data with a
//! known compressibility or deduplication (`buffer_compress_percentage`,
//! `buffer_compress_chunk`, `dedupe_percentage`).
//!
//! As fio's `fill_io_buffer`: a write buffer is filled, before every
//! write, chunk by chunk (`buffer_compress_chunk`, else the whole block);
//! each chunk is `100 - compress` % random bytes followed by `compress` %
//! zero bytes, so a compressor shrinks it by about `compress` %. With
//! `dedupe_percentage=D`, each write repeats, with probability D %, the
//! content of the last fresh write (fio's `dedupe_mode=repeat`; a write is
//! deduplicable as a whole, as in fio), so a deduplicating drive stores
//! about `100 - D` % of the blocks written.
//! Without these options write buffers keep their random bytes, filled once.

use crate::verify::block::fill_random;
use serde::{Deserialize, Serialize};

/// The options, as the job file gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferSpec {
    /// `buffer_compress_percentage`: the zero-filled share of each chunk.
    pub compress_percentage: u32,
    /// `buffer_compress_chunk`: bytes per chunk (0: the whole write).
    pub compress_chunk: u64,
    /// `dedupe_percentage`: the share of writes repeating an earlier one.
    pub dedupe_percentage: u32,
}

impl BufferSpec {
    /// Whether writes need their buffers refilled (any option set).
    pub fn refills(&self) -> bool {
        self.compress_percentage > 0 || self.dedupe_percentage > 0
    }
}

/// A job's write-buffer filler: the random state of its chunks.
#[derive(Clone, Debug)]
pub struct BufferFiller {
    spec: BufferSpec,
    /// Draws whether a chunk repeats (xorshift64 state).
    dedupe_draw: u64,
    /// The seed of the last fresh write.
    fresh: u64,
}

impl BufferFiller {
    pub fn new(spec: BufferSpec, seed: u64) -> BufferFiller {
        BufferFiller {
            spec,
            dedupe_draw: seed ^ 0xd1b5_4a32_d192_ed03 | 1,
            fresh: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        }
    }

    /// Fill one write's buffer, chunk by chunk.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let chunk = match self.spec.compress_chunk {
            0 => buf.len(),
            c => (c as usize).min(buf.len()),
        }
        .max(1);
        // As fio, a write is deduplicable as a whole: its chunks all come
        // from one seed, fresh or repeated.
        let write_seed = self.next_write_seed();
        for (i, c) in buf.chunks_mut(chunk).enumerate() {
            let seed = write_seed.wrapping_add((i as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9));
            let random = c.len() * (100 - self.spec.compress_percentage.min(100)) as usize / 100;
            let (r, zeros) = c.split_at_mut(random);
            fill_random(r, seed);
            zeros.fill(0);
        }
    }

    /// A fresh seed, or (with probability `dedupe_percentage` %) the last
    /// fresh write's again.
    fn next_write_seed(&mut self) -> u64 {
        let d = self.spec.dedupe_percentage;
        if d > 0 {
            let mut x = self.dedupe_draw;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.dedupe_draw = x;
            if (x % 100) < u64::from(d) {
                return self.fresh;
            }
        }
        self.fresh = self.fresh.wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn filled(spec: BufferSpec, blocks: usize, bs: usize) -> Vec<u8> {
        let mut f = BufferFiller::new(spec, 42);
        let mut out = vec![0xa5; blocks * bs];
        for b in out.chunks_mut(bs) {
            f.fill(b);
        }
        out
    }

    #[test]
    fn compress_percentage_is_the_zero_share_of_each_chunk() {
        let spec = BufferSpec {
            compress_percentage: 60,
            compress_chunk: 1024,
            ..BufferSpec::default()
        };
        let data = filled(spec, 64, 4096);
        for chunk in data.chunks(1024) {
            // 409 random bytes (a few may happen to be zero), 615 zeros.
            assert!(chunk[409..].iter().all(|&b| b == 0));
            assert!(chunk[..409].iter().filter(|&&b| b == 0).count() < 10);
        }
    }

    #[test]
    fn dedupe_percentage_is_the_share_of_repeated_chunks() {
        let spec = BufferSpec {
            dedupe_percentage: 30,
            ..BufferSpec::default()
        };
        let data = filled(spec, 10_000, 512);
        let unique: HashSet<&[u8]> = data.chunks(512).collect();
        let share = unique.len() as f64 / 10_000.0;
        assert!((0.68..0.72).contains(&share), "unique share {share}");
    }

    #[test]
    fn a_write_is_deduplicable_as_a_whole_across_its_chunks() {
        let spec = BufferSpec {
            dedupe_percentage: 50,
            compress_chunk: 1024,
            ..BufferSpec::default()
        };
        let data = filled(spec, 4000, 4096);
        let unique: HashSet<&[u8]> = data.chunks(4096).collect();
        let share = unique.len() as f64 / 4000.0;
        assert!((0.47..0.53).contains(&share), "unique share {share}");
        let chunks: HashSet<&[u8]> = data.chunks(1024).collect();
        assert_eq!(chunks.len(), unique.len() * 4, "chunks of a write differ");
    }

    #[test]
    fn no_options_need_no_refill() {
        assert!(!BufferSpec::default().refills());
    }
}
