//! [`PlanConfig`]: what the offset and block-size generator of a job
//! (workload's `IoPlan`) needs, and [`OffsetDraw`], how it draws random
//! offsets.

use crate::spec::{BlockSizes, Distribution, FileService, JobSpec, RwMode, RwSequencer};

/// How random offsets are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetDraw {
    /// One block size, random map: the permutation.
    Permutation,
    /// Several block sizes, random map: the bitmap.
    Map,
    /// Uniform with repeats (`norandommap`, `blockalign`).
    Free,
    /// `Free` from 32 random bits (`random_generator=tausworthe`): block
    /// `lastb * r / 2^32`, as fio's 32-bit generator places it.
    Free32,
    /// fio's zipf, pareto or normal.
    Skewed,
    /// fio's zoned or zoned_abs.
    Zoned,
    /// `random_distribution=sequence`: a fixed list of block indices.
    Sequence,
    /// fio's `sprandom`: each block once, some again, so that regions
    /// end as invalid as at steady state.
    Sprandom,
}

/// What the offset and block-size generator of a job needs.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanConfig {
    /// `randseed`; each worker mixes in its index.
    pub randseed: u64,
    /// The job's directions and order.
    pub rw: RwMode,
    /// Percent of reads in a mix.
    pub rwmixread: u32,
    /// Block sizes per direction (read, write, trim).
    pub bs: [BlockSizes; 3],
    /// Each direction's smallest size (at least 1).
    pub min_bs: [u64; 3],
    /// Each direction's largest size.
    pub max_bs: [u64; 3],
    /// fio's `rw_min_bs`: the smallest block size of any direction.
    pub unit: u64,
    /// Each direction's alignment: `blockalign` for random I/O, else the
    /// smallest block size.
    pub ba: [u64; 3],
    /// Each direction's bssplit with its weights, lightest first (fio sorts
    /// it so); empty for other block sizes.
    pub splits: [Vec<(u64, u32)>; 3],
    /// `bs_unaligned`.
    pub bs_unaligned: bool,
    /// `bs_is_seq_rand`.
    pub bs_is_seq_rand: bool,
    /// How random offsets are drawn.
    pub draw: OffsetDraw,
    /// `random_distribution`.
    pub distribution: Distribution,
    /// `random_center`.
    pub random_center: Option<f64>,
    /// `random_distribution=sequence`'s block indices (None when empty or
    /// another distribution), and whether each round moves on by their
    /// count (`random_sequence_stride`).
    pub sequence: Option<(Box<[u64]>, bool)>,
    /// The zones are in bytes (`zoned_abs`).
    pub zoned_abs: bool,
    /// `zonemode=strided`: zone size, range and skip.
    pub strided: Option<(u64, u64, u64)>,
    /// `size`.
    pub size: Option<u64>,
    /// `io_size`.
    pub io_size: Option<u64>,
    /// `loops` as written.
    pub loops: u32,
    /// `time_based`: no byte budget.
    pub time_based: bool,
    /// `number_ios`.
    pub number_ios: Option<u64>,
    /// Sequential I/O with holes, bounded: the passes after which the
    /// plan ends where the next block no longer fits (None: it wraps).
    pub holed_loops: Option<u64>,
    /// `file_service_type`.
    pub file_service: FileService,
    /// Its count (`file_service_type=roundrobin:N`).
    pub file_service_nr: u32,
    /// `trimwrite`: each trim is followed by a write of the same block.
    pub trim_then_write: bool,
    /// `rw=randread:N`'s N, at least 1.
    pub seq_nr: u32,
    /// `rw=read:8k`'s hole (negative: backwards).
    pub seq_add: i64,
    /// `rw_sequencer`.
    pub sequencer: RwSequencer,
    /// `percentage_random` per direction.
    pub percentage_random: [u32; 3],
    /// The job's shape allows the plan's shortcut (one block size, no
    /// holes or sequencer, the permutation or sequential offsets); the
    /// plan also needs one file and no strided zones.
    pub fast_shape: bool,
    /// fio's `sprandom` (regions, over-provisioning, cache bytes), when on.
    pub sprandom: Option<(u32, f64, u64)>,
}

