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
use crate::observer::{notices, RunObserver, Totals};
use crate::phases::phases_and_groups;
use crate::prepare::PreparedJob;
use crate::request::RunRequest;
use crate::worker::{self, Live, WorkerCtx, WorkerOutcome};
use ssdready_core::result::*;
use ssdready_core::spec::{EngineKind, ExitWhat, JobSpec};
use ssdready_core::stats::WorkerStats;
use ssdready_core::Ddir;
use ssdready_emu::memory::TimeBase;
use ssdready_io::clock::Clock;
use ssdready_io::target::TargetKind;
use ssdready_probe::{cpu, disk, platform};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::Duration;

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The worker outcomes of one phase, with its snapshots.
struct PhaseRun {
    outcomes: Vec<(usize, WorkerOutcome)>,
    window_ns: u64,
    cpu: Option<CpuCost>,
    disks: Vec<DiskResult>,
    profile: Option<ProfileReport>,
    decomposition: Option<Decomposition>,
    hw_counters: Option<ssdready_core::result::HwCounts>,
    /// fio's steady-state checks of the phase's jobs.
    steady: Vec<crate::steadystate::Unit>,
    /// A job's `exitall` with `exit_what=all` ended the run: the later
    /// phases do not start.
    end_run: bool,
}

/// Whether to decompose this phase: only when asked. Off by default since
/// the kernel's price of calling any BPF program from four block
/// tracepoints (4.6–7.7 % of IOPS on this project's VMs, measured with
/// empty programs) alone exceeds the 3 % a default run may cost.
/// Asked for a phase whose I/O reaches no block device (the emulator and
/// the null engine have no block layer), it says so instead.
fn decompose_phase(
    asked: Option<bool>,
    jobs: &[PreparedJob],
    members: &[usize],
    warnings: &mut Vec<String>,
) -> bool {
    if asked != Some(true) {
        return false;
    }
    let block = members.iter().any(|&i| {
        jobs[i].emu.is_none()
            && jobs[i].spec.ioengine != EngineKind::Null
            && jobs[i].targets.iter().any(|t| t.device.is_some())
    });
    if !block {
        warnings.push(
            "--decompose: no job of this phase reaches a block device (the emulator and the \
             null engine have no block layer): nothing to decompose"
                .into(),
        );
    }
    block
}

type Snapshot = (u64, cpu::CpuSnapshot, Vec<Option<disk::DiskStat>>);

