//! The report of a study (`DIR/report.html`): the answer first — the key
//! figures (delivered share of the device's limit, the knee, the
//! platform's share of QD 1 latency, what limits the peak) and the
//! verdicts with their evidence, each linked to the chart behind it — then
//! the curves, a stacked target's layers and members, where the time goes, scaling and the other workloads, the
//! submission strategies against interrupts, the run over time, the noise
//! between repeats, the platform and its lab conditions, and every run.

use super::charts::{Axis, Mark, Series, Style, XyChart};
use super::curves::{self, Named};
use super::figure::Table;
use super::page::{header, kpis, kv_table, page, platform_rows, section, utc, Kpi};
use super::svg::{esc, Unit};
use super::{costs, timeline};
use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
use ssdready_diagnosis::answer::{describe, device_limit_line, fmt_duration};
use ssdready_diagnosis::model::StudyDoc;
use ssdready_measured::record::{RunRecord, Verdict};
use std::fmt::Write as _;

use super::workloads::{block_sizes, comparisons, mixes, noise};

/// The whole page.
pub fn render(d: &StudyDoc) -> String {
    let me: [Named; 1] = [("", d)];
    let mut body = String::new();
    body.push_str(&top(d));
    if let Some(t) = &d.trials {
        body.push_str(&section(
            "s-trials",
            "What to change, measured",
            "The study's advice tried on this machine, each change in turns with the baseline and put back.",
            &[super::trials::trials(t).html()],
        ));
    }
    body.push_str(&section(
        "s-qd",
        "Throughput and latency against queue depth",
        &device_limit_line(&d.figures),
        &[
            curves::qd_iops(&me).html(),
            curves::hockey(&me).html(),
            curves::percentiles(&me).html(),
        ],
    ));
    if let Some(s) = super::stack::section_of(d) {
        body.push_str(&s);
    }
    if let Some(f) = super::capacity::load_curve(d) {
        body.push_str(&section(
            "s-capacity",
            "Capacity at a latency target",
            "",
            &[f.html()],
        ));
    }
    body.push_str(&section(
        "s-time",
        "Where the time goes",
        "Each I/O's latency along its path, what limits the peak, and the CPU each I/O costs (nanoseconds and TSC clocks).",
        &[costs::decomposition(d).html(), costs::saturation_card(d), costs::cpu_layers(d).html(), costs::cpu_by_qd(d).html()],
    ));
    workload_sections(d, &me, &mut body);
    let tl = pick_timeline(d);
    let note = timeline::window_note(&tl);
    body.push_str(&section(
        "s-over-time",
        "Over time",
        if tl.several {
            "The study's runs are too short for a curve of their own (fewer than 5 whole seconds): every run's seconds, one after another."
        } else {
            "The longest run, second by second."
        },
        &[timeline::timeline_figure(&tl, "timeline", &note).html(), timeline::heatmap_figure(&tl, "heatmap").html()],
    ));
    body.push_str(&section(
        "s-noise",
        "Noise between repeats",
        "",
        &[noise(d).html()],
    ));
    body.push_str(&platform(d));
    body.push_str(&runs_table(d));
    let _ = write!(
        body,
        "<footer>{} · rendered from study.json (schema {} v{}) · re-render with <code>ssdready report DIR</code></footer>",
        esc(&d.tool),
        esc(&d.schema),
        d.schema_version
    );
    let t = d.targets.first().map_or("?", |t| t.spec.as_str());
    page(&format!("ssdready study of {t}"), &body)
}

