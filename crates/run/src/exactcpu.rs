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
const GROUPS: [Group; 9] = [
    ("user, this process", &[1], Some(&["ssdready (user)"])),
    ("user, other processes", &[2], Some(&["other user"])),
    ("hardirq and softirq", &[6, 7], Some(&["interrupt/softirq"])),
    (
        "kernel (system calls and above, kernel threads)",
        &[0, 3, 4, 5, 10],
        None,
    ),
    (
        "block layer submission",
        &[11],
        Some(&["block-core", "io-scheduler"]),
    ),
    ("driver submission and return", &[12], Some(&["driver"])),
    ("block completion", &[13], Some(&[])),
    ("idle loop (not halted)", &[8], Some(&[])),
    ("idle", &IDLE_STATES, Some(&["idle"])),
];

/// The idle group's index in [`GROUPS`].
const IDLE_GROUP: usize = 8;
/// The groups the block tracepoints bracket: their layer rows are named
/// after the group, the samples only splitting it.
const BLOCK_GROUPS: [usize; 3] = [4, 5, 6];
/// The block tracepoints: the three block groups are empty without them.
const BLOCK_TRACEPOINTS: [&str; 2] = ["block_rq_issue", "block_io_done"];

/// The group of a sampled layer; without the block tracepoints (`block`
/// false) the block layers stay in the kernel's group.
fn group_of(layer: &str, block: bool) -> usize {
    GROUPS
        .iter()
        .position(|(_, _, layers)| layers.is_some_and(|l| l.contains(&layer)))
        .filter(|g| block || !BLOCK_GROUPS.contains(g))
        .unwrap_or(3)
}

/// What the tracepoints cannot bracket exactly, for the run's output.
fn limits(tracepoints: &[String]) -> Vec<String> {
    let has = |t: &str| tracepoints.iter().any(|x| x == t);
    let mut v = Vec::new();
    if BLOCK_TRACEPOINTS.iter().all(|t| has(t)) {
        v.push(
            "driver submission and return: from block_rq_issue (the driver stamps it as its \
             queue_rq starts) to the context's next event; no tracepoint marks the driver's \
             return, so the block layer's and the caller's code after it up to that event \
             (a context switch, the system call's exit) is in it"
                .into(),
        );
        v.push(
            "block layer submission: a request added to a plug list that already holds one \
             fires no block_plug, so the submitter's code up to its next event is charged to \
             the block layer; a task switched out inside the block layer (waiting for a tag) \
             resumes charged to its system call"
                .into(),
        );
        v.push(
            "block layer submission and driver rows split their bracketed time by the sampled \
             block-core, io-scheduler and driver layers, whose samples come from every \
             context those functions run in"
                .into(),
        );
    } else {
        v.push(format!(
            "no block tracepoints ({}) here: block layer submission, driver and completion \
             stay in the system call and kernel-thread states",
            BLOCK_TRACEPOINTS.join(", ")
        ));
    }
    if !has("io_uring_submit_req") {
        v.push(
            "no io_uring_submit_req tracepoint: io_uring's code between plugged requests \
             is charged to the block layer"
                .into(),
        );
    }
    v
}

/// Per-I/O and share-of-busy arithmetic over one window: the I/O count,
/// the busy states' total (ns) and the TSC's rate for clocks.
struct Per {
    ios: u64,
    busy_ns: u64,
    tsc_hz: Option<f64>,
}

impl Per {
    /// `ns` over the window's I/Os (0 without I/Os).
    fn io(&self, ns: f64) -> f64 {
        if self.ios > 0 {
            ns / self.ios as f64
        } else {
            0.0
        }
    }

    /// `ns` as a percentage of the busy time (0 without busy time).
    fn share(&self, ns: f64) -> f64 {
        if self.busy_ns > 0 {
            100.0 * ns / self.busy_ns as f64
        } else {
            0.0
        }
    }

    /// Per-I/O time in TSC clocks, when the rate is known and I/Os ran.
    fn clocks(&self, ns_per_io: f64) -> Option<f64> {
        self.tsc_hz
            .filter(|_| self.ios > 0)
            .map(|h| ns_per_io * h / 1e9)
    }
}

