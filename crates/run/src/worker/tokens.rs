//! fio's token-based flow control (`flow`, `flow_id`, `flow_sleep`; fio's
//! flow.c): the jobs of one flow id share a counter of issued I/Os, and a
//! job whose share of that counter exceeds its share of the flow's weights
//! waits (after emptying its queue, `flow_sleep` µs) until the others catch
//! up. A job joins when it starts issuing and leaves, taking its I/Os and
//! its weight out of the flow, when it ends, so the others then run free.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// One flow id's counters, shared by its jobs' workers.
#[derive(Debug)]
pub struct FlowShared {
    /// I/Os issued by the flow's workers, plus one (fio starts at 1).
    issued: AtomicU64,
    /// The weights of the workers that have joined.
    weight: AtomicU64,
}

impl Default for FlowShared {
    fn default() -> Self {
        FlowShared {
            issued: AtomicU64::new(1),
            weight: AtomicU64::new(0),
        }
    }
}

/// A worker's place in its flow.
pub(super) struct FlowToken {
    shared: Arc<FlowShared>,
    mine: u64,
    weight: u64,
    /// `flow_sleep`, ns.
    pub sleep_ns: u64,
}

impl FlowToken {
    /// Join `shared` with `weight` (fio's flow_init_job).
    pub(super) fn join(shared: Arc<FlowShared>, weight: u32, sleep_us: u64) -> Self {
        shared.weight.fetch_add(u64::from(weight), Relaxed);
        FlowToken {
            shared,
            mine: 0,
            weight: u64::from(weight),
            sleep_ns: sleep_us.saturating_mul(1000),
        }
    }

    /// Whether this worker is ahead of its share and must not issue now;
    /// when it is not, one I/O is counted (fio's flow_threshold_exceeded).
    pub(super) fn ahead(&mut self) -> bool {
        let issued = self.shared.issued.load(Relaxed).max(1) as f64;
        let weight = self.shared.weight.load(Relaxed).max(1) as f64;
        if self.mine as f64 / issued > self.weight as f64 / weight {
            return true;
        }
        self.shared.issued.fetch_add(1, Relaxed);
        self.mine += 1;
        false
    }
}

impl Drop for FlowToken {
    /// Leave the flow (fio's flow_exit_job).
    fn drop(&mut self) {
        self.shared.issued.fetch_sub(self.mine, Relaxed);
        self.shared.weight.fetch_sub(self.weight, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two workers of weights 3 and 1 that each issue whenever they are not
    /// ahead, taking turns: they issue in the ratio 3:1.
    #[test]
    fn weights_share_out_the_ios() {
        let shared = Arc::new(FlowShared::default());
        let mut a = FlowToken::join(shared.clone(), 3, 0);
        let mut b = FlowToken::join(shared.clone(), 1, 0);
        let (mut na, mut nb) = (0u64, 0u64);
        for _ in 0..4000 {
            na += u64::from(!a.ahead());
            nb += u64::from(!b.ahead());
        }
        let ratio = na as f64 / nb as f64;
        assert!((ratio - 3.0).abs() < 0.05, "{na} vs {nb}");
        // b leaves: a runs free.
        drop(b);
        assert!((0..100).all(|_| !a.ahead()));
        drop(a);
        assert_eq!(shared.issued.load(Relaxed), 1);
        assert_eq!(shared.weight.load(Relaxed), 0);
    }
}
