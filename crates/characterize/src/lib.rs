//! # ssdready-characterize: a device characterized the SNIA PTS way
//!
//! An SSD's figures depend on its history: fresh out of the box it takes
//! random writes at its program rate; once its erased blocks are used up,
//! garbage collection makes every host write cost several NAND writes and
//! IOPS fall off a cliff (Polte et al., Figure 5). A figure therefore means
//! something only once the device is preconditioned and in steady state.
//! `ssdready characterize` does what the SNIA Solid State Storage
//! Performance Test Specification asks:
//!
//! * [`plan`]: the tests (IOPS matrix, throughput, latency, write
//!   saturation) and their points; `--quick` takes a subset (from
//!   `ssdready-characterize-judge`, as are [`model`], [`cliff`] and
//!   [`text`]: the judging half, which the report reads without reaching
//!   the run);
//! * [`target`]: the request and its target checked before anything runs
//!   (typed [`target::Error`]s, each one line);
//! * [`driver`]: runs them through a [`driver::Runner`] — the emulator in
//!   virtual time ([`virt`]), or real runs through the run library
//!   ([`real`], handed a function that runs one job) — each test purged,
//!   preconditioned and run in rounds until steady state
//!   (`ssdready_core::steady`, PTS's rule) or the round limit;
//! * [`session`]: a checked request to its document: plan, runner,
//!   results assembled (progress through the driver's observer);
//! * [`cliff`]: the write cliff in the write-saturation series: fresh and
//!   steady levels, when and after how much data IOPS leave the fresh
//!   level, write amplification seen (emulator) or inferred;
//! * [`model`]: `characterize.json`, schema `ssdready.characterize`
//!   (`docs/characterize-schema.md`);
//! * [`text`]: the plan, the per-round lines and the summary as printed.

#![forbid(unsafe_code)]

pub use ssdready_characterize_judge::{cliff, model, plan, text};

pub mod driver;
pub mod real;
pub mod session;
pub mod target;
pub mod virt;
