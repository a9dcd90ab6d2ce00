//! `ssdready run`: spec → targets → layout → workers → measurements → result.
//!
//! Everything that can be wrong with the request is found before anything is
//! written (exit code 2): options, log paths, targets of every phase (opened
//! once, see [`crate::layout`]), engine limits (an io_uring or AIO context
//! is created at the asked depth), free space for the layout. Only then are
//! files laid out and workers started. Each phase starts I/O only once all
//! its workers have their engines. A phase that fails after an earlier one
//! ran keeps the earlier results, with the failure stated
//! (`RunResult::failure`, exit code 1).

pub use crate::failure::{bad, Failure};
use crate::observer::RunObserver;
use crate::phase::{decompose_phase, run_phase, Carried, PhaseInputs, PhaseRun};
use crate::phases::phases_and_groups;
use crate::prepared::PreparedJob;
use crate::request::RunRequest;
use crate::worker::WorkerOutcome;
use ssdready_core::result::*;
use ssdready_core::spec::JobSpec;
use ssdready_core::stats::WorkerStats;
use ssdready_core::Ddir;
use ssdready_emu::engine::SharedDevice;
use ssdready_emu::memory::TimeBase;
use ssdready_io::clock::Clock;
use ssdready_io::target::TargetKind;
use ssdready_probe::platform;
use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Resolve the jobs without running them (`--parse-only`): the one
/// validation path, plus the emulated devices' parameters and memory as a
/// run (`Real`) or a simulation (`Virtual`) would check them.
pub fn resolve_only(
    args: &RunRequest,
    time: TimeBase,
    obs: &mut dyn RunObserver,
) -> Result<Vec<JobSpec>, Failure> {
    let specs = crate::validate::jobs(args)?;
    crate::emulated::check_resolved(&specs, time).map_err(bad)?;
    // What a run would refuse, --parse-only refuses too (one line, exit
    // 2), but for an engine's missing library (a note).
    crate::validate::refuse_unrunnable_at_parse(&specs)?;
    if time == TimeBase::Real {
        if let Some(n) = crate::emulated::default_target_note(&specs) {
            obs.note(&n);
        }
    }
    Ok(specs)
}

/// The run's jobs, checked, prepared and laid out, ready for their phases.
struct Ready {
    jobs: Vec<PreparedJob>,
    phases: Vec<Vec<usize>>,
    groups: Vec<u32>,
    emu_devices: BTreeMap<String, Arc<SharedDevice>>,
    warnings: Vec<String>,
}

/// Everything that can be wrong with the request is found here, before
/// anything is written: the jobs, the emulated devices, the targets, the
/// zones; then the files are laid out.
fn ready(args: &RunRequest, clock: Clock, obs: &mut dyn RunObserver) -> Result<Ready, Failure> {
    let mut specs = crate::validate::jobs(args)?;
    crate::validate::refuse_unrunnable(&specs)?;
    for s in specs
        .iter_mut()
        .filter(|s| !s.randrepeat && !s.randseed_given)
    {
        s.randseed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
    }
    let note = crate::emulated::default_target_note(&specs);
    let mut warnings = crate::emulated::assign_emulator(&mut specs);
    warnings.extend(specs.iter().flat_map(|s| s.warnings()));
    let (phases, groups) = phases_and_groups(&specs);
    let emu_params = crate::emulated::params_for(&specs).map_err(bad)?;
    crate::emulated::check_memory(&specs, &emu_params, TimeBase::Real).map_err(bad)?;
    let emu_devices = crate::emulated::create(emu_params, clock, &args.stop)?;
    let mut jobs: Vec<PreparedJob> = specs
        .into_iter()
        .map(|s| crate::prepare::prepare(s, args.allow_destructive, &emu_devices))
        .collect::<Result<_, _>>()?;
    if let Some(max) = args.log_samples_max {
        crate::logs::bound(&mut jobs, max);
    }
    let zones = crate::zbd::setup(&jobs).map_err(bad)?;
    for (j, z) in jobs.iter_mut().zip(zones) {
        j.zbd = z;
    }
    for t in jobs.iter().flat_map(|j| j.targets.iter()) {
        if let Some(w) = &t.overridden {
            // Said now, before anything is written, and again with the results.
            obs.warning(w);
            warnings.push(w.clone());
        }
    }
    // Said once every check passed: a refusal stays one line.
    if let Some(n) = note {
        obs.note(&n);
    }
    crate::layout::ready(&jobs, args.readonly, &args.stop, obs)?;
    // The extent maps serve only the latency split's join.
    let jobs = match args.decompose {
        Some(true) => crate::layout::map_file_sectors(jobs),
        _ => jobs,
    };
    Ok(Ready {
        jobs,
        phases,
        groups,
        emu_devices,
        warnings,
    })
}

