//! A run's figures (see the parent module for the noise rules).

use super::model::{
    fingerprint, finite, p99, Better, Figure, KeyFigures, Kind, Series, Side, Unit,
};
use serde_json::Value;
use ssdready_core::result::{DirResult, JobResult, RunResult};
use ssdready_core::spec::JobSpec;
use std::collections::BTreeMap;

/// The options that shape a job's I/O: two runs whose jobs differ in one
/// of them ran different workloads. (Runtime, names and targets are not
/// here: they are stated beside a comparison, not a reason to refuse it.)
const WORKLOAD_OPTIONS: &[&str] = &[
    "rw",
    "rwmixread",
    "bs",
    "direct",
    "numjobs",
    "iodepth",
    "ioengine",
    "size",
    "offset",
    "random_distribution",
    "norandommap",
    "rate_iops",
    "rate_bytes",
    "thinktime_ns",
    "thinktime_blocks",
    "hipri",
    "sqthread_poll",
    "fixedbufs",
    "iodepth_batch_submit",
    "iodepth_batch_complete_min",
    "iodepth_batch_complete_max",
];

/// Whole seconds in a measured window (a second short by under 10 ms,
/// the timer's slack, counts).
fn whole_seconds(measured_ns: u64) -> u64 {
    (measured_ns + 10_000_000) / 1_000_000_000
}

/// Relative noise of one direction from its whole seconds: 2 × standard
/// deviation / mean, percent; None under three whole seconds.
fn series_noise(d: &DirResult, measured_ns: u64) -> Option<f64> {
    let whole = (whole_seconds(measured_ns) as usize).min(d.series.len());
    if whole < 3 {
        return None;
    }
    let v: Vec<f64> = d.series[..whole].iter().map(|s| s.ios as f64).collect();
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    if mean <= 0.0 {
        return None;
    }
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / v.len() as f64;
    Some(200.0 * var.sqrt() / mean)
}

/// A job's workload options, with the depth it runs at, and the clock
/// (`real`, or `virtual` for the emulator's model alone): what two runs'
/// jobs must share to be compared.
pub fn job_workload(j: &JobSpec, clock: &str) -> BTreeMap<String, Value> {
    let spec = serde_json::to_value(j).unwrap_or(Value::Null);
    let mut m: BTreeMap<String, Value> = WORKLOAD_OPTIONS
        .iter()
        .filter_map(|k| spec.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    m.insert("iodepth".into(), j.effective_iodepth().into());
    if !j.rw.is_mixed() {
        m.remove("rwmixread");
    }
    m.insert("clock".into(), clock.into());
    m
}

/// `randread bs=4096 iodepth=1 numjobs=1 emu` and the other options that
/// are not at their plainest.
pub(crate) fn describe(w: &BTreeMap<String, Value>) -> String {
    let plain = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.len() == 1 => {
            o.values().next().map(|x| x.to_string()).unwrap_or_default()
        }
        other => other.to_string(),
    };
    let mut parts = vec![w.get("rw").map(plain).unwrap_or_default()];
    for k in ["bs", "iodepth", "numjobs", "ioengine"] {
        if let Some(v) = w.get(k) {
            parts.push(format!("{k}={}", plain(v)));
        }
    }
    for (k, v) in w {
        let boring = matches!(v, Value::Null | Value::Bool(false))
            || (k == "offset" && v == 0)
            || (k == "thinktime_ns" && v == 0)
            || (k == "thinktime_blocks" && v == 1)
            || (k.starts_with("iodepth_batch") && v.as_u64().unwrap_or(0) <= 1)
            || (k == "random_distribution" && plain(v) == "\"random\"")
            || (k == "clock" && v == "real");
        if !boring && !["rw", "bs", "iodepth", "numjobs", "ioengine"].contains(&k.as_str()) {
            parts.push(format!("{k}={}", plain(v)));
        }
    }
    parts.join(" ")
}

