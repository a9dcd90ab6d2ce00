//! Submission and completion strategies (Shin's experiment), as data and
//! judgement: the seven strategies and their options, Shin's four Iozone
//! patterns (16 threads, 4 KiB requests, one request per thread at a
//! time), each result's trade-off against async+intr, and the study's
//! strategies section. Running them, and the emulated device's peaks from
//! its model, are the study's (`ssdready_study::strategies`).

use serde::{Deserialize, Serialize};
use ssdready_core::result::RunResult;
use ssdready_measured::record::RunRecord;
use ssdready_measured::summary::{PointSummary, FILL_JOB};

mod irqs;
pub use irqs::{Interrupts, POLL_ALLOWANCE};

/// Threads of Shin's Iozone runs (one request each at a time).
pub const THREADS: u32 = 16;
/// Request size of Shin's runs.
pub const BS: u64 = 4096;

/// The patterns, as named in strategies.json, with their `rw`.
pub const PATTERNS: [(&str, &str); 4] = [
    ("seqread", "read"),
    ("seqwrite", "write"),
    ("randread", "randread"),
    ("randwrite", "randwrite"),
];

/// The pattern name of an `rw`.
pub fn pattern_of(rw: &str) -> Option<&'static str> {
    PATTERNS.iter().find(|(_, r)| *r == rw).map(|(p, _)| *p)
}

/// A strategy: its name and the run options that make it.
pub struct Strategy {
    pub name: &'static str,
    /// Job options, `(key, value)`.
    pub options: &'static [(&'static str, &'static str)],
    /// In words, for the JSON.
    pub how: &'static str,
}

/// The baseline every strategy is set against.
pub const BASELINE: &str = "async+intr";

/// The strategies, in the order of Shin's table, then the others.
pub const STRATEGIES: [Strategy; 7] = [
    Strategy {
        name: BASELINE,
        options: &[("completion", "interrupt")],
        how: "completion=interrupt: each thread sleeps until its completion wakes it",
    },
    Strategy {
        name: "sync+poll",
        options: &[("completion", "poll")],
        how: "completion=poll: each thread polls for its own completion (IOPOLL where the device has poll queues, else user-space spinning, stated in `ran`)",
    },
    Strategy {
        name: "stm+poll",
        options: &[("completion", "poll"), ("temporal_merge", "stm")],
        how: "temporal_merge=stm: the first thread in gathers the others' requests for merge_window_us (20) into one vectored command and polls; the others sleep",
    },
    Strategy {
        name: "atm+poll",
        options: &[("completion", "poll"), ("temporal_merge", "atm"), ("merge_max", "16")],
        how: "temporal_merge=atm, merge_max=16 (the thread count): a dispatcher thread drains the queued requests into vectored commands and polls",
    },
    Strategy {
        name: "coalesced",
        options: &[("completion", "interrupt"), ("coalesce_n", "8"), ("coalesce_us", "100")],
        how: "completion=interrupt with interrupt coalescing: one completion event per 8 completions or 100 µs",
    },
    Strategy {
        name: "sqpoll",
        options: &[("completion", "interrupt"), ("sqthread_poll", "1")],
        how: "io_uring SQPOLL: a kernel thread polls the submission queue (its CPU is counted)",
    },
    Strategy {
        name: "hybrid",
        options: &[("completion", "hybrid")],
        how: "completion=hybrid: sleep half the mean completion latency, then spin",
    },
];

/// Why a strategy that needs io_uring's own engine (SQPOLL) is not run on
/// the in-process emulator, which brings its own engine.
pub const NOT_ON_THE_EMULATOR: &str = "io_uring SQPOLL needs the io_uring engine; the in-process \
     emulator has its own (study the drive behind the kernel, as root, or a real device for it)";

impl Strategy {
    /// Whether it needs the io_uring engine (SQPOLL is io_uring's).
    pub fn needs_io_uring(&self) -> bool {
        self.options.iter().any(|(k, _)| *k == "sqthread_poll")
    }

