//! The figures as a flat map of named facts — a number or a word, its
//! unit, the noise seen between repeats of the runs behind it, and those
//! runs — which the verdict rules test and quote. [`KNOWN`] lists every
//! name; a test checks that the rules use no other.

pub use crate::fact_names::{Fact, Value, CAUSE_FACTS, KNOWN};

use crate::figures::Figures;
use ssdready_core::units::fmt_count;
use ssdready_measured::record::{Machine, TargetProfile};
use std::collections::BTreeMap;

struct Builder<'a> {
    map: BTreeMap<String, Fact>,
    figures: &'a Figures,
}

impl Builder<'_> {
    fn put(&mut self, name: &str, value: Value, unit: &str, runs: &[String]) {
        debug_assert!(KNOWN.contains(&name), "unknown fact {name}");
        let noise = self
            .figures
            .noise
            .iter()
            .filter(|n| n.runs.iter().any(|r| runs.contains(r)))
            .map(|n| n.cov_pct)
            .reduce(f64::max);
        self.map.insert(
            name.into(),
            Fact {
                noise_pct: noise,
                ..Fact::of(value, unit, runs.to_vec())
            },
        );
    }
    fn num(&mut self, name: &str, v: Option<f64>, unit: &str, runs: &[String]) {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.put(name, Value::Num(v), unit, runs);
        }
    }
    fn text(&mut self, name: &str, v: Option<String>, runs: &[String]) {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            self.put(name, Value::Text(v), "text", runs);
        }
    }
}

/// The capacity search's facts (`--slo`, [`crate::figures::capacity`]).
pub fn add_capacity(map: &mut BTreeMap<String, Fact>, c: &crate::figures::capacity::CapacityDoc) {
    let Some(p) = &c.platform else {
        return;
    };
    let Some(slo) = p.slo else {
        return;
    };
    let runs = vec!["capacity".to_string()];
    let mut put = |name: &str, value: Value, unit: &str| {
        debug_assert!(KNOWN.contains(&name), "unknown fact {name}");
        map.insert(
            name.into(),
            Fact {
                value,
                unit: unit.into(),
                noise_pct: None,
                margin_pct: None,
                err: None,
                disagree: None,
                runs: runs.clone(),
            },
        );
    };
    put("slo_what", Value::Text(c.what.clone()), "text");
    put("slo_target", Value::Text(slo.text()), "text");
    put("slo_peak_iops", Value::Num(p.peak_iops), "iops");
    if let (Some(s), Some(pct)) = (p.sustained_iops, p.sustained_pct_of_peak) {
        put("slo_sustained_iops", Value::Num(s), "iops");
        put("slo_pct_of_peak", Value::Num(pct), "pct");
    }
    if let Some(d) = c.device.as_ref().and_then(|d| d.sustained_iops) {
        put("slo_device_iops", Value::Num(d), "iops");
    }
}

/// The facts of a study.
pub fn facts(
    t: &TargetProfile,
    m: &Machine,
    f: &Figures,
    caps: &crate::limit::caps::Caps,
) -> BTreeMap<String, Fact> {
    let mut b = Builder {
        map: BTreeMap::new(),
        figures: f,
    };
    let none: &[String] = &[];
    b.text("target", Some(t.spec.clone()), none);
    b.text("target_kind", Some(format!("{:?}", t.kind)), none);
    b.text("current_scheduler", t.scheduler.clone(), none);
    b.num("cpus", Some(m.cpus as f64), "count", none);
    b.num("root", Some(f64::from(u8::from(m.root))), "count", none);
    b.num("noise_pct", f.noise_pct, "pct", none);
    if let Some(n) = &f.noisiest {
        b.text("noisiest_point", Some(n.point.clone()), &n.runs);
        b.num("noisiest_spread", Some(n.spread_pct), "pct", &n.runs);
        let v: Vec<String> = n.iops.iter().map(|&x| fmt_count(x)).collect();
        b.text("noisiest_iops", Some(v.join(", ")), &n.runs);
    }
    b.num("background_busy_pct", m.background_busy_pct, "pct", none);
    b.text("unseen_below", caps.unseen.clone(), none);
    // Queueing's check on a rate throttle: a reader with one I/O in flight
    // waits 1/R for each under a throttle of R I/Os a second.
    if f.saturation.limit == crate::limit::Cause::IoThrottle {
        let r = f.saturation.repeats.first().map(|_| ());
        let rate = caps.io_limit(true, 4096).map(|x| x.0);
        if let (Some(()), Some(rate)) = (r, rate.filter(|r| *r > 0.0)) {
            b.num("throttle_wait_qd1", Some(1e9 / rate), "ns", none);
        }
    }
    throttled_bandwidth(&mut b, f, caps);
    device(&mut b, f);
    curve(&mut b, f);
    saturation(&mut b, f);
    platform(&mut b, f);
    sweeps(&mut b, f);
    strategies(&mut b, f);
    short_of_cpus(&mut b);
    transport(&mut b, f);
    b.map
}

