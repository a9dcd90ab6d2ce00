//! The job specification: one type, filled by the command line (and by fio job
//! files, through the same option table in [`crate::options`]), checked by one
//! validation path ([`JobSpec::validate`]).
//!
//! Values are stored resolved: sizes in bytes, times in nanoseconds, so that
//! the JSON result shows exactly what ran.

use serde::{Deserialize, Serialize};

pub use crate::spec_error::SpecError;
pub use crate::spec_types::{Amount, EngineKind, ExitWhat, FileService, RwSequencer, Zone};
// The option groups a job holds, each defined in its own module, named here.
pub use crate::spec_buffers::*;
pub use crate::spec_log::*;
pub use crate::spec_pattern::*;
pub use crate::spec_replay::*;
pub use crate::spec_types::*;
pub use crate::spec_zbd::*;

/// The fio `rw` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    RandRead,
    /// Random writes.
    RandWrite,
    /// Sequential mixed reads and writes (`rw`, `readwrite`).
    ReadWrite,
    /// Random mixed reads and writes.
    RandRw,
    /// Sequential trims.
    Trim,
    /// Random trims.
    RandTrim,
}

impl RwMode {
    /// fio's spelling.
    pub fn name(self) -> &'static str {
        match self {
            RwMode::Read => "read",
            RwMode::Write => "write",
            RwMode::RandRead => "randread",
            RwMode::RandWrite => "randwrite",
            RwMode::ReadWrite => "rw",
            RwMode::RandRw => "randrw",
            RwMode::Trim => "trim",
            RwMode::RandTrim => "randtrim",
        }
    }
    /// Whether offsets are random.
    #[inline]
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::RandRead | RwMode::RandWrite | RwMode::RandRw | RwMode::RandTrim
        )
    }
    /// Whether the job modifies the target (writes or trims).
    #[inline]
    pub fn modifies(self) -> bool {
        !matches!(self, RwMode::Read | RwMode::RandRead)
    }
    /// Whether the job issues trims.
    #[inline]
    pub fn trims(self) -> bool {
        matches!(self, RwMode::Trim | RwMode::RandTrim)
    }
    /// Whether reads and writes are mixed.
    #[inline]
    pub fn is_mixed(self) -> bool {
        matches!(self, RwMode::ReadWrite | RwMode::RandRw)
    }
}

/// Block sizes: one size, a range, or a weighted split.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockSizes {
    /// Every I/O has this size (`bs=4k`).
    Fixed(u32),
    /// Uniform in `[min, max]`, a multiple of `min` when it is a power of two
    /// (`bsrange=4k-64k`, fio's rule).
    Range {
        /// Smallest size.
        min: u32,
        /// Largest size.
        max: u32,
    },
    /// (size, weight in percent) pairs whose weights add up to 100
    /// (`bssplit=4k/70:64k/30`).
    Split(Vec<(u32, u32)>),
    /// Different sizes for reads, writes and trims (`bs=4k,64k`); never
    /// nested, never three equal parts (those collapse to one).
    PerDir(Box<[BlockSizes; 3]>),
}

impl BlockSizes {
    /// Smallest size any I/O can have.
    #[inline]
    pub fn min(&self) -> u32 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { min, .. } => *min,
            BlockSizes::Split(v) => v.iter().map(|p| p.0).min().unwrap_or(0),
            BlockSizes::PerDir(d) => d.iter().map(BlockSizes::min).min().unwrap_or(0),
        }
    }
    /// Largest size any I/O can have (sizes buffers).
    #[inline]
    pub fn max(&self) -> u32 {
        match self {
            BlockSizes::Fixed(b) => *b,
            BlockSizes::Range { max, .. } => *max,
            BlockSizes::Split(v) => v.iter().map(|p| p.0).max().unwrap_or(0),
            BlockSizes::PerDir(d) => d.iter().map(BlockSizes::max).max().unwrap_or(0),
        }
    }
    /// Every size that can occur (a range gives its bounds).
    pub fn all(&self) -> Vec<u32> {
        match self {
            BlockSizes::Fixed(b) => vec![*b],
            BlockSizes::Range { min, max } => vec![*min, *max],
            BlockSizes::Split(v) => v.iter().map(|p| p.0).collect(),
            BlockSizes::PerDir(d) => d.iter().flat_map(BlockSizes::all).collect(),
        }
    }
    /// The sizes of direction `d` (0 read, 1 write, 2 trim).
    #[inline]
    pub fn for_dir(&self, d: usize) -> &BlockSizes {
        match self {
            BlockSizes::PerDir(v) => &v[d.min(2)],
            other => other,
        }
    }
    /// Sizes per direction, collapsed to one value when all three agree.
    pub fn from_dirs(dirs: [BlockSizes; 3]) -> BlockSizes {
        if dirs[0] == dirs[1] && dirs[1] == dirs[2] {
            let [a, _, _] = dirs;
            a
        } else {
            BlockSizes::PerDir(Box::new(dirs))
        }
    }
    /// Whether every I/O of every direction has one size.
    pub fn is_fixed(&self) -> bool {
        self.min() == self.max()
    }
}

