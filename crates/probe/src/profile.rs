//! `--profile`: where the CPU time of a run goes, by kernel layer — the iolat
//! report of Accardi and Wilcox for every run. System-wide `cpu-clock` samples (one per
//! 1 ms of CPU time at the default 1 kHz) are symbolised through /proc/kallsyms and
//! each is classified into a layer by its kernel call chain, using the rules
//! in `data/layers.rules` (data, not code: unmatched symbols are listed so
//! rules can be added). User-mode samples are "ssdready (user)" for this
//! process and "other user" for the rest.
//!
//! Each sample stands for the CPU time since the previous sample on its CPU
//! (the timer can fire late in a VM and skip periods, so counting samples ×
//! period would undercount); a layer's summed time divided by the I/Os is
//! its ns (and TSC clocks) per I/O. The non-idle layers add up to
//! the whole-system busy time that /proc/stat reports.

use ssdready_core::result::{LayerCost, ProfileReport};
use std::collections::HashMap;

/// The rules file compiled in.
pub const RULES: &str = include_str!("../data/layers.rules");

/// Kernel symbols sorted by address.
pub struct Kallsyms {
    addrs: Vec<u64>,
    names: Vec<String>,
}

impl Kallsyms {
    /// Parse /proc/kallsyms text (text symbols only).
    pub fn parse(text: &str) -> Kallsyms {
        let mut v: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                let a = u64::from_str_radix(it.next()?, 16).ok()?;
                let t = it.next()?;
                let n = it.next()?;
                (matches!(t, "T" | "t" | "W" | "w") && a != 0).then(|| (a, n.to_string()))
            })
            .collect();
        v.sort_unstable_by_key(|x| x.0);
        let (addrs, names) = v.into_iter().unzip();
        Kallsyms { addrs, names }
    }

    /// Load /proc/kallsyms; None when addresses are hidden (kptr_restrict).
    pub fn load() -> Option<Kallsyms> {
        let k = Kallsyms::parse(&std::fs::read_to_string("/proc/kallsyms").ok()?);
        (!k.addrs.is_empty()).then_some(k)
    }

    /// The symbol containing `addr`.
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.addrs.partition_point(|&a| a <= addr);
        (i > 0).then(|| self.names[i - 1].as_str())
    }
}

/// The layer rules.
pub struct Rules {
    rules: Vec<(String, Vec<String>)>,
}

impl Rules {
    /// Parse rules text (see `data/layers.rules`).
    pub fn parse(text: &str) -> Rules {
        let rules = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                Some((it.next()?.to_string(), it.map(String::from).collect()))
            })
            .collect();
        Rules { rules }
    }

    /// The layer of one symbol, if a rule matches.
    pub fn layer_of(&self, sym: &str) -> Option<&str> {
        self.rules.iter().find_map(|(layer, pats)| {
            pats.iter()
                .any(|p| match p.strip_prefix('=') {
                    Some(exact) => sym == exact,
                    None => sym.starts_with(p.as_str()),
                })
                .then_some(layer.as_str())
        })
    }
}

/// Raw samples kept during a run and classified after it, so the
/// classification costs nothing inside the measured window.
#[derive(Default)]
pub struct RawSamples {
    /// (user, pid, ip, weight_ns, callchain start, callchain end) per sample.
    samples: Vec<(bool, u32, u64, u64, u32, u32)>,
    frames: Vec<u64>,
}

impl RawSamples {
    /// Keep one sample. `timing`: it stands for `weight_ns` of CPU; else it
    /// only carries a call chain to learn callers from.
    pub fn push(
        &mut self,
        user: bool,
        pid: u32,
        ip: u64,
        callchain: &[u64],
        weight_ns: u64,
        timing: bool,
    ) {
        let a = self.frames.len() as u32;
        self.frames.extend_from_slice(callchain);
        let w = if timing { weight_ns } else { NOT_TIMING };
        self.samples
            .push((user, pid, ip, w, a, self.frames.len() as u32));
    }

