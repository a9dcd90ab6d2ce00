//! Completion and submission strategies: how a job waits for its I/Os to
//! finish, and what the result says about it.
//!
//! A completion can reach the thread that issued the I/O in several ways:
//!
//! * **interrupt**: the device raises an interrupt, the kernel wakes the
//!   sleeping thread (the default of every asynchronous engine);
//! * **iopoll**: the kernel polls the device's completion queue instead of
//!   sleeping (io_uring `IORING_SETUP_IOPOLL`, fio's `hipri`); only devices
//!   with poll queues (NVMe with `poll_queues` > 0: `queue/io_poll` = 1) can;
//! * **spin**: the thread looks at the completion queue in user space again
//!   and again, never sleeping (completions still arrive by interrupt: the
//!   spinning saves the wake-up, not the interrupt);
//! * **hybrid**: sleep about half the expected latency (a running mean of
//!   the completion latency), then spin — the kernel's hybrid polling idea;
//! * **sync**: the I/O completes inside its own system call (psync): there
//!   is nothing to wait for.
//!
//! Option `completion` (ssdready's; fio has only `hipri`) picks one of
//! `interrupt`, `poll` (iopoll where the device can, else spin, and the
//! result says why), `spin`, `hybrid`. Orthogonal to it: `sqthread_poll`
//! (a kernel thread polls the submission queue: its CPU is counted in the
//! job's), interrupt coalescing (`coalesce_n`, `coalesce_us`: completions
//! delivered in batches) and submission batching (`iodepth_batch_submit`,
//! `iodepth_batch_complete_min`/`_max`). [`StrategyReport`] is what the
//! result says ran.

use serde::{Deserialize, Serialize};

/// How a job waits for completions (option `completion`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompletionWait {
    /// Sleep until woken (by the interrupt's wake-up).
    Interrupt,
    /// Polled: iopoll where the device has poll queues, else spin.
    Poll,
    /// Spin on the completion queue in user space.
    Spin,
    /// Sleep about half the expected latency, then spin.
    Hybrid,
}

impl CompletionWait {
    /// The option's spelling.
    pub fn name(self) -> &'static str {
        match self {
            CompletionWait::Interrupt => "interrupt",
            CompletionWait::Poll => "poll",
            CompletionWait::Spin => "spin",
            CompletionWait::Hybrid => "hybrid",
        }
    }

    /// Parse the option's value.
    pub fn parse(v: &str) -> Result<Self, NotACompletionWait> {
        Ok(match v {
            "interrupt" | "irq" => CompletionWait::Interrupt,
            "poll" | "polled" => CompletionWait::Poll,
            "spin" => CompletionWait::Spin,
            "hybrid" => CompletionWait::Hybrid,
            _ => return Err(NotACompletionWait(v.to_string())),
        })
    }
}

/// A `completion` value that names no way of waiting.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' (allowed: interrupt, poll, spin, hybrid)")]
pub struct NotACompletionWait(pub String);

impl From<NotACompletionWait> for String {
    fn from(e: NotACompletionWait) -> String {
        e.to_string()
    }
}

/// Interrupt coalescing a job asks of its device (options `coalesce_n`,
/// `coalesce_us`; NVMe's aggregation threshold and time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coalescing {
    /// Deliver once this many completions are waiting (0: no count limit).
    pub n: u32,
    /// Deliver once the oldest waiting completion is this old, µs (0: no
    /// time limit).
    pub us: u64,
}

/// The SQPOLL kernel thread of a job's rings and the CPU it used.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SqThreadCpu {
    /// Its names (`iou-sqp-TID`), one per worker whose thread was found.
    pub threads: Vec<String>,
    /// Run time over the measured window, all workers' threads, ns.
    pub cpu_ns: u64,
    /// Where the figure comes from.
    pub source: String,
}

/// What a job's completion and submission strategy was, as it ran.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StrategyReport {
    /// Option `completion` as given (null: not given).
    pub requested: Option<String>,
    /// What ran: `interrupt`, `iopoll`, `spin`, `hybrid`, `sync`, `none`
    /// (null engine), or the emulated device's own mode (`emu-irq`,
    /// `emu-poll`, `emu-hybrid`) when `completion` was not given.
    pub ran: String,
    /// The mechanism, in words.
    pub how: String,
    /// Why what ran is not what was asked (null when it is).
    pub fallback: Option<String>,
    /// `sync` (each I/O completes inside its system call) or `async`.
    pub issue: String,
    /// I/Os per submit call asked (`iodepth_batch_submit`).
    pub submit_batch: u32,
    /// Fewest completions waited for per reap (`iodepth_batch_complete_min`).
    pub complete_min: u32,
    /// Most completions taken per reap (`iodepth_batch_complete_max`; 0 in
    /// the option means iodepth).
    pub complete_max: u32,
    /// Interrupt coalescing in force, and who applied it.
    pub coalescing: Option<CoalescingReport>,
    /// The SQPOLL thread's CPU (`sqthread_poll`), counted in the job's
    /// system CPU.
    pub sq_thread: Option<SqThreadCpu>,
    /// Completion events in the measured window: reaps that returned at
    /// least one completion, plus synchronous completions (each its own
    /// event). Coalescing lowers it.
    pub completion_events: u64,
    /// Completions per event.
    pub completions_per_event: f64,
}

/// Interrupt coalescing as applied.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoalescingReport {
    /// Completions per delivery (0: no count limit).
    pub n: u32,
    /// Longest hold of a completion, µs (0: no time limit).
    pub us: u64,
    /// What applied it: `the emulated device` or `nvme set-feature 0x08 on
    /// /dev/nvmeX`.
    pub by: String,
}
