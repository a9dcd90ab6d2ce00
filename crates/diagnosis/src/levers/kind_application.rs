//! The application's own choice: the job's options (the engine, io_uring's
//! registered files, batching, SQPOLL, polled completions, threads,
//! larger depths and blocks, direct I/O, interrupt coalescing). Nothing of
//! the host changes: it needs no consent, is made by running the job with
//! its options and needs no undo; a user makes it last in the job.

use super::kind::{LeverKind, NotTried};
use super::lever::{Apply, Consent, Lever};
use crate::lever_context::{Candidate, Context, Point};
use crate::limit::Cause;
use ssdready_measured::group_limits::Lift;

/// The application kind's unit.
pub struct Application;

/// The application kind.
pub const APPLICATION: Application = Application;

impl LeverKind for Application {
    fn word(&self) -> &'static str {
        "application"
    }

    fn replaced(&self, l: &Lever, _cx: &Context, p: &Point) -> String {
        match &l.values {
            Some(v) => v.replaces(p),
            None => crate::lever_values::THE_JOB.into(),
        }
    }

    fn gate(&self, _cause: Cause, _c: &Consent) -> Result<(), NotTried> {
        Ok(())
    }

    fn change(&self, _l: &Lever, c: &Candidate, _lift: &Lift) -> Apply {
        Apply::Options(c.options.clone())
    }

    fn permanent(&self, _l: &Lever, _disks: &[String], _c: &Candidate, options: &str) -> String {
        format!("fio/ssdready job options: {options}")
    }

    fn order(&self, _attr: Option<&str>) -> u8 {
        3
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jobs_own_options_need_no_consent_and_change_nothing_of_the_host() {
        assert_eq!(APPLICATION.gate(Cause::Device, &Consent::default()), Ok(()));
        assert!(!APPLICATION.of_host());
        let c = Candidate {
            value: "io_uring".into(),
            options: vec![("ioengine".into(), "io_uring".into())],
        };
        let l = Lever::default();
        assert_eq!(
            APPLICATION.change(&l, &c, &Lift::all()),
            Apply::Options(c.options.clone())
        );
        assert_eq!(
            APPLICATION.permanent(&l, &[], &c, "--ioengine=io_uring"),
            "fio/ssdready job options: --ioengine=io_uring"
        );
    }
}
