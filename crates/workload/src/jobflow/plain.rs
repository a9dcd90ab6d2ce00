//! The flow's plain path: the reads, writes and trims of a lean flow in
//! the middle of a pass, taken by the worker's plain loop without a
//! [`Step`] ([`JobFlow::next_plain`]), and their completions.
//!
//! When the plan's shortcut applies, the I/Os left before the pass or a
//! budget (`number_ios`, the pass's bytes, `io_size`) ends are granted as a
//! run ([`IoPlan::start_run`]): each then costs a count-down and an
//! offset, and the budgets are counted once, when the run is settled
//! ([`JobFlow::settle`]: before the flow is asked anything else).

use super::{FlowIo, JobFlow, Stage, Tag};
use ssdready_core::req::Ddir;

impl JobFlow {
    /// Whether the job's steps are only reads, writes and trims without
    /// verification or syncs, and nothing is recorded or replayed (the
    /// worker's plain path may then take [`JobFlow::next_plain`]).
    #[inline]
    pub fn is_lean(&self) -> bool {
        self.lean
    }

    /// The next read, write or trim (file, direction, offset, length) when
    /// the flow is lean and in the middle of a pass; None: ask
    /// [`JobFlow::next`] (which gives the same I/Os and every other step).
    #[inline(always)]
    pub fn next_plain(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        match self.next_in_run() {
            Some(io) => Some(io),
            None => self.next_plain_slow(),
        }
    }

    /// The granted run's next I/O, None past it: [`JobFlow::next_plain`]'s
    /// fast half, for a caller that handles the two halves apart (so that
    /// the run's I/O stays in registers, not merged with the slow half's).
    #[inline(always)]
    pub fn next_in_run(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        self.plan.next_in_run()
    }

    /// [`JobFlow::next_plain`] past the run: settle it, then grant the next
    /// one, or give one I/O as the plan gives it.
    #[inline(never)]
    pub fn next_plain_slow(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        self.settle();
        if !self.lean
            || self.wrap_invalidate
            || self.stage != Stage::Work
            || self.pending.is_some()
            || self.pass_over()
        {
            return None;
        }
        if let Some((ddir, len)) = self.plan.run_shape() {
            let room = self.issue_room(ddir, len);
            if self.plan.start_run(room) > 0 {
                return self.plan.next_in_run();
            }
        }
        let Some(io) = self.plan.next_io() else {
            self.plan_done = true;
            self.stage = Stage::PassEnd;
            return None;
        };
        if !self.unbounded {
            self.count_issue(io.1, io.3);
        }
        Some(io)
    }

    /// How many I/Os of `len` bytes in direction `ddir` can be issued
    /// before [`JobFlow::pass_over`] says the pass is over (the pass is
    /// checked before each I/O: the last one may cross a byte budget).
    fn issue_room(&self, ddir: Ddir, len: u64) -> u64 {
        if self.unbounded {
            return u64::MAX;
        }
        let ios = self.ios_cap.saturating_sub(self.c.rw_issued);
        let pass = self
            .pass_cap
            .saturating_sub(self.c.pass_bytes)
            .div_ceil(len);
        let main = match self.main_dirs[ddir.idx()] {
            true => self
                .main_cap
                .saturating_sub(self.c.main_issued)
                .div_ceil(len),
            false => u64::MAX,
        };
        ios.min(pass).min(main)
    }

    /// Count the I/Os the plan's run gave as issued (what each would have
    /// counted as it went); the plan is then asked again from there.
    #[inline]
    pub fn settle(&mut self) {
        if self.plan.run_settled() {
            return;
        }
        let (used, ddir, len) = self.plan.end_run();
        if used == 0 || self.unbounded {
            return;
        }
        self.c.rw_issued += used;
        self.c.pass_bytes += used * len;
        if self.main_dirs[ddir.idx()] {
            self.c.main_issued += used * len;
        }
    }

    /// A read or write of a lean flow finished with `len` bytes asked
    /// (the worker's plain loop, whose flow is lean: nothing but the two
    /// counts). Counted even when nothing needs them ([`JobFlow::settle`]
    /// skips them then): two additions cost less than the check.
    #[inline(always)]
    pub fn completed_lean(&mut self, len: u32) {
        debug_assert!(self.lean, "the plain loop runs lean flows only");
        self.c.rw_completed += 1;
        self.c.bytes_done += u64::from(len);
    }