    /// Classify everything kept: first learn callers from the chain
    /// samples, then account the timing samples.
    pub fn classify_into(&self, c: &mut Classifier) {
        for &(user, _, ip, w, a, b) in &self.samples {
            if w == NOT_TIMING && !user {
                c.learn(ip, &self.frames[a as usize..b as usize]);
            }
        }
        for &(user, pid, ip, w, a, b) in &self.samples {
            if w != NOT_TIMING {
                c.add(user, pid, ip, &self.frames[a as usize..b as usize], w);
            }
        }
    }
}

/// Marks a chain-only sample in [`RawSamples`].
const NOT_TIMING: u64 = u64::MAX;

/// Accumulates samples into layers.
pub struct Classifier {
    syms: Kallsyms,
    /// ssdready's own functions, for its user-mode samples.
    exe: Option<crate::exesyms::ExeSymbols>,
    rules: Rules,
    own_pid: u32,
    cache: HashMap<u64, Option<String>>,
    /// Per layer: (samples, CPU ns).
    layers: HashMap<String, (u64, u64)>,
    leaf: HashMap<(String, String), u64>,
    unmatched: HashMap<String, u64>,
    samples: u64,
    /// From chain samples: for a function whose own name gives no layer,
    /// how often each layer was found among its callers.
    learned: HashMap<String, HashMap<String, u64>>,
    /// Timing samples classified from the learned caller mix, and those no
    /// chain sample had taught anything about.
    pub inferred: u64,
    pub unlearned: u64,
    chain_every: u64,
}

const USER_OURS: &str = "ssdready (user)";
const USER_OTHER: &str = "other user";
const OTHER_KERNEL: &str = "other kernel";

/// Half the 95 % confidence interval of a layer's share `p` (0–1) of `n`
/// busy samples, in percentage points: each sample falls in the layer or
/// not, so the share is a binomial proportion (the samples' unequal weights
/// are ignored: they are capped at 2 periods).
fn share_error_pct(p: f64, n: u64) -> f64 {
    if n == 0 || p <= 0.0 {
        return 0.0;
    }
    100.0 * 1.96 * (p * (1.0 - p).max(0.0) / n as f64).sqrt()
}

impl Classifier {
    /// A classifier for samples of this process (`own_pid`) and the rest.
    pub fn new(syms: Kallsyms, rules: Rules, own_pid: u32) -> Self {
        Classifier {
            syms,
            exe: None,
            rules,
            own_pid,
            cache: HashMap::new(),
            layers: HashMap::new(),
            leaf: HashMap::new(),
            unmatched: HashMap::new(),
            samples: 0,
            learned: HashMap::new(),
            inferred: 0,
            unlearned: 0,
            chain_every: 1,
        }
    }

    /// Say that one sample in `n` carried a call chain (for the report).
    pub fn with_chain_every(mut self, n: u64) -> Self {
        self.chain_every = n;
        self
    }

    /// Name this process's user-mode samples by function of `exe`.
    pub fn with_exe_symbols(mut self, exe: Option<crate::exesyms::ExeSymbols>) -> Self {
        self.exe = exe;
        self
    }

    /// The layer of a kernel call chain (innermost first): that of its
    /// innermost frame matching a rule other than `transparent`. Unmatched
    /// frames on the way are counted.
    fn walk(&mut self, frames: &[u64]) -> String {
        for &f in frames {
            let (sym, layer) = self.layer_at(f);
            match layer.as_deref() {
                Some("transparent") => continue,
                Some(l) => return l.to_string(),
                None => {
                    *self.unmatched.entry(sym).or_default() += 1;
                    continue;
                }
            }
        }
        OTHER_KERNEL.into()
    }

    /// Learn from one chain sample (weight 0) which layer the callers of its
    /// innermost function belong to.
    pub fn learn(&mut self, ip: u64, callchain: &[u64]) {
        let ip_only = [ip];
        let frames = if callchain.is_empty() {
            &ip_only[..]
        } else {
            callchain
        };
        let (leaf, own) = self.layer_at(frames[0]);
        if own.as_deref().is_some_and(|l| l != "transparent") {
            return; // its own name decides: nothing to learn
        }
        let layer = self.walk(frames);
        *self
            .learned
            .entry(leaf)
            .or_default()
            .entry(layer)
            .or_default() += 1;
    }

    /// One sample (counted `samples` times: 0 for a share of one) of
    /// `weight_ns` CPU time in `layer`.
    fn add_time(&mut self, layer: &str, samples: u64, weight_ns: u64) {
        let e = self.layers.entry(layer.to_string()).or_default();
        e.0 += samples;
        e.1 += weight_ns;
    }