/// The emulated drive's daemon: its lateness against the model, its reply,
/// its CPU per I/O and its threads' wait for a CPU.
fn transport(b: &mut Builder, f: &Figures) {
    // The QD 1 runs' own figures where the study has them: the verdict is
    // about the platform share those runs give.
    let (t, scope) = match (&f.transport_qd1, &f.transport) {
        (Some(t), _) => (t, "over the QD 1 runs"),
        (None, Some(t)) => (t, "over the study's runs"),
        (None, None) => return,
    };
    let none: &[String] = &[];
    b.text("transport_scope", Some(scope.into()), none);
    b.num("transport_lateness", Some(t.late_ns_mean), "ns", none);
    b.num("transport_lateness_pct", t.late_pct(), "pct", none);
    b.num("transport_reply", Some(t.reply_ns_mean), "ns", none);
    b.num("transport_cpu", Some(t.daemon_cpu_ns_per_io), "ns", none);
    b.num("transport_wait_pct", t.wait_pct, "pct", none);
}

/// The best strategy against async+intr on 4 KiB random reads, and
/// coalescing's trade-off, from the strategies section.
fn strategies(b: &mut Builder, f: &Figures) {
    let Some(s) = &f.strategies else { return };
    let row = |name: &str| {
        s.results
            .iter()
            .find(|r| r.strategy == name && r.pattern == "randread")
    };
    if let Some(best) = &s.best {
        let runs = &best.runs;
        b.num("strategy_threads", Some(s.threads as f64), "count", runs);
        b.text("strategy_best", Some(best.strategy.clone()), runs);
        let ran = (best.ran != "interrupt" && !best.ran.is_empty()).then(|| best.ran.clone());
        b.text("strategy_best_ran", ran, runs);
        let options =
            crate::strategies::strategy(&best.strategy).map(|x| x.command_line().join(" "));
        b.text("strategy_best_options", options, runs);
        b.num(
            "strategy_best_iops",
            row(&best.strategy).and_then(|r| r.iops),
            "iops",
            runs,
        );
        let base = row(crate::strategies::BASELINE).and_then(|r| r.iops);
        b.num("strategy_baseline_iops", base, "iops", runs);
        b.num("strategy_iops_ratio", Some(best.iops_ratio), "ratio", runs);
        b.num("strategy_cpu_ratio", best.cpu_per_io_ratio, "ratio", runs);
        b.num("strategy_p99_ratio", best.p99_lat_ratio, "ratio", runs);
        let source = best
            .cpu_per_io_ratio
            .map(|_| "the process's CPU, getrusage".to_string());
        b.text("strategy_cpu_source", source, runs);
    }
    if let Some(t) = row("coalesced").and_then(|r| r.vs_async_intr.as_ref()) {
        let runs: Vec<String> = [row("coalesced"), row(crate::strategies::BASELINE)]
            .iter()
            .filter_map(|r| r.and_then(|r| r.run.clone()))
            .collect();
        b.num("coalesced_iops_ratio", t.iops_ratio, "ratio", &runs);
        b.num("coalesced_cpu_ratio", t.cpu_per_io_ratio, "ratio", &runs);
        b.num("coalesced_p99_ratio", t.p99_lat_ratio, "ratio", &runs);
    }
}

