//! The HTML report end to end: a quick study on the emulator (short runs:
//! SSDREADY_STUDY_RUNTIME) writes `report.html` beside `study.json`;
//! `ssdready report DIR` re-renders the same bytes; `run --report DIR`
//! writes the run's JSON and its report; bad input gets one line and exit
//! code 2. In headless Chromium (`/usr/bin/chromium`; skipped, saying so,
//! without it) each page has no console message or script error, makes no
//! network request (Chromium's own net log: no request a page initiated),
//! and every chart drew marks (the page's self-check); a screenshot of the
//! study's first screen is kept under target/. Two controls show the
//! browser checks can fail: a copy of the report loading an image from
//! the network is caught, with its policy (a console message) and without
//! (a request in the net log).

use crate::common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The directory of one quick study, made once for every test here.
fn study_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("report-study-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let out = Command::new(env!("CARGO_BIN_EXE_ssdready"))
            .args(["study", "--in-process", "--quick", "--quiet", "--output"])
            .arg(&dir)
            .env("SSDREADY_STUDY_RUNTIME", "0.3")
            .output()
            .expect("run ssdready study");
        assert_eq!(
            out.status.code(),
            Some(0),
            "study failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    })
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// What a headless browser saw of a page.
struct Seen {
    dom: String,
    /// Console messages (Chromium logs every one as `…:CONSOLE…`).
    console: Vec<String>,
    /// URLs of requests a page initiated (Chromium's own background
    /// requests have the initiator "not an origin").
    requests: Vec<String>,
}

impl Seen {
    /// The value of `attr` on the element whose tag starts `<tag`.
    fn attr(&self, tag: &str, attr: &str) -> Option<String> {
        let start = self.dom.find(&format!("<{tag}"))?;
        let end = start + self.dom[start..].find('>')?;
        let el = &self.dom[start..end];
        let at = el.find(&format!(" {attr}=\""))? + attr.len() + 3;
        Some(el[at..at + el[at..].find('"')?].to_string())
    }
}

/// Load `page` in headless Chromium; None (with the reason printed) when
/// there is no Chromium here.
fn browse(page: &Path, screenshot: Option<&Path>) -> Option<Seen> {
    if !Path::new(CHROMIUM).exists() {
        eprintln!("skipped: no {CHROMIUM} (apt-get install chromium; CI installs it)");
        return None;
    }
    let tmp = tempfile::tempdir().unwrap();
    let net = tmp.path().join("net.json");
    let base = |c: &mut Command| {
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            tmp.path().join("profile").display()
        ));
    };
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut c = Command::new(CHROMIUM);
    base(&mut c);
    c.args(["--enable-logging=stderr", "--v=0"])
        .arg(format!("--log-net-log={}", net.display()))
        .arg("--dump-dom")
        .arg(&url);
    let out = c.output().expect("run chromium");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let log: Value = serde_json::from_str(&read(&net)).expect("Chromium's net log is JSON");
    let types = &log["constants"]["logEventTypes"];
    let start_job = types["URL_REQUEST_START_JOB"]
        .as_u64()
        .expect("a known event type");
    let requests = log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_u64() == Some(start_job))
        .filter(|e| e["params"]["initiator"] != "not an origin")
        .filter_map(|e| e["params"]["url"].as_str().map(str::to_string))
        .collect();
    if let Some(png) = screenshot {
        let mut c = Command::new(CHROMIUM);
        base(&mut c);
        let out = c
            .arg(format!("--screenshot={}", png.display()))
            .arg("--window-size=1366,768")
            .arg(&url)
            .output()
            .expect("run chromium");
        assert!(out.status.success());
        eprintln!("screenshot of the first screen: {}", png.display());
    }
    Some(Seen {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console,
        requests,
    })
}

/// The checks every page passes in the browser; `charts` is how many
/// charts the file holds.
fn check_in_browser(seen: &Seen, charts: usize) {
    assert!(
        seen.console.is_empty(),
        "console messages: {:?}",
        seen.console
    );
    assert_eq!(seen.attr("html", "data-errors"), None, "script errors");
    assert!(
        seen.requests.is_empty(),
        "the page made requests: {:?}",
        seen.requests
    );
    assert_eq!(
        seen.attr("body", "data-charts").as_deref(),
        Some(format!("ok {charts}").as_str()),
        "every chart draws marks"
    );
}

/// Checks of the file itself: self-contained, strict policy, small.
fn check_file(html: &str) -> usize {
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\""));
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no network reference"
    );
    assert!(html.len() < 1 << 20, "{} bytes", html.len());
    let charts = html.matches("<svg class=\"chart\"").count();
    assert!(charts > 0);
    charts
}

