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

    /// A lever of the threads' nice value, not where every other work
    /// beside the I/O ran in another scheduling group: a nice value weighs
    /// only within the I/O's own group (beside two busy loops in sessions
    /// of their own, fio's job at nice −10 gave 0.80, 1.20 and 0.96 of the
    /// job as written).
    fn offered(&self, l: &Lever, cx: &Context, _place: &str) -> Result<(), NotTried> {
        // The table's values (`options nice=-10`) set the threads' nice.
        let sets_nice = || {
            l.values
                .as_ref()
                .is_some_and(|v| v.text().split_whitespace().any(|w| w.starts_with("nice=")))
        };
        match cx.others_apart && sets_nice() {
            true => Err((
                crate::trials::record::Reason::CannotBind,
                "the other work beside the I/O ran in another scheduling group (another CPU cgroup, or another session's autogroup): a nice value weighs only within the I/O's own group, so raising its threads buys nothing against it; what weighs between groups is theirs (cpu.weight, or an autogroup's nice), and the kernel's own threads on the I/O's path compete with it at the root".into(),
            )),
            false => Ok(()),
        }
    }
}

/// Whether every busy thread of other processes in `records`
/// ([`ssdready_measured::summary::busy_other`] in some run) ran in another scheduling group than the
/// study's ([`ssdready_core::result::ThreadUse::apart`]); false where
/// none was busy.
pub fn others_apart(records: &[ssdready_measured::record::RunRecord]) -> bool {
    let busy: Vec<bool> = records
        .iter()
        .filter_map(|r| r.summary.cpu.as_ref())
        .flat_map(|c| &c.busiest_threads)
        .filter(|t| ssdready_measured::summary::busy_other(t))
        .map(|t| t.apart)
        .collect();
    !busy.is_empty() && busy.iter().all(|a| *a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_measured::record::RunRecord;

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

    fn busy(apart: bool, kernel: bool) -> ssdready_core::result::ThreadUse {
        ssdready_core::result::ThreadUse {
            name: "sh".into(),
            cpus: 0.5,
            apart,
            kernel,
            ..Default::default()
        }
    }

    fn records(threads: Vec<ssdready_core::result::ThreadUse>) -> Vec<RunRecord> {
        let mut r = RunRecord::default();
        r.summary.cpu = Some(ssdready_measured::summary::CpuSummary {
            busiest_threads: threads,
            ..Default::default()
        });
        vec![r]
    }

    #[test]
    fn a_nice_value_is_not_offered_against_work_in_another_scheduling_group() {
        // Every busy other thread apart (kernel threads are not others'):
        // the threads' nice value cannot reach it; pinning still can be
        // tried. Work in the I/O's own group, or none busy: offered.
        assert!(others_apart(&records(vec![
            busy(true, false),
            busy(false, true)
        ])));
        assert!(!others_apart(&records(vec![
            busy(true, false),
            busy(false, false)
        ])));
        assert!(!others_apart(&records(vec![])));
        let lever = |id: &str| {
            crate::levers::shipped()
                .into_iter()
                .find(|l| l.id == id)
                .unwrap()
        };
        let apart = Context {
            others_apart: true,
            cpu_list: "0-1".into(),
            ..Default::default()
        };
        let (r, why) = PRIORITY
            .offered(&lever("priority"), &apart, "here")
            .unwrap_err();
        assert_eq!(r, crate::trials::Reason::CannotBind);
        assert!(why.contains("another scheduling group"), "{why}");
        assert!(PRIORITY.offered(&lever("pinning"), &apart, "here").is_ok());
        let inside = Context {
            others_apart: false,
            ..apart
        };
        assert!(PRIORITY
            .offered(&lever("priority"), &inside, "here")
            .is_ok());
    }
}