/// The sections on other workloads: scaling, block sizes, mixes, the
/// strategies, the fleet and the applications.
fn workload_sections(d: &StudyDoc, me: &[Named], body: &mut String) {
    let mut more = vec![
        curves::scaling(me).html(),
        block_sizes(d).html(),
        mixes(d).html(),
    ];
    more.extend(comparisons(d));
    body.push_str(&section(
        "s-workloads",
        "Scaling and other workloads",
        "",
        &more,
    ));
    body.push_str(&section(
        "s-strategies",
        "Submission and completion strategies",
        "The experiment of Shin, \"Achieving Peak Device Throughput for Random IO Workload\", on this target: interrupts against polling, temporal merge, coalescing, SQPOLL and hybrid polling, each set against interrupt completions (async+intr).",
        &[super::strategies::strategies(d).html()],
    ));
    if let Some(f) = &d.figures.fleet {
        body.push_str(&section(
            "s-fleet",
            "The fleet",
            "Many hosts through fio's client/server protocol (study --client): what the hosts deliver together against what each delivers alone.",
            &[super::fleet::fleet(f).html()],
        ));
    }
    if !d.figures.applications.is_empty() {
        body.push_str(&section(
            "s-applications",
            "Applications",
            "How much of the device's speed reaches a file system and a database: small files, SQLite OLTP and fdatasync log appends in the target's directory (ssdready app), each set against the raw limit above.",
            &[super::applications::applications(d).html()],
        ));
    }
}

/// The first screen: header, key figures and verdicts.
fn top(d: &StudyDoc) -> String {
    let t = d.targets.first();
    let ok = d.runs.iter().filter(|r| r.error.is_none()).count();
    let wall = d.finished_unix_ms.saturating_sub(d.started_unix_ms) as f64 / 1e3;
    let meta = vec![
        format!(
            "{} · {} runs in {}{}",
            utc(d.started_unix_ms),
            ok,
            fmt_duration(wall),
            if d.quick { " · quick" } else { "" }
        ),
        format!(
            "{} × {} · kernel {}",
            d.machine.cpus, d.machine.cpu_model, d.machine.kernel
        ),
    ];
    let subtitle = t.map_or(String::new(), describe);
    let title = format!(
        "How much of {}'s speed does this platform deliver?",
        t.map_or("the device".into(), short_name)
    );
    let mut s = header(&title, "", &meta);
    let _ = write!(
        s,
        "<p class=\"note\" style=\"margin:0 0 8px;color:var(--mute)\">{}</p>",
        esc(&format!("Target: {subtitle}"))
    );
    if d.interrupted {
        s.push_str("<div class=\"banner\"><b>Interrupted.</b> The study was stopped; the figures cover the runs it made.</div>");
    }
    if let Some(lab) = &d.machine.lab {
        let _ = write!(s, "<div class=\"banner\"><b>Emulated ({}).</b> Measured in the lab VM under software emulation: every figure shows function, never a platform's ceiling.</div>", esc(lab));
    }
    if let Some(n) = d.figures.noise_pct.filter(|n| *n > 15.0) {
        let _ = write!(s, "<div class=\"banner\"><b>Noisy machine.</b> Repeats varied by {n:.0} % (standard deviation): read the figures as indications.</div>");
    }
    let _ = write!(
        s,
        "<div class=\"answer\"><div class=\"kpis\">{}{}</div><div class=\"verdicts\"><h2>Findings, most important first</h2>{}</div></div>",
        kpis(&key_figures(d)),
        mini_curve(d),
        verdicts(&d.verdicts)
    );
    s
}

/// `emu:nvme-tlc` for the default drive (`emu:`), else the spec.
fn short_name(t: &ssdready_measured::record::TargetProfile) -> String {
    let preset = t.emulator_params.iter().find(|p| p.0 == "preset");
    match preset {
        Some((_, p)) if t.spec == "emu:" || t.spec == "emu" => format!("emu:{p}"),
        _ => t.spec.clone(),
    }
}

