//! What the temporal merge layer counted for one worker: commands by the
//! number of requests they carried, and the waits it added per request.

use crate::hist::Histogram;

/// What the temporal merge layer counted for one worker: the commands it
/// issued — each counted once, by the worker whose request opened it (STM's
/// winner, the oldest request of an ATM command) — and, for each of its
/// requests, the time added before its command reached the device.
#[derive(Clone, Debug, Default)]
pub struct MergeStats {
    /// `commands_by_extents[n - 1]`: commands that carried n requests.
    pub commands_by_extents: Vec<u64>,
    /// Per request: entering the merge layer → its command closed (the
    /// merge window, cut short when the command filled).
    pub window_wait: Histogram,
    /// Per request: its command closed → issued (it took the device's
    /// interface: the wait for the command ahead).
    pub issue_wait: Histogram,
}

impl MergeStats {
    /// Count a command of `extents` requests.
    pub fn record_command(&mut self, extents: usize) {
        let i = extents.max(1) - 1;
        if i >= self.commands_by_extents.len() {
            self.commands_by_extents.resize(i + 1, 0);
        }
        self.commands_by_extents[i] += 1;
    }
    /// Commands counted.
    pub fn commands(&self) -> u64 {
        self.commands_by_extents.iter().sum()
    }
    /// Requests the counted commands carried.
    pub fn extents(&self) -> u64 {
        self.commands_by_extents
            .iter()
            .enumerate()
            .map(|(i, c)| (i as u64 + 1) * c)
            .sum()
    }
    /// Add another worker's counts.
    pub fn merge(&mut self, o: &MergeStats) {
        if o.commands_by_extents.len() > self.commands_by_extents.len() {
            self.commands_by_extents
                .resize(o.commands_by_extents.len(), 0);
        }
        for (a, b) in self
            .commands_by_extents
            .iter_mut()
            .zip(&o.commands_by_extents)
        {
            *a += b;
        }
        self.window_wait.merge(&o.window_wait);
        self.issue_wait.merge(&o.issue_wait);
    }
}