/// Reduce a run.
pub fn from_run(r: &RunResult) -> Side {
    let clock = r.emulator.as_ref().map_or("real", |e| e.clock.as_str());
    let mut b = RunFigures::default();
    let several = r.jobs.len() > 1;
    for j in &r.jobs {
        let prefix = if several {
            format!("job {} ", j.name)
        } else {
            String::new()
        };
        for (dir, d) in j.dirs() {
            b.direction(j, dir, d, &prefix);
        }
    }
    b.cpu(r);
    let RunFigures {
        mut figures,
        series,
        noise_words,
        ..
    } = b;
    figures.retain(|f| f.value.is_finite());
    let targets = run_targets(r);
    let jobs: Vec<(String, BTreeMap<String, Value>)> = r
        .jobs
        .iter()
        .map(|j| (j.name.clone(), job_workload(&j.spec, clock)))
        .collect();
    let workload = jobs
        .iter()
        .map(|(n, w)| format!("'{n}': {}", describe(w)))
        .collect::<Vec<_>>()
        .join("; ");
    Side {
        kind: Kind::Run,
        target: if targets.is_empty() { "null engine".into() } else { targets.join(",") },
        started_unix_ms: r.started_unix_ms,
        command: String::new(),
        workload,
        jobs,
        platform: fingerprint(&r.platform),
        runtime_s: r.jobs.iter().map(|j| j.measured_ns).max().unwrap_or(0) as f64 / 1e9,
        interrupted: r.interrupted,
        key_figures: key_figures(r),
        figures,
        noise_basis: format!(
            "a single run: per-second IOPS, 2 × their standard deviation over the mean ({}); mean latency as IOPS, p99 twice it, CPU per I/O also its source's error bound",
            noise_words.join(", ")
        ),
        curve: Vec::new(),
        series,
    }
}

/// A run's figures as they are gathered: each job's directions, then each
/// phase's CPU per I/O.
#[derive(Default)]
struct RunFigures {
    figures: Vec<Figure>,
    series: Vec<Series>,
    /// Each direction's noise, in words, for the noise basis.
    noise_words: Vec<String>,
    /// The largest IOPS noise of each phase's directions.
    phase_noise: BTreeMap<usize, f64>,
}

impl RunFigures {
    /// One direction of a job: its IOPS, bandwidth and latency with their
    /// noise, and its per-second IOPS.
    fn direction(&mut self, j: &JobResult, dir: &str, d: &DirResult, prefix: &str) {
        let noise = series_noise(d, j.measured_ns);
        let (src, lat_src, p99_src) = self.noise_sources(noise, j.phase, &format!("{prefix}{dir}"));
        let base = format!("{}.{dir}", j.name);
        let rows = [
            (
                "iops",
                "IOPS",
                Unit::Iops,
                Some(d.iops),
                Better::Higher,
                true,
                noise,
                &src,
            ),
            (
                "bw_bytes_per_s",
                "bandwidth",
                Unit::BytesPerS,
                Some(d.bw_bytes_per_s),
                Better::Higher,
                false,
                noise,
                &src,
            ),
            (
                "lat_mean_ns",
                "mean latency",
                Unit::Ns,
                Some(d.lat.mean_ns),
                Better::Lower,
                true,
                noise,
                &lat_src,
            ),
            (
                "lat_p99_ns",
                "p99 latency",
                Unit::Ns,
                p99(d),
                Better::Lower,
                true,
                noise.map(|n| 2.0 * n),
                &p99_src,
            ),
        ];
        for (name, label, unit, value, better, key, noise, src) in rows {
            let Some(value) = value else { continue };
            self.figures.push(Figure {
                name: format!("{base}.{name}"),
                label: format!("{prefix}{dir} {label}"),
                unit,
                value,
                better,
                key,
                noise_pct: noise,
                noise_source: src.to_string(),
            });
        }
        let measured_s = whole_seconds(j.measured_ns);
        self.series.push(Series {
            label: format!("{} {dir}", j.name),
            iops: d
                .series
                .iter()
                .take(measured_s as usize)
                .map(|s| s.ios as f64)
                .collect(),
        });
    }

