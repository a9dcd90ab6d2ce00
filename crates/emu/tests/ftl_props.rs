//! Property tests of the flash translation layer and the device model:
//! random geometries (dies, pages per block, page sizes, spare area, GC
//! policy and thresholds; planes, NAND pages, page-type program times, an
//! SLC cache, program/erase suspension; `geo/`) and random commands
//! (writes, trims, reads and flushes of 512 B to several MiB, page-aligned
//! or not, one to three extents) must keep every FTL invariant
//! ([`Ftl::check`]), lose no written page (a shadow map of what was written
//! and trimmed agrees with the FTL after every command), move time forward,
//! and end. A geometry `Params::check` refuses must be refused in one line;
//! one it accepts must run. Random jobs on these geometries in virtual time
//! are `crates/run/tests/virtual_props.rs`.
//!
//! A fixed number of cases keeps this to a few seconds in release mode; run
//! more with e.g. `PROPTEST_CASES=5000 cargo test --release -p ssdready-emu
//! --test emu ftl_props::`. A failure prints the shrunk geometry and commands.

use proptest::prelude::*;
use proptest::test_runner::Config;
use ssdready_emu::config::preset;
use ssdready_emu::device::{Device, Extent, Op};
use ssdready_emu::geometry::Geometry;

use crate::geo;
use geo::{geo, refused_cleanly, Geo};

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

proptest! {
    #![proptest_config(Config { cases: 64, failure_persistence: None, ..Config::default() })]

    #[test]
    fn random_commands_keep_every_ftl_invariant_and_lose_no_page(
        g in geo(),
        cmds in prop::collection::vec(cmd(), 1..120),
    ) {
        let _one_file = crate::one_file_at_a_time(module_path!());
        run_commands(&g, &cmds)?;
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
        let _one_file = crate::one_file_at_a_time(module_path!());
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
