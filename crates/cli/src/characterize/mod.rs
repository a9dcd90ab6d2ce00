//! `ssdready characterize TARGET [--quick] [--virtual] [--output DIR]
//! [--allow-destructive] [--purge]`: the device the SNIA PTS way — purge,
//! workload-independent preconditioning, then the IOPS, throughput,
//! latency and write-saturation tests, each to steady state — and the
//! write cliff (`ssdready_characterize`).
//!
//! An emulated target (`emu:PRESET[,k=v…]`) runs in virtual time with
//! `--virtual` ([`virt`]); a block device or file runs in real time
//! through `run`'s own path ([`real`]). The command prints the plan with
//! its time, a line per round, and a summary; it writes
//! `DIR/characterize.json` atomically. Bad input: one line, exit 2,
//! nothing written. Ctrl-C stops after the current step and still writes
//! what ran (exit 130); a test that failed is reported and the next one
//! runs (exit 1 at the end).

mod real;
mod virt;

use crate::fail;
use ssdready_characterize::driver::{self, Progress};
use ssdready_characterize::model::*;
use ssdready_characterize::plan::{self, Plan, PlanOptions, TestPlan, WsatPlan};
use ssdready_characterize::text;
use ssdready_core::steady::{PtsNext, PtsVerdict};
use ssdready_core::units::{fmt_bytes, fmt_count, parse_size, parse_time_ns};
use std::io::Write;
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

/// What the target turned out to be.
enum Target {
    Emulated(Box<ssdready_emu::config::Params>),
    Real {
        capacity: u64,
        block_device: bool,
        discard: bool,
        logical_block_size: u64,
        device: Option<String>,
    },
}

fn bad(msg: String) -> ! {
    fail(2, &msg)
}

fn time_s(opt: &str, v: &str, min_s: f64) -> f64 {
    let ns = parse_time_ns(v, 1_000_000_000).unwrap_or_else(|e| {
        bad(format!(
            "option '--{opt}': {e} (allowed: a time such as 30s or 2m)"
        ))
    });
    let s = ns as f64 / 1e9;
    if s < min_s {
        bad(format!(
            "option '--{opt}': {v} is too short (allowed: {min_s} s or more)"
        ));
    }
    s
}