/// What the phases leave for the result.
#[derive(Default)]
struct Collected {
    job_results: Vec<Option<JobResult>>,
    phases: Vec<PhaseResult>,
    /// Log files to write: path and text.
    log_files: Vec<(String, Vec<u8>)>,
    /// Why the run stopped early, when a later phase failed.
    failure: Option<String>,
}

/// Run the jobs; returns the result (possibly marked interrupted).
pub fn execute(args: &RunRequest, obs: &mut dyn RunObserver) -> Result<RunResult, Failure> {
    let stop = args.stop.clone();
    let clock = Clock::calibrate();
    let Ready {
        jobs,
        phases,
        groups,
        emu_devices,
        mut warnings,
    } = ready(args, clock, obs)?;
    let platform = platform::collect(&devices_of(&jobs));
    let started_unix_ms = now_unix_ms();
    let inputs = PhaseInputs {
        jobs: &jobs,
        groups: &groups,
        clock,
        stop: &stop,
        profile: args.profile,
        profile_exact: args.profile_exact,
    };
    let mut carried = Carried {
        next_worker: 1,
        emu_free: Vec::new(),
        agg: args
            .bandwidth_log
            .as_deref()
            .map(|p| crate::agglog::AggBwLog::new(p, clock.now())),
    };
    let mut got = Collected {
        job_results: (0..jobs.len()).map(|_| None).collect(),
        ..Default::default()
    };
    run_phases(
        args,
        &inputs,
        &phases,
        &mut carried,
        &mut got,
        &mut warnings,
        obs,
    )?;
    let interrupted = stop.load(Relaxed);
    if got.phases.is_empty() && interrupted {
        return Err(Failure::Interrupted(
            "interrupted before the first phase started (nothing was measured)".into(),
        ));
    }
    write_logs(carried.agg.take(), &mut got);
    let emulator = emulator_report(&emu_devices, &got.phases, carried.emu_free, &mut warnings);
    Ok(RunResult {
        emulator,
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        started_unix_ms,
        interrupted,
        failure: got.failure,
        clock: ClockInfo {
            source: clock.source().into(),
            tsc_hz: clock.tsc_hz(),
            ns_per_timestamp: clock.cost_ns(),
        },
        platform,
        global_options: ssdready_core::options::global_options(&args.sections),
        jobs: got.job_results.into_iter().flatten().collect(),
        phases: got.phases,
        warnings,
    })
}

/// The distinct block devices under the jobs' targets, sorted.
fn devices_of(jobs: &[PreparedJob]) -> Vec<String> {
    let mut devices: Vec<String> = jobs
        .iter()
        .flat_map(|j| j.targets.iter().filter_map(|t| t.device.clone()))
        .collect();
    devices.sort();
    devices.dedup();
    devices
}

