//! Property tests of the flash translation layer and the device model:
//! random geometries (dies, pages per block, page sizes, spare area, GC
//! policy and thresholds; planes, NAND pages, page-type program times, an
//! SLC cache, program/erase suspension), random commands (writes, trims, reads and
//! flushes of 512 B to several MiB, page-aligned or not, one to three
//! extents) and random jobs run in virtual time must keep every FTL
//! invariant ([`Ftl::check`]), lose no written page (a shadow map of what
//! was written and trimmed agrees with the FTL after every command), move
//! time forward, and end. A geometry `Params::check` refuses must be refused
//! in one line; one it accepts must run.
//!
//! A fixed number of cases keeps this to a few seconds in release mode; run
//! more with e.g. `PROPTEST_CASES=5000 cargo test --release -p ssdready-emu
//! --test ftl_props`. A failure prints the shrunk geometry and commands.

use proptest::prelude::*;
use proptest::test_runner::Config;
use ssdready_core::spec::{BlockSizes, EngineKind, JobSpec, RwMode};
use ssdready_emu::config::{preset, GcPolicy, Params};
use ssdready_emu::device::{Device, Extent, Op};
use ssdready_emu::geometry::Geometry;
use ssdready_emu::sim::simulate;

/// A device description; `fits` builds the size from the blocks so the
/// geometry leaves each die `spare` blocks (less `shave` pages) beyond its
/// share of the data: from one block short of what GC needs (refused) to
/// plenty; otherwise size and op are drawn freely (often refused: that path
/// must refuse cleanly).
#[derive(Clone, Debug)]
struct Geo {
    channels: u32,
    dies_per_channel: u32,
    pages_per_block: u32,
    page_bytes: u32,
    blocks: u32,
    spare: u32,
    shave: u64,
    fits: bool,
    free_op: f64,
    odd_bytes: u64,
    gc: GcPolicy,
    gc_fg_free: u32,
    gc_bg_free: u32,
    write_buffer: u64,
    cmd_slots: u32,
    nand: Nand,
}

/// The NAND array and its scheduling.
#[derive(Clone, Debug)]
struct Nand {
    /// log2 of planes and of mapping units per NAND page (reduced until a
    /// program unit divides the block).
    planes_log: u32,
    page_log: u32,
    page_types: bool,
    slc_cache: f64,
    suspend_max: u32,
}

impl Geo {
    fn params(&self) -> Params {
        let mut p = preset("nvme-tlc").expect("preset");
        p.channels = self.channels;
        p.dies_per_channel = self.dies_per_channel;
        p.pages_per_block = self.pages_per_block;
        p.page_bytes = self.page_bytes;
        let dies = u64::from(self.channels * self.dies_per_channel);
        let ppb = u64::from(self.pages_per_block);
        let data_blocks = u64::from(self.blocks.saturating_sub(self.spare).max(1));
        let per_die = (data_blocks * ppb).saturating_sub(self.shave % ppb).max(1);
        let logical = dies * per_die;
        p.op = if self.fits {
            (u64::from(self.blocks) * ppb) as f64 / per_die as f64 - 1.0
        } else {
            self.free_op
        };
        p.size = logical * u64::from(self.page_bytes) + self.odd_bytes % u64::from(self.page_bytes);
        p.gc = self.gc;
        p.gc_fg_free = self.gc_fg_free;
        p.gc_bg_free = self.gc_bg_free;
        p.write_buffer = self.write_buffer;
        p.cmd_slots = self.cmd_slots;
        let (mut a, mut b) = (self.nand.planes_log, self.nand.page_log);
        while !self.pages_per_block.is_multiple_of(1 << (a + b)) {
            (a, b) = (a.saturating_sub(1), if a == 0 { b - 1 } else { b });
        }
        p.planes = 1 << a;
        p.flash_page_bytes = self.page_bytes << b;
        p.program_types_ns = if self.nand.page_types {
            vec![100_000, 300_000, 900_000]
        } else {
            Vec::new()
        };
        p.slc_cache = self.nand.slc_cache;
        p.suspend_max = self.nand.suspend_max;
        p
    }
}

