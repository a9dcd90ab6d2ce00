//! # ssdready-workload
//!
//! What each worker does next: pure decisions, no syscalls, made from a
//! job's specification (the job language, `ssdready-core`) and from what
//! the worker has seen so far.
//!
//! * [`fileset`]: a clone's files, named and sized as fio names and sizes
//!   them (the caller supplies what exists and how big it is);
//! * [`plan`]: the next I/O's file, direction, offset and size (fio's
//!   offset and block-size generation), and when the job's work is done;
//! * [`jobflow`]: the order of everything one worker does — passes, syncs,
//!   verification reads, think time, trims — around the plan;
//! * [`replay`]: recording what a job issued and replaying a trace, in
//!   fio's and blktrace's formats, in place of the plan;
//! * [`zbd`]: the rules of fio's `zonemode=zbd` (writes only at write
//!   pointers, open-zone limits, resets);
//! * [`rate`]: fio's rate limits, per direction;
//! * [`verify`]: the blocks a verifying job writes and the checks of what
//!   it reads back, in fio's layout, and fio's verify state files;
//! * [`buffers`]: what a write's buffer holds (compressibility,
//!   deduplication, patterns, scrambling).
//!
//! Data flows one way: [`ssdready_core::JobSpec`] → [`plan::IoPlan`] (with
//! [`jobflow::JobFlow`] around it) → the worker loop in `ssdready-run`,
//! which hands each [`ssdready_core::IoReq`] to an engine (`ssdready-io`)
//! and records its completion in `ssdready_core::stats`. The types a
//! `JobSpec` holds (verify, buffer, zone and replay options) are the job
//! language's, in core's `spec_*` modules; nothing here is named by core.

#![forbid(unsafe_code)]

pub mod buffers;
pub mod fileset;
pub mod jobflow;
pub mod plan;
pub mod rate;
pub mod replay;
pub mod verify;
pub mod zbd;