/// The exact figures from the states' time over the window (`delta`, ns,
/// every CPU), beside the sampled profile `p`: `window_ns` (the time
/// between the states' two readings) × `cpus` is what the states should
/// add up to.
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
    cpu_totals: &[u64],
) -> ExactCpu {
    let block = BLOCK_TRACEPOINTS
        .iter()
        .all(|t| tracepoints.iter().any(|x| x == t));
    let busy_ns: u64 = (0..STATES.len())
        .filter(|i| !IDLE_STATES.contains(i))
        .map(|i| delta[i])
        .sum();
    let per = Per {
        ios,
        busy_ns,
        tsc_hz,
    };
    let sampled = sampled_per_group(p, ios, block);
    let exact: Vec<f64> = GROUPS
        .iter()
        .map(|(_, st, _)| st.iter().map(|&i| delta[i] as f64).sum())
        .collect();
    let total: u64 = delta.iter().sum();
    let whole = window_ns as f64 * cpus.max(1) as f64;
    ExactCpu {
        source: "eBPF on tracepoints (raw_syscalls, irq, irq_vectors, sched_switch, cpu_idle, \
                 block, io_uring): each CPU's time between events charged to its state, \
                 bpf_ktime_get_ns"
            .into(),
        limits: limits(&tracepoints),
        tracepoints,
        missing_tracepoints: missing,
        states: state_costs(delta, &per),
        busy_ns_per_io: per.io(busy_ns as f64),
        covered_pct: if whole > 0.0 {
            100.0 * total as f64 / whole
        } else {
            0.0
        },
        covered_pct_per_cpu: cpu_totals
            .iter()
            .filter(|&&t| t > 0 && window_ns > 0)
            .map(|&t| 100.0 * t as f64 / window_ns as f64)
            .collect(),
        layers: layer_costs(p, block, &sampled, &exact, &per),
        sampled_vs_exact: sampled_vs_exact(block, &sampled, &exact, &per),
    }
}

/// Every state's time over the window, per I/O and as a share of busy.
fn state_costs(delta: &[u64; STATES.len()], per: &Per) -> Vec<StateCost> {
    STATES
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let busy = !IDLE_STATES.contains(&i);
            StateCost {
                state: name.to_string(),
                busy,
                cpu_ns: delta[i],
                ns_per_io: per.io(delta[i] as f64),
                share_of_busy_pct: if busy {
                    per.share(delta[i] as f64)
                } else {
                    0.0
                },
            }
        })
        .collect()
}

/// Sampled time per group, ns (per I/O × I/Os); idle takes the gaps no
/// sample stands for.
fn sampled_per_group(p: &ProfileReport, ios: u64, block: bool) -> [f64; GROUPS.len()] {
    let mut sampled = [0f64; GROUPS.len()];
    for l in &p.layers {
        sampled[group_of(&l.layer, block)] += l.ns_per_io * ios as f64;
    }
    sampled[IDLE_GROUP] += (p.late_timer_ns + p.unsampled_ns) as f64;
    sampled
}

/// The sampled layers scaled to their group's exact time, a row for each
/// busy group without samples, costliest first.
fn layer_costs(
    p: &ProfileReport,
    block: bool,
    sampled: &[f64; GROUPS.len()],
    exact: &[f64],
    per: &Per,
) -> Vec<LayerCost> {
    let mut layers = Vec::new();
    for (g, (gname, _, _)) in GROUPS.iter().enumerate() {
        let mine: Vec<&LayerCost> = p
            .layers
            .iter()
            .filter(|l| group_of(&l.layer, block) == g)
            .collect();
        let scale = if sampled[g] > 0.0 {
            exact[g] / sampled[g]
        } else {
            0.0
        };
        for l in &mine {
            let ns = l.ns_per_io * scale;
            layers.push(LayerCost {
                layer: if BLOCK_GROUPS.contains(&g) {
                    format!("{gname}: {}", l.layer)
                } else {
                    l.layer.clone()
                },
                samples: l.samples,
                share_of_busy_pct: if g == IDLE_GROUP {
                    0.0
                } else {
                    per.share(ns * per.ios as f64)
                },
                share_error_pct: l.share_error_pct,
                ns_per_io: ns,
                clocks_per_io: per.clocks(ns),
            });
        }
        if mine.is_empty() && exact[g] > 0.0 && g != IDLE_GROUP {
            layers.push(unsampled_group(g, exact[g], per));
        }
    }
    layers.sort_by(|a, b| b.ns_per_io.total_cmp(&a.ns_per_io));
    layers
}

/// The row of a busy group that has exact time but no sampled layer.
fn unsampled_group(g: usize, exact_ns: f64, per: &Per) -> LayerCost {
    let ns = per.io(exact_ns);
    let why = if GROUPS[g].2.is_some_and(|l| l.is_empty()) {
        "bracketed, not split"
    } else {
        "no samples"
    };
    LayerCost {
        layer: format!("{} ({why})", GROUPS[g].0),
        samples: 0,
        share_of_busy_pct: per.share(exact_ns),
        share_error_pct: 0.0,
        ns_per_io: ns,
        clocks_per_io: per.clocks(ns),
    }
}

/// Each group's sampled and exact time per I/O side by side (the block
/// groups only with the block tracepoints).
fn sampled_vs_exact(
    block: bool,
    sampled: &[f64; GROUPS.len()],
    exact: &[f64],
    per: &Per,
) -> Vec<SampledVsExact> {
    GROUPS
        .iter()
        .enumerate()
        .filter(|(g, _)| block || !BLOCK_GROUPS.contains(g))
        .map(|(g, (name, st, names))| SampledVsExact {
            group: name.to_string(),
            sampled_ns_per_io: per.io(sampled[g]),
            exact_ns_per_io: per.io(exact[g]),
            sampled_layers: match names {
                Some(n) => n.iter().map(|s| s.to_string()).collect(),
                None => vec!["every other busy layer".into()],
            },
            exact_states: st.iter().map(|&i| STATES[i].to_string()).collect(),
        })
        .collect()
}

