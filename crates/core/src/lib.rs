//! # ssdready-core
//!
//! The job language and the result model, with no system call:
//!
//! * the job specification ([`spec::JobSpec`]), fed by fio's command lines
//!   and job files ([`jobfile`]) through one option table ([`options`],
//!   the `option_table_*` modules) and one validation path, with the
//!   option groups it holds in the `spec_*` modules and fio's units
//!   ([`units`]);
//! * the I/O request and completion types the engines exchange with the
//!   worker loop ([`req`]);
//! * the latency histogram ([`hist`]) and the result model the reports
//!   render ([`stats`], [`result`], the logs, the schedule's counters in
//!   [`arrivals`], the cross-checks in [`checks`]).
//!
//! What each worker does next (the plan, the job flow, replay, zone
//! rules, rate, verify, buffers) is the `ssdready-workload` crate, which
//! depends on this one; nothing here names it.
//!
//! Data flows one way: [`spec::JobSpec`] → (`ssdready_workload::plan`) →
//! (engines, in `ssdready-io`) → [`stats::DirStats`] → [`result::RunResult`].
//!
//! The public modules are the contract. The parts of the option table,
//! the option groups a job holds and the statistics' parts are private:
//! their types are named through [`options`], [`spec`], [`stats`] and
//! [`result`], so a reader finds each type where the whole it belongs to
//! is.

#![forbid(unsafe_code)]

mod arith;
pub mod arrivals;
pub mod checks;
pub mod engine_check;
pub mod engines;
pub mod hist;
pub mod host;
pub mod iolog;
pub mod iolog_hist;
pub mod jobfile;
mod option_def;
pub mod option_doc;
mod option_table;
mod option_table_access;
pub mod option_table_engines;
mod option_table_files;
mod option_table_flow;
mod option_table_io;
pub mod option_table_library;
mod option_table_logs;
mod option_table_passthru;
mod option_table_random;
mod option_table_rate;
mod option_table_replay;
mod option_table_report;
mod option_table_run;
mod option_table_sched;
mod option_table_sprandom;
mod option_table_submit;
mod option_table_zbd;
pub mod option_values;
pub mod options;
pub mod optsets;
pub mod queueing;
pub mod req;
pub mod resolved;
pub mod result;
mod result_cpu;
mod result_emu;
pub mod sched;
pub mod spec;
pub mod spec_access;
mod spec_buffers;
mod spec_default;
mod spec_error;
pub mod spec_io;
mod spec_log;
pub mod spec_passthru;
mod spec_pattern;
mod spec_replay;
pub mod spec_run;
pub mod spec_sprandom;
mod spec_types;
mod spec_validate;
pub mod spec_verify;
mod spec_warnings;
mod spec_zbd;
pub mod stats;
mod stats_iosplit;
mod stats_merge;
mod stats_prio;
mod stats_series;
mod stats_verify;
pub mod steady;
pub mod strategy;
pub mod units;

pub use req::{Completion, Ddir, IoReq};
pub use spec::{JobSpec, SpecError};
