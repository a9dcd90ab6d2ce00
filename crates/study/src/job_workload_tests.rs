//! The workload kept as the user's, from recorded and made-up
//! measurements: a change of the block size is what a different workload
//! would get, never the best configuration nor what holds the job; a
//! change of the application's mechanics that helps is, with what it asks;
//! a mix is judged direction by direction on each one's metric.

use super::*;
use crate::job;
use ssdready_core::options::RawOption;
use ssdready_diagnosis::limit::job::best as job_best;
use ssdready_diagnosis::limit::job::gain::*;

fn figures(read: Option<(f64, f64)>, write: Option<(f64, f64)>) -> RunFigures {
    let dir = |x: Option<(f64, f64)>| {
        x.map(|(iops, bw)| Dir {
            iops,
            bw_bytes_per_s: bw,
            ..Default::default()
        })
    };
    RunFigures {
        together: JobFigures {
            name: "all jobs".into(),
            read: dir(read),
            write: dir(write),
            cpu_per_io_ns: None,
        },
        ..Default::default()
    }
}

fn section(name: &str, global: bool, opts: &[(&str, &str)]) -> Section {
    Section {
        name: name.into(),
        global,
        options: opts
            .iter()
            .map(|(k, v)| RawOption::cli(k, Some(v)))
            .collect(),
    }
}

/// kubestr's `[job1]` as studied on a 16-CPU cloud VM (2026-11-27).
fn kubestr_job1() -> Vec<Section> {
    vec![
        section(
            "global",
            true,
            &[("ioengine", "libaio"), ("direct", "1"), ("verify", "0")],
        ),
        section(
            "job1",
            false,
            &[("bs", "4K"), ("iodepth", "64"), ("readwrite", "randread")],
        ),
    ]
}

/// Its three repeats as recorded: IOPS and bytes per second of reads.
const REPEATS: [(f64, f64); 3] = [
    (91_005.0, 372_757_759.0),
    (100_507.0, 411_675_962.0),
    (98_206.0, 402_249_861.0),
];

/// Each variant as recorded there: its option, IOPS and bytes per second.
const RECORDED: [(&str, f64, f64); 7] = [
    ("iodepth=32", 85_931.0, 351_971_819.0),
    ("iodepth=128", 91_203.0, 373_567_713.0),
    ("iodepth=256", 84_957.0, 347_983_258.0),
    ("numjobs=2", 93_975.0, 384_921_505.0),
    ("ioengine=io_uring", 92_880.0, 380_436_341.0),
    ("ioengine=psync", 28_223.0, 115_601_828.0),
    ("bs=8192", 78_781.0, 645_374_429.0),
];

/// The variants of `sections` judged with `measured` (option → figures).
fn judged(
    sections: &[Section],
    base: &[DirBase],
    measured: &dyn Fn(&str) -> Option<RunFigures>,
) -> Vec<(Variant, VariantResult)> {
    job::variants(sections)
        .into_iter()
        .map(|v| {
            let mut r = VariantResult {
                what: v.what.clone(),
                option: v.option.clone(),
                asks: v.asks.clone(),
                figures: measured(&v.option),
                ..Default::default()
            };
            judge_variant(&mut r, base);
            (v, r)
        })
        .collect()
}

#[test]
fn a_doubled_block_is_what_a_different_workload_would_get_never_the_best_configuration() {
    let s = kubestr_job1();
    let repeats: Vec<RunFigures> = REPEATS.iter().map(|&r| figures(Some(r), None)).collect();
    let base = baseline(&repeats, &s);
    // 4 KiB random reads: judged on IOPS.
    assert_eq!(base.len(), 1);
    assert!(!base[0].by_bandwidth && !by_bandwidth(&base));
    let measured = |o: &str| {
        RECORDED
            .iter()
            .find(|r| r.0 == o)
            .map(|r| figures(Some((r.1, r.2)), None))
    };
    let all = judged(&s, &base, &measured);
    let (v, bs) = all.iter().find(|(v, _)| v.option == "bs=8192").unwrap();
    assert!(v.workload && v.asks.is_empty(), "{v:?}");
    // −20 % of the job's IOPS, whatever its bandwidth did (+60 %).
    let g = &bs.per_direction[0];
    assert!((g.iops_pct + 19.8).abs() < 0.1, "{g:?}");
    assert!((g.bandwidth_pct - 60.4).abs() < 0.1, "{g:?}");
    assert!(bs.gain_pct.unwrap() < -19.0 && !bs.by_bandwidth, "{bs:?}");
    let line = workload_line(bs);
    assert_eq!(
        line, "bs ×2 (4k → 8k): IOPS -19.8 %, bandwidth +60.4 %",
        "{line}"
    );
    // Every other variant is a mechanic of the application's I/O.
    assert!(all
        .iter()
        .filter(|(v, _)| v.option != "bs=8192")
        .all(|(v, r)| !v.workload
            && r.asks
                .starts_with(&format!("{}: the application ", v.option))));
    // Had the doubled block gained even on the job's own metric, it is
    // chosen for no configuration and holds nothing.
    let mut gained = bs.clone();
    (gained.gain_pct, gained.beyond_noise) = (Some(60.0), true);
    let results: Vec<VariantResult> = all.iter().map(|(_, r)| r.clone()).collect();
    let with = [results.clone(), vec![gained.clone()]].concat();
    assert!(
        job_best::chosen(&with).is_empty(),
        "nothing of the job gained"
    );
}