/// Check the command line and the target; bad input exits 2.
fn validate(a: &CharacterizeArgs) -> Target {
    if !(1..=4096).contains(&a.iodepth) {
        bad(format!(
            "option '--iodepth': {} (allowed: 1 to 4096)",
            a.iodepth
        ));
    }
    // Checked for every target, an emulated one too (which brings its own
    // engine and ignores this one, but a wrong name is still wrong).
    if !["io_uring", "libaio", "psync"].contains(&a.ioengine.as_str()) {
        bad(format!(
            "option '--ioengine': '{}' (allowed: io_uring, libaio, psync)",
            a.ioengine
        ));
    }
    let is_emu = a.target == "emu" || a.target.starts_with("emu:");
    match (is_emu, a.virtual_time) {
        (true, false) => bad(format!(
            "target '{}': an emulated device is characterized in virtual time: add --virtual (in real \
             time every run would build a fresh device and lose the preconditioning)",
            a.target
        )),
        (false, true) => bad(format!(
            "option '--virtual': target '{}' is not an emulated device (allowed: emu:PRESET[,key=value…])",
            a.target
        )),
        _ => {}
    }
    if is_emu {
        if a.size.is_some() {
            bad("option '--size': give an emulated device's size in its spec, e.g. emu:x25e,size=256m".into());
        }
        if a.purge {
            bad("option '--purge': applies to block devices (an emulated device is made fresh before each test anyway)".into());
        }
        let body = a.target.trim_start_matches("emu").trim_start_matches(':');
        let p = ssdready_emu::config::Params::parse(body)
            .unwrap_or_else(|e| bad(format!("target '{}': {e}", a.target)));
        // Every test writes: on a device whose writes take no time, virtual
        // time would not advance (known before anything runs or is written).
        let writes =
            ssdready_study::limit::model_limit(&p, ssdready_study::limit::Access::Write, 4096);
        if writes.iops.is_none() && p.host_ns == 0 {
            bad(format!(
                "target '{}': its writes take no time (preset {}, host_ns=0), so in virtual time no \
                 test would advance; give them a cost (e.g. {},host_ns=1us) or choose a preset with \
                 flash timings (e.g. emu:x25e)",
                a.target, p.preset, a.target
            ));
        }
        let spec = ssdready_core::spec::JobSpec {
            filename: vec![a.target.clone()],
            ioengine: ssdready_core::spec::EngineKind::Emu,
            iodepth: a.iodepth,
            rw: ssdready_core::spec::RwMode::RandWrite,
            ..Default::default()
        };
        let params = std::collections::BTreeMap::from([(a.target.clone(), p.clone())]);
        crate::devices::check_memory(&[spec], &params, ssdready_emu::memory::TimeBase::Virtual)
            .unwrap_or_else(|e| bad(e));
        return Target::Emulated(Box::new(p));
    }
    let size = a.size.as_deref().map(|v| {
        parse_size(v, 1024).unwrap_or_else(|e| {
            bad(format!(
                "option '--size': {e} (allowed: a size such as 64g)"
            ))
        })
    });
    crate::validate::check_device_exists("characterize", &a.target)
        .unwrap_or_else(|f| fail(f.exit_code(), f.message()));
    if size.is_none() && std::fs::metadata(&a.target).is_err() {
        bad(format!(
            "target '{}' does not exist: give the size of the file to create with --size (e.g. --size=4g)",
            a.target
        ));
    }
    let needs = ssdready_io::target::TargetNeeds {
        bytes: size,
        offset: 0,
        modifies: true,
        allow_destructive: a.allow_destructive,
    };
    let t = ssdready_io::target::resolve(std::path::Path::new(&a.target), needs)
        .map_err(|e| crate::validate::target_failure("characterize", e))
        .unwrap_or_else(|f| fail(f.exit_code(), f.message()));
    if let Some(w) = &t.overridden {
        eprintln!("ssdready: warning: {w}");
    }
    let block = t.kind == ssdready_io::target::TargetKind::Block;
    let capacity = match (size, block) {
        (Some(s), true) if s > t.size => bad(format!(
            "option '--size': {s} is more than {}'s {} bytes",
            a.target, t.size
        )),
        (Some(s), _) => s,
        (None, _) if t.size > 0 => t.size,
        (None, _) => bad(format!(
            "target '{}': the file is empty or does not exist: give its size with --size (e.g. --size=4g)",
            a.target
        )),
    };
    if a.purge && !block {
        bad(format!(
            "option '--purge': {} is not a block device (a file cannot be purged)",
            a.target
        ));
    }
    let lbs = t.logical_block_size.max(512);
    let capacity = capacity / lbs * lbs;
    if capacity < 16 << 20 {
        // The size as given (rounding to blocks may have made it 0).
        let shown = size.unwrap_or(capacity);
        bad(format!(
            "target '{}': {shown} bytes is too small to characterize (allowed: 16 MiB or more)",
            a.target
        ));
    }
    Target::Real {
        capacity,
        block_device: block,
        discard: t.discard,
        logical_block_size: lbs,
        device: t.device.clone(),
    }
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
}

