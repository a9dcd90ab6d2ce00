//! The order of everything one worker does, as fio's `thread_main` /
//! `do_io` / `do_verify` do it: the job runs in *passes* (fio's loops); each
//! pass issues the plan's I/Os — with a sync after every `fsync` (or
//! `fdatasync`) writes, verification reads interleaved every
//! `verify_backlog` writes, and a pause every `thinktime_blocks` I/Os after
//! waiting for every I/O in flight — then waits for all of them, syncs the
//! files (`end_fsync`, `fsync_on_close`), and, for a job that writes with
//! `verify`, drops the cache and reads back every block written in the pass
//! to check it. Before each pass after the first the files are closed (and
//! removed with `unlink_each_loop`), opened again and their cache dropped.
//!
//! How long the job runs follows fio's `keep_running`: `loops` passes, then
//! more while the bytes moved (verification reads included, as fio counts
//! them) are short of `io_size`; a time-based job passes until its runtime
//! is up, a pass ending only to verify. A pass is `size` bytes of the plan.
//!
//! [`JobFlow`] is pure: it says what comes next ([`Step`]) and is told what
//! completed ([`JobFlow::completed`]); the worker does the I/O, the waits and
//! the checks of the data.

mod plain;
mod setup;
mod trim;
mod vstate;
pub mod written;

use crate::plan::{IoPlan, Region};
use crate::replay::cursor::{Next, Replay};
use crate::replay::record::Recorder;
use crate::verify::{state::SavedState, Expect, Layout, Method};
use ssdready_core::req::Ddir;
use ssdready_core::spec::JobSpec;
use written::{Piece, Written};

/// What a read or write carries for verification.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tag {
    /// Nothing.
    #[default]
    Plain,
    /// A write whose blocks get verify headers.
    Stamped {
        /// The write's sequence number (fio's `numberio`).
        generation: u64,
        /// The seed of its data.
        seed: u64,
    },
    /// A read whose data is checked when it completes.
    Check(Expect),
}

/// One request to issue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowIo {
    /// A read, write or trim.
    Rw {
        /// Target index.
        file: u32,
        /// Direction.
        ddir: Ddir,
        /// Byte offset.
        offset: u64,
        /// Length.
        len: u32,
        /// Verification.
        tag: Tag,
    },
    /// `fsync` (or `fdatasync`) of a target, counted as fio counts it.
    Sync {
        /// Target index.
        file: u32,
        /// fdatasync rather than fsync.
        data_only: bool,
    },
    /// `sync_file_range(2)` of what was written to a target since its last
    /// sync (`sync_file_range`), counted as fio counts it.
    SyncRange {
        /// Target index.
        file: u32,
    },
}

/// What the worker does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Issue this request.
    Io(FlowIo),
    /// Issue nothing until every request in flight has completed, then ask again.
    Drain,
    /// Nothing is in flight: spin `spin_ns`, then sleep `sleep_ns` (think time).
    Think {
        /// Busy-wait part.
        spin_ns: u64,
        /// Sleeping part.
        sleep_ns: u64,
    },
    /// Drop the page cache of target `file`: a time-based pass over it ended.
    DropCache(u32),
    /// Nothing is in flight: fsync every target, uncounted (`end_fsync`,
    /// `fsync_on_close`).
    FsyncFiles,
    /// Nothing is in flight: fsync every target and drop its cache, before
    /// reading the pass's writes back.
    SettleForVerify,
    /// Nothing is in flight: a new pass begins. Remove the files first when
    /// `unlink`; open them again; drop their cache when `invalidate`.
    NewLoop {
        /// `unlink_each_loop`.
        unlink: bool,
        /// `invalidate`.
        invalidate: bool,
    },
    /// The job's work is done (wait for what is in flight).
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Work,
    PassEnd,
    Verify,
    VerifyEnd,
    Between,
    Done,
}

/// Think time (fio's `handle_thinktime`).
#[derive(Debug, Default)]
struct Think {
    ns: u64,
    spin_ns: u64,
    blocks: u64,
    blocks_given: bool,
    by_completion: bool,
    iotime_ns: u64,
    last_blocks: u64,
    last_time: u64,
    /// A stall found, waiting for the queue to drain: the block count then.
    pending: Option<u64>,
    /// A read or write was issued since the last look (fio looks once
    /// after each).
    due: bool,
    /// Completions can come after the last issue (an asynchronous engine
    /// with a queue): fio reaps those after its issue loop, with no think.
    late_completions: bool,
}

