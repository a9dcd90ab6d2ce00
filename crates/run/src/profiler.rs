//! `--profile`: the system-wide CPU sampler (perf events at 1 kHz per CPU, each
//! sample weighted by the time since the previous one, capped at 2 periods)
//! and the classifier that splits its samples by kernel layer.
//!
//! Why 1 kHz with a call chain on every sample: on this project's KVM guests
//! (Intel, 2 vCPUs) every sampling timer interrupt is a VM exit, and its cost
//! falls on the I/O path. On a loop device (4 KiB random reads, io_uring,
//! medians of 6 alternating 3 s runs against runs without the profile, guest
//! halt polling at 200 µs): 2 kHz cost 9.3 % at QD 1 and 3.4 % at QD 32,
//! 1 kHz 2.3 % and 1.2 % (the 3 % budget; earlier single runs at QD 32: 10 kHz
//! 29 %, 5 kHz 17 %). The first sampler charged late samples their whole
//! gap, and at 1 kHz its busy time then fell 20–30 % short of the system
//! figure; with the gap capped at 2 periods and the rest reported as
//! `late_timer_ns` / `unsampled_ns`, 1 kHz agrees with the exact system
//! figure within 1 % in the `profile` tests (QD 1 psync, QD 1 and QD 32
//! io_uring, ~6,000 samples each in 3 s). The two-rate sampler (IPs at the
//! full rate, chains on 1 in `chain_every`) lost timing samples when its two
//! events shared a CPU's timer, so one event with chains is the default.
//! `SSDREADY_PROFILE_HZ` changes the rate.

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

/// CPU time per profile sample: 1 kHz per CPU unless
/// `SSDREADY_PROFILE_HZ` says otherwise (for bench/overhead.sh).
fn period_ns() -> u64 {
    let hz: u64 = std::env::var("SSDREADY_PROFILE_HZ")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&h| (100..=100_000).contains(&h))
        .unwrap_or(1_000);
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
