//! Emulated devices for a run: one [`SharedDevice`] per distinct `emu:…`
//! target (a job without a filename uses `emu:`, the default preset), shared
//! by the jobs that name it and kept across phases so a fill is still there
//! for the reads after it. Also the emulator's report.

use ssdready_core::result::EmuReport;
use ssdready_core::spec::{EngineKind, JobSpec};
use ssdready_emu::analytic::wa_greedy;
use ssdready_emu::config::Params;
use ssdready_emu::device::Device;
use ssdready_emu::engine::SharedDevice;
use ssdready_io::clock::Clock;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The default target of a job without a filename.
pub const DEFAULT_TARGET: &str = "emu:";

/// Point jobs without a filename at the default emulated device and mark
/// emulator jobs as using its engine. Returns warnings.
pub fn assign_emulator(specs: &mut [JobSpec]) -> Vec<String> {
    let mut warnings = Vec::new();
    for s in specs.iter_mut().filter(|s| s.on_emulator()) {
        if s.filename.is_empty() {
            s.filename = vec![DEFAULT_TARGET.to_string()];
        }
        if s.filename.len() > 1 {
            warnings.push(format!(
                "job '{}': only the first of several emulator targets is used",
                s.name
            ));
            s.filename.truncate(1);
        }
        if !matches!(s.ioengine, EngineKind::Psync | EngineKind::Emu) {
            warnings.push(format!(
                "job '{}': ioengine={} does not apply: the emulator target brings its own engine",
                s.name,
                s.ioengine.name()
            ));
        }
        s.ioengine = EngineKind::Emu;
    }
    warnings
}

/// Parse every emulator target's parameters. When a target does not set
/// `size=`, the device is made large enough for the jobs that use it (at
/// least the preset's size).
pub fn params_for(specs: &[JobSpec]) -> Result<BTreeMap<String, Params>, String> {
    let mut out: BTreeMap<String, Params> = BTreeMap::new();
    for s in specs.iter().filter(|s| s.ioengine == EngineKind::Emu) {
        let name = &s.filename[0];
        let body = name
            .strip_prefix("emu:")
            .or_else(|| name.strip_prefix("emu"))
            .unwrap_or("");
        let mut p =
            Params::parse(body).map_err(|e| format!("job '{}': option 'filename': {e}", s.name))?;
        let explicit = body
            .split(',')
            .any(|kv| kv.trim_start().starts_with("size="));
        if let (false, Some(size)) = (explicit, s.size) {
            let need = (s.offset + size).div_ceil(1 << 20) << 20;
            if need > p.size {
                p.size = need;
                p.check().map_err(|e| format!("job '{}': {e}", s.name))?;
            }
        }
        match out.get_mut(name) {
            Some(prev) if prev.size < p.size => *prev = p,
            Some(_) => {}
            None => {
                out.insert(name.clone(), p);
            }
        }
    }
    Ok(out)
}

/// Create the shared devices.
pub fn create(
    params: BTreeMap<String, Params>,
    clock: Clock,
) -> BTreeMap<String, Arc<SharedDevice>> {
    params
        .into_iter()
        .map(|(k, p)| (k, SharedDevice::new(p, clock)))
        .collect()
}

/// The emulator's report for one device.
pub fn report(dev: &Device, clock: &str, free_blocks: Vec<u64>, window_ns: u64) -> EmuReport {
    let p = &dev.p;
    let mut r = EmuReport {
        clock: clock.into(),
        params: p.pairs(),
        free_blocks_series: free_blocks,
        die_utilisation_pct: dev
            .counters
            .die_busy_ns
            .iter()
            .map(|&b| {
                if window_ns > 0 {
                    (100.0 * b as f64 / window_ns as f64).min(100.0)
                } else {
                    0.0
                }
            })
            .collect(),
        ..EmuReport::default()
    };
    if let Some(f) = &dev.ftl {
        let c = f.counters;
        let (min, mean, max) = f.erase_stats();
        r.host_pages_written = c.host_pages;
        r.nand_pages_written = c.host_pages + c.gc_pages;
        r.write_amplification = f.write_amplification();
        r.alpha_effective = p.alpha_effective();
        r.wa_greedy_predicted = wa_greedy(p.alpha_effective(), p.pages_per_block as f64);
        r.gc_runs = c.gc_runs;
        r.gc_pages_moved = c.gc_pages;
        r.trimmed_pages = c.trimmed_pages;
        r.erase_count_min = min;
        r.erase_count_mean = mean;
        r.erase_count_max = max;
    }
    r
}
