//! Per-I/O priorities in the worker (fio's cmdprio, see
//! [`ssdready_core::sched`]): before each read or write the worker draws
//! whether the I/O carries a priority of its own, tells the engine (which
//! puts it in the request), and remembers the priority's index so that the
//! completion's latency is kept per priority and its log line shows it.
//! The thread's own priority (`prioclass`/`prio`, index 0) is set on the
//! worker thread with `ioprio_set` before the engine opens.

use ssdready_core::resolved::PrioConfig;
use ssdready_core::sched::CmdPrio;
use ssdready_core::spec::JobSpec;
use ssdready_core::stats::DirStats;
use ssdready_core::stats::PrioLat;
use ssdready_core::Ddir;

/// The worker's priorities.
pub(super) struct Prios {
    /// Per direction (read, write), the priority values I/Os may carry,
    /// the thread's first.
    values: [Vec<u16>; 2],
    cmd: Option<CmdPrio>,
    /// Draws (xorshift64).
    state: u64,
    /// Per-priority latency is total latency (`lat_percentiles`), else
    /// completion latency.
    total: bool,
}

impl Prios {
    /// The priorities the job resolved as `cfg`, drawn from `seed`.
    pub fn new(cfg: &PrioConfig, seed: u64) -> Box<Prios> {
        Box::new(Prios {
            values: cfg.values.clone(),
            cmd: cfg.cmd.clone(),
            state: seed ^ 0x2545_f491_4f6c_dd1d | 1,
            total: cfg.total,
        })
    }

    /// Whether I/Os get priorities of their own (the engine must be told).
    pub fn per_io(&self) -> bool {
        self.cmd.is_some()
    }

    /// The priority of the next I/O: (index, value for the request; 0 to
    /// keep the thread's).
    #[inline]
    pub fn pick(&mut self, ddir: Ddir, len: u32) -> (u8, u16) {
        let Some(cmd) = &self.cmd else {
            return (0, 0);
        };
        let d = ddir.idx();
        if d > 1 {
            return (0, 0);
        }
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        match cmd.pick(d, len, (x % 100) as u32) {
            Some(p) => {
                let v = p.value();
                let i = self.values[d].iter().position(|&x| x == v).unwrap_or(0);
                (i as u8, v)
            }
            None => (0, 0),
        }
    }

    /// The value of priority `index` of `ddir` (for the log).
    #[inline]
    pub fn value(&self, ddir: Ddir, index: u8) -> u16 {
        let d = ddir.idx().min(1);
        self.values[d].get(usize::from(index)).copied().unwrap_or(0)
    }

    /// Keep one completion's latency under its priority.
    #[inline]
    pub fn record(&self, d: &mut DirStats, ddir: Ddir, index: u8, clat: u64, lat: u64) {
        if self.cmd.is_none() || ddir.idx() > 1 {
            return;
        }
        let p = d
            .prios
            .get_or_insert_with(|| Box::new(PrioLat::new(&self.values[ddir.idx()])));
        p.record(usize::from(index), if self.total { lat } else { clat });
    }
}

/// Set the worker thread's own priority (`prioclass`/`prio`), as fio does
/// before its engine opens.
pub(super) fn set_thread_prio(spec: &JobSpec) -> Result<(), String> {
    match spec.sched.thread_prio() {
        Some(p) => ssdready_io::placement::set_thread_ioprio(p).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}
