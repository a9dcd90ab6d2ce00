//! `characterize.json`, schema `ssdready.characterize`
//! (`docs/characterize-schema.md`): what was run, every round's figures
//! (enough to draw PTS's plots: steady-state convergence, the IOPS matrix,
//! the WSAT curve, the latency table), the steady-state verdicts, and the
//! write cliff.

use crate::plan::{Access, TestKind, Tracked};
use serde::{Deserialize, Serialize};
use ssdready_core::steady::{PtsRule, PtsVerdict};

pub const SCHEMA: &str = "ssdready.characterize";
pub const SCHEMA_VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CharacterizeDoc {
    pub schema: String,
    pub schema_version: u32,
    pub tool: String,
    pub started_unix_ms: u64,
    /// Wall-clock seconds the characterization took.
    pub wall_s: f64,
    /// Ctrl-C (or SIGTERM/SIGHUP) stopped it: the tests cover what ran.
    pub interrupted: bool,
    /// The first failure that stopped a test, if any.
    pub failure: Option<String>,
    pub target: TargetDoc,
    pub settings: Settings,
    /// The IOPS test's steady state (PTS's tracking variable, 4 KiB random
    /// writes), with every round-based test's verdict beside it.
    pub steady_state: SteadyStateSummary,
    pub iops: Option<RoundTest>,
    /// The IOPS test's matrix over its steady-state window.
    pub iops_matrix: Option<IopsMatrix>,
    pub throughput: Vec<RoundTest>,
    pub latency: Option<RoundTest>,
    pub wsat: Option<WsatResult>,
    /// Null when no cliff was found; `write_cliff_note` then says why.
    pub write_cliff: Option<WriteCliff>,
    pub write_cliff_note: Option<String>,
    pub warnings: Vec<String>,
}

/// The target as characterized.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetDoc {
    /// As given: `emu:x25e,size=256m`, `/dev/nvme0n1`, a file.
    pub spec: String,
    /// `emulator`, `block` or `file`.
    pub kind: String,
    pub capacity_bytes: u64,
    /// `virtual` (the emulator's simulated time) or `real`.
    pub clock: String,
    pub logical_block_size: u64,
    /// The emulated device's parameters.
    pub emulator_params: Vec<(String, String)>,
    /// What the analytic model expects of the emulated device.
    pub model: Option<DeviceModel>,
}

/// Desnoyers' write-amplification model at an emulated device's spare
/// factor (SYSTOR 2012, eq. 12; shared/notes/ssd-models.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceModel {
    /// Physical pages less the GC reserve, over logical pages.
    pub alpha_effective: f64,
    pub pages_per_block: u32,
    /// `greedy` or `fifo`: the device's GC policy, the formula used.
    pub gc: String,
    /// The steady-state WA of uniform random writes the model predicts.
    pub wa_predicted: f64,
    /// What a page costs a die, for the die-time bound of the steady rate:
    /// dies, and NAND program, read and erase times, ns.
    pub dies: u32,
    pub program_ns: u64,
    pub read_ns: u64,
    pub erase_ns: u64,
    /// Pages a die programs at once (`planes × flash_page_bytes /
    /// page_bytes`); GC reads that many at once too.
    #[serde(default = "one_u32")]
    pub program_unit_pages: u32,
    /// FTL blocks per NAND erase (`flash_block_bytes` over the FTL block).
    #[serde(default = "one_u64")]
    pub erase_every: u64,
}

fn one_u32() -> u32 {
    1
}

fn one_u64() -> u64 {
    1
}

impl DeviceModel {
    /// The most page-sized random writes per second the dies can take at
    /// write amplification `wa`: each host page costs `wa` page programs
    /// and `wa − 1` page reads (the pages GC moves), both a program unit
    /// at a time, and `wa / (pages_per_block × erase_every)` erases of die
    /// time.
    pub fn die_bound_iops(&self, wa: f64) -> f64 {
        let unit = self.program_unit_pages.max(1) as f64;
        let block = self.pages_per_block.max(1) as f64 * self.erase_every.max(1) as f64;
        let per_page = (wa * self.program_ns as f64 + (wa - 1.0).max(0.0) * self.read_ns as f64)
            / unit
            + wa / block * self.erase_ns as f64;
        if per_page > 0.0 {
            self.dies as f64 * 1e9 / per_page
        } else {
            f64::INFINITY
        }
    }
}

