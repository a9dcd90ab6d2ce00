//! The tests of a characterization and their points, after the SNIA
//! Solid State Storage Performance Test Specification (PTS-E 1.1 / PTS-C
//! 2.0; shared/notes/ssd-models.md):
//!
//! * **IOPS**: each round runs random I/O at every read/write mix (100/0,
//!   95/5, 65/35, 50/50, 35/65, 5/95, 0/100) for every block size (1024,
//!   128, 64, 32, 16, 8, 4, 0.5 KiB), one point each; the tracked figure is
//!   4 KiB 100 % write IOPS. `--quick`: mixes 100/0, 65/35, 0/100 and
//!   block sizes 128 and 4 KiB.
//! * **Throughput**, once for 128 KiB and once for 1024 KiB: each round a
//!   sequential write point and a sequential read point; tracked: the
//!   write bandwidth.
//! * **Latency**: one thread at queue depth 1, mixes 100/0, 65/35, 0/100 ×
//!   8, 4, 0.5 KiB (`--quick`: 4 KiB only); tracked: the mean latency of
//!   4 KiB writes.
//! * **Write saturation** (WSAT): 4 KiB random writes from a purged device
//!   until 4× the capacity is written (`--quick`: 3×) or the time limit;
//!   IOPS and cumulative data written per sample: the write cliff. Where
//!   IOPS have not settled by then (a device with little spare area
//!   needs ~10 capacities of writes to reach its steady WA), it goes on one
//!   capacity at a time up to 4× that, so that the cliff's depth and the
//!   write amplification are measured at steady state.
//!
//! Every test but WSAT starts with a purge and the workload-independent
//! preconditioning (2× the capacity in 128 KiB sequential writes). Random
//! points use uniformly random offsets with repetition (fio's
//! `norandommap`), as the write-amplification model assumes.

use serde::{Deserialize, Serialize};
use ssdready_core::steady::PtsRule;

/// Random or sequential offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Random,
    Sequential,
}

/// One workload run for a fixed time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub access: Access,
    /// Percentage of reads (100: reads only, 0: writes only).
    pub read_pct: u32,
    /// Block size, bytes.
    pub bs: u32,
    pub iodepth: u32,
    pub numjobs: u32,
    /// How long it runs, seconds (simulated seconds in virtual time).
    pub seconds: f64,
}

impl Point {
    /// `4 KiB random write`, `4 KiB random 65/35`, `128 KiB sequential read`.
    pub fn label(&self) -> String {
        let mix = match self.read_pct {
            100 => "read".to_string(),
            0 => "write".to_string(),
            m => mix_label(m),
        };
        format!(
            "{} {} {mix}",
            bs_label(self.bs),
            match self.access {
                Access::Random => "random",
                Access::Sequential => "sequential",
            },
        )
    }
}

/// `4 KiB`, `0.5 KiB`, `1024 KiB`.
pub fn bs_label(bs: u32) -> String {
    if bs.is_multiple_of(1024) {
        format!("{} KiB", bs / 1024)
    } else {
        format!("{} KiB", bs as f64 / 1024.0)
    }
}

/// `65/35` (read/write).
pub fn mix_label(read_pct: u32) -> String {
    format!("{read_pct}/{}", 100 - read_pct)
}

/// Which test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestKind {
    Iops,
    Throughput,
    Latency,
    WriteSaturation,
}

/// The figure a round-based test tracks for steady state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tracked {
    /// The point's IOPS.
    Iops,
    /// The point's bandwidth, bytes per second.
    Bandwidth,
    /// The point's mean latency, ns.
    MeanLatency,
}

/// One test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TestPlan {
    pub kind: TestKind,
    /// `iops`, `throughput_128k`, `throughput_1024k`, `latency`, `wsat`.
    pub name: String,
    /// Purge first (every test; the runner says when it cannot).
    pub purge: bool,
    /// Workload-independent preconditioning: bytes of 128 KiB sequential
    /// writes (0: none).
    pub precondition_bytes: u64,
    /// The points of one round, in order (round-based tests).
    pub round: Vec<Point>,
    /// Which point of the round is tracked, and what of it.
    pub tracked_point: usize,
    pub tracked: Tracked,
    /// WSAT: the point run continuously, the data to write and the time
    /// limit.
    pub wsat: Option<WsatPlan>,
}

