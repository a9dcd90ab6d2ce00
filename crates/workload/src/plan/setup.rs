//! The parts of a plan that depend on the worker's regions, worked out
//! once when it is made: strided zones, each file's state, the bytes to
//! move, and each direction's zone table. What depends only on the job is
//! in its resolution ([`PlanConfig`]).

use super::dists::{zone_table, Skewed};
use super::permutation::Permutation;
use super::randmap::RandMap;
use super::state::{FileState, Region, Strided};
use rand::rngs::SmallRng;
use ssdready_core::resolved::OffsetDraw as RandomMode;
use ssdready_core::resolved::PlanConfig;
use ssdready_core::spec::Distribution;

/// Each direction's zone table of a zoned `random_distribution`.
pub(super) fn zone_tables(cfg: &PlanConfig) -> [Option<Vec<(u64, u64)>>; 3] {
    match &cfg.distribution {
        Distribution::Zoned(z) | Distribution::ZonedAbs(z) => {
            std::array::from_fn(|d| zone_table(&z[d]))
        }
        _ => [None, None, None],
    }
}

/// fio: strided zones only with one file open (else none); the random map
/// then spans one zone.
pub(super) fn strided_zones(cfg: &PlanConfig, regions: &[Region]) -> Option<Strided> {
    cfg.strided
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
    cfg: &PlanConfig,
    regions: &[Region],
    strided: Option<Strided>,
    seed: u64,
    rng: &mut SmallRng,
) -> Vec<FileState> {
    let (unit, min_bs) = (cfg.unit, cfg.min_bs);
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
                map: (cfg.draw == RandomMode::Map && cfg.rw.is_random())
                    .then(|| RandMap::new(blocks)),
                skew: Skewed::offsets(
                    &cfg.distribution,
                    cfg.random_center,
                    r.len.div_ceil(range_size).max(1),
                    &mut *rng,
                ),
            }
        })
        .collect()
}

/// The bytes the job moves, unless time-based: io_size, else size — at
/// most what the files hold — times the loops (fio).
pub(super) fn bytes_left(cfg: &PlanConfig, regions: &[Region]) -> Option<u64> {
    let total: u64 = regions.iter().map(|r| r.len).sum();
    if cfg.time_based {
        None
    } else {
        // fio: io_size, else size — at most what the files hold.
        let size = cfg.size.map_or(total, |s| s.min(total));
        if let Some((_, op, _)) = cfg.sprandom {
            // fio: sprandom writes the physical capacity once.
            let physical = ssdready_core::spec_sprandom::physical_size(op, size, cfg.unit);
            return Some(physical);
        }
        Some(cfg.io_size.unwrap_or(size).saturating_mul(cfg.loops as u64))
    }
}

/// fio's `sprandom` sequence over the one file's region (fio refuses it
/// with several files), when the job asks for it.
pub(super) fn sprandom(
    cfg: &PlanConfig,
    regions: &[Region],
    seed: u64,
) -> Option<Box<super::sprandom::Sprandom>> {
    let (n, op, cache) = cfg.sprandom.filter(|_| cfg.draw == RandomMode::Sprandom)?;
    let r = regions.first()?;
    let size = cfg.size.map_or(r.len, |s| s.min(r.len));
    Some(Box::new(super::sprandom::Sprandom::new(
        size / cfg.unit,
        cfg.unit,
        n,
        op,
        cache > 0,
        seed,
    )))
}
