//! The emulator's report: its preset and size, wear and GC, and what the
//! device did.

use ssdready_core::result::EmuReport;
use ssdready_core::units::{fmt_bytes, fmt_count};
use std::fmt::Write;

/// The emulator's report: its preset and size, wear and GC, then what the
/// device did.
pub(super) fn emulator_block(out: &mut String, e: &EmuReport) {
    let preset = e
        .params
        .iter()
        .find(|(k, _)| k == "preset")
        .map(|(_, v)| v.as_str())
        .unwrap_or("?");
    let size = e
        .params
        .iter()
        .find(|(k, _)| k == "size")
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .unwrap_or(0.0);
    let _ = writeln!(
        out,
        "emulator {preset} ({} time, {}):",
        e.clock,
        fmt_bytes(size)
    );
    if e.host_pages_written > 0 || e.gc_runs > 0 {
        let _ = writeln!(
            out,
            "  write amplification {:.2} ({} host pages, {} NAND pages); greedy model at spare {:.3}: {:.2}",
            e.write_amplification,
            fmt_count(e.host_pages_written as f64),
            fmt_count(e.nand_pages_written as f64),
            e.alpha_effective,
            e.wa_greedy_predicted
        );
        let _ = writeln!(
            out,
            "  GC: {} runs, {} pages moved, {} trimmed; erase counts min {} mean {:.2} max {}",
            e.gc_runs,
            e.gc_pages_moved,
            e.trimmed_pages,
            e.erase_count_min,
            e.erase_count_mean,
            e.erase_count_max
        );
    }
    emulator_activity(out, e);
}

/// What the emulated device did: zones, SLC cache, free blocks, dies,
/// vectored commands and simulated time.
pub(super) fn emulator_activity(out: &mut String, e: &EmuReport) {
    if let Some(z) = &e.zones {
        let (zones, open, active, z) = (z.zones, z.open, z.active, &z.counters);
        let _ = writeln!(
            out,
            "  zones: {} ({} open, {} active at the end); {} writes refused, {} reads refused; {} resets ({} blocks erased), {} finishes, {} implicit closes",
            zones, open, active, z.writes_refused, z.reads_refused, z.resets, z.erased_blocks, z.finishes, z.implicit_closes
        );
    }
    if e.slc_pages_written > 0 || e.pe_suspensions > 0 || e.reads_ahead_of_pe > 0 {
        // Whole counts: fmt_count shows small ones with decimals.
        let n = |v: u64| {
            if v < 10_000 {
                v.to_string()
            } else {
                fmt_count(v as f64)
            }
        };
        let _ = writeln!(
            out,
            "  SLC cache: {} pages written, {} folded; reads ahead of program/erase: {} ({} suspensions)",
            n(e.slc_pages_written),
            n(e.slc_pages_folded),
            n(e.reads_ahead_of_pe),
            n(e.pe_suspensions)
        );
    }
    if let (Some(first), Some(last)) = (e.free_blocks_series.first(), e.free_blocks_series.last()) {
        let _ = writeln!(
            out,
            "  free blocks: {first} at the first second, {last} at the end"
        );
    }
    if !e.die_utilisation_pct.is_empty() {
        let n = e.die_utilisation_pct.len() as f64;
        let mean = e.die_utilisation_pct.iter().sum::<f64>() / n;
        let max = e.die_utilisation_pct.iter().copied().fold(0.0, f64::max);
        let _ = writeln!(
            out,
            "  die utilisation: mean {mean:.0}%, max {max:.0}% over {} units",
            n as usize
        );
    }
    if e.extents > e.commands {
        let _ = writeln!(
            out,
            "  vectored commands: {} extents in {} commands",
            fmt_count(e.extents as f64),
            fmt_count(e.commands as f64)
        );
    }
    if e.simulated_ns > 0 {
        let _ = writeln!(
            out,
            "  simulated {:.2} s in {:.2} s of wall-clock time",
            e.simulated_ns as f64 / 1e9,
            e.wall_ns as f64 / 1e9
        );
    }
}
