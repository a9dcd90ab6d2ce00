//! A [`Config`] from the command line's text: times, sizes and memory
//! lists as the user typed them, each refused in one line naming the
//! option and what it allows; the exit code each [`Error`] means.

use crate::config::{Config, Workload};
use crate::error::Error;

impl Config {
    /// `--runtime`: a time such as 10s or 500ms.
    pub fn set_runtime(&mut self, text: &str) -> Result<(), Error> {
        self.runtime_ns =
            ssdready_core::units::parse_time_ns(text, 1_000_000_000).map_err(|e| {
                Error::BadInput(format!(
                    "option '--runtime': {e} (allowed: a time such as 10s)"
                ))
            })?;
        Ok(())
    }

    /// `--bs`: a size such as 4k.
    pub fn set_bs(&mut self, text: &str) -> Result<(), Error> {
        self.bs = ssdready_core::units::parse_size(text, 1024).map_err(|e| {
            Error::BadInput(format!("option '--bs': {e} (allowed: a size such as 4k)"))
        })?;
        Ok(())
    }

    /// `--memory`: sizes such as 64m, comma-separated.
    pub fn set_memory(&mut self, text: &str) -> Result<(), Error> {
        self.memory = text
            .split(',')
            .map(|x| {
                ssdready_core::units::parse_size(x.trim(), 1024).map_err(|e| {
                    Error::BadInput(format!(
                        "option '--memory': {e} (allowed: sizes such as 64m, comma-separated)"
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    /// The last step: whether the run is a cache-effect sweep (asked with
    /// `--cache-effect`, or implied by several memory limits, or by any
    /// limit for pgbench, whose server runs in the group), then [`Config::check`].
    pub fn settle(&mut self, cache_effect: bool) -> Result<(), Error> {
        self.cache_effect = cache_effect
            || self.memory.len() > 1
            || (self.workload == Workload::Pgbench && !self.memory.is_empty());
        self.check()
    }
}

impl Error {
    /// The exit code: 2 for bad input or something missing (nothing was
    /// written), 1 for a failure while running, 130 when interrupted.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::BadInput(_) | Error::Missing(_) => 2,
            Error::Runtime(_) => 1,
            Error::Interrupted => 130,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn config(w: Workload) -> Config {
        Config::new(w, PathBuf::from("/tmp"))
    }

    #[test]
    fn times_sizes_and_memory_lists_are_read_or_refused_naming_the_option() {
        let mut c = config(Workload::Sqlite);
        c.set_runtime("500ms").unwrap();
        assert_eq!(c.runtime_ns, 500_000_000);
        c.set_bs("8k").unwrap();
        assert_eq!(c.bs, 8192);
        c.set_memory("64m, 1g").unwrap();
        assert_eq!(c.memory, vec![64 << 20, 1 << 30]);
        let e = c.set_runtime("soon").unwrap_err();
        assert!(e.to_string().starts_with("option '--runtime': "), "{e}");
        assert_eq!(e.exit_code(), 2);
        let e = c.set_memory("64m,lots").unwrap_err();
        assert!(e.to_string().contains("allowed: sizes such as 64m"), "{e}");
        assert!(c
            .set_bs("big")
            .unwrap_err()
            .to_string()
            .starts_with("option '--bs': "));
    }

    #[test]
    fn several_limits_or_any_limit_for_pgbench_make_a_sweep() {
        let mut c = config(Workload::Sqlite);
        c.set_memory("64m").unwrap();
        c.settle(false).unwrap();
        assert!(!c.cache_effect, "one limit is one run for sqlite");
        c.set_memory("64m,128m").unwrap();
        c.settle(false).unwrap();
        assert!(c.cache_effect);
        let mut p = config(Workload::Pgbench);
        p.set_memory("256m").unwrap();
        p.settle(false).unwrap();
        assert!(p.cache_effect);
        let mut f = config(Workload::Fdatasync);
        f.set_memory("64m").unwrap();
        assert_eq!(f.settle(false).unwrap_err().exit_code(), 2);
    }

    #[test]
    fn each_error_has_its_exit_code() {
        assert_eq!(Error::Missing("pg_ctl".into()).exit_code(), 2);
        assert_eq!(Error::Runtime("disk full".into()).exit_code(), 1);
        assert_eq!(Error::Interrupted.exit_code(), 130);
    }
}