/// How the tests were run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Settings {
    pub quick: bool,
    /// Seconds per point (simulated seconds in virtual time).
    pub point_seconds: f64,
    /// Queue depth of the IOPS, throughput and WSAT points (one thread;
    /// the latency test runs at queue depth 1).
    pub iodepth: u32,
    pub rule: PtsRule,
    /// `--purge` (real targets; an emulated one is always made fresh).
    pub purge_requested: bool,
    /// The I/O engine of real runs (`emulator` in virtual time).
    pub engine: String,
    /// Random offsets: `uniform with repetition (fio norandommap)`.
    pub random_offsets: String,
    pub wsat_max_seconds: f64,
}

/// One test's steady state, as the summary lists it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TestSteadyState {
    pub test: String,
    /// What was tracked: `4 KiB random write IOPS`.
    pub tracked: String,
    pub reached: bool,
    pub rounds: usize,
    /// The tracked figure's mean over the (last) window.
    pub value: Option<f64>,
}

/// `steady_state`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SteadyStateSummary {
    /// The IOPS test reached steady state (false when it did not, or did
    /// not run).
    pub reached: bool,
    /// Rounds the IOPS test ran.
    pub rounds: usize,
    /// 4 KiB random-write IOPS, mean over the window (the last window
    /// when steady state was not reached).
    pub randwrite_4k_iops: Option<f64>,
    /// The window, 1-based rounds.
    pub window: Option<[usize; 2]>,
    pub range_pct: Option<f64>,
    pub excursion_pct: Option<f64>,
    /// Every round-based test.
    pub tests: Vec<TestSteadyState>,
}

/// A purge, done or not.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PurgeRecord {
    pub done: bool,
    /// How, or why not.
    pub how: String,
}

/// The workload-independent preconditioning.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PreconditionRecord {
    pub bytes: u64,
    pub bs: u32,
    pub seconds: f64,
    pub bw_bytes: f64,
}

/// One point's figures.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointFigures {
    pub iops: f64,
    pub bw_bytes: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    /// Over every I/O of the point, reads and writes together.
    pub lat_mean_ns: f64,
    pub lat_p99_99_ns: u64,
    pub lat_max_ns: u64,
    /// Emulator: NAND page programs per host page programmed in the point.
    pub wa: Option<f64>,
    /// Seconds the point ran (simulated in virtual time).
    pub seconds: f64,
}

/// One point of one round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PointRecord {
    pub label: String,
    pub access: Option<Access>,
    pub read_pct: u32,
    pub bs: u32,
    pub iodepth: u32,
    /// Null when the point could not run here (`skipped` says why).
    pub figures: Option<PointFigures>,
    pub skipped: Option<String>,
}

/// One round.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RoundRecord {
    pub round: usize,
    pub points: Vec<PointRecord>,
    /// The tracked figure this round.
    pub tracked: f64,
}

/// A point over the steady-state window: means of the rounds' figures;
/// latency percentiles and maximum from the rounds' histograms merged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WindowPoint {
    pub label: String,
    pub access: Option<Access>,
    pub read_pct: u32,
    pub bs: u32,
    pub iodepth: u32,
    pub iops: f64,
    pub bw_bytes: f64,
    pub read_iops: f64,
    pub write_iops: f64,
    pub lat_mean_ns: f64,
    pub lat_p99_99_ns: u64,
    pub lat_max_ns: u64,
    /// Rounds averaged (those of the window where the point ran).
    pub rounds: usize,
}

/// A round-based test.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RoundTest {
    pub name: String,
    pub kind: Option<TestKind>,
    pub tracked: Option<Tracked>,
    /// `4 KiB random write IOPS`.
    pub tracked_label: String,
    pub purge: PurgeRecord,
    pub precondition: Option<PreconditionRecord>,
    pub rounds: Vec<RoundRecord>,
    /// The tracked figure of each round, oldest first.
    pub tracked_values: Vec<f64>,
    pub steady_state_reached: bool,
    /// The verdict of the last window judged (steady, or the last of 25).
    pub verdict: Option<PtsVerdict>,
    /// Each point over the window.
    pub window: Vec<WindowPoint>,
    /// Why the test stopped early, if it did.
    pub failure: Option<String>,
}