/// A small IOPS-against-depth chart for the first screen.
fn mini_curve(d: &StudyDoc) -> String {
    let cv = &d.figures.qd_curve;
    if cv.is_empty() {
        return String::new();
    }
    let mut c = XyChart::new(
        "IOPS against queue depth (first screen)",
        Axis::log2("queue depth", Unit::Plain),
        Axis::linear("IOPS", Unit::Count),
    );
    c.width = 380.0;
    c.height = 215.0;
    c.series.push(Series::new(
        "measured",
        0,
        Style::Line,
        cv.iter().map(|p| (p.qd as f64, p.iops)).collect(),
    ));
    if cv.iter().any(|p| p.device_iops.is_some()) {
        c.series.push(Series::new(
            "device alone",
            1,
            Style::Dashed,
            cv.iter()
                .filter_map(|p| Some((p.qd as f64, p.device_iops?)))
                .collect(),
        ));
    }
    if let Some(l) = d.figures.device_limit.iops {
        c.marks.push(Mark::HLine {
            y: l,
            label: format!("limit {}", fmt_count(l)),
        });
    }
    if let Some(k) = d.figures.knee_qd {
        c.marks.push(Mark::VLine {
            x: k as f64,
            label: format!("knee {k}"),
        });
    }
    format!(
        "<div class=\"mini\">{}<a href=\"#qd\">IOPS against queue depth, in full ↓</a></div>",
        c.svg()
    )
}

/// The four key figures.
fn key_figures(d: &StudyDoc) -> Vec<Kpi> {
    let f = &d.figures;
    let l = &f.device_limit;
    let delivered = match (&f.peak, l.iops) {
        (Some(p), Some(lim)) => Kpi {
            label: "Delivered of the device's limit".into(),
            value: Some(format!("{:.0} %", 100.0 * p.iops / lim)),
            detail: format!(
                "{} of {} IOPS at QD {} ({})",
                fmt_count(p.iops),
                fmt_count(lim),
                p.qd,
                l.basis
            ),
            anchor: "qd".into(),
        },
        (Some(p), None) => Kpi {
            label: "Delivered of the device's limit".into(),
            value: Some("no limit".into()),
            detail: format!(
                "the device has none; the platform peaks at {} IOPS at QD {}",
                fmt_count(p.iops),
                p.qd
            ),
            anchor: "qd".into(),
        },
        _ => na(
            "Delivered of the device's limit",
            "no queue-depth run succeeded",
            "qd",
        ),
    };
    let knee = match &f.knee_latency {
        Some(k) => Kpi {
            label: "Knee (90 % of peak IOPS)".into(),
            value: Some(format!("QD {}", k.qd)),
            detail: format!(
                "{} mean, {} p99 there",
                fmt_ns(k.mean_ns),
                fmt_ns(k.p99_ns as f64)
            ),
            anchor: "latency".into(),
        },
        None => na(
            "Knee (90 % of peak IOPS)",
            "the curve has no knee",
            "latency",
        ),
    };
    let share = match &f.platform_share_qd1 {
        Some(s) => Kpi {
            label: "Platform's share of QD 1 latency".into(),
            value: Some(format!("{:.0} %", s.pct)),
            detail: format!(
                "adds {} to the device's {}",
                fmt_ns(s.platform_ns),
                fmt_ns(s.device_ns)
            ),
            anchor: "decomposition".into(),
        },
        None => na(
            "Platform's share of QD 1 latency",
            "no split of QD 1 latency",
            "decomposition",
        ),
    };
    let sat = &f.saturation;
    let limit = if sat.repeats.is_empty() {
        na("What limits the peak", "not classified", "saturation")
    } else {
        Kpi {
            label: "What limits the peak".into(),
            value: Some(sat.limit.name().to_string()),
            detail: sat.part.clone(),
            anchor: "saturation".into(),
        }
    };
    vec![delivered, knee, share, limit]
}

fn na(label: &str, why: &str, anchor: &str) -> Kpi {
    Kpi {
        label: label.into(),
        value: None,
        detail: why.into(),
        anchor: anchor.into(),
    }
}

