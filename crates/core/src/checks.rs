//! Cross-checks: every figure that two independent sources measure is
//! compared, and a disagreement beyond their stated errors is reported and
//! marks the figures it touches, rather than letting one confident number
//! stand.
//!
//! The pairs (each from a run's phase):
//! - whole-system CPU (idle-based) ≥ the process's own CPU (getrusage);
//! - run time of every thread (schedstat + getrusage) ≤ whole-system CPU;
//! - `--profile`'s busy CPU vs whole-system CPU;
//! - `--decompose`'s block-and-below mean vs /sys/block/X/stat's;
//! - ssdready's I/O count vs the kernel's (/sys/block/X/stat), per device.

use crate::result::{CpuCost, CrossCheck, DiskResult, PhaseResult, ProfileReport};

/// Relative tolerance of a sampled profile against an exact figure: the
/// timer samples' statistical error (≈ 2/√n) plus 10 % for what a cpu-clock
/// profile cannot see (interrupt-disabled regions are charged late).
fn profile_tolerance(busy_samples: u64) -> f64 {
    0.10 + 2.0 / (busy_samples.max(1) as f64).sqrt()
}

fn check(
    quantity: &str,
    a: (&str, f64),
    b: (&str, f64),
    unit: &str,
    allowed: f64,
    agree: bool,
    marks: &[&str],
) -> CrossCheck {
    CrossCheck {
        quantity: quantity.into(),
        a_source: a.0.into(),
        a: a.1,
        b_source: b.0.into(),
        b: b.1,
        unit: unit.into(),
        allowed,
        agree,
        marks: marks.iter().map(|m| m.to_string()).collect(),
        why: Vec::new(),
    }
}

impl CrossCheck {
    /// One line: the quantity, both sources, and whether they agree.
    pub fn describe(&self) -> String {
        let fmt = |v: f64| {
            if self.unit == "ns" {
                format!("{v:.0} ns")
            } else {
                format!("{v:.0} {}", self.unit)
            }
        };
        format!(
            "{}: {} {} vs {} {} (allowed ±{}): {}{}{}",
            self.quantity,
            self.a_source,
            fmt(self.a),
            self.b_source,
            fmt(self.b),
            fmt(self.allowed),
            if self.agree { "agree" } else { "DISAGREE" },
            if self.agree || self.marks.is_empty() {
                String::new()
            } else {
                format!("; do not trust {}", self.marks.join(", "))
            },
            if self.agree || self.why.is_empty() {
                String::new()
            } else {
                format!(" (why: {})", self.why.join("; "))
            }
        )
    }
}

/// The cross-checks one phase's figures allow.
pub fn phase_checks(p: &PhaseResult) -> Vec<CrossCheck> {
    let mut out = Vec::new();
    if let Some(c) = p.cpu.as_ref().filter(|c| c.ios > 0) {
        cpu_checks(c, &mut out);
        if let Some(prof) = &p.profile {
            profile_checks(c, prof, &mut out);
        }
    }
    out.extend(p.disks.iter().filter_map(disk_ios_check));
    out.extend(decomposition_check(p));
    out
}

/// The whole system's CPU against the process's own and its threads'.
fn cpu_checks(c: &CpuCost, out: &mut Vec<CrossCheck>) {
    let (sys, err, proc_) = (
        c.per_io.system_ns,
        c.sources.system_error_ns,
        c.per_io.process_ns,
    );
    // getrusage is exact; allow 1 % for the moments the two are read.
    let allowed = err + 0.01 * proc_;
    out.push(check(
        "whole-system CPU per I/O ≥ the process's own",
        ("system", sys),
        ("process", proc_),
        "ns",
        allowed,
        sys + allowed >= proc_,
        &["cpu.per_io.system_ns", "cpu.per_io.process_ns"],
    ));
    if let Some(t) = c.sources.threads_ns {
        let allowed = err + 0.02 * sys;
        out.push(check(
            "run time of every thread ≤ whole-system busy CPU per I/O",
            ("threads", t),
            ("system", sys),
            "ns",
            allowed,
            t <= sys + allowed,
            &["cpu.per_io.system_ns"],
        ));
    }
}