/// The IOPS matrix: rows are block sizes, columns read/write mixes.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct IopsMatrix {
    /// Bytes, largest first.
    pub block_sizes: Vec<u32>,
    /// Read percentages, as `mixes` labels say: `65/35` is 65 % reads.
    pub read_pcts: Vec<u32>,
    pub mixes: Vec<String>,
    /// `iops[row][column]`, null where the point did not run.
    pub iops: Vec<Vec<Option<f64>>>,
}

/// One sample of the write-saturation test.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WsatSample {
    /// End of the sample, seconds since the test's first write.
    pub t_s: f64,
    pub dt_s: f64,
    pub ios: u64,
    pub iops: f64,
    /// Host bytes written from the start to the end of the sample.
    pub bytes_written: u64,
    /// Emulator: host and NAND pages programmed in the sample.
    pub host_pages: Option<u64>,
    pub nand_pages: Option<u64>,
}

impl WsatSample {
    /// NAND pages per host page in this sample (emulator).
    pub fn wa(&self) -> Option<f64> {
        match (self.host_pages, self.nand_pages) {
            (Some(h), Some(n)) if h > 0 => Some(n as f64 / h as f64),
            _ => None,
        }
    }
}

/// The write-saturation test.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct WsatResult {
    pub purge: PurgeRecord,
    pub label: String,
    pub iodepth: u32,
    pub samples: Vec<WsatSample>,
    pub bytes_written: u64,
    pub seconds: f64,
    /// `data` (the planned multiple of the capacity was written), `time`
    /// (the time limit), `interrupted` or `failed`.
    pub stopped_by: String,
    pub capacity_multiple_written: f64,
    pub failure: Option<String>,
}

/// The write cliff: where random-write IOPS leave their fresh level, and
/// where they settle.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WriteCliff {
    /// The fresh level: median IOPS of the samples before the cliff.
    pub fresh_iops: f64,
    /// The first sample below (1 − `band`) × the fresh level with the two
    /// after it (their median) below too: its start, and the data written
    /// before it.
    pub cliff_at_s: f64,
    pub cliff_at_bytes: u64,
    pub cliff_at_capacity: f64,
    /// The fall counted as leaving the fresh level (0.2: 20 %).
    pub band: f64,
    /// The steady level: mean IOPS of the samples covering the last 2
    /// capacities written (at least 5 samples, at most half).
    pub steady_iops: f64,
    pub steady_from_s: f64,
    pub steady_from_bytes: u64,
    /// Whether IOPS had settled by the end: PTS's rule on the steady
    /// window cut into 5 parts.
    pub settled: bool,
    pub settled_verdict: Option<PtsVerdict>,
    /// fresh / steady.
    pub ratio: f64,
    /// Write amplification over the steady window from the emulator's
    /// counters (NAND / host page programs); null on a real device.
    pub wa_seen: Option<f64>,
    /// fresh / steady: the WA a device bound by its NAND program rate
    /// would have (steady ≈ fresh / A; the notes' cliff rule).
    pub wa_inferred: f64,
    /// Emulator: the model's WA, and how far the measured figures are
    /// from it.
    pub wa_predicted: Option<f64>,
    /// (wa_seen − wa_predicted) / wa_predicted, %.
    pub wa_error_pct: Option<f64>,
    /// (ratio − wa_seen) / wa_seen, %: how well the cliff's depth follows
    /// the WA.
    pub ratio_vs_wa_pct: Option<f64>,
    /// Emulator: the dies' bound on the steady rate at the WA seen
    /// ([`DeviceModel::die_bound_iops`]), and the steady level against it,
    /// % (0: the dies are the limit; far below: something else is, e.g.
    /// the queue depth while writes wait for garbage collection).
    pub steady_die_bound_iops: Option<f64>,
    pub steady_vs_die_bound_pct: Option<f64>,
}
