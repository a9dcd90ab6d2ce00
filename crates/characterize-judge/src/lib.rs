//! # ssdready-characterize-judge: the SNIA PTS characterization, judged
//!
//! The judging half of `ssdready characterize`, with nothing that runs
//! I/O (no `run`, `io`, `emu` or `study`), so that the report reads a
//! characterization without reaching the engines — as `ssdready-diagnosis`
//! is to the study:
//!
//! * [`plan`]: the tests (IOPS matrix, throughput, latency, write
//!   saturation) and their points; `--quick` takes a subset;
//! * [`model`]: `characterize.json`, schema `ssdready.characterize`
//!   (`docs/characterize-schema.md`);
//! * [`cliff`]: the write cliff in the write-saturation series: fresh and
//!   steady levels, when and after how much data IOPS leave the fresh
//!   level, write amplification seen (emulator) or inferred;
//! * [`text`]: the plan, the per-round lines and the summary as printed.
//!
//! The running half (the driver, its runners, the session) is
//! `ssdready-characterize`, which re-exports these modules.

#![forbid(unsafe_code)]

pub mod cliff;
pub mod model;
pub mod plan;
pub mod text;
