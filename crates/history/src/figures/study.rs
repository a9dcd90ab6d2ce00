//! A study's figures (see the parent module for the noise rules).

use super::{
    finite, join_command, points, spread_pct, Better, Figure, Fingerprint, KeyFigures, Kind, Side,
    Unit,
};
use ssdready_study::figures::median;
use ssdready_study::model::{RunRecord, StudyDoc};
use std::collections::BTreeMap;

/// A figure every point has.
struct Metric {
    name: &'static str,
    label: &'static str,
    unit: Unit,
    better: Better,
    of: fn(&RunRecord) -> Option<f64>,
}

const METRICS: &[Metric] = &[
    Metric {
        name: "iops",
        label: "IOPS",
        unit: Unit::Iops,
        better: Better::Higher,
        of: |r| Some(r.summary.iops),
    },
    Metric {
        name: "lat_mean_ns",
        label: "mean latency",
        unit: Unit::Ns,
        better: Better::Lower,
        of: |r| Some(r.summary.lat_mean_ns),
    },
    Metric {
        name: "lat_p99_ns",
        label: "p99 latency",
        unit: Unit::Ns,
        better: Better::Lower,
        of: |r| (r.summary.lat_p99_ns > 0).then_some(r.summary.lat_p99_ns as f64),
    },
    Metric {
        name: "cpu_ns_per_io",
        label: "CPU per I/O",
        unit: Unit::Ns,
        better: Better::Lower,
        of: |r| r.summary.cpu.as_ref().map(|c| c.system_ns_per_io),
    },
];

/// The point whose first-depth figures are key (with the peak).
const KEY_POINT: &str = "qd-1";

/// The CPU source's error bound of a run, percent of its CPU per I/O.
fn cpu_bound_pct(r: &RunRecord) -> Option<f64> {
    let res = r.result.as_ref()?;
    let c = res.phases.iter().rev().find_map(|p| p.cpu.as_ref())?;
    (c.per_io.system_ns > 0.0).then(|| 100.0 * c.sources.system_error_ns / c.per_io.system_ns)
}

/// `qd-16` → `QD 16`; other points as named.
fn point_label(p: &str) -> String {
    match p
        .strip_prefix("qd-")
        .filter(|q| q.bytes().all(|b| b.is_ascii_digit()))
    {
        Some(q) => format!("QD {q}"),
        None => p.to_string(),
    }
}