/// How random offsets are distributed (`random_distribution`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "param")]
pub enum Distribution {
    /// Uniform.
    Random,
    /// Zipf with exponent θ.
    Zipf(f64),
    /// Pareto with power h (0 < h < 1), fio's definition.
    Pareto(f64),
    /// fio's "normal" (its `gauss`): the mean of 12 uniform draws, widened
    /// by a uniform deviation of this many percent of the range.
    Normal(f64),
    /// `zoned:`: shares of the I/Os to consecutive shares of the region,
    /// per direction.
    Zoned(Box<[Vec<Zone>; 3]>),
    /// `zoned_abs:`: shares of the I/Os to consecutive byte ranges, per
    /// direction.
    ZonedAbs(Box<[Vec<Zone>; 3]>),
    /// `sequence:2,0,1` (newer fio): these block indices, in this order,
    /// again and again (with `random_sequence_stride`, each round moved on
    /// by the list's length).
    Sequence(Vec<u64>),
}

/// How `cpus_allowed` is shared among a job's clones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CpusPolicy {
    /// Every clone may run on every listed CPU.
    Shared,
    /// Clone i is pinned to the i-th listed CPU (round robin).
    Split,
}

/// Temporal merge: concurrent requests combined into one vectored command
/// of a target that takes them (the emulator). See `ssdready_emu::merge`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TemporalMerge {
    /// One command per request.
    Off,
    /// Synchronous: the first thread in gathers the others' requests for a
    /// window, issues them as one command and polls; the others sleep.
    Stm,
    /// Asynchronous: requests queue; one dispatcher drains them into commands.
    Atm,
}

impl TemporalMerge {
    /// The option value (`off`, `stm`, `atm`).
    pub fn name(self) -> &'static str {
        match self {
            TemporalMerge::Off => "off",
            TemporalMerge::Stm => "stm",
            TemporalMerge::Atm => "atm",
        }
    }
}

/// fio's own default percentile list (used in fio-format JSON unless
/// `percentile_list` is given).
pub const FIO_DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];
/// ssdready's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 9] = [1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99];
/// io_uring's IORING_MAX_ENTRIES: the deepest ring the kernel makes.
pub const MAX_URING_DEPTH: u32 = 32768;
/// The seed used when none is given: runs repeat unless told otherwise.
pub const DEFAULT_SEED: u64 = 0x5eed_5d5d_0000_0001;

