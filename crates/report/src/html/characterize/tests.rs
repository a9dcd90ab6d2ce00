//! The characterization report rendered from synthetic documents: every
//! section present, steady state reached or not said in words, missing
//! tests explained instead of drawn empty, long WSAT tables thinned.

use super::*;
use ssdready_characterize_judge::model::*;
use ssdready_core::steady::{pts_check, PtsRule};

fn rule() -> PtsRule {
    PtsRule {
        window: 5,
        max_rounds: 25,
        range_pct: 20.0,
        excursion_pct: 10.0,
    }
}

fn wp(label: &str, read_pct: u32, bs: u32, iops: f64, lat_ns: f64) -> WindowPoint {
    WindowPoint {
        label: label.into(),
        access: None,
        read_pct,
        bs,
        iodepth: 1,
        iops,
        bw_bytes: iops * bs as f64,
        read_iops: iops * read_pct as f64 / 100.0,
        write_iops: iops * (100 - read_pct) as f64 / 100.0,
        lat_mean_ns: lat_ns,
        lat_p99_99_ns: (lat_ns * 10.0) as u64,
        lat_max_ns: (lat_ns * 100.0) as u64,
        rounds: 5,
    }
}

fn round_test(name: &str, tracked: Tracked, values: &[f64], window: Vec<WindowPoint>) -> RoundTest {
    RoundTest {
        name: name.into(),
        tracked: Some(tracked),
        tracked_label: format!("{name} figure"),
        rounds: values
            .iter()
            .enumerate()
            .map(|(i, &v)| RoundRecord {
                round: i + 1,
                points: Vec::new(),
                tracked: v,
            })
            .collect(),
        tracked_values: values.to_vec(),
        steady_state_reached: pts_check(values, &rule()).is_some_and(|v| v.reached),
        verdict: pts_check(values, &rule()),
        window,
        ..RoundTest::default()
    }
}

fn doc() -> CharacterizeDoc {
    let steady = [3600.0, 3500.0, 3700.0, 3650.0, 3550.0];
    let iops = round_test("iops", Tracked::Iops, &steady, Vec::new());
    let lat = round_test(
        "latency",
        Tracked::MeanLatency,
        &[150e3, 152e3, 149e3, 151e3, 150e3],
        vec![
            wp("4 KiB random read", 100, 4096, 6600.0, 150e3),
            wp("4 KiB random write", 0, 4096, 3100.0, 320e3),
        ],
    );
    let tput = round_test(
        "throughput_128k",
        Tracked::Bandwidth,
        &[1.8e8; 5],
        vec![wp("128 KiB sequential write", 0, 131072, 1400.0, 2.2e7)],
    );
    CharacterizeDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: "ssdready test".into(),
        target: TargetDoc {
            spec: "emu:x25e,size=256m".into(),
            kind: "emulated".into(),
            capacity_bytes: 256 << 20,
            clock: "virtual".into(),
            logical_block_size: 4096,
            ..TargetDoc::default()
        },
        settings: Settings {
            rule: rule(),
            iodepth: 32,
            ..Settings::default()
        },
        steady_state: steady_state(),
        iops: Some(iops),
        iops_matrix: Some(IopsMatrix {
            block_sizes: vec![4096, 131072],
            read_pcts: vec![100, 0],
            mixes: vec!["100/0".into(), "0/100".into()],
            iops: vec![vec![Some(35_700.0), Some(3600.0)], vec![Some(2270.0), None]],
        }),
        throughput: vec![tput],
        latency: Some(lat),
        wsat: Some(wsat()),
        write_cliff: Some(write_cliff()),
        ..CharacterizeDoc::default()
    }
}

/// Five rounds of 4 KiB random writes, steady from the first.
fn steady_state() -> SteadyStateSummary {
    SteadyStateSummary {
        reached: true,
        rounds: 5,
        randwrite_4k_iops: Some(3600.0),
        window: Some([1, 5]),
        tests: vec![TestSteadyState {
            test: "iops".into(),
            tracked: "4 KiB random write IOPS".into(),
            reached: true,
            rounds: 5,
            value: Some(3600.0),
        }],
        ..SteadyStateSummary::default()
    }
}

