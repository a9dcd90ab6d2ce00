//! The integration tests of this crate, one module per file, built as one
//! test binary (one link instead of one per file). Tests of one file may run
//! at the same time as each other, never beside another file's: each takes
//! [`one_file_at_a_time`] first, as separate binaries ran one after another.

use std::sync::{Condvar, Mutex};

mod common;

mod app;
mod app_cache;
mod characterize;
mod cli_docs;
mod cli_errors;
mod emu_devfile;
mod emu_faults;
mod emu_ftl;
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
mod safety;
mod stdout_errors;
mod steady_state;
mod strategies;
mod strategies_cmd;
mod study;
mod temporal_merge;
mod tune_restore;
mod ublk_vm;
mod validation;
mod written_paths;
mod zoned;

/// The file whose tests hold the machine, and how many of them run.
static TURN: Mutex<(Option<&'static str>, usize)> = Mutex::new((None, 0));
static TURN_ENDED: Condvar = Condvar::new();

/// Held while a test runs: its file's turn.
pub struct FileTurn;

/// Wait until no other file's test runs, then run beside this file's own.
/// `module` is the test's `module_path!()`: its file.
pub fn one_file_at_a_time(module: &'static str) -> FileTurn {
    let file = module.split("::").nth(1).unwrap_or(module);
    let mut t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    while t.0.is_some_and(|f| f != file) {
        t = TURN_ENDED.wait(t).unwrap_or_else(|e| e.into_inner());
    }
    *t = (Some(file), t.1 + 1);
    FileTurn
}

impl Drop for FileTurn {
    fn drop(&mut self) {
        let mut t = TURN.lock().unwrap_or_else(|e| e.into_inner());
        t.1 -= 1;
        if t.1 == 0 {
            t.0 = None;
            TURN_ENDED.notify_all();
        }
    }
}
