//! Every thread's scheduler figures over a window: its run time and the
//! time it waited on a run queue for a CPU (`/proc/*/task/*/schedstat`, the
//! kernel's `sum_exec_runtime` and `run_delay`, `CONFIG_SCHED_INFO`), and
//! whether it is a kernel thread (`PF_KTHREAD` in `/proc/PID/stat`'s
//! flags). A run's CPU is then split three ways: ssdready's own (getrusage,
//! exact), the kernel's threads (on a quiet machine, the loop device's
//! worker and the other work done for ssdready's I/O), and other
//! processes'. The waits say whether the I/O's threads were kept from a CPU:
//! busy CPUs alone do not, as work of a lower priority fills every idle
//! moment without delaying anyone.

use ssdready_core::result::{KernelWork, ThreadUse};
use std::collections::HashMap;

/// `PF_KTHREAD` (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;
/// How many of the busiest threads a window keeps.
pub const BUSIEST: usize = 4;
/// How many kernel threads that ran in a window are named by their work
/// (the busiest), and how many kinds of work a window keeps.
pub const KERNEL_NAMED: usize = 256;
pub const KERNEL_WORKS: usize = 24;

/// One thread's scheduler figures at one moment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadTime {
    /// The process it belongs to.
    pub pid: u32,
    pub run_ns: u64,
    pub wait_ns: u64,
    pub kernel: bool,
    /// A kernel thread's name as read with its figures (`/proc/PID/stat`:
    /// a work-queue worker's then shows the work it ran last).
    pub comm: Option<String>,
}

/// Work a worker takes up as ssdready's own rings close (the window's
/// end) or from an earlier window's: it says nothing of what the worker
/// did in the window.
const TEARDOWN_WORK: [&str; 2] = ["iou_exit", "kworker"];

/// Every live thread of other processes, by thread id.
pub type ThreadTimes = HashMap<u32, ThreadTime>;

/// `run_ns wait_ns timeslices` of a schedstat text.
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut it = text.split_whitespace();
    let run = it.next()?.parse().ok()?;
    let wait = it.next()?.parse().ok()?;
    Some((run, wait))
}

/// Whether a `/proc/PID/stat` text is a kernel thread's (its flags, the
/// ninth field, counted after the name in parentheses, which may hold
/// spaces and parentheses of its own).
pub fn is_kernel_thread(stat: &str) -> Option<bool> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let flags: u64 = rest.split_whitespace().nth(6)?.parse().ok()?;
    Some(flags & PF_KTHREAD != 0)
}

/// The name in a `/proc/PID/stat` text (between the first `(` and the
/// last `)`).
pub fn stat_comm(stat: &str) -> Option<&str> {
    stat.get(stat.find('(')? + 1..stat.rfind(')')?)
}

/// The calling thread's run-queue wait so far, ns.
pub fn own_wait_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    parse_schedstat(&text).map(|x| x.1)
}