/// Reduce a study.
pub fn from_study(d: &StudyDoc) -> Side {
    let pts = points(&d.runs);
    // Each metric's spread at every repeated point, and their median.
    let typical: Vec<Option<f64>> = METRICS
        .iter()
        .map(|m| {
            let spreads: Vec<f64> = pts
                .iter()
                .filter_map(|(_, rs)| {
                    spread_pct(&rs.iter().filter_map(|r| (m.of)(r)).collect::<Vec<_>>())
                })
                .collect();
            median(&spreads)
        })
        .collect();
    let repeated = pts.iter().filter(|(_, rs)| rs.len() > 1).count();
    let mut figures = Vec::new();
    let mut point_iops_noise: BTreeMap<&str, (Option<f64>, String)> = BTreeMap::new();
    for (point, rs) in &pts {
        for (m, typ) in METRICS.iter().zip(&typical) {
            let vals: Vec<f64> = rs.iter().filter_map(|r| (m.of)(r)).collect();
            let Some(value) = median(&vals) else { continue };
            let (mut noise, mut src) = match spread_pct(&vals) {
                Some(s) => (
                    Some(s),
                    format!("spread of {}'s {} repeats", point, vals.len()),
                ),
                None => (
                    *typ,
                    match typ {
                        Some(_) => {
                            format!("the study's typical {} spread ({point} ran once)", m.label)
                        }
                        None => "no repeats in this study".into(),
                    },
                ),
            };
            if m.name == "cpu_ns_per_io" {
                if let Some(b) = rs.iter().filter_map(|r| cpu_bound_pct(r)).reduce(f64::max) {
                    if noise.is_none_or(|n| b > n) {
                        noise = Some(b);
                        src = "the CPU source's error bound".into();
                    }
                }
            }
            if m.name == "iops" {
                point_iops_noise.insert(point, (noise, src.clone()));
            }
            figures.push(Figure {
                name: format!("{point}.{}", m.name),
                label: format!("{} @ {}", m.label, point_label(point)),
                unit: m.unit,
                value,
                better: m.better,
                key: point == KEY_POINT && m.name != "iops",
                noise_pct: noise,
                noise_source: src,
            });
        }
    }
    let f = &d.figures;
    let peak_noise = f
        .peak
        .as_ref()
        .and_then(|p| {
            let run = p.runs.first()?;
            let point = &d.runs.iter().find(|r| &r.id == run)?.point;
            point_iops_noise.get(point.as_str()).cloned()
        })
        .unwrap_or((typical[0], "the study's typical IOPS spread".into()));
    let limit = f.device_limit.iops.filter(|l| *l > 0.0);
    let delivered = f.peak.as_ref().zip(limit).map(|(p, l)| 100.0 * p.iops / l);
    let qd1_lat_noise = figures
        .iter()
        .find(|x| x.name == "qd-1.lat_mean_ns")
        .map(|x| (x.noise_pct, x.noise_source.clone()));
    let mut add = |name: &str,
                   label: &str,
                   unit,
                   value: Option<f64>,
                   better,
                   key,
                   noise: (Option<f64>, String)| {
        if let Some(v) = value.and_then(finite) {
            figures.push(Figure {
                name: name.into(),
                label: label.into(),
                unit,
                value: v,
                better,
                key,
                noise_pct: noise.0,
                noise_source: noise.1,
            });
        }
    };
    let exact = || (Some(0.0), "exact".to_string());
    add(
        "peak.iops",
        "peak IOPS (4 KiB random read)",
        Unit::Iops,
        f.peak.as_ref().map(|p| p.iops),
        Better::Higher,
        true,
        peak_noise.clone(),
    );
    add(
        "delivered_pct",
        "delivered % of the device's limit",
        Unit::Pct,
        delivered,
        Better::Higher,
        false,
        peak_noise,
    );
    add(
        "knee_qd",
        "knee (90 % of peak IOPS)",
        Unit::Qd,
        f.knee_qd.map(f64::from),
        Better::Neither,
        false,
        exact(),
    );
    add(
        "device_limit.iops",
        "device's limit (4 KiB random read)",
        Unit::Iops,
        limit,
        Better::Neither,
        false,
        (Some(0.0), f.device_limit.basis.clone()),
    );
    if let (Some(s), Some(n)) = (&f.platform_share_qd1, qd1_lat_noise) {
        add(
            "platform_share_qd1.pct",
            "platform's share of QD 1 latency",
            Unit::Pct,
            Some(s.pct),
            Better::Lower,
            false,
            n,
        );
    }
    let typical_words: Vec<String> = METRICS
        .iter()
        .zip(&typical)
        .filter_map(|(m, t)| t.map(|t| format!("{} {t:.1} %", m.label)))
        .collect();
    let get = |name: &str| figures.iter().find(|x| x.name == name).map(|x| x.value);
    let key_figures = KeyFigures {
        iops: get("peak.iops"),
        lat_mean_ns: get("qd-1.lat_mean_ns"),
        lat_p99_ns: get("qd-1.lat_p99_ns"),
        cpu_ns_per_io: get("qd-1.cpu_ns_per_io"),
        delivered_pct: get("delivered_pct"),
        knee_qd: f.knee_qd,
    };
    let target = d
        .targets
        .iter()
        .map(|t| t.spec.as_str())
        .collect::<Vec<_>>()
        .join(",");
    let platform = d
        .runs
        .iter()
        .find_map(|r| r.result.as_ref())
        .map(|r| super::fingerprint(&r.platform));
    Side {
        kind: Kind::Study,
        workload: format!(
            "{} study of {target}",
            if d.quick { "quick" } else { "full" }
        ),
        target,
        started_unix_ms: d.started_unix_ms,
        command: join_command(&d.command),
        jobs: Vec::new(),
        platform: Fingerprint {
            kernel: d.machine.kernel.clone(),
            cpu_model: d.machine.cpu_model.clone(),
            cpus: d.machine.cpus,
            vm: platform.and_then(|p| p.vm),
        },
        runtime_s: d.plan.runtime_s,
        interrupted: d.interrupted,
        key_figures,
        noise_basis: if repeated == 0 {
            "a study without repeats: no noise estimate".into()
        } else {
            format!(
                "repeats ({repeated} points measured more than once): a figure's noise is the spread (max − min over the median) of its point's repeats, else the study's typical spread ({})",
                typical_words.join(", ")
            )
        },
        figures,
        curve: f.qd_curve.clone(),
        series: Vec::new(),
    }
}
