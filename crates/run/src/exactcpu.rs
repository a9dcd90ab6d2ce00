//! `--profile=exact`: every CPU's time by state, bracketed by tracepoints
//! (`ssdready_io::bpf::cpustate`), beside the sampled profile.
//!
//! Why: on a KVM guest at QD 1 a vCPU halts and wakes ~100,000 times a
//! second, its sampling timer skips periods (the busy bursts inside a
//! skipped gap are lost), and the idle task's work outside the halt, which
//! /proc/stat counts as busy, is sampled as idle: the sampled busy time was
//! 19–29 % short of the exact whole-system figure (docs/measurement.md,
//! "Where the CPU goes at QD 1 on a VM"). Bracketed time does not depend on where a timer fires: the
//! tracepoints charge every nanosecond of every CPU to one state. The
//! samples then only split each group of states into layers and functions.

use ssdready_core::result::{ExactCpu, LayerCost, ProfileReport, SampledVsExact, StateCost};
use ssdready_core::SpecError;
use ssdready_io::bpf::cpustate::{self, CpuStates, TaskLayout, IDLE_STATES, STATES};

/// `--profile`'s value: none or `sampled` (the sampler alone), `exact`
/// (the sampler and the bracketing programs).
pub fn parse_mode(v: Option<&str>) -> Result<bool, SpecError> {
    match v {
        None | Some("sampled") => Ok(false),
        Some("exact") => Ok(true),
        Some(x) => Err(SpecError::new(
            "profile",
            format!("'{x}' is not a profile mode (allowed: sampled, exact)"),
        )),
    }
}

/// Load the programs for this process and give every CPU a known state,
/// or None with a warning that says what is missing.
pub fn start(warnings: &mut Vec<String>) -> Option<CpuStates> {
    let layout = ssdready_probe::btf::Btf::vmlinux()
        .map_err(|e| e.to_string())
        .and_then(|btf| {
            let f = |name: &str| match btf.field("task_struct", name) {
                Some((off, 4)) => Ok(off),
                Some((_, sz)) => Err(format!("task_struct.{name} is {sz} bytes, expected 4")),
                None => Err(format!("the kernel's BTF has no task_struct.{name}")),
            };
            Ok(TaskLayout {
                flags: f("flags")?,
                pid: f("pid")?,
                tgid: f("tgid")?,
            })
        });
    let started =
        layout.and_then(|l| CpuStates::start(std::process::id(), &l).map_err(|e| e.to_string()));
    match started {
        Ok(s) => {
            cpustate::visit_every_cpu();
            Some(s)
        }
        Err(e) => {
            warnings.push(format!(
                "--profile=exact: the tracepoint programs could not be loaded ({e}{}); \
                 only the sampled profile is shown",
                if crate::sys::is_root() {
                    ""
                } else {
                    "; loading them needs root"
                }
            ));
            None
        }
    }
}

/// The sampled layers each group of exact states corresponds to: a group's
/// name, its states, and the sampled layers in it (`None`: every busy layer
/// no other group names).
type Group = (
    &'static str,
    &'static [usize],
    Option<&'static [&'static str]>,
);
const GROUPS: [Group; 6] = [
    ("user, this process", &[1], Some(&["ssdready (user)"])),
    ("user, other processes", &[2], Some(&["other user"])),
    ("hardirq and softirq", &[6, 7], Some(&["interrupt/softirq"])),
    (
        "kernel (system calls, kernel threads)",
        &[0, 3, 4, 5, 10],
        None,
    ),
    ("idle loop (not halted)", &[8], Some(&[])),
    ("idle", &IDLE_STATES, Some(&["idle"])),
];

/// The idle group's index in [`GROUPS`].
const IDLE_GROUP: usize = 5;

fn group_of(layer: &str) -> usize {
    GROUPS
        .iter()
        .position(|(_, _, layers)| layers.is_some_and(|l| l.contains(&layer)))
        .unwrap_or(3)
}

