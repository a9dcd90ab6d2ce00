//! The calibrated presets against their sources: each published figure
//! (a datasheet's or a review's), the condition it was measured at, and
//! the same figure measured on the preset in virtual time
//! ([`crate::virtual_time`]). `crates/run/tests/calibration.rs` holds every
//! figure within [`TOLERANCE`]; `bench/calibration.sh` prints the README's
//! error table (`cargo run --release -p ssdready-run --example calibration`).
//! It lives beside the virtual-time loop (not in the emulator crate, whose
//! presets it checks) because each figure is measured by running jobs —
//! fills, random reads, sequential writes — through that loop; a path on
//! the model alone would be a second workload generator.
//!
//! Conditions, as the sources state them:
//! * reads (QD 1 latency, random IOPS, sequential) on a device filled with
//!   sequential writes (the sources read written data);
//! * client drives' write figures on a fresh device, within the SLC cache
//!   (Samsung's footnotes: "measured with TurboWrite activated");
//! * enterprise write figures sustained: random 4 KiB writes after a
//!   sequential fill and two capacities of random writes (SNIA PTS-like
//!   preconditioning, as enterprise datasheets state);
//! * the SLC cache: data written sequentially to a fresh device before the
//!   write rate falls (as reviews find it), scaled to the source's size;
//!   the after-cache rate: sequential writes once it is full.

use crate::virtual_time::{simulate, SimError};
use ssdready_core::spec::{BlockSizes, EngineKind, JobSpec, RwMode};
use ssdready_emu::config::Params;
use ssdready_emu::device::Device;

/// The largest error a calibrated figure may have (the bar; MQSim
/// reports 6–18 % against real SSDs).
pub const TOLERANCE: f64 = 0.15;

const KIB: u32 = 1024;
const GIB: u64 = 1 << 30;

/// What is measured, and how.
#[derive(Clone, Copy, Debug)]
pub enum Measure {
    /// Mean completion latency of 4 KiB random reads at QD 1, µs.
    ReadLatencyQd1,
    /// 4 KiB random read IOPS with `jobs` × `depth` outstanding.
    RandReadIops { jobs: u32, depth: u32 },
    /// 4 KiB random write IOPS on a fresh device, `jobs` × `depth`.
    FreshRandWriteIops { jobs: u32, depth: u32 },
    /// 4 KiB random write IOPS in steady state, QD `depth`.
    SteadyRandWriteIops { depth: u32 },
    /// Sequential reads of `kib` KiB at QD `depth`, MB/s.
    SeqReadMbps { kib: u32, depth: u32 },
    /// Sequential writes of `kib` KiB at QD `depth` on a fresh device
    /// (within an SLC cache), MB/s.
    SeqWriteMbps { kib: u32, depth: u32 },
    /// Sequential 128 KiB writes once the SLC cache is full, MB/s.
    AfterCacheWriteMbps,
    /// Data written at the cache's rate, GB, on a drive of `drive_gb` GB.
    SlcCacheGb { drive_gb: f64 },
}

/// One published figure of one preset's class.
#[derive(Clone, Copy, Debug)]
pub struct Figure {
    pub preset: &'static str,
    /// What the figure is, with the source's condition.
    pub what: &'static str,
    pub measure: Measure,
    pub unit: &'static str,
    /// The source's value.
    pub source_value: f64,
    /// Who published it.
    pub source: &'static str,
}

const fn fig(
    preset: &'static str,
    what: &'static str,
    measure: Measure,
    unit: &'static str,
    source_value: f64,
    source: &'static str,
) -> Figure {
    Figure {
        preset,
        what,
        measure,
        unit,
        source_value,
        source,
    }
}

use Measure::*;

const SAMSUNG_980: &str = "Samsung 980 PRO 1 TB datasheet (Notebookcheck, 2020)";
const PM9A3: &str = "Samsung PM9A3 U.2 (heise; ComputerBase, 2020)";
const QVO: &str = "Samsung 870 QVO 1 TB (CDRLabs review, 2020)";
const P4800X: &str = "Intel P4800X product brief (AnandTech, 2017)";