/// The chart that shows a fact: (anchor, chart name).
pub fn anchor_of(fact: &str) -> (&'static str, &'static str) {
    let has = |p: &[&str]| p.iter().any(|x| fact.starts_with(x));
    if has(&["knee_latency", "knee_p99"]) {
        ("latency", "latency against IOPS")
    } else if has(&["platform", "device_qd1", "qd1_latency", "device_latency"]) {
        ("decomposition", "latency split")
    } else if has(&[
        "saturation",
        "thread_busy",
        "system_busy",
        "completion_share",
        "device_share",
    ]) {
        ("saturation", "what limits the peak")
    } else if has(&["clocks"]) {
        ("cpu", "CPU by layer")
    } else if has(&["scaling"]) {
        ("scaling", "scaling with threads")
    } else if has(&["bs_", "bw_"]) {
        ("bs", "block sizes")
    } else if has(&["randwrite", "write_limit"]) {
        ("rw", "read/write mixes")
    } else if has(&[
        "sched",
        "engine",
        "cache_hit",
        "buffered",
        "direct_iops",
        "fs_cost",
        "devices",
    ]) {
        ("comparisons", "comparisons")
    } else if has(&["strategy_", "coalesced_"]) {
        ("strategies", "strategies against interrupts")
    } else if has(&["noise", "noisiest"]) {
        ("noise", "noise between repeats")
    } else if has(&[
        "target",
        "current_scheduler",
        "cpus",
        "background",
        "checks",
    ]) {
        ("platform", "platform")
    } else {
        ("qd", "IOPS against queue depth")
    }
}

/// The verdicts, each with its evidence linked to the charts behind it.
fn verdicts(v: &[Verdict]) -> String {
    if v.is_empty() {
        return "<div class=\"missing\">No verdict: no rule's conditions held (see the charts below).</div>".into();
    }
    let mut s = String::from("<ol class=\"vl\">");
    for x in v {
        let mut charts: Vec<(&str, &str)> = Vec::new();
        for (f, _) in &x.evidence.figures {
            let a = anchor_of(f);
            if !charts.contains(&a) {
                charts.push(a);
            }
        }
        let links: Vec<String> = charts
            .iter()
            .map(|(a, n)| format!("<a href=\"#{a}\">{}</a>", esc(n)))
            .collect();
        let figs: Vec<String> = x
            .evidence
            .figures
            .iter()
            .map(|(f, val)| {
                format!(
                    "<a href=\"#{}\">{}</a> {}",
                    anchor_of(f).0,
                    esc(f),
                    esc(val)
                )
            })
            .collect();
        let _ = write!(
            s,
            "<li><span class=\"conf {c}\" title=\"{why}\">{c}</span>{}<div class=\"rec\">{}</div><div class=\"ev\">see {} · <details><summary>evidence: {} figures, {} runs</summary><div>{}<br>runs: {}<br>confidence {c}: {why}</div></details></div></li>",
            esc(&x.finding),
            esc(&x.recommendation),
            links.join(", "),
            x.evidence.figures.len(),
            x.evidence.runs.len(),
            figs.join(" · "),
            esc(&x.evidence.runs.join(", ")),
            c = esc(&x.confidence),
            why = esc(&x.confidence_why),
        );
    }
    s.push_str("</ol>");
    s
}

/// The run to show over time: the longest (writes first, then the
/// busiest), or all runs when none has five whole seconds.
fn pick_timeline(d: &StudyDoc) -> timeline::Timeline {
    let ok: Vec<&RunRecord> = d
        .runs
        .iter()
        .filter(|r| r.error.is_none() && r.result.is_some())
        .collect();
    let key = |r: &&&RunRecord| {
        (
            (r.summary.window_s * 10.0).round() as i64,
            r.sweep == "rw",
            (r.summary.iops) as i64,
        )
    };
    match ok.iter().max_by_key(key) {
        Some(r) if r.summary.window_s >= 5.0 => {
            timeline::of_run(r.result.as_ref().expect("filtered"), &r.id)
        }
        _ => timeline::of_runs(
            &ok.iter()
                .map(|r| (r.id.as_str(), r.result.as_ref().expect("filtered")))
                .collect::<Vec<_>>(),
        ),
    }
}