/// A write-saturation run: 2 s fresh at 35 K IOPS, then steady at 3.5 K.
fn wsat() -> WsatResult {
    let samples: Vec<WsatSample> = (0..1000)
        .map(|i| WsatSample {
            t_s: i as f64 * 0.1,
            dt_s: 0.1,
            ios: 100,
            iops: if i < 20 { 35_000.0 } else { 3_500.0 },
            bytes_written: (i as u64 + 1) << 20,
            host_pages: Some(256),
            nand_pages: Some(if i < 20 { 256 } else { 2400 }),
        })
        .collect();
    WsatResult {
        label: "4 KiB random write".into(),
        iodepth: 32,
        samples,
        bytes_written: 1000 << 20,
        seconds: 100.0,
        stopped_by: "settled".into(),
        capacity_multiple_written: 3.9,
        ..WsatResult::default()
    }
}

/// The cliff `wsat` shows, its write amplification predicted within 10 %.
fn write_cliff() -> WriteCliff {
    WriteCliff {
        fresh_iops: 35_000.0,
        cliff_at_s: 2.0,
        cliff_at_bytes: 20 << 20,
        cliff_at_capacity: 0.08,
        steady_iops: 3500.0,
        steady_from_s: 10.0,
        steady_from_bytes: 100 << 20,
        settled: true,
        ratio: 10.0,
        wa_seen: Some(9.4),
        wa_inferred: 10.0,
        wa_predicted: Some(8.55),
        wa_error_pct: Some(9.9),
        ..WriteCliff::default()
    }
}

#[test]
fn every_pts_section_is_drawn_with_its_data() {
    let h = render(&doc());
    for id in [
        "c-steady",
        "c-conv-iops",
        "c-conv-latency",
        "c-conv-throughput_128k",
        "c-iops-matrix",
        "c-throughput-bars",
        "c-latency-mix",
        "c-wsat-time",
        "c-wsat-capacity",
        "c-target",
    ] {
        assert!(h.contains(&format!("id=\"{id}\"")), "no {id}");
    }
    // Eight charts: three convergence plots, the matrix, the
    // throughput bars, latency, two WSAT curves.
    assert_eq!(h.matches("<svg class=\"chart\"").count(), 8);
    assert!(!h.contains("Not measured."), "a figure is missing");
    assert!(
        h.contains("3600 IOPS") || h.contains("3.60K IOPS"),
        "steady figure"
    );
    assert!(h.contains("10.0× fall"));
    assert!(h.contains("Steady after 5 rounds"));
    assert!(h.contains("predicted by Desnoyers"));
    // The 1,000 WSAT samples are thinned to at most 400 rows per table.
    let rows = h
        .split("<details><summary>Data (")
        .skip(1)
        .map(|s| s.split(' ').next().unwrap().parse::<usize>().unwrap());
    assert!(
        rows.clone().all(|n| n <= MAX_TABLE_ROWS),
        "{:?}",
        rows.collect::<Vec<_>>()
    );
}

#[test]
fn a_test_that_never_settled_says_so() {
    let mut d = doc();
    let drifting: Vec<f64> = (0..25).map(|i| 1000.0 + 100.0 * i as f64).collect();
    d.iops = Some(round_test("iops", Tracked::Iops, &drifting, Vec::new()));
    d.steady_state.reached = false;
    d.steady_state.tests[0].reached = false;
    let h = render(&d);
    assert!(
        h.contains("Steady state NOT reached after 25 rounds"),
        "{h}"
    );
    assert!(h.contains("NOT reached</td>"));
}

#[test]
fn tests_that_did_not_run_are_explained_not_drawn() {
    let mut d = doc();
    d.wsat = None;
    d.write_cliff = None;
    d.write_cliff_note = Some("the WSAT test did not run (--tests)".into());
    d.latency = None;
    d.iops_matrix = None;
    let h = render(&d);
    assert!(h.contains("the WSAT test did not run (--tests)"));
    assert!(h.contains("Not measured.</b> this characterization ran no latency test"));
    assert!(
        h.contains("Not measured.</b> this characterization ran no IOPS test")
            || h.contains("Not measured.</b> ")
    );
    assert!(h.contains("no write-saturation test"));
}

#[test]
fn the_document_loads_by_its_schema_and_renders_the_same_bytes() {
    let text = serde_json::to_string(&doc()).unwrap();
    let a = crate::html::load(&text).unwrap();
    assert!(matches!(a, crate::html::ReportDoc::Characterize(_)));
    let b = crate::html::load(&text).unwrap();
    assert_eq!(crate::html::render(&a), crate::html::render(&b));
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["schema_version"] = 99.into();
    assert!(crate::html::load_value(v).is_err());
}
