//! Device parameters and presets.
//!
//! A device is written `emu:PRESET[,key=value...]`, e.g.
//! `--filename=emu:nvme-tlc,size=16g,op=0.28`; every field of [`Params`] is a
//! key. `ssdready emu presets` lists the presets with their parameters.
//! Sources for the constants: shared/notes/ssd-models.md (the papers' devices,
//! NVMeVirt and FEMU defaults); each preset's comment says what it was fitted
//! to, and the emulator's own tests check the fit.

use serde::{Deserialize, Serialize};

mod arg;
mod error;
mod presets;
pub(crate) use arg::out_of_range;
use arg::{completion_mode, exponential_service, gc_policy, Arg};
pub use error::{DeviceFileError, ParamError};

/// Garbage-collection victim policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GcPolicy {
    /// The block with the fewest valid pages.
    Greedy,
    /// The least recently written block.
    Fifo,
}

/// How the real-time front delivers completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompletionMode {
    /// Sleep until the completion is due, as a thread woken by an interrupt
    /// (the kernel's wake-up latency is paid, as with a real interrupt).
    Irq,
    /// Spin on the completion queue (polling: no sleep, a busy core).
    Poll,
    /// Sleep while the wait is long, spin the last 50 µs: an ideal interrupt
    /// without the timer slack of a virtual machine. The default.
    Hybrid,
}