/// Run the phases in order until a stop, a failure or an end of the run,
/// collecting each phase's results into `got`. Fails only when the first
/// phase does; a later failure is kept in `got.failure`.
fn run_phases(
    args: &RunRequest,
    inputs: &PhaseInputs,
    phases: &[Vec<usize>],
    carried: &mut Carried,
    got: &mut Collected,
    warnings: &mut Vec<String>,
    obs: &mut dyn RunObserver,
) -> Result<(), Failure> {
    let jobs = inputs.jobs;
    for (pi, members) in phases.iter().enumerate() {
        if inputs.stop.load(Relaxed) {
            break;
        }
        if let Some(a) = carried.agg.as_mut() {
            a.phase_start();
        }
        for &ji in members {
            crate::fileprep::before_phase(&jobs[ji], inputs.stop, warnings);
        }
        let decompose = decompose_phase(args.decompose, jobs, members, warnings);
        let run = match run_phase(inputs, members, decompose, carried, warnings, obs) {
            Ok(run) => run,
            Err(f) if got.phases.is_empty() => return Err(f),
            // Earlier phases' results are kept, with what stopped the run.
            Err(f) => {
                got.failure = Some(format!(
                    "phase {} of {} failed ({}); the results cover the phases before it",
                    pi + 1,
                    phases.len(),
                    f.message()
                ));
                break;
            }
        };
        let end_run = run.end_run;
        let phase = collect_phase(args, inputs, pi, members, run, got, warnings);
        got.phases.push(phase);
        if end_run && pi + 1 < phases.len() {
            let skipped: Vec<&str> = phases[pi + 1..]
                .iter()
                .flatten()
                .map(|&ji| jobs[ji].spec.name.as_str())
                .collect();
            warnings.push(format!(
                "exitall (exit_what=all) or exitall_on_error ended the run: job(s) {} did not start (as in fio)",
                skipped.join(", ")
            ));
            break;
        }
    }
    Ok(())
}

/// Write the log files (the aggregate bandwidth log's with them), shared
/// ones merged; the first write error becomes the run's failure.
fn write_logs(agg: Option<crate::agglog::AggBwLog>, got: &mut Collected) {
    let agg_files = agg.map(|a| a.files()).unwrap_or_default();
    got.log_files
        .extend(agg_files.into_iter().map(|(p, t)| (p, t.into_bytes())));
    for (path, text) in crate::logs::merge_shared(std::mem::take(&mut got.log_files)) {
        if let Err(e) = crate::logs::write(&path, &text) {
            got.failure.get_or_insert(e);
        }
    }
}

/// A phase's jobs' results, logs and files to remove, and the phase's
/// own result with its cross-checks.
fn collect_phase(
    args: &RunRequest,
    run: &PhaseInputs,
    pi: usize,
    members: &[usize],
    ran: PhaseRun,
    got: &mut Collected,
    warnings: &mut Vec<String>,
) -> PhaseResult {
    for &ji in members {
        let j = &run.jobs[ji];
        let workers: Vec<&WorkerOutcome> = ran
            .outcomes
            .iter()
            .filter(|(i, _)| *i == ji)
            .map(|(_, o)| o)
            .collect();
        for o in &workers {
            match (&o.stats.log, &args.log_sink) {
                (Some(log), Some(sink)) => {
                    warnings.extend(crate::logs::send(sink, &j.resolved.logs, o.number, log))
                }
                (Some(log), None) => {
                    got.log_files
                        .extend(crate::logs::files_for(&j.resolved.logs, o.number, log))
                }
                (None, _) => {}
            }
            let record = o.stats.iolog_record.as_deref().cloned();
            got.log_files
                .extend(record.map(|(p, t)| (p, t.into_bytes())));
        }
        got.job_results[ji] = Some(job_result(j, run.groups[ji], pi, &workers));
        if j.spec.unlink {
            for t in j.targets.iter().filter(|t| t.kind == TargetKind::File) {
                // fio's directory engines remove their directories.
                let _ = if j.spec.dir_engine() {
                    std::fs::remove_dir(&t.path)
                } else {
                    std::fs::remove_file(&t.path)
                };
            }
        }
    }
    crate::steadystate::attach(&ran.steady, &mut got.job_results);
    let mut phase = PhaseResult {
        jobs: members.to_vec(),
        window_ns: ran.window_ns,
        cpu: ran.cpu,
        disks: ran.disks,
        profile: ran.profile,
        decomposition: ran.decomposition,
        hw_counters: ran.hw_counters,
        checks: Vec::new(),
    };
    phase.checks = ssdready_core::checks::phase_checks(&phase);
    let disagree = phase.checks.iter().filter(|c| !c.agree);
    warnings.extend(disagree.map(|c| format!("phase {pi}: {}", c.describe())));
    phase
}

