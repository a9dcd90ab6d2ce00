//! The one validation path of `run`, `emu simulate` and `--parse-only`:
//! the option table and the job checks (in core), the machine's limits
//! (CPUs, AIO requests), and every emulator target (`emu:…`), whose
//! parameters only the emulator crate can read. The checks on real targets
//! that need the operating system are [`crate::target_checks`]'s.

use crate::failure::{bad, Failure};
use crate::request::RunRequest;
use crate::sys::host;
use ssdready_core::host::Host;
use ssdready_core::options::build_jobs_on;
use ssdready_core::spec::{EngineKind, JobSpec};
use std::path::Path;

pub use crate::target_checks::{check_device_exists, target_failure};

/// Build and check every job of `args`, emulator targets included, without
/// running or writing anything.
pub fn jobs(args: &RunRequest) -> Result<Vec<JobSpec>, Failure> {
    // fio parses a CPU list this machine lacks and fails when the job
    // starts: --parse-only accepts it; a run refuses it before anything runs.
    let host = match args.parse_only {
        true => Host {
            cpus: None,
            ..host()
        },
        false => host(),
    };
    let mut specs = build_jobs_on(&args.sections, &host).map_err(bad)?;
    let merged = crate::replay::prepare(&mut specs).map_err(|e| {
        // A stop request while waiting on a trace's FIFO is an interruption.
        if crate::stop::flag().load(std::sync::atomic::Ordering::Relaxed) {
            Failure::Interrupted(e.to_string())
        } else {
            bad(e)
        }
    })?;
    check_emulator_targets(&specs)?;
    let (_, groups) = crate::phases::phases_and_groups(&specs);
    crate::steadystate::check_groups(&specs, &groups).map_err(bad)?;
    check_wait_for(&specs).map_err(bad)?;
    // fio-format logs are written when the run ends: every file must be
    // writable now, not after the measurement.
    crate::logs::check_all(&specs, args.log_sink.is_none()).map_err(bad)?;
    if let Some(prefix) = &args.bandwidth_log {
        for p in crate::agglog::AggBwLog::paths(prefix) {
            crate::output::check(Path::new(&p), "option '--bandwidth-log'").map_err(bad)?;
        }
    }
    if !args.parse_only {
        crate::replay::write_pending(&merged).map_err(bad)?;
    }
    Ok(specs)
}

/// A `wait_for` that names no single earlier job; `why` says which way.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("job '{job}': option 'wait_for={waitee}': {why} (allowed: the name of one earlier job)")]
pub struct WaitForError {
    pub job: String,
    pub waitee: String,
    pub why: &'static str,
}

/// `wait_for` names one earlier job, as fio's init.c checks it (a job
/// cannot wait for itself, for a later or unknown job, or for a name two
/// jobs have).
fn check_wait_for(specs: &[JobSpec]) -> Result<(), WaitForError> {
    for (i, s) in specs.iter().enumerate() {
        let Some(waitee) = &s.wait_for else { continue };
        let why = if *waitee == s.name {
            Some("a job cannot wait for itself")
        } else {
            match specs[..i].iter().filter(|o| o.name == *waitee).count() {
                0 => Some("no earlier job has that name"),
                1 => None,
                _ => Some("more than one earlier job has that name"),
            }
        };
        if let Some(why) = why {
            return Err(WaitForError {
                job: s.name.clone(),
                waitee: waitee.clone(),
                why,
            });
        }
    }
    Ok(())
}

/// Refuse, before anything is written, a job that asks for what ssdready
/// parses but cannot run (an engine, a zoned mode, …): one line, naming the
/// job and what it asked for (exit code 2).
pub fn refuse_unrunnable(specs: &[JobSpec]) -> Result<(), Failure> {
    match specs.iter().flat_map(JobSpec::refusals).next() {
        Some(why) => Err(bad(why)),
        None => Ok(()),
    }
}

/// `--parse-only`'s [`refuse_unrunnable`]: a job whose engine needs a
/// library this build lacks (`rbd`, SPDK's plug-in by path, …) parses, as
/// the file does in a fio built with the library; what a run would refuse
/// is printed as a note. Anything else a run refuses is refused here too.
pub fn refuse_unrunnable_at_parse(specs: &[JobSpec]) -> Result<(), Failure> {
    for s in specs {
        let library = s
            .engine_named
            .as_deref()
            .filter(|e| ssdready_core::option_table_library::needs(e).is_some());
        for why in s.refusals() {
            match library {
                Some(e) if why.contains(&format!("ioengine={e}: needs ")) => {
                    eprintln!("ssdready: note: a run refuses this: {why}")
                }
                _ => return Err(bad(why)),
            }
        }
    }
    Ok(())
}

/// Parse every `emu:…` target and check each emulator job's region against
/// the device it gets, exactly as a run would make it.
fn check_emulator_targets(specs: &[JobSpec]) -> Result<(), Failure> {
    let mut emu: Vec<JobSpec> = specs.iter().filter(|s| s.on_emulator()).cloned().collect();
    crate::emulated::assign_emulator(&mut emu);
    let params = crate::emulated::params_for(&emu).map_err(bad)?;
    for s in emu.iter().filter(|s| s.ioengine == EngineKind::Emu) {
        let Some(p) = params.get(&s.filename[0]) else {
            continue;
        };
        let capacity = p.logical_pages() * u64::from(p.page_bytes);
        let r = crate::virtual_time::region(s, capacity)
            .map_err(|e| bad(format!("job '{}': {e}", s.name)))?;
        if u64::from(s.bs.max()) > r.len {
            return Err(bad(format!(
                "job '{}': option 'bs': block size {} is larger than the {} bytes the job covers",
                s.name,
                s.bs.max(),
                r.len
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_has_some_cpus() {
        let h = host();
        let cpus = h.cpus.expect("online CPUs are readable");
        assert!(!cpus.is_empty());
        assert!(cpus.windows(2).all(|w| w[0] < w[1]), "sorted: {cpus:?}");
    }
}
