//! The parts of a plan worked out once, when it is made: how random
//! offsets are drawn, strided zones, each file's state, the bytes to move
//! and a `bssplit`'s weights.

use super::dists::{zone_table, Skewed};
use super::permutation::Permutation;
use super::randmap::RandMap;
use super::{FileState, RandomMode, Region, Strided};
use rand::rngs::SmallRng;
use ssdready_core::spec::{BlockSizes, Distribution, JobSpec};

/// Each direction's block alignment: `blockalign` for random I/O, else
/// the smallest block size.
pub(super) fn block_align(spec: &JobSpec, min_bs: &[u64; 3]) -> [u64; 3] {
    std::array::from_fn(|d| match spec.ba[d] {
        0 => min_bs[d],
        b if spec.rw.is_random() => u64::from(b),
        _ => min_bs[d],
    })
}

/// Each direction's zone table of a zoned `random_distribution`.
pub(super) fn zone_tables(spec: &JobSpec) -> [Option<Vec<(u64, u64)>>; 3] {
    match &spec.random_distribution {
        Distribution::Zoned(z) | Distribution::ZonedAbs(z) => {
            std::array::from_fn(|d| zone_table(&z[d]))
        }
        _ => [None, None, None],
    }
}

/// How random offsets are drawn: fio's LFSR or random map, free, zoned,
/// a sequence or skewed.
pub(super) fn random_mode(spec: &JobSpec, ba: &[u64; 3], min_bs: &[u64; 3]) -> RandomMode {
    match &spec.random_distribution {
        // fio's LFSR: every block once per pass, map or not.
        Distribution::Random if spec.lfsr && ba == min_bs && spec.bs.is_fixed() => {
            RandomMode::Permutation
        }
        Distribution::Random if spec.norandommap || ba != min_bs => match spec.rand32 {
            true => RandomMode::Free32,
            false => RandomMode::Free,
        },
        Distribution::Random if spec.bs.is_fixed() => RandomMode::Permutation,
        Distribution::Random => RandomMode::Map,
        Distribution::Zoned(_) | Distribution::ZonedAbs(_) => RandomMode::Zoned,
        Distribution::Sequence(_) => RandomMode::Sequence,
        _ => RandomMode::Skewed,
    }
}

/// fio: strided zones only with one file open (else none); the random map
/// then spans one zone.
pub(super) fn strided_zones(spec: &JobSpec, regions: &[Region]) -> Option<Strided> {
    spec.zones
        .active()
        .filter(|_| regions.len() == 1)
        .map(|(size, range, skip)| Strided {
            size,
            range,
            skip,
            start: 0,
            bytes: 0,
        })
}

/// Each file's state: its blocks, permutation, random map and skew.
pub(super) fn file_states(
    spec: &JobSpec,
    regions: &[Region],
    strided: Option<Strided>,
    min_bs: &[u64; 3],
    mode: RandomMode,
    seed: u64,
    rng: &mut SmallRng,
) -> Vec<FileState> {
    let unit = *min_bs.iter().min().unwrap_or(&1);
    // fio: ranges of min(read, write) smallest sizes.
    let range_size = min_bs[0].min(min_bs[1]).max(1);
    regions
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let blocks = (strided.map_or(r.len, |z| z.range.min(r.len)) / unit).max(1);
            FileState {
                region: *r,
                last_pos: [0; 3],
                last_start: [None; 3],
                blocks,
                perm: Permutation::new(blocks, seed ^ ((i as u64) << 32)),
                perm_pos: 0,
                pass: 0,
                map: (mode == RandomMode::Map && spec.rw.is_random()).then(|| RandMap::new(blocks)),
                skew: Skewed::offsets(
                    &spec.random_distribution,
                    spec.random_center,
                    r.len.div_ceil(range_size).max(1),
                    &mut *rng,
                ),
            }
        })
        .collect()
}

/// The bytes the job moves, unless time-based: io_size, else size — at
/// most what the files hold — times the loops (fio).
pub(super) fn bytes_left(spec: &JobSpec, regions: &[Region]) -> Option<u64> {
    let total: u64 = regions.iter().map(|r| r.len).sum();
    if spec.time_based {
        None
    } else {
        // fio: io_size, else size — at most what the files hold.
        let size = spec.size.map_or(total, |s| s.min(total));
        Some(
            spec.io_size
                .unwrap_or(size)
                .saturating_mul(spec.loops as u64),
        )
    }
}

/// A `bssplit`'s sizes with their weights, lightest first (none for other
/// block sizes).
pub(super) fn split_weights(bs: &BlockSizes) -> Vec<(u64, u32)> {
    match bs {
        BlockSizes::Split(parts) => {
            let mut v: Vec<(u64, u32)> = parts
                .iter()
                .filter(|p| p.1 > 0)
                .map(|&(b, w)| (u64::from(b), w))
                .collect();
            v.sort_by_key(|p| p.1);
            v
        }
        _ => Vec::new(),
    }
}
