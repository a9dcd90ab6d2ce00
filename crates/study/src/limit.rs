//! The study's side of the emulated device's analytic limit
//! (`ssdready_emu::analytic::limit`): a target's model, its basis, the
//! limit of a planned workload, and the time a fill and its drain take.

use ssdready_emu::analytic::limit::{model_limit, write_iops_over, Access};
use ssdready_emu::config::Params;

/// The parameters of an `emu:PRESET[,k=v…]` target (empty: the default drive).
pub fn params_of(spec: &str) -> Result<Params, ssdready_emu::config::ParamError> {
    let body = spec
        .strip_prefix("emu:")
        .or_else(|| spec.strip_prefix("emu"))
        .unwrap_or(spec);
    Params::parse(body)
}

/// The model of a target whose device timing is known: the built-in
/// emulator's, or the emulated drive behind a kernel block device.
pub fn model_params(t: &ssdready_measured::record::TargetProfile) -> Option<Params> {
    match (&t.kind, &t.emulated) {
        (ssdready_measured::record::TargetKind::Emulator, _) => params_of(&t.spec).ok(),
        (_, Some(e)) => params_of(e).ok(),
        _ => None,
    }
}

/// The emulator spec of a target's model (`emu:…`), for its virtual-time
/// twin.
pub fn model_spec(t: &ssdready_measured::record::TargetProfile) -> Option<String> {
    match (&t.kind, &t.emulated) {
        (ssdready_measured::record::TargetKind::Emulator, _) => Some(t.spec.clone()),
        (_, Some(e)) => Some(e.clone()),
        _ => None,
    }
}

/// The device's basis when its timing is known (the built-in emulator, in
/// process or behind the kernel): its model's limit for 4 KiB random
/// reads, every resource's cap, and which preset and parameters.
pub fn basis_of(
    t: &ssdready_measured::record::TargetProfile,
) -> Option<ssdready_measured::basis::DeviceBasis> {
    let p = model_params(t)?;
    Some(ssdready_measured::basis::DeviceBasis {
        source: ssdready_measured::basis::ANALYTIC_MODEL.into(),
        what: format!("the emulator's model of {}", model_spec(t)?),
        read_4k: model_limit(&p, Access::Read, 4096),
    })
}

/// The model's limit for a workload of pattern `rw`, blocks of `bs` and
/// `rwmixread` percent reads over a run of `window_s` seconds from fresh
/// (mixes weigh the read and write limits by time); None without a model.
pub fn run_limit(
    t: &ssdready_measured::record::TargetProfile,
    (rw, bs, rwmixread): (&str, u64, Option<u32>),
    window_s: f64,
) -> Option<f64> {
    let p = model_params(t)?;
    let read = model_limit(&p, Access::Read, bs).iops;
    // A write buffer and an SLC cache absorb their size at the start of a
    // run, at their own speeds: over a window of T seconds from fresh.
    let write = write_iops_over(&p, bs, window_s);
    match rw {
        "randread" | "read" => read,
        "randwrite" | "write" => write,
        _ => {
            let m = rwmixread.unwrap_or(50) as f64 / 100.0;
            Some(1.0 / (m / read? + (1.0 - m) / write?))
        }
    }
}

/// Seconds an emulated device's dies stay busy programming after a fill of
/// `region` bytes has completed: what its write buffer still holds (a run
/// waits this long, as a ramp, before measuring reads).
pub fn drain_seconds(spec: &str, region: u64) -> f64 {
    let Ok(p) = params_of(spec) else {
        return 0.0;
    };
    let held = p.write_buffer.min(region) as f64;
    // The buffer drains into the SLC cache if the fill left room there.
    let slc = (region as f64) < ssdready_emu::analytic::slc_cache_bytes(&p) as f64;
    match ssdready_emu::analytic::program_bytes_per_s(&p, slc) {
        Some(bw) if bw > 0.0 && held > 0.0 => held / bw * 1.1,
        _ => 0.0,
    }
}

/// Seconds an emulated device needs to be written over `region` bytes
/// sequentially in 1 MiB commands (each run on an emulator starts with such
/// a fill: reads of unwritten pages skip the flash).
pub fn fill_seconds(t: &ssdready_measured::record::TargetProfile, region: u64) -> f64 {
    let Ok(p) = params_of(&t.spec) else {
        return 0.0;
    };
    let host = model_limit(&p, Access::Write, 1 << 20)
        .bounds
        .iter()
        .filter(|b| b.resource != "dies")
        .map(|b| b.iops * (1u64 << 20) as f64)
        .reduce(f64::min);
    ssdready_emu::analytic::fresh_write_seconds(&p, host, region as f64)
        + drain_seconds(&t.spec, region)
}