/// The platform, the target, the lab conditions and the study's warnings.
fn platform(d: &StudyDoc) -> String {
    let m = &d.machine;
    let mut rows: Vec<(String, String, Option<String>)> = Vec::new();
    for t in &d.targets {
        rows.push((
            "target".into(),
            describe(t),
            t.write_refusal
                .as_ref()
                .map(|w| format!("writes refused: {w}")),
        ));
        if !t.emulator_params.is_empty() {
            let p: Vec<String> = t
                .emulator_params
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            rows.push(("emulated device".into(), p.join(" "), None));
        }
    }
    rows.push((
        "machine".into(),
        format!(
            "{} × {}, kernel {}{}",
            m.cpus,
            m.cpu_model,
            m.kernel,
            if m.root { ", as root" } else { ", not root" }
        ),
        None,
    ));
    if let Some(b) = m.background_busy_pct {
        let warn = (b > 10.0).then(|| format!("other work kept the CPUs {b:.0} % busy before the study: it competes with the runs"));
        rows.push((
            "CPUs busy before the study".into(),
            format!("{b:.0} %"),
            warn,
        ));
    }
    if let Some(h) = m.tsc_hz {
        rows.push((
            "TSC rate (the unit of clocks)".into(),
            format!("{:.3} GHz", h / 1e9),
            None,
        ));
    }
    if let Some(r) = d.runs.iter().find_map(|r| r.result.as_ref()) {
        rows.extend(platform_rows(&r.platform).into_iter().skip(2));
    }
    rows.push((
        "plan".into(),
        format!(
            "{} runs planned, {:.1} s each after a {:.1} s ramp, over {}",
            d.plan.points,
            d.plan.runtime_s,
            d.plan.ramp_s,
            fmt_bytes(d.plan.region_bytes as f64)
        ),
        None,
    ));
    for w in &d.warnings {
        rows.push(("study".into(), w.clone(), None));
    }
    for k in &d.skipped {
        rows.push(("not studied".into(), format!("{}: {}", k.what, k.why), None));
    }
    let warnings = rows.iter().filter(|r| r.2.is_some()).count();
    format!(
        "<section class=\"sec\" id=\"platform\"><h2>Platform and lab conditions</h2><p class=\"intro\">{}</p><div class=\"card\">{}</div></section>\n",
        if warnings > 0 { format!("{warnings} condition(s) can make results noisy or unrepresentative (highlighted).") } else { "No lab condition was flagged.".into() },
        kv_table(&rows)
    )
}

/// Every run the study made.
fn runs_table(d: &StudyDoc) -> String {
    let mut t = Table::new(&[
        "run",
        "sweep",
        "workload",
        "IOPS",
        "mean latency",
        "p99 latency",
        "system CPU per I/O",
        "window",
        "options / error",
    ]);
    for r in &d.runs {
        let w = &r.workload;
        let s = &r.summary;
        t.row(vec![
            r.id.clone(),
            r.sweep.clone(),
            format!(
                "{} {} QD {} × {}{}",
                w.rw,
                fmt_bytes(w.bs as f64),
                w.qd,
                w.threads,
                w.engine.as_ref().map_or(String::new(), |e| format!(" {e}"))
            ),
            fmt_count(s.iops),
            fmt_ns(s.lat_mean_ns),
            fmt_ns(s.lat_p99_ns as f64),
            s.cpu
                .as_ref()
                .map_or("-".into(), |c| fmt_ns(c.system_ns_per_io)),
            format!("{:.2} s", s.window_s),
            r.error.clone().unwrap_or_else(|| r.options.join(" ")),
        ]);
    }
    format!(
        "<section class=\"sec\" id=\"runs\"><h2>Every run</h2><details><summary>{} runs (options repeat each by hand with ssdready run)</summary>{}</details></section>\n",
        d.runs.len(),
        t.html()
    )
}
