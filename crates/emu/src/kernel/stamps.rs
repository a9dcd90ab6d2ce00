//! What the kernel drive's daemon knows of each I/O, kept apart from the
//! platform it serves: each request is stamped on arrival (its read from
//! the transport returned), at its modelled completion (the model's answer)
//! and when its reply starts and ends. So per I/O:
//!
//! * **device time** — modelled completion − arrival: what the SSD took;
//! * **lateness** — reply start − modelled completion: the emulator's own
//!   error (a thread woken late, a CPU busy elsewhere);
//!   It includes any *arrival hold*: a request a serving thread found only
//!   at its next completion's wake-up (it holds arrivals when that wake-up
//!   is near, rather than waking for each) reached the model late by up
//!   to the time since the thread's previous look at its ring, counted
//!   whole (an upper bound) and also reported apart;
//! * **reply** — the reply's system call, which on FUSE runs the kernel's
//!   completion of the request (and the loop driver's) in the daemon's
//!   thread: a platform cost paid by the daemon;
//! * **idle gap** — with nothing in flight, from a reply's end to the next
//!   arrival: at queue depth 1 the rest of the platform's round trip
//!   (completion to the application, its next submission, down to the
//!   daemon).
//!
//! Beside them, its serving threads' time on a CPU and their time ready
//! but waiting on a run queue (`/proc/self/task/TID/schedstat`): a daemon
//! kept waiting by other work is late for that reason.
//!
//! A run is *transport-bound* when the mean lateness exceeds
//! [`LATE_SHARE`] of the mean device time: the emulator then no longer
//! delivers its model's timing, and what a study measures is the daemon.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Lateness above this share of device time marks the run transport-bound.
pub const LATE_SHARE: f64 = 0.03;

/// Sums over the I/O the daemon served (atomics: every thread adds).
#[derive(Default)]
pub struct Stamps {
    pub reads: AtomicU64,
    pub writes: AtomicU64,
    pub flushes: AtomicU64,
    pub trims: AtomicU64,
    pub errors: AtomicU64,
    pub bytes: AtomicU64,
    pub device_ns: AtomicU64,
    pub late_ns: AtomicU64,
    pub late_max_ns: AtomicU64,
    /// Arrival holds (also counted in `late_ns`).
    pub hold_ns: AtomicU64,
    pub reply_ns: AtomicU64,
    pub gap_ns: AtomicU64,
    pub gaps: AtomicU64,
    /// Requests in flight in the daemon now.
    pub inflight: AtomicU64,
    /// When the last reply ended with nothing left in flight (ns).
    pub idle_since: AtomicU64,
    /// The daemon threads' kernel ids (for their CPU time).
    pub tids: Mutex<Vec<u32>>,
    /// Daemon threads running under SCHED_FIFO.
    pub realtime: AtomicU64,
    /// Requests that have arrived, all told.
    pub arrived: AtomicU64,
    /// Time the daemon threads spun for a completion due soon, ns (part of
    /// their CPU time, but not work: a thread that spins has time to spare).
    pub spin_ns: AtomicU64,
}

/// A snapshot of [`Stamps`], as written to the attachment's stats file.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
pub struct Summary {
    pub ios: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub trims: u64,
    pub errors: u64,
    pub bytes: u64,
    pub device_ns_mean: f64,
    pub late_ns_mean: f64,
    pub late_ns_max: u64,
    /// The arrival hold per I/O (an upper bound), part of the lateness.
    #[serde(default)]
    pub hold_ns_mean: f64,
    pub reply_ns_mean: f64,
    pub idle_gap_ns_mean: f64,
    pub idle_gaps: u64,
    /// The daemon threads' CPU time, ns, and per I/O.
    pub daemon_cpu_ns: u64,
    pub daemon_cpu_ns_per_io: f64,
    pub transport_bound: bool,
    /// The daemon's serving threads (0: not recorded, an older daemon).
    #[serde(default)]
    pub threads: u64,
    /// Of `daemon_cpu_ns`, the time spent spinning for a completion due
    /// soon, ns.
    #[serde(default)]
    pub spin_ns: u64,
    /// The daemon threads' time ready to run but waiting on a run queue,
    /// ns (absent: not read, an older daemon or no thread's schedstat).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_wait_ns: Option<u64>,
}

