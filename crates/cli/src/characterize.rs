//! `ssdready characterize TARGET [--quick] [--virtual] [--output DIR]
//! [--allow-destructive] [--purge]`: the device the SNIA PTS way — purge,
//! workload-independent preconditioning, then the IOPS, throughput,
//! latency and write-saturation tests, each to steady state — and the
//! write cliff (`ssdready_characterize`).
//!
//! The command line, its output and its progress lines; the checks, the
//! plan, the runners and the document are the library's
//! (`ssdready_characterize::session`). An emulated target
//! (`emu:PRESET[,k=v…]`) runs in virtual time with `--virtual`; a block
//! device or file runs in real time through the run library, each job
//! through [`crate::progress::run_request`]. The command prints the plan with
//! its time, a line per round, and a summary; it writes
//! `DIR/characterize.json` atomically. Bad input: one line, exit 2,
//! nothing written. Ctrl-C stops after the current step and still writes
//! what ran (exit 130); a test that failed is reported and the next one
//! runs (exit 1 at the end).

use crate::fail;
use ssdready_characterize::driver::Progress;
use ssdready_characterize::model::*;
use ssdready_characterize::plan::{TestPlan, WsatPlan};
use ssdready_characterize::session::Setup;
use ssdready_characterize::target::{Error, Request};
use ssdready_characterize::text;
use ssdready_core::steady::{PtsNext, PtsVerdict};
use ssdready_core::units::{fmt_bytes, fmt_count};
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