impl PlanConfig {
    /// The plan of `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        let bs: [BlockSizes; 3] = std::array::from_fn(|d| spec.bs.for_dir(d).clone());
        let min_bs: [u64; 3] = std::array::from_fn(|d| u64::from(bs[d].min()).max(1));
        let max_bs: [u64; 3] = std::array::from_fn(|d| u64::from(bs[d].max()));
        let unit = *min_bs.iter().min().unwrap_or(&1);
        let ba = block_align(spec, &min_bs);
        let draw = offset_draw(spec, &ba, &min_bs);
        let seq_nr = spec.rw_seq_nr.max(1);
        let fast_shape = !spec.trim_then_write
            && spec.rw_seq_nr <= 1
            && spec.rw_seq_add == 0
            && spec.percentage_random.iter().all(|&p| p >= 100)
            && (0..3).all(|d| min_bs[d] == unit && max_bs[d] == unit)
            && (!spec.rw.is_random() || draw == OffsetDraw::Permutation);
        PlanConfig {
            randseed: spec.randseed,
            rw: spec.rw,
            rwmixread: spec.rwmixread,
            splits: std::array::from_fn(|d| split_weights(&bs[d])),
            bs,
            min_bs,
            max_bs,
            unit,
            ba,
            bs_unaligned: spec.bs_unaligned,
            bs_is_seq_rand: spec.bs_is_seq_rand,
            draw,
            distribution: spec.random_distribution.clone(),
            random_center: spec.random_center,
            sequence: match &spec.random_distribution {
                Distribution::Sequence(l) if !l.is_empty() => {
                    Some((l.clone().into_boxed_slice(), spec.random_sequence_stride))
                }
                _ => None,
            },
            zoned_abs: matches!(spec.random_distribution, Distribution::ZonedAbs(_)),
            strided: spec.zones.active(),
            size: spec.size,
            io_size: spec.io_size,
            loops: spec.loops,
            time_based: spec.time_based,
            number_ios: spec.number_ios,
            holed_loops: holed_loops(spec),
            file_service: spec.file_service,
            file_service_nr: spec.file_service_nr,
            trim_then_write: spec.trim_then_write,
            seq_nr,
            seq_add: spec.rw_seq_add,
            sequencer: spec.rw_sequencer,
            percentage_random: spec.percentage_random,
            fast_shape,
            sprandom: spec.sprandom.on.then_some((
                spec.sprandom.regions,
                spec.sprandom.op,
                spec.sprandom.cache,
            )),
        }
    }

    /// The same plan without end (`time_based`, no `number_ios`), for a
    /// caller that keeps the budgets itself; sequential I/O with holes
    /// still ends where the job would.
    pub fn endless(&self) -> Self {
        PlanConfig {
            time_based: true,
            number_ios: None,
            ..self.clone()
        }
    }
}

/// The passes after which sequential I/O with holes ends; None when it
/// does not apply (random, time-based, or `io_size` given).
fn holed_loops(spec: &JobSpec) -> Option<u64> {
    (spec.rw_seq_add != 0 && !spec.rw.is_random() && !spec.time_based && spec.io_size.is_none())
        .then_some(u64::from(spec.loops.max(1)))
}

/// Each direction's block alignment: `blockalign` for random I/O, else
/// the smallest block size.
fn block_align(spec: &JobSpec, min_bs: &[u64; 3]) -> [u64; 3] {
    std::array::from_fn(|d| match spec.ba[d] {
        0 => min_bs[d],
        b if spec.rw.is_random() => u64::from(b),
        _ => min_bs[d],
    })
}

/// How random offsets are drawn: fio's LFSR or random map, free, zoned,
/// a sequence or skewed.
fn offset_draw(spec: &JobSpec, ba: &[u64; 3], min_bs: &[u64; 3]) -> OffsetDraw {
    if spec.sprandom.on {
        return OffsetDraw::Sprandom;
    }
    match &spec.random_distribution {
        // fio's LFSR: every block once per pass, map or not.
        Distribution::Random if spec.lfsr && ba == min_bs && spec.bs.is_fixed() => {
            OffsetDraw::Permutation
        }
        Distribution::Random if spec.norandommap || ba != min_bs => match spec.rand32 {
            true => OffsetDraw::Free32,
            false => OffsetDraw::Free,
        },
        Distribution::Random if spec.bs.is_fixed() => OffsetDraw::Permutation,
        Distribution::Random => OffsetDraw::Map,
        Distribution::Zoned(_) | Distribution::ZonedAbs(_) => OffsetDraw::Zoned,
        Distribution::Sequence(_) => OffsetDraw::Sequence,
        _ => OffsetDraw::Skewed,
    }
}

/// A `bssplit`'s sizes with their weights, lightest first (none for other
/// block sizes).
fn split_weights(bs: &BlockSizes) -> Vec<(u64, u32)> {
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