/// Every live thread of other processes now. None when /proc has no
/// schedstat files.
pub fn thread_times() -> Option<ThreadTimes> {
    let mut out = HashMap::new();
    let me = std::process::id();
    for p in std::fs::read_dir("/proc").ok()?.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if pid == me {
            continue;
        }
        let stat = std::fs::read_to_string(p.path().join("stat")).ok();
        let kernel = stat.as_deref().and_then(is_kernel_thread).unwrap_or(false);
        // A kernel thread is a process of its own: its stat is its thread's.
        let comm = stat
            .as_deref()
            .filter(|_| kernel)
            .and_then(stat_comm)
            .map(str::to_string);
        let Ok(tasks) = std::fs::read_dir(p.path().join("task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let Some(tid) = t.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            let Some((run_ns, wait_ns)) = std::fs::read_to_string(t.path().join("schedstat"))
                .ok()
                .and_then(|s| parse_schedstat(&s))
            else {
                continue;
            };
            out.insert(
                tid,
                ThreadTime {
                    pid,
                    run_ns,
                    wait_ns,
                    kernel,
                    comm: comm.clone(),
                },
            );
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Other threads' time over a window, split between the kernel's threads
/// and other processes'.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Split {
    /// Every other thread's run time, ns.
    pub all_ns: u64,
    pub kernel_ns: u64,
    pub kernel_wait_ns: u64,
    pub other_ns: u64,
    /// Threads alive at the end.
    pub seen: u64,
    /// The busiest threads: (tid, its figures' change), busiest first.
    pub busiest: Vec<(u32, ThreadTime)>,
    /// The kernel's threads that ran: (tid, its figures' change), busiest
    /// first, at most [`KERNEL_NAMED`].
    pub kernel: Vec<(u32, ThreadTime)>,
}

/// The change between two readings: of the threads alive at both ends,
/// their change; of those born in the window, all of their time.
pub fn split(a: &ThreadTimes, b: &ThreadTimes) -> Split {
    let mut s = Split {
        seen: b.len() as u64,
        ..Default::default()
    };
    let mut all: Vec<(u32, ThreadTime)> = Vec::with_capacity(b.len());
    for (&tid, t) in b {
        let before = a.get(&tid).filter(|x| x.pid == t.pid);
        let d = ThreadTime {
            run_ns: t.run_ns.saturating_sub(before.map_or(0, |x| x.run_ns)),
            wait_ns: t.wait_ns.saturating_sub(before.map_or(0, |x| x.wait_ns)),
            comm: window_comm(before.and_then(|x| x.comm.as_deref()), t.comm.as_deref()),
            pid: t.pid,
            kernel: t.kernel,
        };
        s.all_ns += d.run_ns;
        if d.kernel {
            s.kernel_ns += d.run_ns;
            s.kernel_wait_ns += d.wait_ns;
            if d.run_ns > 0 {
                s.kernel.push((tid, d.clone()));
            }
        } else {
            s.other_ns += d.run_ns;
        }
        if d.run_ns > 0 {
            all.push((tid, d.clone()));
        }
    }
    let busiest_first = |x: &(u32, ThreadTime), y: &(u32, ThreadTime)| {
        y.1.run_ns.cmp(&x.1.run_ns).then(x.0.cmp(&y.0))
    };
    all.sort_by(busiest_first);
    all.truncate(BUSIEST);
    s.busiest = all;
    s.kernel.sort_by(busiest_first);
    s.kernel.truncate(KERNEL_NAMED);
    s
}

/// The work a kernel thread named `comm` does: a work-queue worker's
/// queue, run now (`+`) or last (`-`), else `kworker`; another thread's own
/// name less a trailing `/CPU` (`ksoftirqd/1` is `ksoftirqd`; `kdmflush/253:0`
/// keeps its device).
pub fn work_of(comm: &str) -> &str {
    if let Some(rest) = comm.strip_prefix("kworker/") {
        return match rest.find(['+', '-']) {
            Some(i) if i + 1 < rest.len() => &rest[i + 1..],
            _ => "kworker",
        };
    }
    match comm.rsplit_once('/') {
        Some((name, cpu)) if !cpu.is_empty() && cpu.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => comm,
    }
}

/// Kernel threads' CPU grouped by work ([`work_of`]), busiest first.
/// `named`: each thread's name (None: it is gone) with its figures.
pub fn group_work(named: &[(Option<String>, ThreadTime)], window_ns: f64) -> Vec<KernelWork> {
    if window_ns <= 0.0 {
        return Vec::new();
    }
    let mut by: Vec<KernelWork> = Vec::new();
    for (name, t) in named {
        let work = name.as_deref().map_or("(exited)", work_of);
        let cpus = t.run_ns as f64 / window_ns;
        let wait = 100.0 * t.wait_ns as f64 / window_ns;
        match by.iter_mut().find(|w| w.work == work) {
            Some(w) => {
                w.threads += 1;
                w.cpus += cpus;
                w.busiest_thread_cpus = w.busiest_thread_cpus.max(cpus);
                w.wait_pct += wait;
            }
            None => by.push(KernelWork {
                work: work.to_string(),
                threads: 1,
                cpus,
                busiest_thread_cpus: cpus,
                wait_pct: wait,
            }),
        }
    }
    by.sort_by(|a, b| b.cpus.total_cmp(&a.cpus).then(a.work.cmp(&b.work)));
    by.truncate(KERNEL_WORKS);
    by
}

/// The kernel's threads of a window ([`Split::kernel`]) by work. A
/// worker seen doing several kinds of work in the window (`seen`, by
/// thread id: [`WorkSampler`]) has its time split evenly over what it was
/// seen doing, its name at the window's ends included.
pub fn kernel_work(
    kernel: &[(u32, ThreadTime)],
    seen: &HashMap<u32, Vec<String>>,
    window_ns: f64,
) -> Vec<KernelWork> {
    let mut named: Vec<(Option<String>, ThreadTime)> = Vec::with_capacity(kernel.len());
    for (tid, t) in kernel {
        let mut works: Vec<String> = seen.get(tid).cloned().unwrap_or_default();
        if let Some(c) = t
            .comm
            .as_deref()
            .filter(|c| !TEARDOWN_WORK.contains(&work_of(c)))
        {
            works.push(work_of(c).to_string());
        }
        if works.len() <= 1 {
            let comm = works.pop().or_else(|| t.comm.clone());
            named.push((comm, t.clone()));
            continue;
        }
        let k = works.len() as u64;
        for w in works {
            let part = ThreadTime {
                run_ns: t.run_ns / k,
                wait_ns: t.wait_ns / k,
                ..t.clone()
            };
            named.push((Some(w), part));
        }
    }
    group_work(&named, window_ns)
}

/// How often [`WorkSampler::tick`] reads the workers' names, and how many
/// workers it follows (the first of the window's start, by thread id).
pub const SAMPLE_EVERY: std::time::Duration = std::time::Duration::from_millis(250);
pub const SAMPLED_WORKERS: usize = 256;

/// What the kernel's work-queue workers do during a window: each one's
/// name read every [`SAMPLE_EVERY`] (`/proc/PID/task/TID/comm`, which
/// shows the queue whose work it runs or ran last), so that a worker's
/// time is not all charged to whatever it took up as the window closed.
#[derive(Debug, Default)]
pub struct WorkSampler {
    workers: Vec<(u32, u32)>,
    seen: HashMap<u32, Vec<String>>,
    last: Option<std::time::Instant>,
}

impl WorkSampler {
    /// Follow the work-queue workers alive at the window's start.
    pub fn new(start: Option<&ThreadTimes>) -> WorkSampler {
        let mut workers: Vec<(u32, u32)> = start
            .into_iter()
            .flatten()
            .filter(|(_, t)| {
                t.kernel && t.comm.as_deref().is_some_and(|c| c.starts_with("kworker/"))
            })
            .map(|(&tid, t)| (t.pid, tid))
            .collect();
        workers.sort_unstable();
        workers.truncate(SAMPLED_WORKERS);
        WorkSampler {
            workers,
            ..Default::default()
        }
    }

    /// Read the workers' names, if [`SAMPLE_EVERY`] has passed.
    pub fn tick(&mut self) {
        let now = std::time::Instant::now();
        if self
            .last
            .is_some_and(|l| now.duration_since(l) < SAMPLE_EVERY)
        {
            return;
        }
        self.last = Some(now);
        for i in 0..self.workers.len() {
            let (pid, tid) = self.workers[i];
            let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")) else {
                continue;
            };
            self.observe(tid, comm.trim());
        }
    }

    /// One reading of a worker's name: kept where it names work.
    pub fn observe(&mut self, tid: u32, comm: &str) {
        let work = work_of(comm);
        if !TEARDOWN_WORK.contains(&work) {
            self.seen.entry(tid).or_default().push(work.to_string());
        }
    }

    /// What each worker was seen doing, by thread id.
    pub fn seen(self) -> HashMap<u32, Vec<String>> {
        self.seen
    }
}

/// A kernel thread's name for a window, from its names at the start and
/// the end: the end's, unless the work it shows is ssdready's own
/// teardown ([`TEARDOWN_WORK`]); then the start's, where that shows other
/// work.
pub fn window_comm(start: Option<&str>, end: Option<&str>) -> Option<String> {
    let telling = |c: &&str| !TEARDOWN_WORK.contains(&work_of(c));
    end.filter(telling)
        .or(start.filter(telling))
        .or(end)
        .map(str::to_string)
}

/// The busiest threads named, with the CPUs they used over `window_ns`:
/// a kernel thread by its own name, another process's thread by its
/// process's.
pub fn named(busiest: &[(u32, ThreadTime)], window_ns: f64) -> Vec<ThreadUse> {
    if window_ns <= 0.0 {
        return Vec::new();
    }
    let own = crate::sched_group::of(std::process::id());
    busiest
        .iter()
        .map(|(tid, t)| {
            let path = match t.kernel {
                true => format!("/proc/{}/task/{tid}/comm", t.pid),
                false => format!("/proc/{}/comm", t.pid),
            };
            let name = std::fs::read_to_string(path)
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| format!("thread {tid} (gone)"));
            let (policy, nice) =
                std::fs::read_to_string(format!("/proc/{}/task/{tid}/stat", t.pid))
                    .ok()
                    .map_or((None, None), |s| policy_nice(&s));
            ThreadUse {
                name: worker_name(&name).to_string(),
                pid: t.pid,
                kernel: t.kernel,
                cpus: t.run_ns as f64 / window_ns,
                wait_pct: 100.0 * t.wait_ns as f64 / window_ns,
                policy,
                nice,
                apart: !t.kernel && apart(own.as_deref(), t.pid),
            }
        })
        .collect()
}