    /// Its options as a command line writes them (`--completion=poll`).
    pub fn command_line(&self) -> Vec<String> {
        self.options
            .iter()
            .map(|(k, v)| format!("--{k}={v}"))
            .collect()
    }
}

/// A strategy by name.
pub fn strategy(name: &str) -> Option<&'static Strategy> {
    STRATEGIES.iter().find(|s| s.name == name)
}

/// Shin's published table, % of peak: seq-read, seq-write, rand-read,
/// rand-write.
pub const PUBLISHED_SHIN: [(&str, [f64; 4]); 4] = [
    ("async+intr", [82.0, 68.0, 22.0, 28.0]),
    ("sync+poll", [93.0, 44.0, 46.0, 45.0]),
    ("stm+poll", [100.0, 85.0, 88.0, 92.0]),
    ("atm+poll", [95.0, 100.0, 43.0, 96.0]),
];

/// Shin's figure for a strategy and pattern, when it published one.
pub fn published(strategy: &str, pattern: &str) -> Option<f64> {
    let col = PATTERNS.iter().position(|(p, _)| *p == pattern)?;
    PUBLISHED_SHIN
        .iter()
        .find(|(s, _)| *s == strategy)
        .map(|(_, v)| v[col])
}

/// How `cpu_ns_per_io` (and so every CPU ratio) is measured.
pub const CPU_SOURCE: &str = "process: getrusage(RUSAGE_SELF) over the measured window, every \
     ssdready thread (emulator threads, SQPOLL thread and merge dispatcher included)";

/// What a failed strategy run's reason starts with when the run itself
/// failed; any other reason is `run`'s refusal of the options, which holds
/// for every pattern (no io_uring, not an emulator, no NVMe).
pub const RUN_FAILED: &str = "the run failed";

/// Whether a strategy refused with `reason` on its first pattern (a read)
/// is refused on all of them: said once, the other patterns not tried.
pub fn refused_everywhere(reason: &str) -> bool {
    !reason.starts_with(RUN_FAILED)
}

/// One strategy × pattern that ran.
#[derive(Clone, Debug)]
pub struct Row {
    pub strategy: &'static str,
    pub pattern: &'static str,
    pub summary: PointSummary,
    /// What ran, from the result's `strategy` (e.g. `spin` for poll).
    pub ran: String,
    pub fallback: Option<String>,
    /// Temporal merge: the mean requests per command.
    pub merge_mean: Option<f64>,
    /// The study's run id (None in `ssdready strategies`).
    pub run: Option<String>,
    /// The device's own queue interrupts over the measured window, where
    /// it has queue vectors.
    pub interrupts: Option<Interrupts>,
}

impl Row {
    /// A row from a run's result (its summary given, or derived).
    pub fn of(
        strategy: &'static str,
        pattern: &'static str,
        r: &RunResult,
        summary: Option<PointSummary>,
    ) -> Row {
        // The measured jobs: not the fill a study's run on an emulator
        // begins with (it runs with the default completion).
        let measured = || r.jobs.iter().filter(|j| j.name != FILL_JOB);
        let st = measured().find_map(|j| j.strategy.as_ref());
        let merge = measured().filter_map(|j| j.temporal_merge.as_ref());
        let (commands, requests) =
            merge.fold((0u64, 0u64), |(c, q), m| (c + m.commands, q + m.requests));
        Row {
            strategy,
            pattern,
            summary: summary.unwrap_or_else(|| PointSummary::from_result(r)),
            ran: st.map(|s| s.ran.clone()).unwrap_or_default(),
            fallback: st.and_then(|s| s.fallback.clone()),
            merge_mean: (commands > 0).then(|| requests as f64 / commands as f64),
            run: None,
            interrupts: Interrupts::of(r),
        }
    }
}

/// A strategy against async+intr on the same pattern, as ratios (this
/// strategy's figure / async+intr's): above 1 is more IOPS, more CPU per
/// I/O, a longer p99 latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tradeoff {
    pub iops: f64,
    pub cpu_per_io: Option<f64>,
    pub p99: f64,
}