/// Every calibrated figure: the preset, the source's value and name.
#[rustfmt::skip]
pub const FIGURES: &[Figure] = &[
    fig("nvme-tlc", "4 KiB random read, QD 1 (22K IOPS)", ReadLatencyQd1, "µs", 45.5, SAMSUNG_980),
    fig("nvme-tlc", "4 KiB random read, QD 32 × 16", RandReadIops { jobs: 16, depth: 32 }, "IOPS", 1_000_000.0, SAMSUNG_980),
    fig("nvme-tlc", "4 KiB random write, QD 32 × 16, in cache", FreshRandWriteIops { jobs: 16, depth: 32 }, "IOPS", 1_000_000.0, SAMSUNG_980),
    fig("nvme-tlc", "128 KiB sequential read, QD 32", SeqReadMbps { kib: 128, depth: 32 }, "MB/s", 7000.0, SAMSUNG_980),
    fig("nvme-tlc", "128 KiB sequential write, QD 32, in cache", SeqWriteMbps { kib: 128, depth: 32 }, "MB/s", 5000.0, SAMSUNG_980),
    fig("nvme-tlc", "sequential write after the SLC cache", AfterCacheWriteMbps, "MB/s", 2000.0, SAMSUNG_980),
    fig("nvme-tlc", "SLC cache, 1 TB drive", SlcCacheGb { drive_gb: 1000.0 }, "GB", 42.0, SAMSUNG_980),
    fig("dc-tlc", "4 KiB random read, QD 32 × 8", RandReadIops { jobs: 8, depth: 32 }, "IOPS", 900_000.0, PM9A3),
    fig("dc-tlc", "4 KiB random write, sustained, QD 32", SteadyRandWriteIops { depth: 32 }, "IOPS", 200_000.0, PM9A3),
    fig("dc-tlc", "128 KiB sequential read, QD 32", SeqReadMbps { kib: 128, depth: 32 }, "MB/s", 6500.0, PM9A3),
    fig("dc-tlc", "128 KiB sequential write, QD 32", SeqWriteMbps { kib: 128, depth: 32 }, "MB/s", 3500.0, PM9A3),
    fig("qlc-sata", "4 KiB random read, QD 32", RandReadIops { jobs: 1, depth: 32 }, "IOPS", 98_000.0, QVO),
    fig("qlc-sata", "4 KiB random write, QD 32, in cache", FreshRandWriteIops { jobs: 1, depth: 32 }, "IOPS", 88_000.0, QVO),
    fig("qlc-sata", "128 KiB sequential read, QD 32", SeqReadMbps { kib: 128, depth: 32 }, "MB/s", 560.0, QVO),
    fig("qlc-sata", "128 KiB sequential write, QD 32, in cache", SeqWriteMbps { kib: 128, depth: 32 }, "MB/s", 530.0, QVO),
    fig("qlc-sata", "sequential write after the SLC cache", AfterCacheWriteMbps, "MB/s", 80.0, "PC Gamer, 870 QVO 1 TB review, 2020"),
    fig("qlc-sata", "SLC cache, 1 TB drive (6 + 36 GB)", SlcCacheGb { drive_gb: 1000.0 }, "GB", 42.0, "The SSD Review, 860 QVO review, 2018"),
    fig("optane", "4 KiB random read, QD 1 (mean)", ReadLatencyQd1, "µs", 8.9, "AnandTech, P4800X review, 2017 (measured)"),
    fig("optane", "4 KiB random read, QD 16", RandReadIops { jobs: 1, depth: 16 }, "IOPS", 550_000.0, P4800X),
    fig("optane", "4 KiB random write, QD 16", FreshRandWriteIops { jobs: 1, depth: 16 }, "IOPS", 500_000.0, P4800X),
    fig("optane", "64 KiB sequential read", SeqReadMbps { kib: 64, depth: 16 }, "MB/s", 2400.0, P4800X),
    fig("optane", "64 KiB sequential write", SeqWriteMbps { kib: 64, depth: 16 }, "MB/s", 2000.0, P4800X),
];

