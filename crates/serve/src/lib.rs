//! # ssdready-serve: `ssdready server`'s policy, confinement and jobs
//!
//! What the server decides, apart from the binary that parses its switches
//! and prints: fio's wire protocol is `ssdready-fleet`'s (`server::Server`,
//! `policy`), and this crate is the run engine behind it, which needs the
//! run library (so the fleet crate stays free of `run` and `io`).
//!
//! * [`setup`]: the server's directory (its own, `work/`, `users/`), the
//!   users who may connect, the allowed places, the job limits, the
//!   start-up line saying what it allows;
//! * [`fio_server`]: fio's `--server=SPEC` and `--daemonize=FILE` read as
//!   the server they ask for;
//! * [`engine`]: the fleet server's [`Runner`](ssdready_fleet::server::Runner):
//!   who a client is, and its jobs checked and run in processes of their own
//!   with the client's rights where the server takes them;
//! * [`spawn`]: the server's side of a job's process: started as
//!   `ssdready server-job` (this same program), its answer read with
//!   bounds, every wait ended by the stop flag or the job's time limit;
//! * [`job`]: the job's side: its limits and user taken, its order read,
//!   confined to the allowed places ([`confine`]), the job checked against
//!   the policy and run as `ssdready run` would run it;
//! * [`confine`]: resource limits, the client's user taken, Landlock.
//!
//! Errors are values: [`job::JobError`] for the job's process, text where
//! the fleet's `Runner` asks for it (its caller writes it to the client);
//! nothing here ends the process.

#![forbid(unsafe_code)]

pub mod confine;
pub mod engine;
pub mod fio_server;
pub mod job;
pub mod setup;
pub mod spawn;