impl Tradeoff {
    /// `r` against the async+intr row of its pattern; None for async+intr
    /// itself or when that did not run.
    pub fn of(r: &Row, rows: &[Row]) -> Option<Tradeoff> {
        if r.strategy == BASELINE {
            return None;
        }
        let b = rows
            .iter()
            .find(|x| x.strategy == BASELINE && x.pattern == r.pattern)?;
        let (rs, bs) = (&r.summary, &b.summary);
        let cpu = |s: &PointSummary| s.cpu.as_ref().map(|c| c.process_ns_per_io);
        Some(Tradeoff {
            iops: ratio(rs.iops, bs.iops),
            cpu_per_io: cpu(rs).zip(cpu(bs)).map(|(a, b)| ratio(a, b)),
            p99: ratio(rs.lat_p99_ns as f64, bs.lat_p99_ns as f64),
        })
    }
}

/// a / b, NaN when b is not positive.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// A ratio in a few characters: 3 significant figures down to 0.01.
pub fn fmt_ratio(x: f64) -> String {
    match x {
        x if !x.is_finite() => "?".into(),
        x if x >= 100.0 => format!("{x:.0}"),
        x if x >= 10.0 => format!("{x:.1}"),
        x if x >= 0.01 => format!("{x:.2}"),
        _ => "<0.01".into(),
    }
}

/// The peak one pattern's results are set against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    pub pattern: String,
    /// NaN when nothing bounds the device (`emu:null`): null in JSON.
    #[serde(deserialize_with = "nan_if_null")]
    pub bw_bytes_per_s: f64,
    #[serde(deserialize_with = "nan_if_null")]
    pub iops: f64,
    /// `model` (the emulator's analytic limit) or `best observed`.
    pub source: String,
    /// How the figure was found, in words.
    pub detail: String,
}

/// A number that JSON wrote as null because it was not finite.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// The best seen among `rows` for each pattern: a real device has no
/// model, so 100 % is the best strategy's result, not the device's limit.
pub fn observed_peaks(patterns: &[&str], rows: &[Row]) -> Vec<Peak> {
    patterns
        .iter()
        .map(|pattern| {
            let best = rows
                .iter()
                .filter(|r| r.pattern == *pattern)
                .max_by(|a, b| a.summary.bw_bytes_per_s.total_cmp(&b.summary.bw_bytes_per_s));
            let bw = best.map_or(f64::NAN, |r| r.summary.bw_bytes_per_s);
            Peak {
                pattern: pattern.to_string(),
                bw_bytes_per_s: bw,
                iops: bw / BS as f64,
                source: "best observed".into(),
                detail: format!(
                    "no model of a real device: the best strategy's result here ({}), so 100 % is relative, not the device's limit",
                    best.map_or("none ran", |r| r.strategy)
                ),
            }
        })
        .collect()
}

/// A finite number, or None.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The trade-off as written in JSON.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TradeoffDoc {
    pub iops_ratio: Option<f64>,
    pub cpu_per_io_ratio: Option<f64>,
    pub p99_lat_ratio: Option<f64>,
}

/// One strategy × pattern that ran, as written in strategies.json
/// `results` and study.json `figures.strategies.results`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultDoc {
    pub strategy: String,
    pub pattern: String,
    /// The study's run (study.json only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    pub ran: String,
    pub fallback: Option<String>,
    pub interrupted: bool,
    pub iops: Option<f64>,
    pub mb_s: Option<f64>,
    pub pct_of_peak: Option<f64>,
    pub mean_lat_ns: Option<f64>,
    pub p99_lat_ns: u64,
    pub cpu_ns_per_io: Option<f64>,
    pub cpu_source: Option<String>,
    pub merge_mean_requests: Option<f64>,
    #[serde(alias = "published_004_pct")]
    pub published_pct: Option<f64>,
    pub vs_async_intr: Option<TradeoffDoc>,
    /// The device's queue interrupts over the window (absent where it has
    /// no queue vectors to count, or in documents made before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_interrupts: Option<u64>,
    /// `device_interrupts` per request the device completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_interrupts_per_io: Option<f64>,
    /// For a result that ran as `iopoll`: whether its queues took no more
    /// interrupts than [`POLL_ALLOWANCE`] per I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub polled: Option<bool>,
    /// What the interrupts say, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interrupt_check: Option<String>,
}