/// Run the jobs `members` (indexes into `jobs`) together.
#[allow(clippy::too_many_arguments)]
fn run_phase(
    jobs: &[PreparedJob],
    members: &[usize],
    first_worker_number: &mut u32,
    clock: Clock,
    stop: &Arc<AtomicBool>,
    obs: &mut dyn RunObserver,
    warnings: &mut Vec<String>,
    emu_free: &mut Vec<u64>,
    profile: bool,
    profile_exact: bool,
    decompose: bool,
    groups: &[u32],
    agg: &mut Option<crate::agglog::AggBwLog>,
) -> Result<PhaseRun, Failure> {
    // The eBPF programs first, so the profiler's symbol table names them.
    let timer = if decompose {
        crate::decompose::start(warnings)
    } else {
        None
    };
    let states = if profile && profile_exact {
        crate::exactcpu::start(warnings)
    } else {
        None
    };
    let mut states_start = None;
    let mut sampler = if profile {
        crate::profiler::open(warnings)
    } else {
        None
    };
    let join = timer.as_ref().and_then(|t| t.join_table());
    let hw = ssdready_probe::hwcount::Window::open();
    let mut timer_start = None;
    let emu_dev = members.iter().find_map(|&i| jobs[i].emu.clone());
    let mut devices: Vec<String> = members
        .iter()
        .flat_map(|&i| jobs[i].targets.iter().filter_map(|t| t.device.clone()))
        .collect();
    devices.sort();
    devices.dedup();
    let total_workers: usize = members.iter().map(|&i| jobs[i].spec.numjobs as usize).sum();
    // Interrupt coalescing of real devices, put back when the phase ends.
    let _coalescing = crate::strategy::nvme::apply(jobs, members).map_err(Failure::Runtime)?;
    let opened = Arc::new(Barrier::new(total_workers + 1));
    let barrier = Arc::new(Barrier::new(total_workers + 1));
    // One end flag per worker: a steady-state unit ends alone.
    let mut ends = crate::steadystate::EndFlags::new(total_workers);
    let mut handles = Vec::new();
    let mut lives = Vec::new();
    let mut flows: std::collections::HashMap<u32, Arc<worker::FlowShared>> = Default::default();
    for &ji in members {
        let j = &jobs[ji];
        // wait_for names an earlier job: its workers, when it runs in this
        // phase (one of an earlier phase has ended already).
        let waitees: Vec<Arc<Live>> = match &j.spec.wait_for {
            Some(name) => lives
                .iter()
                .filter(|(i, _): &&(usize, Arc<Live>)| jobs[*i].spec.name == *name)
                .map(|(_, l)| l.clone())
                .collect(),
            None => Vec::new(),
        };
        let flow = (j.spec.flow > 0).then(|| flows.entry(j.spec.flow_id).or_default().clone());
        let file_locks = worker::access::FileLocks::for_job(&j.spec, j.targets.len());
        for w in 0..j.spec.numjobs {
            let live = Arc::new(Live::default());
            lives.push((ji, live.clone()));
            let cpus = j
                .spec
                .cpus_allowed
                .as_ref()
                .map(|list| match j.spec.cpus_allowed_policy {
                    ssdready_core::spec::CpusPolicy::Shared => list.clone(),
                    ssdready_core::spec::CpusPolicy::Split => vec![list[w as usize % list.len()]],
                });
            let view = j.clone_view(w);
            let zbd = crate::zbd::for_worker(j.zbd.as_ref(), &j.spec, view.regions.first());
            let ctx = WorkerCtx {
                spec: j.spec.clone(),
                targets: view.targets,
                regions: view.regions,
                index: w,
                number: *first_worker_number,
                clock,
                stop: stop.clone(),
                end_phase: ends.flag(lives.len() - 1),
                live,
                opened: opened.clone(),
                start: barrier.clone(),
                cpus,
                emu: j.emu.clone(),
                join: join.clone(),
                waitees: waitees.clone(),
                flow: flow.clone(),
                zbd,
                run_workers: jobs.iter().map(|j| j.spec.numjobs).sum(),
                file_locks: file_locks.clone(),
            };
            let number = *first_worker_number;
            *first_worker_number += 1;
            let said = notices::current();
            let h = std::thread::Builder::new()
                .name(format!("{}.{w}", j.spec.name))
                .spawn(move || said.scope(|| worker::run(ctx)))
                .map_err(|e| Failure::Runtime(format!("starting a worker thread: {e}")))?;
            handles.push((ji, number, h));
        }
    }
    let ramp = members
        .iter()
        .map(|&i| jobs[i].spec.ramp_time_ns)
        .max()
        .unwrap_or(0);
    if members.iter().any(|&i| jobs[i].spec.ramp_time_ns != ramp) {
        warnings.push("jobs of one phase have different ramp_time: CPU and device figures start after the longest".into());
    }
    let all_timed = members.iter().all(|&i| jobs[i].spec.time_based);
    let expected = members
        .iter()
        .filter_map(|&i| {
            jobs[i]
                .spec
                .runtime_ns
                .map(|r| r + jobs[i].spec.ramp_time_ns + jobs[i].spec.startdelay_ns)
        })
        .max()
        .filter(|_| all_timed)
        .map(|ns| ns as f64 / 1e9);
    let live_only: Vec<Arc<Live>> = lives.iter().map(|(_, l)| l.clone()).collect();
    let snap = |clock: &Clock| -> Snapshot {
        (
            clock.now(),
            cpu::CpuSnapshot::now(),
            devices.iter().map(|d| disk::read(d)).collect(),
        )
    };
    // No worker starts I/O unless every worker of the phase has its engine.
    opened.wait();
    if lives.iter().any(|(_, l)| l.failed.load(Relaxed)) {
        ends.end_all();
    }
    // Without a ramp the window opens before the workers are released (they
    // wait at the barrier, engines open), so no I/O of the phase precedes
    // the first snapshot however late this thread is scheduled.
    let mut measure: Option<Snapshot> = if ramp == 0 { Some(snap(&clock)) } else { None };
    if let (Some(s), Some(_)) = (&states, &measure) {
        states_start = s.snapshot().ok();
    }
    if let (Some((s, _, _)), Some(_)) = (&sampler, &measure) {
        s.enable();
    }
    if measure.is_some() {
        hw.start();
    }
    if let (Some(t), Some(_)) = (&timer, &measure) {
        timer_start = t.read_parts().ok();
    }
    barrier.wait();
    let t0 = clock.now();
    let specs: Vec<&JobSpec> = jobs.iter().map(|j| &*j.spec).collect();
    let worker_jobs: Vec<usize> = lives.iter().map(|(ji, _)| *ji).collect();
    let mut steady = crate::steadystate::units(&worker_jobs, &specs, groups, t0);
    obs.phase_start(expected);
    let said = notices::current();
    let mut next_tick = t0 + 1_000_000_000;
    let mut end_run = false;
    while !live_only.iter().all(|l| l.done.load(Relaxed)) {
        std::thread::sleep(Duration::from_millis(20));
        said.drain_into(obs);
        let now = clock.now();
        if measure.is_none() && now >= t0 + ramp {
            measure = Some(snap(&clock));
            states_start = states.as_ref().and_then(|s| s.snapshot().ok());
            hw.start();
            if let Some((s, _, _)) = &sampler {
                s.enable();
            }
            if let Some(t) = &timer {
                timer_start = t.read_parts().ok();
            }
        }
        if let Some((s, _, raw)) = &mut sampler {
            s.drain(&mut |x| raw.push(x.user, x.pid, x.ip, &x.callchain, x.weight_ns, x.timing));
        }
        if let Some(a) = agg.as_mut() {
            a.tick(now, measure.is_some(), &live_only);
        }
        end_run |= exitall(jobs, groups, &lives, &mut ends);
        ends.propagate();
        if now >= next_tick {
            // A worker that panicked holding the lock has poisoned it: its
            // error is reported when the phase ends.
            if let Some(Ok(d)) = emu_dev.as_ref().map(|d| d.device.read()) {
                emu_free.push(d.free_blocks());
            }
            obs.progress((now - t0) as f64 / 1e9, &totals(&live_only));
            crate::steadystate::sample(&mut steady, now, &live_only, &mut ends);
            next_tick += 1_000_000_000;
        }
    }
    let mut outcomes = Vec::new();
    for (ji, number, h) in handles {
        let mut o = h
            .join()
            .map_err(|_| Failure::Internal("a worker thread panicked".into()))?;
        o.number = number;
        outcomes.push((ji, o));
    }
    warnings.extend(worker::abandoned_warnings(
        outcomes
            .iter()
            .map(|(ji, o)| (jobs[*ji].spec.name.as_str(), o)),
    ));
    let end = snap(&clock);
    let states_end = states.as_ref().and_then(|s| s.snapshot().ok());
    // Detached here: the programs cost every system call and interrupt.
    let states = states.map(|s| (s.attached.clone(), s.missing.clone()));
    hw.stop();
    let timer_end = timer.as_ref().and_then(|t| t.read_parts().ok());
    let flavour = timer.as_ref().map_or("", |t| t.flavour);
    drop(timer);
    obs.phase_end();
    said.drain_into(obs);
    if let Some((s, _, raw)) = &mut sampler {
        s.disable();
        s.drain(&mut |x| raw.push(x.user, x.pid, x.ip, &x.callchain, x.weight_ns, x.timing));
    }
    let measure = measure.unwrap_or_else(|| end.clone());
    if let Some(f) = phase_failure(jobs, &outcomes) {
        return Err(f);
    }
    let window_ns = end.0.saturating_sub(measure.0);
    let ios: u64 = outcomes.iter().map(|(_, o)| o.stats.total_ios()).sum();
    let cpu_cost = cpu::cost(&measure.1, &end.1, ios, window_ns, clock.tsc_hz());
    if measure.1.system.is_none() {
        warnings.push("/proc/stat is unreadable: no whole-system CPU figures".into());
    }
    let mut disks = Vec::new();
    for (di, dname) in devices.iter().enumerate() {
        let (Some(a), Some(b)) = (&measure.2[di], &end.2[di]) else {
            continue;
        };
        let mut app = disk::AppView::default();
        for &ji in members {
            let j = &jobs[ji];
            // Buffered I/O reaches the device as the page cache decides
            // (merged, read ahead, written back later), and fio's
            // file-operation engines move no data (the device sees only the
            // file system's own I/O), nor do the mapping engines (stores
            // to memory) and e4defrag (extent moves): only direct data I/O
            // is counted against the device's own count.
            if j.spec.direct
                && !j.spec.fake_io()
                && !matches!(
                    j.spec.engine_named.as_deref(),
                    Some("libpmem" | "dev-dax" | "e4defrag")
                )
                && !j.targets.is_empty()
                && j.targets.iter().all(|t| t.device.as_deref() == Some(dname))
            {
                for (_, o) in outcomes.iter().filter(|(i, _)| *i == ji) {
                    for d in o.stats.dirs.iter().flatten() {
                        app.ios += d.lat.count();
                        app.lat_sum_ns += d.lat.sum() as f64;
                    }
                }
            }
        }
        disks.push(disk::split(dname, a, b, app, window_ns));
    }
    let profile = sampler.map(|(s, mut c, raw)| {
        raw.classify_into(&mut c);
        if s.throttled > 0 {
            obs.note(&format!(
                "--profile: the kernel throttled sampling {} times",
                s.throttled
            ));
        }
        let mut r = c.report(
            s.period_ns(),
            ios,
            clock.tsc_hz(),
            s.lost,
            s.weigher.late_ns,
        );
        r.unsampled_ns = s.weigher.unsampled_ns(window_ns);
        if let (Some((tps, missing)), Some(a), Some(b)) = (&states, &states_start, &states_end) {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
            let (d, per_cpu) = crate::exactcpu::delta(a, b);
            r.exact = Some(crate::exactcpu::build(
                &d,
                window_ns,
                cpus,
                ios,
                clock.tsc_hz(),
                &r,
                tps.clone(),
                missing.clone(),
                &per_cpu,
            ));
        }
        r
    });
    let decomposition = match (timer_start, timer_end) {
        (Some(a), Some(b)) => {
            let (mut app_ios, mut app_sum) = (0u64, 0f64);
            let mut joined: Option<ssdready_core::stats::IoSplit> = None;
            for (_, o) in &outcomes {
                for d in o.stats.dirs.iter().flatten() {
                    app_ios += d.lat.count();
                    app_sum += d.lat.sum() as f64;
                }
                if let Some(j) = &o.stats.io_split {
                    joined.get_or_insert_with(Default::default).merge(j);
                }
            }
            let pcts = members
                .first()
                .map(|&i| jobs[i].spec.percentile_list.clone())
                .unwrap_or_default();
            Some(crate::decompose::split(
                flavour,
                a,
                b,
                app_ios,
                app_sum,
                joined.as_ref(),
                &pcts,
            ))
        }
        _ => None,
    };
    Ok(PhaseRun {
        outcomes,
        window_ns,
        cpu: Some(cpu_cost),
        disks,
        profile,
        decomposition,
        hw_counters: hw.report(ios),
        steady,
        end_run,
    })
}

