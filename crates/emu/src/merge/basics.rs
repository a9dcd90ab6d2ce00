//! What the merge layers share, below them and the device: a layer's
//! settings ([`MergeConfig`]), what a request of a merged command saw
//! ([`Served`]), the index of an operation in per-kind arrays ([`kind`]), a
//! lock that ignores poisoning ([`lock`]) and a device's registry entry
//! ([`Registered`]). The device holds the registry, and the layers hold the
//! device, so an entry keeps its layer without naming its type.

use crate::device::Op;
use ssdready_core::spec::{JobSpec, TemporalMerge};
use ssdready_core::stats::MergeStats;
use std::any::Any;
use std::sync::{Mutex, MutexGuard, Weak};

/// A merge layer's settings (from the job's options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeConfig {
    /// `Stm` or `Atm`.
    pub mode: TemporalMerge,
    /// How long a command gathers requests after its first, ns.
    pub window_ns: u64,
    /// Most requests (extents) per command.
    pub max_extents: u32,
    /// Most bytes per command (0: no limit).
    pub max_bytes: u64,
}

impl MergeConfig {
    /// The settings of `spec`, or `None` when it does not merge.
    pub fn of(spec: &JobSpec) -> Option<MergeConfig> {
        (spec.temporal_merge != TemporalMerge::Off).then_some(MergeConfig {
            mode: spec.temporal_merge,
            window_ns: spec.merge_window_ns,
            max_extents: spec.merge_max.max(1),
            max_bytes: spec.merge_max_bytes,
        })
    }

    /// Whether commands gather more than one request at all.
    pub fn merging(&self) -> bool {
        self.window_ns > 0 && self.max_extents > 1
    }

    /// Whether a command of `n` requests and `bytes` bytes can take one more
    /// of `len` bytes.
    pub fn fits(&self, n: usize, bytes: u64, len: u64) -> bool {
        self.merging()
            && n < self.max_extents as usize
            && (self.max_bytes == 0 || bytes.saturating_add(len) <= self.max_bytes)
    }

    /// Whether a command of `n` requests and `bytes` bytes takes no more.
    pub fn full(&self, n: usize, bytes: u64) -> bool {
        !self.merging()
            || n >= self.max_extents as usize
            || (self.max_bytes != 0 && bytes >= self.max_bytes)
    }
}

/// When a request of a merged command entered the layer, when its command
/// closed, was issued (took the device's interface; in virtual time the
/// host's `host_cmd_ns` follows, as it does for a command without merging)
/// and completed (clock ns), and — for the request that opened the command —
/// how many requests it carried.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Served {
    pub entered: u64,
    pub closed: u64,
    pub issued: u64,
    pub done: u64,
    pub leader_of: Option<usize>,
}

impl Served {
    /// Count this request (and its command, when it led it) in `stats`.
    pub fn record(&self, stats: &mut MergeStats) {
        stats
            .window_wait
            .record(self.closed.saturating_sub(self.entered));
        stats
            .issue_wait
            .record(self.issued.saturating_sub(self.closed));
        if let Some(n) = self.leader_of {
            stats.record_command(n);
        }
    }
}

/// Index of an operation in per-kind arrays.
pub(crate) fn kind(op: Op) -> usize {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
        Op::Flush => 3,
    }
}

/// Lock, ignoring poisoning: the layer's state is consistent between
/// statements, and a panic elsewhere must not wedge the other threads.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A device's registry entry: a layer's settings and a weak handle to the
/// layer (an STM's or an ATM's; the engines hold it alive).
pub(crate) struct Registered {
    pub(super) cfg: MergeConfig,
    pub(super) layer: Weak<dyn Any + Send + Sync>,
}
