//! # ssdready-io
//!
//! The part of ssdready that talks to the kernel.
//!
//! * [`engine`] — the [`engine::Engine`] trait, shaped like fio's
//!   `queue` / `commit` / `getevents` split so one worker loop drives every
//!   engine: a synchronous engine completes inside `queue`; an asynchronous
//!   one queues, submits a batch in `commit` and hands completions back in
//!   `getevents`. A target that brings its own engine (the SSD emulator)
//!   implements the same trait.
//! * [`engines`] — one file per engine: `null` (no I/O: the tool's own cost
//!   per I/O), `psync` (pread/pwrite, and fio's other synchronous names),
//!   `uring` (io_uring), `uring_cmd` (io_uring passthrough), `libaio`,
//!   `posixaio`, `mmap`, `splice`, `sg`, `fileop` (the file and directory
//!   engines), `libpmem`, `devdax` and `e4defrag`, with `offload` (fio's
//!   `io_submit_mode=offload`) around any of them.
//! * [`target`] — resolving, checking, laying out and opening files and block
//!   devices, including the refusal to write over data.
//! * [`hwperf`] — hardware cycles and instructions counters (counting mode).
//! * [`dm`] — a device-mapper device's table (`DM_TABLE_STATUS`).
//! * [`mem`] — where I/O buffers live (fio's `mem`), `lockmem`, `nice`.
//! * [`clock`] — the timestamp source (the TSC where it is constant).
//! * [`buf`] — page-aligned I/O buffers for O_DIRECT.
//! * [`ublk`] — the control and queue rings of a ublk server (the emulated
//!   drive behind the kernel).
//! * [`fuse_uring`] — the ring of a FUSE server whose requests come
//!   through io_uring (the emulated drive's FUSE transport where the
//!   kernel offers it).
//! * [`written`] — the check of every path ssdready writes that is not a
//!   job's target (never a block device), waits on FIFOs that end on a
//!   stop request, and reads of user-named inputs capped by bytes read.
//! * [`writer`] — the one writer of those paths: atomic replaces through a
//!   temporary file made with `O_EXCL | O_NOFOLLOW`, and files written in
//!   place that must be regular.
//!
//! This is the only crate of the workspace with `unsafe`; every unsafe block
//! says why it is sound in a `// SAFETY:` comment.

pub mod bpf;
pub mod buf;
pub mod clock;
pub mod dm;
pub mod engine;
pub mod engines;
pub mod fault;
pub mod fuse_uring;
pub mod hwperf;
pub mod kdev;
pub mod mem;
pub mod perf;
pub mod placement;
pub mod sync_engine;
pub mod target;
pub mod ublk;
pub mod writer;
pub mod written;

pub use engine::{Engine, EngineError, Queued};
pub use engines::def::AnyEngine;
pub use engines::open_engine;
