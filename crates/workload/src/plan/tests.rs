//! The plan's rules, each against the offsets fio generates.

use super::*;
use ssdready_core::spec::{BlockSizes, Distribution, FileService, JobSpec, Zone};

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
    let mut p = IoPlan::new(&PlanConfig::new(&spec), &region(1 << 20), 0);
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
        &PlanConfig::new(&spec),
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
    let mut p = IoPlan::new(&PlanConfig::new(&spec), &region(1 << 20), 0);
    assert_eq!(std::iter::from_fn(|| p.next_io()).count(), 10);
    let spec = JobSpec {
        loops: 3,
        ..JobSpec::default()
    };
    let mut p = IoPlan::new(&PlanConfig::new(&spec), &region(1 << 16), 0);
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
    let mut p = IoPlan::new(&PlanConfig::new(&spec), &region(1 << 30), 0);
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
    let mut p = IoPlan::new(&PlanConfig::new(&spec), &region(1 << 30), 0);
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
        let mut p = IoPlan::new(&PlanConfig::new(&spec), &region(1 << 30), 3);
        (0..100).map(|_| p.next_io().unwrap()).collect()
    };
    let mut p = IoPlan::new(&PlanConfig::new(&spec), &region(1 << 30), 3);
    let b: Vec<_> = (0..100).map(|_| p.next_io().unwrap()).collect();
    assert_eq!(a, b);
}

fn offsets(spec: &JobSpec, regions: &[Region], n: usize) -> Vec<(u32, Ddir, u64, u32)> {
    let mut p = IoPlan::new(&PlanConfig::new(spec), regions, 0);
    std::iter::from_fn(|| p.next_io()).take(n).collect()
}

/// fio's iometer file-server mix: with the random map, a block already
/// done is skipped and an I/O running into done blocks is cut short, so
/// the job moves the region's bytes exactly once, in more I/Os than
/// nominal sizes would take.
#[test]
fn random_map_cuts_mixed_sizes_short_as_fio_does() {
    let spec = JobSpec {
        rw: RwMode::RandRead,
        bs: BlockSizes::Split(vec![
            (512, 10),
            (1024, 5),
            (2048, 5),
            (4096, 60),
            (8192, 2),
            (16384, 4),
            (32768, 4),
            (65536, 10),
        ]),
        ..JobSpec::default()
    };
    let len = 16 << 20;
    let ios = offsets(&spec, &region(len), usize::MAX);
    let mut seen = vec![0u8; (len / 512) as usize];
    let mut bytes = 0u64;
    for &(_, _, off, l) in &ios {
        assert_eq!(off % 512, 0);
        for b in off / 512..(off + u64::from(l)) / 512 {
            seen[b as usize] += 1;
        }
        bytes += u64::from(l);
    }
    assert_eq!(bytes, len, "exactly the region");
    assert!(seen.iter().all(|&c| c == 1), "every 512-byte block once");
    let nominal = 0.10 * 512.0
        + 0.05 * 1024.0
        + 0.05 * 2048.0
        + 0.60 * 4096.0
        + 0.02 * 8192.0
        + 0.04 * 16384.0
        + 0.04 * 32768.0
        + 0.10 * 65536.0;
    let mean = bytes as f64 / ios.len() as f64;
    assert!(
        mean < 0.8 * nominal,
        "mean {mean:.0} vs nominal {nominal:.0}: I/Os were cut short"
    );
    let short = ios
        .iter()
        .filter(|io| !spec.bs.all().contains(&io.3))
        .count();
    assert!(short > 0, "some I/Os have sizes outside the split");
}

#[test]
fn per_direction_block_sizes() {
    let spec = JobSpec {
        rw: RwMode::ReadWrite,
        bs: BlockSizes::PerDir(Box::new([
            BlockSizes::Fixed(4096),
            BlockSizes::Fixed(65536),
            BlockSizes::Fixed(65536),
        ])),
        time_based: true,
        ..JobSpec::default()
    };
    for (_, d, _, l) in offsets(&spec, &region(1 << 24), 1000) {
        assert_eq!(l, if d == Ddir::Read { 4096 } else { 65536 });
    }
}

/// fio's backwards-read example: `bs=4k`, `rw=read:-8k` over 128k.
#[test]
fn read_backwards_follows_fios_sequence() {
    let spec = JobSpec {
        rw_seq_add: -8192,
        ..JobSpec::default()
    };
    let offs: Vec<u64> = offsets(&spec, &region(128 << 10), 100)
        .iter()
        .map(|x| x.2 >> 10)
        .collect();
    let mut want = vec![0];
    want.extend((0..=120).rev().step_by(4));
    assert_eq!(offs, want, "in KiB");
}