fn geo() -> impl Strategy<Value = Geo> {
    let shape = (
        1u32..=3,
        1u32..=3,
        prop_oneof![2u32..=8, Just(16u32), Just(32), Just(64)],
        prop_oneof![Just(512u32), Just(1024), Just(4096), Just(16384)],
        4u32..=40,
    );
    let gc = (
        prop_oneof![Just(GcPolicy::Greedy), Just(GcPolicy::Fifo)],
        1u32..=3,
        0u32..=6,
    );
    let rest = (
        (0u32..=7, any::<u64>()),
        prop::bool::weighted(0.8),
        0.001f64..2.0,
        any::<u64>(),
        prop_oneof![Just(0u64), Just(64 << 10), Just(1 << 20)],
        prop_oneof![Just(0u32), Just(1), Just(4)],
    );
    let nand = (
        0u32..=2,
        0u32..=2,
        any::<bool>(),
        prop_oneof![Just(0.0f64), Just(0.1), Just(0.5)],
        prop_oneof![Just(0u32), Just(1), Just(8)],
    )
        .prop_map(
            |(planes_log, page_log, page_types, slc_cache, suspend_max)| Nand {
                planes_log,
                page_log,
                page_types,
                slc_cache,
                suspend_max,
            },
        );
    (shape, gc, rest, nand).prop_map(
        |(
            (ch, dpc, ppb, pb, blocks),
            (gc, fg, bg),
            ((extra, shave), fits, op, odd, wb, slots),
            nand,
        )| {
            Geo {
                channels: ch,
                dies_per_channel: dpc,
                pages_per_block: ppb,
                page_bytes: pb,
                // Blocks for the data, the frontiers, the GC reserve and the
                // spare: at spare = fg + 1 a die is a block short (module docs of
                // geometry), at fg + 2 it holds exactly its limit.
                blocks: blocks + fg + 1 + extra,
                spare: fg + 1 + extra,
                shave,
                fits,
                free_op: op,
                odd_bytes: odd,
                gc,
                gc_fg_free: fg,
                gc_bg_free: bg.min(fg + extra),
                write_buffer: wb,
                cmd_slots: slots,
                nand,
            }
        },
    )
}

/// One command: operation, extents as (offset fraction of the device, length).
#[derive(Clone, Debug)]
struct Cmd {
    op: Op,
    extents: Vec<(f64, Align, u64)>,
    after_ns: u64,
}

/// How an offset is placed: on a page boundary, a 512 B boundary, or anywhere.
#[derive(Clone, Copy, Debug)]
enum Align {
    Page,
    Sector,
    Byte,
}

fn len() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => (1u64..=8).prop_map(|k| k * 512),
        2 => 1u64..=20_000,
        2 => (1u64..=64).prop_map(|k| k * 4096),
        1 => 1u64..=(6 << 20),
        1 => Just(0u64),
    ]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    let op = prop_oneof![
        6 => Just(Op::Write),
        2 => Just(Op::Trim),
        3 => Just(Op::Read),
        1 => Just(Op::Flush),
    ];
    let align = prop_oneof![Just(Align::Page), Just(Align::Sector), Just(Align::Byte)];
    let extent = (0.0f64..1.0, align, len());
    (
        op,
        prop::collection::vec(extent, 1..=3),
        prop_oneof![Just(0u64), 0u64..2_000_000],
    )
        .prop_map(|(op, extents, after_ns)| Cmd {
            op,
            extents,
            after_ns,
        })
}

fn extents(c: &Cmd, capacity: u64, page: u64) -> Vec<Extent> {
    c.extents
        .iter()
        .map(|&(at, align, len)| {
            let raw = (at * capacity as f64) as u64 % capacity.max(1);
            let offset = match align {
                Align::Page => raw / page * page,
                Align::Sector => raw / 512 * 512,
                Align::Byte => raw,
            };
            Extent { offset, len }
        })
        .collect()
}

/// What the FTL must map after `op` on `ext`: written pages (any overlap)
/// become mapped; trimmed pages become unmapped only when covered whole.
fn apply_shadow(shadow: &mut [bool], op: Op, ext: &[Extent], page: u64) {
    let pages = shadow.len() as u64;
    for e in ext {
        let first = e.offset / page;
        let end = e
            .offset
            .saturating_add(e.len.max(1))
            .div_ceil(page)
            .min(pages);
        for lpn in first..end {
            let whole = lpn * page >= e.offset && (lpn + 1) * page <= e.offset + e.len;
            match op {
                Op::Write => shadow[lpn as usize] = true,
                Op::Trim if whole => shadow[lpn as usize] = false,
                _ => {}
            }
        }
    }
}