impl ResultDoc {
    /// `r` with its % of peak and its trade-off against async+intr.
    pub fn of(r: &Row, rows: &[Row], peaks: &[Peak]) -> ResultDoc {
        let s = &r.summary;
        let peak = peaks
            .iter()
            .find(|x| x.pattern == r.pattern)
            .map_or(f64::NAN, |x| x.bw_bytes_per_s);
        ResultDoc {
            strategy: r.strategy.into(),
            pattern: r.pattern.into(),
            run: r.run.clone(),
            ran: r.ran.clone(),
            fallback: r.fallback.clone(),
            interrupted: s.interrupted,
            iops: finite(s.iops),
            mb_s: finite(s.bw_bytes_per_s / 1e6),
            pct_of_peak: finite(100.0 * s.bw_bytes_per_s / peak),
            mean_lat_ns: finite(s.lat_mean_ns),
            p99_lat_ns: s.lat_p99_ns,
            cpu_ns_per_io: s.cpu.as_ref().and_then(|c| finite(c.process_ns_per_io)),
            cpu_source: s.cpu.as_ref().map(|_| CPU_SOURCE.into()),
            merge_mean_requests: r.merge_mean,
            published_pct: published(r.strategy, r.pattern),
            vs_async_intr: Tradeoff::of(r, rows).map(|t| TradeoffDoc {
                iops_ratio: finite(t.iops),
                cpu_per_io_ratio: t.cpu_per_io.and_then(finite),
                p99_lat_ratio: finite(t.p99),
            }),
            device_interrupts: r.interrupts.as_ref().map(|i| i.total),
            device_interrupts_per_io: r.interrupts.as_ref().and_then(Interrupts::per_io),
            polled: r.interrupts.as_ref().and_then(|i| i.polled(&r.ran)),
            interrupt_check: r.interrupts.as_ref().map(|i| i.check(r.strategy, &r.ran)),
        }
    }
}

/// A strategy × pattern that did not run, and why (pattern None: refused on
/// every pattern, said once).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Skip {
    pub strategy: String,
    pub pattern: Option<String>,
    pub reason: String,
}

/// The strategy that did best against async+intr on 4 KiB random reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Best {
    pub strategy: String,
    pub pattern: String,
    pub ran: String,
    pub iops_ratio: f64,
    pub cpu_per_io_ratio: Option<f64>,
    pub p99_lat_ratio: Option<f64>,
    /// The source of the CPU figures behind `cpu_per_io_ratio`.
    pub cpu_source: String,
    pub runs: Vec<String>,
}

/// The study's strategies section (`figures.strategies` in study.json).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Section {
    pub threads: u32,
    pub bs: u64,
    pub peak: Vec<Peak>,
    pub results: Vec<ResultDoc>,
    pub skipped: Vec<Skip>,
    /// The highest IOPS against async+intr on random reads, when both ran.
    pub best: Option<Best>,
}

