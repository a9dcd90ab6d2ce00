//! The I/O plan of one worker: which file, direction, offset and size each
//! next I/O has, and when the job's work is done — fio's offset and
//! block-size generation (io_u.c), rule for rule where a job file can tell
//! the difference:
//!
//! * **Sequential** offsets continue where the direction's previous I/O
//!   ended; `rw=read:8k` adds 8k (holes), `rw=read:-8k` goes backwards,
//!   wrapping as fio does (`get_next_seq_offset`).
//! * **Random** offsets with fio's random map visit every block once per
//!   pass. One block size: a keyed permutation ([`Permutation`]) does it in
//!   O(1) memory. Several sizes: a real map ([`RandMap`]): a block already
//!   done moves on to the next free one, and an I/O that would run into
//!   done blocks is cut short, as fio's `mark_random_map` cuts it — so a
//!   mixed-size job moves fio's bytes, not more.
//!   Without the map (`norandommap`, `blockalign`), or with a skewed
//!   distribution, offsets are drawn with repeats; skewed ones come from
//!   fio's own generators (`dists`), their ranks scattered by the
//!   permutation as fio scatters them with a hash; zoned ones from fio's
//!   zone table.
//! * `rw=randread:N` takes a new random offset every N I/Os, the others
//!   following `rw_sequencer`.
//! * **Block sizes** per direction; a range is drawn as fio draws it
//!   (`min + max·u`, clamped, rounded to the minimum) and a size that
//!   would pass the end of the region is drawn again.
//! * **Files**: chosen by `files::FileChooser`; a file whose region is
//!   done is skipped until every file is, then all start over (a new
//!   pass, for `loops`, `io_size` beyond `size`, or time-based jobs).
//!
//! Everything is deterministic in the job's `randseed` and the worker's
//! index, so runs repeat.

mod dists;
mod files;
mod permutation;
mod randmap;
mod run;
mod setup;
pub mod sprandom;
mod state;

pub use permutation::Permutation;
pub use randmap::RandMap;
pub use state::Region;
use state::{FileState, Run, Strided};

use files::FileChooser;
use rand::rngs::SmallRng;
use rand::{Rng, RngCore, SeedableRng};
use setup::{bytes_left, file_states, strided_zones, zone_tables};
use ssdready_core::req::Ddir;
// How random offsets are drawn (worked out in the job's resolution).
use ssdready_core::resolved::OffsetDraw as RandomMode;
pub use ssdready_core::resolved::PlanConfig;
use ssdready_core::spec::{RwMode, RwSequencer};

/// The offset generator and work budget of one worker.
#[derive(Clone)]
pub struct IoPlan {
    files: Vec<FileState>,
    /// `random_distribution=sequence`: the block indices, whether each
    /// round moves on by their count, and the I/Os drawn so far.
    sequence: Option<(Box<[u64]>, bool, u64)>,
    /// Files whose region is done this pass.
    done: Vec<bool>,
    chooser: FileChooser,
    rw: RwMode,
    rwmixread: u32,
    /// Each direction's bssplit, lightest first (fio sorts it so).
    splits: [Vec<(u64, u32)>; 3],
    ba: [u64; 3],
    min_bs: [u64; 3],
    /// Each direction's largest size (hoisted out of [`IoPlan::block_size`]).
    max_bs: [u64; 3],
    /// fio's `rw_min_bs`: the smallest block size of any direction.
    unit: u64,
    bs_unaligned: bool,
    /// `bs_is_seq_rand` (see [`IoPlan::bs_dir`]).
    bs_is_seq_rand: bool,
    mode: RandomMode,
    /// Zone tables per direction, and whether they are in bytes.
    zones: [Option<Vec<(u64, u64)>>; 3],
    zoned_abs: bool,
    seq_nr: u32,
    seq_left: u32,
    seq_add: i64,
    sequencer: RwSequencer,
    /// fio's `percentage_random` per direction, and its own draws
    /// (fio's `seq_rand_state`).
    perc_rand: [u32; 3],
    seq_rand: SmallRng,
    time_based: bool,
    skewed_service: bool,
    rng: SmallRng,
    seed: u64,
    bytes_left: Option<u64>,
    ios_left: Option<u64>,
    /// Sequential I/O with holes (`rw=read:512k`), not time-based, no
    /// `io_size`: the passes (`loops`) after which the job ends when a
    /// block no longer fits — fio stops there rather than wrapping to
    /// make up `size` (its `t0007` test: 87,040 KiB of a 128 MiB file).
    holed_loops: Option<u64>,
    /// The direction of the next I/O, when already drawn (rate pacing).
    pending: Option<Ddir>,
    /// `trimwrite`: each trim is followed by a write of the same block.
    trim_then_write: bool,
    /// The write owed to the last trim (file, absolute offset, length).
    owed_write: Option<(u32, u64, u32)>,
    /// I/Os since every file was last started over.
    ios_this_pass: u64,
    /// Files whose pass ended (their offsets start over), not yet taken.
    wrapped: Vec<u32>,
    /// fio's `zonemode=strided`, with one file.
    strided: Option<Strided>,
    /// The common case [`IoPlan::next_fast`] plans: one file, one block
    /// size, the permutation or plain sequential offsets.
    fast: bool,
    /// The direction of every I/O when the job has one (not a mix).
    fixed_ddir: Option<Ddir>,
    /// The shortcut's I/Os granted in one go ([`run`]).
    run: Run,
    /// fio's `sprandom`: the one file's block sequence.
    spr: Option<Box<sprandom::Sprandom>>,
}

