//! `--profile=exact` in a run's report: where the CPU goes per I/O, the
//! sampled profile and the tracepoint-bracketed states side by side (each
//! group with the sampled layers and the bracketed states it sums), the
//! states themselves, the layer table built from the bracketed time, and
//! the cross-checks' verdicts against the whole-system figure from
//! /proc/stat. Absent when the run had no bracketed profile.

use super::bars::StackedBars;
use super::charts::Axis;
use super::figure::{Body, Figure, Table};
use super::page::section as page_section;
use super::svg::{esc, Unit};
use ssdready_core::result::{ExactCpu, PhaseResult, RunResult};
use ssdready_core::units::fmt_ns;
use std::fmt::Write as _;

/// The section, if a phase of the run has a bracketed profile.
pub fn section(r: &RunResult) -> Option<String> {
    let (ph, e) = r
        .phases
        .iter()
        .find_map(|p| Some((p, p.profile.as_ref()?.exact.as_ref()?)))?;
    let intro = format!(
        "Busy CPU per I/O, whole system: sampled by --profile and bracketed by tracepoints \
         (--profile=exact; {:.1} % of the window × CPUs accounted for). Source of the \
         bracketed figures: {}.",
        e.covered_pct, e.source
    );
    let mut out = page_section(
        "s-exact-cpu",
        "Where the CPU goes: sampled and bracketed",
        &intro,
        &[side_by_side(e).html(), states(e).html(), layers(e).html()],
    );
    // The verdicts and the limits, under the figures.
    let mut notes = String::new();
    for c in ph
        .checks
        .iter()
        .filter(|c| c.a_source.starts_with("profile"))
    {
        let _ = write!(
            notes,
            "<li class=\"{}\"><b>{}</b> {}</li>",
            if c.agree { "ok" } else { "warn" },
            if c.agree { "Agrees:" } else { "Disagrees:" },
            esc(&c.describe())
        );
    }
    if let Some(s) = system_figure(ph) {
        let _ = write!(notes, "<li>{}</li>", esc(&s));
    }
    for l in &e.limits {
        let _ = write!(notes, "<li>Limit: {}</li>", esc(l));
    }
    let tail = "</div></section>\n";
    if let Some(at) = out.rfind(tail) {
        out.insert_str(
            at + "</div>".len(),
            &format!("<ul class=\"plain\" id=\"exact-verdicts\">{notes}</ul>"),
        );
    }
    Some(out)
}

/// The whole-system figure the checks compare with, in words.
fn system_figure(ph: &PhaseResult) -> Option<String> {
    let c = ph.cpu.as_ref()?;
    Some(format!(
        "Whole-system busy CPU per I/O: {} ± {} ({}).",
        fmt_ns(c.per_io.system_ns),
        fmt_ns(c.sources.system_error_ns),
        c.sources.system
    ))
}

/// The groups, sampled and bracketed, as two stacked bars and a table
/// naming each figure's source.
fn side_by_side(e: &ExactCpu) -> Figure {
    let busy: Vec<_> = e
        .sampled_vs_exact
        .iter()
        .filter(|g| g.group != "idle")
        .collect();
    let mut t = Table::new(&[
        "group",
        "sampled ns per I/O",
        "sampled: layers",
        "bracketed ns per I/O",
        "bracketed: states",
    ]);
    for g in &busy {
        t.row(vec![
            g.group.clone(),
            fmt_ns(g.sampled_ns_per_io),
            g.sampled_layers.join(", "),
            fmt_ns(g.exact_ns_per_io),
            g.exact_states.join(", "),
        ]);
    }
    let chart = StackedBars {
        title: "Busy CPU per I/O by group, sampled and bracketed".into(),
        category_title: String::new(),
        categories: vec![
            "sampled (--profile)".into(),
            "bracketed (tracepoints)".into(),
        ],
        parts: busy
            .iter()
            .map(|g| {
                (
                    g.group.clone(),
                    vec![g.sampled_ns_per_io, g.exact_ns_per_io],
                )
            })
            .collect(),
        value: Axis::linear("busy CPU per I/O", Unit::Ns),
        alt: None,
        horizontal: true,
    };
    Figure {
        id: "exact-side-by-side".into(),
        title: "Sampled and bracketed, side by side".into(),
        note: "A sampled layer counts its functions in every context they run in; a \
               bracketed state only the time between its tracepoints."
            .into(),
        body: if busy.is_empty() {
            Body::Missing("the bracketed profile has no groups.".into())
        } else {
            Body::Chart(chart.svg())
        },
        table: Some(t),
    }
}

