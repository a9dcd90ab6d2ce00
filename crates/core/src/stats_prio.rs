//! Latencies per I/O priority, as fio keeps them when cmdprio gives some
//! I/Os their own priority (`clat_prio` in fio's thread stats): one
//! histogram per priority a direction's I/Os may carry, the thread's own
//! priority first. Only one latency is kept per priority: completion
//! latency, or total latency with `lat_percentiles` (fio's rule).

use crate::hist::Histogram;

/// One direction's latencies, per priority value (`class << 13 | level`).
#[derive(Clone, Debug, Default)]
pub struct PrioLat {
    pub prios: Vec<(u16, Histogram)>,
}

impl PrioLat {
    /// Histograms for `values`, in that order (index = what I/Os record).
    pub fn new(values: &[u16]) -> PrioLat {
        PrioLat {
            prios: values.iter().map(|&v| (v, Histogram::default())).collect(),
        }
    }

    /// One I/O of the priority at `index`.
    #[inline]
    pub fn record(&mut self, index: usize, lat: u64) {
        if let Some((_, h)) = self.prios.get_mut(index) {
            h.record(lat);
        }
    }

    /// Add another worker's, priority by priority.
    pub fn merge(&mut self, o: &PrioLat) {
        for (v, h) in &o.prios {
            match self.prios.iter_mut().find(|(x, _)| x == v) {
                Some((_, mine)) => mine.merge(h),
                None => self.prios.push((*v, h.clone())),
            }
        }
    }

    /// Forget the samples (end of ramp), keeping the priorities.
    pub fn clear(&mut self) {
        for (_, h) in &mut self.prios {
            h.clear();
        }
    }

    /// The priorities with samples — fio reports them only when there are
    /// at least two.
    pub fn reported(&self) -> Vec<&(u16, Histogram)> {
        let with: Vec<_> = self.prios.iter().filter(|(_, h)| h.count() > 0).collect();
        if with.len() >= 2 {
            with
        } else {
            Vec::new()
        }
    }
}