impl IoPlan {
    /// The plan of worker `worker` (0-based clone index) of the job
    /// resolved as `cfg`, over `regions`.
    pub fn new(cfg: &PlanConfig, regions: &[Region], worker: u32) -> Self {
        let seed = cfg.randseed ^ (worker as u64).wrapping_mul(0x2545_f491_4f6c_dd1d);
        let mut rng = SmallRng::seed_from_u64(seed);
        let mode = cfg.draw;
        let strided = strided_zones(cfg, regions);
        let files = file_states(cfg, regions, strided, seed, &mut rng);
        let chooser = FileChooser::new(
            cfg.file_service,
            cfg.file_service_nr,
            cfg.random_center,
            files.len().max(1),
            &mut rng,
        );
        IoPlan {
            sequence: cfg
                .sequence
                .as_ref()
                .map(|(l, stride)| (l.clone(), *stride, 0)),
            done: vec![false; files.len()],
            fast: files.len() == 1 && strided.is_none() && cfg.fast_shape,
            files,
            chooser,
            rw: cfg.rw,
            rwmixread: cfg.rwmixread,
            splits: cfg.splits.clone(),
            ba: cfg.ba,
            min_bs: cfg.min_bs,
            max_bs: cfg.max_bs,
            unit: cfg.unit,
            bs_unaligned: cfg.bs_unaligned,
            bs_is_seq_rand: cfg.bs_is_seq_rand,
            mode,
            zones: zone_tables(cfg),
            zoned_abs: cfg.zoned_abs,
            seq_nr: cfg.seq_nr,
            seq_left: cfg.seq_nr,
            seq_add: cfg.seq_add,
            sequencer: cfg.sequencer,
            perc_rand: cfg.percentage_random,
            seq_rand: SmallRng::seed_from_u64(seed ^ 0x7065_7263_5f72_616e),
            time_based: cfg.time_based,
            skewed_service: cfg.file_service.is_skewed(),
            rng,
            seed,
            bytes_left: bytes_left(cfg, regions),
            holed_loops: cfg.holed_loops,
            ios_left: cfg.number_ios,
            pending: None,
            trim_then_write: cfg.trim_then_write,
            owed_write: None,
            ios_this_pass: 0,
            wrapped: Vec::new(),
            strided,
            fixed_ddir: fixed_ddir(cfg.rw),
            run: Run::default(),
            spr: setup::sprandom(cfg, regions, seed),
        }
    }

    /// A target whose pass over its region ended (its offsets started
    /// over) since the last call, once each.
    pub fn take_wrap(&mut self) -> Option<u32> {
        self.wrapped.pop()
    }

    /// fio's zonemode=zbd moved or cut the last I/O of `file` in
    /// direction `d` ([`crate::zbd`]): the budget gets back the `planned`
    /// bytes and pays the `issued` and `skipped` ones (fio counts the bytes
    /// done and its io_skip_bytes); a sequential job goes on from `next`
    /// (absolute), as fio's last_pos after the adjustment.
    pub fn zbd_moved(
        &mut self,
        file: u32,
        d: Ddir,
        planned: u64,
        issued: u64,
        skipped: u64,
        next: u64,
    ) {
        if let Some(left) = &mut self.bytes_left {
            *left = left
                .saturating_add(planned)
                .saturating_sub(issued.saturating_add(skipped));
        }
        let random = self.rw.is_random();
        if let Some(f) = self.files.iter_mut().find(|f| f.region.file == file) {
            if !random {
                f.last_pos[d.idx()] = next.saturating_sub(f.region.offset);
            }
        }
    }

