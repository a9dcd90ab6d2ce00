//! The integration tests of this crate, one module per file, built as one
//! test binary (one link instead of one per file). Tests of one file may run
//! at the same time as each other, never beside another file's: each takes
//! `ssdready_testkit::one_file_at_a_time` first, as separate binaries ran
//! one after another.

mod common;

mod app;
mod app_cache;
mod characterize;
mod cli_docs;
mod cli_errors;
mod emu_devfile;
mod emu_faults;
mod emu_ftl;
mod emu_kill;
mod emu_limits;
mod emu_owner;
mod emu_queues;
mod emulator;
mod engines;
mod engines_fio_mmap_aio;
mod engines_fio_pmem;
mod engines_passthrough;
mod fio_buffer_contents;
mod fio_compat;
mod fio_example_gaps;
mod fio_file_access;
mod fio_file_op_engines;
mod fio_flow_falloc_refusals;
mod fio_ignore_error_buffers;
mod fio_io;
mod fio_logs_reporting;
mod fio_mode;
mod fio_numa_dedupe_priorities;
mod fio_public_jobs;
mod fio_verify;
mod fleet;
mod fleet_limits;
mod fleet_logs;
mod fleet_security;
mod fleet_study;
mod fuse_uring;
mod fuzz;
mod ground_truth;
mod history;
mod history_view;
mod hot_path_cost;
mod kernel_drive;
mod lab;
mod lab_stack;
mod lab_stack_writes;
mod lab_vm;
mod limits;
mod outputs;
mod planted;
mod profile;
mod profile_exact;
mod ramdev;
mod replay;
mod report;
mod report_rejudge;
mod safety;
mod sessions;
mod stdout_errors;
mod steady_state;
mod strategies;
mod strategies_cmd;
mod study;
mod study_job;
mod temporal_merge;
mod tune_restore;
mod ublk_vm;
mod validation;
mod written_paths;
mod zoned;

pub use ssdready_testkit::one_file_at_a_time;
