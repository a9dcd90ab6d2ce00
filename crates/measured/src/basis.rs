//! What the device can do, known apart from the study's own runs: its
//! basis. A study names "the device" as what holds the I/O only against a
//! basis — the built-in emulator's model (its parameters give every
//! resource's cap: `ssdready_emu::analytic::limit`), a measurement of the raw
//! device on the same machine, or a named specification. The highest rate
//! a study measured is never a basis: it is "the highest rate measured".

use serde::{Deserialize, Serialize};

/// One resource's cap on commands per second.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Bound {
    /// `controller`, `command slots`, `dies`, `channels`, `host link`,
    /// `DRAM units`.
    pub resource: String,
    /// Commands per second it allows.
    pub iops: f64,
    /// How the figure follows from the parameters.
    pub detail: String,
}

/// The analytic limit of one workload on an emulated device.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ModelLimit {
    /// Commands per second; None when no resource bounds it (`emu:null`).
    pub iops: Option<f64>,
    pub bw_bytes_per_s: Option<f64>,
    /// The resource that sets the limit, as words.
    pub bound_by: Option<String>,
    /// Every resource's cap.
    pub bounds: Vec<Bound>,
    /// Latency of one command on an idle device, ns.
    pub idle_latency_ns: f64,
}

/// The device's basis for 4 KiB random reads.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceBasis {
    /// Where it comes from: [`ANALYTIC_MODEL`] (the emulator's
    /// parameters), [`RAW_DEVICE`] (the device read alone on this
    /// machine) or [`SPECIFICATION`].
    pub source: String,
    /// In words: which model, which device, which specification.
    pub what: String,
    /// 4 KiB random reads at unlimited depth.
    pub read_4k: ModelLimit,
}

/// The emulator's model, from its parameters.
pub const ANALYTIC_MODEL: &str = "analytic model";
/// The device read alone, on the same machine.
pub const RAW_DEVICE: &str = "raw device";
/// A specification the user named.
pub const SPECIFICATION: &str = "specification";
/// Not a basis: what `device_limit.basis` says of a real device without
/// one (the highest rate the study measured).
pub const HIGHEST_MEASURED: &str = "highest rate measured";