/// Refused geometries: one line, naming the emulator.
fn refused_cleanly(e: &str) -> Result<(), TestCaseError> {
    prop_assert!(e.starts_with("emulator"), "refusal without context: {e}");
    prop_assert_eq!(e.lines().count(), 1, "refusal on several lines: {}", e);
    Ok(())
}

fn run_commands(g: &Geo, cmds: &[Cmd]) -> Result<(), TestCaseError> {
    let p = g.params();
    if let Err(e) = p.check() {
        prop_assert!(!g.fits || Geometry::of(&p).is_some(), "{e}");
        return refused_cleanly(&e);
    }
    let mut d = Device::new(&p);
    let page = u64::from(p.page_bytes);
    let mut shadow = vec![false; p.logical_pages() as usize];
    let (mut t, mut now) = (0u64, 0u64);
    for (i, c) in cmds.iter().enumerate() {
        t += c.after_ns;
        let ext = extents(c, d.capacity(), page);
        let done = d
            .submit(t, c.op, &ext)
            .map_err(|e| TestCaseError::fail(format!("command {i} {c:?}: {e}")))?;
        prop_assert!(
            done >= t,
            "command {i} completes at {done}, before its submission {t}"
        );
        prop_assert!(d.now >= now, "device time went back");
        now = d.now;
        apply_shadow(&mut shadow, c.op, &ext, page);
        let ftl = d.ftl.as_ref().expect("a flash device");
        if let Err(e) = ftl.check() {
            return Err(TestCaseError::fail(format!("after command {i} {c:?}: {e}")));
        }
        for (lpn, &want) in shadow.iter().enumerate() {
            let got = ftl.mapping(lpn as u64).is_some();
            prop_assert_eq!(
                got,
                want,
                "after command {} {:?}: page {} mapped {}",
                i,
                c,
                lpn,
                got
            );
        }
    }
    Ok(())
}

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
    fn random_commands_keep_every_ftl_invariant_and_lose_no_page(
        g in geo(),
        cmds in prop::collection::vec(cmd(), 1..120),
    ) {
        run_commands(&g, &cmds)?;
    }

    #[test]
    fn random_jobs_in_virtual_time_end_with_the_invariants_kept(
        g in geo(),
        fill_bs in fill(),
        jobs in prop::collection::vec(job(), 1..=2),
    ) {
        run_jobs(&g, fill_bs, &jobs)?;
    }
}

proptest! {
    #![proptest_config(Config { cases: 512, failure_persistence: None, ..Config::default() })]

    /// Any values at all: `check` refuses in one line or accepts a geometry
    /// whose counts are exact and whose dies can hold their share.
    #[test]
    fn any_parameters_are_refused_cleanly_or_have_a_sound_geometry(
        ints in prop::array::uniform8(prop_oneof![0u64..=8, 0u64..=70_000, any::<u32>().prop_map(u64::from)]),
        size in prop_oneof![any::<u64>(), 0u64..(1 << 32)],
        op in prop_oneof![any::<f64>(), -1.0f64..3.0, Just(f64::NAN), Just(f64::INFINITY)],
        rates in (any::<f64>(), any::<f64>()),
        times in prop::array::uniform4(prop_oneof![0u64..=2_000_000_000, any::<u64>()]),
    ) {
        let mut p = preset("x25e").expect("preset");
        let n = |i: usize| u32::try_from(ints[i]).unwrap_or(u32::MAX);
        (p.channels, p.dies_per_channel, p.pages_per_block, p.page_bytes) = (n(0), n(1), n(2), n(3));
        (p.gc_fg_free, p.gc_bg_free, p.fw_units, p.cmd_slots) = (n(4), n(5), n(6), n(7));
        (p.size, p.op, p.channel_mbps, p.link_mbps) = (size, op, rates.0, rates.1);
        (p.read_ns, p.program_ns, p.erase_ns, p.host_ns) = (times[0], times[1], times[2], times[3]);
        match p.check() {
            Err(e) => refused_cleanly(&e)?,
            Ok(()) => {
                let g = Geometry::of(&p).expect("an accepted geometry has counts");
                prop_assert!(g.physical_pages < u64::from(u32::MAX));
                prop_assert!(g.die_share <= g.die_quota() && g.die_quota() <= g.die_limit);
                prop_assert!(u64::from(g.dies) * g.die_quota() >= g.logical_pages);
                prop_assert_eq!(u64::from(p.blocks_per_die()), u64::from(g.blocks_per_die));
            }
        }
    }
}