fn device(b: &mut Builder, f: &Figures) {
    let l = &f.device_limit;
    // Only a basis gives the device's own limit; the highest rate the
    // study measured is said as that, never as the device's.
    if l.basis == ssdready_measured::basis::HIGHEST_MEASURED {
        b.num("highest_measured", l.iops, "iops", &l.runs);
    } else {
        b.num("device_limit", l.iops, "iops", &l.runs);
    }
    b.text("device_limit_bound", l.bound_by.clone(), &l.runs);
    b.text("device_limit_basis", Some(l.basis.clone()), &l.runs);
    if l.iops.is_none() && l.basis == "analytic model" {
        b.num("device_unbounded", Some(1.0), "count", &[]);
    }
    b.num("device_latency", l.device_latency_ns, "ns", &l.runs);
    b.num("virtual_peak_iops", l.virtual_peak_iops, "iops", &[]);
}

fn curve(b: &mut Builder, f: &Figures) {
    peak_and_knee(b, f);
    qd1(b, f);
    clocks(b, f);
    scaling(b, f);
}

/// A figure as a percentage of the device's limit, when it has one (a
/// basis, not the highest rate measured).
fn of_limit(f: &Figures, iops: f64) -> Option<f64> {
    let limit = f
        .device_limit
        .iops
        .filter(|_| f.device_limit.basis != ssdready_measured::basis::HIGHEST_MEASURED);
    limit.filter(|&l| l > 0.0).map(|l| 100.0 * iops / l)
}

fn peak_and_knee(b: &mut Builder, f: &Figures) {
    let of = |iops: f64| of_limit(f, iops);
    if let Some(p) = &f.peak {
        b.num("peak_iops", Some(p.iops), "iops", &p.runs);
        b.num("peak_qd", Some(p.qd as f64), "count", &p.runs);
        // Against the best observed, the peak is 100 % by definition.
        if f.device_limit.basis == "analytic model" {
            b.num("delivered_pct_peak", of(p.iops), "pct", &p.runs);
        }
        b.num(
            "of_device_peak_pct",
            p.device_iops
                .filter(|&d| d > 0.0)
                .map(|d| 100.0 * p.iops / d),
            "pct",
            &p.runs,
        );
    }
    if let Some(k) = f
        .knee_qd
        .and_then(|q| f.qd_curve.iter().find(|c| c.qd == q))
    {
        b.num("knee_qd", Some(k.qd as f64), "count", &k.runs);
        b.num("knee_latency", Some(k.lat_mean_ns), "ns", &k.runs);
        b.num("knee_p99", Some(k.lat_p99_ns as f64), "ns", &k.runs);
        b.num("delivered_pct_knee", of(k.iops), "pct", &k.runs);
    }
    b.num(
        "device_knee_qd",
        f.device_knee_qd.map(|q| q as f64),
        "count",
        &[],
    );
    b.num(
        "saturated",
        Some(if f.saturated { 1.0 } else { 0.0 }),
        "count",
        &[],
    );
}

