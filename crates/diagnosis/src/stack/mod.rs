//! A block-device stack: the layers between the study's target and the
//! physical devices under it (md RAID, device-mapper targets, loop
//! devices, partitions), each named with what the kernel says of it, and
//! every device's own counters over each run ([`ssdready_measured::stack_layers::MemberCounters`]).
//! [`judge()`] says which member or layer holds the I/O, from those
//! counters alone — the slow member, an uneven split, read-modify-write
//! on a parity RAID, I/O misaligned with the chunk — or "not identified";
//! [`ceiling()`], the stack's IOPS and bandwidth against the sum of its
//! physical members read alone, and the members read all at once;
//! [`cpu`], each layer's CPU per I/O from its kernel threads and the
//! kernel profile, and the layer whose one thread holds a CPU.
//!
//! The probe (`ssdready_probe::stack`) reads the stack from sysfs and the
//! device-mapper ioctl; nothing here makes a system call.

pub mod ceiling;
#[cfg(test)]
mod ceiling_tests;
pub mod ceiling_words;
pub mod cpu;
pub mod finding;
pub mod judge;
pub mod layer_cpu;
pub mod queue;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_direction;
pub mod verdicts;

pub use ceiling::{ceiling, MemberAlone, MemberBandwidth, SizeCeiling, StackCeiling, Together};
pub use judge::{judge, MemberFigures, RunFigures, StackFinding, StackJudgement};
pub use verdicts::add_verdicts;