#[test]
fn a_study_writes_a_self_contained_report_that_rerenders_to_the_same_bytes() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = study_dir();
    let html = read(&dir.join("report.html"));
    let charts = check_file(&html);
    assert!(charts >= 10, "{charts} charts");
    // The answer first: the key figures and the verdicts, linked to charts.
    let study: Value = serde_json::from_str(&read(&dir.join("study.json"))).unwrap();
    let first = study["verdicts"][0]["finding"].as_str().unwrap();
    let esc = first
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\'', "&#39;")
        .replace('"', "&quot;");
    let answer_end = html.find("id=\"s-qd\"").expect("the curves' section");
    assert!(
        html[..answer_end].contains(&esc),
        "the first verdict is on the first screen"
    );
    check_anchors_and_links(&html);
    check_strategies_section(&html, &study);
    // Per-second latency reached the study's runs and the heat map.
    let series = &study["runs"][0]["result"]["jobs"][1]["read"]["series"][0];
    assert!(series["lat_p99_ns"].as_u64().unwrap() > 0, "{series}");
    assert!(
        html.contains("class=\"mark cell\""),
        "the heat map has cells"
    );

    let before = std::fs::read(dir.join("report.html")).unwrap();
    std::fs::remove_file(dir.join("report.html")).unwrap();
    let out = ssdready(&["report", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(dir.join("report.html")).unwrap(),
        before,
        "re-rendered from study.json alone"
    );
}

/// Every chart the report promises has its anchor, and every link in it
/// a target.
fn check_anchors_and_links(html: &str) {
    for anchor in [
        "qd",
        "latency",
        "percentiles",
        "decomposition",
        "cpu",
        "cpu-qd",
        "scaling",
        "timeline",
        "heatmap",
        "platform",
        "saturation",
        "strategies",
    ] {
        assert!(
            html.contains(&format!("id=\"{anchor}\"")),
            "chart #{anchor}"
        );
    }
    for link in html
        .match_indices("href=\"#")
        .map(|(i, _)| &html[i + 7..i + 7 + html[i + 7..].find('"').unwrap()])
    {
        assert!(
            html.contains(&format!("id=\"{link}\"")),
            "link to #{link} has a target"
        );
    }
}

/// The strategies section: a chart and a row per result, with its ratios.
fn check_strategies_section(html: &str, study: &Value) {
    let sec = &html[html
        .find("id=\"s-strategies\"")
        .expect("the strategies section")..];
    let sec = &sec[..sec.find("</section>").unwrap_or(sec.len())];
    assert!(
        sec.contains("<svg class=\"chart\""),
        "a chart of the strategies"
    );
    for r in study["figures"]["strategies"]["results"]
        .as_array()
        .unwrap()
    {
        let cell = format!("<td>{}</td>", r["strategy"].as_str().unwrap());
        assert!(sec.contains(&cell), "{cell} in the strategies table");
        if let Some(x) = r["vs_async_intr"]["iops_ratio"].as_f64() {
            let ratio = ssdready_diagnosis::strategies::fmt_ratio(x).replace('<', "&lt;");
            let shown = format!("<td>{ratio}×</td>");
            assert!(sec.contains(&shown), "{shown} for {}", r["strategy"]);
        }
    }
}

#[test]
fn the_study_report_in_chromium_draws_every_chart_without_errors_or_requests() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let page = study_dir().join("report.html");
    let charts = check_file(&read(&page));
    let png = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    let Some(seen) = browse(&page, Some(&png)) else {
        return;
    };
    check_in_browser(&seen, charts);
    assert!(
        std::fs::metadata(&png).unwrap().len() > 10_000,
        "a screenshot with content"
    );
}

#[test]
fn the_browser_checks_catch_a_page_that_loads_from_the_network() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let html = read(&study_dir().join("report.html"));
    let tmp = tempfile::tempdir().unwrap();
    let canary = "<img src=\"http://127.0.0.1:9/canary.png\">";
    // With its policy, the load is refused, and the console says so.
    let with_csp = tmp.path().join("csp.html");
    std::fs::write(
        &with_csp,
        html.replacen("<main>", &format!("<main>{canary}"), 1),
    )
    .unwrap();
    let Some(seen) = browse(&with_csp, None) else {
        return;
    };
    assert!(
        seen.console
            .iter()
            .any(|l| l.contains("Content Security Policy")),
        "{:?}",
        seen.console
    );
    assert!(seen.requests.is_empty());
    // Without it, the request shows in the net log.
    let start = html
        .find("<meta http-equiv=\"Content-Security-Policy\"")
        .unwrap();
    let end = start + html[start..].find('>').unwrap() + 1;
    let bare = format!("{}{}", &html[..start], &html[end..]).replacen(
        "<main>",
        &format!("<main>{canary}"),
        1,
    );
    let without = tmp.path().join("bare.html");
    std::fs::write(&without, bare).unwrap();
    let seen = browse(&without, None).expect("chromium was there a moment ago");
    assert!(
        seen.requests.iter().any(|u| u.contains("canary")),
        "{:?}",
        seen.requests
    );
}