/// The emulator's section of the result: the first emulated device's
/// counters over the measured windows. None when a worker that panicked
/// poisoned the device's lock.
fn emulator_report(
    devices: &BTreeMap<String, Arc<SharedDevice>>,
    phases: &[PhaseResult],
    free: Vec<u64>,
    warnings: &mut Vec<String>,
) -> Option<EmuReport> {
    if devices.len() > 1 {
        warnings.push(format!(
            "{} emulated devices were used; the emulator report covers the first",
            devices.len()
        ));
    }
    let window: u64 = phases.iter().map(|p| p.window_ns).sum();
    let d = devices.values().next()?;
    let dev = d.device.read().ok()?;
    Some(crate::emulated::report(
        &dev,
        &d.totals(&dev),
        "real",
        free,
        window,
    ))
}

fn job_result(j: &PreparedJob, group: u32, phase: usize, workers: &[&WorkerOutcome]) -> JobResult {
    let mode = workers.first().map(|o| o.completion_mode).unwrap_or("");
    let targets = j
        .targets
        .iter()
        .zip(&j.regions)
        .map(|(t, r)| TargetInfo {
            path: t.path.display().to_string(),
            kind: t.kind.name().into(),
            size_bytes: t.size.max(r.offset + r.len),
            device: t.device.clone(),
        })
        .chain(j.emu.as_ref().map(|d| TargetInfo {
            path: j.spec.filename[0].clone(),
            kind: "emulator".into(),
            size_bytes: d.capacity(),
            device: None,
        }))
        .collect();
    let mut r = job_result_from(
        &j.spec,
        group,
        phase,
        mode,
        targets,
        workers.iter().map(|o| o.stats.clone()).collect(),
    );
    r.strategy = crate::worker::strategy_report(workers, &r.raw);
    r.persistence = workers
        .iter()
        .find_map(|o| o.persistence)
        .map(str::to_string);
    r
}

/// A job's result from its workers' counters (real or simulated).
pub fn job_result_from(
    spec: &JobSpec,
    group: u32,
    phase: usize,
    mode: &str,
    targets: Vec<TargetInfo>,
    workers: Vec<WorkerStats>,
) -> JobResult {
    let mut merged = WorkerStats::default();
    for w in &workers {
        merged.merge(w);
    }
    let has_slat = !matches!(mode, "sync" | "virtual");
    let window = merged.measured_ns;
    let pcts = &spec.percentile_list;
    let dir = |d: Ddir| {
        merged.dirs[d.idx()]
            .as_ref()
            .map(|s| DirResult::from_stats(s, window, pcts, has_slat))
    };
    JobResult {
        name: spec.name.clone(),
        group,
        phase,
        completion_mode: mode.to_string(),
        persistence: None,
        strategy: None,
        spec: spec.clone(),
        workers: spec.numjobs,
        targets,
        measured_ns: window,
        read: dir(Ddir::Read),
        write: dir(Ddir::Write),
        trim: dir(Ddir::Trim),
        errors: merged.errors,
        first_error: merged.first_error.clone(),
        continued_errors: merged.continued,
        first_continued_error: merged.first_continued.clone(),
        overlaps_waited: merged.overlaps_waited,
        sync: merged.sync.as_deref().map(|s| SyncResult {
            fsyncs: s.fsyncs,
            fdatasyncs: s.fdatasyncs,
            sync_ranges: s.sync_ranges,
            lat: ssdready_core::hist::LatSummary::of(&s.lat, pcts),
        }),
        verify: merged.verify.as_deref().map(|v| VerifyResult {
            method: spec.verify.method.map_or("", |m| m.name()).to_string(),
            blocks: v.blocks,
            bytes: v.bytes,
            failed: v.failed,
            failures: v.failures.clone(),
            skipped_by_state: v.skipped_by_state,
        }),
        steadystate: Vec::new(),
        zone_resets: merged.zone_resets.filter(|_| {
            !matches!(
                spec.rw,
                ssdready_core::spec::RwMode::Read | ssdready_core::spec::RwMode::RandRead
            )
        }),
        temporal_merge: merged
            .temporal_merge
            .as_deref()
            .map(|m| MergeReport::of(spec, m)),
        schedule: merged
            .schedule
            .as_deref()
            .map(|s| ssdready_core::arrivals::ScheduleResult::of(spec, s)),
        raw_workers: workers,
        raw: merged,
    }
}
