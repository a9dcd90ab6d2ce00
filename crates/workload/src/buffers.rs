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
//!
//! With `dedupe_mode=working_set` a deduplicated write repeats instead
//! one of the job's first fresh writes, drawn at random from a working set
//! of `dedupe_working_set_percentage` % of the job's size (fio's
//! `dedupe_working_set_states`); with `dedupe_global` the working set is
//! spread over every worker of the run, a slice of each one's first fresh
//! writes, so jobs write each other's blocks (as fio's
//! `init_global_dedupe_working_set_seeds`).
//!
//! The other buffer options, as fio 3.33 (`init.c`, `io_u.c`):
//! * `zero_buffers`: buffers start zero-filled instead of random;
//! * `buffer_pattern`: buffers start filled with the pattern repeated (fio's
//!   pattern syntax without `%o`, which fio refuses for buffers too); the
//!   zero part of `buffer_compress_percentage` gets the pattern instead of
//!   zeros; as fio, a job that also reads (or compresses) refills its
//!   buffers before every write, and the pattern turns scrambling off;
//! * `refill_buffers`: every write's buffer is refilled (random, or the
//!   pattern, or zeros) before it is issued;
//! * `scramble_buffers` (fio's default: on): a write that is not refilled,
//!   not compressible and not verified gets, in every 512-byte sector, its
//!   offset at a cache line chosen from the issue time, and the issue time
//!   (seconds, nanoseconds) at bytes 48..64 — fio's
//!   `small_content_scramble`, so that a deduplicating drive does not see
//!   the same block twice. An explicit `zero_buffers` turns the default
//!   off; an explicit `scramble_buffers=1` keeps it.
//!
//! Without these options write buffers keep their random bytes, filled
//! once, and scrambled.

use crate::verify::block::fill_random;
pub use ssdready_core::spec::{BeforeWrite, BufferSpec, Initial};

/// A job's write-buffer filler: the random state of its chunks.
#[derive(Clone, Debug)]
pub struct BufferFiller {
    spec: BufferSpec,
    /// Draws whether a chunk repeats (xorshift64 state).
    dedupe_draw: u64,
    /// The seed of the last fresh write.
    fresh: u64,
    /// `dedupe_mode=working_set`: where deduplicated writes come from.
    working_set: Option<WorkingSet>,
}

/// The working set: `pages` seeds, in slices of `per_member` taken from
/// the start of each member's sequence of fresh writes (one member, the
/// worker itself, unless `dedupe_global`).
#[derive(Clone, Debug)]
struct WorkingSet {
    pages: u64,
    per_member: u64,
    /// Each member's seed before its first fresh write, the worker's own
    /// first.
    members: Vec<u64>,
}