fn qd1(b: &mut Builder, f: &Figures) {
    let of = |iops: f64| of_limit(f, iops);
    if let Some(c) = f.qd_curve.iter().find(|c| c.qd == 1) {
        b.num("qd1_latency", Some(c.lat_mean_ns), "ns", &c.runs);
        b.num("qd1_iops", Some(c.iops), "iops", &c.runs);
        b.num("delivered_pct_qd1", of(c.iops), "pct", &c.runs);
    }
    if let Some(p) = &f.platform_share_qd1 {
        b.num("platform_total_qd1", Some(p.total_ns), "ns", &p.runs);
        b.num("qd1_joined_pct", p.joined_pct, "pct", &p.runs);
        if let Some(u) = p.unaccounted_ns {
            // Parts that do not add up to the mean claim no share.
            b.num("qd1_unaccounted", Some(u), "ns", &p.runs);
            let pct = (p.total_ns > 0.0).then(|| 100.0 * u / p.total_ns);
            b.num("qd1_unaccounted_pct", pct, "pct", &p.runs);
            b.text("platform_share_source", Some(p.source.clone()), &p.runs);
            return;
        }
        // A wait the device's pacing made claims no share either: it is
        // said apart, with the rest of the host's part.
        if let Some(w) = p.paced_ns {
            let pct = 100.0 * w / p.total_ns;
            b.num("qd1_paced", Some(w), "ns", &p.runs);
            b.num("qd1_paced_pct", Some(pct), "pct", &p.runs);
            let own = (p.platform_ns - w).max(0.0);
            b.num("platform_qd1_own", Some(own), "ns", &p.runs);
        }
        // Parts that exceed the mean claim no share either: the range the
        // platform's part lies in is said instead.
        if p.overcount_ns.is_none() && p.paced_ns.is_none() {
            b.num("platform_share_qd1", Some(p.pct), "pct", &p.runs);
            if let (Some(x), Some(e)) = (b.map.get_mut("platform_share_qd1"), p.err_ns) {
                x.err = (p.total_ns > 0.0).then(|| 100.0 * e / p.total_ns);
            }
            b.num("platform_qd1", Some(p.platform_ns), "ns", &p.runs);
        }
        b.num("platform_qd1_err", p.err_ns, "ns", &p.runs);
        b.num("platform_qd1_overcount", p.overcount_ns, "ns", &p.runs);
        b.num(
            "platform_qd1_outside_daemon",
            p.outside_daemon_ns,
            "ns",
            &p.runs,
        );
        let mean = f.qd_curve.iter().find(|c| c.qd == 1).map(|c| c.lat_mean_ns);
        let pct = p
            .outside_daemon_ns
            .zip(mean.filter(|m| *m > 0.0))
            .map(|(o, m)| 100.0 * o / m);
        b.num("platform_qd1_outside_daemon_pct", pct, "pct", &p.runs);
        b.num("device_qd1", Some(p.device_ns), "ns", &p.runs);
        b.text("platform_share_source", Some(p.source.clone()), &p.runs);
    }
}

fn clocks(b: &mut Builder, f: &Figures) {
    let layers = |c: &crate::figures::ClocksAt| {
        let v: Vec<String> = c
            .layers
            .iter()
            .filter(|l| l.2 >= 5.0)
            .take(4)
            .map(|l| format!("{} {}", l.0, fmt_count(l.1)))
            .collect();
        (!v.is_empty()).then(|| v.join(", "))
    };
    if let Some(c) = &f.clocks_per_io.qd1 {
        b.num("clocks_qd1", c.system.or(c.process), "clocks", &c.runs);
        b.text("clocks_qd1_layers", layers(c), &c.runs);
    }
    if let Some(c) = &f.clocks_per_io.saturation {
        b.num("clocks_peak", c.system.or(c.process), "clocks", &c.runs);
        b.text("clocks_peak_layers", layers(c), &c.runs);
    }
}

fn scaling(b: &mut Builder, f: &Figures) {
    if let Some(s) = f
        .scaling_efficiency
        .iter()
        .filter(|s| s.qd_per_thread == 1)
        .max_by_key(|s| s.threads)
    {
        b.num("scaling_threads", Some(s.threads as f64), "count", &s.runs);
        b.num("scaling_efficiency", Some(s.efficiency_pct), "pct", &s.runs);
        b.num(
            "scaling_cpu_efficiency",
            s.cpu_efficiency_pct,
            "pct",
            &s.runs,
        );
        b.num("scaling_iops", Some(s.iops), "iops", &s.runs);
        b.num("scaling_depth_iops", s.depth_iops, "iops", &s.runs);
        b.num(
            "scaling_depth_device_iops",
            s.depth_device_iops,
            "iops",
            &s.runs,
        );
        let vs = s
            .depth_iops
            .filter(|d| *d > 0.0)
            .map(|d| 100.0 * s.iops / d);
        b.num("scaling_vs_depth", vs, "pct", &s.runs);
        if vs.is_some_and(|v| v >= MATCHES_DEPTH_PCT) {
            b.text("scaling_matches_depth", Some("yes".into()), &s.runs);
        }
    }
}