/// A thread's time on a CPU and its time waiting on a run queue, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sched {
    pub run_ns: u64,
    pub wait_ns: u64,
}

impl Sched {
    /// The first two fields of a `schedstat` file (`/proc/PID/schedstat`,
    /// `/proc/PID/task/TID/schedstat`): ns on a CPU, ns waiting on a run
    /// queue (the third, time slices run, is not needed). None for text
    /// that is not one.
    pub fn parse(text: &str) -> Option<Sched> {
        let mut f = text.split_whitespace().map(|w| w.parse::<u64>().ok());
        Some(Sched {
            run_ns: f.next()??,
            wait_ns: f.next()??,
        })
    }

    /// The change from `before` (a thread's counters only grow).
    pub fn since(&self, before: &Sched) -> Sched {
        Sched {
            run_ns: self.run_ns.saturating_sub(before.run_ns),
            wait_ns: self.wait_ns.saturating_sub(before.wait_ns),
        }
    }

    /// Of the time ready to run (on a CPU or waiting for one), the share
    /// spent waiting, percent (None with no ready time).
    pub fn wait_pct(&self) -> Option<f64> {
        wait_pct(self.run_ns as f64, self.wait_ns as f64)
    }
}

/// Of `run + wait`, the share `wait`, percent (None when both are 0).
pub fn wait_pct(run: f64, wait: f64) -> Option<f64> {
    (run + wait > 0.0).then(|| 100.0 * wait / (run + wait))
}

impl Stamps {
    /// One request of `op` answered, moving `bytes`.
    pub fn count(&self, op: crate::device::Op, bytes: u64) {
        use crate::device::Op;
        let c = match op {
            Op::Read => &self.reads,
            Op::Write => &self.writes,
            Op::Flush => &self.flushes,
            Op::Trim => &self.trims,
        };
        c.fetch_add(1, Relaxed);
        self.bytes.fetch_add(bytes, Relaxed);
    }

    /// A request arrived at `t`.
    pub fn arrive(&self, t: u64) {
        self.arrived.fetch_add(1, Relaxed);
        if self.inflight.fetch_add(1, Relaxed) == 0 {
            let idle = self.idle_since.swap(0, Relaxed);
            if idle != 0 && t > idle {
                self.gap_ns.fetch_add(t - idle, Relaxed);
                self.gaps.fetch_add(1, Relaxed);
            }
        }
    }

    /// A thread spun `ns` for a completion due soon.
    pub fn spun(&self, ns: u64) {
        self.spin_ns.fetch_add(ns, Relaxed);
    }

    /// A request reached the model up to `ns` after it arrived: it was held
    /// until the thread's next wake-up. Counted as lateness.
    pub fn hold(&self, ns: u64) {
        self.hold_ns.fetch_add(ns, Relaxed);
        self.late_ns.fetch_add(ns, Relaxed);
    }

    /// A request that arrived at `arrived` was modelled done at `due`, its
    /// reply ran from `start` to `end`; `None` for one without timing.
    pub fn served(&self, timing: Option<(u64, u64)>, start: u64, end: u64) {
        if let Some((arrived, due)) = timing {
            self.device_ns
                .fetch_add(due.saturating_sub(arrived), Relaxed);
            let late = start.saturating_sub(due);
            self.late_ns.fetch_add(late, Relaxed);
            self.late_max_ns.fetch_max(late, Relaxed);
            self.reply_ns.fetch_add(end.saturating_sub(start), Relaxed);
        }
        if self.inflight.fetch_sub(1, Relaxed) == 1 {
            self.idle_since.store(end.max(1), Relaxed);
        }
    }