/// Everything that describes an emulated device. Times in ns, rates in MB/s
/// (10^6 bytes per second), sizes in bytes. [`Params::check`] bounds every
/// key ([`crate::geometry`] has the ranges) and refuses geometries the model
/// cannot serve; the model assumes parameters that passed it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Params {
    pub preset: String,
    /// Logical capacity.
    pub size: u64,
    /// Over-provisioning ρ: physical capacity = logical × (1 + ρ).
    pub op: f64,
    pub channels: u32,
    pub dies_per_channel: u32,
    pub pages_per_block: u32,
    /// Mapping unit and flash page, bytes (4096).
    pub page_bytes: u32,
    pub read_ns: u64,
    /// Program time of a program unit, ns: the mean of `program_types_ns`
    /// when page types have their own times.
    pub program_ns: u64,
    pub erase_ns: u64,
    /// NAND page, bytes: a whole multiple of `page_bytes` (the mapping unit).
    pub flash_page_bytes: u32,
    /// NAND erase block of a die (its planes' blocks, erased together),
    /// bytes; 0: the FTL's block (`pages_per_block` pages). A small emulated
    /// drive needs more, smaller FTL blocks than a real one has; the die
    /// then takes one `erase_ns` erase per `flash_block_bytes` GC reclaims.
    pub flash_block_bytes: u64,
    /// Planes per die: a program writes one page in each (multi-plane);
    /// planes read independently ([`crate::die`]).
    pub planes: u32,
    /// Program time per page type (TLC: lower/middle/upper), taken in turn;
    /// empty: every program takes `program_ns`. Set with `program_ns=L/M/U`.
    pub program_types_ns: Vec<u64>,
    /// SLC write cache, a share of the logical size (0: none; dynamic SLC
    /// caches scale with the drive); host writes go there at
    /// `slc_program_ns` per program unit until it is full ([`crate::die`]).
    pub slc_cache: f64,
    pub slc_program_ns: u64,
    /// Program/erase suspension: time for a running operation to reach its
    /// safe point, ns.
    pub suspend_ns: u64,
    /// Time to resume a suspended operation, ns.
    pub resume_ns: u64,
    /// Reads one operation lets ahead of it (0: no read priority, no
    /// suspension: reads wait behind program/erase work in submission order).
    pub suspend_max: u32,
    /// NAND channel transfer rate, MB/s.
    pub channel_mbps: f64,
    /// Host link rate (SATA, PCIe), MB/s.
    pub link_mbps: f64,
    /// Controller time per command, ns, on one of `fw_units` cores.
    pub fw_cmd_ns: u64,
    /// Controller time per 4 KiB, ns.
    pub fw_per_4k_ns: u64,
    pub fw_units: u32,
    /// Commands the device works on at once, each holding its slot from
    /// start to completion (0: no limit). A pool of such units is what
    /// makes Polte et al.'s devices saturate at a queue depth equal to their number.
    pub cmd_slots: u32,
    /// Write buffer (absorbs writes until full, then drains at NAND speed); 0: none.
    pub write_buffer: u64,
    /// DRAM mode: no NAND, no GC; each of the dies is a unit serving a 4 KiB in `dram_per_4k_ns`.
    pub dram: bool,
    pub dram_cmd_ns: u64,
    pub dram_per_4k_ns: u64,
    pub gc: GcPolicy,
    /// Background GC: a die with fewer free blocks than this cleans one
    /// victim after each write to it.
    pub gc_bg_free: u32,
    /// Foreground GC (≥ 1): a write that would leave its die with fewer free
    /// blocks than this first cleans victims there.
    pub gc_fg_free: u32,
    /// Real time: how completions are delivered.
    pub completion: CompletionMode,
    /// Real time: deliver completions in batches of this many (0: off).
    pub coalesce_n: u32,
    /// Real time: …or after this many µs since the first was due.
    pub coalesce_us: u64,
    /// Skip data copies (reads return zeros).
    pub nocopy: bool,
    /// Virtual time: host cost added before each submission, ns.
    pub host_ns: u64,
    // The command path ([`crate::device`] module docs, "Commands").
    /// Bytes of a command the device fetches over the host link, once per
    /// command (an NVMe submission entry: 64).
    pub cmd_bytes: u32,
    /// Bytes per extent of a vectored command (its extent list, fetched
    /// after the command; a one-extent command carries its range inline).
    pub extent_bytes: u32,
    /// Device time per extent (address translation, DMA set-up), ns.
    pub extent_ns: u64,
    /// Device time to post a command's completion (completion entry,
    /// interrupt message), once per command, ns.
    pub cpl_ns: u64,
    /// Commands the host may have outstanding on the device; it issues
    /// another only once it has seen a completion (0: no limit). 1 is a
    /// device without a command queue, as Shin's DRAM SSD behind its driver.
    pub iface_depth: u32,
    /// Real time: I/O queue pairs the device offers (NVMe's Number of I/O
    /// Queues; 1 for a SATA/AHCI drive); workers beyond it share them
    /// ([`crate::queues`]).
    #[serde(default = "default_queues")]
    pub queues: u32,
    /// Virtual time: host time to build and issue one command, ns, charged
    /// while holding the device's interface (a merged command pays it once).
    pub host_cmd_ns: u64,
    /// Virtual time, `completion=irq`: from a completion to the host seeing
    /// it (interrupt, handler, softirq, wake-up), ns.
    pub irq_ns: u64,
    /// Virtual time: a thread asleep on another thread's completion (a
    /// temporal-merge loser, an ATM requester with `completion=irq`) runs
    /// again this long after it is woken, ns.
    pub wake_ns: u64,
    /// DRAM mode: `service=exp` makes each unit's service time
    /// exponentially distributed with the fixed time as its mean (an
    /// M/M/c device for queueing checks); false: fixed (`service=fixed`).
    #[serde(default)]
    pub service_exp: bool,
    /// Injected faults ([`crate::fault`]); none by default.
    #[serde(default = "crate::fault::FaultParams::off")]
    pub faults: crate::fault::FaultParams,
    /// Zoned mode ([`crate::zoned`]); off by default.
    #[serde(default)]
    pub zoned: crate::zoned::ZoneParams,
    /// Whole-device stalls ([`crate::stall`]); off by default.
    #[serde(default, skip_serializing_if = "crate::stall::StallParams::is_off")]
    pub stall: crate::stall::StallParams,
}

impl Default for Params {
    fn default() -> Self {
        preset("nvme-tlc").expect("the default preset exists")
    }
}