    /// One sample in `layer` whose innermost function is `leaf`.
    fn account(&mut self, layer: &str, leaf: String, weight_ns: u64) {
        *self.leaf.entry((leaf, layer.to_string())).or_default() += 1;
        self.add_time(layer, 1, weight_ns);
    }

    fn layer_at(&mut self, ip: u64) -> (String, Option<String>) {
        let sym = self.syms.lookup(ip).unwrap_or("?").to_string();
        let layer = self
            .cache
            .entry(ip)
            .or_insert_with(|| self.rules.layer_of(&sym).map(String::from))
            .clone();
        (sym, layer)
    }

    /// Count one sample standing for `weight_ns` of CPU: `user` mode, its
    /// pid, its IP and kernel call chain (innermost first).
    pub fn add(&mut self, user: bool, pid: u32, ip: u64, callchain: &[u64], weight_ns: u64) {
        self.samples += 1;
        if user {
            if pid == self.own_pid {
                let f = self
                    .exe
                    .as_ref()
                    .and_then(|x| x.lookup(ip))
                    .unwrap_or("?")
                    .to_string();
                self.account(USER_OURS, f, weight_ns);
            } else {
                self.add_time(USER_OTHER, 1, weight_ns);
            }
            return;
        }
        if !callchain.is_empty() {
            let (leaf, _) = self.layer_at(callchain[0]);
            let layer = self.walk(callchain);
            self.account(&layer, leaf, weight_ns);
            return;
        }
        // An IP alone: its function's own layer, else the mix of layers its
        // callers had in the chain samples, weight shared in proportion.
        let (leaf, own) = self.layer_at(ip);
        if let Some(l) = own.as_deref().filter(|l| *l != "transparent") {
            let l = l.to_string();
            self.account(&l, leaf, weight_ns);
            return;
        }
        let Some(mix) = self.learned.get(&leaf).filter(|m| !m.is_empty()) else {
            self.unlearned += 1;
            if own.is_none() {
                *self.unmatched.entry(leaf.clone()).or_default() += 1;
            }
            self.account(OTHER_KERNEL, leaf, weight_ns);
            return;
        };
        self.inferred += 1;
        let total: u64 = mix.values().sum();
        let mut parts: Vec<(String, u64)> = mix.iter().map(|(l, &c)| (l.clone(), c)).collect();
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        let mut given = 0u64;
        for (i, (l, c)) in parts.iter().enumerate() {
            // The last share takes the rounding remainder: weights add up.
            let w = if i + 1 == parts.len() {
                weight_ns - given
            } else {
                weight_ns * c / total
            };
            given += w;
            // The sample counts once, in its likeliest layer.
            if i == 0 {
                self.account(l, leaf.clone(), w);
            } else {
                self.add_time(l, 0, w);
            }
        }
    }

