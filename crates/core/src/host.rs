//! What the machine has, as far as job options can ask for more: the CPUs
//! this process may run on, and the asynchronous-I/O requests the kernel
//! will still grant. The binary reads these (this crate makes no system
//! calls) and [`check`] compares a job against them, so that
//! `cpus_allowed=99` on a two-CPU machine is refused before anything runs
//! instead of being ignored by `sched_setaffinity`.

use crate::spec::{EngineKind, JobSpec, SpecError};

/// The machine's limits. `None` means unknown: nothing is checked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Host {
    /// CPUs that are online and in this process's affinity mask, sorted.
    pub cpus: Option<Vec<usize>>,
    /// libaio requests still available: `/proc/sys/fs/aio-max-nr` minus
    /// `/proc/sys/fs/aio-nr`.
    pub aio_requests: Option<u64>,
}

/// A CPU list written as ranges (`0-3,6`), or `none`.
pub fn cpu_ranges(cpus: &[usize]) -> String {
    match crate::units::fmt_cpu_list(cpus.iter().copied()) {
        none if none.is_empty() => "none".into(),
        list => list,
    }
}

/// Check the options of `spec` that name machine resources against `host`.
/// Errors name the option (the caller adds where it was written).
pub fn check(spec: &JobSpec, host: &Host) -> Result<(), SpecError> {
    let e = |opt: &str, msg: String| Err(SpecError::new(opt, msg).in_job(&spec.name));
    if let Some(online) = &host.cpus {
        let allowed = cpu_ranges(online);
        if let Some(list) = &spec.cpus_allowed {
            let missing: Vec<usize> = list
                .iter()
                .copied()
                .filter(|c| online.binary_search(c).is_err())
                .collect();
            if !missing.is_empty() {
                return e(
                    "cpus_allowed",
                    format!(
                        "{} {} {} not available to this process (allowed: CPUs {allowed})",
                        if missing.len() == 1 { "CPU" } else { "CPUs" },
                        cpu_ranges(&missing),
                        if missing.len() == 1 { "is" } else { "are" }
                    ),
                );
            }
        }
        if let Some(c) = spec.sqthread_poll_cpu {
            let c = usize::try_from(c).unwrap_or(usize::MAX);
            if online.binary_search(&c).is_err() {
                return e(
                    "sqthread_poll_cpu",
                    format!("CPU {c} is not available to this process (allowed: CPUs {allowed})"),
                );
            }
        }
    }
    if let (EngineKind::Libaio, Some(free)) = (spec.ioengine, host.aio_requests) {
        let need = u64::from(spec.iodepth) * u64::from(spec.numjobs);
        if need > free {
            return e(
                "iodepth",
                format!(
                    "iodepth {} × numjobs {} = {need} libaio requests, but the kernel grants {free} more \
                     (allowed: at most {free} in all; raise /proc/sys/fs/aio-max-nr)",
                    spec.iodepth, spec.numjobs
                ),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_cpus() -> Host {
        Host {
            cpus: Some(vec![0, 1]),
            aio_requests: Some(1000),
        }
    }

    #[test]
    fn ranges_are_compact() {
        assert_eq!(cpu_ranges(&[0, 1, 2, 3, 6, 8, 9]), "0-3,6,8-9");
        assert_eq!(cpu_ranges(&[5]), "5");
        assert_eq!(cpu_ranges(&[]), "none");
    }

    #[test]
    fn cpus_beyond_the_machine_are_refused_naming_the_online_set() {
        let mut s = JobSpec {
            cpus_allowed: Some(vec![1, 99]),
            ..JobSpec::default()
        };
        let err = check(&s, &two_cpus()).unwrap_err().to_string();
        assert!(err.contains("option 'cpus_allowed'"), "{err}");
        assert!(err.contains("CPU 99 is not available"), "{err}");
        assert!(err.contains("allowed: CPUs 0-1"), "{err}");
        s.cpus_allowed = Some(vec![0, 1]);
        assert!(check(&s, &two_cpus()).is_ok());
        assert!(check(&s, &Host::default()).is_ok(), "unknown: unchecked");
        s.sqthread_poll_cpu = Some(2);
        assert!(check(&s, &two_cpus()).is_err());
    }

    #[test]
    fn libaio_depth_beyond_aio_max_nr_is_refused() {
        let s = JobSpec {
            ioengine: EngineKind::Libaio,
            iodepth: 600,
            numjobs: 2,
            ..JobSpec::default()
        };
        let err = check(&s, &two_cpus()).unwrap_err().to_string();
        assert!(err.contains("1200 libaio requests"), "{err}");
    }
}