fn base(name: &str) -> Params {
    Params {
        preset: name.into(),
        size: 1 << 30,
        op: 0.07,
        channels: 8,
        dies_per_channel: 4,
        pages_per_block: 64,
        page_bytes: 4096,
        read_ns: 50_000,
        program_ns: 600_000,
        erase_ns: 3_000_000,
        flash_page_bytes: 4096,
        flash_block_bytes: 0,
        planes: 1,
        program_types_ns: Vec::new(),
        slc_cache: 0.0,
        slc_program_ns: 0,
        suspend_ns: 0,
        resume_ns: 0,
        suspend_max: 0,
        channel_mbps: 800.0,
        link_mbps: 3500.0,
        fw_cmd_ns: 3_000,
        fw_per_4k_ns: 0,
        fw_units: 4,
        cmd_slots: 0,
        write_buffer: 0,
        dram: false,
        dram_cmd_ns: 0,
        dram_per_4k_ns: 0,
        gc: GcPolicy::Greedy,
        gc_bg_free: 2,
        gc_fg_free: 1,
        completion: CompletionMode::Hybrid,
        coalesce_n: 0,
        coalesce_us: 0,
        nocopy: false,
        host_ns: 0,
        cmd_bytes: 64,
        extent_bytes: 16,
        extent_ns: 0,
        cpl_ns: 0,
        iface_depth: 0,
        queues: default_queues(),
        host_cmd_ns: 0,
        irq_ns: 0,
        wake_ns: 0,
        service_exp: false,
        faults: crate::fault::FaultParams::off(),
        zoned: crate::zoned::ZoneParams::default(),
        stall: crate::stall::StallParams::default(),
    }
}

/// I/O queue pairs of a device whose preset does not say: enough for a
/// worker per CPU on today's servers (NVMe allows 65,535).
fn default_queues() -> u32 {
    64
}

/// (name, one-line description) of every preset.
pub const PRESETS: &[(&str, &str)] = &[
    ("x25e", "2009 SATA SLC drive, Intel X25-E class: ~35K read IOPS, ~3.3K sustained random-write IOPS, 250/170 MB/s"),
    ("iodrive", "2009 PCIe flash card, Fusion-io ioDrive class: ~100K read IOPS saturating at QD 4, 700/550 MB/s"),
    ("dram-ssd", "DRAM SSD, Jetspeed class: 7-8 us per 4 KiB read or write, 700 MB/s, no flash, no GC"),
    ("nvme-tlc", "current PCIe 4 TLC client drive, Samsung 980 PRO 1 TB class (calibrated): 16 dies x 4 planes, 16 KiB pages, SLC cache; ~7 GB/s reads, ~1M read IOPS, ~5.5 GB/s writes in cache, ~2 GB/s after"),
    ("dc-tlc", "PCIe 4 enterprise TLC drive, Samsung PM9A3 U.2 class (calibrated): 6.5 GB/s reads, 900K read IOPS, 3.5 GB/s writes, ~200K sustained random-write IOPS, no SLC cache"),
    ("qlc-sata", "SATA QLC drive, Samsung 870 QVO 1 TB class (calibrated): 560/530 MB/s, ~95K IOPS, 42 GB-per-TB SLC cache, 80 MB/s writes after it"),
    ("optane", "3D XPoint drive, Intel Optane P4800X class (calibrated): 8.9 us at QD 1, ~530K read and write IOPS, 2.2 GB/s, no GC"),
    ("nvm-lowlat", "generic low-latency NVM drive: ~10 us at QD 1, ~700K IOPS, no GC (calibrated Optane: optane)"),
    ("null", "zero-latency device: measures the emulator and the host, nothing else"),
];

/// A preset by name (each one's parameters and their sources are in
/// `presets`).
pub fn preset(name: &str) -> Option<Params> {
    let mut p = base(name);
    match name {
        "x25e" => presets::x25e(&mut p),
        "iodrive" => presets::iodrive(&mut p),
        "dram-ssd" => presets::dram_ssd(&mut p),
        "nvme-tlc" => presets::nvme_tlc(&mut p),
        "nvm-lowlat" => presets::nvm_lowlat(&mut p),
        "null" => presets::null(&mut p),
        _ if crate::calibrated::apply(name, &mut p) => {}
        _ => return None,
    }
    Some(p)
}

fn parse_size(v: &str) -> Result<u64, ssdready_core::units::UnitError> {
    // The units parser's own error (core's), which the key's error carries.
    ssdready_core::units::parse_size(v, 1024)
}