/// The exact figures from the states' time over the window (`delta`, ns,
/// every CPU), beside the sampled profile `p`: `window_ns` × `cpus` is
/// what the states should add up to.
#[allow(clippy::too_many_arguments)]
pub fn build(
    delta: &[u64; STATES.len()],
    window_ns: u64,
    cpus: u32,
    ios: u64,
    tsc_hz: Option<f64>,
    p: &ProfileReport,
    tracepoints: Vec<String>,
    missing: Vec<String>,
) -> ExactCpu {
    let per = |ns: f64| if ios > 0 { ns / ios as f64 } else { 0.0 };
    let busy_ns: u64 = (0..STATES.len())
        .filter(|i| !IDLE_STATES.contains(i))
        .map(|i| delta[i])
        .sum();
    let share = |ns: f64| {
        if busy_ns > 0 {
            100.0 * ns / busy_ns as f64
        } else {
            0.0
        }
    };
    let states = STATES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let busy = !IDLE_STATES.contains(&i);
            StateCost {
                state: name.to_string(),
                busy,
                cpu_ns: delta[i],
                ns_per_io: per(delta[i] as f64),
                share_of_busy_pct: if busy { share(delta[i] as f64) } else { 0.0 },
            }
        })
        .collect();
    // Sampled time per group, ns (per I/O × I/Os); idle takes the gaps no
    // sample stands for.
    let mut sampled = [0f64; GROUPS.len()];
    for l in &p.layers {
        sampled[group_of(&l.layer)] += l.ns_per_io * ios as f64;
    }
    sampled[IDLE_GROUP] += (p.late_timer_ns + p.unsampled_ns) as f64;
    let exact: Vec<f64> = GROUPS
        .iter()
        .map(|(_, st, _)| st.iter().map(|&i| delta[i] as f64).sum())
        .collect();
    let clocks = |ns_per_io: f64| tsc_hz.filter(|_| ios > 0).map(|h| ns_per_io * h / 1e9);
    let mut layers = Vec::new();
    for (g, (gname, _, _)) in GROUPS.iter().enumerate() {
        let mine: Vec<&LayerCost> = p
            .layers
            .iter()
            .filter(|l| group_of(&l.layer) == g)
            .collect();
        let scale = if sampled[g] > 0.0 {
            exact[g] / sampled[g]
        } else {
            0.0
        };
        for l in &mine {
            let ns = l.ns_per_io * scale;
            layers.push(LayerCost {
                layer: l.layer.clone(),
                samples: l.samples,
                share_of_busy_pct: if g == IDLE_GROUP {
                    0.0
                } else {
                    share(ns * ios as f64)
                },
                share_error_pct: l.share_error_pct,
                ns_per_io: ns,
                clocks_per_io: clocks(ns),
            });
        }
        if mine.is_empty() && exact[g] > 0.0 && g != IDLE_GROUP {
            let ns = per(exact[g]);
            layers.push(LayerCost {
                layer: format!("{gname} (no samples)"),
                samples: 0,
                share_of_busy_pct: share(exact[g]),
                share_error_pct: 0.0,
                ns_per_io: ns,
                clocks_per_io: clocks(ns),
            });
        }
    }
    layers.sort_by(|a, b| b.ns_per_io.total_cmp(&a.ns_per_io));
    let total: u64 = delta.iter().sum();
    let whole = window_ns as f64 * cpus.max(1) as f64;
    ExactCpu {
        source: "eBPF on tracepoints (raw_syscalls, irq, irq_vectors, sched_switch, cpu_idle): \
                 each CPU's time between events charged to its state, bpf_ktime_get_ns"
            .into(),
        tracepoints,
        missing_tracepoints: missing,
        states,
        busy_ns_per_io: per(busy_ns as f64),
        covered_pct: if whole > 0.0 {
            100.0 * total as f64 / whole
        } else {
            0.0
        },
        layers,
        sampled_vs_exact: GROUPS
            .iter()
            .enumerate()
            .map(|(g, (name, _, _))| SampledVsExact {
                group: name.to_string(),
                sampled_ns_per_io: per(sampled[g]),
                exact_ns_per_io: per(exact[g]),
            })
            .collect(),
    }
}