/// The write-saturation test's stopping rule: at least `bytes`, then on
/// until IOPS settle, at most `max_bytes` or `max_seconds`. (A runner's
/// `saturate` gets one segment of it: `bytes` to write now.)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WsatPlan {
    pub point: Point,
    pub bytes: u64,
    /// The capacity multiple `bytes` is.
    pub capacity_multiple: f64,
    pub max_bytes: u64,
    pub max_seconds: f64,
}

/// WSAT's hard limit, in multiples of its planned data.
pub const WSAT_EXTENSION: f64 = 4.0;

/// The whole characterization.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub quick: bool,
    pub capacity: u64,
    /// Seconds per point (simulated seconds in virtual time).
    pub point_seconds: f64,
    pub iodepth: u32,
    pub rule: PtsRule,
    pub tests: Vec<TestPlan>,
}

/// What shapes the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanOptions {
    pub quick: bool,
    /// Bytes of the target the tests cover.
    pub capacity: u64,
    /// Seconds per point; PTS: 60.
    pub point_seconds: f64,
    /// Queue depth of the IOPS, throughput and WSAT points (one thread).
    pub iodepth: u32,
    /// WSAT's time limit, seconds; PTS: 24 h.
    pub wsat_max_seconds: f64,
    /// Leave out block sizes under this (a device whose logical block size
    /// is 4 KiB cannot take 512-byte direct I/O).
    pub min_bs: u32,
}

/// PTS's read/write mixes (read %) and block sizes.
pub const PTS_MIXES: [u32; 7] = [100, 95, 65, 50, 35, 5, 0];
pub const PTS_BLOCK_SIZES: [u32; 8] = [
    1 << 20,
    128 << 10,
    64 << 10,
    32 << 10,
    16 << 10,
    8 << 10,
    4 << 10,
    512,
];
pub const QUICK_MIXES: [u32; 3] = [100, 65, 0];
pub const QUICK_BLOCK_SIZES: [u32; 2] = [128 << 10, 4 << 10];
pub const LATENCY_MIXES: [u32; 3] = [100, 65, 0];
pub const LATENCY_BLOCK_SIZES: [u32; 3] = [8 << 10, 4 << 10, 512];
pub const QUICK_LATENCY_BLOCK_SIZES: [u32; 1] = [4 << 10];
/// Preconditioning writes this many times the capacity.
pub const PRECONDITION_MULTIPLE: u64 = 2;
pub const PRECONDITION_BS: u32 = 128 << 10;

/// The plan for `o`.
pub fn plan(o: &PlanOptions) -> Plan {
    let mut tests = vec![iops_test(o)];
    for bs in [128u32 << 10, 1 << 20] {
        tests.push(throughput_test(o, bs));
    }
    tests.push(latency_test(o));
    tests.push(wsat_test(o));
    Plan {
        quick: o.quick,
        capacity: o.capacity,
        point_seconds: o.point_seconds,
        iodepth: o.iodepth,
        rule: PtsRule::default(),
        tests,
    }
}

/// One point of `o`'s length, one thread.
fn point(o: &PlanOptions, access: Access, read_pct: u32, bs: u32, iodepth: u32) -> Point {
    Point {
        access,
        read_pct,
        bs,
        iodepth,
        numjobs: 1,
        seconds: o.point_seconds,
    }
}

/// The block sizes the target takes (4 KiB always).
fn kept(o: &PlanOptions, sizes: &[u32]) -> Vec<u32> {
    let keep = |bs: &&u32| **bs >= o.min_bs.max(1) || **bs == 4096;
    sizes.iter().filter(keep).copied().collect()
}

