//! A limit of the study's control groups (an I/O throttle, a CPU quota, a
//! cpuset, an io.latency target, an io.weight), lifted on its own: the
//! same runs from a control group of ssdready's own without it, the
//! user's groups unchanged. Tried as root, where the inventory shows its
//! limit set or the named cause is its own; never for a limit below the
//! host; undone by moving ssdready's process back. Where it binds is the
//! limit's own (`crate::binding`), and how a user lifts it for good is a
//! systemd property or a cgroupfs write (`crate::permanent`, the drop-in
//! of `crate::combination_files`).

use super::kind::{LeverKind, NotTried};
use super::{Apply, Candidate, Context, Lever, Point};
use crate::limit::Cause;
use crate::trials::Reason;
use crate::trials_plan::Consent;
use ssdready_measured::group_limits::Lift;

/// The cgroup kind's unit.
pub struct Cgroup;

/// The cgroup kind.
pub const CGROUP: Cgroup = Cgroup;

impl LeverKind for Cgroup {
    fn word(&self) -> &'static str {
        "cgroup"
    }

    fn needs(&self) -> &'static [&'static str] {
        &["undo"]
    }

    fn lifts_group(&self) -> bool {
        true
    }

    fn replaced(&self, _l: &Lever, _cx: &Context, _p: &Point) -> String {
        "in the study's group".into()
    }

    fn gate(&self, cause: Cause, c: &Consent) -> Result<(), NotTried> {
        match () {
            _ if !c.root => Err((
                Reason::NotRoot,
                "needs root (run the study as root to measure it)".into(),
            )),
            _ if cause == Cause::BelowHost => Err((
                Reason::BelowHost,
                "a limit below this host: no group of this host moves it".into(),
            )),
            _ => match &c.escape_unavailable {
                Some(why) => Err((Reason::Unavailable, why.clone())),
                None => Ok(()),
            },
        }
    }

    fn cannot_bind(&self, l: &Lever, cx: &Context, p: &Point) -> Option<String> {
        let g = l.lift()?;
        let inv = cx.limits.as_ref()?;
        match crate::binding::hidden_by(l, cx, p) {
            Some(_) => None,
            None => crate::binding::group_cannot_bind(g, inv, p),
        }
    }

    fn change(&self, _l: &Lever, _c: &Candidate, lift: &Lift) -> Apply {
        Apply::Escape(lift.clone())
    }

    fn permanent(&self, _l: &Lever, _disks: &[String], _c: &Candidate, _options: &str) -> String {
        String::new()
    }

    fn order(&self, _attr: Option<&str>) -> u8 {
        2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_limit_needs_root_and_a_limit_of_this_host_and_a_way_out() {
        let root = Consent {
            root: true,
            ..Default::default()
        };
        assert_eq!(CGROUP.gate(Cause::Device, &root), Ok(()));
        let r = |c: &Consent, cause| CGROUP.gate(cause, c).unwrap_err().0;
        assert_eq!(r(&Consent::default(), Cause::Device), Reason::NotRoot);
        assert_eq!(r(&root, Cause::BelowHost), Reason::BelowHost);
        let stuck = Consent {
            escape_unavailable: Some("no cgroup v2".into()),
            ..root
        };
        assert_eq!(r(&stuck, Cause::Device), Reason::Unavailable);
    }

    #[test]
    fn a_group_limit_is_lifted_by_moving_out_and_changes_no_file() {
        let l = crate::levers::shipped()
            .into_iter()
            .find(|l| l.lift().is_some())
            .unwrap();
        let c = Candidate::default();
        let lift = l.lifted(None);
        assert_eq!(CGROUP.change(&l, &c, &lift), Apply::Escape(lift));
        assert!(CGROUP.of_host() && !CGROUP.on_queue());
        assert!(CGROUP.order(None) > super::super::kind_queue::QUEUE.order(Some("nomerges")));
    }
}
