//! Runs of the plan's shortcut: the I/Os [`IoPlan::next_fast`] would give
//! next, granted in one go.
//!
//! In the common case (one file, one block size, one direction, the
//! permutation or sequential offsets) nothing about the next I/Os changes
//! until the pass ends or a budget is spent, and both can be counted in
//! advance: [`IoPlan::start_run`] grants that many I/Os, and each then
//! costs [`IoPlan::next_in_run`] a count-down and an offset — no budget
//! checks, no counters. [`IoPlan::end_run`] brings the plan's state to
//! where [`IoPlan::next_fast`] would have left it after the I/Os taken,
//! and must be called before anything else asks the plan (the job flow
//! does, [`crate::jobflow::JobFlow::settle`]). The I/Os are those of the
//! shortcut one for one (a unit test compares them).

use super::state::Run;
use super::{IoPlan, Permutation};
use ssdready_core::req::Ddir;

impl IoPlan {
    /// Whether no run is granted (every I/O taken is counted).
    pub fn run_settled(&self) -> bool {
        self.run.granted == 0
    }

    /// The direction and length every I/O of a run would have, when the
    /// shortcut applies now and its direction is fixed (a job of one
    /// direction, none drawn ahead).
    pub fn run_shape(&self) -> Option<(Ddir, u64)> {
        debug_assert_eq!(self.run.granted, 0, "a run is settled first");
        let ddir = self.fixed_ddir?;
        let plain = self.fast && self.pending.is_none() && self.owed_write.is_none();
        plain.then_some((ddir, self.unit))
    }

    /// Grant at most `max` I/Os of the shortcut (those it would give, in
    /// order, before the pass ends or the plan's budget is spent); returns
    /// how many. Only after [`IoPlan::run_shape`] said the shortcut applies.
    pub fn start_run(&mut self, max: u64) -> u64 {
        debug_assert_eq!(self.run.granted, 0, "a run is settled first");
        let Some((ddir, len)) = self.run_shape() else {
            return 0;
        };
        if !matches!(self.done[..], [false]) || self.files[0].region.len < len {
            return 0;
        }
        let d = ddir.idx();
        let f = &self.files[0];
        let random = self.rw.is_random();
        let (pos, room) = if random {
            (f.perm_pos, f.blocks - f.perm_pos)
        } else {
            let pos = f.last_pos[d];
            (pos, f.region.len.saturating_sub(pos) / len)
        };
        let n = [
            room,
            max,
            self.ios_left.unwrap_or(u64::MAX),
            self.bytes_left.map_or(u64::MAX, |b| b / len),
        ]
        .into_iter()
        .min()
        .unwrap_or(0);
        if n == 0 {
            return 0;
        }
        self.run = Run {
            left: n,
            granted: n,
            pos,
            len,
            base: f.region.offset,
            file: f.region.file,
            ddir,
            random,
            perm: if random {
                f.perm.clone()
            } else {
                Permutation::new(1, 0)
            },
        };
        n
    }

    /// The run's next I/O (file, direction, absolute offset, length);
    /// None when it is over (or none was granted).
    #[inline(always)]
    pub fn next_in_run(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        let r = &mut self.run;
        if r.left == 0 {
            return None;
        }
        r.left -= 1;
        let rel = if r.random {
            let b = r.perm.map(r.pos);
            r.pos += 1;
            b * r.len
        } else {
            let rel = r.pos;
            r.pos += r.len;
            rel
        };
        Some((r.file, r.ddir, r.base + rel, r.len as u32))
    }

    /// End the run: the plan's state as the shortcut would have left it
    /// after the I/Os taken. Returns how many were taken, their direction
    /// and length.
    pub fn end_run(&mut self) -> (u64, Ddir, u64) {
        let r = &mut self.run;
        let used = r.granted - r.left;
        (r.granted, r.left) = (0, 0);
        let (ddir, len) = (r.ddir, r.len);
        if used == 0 {
            return (0, ddir, len);
        }
        let f = &mut self.files[0];
        if r.random {
            f.perm_pos = r.pos;
        } else {
            f.last_start[ddir.idx()] = Some(r.pos - len);
            f.last_pos[ddir.idx()] = r.pos;
        }
        self.pending = None;
        if let Some(left) = &mut self.bytes_left {
            *left -= used * len;
        }
        if let Some(n) = &mut self.ios_left {
            *n -= used;
        }
        self.ios_this_pass += used;
        (used, ddir, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlanConfig, Region};
    use ssdready_core::spec::{JobSpec, RwMode};

    /// I/Os taken through runs of `sizes` (in turn), settled between
    /// them, and one by one where no run is granted.
    fn through_runs(
        plan: &mut IoPlan,
        n: usize,
        sizes: &[u64],
    ) -> Vec<Option<(u32, Ddir, u64, u32)>> {
        let mut out = Vec::new();
        let mut i = 0;
        while out.len() < n {
            let granted = match plan.run_shape() {
                Some(_) => plan.start_run(sizes[i % sizes.len()]),
                None => 0,
            };
            i += 1;
            if granted == 0 {
                out.push(plan.next_io());
                continue;
            }
            while let Some(io) = plan.next_in_run() {
                out.push(Some(io));
            }
            assert_eq!(plan.end_run().0, granted);
        }
        out.truncate(n);
        out
    }

    #[test]
    fn runs_give_the_shortcuts_ios_one_for_one() {
        // A region that does not start the file and does not hold a whole
        // number of blocks; bounded and time based over several passes;
        // runs cut short at any place, and the plan's own budgets.
        let regions = [Region {
            file: 0,
            offset: 8192,
            len: 40960 + 100,
        }];
        for rw in [
            RwMode::RandRead,
            RwMode::Read,
            RwMode::Write,
            RwMode::RandWrite,
        ] {
            for (time_based, number_ios) in [(false, None), (true, None), (true, Some(23))] {
                let spec = JobSpec {
                    rw,
                    time_based,
                    number_ios,
                    loops: 3,
                    ..JobSpec::default()
                };
                let mut one_by_one = IoPlan::new(&PlanConfig::new(&spec), &regions, 1);
                let mut runs = one_by_one.clone();
                let want: Vec<_> = (0..100).map(|_| one_by_one.next_io()).collect();
                let got = through_runs(&mut runs, 100, &[3, 1, 7, u64::MAX, 2]);
                assert_eq!(got, want, "{rw:?}, time_based {time_based}, {number_ios:?}");
                assert!(runs.run_settled());
            }
        }
    }

    #[test]
    fn a_mix_of_directions_takes_no_run() {
        let spec = JobSpec {
            rw: RwMode::RandRw,
            ..JobSpec::default()
        };
        let regions = [Region {
            file: 0,
            offset: 0,
            len: 1 << 20,
        }];
        assert_eq!(
            IoPlan::new(&PlanConfig::new(&spec), &regions, 0).run_shape(),
            None
        );
    }
}
