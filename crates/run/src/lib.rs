//! # ssdready-run
//!
//! The run engine, as a library: a run's request ([`request::RunArgs`])
//! is validated ([`validate`]), its targets opened and prepared
//! ([`prepare`], [`layout`], [`fileprep`], emulated devices in
//! [`devices`], zoned devices in [`zbd`]), its phases run by worker
//! threads ([`worker`]) and measured (CPU, disks, [`profiler`],
//! [`decompose`]), and the whole comes back as a
//! [`ssdready_core::result::RunResult`] ([`run::execute`], or
//! [`simulate::execute`] in the emulator's virtual time).

#![forbid(unsafe_code)]

mod agglog;
mod decompose;
pub mod devices;
pub mod failure;
mod fileprep;
mod layout;
mod logs;
pub mod output;
pub mod panics;
mod passthru;
pub mod phases;
mod prepare;
mod profiler;
mod progress;
pub mod ramdev;
mod replay;
pub mod request;
pub mod run;
pub mod simulate;
mod steadystate;
mod strategy;
pub mod sys;
pub mod validate;
mod worker;
mod zbd;