/// Counters of the job so far.
#[derive(Debug, Default)]
struct Counts {
    writes_issued: u64,
    rw_issued: u64,
    /// Bytes of completed reads and writes (fio's `io_bytes`, verification included).
    bytes_done: u64,
    /// Issued bytes of the job's own direction(s) (fio's `io_issue_bytes`).
    main_issued: u64,
    pass_bytes: u64,
    /// (Not next to `bytes_done`: two separate additions per completion
    /// are cheaper than the vector one the compiler makes of neighbours.)
    rw_completed: u64,
    pass_written: u64,
    verified: u64,
}

/// The sequence of one worker; see the module docs.
pub struct JobFlow {
    plan: IoPlan,
    replay: Option<IoPlan>,
    stage: Stage,
    pending: Option<Step>,
    think: Think,
    c: Counts,
    loops_left: u32,
    loops: u64,
    limit: u64,
    /// Bytes of a pass (more than `size` when a verifying job's writes
    /// wrap: [`setup::verify_pass`]).
    pass_len: u64,
    max_bs: u64,
    number_ios: Option<u64>,
    time_based: bool,
    writes: bool,
    fsync_every: u64,
    fdatasync_every: u64,
    /// `sync_file_range=…:N`: every N writes (0: never).
    range_every: u64,
    pass_fsync: bool,
    unlink_each_loop: bool,
    invalidate: bool,
    wrap_invalidate: bool,
    last_was_sync: bool,
    last_write_file: u32,
    passes: u64,
    plan_done: bool,
    /// No think time, syncs, verification or cache drops: the plan's I/Os
    /// go out as they come (the hot path of most jobs).
    lean: bool,
    /// Lean and time-based without number_ios: nothing needs counting.
    unbounded: bool,
    /// A pass ends at this many rw I/Os (`number_ios`), pass bytes, bytes
    /// of the job's own direction; u64::MAX when not.
    ios_cap: u64,
    pass_cap: u64,
    main_cap: u64,
    /// Which directions count in fio's `io_issue_bytes` for this job.
    main_dirs: [bool; 3],
    // Verification.
    layout: Option<Layout>,
    verify_phase: bool,
    check_reads: bool,
    check_generation: bool,
    dry_run: bool,
    experimental: bool,
    written: Written,
    backlog: Option<u64>,
    backlog_batch: u64,
    batch_left: u64,
    last_completed_read: bool,
    replay_written: u64,
    replay_generation: u64,
    state: Option<SavedState>,
    skipped_by_state: u64,
    /// `verify_policy=fsynced`: the syncs that vouch for writes.
    fsynced: Option<Box<vstate::Fsynced>>,
    /// (I/Os, bytes) per direction of the `verify_only` dry run.
    dry_counts: [(u64, u64); 3],
    /// `trim_percentage`: the written blocks to trim, and those trimmed.
    trims: Option<Box<trim::Trims>>,
    depth: usize,
    recent: Vec<std::collections::VecDeque<u64>>,
    seed: u64,
    /// `read_iolog`: the trace replayed instead of the plan.
    trace: Option<Box<Replay>>,
    /// `write_iolog`: the requests issued, as fio logs them.
    recorder: Option<Box<Recorder>>,
    /// The last time the flow was asked (the end of a recorded log).
    last_now: u64,
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl JobFlow {
    /// The flow of worker `worker` (0-based clone index) of `spec` over `regions`.
    pub fn new(spec: &JobSpec, regions: &[Region], worker: u32) -> Self {
        let plan = setup::endless_plan(spec, regions, worker);
        // fio's trimwrite writes each block it trims: twice the bytes.
        let moves = if spec.trim_then_write { 2 } else { 1 };
        let size: u64 = regions.iter().map(|r| r.len).sum::<u64>() * moves;
        let v = &spec.verify;
        let writes = spec.rw.modifies();
        let layout = setup::layout(spec);
        let verify_on = layout.is_some();
        let verify_phase = verify_on && writes && v.do_verify;
        let limit = setup::limit(spec, size, moves);
        let pass_len = match verify_phase {
            true => setup::verify_pass(spec, size, limit),
            false => size,
        };
        let rewrites = setup::rewrites(spec) || pass_len > size;
        let depth = spec.effective_iodepth().max(1) as usize;
        JobFlow {
            replay: None,
            plan,
            stage: Stage::Start,
            pending: None,
            think: setup::think(spec),
            c: Counts::default(),
            loops_left: spec.loops.max(1),
            loops: u64::from(spec.loops.max(1)),
            limit,
            pass_len,
            max_bs: u64::from(spec.bs.max()),
            number_ios: spec
                .number_ios
                .map(|n| n.saturating_mul(u64::from(spec.loops.max(1)))),
            time_based: spec.time_based,

            writes: writes && !v.only,
            fsync_every: u64::from(spec.files.fsync_every),
            fdatasync_every: u64::from(spec.files.fdatasync_every),
            range_every: spec
                .access
                .sync_file_range
                .map_or(0, |r| u64::from(r.every)),
            pass_fsync: writes && (spec.files.end_fsync || spec.files.fsync_on_close),
            unlink_each_loop: spec.files.unlink_each_loop,
            invalidate: spec.invalidate,
            wrap_invalidate: setup::wrap_invalidate(spec, regions),
            last_was_sync: false,
            last_write_file: 0,
            passes: 0,
            plan_done: false,
            lean: false,
            unbounded: false,
            ios_cap: u64::MAX,
            pass_cap: u64::MAX,
            main_cap: u64::MAX,
            main_dirs: setup::main_dirs(spec.rw),
            verify_phase,
            check_reads: verify_on && !writes,
            check_generation: setup::check_generation(spec, rewrites),
            dry_run: verify_phase && v.only,
            experimental: v.experimental && !v.only,
            written: Written::new(!rewrites),
            backlog: v.backlog.filter(|_| verify_phase && !v.only),
            backlog_batch: v.backlog_batch.or(v.backlog).unwrap_or(1),
            batch_left: 0,
            last_completed_read: false,
            replay_written: 0,
            replay_generation: 0,
            state: None,
            skipped_by_state: 0,
            fsynced: (verify_on && writes && v.fsynced).then(Box::default),
            dry_counts: [(0, 0); 3],
            trims: v
                .trims()
                .filter(|_| writes)
                .map(|t| Box::new(trim::Trims::new(t))),
            depth,
            recent: vec![Default::default(); regions.len().max(1)],
            seed: spec.randseed ^ u64::from(worker).wrapping_mul(0xa076_1d64_78bd_642f),
            layout,
            trace: None,
            recorder: None,
            last_now: 0,
        }
        .with_caps()
    }

    /// The budgets as plain limits, and whether the lean path applies.
    fn with_caps(mut self) -> Self {
        self.ios_cap = self.number_ios.unwrap_or(u64::MAX);
        self.pass_cap = match (self.time_based, self.verify_phase) {
            (true, false) => u64::MAX,
            _ => self.pass_len,
        };
        self.main_cap = match self.time_based {
            true => u64::MAX,
            false => self.limit.saturating_mul(self.loops),
        };
        let syncs = self.writes
            && (self.fsync_every > 0 || self.fdatasync_every > 0 || self.range_every > 0);
        self.lean = self.think.ns == 0 && !syncs && self.backlog.is_none() && self.layout.is_none();
        self.unbounded = self.lean
            && !self.wrap_invalidate
            && self.time_based
            && self.ios_cap == u64::MAX
            && self.pass_cap == u64::MAX
            && self.main_cap == u64::MAX;
        self
    }

    /// Replay `trace` instead of the plan (`read_iolog`): one pass, to
    /// the trace's end (or the job's runtime).
    pub fn with_replay(mut self, trace: Replay) -> Self {
        self.trace = Some(Box::new(trace));
        (self.lean, self.unbounded) = (false, false);
        self
    }

    /// Record every request issued (`write_iolog`).
    pub fn with_recorder(mut self, r: Recorder) -> Self {
        self.recorder = Some(Box::new(r));
        (self.lean, self.unbounded) = (false, false);
        self
    }

    /// The recorded log's text (`write_iolog`), its targets closed now.
    pub fn take_record(&mut self) -> Option<String> {
        let now = self.last_now;
        self.recorder.take().map(|r| r.finish(Some(now)))
    }

    /// Why a replay ended before its trace did (a trace read as the
    /// replay went, `read_iolog_chunked`, that turned out bad).
    pub fn replay_error(&self) -> Option<String> {
        self.trace.as_ref()?.error().map(ToString::to_string)
    }

    /// Verify only what a saved state vouches for (`verify_state_load`).
    pub fn with_state(mut self, s: SavedState) -> Self {
        self.state = Some(s);
        self
    }

    /// How blocks are laid out for verification, when the job verifies.
    #[inline]
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// Blocks verification left unchecked because a loaded state could not
    /// vouch for them.
    pub fn skipped_by_state(&self) -> u64 {
        self.skipped_by_state
    }

    /// The state to save when the job ends (`verify_state_save`): writes
    /// issued and the last completed ones.
    /// With `verify_policy=fsynced`, only the writes before the last
    /// fsync that completed.
    pub fn saved_state(&self, name: &str, index: u64) -> SavedState {
        let vstate::SyncPoint { issued, completed } = match &self.fsynced {
            Some(f) => f.safe(),
            None => self.sync_point(),
        };
        SavedState {
            depth: self.depth as u32,
            files: self.recent.len() as u32,
            issued,
            index,
            name: name.to_string(),
            completed,
        }
    }

    /// Writes issued so far and the last completed ones, newest first.
    fn sync_point(&self) -> vstate::SyncPoint {
        let mut completed = Vec::new();
        for (f, ring) in self.recent.iter().enumerate() {
            completed.extend(ring.iter().rev().map(|&o| (f as u64, o)));
        }
        vstate::SyncPoint {
            issued: self.c.writes_issued,
            completed,
        }
    }

    /// (I/Os, bytes) per direction that a `verify_only` dry run counted as
    /// done without doing them (fio counts them in the job's statistics);
    /// zero after the first call.
    pub fn take_dry_run(&mut self) -> [(u64, u64); 3] {
        std::mem::take(&mut self.dry_counts)
    }

    /// The offset generator (fio's rate logic picks the next direction in it).
    #[inline]
    pub fn plan_mut(&mut self) -> &mut IoPlan {
        self.settle();
        &mut self.plan
    }

    /// Whether files are synced when the job ends (`end_fsync`,
    /// `fsync_on_close`) and the last pass did not do it already — a job
    /// stopped by its runtime still syncs, as in fio.
    pub fn final_fsync(&self) -> bool {
        self.pass_fsync && self.stage != Stage::Done && !self.last_was_sync
    }

    /// The seed of write number `generation`'s data.
    fn seed_for(&self, generation: u64) -> u64 {
        splitmix(self.seed ^ generation.wrapping_mul(0x2545_f491_4f6c_dd1d))
    }

    /// fio's `keep_running`, asked before each pass.
    fn keep_running(&mut self) -> bool {
        // ssdready's rule before fio's: number_ios ends a job, time-based
        // or not (fio 3.33 ignores it on a time-based job).
        if self.plan_done || self.number_ios.is_some_and(|n| self.c.rw_issued >= n) {
            return false;
        }
        if self.time_based {
            return true;
        }
        // The job's issue budget is spent: failed I/Os gone past
        // (continue_on_error) leave `bytes_done` short of it for good, and
        // another pass could issue nothing (it looped so forever).
        if self.c.main_issued >= self.main_cap {
            return false;
        }
        if self.loops_left > 0 {
            self.loops_left -= 1;
            return true;
        }
        self.c.bytes_done < self.limit && self.limit - self.c.bytes_done >= self.max_bs
    }

    /// Whether the pass (or the job's budget) is over.
    #[inline]
    fn pass_over(&self) -> bool {
        self.c.rw_issued >= self.ios_cap
            || self.c.pass_bytes >= self.pass_cap
            || self.c.main_issued >= self.main_cap
    }

    /// zonemode=zbd moved or cut the plan's last I/O ([`crate::zbd`],
    /// [`IoPlan::zbd_moved`]): the pass and the job count the bytes issued
    /// and skipped (fio's io_skip_bytes), not the planned ones; a skip is
    /// no I/O.
    pub fn zbd_moved(
        &mut self,
        file: u32,
        d: Ddir,
        planned: u64,
        issued: u64,
        skipped: u64,
        next: u64,
    ) {
        self.settle();
        self.plan.zbd_moved(file, d, planned, issued, skipped, next);
        let fix = |v: &mut u64| *v = v.saturating_add(issued + skipped).saturating_sub(planned);
        fix(&mut self.c.pass_bytes);
        if self.main_dirs[d.idx()] {
            fix(&mut self.c.main_issued);
        }
        if issued == 0 {
            self.c.rw_issued = self.c.rw_issued.saturating_sub(1);
        }
    }

    /// Count an I/O of the plan as issued.
    #[inline]
    fn count_issue(&mut self, ddir: Ddir, len: u32) {
        self.c.rw_issued += 1;
        self.c.pass_bytes += u64::from(len);
        let main = match ddir {
            Ddir::Read => self.main_dirs[0],
            Ddir::Write => self.main_dirs[1],
            Ddir::Trim => self.main_dirs[2],
        };
        if main {
            self.c.main_issued += u64::from(len);
        }
    }

    /// The next thing to do, with `inflight` requests in flight at `now`
    /// (ns on any steady clock).
    #[inline]
    pub fn next(&mut self, inflight: usize, now: u64) -> Step {
        self.settle();
        if self.lean && self.stage == Stage::Work && self.pending.is_none() && !self.pass_over() {
            if let Some((file, ddir, offset, len)) = self.plan.next_io() {
                if !self.unbounded {
                    self.count_issue(ddir, len);
                }
                let io = Step::Io(FlowIo::Rw {
                    file,
                    ddir,
                    offset,
                    len,
                    tag: Tag::Plain,
                });
                return match self.wrap_invalidate {
                    true => self.after_wrap(io, len),
                    false => io,
                };
            }
            self.plan_done = true;
            self.stage = Stage::PassEnd;
        }
        let step = self.next_step(inflight, now);
        if let Some(r) = self.recorder.as_deref_mut() {
            self.last_now = now;
            if let Step::Io(io) = &step {
                r.issued(now, io);
            }
        }
        step
    }

    /// The trace's next step, when the job replays one.
    fn replay_step(&mut self, inflight: usize, now: u64) -> Option<Step> {
        let next = self.trace.as_deref_mut()?.next(now, inflight);
        Some(match next {
            Next::Io(io) => {
                if let FlowIo::Rw { ddir, len, .. } = io {
                    self.count_issue(ddir, len);
                }
                Step::Io(io)
            }
            Next::Drain => Step::Drain,
            Next::Sleep(ns) => Step::Think {
                spin_ns: 0,
                sleep_ns: ns,
            },
            Next::Done => return None,
        })
    }

    fn next_step(&mut self, inflight: usize, now: u64) -> Step {
        if let Some(s) = self.pending.take() {
            return s;
        }
        loop {
            let step = match self.stage {
                Stage::Start | Stage::Between => self.between_step(inflight),
                Stage::Work if self.trace.is_some() => match self.replay_step(inflight, now) {
                    Some(s) => Some(s),
                    None => {
                        self.plan_done = true;
                        self.stage = Stage::PassEnd;
                        None
                    }
                },
                Stage::Work => self.work_step(inflight, now),
                Stage::PassEnd => self.pass_end_step(inflight),
                Stage::Verify => match self.verify_read() {
                    Some(io) => Some(Step::Io(io)),
                    None => {
                        self.stage = Stage::VerifyEnd;
                        None
                    }
                },
                Stage::VerifyEnd => {
                    if inflight > 0 {
                        return Step::Drain;
                    }
                    self.stage = Stage::Between;
                    None
                }
                Stage::Done => return Step::Done,
            };
            if let Some(s) = step {
                return s;
            }
        }
    }

    /// Before the first pass or between two: drain, then start the next
    /// pass (reopening the files after the first) or end the job. `None`:
    /// the stage moved on, ask again.
    #[inline]
    fn between_step(&mut self, inflight: usize) -> Option<Step> {
        if inflight > 0 {
            return Some(Step::Drain);
        }
        let first = self.stage == Stage::Start;
        if !self.keep_running() {
            self.stage = Stage::Done;
            return None;
        }
        self.begin_pass();
        if first {
            return None;
        }
        Some(Step::NewLoop {
            unlink: self.unlink_each_loop,
            invalidate: self.invalidate,
        })
    }

    /// In a pass: think time, backlog reads, syncs, then the plan's next
    /// I/O. `None`: the pass ended, ask again.
    #[inline]
    fn work_step(&mut self, inflight: usize, now: u64) -> Option<Step> {
        if let Some(s) = self.think_step(inflight, now) {
            return Some(s);
        }
        // Backlog reads count in fio's pass bytes (it doubles the pass for
        // them): they come before the pass's end.
        if let Some(io) = self.backlog_read() {
            self.think.due = true;
            return Some(Step::Io(io));
        }
        if let Some(io) = self.trim_io(false) {
            return Some(Step::Io(io));
        }
        if self.pass_over() {
            self.stage = Stage::PassEnd;
            return None;
        }
        if let Some(io) = self.sync_due() {
            if let (Some(_), FlowIo::Sync { .. }) = (&self.fsynced, io) {
                // fsynced: the sync covers every write before it.
                if inflight > 0 {
                    return Some(Step::Drain);
                }
                let point = self.sync_point();
                if let Some(f) = self.fsynced.as_deref_mut() {
                    f.issued(point);
                }
            }
            return Some(Step::Io(io));
        }
        let step = self.plan_io();
        if step.is_none() {
            self.plan_done = true;
            self.stage = Stage::PassEnd;
        }
        step
    }

    /// A pass's end: drain, sync the files (`end_fsync`, `fsync_on_close`)
    /// and settle for the verify phase when the job verifies. `None`: the
    /// stage moved on, ask again.
    #[inline]
    fn pass_end_step(&mut self, inflight: usize) -> Option<Step> {
        if let Some(io) = self.trim_io(true) {
            return Some(Step::Io(io));
        }
        if inflight > 0 {
            return Some(Step::Drain);
        }
        self.stage = if self.verify_phase {
            Stage::Verify
        } else {
            Stage::Between
        };
        if self.pass_fsync && !self.last_was_sync {
            self.last_was_sync = true;
            if self.verify_phase {
                self.pending = Some(Step::SettleForVerify);
            }
            return Some(Step::FsyncFiles);
        }
        self.verify_phase.then_some(Step::SettleForVerify)
    }

    fn begin_pass(&mut self) {
        self.stage = Stage::Work;
        self.passes += 1;
        self.c.pass_bytes = 0;
        self.c.pass_written = 0;
        // fio: a new loop forgets the last sync.
        self.last_was_sync = false;
        if self.experimental && self.verify_phase {
            self.replay = Some(self.plan.clone());
            self.replay_written = 0;
            self.replay_generation = self.c.writes_issued;
        }
        if self.dry_run {
            self.dry_run_pass();
        }
    }

    /// `verify_only` on a writing job: what the pass would write, logged
    /// without writing (fio's `do_dry_run`).
    fn dry_run_pass(&mut self) {
        while !self.pass_over() {
            let Some((file, ddir, offset, len)) = self.plan.next_io() else {
                self.plan_done = true;
                break;
            };
            self.count_issue(ddir, len);
            self.c.bytes_done += u64::from(len);
            let d = &mut self.dry_counts[ddir.idx()];
            (d.0, d.1) = (d.0 + 1, d.1 + u64::from(len));
            if ddir == Ddir::Write {
                let generation = self.c.writes_issued;
                self.c.writes_issued += 1;
                let p = Piece {
                    file,
                    offset,
                    len,
                    generation,
                    seed: 0,
                };
                self.written.add(p);
                if let Some(t) = self.trims.as_deref_mut() {
                    // The writing job trimmed the same blocks: expect them so.
                    t.written(p);
                    while t.leftover().is_some() {}
                }
                // fio counts a dry run's writes as completed ones (its
                // saved state lists them).
                self.note_completed_write(file, offset);
            }
        }
        self.stage = Stage::PassEnd;
    }

    /// fio's `handle_thinktime`: after every `thinktime_blocks` I/Os (or
    /// `thinktime_iotime` of I/O), wait for the queue to empty, then think.
    fn think_step(&mut self, inflight: usize, now: u64) -> Option<Step> {
        // fio thinks on completions inside its issue loop: once the job has
        // issued its last I/O the loop is over, and the completions that an
        // asynchronous engine delivers after it bring no think (libaio at
        // QD 8, 32 I/Os, a think every 8: three, not four; a synchronous
        // engine's last I/O completes inside the loop and is thought after).
        let issued_all = self.c.rw_issued >= self.ios_cap
            || (!self.time_based && self.c.main_issued >= self.main_cap);
        let t = &mut self.think;
        if t.by_completion && t.late_completions && issued_all && t.pending.is_none() {
            return None;
        }
        if t.ns == 0 {
            return None;
        }
        if t.last_time == 0 {
            t.last_time = now.max(1);
        }
        if t.pending.is_none() {
            if !t.due {
                return None;
            }
            t.due = false;
            let b = if t.by_completion {
                self.c.rw_completed
            } else {
                self.c.rw_issued
            };
            let by_time = t.iotime_ns > 0 && now.saturating_sub(t.last_time) >= t.iotime_ns + t.ns;
            let by_blocks = (t.iotime_ns == 0 || t.blocks_given) && b >= t.last_blocks + t.blocks;
            if !(by_time || by_blocks) {
                return None;
            }
            t.pending = Some(b);
        }
        if inflight > 0 {
            return Some(Step::Drain);
        }
        t.last_blocks = t.pending.take().unwrap_or(t.last_blocks);
        if t.iotime_ns > 0 {
            t.last_time = now;
        }
        Some(Step::Think {
            spin_ns: t.spin_ns,
            sleep_ns: t.ns - t.spin_ns,
        })
    }

    /// fio's `get_rw_ddir`: a sync after every N writes, unless the last
    /// request completed was one.
    fn sync_due(&mut self) -> Option<FlowIo> {
        let w = self.c.writes_issued;
        if !self.writes || self.last_was_sync || w == 0 {
            return None;
        }
        let data_only = if self.fsync_every > 0 && w.is_multiple_of(self.fsync_every) {
            false
        } else if self.fdatasync_every > 0 && w.is_multiple_of(self.fdatasync_every) {
            true
        } else if self.range_every > 0 && w.is_multiple_of(self.range_every) {
            return Some(FlowIo::SyncRange {
                file: self.last_write_file,
            });
        } else {
            return None;
        };
        Some(FlowIo::Sync {
            file: self.last_write_file,
            data_only,
        })
    }

    /// The plan's next I/O (a cache drop first when a time-based pass over
    /// its file just ended).
    fn plan_io(&mut self) -> Option<Step> {
        let (file, ddir, offset, len) = self.plan.next_io()?;
        self.think.due = true;
        self.count_issue(ddir, len);
        let tag = match ddir {
            Ddir::Write if self.layout.is_some() => {
                let generation = self.c.writes_issued;
                Tag::Stamped {
                    generation,
                    seed: self.seed_for(generation),
                }
            }
            Ddir::Read if self.check_reads => Tag::Check(Expect::default()),
            _ => Tag::Plain,
        };
        if ddir == Ddir::Write {
            self.c.writes_issued += 1;
            self.c.pass_written += u64::from(len);
            self.last_write_file = file;
        }
        let io = Step::Io(FlowIo::Rw {
            file,
            ddir,
            offset,
            len,
            tag,
        });
        Some(match self.wrap_invalidate {
            true => self.after_wrap(io, len),
            false => io,
        })
    }

    /// `io`, or first a cache drop when the plan just started a new pass
    /// over its file (`io` then comes next).
    fn after_wrap(&mut self, io: Step, len: u32) -> Step {
        // A pass's first I/O starts over by itself: its NewLoop dropped the cache.
        let first_of_pass = self.c.pass_bytes == u64::from(len);
        match self.plan.take_wrap() {
            Some(f) if !first_of_pass => {
                self.pending = Some(io);
                Step::DropCache(f)
            }
            _ => io,
        }
    }

    /// The read that checks `p`; None when there is nothing to check (a
    /// trimmed block with `trim_verify_zero=0`).
    fn check_of(&mut self, p: &Piece) -> Option<FlowIo> {
        let readback = match self.trims.as_deref_mut() {
            Some(t) => t.readback(p),
            None => trim::Readback::Data,
        };
        let expect = match readback {
            trim::Readback::Skip => return None,
            trim::Readback::Zeroes => Expect {
                zeroes: true,
                ..Expect::default()
            },
            trim::Readback::Data if self.check_generation => Expect {
                generation: Some(p.generation),
                seed: Some(p.seed),
                zeroes: false,
            },
            trim::Readback::Data => Expect::default(),
        };
        Some(FlowIo::Rw {
            file: p.file,
            ddir: Ddir::Read,
            offset: p.offset,
            len: p.len,
            tag: Tag::Check(expect),
        })
    }

    /// fio's `check_get_trim`: a trim of a chosen written block when one
    /// is due (`trim_backlog`), or at the pass's end (`leftover`).
    fn trim_io(&mut self, leftover: bool) -> Option<FlowIo> {
        let unverified = self.verify_phase.then(|| self.written.len() as u64);
        let t = self.trims.as_deref_mut()?;
        let p = match leftover {
            true => t.leftover(),
            false => t.next(unverified),
        }?;
        Some(FlowIo::Rw {
            file: p.file,
            ddir: Ddir::Trim,
            offset: p.offset,
            len: p.len,
            tag: Tag::Plain,
        })
    }

    /// fio's `check_get_verify`: with `verify_backlog`, a batch of reads
    /// whenever the unverified writes reach a multiple of it.
    fn backlog_read(&mut self) -> Option<FlowIo> {
        let backlog = self.backlog?;
        if self.written.is_empty() {
            return None;
        }
        if self.batch_left == 0 {
            if !(self.written.len() as u64).is_multiple_of(backlog) || self.last_completed_read {
                return None;
            }
            self.batch_left = self.backlog_batch;
        }
        loop {
            let p = self.written.pop()?;
            if let Some(io) = self.check_of(&p) {
                self.batch_left -= 1;
                self.c.rw_issued += 1;
                return Some(io);
            }
        }
    }

    /// The next block of the verification pass, if any.
    fn verify_read(&mut self) -> Option<FlowIo> {
        if self.experimental {
            return self.replay_read();
        }
        loop {
            let p = self.written.pop()?;
            if let Some(io) = self.verify_check(p) {
                return Some(io);
            }
        }
    }

    /// The read that checks `p` in the verification pass; None: nothing to
    /// check (from here on, when a loaded state cannot vouch for it).
    fn verify_check(&mut self, p: Piece) -> Option<FlowIo> {
        if let Some(s) = &self.state {
            // A write the saved job never issued (or, fsynced, issued after
            // its last sync) is not there to check: stop, as newer fio.
            if p.generation >= s.issued
                || s.should_stop(self.c.verified, u64::from(p.file), p.offset)
            {
                self.skipped_by_state += 1 + self.written.len() as u64;
                while self.written.pop().is_some() {}
                return None;
            }
        }
        self.check_of(&p)
    }

    /// `experimental_verify`: the pass's writes replayed from its start.
    fn replay_read(&mut self) -> Option<FlowIo> {
        while self.replay_written < self.c.pass_written {
            let (file, ddir, offset, len) = self.replay.as_mut()?.next_io()?;
            if ddir != Ddir::Write {
                continue;
            }
            self.replay_written += u64::from(len);
            let generation = self.replay_generation;
            self.replay_generation += 1;
            let p = Piece {
                file,
                offset,
                len,
                generation,
                seed: self.seed_for(generation),
            };
            if let Some(io) = self.check_of(&p) {
                return Some(io);
            }
        }
        None
    }

    /// A request finished: `ok` when it succeeded.
    #[inline]
    pub fn completed(&mut self, io: &FlowIo, ok: bool) {
        if self.lean {
            if let (FlowIo::Rw { len, .. }, true) = (io, ok) {
                self.c.rw_completed += 1;
                self.c.bytes_done += u64::from(*len);
            }
            return;
        }
        self.completed_in_full(io, ok);
    }

    fn completed_in_full(&mut self, io: &FlowIo, ok: bool) {
        match *io {
            FlowIo::Sync { .. } | FlowIo::SyncRange { .. } => {
                if ok {
                    self.last_was_sync = true;
                }
                if let (Some(f), FlowIo::Sync { .. }) = (self.fsynced.as_deref_mut(), *io) {
                    f.completed(ok);
                }
            }
            FlowIo::Rw {
                file,
                ddir,
                offset,
                len,
                tag,
            } => {
                self.last_was_sync = false;
                if let Some(t) = self.trims.as_deref_mut() {
                    // A verify trim: no bytes of the job's.
                    t.completed(ddir == Ddir::Trim);
                    if ddir == Ddir::Trim {
                        return;
                    }
                }
                if !ok {
                    return;
                }
                self.c.rw_completed += 1;
                self.c.bytes_done += u64::from(len);
                self.last_completed_read = ddir == Ddir::Read;
                if let Tag::Stamped { generation, seed } = tag {
                    let p = Piece {
                        file,
                        offset,
                        len,
                        generation,
                        seed,
                    };
                    if self.verify_phase {
                        self.written.add(p);
                    }
                    if let Some(t) = self.trims.as_deref_mut() {
                        t.written(p);
                    }
                    self.note_completed_write(file, offset);
                }
                if let (Tag::Check(_), Ddir::Read) = (tag, ddir) {
                    self.c.verified += 1;
                }
            }
        }
    }

    /// Remember the last `depth` completed writes of each file.
    fn note_completed_write(&mut self, file: u32, offset: u64) {
        let n = self.recent.len();
        let ring = &mut self.recent[file as usize % n];
        if ring.len() == self.depth {
            ring.pop_front();
        }
        ring.push_back(offset);
    }

    /// Whether the job verifies with a method that checks nothing (`null`).
    #[inline]
    pub fn checks_nothing(&self) -> bool {
        self.layout
            .as_ref()
            .is_some_and(|l| l.method == Method::Null)
    }
}

#[cfg(test)]
mod tests;