/// The signed error of `model` against `source`, percent.
pub fn error_pct(model: f64, source: f64) -> f64 {
    (model / source - 1.0) * 100.0
}

/// Why a figure could not be measured.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    #[error(transparent)]
    Params(#[from] ssdready_emu::config::ParamError),
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error("the run did no I/O")]
    NoIo,
    #[error("the write rate never fell over half the capacity: no SLC cache")]
    NoSlcCache,
}

/// What a run measured: I/Os, bytes, simulated seconds, mean completion
/// latency (ns).
struct Run {
    ios: u64,
    bytes: u64,
    secs: f64,
    clat_mean_ns: f64,
}

impl Run {
    fn iops(&self) -> f64 {
        self.ios as f64 / self.secs
    }
    fn mbps(&self) -> f64 {
        self.bytes as f64 / self.secs / 1e6
    }
}

fn job(rw: RwMode, kib: u32, depth: u32, cap: u64) -> JobSpec {
    JobSpec {
        name: "calibration".into(),
        rw,
        bs: BlockSizes::Fixed(kib * KIB),
        iodepth: depth,
        size: Some(cap),
        norandommap: true,
        ioengine: EngineKind::Null,
        ..JobSpec::default()
    }
}

/// A job of `ms` simulated milliseconds.
fn timed(spec: JobSpec, ms: u64) -> JobSpec {
    JobSpec {
        time_based: true,
        runtime_ns: Some(ms * 1_000_000),
        ..spec
    }
}

/// A job writing or reading `bytes` from `offset`.
fn sized(spec: JobSpec, offset: u64, bytes: u64) -> JobSpec {
    JobSpec {
        offset,
        size: Some(bytes),
        io_size: Some(bytes),
        ..spec
    }
}

fn run(dev: &mut Device, spec: JobSpec) -> Result<Run, CalibrationError> {
    let o = simulate(dev, &[spec], &|| false)?;
    let (mut ios, mut bytes, mut ns, mut lat_sum) = (0u64, 0u64, 0u64, 0.0);
    for w in o.workers.iter().flatten() {
        ns = ns.max(w.measured_ns);
        for d in w.dirs.iter().flatten() {
            ios += d.ios;
            bytes += d.bytes;
            lat_sum += d.clat.mean() * d.ios as f64;
        }
    }
    if ios == 0 || ns == 0 {
        return Err(CalibrationError::NoIo);
    }
    Ok(Run {
        ios,
        bytes,
        secs: ns as f64 / 1e9,
        clat_mean_ns: lat_sum / ios as f64,
    })
}

/// Fill `dev` with 1 MiB sequential writes.
fn fill(dev: &mut Device) -> Result<(), CalibrationError> {
    let cap = dev.capacity();
    run(dev, sized(job(RwMode::Write, 1024, 8, cap), 0, cap)).map(|_| ())
}

/// `spec` after 2 s of idle time: the fill's write buffer drained and its
/// SLC cache folded, as a review reads data written earlier (otherwise
/// the reads share the dies with the fill's last programs).
fn after_idle(spec: JobSpec) -> JobSpec {
    JobSpec {
        startdelay_ns: 2_000_000_000,
        ..spec
    }
}

/// The preset at the size a figure is measured on: 1 GiB for reads and
/// sustained writes, 8 GiB for writes into an SLC cache (4.2 % of 1 GiB
/// is 43 MiB, which a 16 MiB write buffer would distort).
fn params(preset: &str, m: Measure) -> Result<Params, CalibrationError> {
    let size = match m {
        FreshRandWriteIops { .. }
        | SeqWriteMbps { .. }
        | AfterCacheWriteMbps
        | SlcCacheGb { .. } => 8 * GIB,
        _ => GIB,
    };
    Ok(Params::parse(&format!("{preset},size={size}"))?)
}