    /// The report: `period_ns` nominal CPU per sample, `ios` I/Os, TSC `hz`,
    /// `lost` records, `late_ns` of gaps charged to no sample. Layer costs
    /// use each sample's measured weight.
    pub fn report(
        &self,
        period_ns: u64,
        ios: u64,
        tsc_hz: Option<f64>,
        lost: u64,
        late_ns: u64,
    ) -> ProfileReport {
        let (idle_n, idle_ns) = self.layers.get("idle").copied().unwrap_or((0, 0));
        let total_ns: u64 = self.layers.values().map(|v| v.1).sum();
        let busy = self.samples - idle_n;
        let busy_ns = total_ns - idle_ns;
        let named_ns = busy_ns - self.layers.get(OTHER_KERNEL).map(|v| v.1).unwrap_or(0);
        // Per I/O only when an I/O completed (0 otherwise, not the whole cost).
        let per = |ns: u64| if ios > 0 { ns as f64 / ios as f64 } else { 0.0 };
        let mut by_cost: Vec<(&String, u64, u64)> = self
            .layers
            .iter()
            .map(|(name, &(s, ns))| (name, s, ns))
            .collect();
        by_cost.sort_by_key(|&(_, _, ns)| std::cmp::Reverse(ns));
        let layers: Vec<LayerCost> = by_cost
            .into_iter()
            .map(|(name, s, ns)| {
                let per_io = per(ns);
                let share = if name == "idle" || busy_ns == 0 {
                    0.0
                } else {
                    ns as f64 / busy_ns as f64
                };
                LayerCost {
                    layer: name.clone(),
                    samples: s,
                    share_of_busy_pct: 100.0 * share,
                    share_error_pct: share_error_pct(share, busy),
                    ns_per_io: per_io,
                    clocks_per_io: tsc_hz.filter(|_| ios > 0).map(|h| per_io * h / 1e9),
                }
            })
            .collect();
        let mut top: Vec<(String, String, u64)> = self
            .leaf
            .iter()
            .map(|((s, l), &c)| (s.clone(), l.clone(), c))
            .collect();
        top.sort_by_key(|x| std::cmp::Reverse(x.2));
        top.truncate(25);
        let mut unmatched: Vec<(String, u64)> = self
            .unmatched
            .iter()
            .map(|(s, &c)| (s.clone(), c))
            .collect();
        unmatched.sort_by_key(|x| std::cmp::Reverse(x.1));
        unmatched.truncate(25);
        ProfileReport {
            period_ns,
            samples: self.samples,
            lost,
            busy_samples: busy,
            chain_every: self.chain_every,
            inferred_samples: self.inferred,
            unlearned_samples: self.unlearned,
            named_share_of_busy_pct: if busy_ns > 0 {
                100.0 * named_ns as f64 / busy_ns as f64
            } else {
                0.0
            },
            busy_ns_per_io: per(busy_ns),
            late_timer_ns: late_ns,
            unsampled_ns: 0,
            layers,
            exact: None,
            top_functions: top,
            unmatched_symbols: unmatched,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SYMS: &str = "ffffffff81000000 T _stext\nffffffff81001000 T blk_mq_submit_bio\n\
        ffffffff81002000 T _raw_spin_lock\nffffffff81003000 T do_idle\nffffffff81004000 T io_issue_sqe\n\
        ffffffff81005000 T mystery_fn\nffffffff81006000 T dd_dispatch_request\n";

    #[test]
    fn rules_file_parses_and_orders() {
        let r = Rules::parse(RULES);
        assert_eq!(r.layer_of("blk_mq_submit_bio"), Some("block-core"));
        assert_eq!(
            r.layer_of("blk_mq_sched_dispatch_requests"),
            Some("io-scheduler")
        );
        assert_eq!(r.layer_of("io_schedule"), Some("scheduler/context-switch"));
        assert_eq!(r.layer_of("io_issue_sqe"), Some("io_uring"));
        assert_eq!(r.layer_of("_raw_spin_lock_irqsave"), Some("transparent"));
        assert_eq!(r.layer_of("memset"), Some("page-cache/copy"));
        assert_eq!(r.layer_of("memset_orig"), None);
        assert_eq!(r.layer_of("nothing_like_it"), None);
        // What a loaded machine's other work and the kernel's own upkeep
        // put in the samples (a build beside a profiled run left these
        // unmatched): named, not left over.
        for (sym, layer) in [
            ("rcu_core", "housekeeping"),
            ("cpu_stopper_thread", "housekeeping"),
            ("active_load_balance_cpu_stop", "housekeeping"),
            ("path_openat", "vfs"),
            ("__d_lookup_rcu", "vfs"),
            ("do_nanosleep", "scheduler/context-switch"),
            ("shrink_folio_list", "memory"),
            ("its_return_thunk", "transparent"),
        ] {
            assert_eq!(r.layer_of(sym), Some(layer), "{sym}");
        }
    }

    #[test]
    fn samples_take_the_layer_of_their_innermost_specific_frame() {
        let k = Kallsyms::parse(SYMS);
        assert_eq!(k.lookup(0xffffffff81001010), Some("blk_mq_submit_bio"));
        let mut c = Classifier::new(k, Rules::parse(RULES), 42);
        // spin lock called from the block layer: block-core
        c.add(
            false,
            1,
            0xffffffff81002010,
            &[0xffffffff81002010, 0xffffffff81001020, 0xffffffff81004000],
            100_000,
        );
        // idle
        c.add(false, 0, 0xffffffff81003001, &[0xffffffff81003001], 100_000);
        // unknown leaf under io_uring: io_uring, and the unknown is listed
        c.add(
            false,
            42,
            0xffffffff81005001,
            &[0xffffffff81005001, 0xffffffff81004001],
            100_000,
        );
        c.add(true, 42, 0x401000, &[], 100_000);
        c.add(true, 7, 0x401000, &[], 100_000);
        let r = c.report(100_000, 10, Some(2e9), 0, 0);
        let get = |n: &str| {
            r.layers
                .iter()
                .find(|l| l.layer == n)
                .map(|l| l.samples)
                .unwrap_or(0)
        };
        assert_eq!(get("block-core"), 1);
        assert_eq!(get("idle"), 1);
        assert_eq!(get("io_uring"), 1);
        assert_eq!(get("ssdready (user)"), 1);
        assert_eq!(get("other user"), 1);
        assert_eq!(r.busy_samples, 4);
        assert_eq!(r.unmatched_symbols[0].0, "mystery_fn");
        assert!((r.busy_ns_per_io - 40_000.0).abs() < 1e-6);
        assert!((r.named_share_of_busy_pct - 100.0).abs() < 1e-9);
        // 4 busy samples, one a layer: 25 % ± 1.96·√(0.25·0.75/4) = ±42.4 points.
        let io_uring = r.layers.iter().find(|l| l.layer == "io_uring").unwrap();
        assert!(
            (io_uring.share_error_pct - 42.435).abs() < 0.01,
            "{}",
            io_uring.share_error_pct
        );
        let idle = r.layers.iter().find(|l| l.layer == "idle").unwrap();
        assert_eq!(idle.share_error_pct, 0.0);
    }

    /// A layer's sampling error shrinks as 1/√n: a 5 % layer among 6,000
    /// busy samples is known to ±0.55 points (±11 % of itself), among 600
    /// to ±1.74.
    #[test]
    fn a_layer_share_error_is_the_binomial_confidence_interval() {
        assert!((share_error_pct(0.05, 6_000) - 0.5515).abs() < 1e-3);
        assert!((share_error_pct(0.05, 600) - 1.744).abs() < 1e-3);
        assert_eq!(share_error_pct(0.0, 600), 0.0);
        assert_eq!(share_error_pct(0.3, 0), 0.0);
    }

    /// Two-rate sampling: IP-only samples of a function whose name gives no
    /// layer (a spin lock) take the layer mix its callers had in the chain
    /// samples, their CPU time shared in proportion; a function never seen
    /// in a chain is other kernel; functions with a layer of their own need
    /// no chain.
    #[test]
    fn ip_only_samples_take_the_callers_mix_learned_from_chains() {
        let mut raw = RawSamples::default();
        let lock = 0xffffffff81002010;
        // Chains: the lock called from the block layer 3 times, from io_uring once.
        for _ in 0..3 {
            raw.push(false, 1, lock, &[lock, 0xffffffff81001020], 0, false);
        }
        raw.push(false, 1, lock, &[lock, 0xffffffff81004000], 0, false);
        // Timing samples, IP only.
        raw.push(false, 1, lock, &[], 100_000, true);
        raw.push(false, 1, 0xffffffff81001010, &[], 50_000, true); // blk_mq_submit_bio
        raw.push(false, 1, 0xffffffff81005001, &[], 20_000, true); // mystery_fn, never chained
        let mut c = Classifier::new(Kallsyms::parse(SYMS), Rules::parse(RULES), 42);
        raw.classify_into(&mut c);
        assert_eq!((c.inferred, c.unlearned), (1, 1));
        let r = c.report(100_000, 1, None, 0, 0);
        let ns = |n: &str| {
            r.layers
                .iter()
                .find(|l| l.layer == n)
                .map(|l| l.ns_per_io)
                .unwrap_or(0.0)
        };
        assert_eq!(ns("block-core"), 75_000.0 + 50_000.0);
        assert_eq!(ns("io_uring"), 25_000.0);
        assert_eq!(ns("other kernel"), 20_000.0);
        // Chain samples stand for no time; the timing samples' time is all there.
        assert_eq!(r.samples, 3);
        assert!((r.busy_ns_per_io - 170_000.0).abs() < 1e-6);
    }
}