/// The workers' completed I/Os and bytes per direction.
fn totals(lives: &[Arc<Live>]) -> Totals {
    let mut now = [(0u64, 0u64); 3];
    for l in lives {
        for (d, n) in now.iter_mut().enumerate() {
            n.0 += l.ios[d].load(Relaxed);
            n.1 += l.bytes[d].load(Relaxed);
        }
    }
    now
}

/// fio's `exitall`: a finished worker of a job with it ends, as its
/// `exit_what` says, the workers of its reporting group (`group`, fio's
/// default) or every worker of the phase (`stonewall`, `all`). Returns
/// whether the run ends after this phase (`all`).
fn exitall(
    jobs: &[PreparedJob],
    groups: &[u32],
    lives: &[(usize, Arc<Live>)],
    ends: &mut crate::steadystate::EndFlags,
) -> bool {
    let mut end_run = false;
    if lives
        .iter()
        .any(|(ji, l)| jobs[*ji].spec.run.exitall_on_error && l.errored.load(Relaxed))
    {
        // fio's exitall_on_error: every job ends, and the run with them.
        ends.end_all();
        end_run = true;
    }
    for (ji, _) in lives
        .iter()
        .filter(|(ji, l)| jobs[*ji].spec.exitall && l.done.load(Relaxed))
    {
        match jobs[*ji].spec.exit_what {
            ExitWhat::Group => {
                let group: Vec<usize> = (0..lives.len())
                    .filter(|&w| groups[lives[w].0] == groups[*ji])
                    .collect();
                ends.end_steady(&group);
            }
            ExitWhat::Stonewall => ends.end_all(),
            ExitWhat::All => {
                ends.end_all();
                end_run = true;
            }
        }
    }
    end_run
}

