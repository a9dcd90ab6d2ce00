//! Device parameters and presets.
//!
//! A device is written `emu:PRESET[,key=value...]`, e.g.
//! `--filename=emu:nvme-tlc,size=16g,op=0.28`; every field of [`Params`] is a
//! key. `ssdready emu presets` lists the presets with their parameters.
//! Sources for the constants: shared/notes/ssd-models.md (the papers' devices,
//! NVMeVirt and FEMU defaults); each preset's comment says what it was fitted
//! to, and the emulator's own tests check the fit.
//!
//! The parts, lowest first: the limits every key is checked against
//! ([`limits`]) and the errors that name them ([`ParamError`]); the kinds
//! a few keys choose between ([`GcPolicy`], [`CompletionMode`]); the
//! parameters themselves ([`Params`]); the presets ([`preset`]). This
//! module is above them all: it parses a whole target ([`Params::parse`],
//! a device file through [`crate::devfile`]) and checks it
//! ([`Params::check`]: the geometry, the stalls, the zones).

mod arg;
pub(crate) mod error;
pub mod limits;
mod modes;
pub(crate) mod params;
pub(crate) mod presets;
pub use error::{DeviceFileError, ParamError};
pub use limits::PRESETS;
pub use modes::{CompletionMode, GcPolicy};
pub use params::Params;
pub use presets::preset;

impl Params {
    /// Parse `PRESET[,key=value...]` (the part after `emu:`; empty means the
    /// default preset). Errors name the key and the allowed values.
    pub fn parse(spec: &str) -> Result<Params, ParamError> {
        let mut parts = spec.split(',').map(str::trim).filter(|s| !s.is_empty());
        let first = parts.clone().next().unwrap_or("");
        let mut p = if let Some(path) = first.strip_prefix("file=") {
            parts.next();
            crate::devfile::load(std::path::Path::new(path))?
        } else if first.is_empty() || first.contains('=') {
            Params::default()
        } else {
            parts.next();
            preset(first).ok_or_else(|| ParamError::UnknownPreset { name: first.into() })?
        };
        for kv in parts {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| ParamError::NotKeyValue { text: kv.into() })?;
            p.set(k.trim(), v.trim())?;
        }
        p.check()?;
        Ok(p)
    }

    /// Consistency checks: every key in its range, and a geometry the
    /// model can serve ([`crate::geometry::check`]). One line naming the key
    /// and the allowed values.
    pub fn check(&self) -> Result<(), ParamError> {
        crate::geometry::check(self)?;
        if self.service_exp && !self.dram {
            return Err(ParamError::ExpNeedsDram);
        }
        self.stall.check()?;
        self.zoned.check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_consistent() {
        for (name, _) in PRESETS {
            let p = preset(name).unwrap();
            p.check().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }

    #[test]
    fn overrides_and_errors() {
        let p = Params::parse("x25e,size=64m,op=0.28,read=30us").unwrap();
        assert_eq!(p.size, 64 << 20);
        assert_eq!(p.op, 0.28);
        assert_eq!(p.read_ns, 30_000);
        assert_eq!(Params::parse("").unwrap().preset, "nvme-tlc");
        assert_eq!(Params::parse("size=2g").unwrap().size, 2 << 30);
        assert!(Params::parse("nope")
            .unwrap_err()
            .to_string()
            .contains("allowed: x25e"));
        assert!(Params::parse("x25e,colour=red")
            .unwrap_err()
            .to_string()
            .contains("unknown emulator parameter 'colour'"));
        assert!(Params::parse("x25e,gc=lru")
            .unwrap_err()
            .to_string()
            .contains("greedy, fifo"));
    }

    #[test]
    fn absurd_times_and_rates_are_refused_with_the_range() {
        let e = Params::parse("x25e,read_ns=1000000000000000")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'read_ns'") && e.contains("out of range (allowed: 0 to"),
            "{e}"
        );
        assert!(Params::parse("null,dram_per_4k_ns=61s").is_err());
        assert!(Params::parse("null,coalesce_us=100000000").is_err());
        let e = Params::parse("x25e,channel_mbps=0.000001")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'channel_mbps'") && e.contains("out of range"),
            "{e}"
        );
        assert!(Params::parse("x25e,link_mbps=-5").is_err());
        assert!(Params::parse("x25e,link_mbps=NaN").is_err());
        assert!(
            Params::parse("x25e,link_mbps=0").is_ok(),
            "0: no link limit"
        );
        for (name, _) in PRESETS {
            preset(name).unwrap().check().unwrap();
        }
    }

    #[test]
    fn alpha_effective_subtracts_the_gc_reserve() {
        let p = Params::parse("nvme-tlc,size=512m,op=0.28,channels=4,dies=1").unwrap();
        let a = p.alpha_effective();
        assert!(a < 1.28 && a > 1.25, "{a}");
    }
}