/// The seed a worker's filler starts from, for its own `seed`.
fn base_of(seed: u64) -> u64 {
    seed.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The seed of fresh write number `k` (0-based) of a filler starting at `base`.
fn fresh_seed(base: u64, k: u64) -> u64 {
    base.wrapping_add(k.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

impl BufferFiller {
    pub fn new(spec: BufferSpec, seed: u64) -> BufferFiller {
        BufferFiller {
            spec,
            dedupe_draw: seed ^ 0xd1b5_4a32_d192_ed03 | 1,
            fresh: base_of(seed),
            working_set: None,
        }
    }

    /// Fill a buffer as it starts (`zero_buffers`, `buffer_pattern`);
    /// false: the engine's random bytes stay.
    pub fn initial_fill(&self, buf: &mut [u8]) -> bool {
        match (self.spec.initial(), &self.spec.pattern) {
            (Initial::Pattern, Some(p)) => crate::verify::pattern::fill(buf, p),
            (Initial::Zero, _) => buf.fill(0),
            _ => return false,
        }
        true
    }

    /// `dedupe_mode=working_set`: deduplicated writes repeat one of
    /// `pages` (the job's size × the percentage ÷ its smallest write)
    /// first fresh writes of this worker — or, with `dedupe_global`, of
    /// the workers whose seeds `members` lists, the worker's own first, in
    /// equal slices (fio's rotation over its threads).
    pub fn with_working_set(mut self, pages: u64, member_seeds: &[u64]) -> BufferFiller {
        let members: Vec<u64> = member_seeds.iter().map(|&s| base_of(s)).collect();
        let n = members.len().max(1) as u64;
        self.working_set = (self.spec.working_set && pages > 0).then(|| WorkingSet {
            pages,
            per_member: if n > 1 { (pages / n).max(1) } else { pages },
            members,
        });
        self
    }

    /// Refill one write's buffer as fio's `fill_io_buffer`: compressible
    /// or deduplicable chunks, else the pattern, else zeros, else random.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let s = &self.spec;
        if s.compress_percentage == 0 && s.dedupe_percentage == 0 {
            if self.initial_fill(buf) {
                return;
            }
            let seed = self.next_write_seed();
            fill_random(buf, seed);
            return;
        }
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
            match &self.spec.pattern {
                Some(p) => crate::verify::pattern::fill(zeros, p),
                None => zeros.fill(0),
            }
        }
    }

    /// fio's `small_content_scramble` of a write at `offset` issued at
    /// `issue_ns`: in every 512-byte sector, the sector's offset at the
    /// cache line `(ns ^ offset) & 7`, and the issue time (seconds,
    /// nanoseconds) at bytes 48..64.
    pub fn scramble(buf: &mut [u8], offset: u64, issue_ns: u64) {
        let (sec, nsec) = (issue_ns / 1_000_000_000, issue_ns % 1_000_000_000);
        let line = ((nsec ^ offset) & 7) as usize * 64;
        for (i, sector) in buf.chunks_exact_mut(512).enumerate() {
            let at = offset.wrapping_add(i as u64 * 512);
            sector[line..line + 8].copy_from_slice(&at.to_ne_bytes());
            sector[48..56].copy_from_slice(&sec.to_ne_bytes());
            sector[56..64].copy_from_slice(&nsec.to_ne_bytes());
        }
    }

    /// A fresh seed, or (with probability `dedupe_percentage` %) the last
    /// fresh write's again, or a working-set page's.
    fn next_write_seed(&mut self) -> u64 {
        let d = self.spec.dedupe_percentage;
        if d > 0 {
            let mut x = self.dedupe_draw;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.dedupe_draw = x;
            if (x % 100) < u64::from(d) {
                if let Some(ws) = &self.working_set {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    self.dedupe_draw = x;
                    let page = (x >> 11) % ws.pages;
                    let member = (page / ws.per_member) as usize % ws.members.len();
                    return fresh_seed(ws.members[member], page % ws.per_member);
                }
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
    fn a_buffer_pattern_refills_only_when_the_job_reads_or_compresses() {
        let mut spec = BufferSpec {
            pattern: Some(b"ab".to_vec()),
            ..BufferSpec::default()
        };
        assert_eq!(spec.before_write(false, false), BeforeWrite::Keep);
        assert_eq!(spec.before_write(true, false), BeforeWrite::Refill);
        spec.refill = Some(false);
        assert_eq!(spec.before_write(true, false), BeforeWrite::Keep);
        let f = BufferFiller::new(spec.clone(), 1);
        let mut buf = [0u8; 5];
        assert!(f.initial_fill(&mut buf));
        assert_eq!(&buf, b"ababa");
    }

    #[test]
    fn the_compressible_part_carries_the_buffer_pattern_instead_of_zeros() {
        let spec = BufferSpec {
            compress_percentage: 50,
            pattern: Some(vec![0xde, 0xad]),
            ..BufferSpec::default()
        };
        let data = filled(spec, 1, 1024);
        assert!(data[512..].chunks(2).all(|c| c == [0xde, 0xad]));
        assert!(data[..512].iter().filter(|&&b| b == 0xde).count() < 20);
    }

    #[test]
    fn refill_buffers_gives_every_write_fresh_random_bytes() {
        let spec = BufferSpec {
            refill: Some(true),
            ..BufferSpec::default()
        };
        assert_eq!(spec.before_write(false, false), BeforeWrite::Refill);
        let data = filled(spec, 100, 4096);
        let unique: HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(unique.len(), 100);
    }

    #[test]
    fn scrambling_writes_the_sector_offsets_and_the_issue_time_as_fio() {
        let mut buf = vec![0u8; 2048];
        let ns = 3_000_000_005; // 3 s 5 ns: cache line (5 ^ 8192) & 7 = 5
        BufferFiller::scramble(&mut buf, 8192, ns);
        for (i, s) in buf.chunks(512).enumerate() {
            let at = u64::from_ne_bytes(s[320..328].try_into().unwrap());
            assert_eq!(at, 8192 + 512 * i as u64);
            assert_eq!(u64::from_ne_bytes(s[48..56].try_into().unwrap()), 3);
            assert_eq!(u64::from_ne_bytes(s[56..64].try_into().unwrap()), 5);
        }
        assert!(buf[..320].iter().take(48).all(|&b| b == 0));
    }

    #[test]
    fn working_set_dedupe_repeats_the_first_fresh_writes() {
        let spec = BufferSpec {
            dedupe_percentage: 50,
            working_set: true,
            ..BufferSpec::default()
        };
        let bs = 4096;
        // Two workers sharing a working set of 64 pages (dedupe_global).
        // Seeds as the worker gives them: its number in the high half.
        let (sa, sb) = (1u64 << 32, 2u64 << 32);
        let mut a = BufferFiller::new(spec.clone(), sa).with_working_set(64, &[sa, sb]);
        let mut b = BufferFiller::new(spec.clone(), sb).with_working_set(64, &[sb, sa]);
        let write = |f: &mut BufferFiller, n: usize| -> Vec<Vec<u8>> {
            (0..n)
                .map(|_| {
                    let mut buf = vec![0u8; bs];
                    f.fill(&mut buf);
                    buf
                })
                .collect()
        };
        let wa = write(&mut a, 1024);
        let _ = write(&mut b, 1024);
        // Each worker's first fresh writes: those of a filler without dedupe.
        let plain = BufferSpec::default();
        let pages_of = |seed| write(&mut BufferFiller::new(plain.clone(), seed), 32);
        let (first_a, first_b) = (pages_of(sa), pages_of(sb));
        let first_b: HashSet<&Vec<u8>> = first_b.iter().collect();
        let first_a: HashSet<&Vec<u8>> = first_a.iter().collect();
        let from_b = wa.iter().filter(|x| first_b.contains(x)).count();
        let from_a = wa.iter().filter(|x| first_a.contains(x)).count();
        // About half of a's 1024 writes repeat a page, half of those b's;
        // a's own pages: those repeats and its first 32 fresh writes.
        assert!((200..320).contains(&from_b), "{from_b}");
        assert!((230..350).contains(&from_a), "{from_a}");
        // Without dedupe_global: nothing of b's.
        let mut alone = BufferFiller::new(spec.clone(), sa).with_working_set(64, &[sa]);
        let wa = write(&mut alone, 1024);
        assert_eq!(wa.iter().filter(|x| first_b.contains(x)).count(), 0);
        let distinct: HashSet<&Vec<u8>> = wa.iter().collect();
        assert!((470..560).contains(&distinct.len()), "{}", distinct.len());
    }
}