/// The failure of a phase whose workers reported one: a panic first (the
/// errors of the others may only be the locks it poisoned), then any other.
fn phase_failure(jobs: &[PreparedJob], outcomes: &[(usize, WorkerOutcome)]) -> Option<Failure> {
    let (ji, o) = outcomes
        .iter()
        .find(|(_, o)| o.panicked)
        .or_else(|| outcomes.iter().find(|(_, o)| o.error.is_some()))?;
    let job = &jobs[*ji].spec.name;
    let error = o.error.as_deref().unwrap_or("");
    Some(if o.panicked {
        let what =
            crate::panics::first().map_or(error.to_string(), |p| format!("internal error: {p}"));
        Failure::Internal(format!(
            "job '{job}': {what} (a bug in ssdready; please report it)"
        ))
    } else if o.unsupported {
        Failure::BadInput(format!("job '{job}': {error}"))
    } else {
        Failure::Runtime(format!("job '{job}': {error}"))
    })
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
    crate::devices::check_resolved(&specs, time).map_err(bad)?;
    // What a run would refuse, --parse-only refuses too (one line, exit
    // 2), but for an engine's missing library (a note).
    crate::validate::refuse_unrunnable_at_parse(&specs)?;
    if time == TimeBase::Real {
        if let Some(n) = crate::devices::default_target_note(&specs) {
            obs.note(&n);
        }
    }
    Ok(specs)
}

