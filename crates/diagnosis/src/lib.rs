//! # ssdready-diagnosis: what holds the I/O back, from recorded measurements
//!
//! The judging half of `ssdready study`, kept apart from the running half
//! (`ssdready-study`: the plan, the runs, the drives) so that every verdict
//! can be tested from recorded measurements, without root and without a
//! device. It holds no system calls: the measurements come in as data —
//! the runs' figures, the inventory of what can cap I/O on the machine
//! (cgroup limits, CPU allowance, the device's queue) and the block-device
//! stack under the target — and verdicts come out.

#![forbid(unsafe_code)]

pub mod limits;
