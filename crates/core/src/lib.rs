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

#![forbid(unsafe_code)]

pub mod arith;
pub mod arrivals;
pub mod checks;
pub mod engine_check;
pub mod engines;
pub mod hist;
pub mod host;
pub mod iolog;
pub mod iolog_hist;
pub mod jobfile;
pub mod option_def;
pub mod option_doc;
pub mod option_table;
pub mod option_table_access;
pub mod option_table_engines;
pub mod option_table_files;
pub mod option_table_flow;
pub mod option_table_io;
pub mod option_table_library;
pub mod option_table_logs;
pub mod option_table_passthru;
pub mod option_table_random;
pub mod option_table_rate;
pub mod option_table_replay;
pub mod option_table_report;
pub mod option_table_run;
pub mod option_table_sched;
pub mod option_table_sprandom;
pub mod option_table_submit;
pub mod option_table_zbd;
pub mod option_values;
pub mod options;
pub mod optsets;
pub mod queueing;
pub mod req;
pub mod resolved;
pub mod result;
pub mod result_cpu;
pub mod result_emu;
pub mod sched;
pub mod spec;
pub mod spec_access;
pub mod spec_buffers;
mod spec_default;
pub mod spec_error;
pub mod spec_io;
pub mod spec_log;
pub mod spec_passthru;
pub mod spec_pattern;
pub mod spec_replay;
pub mod spec_run;
pub mod spec_sprandom;
pub mod spec_types;
mod spec_validate;
pub mod spec_verify;
mod spec_warnings;
pub mod spec_zbd;
pub mod stats;
pub mod stats_iosplit;
pub mod stats_merge;
pub mod stats_prio;
pub mod stats_series;
pub mod stats_verify;
pub mod steady;
pub mod strategy;
pub mod units;

pub use req::{Completion, Ddir, IoReq};
pub use spec::{JobSpec, SpecError};