/// `scaling_matches_depth`: the threads, one I/O each, deliver at least
/// this share of one thread's IOPS with as many I/Os in flight. Then they
/// lose nothing to each other, and what holds them is below the system
/// call: how the device answers that many I/Os at once.
pub const MATCHES_DEPTH_PCT: f64 = 90.0;

/// `scaling_short_of_cpus`: threads that did not scale (below 70 % of
/// linear) while each I/O cost them no more CPU than one thread's (their
/// CPU efficiency at least 90 %), on CPUs other work kept at least half
/// busy before the study began: they waited for CPUs, not for each other.
fn short_of_cpus(b: &mut Builder) {
    let g = |n: &str| b.map.get(n).and_then(Fact::num);
    let (Some(eff), Some(cpu), Some(busy)) = (
        g("scaling_efficiency"),
        g("scaling_cpu_efficiency"),
        g("background_busy_pct"),
    ) else {
        return;
    };
    if eff < 70.0 && cpu >= 90.0 && busy >= 50.0 {
        let runs = b.map["scaling_efficiency"].runs.clone();
        b.text("scaling_short_of_cpus", Some("yes".into()), &runs);
    }
}

fn saturation(b: &mut Builder, f: &Figures) {
    let s = &f.saturation;
    if s.repeats.is_empty() && s.limit == crate::limit::Cause::NotIdentified {
        return;
    }
    b.text("saturation_limit", Some(s.limit.name().into()), &s.runs);
    let n = s.repeats.len();
    let agree = s.repeats.iter().filter(|r| r.limit == s.limit).count();
    if let Some(x) = b.map.get_mut("saturation_limit") {
        x.margin_pct = s.margin_pct;
        if !s.repeats_agree {
            x.disagree = Some(format!(
                "{agree} of {n} repeats at QD {} gave {}",
                s.qd,
                s.limit.name()
            ));
        }
    }
    if !s.repeats_agree {
        let each: Vec<String> = s
            .repeats
            .iter()
            .map(|r| format!("{} gave {} at {} IOPS", r.run, r.limit, fmt_count(r.iops)))
            .collect();
        b.text("saturation_disagree", Some(each.join(", ")), &s.runs);
    }
    b.text(
        "saturation_layer",
        Some(format!("{:?}", s.layer).to_lowercase()),
        &s.runs,
    );
    b.text("saturation_part", Some(s.part.clone()), &s.runs);
    // The findings start a sentence with it.
    let evidence = s.evidence.join("; ");
    let mut chars = evidence.chars();
    let evidence = chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect());
    b.text("saturation_evidence", Some(evidence), &s.runs);
    b.text(
        "saturation_repeats",
        Some(format!(
            "{agree} of {n} repeat{}",
            if n == 1 { "" } else { "s" }
        )),
        &s.runs,
    );
    saturation_causes(b, s);
    saturation_figures(b, s);
}