/// A round test: purged, preconditioned, its round tracked at `tracked`.
fn round_plan(
    o: &PlanOptions,
    kind: TestKind,
    name: String,
    round: Vec<Point>,
    tracked_point: usize,
    tracked: Tracked,
) -> TestPlan {
    TestPlan {
        kind,
        name,
        purge: true,
        precondition_bytes: PRECONDITION_MULTIPLE * o.capacity,
        round,
        tracked_point,
        tracked,
        wsat: None,
    }
}

/// IOPS: random I/O at every mix and block size, 4 KiB writes tracked.
fn iops_test(o: &PlanOptions) -> TestPlan {
    let (mixes, sizes): (&[u32], &[u32]) = if o.quick {
        (&QUICK_MIXES, &QUICK_BLOCK_SIZES)
    } else {
        (&PTS_MIXES, &PTS_BLOCK_SIZES)
    };
    let mut round = Vec::new();
    for &m in mixes {
        for bs in kept(o, sizes) {
            round.push(point(o, Access::Random, m, bs, o.iodepth));
        }
    }
    let tracked_point = round
        .iter()
        .position(|p| p.read_pct == 0 && p.bs == 4096)
        .expect("the plan has 4 KiB writes");
    round_plan(
        o,
        TestKind::Iops,
        "iops".into(),
        round,
        tracked_point,
        Tracked::Iops,
    )
}

/// Throughput: sequential writes and reads of `bs`.
fn throughput_test(o: &PlanOptions, bs: u32) -> TestPlan {
    let round = vec![
        point(o, Access::Sequential, 0, bs, o.iodepth),
        point(o, Access::Sequential, 100, bs, o.iodepth),
    ];
    let name = format!("throughput_{}k", bs >> 10);
    round_plan(o, TestKind::Throughput, name, round, 0, Tracked::Bandwidth)
}

/// Latency: random I/O at QD 1, 4 KiB writes' mean latency tracked.
fn latency_test(o: &PlanOptions) -> TestPlan {
    let lat_sizes: &[u32] = if o.quick {
        &QUICK_LATENCY_BLOCK_SIZES
    } else {
        &LATENCY_BLOCK_SIZES
    };
    let mut round = Vec::new();
    for &m in &LATENCY_MIXES {
        for bs in kept(o, lat_sizes) {
            round.push(point(o, Access::Random, m, bs, 1));
        }
    }
    let tracked_point = round
        .iter()
        .position(|p| p.read_pct == 0 && p.bs == 4096)
        .expect("the latency plan has 4 KiB writes");
    let name = "latency".into();
    round_plan(
        o,
        TestKind::Latency,
        name,
        round,
        tracked_point,
        Tracked::MeanLatency,
    )
}

/// WSAT: 4 KiB random writes of a multiple of the capacity.
fn wsat_test(o: &PlanOptions) -> TestPlan {
    let multiple = if o.quick { 3.0 } else { 4.0 };
    TestPlan {
        kind: TestKind::WriteSaturation,
        name: "wsat".into(),
        purge: true,
        precondition_bytes: 0,
        round: Vec::new(),
        tracked_point: 0,
        tracked: Tracked::Iops,
        wsat: Some(WsatPlan {
            point: point(o, Access::Random, 0, 4096, o.iodepth),
            bytes: (o.capacity as f64 * multiple) as u64,
            capacity_multiple: multiple,
            max_bytes: (o.capacity as f64 * multiple * WSAT_EXTENSION) as u64,
            max_seconds: o.wsat_max_seconds,
        }),
    }
}

/// The tests `--tests` may name.
pub const TEST_NAMES: [&str; 4] = ["iops", "throughput", "latency", "wsat"];

/// A name `--tests` does not know.
#[derive(Debug, thiserror::Error)]
#[error("'{name}' is not a test (allowed: {})", TEST_NAMES.join(", "))]
pub struct UnknownTest {
    pub name: String,
}

/// Keep only the tests `names` lists (`throughput` is both block sizes).
pub fn select(p: &mut Plan, names: &[String]) -> Result<(), UnknownTest> {
    if let Some(bad) = names.iter().find(|n| !TEST_NAMES.contains(&n.as_str())) {
        return Err(UnknownTest { name: bad.clone() });
    }
    p.tests.retain(|t| {
        let family = match t.kind {
            TestKind::Iops => "iops",
            TestKind::Throughput => "throughput",
            TestKind::Latency => "latency",
            TestKind::WriteSaturation => "wsat",
        };
        names.iter().any(|n| n == family)
    });
    Ok(())
}

