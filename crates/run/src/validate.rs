//! The one validation path of `run`, `emu simulate` and `--parse-only`:
//! the option table and the job checks (in core), the machine's limits
//! (CPUs, AIO requests), and every emulator target (`emu:…`), whose
//! parameters only the emulator crate can read. Also the checks on real
//! targets that need the operating system: a device that does not exist,
//! a target this process may not open, a file system without room; these
//! are bad input (exit code 2), found before anything is written.

use crate::failure::{bad, environmental, Failure};
use crate::request::RunRequest;
use crate::sys::host;
use nix::errno::Errno;
use ssdready_core::host::Host;
use ssdready_core::options::build_jobs_on;
use ssdready_core::spec::{EngineKind, JobSpec};
use ssdready_io::target::{Target, TargetError, TargetNeeds};
use std::path::Path;

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

/// A target error as a failure: the request's fault (exit code 2) unless
/// the operating system failed in a way that is not about the request.
pub fn target_failure(job: &str, e: TargetError) -> Failure {
    match &e {
        TargetError::Io { source, .. } if !environmental(source) => {
            Failure::Runtime(format!("job '{job}': {e}"))
        }
        _ => bad(format!("job '{job}': {e}")),
    }
}

/// A dev-dax job's target: a device-DAX character device. A missing one is
/// a bad request too (exit code 2): the job names a device this machine
/// does not have, and the message says what it has.
pub fn dax_target(job: &str, name: &str, needs: TargetNeeds) -> Result<Target, Failure> {
    use ssdready_io::engines::devdax::{resolve, DaxError};
    resolve(Path::new(name), needs).map_err(|e| match e {
        // A device that does not exist is a target the job names wrongly.
        DaxError::Absent(m) => Failure::BadInput(format!("job '{job}': {m}")),
        DaxError::WrongKind(m) => bad(format!("job '{job}': {m}")),
        DaxError::Target(e) => target_failure(job, e),
    })
}

/// Before a dev-dax job's files are sized: it names its devices, and each
/// is one (the full check, writes included, is [`dax_target`]'s).
pub fn dax_names(spec: &JobSpec, allow_destructive: bool) -> Result<(), Failure> {
    if spec.filename.is_empty() {
        return Err(bad(format!(
            "job '{}': ioengine=dev-dax needs filename=/dev/daxX.Y (a device-DAX character device)",
            spec.name
        )));
    }
    let needs = TargetNeeds {
        bytes: None,
        offset: 0,
        modifies: false,
        allow_destructive,
        allow_mounted_write: false,
    };
    for name in &spec.filename {
        dax_target(&spec.name, name, needs)?;
    }
    Ok(())
}

/// Before resolving `name`: a missing path in the /dev file system (not
/// /dev/shm, a file system of its own) names a device that is not there; it
/// must not become a regular file in /dev.
pub fn check_device_exists(job: &str, name: &str) -> Result<(), Failure> {
    use std::os::unix::fs::MetadataExt;
    let p = Path::new(name);
    if std::fs::symlink_metadata(p).is_ok() {
        return Ok(());
    }
    let dev_fs = |d: &Path| std::fs::metadata(d).map(|m| m.dev()).ok();
    if p.is_absolute()
        && dev_fs(parent_of(p)).is_some()
        && dev_fs(parent_of(p)) == dev_fs(Path::new("/dev"))
    {
        return Err(bad(format!(
            "job '{job}': option 'filename': {name} does not exist (no such device; lsblk lists the block devices)"
        )));
    }
    Ok(())
}

/// After resolving: can this process open the target as the job will (for
/// writing when it modifies, with O_DIRECT when direct=1), or, for a file
/// still to be created, write into its directory. (Whether the file system
/// has room for the layout is layout.rs's check, counting every file on it.)
pub fn check_access(job: &str, t: &Target, modifies: bool, direct: bool) -> Result<(), Failure> {
    let shown = t.path.display();
    let why = |what: &str, e: std::io::Error| {
        bad(format!(
            "job '{job}': cannot {what} {shown}: {e}{}",
            match e.raw_os_error().map(Errno::from_raw) {
                Some(Errno::EINVAL) if direct => " (O_DIRECT is not supported there; use direct=0)",
                Some(Errno::EACCES | Errno::EPERM) => " (check its permissions, or run as root)",
                Some(Errno::EROFS) => " (the file system is read-only)",
                _ => "",
            }
        ))
    };
    if t.path.exists() {
        let what = if modifies {
            "open for writing"
        } else {
            "open for reading"
        };
        return match t.open(modifies, direct) {
            Ok(_) => Ok(()),
            Err(e) if environmental(&e) => Err(why(what, e)),
            Err(e) => Err(Failure::Runtime(format!(
                "job '{job}': opening {shown}: {e}"
            ))),
        };
    }
    let dir = parent_of(&t.path);
    let mode = nix::unistd::AccessFlags::W_OK | nix::unistd::AccessFlags::X_OK;
    if let Err(e) = nix::unistd::access(dir, mode) {
        return Err(why("create", std::io::Error::from_raw_os_error(e as i32)));
    }
    Ok(())
}

fn parent_of(p: &Path) -> &Path {
    p.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permission_and_missing_paths_are_environmental() {
        for code in [
            libc_code(Errno::EACCES),
            libc_code(Errno::ENOENT),
            libc_code(Errno::EROFS),
        ] {
            assert!(environmental(&std::io::Error::from_raw_os_error(code)));
        }
        assert!(!environmental(&std::io::Error::from_raw_os_error(
            libc_code(Errno::EIO)
        )));
        assert!(!environmental(&std::io::Error::other("x")));
    }

    fn libc_code(e: Errno) -> i32 {
        e as i32
    }

    #[test]
    fn the_machine_has_some_cpus() {
        let h = host();
        let cpus = h.cpus.expect("online CPUs are readable");
        assert!(!cpus.is_empty());
        assert!(cpus.windows(2).all(|w| w[0] < w[1]), "sorted: {cpus:?}");
    }
}