impl Params {
    /// Parse `PRESET[,key=value...]` (the part after `emu:`; empty means the
    /// default preset). Errors name the key and the allowed values.
    pub fn parse(spec: &str) -> Result<Params, ParamError> {
        let mut parts = spec.split(',').map(str::trim).filter(|s| !s.is_empty());
        let first = parts.clone().next().unwrap_or("");
        let mut p = if let Some(path) = first.strip_prefix("file=") {
            parts.next();
            crate::devfile::load(std::path::Path::new(path))?
        } else if first.is_empty() || first.contains('=') {
            Params::default()
        } else {
            parts.next();
            preset(first).ok_or_else(|| ParamError::UnknownPreset { name: first.into() })?
        };
        for kv in parts {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| ParamError::NotKeyValue { text: kv.into() })?;
            p.set(k.trim(), v.trim())?;
        }
        p.check()?;
        Ok(p)
    }

    /// Set one parameter as its inline key takes it (`read_ns`, `55us`);
    /// not checked ([`Params::check`]).
    pub fn set_key(&mut self, k: &str, v: &str) -> Result<(), ParamError> {
        self.set(k, v)
    }

    /// Every parameter a key sets, as (key, value) text the key takes
    /// back: [`Params::set_key`] of each on any base gives `self`.
    pub fn settable_pairs(&self) -> Vec<(&'static str, String)> {
        let p = self;
        let completion = match p.completion {
            CompletionMode::Irq => "irq",
            CompletionMode::Poll => "poll",
            CompletionMode::Hybrid => "hybrid",
        };
        vec![
            ("size", p.size.to_string()),
            ("op", p.op.to_string()),
            ("channels", p.channels.to_string()),
            ("dies_per_channel", p.dies_per_channel.to_string()),
            ("pages_per_block", p.pages_per_block.to_string()),
            ("page_bytes", p.page_bytes.to_string()),
            ("read_ns", p.read_ns.to_string()),
            ("program_ns", program_times(p)),
            ("erase_ns", p.erase_ns.to_string()),
            ("flash_page_bytes", p.flash_page_bytes.to_string()),
            ("flash_block_bytes", p.flash_block_bytes.to_string()),
            ("planes", p.planes.to_string()),
            ("slc_cache", p.slc_cache.to_string()),
            ("slc_program_ns", p.slc_program_ns.to_string()),
            ("suspend_ns", p.suspend_ns.to_string()),
            ("resume_ns", p.resume_ns.to_string()),
            ("suspend_max", p.suspend_max.to_string()),
            ("channel_mbps", p.channel_mbps.to_string()),
            ("link_mbps", p.link_mbps.to_string()),
            ("fw_cmd_ns", p.fw_cmd_ns.to_string()),
            ("fw_per_4k_ns", p.fw_per_4k_ns.to_string()),
            ("fw_units", p.fw_units.to_string()),
            ("cmd_slots", p.cmd_slots.to_string()),
            ("write_buffer", p.write_buffer.to_string()),
            ("dram", p.dram.to_string()),
            ("dram_cmd_ns", p.dram_cmd_ns.to_string()),
            ("dram_per_4k_ns", p.dram_per_4k_ns.to_string()),
            ("gc", format!("{:?}", p.gc).to_lowercase()),
            ("gc_bg_free", p.gc_bg_free.to_string()),
            ("gc_fg_free", p.gc_fg_free.to_string()),
            ("completion", completion.to_string()),
            ("coalesce_n", p.coalesce_n.to_string()),
            ("coalesce_us", p.coalesce_us.to_string()),
            ("nocopy", p.nocopy.to_string()),
            ("host_ns", p.host_ns.to_string()),
            ("cmd_bytes", p.cmd_bytes.to_string()),
            ("extent_bytes", p.extent_bytes.to_string()),
            ("extent_ns", p.extent_ns.to_string()),
            ("cpl_ns", p.cpl_ns.to_string()),
            ("iface_depth", p.iface_depth.to_string()),
            ("queues", p.queues.to_string()),
            ("host_cmd_ns", p.host_cmd_ns.to_string()),
            ("irq_ns", p.irq_ns.to_string()),
            ("wake_ns", p.wake_ns.to_string()),
            (
                "service",
                if p.service_exp { "exp" } else { "fixed" }.to_string(),
            ),
        ]
        .into_iter()
        .chain(p.faults.pairs())
        .chain(p.zoned.pairs())
        .chain(p.stall.pairs())
        .collect()
    }

    fn set(&mut self, k: &str, v: &str) -> Result<(), ParamError> {
        if let Some(r) = self
            .faults
            .set(k, v)
            .or_else(|| self.zoned.set(k, v))
            .or_else(|| self.stall.set(k, v))
        {
            return r;
        }
        let a = Arg { k, v };
        match k {
            "size" => self.size = a.size()?,
            "op" => self.op = a.float()?,
            "channels" => self.channels = a.int32()?,
            "dies_per_channel" | "dies" => self.dies_per_channel = a.int32()?,
            "pages_per_block" => self.pages_per_block = a.int32()?,
            "page_bytes" => self.page_bytes = a.size32("page_bytes")?,
            "read_ns" | "read" => self.read_ns = a.time()?,
            "program_ns" | "program" => self.set_program(&a)?,
            "erase_ns" | "erase" => self.erase_ns = a.time()?,
            "flash_page_bytes" | "flash_page" => {
                self.flash_page_bytes = a.size32("flash_page_bytes")?
            }
            "planes" => self.planes = a.int32()?,
            "flash_block_bytes" | "flash_block" => self.flash_block_bytes = a.size()?,
            "slc_cache" => self.slc_cache = a.share()?,
            "slc_program_ns" | "slc_program" => self.slc_program_ns = a.time()?,
            "suspend_ns" | "suspend" => self.suspend_ns = a.time()?,
            "resume_ns" | "resume" => self.resume_ns = a.time()?,
            "suspend_max" => self.suspend_max = a.int32()?,
            "channel_mbps" => self.channel_mbps = a.float()?,
            "link_mbps" => self.link_mbps = a.float()?,
            "fw_cmd_ns" | "fw_cmd" => self.fw_cmd_ns = a.time()?,
            "fw_per_4k_ns" | "fw_per_4k" => self.fw_per_4k_ns = a.time()?,
            "fw_units" => self.fw_units = a.int32()?,
            "cmd_slots" => self.cmd_slots = a.int32()?,
            "write_buffer" => self.write_buffer = a.size()?,
            "dram" => self.dram = a.boolean()?,
            "dram_cmd_ns" | "dram_cmd" => self.dram_cmd_ns = a.time()?,
            "dram_per_4k_ns" | "dram_per_4k" => self.dram_per_4k_ns = a.time()?,
            "gc" => self.gc = gc_policy(v)?,
            "gc_bg_free" => self.gc_bg_free = a.int32()?,
            "gc_fg_free" => self.gc_fg_free = a.int32()?,
            "completion" => self.completion = completion_mode(v)?,
            "coalesce_n" => self.coalesce_n = a.int32()?,
            "coalesce_us" => self.coalesce_us = a.int()?,
            "nocopy" => self.nocopy = a.boolean()?,
            "host_ns" => self.host_ns = a.time()?,
            "cmd_bytes" => self.cmd_bytes = a.int32()?,
            "extent_bytes" => self.extent_bytes = a.int32()?,
            "extent_ns" => self.extent_ns = a.time()?,
            "cpl_ns" => self.cpl_ns = a.time()?,
            "iface_depth" => self.iface_depth = a.int32()?,
            "queues" => self.queues = a.int32()?,
            "host_cmd_ns" => self.host_cmd_ns = a.time()?,
            "irq_ns" => self.irq_ns = a.time()?,
            "wake_ns" => self.wake_ns = a.time()?,
            "service" => self.service_exp = exponential_service(v)?,
            _ => return Err(ParamError::UnknownKey { key: k.into() }),
        }
        Ok(())
    }

    /// `program_ns`: one time, or one per page type
    /// (lower/middle/upper[/top]), their mean the program time.
    fn set_program(&mut self, a: &Arg<'_>) -> Result<(), ParamError> {
        let times =
            a.v.split('/')
                .map(|t| a.time_of(t))
                .collect::<Result<Vec<u64>, ParamError>>()?;
        if times.len() > crate::geometry::MAX_PAGE_TYPES {
            return Err(ParamError::PageTypesWritten {
                key: a.k.into(),
                count: times.len(),
            });
        }
        let sum = times.iter().fold(0u64, |a, &t| a.saturating_add(t));
        self.program_ns = sum / times.len() as u64;
        self.program_types_ns = if times.len() > 1 { times } else { Vec::new() };
        Ok(())
    }

    /// Consistency checks: every key in its range, and a geometry the
    /// model can serve ([`crate::geometry::check`]). One line naming the key
    /// and the allowed values.
    pub fn check(&self) -> Result<(), ParamError> {
        crate::geometry::check(self)?;
        if self.service_exp && !self.dram {
            return Err(ParamError::ExpNeedsDram);
        }
        self.stall.check()?;
        self.zoned.check(self)
    }

    /// Dies in all.
    ///
    /// These helpers saturate instead of overflowing, so they are safe on
    /// unchecked parameters; on parameters that passed [`Params::check`]
    /// they are exact ([`crate::geometry::Geometry`] has the checked counts).
    pub fn dies(&self) -> u32 {
        self.channels.saturating_mul(self.dies_per_channel)
    }
    /// Logical pages.
    pub fn logical_pages(&self) -> u64 {
        self.size / u64::from(self.page_bytes.max(1))
    }
    /// Erase blocks per die: physical = logical × (1 + op), rounded up.
    pub fn blocks_per_die(&self) -> u32 {
        let phys = (self.logical_pages() as f64 * (1.0 + self.op)).ceil() as u64;
        let per_die = phys.div_ceil(u64::from(self.dies().max(1)));
        let bpd = per_die.div_ceil(u64::from(self.pages_per_block.max(1)));
        u32::try_from(bpd).unwrap_or(u32::MAX)
    }
    /// Blocks per die that GC keeps free (not spare area, notes): foreground
    /// GC keeps `gc_fg_free` after a write (one more while the host write
    /// frontier has room), background GC `gc_bg_free`.
    pub fn reserved_blocks_per_die(&self) -> u32 {
        self.gc_bg_free.max(self.gc_fg_free.saturating_add(1))
    }
    /// Physical pages.
    pub fn physical_pages(&self) -> u64 {
        u64::from(self.dies())
            .saturating_mul(u64::from(self.blocks_per_die()))
            .saturating_mul(u64::from(self.pages_per_block))
    }
    /// The spare factor that determines write amplification: (physical −
    /// reserved) / logical (shared/notes/ssd-models.md).
    pub fn alpha_effective(&self) -> f64 {
        let reserved = u64::from(self.dies())
            .saturating_mul(u64::from(self.reserved_blocks_per_die()))
            .saturating_mul(u64::from(self.pages_per_block));
        self.physical_pages().saturating_sub(reserved) as f64 / self.logical_pages().max(1) as f64
    }
    /// Parameters as (key, value) text pairs, for results.
    pub fn pairs(&self) -> Vec<(String, String)> {
        let p = self;
        let mut out = vec![
            ("preset".to_string(), p.preset.clone()),
            ("size".to_string(), p.size.to_string()),
            ("op".to_string(), p.op.to_string()),
            ("channels".to_string(), p.channels.to_string()),
            (
                "dies_per_channel".to_string(),
                p.dies_per_channel.to_string(),
            ),
        ];
        if p.dram {
            out.push(("dram".into(), "1".into()));
            out.push(("dram_cmd_ns".into(), p.dram_cmd_ns.to_string()));
            out.push(("dram_per_4k_ns".into(), p.dram_per_4k_ns.to_string()));
        } else {
            for (k, v) in [
                ("pages_per_block", p.pages_per_block.to_string()),
                ("blocks_per_die", p.blocks_per_die().to_string()),
                ("read_ns", p.read_ns.to_string()),
                ("program_ns", program_times(p)),
                ("erase_ns", p.erase_ns.to_string()),
                ("flash_page_bytes", p.flash_page_bytes.to_string()),
                ("flash_block_bytes", p.flash_block_bytes.to_string()),
                ("planes", p.planes.to_string()),
                ("slc_cache", p.slc_cache.to_string()),
                ("slc_program_ns", p.slc_program_ns.to_string()),
                ("suspend_ns", p.suspend_ns.to_string()),
                ("resume_ns", p.resume_ns.to_string()),
                ("suspend_max", p.suspend_max.to_string()),
                ("channel_mbps", p.channel_mbps.to_string()),
                ("write_buffer", p.write_buffer.to_string()),
                ("gc", format!("{:?}", p.gc).to_lowercase()),
                ("gc_bg_free", p.gc_bg_free.to_string()),
                ("gc_fg_free", p.gc_fg_free.to_string()),
            ] {
                out.push((k.into(), v));
            }
        }
        for (k, v) in [
            ("link_mbps", p.link_mbps.to_string()),
            ("fw_cmd_ns", p.fw_cmd_ns.to_string()),
            ("fw_per_4k_ns", p.fw_per_4k_ns.to_string()),
            ("fw_units", p.fw_units.to_string()),
            ("cmd_slots", p.cmd_slots.to_string()),
            ("cmd_bytes", p.cmd_bytes.to_string()),
            ("extent_bytes", p.extent_bytes.to_string()),
            ("extent_ns", p.extent_ns.to_string()),
            ("cpl_ns", p.cpl_ns.to_string()),
            ("iface_depth", p.iface_depth.to_string()),
            ("queues", p.queues.to_string()),
        ] {
            out.push((k.into(), v));
        }
        for (k, v) in [
            ("host_ns", p.host_ns),
            ("host_cmd_ns", p.host_cmd_ns),
            ("irq_ns", p.irq_ns),
            ("wake_ns", p.wake_ns),
        ] {
            if v > 0 {
                out.push((k.into(), v.to_string()));
            }
        }
        if p.faults.any() {
            out.extend(p.faults.pairs().into_iter().map(|(k, v)| (k.into(), v)));
        }
        out.extend(p.zoned.pairs().into_iter().map(|(k, v)| (k.into(), v)));
        out.extend(p.stall.pairs().into_iter().map(|(k, v)| (k.into(), v)));
        out
    }
}

