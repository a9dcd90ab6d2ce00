//! A comparison page (`compare.html`): what differs between two studies
//! (or two runs) beyond the noise — the differences as the caller judged
//! them, given as JSON and shown first as a table — then the two curves
//! overlaid (A solid, B dashed).

use super::charts::{Axis, Series, Style, XyChart};
use super::curves::{self, Named};
use super::figure::{Body, Figure, Table};
use super::page::{header, page, section, utc};
use super::svg::{esc, Unit};
use super::{timeline, ReportDoc};
use serde_json::Value;
use ssdready_core::result::RunResult;
use ssdready_core::units::fmt_ns;
use std::fmt::Write as _;

/// The page comparing `a` with `b`; `differences` is the caller's
/// judgement (an array of objects, or an object holding one under
/// `differences`, or anything else, shown as JSON).
pub fn render(a: &ReportDoc, b: &ReportDoc, differences: &Value) -> String {
    let (na, nb) = (describe(a), describe(b));
    let mut body = header(
        "ssdready comparison",
        "A against B",
        &[format!("A: {na}"), format!("B: {nb}")],
    );
    let _ = write!(
        body,
        "<section class=\"sec\" id=\"differences\"><h2>Differences beyond the noise</h2><div class=\"card\">{}</div></section>",
        differences_html(differences)
    );
    match (a, b) {
        (ReportDoc::Study(x), ReportDoc::Study(y)) => {
            let both: [Named; 2] = [("A", x), ("B", y)];
            body.push_str(&section(
                "s-curves",
                "The curves, overlaid",
                "A solid, B dashed.",
                &[curves::qd_iops(&both).html(), curves::hockey(&both).html(), curves::percentiles(&both).html(), curves::scaling(&both).html()],
            ));
        }
        (ReportDoc::Run(x), ReportDoc::Run(y)) => {
            body.push_str(&section("s-curves", "The runs, overlaid", "A solid, B dashed.", &[runs_over_time(x, y).html()]));
        }
        _ => body.push_str("<section class=\"sec\"><div class=\"missing\"><b>No overlay.</b> Documents of different kinds have no curve in common; compare two studies or two runs.</div></section>"),
    }
    page(&format!("ssdready comparison: {na} against {nb}"), &body)
}

/// One line naming a document.
fn describe(d: &ReportDoc) -> String {
    match d {
        ReportDoc::Study(s) => format!(
            "study of {} on {}, {}",
            s.targets.first().map_or("?", |t| t.spec.as_str()),
            utc(s.started_unix_ms),
            s.tool
        ),
        ReportDoc::Run(r) => format!(
            "run {} on {}, {}",
            r.jobs
                .iter()
                .map(|j| j.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            utc(r.started_unix_ms),
            r.tool
        ),
        ReportDoc::Characterize(c) => format!(
            "characterization of {} on {}, {}",
            c.target.spec,
            utc(c.started_unix_ms),
            c.tool
        ),
    }
}

/// A JSON value in a table cell.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if f.fract() != 0.0 => {
                let digits = (3 - f.abs().log10().floor() as i32).clamp(0, 6) as usize;
                format!("{f:.digits$}")
            }
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

/// The differences as a table (objects' keys as columns, in first-seen
/// order), a sentence when there are none, or the JSON itself.
pub fn differences_html(v: &Value) -> String {
    let (list, rest): (Option<&Vec<Value>>, Vec<(&String, &Value)>) = match v {
        Value::Array(a) => (Some(a), Vec::new()),
        Value::Object(o) => match o.get("differences") {
            Some(Value::Array(a)) => (
                Some(a),
                o.iter()
                    .filter(|(k, x)| *k != "differences" && !x.is_array() && !x.is_object())
                    .collect(),
            ),
            _ => (None, Vec::new()),
        },
        Value::Null => (Some(&EMPTY), Vec::new()),
        _ => (None, Vec::new()),
    };
    let Some(list) = list.filter(|l| l.iter().all(Value::is_object)) else {
        let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
        return format!("<pre>{}</pre>", esc(&pretty));
    };
    let mut s = String::new();
    if !rest.is_empty() {
        s.push_str("<p class=\"note\">");
        let kv: Vec<String> = rest
            .iter()
            .map(|(k, x)| format!("{}: {}", esc(k), esc(&cell(x))))
            .collect();
        s.push_str(&kv.join(" · "));
        s.push_str("</p>");
    }
    if list.is_empty() {
        s.push_str("<p><b>No difference exceeds the noise seen in repeats.</b></p>");
        return s;
    }
    let mut keys: Vec<&String> = Vec::new();
    for o in list.iter().filter_map(Value::as_object) {
        for k in o.keys() {
            if !keys.contains(&k) {
                keys.push(k);
            }
        }
    }
    let mut t = Table::new(&keys.iter().map(|k| k.as_str()).collect::<Vec<_>>());
    for o in list.iter().filter_map(Value::as_object) {
        t.row(
            keys.iter()
                .map(|k| o.get(*k).map_or("-".into(), cell))
                .collect(),
        );
    }
    s.push_str(&t.html());
    s
}