    /// Where a direction's noise comes from, in words (IOPS, mean latency,
    /// p99), noting it for the noise basis and the phase's CPU.
    fn noise_sources(
        &mut self,
        noise: Option<f64>,
        phase: usize,
        who: &str,
    ) -> (String, String, String) {
        let (noise_words, phase_noise) = (&mut self.noise_words, &mut self.phase_noise);
        match noise {
            Some(n) => {
                noise_words.push(format!("{who} {n:.1} %"));
                let e = phase_noise.entry(phase).or_insert(0.0);
                *e = e.max(n);
                (
                    format!(
                        "2 × the standard deviation of {who}'s per-second IOPS over their mean"
                    ),
                    format!("as {who} IOPS (latency moves inversely with IOPS)"),
                    format!("2 × {who}'s IOPS noise (tails move more than means)"),
                )
            }
            None => {
                let why = format!("{who}: under 3 whole seconds, no per-second estimate");
                noise_words.push(why.clone());
                (why.clone(), why.clone(), why)
            }
        }
    }

    /// Each phase's CPU per I/O (whole-system and process), its noise the
    /// larger of the phase's IOPS noise and the CPU source's error bound.
    fn cpu(&mut self, r: &RunResult) {
        let phases_with_cpu = r.phases.iter().filter(|p| p.cpu.is_some()).count();
        for (i, ph) in r.phases.iter().enumerate() {
            let Some(c) = &ph.cpu else { continue };
            let (name, label) = if phases_with_cpu > 1 {
                (format!("phase-{i}.cpu"), format!("phase {i} "))
            } else {
                ("cpu".to_string(), String::new())
            };
            let bound = (c.per_io.system_ns > 0.0)
                .then(|| 100.0 * c.sources.system_error_ns / c.per_io.system_ns);
            let ionoise = self.phase_noise.get(&i).copied();
            let noise = match (ionoise, bound) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            let src = format!(
                "the larger of the phase's IOPS noise ({}) and the CPU source's error bound ({})",
                ionoise.map_or("none".into(), |n| format!("{n:.1} %")),
                bound.map_or("none".into(), |b| format!("{b:.2} %"))
            );
            for (what, v, key) in [
                ("system_ns_per_io", c.per_io.system_ns, true),
                ("process_ns_per_io", c.per_io.process_ns, false),
            ] {
                self.figures.push(Figure {
                    name: format!("{name}.{what}"),
                    label: format!(
                        "{label}{} CPU per I/O",
                        if key { "whole-system" } else { "process" }
                    ),
                    unit: Unit::Ns,
                    value: v,
                    better: Better::Lower,
                    key,
                    noise_pct: noise,
                    noise_source: src.clone(),
                });
            }
        }
    }
}

/// The run's targets, each once, emulators named by their parameters.
fn run_targets(r: &RunResult) -> Vec<String> {
    let params = r.emulator.as_ref().map_or(&[][..], |e| &e.params[..]);
    let mut targets: Vec<String> = Vec::new();
    for j in &r.jobs {
        for f in j
            .spec
            .filename
            .iter()
            .map(|f| super::model::named_target(f, params))
        {
            if !targets.contains(&f) {
                targets.push(f);
            }
        }
    }
    targets
}

/// The history's columns for a run: IOPS of every job and direction
/// together, their I/O-weighted mean latency, the highest p99 (an upper
/// bound of the merged p99), the first phase's whole-system CPU per I/O.
fn key_figures(r: &RunResult) -> KeyFigures {
    let dirs: Vec<&DirResult> = r
        .jobs
        .iter()
        .flat_map(|j| j.dirs().map(|(_, d)| d))
        .collect();
    let ios: u64 = dirs.iter().map(|d| d.lat.n).sum();
    KeyFigures {
        iops: (!dirs.is_empty()).then(|| dirs.iter().map(|d| d.iops).sum()),
        lat_mean_ns: (ios > 0)
            .then(|| {
                dirs.iter()
                    .map(|d| d.lat.mean_ns * d.lat.n as f64)
                    .sum::<f64>()
                    / ios as f64
            })
            .and_then(finite),
        lat_p99_ns: dirs.iter().filter_map(|d| p99(d)).reduce(f64::max),
        cpu_ns_per_io: r
            .phases
            .iter()
            .find_map(|p| p.cpu.as_ref())
            .map(|c| c.per_io.system_ns)
            .and_then(finite),
        delivered_pct: None,
        knee_qd: None,
    }
}