/// One job, resolved. See `ssdready options` for each field's option.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    pub description: Option<String>,
    pub filename: Vec<String>,
    pub size: Option<u64>,
    /// `size=N%`: that share of each file or device (then `size` is None).
    pub size_percent: Option<u32>,
    pub offset: u64,
    /// `offset=N%`: that share of each file or device (then `offset` is 0).
    pub offset_percent: Option<u32>,
    /// Alignment of a percentage offset (0: the smallest block size).
    pub offset_align: u64,
    /// Clone N starts `N × offset_increment` further (bytes or percent).
    pub offset_increment: Amount,
    pub rw: RwMode,
    /// fio's `trimwrite` / `randtrimwrite`: `rw` is the trim pattern, and
    /// each trim is followed by a write of the same block.
    #[serde(default)]
    pub trim_then_write: bool,
    /// `rw=randread:N`: a new random offset every N I/Os (1: every I/O).
    pub rw_seq_nr: u32,
    /// `rw=read:N` / `rw=read:-N`: bytes added to each sequential offset
    /// (holes, or backwards I/O).
    pub rw_seq_add: i64,
    /// What happens between two random offsets of `rw=randread:N`.
    pub rw_sequencer: RwSequencer,
    pub rwmixread: u32,
    pub bs: BlockSizes,
    /// `blockalign`: random offsets are multiples of this, per direction
    /// (0: the direction's smallest block size).
    pub ba: [u32; 3],
    /// `bs_unaligned`: sizes of a range are not rounded to its minimum.
    pub bs_unaligned: bool,
    /// `bs_is_seq_rand`: the read and write block sizes are those of
    /// sequential and random I/Os, whatever their direction (fio's
    /// `get_next_buflen`).
    #[serde(default)]
    pub bs_is_seq_rand: bool,
    pub direct: bool,
    pub numjobs: u32,
    pub iodepth: u32,
    pub iodepth_batch_submit: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: u32,
    pub runtime_ns: Option<u64>,
    pub time_based: bool,
    pub ramp_time_ns: u64,
    pub number_ios: Option<u64>,
    pub io_size: Option<u64>,
    pub loops: u32,
    pub random_distribution: Distribution,
    /// Where a skewed distribution's hot spot is, 0..=1 of the region
    /// (`random_distribution=zipf:1.2:0.25`); None: fio's default.
    pub random_center: Option<f64>,
    pub randseed: u64,
    /// `random_sequence_stride`: each round of a `sequence` distribution
    /// starts the list's length further.
    #[serde(default)]
    pub random_sequence_stride: bool,
    /// `randseed` was given: it holds even with `randrepeat=0`, as in fio.
    #[serde(default)]
    pub randseed_given: bool,
    pub norandommap: bool,
    /// `random_generator=lfsr`: uniform random offsets visit each block
    /// exactly once per pass, with or without the random map (fio's LFSR).
    #[serde(default)]
    pub lfsr: bool,
    /// `random_generator=tausworthe`: fio's 32-bit generator, so uniform
    /// offsets without the random map take at most 2^32 distinct values
    /// (on a larger target they repeat, as fio's do).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rand32: bool,
    /// IOPS cap per worker for reads, writes and trims (`rate_iops=r,w,t`).
    pub rate_iops: [Option<u64>; 3],
    /// Bandwidth cap per worker for reads, writes and trims (`rate=r,w,t`).
    pub rate_bytes: [Option<u64>; 3],
    /// The least bandwidth per worker and direction (`rate_min`): a job
    /// slower over a `rate_cycle` (after its first 2 s) ends with EIO.
    #[serde(default)]
    pub rate_min_bytes: [Option<u64>; 3],
    /// The least IOPS per worker and direction (`rate_iops_min`), checked
    /// when `rate_min` is not set for that direction, as fio does.
    #[serde(default)]
    pub rate_iops_min: [Option<u64>; 3],
    /// The window over which the minimum rates are checked, ms
    /// (`rate_cycle`, fio's default 1000).
    #[serde(default = "default_rate_cycle_ms")]
    pub rate_cycle_ms: u64,
    pub cpus_allowed: Option<Vec<usize>>,
    pub cpus_allowed_policy: CpusPolicy,
    pub thinktime_ns: u64,
    pub thinktime_blocks: u32,
    /// Whether `thinktime_blocks` was given (fio: `thinktime_iotime` alone
    /// does not count blocks).
    #[serde(default)]
    pub thinktime_blocks_given: bool,
    /// `thinktime_spin`: spin this long of each think time, sleep the rest.
    #[serde(default)]
    pub thinktime_spin_ns: u64,
    /// `thinktime_blocks_type`.
    #[serde(default)]
    pub thinktime_blocks_type: crate::spec_io::ThinkBlocksType,
    /// `thinktime_iotime`: also think after this long of I/O.
    #[serde(default)]
    pub thinktime_iotime_ns: u64,
    pub ioengine: EngineKind,
    pub hipri: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    /// How completions are waited for (`completion`; None: the engine's
    /// default, interrupts, or the emulated device's own mode).
    pub completion: Option<crate::strategy::CompletionWait>,
    /// Interrupt coalescing asked (`coalesce_n`, `coalesce_us`).
    pub coalesce: Option<crate::strategy::Coalescing>,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    /// Temporal merge (emulator targets only).
    #[serde(default = "merge_off")]
    pub temporal_merge: TemporalMerge,
    #[serde(default = "merge_window_default")]
    pub merge_window_ns: u64,
    /// Most extents per merged command.
    #[serde(default = "merge_max_default")]
    pub merge_max: u32,
    /// Most bytes per merged command (0: no limit).
    #[serde(default)]
    pub merge_max_bytes: u64,
    pub percentile_list: Vec<f64>,
    /// Whether `percentile_list` was given (fio's JSON then uses it; otherwise fio's own default list).
    pub percentile_list_given: bool,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub kb_base: u64,
    /// Wait for every earlier job to finish before starting (fio `stonewall`).
    pub stonewall: bool,
    /// Start a new reporting group (implied by stonewall).
    pub new_group: bool,
    /// Report the job's group as one entry (fio `group_reporting`).
    pub group_reporting: bool,
    /// When this job finishes, stop every other job (fio `exitall`).
    pub exitall: bool,
    /// Which jobs `exitall` stops (fio `exit_what`).
    #[serde(default)]
    pub exit_what: ExitWhat,
    /// Start only when every clone of this earlier job has ended (fio
    /// `wait_for`).
    #[serde(default)]
    pub wait_for: Option<String>,
    /// Weight in fio's token-based flow control between the jobs of one
    /// `flow_id` (fio `flow`; 0: off).
    #[serde(default)]
    pub flow: u32,
    /// The flow the job's weight counts in (fio `flow_id`).
    #[serde(default)]
    pub flow_id: u32,
    /// How long a job that is ahead of its share sleeps before it looks
    /// again, µs (fio `flow_sleep`; 0: it tries again at once).
    #[serde(default)]
    pub flow_sleep_us: u64,
    pub startdelay_ns: u64,
    /// Remove the job's files when it is done.
    pub unlink: bool,
    /// Drop the page cache of the targets before the job (fio default).
    pub invalidate: bool,
    /// Fixed seeds (fio `randrepeat=1`, the default); 0 seeds from the clock.
    pub randrepeat: bool,
    /// Directory prefixed to relative filenames; several (`a:b`) are
    /// dealt to the clones of a job with generated file names.
    pub directory: Option<String>,
    /// Files per clone when fio makes the names (`nrfiles`).
    pub nrfiles: u32,
    /// Each file's size, or a range sizes are drawn from (`filesize`).
    pub filesize: Option<(u64, u64)>,
    /// Files kept open at once (0: all).
    pub openfiles: u32,
    /// How the file of the next I/O is chosen.
    pub file_service: FileService,
    /// I/Os to one file before choosing again (`file_service_type=random:8`).
    pub file_service_nr: u32,
    /// Names of generated files (`$jobname.$jobnum.$filenum` by default).
    pub filename_format: Option<String>,
    /// Every file below this directory is a target (`opendir`).
    pub opendir: Option<String>,
    /// Whether the job named an engine (`ioengine=`): fio then makes
    /// files when no filename is given, rather than ssdready's emulator.
    pub ioengine_given: bool,
    pub write_bw_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_iops_log: Option<String>,
    pub log_avg_msec: u64,
    /// `log_offset`: each log line carries the I/O's offset (fio's sixth
    /// column).
    #[serde(default)]
    pub log_offset: bool,
    /// `per_job_logs` (default 1): one log file per worker (`NAME_bw.N.log`);
    /// 0: every worker's lines in one `NAME_bw.log`, as fio.
    #[serde(default = "yes")]
    pub per_job_logs: bool,
    /// The other log and reporting options (`LogSpec`).
    #[serde(default)]
    pub logs: crate::spec_log::LogSpec,
    /// `percentage_random`: per direction, the percentage of a random
    /// job's offsets drawn at random (fio's `perc_rand`; the rest follow
    /// the last I/O).
    #[serde(default = "all_random")]
    pub percentage_random: [u32; 3],
    /// `rate_ignore_thinktime`: think time counts as time at the rate.
    #[serde(default)]
    pub rate_ignore_thinktime: bool,
    /// `fill_device` (`fill_fs`): write until the device or file system is
    /// full; ENOSPC (or EDQUOT) then ends the job without an error, as fio.
    #[serde(default)]
    pub fill_device: bool,
    /// Syncs, open flags and file preparation (`fsync`, `sync`, `fallocate`, …).
    #[serde(default)]
    pub files: crate::spec_io::FileSpec,
    /// Locks, appends, ranged syncs, per-I/O flags (`lockfile`, `nowait`, …).
    #[serde(default)]
    pub access: crate::spec_access::AccessSpec,
    /// `zonemode=strided` and its zone sizes.
    #[serde(default)]
    pub zones: crate::spec_io::StridedZones,
    /// `zonemode=zbd`'s options (`ssdready_workload::zbd`).
    #[serde(default)]
    pub zbd: crate::spec_zbd::ZbdOptions,
    /// The passthrough engines' options (sg, io_uring_cmd, mtd).
    #[serde(default)]
    pub passthru: crate::spec_passthru::PassthruSpec,
    /// Data verification (`verify`, `verify_pattern`, …).
    #[serde(default)]
    pub verify: crate::spec_verify::VerifySpec,
    /// fio `continue_on_error`: the errors counted and gone past.
    #[serde(default)]
    pub continue_on_error: crate::spec_types::ContinueOn,
    /// Write buffer contents (`buffer_compress_percentage`, ...).
    #[serde(default)]
    pub buffers: crate::spec_buffers::BufferSpec,
    /// How the worker runs (`iodepth_low`, `max_latency`, `mem`, ...).
    #[serde(default)]
    pub run: crate::spec_run::RunSpec,
    /// I/O priorities, NUMA placement, offload, poisson, latency target.
    #[serde(default)]
    pub sched: crate::sched::SchedSpec,
    /// fio `ignore_error`: per kind, the errnos gone past.
    #[serde(default)]
    pub ignore_error: crate::spec_types::IgnoreErrors,
    /// fio `steadystate`: the criterion that ends the job once it holds
    /// over `ss_dur_ns` (0: no steady-state detection, fio's default).
    #[serde(default)]
    pub steadystate: crate::steady::SsCriterion,
    /// fio `steadystate_duration`, whole seconds in ns.
    #[serde(default)]
    pub ss_dur_ns: u64,
    /// fio `steadystate_ramp_time`.
    #[serde(default)]
    pub ss_ramp_ns: u64,
    /// The options as written for this job (own section only), in order, for
    /// fio's `job options`.
    pub options_given: Vec<(String, String)>,
    /// Options accepted and ignored on purpose, with the reason.
    pub ignored: Vec<String>,
    /// What this job asks for that ssdready parses but cannot run (an
    /// engine, an option of [`crate::optsets::REFUSED_AT_RUN`]), one line
    /// each: a run refuses the job; `--parse-only` notes it.
    #[serde(default)]
    pub refused: Vec<String>,
    /// The engine as the job file named it, when that is not
    /// `ioengine.name()`: fio's other names for the same system calls
    /// (`sync`, `pvsync`, `vsync`, `pvsync2`) or an engine that is refused.
    #[serde(default)]
    pub engine_named: Option<String>,
    /// `read_iolog`, `write_iolog` and the replay options.
    #[serde(default)]
    pub iolog: crate::spec_replay::IologSpec,
    /// The engine options of fio's e4defrag engine (`donorname`, `inplace`).
    #[serde(default)]
    pub engine_opts: crate::spec_types::EngineOptions,
    /// fio's `sprandom` preconditioning and its options.
    #[serde(
        default,
        skip_serializing_if = "crate::spec_sprandom::SprandomSpec::is_off"
    )]
    pub sprandom: crate::spec_sprandom::SprandomSpec,
}