#[test]
fn run_report_writes_the_native_json_and_its_report() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let out = ssdready(&[
        "run",
        "--name=t",
        "--filename=emu:x25e,size=128m",
        "--rw=randread",
        "--bs=4k",
        "--iodepth=8",
        "--runtime=2s",
        "--ramp_time=0.3s",
        "--time_based",
        "--quiet",
        &format!("--report={}", dir.display()),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_str(&read(&dir.join("result.json"))).unwrap();
    assert_eq!(result["schema"], "ssdready.run");
    let secs = result["jobs"][0]["read"]["series"].as_array().unwrap();
    assert!(secs.len() >= 2);
    for s in secs {
        let n: u64 = s["lat_buckets"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .sum();
        assert_eq!(
            n,
            s["ios"].as_u64().unwrap(),
            "every completion has its latency bucket: {s}"
        );
    }
    let html = read(&dir.join("report.html"));
    let charts = check_file(&html);
    assert!(html.contains("ramp") && html.contains("id=\"heatmap\""));
    let before = html.clone();
    let out = ssdready(&["report", dir.join("result.json").to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&dir.join("report.html")), before);
    if let Some(seen) = browse(&dir.join("report.html"), None) {
        check_in_browser(&seen, charts);
    }
}

#[test]
fn a_comparison_page_overlays_two_studies() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    use ssdready_report::html::{load, render_compare};
    let text = read(&study_dir().join("study.json"));
    let a = load(&text).unwrap();
    // B: the same study on a drive a fifth slower.
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for p in v["figures"]["qd_curve"].as_array_mut().unwrap() {
        let iops = p["iops"].as_f64().unwrap();
        p["iops"] = (iops * 0.8).into();
    }
    let b = ssdready_report::html::load_value(v).unwrap();
    let diff =
        serde_json::json!([{"figure": "peak_iops", "a": 1.0, "b": 0.8, "change_pct": -20.0}]);
    let page = render_compare(&a, &b, &diff);
    assert!(page.contains("A: measured") && page.contains("B: measured"));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("compare.html");
    std::fs::write(&file, &page).unwrap();
    let charts = check_file(&page);
    if let Some(seen) = browse(&file, None) {
        check_in_browser(&seen, charts);
    }
}

#[test]
fn report_refuses_bad_input_with_one_line_and_exit_2_writing_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let cases: Vec<(PathBuf, &str, &str)> = vec![
        (d.join("missing"), "", "No such file"),
        (
            d.join("empty"),
            "",
            "has no study.json, result.json or characterize.json",
        ),
        (d.join("notjson"), "{\"schema\": ", "not JSON"),
        (
            d.join("other"),
            "{\"schema\": \"fio\", \"schema_version\": 1}",
            "schema 'fio' is not one ssdready renders",
        ),
        (
            d.join("newer"),
            "{\"schema\": \"ssdready.study\", \"schema_version\": 9}",
            "ssdready.study version 9 is not one this ssdready reads (allowed: 1 to 2)",
        ),
        (
            d.join("shape"),
            "{\"schema\": \"ssdready.run\", \"schema_version\": 1, \"jobs\": 3}",
            "does not match its schema",
        ),
    ];
    for (dir, json, want) in &cases {
        if !dir.ends_with("missing") {
            std::fs::create_dir(dir).unwrap();
        }
        if !json.is_empty() {
            std::fs::write(dir.join("study.json"), json).unwrap();
        }
        let out = ssdready(&["report", dir.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{dir:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(want), "{dir:?}: {err}");
        assert!(!dir.join("report.html").exists(), "nothing written");
    }
    // run --report to a path under a file: refused before the run.
    let f = d.join("file");
    std::fs::write(&f, "x").unwrap();
    let out = ssdready(&[
        "run",
        "--name=t",
        "--filename=emu:x25e,size=128m",
        "--number_ios=10",
        &format!("--report={}", f.display()),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("option 'report'"));
}

#[test]
fn compare_writes_compare_html_with_the_two_curves_overlaid() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cmp");
    let study = study_dir().to_str().unwrap().to_owned();
    let json = study_dir().join("study.json");
    let out = ssdready(&[
        "compare",
        &study,
        json.to_str().unwrap(),
        "--output",
        dir.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.join("compare.html");
    let html = read(&page);
    let charts = check_file(&html);
    assert!(charts >= 3, "{charts} overlaid charts");
    assert!(html.contains("A solid, B dashed"), "the overlay's key");
    assert!(
        html.contains("No difference exceeds the noise"),
        "a study against itself differs in nothing"
    );
    let Some(seen) = browse(&page, None) else {
        return;
    };
    check_in_browser(&seen, charts);
}