/// What else the saturation's judging found: the causes ruled out, those
/// that also held, and the setting that holds the I/O.
fn saturation_causes(b: &mut Builder, s: &crate::limit::Saturation) {
    let ruled: Vec<String> = s
        .ruled_out
        .iter()
        .filter(|r| !r.why.starts_with("also held"))
        .map(|r| format!("{} ({})", r.cause, r.why))
        .collect();
    b.text("saturation_ruled_out", Some(ruled.join("; ")), &s.runs);
    // Other causes with positive evidence, weighed after it, ranked.
    if let Some(first) = s.also_held.first() {
        let each: Vec<String> = s.also_held.iter().map(|a| a.words()).collect();
        b.text("saturation_also", Some(each.join("; ")), &s.runs);
        b.text(
            "saturation_also_first",
            Some(first.cause.name().into()),
            &s.runs,
        );
    }
    if s.also_held
        .iter()
        .any(|a| a.cause == crate::limit::Cause::OtherWork)
    {
        b.text("other_work_also", Some("yes".into()), &s.runs);
    }
    // The device's queue held too: a lever's estimate takes it as bound.
    if s.also_held
        .iter()
        .any(|a| a.cause == crate::limit::Cause::DeviceQueue)
    {
        b.text("device_queue_also", Some("yes".into()), &s.runs);
    }
    // A limit set on the machine (a throttle, a quota) caps every point
    // alike: comparisons between points then compare it with itself.
    if matches!(
        s.limit,
        crate::limit::Cause::IoThrottle | crate::limit::Cause::CpuQuota
    ) {
        b.text("held_by_setting", Some("yes".into()), &s.runs);
    }
    if let Some(st) = &s.setting {
        b.text(
            "limit_setting",
            Some(format!("{} = {}", st.name, st.value)),
            &s.runs,
        );
        b.text("limit_setting_name", Some(st.name.clone()), &s.runs);
        b.text("limit_setting_path", Some(st.path.clone()), &s.runs);
    }
}

/// The figures at the peak the saturation was judged on.
fn saturation_figures(b: &mut Builder, s: &crate::limit::Saturation) {
    b.num("thread_busy_peak", s.thread_busy_pct, "pct", &s.runs);
    b.num("system_busy_peak", s.system_busy_pct, "pct", &s.runs);
    b.num("cpus_busy_peak", s.cpus_busy_pct, "pct", &s.runs);
    b.num("other_work_peak", s.others_pct, "pct", &s.runs);
    b.num("cpu_wait_peak", s.cpu_wait_pct, "pct", &s.runs);
    b.num(
        "cpus_allowed",
        Some(s.cpus as f64).filter(|c| *c > 0.0),
        "count",
        &s.runs,
    );
    b.num("process_cpus_peak", s.process_cpus, "count", &s.runs);
    b.num("device_util_peak", s.device_util_pct, "pct", &s.runs);
    b.num(
        "device_in_flight_peak",
        s.device_in_flight,
        "count",
        &s.runs,
    );
    b.num("throttled_pct_peak", s.throttled_pct, "pct", &s.runs);
    b.num(
        "completion_share_peak",
        s.completion_share_pct,
        "pct",
        &s.runs,
    );
    b.num("device_share_peak", s.device_share_pct, "pct", &s.runs);
}

/// A read bandwidth throttle, and the block-size sweep's best against it.
fn throttled_bandwidth(b: &mut Builder, f: &Figures, caps: &crate::limit::caps::Caps) {
    use crate::limit::caps::IoKind;
    let Some(c) = caps
        .io
        .iter()
        .filter(|c| c.kind == IoKind::ReadBps)
        .min_by(|a, b| a.value.total_cmp(&b.value))
    else {
        return;
    };
    let none: &[String] = &[];
    b.num("bw_throttle", Some(c.value), "bytes_per_s", none);
    b.text("bw_throttle_setting", Some(c.setting.show()), none);
    if let Some(p) = f
        .comparisons
        .block_sizes
        .iter()
        .max_by(|a, b| a.bw_bytes_per_s.total_cmp(&b.bw_bytes_per_s))
    {
        b.num(
            "bw_of_throttle_pct",
            Some(100.0 * p.bw_bytes_per_s / c.value),
            "pct",
            &p.runs,
        );
    }
}

/// The platform's own peak on the reference device, and what holds it.
fn platform(b: &mut Builder, f: &Figures) {
    let Some(p) = &f.platform else { return };
    let Some(peak) = &p.peak else { return };
    let runs = &peak.runs;
    b.text("platform_device", Some(p.device.clone()), runs);
    b.num("platform_peak_iops", Some(peak.iops), "iops", runs);
    b.num("platform_peak_qd", Some(peak.qd as f64), "count", runs);
    b.num(
        "platform_knee_qd",
        p.knee_qd.map(|q| q as f64),
        "count",
        runs,
    );
    let s = &p.saturation;
    b.text("platform_limit", Some(s.limit.name().into()), &s.runs);
    if let Some(x) = b.map.get_mut("platform_limit") {
        x.margin_pct = s.margin_pct;
        if !s.repeats_agree {
            x.disagree = Some(format!(
                "{} of {} repeats gave {}",
                s.repeats.iter().filter(|r| r.limit == s.limit).count(),
                s.repeats.len(),
                s.limit.name()
            ));
        }
    }
    b.text("platform_part", Some(s.part.clone()), &s.runs);
    b.text("platform_evidence", Some(s.evidence.join("; ")), &s.runs);
}