/// Whether process `pid` competes in another scheduling group than the
/// study's, `own` ([`crate::sched_group`]); false where either is unread.
fn apart(own: Option<&str>, pid: u32) -> bool {
    match (own, crate::sched_group::of(pid)) {
        (Some(o), Some(t)) => o != t,
        _ => false,
    }
}

/// A thread's scheduling policy and nice value from its `stat` text
/// (fields 41 and 19).
pub fn policy_nice(stat: &str) -> (Option<String>, Option<i64>) {
    let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
        return (None, None);
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let num = |i: usize| f.get(i).and_then(|v| v.parse::<i64>().ok());
    let policy = num(38).map(|p| policy_name(p).to_string());
    (policy, num(16))
}

/// `SCHED_IDLE` for 5 (include/uapi/linux/sched.h).
pub fn policy_name(p: i64) -> &'static str {
    match p {
        0 => "SCHED_OTHER",
        1 => "SCHED_FIFO",
        2 => "SCHED_RR",
        3 => "SCHED_BATCH",
        5 => "SCHED_IDLE",
        6 => "SCHED_DEADLINE",
        _ => "SCHED_?",
    }
}

/// A work-queue worker's name without the work it runs now (`+iou_exit`)
/// or ran last (`-loop0`): read after the run, that is whatever the worker
/// took up as the run ended (the closing of the run's own rings, say), not
/// what it did during the run.
pub fn worker_name(comm: &str) -> &str {
    match comm.starts_with("kworker/") {
        true => comm.split(['+', '-']).next().unwrap_or(comm),
        false => comm,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workers_name_leaves_out_the_work_it_took_up_last() {
        assert_eq!(worker_name("kworker/u8:7+iou_exit"), "kworker/u8:7");
        assert_eq!(worker_name("kworker/u8:2-loop0"), "kworker/u8:2");
        assert_eq!(worker_name("kworker/1:1H"), "kworker/1:1H");
        assert_eq!(worker_name("ksoftirqd/0"), "ksoftirqd/0");
        assert_eq!(worker_name("rust-analyzer"), "rust-analyzer");
    }

    #[test]
    fn kernel_threads_are_grouped_by_the_work_they_do() {
        assert_eq!(work_of("kworker/u8:2-kcryptd/253:0"), "kcryptd/253:0");
        assert_eq!(work_of("kworker/1:1+loop0"), "loop0");
        assert_eq!(work_of("kworker/1:1H"), "kworker");
        assert_eq!(work_of("kworker/u8:0-"), "kworker");
        assert_eq!(work_of("md0_raid5"), "md0_raid5");
        assert_eq!(work_of("kdmflush/253:0"), "kdmflush/253:0");
        assert_eq!(work_of("ksoftirqd/12"), "ksoftirqd");
        assert_eq!(work_of("irq/24-nvme0q1"), "irq/24-nvme0q1");
        let named = [
            (
                Some("kworker/u8:2-kcryptd/253:0".to_string()),
                t(1, 600, 100, true),
            ),
            (
                Some("kworker/u8:5+kcryptd/253:0".to_string()),
                t(1, 300, 0, true),
            ),
            (Some("md0_raid1".to_string()), t(1, 850, 0, true)),
            (None, t(1, 10, 0, true)),
        ];
        let w = group_work(&named, 1_000.0);
        let works: Vec<(&str, u32)> = w.iter().map(|x| (x.work.as_str(), x.threads)).collect();
        assert_eq!(
            works,
            [("kcryptd/253:0", 2), ("md0_raid1", 1), ("(exited)", 1)],
            "busiest first"
        );
        assert!((w[0].cpus - 0.9).abs() < 1e-9 && (w[0].busiest_thread_cpus - 0.6).abs() < 1e-9);
        assert!((w[0].wait_pct - 10.0).abs() < 1e-9);
        assert!(group_work(&named, 0.0).is_empty());
    }

    #[test]
    fn schedstat_gives_run_and_wait() {
        assert_eq!(parse_schedstat("123 456 7\n"), Some((123, 456)));
        assert_eq!(parse_schedstat("123"), None);
        assert_eq!(parse_schedstat(""), None);
    }

    #[test]
    fn a_kernel_thread_is_known_by_its_flags_whatever_its_name() {
        // kworker: flags 0x04208060 (PF_KTHREAD set).
        let kw = "57 (kworker/u8:2-loop0) I 2 0 0 0 -1 69238880 0 0 0 0 0 3 0 0";
        assert_eq!(is_kernel_thread(kw), Some(true));
        // A process whose name holds ") " and digits: flags 4194560.
        let user = "812 (a) b (c) 5) S 1 812 812 0 -1 4194560 100 0 0 0 5 1";
        assert_eq!(is_kernel_thread(user), Some(false));
        assert_eq!(is_kernel_thread("garbage"), None);
    }

    fn t(pid: u32, run_ns: u64, wait_ns: u64, kernel: bool) -> ThreadTime {
        ThreadTime {
            pid,
            run_ns,
            wait_ns,
            kernel,
            comm: None,
        }
    }

    #[test]
    fn a_workers_window_is_named_by_its_work_not_by_the_rings_closing() {
        let kw = "57 (kworker/u8:2-kcryptd-252:0-1) I 2 0 0 0 -1 69238880 0 0";
        assert_eq!(stat_comm(kw), Some("kworker/u8:2-kcryptd-252:0-1"));
        assert_eq!(stat_comm("garbage"), None);
        let crypt = Some("kworker/u8:2-kcryptd-252:0-1");
        let exit = Some("kworker/u8:2+iou_exit");
        // Closing the rings at the end: the start tells.
        assert_eq!(window_comm(crypt, exit).as_deref(), crypt);
        // An earlier window's closing at the start: the end tells.
        assert_eq!(window_comm(exit, crypt).as_deref(), crypt);
        assert_eq!(window_comm(Some("kworker/0:1"), exit).as_deref(), exit);
        assert_eq!(
            window_comm(None, Some("md0_raid5")).as_deref(),
            Some("md0_raid5")
        );
        assert_eq!(window_comm(None, None), None);
        let a = HashMap::from([(
            9,
            ThreadTime {
                comm: crypt.map(String::from),
                ..t(9, 0, 0, true)
            },
        )]);
        let b = HashMap::from([(
            9,
            ThreadTime {
                comm: exit.map(String::from),
                ..t(9, 800, 0, true)
            },
        )]);
        let w = kernel_work(&split(&a, &b).kernel, &HashMap::new(), 1_000.0);
        assert_eq!(w[0].work, "kcryptd-252:0-1", "{w:?}");
        // Seen in the window at kcryptd twice and at events_unbound once
        // (its closing work left out), and at kcryptd at its start.
        let mut seen = WorkSampler::default();
        for c in [
            "kworker/u8:2+kcryptd-252:0-1",
            "kworker/u8:2-events_unbound",
            "kworker/u8:2+iou_exit",
            "kworker/u8:2-kcryptd-252:0-1",
        ] {
            seen.observe(9, c);
        }
        let w = kernel_work(&split(&a, &b).kernel, &seen.seen(), 1_000.0);
        let got: Vec<(&str, u32, u64)> = w
            .iter()
            .map(|x| (x.work.as_str(), x.threads, (x.cpus * 1e3).round() as u64))
            .collect();
        assert_eq!(
            got,
            [("kcryptd-252:0-1", 3, 600), ("events_unbound", 1, 200)]
        );
    }

    #[test]
    fn a_window_splits_the_kernels_threads_from_other_processes() {
        let a = HashMap::from([
            (10, t(10, 1_000, 100, true)),
            (20, t(20, 5_000, 0, false)),
            (21, t(20, 50, 0, false)),
            // A thread id reused by another process is a new thread.
            (30, t(30, 9_000, 9_000, false)),
        ]);
        let b = HashMap::from([
            (10, t(10, 4_000, 600, true)),
            (20, t(20, 5_000, 0, false)),
            (21, t(20, 2_050, 30, false)),
            (30, t(31, 700, 10, false)),
            (40, t(40, 300, 0, true)),
        ]);
        let s = split(&a, &b);
        assert_eq!(
            (s.all_ns, s.kernel_ns, s.kernel_wait_ns),
            (6_000, 3_300, 500)
        );
        assert_eq!((s.other_ns, s.seen), (2_700, 5));
        let order: Vec<u32> = s.busiest.iter().map(|x| x.0).collect();
        assert_eq!(
            order,
            vec![10, 21, 30, 40],
            "busiest first, idle ones left out"
        );
    }

    #[test]
    fn this_machine_has_kernel_threads_and_this_thread_a_wait() {
        let Some(now) = thread_times() else {
            println!("skipped: no /proc/*/task/*/schedstat here");
            return;
        };
        assert!(now.values().any(|t| t.kernel), "kthreadd at least");
        assert!(own_wait_ns().is_some());
        let named = named(&[(2, t(2, 1_000_000, 0, true))], 1e9);
        assert_eq!(named[0].name, "kthreadd");
        assert!((named[0].cpus - 0.001).abs() < 1e-12);
    }
}
