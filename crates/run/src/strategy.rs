//! Which completion strategy a job runs, decided once from the job, its
//! engine and its targets, and what the result says about it
//! (`ssdready_core::strategy` has the domain).
//!
//! [`plan`] maps the requested `completion` onto what the engine and the
//! device can do, and says why when it falls back:
//!
//! | engine | interrupt | poll | spin | hybrid |
//! |---|---|---|---|---|
//! | io_uring | `io_uring_enter` sleeps | IOPOLL with poll queues and direct=1, else spin | CQ ring read in user space | sleep, then spin |
//! | libaio | `io_getevents` sleeps | spin (libaio cannot poll) | `io_getevents(min 0)` in a loop | sleep, then spin |
//! | posixaio | `aio_suspend` sleeps (`posix-aio`) | spin | `aio_error` in a loop | sleep, then spin |
//! | emulator | timed sleep until due | spin (its queue is in this process) | its queue read in a loop | sleep, then spin |
//! | psync | sync: the I/O completes in its system call, nothing to wait for ||||
//! | null | none: every I/O completes at once ||||
//!
//! `hipri=1` (fio's option) asks for IOPOLL and is refused where the device
//! has no poll queues, before any I/O: fio instead lets the kernel complete
//! such I/O by interrupt while its thread polls in vain, which measures
//! neither. Interrupt coalescing is the emulated device's (`coalesce_n`,
//! `coalesce_us` of the job override the device's keys for its queues), or
//! NVMe's feature 0x08 ([`nvme`]); anywhere else it is refused with the
//! reason. The SQPOLL thread (`iou-sqp-TID`) is found under
//! /proc/self/task, and its run time ([`thread_run_ns`]) is counted in the
//! job's CPU.

use ssdready_core::spec::{EngineKind, JobSpec};
use ssdready_core::strategy::{CoalescingReport, CompletionWait, StrategyReport};
use ssdready_emu::config::{CompletionMode, Params};
use ssdready_io::engines::uring::{iopoll_blocker, wants_iopoll};
use ssdready_io::target::Target;

pub mod awake;
pub mod nvme;

/// How a job's worker waits for completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The engine's own wait.
    Engine,
    /// Spin on the completion queue in user space.
    Spin,
    /// Sleep about half the expected latency, then spin.
    Hybrid,
}

/// What a job's workers do, and what the result will say.
#[derive(Clone, Debug)]
pub struct Plan {
    pub wait: Wait,
    pub report: StrategyReport,
}

/// The plan of a job (see the module docs); an error is a request this
/// machine cannot serve (coalescing where nothing can apply it), with why.
pub fn plan(spec: &JobSpec, targets: &[Target], emu: Option<&Params>) -> Result<Plan, String> {
    let asked = spec.completion;
    let (wait, ran, how, fallback) = match emu {
        Some(p) => on_emulator(asked, p),
        None => match spec.ioengine {
            EngineKind::IoUring | EngineKind::UringCmd => on_uring(spec, targets),
            EngineKind::Sg => nothing_to_wait(
                asked,
                "sync",
                spec.engine().completes,
                "sg completes each SCSI command inside its SG_IO ioctl: there is no completion \
                 to wait for (hipri asks the driver to poll for it)",
            ),
            EngineKind::Libaio => on_libaio(asked),
            EngineKind::PosixAio => on_posixaio(asked),
            EngineKind::Psync => nothing_to_wait(
                asked,
                "sync",
                spec.engine().completes,
                "psync completes each I/O inside its system call: there is no completion to \
                 wait for (polled synchronous I/O is fio's pvsync2 with hipri, which ssdready \
                 does not have)",
            ),
            EngineKind::Null | EngineKind::Emu => nothing_to_wait(
                asked,
                if spec.effective_iodepth() == 1 {
                    "sync"
                } else {
                    "none"
                },
                ssdready_core::engines::NULL.completes,
                "the null engine completes every I/O at once: there is nothing to wait for",
            ),
        },
    };
    let synchronous = emu.is_none()
        && spec.ioengine != EngineKind::Emu
        && (spec.engine().caps.synchronous
            || (spec.ioengine == EngineKind::Null && spec.effective_iodepth() == 1));
    let report = StrategyReport {
        requested: asked.map(|w| w.name().to_string()),
        ran: ran.into(),
        how,
        fallback,
        issue: if synchronous { "sync" } else { "async" }.into(),
        submit_batch: spec.iodepth_batch_submit.max(1),
        complete_min: spec.iodepth_batch_complete_min.max(1),
        complete_max: spec
            .batch_complete_max()
            .max(spec.iodepth_batch_complete_min)
            .max(1),
        coalescing: coalescing(spec, targets, emu)?,
        ..StrategyReport::default()
    };
    Ok(Plan { wait, report })
}

