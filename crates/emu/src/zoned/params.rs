//! The zoned keys' values ([`ZoneParams`]: `zoned`, `zone_size`,
//! `zone_capacity`, the zone limits, `read_beyond_wp`), set and written
//! back as the keys take them. Whether they fit a device is checked with
//! the device, in [`super`] (`ZoneParams::check`).

use crate::config::error::ParamError;
use crate::config::limits::DEFAULT_ZONE_SIZE;
use serde::{Deserialize, Serialize};

/// What a read past a zone's write pointer returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BeyondWp {
    /// Zeros, as ZNS and SMR drives return for unwritten blocks.
    #[default]
    Zeros,
    /// EIO.
    Error,
}

/// The zoned keys' values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ZoneParams {
    pub zoned: bool,
    /// Bytes per zone (0: [`DEFAULT_ZONE_SIZE`]).
    pub zone_size: u64,
    /// Writable bytes per zone (0: the zone size).
    pub zone_capacity: u64,
    /// Open zones at most (0: no limit).
    pub max_open_zones: u32,
    /// Open and closed zones at most (0: no limit).
    pub max_active_zones: u32,
    pub read_beyond_wp: BeyondWp,
}

impl ZoneParams {
    /// The zone size in effect.
    pub fn size(&self) -> u64 {
        if self.zone_size == 0 {
            DEFAULT_ZONE_SIZE
        } else {
            self.zone_size
        }
    }

    /// The zone capacity in effect.
    pub fn capacity(&self) -> u64 {
        if self.zone_capacity == 0 {
            self.size()
        } else {
            self.zone_capacity
        }
    }

    /// Set key `k`; None when `k` is not a zoned key.
    pub fn set(&mut self, k: &str, v: &str) -> Option<Result<(), ParamError>> {
        let unit = |why| ParamError::Unit { key: k.into(), why };
        let size = |v: &str| ssdready_core::units::parse_size(v, 1024).map_err(unit);
        let count = |v: &str| {
            v.parse::<u32>().map_err(|_| ParamError::NotCount {
                key: k.into(),
                value: v.into(),
            })
        };
        let r = match k {
            "zoned" => ssdready_core::units::parse_bool(v)
                .map(|b| self.zoned = b)
                .map_err(unit),
            "zone_size" => size(v).and_then(|n| match n {
                0 => Err(ParamError::ZeroZoneSize { key: k.into() }),
                n => {
                    self.zone_size = n;
                    Ok(())
                }
            }),
            "zone_capacity" => size(v).map(|n| self.zone_capacity = n),
            "max_open_zones" => count(v).map(|n| self.max_open_zones = n),
            "max_active_zones" => count(v).map(|n| self.max_active_zones = n),
            "read_beyond_wp" => match v {
                "zeros" | "zero" | "0" => Ok(BeyondWp::Zeros),
                "error" | "eio" => Ok(BeyondWp::Error),
                _ => Err(ParamError::Choice {
                    key: k.into(),
                    value: v.into(),
                    allowed: "zeros, error",
                }),
            }
            .map(|b| self.read_beyond_wp = b),
            _ => return None,
        };
        Some(r)
    }

    /// The keys with their values (none when the device is not zoned).
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        if !self.zoned {
            return Vec::new();
        }
        vec![
            ("zoned", "1".into()),
            ("zone_size", self.size().to_string()),
            ("zone_capacity", self.capacity().to_string()),
            ("max_open_zones", self.max_open_zones.to_string()),
            ("max_active_zones", self.max_active_zones.to_string()),
            (
                "read_beyond_wp",
                match self.read_beyond_wp {
                    BeyondWp::Zeros => "zeros",
                    BeyondWp::Error => "error",
                }
                .into(),
            ),
        ]
    }
}
