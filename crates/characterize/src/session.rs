//! One characterization from a checked request to its document: the plan
//! (PTS's tests sized to the target, `--tests` a subset), the document's
//! head (target, settings), the tests run through the runner that fits the
//! target — [`VirtualRunner`] for an emulated device, [`RealRunner`] with
//! the caller's [`RunFn`] otherwise — and the document assembled from
//! their results: the IOPS matrix, the write cliff, and a warning for each
//! test not purged or not steady.
//!
//! Progress goes to the caller's [`Progress`] observer; nothing is printed
//! or written here (the binary prints and writes `characterize.json`).

use crate::driver::{self, Progress};
use crate::model::*;
use crate::plan::{self, Plan, PlanOptions};
use crate::real::RealRunner;
use crate::target::{self, Error, Request, Target};
use crate::virt::{self, VirtualRunner};
use ssdready_run::RunFn;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// A checked request: its target and times.
#[derive(Clone, Debug)]
pub struct Setup {
    pub request: Request,
    pub target: Target,
    /// Seconds per point.
    pub point_s: f64,
    /// WSAT's time limit, s.
    pub wsat_s: f64,
    /// What the safety checks let through (on `--allow-destructive`).
    pub warnings: Vec<String>,
}

impl Setup {
    /// Check `request`: bad input before anything runs or is written.
    pub fn check(request: Request) -> Result<Setup, Error> {
        let mut warnings = Vec::new();
        let target = target::check(&request, &mut warnings)?;
        let point_s = match &request.point_time {
            Some(v) => target::time_s(
                "point-time",
                v,
                if request.virtual_time { 0.1 } else { 1.0 },
            )?,
            None if request.quick => 10.0,
            None => 60.0,
        };
        let wsat_s = match &request.wsat_time {
            Some(v) => target::time_s("wsat-time", v, 1.0)?,
            None if request.quick => 1800.0,
            None => 86_400.0,
        };
        Ok(Setup {
            request,
            target,
            point_s,
            wsat_s,
            warnings,
        })
    }

    /// Bytes the tests cover.
    pub fn capacity(&self) -> u64 {
        match &self.target {
            Target::Emulated(p) => ssdready_emu::device::Device::new(p).capacity(),
            Target::Real { target, .. } => target.capacity,
        }
    }

    /// The smallest block size a point may use.
    fn logical_block_size(&self) -> u64 {
        match &self.target {
            Target::Emulated(_) => 512,
            Target::Real {
                logical_block_size, ..
            } => *logical_block_size,
        }
    }