type Choice = (Wait, &'static str, String, Option<String>);

fn user_space(asked: Option<CompletionWait>, spin_how: &str) -> Option<Choice> {
    match asked {
        Some(CompletionWait::Spin) => Some((Wait::Spin, "spin", spin_how.into(), None)),
        Some(CompletionWait::Hybrid) => Some((
            Wait::Hybrid,
            "hybrid",
            format!(
                "sleeps half the running mean of the completion latency after the oldest \
                 I/O's submission, then {spin_how}"
            ),
            None,
        )),
        _ => None,
    }
}

fn on_emulator(asked: Option<CompletionWait>, p: &Params) -> Choice {
    const SPIN: &str = "reads the emulated device's completion queue in a loop, never sleeping";
    if let Some(c) = user_space(asked, SPIN) {
        return c;
    }
    match asked {
        Some(CompletionWait::Interrupt) => (
            Wait::Engine,
            "interrupt",
            "sleeps until the completion is due, as a thread woken by an interrupt".into(),
            None,
        ),
        Some(_) => (
            Wait::Spin,
            "spin",
            SPIN.into(),
            Some(
                "the emulated device's completion queue is in this process: polling it is \
                 spinning on it in user space (there are no kernel poll queues)"
                    .into(),
            ),
        ),
        None => {
            let (ran, how) = match p.completion {
                CompletionMode::Irq => ("emu-irq", "sleeps until the completion is due"),
                CompletionMode::Poll => ("emu-poll", "spins until the completion is due"),
                CompletionMode::Hybrid => (
                    "emu-hybrid",
                    "sleeps until 50 µs before the completion is due, then spins",
                ),
            };
            let how = format!("the emulated device's own completion mode: {how}");
            (Wait::Engine, ran, how, None)
        }
    }
}

fn on_uring(spec: &JobSpec, targets: &[Target]) -> Choice {
    const SPIN: &str = "reads the io_uring completion ring in user space in a loop, never \
                        entering the kernel to wait (completions are still signalled by interrupt)";
    if let Some(c) = user_space(spec.completion, SPIN) {
        return c;
    }
    if wants_iopoll(spec, targets) {
        return (
            Wait::Engine,
            "iopoll",
            "IORING_SETUP_IOPOLL: the kernel polls the device's poll queues in io_uring_enter"
                .into(),
            None,
        );
    }
    let interrupt = (
        Wait::Engine,
        "interrupt",
        "io_uring_enter sleeps until the interrupt's completion wakes it".to_string(),
        None,
    );
    if spec.completion != Some(CompletionWait::Poll) {
        return interrupt;
    }
    let why = if !spec.direct {
        "polled completions (IOPOLL) need direct=1".to_string()
    } else {
        iopoll_blocker(targets).unwrap_or_else(|| "IOPOLL is not possible here".into())
    };
    (
        Wait::Spin,
        "spin",
        SPIN.into(),
        Some(format!(
            "{why}; spinning on the completion queue in user space instead"
        )),
    )
}

/// How an asynchronous engine that cannot poll the device waits.
struct AsyncWaits {
    /// What spinning on its completions does.
    spin: &'static str,
    /// Why `completion=poll` spins instead.
    no_poll: &'static str,
    /// The completion mode's name when the engine sleeps, and how it does.
    sleeps: (&'static str, &'static str),
}

/// libaio and POSIX AIO: spin in user space when asked, otherwise sleep in
/// the engine's own wait; `completion=poll` spins, saying why.
fn on_async_without_iopoll(asked: Option<CompletionWait>, w: AsyncWaits) -> Choice {
    if let Some(c) = user_space(asked, w.spin) {
        return c;
    }
    if asked == Some(CompletionWait::Poll) {
        return (Wait::Spin, "spin", w.spin.into(), Some(w.no_poll.into()));
    }
    (Wait::Engine, w.sleeps.0, w.sleeps.1.into(), None)
}

fn on_libaio(asked: Option<CompletionWait>) -> Choice {
    on_async_without_iopoll(
        asked,
        AsyncWaits {
            spin: "calls io_getevents with min_nr 0 in a loop: a system call per look \
                   (libaio's ring is not read in user space)",
            no_poll: "libaio cannot poll the device (IOPOLL is io_uring's): spinning instead",
            sleeps: (
                "interrupt",
                "io_getevents sleeps until the interrupt's completion wakes it",
            ),
        },
    )
}

fn on_posixaio(asked: Option<CompletionWait>) -> Choice {
    on_async_without_iopoll(
        asked,
        AsyncWaits {
            spin: "calls aio_error on every request in flight in a loop, never sleeping",
            no_poll: "POSIX AIO cannot poll the device (its I/O is glibc's threads' pread/pwrite): spinning instead",
            sleeps: (
                "posix-aio",
                "aio_suspend sleeps until one of glibc's AIO threads (each running pread/pwrite) finishes a request",
            ),
        },
    )
}

/// An engine with nothing to wait for: whatever was asked, this is what ran.
fn nothing_to_wait(
    asked: Option<CompletionWait>,
    ran: &'static str,
    how: &str,
    why: &str,
) -> Choice {
    (Wait::Engine, ran, how.into(), asked.map(|_| why.into()))
}

/// The coalescing in force: the job's, else the emulated device's keys.
fn coalescing(
    spec: &JobSpec,
    targets: &[Target],
    emu: Option<&Params>,
) -> Result<Option<CoalescingReport>, String> {
    let asked = spec.coalesce.filter(|c| c.n > 0 || c.us > 0);
    if let Some(p) = emu {
        let (n, us) = match spec.coalesce {
            Some(c) => (c.n, c.us),
            None => (p.coalesce_n, p.coalesce_us),
        };
        return Ok((n > 0).then(|| CoalescingReport {
            n,
            us,
            by: "the emulated device".into(),
        }));
    }
    let Some(c) = asked else { return Ok(None) };
    let controllers = nvme::controllers(targets).map_err(|e| e.to_string())?;
    nvme::feature_value(c.n, c.us).map_err(|e| e.to_string())?;
    Ok(Some(CoalescingReport {
        n: c.n,
        us: c.us,
        by: format!(
            "nvme set-feature 0x08 on {}",
            controllers
                .iter()
                .map(|c| format!("/dev/{c}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }))
}

/// The calling thread's SQPOLL thread, `iou-sqp-TID` under /proc/self/task
/// (the kernel names it after the thread that created the ring). The
/// thread takes that name when it first runs, so it is looked for during
/// up to 200 ms after the ring was made.
pub fn find_sq_thread() -> Option<(u32, String)> {
    let me = nix::unistd::gettid().as_raw();
    let name = format!("iou-sqp-{me}");
    let look = || {
        std::fs::read_dir("/proc/self/task")
            .ok()?
            .flatten()
            .find_map(|t| {
                let tid = t.file_name().to_str()?.parse::<u32>().ok()?;
                let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
                (comm.trim() == name).then(|| (tid, name.clone()))
            })
    };
    for _ in 0..200 {
        if let Some(found) = look() {
            return Some(found);
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    None
}

/// A thread's run time so far, ns: the first field of
/// `/proc/self/task/TID/schedstat` (the scheduler's `sum_exec_runtime`).
pub fn thread_run_ns(tid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat"))
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
