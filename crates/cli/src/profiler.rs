//! `--profile`: the system-wide CPU sampler (perf events at 2 kHz per CPU, each
//! sample weighted by the time since the previous one, capped at 2 periods)
//! and the classifier that splits its samples by kernel layer.
//!
//! Why 2 kHz with a call chain on every sample: on this project's KVM guests
//! (Intel, 2 vCPUs) every sampling timer interrupt is a VM exit. On a loop
//! device at QD 32 (single runs, 607K IOPS without): 10 kHz cost 29 %, 5 kHz
//! 17 %, 2 kHz 7 %, 1 kHz 1–4 %. But at 1 kHz a third of the samples came
//! more than two periods late and the profile's busy time fell 20–30 % short
//! of the exact system figure, while at 2 kHz and above it agreed within
//! 2–5 %. The two-rate sampler (IPs at the full rate, chains on 1 in
//! `chain_every`) lost timing samples when its two events shared a CPU's
//! timer, so one event with chains is the default. `SSDREADY_PROFILE_HZ`
//! changes the rate.

/// Call chains on one profile sample in this many: every one unless
/// `SSDREADY_PROFILE_CHAIN_EVERY` says otherwise (the two-rate sampler, for
/// bench/overhead.sh).
fn profile_chain_every() -> u64 {
    std::env::var("SSDREADY_PROFILE_CHAIN_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(1)
}

/// CPU time per profile sample: 2 kHz per CPU unless
/// `SSDREADY_PROFILE_HZ` says otherwise (for bench/overhead.sh).
fn period_ns() -> u64 {
    let hz: u64 = std::env::var("SSDREADY_PROFILE_HZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&h| (100..=100_000).contains(&h))
        .unwrap_or(2_000);
    1_000_000_000 / hz
}

/// The most CPU time one sample may stand for, in periods
/// (`SSDREADY_PROFILE_WEIGHT_CAP` changes it, to study it).
fn weight_cap() -> f64 {
    std::env::var("SSDREADY_PROFILE_WEIGHT_CAP")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&c: &f64| c >= 1.0)
        .unwrap_or(2.0)
}

/// The system-wide sampler, its classifier and the samples drained so far.
pub type Profiler = (
    ssdready_io::perf::Sampler,
    ssdready_probe::profile::Classifier,
    ssdready_probe::profile::RawSamples,
);

/// The system-wide sampler and its classifier, or None with a warning that
/// says why profiling cannot work here.
pub fn open(warnings: &mut Vec<String>) -> Option<Profiler> {
    use ssdready_probe::profile::{Classifier, Kallsyms, RawSamples, Rules, RULES};
    let Some(syms) = Kallsyms::load() else {
        warnings.push(
            "--profile: /proc/kallsyms shows no addresses (kptr_restrict; run as root)".into(),
        );
        return None;
    };
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    let chain_every = profile_chain_every();
    match ssdready_io::perf::Sampler::open(cpus, period_ns(), chain_every) {
        Ok(s) => Some((
            s.with_weight_cap(weight_cap()),
            Classifier::new(syms, Rules::parse(RULES), std::process::id())
                .with_chain_every(chain_every)
                .with_exe_symbols(ssdready_probe::exesyms::ExeSymbols::load()),
            RawSamples::default(),
        )),
        Err(e) => {
            warnings.push(format!(
                "--profile: perf_event_open refused system-wide sampling: {e} (needs root, or \
                 /proc/sys/kernel/perf_event_paranoid ≤ 0)"
            ));
            None
        }
    }
}