#[test]
fn an_engine_change_that_helps_lands_in_the_best_configuration_with_what_it_asks() {
    let s = kubestr_job1();
    let repeats: Vec<RunFigures> = [10_000.0, 10_300.0, 9_900.0]
        .iter()
        .map(|&i| figures(Some((i, i * 4096.0)), None))
        .collect();
    let base = baseline(&repeats, &s);
    let measured = |o: &str| {
        let iops = match o {
            "ioengine=io_uring" => 13_000.0,
            "bs=8192" => 9_000.0,
            _ => 10_050.0,
        };
        let bs = if o == "bs=8192" { 8192.0 } else { 4096.0 };
        Some(figures(Some((iops, iops * bs)), None))
    };
    let results: Vec<VariantResult> = judged(&s, &base, &measured)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    let chosen = job_best::chosen(&results);
    let options: Vec<&str> = chosen.iter().map(|v| v.option.as_str()).collect();
    assert_eq!(options, ["ioengine=io_uring"]);
    let mut best = job_best::of(&chosen, &[], by_bandwidth(&base));
    assert_eq!(
        best.asks,
        ["ioengine=io_uring: the application moves to io_uring"]
    );
    assert!(!best.by_bandwidth);
    assert!((best.best_single_pct - 30.0).abs() < 1e-6, "{best:?}");
    let m = |iops: f64| ssdready_diagnosis::trials::Measured {
        iops,
        ..Default::default()
    };
    best.turns = [
        (10_000.0, 13_000.0),
        (10_000.0, 12_980.0),
        (10_000.0, 12_990.0),
    ]
    .map(|(a, b)| ssdready_diagnosis::trials::Turn {
        baseline: m(a),
        change: m(b),
    })
    .to_vec();
    job_best::judge(&mut best);
    let w = job_best::words(&best);
    assert!(w.contains("IOPS +29.9 %"), "{w}");
    assert!(
        w.ends_with(
            "what it asks of the application: ioengine=io_uring: the application moves to io_uring"
        ),
        "{w}"
    );
}

/// A random mix of small reads and streaming writes (`bs=4k,128k`).
fn mix() -> Vec<Section> {
    vec![section(
        "mix",
        false,
        &[
            ("ioengine", "libaio"),
            ("iodepth", "8"),
            ("rw", "randrw"),
            ("bs", "4k,128k"),
        ],
    )]
}