/// `after` − `before`, state by state.
pub fn delta(before: &[u64; STATES.len()], after: &[u64; STATES.len()]) -> [u64; STATES.len()] {
    let mut d = [0u64; STATES.len()];
    for i in 0..STATES.len() {
        d[i] = after[i].saturating_sub(before[i]);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(name: &str, ns_per_io: f64, samples: u64) -> LayerCost {
        LayerCost {
            layer: name.into(),
            samples,
            ns_per_io,
            ..LayerCost::default()
        }
    }

    /// A profile that saw 2/3 of the kernel time and too much idle: the
    /// kernel layers are scaled up by 1.5 keeping their ratio, the user
    /// layer to its exact time, and the busy layers add up to the exact
    /// busy total; an interrupt group with no samples gets its own row.
    #[test]
    fn sampled_layers_take_their_group_s_exact_time() {
        let p = ProfileReport {
            layers: vec![
                layer("block-core", 4_000.0, 40),
                layer("driver", 2_000.0, 20),
                layer("ssdready (user)", 1_000.0, 10),
                layer("idle", 20_000.0, 200),
            ],
            late_timer_ns: 1_000_000,
            ..ProfileReport::default()
        };
        let ios = 1_000;
        let mut d = [0u64; STATES.len()];
        d[3] = 6_000_000; // system calls, ours
        d[5] = 3_000_000; // kernel threads
        d[1] = 2_000_000; // user, ours
        d[6] = 500_000; // hardirq
        d[9] = 16_500_000; // idle
        let e = build(&d, 14_000_000, 2, ios, Some(2e9), &p, vec![], vec![]);
        assert!((e.covered_pct - 100.0).abs() < 1e-9, "{}", e.covered_pct);
        assert!((e.busy_ns_per_io - 11_500.0).abs() < 1e-9);
        let ns = |n: &str| e.layers.iter().find(|l| l.layer == n).unwrap().ns_per_io;
        assert!((ns("block-core") - 6_000.0).abs() < 1e-9);
        assert!((ns("driver") - 3_000.0).abs() < 1e-9);
        assert!((ns("ssdready (user)") - 2_000.0).abs() < 1e-9);
        assert!((ns("hardirq and softirq (no samples)") - 500.0).abs() < 1e-9);
        let busy: f64 = e
            .layers
            .iter()
            .filter(|l| l.layer != "idle")
            .map(|l| l.ns_per_io)
            .sum();
        assert!((busy - e.busy_ns_per_io).abs() < 1e-6, "{busy}");
        let shares: f64 = e.layers.iter().map(|l| l.share_of_busy_pct).sum();
        assert!((shares - 100.0).abs() < 1e-6, "{shares}");
        let k = &e.sampled_vs_exact[3];
        assert_eq!((k.sampled_ns_per_io, k.exact_ns_per_io), (6_000.0, 9_000.0));
        // Idle, sampled: its layer plus the late-timer gaps.
        assert_eq!(e.sampled_vs_exact[IDLE_GROUP].sampled_ns_per_io, 21_000.0);
    }

    #[test]
    fn the_profile_mode_is_sampled_or_exact() {
        assert!(!parse_mode(None).unwrap());
        assert!(!parse_mode(Some("sampled")).unwrap());
        assert!(parse_mode(Some("exact")).unwrap());
        assert!(parse_mode(Some("fast")).is_err());
    }

    #[test]
    fn a_state_that_went_backwards_counts_nothing() {
        let mut a = [5u64; STATES.len()];
        let b = [7u64; STATES.len()];
        a[2] = 9;
        let d = delta(&a, &b);
        assert_eq!(d[0], 2);
        assert_eq!(d[2], 0);
    }
}
