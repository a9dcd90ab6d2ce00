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
pub(crate) mod step;
mod think;
mod trim;
mod verifying;
mod vstate;
pub mod written;

use crate::plan::{IoPlan, Region};
use crate::replay::cursor::{Next, Replay};
use crate::replay::record::Recorder;
use crate::verify::{state::SavedState, Expect, Layout, Method};
use ssdready_core::req::Ddir;
use ssdready_core::resolved::FlowConfig;
pub use step::{FlowIo, Step, Tag};
use think::Think;
use written::{Piece, Written};

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
    /// Bytes of a pass (more than the regions when a verifying job's
    /// writes wrap: [`FlowConfig::pass_len`]).
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
    /// The flow of worker `worker` (0-based clone index) of the job
    /// resolved as `cfg`, over `regions`.
    pub fn new(cfg: &FlowConfig, regions: &[Region], worker: u32) -> Self {
        let region_bytes: u64 = regions.iter().map(|r| r.len).sum();
        let size = region_bytes * cfg.moves;
        let limit = cfg.limit(region_bytes);
        let pass_len = cfg.pass_len(size, limit);
        // A pass longer than the regions writes blocks twice.
        let rewrites = cfg.rewrites || pass_len > size;
        JobFlow {
            replay: None,
            plan: IoPlan::new(&cfg.plan, regions, worker),
            stage: Stage::Start,
            pending: None,
            think: Think::of(cfg.think),
            c: Counts::default(),
            loops_left: cfg.loops,
            loops: u64::from(cfg.loops),
            limit,
            pass_len,
            max_bs: cfg.max_bs,
            number_ios: cfg.number_ios,
            time_based: cfg.time_based,
            writes: cfg.writes,
            fsync_every: cfg.fsync_every,
            fdatasync_every: cfg.fdatasync_every,
            range_every: cfg.range_every,
            pass_fsync: cfg.pass_fsync,
            unlink_each_loop: cfg.unlink_each_loop,
            invalidate: cfg.invalidate,
            wrap_invalidate: cfg.wrap_invalidate(regions.len()),
            last_was_sync: false,
            last_write_file: 0,
            passes: 0,
            plan_done: false,
            lean: false,
            unbounded: false,
            ios_cap: u64::MAX,
            pass_cap: u64::MAX,
            main_cap: u64::MAX,
            main_dirs: cfg.main_dirs,
            verify_phase: cfg.verify_phase,
            check_reads: cfg.check_reads,
            check_generation: cfg.check_generation(rewrites),
            dry_run: cfg.dry_run,
            experimental: cfg.experimental,
            written: Written::new(!rewrites),
            backlog: cfg.backlog,
            backlog_batch: cfg.backlog_batch,
            batch_left: 0,
            last_completed_read: false,
            replay_written: 0,
            replay_generation: 0,
            state: None,
            skipped_by_state: 0,
            fsynced: cfg.fsynced.then(Box::default),
            dry_counts: [(0, 0); 3],
            trims: cfg.trims.map(|t| Box::new(trim::Trims::new(t))),
            depth: cfg.depth.get() as usize,
            recent: vec![Default::default(); regions.len().max(1)],
            seed: cfg.randseed ^ u64::from(worker).wrapping_mul(0xa076_1d64_78bd_642f),
            layout: cfg.verify.as_ref().map(|v| Layout {
                method: v.method,
                interval: v.interval,
                header_offset: v.header_offset,
                pattern: v.pattern.clone(),
            }),
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
        let issued_all = self.c.rw_issued >= self.ios_cap
            || (!self.time_based && self.c.main_issued >= self.main_cap);
        let counts = (self.c.rw_issued, self.c.rw_completed);
        if let Some(s) = self.think.step((inflight, now), issued_all, counts) {
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