/// Every state's bracketed time.
fn states(e: &ExactCpu) -> Figure {
    let mut t = Table::new(&["state", "busy", "ns per I/O", "share of busy CPU"]);
    for s in e.states.iter().filter(|s| s.cpu_ns > 0) {
        t.row(vec![
            s.state.clone(),
            if s.busy { "busy" } else { "idle" }.into(),
            fmt_ns(s.ns_per_io),
            if s.busy {
                format!("{:.1} %", s.share_of_busy_pct)
            } else {
                "-".into()
            },
        ]);
    }
    let busy: Vec<_> = e.states.iter().filter(|s| s.busy && s.cpu_ns > 0).collect();
    let chart = StackedBars {
        title: "Busy CPU per I/O by bracketed state".into(),
        category_title: String::new(),
        categories: vec!["bracketed".into()],
        parts: busy
            .iter()
            .map(|s| (s.state.clone(), vec![s.ns_per_io]))
            .collect(),
        value: Axis::linear("busy CPU per I/O", Unit::Ns),
        alt: None,
        horizontal: true,
    };
    Figure {
        id: "exact-states".into(),
        title: format!(
            "CPU states, bracketed: busy {} per I/O",
            fmt_ns(e.busy_ns_per_io)
        ),
        note: format!("Tracepoints: {}.", e.tracepoints.join(", ")),
        body: if busy.is_empty() {
            Body::Missing("no busy state was seen in the window.".into())
        } else {
            Body::Chart(chart.svg())
        },
        table: Some(t),
    }
}

/// The layer table built from the bracketed time.
fn layers(e: &ExactCpu) -> Figure {
    let mut t = Table::new(&["layer", "ns per I/O", "share of busy CPU", "samples"]);
    for l in e.layers.iter().filter(|l| l.layer != "idle") {
        t.row(vec![
            l.layer.clone(),
            fmt_ns(l.ns_per_io),
            format!("{:.1} %", l.share_of_busy_pct),
            l.samples.to_string(),
        ]);
    }
    let total: f64 = e
        .layers
        .iter()
        .filter(|l| l.layer != "idle")
        .map(|l| l.ns_per_io)
        .sum();
    let chart = StackedBars {
        title: "Busy CPU per I/O by layer, bracketed time".into(),
        category_title: String::new(),
        categories: vec!["layers".into()],
        parts: e
            .layers
            .iter()
            .filter(|l| l.layer != "idle")
            .map(|l| (l.layer.clone(), vec![l.ns_per_io]))
            .collect(),
        value: Axis::linear("busy CPU per I/O", Unit::Ns),
        alt: None,
        horizontal: true,
    };
    Figure {
        id: "exact-layers".into(),
        title: format!("Layers, bracketed time: {} per I/O", fmt_ns(total)),
        note: "Each group's bracketed time split among its sampled layers; a group no \
               sample fell in is one row."
            .into(),
        body: if t.rows.is_empty() {
            Body::Missing("no busy layer.".into())
        } else {
            Body::Chart(chart.svg())
        },
        table: Some(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::{CrossCheck, ProfileReport, SampledVsExact, StateCost};

    fn run(exact: Option<ExactCpu>) -> RunResult {
        let check = CrossCheck {
            quantity: "busy CPU per I/O".into(),
            a_source: "profile.exact".into(),
            a: 19_600.0,
            b_source: "cpu.per_io.system_ns".into(),
            b: 20_000.0,
            unit: "ns".into(),
            allowed: 2_000.0,
            agree: true,
            marks: vec![],
            why: vec![],
        };
        RunResult {
            phases: vec![PhaseResult {
                profile: Some(ProfileReport {
                    busy_ns_per_io: 13_000.0,
                    exact,
                    ..ProfileReport::default()
                }),
                checks: vec![check],
                ..PhaseResult::default()
            }],
            ..RunResult::default()
        }
    }

    fn exact() -> ExactCpu {
        ExactCpu {
            source: "eBPF on tracepoints".into(),
            tracepoints: vec!["block_rq_issue".into()],
            states: vec![StateCost {
                state: "block layer submission".into(),
                busy: true,
                cpu_ns: 2_000_000,
                ns_per_io: 2_100.0,
                share_of_busy_pct: 10.7,
            }],
            busy_ns_per_io: 19_600.0,
            covered_pct: 100.0,
            sampled_vs_exact: vec![SampledVsExact {
                group: "block layer submission".into(),
                sampled_ns_per_io: 1_500.0,
                exact_ns_per_io: 2_100.0,
                sampled_layers: vec!["block-core".into(), "io-scheduler".into()],
                exact_states: vec!["block layer submission".into()],
            }],
            limits: vec!["driver submission and return: no tracepoint marks the return".into()],
            ..ExactCpu::default()
        }
    }

    /// The section shows both figures with their sources, the verdict and
    /// the limits; a run without a bracketed profile has no section.
    #[test]
    fn the_report_shows_sampled_and_bracketed_side_by_side() {
        let html = super::super::run::render(&run(Some(exact())));
        assert!(html.contains("id=\"s-exact-cpu\""), "no section");
        let s = section(&run(Some(exact()))).unwrap();
        for want in [
            "sampled (--profile)",
            "bracketed (tracepoints)",
            "<td>block-core, io-scheduler</td>",
            "<td>block layer submission</td>",
            "2.10 µs",
            "1.50 µs",
            "<b>Agrees:</b> busy CPU per I/O: profile.exact 19600 ns",
            "Limit: driver submission and return",
            "eBPF on tracepoints",
        ] {
            assert!(s.contains(want), "no {want:?} in {s}");
        }
        // The notes sit inside the section, after its figures.
        assert!(s.trim_end().ends_with("</ul></section>"), "{s}");
        assert!(section(&run(None)).is_none());
        assert!(!super::super::run::render(&run(None)).contains("s-exact-cpu"));
    }
}
