//! A study's figures (see the parent module for the noise rules).

use super::model::{
    finite, join_command, points, spread_pct, Better, Figure, Fingerprint, KeyFigures, Kind, Side,
    Unit,
};
use super::view::StudyView;
use ssdready_measured::curve::median;
use ssdready_measured::record::RunRecord;
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
pub fn from_study(d: &StudyView) -> Side {
    let pts = points(&d.runs);
    let typical = typical_spreads(&pts);
    let repeated = pts.iter().filter(|(_, rs)| rs.len() > 1).count();
    let (mut figures, point_iops_noise) = point_figures(&pts, &typical);
    let wide = study_wide_figures(d, typical[0], &point_iops_noise, &figures);
    figures.extend(wide);
    let f = &d.figures;
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
        .map(|r| super::model::fingerprint(&r.platform));
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
        noise_basis: noise_basis(repeated, &typical),
        figures,
        curve: f.qd_curve.clone(),
        series: Vec::new(),
    }
}

/// A noise estimate and where it comes from.
type Noise = (Option<f64>, String);

/// Each metric's spread at every repeated point, and their median.
fn typical_spreads(pts: &[(String, Vec<&RunRecord>)]) -> Vec<Option<f64>> {
    METRICS
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
        .collect()
}

/// Every point's figures (the median of its repeats), and each point's
/// IOPS noise.
fn point_figures<'p>(
    pts: &'p [(String, Vec<&RunRecord>)],
    typical: &[Option<f64>],
) -> (Vec<Figure>, BTreeMap<&'p str, Noise>) {
    let mut figures = Vec::new();
    let mut point_iops_noise: BTreeMap<&str, Noise> = BTreeMap::new();
    for (point, rs) in pts {
        for (m, typ) in METRICS.iter().zip(typical) {
            let vals: Vec<f64> = rs.iter().filter_map(|r| (m.of)(r)).collect();
            let Some(value) = median(&vals) else { continue };
            let (noise, src) = point_noise(m, point, rs, &vals, *typ);
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
    (figures, point_iops_noise)
}

/// A point's noise in one metric: the spread of its repeats, else the
/// study's typical spread; for CPU per I/O at least the CPU source's error
/// bound.
fn point_noise(
    m: &Metric,
    point: &str,
    rs: &[&RunRecord],
    vals: &[f64],
    typ: Option<f64>,
) -> Noise {
    let (mut noise, mut src) = match spread_pct(vals) {
        Some(s) => (
            Some(s),
            format!("spread of {}'s {} repeats", point, vals.len()),
        ),
        None => (
            typ,
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
    (noise, src)
}

/// A study-wide figure, when its value is known (and finite).
fn wide(
    name: &str,
    label: &str,
    unit: Unit,
    better: Better,
    value: Option<f64>,
    noise: Noise,
) -> Option<Figure> {
    value.and_then(finite).map(|v| Figure {
        name: name.into(),
        label: label.into(),
        unit,
        value: v,
        better,
        key: false,
        noise_pct: noise.0,
        noise_source: noise.1,
    })
}

/// The study's own figures: the peak, the share of the device's limit
/// delivered, the knee, the limit, the platform's share of QD 1 latency.
fn study_wide_figures(
    d: &StudyView,
    typical_iops: Option<f64>,
    point_iops_noise: &BTreeMap<&str, Noise>,
    figures: &[Figure],
) -> Vec<Figure> {
    let f = &d.figures;
    let peak_noise = f
        .peak
        .as_ref()
        .and_then(|p| {
            let run = p.runs.first()?;
            let point = &d.runs.iter().find(|r| &r.id == run)?.point;
            point_iops_noise.get(point.as_str()).cloned()
        })
        .unwrap_or((typical_iops, "the study's typical IOPS spread".into()));
    let limit = f.device_limit.iops.filter(|l| *l > 0.0);
    let delivered = f.peak.as_ref().zip(limit).map(|(p, l)| 100.0 * p.iops / l);
    let qd1_lat_noise = figures
        .iter()
        .find(|x| x.name == "qd-1.lat_mean_ns")
        .map(|x| (x.noise_pct, x.noise_source.clone()));
    let exact = || (Some(0.0), "exact".to_string());
    let mut out = Vec::new();
    out.extend(
        wide(
            "peak.iops",
            "peak IOPS (4 KiB random read)",
            Unit::Iops,
            Better::Higher,
            f.peak.as_ref().map(|p| p.iops),
            peak_noise.clone(),
        )
        .map(|x| Figure { key: true, ..x }),
    );
    out.extend(wide(
        "delivered_pct",
        "delivered % of the device's limit",
        Unit::Pct,
        Better::Higher,
        delivered,
        peak_noise,
    ));
    out.extend(wide(
        "knee_qd",
        "knee (90 % of peak IOPS)",
        Unit::Qd,
        Better::Neither,
        f.knee_qd.map(f64::from),
        exact(),
    ));
    out.extend(wide(
        "device_limit.iops",
        "device's limit (4 KiB random read)",
        Unit::Iops,
        Better::Neither,
        limit,
        (Some(0.0), f.device_limit.basis.clone()),
    ));
    if let (Some(s), Some(n)) = (&f.platform_share_qd1, qd1_lat_noise) {
        out.extend(wide(
            "platform_share_qd1.pct",
            "platform's share of QD 1 latency",
            Unit::Pct,
            Better::Lower,
            Some(s.pct),
            n,
        ));
    }
    out
}

/// How the study's noise was estimated.
fn noise_basis(repeated: usize, typical: &[Option<f64>]) -> String {
    if repeated == 0 {
        return "a study without repeats: no noise estimate".into();
    }
    let typical_words: Vec<String> = METRICS
        .iter()
        .zip(typical)
        .filter_map(|(m, t)| t.map(|t| format!("{} {t:.1} %", m.label)))
        .collect();
    format!(
        "repeats ({repeated} points measured more than once): a figure's noise is the spread (max − min over the median) of its point's repeats, else the study's typical spread ({})",
        typical_words.join(", ")
    )
}
