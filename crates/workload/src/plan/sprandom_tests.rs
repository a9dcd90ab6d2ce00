//! The model against its closed form, and the sequence against the model.

use super::*;

/// The validity the model approaches with many regions: evenly spaced
/// shares of a curve whose share grows as `-ln v`, so `floor^(1 - r/(n-1))`.
fn closed_form(regions: u32, op: f64, r: usize) -> f64 {
    let floor = 1.0 - 1.0 / write_amplification(op);
    floor.powf(1.0 - r as f64 / (regions - 1) as f64)
}

#[test]
fn validity_follows_the_closed_form() {
    for op in [0.07, 0.15, 0.28, 0.5, 0.75] {
        let v = validity(200, op);
        assert_eq!(v.len(), 200);
        for (r, &x) in v.iter().enumerate() {
            let want = closed_form(200, op, r);
            assert!((x - want).abs() < 0.01, "op {op} region {r}: {x} vs {want}");
        }
        assert!(
            v.windows(2).all(|w| w[0] <= w[1] + 1e-12),
            "least valid first"
        );
        assert!(
            (v[199] - 1.0).abs() < 1e-9,
            "the newest region is all valid"
        );
        let floor = 1.0 - 1.0 / (0.5 / op + 0.7);
        assert!((v[0] - floor).abs() < 1e-9, "the oldest is at the GC floor");
    }
    // The device holds the logical capacity: mean validity ≈ 1/(1+op).
    let v = validity(100, 0.15);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    assert!((mean - 1.0 / 1.15).abs() < 0.005, "{mean}");
    assert_eq!(validity(1, 0.15), vec![1.0]);
}

/// Write every block of a sequence, then count per region (by write
/// position) the writes a later write of the same block made invalid.
fn run(blocks: u64, regions: u32, op: f64, cache: bool) -> (Sprandom, Vec<u64>, Vec<(u64, u64)>) {
    let mut s = Sprandom::new(blocks, 4096, regions, op, cache, 7);
    let w = s.per_region();
    let mut seq = Vec::new();
    while let Some(b) = s.next_block() {
        assert!(b < blocks);
        seq.push(b);
        assert!(seq.len() as u64 <= 3 * blocks, "the sequence ends");
    }
    let mut last = vec![usize::MAX; blocks as usize];
    for (i, &b) in seq.iter().enumerate() {
        last[b as usize] = i;
    }
    // (writes, invalid writes) of each region.
    let mut per = vec![(0u64, 0u64); regions as usize + 1];
    for (i, &b) in seq.iter().enumerate() {
        let r = ((i as u64 / w) as usize).min(regions as usize);
        per[r].0 += 1;
        if last[b as usize] != i {
            per[r].1 += 1;
        }
    }
    let mut counts = vec![0u64; blocks as usize];
    for &b in &seq {
        counts[b as usize] += 1;
    }
    (s, counts, per)
}

#[test]
fn every_block_is_written_and_regions_reach_their_validity() {
    for cache in [false, true] {
        let (blocks, regions, op) = (200_000u64, 20u32, 0.15);
        let (s, counts, per) = run(blocks, regions, op, cache);
        assert!(
            counts.iter().all(|&c| c >= 1),
            "every block written at least once"
        );
        let total: u64 = counts.iter().sum();
        let physical = ssdready_core::spec_sprandom::physical_size(op, blocks * 4096, 4096) / 4096;
        let off = (total as f64 - physical as f64).abs() / physical as f64;
        assert!(
            off < 0.01,
            "the physical capacity once: {total} vs {physical}"
        );
        let want = validity(regions, op);
        for r in 0..regions as usize - 1 {
            let (n, inv) = per[r];
            assert_eq!(n, s.per_region(), "region {r} is whole");
            let got = inv as f64 / n as f64;
            // ~10,000 writes a region: a binomial sd under 0.005.
            assert!(
                (got - (1.0 - want[r])).abs() < 0.03,
                "cache {cache} region {r}: invalid {got} vs {}",
                1.0 - want[r]
            );
        }
    }
}

#[test]
fn the_sequence_repeats_and_depends_on_the_seed() {
    let take = |seed| {
        let mut s = Sprandom::new(5000, 512, 10, 0.25, false, seed);
        std::iter::from_fn(|| s.next_block()).collect::<Vec<_>>()
    };
    assert_eq!(take(1), take(1));
    assert_ne!(take(1), take(2));
}

#[test]
fn more_regions_than_blocks_still_write_every_block() {
    let mut s = Sprandom::new(10, 4096, 1000, 0.1, true, 3);
    let mut seen = [false; 10];
    while let Some(b) = s.next_block() {
        seen[b as usize] = true;
    }
    assert!(seen.iter().all(|&x| x));
}

#[test]
fn a_sprandom_plan_writes_the_physical_capacity_over_its_region() {
    use crate::plan::{IoPlan, PlanConfig, Region};
    use ssdready_core::req::Ddir;
    use ssdready_core::spec::{JobSpec, RwMode};
    use ssdready_core::spec_sprandom::SprandomSpec;
    let spec = JobSpec {
        rw: RwMode::RandWrite,
        size: Some(8 << 20),
        lfsr: true,
        norandommap: true,
        sprandom: SprandomSpec {
            on: true,
            regions: 16,
            op: 0.25,
            ..SprandomSpec::default()
        },
        ..JobSpec::default()
    };
    let region = Region {
        file: 0,
        offset: 1 << 20,
        len: 8 << 20,
    };
    let mut p = IoPlan::new(&PlanConfig::new(&spec), &[region], 0);
    let mut seen = vec![0u32; 2048];
    let mut ios = 0u64;
    while let Some((_, d, off, len)) = p.next_io() {
        assert_eq!((d, len), (Ddir::Write, 4096));
        assert!(((1 << 20)..(9 << 20)).contains(&off), "{off} in the region");
        seen[((off - (1 << 20)) / 4096) as usize] += 1;
        ios += 1;
    }
    // 8 MiB at 25%: 10 MiB, 2560 blocks — the budget, unless every block
    // is written (the sequence's end) a little before it.
    let unwritten = seen.iter().filter(|&&c| c == 0).count();
    assert!(ios == 2560 || (unwritten == 0 && ios > 2500), "{ios} I/Os");
    assert!(
        unwritten < 40,
        "nearly every block written: {unwritten} not"
    );
    assert!(seen.iter().filter(|&&c| c > 1).count() > 300, "rewrites");
}
