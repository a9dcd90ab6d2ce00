//! Capacity at a latency target (`ssdready study --slo p99=1ms`): the
//! search and its document are the diagnosis's
//! (`ssdready_diagnosis::capacity`); here, each point's run request.

pub use ssdready_diagnosis::capacity::*;
use ssdready_run::RunRequest;

/// The request of one point: the workload's (from
/// [`crate::jobs::request`], the measured job last) with the open loop's
/// rate, or none for the closed-loop peak; `seed` changes the random
/// offsets and the arrival draws.
pub fn point_request(base: &RunRequest, iops: u64, seed: u32) -> RunRequest {
    let mut r = base.clone();
    if iops > 0 {
        r.set("rate_iops", iops)
            .set("rate_process", "poisson")
            .set("lat_from", "schedule");
    }
    if seed > 0 {
        r.set("randseed", 0x5eed_0000u64 + u64::from(seed));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On an emulated drive in virtual time, the search's answer against
    /// the truth of the same points: the answer meets the target, 2 % of
    /// the peak more does not.
    #[test]
    fn on_an_emulated_drive_the_answer_is_the_edge_of_the_virtual_sweep() {
        let mut base = RunRequest::default();
        base.job("slo")
            .set("filename", "emu:nvm-lowlat,size=64m")
            .set("rw", "randread")
            .set("bs", "4k")
            .set("iodepth", 64)
            .flag("norandommap")
            .flag("time_based")
            .set("runtime", "200ms");
        let mut measure = |iops: u64, seed: u32| {
            crate::virt::run(&point_request(&base, iops, seed)).map(|(s, _)| s)
        };
        let slo = Slo::parse("p99=60us").unwrap();
        let c = search(&slo, &mut measure).unwrap();
        // 7 units of 10 µs: 700K IOPS closed loop.
        assert!(
            (650_000.0..=710_000.0).contains(&c.peak_iops),
            "{}",
            c.peak_iops
        );
        let s = c.sustained_iops.expect("a load meets 60 µs");
        let at = |iops: f64| point(&slo, iops, &measure(iops as u64, 0).unwrap(), "check");
        assert!(at(s).meets);
        let above = at(s + 0.02 * c.peak_iops);
        assert!(!above.meets, "{s}: {above:?}");
        eprintln!("{}", sentence(&c, "4 KiB random reads"));
    }
}
