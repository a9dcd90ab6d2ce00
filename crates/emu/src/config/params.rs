//! [`Params`]: everything that describes an emulated device, with what
//! needs only the parameters themselves: setting a key, the keys and values
//! a device takes back, and the counts derived from them. Parsing a whole
//! target and checking it are the configuration's ([`super`]); the presets
//! are [`super::presets`].

use super::arg::{completion_mode, exponential_service, gc_policy, Arg};
use super::error::ParamError;
use super::limits::MAX_PAGE_TYPES;
use super::modes::{CompletionMode, GcPolicy};
use crate::fault::FaultParams;
use crate::stall::StallParams;
use crate::zoned::params::ZoneParams;
use serde::{Deserialize, Serialize};

/// Everything that describes an emulated device. Times in ns, rates in MB/s
/// (10^6 bytes per second), sizes in bytes. [`Params::check`] bounds every
/// key ([`super::limits`] has the ranges) and refuses geometries the model
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
    pub faults: FaultParams,
    /// Zoned mode ([`crate::zoned`]); off by default.
    #[serde(default)]
    pub zoned: ZoneParams,
    /// Whole-device stalls ([`crate::stall`]); off by default.
    #[serde(default, skip_serializing_if = "crate::stall::StallParams::is_off")]
    pub stall: StallParams,
}

impl Params {
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

    pub(super) fn set(&mut self, k: &str, v: &str) -> Result<(), ParamError> {
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
        if times.len() > MAX_PAGE_TYPES {
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

/// I/O queue pairs of a device whose preset does not say: enough for a
/// worker per CPU on today's servers (NVMe allows 65,535).
pub(super) fn default_queues() -> u32 {
    64
}