/// The profile's busy CPU (bracketed, then sampled) against the whole
/// system's.
fn profile_checks(c: &CpuCost, prof: &ProfileReport, out: &mut Vec<CrossCheck>) {
    let (sys, err) = (c.per_io.system_ns, c.sources.system_error_ns);
    // The bracketed figure first: when it agrees, it is the one a
    // sampled disagreement points to.
    let exact_ok = prof.exact.as_ref().map(|e| {
        // Both measure every CPU's busy time by timestamps; 10 %
        // for the interrupt entry code each side charges
        // differently, plus /proc/stat's own resolution. A vCPU
        // the hypervisor stops while it runs (steal) stays in its
        // bracketed state, while /proc/stat takes steal out of
        // busy: the bracketed figure is compared less steal.
        let allowed = 0.10 * sys + err;
        let exact = e.busy_ns_per_io - c.sources.steal_ns;
        let ok = (exact - sys).abs() <= allowed;
        let mut k = check(
            "exact (tracepoint-bracketed) busy CPU per I/O, less the hypervisor's steal, vs whole-system busy CPU per I/O",
            ("profile.exact", exact),
            ("system", sys),
            "ns",
            allowed,
            ok,
            &["profile.exact"],
        );
        if !ok {
            k.why = exact_why(e, c, exact - sys);
        }
        out.push(k);
        ok
    });
    // Sampling charges a stopped vCPU's time to the code it stopped in,
    // as the bracketed states do: compared less steal too.
    let tol = profile_tolerance(prof.busy_samples);
    let allowed = tol * sys + err;
    let sampled = prof.busy_ns_per_io - c.sources.steal_ns;
    let marks: &[&str] = if exact_ok == Some(true) {
        &["profile.layers (use profile.exact.layers: bracketed by tracepoints, it agrees)"]
    } else {
        &["profile.layers"]
    };
    out.push(check(
        "profile busy CPU per I/O, less the hypervisor's steal, vs whole-system busy CPU per I/O",
        ("profile", sampled),
        ("system", sys),
        "ns",
        allowed,
        (sampled - sys).abs() <= allowed,
        marks,
    ));
}

/// Why the bracketed busy time and /proc/stat's disagree by `diff` ns per
/// I/O (bracketed less steal, minus system): the bracketed time split
/// into the run's own, other processes', kernel threads' and interrupts',
/// with the steal taken out; then the cause the run measured, when one
/// is as large as half the difference: the tracepoints' coverage of the
/// window (time charged twice or not at all), or the steal itself.
fn exact_why(e: &crate::result::ExactCpu, c: &CpuCost, diff: f64) -> Vec<String> {
    let ns = |v: f64| format!("{v:.0} ns");
    let sum = |f: &dyn Fn(&str) -> bool| -> f64 {
        e.states
            .iter()
            .filter(|s| s.busy && f(&s.state))
            .map(|s| s.ns_per_io)
            .fold(0.0, |a, b| a + b)
    };
    let own = sum(&|s| s.ends_with("this process"));
    let others = sum(&|s| s.ends_with("other processes"));
    let kthreads = sum(&|s| s == "kernel threads");
    let irq = sum(&|s| s == "hardirq" || s == "softirq");
    let steal = c.sources.steal_ns;
    let mut why = vec![format!(
        "bracketed per I/O: this process {}, other processes {}, kernel threads {}, interrupts {}, \
         the rest (block layer and driver of any process) {}; steal {} taken out",
        ns(own),
        ns(others),
        ns(kthreads),
        ns(irq),
        ns((e.busy_ns_per_io - own - others - kthreads - irq).max(0.0)),
        ns(steal)
    )];
    let cpus = e.covered_pct_per_cpu.len().max(1) as f64;
    let whole = if c.ios > 0 {
        c.window_ns as f64 * cpus / c.ios as f64
    } else {
        0.0
    };
    let gap = (e.covered_pct - 100.0) / 100.0 * whole;
    if whole > 0.0 && gap.abs() >= 0.5 * diff.abs() {
        why.push(format!(
            "the tracepoints accounted for {:.1} % of the window × CPUs: {} per I/O charged \
             twice or to no state (events lost, or a CPU without events at the window's ends)",
            e.covered_pct,
            ns(gap)
        ));
    } else if steal >= 0.5 * diff.abs() {
        why.push(format!(
            "the hypervisor's steal ({} per I/O) is as large as the difference: the host stopped \
             the vCPUs often, and its steal clock and the bracketed states disagree on when",
            ns(steal)
        ));
    } else {
        why.push(
            "neither the hypervisor's steal nor the tracepoints' coverage explains it; other \
             processes' CPU counts in both figures"
                .into(),
        );
    }
    why
}