#[test]
fn sequential_holes_wrap_to_the_start() {
    let spec = JobSpec {
        rw: RwMode::Write,
        rw_seq_add: 4096,
        ..JobSpec::default()
    };
    let offs: Vec<u64> = offsets(&spec, &region(64 << 10), 100)
        .iter()
        .map(|x| x.2 >> 10)
        .collect();
    let half: Vec<u64> = (0..64).step_by(8).collect();
    assert_eq!(offs, [half.clone(), half].concat());
}

/// fio's t0007: `rw=read:512k`, `bs=1m` over 128 MiB reads at 0, 1.5m,
/// 3m, … 126m and stops when the next block (at 127.5m) does not fit:
/// 85 reads, 87,040 KiB — not a wrap to make up `size`.
#[test]
fn sequential_holes_stop_where_the_next_block_does_not_fit() {
    let spec = JobSpec {
        rw: RwMode::Read,
        rw_seq_add: 512 << 10,
        bs: BlockSizes::Fixed(1 << 20),
        size: Some(128 << 20),
        ..JobSpec::default()
    };
    let ios = offsets(&spec, &region(128 << 20), 1000);
    assert_eq!(ios.len(), 85);
    assert_eq!(ios.last().unwrap().2, 126 << 20);
    let two = JobSpec { loops: 2, ..spec };
    assert_eq!(offsets(&two, &region(128 << 20), 1000).len(), 170);
}

/// `random_distribution=sequence:2,0,1`: blocks 2, 0, 1, 2, 0, 1, …;
/// with `random_sequence_stride`, 2, 0, 1, 5, 3, 4, … (fio's sequence.py).
#[test]
fn sequence_distribution_visits_the_listed_blocks_in_order() {
    for (stride, want) in [
        (false, vec![2, 0, 1, 2, 0, 1]),
        (true, vec![2, 0, 1, 5, 3, 4]),
    ] {
        let spec = JobSpec {
            rw: RwMode::RandRead,
            random_distribution: Distribution::Sequence(vec![2, 0, 1]),
            random_sequence_stride: stride,
            size: Some(48 << 10),
            io_size: Some(24 << 10),
            ..JobSpec::default()
        };
        let blocks: Vec<u64> = offsets(&spec, &region(48 << 10), 100)
            .iter()
            .map(|x| x.2 / 4096)
            .collect();
        assert_eq!(blocks, want, "stride={stride}");
    }
}

/// `random_generator=lfsr` with `norandommap`: every block exactly once
/// per pass (fio's LFSR), where the free draw repeats blocks.
#[test]
fn lfsr_visits_each_block_once_without_the_random_map() {
    for (lfsr, all_once) in [(true, true), (false, false)] {
        let spec = JobSpec {
            rw: RwMode::RandWrite,
            norandommap: true,
            lfsr,
            size: Some(1 << 20),
            ..JobSpec::default()
        };
        let mut seen = vec![0u32; 256];
        for io in offsets(&spec, &region(1 << 20), 1000) {
            seen[(io.2 / 4096) as usize] += 1;
        }
        assert_eq!(seen.iter().all(|&c| c == 1), all_once, "lfsr={lfsr}");
    }
}

/// `random_generator=tausworthe` draws 32 bits per offset, as fio's
/// 32-bit generator: on a target of 2^40 one-byte blocks every offset is
/// a multiple of 2^8 (so at most 2^32 distinct offsets, which fio's
/// `t64-switch.sh` counts as repeats); the 64-bit default reaches the rest.
#[test]
fn tausworthe_draws_32_bits_per_offset_and_tausworthe64_all() {
    for (rand32, all_coarse) in [(true, true), (false, false)] {
        let spec = JobSpec {
            rw: RwMode::RandRead,
            bs: BlockSizes::Fixed(1),
            norandommap: true,
            rand32,
            size: Some(1 << 40),
            ..JobSpec::default()
        };
        let coarse = offsets(&spec, &region(1 << 40), 1000)
            .iter()
            .all(|io| io.2 % 256 == 0);
        assert_eq!(coarse, all_coarse, "rand32={rand32}");
    }
}

#[test]
fn randread_colon_n_takes_a_new_random_offset_every_n() {
    for (seq, want_same) in [
        (RwSequencer::Sequential, false),
        (RwSequencer::Identical, true),
    ] {
        let spec = JobSpec {
            rw: RwMode::RandRead,
            rw_seq_nr: 4,
            rw_sequencer: seq,
            time_based: true,
            ..JobSpec::default()
        };
        let offs: Vec<u64> = offsets(&spec, &region(1 << 30), 400)
            .iter()
            .map(|x| x.2)
            .collect();
        // fio counts down from N: the N-th I/O is the first random one.
        for w in offs[3..].chunks(4).filter(|c| c.len() == 4) {
            for i in 1..4 {
                let expect = if want_same {
                    w[0]
                } else {
                    w[0] + 4096 * i as u64
                };
                assert_eq!(w[i], expect, "{seq:?} {w:?}");
            }
        }
    }
}

