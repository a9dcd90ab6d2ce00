//! `ssdready strategies [TARGET] [--output DIR] [--quick] [--runtime S]`:
//! what each way of submitting and completing I/O buys on this platform —
//! Shin's experiment (interrupts against polling against temporal
//! merge, on sequential and random 4 KiB reads and writes from 16 threads)
//! plus interrupt coalescing, SQPOLL and hybrid polling.
//!
//! Each strategy × pattern is an ordinary run through `run`'s option table
//! and run path (the run library's `execute`), in real time, so it writes only where
//! `run` would, after the same checks; a strategy the target cannot take
//! (temporal merge off the emulator, SQPOLL without io_uring, writes the
//! safety checks refuse) is listed as skipped with `run`'s own reason. The
//! peak each result is set against is the emulated device's analytic limit
//! (`matrix::model_peak`) or, on a real device, the best result observed
//! (said so). `DIR/strategies.json` is written atomically
//! (`docs/strategies-schema.md`); the table, beside Shin's published one, and
//! each strategy's trade-off against async+intr go to stdout ([`print`]).
//! Bad input gets one line and exit code 2 with nothing written; Ctrl-C
//! stops after the current run, writes what ran, and exits 130 (as `study`).
//!
//! Here: the command line, the progress lines, the output; the matrix, its
//! runner, the document and the tables are `ssdready_study::strategies`'s.

use crate::fail;
use crate::stdout::out;
use anyhow::Context as _;
use ssdready_study::strategies::matrix::{self, Target};
use ssdready_study::strategies::runner::{self, Observer};
use ssdready_study::strategies::{doc, text, PATTERNS, STRATEGIES, THREADS};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

/// The `strategies` command line.
#[derive(clap::Args, Debug)]
pub struct StrategiesArgs {
    /// emu:PRESET[,k=v…] (default: the built-in drive, emu:nvme-tlc;
    /// emu:dram-ssd reproduces Shin), an existing file of 16 MiB or
    /// more, or a block device.
    pub target: Option<String>,
    /// Where to write strategies.json (default: ./ssdready-strategies-DATE-TIME).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// 1 s runs instead of 5 s (28 runs in all).
    #[arg(long)]
    pub quick: bool,
    /// Seconds of each run (overrides --quick), e.g. 2, 500ms.
    #[arg(long, value_name = "S")]
    pub runtime: Option<String>,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// Check the command line; bad input is one line and exit code 2.
fn validate(a: &StrategiesArgs) -> Result<(Target, f64, PathBuf), crate::Exit> {
    let target = matrix::target(a.target.as_deref().unwrap_or("emu:nvme-tlc"))
        .map_err(|e| fail(2, &e.to_string()))?;
    let runtime_s = match &a.runtime {
        Some(r) => {
            let ns = ssdready_core::units::parse_time_ns(r, 1_000_000_000).map_err(|e| {
                fail(
                    2,
                    &format!("option '--runtime': {e} (allowed: a time such as 2 or 500ms)"),
                )
            })?;
            let s = ns as f64 / 1e9;
            if !(0.1..=600.0).contains(&s) {
                return Err(fail(
                    2,
                    &format!("option '--runtime': {s} s (allowed: 0.1 to 600 s)"),
                ));
            }
            s
        }
        None if a.quick => 1.0,
        None => 5.0,
    };
    let dir = crate::output::result_dir(
        a.output.as_deref(),
        "ssdready-strategies",
        "strategies.json",
    )
    .map_err(|e| fail(2, &e.to_string()))?;
    Ok((target, runtime_s, dir))
}

/// Progress lines on stderr: which point is starting.
struct Lines;

impl Observer for Lines {
    fn starting(&mut self, n: usize, total: usize, strategy: &str, pattern: &str) {
        eprintln!("ssdready: [{n}/{total}] {strategy} {pattern}");
    }
}

/// Run `ssdready strategies`.
pub fn command(a: StrategiesArgs) -> crate::Done {
    // First: a signal at any moment is an interruption (exit code 130).
    let stop = crate::stop_on_signals()?;
    let (target, runtime_s, dir) = validate(&a)?;
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(fail(
            2,
            &format!("option '--output': creating {}: {e}", dir.display()),
        ));
    }
    if !a.quiet {
        eprintln!(
            "ssdready: {} strategies × {} patterns on {}, {runtime_s} s each, {} threads × 4 KiB, real time",
            STRATEGIES.len(),
            PATTERNS.len(),
            target.spec(),
            THREADS
        );
    }
    let run_stop = stop.clone();
    let mut run_fn =
        |r: &ssdready_run::RunRequest| crate::progress::run_request(r, run_stop.clone(), false);
    let (rows, skips) = if a.quiet {
        runner::run_all(&target, runtime_s, &stop, &mut run_fn, &mut runner::Quiet)
    } else {
        runner::run_all(&target, runtime_s, &stop, &mut run_fn, &mut Lines)
    };
    let ctx = doc::Context {
        command: std::env::args().collect(),
        target: &target,
        runtime_s,
        interrupted: stop.load(Relaxed),
    };
    let peaks = runner::peaks(&target, &rows, runtime_s);
    out!("{}", text::tables(&target, &rows, &skips, &peaks))?;
    let doc = doc::document(&ctx, &rows, &skips, &peaks);
    match write(&dir, &doc) {
        Ok(p) => eprintln!("ssdready: wrote {} ({} runs)", p.display(), rows.len()),
        Err(e) => return Err(fail(1, &format!("{e:#}"))),
    }
    if ctx.interrupted {
        eprintln!("ssdready: interrupted; strategies.json covers what ran");
        return Err(crate::Exit(130));
    }
    if rows.is_empty() {
        return Err(fail(1, "no strategy ran on this target (see skipped)"));
    }
    Ok(())
}

/// Write DIR/strategies.json atomically.
fn write(dir: &Path, doc: &serde_json::Value) -> anyhow::Result<PathBuf> {
    let text = serde_json::to_string_pretty(doc).context("serialising strategies.json")? + "\n";
    // The error names the file already.
    crate::output::write_in(dir, "strategies.json", &text).map_err(anyhow::Error::msg)
}
