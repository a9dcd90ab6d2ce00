//! fio's random map for jobs whose I/Os have several sizes: one bit per
//! smallest block, set when an I/O covers it. A random block already done
//! moves on to the next free one (wrapping at the end, fio's
//! `axmap_next_free`); an I/O is cut short where it would run into blocks
//! already done (fio's `mark_random_map`), so every block is done once
//! per pass and a pass moves exactly the region's bytes.
//!
//! Two levels: the bits, and one bit per 64-bit word that is full, so
//! finding a free block skips full stretches 4096 blocks at a time.

/// The map of one file's region.
#[derive(Clone, Debug)]
pub struct RandMap {
    bits: Vec<u64>,
    /// Bit i set: word i of `bits` is full.
    full: Vec<u64>,
    n: u64,
    set: u64,
}

impl RandMap {
    /// A map of `n` blocks, all free.
    pub fn new(n: u64) -> RandMap {
        let words = n.div_ceil(64) as usize;
        RandMap {
            bits: vec![0; words],
            full: vec![0; words.div_ceil(64)],
            n,
            set: 0,
        }
    }

    /// Blocks in the map.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether the map has no blocks.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether every block is done.
    pub fn is_full(&self) -> bool {
        self.set >= self.n
    }

    /// Free every block (a new pass).
    pub fn clear(&mut self) {
        self.bits.iter_mut().for_each(|w| *w = 0);
        self.full.iter_mut().for_each(|w| *w = 0);
        self.set = 0;
    }

    /// Whether block `b` is free.
    pub fn is_free(&self, b: u64) -> bool {
        b < self.n && self.bits[(b / 64) as usize] >> (b % 64) & 1 == 0
    }

    /// The first free block at or after `b`, wrapping to 0; None when
    /// the map is full.
    pub fn next_free(&self, b: u64) -> Option<u64> {
        if self.is_full() {
            return None;
        }
        let b = if b >= self.n { 0 } else { b };
        self.free_from(b).or_else(|| self.free_from(0))
    }

    fn free_from(&self, b: u64) -> Option<u64> {
        let mut w = (b / 64) as usize;
        // The rest of the first word.
        let first = !self.bits[w] & (!0u64 << (b % 64));
        if first != 0 {
            return Some(w as u64 * 64 + u64::from(first.trailing_zeros())).filter(|&x| x < self.n);
        }
        w += 1;
        while w < self.bits.len() {
            // Skip full words 64 at a time.
            let (fw, fb) = (w / 64, w % 64);
            let not_full = !self.full[fw] & (!0u64 << fb);
            if not_full == 0 {
                w = (fw + 1) * 64;
                continue;
            }
            w = fw * 64 + not_full.trailing_zeros() as usize;
            if w >= self.bits.len() {
                break;
            }
            let free = !self.bits[w];
            if free != 0 {
                return Some(w as u64 * 64 + u64::from(free.trailing_zeros()))
                    .filter(|&x| x < self.n);
            }
            w += 1;
        }
        None
    }

    /// Mark up to `count` blocks from `b` as done, stopping at the first
    /// one already done; returns how many were marked (at least 1 when
    /// `b` was free).
    pub fn mark_run(&mut self, b: u64, count: u64) -> u64 {
        let mut done = 0;
        let end = b.saturating_add(count).min(self.n);
        let mut i = b;
        while i < end {
            let w = (i / 64) as usize;
            let bit = i % 64;
            let span = (64 - bit).min(end - i);
            let mask = if span == 64 {
                !0u64
            } else {
                ((1u64 << span) - 1) << bit
            };
            let taken = self.bits[w] & mask;
            let take = if taken == 0 {
                mask
            } else {
                // Up to the first block already done.
                let stop = taken.trailing_zeros() as u64;
                if stop == bit {
                    break;
                }
                ((1u64 << (stop - bit)) - 1) << bit
            };
            self.bits[w] |= take;
            if self.bits[w] == !0u64 || (w + 1 == self.bits.len() && self.tail_full(w)) {
                self.full[w / 64] |= 1 << (w % 64);
            }
            let n = u64::from(take.count_ones());
            done += n;
            self.set += n;
            i += n;
            if take != mask {
                break;
            }
        }
        done
    }

    /// Whether the last word's blocks (those below n) are all done.
    fn tail_full(&self, w: usize) -> bool {
        let valid = self.n - w as u64 * 64;
        valid < 64 && self.bits[w] == (1u64 << valid) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_stop_at_blocks_already_done() {
        let mut m = RandMap::new(200);
        assert_eq!(m.mark_run(10, 5), 5);
        assert_eq!(m.mark_run(8, 8), 2, "cut short at block 10");
        assert!(!m.is_free(9) && m.is_free(15));
        assert_eq!(m.mark_run(60, 10), 10, "across a word boundary");
        assert_eq!(m.mark_run(195, 10), 5, "cut at the end of the map");
        assert_eq!(m.next_free(10), Some(15));
        assert_eq!(m.next_free(199), Some(0), "wraps");
    }

    #[test]
    fn next_free_skips_full_words_and_finds_the_last_block() {
        let n = 64 * 70 + 3;
        let mut m = RandMap::new(n);
        assert_eq!(m.mark_run(0, n - 1), n - 1);
        assert_eq!(m.next_free(0), Some(n - 1));
        assert_eq!(m.next_free(n - 1), Some(n - 1));
        assert_eq!(m.mark_run(n - 1, 4), 1);
        assert!(m.is_full());
        assert_eq!(m.next_free(5), None);
        m.clear();
        assert_eq!(m.next_free(17), Some(17));
    }

    #[test]
    fn every_block_once_whatever_the_run_lengths() {
        let n = 1000;
        let mut m = RandMap::new(n);
        let mut x = 12345u64;
        let mut total = 0;
        while let Some(b) = m.next_free(x % n) {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            total += m.mark_run(b, 1 + (x >> 60));
        }
        assert_eq!(total, n);
        assert!(m.is_full());
    }
}