fn default_rate_cycle_ms() -> u64 {
    1000
}

fn yes() -> bool {
    true
}

/// fio's default `percentage_random`: every offset of a random job random.
pub(crate) fn all_random() -> [u32; 3] {
    [100; 3]
}

fn merge_off() -> TemporalMerge {
    TemporalMerge::Off
}
/// 20 µs: longer than a sleeping thread's wake-up, so the threads a
/// command's completion wakes are back in time for the next window.
pub(crate) fn merge_window_default() -> u64 {
    20_000
}
/// 64: the most logical blocks of an Open-Channel 2.0 vector command.
pub(crate) fn merge_max_default() -> u32 {
    64
}

impl JobSpec {
    /// The effective maximum number of completions the worker takes per
    /// reap (0: the depth: what an engine's ring hands back at once).
    pub fn batch_complete_max(&self) -> u32 {
        if self.iodepth_batch_complete_max == 0 {
            self.iodepth
        } else {
            self.iodepth_batch_complete_max
        }
    }

    /// The most completions one reap of libaio or io_uring takes (unless
    /// it needs more), as fio resolves `iodepth_batch_complete_max`: 0 (not
    /// given) means the minimum (fio's `init.c` raises the maximum to it),
    /// so one by default, and never more than the depth. A libaio job then
    /// pays one `io_getevents` per I/O, and an io_uring job one
    /// `io_uring_enter`, as under fio.
    pub fn reap_call_max(&self) -> u32 {
        self.iodepth_batch_complete_max
            .max(self.iodepth_batch_complete_min)
            .clamp(1, self.depth().get())
    }