    /// The daemon threads' CPU time and run-queue wait so far (from each
    /// thread's `/proc/self/task/TID/schedstat`), ns; None where no
    /// thread's could be read.
    pub fn daemon_sched(&self) -> Option<Sched> {
        let tids = self.tids.lock().map(|t| t.clone()).unwrap_or_default();
        tids.iter()
            .filter_map(|tid| {
                std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()
            })
            .filter_map(|s| Sched::parse(&s))
            .reduce(|a, b| Sched {
                run_ns: a.run_ns + b.run_ns,
                wait_ns: a.wait_ns + b.wait_ns,
            })
    }

    /// The summary so far.
    pub fn summary(&self) -> Summary {
        let g = |a: &AtomicU64| a.load(Relaxed);
        let (reads, writes) = (g(&self.reads), g(&self.writes));
        let (flushes, trims) = (g(&self.flushes), g(&self.trims));
        let timed = reads + writes + flushes + trims;
        let per = |v: u64, n: u64| if n == 0 { 0.0 } else { v as f64 / n as f64 };
        let device = per(g(&self.device_ns), timed);
        let late = per(g(&self.late_ns), timed);
        let sched = self.daemon_sched();
        let cpu = sched.map_or(0, |s| s.run_ns);
        Summary {
            ios: timed,
            reads,
            writes,
            flushes,
            trims,
            errors: g(&self.errors),
            bytes: g(&self.bytes),
            device_ns_mean: device,
            late_ns_mean: late,
            late_ns_max: g(&self.late_max_ns),
            hold_ns_mean: per(g(&self.hold_ns), timed),
            reply_ns_mean: per(g(&self.reply_ns), timed),
            idle_gap_ns_mean: per(g(&self.gap_ns), g(&self.gaps)),
            idle_gaps: g(&self.gaps),
            daemon_cpu_ns: cpu,
            daemon_cpu_ns_per_io: per(cpu, timed),
            transport_bound: timed > 0 && late > LATE_SHARE * device,
            threads: self.tids.lock().map_or(0, |t| t.len() as u64),
            spin_ns: g(&self.spin_ns),
            daemon_wait_ns: sched.map(|s| s.wait_ns),
        }
    }
}

impl Summary {
    /// The change from `before` to `self` (counts and means over the I/O
    /// between the two snapshots).
    pub fn since(&self, before: &Summary) -> Summary {
        let n = self.ios.saturating_sub(before.ios);
        let mean = |a: f64, an: u64, b: f64, bn: u64| {
            let (sa, sb) = (a * an as f64, b * bn as f64);
            if n == 0 {
                0.0
            } else {
                (sa - sb) / n as f64
            }
        };
        let gaps = self.idle_gaps.saturating_sub(before.idle_gaps);
        let cpu = self.daemon_cpu_ns.saturating_sub(before.daemon_cpu_ns);
        let device = mean(
            self.device_ns_mean,
            self.ios,
            before.device_ns_mean,
            before.ios,
        );
        let late = mean(self.late_ns_mean, self.ios, before.late_ns_mean, before.ios);
        Summary {
            ios: n,
            reads: self.reads.saturating_sub(before.reads),
            writes: self.writes.saturating_sub(before.writes),
            flushes: self.flushes.saturating_sub(before.flushes),
            trims: self.trims.saturating_sub(before.trims),
            errors: self.errors.saturating_sub(before.errors),
            bytes: self.bytes.saturating_sub(before.bytes),
            device_ns_mean: device,
            late_ns_mean: late,
            late_ns_max: self.late_ns_max,
            hold_ns_mean: mean(self.hold_ns_mean, self.ios, before.hold_ns_mean, before.ios),
            reply_ns_mean: mean(
                self.reply_ns_mean,
                self.ios,
                before.reply_ns_mean,
                before.ios,
            ),
            idle_gap_ns_mean: if gaps == 0 {
                0.0
            } else {
                (self.idle_gap_ns_mean * self.idle_gaps as f64
                    - before.idle_gap_ns_mean * before.idle_gaps as f64)
                    / gaps as f64
            },
            idle_gaps: gaps,
            daemon_cpu_ns: cpu,
            daemon_cpu_ns_per_io: if n == 0 { 0.0 } else { cpu as f64 / n as f64 },
            transport_bound: n > 0 && late > LATE_SHARE * device,
            threads: self.threads,
            spin_ns: self.spin_ns.saturating_sub(before.spin_ns),
            daemon_wait_ns: self
                .daemon_wait_ns
                .zip(before.daemon_wait_ns)
                .map(|(a, b)| a.saturating_sub(b)),
        }
    }