/// The study's strategies section from its `strategies` runs; None when
/// the study planned none.
pub fn section(
    runs: &[RunRecord],
    peaks: impl FnOnce(&[&'static str], &[Row]) -> Vec<Peak>,
) -> Option<Section> {
    let mine: Vec<&RunRecord> = runs.iter().filter(|r| r.sweep == "strategies").collect();
    if mine.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let mut patterns: Vec<&'static str> = Vec::new();
    for r in mine {
        let w = &r.workload;
        let (Some(s), Some(pattern)) =
            (w.strategy.as_deref().and_then(strategy), pattern_of(&w.rw))
        else {
            continue;
        };
        if !patterns.contains(&pattern) {
            patterns.push(pattern);
        }
        match (&r.error, &r.result) {
            (None, Some(res)) => {
                let mut row = Row::of(s.name, pattern, res, Some(r.summary.clone()));
                row.run = Some(r.id.clone());
                rows.push(row);
            }
            (Some(e), _) => skipped.push(Skip {
                strategy: s.name.into(),
                // The driver tries no other pattern after such a refusal.
                pattern: (!refused_everywhere(e)).then(|| pattern.into()),
                reason: e.clone(),
            }),
            (None, None) => {}
        }
    }
    let peak = peaks(&patterns, &rows);
    let results: Vec<ResultDoc> = rows
        .iter()
        .map(|r| ResultDoc::of(r, &rows, &peak))
        .collect();
    let best = best(&rows);
    Some(Section {
        threads: THREADS,
        bs: BS,
        peak,
        results,
        skipped,
        best,
    })
}

fn best(rows: &[Row]) -> Option<Best> {
    let base = rows
        .iter()
        .find(|r| r.strategy == BASELINE && r.pattern == "randread")?;
    let (r, t) = rows
        .iter()
        .filter(|r| r.pattern == "randread")
        .filter_map(|r| Some((r, Tradeoff::of(r, rows)?)))
        .filter(|(_, t)| t.iops.is_finite())
        .max_by(|a, b| a.1.iops.total_cmp(&b.1.iops))?;
    let ids = [&r.run, &base.run];
    Some(Best {
        strategy: r.strategy.into(),
        pattern: r.pattern.into(),
        ran: r.ran.clone(),
        iops_ratio: t.iops,
        cpu_per_io_ratio: t.cpu_per_io.and_then(finite),
        p99_lat_ratio: finite(t.p99),
        cpu_source: CPU_SOURCE.into(),
        runs: ids.iter().filter_map(|x| (*x).clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_published_figure_has_its_strategy() {
        for (s, _) in PUBLISHED_SHIN {
            assert!(strategy(s).is_some(), "{s}");
        }
        assert_eq!(published("stm+poll", "randread"), Some(88.0));
        assert_eq!(published("hybrid", "randread"), None);
    }

    fn row(strategy: &'static str, iops: f64, cpu: f64, p99: u64) -> Row {
        Row {
            strategy,
            pattern: "randread",
            summary: PointSummary {
                iops,
                bw_bytes_per_s: iops * 4096.0,
                lat_p99_ns: p99,
                cpu: Some(ssdready_measured::summary::CpuSummary {
                    process_ns_per_io: cpu,
                    ..Default::default()
                }),
                ..Default::default()
            },
            ran: String::new(),
            fallback: None,
            merge_mean: None,
            run: Some(format!("strategy-{strategy}-randread")),
            interrupts: None,
        }
    }

    #[test]
    fn the_best_strategy_is_the_most_iops_against_interrupts() {
        let rows = vec![
            row("async+intr", 10_000.0, 20_000.0, 400_000),
            row("sync+poll", 15_000.0, 30_000.0, 100_000),
            row("stm+poll", 100_000.0, 5_000.0, 50_000),
        ];
        let b = best(&rows).unwrap();
        assert_eq!(b.strategy, "stm+poll");
        assert!((b.iops_ratio - 10.0).abs() < 1e-9);
        assert_eq!(b.cpu_per_io_ratio, Some(0.25));
        assert_eq!(b.p99_lat_ratio, Some(0.125));
        assert_eq!(b.runs.len(), 2);
        assert!(best(&rows[1..]).is_none(), "no baseline, no best");
    }

    #[test]
    fn ratios_keep_their_size_in_a_cell() {
        assert_eq!(fmt_ratio(281.44), "281");
        assert_eq!(fmt_ratio(30.47), "30.5");
        assert_eq!(fmt_ratio(0.49), "0.49");
        assert_eq!(fmt_ratio(0.0003), "<0.01");
        assert_eq!(fmt_ratio(f64::NAN), "?");
    }

    #[test]
    fn refusals_hold_for_every_pattern_but_failures_do_not() {
        assert!(refused_everywhere(
            "option 'sqthread_poll': only applies to ioengine=io_uring"
        ));
        assert!(!refused_everywhere("the run failed: EIO"));
    }
}