/// Run `ssdready characterize`.
pub fn command(a: CharacterizeArgs) {
    // First: a signal at any moment is an interruption (exit code 130).
    let stop = crate::stop_on_signals();
    let started = std::time::Instant::now();
    let started_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let target = validate(&a);
    let point_s = match &a.point_time {
        Some(v) => time_s("point-time", v, if a.virtual_time { 0.1 } else { 1.0 }),
        None if a.quick => 10.0,
        None => 60.0,
    };
    let wsat_s = match &a.wsat_time {
        Some(v) => time_s("wsat-time", v, 1.0),
        None if a.quick => 1800.0,
        None => 86_400.0,
    };
    let dir = crate::output::result_dir(
        a.output.as_deref(),
        "ssdready-characterize",
        "characterize.json",
    )
    .unwrap_or_else(|e| bad(e));
    let (capacity, min_bs, kind, what, lbs) = match &target {
        Target::Emulated(p) => {
            let cap = ssdready_emu::device::Device::new(p).capacity();
            (
                cap,
                512,
                "emulator",
                format!("emulated device, preset {}, in virtual time", p.preset),
                512,
            )
        }
        Target::Real {
            capacity,
            block_device,
            logical_block_size,
            device,
            ..
        } => (
            *capacity,
            *logical_block_size as u32,
            if *block_device { "block" } else { "file" },
            match device {
                Some(d) if *block_device => format!("block device {d}, real time"),
                Some(d) => format!("a file on {d}, real time"),
                None => "a file, real time".to_string(),
            },
            *logical_block_size,
        ),
    };
    let mut p: Plan = plan::plan(&PlanOptions {
        quick: a.quick,
        capacity,
        point_seconds: point_s,
        iodepth: a.iodepth,
        wsat_max_seconds: wsat_s,
        min_bs,
    });
    if !a.tests.is_empty() {
        plan::select(&mut p, &a.tests).unwrap_or_else(|e| bad(format!("option '--tests': {e}")));
    }
    if !a.quiet {
        eprint!("{}", text::plan(&p, &a.target, &what, a.virtual_time));
    }
    if let Err(e) = std::fs::create_dir_all(&dir) {
        bad(format!(
            "option '--output': creating {}: {e}",
            dir.display()
        ));
    }
    let mut lines = Lines {
        quiet: a.quiet,
        started,
        wsat_shown: 0.0,
        capacity,
    };
    let mut doc = CharacterizeDoc {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        started_unix_ms: started_ms,
        target: TargetDoc {
            spec: a.target.clone(),
            kind: kind.into(),
            capacity_bytes: capacity,
            clock: if a.virtual_time { "virtual" } else { "real" }.into(),
            logical_block_size: lbs,
            ..TargetDoc::default()
        },
        settings: Settings {
            quick: a.quick,
            point_seconds: point_s,
            iodepth: a.iodepth,
            rule: p.rule,
            purge_requested: a.purge,
            engine: if a.virtual_time {
                "emulator".into()
            } else {
                a.ioengine.clone()
            },
            random_offsets: "uniform with repetition (fio norandommap)".into(),
            wsat_max_seconds: wsat_s,
        },
        ..CharacterizeDoc::default()
    };
    let results = match target {
        Target::Emulated(params) => {
            doc.target.emulator_params = params.pairs();
            doc.target.model = virt::model(&params);
            let mut r = virt::VirtualRunner::new(*params, stop.clone());
            let out = driver::execute(&p, &mut r, &mut lines);
            lines.say(&format!(
                "simulated {} of device time",
                text::fmt_duration(r.simulated_ns as f64 / 1e9)
            ));
            out
        }
        Target::Real {
            block_device,
            discard,
            ..
        } => {
            let mut r = real::RealRunner {
                target: a.target.clone(),
                capacity,
                block_device,
                discard,
                purge_asked: a.purge,
                allow_destructive: a.allow_destructive,
                engine: a.ioengine.clone(),
                quiet: a.quiet,
                stop: stop.clone(),
            };
            driver::execute(&p, &mut r, &mut lines)
        }
    };
    assemble(&mut doc, results, &p);
    doc.interrupted |= stop.load(Relaxed);
    doc.wall_s = started.elapsed().as_secs_f64();
    finish(&doc, &dir);
}

/// The document from the tests' results.
fn assemble(doc: &mut CharacterizeDoc, r: driver::Results, p: &Plan) {
    doc.steady_state = driver::summary(&r);
    doc.iops_matrix = r.iops.as_ref().map(driver::matrix);
    for t in r.iops.iter().chain(&r.throughput).chain(&r.latency) {
        if !t.purge.done && !t.purge.how.is_empty() {
            doc.warnings.push(format!("{}: {}", t.name, t.purge.how));
        }
        if t.failure.is_none() && !t.steady_state_reached && !t.rounds.is_empty() {
            doc.warnings.push(format!(
                "{}: steady state NOT reached in {} rounds; its figures are the last {} rounds'",
                t.name,
                t.rounds.len(),
                p.rule.window.min(t.rounds.len())
            ));
        }
    }
    doc.iops = r.iops;
    doc.throughput = r.throughput;
    doc.latency = r.latency;
    doc.interrupted = r.interrupted;
    doc.failure = r.failure;
    match r.wsat {
        Some(mut w) => {
            w.capacity_multiple_written = w.bytes_written as f64 / p.capacity.max(1) as f64;
            match ssdready_characterize::cliff::detect(
                &w.samples,
                p.capacity,
                &p.rule,
                doc.target.model.as_ref(),
            ) {
                Ok(c) => doc.write_cliff = Some(c),
                Err(why) => doc.write_cliff_note = Some(why),
            }
            if !w.purge.done {
                doc.warnings.push(format!("wsat: {}", w.purge.how));
            }
            doc.wsat = Some(w);
        }
        None => doc.write_cliff_note = Some("the write-saturation test did not run".into()),
    }
}

fn finish(doc: &CharacterizeDoc, dir: &std::path::Path) {
    let text = serde_json::to_string_pretty(doc).expect("the characterize model serialises") + "\n";
    let written = crate::output::write_in(dir, "characterize.json", &text);
    let _ = std::io::stdout()
        .lock()
        .write_all(text::summary(doc).as_bytes());
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
                Err(e) => fail(1, &e),
            }
        }
        Err(e) => fail(
            1,
            &format!("writing {}/characterize.json: {e}", dir.display()),
        ),
    }
    if doc.interrupted {
        eprintln!("ssdready: interrupted; characterize.json covers what ran");
        std::process::exit(130);
    }
    if let Some(f) = &doc.failure {
        fail(1, f);
    }
}