fn sweeps(b: &mut Builder, f: &Figures) {
    scheduler_facts(b, f);
    engine_facts(b, f);
    other_sweep_facts(b, f);
    block_size_facts(b, f);
    randwrite_facts(b, f);
}

/// The costliest scheduler at QD 1 (and its cost deeper, and the more of
/// the two).
fn scheduler_facts(b: &mut Builder, f: &Figures) {
    let c = &f.comparisons;
    if let Some(w) = c
        .schedulers
        .iter()
        .filter(|s| s.qd == 1 && s.scheduler != "none")
        .filter(|s| s.cost_pct.is_some())
        .max_by(|a, b| {
            a.cost_pct
                .unwrap_or(0.0)
                .total_cmp(&b.cost_pct.unwrap_or(0.0))
        })
    {
        let deep = c
            .schedulers
            .iter()
            .find(|s| s.scheduler == w.scheduler && s.qd > 1);
        b.text("sched_name", Some(w.scheduler.clone()), &w.runs);
        b.num("sched_cost_qd1", w.cost_pct, "pct", &w.runs);
        // A negative cost said as the gain it is.
        b.num("sched_gain_qd1", w.cost_pct.map(|c| -c), "pct", &w.runs);
        b.num("sched_queued_qd1", w.queued_ns, "ns", &w.runs);
        let mut most = (w.cost_pct, w.runs.clone());
        if let Some(d) = deep {
            b.num("sched_cost_qd32", d.cost_pct, "pct", &d.runs);
            b.num("sched_gain_qd32", d.cost_pct.map(|c| -c), "pct", &d.runs);
            if d.cost_pct > most.0 {
                most = (d.cost_pct, d.runs.clone());
            }
        }
        // What the rules judge it on: a scheduler that costs little at
        // QD 1 and much at depth still costs.
        b.num("sched_cost_most", most.0, "pct", &most.1);
    }
}

/// The best and worst engine at QD 1 and at the peak, and the gap.
fn engine_facts(b: &mut Builder, f: &Figures) {
    let c = &f.comparisons;
    for (qd_pick, best, worst, gap) in [
        (
            true,
            "engine_best_qd1",
            "engine_worst_qd1",
            "engine_gap_qd1",
        ),
        (
            false,
            "engine_best_peak",
            "engine_worst_peak",
            "engine_gap_peak",
        ),
    ] {
        let pts: Vec<_> = c
            .engines
            .iter()
            .filter(|e| e.threads == 1 && (e.qd == 1) == qd_pick)
            .collect();
        if pts.len() < 2 {
            continue;
        }
        let hi = pts
            .iter()
            .max_by(|a, b| a.iops.total_cmp(&b.iops))
            .expect("two");
        let lo = pts
            .iter()
            .min_by(|a, b| a.iops.total_cmp(&b.iops))
            .expect("two");
        let runs: Vec<String> = hi.runs.iter().chain(&lo.runs).cloned().collect();
        b.text(
            best,
            Some(format!("{} ({})", hi.engine, fmt_count(hi.iops))),
            &runs,
        );
        b.text(
            worst,
            Some(format!("{} ({})", lo.engine, fmt_count(lo.iops))),
            &runs,
        );
        b.num(
            gap,
            (lo.iops > 0.0).then(|| 100.0 * (hi.iops - lo.iops) / lo.iops),
            "pct",
            &runs,
        );
    }
}

