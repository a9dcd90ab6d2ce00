//! The CPUs kept awake for a phase (`cpu_latency_us`, ssdready's option):
//! a PM QoS request on the CPUs' wake-up latency, held through the
//! kernel's `/dev/cpu_dma_latency` while the phase runs. An idle CPU then
//! uses no idle state slower than that to leave; at 0 it polls instead of
//! halting, so a completion's interrupt finds it running (Yang et al.,
//! "When Poll Is Better than Interrupt": the wake-up from idle is part of
//! what an interrupt costs at low depth).
//!
//! The kernel drops the request when the file is closed, by this process
//! or by its end, killed or not: nothing is left to put back. Refused,
//! before any I/O, where the file cannot be opened (it is root's).

use crate::prepared::PreparedJob;
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// The kernel's PM QoS file for the CPUs' wake-up latency.
pub const PM_QOS: &str = "/dev/cpu_dma_latency";

/// Why the CPUs could not be kept awake.
#[derive(Debug, thiserror::Error)]
pub enum AwakeError {
    #[error(
        "option 'cpu_latency_us': {PM_QOS} could not be opened to hold a PM QoS request \
         ({err}{why})"
    )]
    Open {
        err: std::io::Error,
        why: &'static str,
    },
    #[error("option 'cpu_latency_us': writing {us} µs to {PM_QOS}: {err}")]
    Write { us: u32, err: std::io::Error },
}

/// The request held: dropped, the kernel lets the CPUs sleep again.
#[derive(Debug)]
pub struct Held {
    _file: File,
}

/// Hold the least `cpu_latency_us` the phase's jobs ask, if any asks.
pub(crate) fn hold(jobs: &[PreparedJob], members: &[usize]) -> Result<Option<Held>, AwakeError> {
    let asked = members
        .iter()
        .filter_map(|&i| jobs[i].spec.sched.cpu_latency_us);
    match asked.min() {
        Some(us) => hold_at(Path::new(PM_QOS), us).map(Some),
        None => Ok(None),
    }
}

/// Hold `us` through the kernel's PM QoS file.
pub fn hold_us(us: u32) -> Result<Held, AwakeError> {
    hold_at(Path::new(PM_QOS), us)
}

/// Hold `us` through the PM QoS file at `path` (the kernel's takes the
/// value as 4 bytes in the machine's order).
pub fn hold_at(path: &Path, us: u32) -> Result<Held, AwakeError> {
    let mut file = File::options().write(true).open(path).map_err(|err| {
        let why = match err.kind() {
            std::io::ErrorKind::PermissionDenied => ": it is root's",
            std::io::ErrorKind::NotFound => ": this kernel has no PM QoS device",
            _ => "",
        };
        AwakeError::Open { err, why }
    })?;
    let value = i32::try_from(us).unwrap_or(i32::MAX).to_ne_bytes();
    file.write_all(&value)
        .map_err(|err| AwakeError::Write { us, err })?;
    Ok(Held { _file: file })
}

/// The CPUs' wake-up latency the kernel grants now, µs (reading the PM
/// QoS file gives the value in force), where it can be read (tests).
#[cfg(test)]
fn in_force(path: &Path) -> Option<i64> {
    let mut b = [0u8; 4];
    let n = std::io::Read::read(&mut File::open(path).ok()?, &mut b).ok()?;
    (n == 4).then(|| i64::from(i32::from_ne_bytes(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_held_is_in_force_until_it_is_dropped() {
        let path = Path::new(PM_QOS);
        let Some(before) = in_force(path) else {
            eprintln!("skipped: {PM_QOS} cannot be read here (not root, or no PM QoS)");
            return;
        };
        if before == 0 {
            eprintln!("skipped: another request already holds the CPUs at 0 µs");
            return;
        }
        let held = hold_at(path, 0).expect("held");
        assert_eq!(in_force(path), Some(0));
        drop(held);
        assert_eq!(in_force(path), Some(before));
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_said_with_the_option() {
        let e = hold_at(Path::new("/nonexistent/cpu_dma_latency"), 0).unwrap_err();
        let s = e.to_string();
        assert!(
            s.starts_with("option 'cpu_latency_us': /dev/cpu_dma_latency could not be opened"),
            "{s}"
        );
        assert!(s.contains("this kernel has no PM QoS device"), "{s}");
    }
}
