//! A setting of the device's queue (`/sys/block/DEV/queue/ATTR`, the
//! row's `attr`), on the target's device and its stack's members: a
//! setting of the host, tried as root when asked (`--try-changes`), made
//! by writing the file and undone by writing back what it held, made to
//! last by a udev rule. What depends on one file is here and nowhere
//! else: a switch of the scheduler resets `nr_requests` (the scheduler
//! comes first), `nr_requests` binds only where more is in flight than
//! it admits, `max_sectors_kb` only where a request is larger than it,
//! read-ahead only on buffered sequential reads, writeback throttling
//! only on writes; `io_poll` says whether the device has poll queues.
//! A row with another `attr` is tried and put back as it is, through
//! that file alone.

use super::kind::{Lasting, LeverKind, NotTried};
use super::lever::{Apply, Consent, Lever};
use crate::lever_context::{Candidate, Context, Point, POLL};
use crate::limit::Cause;
use crate::trials::record::{Member, Reason};
use ssdready_measured::group_limits::Lift;
use ssdready_measured::limits::queue_files as file;

pub use crate::lever_context::{HW_MAX, NR_REQUESTS, READ_ALSO, SCHEDULER};

/// The udev rules of the queue settings: the file that makes this kind's
/// changes last.
pub const UDEV: &str = "99-ssdready.rules";

/// The queue settings the levers of `table` change: what the study's
/// hands may write (a row added to the table is tried with no other
/// change).
pub fn attrs(table: &[Lever]) -> Vec<String> {
    let queue = table.iter().filter(|l| l.ops().on_queue());
    queue.filter_map(|l| l.attr.clone()).collect()
}

/// The queue kind's unit.
pub struct Queue;

/// The queue kind.
pub const QUEUE: Queue = Queue;

