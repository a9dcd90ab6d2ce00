//! What virtual time refuses before or while it runs: an open-loop rate no
//! queue depth can serve, and a run whose time stops advancing.

use ssdready_core::spec::JobSpec;
use ssdready_core::Ddir;
use ssdready_emu::config::Params;
use ssdready_emu::device::Op;
use ssdready_emu::dram::DramUnits;

/// Why an open-loop job (`lat_from=schedule`) asks for more than its
/// `iodepth` cap can ever serve, where that is known: a DRAM-mode device
/// with fixed service, whose idle latency for the job's smallest block is
/// exact (each slot holds an I/O at least that long).
pub fn unservable_rate(spec: &JobSpec, p: &Params) -> Option<String> {
    if !spec.sched.lat_from_schedule || !p.dram || p.service_exp {
        return None;
    }
    let per_worker = ssdready_core::arrivals::offered_iops(spec) / f64::from(spec.numjobs.max(1));
    let bs = u64::from(spec.bs.min().max(1));
    let pages = bs.div_ceil(u64::from(p.page_bytes.max(1)));
    let units = DramUnits::new(p, 0);
    let latency = units.submit(0, Op::Read, bs, pages, 1);
    if latency == 0 {
        return None;
    }
    let depth = spec.iodepth.max(1);
    let most = f64::from(depth) * 1e9 / latency as f64;
    (per_worker > most * (1.0 + 1e-9)).then(|| {
        format!(
            "job '{}': lat_from=schedule with {} I/Os per second per worker is more than iodepth={depth} can ever serve \
             on emulated device '{}' (each {bs}-byte I/O takes at least {latency} ns there: at most {} per second); \
             raise iodepth or lower rate_iops/rate",
            spec.name,
            per_worker.round(),
            p.preset,
            most.floor()
        )
    })
}

/// The refusal of a run in which virtual time does not pass: what
/// happened, which I/Os cost nothing, and what to do.
pub(super) fn no_time(p: &Params, what: &str, instant: [bool; 3]) -> String {
    let ops: Vec<&str> = Ddir::ALL
        .iter()
        .filter(|d| instant[d.idx()])
        .map(|d| match d {
            Ddir::Read => "reads",
            Ddir::Write => "writes",
            Ddir::Trim => "trims",
        })
        .collect();
    let ops = if ops.is_empty() {
        "I/Os".to_string()
    } else {
        ops.join(" and ")
    };
    format!(
        "{what} ({ops} take 0 ns on emulated device '{}' and host_ns={}); in virtual time every I/O \
         must take time: give them a cost (e.g. host_ns=1us on the device, the host's time per I/O, \
         or nonzero device timings), or run the job in real time with 'ssdready run'",
        p.preset, p.host_ns
    )
}