    /// The queue depth the worker really keeps: synchronous engines hold one
    /// I/O in flight whatever `iodepth` says (fio's behaviour, with a warning).
    pub fn effective_iodepth(&self) -> u32 {
        if self.ioengine != EngineKind::Emu && self.engine().caps.synchronous {
            1
        } else {
            self.iodepth
        }
    }

    /// `iodepth` as the engines size their queues and slots: at least 1
    /// (a parsed job has at least 1 already; a job built in code may not).
    pub fn depth(&self) -> std::num::NonZeroU32 {
        std::num::NonZeroU32::new(self.iodepth).unwrap_or(std::num::NonZeroU32::MIN)
    }

    /// The engine's name as the job gave it (`sync` stays `sync`; a refused
    /// engine keeps its name).
    pub fn engine_name(&self) -> &str {
        self.engine_named.as_deref().unwrap_or(self.ioengine.name())
    }

    /// Files each clone has: those named, or `nrfiles` fio makes.
    pub fn files_per_clone(&self) -> u64 {
        if self.ioengine == EngineKind::Null || self.on_emulator() {
            1
        } else if self.filename.is_empty() {
            u64::from(self.nrfiles.max(1))
        } else {
            u64::try_from(self.filename.len()).unwrap_or(u64::MAX)
        }
    }

