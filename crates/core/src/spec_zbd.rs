//! The options of fio's `zonemode=zbd` (zone capacity, open-zone limits,
//! reset thresholds, sizes in zones): part of the job language. The zone
//! rules that follow them are `ssdready_workload::zbd`'s.

use serde::{Deserialize, Serialize};

/// The zbd options of a job (fio's names).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ZbdOptions {
    /// `zonecapacity` (0: the zone size; only for emulated zones).
    pub zone_capacity: u64,
    pub max_open_zones: u32,
    pub job_max_open_zones: u32,
    /// `zone_reset_threshold`, `zone_reset_frequency` (0 to 1).
    pub reset_threshold: f64,
    pub reset_frequency: f64,
    pub read_beyond_wp: bool,
    pub ignore_zone_limits: bool,
    /// `size`, `offset`, `io_size` given in zones (`8z`): resolved once
    /// the zone size is known.
    pub size_zones: Option<u64>,
    pub offset_zones: Option<u64>,
    pub io_size_zones: Option<u64>,
}

impl ZbdOptions {
    /// Sizes in zones need zonemode=zbd: (option, why) when given without.
    pub fn check(&self, mode: crate::spec_io::ZoneMode) -> Result<(), (&'static str, String)> {
        if mode == crate::spec_io::ZoneMode::Zbd {
            return Ok(());
        }
        let given = [
            ("offset", self.offset_zones),
            ("size", self.size_zones),
            ("io_size", self.io_size_zones),
        ];
        match given.iter().find_map(|(o, n)| n.map(|n| (*o, n))) {
            Some((opt, n)) => Err((
                opt,
                format!("{opt}={n}z is a size in zones, which needs zonemode=zbd"),
            )),
            None => Ok(()),
        }
    }
}