/// Run the jobs; returns the result (possibly marked interrupted).
pub fn execute(args: &RunRequest, obs: &mut dyn RunObserver) -> Result<RunResult, Failure> {
    let stop = args.stop.clone();
    let mut specs = crate::validate::jobs(args)?;
    crate::validate::refuse_unrunnable(&specs)?;
    for s in specs.iter_mut().filter(|s| !s.randrepeat) {
        s.randseed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
    }
    let note = crate::devices::default_target_note(&specs);
    let mut warnings = crate::devices::assign_emulator(&mut specs);

    warnings.extend(specs.iter().flat_map(|s| s.warnings()));
    let (phases, groups) = phases_and_groups(&specs);
    let clock = Clock::calibrate();
    let emu_params = crate::devices::params_for(&specs).map_err(bad)?;
    crate::devices::check_memory(&specs, &emu_params, TimeBase::Real).map_err(bad)?;
    let emu_devices = crate::devices::create(emu_params, clock, &stop)?;
    let mut jobs: Vec<PreparedJob> = specs
        .into_iter()
        .map(|s| crate::prepare::prepare(s, args.allow_destructive, &emu_devices))
        .collect::<Result<_, _>>()?;
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
    crate::layout::ready(&jobs, &stop, obs)?;
    let jobs = crate::layout::map_file_sectors(jobs);

    let mut devices: Vec<String> = jobs
        .iter()
        .flat_map(|j| j.targets.iter().filter_map(|t| t.device.clone()))
        .collect();
    devices.sort();
    devices.dedup();
    let platform = platform::collect(&devices);
    let started_unix_ms = now_unix_ms();

    let mut job_results: Vec<Option<JobResult>> = (0..jobs.len()).map(|_| None).collect();
    let mut phase_results = Vec::new();
    let mut worker_number = 1u32;
    let mut log_files = Vec::new();
    let mut emu_free = Vec::new();
    let mut failure = None;
    let mut agg = args
        .bandwidth_log
        .as_deref()
        .map(|p| crate::agglog::AggBwLog::new(p, clock.now()));
    for (pi, members) in phases.iter().enumerate() {
        if stop.load(Relaxed) {
            break;
        }
        if let Some(a) = agg.as_mut() {
            a.phase_start();
        }
        for &ji in members {
            crate::fileprep::before_phase(&jobs[ji], &stop, &mut warnings);
        }
        let decompose = decompose_phase(args.decompose, &jobs, members, &mut warnings);
        let run = match run_phase(
            &jobs,
            members,
            &mut worker_number,
            clock,
            &stop,
            obs,
            &mut warnings,
            &mut emu_free,
            args.profile,
            args.profile_exact,
            decompose,
            &groups,
            &mut agg,
        ) {
            Ok(run) => run,
            Err(f) if phase_results.is_empty() => return Err(f),
            // Earlier phases' results are kept, with what stopped the run.
            Err(f) => {
                failure = Some(format!(
                    "phase {} of {} failed ({}); the results cover the phases before it",
                    pi + 1,
                    phases.len(),
                    f.message()
                ));
                break;
            }
        };
        for &ji in members {
            let j = &jobs[ji];
            let workers: Vec<&WorkerOutcome> = run
                .outcomes
                .iter()
                .filter(|(i, _)| *i == ji)
                .map(|(_, o)| o)
                .collect();
            for o in &workers {
                match (&o.stats.log, &args.log_sink) {
                    (Some(log), Some(sink)) => {
                        warnings.extend(crate::logs::send(sink, &j.spec, o.number, log))
                    }
                    (Some(log), None) => {
                        log_files.extend(crate::logs::files_for(&j.spec, o.number, log))
                    }
                    (None, _) => {}
                }
                let record = o.stats.iolog_record.as_deref().cloned();
                log_files.extend(record.map(|(p, t)| (p, t.into_bytes())));
            }
            job_results[ji] = Some(job_result(j, groups[ji], pi, &workers));
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
        crate::steadystate::attach(&run.steady, &mut job_results);
        let mut phase = PhaseResult {
            jobs: members.clone(),
            window_ns: run.window_ns,
            cpu: run.cpu,
            disks: run.disks,
            profile: run.profile,
            decomposition: run.decomposition,
            hw_counters: run.hw_counters,
            checks: Vec::new(),
        };
        phase.checks = ssdready_core::checks::phase_checks(&phase);
        let disagree = phase.checks.iter().filter(|c| !c.agree);
        warnings.extend(disagree.map(|c| format!("phase {pi}: {}", c.describe())));
        phase_results.push(phase);
        if run.end_run && pi + 1 < phases.len() {
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
    let interrupted = stop.load(Relaxed);
    if phase_results.is_empty() && interrupted {
        return Err(Failure::Interrupted(
            "interrupted before the first phase started (nothing was measured)".into(),
        ));
    }
    let agg_files = agg.map(|a| a.files()).unwrap_or_default();
    log_files.extend(agg_files.into_iter().map(|(p, t)| (p, t.into_bytes())));
    for (path, text) in crate::logs::merge_shared(log_files) {
        if let Err(e) = crate::logs::write(&path, &text) {
            failure.get_or_insert(e);
        }
    }
    if emu_devices.len() > 1 {
        warnings.push(format!(
            "{} emulated devices were used; the emulator report covers the first",
            emu_devices.len()
        ));
    }
    let window: u64 = phase_results.iter().map(|p| p.window_ns).sum();
    // None when a worker that panicked poisoned the device's lock.
    let emulator = emu_devices.values().next().and_then(|d| {
        let dev = d.device.read().ok()?;
        Some(crate::devices::report(
            &dev,
            &d.totals(&dev),
            "real",
            std::mem::take(&mut emu_free),
            window,
        ))
    });
    Ok(RunResult {
        emulator,
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        tool: format!("ssdready {}", env!("CARGO_PKG_VERSION")),
        started_unix_ms,
        interrupted,
        failure,
        clock: ClockInfo {
            source: clock.source().into(),
            tsc_hz: clock.tsc_hz(),
            ns_per_timestamp: clock.cost_ns(),
        },
        platform,
        global_options: ssdready_core::options::global_options(&args.sections),
        jobs: job_results.into_iter().flatten().collect(),
        phases: phase_results,
        warnings,
    })
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
    r.strategy = crate::strategy::job_report(workers, &r.raw);
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