    /// Of the daemon threads' ready time (on a CPU or waiting for one),
    /// the share they waited on a run queue, percent (None unread).
    pub fn daemon_wait_pct(&self) -> Option<f64> {
        wait_pct(self.daemon_cpu_ns as f64, self.daemon_wait_ns? as f64)
    }

    /// One paragraph for people.
    pub fn text(&self) -> String {
        let us = |ns: f64| ns / 1000.0;
        format!(
            "{} I/Os ({} reads, {} writes, {} flushes, {} trims, {} errors); per I/O: device time {:.1} µs, \
             the emulator's lateness {:.1} µs (max {:.1}){}, reply {:.1} µs; idle gap (platform round trip \
             with nothing in flight) {:.1} µs over {} gaps; daemon threads' CPU {:.1} µs per I/O{}{}{}",
            self.ios,
            self.reads,
            self.writes,
            self.flushes,
            self.trims,
            self.errors,
            us(self.device_ns_mean),
            us(self.late_ns_mean),
            us(self.late_ns_max as f64),
            if self.hold_ns_mean > 0.0 {
                format!(" of which arrival hold at most {:.1} µs", us(self.hold_ns_mean))
            } else {
                String::new()
            },
            us(self.reply_ns_mean),
            us(self.idle_gap_ns_mean),
            self.idle_gaps,
            us(self.daemon_cpu_ns_per_io),
            match (self.spin_ns, self.ios) {
                (0, _) | (_, 0) => String::new(),
                (s, n) => format!(" (of which spinning for completions {:.1})", us(s as f64 / n as f64)),
            },
            match (self.daemon_wait_ns, self.daemon_wait_pct()) {
                (Some(w), Some(p)) if self.ios > 0 => format!(
                    ", waiting for a CPU {:.1} ({p:.0} % of their ready time)",
                    us(w as f64 / self.ios as f64)
                ),
                _ => String::new(),
            },
            if self.transport_bound {
                format!(
                    "; TRANSPORT-BOUND: lateness above {:.0} % of device time, the daemon did not keep the model's timing",
                    LATE_SHARE * 100.0
                )
            } else {
                String::new()
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_count_only_idle_time_and_lateness_marks_transport_bound() {
        let s = Stamps::default();
        s.arrive(1_000);
        s.served(Some((1_000, 101_000)), 102_000, 105_000);
        s.arrive(125_000); // idle 20 µs
        s.arrive(126_000); // a second in flight: no gap
        s.served(Some((125_000, 225_000)), 226_000, 227_000);
        s.served(Some((126_000, 226_000)), 240_000, 241_000);
        s.reads.store(3, Relaxed);
        let m = s.summary();
        assert_eq!(m.idle_gaps, 1);
        assert_eq!(m.idle_gap_ns_mean, 20_000.0);
        assert_eq!(m.device_ns_mean, 100_000.0);
        // Lateness (1 + 1 + 14 µs) / 3 = 5.3 µs > 3 % of 100 µs.
        assert!(m.transport_bound);
        let later = Summary {
            ios: 6,
            device_ns_mean: 100_000.0,
            late_ns_mean: 3_000.0,
            ..m.clone()
        };
        let d = later.since(&m);
        assert_eq!(d.ios, 3);
        assert!((d.late_ns_mean - (18_000.0 - 16_000.0) / 3.0).abs() < 1e-6);
        assert!(!d.transport_bound);
    }

    #[test]
    fn an_arrival_hold_counts_as_lateness_and_is_reported_apart() {
        let s = Stamps::default();
        s.arrive(10_000);
        s.hold(4_000);
        s.served(Some((10_000, 110_000)), 110_000, 111_000);
        s.reads.store(1, Relaxed);
        let m = s.summary();
        assert_eq!(m.hold_ns_mean, 4_000.0);
        assert_eq!(m.late_ns_mean, 4_000.0);
        // 4 µs of 100 µs device time: above 3 %.
        assert!(m.transport_bound);
        says(&m, "of which arrival hold at most 4.0 µs");
        let none = Summary {
            hold_ns_mean: 0.0,
            ..m.clone()
        };
        assert!(!none.text().contains("arrival hold"));
        let d = m.since(&Summary::default());
        assert_eq!(d.hold_ns_mean, 4_000.0);
    }

    /// `m`'s line says `what`.
    fn says(m: &Summary, what: &str) {
        assert!(m.text().contains(what), "{}", m.text());
    }

    #[test]
    fn spinning_is_counted_apart_and_said_per_io() {
        let s = Stamps::default();
        s.arrive(0);
        s.served(Some((0, 100_000)), 100_000, 101_000);
        s.reads.store(1, Relaxed);
        assert!(!s.summary().text().contains("spinning"));
        s.spun(3_000);
        s.spun(1_000);
        let m = s.summary();
        assert_eq!((m.spin_ns, s.arrived.load(Relaxed)), (4_000, 1));
        says(&m, "(of which spinning for completions 4.0)");
        let later = Summary {
            spin_ns: 10_000,
            ..m.clone()
        };
        assert_eq!(later.since(&m).spin_ns, 6_000);
    }

    #[test]
    fn schedstat_gives_run_and_wait_and_its_change_over_a_run() {
        let a = Sched::parse("1500 300 7\n").unwrap();
        assert_eq!((a.run_ns, a.wait_ns), (1_500, 300));
        let b = Sched::parse("4500 2300 9").unwrap();
        let d = b.since(&a);
        assert_eq!((d.run_ns, d.wait_ns), (3_000, 2_000));
        assert_eq!(d.wait_pct(), Some(40.0));
        assert_eq!(Sched::default().wait_pct(), None);
        // Counters never go back: a reading older than `before` is no wait.
        assert_eq!(a.since(&b), Sched::default());
        for bad in ["", "12", "x 3 4", "-1 2 3"] {
            assert_eq!(Sched::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_daemons_wait_is_its_threads_schedstat_and_its_change_per_run() {
        // This thread stands for a serving thread: the summary's wait lies
        // between the kernel's own readings taken before and after it.
        let tid = std::fs::read_link("/proc/thread-self")
            .ok()
            .and_then(|p| p.file_name()?.to_str()?.parse::<u32>().ok());
        let read = |tid: u32| {
            let t = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
            Sched::parse(&t)
        };
        let Some(before) = tid.and_then(read) else {
            eprintln!("skipped: no /proc/thread-self/schedstat on this kernel");
            return;
        };
        let s = Stamps::default();
        assert_eq!(s.summary().daemon_wait_ns, None, "no thread: not read");
        s.tids.lock().unwrap().push(tid.unwrap());
        let m = s.summary();
        let after = read(tid.unwrap()).unwrap();
        let w = m.daemon_wait_ns.unwrap();
        assert!((before.wait_ns..=after.wait_ns).contains(&w), "{w}");
        assert!((before.run_ns..=after.run_ns).contains(&m.daemon_cpu_ns));
        // Over a run: the change, said per I/O with its share.
        let later = Summary {
            ios: m.ios + 10,
            daemon_cpu_ns: m.daemon_cpu_ns + 60_000,
            daemon_wait_ns: Some(w + 40_000),
            ..m.clone()
        };
        let d = later.since(&m);
        assert_eq!((d.daemon_cpu_ns, d.daemon_wait_ns), (60_000, Some(40_000)));
        assert_eq!(d.daemon_wait_pct(), Some(40.0));
        says(&d, "waiting for a CPU 4.0 (40 % of their ready time)");
        // An older daemon's stats (no wait) load, and give no wait.
        let json = serde_json::to_string(&Summary::default()).unwrap();
        assert!(!json.contains("daemon_wait_ns"), "{json}");
        let old: Summary = serde_json::from_str(&json).unwrap();
        assert_eq!(later.since(&old).daemon_wait_ns, None);
        assert!(!old.text().contains("waiting for a CPU"));
    }
}
