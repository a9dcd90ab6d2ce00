//! # ssdready-cmdline: the `run` command line, as fio reads it
//!
//! What a `run` command line (and ssdready called as `fio`) means, apart
//! from the binary that prints: it decides, the binary parses clap's
//! commands, shows progress and writes the outputs.
//!
//! * [`args`]: argv and job files to [`args::RunArgs`] (global options,
//!   jobs, the tool's own switches; job files and includes through a
//!   [`args::Source`], so the fleet's server reads a client's texts from
//!   memory) and from it the run library's request;
//! * [`client`]: `run --client`'s values, each with its own job files;
//! * [`fioswitch`]: fio's global switches (`--max-jobs`, `--debug`,
//!   `--readonly`, `--aux-path`, `--warnings-fatal`, …) and what they
//!   refuse;
//! * [`debug_io`]: `--debug=io` and `--debug=verify`'s lines, made from the
//!   jobs' iologs;
//! * [`fio_mode`]: ssdready called as `fio`: its version line, its usage,
//!   `--inflate-log`'s reading of a compressed log.
//!
//! Errors are values (`SpecError`, or a line of text where the run
//! library's checks speak text); nothing here ends the process.

#![forbid(unsafe_code)]

pub mod args;
pub mod client;
pub mod debug_io;
pub mod fio_mode;
pub mod fioswitch;
