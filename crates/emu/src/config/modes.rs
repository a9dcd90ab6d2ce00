//! The kinds a few emulator keys choose between: the garbage collector's
//! victim policy ([`GcPolicy`], `gc`) and how completions are delivered
//! ([`CompletionMode`], `completion`).

use serde::{Deserialize, Serialize};

/// Garbage-collection victim policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GcPolicy {
    /// The block with the fewest valid pages.
    Greedy,
    /// The least recently written block.
    Fifo,
}

/// How the real-time front delivers completions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompletionMode {
    /// Sleep until the completion is due, as a thread woken by an interrupt
    /// (the kernel's wake-up latency is paid, as with a real interrupt).
    Irq,
    /// Spin on the completion queue (polling: no sleep, a busy core).
    Poll,
    /// Sleep while the wait is long, spin the last 50 µs: an ideal interrupt
    /// without the timer slack of a virtual machine. The default.
    Hybrid,
}