/// The time the round-based tests take, seconds: (all reach steady state
/// in the fewest rounds, all run the most rounds). Preconditioning and
/// WSAT are not in it (their time is the device's write speed's), but are
/// stated beside it by [`crate::text::plan`].
pub fn round_seconds(p: &Plan) -> (f64, f64) {
    let per_round: f64 = p
        .tests
        .iter()
        .map(|t| t.round.iter().map(|pt| pt.seconds).sum::<f64>())
        .sum();
    (
        per_round * p.rule.window as f64,
        per_round * p.rule.max_rounds as f64,
    )
}

/// `4 KiB random write IOPS`.
pub fn tracked_label(t: &TestPlan) -> String {
    let what = match t.tracked {
        Tracked::Iops => "IOPS",
        Tracked::Bandwidth => "bandwidth",
        Tracked::MeanLatency => "mean latency",
    };
    match t.round.get(t.tracked_point) {
        Some(p) => format!("{} {what}", p.label()),
        None => what.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(quick: bool) -> PlanOptions {
        PlanOptions {
            quick,
            capacity: 256 << 20,
            point_seconds: 60.0,
            iodepth: 32,
            wsat_max_seconds: 86_400.0,
            min_bs: 512,
        }
    }

    #[test]
    fn the_full_plan_has_pts_matrix_and_tracks_4k_writes() {
        let p = plan(&opts(false));
        let iops = &p.tests[0];
        assert_eq!(iops.round.len(), 56);
        let t = &iops.round[iops.tracked_point];
        assert_eq!((t.read_pct, t.bs, t.access), (0, 4096, Access::Random));
        // PTS order: mixes outside, block sizes largest first inside.
        assert_eq!((iops.round[0].read_pct, iops.round[0].bs), (100, 1 << 20));
        assert_eq!(iops.round[55].bs, 512);
        let names: Vec<&str> = p.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "iops",
                "throughput_128k",
                "throughput_1024k",
                "latency",
                "wsat"
            ]
        );
        assert_eq!(p.tests[3].round.len(), 9);
        assert!(p.tests[3].round.iter().all(|pt| pt.iodepth == 1));
        let w = p.tests[4].wsat.as_ref().unwrap();
        assert_eq!(w.bytes, 4 * (256 << 20));
        assert_eq!(w.max_bytes, 16 * (256 << 20));
        assert_eq!(p.tests[4].precondition_bytes, 0);
        assert_eq!(p.tests[0].precondition_bytes, 2 * (256 << 20));
    }

    #[test]
    fn quick_takes_a_subset_that_still_tracks_4k_writes() {
        let p = plan(&opts(true));
        assert_eq!(p.tests[0].round.len(), 6);
        assert_eq!(p.tests[3].round.len(), 3);
        let (lo, hi) = round_seconds(&p);
        // (6 + 2 + 2 + 3) points × 60 s, 5 or 25 rounds.
        assert_eq!(lo, 13.0 * 60.0 * 5.0);
        assert_eq!(hi, 13.0 * 60.0 * 25.0);
    }

    #[test]
    fn tests_can_be_chosen_by_family() {
        let mut p = plan(&opts(true));
        select(&mut p, &["wsat".into(), "throughput".into()]).unwrap();
        let names: Vec<&str> = p.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["throughput_128k", "throughput_1024k", "wsat"]);
        let e = select(&mut p, &["iops".into(), "wast".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'wast'") && e.contains("allowed: iops"), "{e}");
    }

    #[test]
    fn a_4k_sector_device_leaves_out_512_byte_points() {
        let p = plan(&PlanOptions {
            min_bs: 4096,
            ..opts(false)
        });
        assert_eq!(p.tests[0].round.len(), 49);
        assert!(p
            .tests
            .iter()
            .flat_map(|t| &t.round)
            .all(|pt| pt.bs >= 4096));
    }
}
