//! `--profile`: the system-wide CPU sampler (perf events at 10 kHz per CPU, each
//! sample weighted by the time since the previous one, capped)
//! and the classifier that splits its samples by kernel layer.

/// Call chains on one profile sample in this many (the rest carry only
/// their IP, which is most of the cost saved); `SSDREADY_PROFILE_CHAIN_EVERY`
/// overrides it (1: a chain on every sample), for bench/overhead.sh.
fn profile_chain_every() -> u64 {
    std::env::var("SSDREADY_PROFILE_CHAIN_EVERY")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n >= 1)
        .unwrap_or(8)
}

/// CPU time per profile sample: 10 kHz per CPU unless
/// `SSDREADY_PROFILE_HZ` says otherwise (for bench/overhead.sh).
fn period_ns() -> u64 {
    let hz: u64 = std::env::var("SSDREADY_PROFILE_HZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&h| (100..=100_000).contains(&h))
        .unwrap_or(10_000);
    1_000_000_000 / hz
}

/// The most CPU time one sample may stand for, in periods
/// (`SSDREADY_PROFILE_WEIGHT_CAP` changes it, to study it).
fn weight_cap() -> f64 {
    std::env::var("SSDREADY_PROFILE_WEIGHT_CAP")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&c: &f64| c >= 1.0)
        .unwrap_or(1.5)
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