/// The `characterize` command line.
#[derive(clap::Args, Debug)]
pub struct CharacterizeArgs {
    /// emu:PRESET[,key=value…] (with --virtual), a block device, or a file.
    pub target: String,
    /// A subset: IOPS at 3 mixes × 2 block sizes, latency at 4 KiB, WSAT to
    /// 3× the capacity; 10 s points.
    #[arg(long)]
    pub quick: bool,
    /// Run an emulated target in virtual time (seconds of CPU for hours of
    /// simulated device time).
    #[arg(long = "virtual")]
    pub virtual_time: bool,
    /// Where to write characterize.json (default:
    /// ./ssdready-characterize-DATE-TIME).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Let writes go to a target the safety checks refuse (as `run`).
    #[arg(long)]
    pub allow_destructive: bool,
    /// TRIM the whole block device before each test (PTS's purge).
    #[arg(long)]
    pub purge: bool,
    /// Time per point (PTS: 60 s; --quick: 10 s), e.g. 30s.
    #[arg(long, value_name = "TIME")]
    pub point_time: Option<String>,
    /// Queue depth of the IOPS, throughput and WSAT points (one thread).
    #[arg(long, default_value_t = 32)]
    pub iodepth: u32,
    /// WSAT's time limit (PTS: 24 h; --quick: 30 min).
    #[arg(long, value_name = "TIME")]
    pub wsat_time: Option<String>,
    /// Bytes of a file or device to characterize (needed for a file that
    /// does not exist yet).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Only these tests, comma-separated: iops, throughput, latency, wsat.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub tests: Vec<String>,
    /// Engine of real runs: io_uring, libaio or psync.
    #[arg(long, default_value = "io_uring")]
    pub ioengine: String,
    /// No plan or progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

impl CharacterizeArgs {
    /// The library's request.
    fn request(&self) -> Request {
        Request {
            target: self.target.clone(),
            quick: self.quick,
            virtual_time: self.virtual_time,
            allow_destructive: self.allow_destructive,
            purge: self.purge,
            point_time: self.point_time.clone(),
            iodepth: self.iodepth,
            wsat_time: self.wsat_time.clone(),
            size: self.size.clone(),
            tests: self.tests.clone(),
            ioengine: self.ioengine.clone(),
        }
    }
}

fn or_exit<T>(r: Result<T, Error>) -> Result<T, crate::Exit> {
    r.map_err(|e| fail(e.exit_code(), &e.to_string()))
}

/// Progress lines on stderr.
struct Lines {
    quiet: bool,
    started: std::time::Instant,
    /// WSAT: the capacity multiple of the last line printed.
    wsat_shown: f64,
    capacity: u64,
}

impl Lines {
    fn say(&self, line: &str) {
        if !self.quiet {
            eprintln!("[{:>6.1} s] {line}", self.started.elapsed().as_secs_f64());
        }
    }
}

impl Progress for Lines {
    fn test_started(&mut self, t: &TestPlan, i: usize, n: usize) {
        self.say(&format!("test {}/{n}: {}", i + 1, t.name));
    }
    fn step(&mut self, t: &TestPlan, what: &str) {
        self.say(&format!("{}: {what}", t.name));
    }
    fn round_done(
        &mut self,
        t: &TestPlan,
        r: &RoundRecord,
        next: &PtsNext,
        window: Option<&PtsVerdict>,
    ) {
        self.say(&text::round_line(&t.name, t.tracked, r, next, window));
    }
    fn wsat_sample(&mut self, s: &WsatSample, _: &WsatPlan) {
        let x = s.bytes_written as f64 / self.capacity.max(1) as f64;
        if x >= self.wsat_shown + 0.25 {
            self.wsat_shown = x;
            self.say(&format!(
                "wsat: {x:.2}× capacity written in {:.1} s, {} IOPS",
                s.t_s,
                fmt_count(s.iops)
            ));
        }
    }
    fn test_done(&mut self, _: &TestPlan) {}
    fn note(&mut self, line: &str) {
        self.say(line);
    }
}

/// Run `ssdready characterize`.
pub fn command(a: CharacterizeArgs) -> crate::Done {
    // First: a signal at any moment is an interruption (exit code 130).
    let stop = crate::stop_on_signals()?;
    let started = std::time::Instant::now();
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let setup = or_exit(Setup::check(a.request()))?;
    for w in &setup.warnings {
        eprintln!("ssdready: warning: {w}");
    }
    let dir = crate::output::result_dir(
        a.output.as_deref(),
        "ssdready-characterize",
        "characterize.json",
    )
    .map_err(|e| fail(2, &e.to_string()))?;
    let p = or_exit(setup.plan())?;
    if !a.quiet {
        eprint!(
            "{}",
            text::plan(&p, &a.target, &setup.what(), a.virtual_time)
        );
    }
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Err(fail(
            2,
            &format!("option '--output': creating {}: {e}", dir.display()),
        ));
    }
    let mut lines = Lines {
        quiet: a.quiet,
        started,
        wsat_shown: 0.0,
        capacity: setup.capacity(),
    };
    let mut doc = setup.document(&p, started_ms);
    let (run_stop, allow) = (stop.clone(), a.allow_destructive);
    let run_fn = Box::new(move |r: &ssdready_run::RunRequest| {
        crate::progress::run_request(r, run_stop.clone(), allow)
    });
    setup.execute(&p, &mut doc, run_fn, a.quiet, stop.clone(), &mut lines);
    doc.interrupted |= stop.load(Relaxed);
    doc.wall_s = started.elapsed().as_secs_f64();
    finish(&doc, &dir)
}

fn finish(doc: &CharacterizeDoc, dir: &std::path::Path) -> crate::Done {
    let text = serde_json::to_string_pretty(doc).expect("the characterize model serialises") + "\n";
    let written = crate::output::write_in(dir, "characterize.json", &text);
    let printed = crate::stdout::write(&text::summary(doc));
    for w in &doc.warnings {
        eprintln!("ssdready: warning: {w}");
    }
    match written {
        Ok(path) => {
            eprintln!(
                "ssdready: wrote {} ({} of tests in {:.1} s)",
                path.display(),
                fmt_bytes(text.len() as f64),
                doc.wall_s
            );
            // The report is rendered from the JSON just written, as
            // `ssdready report DIR` renders it again.
            match crate::report::write_report(dir, &text) {
                Ok(p) => eprintln!("ssdready: wrote {}", p.display()),
                Err(e) => return Err(fail(1, &e)),
            }
        }
        // The error names the file already.
        Err(e) => return Err(fail(1, &e.to_string())),
    }
    if let Err(e) = printed {
        return Err(fail(
            1,
            &format!(
                "{e} (the summary is in {}/characterize.json)",
                dir.display()
            ),
        ));
    }
    if doc.interrupted {
        eprintln!("ssdready: interrupted; characterize.json covers what ran");
        return Err(crate::Exit(130));
    }
    if let Some(f) = &doc.failure {
        return Err(fail(1, f));
    }
    Ok(())
}