static EMPTY: Vec<Value> = Vec::new();

/// Two runs' IOPS per second and their latency percentiles.
fn runs_over_time(a: &RunResult, b: &RunResult) -> Figure {
    let mut c = XyChart::new(
        "IOPS per second, A and B",
        Axis::linear("time since the measured window began", Unit::Seconds),
        Axis::linear("IOPS", Unit::Count),
    );
    let mut t = Table::new(&["run", "t (s)", "IOPS", "mean latency"]);
    for (i, (name, r)) in [("A", a), ("B", b)].iter().enumerate() {
        let tl = timeline::of_run(r, name);
        let st = if i == 0 { Style::Line } else { Style::Dashed };
        c.series.push(Series::new(
            name,
            i,
            st,
            tl.seconds
                .iter()
                .map(|s| (s.t0 + s.dur / 2.0, s.iops()))
                .collect(),
        ));
        for s in &tl.seconds {
            t.row(vec![
                name.to_string(),
                format!("{:.1}", s.t0),
                format!("{:.0}", s.iops()),
                fmt_ns(s.sample.lat_mean_ns()),
            ]);
        }
    }
    Figure {
        id: "over-time".into(),
        title: c.title.clone(),
        note: String::new(),
        body: if t.rows.is_empty() {
            Body::Missing("neither run kept a per-second series.".into())
        } else {
            Body::Chart(c.svg())
        },
        table: Some(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn differences_become_a_table_with_every_key() {
        let h = differences_html(&json!([
            {"figure": "peak_iops", "a": 543426.1, "b": 401234.5},
            {"figure": "knee_qd", "a": 128, "b": 64, "noise_pct": 3.25}
        ]));
        assert!(h.contains("<th>noise_pct</th>"));
        assert!(
            h.contains("<td>543426</td>") || h.contains("<td>543426.1</td>"),
            "{h}"
        );
        assert!(h.contains("<td>3.250</td>"), "{h}");
    }

    fn study(spec: &str, scale: f64, knee: u32) -> ReportDoc {
        use ssdready_diagnosis::model::StudyDoc;
        use ssdready_measured::curve::CurvePoint;
        use ssdready_measured::record::TargetProfile;
        let mut d = StudyDoc {
            schema: "ssdready.study".into(),
            schema_version: 1,
            targets: vec![TargetProfile {
                spec: spec.into(),
                ..TargetProfile::default()
            }],
            ..StudyDoc::default()
        };
        d.figures.qd_curve = [1u32, 2, 4, 8, 16]
            .iter()
            .map(|&qd| CurvePoint {
                qd,
                iops: scale * 10_000.0 * (qd as f64).min(8.0),
                lat_mean_ns: 100_000.0 * qd as f64 / qd.min(8) as f64,
                lat_p99_ns: 300_000 * qd as u64,
                ..CurvePoint::default()
            })
            .collect();
        d.figures.knee_qd = Some(knee);
        d.figures.device_limit.iops = Some(90_000.0);
        ReportDoc::Study(Box::new(d))
    }

    #[test]
    fn two_studies_are_overlaid_a_solid_and_b_dashed() {
        let (a, b) = (study("emu:x25e", 1.0, 8), study("emu:x25e", 0.8, 4));
        let diff = json!([{"figure": "peak_iops", "a": 80000, "b": 64000, "change_pct": -20.0}]);
        let page = render(&a, &b, &diff);
        for want in [
            "A: measured (best of repeats)",
            "B: measured (best of repeats)",
            "A: knee QD 8",
            "B: knee QD 4",
            "A: p99",
            "B: mean",
            "<th>change_pct</th>",
        ] {
            assert!(page.contains(want), "missing {want}");
        }
        // A's curve is solid, B's dashed; the limit both share is drawn once.
        assert!(page.contains("stroke-dasharray:6 4"));
        assert_eq!(page.matches("device limit 90.0K IOPS").count(), 1);
        assert!(!page.contains("http://") && !page.contains("https://"));
        let run = ReportDoc::Run(Box::default());
        assert!(render(&a, &run, &Value::Null).contains("No overlay"));
    }

    #[test]
    fn no_differences_is_said_in_words() {
        assert!(
            differences_html(&json!({"differences": [], "noise_pct": 2.0}))
                .contains("No difference exceeds the noise")
        );
        assert!(differences_html(&Value::Null).contains("No difference"));
        assert!(
            differences_html(&json!("odd <x>")).contains("<pre>&quot;odd &lt;x&gt;&quot;</pre>")
        );
    }
}
