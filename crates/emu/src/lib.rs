//! # ssdready-emu: an SSD you can run anywhere
//!
//! Few people can put a dozen SSDs in a server, and every measurement needs a
//! device whose behaviour is known. This crate is a RAM-backed SSD with a
//! flash translation layer and a timing model:
//!
//! * **Flash and its controller.** A NAND die reads a page in tens of
//!   microseconds, programs one in hundreds and erases a block in
//!   milliseconds; pages cannot be overwritten in place. An SSD hides this
//!   with parallelism — channels × dies, consecutive pages striped across
//!   them — and a flash translation layer (FTL) that writes out of place and
//!   maps logical pages to physical ones ([`ftl`]).
//! * **Garbage collection.** Overwritten pages become invalid; when free
//!   blocks run low, GC picks a victim block (greedy: fewest valid pages;
//!   or FIFO), copies its valid pages elsewhere and erases it. The copies are
//!   write amplification (WA): under uniform random writes it depends only on
//!   the spare area and the block size ([`analytic`]), which is how the FTL
//!   is tested. TRIM invalidates pages and so enlarges the spare area.
//! * **Time.** Each die, channel, controller core and the host link is busy
//!   until some time; a command's completion time is computed when it is
//!   submitted by reserving those resources in order ([`device`]). The same
//!   model runs in *virtual time* (a deterministic discrete-event run that
//!   `ssdready-run` drives, `ssdready_run::virtual_time`: days of writing
//!   in seconds, for experiments and tests; the host's command path it goes
//!   through is [`merge::virtual_time`]) or in
//!   *real time* ([`engine`]: commands complete at their modelled wall-clock
//!   times, so ssdready's engine measures real latencies through a real
//!   worker loop).
//!
//! * **Commands and the host.** A command may carry several extents (a
//!   vectored command): per-command costs are paid once, per-extent and
//!   per-byte costs for each extent ([`device`]). The host may have only
//!   `iface_depth` commands outstanding ([`iface`]); temporal merge
//!   ([`merge`]) gathers concurrent requests into vectored commands.
//!
//! Devices are described by [`config::Params`], with presets for the devices
//! of the papers this project reproduces and for today's drives; every key
//! has a range and every derived count is overflow-checked ([`geometry`]), so
//! a device that passes `Params::check` can be modelled to the end of any
//! workload: the model returns errors rather than panicking, and its
//! invariants are property-tested (`tests/ftl_props.rs`).
//! * **Zoned drives** ([`zoned`]): `zoned=1` makes the device host-managed,
//!   zones written at their write pointers, reset by the host, no GC.
//!
//! What a device and the jobs on it will take in memory is known before
//! anything is allocated ([`memory`]), so one that does not fit is refused.

#![forbid(unsafe_code)]

pub mod analytic;
pub mod calibrated;
pub mod config;
pub mod data;
pub mod devfile;
pub mod device;
pub mod die;
pub mod dram;
pub mod engine;
pub mod fault;
pub mod ftl;
pub mod geometry;
pub mod iface;
pub mod kernel;
pub mod ledger;
pub mod locked;
pub mod memory;
pub mod merge;
pub mod model_lock;
pub mod powercut;
pub mod queues;
pub mod shared;
pub mod stall;
pub mod zoned;
pub mod zoned_front;