#[test]
fn zoned_distribution_sends_each_share_to_its_zone() {
    let z = vec![
        Zone {
            access_pct: 50,
            span: 5,
        },
        Zone {
            access_pct: 30,
            span: 15,
        },
        Zone {
            access_pct: 20,
            span: 80,
        },
    ];
    let spec = JobSpec {
        rw: RwMode::RandRead,
        norandommap: true,
        random_distribution: Distribution::Zoned(Box::new([z.clone(), z.clone(), z])),
        time_based: true,
        ..JobSpec::default()
    };
    let len = 1u64 << 30;
    let mut c = [0u32; 3];
    for (_, _, off, _) in offsets(&spec, &region(len), 100_000) {
        let pct = off * 100 / len;
        c[if pct < 5 {
            0
        } else if pct < 20 {
            1
        } else {
            2
        }] += 1;
    }
    for (got, want) in c.iter().zip([50_000, 30_000, 20_000]) {
        assert!((*got as i64 - want).abs() < 1500, "{c:?}");
    }
}

#[test]
fn unequal_files_are_each_done_once_per_pass() {
    let spec = JobSpec {
        rw: RwMode::Read,
        ..JobSpec::default()
    };
    let regions = [
        Region {
            file: 0,
            offset: 0,
            len: 8 << 12,
        },
        Region {
            file: 1,
            offset: 0,
            len: 2 << 12,
        },
        Region {
            file: 2,
            offset: 0,
            len: 4 << 12,
        },
    ];
    let ios = offsets(&spec, &regions, usize::MAX);
    let per_file: Vec<usize> = (0..3)
        .map(|f| ios.iter().filter(|x| x.0 == f).count())
        .collect();
    assert_eq!(
        per_file,
        [8, 2, 4],
        "each file's region once, round robin while they last"
    );
    assert_eq!(
        ios[..6].iter().map(|x| x.0).collect::<Vec<_>>(),
        [0, 1, 2, 0, 1, 2]
    );
}

#[test]
fn skewed_file_service_never_finishes_a_file() {
    let spec = JobSpec {
        rw: RwMode::Read,
        file_service: FileService::Zipf(1.2),
        number_ios: Some(2000),
        time_based: true,
        ..JobSpec::default()
    };
    let regions: Vec<Region> = (0..8)
        .map(|f| Region {
            file: f,
            offset: 0,
            len: 16 << 12,
        })
        .collect();
    let ios = offsets(&spec, &regions, usize::MAX);
    assert_eq!(ios.len(), 2000);
    let mut c = [0u32; 8];
    ios.iter().for_each(|x| c[x.0 as usize] += 1);
    assert!(c.iter().max().unwrap() > &1000, "one file is hot: {c:?}");
}

#[test]
fn bsrange_is_drawn_as_fio_draws_it() {
    let spec = JobSpec {
        rw: RwMode::RandRead,
        norandommap: true,
        bs: BlockSizes::Range {
            min: 4096,
            max: 65536,
        },
        time_based: true,
        ..JobSpec::default()
    };
    let ios = offsets(&spec, &region(1 << 30), 64_000);
    let at_max = ios.iter().filter(|x| x.3 == 65536).count() as f64 / 64_000.0;
    // min + max·u above max for u > 15/16: fio's draw clamps 1/16 to max.
    assert!((at_max - 1.0 / 16.0).abs() < 0.01, "{at_max}");
    assert!(ios.iter().all(|x| x.3 % 4096 == 0 && x.3 >= 4096));
}

#[test]
fn blockalign_aligns_random_offsets() {
    let spec = JobSpec {
        rw: RwMode::RandRead,
        bs: BlockSizes::Fixed(512),
        ba: [4096; 3],
        time_based: true,
        ..JobSpec::default()
    };
    assert!(offsets(&spec, &region(1 << 24), 1000)
        .iter()
        .all(|x| x.2 % 4096 == 0));
}

#[test]
fn the_common_case_shortcut_plans_the_general_paths_ios() {
    // One file, one block size, random (the permutation) or sequential,
    // bounded or time based over several passes, with a region that does
    // not start the file and mixed directions: the shortcut must give the
    // general path's I/Os, one for one.
    let regions = [Region {
        file: 0,
        offset: 8192,
        len: 40960 + 100,
    }];
    for rw in [
        RwMode::RandRead,
        RwMode::Write,
        RwMode::RandRw,
        RwMode::ReadWrite,
    ] {
        for time_based in [false, true] {
            let spec = JobSpec {
                rw,
                time_based,
                loops: 3,
                ..JobSpec::default()
            };
            let mut fast = IoPlan::new(&PlanConfig::new(&spec), &regions, 1);
            assert!(fast.fast, "{rw:?} takes the shortcut");
            let mut general = fast.clone();
            general.fast = false;
            for i in 0..100 {
                let (a, b) = (fast.next_io(), general.next_io());
                assert_eq!(a, b, "{rw:?}, time_based {time_based}, I/O {i}");
                if a.is_none() {
                    break;
                }
            }
        }
    }
}