/// Buffered against direct, raw device against file, several devices.
fn other_sweep_facts(b: &mut Builder, f: &Figures) {
    let c = &f.comparisons;
    if let Some(p) = c
        .buffered
        .iter()
        .filter(|p| p.cache_hit_pct.is_some())
        .max_by(|a, b| {
            a.cache_hit_pct
                .unwrap_or(0.0)
                .total_cmp(&b.cache_hit_pct.unwrap_or(0.0))
        })
    {
        b.num("cache_hit_pct", p.cache_hit_pct, "pct", &p.runs);
        b.num("buffered_iops", Some(p.buffered_iops), "iops", &p.runs);
        b.num("direct_iops", p.direct_iops, "iops", &p.runs);
        b.num("buffered_qd", Some(p.qd as f64), "count", &p.runs);
    }
    if let Some(p) = c
        .raw_vs_file
        .iter()
        .filter_map(|p| Some((p.fs_cost_pct?, p)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
    {
        b.num("fs_cost_pct", Some(p.0), "pct", &p.1.runs);
    }
    if let Some(d) = &c.devices {
        b.num("devices_n", Some(d.devices as f64), "count", &d.runs);
        b.num("devices_efficiency", Some(d.efficiency_pct), "pct", &d.runs);
        b.num(
            "devices_together_iops",
            Some(d.together_iops),
            "iops",
            &d.runs,
        );
    }
}

/// The block size with the most bandwidth, against the device's limit.
fn block_size_facts(b: &mut Builder, f: &Figures) {
    let c = &f.comparisons;
    if let Some(p) = c
        .block_sizes
        .iter()
        .max_by(|a, b| a.bw_bytes_per_s.total_cmp(&b.bw_bytes_per_s))
    {
        b.num("bs_best_bw", Some(p.bw_bytes_per_s), "bytes_per_s", &p.runs);
        b.text(
            "bs_best",
            Some(ssdready_measured::record::fmt_bs(p.bs)),
            &p.runs,
        );
        let lim = f
            .delivered_pct
            .iter()
            .find(|d| p.runs.contains(&d.run))
            .and_then(|d| d.limit_iops)
            .map(|i| i * p.bs as f64);
        b.num("bw_limit", lim, "bytes_per_s", &p.runs);
        b.num(
            "bw_delivered_pct",
            lim.filter(|&l| l > 0.0)
                .map(|l| 100.0 * p.bw_bytes_per_s / l),
            "pct",
            &p.runs,
        );
    }
}

/// Random writes against the device's limit.
fn randwrite_facts(b: &mut Builder, f: &Figures) {
    let c = &f.comparisons;
    if let Some(p) = c.rw.iter().find(|p| p.rw == "randwrite") {
        b.num("randwrite_iops", Some(p.iops), "iops", &p.runs);
        let d = f.delivered_pct.iter().find(|d| p.runs.contains(&d.run));
        b.num("write_limit", d.and_then(|d| d.limit_iops), "iops", &p.runs);
        b.num(
            "randwrite_delivered_pct",
            d.and_then(|d| d.pct),
            "pct",
            &p.runs,
        );
    }
}

/// The sweeps whose runs the main figures rest on.
pub const KEY_SWEEPS: &[&str] = &["qd", "repeat", "instrumented", "threads"];

/// Add the count of disagreeing cross-checks in the key runs.
pub fn add_checks(map: &mut BTreeMap<String, Fact>, runs: &[ssdready_measured::record::RunRecord]) {
    let key: Vec<&ssdready_measured::record::RunRecord> = runs
        .iter()
        .filter(|r| KEY_SWEEPS.contains(&r.sweep.as_str()))
        .collect();
    let runs = key;
    let n: usize = runs.iter().map(|r| r.summary.checks_disagree.len()).sum();
    map.insert(
        "checks_disagree".into(),
        Fact {
            value: Value::Num(n as f64),
            unit: "count".into(),
            noise_pct: None,
            margin_pct: None,
            err: None,
            disagree: None,
            runs: runs
                .iter()
                .filter(|r| !r.summary.checks_disagree.is_empty())
                .map(|r| r.id.clone())
                .collect(),
        },
    );
}