#[test]
fn a_mix_is_judged_per_direction_each_on_its_own_metric() {
    let s = mix();
    let repeats: Vec<RunFigures> = [1.0, 1.02, 0.99]
        .iter()
        .map(|&k| {
            figures(
                Some((10_000.0 * k, 4e7 * k)),
                Some((1_000.0 * k, 1.28e8 * k)),
            )
        })
        .collect();
    let base = baseline(&repeats, &s);
    let kinds: Vec<(usize, bool)> = base.iter().map(|b| (b.dir, b.by_bandwidth)).collect();
    assert_eq!(kinds, [(0, false), (1, true)]);
    assert!(!by_bandwidth(&base));
    let mut both = VariantResult {
        option: "iodepth=16".into(),
        figures: Some(figures(Some((12_000.0, 4.8e7)), Some((1_150.0, 1.472e8)))),
        ..Default::default()
    };
    judge_variant(&mut both, &base);
    assert_eq!(
        gain_words(&both),
        "reads +20.0 % IOPS, writes +15.0 % bandwidth"
    );
    assert!(both.beyond_noise && (both.gain_pct.unwrap() - 15.0).abs() < 1e-6);
    // Reads gain, writes lose: a loss, on the direction that lost.
    let mut one = VariantResult {
        option: "numjobs=2".into(),
        figures: Some(figures(Some((13_000.0, 5.2e7)), Some((880.0, 1.1264e8)))),
        ..Default::default()
    };
    judge_variant(&mut one, &base);
    assert!(one.beyond_noise && (one.gain_pct.unwrap() + 12.0).abs() < 1e-6);
    // Reads gain, writes held where they were (a throttle of the writes):
    // each direction's noise said, and the job gains what both together
    // did on its metric (13,000 + 1,000 IOPS against 10,000 + 1,000).
    let mut reads = VariantResult {
        option: "iodepth=32".into(),
        what: "iodepth ×4 (8 → 32)".into(),
        figures: Some(figures(Some((13_000.0, 5.2e7)), Some((1_000.0, 1.28e8)))),
        ..Default::default()
    };
    judge_variant(&mut reads, &base);
    assert!(reads.beyond_noise);
    let together = 100.0 * (14_000.0 / 11_000.0 - 1.0);
    assert!(
        (reads.gain_pct.unwrap() - together).abs() < 1e-6,
        "{reads:?}"
    );
    assert_eq!(
        ssdready_diagnosis::limit::job::gain::variant_line(&reads),
        "iodepth ×4 (8 → 32): reads +30.0 % IOPS (beyond the noise), writes +0.0 % bandwidth (within the noise)"
    );
    // The deeper gained more on the job's metric: the one chosen.
    let results = [both, one, reads];
    let options: Vec<&str> = job_best::chosen(&results)
        .iter()
        .map(|v| v.option.as_str())
        .collect();
    assert_eq!(options, ["iodepth=32"]);
}

#[test]
fn a_direction_streams_from_sixty_four_kib_up() {
    for (bs, streams) in [("4k", false), ("60k", false), ("64k", true), ("1m", true)] {
        let s = vec![section("j", false, &[("rw", "read"), ("blocksize", bs)])];
        let base = baseline(&[figures(Some((1.0, 1.0)), None)], &s);
        assert_eq!(base[0].by_bandwidth, streams, "{bs}");
    }
}

#[test]
fn only_the_application_s_io_mechanics_configure_the_job() {
    for m in MECHANICS {
        assert_eq!(job::canonical(m), *m, "{m} is fio's own name");
    }
    for o in [
        "iodepth=32",
        "numjobs=4",
        "ioengine=io_uring",
        "iodepth_batch=8",
        "fixedbufs",
    ] {
        assert!(mechanic(o), "{o}");
    }
    for o in [
        "bs=8192",
        "blocksize=8k",
        "readwrite=randread",
        "rwmixread=50",
        "size=1g",
        "direct=0",
        "fsync=1",
        "sync=1",
        "bssplit=4k/50:8k/50",
    ] {
        assert!(!mechanic(o), "{o}");
    }
}

#[test]
fn the_study_s_text_shows_a_different_workload_apart_from_the_application_s_mechanics() {
    let s = kubestr_job1();
    let repeats: Vec<RunFigures> = REPEATS.iter().map(|&r| figures(Some(r), None)).collect();
    let base = baseline(&repeats, &s);
    let measured = |o: &str| {
        RECORDED
            .iter()
            .find(|r| r.0 == o)
            .map(|r| figures(Some((r.1, r.2)), None))
    };
    let mut doc = crate::session_parts::JobDoc {
        repeats: repeats.clone(),
        median_iops: 98_206.0,
        ..Default::default()
    };
    for (v, r) in judged(&s, &base, &measured) {
        match v.workload {
            true => doc.different_workloads.push(r),
            false => doc.variants.push(r),
        }
    }
    let text = crate::outputs::job_text(&doc);
    let (mechanics, other) = text
        .split_once("what a different workload would get")
        .expect("a section apart");
    assert!(
        mechanics.contains("numjobs ×2 (1 → 2): -4.3 % IOPS (within the noise); asks: numjobs=2: the application issues from 2 threads"),
        "{text}"
    );
    assert!(!mechanics.contains("\n  bs ×2"), "{text}");
    assert!(
        other.contains("bs ×2 (4k → 8k): IOPS -19.8 %, bandwidth +60.4 %"),
        "{text}"
    );
    let json = serde_json::to_value(&doc).unwrap();
    assert_eq!(json["different_workloads"][0]["option"], "bs=8192");
    assert_eq!(json["variants"].as_array().unwrap().len(), 6);
}
