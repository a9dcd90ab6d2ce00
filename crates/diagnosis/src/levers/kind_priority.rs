//! Priority and placement: the I/O's threads ahead of other work (a
//! higher priority) or each on a CPU of its own (pinning). Made, like the
//! application's own choices, by the job's options, recorded as such;
//! what it may buy is the time the I/O's threads waited for a CPU that
//! other work held.

use super::estimate::{self, Estimate};
use super::kind::{LeverKind, NotTried};
use super::kind_application::APPLICATION;
use super::lever::{Apply, Consent, Lever};
use crate::lever_context::{Candidate, Context, Point};
use crate::limit::Cause;
use ssdready_measured::group_limits::Lift;

/// The priority and placement kind's unit.
pub struct Priority;

/// The priority and placement kind.
pub const PRIORITY: Priority = Priority;

impl LeverKind for Priority {
    fn word(&self) -> &'static str {
        "priority"
    }

    fn replaced(&self, l: &Lever, cx: &Context, p: &Point) -> String {
        APPLICATION.replaced(l, cx, p)
    }

    fn gate(&self, cause: Cause, c: &Consent) -> Result<(), NotTried> {
        APPLICATION.gate(cause, c)
    }

    fn estimate(&self, l: &Lever, cx: &Context, p: &Point, c: &Candidate) -> Option<Estimate> {
        estimate::of_values(l, cx, p, c).or_else(|| estimate::waited(cx))
    }

    fn change(&self, l: &Lever, c: &Candidate, lift: &Lift) -> Apply {
        APPLICATION.change(l, c, lift)
    }

    fn permanent(&self, l: &Lever, disks: &[String], c: &Candidate, options: &str) -> String {
        APPLICATION.permanent(l, disks, c, options)
    }

    fn order(&self, attr: Option<&str>) -> u8 {
        APPLICATION.order(attr)
    }

    fn on_job_where_named(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priority_is_worth_the_cpu_wait_other_work_caused_and_changes_only_the_job() {
        let l = crate::levers::shipped()
            .into_iter()
            .find(|l| l.unit.ops().word() == "priority")
            .unwrap();
        let mut cx = Context {
            cpu_wait_pct: Some(50.0),
            ..Default::default()
        };
        let others = crate::facts::Fact::of(crate::facts::Value::Num(60.0), "count", Vec::new());
        cx.facts.insert("other_work_peak".into(), others);
        let c = Candidate::default();
        let e = PRIORITY.estimate(&l, &cx, &Point::default(), &c).unwrap();
        assert!((e.pct - 100.0).abs() < 0.1, "{e:?}");
        assert_eq!(APPLICATION.estimate(&l, &cx, &Point::default(), &c), None);
        assert!(!PRIORITY.of_host());
        assert_eq!(l.unit.kind(), crate::levers::Kind::Application);
    }
}
