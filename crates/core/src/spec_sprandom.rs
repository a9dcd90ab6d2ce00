//! fio's `sprandom` preconditioning: its options (`sprandom`,
//! `spr_num_regions`, `spr_op`, `spr_cs`), the regions' sizes and the
//! device's physical size it writes once. The rules fio applies to a job
//! that asks for it (random writes, `random_generator=lfsr`,
//! `norandommap=1`, one file) are checked with the job
//! ([`crate::spec::JobSpec::validate`]). The options' table is
//! `option_table_sprandom`. The offsets themselves are the plan's
//! (`ssdready_workload`'s `plan::sprandom`).

use serde::{Deserialize, Serialize};

/// `sprandom` and its options.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprandomSpec {
    /// `sprandom=1`.
    pub on: bool,
    /// `spr_num_regions` (default 100).
    pub regions: u32,
    /// `spr_op`: the over-provisioning ratio, in (0, 1) (default 0.15).
    pub op: f64,
    /// `spr_cs`: the device's cache in bytes (0: none, the default).
    pub cache: u64,
    /// `random_generator` as written: whether it named lfsr.
    #[serde(skip)]
    pub lfsr_given: Option<bool>,
    /// `norandommap` as written.
    #[serde(skip)]
    pub norandommap_given: Option<bool>,
}

impl Default for SprandomSpec {
    fn default() -> Self {
        SprandomSpec {
            on: false,
            regions: 100,
            op: 0.15,
            cache: 0,
            lfsr_given: None,
            norandommap_given: None,
        }
    }
}

impl SprandomSpec {
    /// Not asked for (then it is left out of a saved spec).
    pub fn is_off(&self) -> bool {
        !self.on
    }

    /// The regions that `logical` bytes written in blocks of `bs` make:
    /// each must hold a block, and no less than the device's cache.
    pub fn check_size(
        s: &SprandomSpec,
        logical: u64,
        bs: u64,
    ) -> Result<(), (&'static str, String)> {
        let physical = physical_size(s.op, logical, bs);
        let region = physical / u64::from(s.regions.max(1));
        if region < bs.max(1) {
            return Err((
                "spr_num_regions",
                format!(
                    "{} regions of {physical} bytes leave regions smaller than one block of {bs} \
                     (allowed: at most {})",
                    s.regions,
                    physical / bs.max(1)
                ),
            ));
        }
        if s.cache > region {
            return Err((
                "spr_cs",
                format!(
                    "spr_cs {} must be smaller than a region ({region} bytes of {physical} in {} \
                     regions; at most {} regions allowed)",
                    s.cache,
                    s.regions,
                    physical / s.cache
                ),
            ));
        }
        Ok(())
    }
}

/// The physical capacity behind `logical` bytes with over-provisioning
/// `op` (logical·(1+op), rounded up, then down to a whole block of `bs`).
pub fn physical_size(op: f64, logical: u64, bs: u64) -> u64 {
    let extra = (logical as f64 * op).ceil() as u64;
    let size = logical.saturating_add(extra);
    size - size % bs.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{build_jobs, RawOption, Section};
    use crate::spec::JobSpec;

    fn job(opts: &str) -> Result<JobSpec, String> {
        let options = format!("filename=/dev/shm/x {opts}")
            .split_whitespace()
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
                RawOption::cli(k, Some(v))
            })
            .collect();
        let sec = Section {
            name: "j".into(),
            global: false,
            options,
        };
        build_jobs(&[sec])
            .map(|mut v| v.remove(0))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn sprandom_sets_lfsr_and_norandommap() {
        let s = job("rw=randwrite sprandom=1 size=32m").unwrap();
        assert!(s.lfsr && s.norandommap && !s.rand32);
        assert_eq!(
            (s.sprandom.regions, s.sprandom.op, s.sprandom.cache),
            (100, 0.15, 0)
        );
        let off = job("rw=randwrite size=32m").unwrap();
        assert!(!off.lfsr && !off.norandommap);
    }

    #[test]
    fn fio_refusals() {
        for (opts, word) in [
            (
                "rw=randwrite sprandom=1 size=32m random_generator=tausworthe",
                "lfsr",
            ),
            (
                "rw=randwrite sprandom=1 size=32m norandommap=0",
                "norandommap=1",
            ),
            ("rw=randread sprandom=1 size=32m", "randwrite"),
            ("rw=write sprandom=1 size=32m", "randwrite"),
            (
                "rw=randwrite sprandom=1 size=32m spr_num_regions=2000 spr_cs=32k",
                "spr_cs",
            ),
            (
                "rw=randwrite sprandom=1 size=32m spr_num_regions=50 spr_cs=32m",
                "spr_cs",
            ),
            ("rw=randwrite sprandom=1 size=32m spr_op=1", "(0, 1)"),
            ("rw=randwrite sprandom=1 size=32m spr_op=0", "(0, 1)"),
            (
                "rw=randwrite sprandom=1 size=32m spr_num_regions=0",
                "at least 1",
            ),
            (
                "rw=randwrite sprandom=1 size=64k spr_num_regions=100",
                "one block",
            ),
            (
                "rw=randwrite sprandom=1 size=32m bsrange=4k-8k",
                "one block size",
            ),
        ] {
            let e = job(opts).expect_err(opts);
            assert!(e.contains(word), "{opts}: {e}");
        }
        for opts in [
            "rw=randwrite sprandom=1 size=32m random_generator=lfsr norandommap=1",
            "rw=randwrite sprandom=1 size=32m spr_num_regions=100 spr_cs=32k",
            "rw=randwrite sprandom=1 size=32m spr_op=0.5 spr_num_regions=50",
        ] {
            job(opts).expect(opts);
        }
    }

    #[test]
    fn physical_size_rounds_up_then_to_a_block() {
        // 32 MiB at 10%: 36,909,875.2 → 36,909,876 → 36,909,056 (4k blocks).
        assert_eq!(physical_size(0.10, 32 << 20, 4096), 36_909_056);
        assert_eq!(physical_size(0.5, 1 << 20, 4096), 3 << 19);
    }
}