/// `program_ns` as the key takes it: one time, or the page types' times
/// (`L/M/U`, ns).
fn program_times(p: &Params) -> String {
    if p.program_types_ns.is_empty() {
        return p.program_ns.to_string();
    }
    let t: Vec<String> = p.program_types_ns.iter().map(u64::to_string).collect();
    t.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_consistent() {
        for (name, _) in PRESETS {
            let p = preset(name).unwrap();
            p.check().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn overrides_and_errors() {
        let p = Params::parse("x25e,size=64m,op=0.28,read=30us").unwrap();
        assert_eq!(p.size, 64 << 20);
        assert_eq!(p.op, 0.28);
        assert_eq!(p.read_ns, 30_000);
        assert_eq!(Params::parse("").unwrap().preset, "nvme-tlc");
        assert_eq!(Params::parse("size=2g").unwrap().size, 2 << 30);
        assert!(Params::parse("nope")
            .unwrap_err()
            .to_string()
            .contains("allowed: x25e"));
        assert!(Params::parse("x25e,colour=red")
            .unwrap_err()
            .to_string()
            .contains("unknown emulator parameter 'colour'"));
        assert!(Params::parse("x25e,gc=lru")
            .unwrap_err()
            .to_string()
            .contains("greedy, fifo"));
    }

    #[test]
    fn absurd_times_and_rates_are_refused_with_the_range() {
        let e = Params::parse("x25e,read_ns=1000000000000000")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'read_ns'") && e.contains("out of range (allowed: 0 to"),
            "{e}"
        );
        assert!(Params::parse("null,dram_per_4k_ns=61s").is_err());
        assert!(Params::parse("null,coalesce_us=100000000").is_err());
        let e = Params::parse("x25e,channel_mbps=0.000001")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'channel_mbps'") && e.contains("out of range"),
            "{e}"
        );
        assert!(Params::parse("x25e,link_mbps=-5").is_err());
        assert!(Params::parse("x25e,link_mbps=NaN").is_err());
        assert!(
            Params::parse("x25e,link_mbps=0").is_ok(),
            "0: no link limit"
        );
        for (name, _) in PRESETS {
            preset(name).unwrap().check().unwrap();
        }
    }

    #[test]
    fn alpha_effective_subtracts_the_gc_reserve() {
        let p = Params::parse("nvme-tlc,size=512m,op=0.28,channels=4,dies=1").unwrap();
        let a = p.alpha_effective();
        assert!(a < 1.28 && a > 1.25, "{a}");
    }
}

#[cfg(test)]
mod parse_limits {
    use super::*;

    #[test]
    fn negative_nan_or_infinite_rates_are_refused_not_unlimited() {
        for kv in [
            "link_mbps=-1",
            "channel_mbps=nan",
            "link_mbps=inf",
            "op=-0.5",
            "op=NaN",
            "op=1e300",
        ] {
            let e = Params::parse(&format!("x25e,{kv}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("allowed"), "{kv}: {e}");
        }
        assert_eq!(
            Params::parse("x25e,link_mbps=0").unwrap().link_mbps,
            0.0,
            "0: no limit"
        );
    }

    #[test]
    fn counts_beyond_u32_are_refused_not_truncated() {
        for kv in [
            "channels=4294967297",
            "dies=4294967296",
            "pages_per_block=4294967298",
            "page_bytes=4g",
            "gc_fg_free=4294967295",
        ] {
            let e = Params::parse(&format!("x25e,{kv}"))
                .unwrap_err()
                .to_string();
            let key = kv.split('=').next().unwrap();
            assert!(e.contains(key), "{kv}: {e}");
        }
    }

    #[test]
    fn geometry_helpers_saturate_instead_of_panicking() {
        let p = Params {
            channels: u32::MAX,
            dies_per_channel: u32::MAX,
            pages_per_block: u32::MAX,
            gc_fg_free: u32::MAX,
            page_bytes: 0,
            size: u64::MAX,
            ..Params::default()
        };
        assert_eq!(p.dies(), u32::MAX);
        assert!(p.alpha_effective().is_finite());
        assert!(p.check().is_err());
    }
}

#[cfg(test)]
mod nand_keys {
    use super::*;

    #[test]
    fn page_type_times_set_the_mean_and_one_time_clears_them() {
        let p = Params::parse("nvme-tlc,program_ns=100us/200us/600us").unwrap();
        assert_eq!(p.program_types_ns, [100_000, 200_000, 600_000]);
        assert_eq!(p.program_ns, 300_000);
        let p = Params::parse("nvme-tlc,program_ns=1ms").unwrap();
        assert!(p.program_types_ns.is_empty());
        assert_eq!(p.program_ns, 1_000_000);
        let e = Params::parse("nvme-tlc,program_ns=1/2/3/4/5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("5 page types (allowed: 1 to 4"), "{e}");
        let e = Params::parse("nvme-tlc,program_ns=1us/2s")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'program_ns'") && e.contains("out of range"),
            "{e}"
        );
    }

    #[test]
    fn slc_cache_is_a_share_of_the_size() {
        assert_eq!(
            Params::parse("nvme-tlc,slc_cache=25%").unwrap().slc_cache,
            0.25
        );
        assert_eq!(
            Params::parse("nvme-tlc,slc_cache=0.5").unwrap().slc_cache,
            0.5
        );
        for bad in ["150%", "-0.1", "nan"] {
            let e = Params::parse(&format!("nvme-tlc,slc_cache={bad}"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("'slc_cache'") && e.contains("allowed"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn impossible_nand_geometries_are_refused_with_the_reason() {
        for (kv, why) in [
            ("flash_page_bytes=2k", "at least page_bytes=4096"),
            ("flash_page_bytes=24k", "a power of two"),
            ("planes=3", "multiples of 12"),
            ("planes=0", "'planes': 0 is out of range (allowed: 1 to 16)"),
            ("pages_per_block=40", "multiples of 16"),
            ("suspend_max=5000", "'suspend_max': 5000 is out of range"),
            ("suspend_ns=2s", "'suspend_ns'"),
            ("flash_block_bytes=2g", "'flash_block_bytes'"),
        ] {
            let e = Params::parse(&format!("nvme-tlc,{kv}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{kv}: {e}");
            assert_eq!(e.lines().count(), 1);
        }
        // Six planes fit a block of a multiple of 24 pages.
        assert!(Params::parse("nvme-tlc,planes=6,pages_per_block=48").is_ok());
    }
}
