//! Property tests of the virtual-time loop on random device geometries
//! (the emulator's own, `crates/emu/tests/geo/`): random jobs (every
//! direction, fixed and ranged block sizes from 512 B to 6 MiB, depths,
//! clones), after an optional fill, must end, move time forward, issue no
//! more I/Os than asked, and leave every FTL invariant kept.
//!
//! A fixed number of cases keeps this to a few seconds in release mode; run
//! more with e.g. `PROPTEST_CASES=5000 cargo test --release -p ssdready-run
//! --test run virtual_props::`.

use proptest::prelude::*;
use proptest::test_runner::Config;
use ssdready_core::spec::{BlockSizes, EngineKind, JobSpec, RwMode};
use ssdready_emu::device::Device;
use ssdready_run::virtual_time::simulate;

#[path = "../../emu/tests/geo/mod.rs"]
mod geo;
use geo::{geo, refused_cleanly, Geo};

fn job() -> impl Strategy<Value = JobSpec> {
    let rw = prop_oneof![
        Just(RwMode::Write),
        Just(RwMode::RandWrite),
        Just(RwMode::Read),
        Just(RwMode::RandRead),
        Just(RwMode::ReadWrite),
        Just(RwMode::RandRw),
        Just(RwMode::Trim),
        Just(RwMode::RandTrim),
    ];
    let bs = prop_oneof![
        (1u32..=16).prop_map(|k| BlockSizes::Fixed(k * 512)),
        (1u32..=1024).prop_map(|k| BlockSizes::Fixed(k * 4096)),
        (1u32..=6).prop_map(|m| BlockSizes::Fixed(m << 20)),
        (1u32..=8, 1u32..=64).prop_map(|(a, b)| BlockSizes::Range {
            min: a * 512,
            max: a * 512 + b * 4096,
        }),
    ];
    (
        rw,
        bs,
        1u32..=16,
        1u64..=3000,
        any::<bool>(),
        1u32..=2,
        any::<u64>(),
    )
        .prop_map(
            |(rw, bs, iodepth, ios, norandommap, numjobs, randseed)| JobSpec {
                rw,
                bs,
                iodepth,
                number_ios: Some(ios),
                time_based: true,
                norandommap,
                numjobs,
                randseed,
                ioengine: EngineKind::Null,
                ..JobSpec::default()
            },
        )
}

/// A first pass over the whole device: none, or sequential writes of this
/// size (sub-page sizes rewrite each page several times in a row: the
/// pattern that once piled all the data on a few dies).
fn fill() -> impl Strategy<Value = Option<u32>> {
    prop_oneof![
        Just(None),
        prop_oneof![
            Just(512u32),
            Just(1024),
            Just(2048),
            Just(3072),
            Just(1 << 20)
        ]
        .prop_map(Some),
    ]
}

fn run_jobs(g: &Geo, fill_bs: Option<u32>, jobs: &[JobSpec]) -> Result<(), TestCaseError> {
    let p = g.params();
    if let Err(e) = p.check() {
        return refused_cleanly(&e);
    }
    let mut d = Device::new(&p);
    if let Some(bs) = fill_bs {
        let fill = JobSpec {
            rw: RwMode::Write,
            bs: BlockSizes::Fixed(bs),
            number_ios: None,
            time_based: false,
            numjobs: 1,
            ..jobs[0].clone()
        };
        if u64::from(bs) <= d.capacity() {
            simulate(&mut d, &[fill], &|| false).map_err(|e| TestCaseError::fail(e.to_string()))?;
            d.ftl
                .as_ref()
                .expect("flash")
                .check()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
    }
    let cap = d.capacity();
    // Every job's blocks must fit the device (the front end checks this);
    // about 40,000 pages of I/O per job keeps a case short while writing
    // the small devices over several times (GC at work).
    let page = u64::from(p.page_bytes);
    let jobs: Vec<JobSpec> = jobs
        .iter()
        .filter(|j| u64::from(j.bs.max()) <= cap)
        .map(|j| {
            let per_io = u64::from(j.bs.max()).div_ceil(page);
            let ios = j.number_ios.map(|n| n.min((40_000 / per_io).max(1)));
            JobSpec {
                number_ios: ios,
                ..j.clone()
            }
        })
        .collect();
    let t0 = d.now;
    let out = simulate(&mut d, &jobs, &|| false).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(out.end_ns >= t0, "simulation ended before it started");
    let issued: u64 = out
        .workers
        .iter()
        .flatten()
        .flat_map(|w| w.dirs.iter().flatten())
        .map(|s| s.ios)
        .sum();
    let budget: u64 = jobs
        .iter()
        .map(|j| j.number_ios.unwrap_or(0) * u64::from(j.numjobs))
        .sum();
    prop_assert!(issued <= budget, "{issued} I/Os for a budget of {budget}");
    let ftl = d.ftl.as_ref().expect("a flash device");
    ftl.check()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    Ok(())
}

proptest! {
    #![proptest_config(Config { cases: 64, failure_persistence: None, ..Config::default() })]

    #[test]
    fn random_jobs_in_virtual_time_end_with_the_invariants_kept(
        g in geo(),
        fill_bs in fill(),
        jobs in prop::collection::vec(job(), 1..=2),
    ) {
        let _one_file = crate::one_file_at_a_time(module_path!());
        run_jobs(&g, fill_bs, &jobs)?;
    }
}