#[cfg(test)]
mod parse_limits {
    use super::*;

    #[test]
    fn negative_nan_or_infinite_rates_are_refused_not_unlimited() {
        for kv in [
            "link_mbps=-1",
            "channel_mbps=nan",
            "link_mbps=inf",
            "op=-0.5",
            "op=NaN",
            "op=1e300",
        ] {
            let e = Params::parse(&format!("x25e,{kv}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains("allowed"), "{kv}: {e}");
        }
        assert_eq!(
            Params::parse("x25e,link_mbps=0").unwrap().link_mbps,
            0.0,
            "0: no limit"
        );
    }

    #[test]
    fn counts_beyond_u32_are_refused_not_truncated() {
        for kv in [
            "channels=4294967297",
            "dies=4294967296",
            "pages_per_block=4294967298",
            "page_bytes=4g",
            "gc_fg_free=4294967295",
        ] {
            let e = Params::parse(&format!("x25e,{kv}"))
                .unwrap_err()
                .to_string();
            let key = kv.split('=').next().unwrap();
            assert!(e.contains(key), "{kv}: {e}");
        }
    }

    #[test]
    fn geometry_helpers_saturate_instead_of_panicking() {
        let p = Params {
            channels: u32::MAX,
            dies_per_channel: u32::MAX,
            pages_per_block: u32::MAX,
            gc_fg_free: u32::MAX,
            page_bytes: 0,
            size: u64::MAX,
            ..Params::default()
        };
        assert_eq!(p.dies(), u32::MAX);
        assert!(p.alpha_effective().is_finite());
        assert!(p.check().is_err());
    }
}

#[cfg(test)]
mod nand_keys {
    use super::*;

    #[test]
    fn page_type_times_set_the_mean_and_one_time_clears_them() {
        let p = Params::parse("nvme-tlc,program_ns=100us/200us/600us").unwrap();
        assert_eq!(p.program_types_ns, [100_000, 200_000, 600_000]);
        assert_eq!(p.program_ns, 300_000);
        let p = Params::parse("nvme-tlc,program_ns=1ms").unwrap();
        assert!(p.program_types_ns.is_empty());
        assert_eq!(p.program_ns, 1_000_000);
        let e = Params::parse("nvme-tlc,program_ns=1/2/3/4/5")
            .unwrap_err()
            .to_string();
        assert!(e.contains("5 page types (allowed: 1 to 4"), "{e}");
        let e = Params::parse("nvme-tlc,program_ns=1us/2s")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'program_ns'") && e.contains("out of range"),
            "{e}"
        );
    }

    #[test]
    fn slc_cache_is_a_share_of_the_size() {
        assert_eq!(
            Params::parse("nvme-tlc,slc_cache=25%").unwrap().slc_cache,
            0.25
        );
        assert_eq!(
            Params::parse("nvme-tlc,slc_cache=0.5").unwrap().slc_cache,
            0.5
        );
        for bad in ["150%", "-0.1", "nan"] {
            let e = Params::parse(&format!("nvme-tlc,slc_cache={bad}"))
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("'slc_cache'") && e.contains("allowed"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn impossible_nand_geometries_are_refused_with_the_reason() {
        for (kv, why) in [
            ("flash_page_bytes=2k", "at least page_bytes=4096"),
            ("flash_page_bytes=24k", "a power of two"),
            ("planes=3", "multiples of 12"),
            ("planes=0", "'planes': 0 is out of range (allowed: 1 to 16)"),
            ("pages_per_block=40", "multiples of 16"),
            ("suspend_max=5000", "'suspend_max': 5000 is out of range"),
            ("suspend_ns=2s", "'suspend_ns'"),
            ("flash_block_bytes=2g", "'flash_block_bytes'"),
        ] {
            let e = Params::parse(&format!("nvme-tlc,{kv}"))
                .unwrap_err()
                .to_string();
            assert!(e.contains(why), "{kv}: {e}");
            assert_eq!(e.lines().count(), 1);
        }
        // Six planes fit a block of a multiple of 24 pages.
        assert!(Params::parse("nvme-tlc,planes=6,pages_per_block=48").is_ok());
    }
}