/// ssdready's I/O count on a device against the kernel's.
fn disk_ios_check(d: &DiskResult) -> Option<CrossCheck> {
    let dev_ios = d.read_ios + d.write_ios + d.discard_ios;
    // Only when ssdready counted I/Os of its own there (direct I/O):
    // the device's traffic alone says nothing about ssdready's figures.
    if d.app_ios == 0 {
        return None;
    }
    let allowed = (d.app_ios as f64 * 0.01).max(1.0);
    if (d.app_ios as f64 - dev_ios as f64).abs() > allowed {
        if let Some(per_io) = d.split_per_io() {
            return Some(split_bytes_check(d, per_io));
        }
    }
    Some(check(
        &format!("I/Os on {}: ssdready's count vs the kernel's", d.name),
        ("ssdready", d.app_ios as f64),
        ("/sys/block stat", dev_ios as f64),
        "I/Os",
        allowed,
        (d.app_ios as f64 - dev_ios as f64).abs() <= allowed,
        &["disks.above_block_mean_ns", "decomposition"],
    ))
}

/// When the kernel split each I/O into several requests, the counts
/// cannot match: the bytes must.
fn split_bytes_check(d: &DiskResult, per_io: f64) -> CrossCheck {
    let kib = |b: u64| b as f64 / 1024.0;
    let allowed = d.bytes_allowed() / 1024.0;
    check(
        &format!(
            "KiB on {}: ssdready's vs the kernel's (each I/O split into {per_io:.1} requests)",
            d.name
        ),
        ("ssdready", kib(d.app_bytes)),
        ("/sys/block stat", kib(d.dev_bytes())),
        "KiB",
        allowed,
        (kib(d.app_bytes) - kib(d.dev_bytes())).abs() <= allowed,
        &["disks.above_block_mean_ns", "decomposition"],
    )
}

