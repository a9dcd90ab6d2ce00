//! Think time (fio's `handle_thinktime`): after every `thinktime_blocks`
//! I/Os (or `thinktime_iotime` of I/O) the flow waits for the queue to
//! empty, then thinks.

use super::step::Step;
use ssdready_core::resolved::ThinkConfig;

/// Think time (fio's `handle_thinktime`): the job's, and where the
/// worker is in it.
#[derive(Debug, Default)]
pub(super) struct Think {
    pub(super) ns: u64,
    pub(super) spin_ns: u64,
    pub(super) blocks: u64,
    pub(super) blocks_given: bool,
    pub(super) by_completion: bool,
    pub(super) iotime_ns: u64,
    pub(super) last_blocks: u64,
    pub(super) last_time: u64,
    /// A stall found, waiting for the queue to drain: the block count then.
    pub(super) pending: Option<u64>,
    /// A read or write was issued since the last look (fio looks once
    /// after each).
    pub(super) due: bool,
    /// Completions can come after the last issue (an asynchronous engine
    /// with a queue): fio reaps those after its issue loop, with no think.
    pub(super) late_completions: bool,
}

impl Think {
    /// The job's think time, nothing counted yet.
    pub(super) fn of(c: ThinkConfig) -> Self {
        Think {
            ns: c.ns,
            spin_ns: c.spin_ns,
            blocks: c.blocks,
            blocks_given: c.blocks_given,
            by_completion: c.by_completion,
            iotime_ns: c.iotime_ns,
            late_completions: c.late_completions,
            ..Think::default()
        }
    }
}

impl Think {
    /// fio's `handle_thinktime`: after every `thinktime_blocks` I/Os (or
    /// `thinktime_iotime` of I/O), wait for the queue to empty, then think.
    /// `issued_all`: the job has issued its last I/O; `issued` and
    /// `completed`: its reads and writes so far.
    pub(super) fn step(
        &mut self,
        (inflight, now): (usize, u64),
        issued_all: bool,
        (issued, completed): (u64, u64),
    ) -> Option<Step> {
        // fio thinks on completions inside its issue loop: once the job has
        // issued its last I/O the loop is over, and the completions that an
        // asynchronous engine delivers after it bring no think (libaio at
        // QD 8, 32 I/Os, a think every 8: three, not four; a synchronous
        // engine's last I/O completes inside the loop and is thought after).
        let t = self;
        if t.by_completion && t.late_completions && issued_all && t.pending.is_none() {
            return None;
        }
        if t.ns == 0 {
            return None;
        }
        if t.last_time == 0 {
            t.last_time = now.max(1);
        }
        if t.pending.is_none() {
            if !t.due {
                return None;
            }
            t.due = false;
            let b = if t.by_completion { completed } else { issued };
            let by_time = t.iotime_ns > 0 && now.saturating_sub(t.last_time) >= t.iotime_ns + t.ns;
            let by_blocks = (t.iotime_ns == 0 || t.blocks_given) && b >= t.last_blocks + t.blocks;
            if !(by_time || by_blocks) {
                return None;
            }
            t.pending = Some(b);
        }
        if inflight > 0 {
            return Some(Step::Drain);
        }
        t.last_blocks = t.pending.take().unwrap_or(t.last_blocks);
        if t.iotime_ns > 0 {
            t.last_time = now;
        }
        Some(Step::Think {
            spin_ns: t.spin_ns,
            sleep_ns: t.ns - t.spin_ns,
        })
    }
}
