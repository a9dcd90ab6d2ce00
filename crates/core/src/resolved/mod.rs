//! A job resolved once: the typed configuration each consumer of a job
//! reads, worked out from a [`JobSpec`] (the job as written) in one place.
//!
//! [`ResolvedJob::new`] takes a checked job and produces, for each
//! consumer, what it needs and nothing more, with the option logic
//! (defaults, clamps, derived values) done here rather than in the
//! consumer:
//!
//! * [`PlanConfig`]: the offset and block-size generator (workload's
//!   `IoPlan`);
//! * [`FlowConfig`]: the order of a worker's passes, syncs, think time and
//!   verification (workload's `JobFlow`), with its plan made endless;
//! * [`LoopConfig`]: the worker loop's queue (depth, batches, low mark),
//!   phases (ramp, runtime) and features;
//! * [`LogConfig`]: the log files a worker writes and how it keeps its
//!   samples;
//! * [`ErrorPolicy`]: which failures the loop goes past, and what a
//!   failed verification does;
//! * [`BufferConfig`]: the write buffers' contents and dedupe working set.
//!
//! What depends on a worker's targets (their regions, its index, its
//! clock) is not known here: the consumers add it, and only it.

mod errors;
mod flow;
mod logs;
mod looped;
mod plan;
mod rate;
#[cfg(test)]
mod tests;

pub use errors::{BufferConfig, ErrorPolicy, WorkingSet};
pub use flow::{FlowConfig, ThinkConfig, VerifyConfig};
pub use logs::{LogConfig, LogContents, LogFile};
pub use looped::{LoopConfig, PrioConfig};
pub use plan::{OffsetDraw, PlanConfig};
pub use rate::RateConfig;

use crate::spec::JobSpec;

/// A job resolved for its consumers; immutable once made.
#[derive(Clone, Debug)]
pub struct ResolvedJob {
    /// The job's plan as written (bounded by its own budgets).
    pub plan: PlanConfig,
    /// The worker's flow (its plan endless: the flow keeps the budgets).
    pub flow: FlowConfig,
    /// The worker loop.
    pub run_loop: LoopConfig,
    /// The worker's logs.
    pub logs: LogConfig,
    /// What the loop does with failures.
    pub errors: ErrorPolicy,
    /// The write buffers.
    pub buffers: BufferConfig,
}

impl ResolvedJob {
    /// Resolve the checked job `spec`.
    pub fn new(spec: &JobSpec) -> Self {
        ResolvedJob {
            plan: PlanConfig::new(spec),
            flow: FlowConfig::new(spec),
            run_loop: LoopConfig::new(spec),
            logs: LogConfig::new(spec),
            errors: ErrorPolicy::new(spec),
            buffers: BufferConfig::new(spec),
        }
    }
}