    /// A read or write without verification finished (what the worker
    /// does not keep the request of).
    #[inline]
    pub fn completed_plain(&mut self, ddir: Ddir, len: u32, ok: bool) {
        if self.unbounded {
            return;
        }
        if self.lean {
            if ok {
                self.c.rw_completed += 1;
                self.c.bytes_done += u64::from(len);
            }
            return;
        }
        let io = FlowIo::Rw {
            file: 0,
            ddir,
            offset: 0,
            len,
            tag: Tag::Plain,
        };
        self.completed_in_full(&io, ok);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobflow::Step;
    use crate::plan::Region;
    use ssdready_core::resolved::FlowConfig;
    use ssdready_core::spec::{BlockSizes, JobSpec, RwMode};

    /// What a worker sees: each I/O, and each other step by its name.
    #[derive(Debug, PartialEq)]
    enum Seen {
        Io(u32, Ddir, u64, u32),
        Other(String),
    }

    /// Steps until `Done` (or `max`), each I/O completed at once; with
    /// `plain`, the worker's plain path first, as the plain loop asks.
    fn drive(flow: &mut JobFlow, plain: bool, max: usize) -> Vec<Seen> {
        let mut out = Vec::new();
        while out.len() < max {
            if plain {
                if let Some((file, ddir, offset, len)) = flow.next_plain() {
                    out.push(Seen::Io(file, ddir, offset, len));
                    flow.completed_plain(ddir, len, true);
                    continue;
                }
            }
            match flow.next(0, 0) {
                Step::Io(io) => {
                    if let FlowIo::Rw {
                        file,
                        ddir,
                        offset,
                        len,
                        ..
                    } = io
                    {
                        out.push(Seen::Io(file, ddir, offset, len));
                    }
                    flow.completed(&io, true);
                }
                Step::Done => break,
                step => out.push(Seen::Other(format!("{step:?}"))),
            }
        }
        flow.settle();
        out
    }

    #[test]
    fn the_plain_path_gives_the_flows_steps_and_spends_its_budgets_alike() {
        let region = [Region {
            file: 0,
            offset: 4096,
            len: (1 << 20) + 1000,
        }];
        for spec in budgeted_jobs() {
            let mut by_step = JobFlow::new(&FlowConfig::new(&spec), &region, 0);
            let mut plain = JobFlow::new(&FlowConfig::new(&spec), &region, 0);
            assert!(plain.is_lean(), "{:?}", spec.rw);
            let want = drive(&mut by_step, false, 2_000);
            let got = drive(&mut plain, true, 2_000);
            assert_eq!(got, want, "{:?}", spec.rw);
            if plain.unbounded {
                continue; // nothing is counted: no budget to spend
            }
            let (a, b) = (&by_step.c, &plain.c);
            assert_eq!(
                (
                    a.rw_issued,
                    a.pass_bytes,
                    a.main_issued,
                    a.rw_completed,
                    a.bytes_done
                ),
                (
                    b.rw_issued,
                    b.pass_bytes,
                    b.main_issued,
                    b.rw_completed,
                    b.bytes_done
                ),
                "{:?}",
                spec.rw
            );
        }
    }

    /// Jobs of each kind of budget: whole passes, loops, io_size,
    /// size, number_ios, time.
    fn budgeted_jobs() -> [JobSpec; 9] {
        let base = JobSpec {
            bs: BlockSizes::Fixed(4096),
            filename: vec!["/a/file".into()],
            ioengine: ssdready_core::spec::EngineKind::Null,
            ..JobSpec::default()
        };
        [
            JobSpec {
                rw: RwMode::RandRead,
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::Read,
                loops: 3,
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::RandWrite,
                io_size: Some(600_000),
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::Read,
                io_size: Some(50 * 4096),
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::Write,
                size: Some(100_000),
                loops: 2,
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::RandRead,
                number_ios: Some(77),
                loops: 2,
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::RandRead,
                time_based: true,
                number_ios: Some(700),
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::RandRw,
                io_size: Some(300_000),
                ..base.clone()
            },
            JobSpec {
                rw: RwMode::Read,
                time_based: true,
                ..base.clone()
            },
        ]
    }
}
