//! The page around the charts: one self-contained HTML file with a strict
//! Content-Security-Policy (nothing can be fetched: no `http(s)` reference
//! anywhere), its style sheet (screen and print), the header, the key
//! figures, and a small inline self-check script that records script
//! errors and whether every chart drew data marks (`data-charts` on the
//! body: `ok N` when all N charts did), which the tests read back from a
//! headless browser.

use super::svg::esc;
use ssdready_core::result::Platform;
use std::fmt::Write as _;

/// The Content-Security-Policy of every report.
pub const CSP: &str =
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

const STYLE: &str = r#"
:root{--ink:#1b2127;--mute:#5b6570;--line:#dde1e6;--bg:#f3f4f6;--card:#fff;--accent:#1f5fa8;--ok:#1b7f4b;--warn:#a15c00;--bad:#b3261e}
*{box-sizing:border-box}
html{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);background:var(--bg)}
body{margin:0}
main{max-width:1340px;margin:0 auto;padding:10px 18px 40px}
a{color:var(--accent);text-decoration:none}
a:hover{text-decoration:underline}
header.top{display:flex;justify-content:space-between;align-items:baseline;gap:16px;border-bottom:2px solid var(--ink);padding:4px 0 5px;margin-bottom:8px}
header.top h1{font-size:19px;margin:0;font-weight:650}
header.top h1 span{font-weight:400;color:var(--mute);font-size:14px;margin-left:8px}
header.top .meta{color:var(--mute);font-size:12px;text-align:right;white-space:nowrap}
.banner{background:#fff4e5;border:1px solid #f0c27b;border-radius:5px;padding:5px 10px;margin:0 0 8px;font-size:13px}
.answer{display:grid;grid-template-columns:390px 1fr;gap:14px;align-items:start}
.mini{background:var(--card);border:1px solid var(--line);border-radius:5px;padding:4px 6px 2px}
.mini a{font-size:11.5px}
.kpis{display:grid;gap:8px}
.kpi{display:block;background:var(--card);border:1px solid var(--line);border-left:4px solid var(--accent);border-radius:5px;padding:6px 10px;color:var(--ink)}
.kpi:hover{text-decoration:none;border-color:var(--accent)}
.kpi .k{font-size:11.5px;text-transform:uppercase;letter-spacing:.04em;color:var(--mute)}
.kpi .v{font-size:22px;font-weight:650;line-height:1.15}
.kpi .d{font-size:12px;color:var(--mute)}
.kpi.na{border-left-color:#aab2bb}.kpi.na .v{color:var(--mute)}
.verdicts h2,.sec h2{font-size:15px;margin:0 0 5px;font-weight:650}
ol.vl{list-style:none;margin:0;padding:0;counter-reset:v}
ol.vl>li{counter-increment:v;background:var(--card);border:1px solid var(--line);border-radius:5px;padding:5px 10px 5px 34px;margin:0 0 5px;position:relative;font-size:13px}
ol.vl>li:before{content:counter(v);position:absolute;left:9px;top:5px;font-weight:700;color:var(--mute)}
.rec{color:#24425f}
.rec:before{content:"→ "}
.ev{font-size:11.5px;color:var(--mute);margin-top:1px}
.ev a{white-space:nowrap}
.ev details{display:inline;margin:0;font-size:inherit}
.ev details>summary{display:inline;color:var(--mute);text-decoration:underline dotted}
.ev details[open]>div{margin:2px 0 0;padding:3px 6px;background:#f6f7f9;border-radius:4px}
.conf{display:inline-block;font-size:10.5px;font-weight:650;text-transform:uppercase;border-radius:3px;padding:0 5px;margin-right:5px;vertical-align:1px;color:#fff}
.conf.high{background:var(--ok)}.conf.medium{background:var(--warn)}.conf.low{background:#8a939c}
.sec{margin-top:18px}
.sec>h2{border-bottom:1px solid var(--line);padding-bottom:3px}
.sec>p.intro{margin:2px 0 8px;color:var(--mute);font-size:13px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:12px}
figure.fig{margin:0;background:var(--card);border:1px solid var(--line);border-radius:6px;padding:9px 12px 8px;break-inside:avoid}
figure.fig h3{font-size:13.5px;margin:0 0 1px;font-weight:650}
figure.fig p.note{font-size:12px;color:var(--mute);margin:0 0 4px}
svg.chart{display:block;width:100%;height:auto;font-family:inherit}
svg.chart+svg.chart{margin-top:4px}
svg .tick{font-size:11px;fill:#4a535c}
svg .atitle{font-size:11.5px;fill:#2d343b}
svg .lg{font-size:11px;fill:#2d343b}
svg .grid{stroke:#eceef1;stroke-width:1}
svg .axis{stroke:#8c959f;stroke-width:1}
svg .ref{stroke:#b3261e;stroke-width:1.3;stroke-dasharray:5 3}
svg .reflabel{font-size:11px;fill:#b3261e;font-weight:600}
svg .plabel{font-size:10px;fill:#4a535c}
svg .note{font-size:11px;fill:#5b6570}
svg .band{fill-opacity:.13}
svg .heatbg{fill:#f4f5f7}
svg .sep{stroke:#fff;stroke-width:1}
svg .seglabel{font-size:9.5px;fill:#5b6570}
.missing{border:1px dashed #b8c0c8;border-radius:5px;background:#fafbfc;padding:22px 16px;color:var(--mute);font-size:13px;text-align:center}
details{margin-top:4px;font-size:12px}
details>summary{cursor:pointer;color:var(--accent);width:max-content}
.tw{overflow-x:auto;max-height:420px;overflow-y:auto;margin-top:4px}
table.data{border-collapse:collapse;font-size:12px;font-variant-numeric:tabular-nums;width:100%}
table.data th{text-align:left;background:#eef0f3;font-weight:600;position:sticky;top:0}
table.data th,table.data td{padding:2px 8px;border-bottom:1px solid #eceef1;white-space:nowrap}
table.data td+td,table.data th+th{text-align:right}
table.data.kv td+td,table.data.kv th+th{text-align:left;white-space:normal}
.tw.all{max-height:none}
table.data tr.warn td{background:#fff4e5}
ul.plain{margin:4px 0;padding-left:18px;font-size:13px}
.card{background:var(--card);border:1px solid var(--line);border-radius:6px;padding:9px 12px}
footer{margin-top:24px;color:var(--mute);font-size:11.5px}
@media (max-width:1000px){.answer{grid-template-columns:1fr}.kpis{grid-template-columns:repeat(2,1fr)}}
@media print{
 html{background:#fff;font-size:11.5px}
 main{max-width:none;padding:0}
 .grid{grid-template-columns:1fr 1fr}
 figure.fig,.card,ol.vl>li,.kpi{border-color:#bbb}
 details{display:none}
 .sec{break-before:auto}
 a{color:inherit}
 @page{size:A4 landscape;margin:12mm}
}
"#;

/// Records script errors before anything else runs.
const ERROR_HOOK: &str = "window.addEventListener('error',function(e){var d=document.documentElement;d.setAttribute('data-errors',(d.getAttribute('data-errors')||'')+(e.message||'error')+' | ');});";

/// Marks `data-charts` on the body: `ok N` when every chart drew a mark
/// with a non-empty box, else which charts did not.
const SELF_CHECK: &str = "(function(){var s=document.querySelectorAll('svg.chart'),bad=[];for(var i=0;i<s.length;i++){var m=s[i].querySelectorAll('.mark'),n=0;for(var j=0;j<m.length;j++){var b=m[j].getBBox();if(b.width>0||b.height>0)n++;}if(!n){var t=s[i].querySelector('title');bad.push(t?t.textContent:'#'+i);}}document.body.setAttribute('data-charts',(bad.length||!s.length?'missing '+bad.length+' of '+s.length+': '+bad.join('; '):'ok '+s.length));})();";

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    let mut s = String::with_capacity(body.len() + STYLE.len() + 2048);
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<meta name=\"generator\" content=\"ssdready {}\">\
<title>{}</title><script>{ERROR_HOOK}</script><style>{STYLE}</style></head>\n<body><main>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    );
    s.push_str(body);
    let _ = write!(s, "\n</main><script>{SELF_CHECK}</script></body></html>\n");
    s
}

/// The header: a title, a subtitle and a meta line at the right.
pub fn header(title: &str, subtitle: &str, meta: &[String]) -> String {
    format!(
        "<header class=\"top\"><h1>{}<span>{}</span></h1><div class=\"meta\">{}</div></header>\n",
        esc(title),
        esc(subtitle),
        meta.iter().map(|m| esc(m)).collect::<Vec<_>>().join("<br>")
    )
}

/// One key figure: a label, a big value, a line of detail, and the anchor
/// of the chart behind it (None: not measured).
pub struct Kpi {
    pub label: String,
    pub value: Option<String>,
    pub detail: String,
    pub anchor: String,
}

/// The key figures as linked tiles (the caller wraps them in a column).
pub fn kpis(items: &[Kpi]) -> String {
    let mut s = String::new();
    for k in items {
        let _ = write!(
            s,
            "<a class=\"kpi{}\" href=\"#{}\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"d\">{}</div></a>",
            if k.value.is_none() { " na" } else { "" },
            esc(&k.anchor),
            esc(&k.label),
            esc(k.value.as_deref().unwrap_or("not measured")),
            esc(&k.detail)
        );
    }
    s
}

/// A section: a title, an introduction and its figures in a grid.
pub fn section(id: &str, title: &str, intro: &str, figures: &[String]) -> String {
    let mut s = format!(
        "<section class=\"sec\" id=\"{}\"><h2>{}</h2>",
        esc(id),
        esc(title)
    );
    if !intro.is_empty() {
        let _ = write!(s, "<p class=\"intro\">{}</p>", esc(intro));
    }
    s.push_str("<div class=\"grid\">");
    for f in figures {
        s.push_str(f);
    }
    s.push_str("</div></section>\n");
    s
}

/// Key–value rows, warnings highlighted: (key, value, warning).
pub fn kv_table(rows: &[(String, String, Option<String>)]) -> String {
    let mut s = String::from(
        "<div class=\"tw all\"><table class=\"data kv\"><thead><tr><th>what</th><th>value</th><th>warning</th></tr></thead><tbody>",
    );
    for (k, v, w) in rows {
        let _ = write!(
            s,
            "<tr{}><td>{}</td><td>{}</td><td>{}</td></tr>",
            if w.is_some() { " class=\"warn\"" } else { "" },
            esc(k),
            esc(v),
            esc(w.as_deref().unwrap_or(""))
        );
    }
    s.push_str("</tbody></table></div>");
    s
}

/// The platform as the run recorded it: kernel, CPU, clock source,
/// mitigations, devices' queues, and each lab condition with its warning.
pub fn platform_rows(p: &Platform) -> Vec<(String, String, Option<String>)> {
    let mut rows = vec![
        ("kernel".into(), p.kernel.clone(), None),
        (
            "CPU".into(),
            format!("{} ({} online)", p.cpu_model, p.cpus_online),
            None,
        ),
    ];
    if let Some(c) = &p.clocksource {
        rows.push(("clock source".into(), c.clone(), None));
    }
    if !p.mitigations.is_empty() {
        let m: Vec<String> = p
            .mitigations
            .iter()
            .map(|(k, v)| format!("{k}: {v}"))
            .collect();
        rows.push(("CPU mitigations".into(), m.join("; "), None));
    }
    for d in &p.devices {
        let mut v = format!("{} bytes", d.size_bytes);
        if let Some(s) = &d.scheduler {
            let _ = write!(v, ", scheduler {s}");
        }
        if let Some(n) = d.nr_requests {
            let _ = write!(v, ", nr_requests {n}");
        }
        if let Some(b) = &d.loop_backing_file {
            let _ = write!(v, ", backed by {b}");
        }
        rows.push((format!("device {}", d.name), v, None));
    }
    for l in &p.lab {
        rows.push((
            format!("lab: {}", l.name),
            format!("{} ({})", l.value, l.source),
            l.warning.clone(),
        ));
    }
    rows
}

/// `2026-11-22 09:15 UTC` from Unix milliseconds.
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let (y, m, d) = ssdready_core::units::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        rem / 60 % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained_with_a_strict_policy() {
        let p = page("a <b>", "<p>x</p>");
        assert!(p.contains(&format!("content=\"{CSP}\"")));
        assert!(!p.contains("http://") && !p.contains("https://"));
        assert!(p.contains("<title>a &lt;b&gt;</title>"));
        assert!(p.contains("data-charts"));
    }

    #[test]
    fn utc_dates_are_civil() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_763_804_130_000), "2025-11-22 09:35 UTC");
    }
}
