//! The SSD emulator's part of the result model: its parameters and inside
//! view, the faults it injected and what its zones saw.

use serde::{Deserialize, Serialize};

/// What the SSD emulator counted (its parameters and its inside view).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EmuReport {
    /// `real` (commands complete at modelled wall-clock times) or `virtual`.
    pub clock: String,
    /// The device's parameters as (key, value).
    pub params: Vec<(String, String)>,
    pub host_pages_written: u64,
    pub nand_pages_written: u64,
    /// NAND page programs per host page program.
    pub write_amplification: f64,
    /// Spare factor after the GC reserve, and the WA greedy GC should reach
    /// under uniform random writes at that spare (analytic model).
    pub alpha_effective: f64,
    pub wa_greedy_predicted: f64,
    pub gc_runs: u64,
    pub gc_pages_moved: u64,
    pub trimmed_pages: u64,
    pub erase_count_min: u32,
    pub erase_count_mean: f64,
    pub erase_count_max: u32,
    /// Free erase blocks at the end of each (simulated or real) second.
    pub free_blocks_series: Vec<u64>,
    /// Busy share of each die (or DRAM unit) over the window, percent.
    pub die_utilisation_pct: Vec<f64>,
    /// Host pages programmed into the SLC cache, and pages folded from it
    /// to TLC in idle time.
    #[serde(default)]
    pub slc_pages_written: u64,
    #[serde(default)]
    pub slc_pages_folded: u64,
    /// Program/erase operations suspended for a read, and reads that went
    /// ahead of a queued or suspended operation.
    #[serde(default)]
    pub pe_suspensions: u64,
    #[serde(default)]
    pub reads_ahead_of_pe: u64,
    /// Commands the device served, and the extents they carried (more
    /// than commands when some were vectored: temporal merge).
    #[serde(default)]
    pub commands: u64,
    #[serde(default)]
    pub extents: u64,
    /// Faults the device injected (`fault_` keys), when any was asked for.
    #[serde(default)]
    pub faults: Option<EmuFaults>,
    /// Zoned mode (`zoned=1`): what the zones saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<EmuZones>,
    /// Simulated time covered (virtual clock), ns.
    pub simulated_ns: u64,
    /// Wall-clock time the simulation took, ns.
    pub wall_ns: u64,
}

/// What the emulator injected, by kind: the truth a run's errors and
/// verification failures can be held against. The emulator counts into
/// this very type (`ssdready_emu::fault::FaultCounts`), so every counter it
/// keeps reaches the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmuFaults {
    /// Reads that failed with EIO after their retries.
    pub read_errors: u64,
    /// Reads that needed the retries and then succeeded (latency spikes).
    pub read_retries_recovered: u64,
    /// Writes that failed with EIO (nothing stored).
    pub write_errors: u64,
    /// Reads that returned one flipped byte and no error.
    pub corrupted_reads: u64,
    /// Commands that stalled `fault_spike_ns` (any kind).
    #[serde(default)]
    pub latency_spikes: u64,
    /// Failed programs (each retired a block, or found no spare left).
    #[serde(default)]
    pub program_failures: u64,
    /// Blocks retired for failed programs (spares used).
    #[serde(default)]
    pub blocks_retired: u64,
    /// Writes refused with EIO once the drive went read-only.
    #[serde(default)]
    pub read_only_writes: u64,
    /// Acknowledged writes that stored only a prefix of their pages.
    #[serde(default)]
    pub silently_torn_writes: u64,
    /// Power cuts.
    #[serde(default)]
    pub power_cuts: u64,
    /// Acknowledged writes not durable at a cut: their data (or its tail
    /// pages) reverted.
    #[serde(default)]
    pub writes_lost: u64,
    /// Writes at a cut that kept a prefix of their pages and lost the rest.
    #[serde(default)]
    pub writes_torn_at_cut: u64,
    /// Writes and flushes in flight at a cut: failed with EIO.
    #[serde(default)]
    pub commands_aborted: u64,
    /// Bytes reverted at cuts.
    #[serde(default)]
    pub bytes_lost: u64,
}

/// What an emulated zoned drive's zones saw (`emulator.zones`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmuZones {
    pub zones: u64,
    /// Zones open and active at the end.
    pub open: u32,
    pub active: u32,
    /// What the zones counted (the emulator keeps these very counters).
    #[serde(flatten)]
    pub counters: EmuZoneCounters,
}

/// What an emulated drive's zones have seen: the emulator's own counters
/// (`ssdready_emu::zoned::ZoneCounters` is this type), so every counter it
/// keeps reaches the report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmuZoneCounters {
    /// Writes refused (not at the write pointer, past capacity, into a
    /// full zone, past the open/active limits): 0 for a host that follows
    /// the write pointers.
    pub writes_refused: u64,
    /// Reads refused (read_beyond_wp=error).
    pub reads_refused: u64,
    pub resets: u64,
    pub finishes: u64,
    pub explicit_opens: u64,
    pub closes: u64,
    /// Implicitly open zones the drive closed to open another.
    pub implicit_closes: u64,
    /// Blocks the resets erased, all dies.
    pub erased_blocks: u64,
}