impl LeverKind for Queue {
    fn word(&self) -> &'static str {
        "queue"
    }

    fn needs(&self) -> &'static [&'static str] {
        &["attr", "undo"]
    }

    fn on_queue(&self) -> bool {
        true
    }

    fn current(&self, l: &Lever, cx: &Context) -> Option<String> {
        let text = cx.queue.get(l.attr.as_deref()?)?;
        match &l.values {
            Some(v) => v.current(text),
            None => Some(text.trim().to_string()),
        }
    }

    fn replaced(&self, l: &Lever, cx: &Context, _p: &Point) -> String {
        self.current(l, cx).unwrap_or_default()
    }

    fn gate(&self, _cause: Cause, c: &Consent) -> Result<(), NotTried> {
        let no = |r: Reason, why: &str| Err((r, why.to_string()));
        match () {
            _ if !c.device => no(Reason::NoDevice, "the target has no device queue of its own"),
            _ if !c.root => no(Reason::NotRoot, "needs root (run the study as root to measure it)"),
            _ if c.made_by_study => no(
                Reason::Apparatus,
                "a setting of ssdready's own apparatus (the built-in drive behind the kernel), set up as a new drive of its model: study your own device to try it there",
            ),
            _ if !c.asked => no(
                Reason::NotAsked,
                "a setting of this host: run with --try-changes to measure it (it is put back after)",
            ),
            _ => match &c.queue_unavailable {
                Some(why) => Err((Reason::Unavailable, why.clone())),
                None => Ok(()),
            },
        }
    }

    fn offered(&self, l: &Lever, cx: &Context, place: &str) -> Result<(), NotTried> {
        match self.current(l, cx) {
            Some(_) => Ok(()),
            None => Err((
                Reason::NotOffered,
                format!(
                    "this kernel does not offer queue/{} {place}",
                    l.attr.as_deref().unwrap_or_default()
                ),
            )),
        }
    }

    fn cannot_bind(&self, l: &Lever, cx: &Context, p: &Point) -> Option<String> {
        let now = |attr: &str| cx.queue.get(attr)?.trim().parse::<u64>().ok();
        match l.attr.as_deref()? {
            NR_REQUESTS => {
                let n = now(NR_REQUESTS)?;
                let in_flight = u64::from(p.qd) * u64::from(p.threads.max(1));
                (in_flight <= n).then(|| {
                    format!(
                        "{} keeps {in_flight} I/Os in flight, no more than the {n} requests the queue admits: it cannot fill",
                        p.describe()
                    )
                })
            }
            file::MAX_SECTORS_KB => {
                let n = now(file::MAX_SECTORS_KB)?;
                (p.bs <= n << 10).then(|| {
                    format!(
                        "{} fit in one request of {n} KiB: nothing is split",
                        p.describe()
                    )
                })
            }
            file::READ_AHEAD_KB => (p.direct || p.rw != "read").then(|| {
                format!(
                    "read-ahead acts only on buffered sequential reads, not on {}",
                    p.describe()
                )
            }),
            _ => None,
        }
    }

    /// Writeback throttling holds back buffered writes and discards only:
    /// the kernel lets a direct write (`REQ_SYNC | REQ_IDLE`) pass it
    /// (`wbt_should_throttle`).
    fn idle_for_job(&self, l: &Lever, p: &Point) -> Option<String> {
        if l.attr.as_deref() != Some(file::WBT_LAT_USEC) {
            return None;
        }
        let trims = p.rw.contains("trim");
        let writes = p.rw.contains("write") || p.rw.ends_with("rw") || trims;
        match (writes, p.direct && !trims) {
            (false, _) => Some("writeback throttling acts only on writes, and the job writes none".into()),
            (true, true) => Some(format!(
                "writeback throttling holds back buffered writes and discards only, and {} writes directly: the kernel lets direct writes pass it",
                p.describe()
            )),
            _ => None,
        }
    }

    fn change(&self, l: &Lever, c: &Candidate, _lift: &Lift) -> Apply {
        Apply::Queue {
            attr: l.attr.clone().unwrap_or_default(),
            value: c.value.clone(),
        }
    }

    fn permanent(&self, l: &Lever, disks: &[String], c: &Candidate, _options: &str) -> String {
        let attr = l.attr.as_deref().unwrap_or_default();
        disks
            .iter()
            .map(|d| rule(d, attr, &c.value))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn order(&self, attr: Option<&str>) -> u8 {
        match attr == Some(SCHEDULER) {
            true => 0,
            false => 1,
        }
    }

    fn lasting(&self) -> Option<&'static str> {
        Some(UDEV)
    }

    /// The rule lines: per queue setting (the scheduler first), per device.
    fn lasting_text(&self, f: &Lasting) -> String {
        let (head, mut queue) = (f.head, f.members.clone());
        format!(
            "{head}# The device queue settings of this configuration. To apply them:\n\
             #   cp {UDEV} /etc/udev/rules.d/ && udevadm control --reload && udevadm trigger --action=change --subsystem-match=block\n{}",
            udev_lines(&mut queue)
        )
    }
}

/// The udev rule line that sets `queue/ATTR` of `disk` to `value`.
fn rule(disk: &str, attr: &str, value: &str) -> String {
    format!("ACTION==\"add|change\", KERNEL==\"{disk}\", ATTR{{queue/{attr}}}=\"{value}\"")
}

/// Whether the device has poll queues, as the study read `io_poll`.
pub fn polled(cx: &Context) -> bool {
    cx.queue.get(POLL).is_some_and(|v| v.trim() == "1")
}

/// The udev rule lines of a set's queue settings, in the order they are
/// made (the scheduler first, said so where others follow it), each on
/// each of its devices.
fn udev_lines(queue: &mut [&Member]) -> String {
    queue.sort_by_key(|m| QUEUE.order(m.attr.as_deref()));
    let mut s = String::new();
    if queue.len() > 1 && queue[0].attr.as_deref() == Some(SCHEDULER) {
        s.push_str("# The scheduler comes first: switching it resets nr_requests.\n");
    }
    for m in queue.iter() {
        let attr = m.attr.as_deref().unwrap_or_default();
        for d in &m.devices {
            s.push_str(&rule(d, attr, &m.value));
            s.push('\n');
        }
    }
    s
}

#[cfg(test)]
#[path = "kind_queue_tests.rs"]
mod tests;