    /// `emulator`, `block` or `file`.
    fn kind(&self) -> &'static str {
        match &self.target {
            Target::Emulated(_) => "emulator",
            Target::Real { target, .. } if target.block_device => "block",
            Target::Real { .. } => "file",
        }
    }

    /// The target in words, for the plan's heading.
    pub fn what(&self) -> String {
        match &self.target {
            Target::Emulated(p) => {
                format!("emulated device, preset {}, in virtual time", p.preset)
            }
            Target::Real { target, device, .. } => match device {
                Some(d) if target.block_device => format!("block device {d}, real time"),
                Some(d) => format!("a file on {d}, real time"),
                None => "a file, real time".to_string(),
            },
        }
    }

    /// The tests to run (bad `--tests` is bad input).
    pub fn plan(&self) -> Result<Plan, Error> {
        let r = &self.request;
        let mut p = plan::plan(&PlanOptions {
            quick: r.quick,
            capacity: self.capacity(),
            point_seconds: self.point_s,
            iodepth: r.iodepth,
            wsat_max_seconds: self.wsat_s,
            min_bs: self.logical_block_size() as u32,
        });
        if !r.tests.is_empty() {
            plan::select(&mut p, &r.tests)
                .map_err(|e| Error::BadInput(format!("option '--tests': {e}")))?;
        }
        Ok(p)
    }

    /// The document's head: what ran, on what, how; started at
    /// `started_unix_ms`.
    pub fn document(&self, p: &Plan, started_unix_ms: u64) -> CharacterizeDoc {
        let r = &self.request;
        let mut doc = CharacterizeDoc {
            schema: SCHEMA.into(),
            schema_version: SCHEMA_VERSION,
            tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
            started_unix_ms,
            target: TargetDoc {
                spec: r.target.clone(),
                kind: self.kind().into(),
                capacity_bytes: self.capacity(),
                clock: if r.virtual_time { "virtual" } else { "real" }.into(),
                logical_block_size: self.logical_block_size(),
                ..TargetDoc::default()
            },
            settings: Settings {
                quick: r.quick,
                point_seconds: self.point_s,
                iodepth: r.iodepth,
                rule: p.rule,
                purge_requested: r.purge,
                engine: if r.virtual_time {
                    "emulator".into()
                } else {
                    r.ioengine.clone()
                },
                random_offsets: "uniform with repetition (fio norandommap)".into(),
                wsat_max_seconds: self.wsat_s,
            },
            ..CharacterizeDoc::default()
        };
        if let Target::Emulated(params) = &self.target {
            doc.target.emulator_params = params.pairs();
            doc.target.model = virt::model(params);
        }
        doc
    }

    /// Run the plan's tests into `doc`: an emulated device in virtual time,
    /// a real one through `run_fn` (quiet: no progress display in the
    /// runs). Stops between steps once `stop` is set.
    pub fn execute(
        &self,
        p: &Plan,
        doc: &mut CharacterizeDoc,
        run_fn: Box<RunFn<'_>>,
        quiet: bool,
        stop: Arc<AtomicBool>,
        progress: &mut dyn Progress,
    ) {
        let results = match &self.target {
            Target::Emulated(params) => {
                let mut r = VirtualRunner::new((**params).clone(), stop);
                let out = driver::execute(p, &mut r, progress);
                progress.note(&format!(
                    "simulated {} of device time",
                    crate::text::fmt_duration(r.simulated_ns as f64 / 1e9)
                ));
                out
            }
            Target::Real { target, .. } => {
                let r = &self.request;
                let mut runner =
                    RealRunner::new(target.clone(), r.purge, &r.ioengine, quiet, stop, run_fn);
                driver::execute(p, &mut runner, progress)
            }
        };
        assemble(doc, results, p);
    }
}