    /// Bytes still to issue (None when time based).
    pub fn bytes_left(&self) -> Option<u64> {
        self.bytes_left
    }

    fn draw_ddir(&mut self) -> Ddir {
        match self.fixed_ddir {
            Some(d) => d,
            None => {
                if self.rng.random_range(0..100u32) < self.rwmixread {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
        }
    }

    /// The direction of the next I/O (drawn now and kept for it).
    pub fn next_ddir(&mut self) -> Ddir {
        if self.owed_write.is_some() {
            return Ddir::Write;
        }
        match self.pending {
            Some(d) => d,
            None => {
                let d = self.draw_ddir();
                self.pending = Some(d);
                d
            }
        }
    }

    /// Make the next I/O one of direction `d` (fio's rate logic switches
    /// to the other direction when this one is ahead of its rate).
    pub fn set_next_ddir(&mut self, d: Ddir) {
        self.pending = Some(d);
    }

    /// Start every file over (a new pass).
    fn new_pass(&mut self) {
        let seed = self.seed;
        for (i, f) in self.files.iter_mut().enumerate() {
            Self::restart(f, i, seed);
            self.wrapped.push(f.region.file);
        }
        self.done.iter_mut().for_each(|d| *d = false);
        self.ios_this_pass = 0;
    }

    fn restart(f: &mut FileState, i: usize, seed: u64) {
        f.last_pos = [0; 3];
        f.last_start = [None; 3];
        f.pass += 1;
        f.perm_pos = 0;
        f.perm = Permutation::new(f.blocks, seed ^ ((i as u64) << 32) ^ f.pass);
        if let Some(m) = &mut f.map {
            m.clear();
        }
    }

    /// The next I/O as (file, direction, absolute offset, length), or None
    /// when the job's budget (io_size × loops, number_ios) is spent.
    #[inline(always)]
    pub fn next_io(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        debug_assert!(self.run_settled(), "a run is settled first");
        // The shortcut inline; the rest (and fio's trimwrite, which the
        // shortcut never has) out of line.
        if self.fast {
            if let Some(io) = self.next_fast() {
                return Some(io);
            }
        }
        self.next_io_general()
    }

    /// [`IoPlan::next_io`] past its shortcut.
    #[inline(never)]
    fn next_io_general(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        // fio's trimwrite: the write of the block just trimmed, which the
        // job's size does not count (size=1m: 1 MiB trimmed, 1 MiB written).
        if let Some((file, offset, len)) = self.owed_write.take() {
            self.pending = None;
            return Some((file, Ddir::Write, offset, len));
        }
        let io = self.next_planned_io()?;
        if self.trim_then_write && io.1 == Ddir::Trim {
            self.owed_write = Some((io.0, io.2, io.3));
        }
        Some(io)
    }

    /// [`IoPlan::next_io`] without fio's trimwrite (or the shortcut).
    #[inline]
    fn next_planned_io(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        if self.ios_left == Some(0) || self.bytes_left == Some(0) || self.files.is_empty() {
            return None;
        }
        let ddir = self.next_ddir();
        self.pending = None;
        let d = ddir.idx();
        let (fi, rel, len, random) = self.place(d)?;
        let mut len = len;
        if random && self.mode == RandomMode::Map {
            let map = self.files[fi].map.as_mut().expect("a map in map mode");
            let marked = map.mark_run(rel / self.unit, len.div_ceil(self.unit));
            len = len.min(marked * self.unit);
        }
        if let Some(left) = self.bytes_left {
            if left < len {
                len = left / self.unit * self.unit;
                if len == 0 {
                    return None;
                }
            }
        }
        let f = &mut self.files[fi];
        // Where the next sequential I/O starts (random jobs need it only
        // between random offsets: rw=randread:N).
        if !random || self.seq_nr > 1 || self.perc_rand[d] < 100 {
            f.last_start[d] = Some(rel);
            f.last_pos[d] = rel + len;
        }
        if let Some(left) = &mut self.bytes_left {
            *left -= len;
        }
        if let Some(n) = &mut self.ios_left {
            *n -= 1;
        }
        if let Some(z) = &mut self.strided {
            z.bytes += len;
        }
        self.ios_this_pass += 1;
        Some((f.region.file, ddir, f.region.offset + rel, len as u32))
    }

    /// The next I/O of the common case (one file, one block size, the
    /// permutation or plain sequential offsets) in the middle of a pass, as
    /// [`IoPlan::next_planned_io`] gives it; None (having changed nothing
    /// but the drawn direction, which the general path then takes): ask
    /// that.
    #[inline(always)]
    fn next_fast(&mut self) -> Option<(u32, Ddir, u64, u32)> {
        let len = self.unit;
        if self.ios_left == Some(0)
            || self.bytes_left.is_some_and(|l| l < len)
            || !matches!(self.done[..], [false])
            || self.files[0].region.len < len
        {
            return None;
        }
        // A job of one direction draws nothing (what next_ddir would give).
        let ddir = match (self.pending, self.fixed_ddir) {
            (Some(d), _) | (None, Some(d)) => d,
            (None, None) => self.next_ddir(),
        };
        let d = ddir.idx();
        let f = &mut self.files[0];
        let rel = if self.rw.is_random() {
            if f.perm_pos == f.blocks {
                return None;
            }
            let b = f.perm.map(f.perm_pos);
            f.perm_pos += 1;
            b * len
        } else {
            let rel = f.last_pos[d];
            if rel.saturating_add(len) > f.region.len {
                return None;
            }
            f.last_start[d] = Some(rel);
            f.last_pos[d] = rel + len;
            rel
        };
        self.pending = None;
        if let Some(left) = &mut self.bytes_left {
            *left -= len;
        }
        if let Some(n) = &mut self.ios_left {
            *n -= 1;
        }
        self.ios_this_pass += 1;
        Some((f.region.file, ddir, f.region.offset + rel, len as u32))
    }

    /// A file, offset (relative to its region), length and whether the
    /// offset was random; marks files done and starts passes as needed.
    #[inline]
    fn place(&mut self, d: usize) -> Option<(usize, u64, u64, bool)> {
        // Each file can be found done once per pass, and a pass that
        // issues nothing ends the job (nothing fits anywhere).
        for _ in 0..=2 * self.files.len() + 1 {
            let pick = if self.files.len() == 1 {
                (!self.done[0]).then_some(0)
            } else {
                self.chooser.pick(&self.done, &mut self.rng)
            };
            let Some(fi) = pick else {
                if self.ios_this_pass == 0 && self.files.iter().all(|f| f.pass > 0) {
                    return None;
                }
                if let Some(loops) = self.holed_loops {
                    if self.files.iter().all(|f| f.pass + 1 >= loops) {
                        return None;
                    }
                }
                self.new_pass();
                continue;
            };
            let placed = self.offset(fi, d).and_then(|(rel, random)| {
                Some((
                    rel,
                    self.block_size(fi, self.bs_dir(d, random), rel)?,
                    random,
                ))
            });
            match placed {
                Some((rel, len, random)) => return Some((fi, rel, len, random)),
                // sprandom's sequence ends the job (fio: td->done).
                None if self.mode == RandomMode::Sprandom => return None,
                None if self.skewed_service => {
                    Self::restart(&mut self.files[fi], fi, self.seed);
                    self.wrapped.push(self.files[fi].region.file);
                }
                None => self.done[fi] = true,
            }
        }
        None
    }

    /// The next offset in file `fi` for direction `d`, and whether it is
    /// random; None when the file is done.
    #[inline]
    fn offset(&mut self, fi: usize, d: usize) -> Option<(u64, bool)> {
        if self.strided.is_some() {
            self.enter_zone(fi, d);
        }
        if !self.rw.is_random() {
            return self.seq_offset(fi, d).map(|o| (o, false));
        }
        // fio: `ddir_seq_nr` counts down to the next random offset.
        self.seq_left -= 1;
        if self.seq_left == 0 {
            self.seq_left = self.seq_nr;
            if self.should_do_random(d) {
                return self.random_offset(fi, d).map(|o| (o, true));
            }
            // fio: the offset after the last I/O, or a random one past
            // the end.
            return match self.seq_offset(fi, d) {
                Some(o) => Some((o, false)),
                None => self.random_offset(fi, d).map(|o| (o, true)),
            };
        }
        match self.sequencer {
            RwSequencer::Sequential => match self.seq_offset(fi, d) {
                Some(o) => Some((o, false)),
                None => self.random_offset(fi, d).map(|o| (o, true)),
            },
            RwSequencer::Identical => Some((self.files[fi].last_start[d].unwrap_or(0), false)),
        }
    }

    /// fio's `should_do_random`: with `percentage_random=P` below 100, a
    /// draw from 1 to 100 at most P.
    fn should_do_random(&mut self, d: usize) -> bool {
        self.perc_rand[d] >= 100 || self.seq_rand.random_range(1..=100u32) <= self.perc_rand[d]
    }

    /// fio's `setup_strided_zone_mode`: after `zonesize` bytes in a zone,
    /// the next starts `zonerange + zoneskip` further (at the region's
    /// start past its end); within a zone, sequential I/O wraps to the
    /// zone's start, and the random map starts over every `zonerange`.
    fn enter_zone(&mut self, fi: usize, d: usize) {
        let Some(z) = &mut self.strided else {
            return;
        };
        let f = &mut self.files[fi];
        if z.bytes >= z.size {
            z.bytes = 0;
            z.start += z.range + z.skip;
            if z.start >= f.region.len {
                z.start = 0;
            }
            f.last_pos[d] = z.start;
        }
        if f.last_pos[d] >= z.start + z.range {
            f.last_pos[d] = z.start;
        }
        if z.bytes % z.range == 0 && self.rw.is_random() {
            Self::restart(f, fi, self.seed);
            f.last_pos[d] = z.start;
        }
    }

    /// fio's `get_next_seq_offset`, relative to the region.
    fn seq_offset(&mut self, fi: usize, d: usize) -> Option<u64> {
        let single = self.files.len() == 1;
        let (add, time_based) = (self.seq_add, self.time_based);
        let f = &mut self.files[fi];
        let len = f.region.len;
        if f.last_pos[d] >= len && time_based && single {
            f.last_pos[d] = 0;
            self.wrapped.push(f.region.file);
        }
        if f.last_pos[d] >= len {
            return None;
        }
        // Backwards I/O in a region that does not start the file begins
        // at its end.
        if f.last_pos[d] == 0 && f.region.offset > 0 && add < 0 {
            f.last_pos[d] = len;
        }
        let pos = f.last_pos[d];
        if pos == 0 || add == 0 {
            return Some(pos);
        }
        let next = i128::from(pos) + i128::from(add);
        if next >= 0 && next < i128::from(len) {
            return Some(next as u64);
        }
        // Past either end: holes wrap to the start, backwards I/O to the end.
        Some(if add > 0 {
            0
        } else {
            (i128::from(len) + i128::from(add)).max(0) as u64
        })
    }

    /// fio's `last_block`: random offsets of `d` are below this many `ba`.
    fn last_block(&self, fi: usize, d: usize) -> u64 {
        let len = self.strided.map_or(self.files[fi].region.len, |z| {
            z.range.min(self.files[fi].region.len)
        });
        let slack = self.min_bs[d].saturating_sub(self.ba[d]);
        (len.saturating_sub(slack) / self.ba[d]).max(1)
    }

    #[inline]
    fn random_offset(&mut self, fi: usize, d: usize) -> Option<u64> {
        let zone = self.strided.map_or(0, |z| z.start);
        self.random_in_region(fi, d).map(|o| zone + o)
    }

    /// A random offset relative to the region (to the zone when strided).
    #[inline]
    fn random_in_region(&mut self, fi: usize, d: usize) -> Option<u64> {
        let ba = self.ba[d];
        match self.mode {
            RandomMode::Permutation => {
                let f = &mut self.files[fi];
                if f.perm_pos == f.blocks {
                    if !self.time_based {
                        return None;
                    }
                    Self::restart(f, fi, self.seed);
                    self.wrapped.push(f.region.file);
                }
                let b = f.perm.map(f.perm_pos);
                f.perm_pos += 1;
                Some(b * self.unit)
            }
            RandomMode::Map => {
                let lastb = self.last_block(fi, d);
                let b = self.rng.random_range(0..lastb) * ba / self.unit;
                let map = self.files[fi].map.as_ref().expect("a map in map mode");
                let free = match map.next_free(b) {
                    Some(x) => x,
                    None if self.time_based => {
                        Self::restart(&mut self.files[fi], fi, self.seed);
                        self.wrapped.push(self.files[fi].region.file);
                        b
                    }
                    None => return None,
                };
                Some(free * self.unit)
            }
            RandomMode::Free => Some(self.rng.random_range(0..self.last_block(fi, d)) * ba),
            RandomMode::Sprandom => Some(self.spr.as_mut()?.next_block()? * self.unit),
            RandomMode::Free32 => {
                let r = u64::from(self.rng.next_u32());
                Some(((u128::from(r) * u128::from(self.last_block(fi, d))) >> 32) as u64 * ba)
            }
            RandomMode::Skewed => {
                let lastb = self.last_block(fi, d);
                let f = &self.files[fi];
                let s = f.skew.as_ref().expect("a skewed generator");
                let rank = s.rank(&mut self.rng);
                let b = s.place(f.perm.map(rank % f.blocks));
                Some(b % lastb * ba)
            }
            RandomMode::Zoned => {
                let lastb = self.last_block(fi, d);
                let Some(table) = &self.zones[d] else {
                    return Some(self.rng.random_range(0..lastb) * ba);
                };
                let (start, end) = table[self.rng.random_range(0..100usize)];
                let (first, count) = if self.zoned_abs {
                    // Zones beyond the region are refused before the run.
                    let first = (start / ba).min(lastb - 1);
                    (first, (end / ba).min(lastb).saturating_sub(first))
                } else {
                    (start * lastb / 100, lastb * (end - start) / 100)
                };
                Some((first + self.rng.random_range(0..count.max(1))) * ba)
            }
            RandomMode::Sequence => {
                let lastb = self.last_block(fi, d);
                let (list, stride, n) = self.sequence.as_mut()?;
                let len = list.len() as u64;
                let base = if *stride { *n / len * len } else { 0 };
                let b = base + list[(*n % len) as usize];
                *n += 1;
                Some(b % lastb * ba)
            }
        }
    }

    /// Whose block sizes an I/O of direction `d` takes: its own, or with
    /// `bs_is_seq_rand` the read sizes when sequential and the write sizes
    /// when random (fio's `get_next_buflen`).
    #[inline]
    fn bs_dir(&self, d: usize, random: bool) -> usize {
        match (self.bs_is_seq_rand, random) {
            (false, _) => d,
            (true, false) => 0,
            (true, true) => 1,
        }
    }

    /// fio's `get_next_buflen`: a size of direction `d` that fits between
    /// `rel` and the end of file `fi`'s region; None when not even the
    /// smallest does (the file is done).
    #[inline]
    fn block_size(&mut self, fi: usize, d: usize, rel: u64) -> Option<u64> {
        let room = self.files[fi].region.len.checked_sub(rel)?;
        let (min, max) = (self.min_bs[d], self.max_bs[d]);
        if min > room {
            return None;
        }
        if min == max {
            return Some(min);
        }
        for _ in 0..64 {
            let u: f64 = self.rng.random();
            let mut len = if self.splits[d].is_empty() {
                min + (max as f64 * u) as u64
            } else {
                let point = u * 100.0;
                let mut cum = 0.0;
                let mut pick = min;
                for &(b, w) in &self.splits[d] {
                    pick = b;
                    cum += f64::from(w);
                    if point <= cum && pick <= room {
                        break;
                    }
                }
                pick
            };
            if !self.bs_unaligned {
                if min.is_power_of_two() {
                    len &= !(min - 1);
                } else {
                    len -= len % min;
                }
            }
            len = len.min(max);
            if len <= room && len >= min {
                return Some(len);
            }
        }
        Some(min)
    }
}

/// The direction of every I/O of `rw`, when it has one (not a mix).
fn fixed_ddir(rw: RwMode) -> Option<Ddir> {
    match rw {
        RwMode::Read | RwMode::RandRead => Some(Ddir::Read),
        RwMode::Write | RwMode::RandWrite => Some(Ddir::Write),
        RwMode::Trim | RwMode::RandTrim => Some(Ddir::Trim),
        RwMode::ReadWrite | RwMode::RandRw => None,
    }
}

#[cfg(test)]
mod tests;