/// The decomposition's block-and-below mean against the first agreeing
/// device's /sys/block figure.
fn decomposition_check(p: &PhaseResult) -> Option<CrossCheck> {
    let dc = p.decomposition.as_ref()?;
    let (m, ios) = p
        .disks
        .iter()
        .filter(|d| d.counts_agree)
        .filter_map(|d| d.block_mean_ns.map(|m| (m, d.read_ios + d.write_ios)))
        .next()?;
    if dc.block_and_below.n == 0 {
        return None;
    }
    // diskstats keeps milliseconds: ±1 ms per direction over the I/Os.
    let allowed = 0.05 * m + 2e6 / ios.max(1) as f64;
    let mean = dc.block_and_below.mean_ns;
    Some(check(
        "block-and-below mean latency: eBPF vs /sys/block stat",
        ("decompose", mean),
        ("/sys/block stat", m),
        "ns",
        allowed,
        (mean - m).abs() <= allowed,
        &["decomposition"],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{CpuCost, DiskResult, ProfileReport};

    fn phase(system: f64, err: f64, process: f64) -> PhaseResult {
        let mut c = CpuCost {
            ios: 1000,
            ..CpuCost::default()
        };
        c.per_io.system_ns = system;
        c.per_io.process_ns = process;
        c.sources.system_error_ns = err;
        PhaseResult {
            cpu: Some(c),
            ..PhaseResult::default()
        }
    }

    #[test]
    fn system_below_process_beyond_its_error_disagrees() {
        let ok = phase_checks(&phase(10_000.0, 100.0, 10_050.0));
        assert!(ok[0].agree, "{ok:?}");
        let bad = phase_checks(&phase(10_000.0, 100.0, 21_900.0));
        assert!(!bad[0].agree);
        assert!(bad[0].marks.contains(&"cpu.per_io.system_ns".to_string()));
    }

    #[test]
    fn an_inflated_profile_disagrees_with_the_system_figure() {
        let mut p = phase(21_600.0, 50.0, 20_000.0);
        p.profile = Some(ProfileReport {
            busy_samples: 30_000,
            busy_ns_per_io: 64_100.0,
            ..ProfileReport::default()
        });
        let c = phase_checks(&p);
        let prof = c.iter().find(|c| c.a_source == "profile").unwrap();
        assert!(!prof.agree);
        p.profile.as_mut().unwrap().busy_ns_per_io = 23_000.0;
        let c = phase_checks(&p);
        assert!(c.iter().find(|c| c.a_source == "profile").unwrap().agree);
    }

    /// A sampled profile a third short of the system figure (QD 1 on a
    /// KVM guest) beside a bracketed one that agrees: the sampled check
    /// disagrees and points to the exact layers; a bracketed figure 15 %
    /// off disagrees itself.
    #[test]
    fn a_short_sampled_profile_points_to_the_exact_one() {
        let mut p = phase(20_000.0, 100.0, 9_000.0);
        p.profile = Some(ProfileReport {
            busy_samples: 6_000,
            busy_ns_per_io: 13_500.0,
            exact: Some(crate::result::ExactCpu {
                busy_ns_per_io: 19_600.0,
                ..Default::default()
            }),
            ..ProfileReport::default()
        });
        let c = phase_checks(&p);
        let exact = c.iter().find(|c| c.a_source == "profile.exact").unwrap();
        assert!(exact.agree, "{exact:?}");
        let sampled = c.iter().find(|c| c.a_source == "profile").unwrap();
        assert!(!sampled.agree);
        assert!(sampled.describe().contains("use profile.exact.layers"));
        p.profile
            .as_mut()
            .unwrap()
            .exact
            .as_mut()
            .unwrap()
            .busy_ns_per_io = 23_000.0;
        let c = phase_checks(&p);
        let exact = c.iter().find(|c| c.a_source == "profile.exact").unwrap();
        assert!(!exact.agree);
        let sampled = c.iter().find(|c| c.a_source == "profile").unwrap();
        assert_eq!(sampled.marks, vec!["profile.layers".to_string()]);
    }

    /// On a loaded host the hypervisor steals from busy vCPUs: the
    /// bracketed states keep that time, /proc/stat does not count it as
    /// busy. Less steal, the two agree; without it they would not.
    #[test]
    fn the_exact_profile_is_compared_less_the_hypervisors_steal() {
        let mut p = phase(20_000.0, 100.0, 9_000.0);
        p.profile = Some(ProfileReport {
            busy_samples: 20_000,
            busy_ns_per_io: 20_000.0,
            exact: Some(crate::result::ExactCpu {
                busy_ns_per_io: 26_000.0,
                ..Default::default()
            }),
            ..ProfileReport::default()
        });
        let exact = |p: &PhaseResult| {
            let c = phase_checks(p);
            c.into_iter()
                .find(|c| c.a_source == "profile.exact")
                .unwrap()
        };
        assert!(!exact(&p).agree);
        p.cpu.as_mut().unwrap().sources.steal_ns = 6_000.0;
        let e = exact(&p);
        assert!(e.agree, "{e:?}");
        assert_eq!(e.a, 20_000.0);
    }

    /// A bracketed figure that disagrees says why, as far as the run
    /// measured it: the time split apart (this process, other processes,
    /// steal), then the cause that is as large as half the difference.
    #[test]
    fn a_disagreeing_exact_profile_says_why() {
        use crate::result::{ExactCpu, StateCost};
        let state = |name: &str, ns_per_io: f64| StateCost {
            state: name.into(),
            busy: true,
            ns_per_io,
            ..Default::default()
        };
        let mut p = phase(20_000.0, 100.0, 9_000.0);
        p.cpu.as_mut().unwrap().window_ns = 10_000_000;
        // 24 µs bracketed against 20: 2 CPUs × 10 ms over 1,000 I/Os is
        // 20 µs of window per I/O, 110 % of it accounted for: 2 µs.
        let exact = ExactCpu {
            busy_ns_per_io: 24_000.0,
            covered_pct: 110.0,
            covered_pct_per_cpu: vec![110.0, 110.0],
            states: vec![
                state("user, this process", 3_000.0),
                state("system calls, this process", 6_000.0),
                state("user, other processes", 12_000.0),
                state("hardirq", 1_000.0),
            ],
            ..Default::default()
        };
        p.profile = Some(ProfileReport {
            busy_samples: 20_000,
            busy_ns_per_io: 20_000.0,
            exact: Some(exact),
            ..ProfileReport::default()
        });
        let find = |p: &PhaseResult| {
            phase_checks(p)
                .into_iter()
                .find(|c| c.a_source == "profile.exact")
                .unwrap()
        };
        let k = find(&p);
        assert!(!k.agree);
        assert!(
            k.why[0].starts_with(
                "bracketed per I/O: this process 9000 ns, other processes 12000 ns, kernel \
                 threads 0 ns, interrupts 1000 ns, the rest (block layer and driver of any \
                 process) 2000 ns; steal 0 ns taken out"
            ),
            "{:?}",
            k.why
        );
        assert!(k.why[1].contains("accounted for 110.0 %"), "{:?}", k.why);
        assert!(k.describe().contains("(why: bracketed per I/O"));
        // Every CPU covered: the steal, when as large as half of it.
        let e = p.profile.as_mut().unwrap().exact.as_mut().unwrap();
        e.covered_pct = 100.0;
        p.cpu.as_mut().unwrap().sources.steal_ns = 1_500.0;
        // 24 − 1.5 = 22.5 against 20 ± 2.1: still out, by 2.5.
        let k = find(&p);
        assert!(!k.agree, "{k:?}");
        assert!(
            k.why[1].starts_with("the hypervisor's steal (1500 ns"),
            "{:?}",
            k.why
        );
        // Neither.
        p.cpu.as_mut().unwrap().sources.steal_ns = 0.0;
        let k = find(&p);
        assert!(k.why[1].starts_with("neither"), "{:?}", k.why);
        // Agreeing checks say nothing more.
        p.cpu.as_mut().unwrap().per_io.system_ns = 24_000.0;
        let k = find(&p);
        assert!(k.agree && k.why.is_empty(), "{k:?}");
    }

    #[test]
    fn io_counts_must_match_within_one_percent() {
        let mut p = phase(1.0, 0.0, 1.0);
        p.disks.push(DiskResult {
            name: "loop0".into(),
            read_ios: 990,
            app_ios: 1000,
            ..DiskResult::default()
        });
        assert!(phase_checks(&p).iter().all(|c| c.agree));
        p.disks[0].read_ios = 526;
        assert!(!phase_checks(&p).iter().all(|c| c.agree));
    }

    #[test]
    fn io_split_by_the_kernel_is_checked_by_bytes() {
        // 1,000 reads of 1 MiB, each split into two 512 KiB requests.
        let mut p = phase(1.0, 0.0, 1.0);
        p.disks.push(DiskResult {
            name: "loop0".into(),
            read_ios: 2000,
            read_sectors: 2000 * 1024,
            app_ios: 1000,
            app_bytes: 1000 << 20,
            ..DiskResult::default()
        });
        let k = phase_checks(&p);
        let c = k
            .iter()
            .find(|c| c.quantity.starts_with("KiB on loop0"))
            .unwrap();
        assert!(c.agree && c.quantity.contains("2.0 requests"), "{c:?}");
        // Bytes that do not match are not a split: the count check stands.
        p.disks[0].read_sectors = 1000 * 1024;
        let k = phase_checks(&p);
        assert!(k
            .iter()
            .any(|c| c.quantity.starts_with("I/Os on loop0") && !c.agree));
        // Nor are merged requests.
        p.disks[0].read_sectors = 2000 * 1024;
        p.disks[0].read_merges = 3;
        assert!(phase_checks(&p)
            .iter()
            .any(|c| c.quantity.starts_with("I/Os") && !c.agree));
    }
}