/// Measure figure `f` on its preset, in virtual time.
pub fn measure(f: &Figure) -> Result<f64, CalibrationError> {
    let p = params(f.preset, f.measure)?;
    let mut dev = Device::new(&p);
    let cap = dev.capacity();
    let rand = |rw, jobs, depth| JobSpec {
        numjobs: jobs,
        ..job(rw, 4, depth, cap)
    };
    Ok(match f.measure {
        ReadLatencyQd1 => {
            fill(&mut dev)?;
            run(
                &mut dev,
                after_idle(timed(rand(RwMode::RandRead, 1, 1), 50)),
            )?
            .clat_mean_ns
                / 1e3
        }
        RandReadIops { jobs, depth } => {
            fill(&mut dev)?;
            run(
                &mut dev,
                after_idle(timed(rand(RwMode::RandRead, jobs, depth), 50)),
            )?
            .iops()
        }
        FreshRandWriteIops { jobs, depth } => {
            run(&mut dev, timed(rand(RwMode::RandWrite, jobs, depth), 20))?.iops()
        }
        SteadyRandWriteIops { depth } => {
            fill(&mut dev)?;
            let pre = sized(rand(RwMode::RandWrite, 1, depth), 0, cap);
            run(
                &mut dev,
                JobSpec {
                    io_size: Some(2 * cap),
                    ..pre
                },
            )?;
            run(&mut dev, timed(rand(RwMode::RandWrite, 1, depth), 500))?.iops()
        }
        SeqReadMbps { kib, depth } => {
            fill(&mut dev)?;
            run(
                &mut dev,
                after_idle(timed(job(RwMode::Read, kib, depth, cap), 50)),
            )?
            .mbps()
        }
        SeqWriteMbps { kib, depth } => {
            // Past the write buffer's burst at link speed first (it lasts
            // until the buffer is full, 76 MiB for `nvme-tlc`): a small
            // share of a real drive's cache (GBs), a large one of the
            // emulated drive's; then half the cache.
            let w = job(RwMode::Write, kib, depth, cap);
            let cache = (p.slc_cache * cap as f64) as u64;
            let burst = p
                .write_buffer
                .max(cache / 4)
                .next_multiple_of(u64::from(kib * KIB));
            if burst > 0 {
                run(&mut dev, sized(w.clone(), 0, burst))?;
            }
            let bytes = if cache > 0 { cache / 2 } else { cap / 16 };
            run(&mut dev, sized(w, burst, bytes))?.mbps()
        }
        AfterCacheWriteMbps => {
            let cache = (p.slc_cache * cap as f64) as u64 + p.write_buffer;
            let past = cache + cache / 4;
            let w = job(RwMode::Write, 128, 32, cap);
            run(&mut dev, sized(w.clone(), 0, past))?;
            run(&mut dev, sized(w, past, cap / 16))?.mbps()
        }
        SlcCacheGb { drive_gb } => slc_cache_share(&mut dev)? * drive_gb,
    })
}

/// The share of the capacity written sequentially (128 KiB, QD 32) to a
/// fresh device before the write rate first falls under 75 % of its
/// first level, in steps of 1/512 of the capacity (0.2 %).
fn slc_cache_share(dev: &mut Device) -> Result<f64, CalibrationError> {
    let cap = dev.capacity();
    let step = cap / 512;
    let w = job(RwMode::Write, 128, 32, cap);
    let mut rates = Vec::new();
    let mut at = 0;
    while at + step <= cap / 2 {
        let r = run(dev, sized(w.clone(), at, step))?.mbps();
        // The first level: the median of the first five steps (the first
        // may be a write buffer's burst at link speed).
        if rates.len() >= 5 {
            let mut first = rates[..5].to_vec();
            first.sort_by(f64::total_cmp);
            if r < 0.75 * first[2] {
                return Ok(at as f64 / cap as f64);
            }
        }
        rates.push(r);
        at += step;
    }
    Err(CalibrationError::NoSlcCache)
}