/// The document from the tests' results.
pub fn assemble(doc: &mut CharacterizeDoc, r: driver::Results, p: &Plan) {
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
            match crate::cliff::detect(&w.samples, p.capacity, &p.rule, doc.target.model.as_ref()) {
                Ok(c) => doc.write_cliff = Some(c),
                Err(why) => doc.write_cliff_note = Some(why.to_string()),
            }
            if !w.purge.done {
                doc.warnings.push(format!("wsat: {}", w.purge.how));
            }
            doc.wsat = Some(w);
        }
        None => doc.write_cliff_note = Some("the write-saturation test did not run".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::Progress;
    use crate::plan::{TestPlan, WsatPlan};
    use ssdready_core::result::{JobResult, RunResult};
    use ssdready_core::stats::DirStats;
    use ssdready_core::steady::{PtsNext, PtsVerdict};

    struct Silent;
    impl Progress for Silent {
        fn test_started(&mut self, _: &TestPlan, _: usize, _: usize) {}
        fn step(&mut self, _: &TestPlan, _: &str) {}
        fn round_done(
            &mut self,
            _: &TestPlan,
            _: &RoundRecord,
            _: &PtsNext,
            _: Option<&PtsVerdict>,
        ) {
        }
        fn wsat_sample(&mut self, _: &WsatSample, _: &WsatPlan) {}
        fn test_done(&mut self, _: &TestPlan) {}
    }

    /// A run in which every direction it names did 1000 I/Os of 100 µs in
    /// one second.
    fn steady(options: &[String]) -> RunResult {
        let mut j = JobResult::default();
        let mut d = DirStats {
            ios: 1000,
            bytes: 1000 * 4096,
            ..DirStats::default()
        };
        for _ in 0..1000 {
            d.lat.record(100_000);
        }
        let reads = options.iter().any(|o| o.contains("read"));
        j.raw.dirs[if reads { 0 } else { 1 }] = Some(Box::new(d));
        j.raw.measured_ns = 1_000_000_000;
        RunResult {
            jobs: vec![j],
            ..RunResult::default()
        }
    }

    fn file_request(dir: &std::path::Path, tests: &[&str]) -> Request {
        Request {
            target: dir.join("t").to_str().unwrap().into(),
            size: Some("16m".into()),
            iodepth: 32,
            ioengine: "psync".into(),
            point_time: Some("1s".into()),
            tests: tests.iter().map(|t| t.to_string()).collect(),
            ..Request::default()
        }
    }

    #[test]
    fn a_file_is_characterized_through_the_run_function_it_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::check(file_request(dir.path(), &["latency"])).unwrap();
        assert_eq!(setup.capacity(), 16 << 20);
        assert!(setup.what().contains("real time"), "{}", setup.what());
        let p = setup.plan().unwrap();
        let mut doc = setup.document(&p, 1);
        assert_eq!(doc.target.kind, "file");
        assert_eq!(doc.settings.engine, "psync");
        let mut jobs: Vec<Vec<String>> = Vec::new();
        let run = Box::new(|r: &ssdready_run::RunRequest| {
            let o = r.command_line();
            let answer = steady(&o);
            jobs.push(o);
            Ok(answer)
        });
        let stop = Arc::new(AtomicBool::new(false));
        setup.execute(&p, &mut doc, run, true, stop, &mut Silent);
        let lat = doc.latency.as_ref().expect("the latency test ran");
        assert!(lat.failure.is_none(), "{:?}", lat.failure);
        assert!(lat.steady_state_reached, "identical rounds are steady");
        // Not purged (a file): said as a warning; no WSAT, no cliff.
        assert!(
            doc.warnings
                .iter()
                .any(|w| w.contains("a file cannot be purged") || w.contains("--purge not given")),
            "{:?}",
            doc.warnings
        );
        assert_eq!(
            doc.write_cliff_note.as_deref(),
            Some("the write-saturation test did not run")
        );
        // Every job on the file, quiet, with the engine asked for; the
        // first preconditions with sequential writes.
        assert!(jobs.len() > 2);
        for j in &jobs {
            assert!(j.iter().any(|o| o == "--quiet"));
            assert!(j
                .iter()
                .any(|o| o.starts_with("--filename=") && o.ends_with("/t")));
        }
        assert!(jobs[0].iter().any(|o| o == "--rw=write"), "{:?}", jobs[0]);
        assert!(jobs[1..]
            .iter()
            .all(|j| j.iter().any(|o| o == "--ioengine=psync")));
    }

    #[test]
    fn a_failing_run_fails_its_test_and_the_document_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::check(file_request(dir.path(), &["latency", "wsat"])).unwrap();
        let p = setup.plan().unwrap();
        let mut doc = setup.document(&p, 1);
        let run = Box::new(|_: &ssdready_run::RunRequest| {
            Err(ssdready_run::Failure::Runtime(
                "the device went away".into(),
            ))
        });
        let stop = Arc::new(AtomicBool::new(false));
        setup.execute(&p, &mut doc, run, true, stop, &mut Silent);
        assert!(
            doc.failure
                .as_deref()
                .unwrap_or("")
                .contains("the device went away"),
            "{:?}",
            doc.failure
        );
    }

    #[test]
    fn an_unknown_test_is_bad_input_naming_the_tests() {
        let dir = tempfile::tempdir().unwrap();
        let setup = Setup::check(file_request(dir.path(), &["wast"])).unwrap();
        let e = setup.plan().unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string().contains("iops, throughput, latency, wsat"),
            "{e}"
        );
    }
}
