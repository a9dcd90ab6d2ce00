//! Whether a strategy's I/O took interrupts: the device's own queue
//! interrupts over the run's measured window (the run's
//! `phases[].disks[].interrupts`, from /proc/interrupts), judged against
//! what ran. A polled I/O takes no interrupt (io_uring IOPOLL on an NVMe
//! poll queue: Intel's and Yang et al.'s polling papers); a result that
//! ran as `iopoll` while its device's queues took interrupts was not all
//! polled. Interrupt-driven results give theirs per I/O for comparison.

use super::FILL_JOB;
use crate::strategies::fmt_ratio;
use ssdready_core::result::RunResult;

/// Interrupts per I/O a polled result may take and still count as polled:
/// the controller's admin queue, and other I/O on the same controller's
/// vectors, can fire during the window.
pub const POLL_ALLOWANCE: f64 = 0.01;

/// The device's queue interrupts over a result's measured window.
#[derive(Clone, Debug, PartialEq)]
pub struct Interrupts {
    /// The devices counted (one for a strategy's run), as named in
    /// /sys/block.
    pub device: String,
    pub total: u64,
    /// Requests those devices completed in the window.
    pub ios: u64,
}

impl Interrupts {
    /// The interrupts of the measured phases' devices (not the fill a
    /// study's run on the emulator begins with); None where no device had
    /// queue vectors to count.
    pub fn of(r: &RunResult) -> Option<Interrupts> {
        let measured = |jobs: &[usize]| {
            jobs.iter()
                .any(|&j| r.jobs.get(j).is_some_and(|j| j.name != FILL_JOB))
        };
        let mut names: Vec<&str> = Vec::new();
        let (mut total, mut ios, mut any) = (0, 0, false);
        for p in r.phases.iter().filter(|p| measured(&p.jobs)) {
            for d in &p.disks {
                let Some(i) = &d.interrupts else { continue };
                any = true;
                total += i.total;
                ios += d.read_ios + d.write_ios + d.discard_ios;
                if !names.contains(&d.name.as_str()) {
                    names.push(&d.name);
                }
            }
        }
        any.then(|| Interrupts {
            device: names.join(", "),
            total,
            ios,
        })
    }

    /// Interrupts per request the device completed; None when it
    /// completed none.
    pub fn per_io(&self) -> Option<f64> {
        (self.ios > 0).then(|| self.total as f64 / self.ios as f64)
    }

    /// For a result that ran as `iopoll`: whether it took no more than
    /// [`POLL_ALLOWANCE`] interrupts per I/O (none at all when the device
    /// completed nothing). None for any other completion.
    pub fn polled(&self, ran: &str) -> Option<bool> {
        (ran == "iopoll").then_some(self.total <= (self.ios as f64 * POLL_ALLOWANCE) as u64)
    }

    fn per_io_text(&self) -> String {
        self.per_io()
            .map_or("? per I/O: the device completed none".into(), |x| {
                format!("{} per I/O", fmt_ratio(x))
            })
    }

    /// What the interrupts say about `strategy`'s result, which ran as
    /// `ran`, in one sentence.
    pub fn check(&self, strategy: &str, ran: &str) -> String {
        let (n, dev, per) = (self.total, &self.device, self.per_io_text());
        match self.polled(ran) {
            Some(true) if n == 0 => "no interrupt on its queues: polled".into(),
            Some(true) => format!(
                "{n} interrupts on {dev}'s queues ({per}), within the {} % allowed for its admin queue and other I/O: polled",
                POLL_ALLOWANCE * 100.0
            ),
            Some(false) => format!(
                "{strategy} ran as iopoll, but {dev}'s queues took {n} interrupts ({per}): not all I/O was polled"
            ),
            None => format!("{dev}'s queues took {n} interrupts ({per}), completions by {ran}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::result::{DeviceInterrupts, DiskResult, JobResult, PhaseResult};

    fn irqs(total: u64, ios: u64) -> Interrupts {
        Interrupts {
            device: "nvme0n1".into(),
            total,
            ios,
        }
    }

    #[test]
    fn an_iopoll_result_whose_queues_took_no_interrupt_is_polled() {
        let i = irqs(0, 40_000);
        assert_eq!(i.polled("iopoll"), Some(true));
        assert_eq!(
            i.check("sync+poll", "iopoll"),
            "no interrupt on its queues: polled"
        );
    }

    #[test]
    fn an_iopoll_result_whose_queues_took_interrupts_was_not_all_polled() {
        let i = irqs(20_000, 40_000);
        assert_eq!(i.polled("iopoll"), Some(false));
        assert_eq!(
            i.check("sync+poll", "iopoll"),
            "sync+poll ran as iopoll, but nvme0n1's queues took 20000 interrupts (0.50 per I/O): not all I/O was polled"
        );
    }

    #[test]
    fn a_few_admin_queue_interrupts_within_the_allowance_still_count_as_polled() {
        let i = irqs(400, 40_000);
        assert_eq!(i.polled("iopoll"), Some(true));
        assert!(i.check("sync+poll", "iopoll").ends_with(": polled"));
        assert_eq!(irqs(401, 40_000).polled("iopoll"), Some(false));
        assert_eq!(
            irqs(1, 0).polled("iopoll"),
            Some(false),
            "nothing completed, yet interrupts"
        );
    }

    #[test]
    fn an_interrupt_driven_result_gives_its_interrupts_per_io_without_a_verdict() {
        let i = irqs(39_000, 40_000);
        assert_eq!(i.polled("interrupt"), None);
        assert_eq!(
            i.check("async+intr", "interrupt"),
            "nvme0n1's queues took 39000 interrupts (0.97 per I/O), completions by interrupt"
        );
    }

    fn disk(name: &str, ios: u64, irq: Option<u64>) -> DiskResult {
        DiskResult {
            name: name.into(),
            read_ios: ios,
            interrupts: irq.map(|total| DeviceInterrupts {
                total,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_result_s_interrupts_come_from_its_measured_phases_devices_with_vectors() {
        let job = |name: &str| JobResult {
            name: name.into(),
            ..Default::default()
        };
        let phase = |jobs: Vec<usize>, disks| PhaseResult {
            jobs,
            disks,
            ..Default::default()
        };
        let r = RunResult {
            jobs: vec![job(FILL_JOB), job("measured")],
            phases: vec![
                phase(vec![0], vec![disk("nvme0n1", 500, Some(500))]),
                phase(
                    vec![1],
                    vec![disk("nvme0n1", 1000, Some(3)), disk("loop0", 50, None)],
                ),
            ],
            ..Default::default()
        };
        assert_eq!(Interrupts::of(&r), Some(irqs(3, 1000)));
        let none = RunResult {
            jobs: vec![job("measured")],
            phases: vec![phase(vec![0], vec![disk("loop0", 50, None)])],
            ..Default::default()
        };
        assert_eq!(
            Interrupts::of(&none),
            None,
            "a device without vectors has no count"
        );
    }
}