    /// Whether the job changes its targets: it writes or trims, and is not
    /// `verify_only` (which reads back what the job would have written).
    pub fn modifies_target(&self) -> bool {
        // fio's falloc engine allocates on reads too.
        let falloc = self.engine_named.as_deref() == Some("falloc");
        (self.rw.modifies() || falloc) && !self.verify.only
    }

    /// Whether the job's files are laid out before it runs: not with
    /// `create_on_open`, nor for fio's filecreate engine, whose open makes
    /// them (fio lays nothing out for it), nor with `fill_device` (the job
    /// itself fills the file system).
    pub fn lays_out_files(&self) -> bool {
        !self.files.create_on_open
            && !self.fill_device
            && self.engine_named.as_deref() != Some("filecreate")
            && !self.dir_engine()
    }

    /// Whether the job's I/Os are fake: fio's file-operation engines
    /// (filecreate, filestat, filedelete, and the directory ones) time a
    /// file operation per file and move no data.
    pub fn fake_io(&self) -> bool {
        self.engine().caps.fake_io
    }

    /// Whether the job's "files" are directories: fio's dircreate, dirstat
    /// and dirdelete engines (mkdir, stat, rmdir of `jobname.N.M`), for
    /// which nothing is laid out.
    pub fn dir_engine(&self) -> bool {
        self.engine().caps.dirs
    }

    /// Whether the job's engine cannot make a file longer by writing past
    /// its end (fio's `FIO_NOEXTEND`: the mmap engine), so that a file a job
    /// writes is laid out whole (written) before the job, as fio does.
    pub fn engine_cannot_extend(&self) -> bool {
        self.engine().caps.cannot_extend
    }

    /// Whether the job runs on the SSD emulator: it names `emu:…`, or it
    /// names no target and no engine (ssdready's default).
    pub fn on_emulator(&self) -> bool {
        self.ioengine != EngineKind::Null
            && ((self.filename.is_empty() && !self.makes_files())
                || self
                    .filename
                    .iter()
                    .any(|f| f == "emu" || f.starts_with("emu:")))
    }

    /// Whether, without `filename`, the job's targets are files fio would
    /// make (`jobname.N.M` in `directory` or the current directory): it
    /// names an engine, a directory, or anything about its files.
    pub fn makes_files(&self) -> bool {
        self.filename.is_empty()
            && self.ioengine != EngineKind::Null
            && (self.ioengine_given
                || self.directory.is_some()
                || self.opendir.is_some()
                || self.filename_format.is_some()
                || self.nrfiles > 1
                || self.filesize.is_some())
    }

    /// The job's rate caps as (per-I/O ns, per-byte ns) for each direction.
    pub fn rate_intervals(&self) -> [(Option<f64>, Option<f64>); 3] {
        std::array::from_fn(|d| {
            (
                self.rate_iops[d].map(|r| 1e9 / r as f64),
                self.rate_bytes[d].map(|r| 1e9 / r as f64),
            )
        })
    }
}