/// Per-CPU snapshots' difference: `after` − `before` state by state,
/// summed over the CPUs, and each CPU's states' total over the window.
pub fn delta(
    before: &[[u64; STATES.len()]],
    after: &[[u64; STATES.len()]],
) -> ([u64; STATES.len()], Vec<u64>) {
    let mut d = [0u64; STATES.len()];
    let mut per_cpu = Vec::with_capacity(after.len());
    for (b, a) in before.iter().zip(after) {
        let mut total = 0;
        for i in 0..STATES.len() {
            let x = a[i].saturating_sub(b[i]);
            d[i] += x;
            total += x;
        }
        per_cpu.push(total);
    }
    (d, per_cpu)
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
        let e = build(&d, 14_000_000, 2, ios, Some(2e9), &p, vec![], vec![], &[]);
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
        // Without the block tracepoints there are no block groups.
        assert_eq!(e.sampled_vs_exact.len(), GROUPS.len() - BLOCK_GROUPS.len());
        let k = &e.sampled_vs_exact[3];
        assert_eq!((k.sampled_ns_per_io, k.exact_ns_per_io), (6_000.0, 9_000.0));
        // Idle, sampled: its layer plus the late-timer gaps.
        let idle = e.sampled_vs_exact.iter().find(|g| g.group == "idle");
        assert_eq!(idle.unwrap().sampled_ns_per_io, 21_000.0);
        assert!(
            e.limits[0].contains("no block tracepoints"),
            "{:?}",
            e.limits
        );
    }

    /// With the block tracepoints, the block layer's and the driver's
    /// bracketed time come out of the kernel's group: the block-core and
    /// driver samples split only their own group, the rest of the kernel
    /// keeps the other kernel layers, the completion has a row of its own,
    /// and the layers still add up to the exact busy time.
    #[test]
    fn the_block_states_take_the_block_layers() {
        let p = ProfileReport {
            layers: vec![
                layer("block-core", 3_000.0, 30),
                layer("io-scheduler", 1_000.0, 10),
                layer("driver", 2_000.0, 20),
                layer("syscall", 2_000.0, 20),
                layer("idle", 20_000.0, 200),
            ],
            ..ProfileReport::default()
        };
        let mut d = [0u64; STATES.len()];
        d[3] = 4_000_000; // system calls, ours
        d[11] = 2_000_000; // block layer submission
        d[12] = 1_000_000; // driver
        d[13] = 500_000; // block completion
        d[9] = 12_500_000; // idle
        let tps: Vec<String> = ["sys_enter", "block_rq_issue", "block_io_done"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let cpus = [10_000_000, 10_000_000, 0];
        let e = build(&d, 10_000_000, 2, 1_000, None, &p, tps, vec![], &cpus);
        // An offline CPU (no time at all) is left out.
        assert_eq!(e.covered_pct_per_cpu, vec![100.0, 100.0]);
        let ns = |n: &str| {
            e.layers
                .iter()
                .find(|l| l.layer == n)
                .unwrap_or_else(|| panic!("no {n}: {:?}", e.layers))
                .ns_per_io
        };
        assert!((ns("block layer submission: block-core") - 1_500.0).abs() < 1e-9);
        assert!((ns("block layer submission: io-scheduler") - 500.0).abs() < 1e-9);
        assert!((ns("driver submission and return: driver") - 1_000.0).abs() < 1e-9);
        assert!((ns("block completion (bracketed, not split)") - 500.0).abs() < 1e-9);
        assert!((ns("syscall") - 4_000.0).abs() < 1e-9);
        let busy: f64 = e
            .layers
            .iter()
            .filter(|l| l.layer != "idle")
            .map(|l| l.ns_per_io)
            .sum();
        assert!((busy - 7_500.0).abs() < 1e-6, "{busy}");
        let g = |n: &str| e.sampled_vs_exact.iter().find(|g| g.group == n).unwrap();
        let b = g("block layer submission");
        assert_eq!((b.sampled_ns_per_io, b.exact_ns_per_io), (4_000.0, 2_000.0));
        assert_eq!(b.exact_states, vec!["block layer submission".to_string()]);
        assert_eq!(
            g("kernel (system calls and above, kernel threads)").sampled_ns_per_io,
            2_000.0
        );
        assert!(e
            .limits
            .iter()
            .any(|l| l.contains("no tracepoint marks the driver's")));
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
        let (d, per_cpu) = delta(&[a, [0; STATES.len()]], &[b, b]);
        assert_eq!(d[0], 2 + 7);
        assert_eq!(d[2], 7);
        assert_eq!(
            per_cpu,
            vec![2 * (STATES.len() as u64 - 1), 7 * STATES.len() as u64]
        );
    }
}
