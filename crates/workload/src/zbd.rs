//! fio's `zonemode=zbd`: I/O on zoned block devices, rule for rule as fio's
//! zbd.c places it, with no I/O of its own (the run does the zone resets).
//!
//! A zoned device takes writes only at each zone's write pointer (wp), so
//! fio moves every write there: a **sequential** write job's offsets land
//! on write pointers as they come (a zone with data is continued at its
//! wp; with `zonecapacity` below the zone size, the rest of each zone is
//! skipped and counts toward the job's size, as fio's `io_skip_bytes`); a
//! **random** write goes to the write pointer of one of the *write zones*:
//! the zones being written, at most `max_open_zones` of them on the device
//! (the device's own limit when the job sets none), `job_max_open_zones`
//! per job; which one is picked from the random offset, fio's
//! `pick_random_zone_idx`. A zone too full for the next block is **reset**
//! (its data dropped, its wp back at its start) before the write, and with
//! `zone_reset_frequency` set, once the valid data in the job's zones is
//! past `zone_reset_threshold` × the job's size, every 1/frequency-th write
//! resets its zone first (fio's garbage-collection simulation). A write is
//! cut short at the zone's capacity (to a whole number of the smallest
//! block size). Reads stay below write pointers (`read_beyond_wp=0`):
//! a read moves to a zone with data (the next one for sequential jobs,
//! the nearest either way for random ones) and is cut at the wp; with no
//! data anywhere the job ends, as fio's. Trims reset zones (a trim of a
//! zone's start resets that zone, as fio's `zbd_do_io_u_trim`).
//!
//! The zone table is shared by every job on a file ([`ZbdFile`], behind a
//! lock), each job keeps its own range and limits ([`ZbdJob`]). Zones come
//! from the device (a zoned emulated drive, a zoned block device), or, for
//! any other target, are fio's emulation: zones of `zonesize` (all empty
//! at the start) that only this bookkeeping knows of.

use ssdready_core::req::Ddir;

pub use ssdready_core::spec::ZbdOptions;

/// One zone as fio tracks it (bytes, absolute on the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostZone {
    pub start: u64,
    pub len: u64,
    pub capacity: u64,
    pub wp: u64,
    /// In the write-zone set.
    write: bool,
}

impl HostZone {
    /// A zone as reported (or emulated).
    pub fn new(start: u64, len: u64, capacity: u64, wp: u64) -> HostZone {
        HostZone {
            start,
            len,
            capacity,
            wp,
            write: false,
        }
    }
    fn cap_end(&self) -> u64 {
        self.start + self.capacity
    }
    fn remainder(&self) -> u64 {
        self.cap_end().saturating_sub(self.wp)
    }
    fn end(&self) -> u64 {
        self.start + self.len
    }
}

/// The zones of one file, shared by the jobs on it (fio's `zbd_info`).
#[derive(Clone, Debug)]
pub struct ZbdFile {
    pub zone_size: u64,
    pub zones: Vec<HostZone>,
    /// Whether the device is zoned (resets go to it) or zones are emulated.
    pub device_zoned: bool,
    write_zones: Vec<usize>,
    /// The write-zone limit (0: none).
    pub max_write_zones: u32,
    /// Bytes below write pointers in the jobs' zones (with a threshold).
    valid_bytes: u64,
    write_cnt: u32,
}

/// A job's `max_open_zones` above the device's limit (fio's text).
#[derive(Debug, thiserror::Error)]
#[error("Specified --max_open_zones ({user}) is larger than max ({device_max})")]
pub struct TooManyOpenZones {
    pub user: u32,
    pub device_max: u32,
}

/// What to do with one I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Issue it here; first reset zone `reset` when set (the table already
    /// shows it reset, and the write's wp advance).
    Io {
        offset: u64,
        len: u64,
        reset: Option<usize>,
    },
    /// A trim: reset zone `zone` instead, and count the trim done.
    ResetOnly { zone: usize, offset: u64, len: u64 },
    /// A sequential write at a zone's capacity end: move on to `to` (the
    /// zone's end), the bytes skipped counting toward the job's size.
    Skip { to: u64 },
    /// No I/O can be placed: the job ends (fio's io_u_eof), with why.
    Eof(&'static str),
}

/// One job's (worker's) view of a file's zones.
#[derive(Clone, Debug)]
pub struct ZbdJob {
    pub min_zone: usize,
    pub max_zone: usize,
    /// The job's region: start and length (fio's file_offset, io_size).
    pub file_offset: u64,
    pub io_size: u64,
    pub min_bs: [u64; 3],
    pub random: bool,
    pub opts: ZbdOptions,
    /// Zones this job put in the write-zone set.
    num_write_zones: u32,
    /// Zone resets it asked for (fio's nr_zone_resets).
    pub resets: u64,
    /// Whether it has written yet (fio's last_start[WRITE] != -1).
    wrote: bool,
}

impl ZbdFile {
    /// A file's zones; `max_write_zones` as fio settles it ([`Self::limit`]).
    pub fn new(zone_size: u64, zones: Vec<HostZone>, device_zoned: bool) -> ZbdFile {
        ZbdFile {
            zone_size,
            zones,
            device_zoned,
            write_zones: Vec::new(),
            max_write_zones: 0,
            valid_bytes: 0,
            write_cnt: 0,
        }
    }

    /// fio's emulated zones over `size` bytes (a regular file, a device
    /// that is not zoned): all empty.
    pub fn emulated(size: u64, zone_size: u64, capacity: u64) -> ZbdFile {
        let zs = zone_size.max(1);
        let zones = (0..size.div_ceil(zs))
            .map(|i| {
                let start = i * zs;
                let len = zs.min(size - start);
                HostZone::new(start, len, capacity.min(len), start)
            })
            .collect();
        ZbdFile::new(zs, zones, false)
    }

    /// fio's `zbd_set_max_write_zones`: the job's `max_open_zones` against
    /// the device's limit (host-managed devices only; 0: none).
    pub fn limit(&mut self, opts: &ZbdOptions, device_max: u32) -> Result<(), TooManyOpenZones> {
        let user = opts.max_open_zones;
        self.max_write_zones = if !self.device_zoned || opts.ignore_zone_limits || device_max == 0 {
            user
        } else if user == 0 {
            device_max
        } else if user <= device_max {
            user
        } else {
            return Err(TooManyOpenZones { user, device_max });
        };
        Ok(())
    }

    /// The zone holding `offset`.
    pub fn zone_of(&self, offset: u64) -> usize {
        ((offset / self.zone_size) as usize).min(self.zones.len().saturating_sub(1))
    }

    /// The job's zone range over region (`offset`, `len`): fio's min_zone
    /// and max_zone.
    pub fn job(
        &self,
        offset: u64,
        len: u64,
        min_bs: [u64; 3],
        random: bool,
        opts: &ZbdOptions,
    ) -> ZbdJob {
        let min_zone = self.zone_of(offset);
        let max_zone = (offset + len).div_ceil(self.zone_size) as usize;
        ZbdJob {
            min_zone,
            max_zone: max_zone.clamp(min_zone + 1, self.zones.len()),
            file_offset: offset,
            io_size: len,
            min_bs: min_bs.map(|b| b.max(1)),
            random,
            opts: opts.clone(),
            num_write_zones: 0,
            resets: 0,
            wrote: false,
        }
    }

    /// fio's `zbd_write_zone_get`.
    fn write_zone_get(&mut self, job: &mut ZbdJob, z: usize) -> bool {
        if self.max_write_zones == 0 {
            return true;
        }
        if self.zones[z].write {
            return self.zones[z].remainder() > 0;
        }
        if job.opts.job_max_open_zones > 0 && job.num_write_zones >= job.opts.job_max_open_zones {
            return false;
        }
        if self.write_zones.len() >= self.max_write_zones as usize {
            return false;
        }
        self.write_zones.push(z);
        self.zones[z].write = true;
        job.num_write_zones += 1;
        true
    }

    /// fio's `zbd_write_zone_put`.
    fn write_zone_put(&mut self, job: &mut ZbdJob, z: usize) {
        if let Some(i) = self.write_zones.iter().position(|&w| w == z) {
            self.write_zones.remove(i);
            self.zones[z].write = false;
            job.num_write_zones = job.num_write_zones.saturating_sub(1);
        }
    }

    fn pick_random_zone_idx(&self, job: &ZbdJob, offset: u64) -> usize {
        let n = self.write_zones.len() as u64;
        ((offset.saturating_sub(job.file_offset)) * n / job.io_size.max(1)) as usize
    }

    /// fio's `zbd_pick_write_zone`: a write zone in the job's range, from
    /// the quasi-random candidate on.
    fn pick_write_zone(&self, job: &ZbdJob, offset: u64) -> Option<usize> {
        let n = self.write_zones.len();
        let mut i = self.pick_random_zone_idx(job, offset);
        for _ in 0..n {
            if i >= n {
                i = 0;
            }
            let z = self.write_zones[i];
            if (job.min_zone..job.max_zone).contains(&z) {
                return Some(z);
            }
            i += 1;
        }
        None
    }

    /// fio's `zbd_convert_to_write_zone` (without its waits: the run's
    /// writes take the table's lock in turn).
    fn convert_to_write_zone(&mut self, job: &mut ZbdJob, zb: usize, offset: u64) -> Option<usize> {
        let min_bs = job.min_bs[1];
        if self.write_zone_get(job, zb) {
            return Some(zb);
        }
        let limited = self.max_write_zones > 0 || job.opts.job_max_open_zones > 0;
        let mut z = if limited {
            if self.write_zones.is_empty() {
                None
            } else {
                Some(self.pick_write_zone(job, offset)?)
            }
        } else {
            Some(self.zone_of(offset).clamp(job.min_zone, job.max_zone - 1))
        };
        if let Some(zi) = z {
            if self.zones[zi].remainder() >= min_bs {
                return Some(zi);
            }
        }
        // Choose another zone: for random jobs the first one again, then
        // the next ones that are not write zones, then any write zone with
        // room.
        if job.random && self.write_zone_get(job, zb) {
            return Some(zb);
        }
        let mut zi = z.take().unwrap_or(zb);
        for _ in 0..(job.io_size / self.zone_size).max(1) {
            zi += 1;
            if zi >= job.max_zone {
                zi = job.min_zone;
            }
            if self.zones[zi].write {
                continue;
            }
            if self.write_zone_get(job, zi) {
                return Some(zi);
            }
        }
        let range = job.min_zone..job.max_zone;
        let wz: Vec<usize> = self.write_zones.clone();
        wz.into_iter()
            .filter(|z| range.contains(z))
            .find(|&z| self.zones[z].remainder() >= min_bs && self.write_zone_get(job, z))
    }

    /// Place one I/O of direction `ddir` at `offset` (`len` bytes) for
    /// `job`: fio's `zbd_adjust_block` (module docs).
    pub fn adjust(&mut self, job: &mut ZbdJob, ddir: Ddir, offset: u64, len: u64) -> Decision {
        match ddir {
            Ddir::Read => self.adjust_read(job, offset, len),
            Ddir::Write => self.adjust_write(job, offset, len),
            Ddir::Trim => self.adjust_trim(job, offset, len),
        }
    }

    fn adjust_write(&mut self, job: &mut ZbdJob, offset: u64, len: u64) -> Decision {
        let min_bs = job.min_bs[1];
        if len > self.zone_size {
            return Decision::Eof("I/O buflen exceeds zone size");
        }
        let zb = self.zone_of(offset);
        let here = self.zones[zb];
        if !job.random && here.capacity < here.len && offset >= here.cap_end() {
            return Decision::Skip { to: here.end() };
        }
        let Some(z) = self.convert_to_write_zone(job, zb, offset) else {
            return Decision::Eof("no zone can take the write");
        };
        let mut reset_now = false;
        if job.opts.reset_frequency > 0.0
            && self.valid_bytes as f64 >= job.io_size as f64 * job.opts.reset_threshold
        {
            reset_now = self.dec_and_reset_write_cnt(job);
        }
        let mut reset = None;
        if reset_now || min_bs > self.zones[z].remainder() {
            let zone = &mut self.zones[z];
            self.valid_bytes = self.valid_bytes.saturating_sub(zone.wp - zone.start);
            if zone.wp > zone.start {
                job.resets += 1;
                reset = Some(z);
            }
            zone.wp = zone.start;
            if zone.capacity < min_bs {
                return Decision::Eof("zone capacity smaller than the minimum block size");
            }
        }
        let zone = self.zones[z];
        let new_len = len.min(zone.cap_end() - zone.wp) / min_bs * min_bs;
        if new_len < min_bs {
            return Decision::Eof("zone remainder too small");
        }
        let offset = zone.wp;
        self.zones[z].wp += new_len;
        if job.opts.reset_frequency > 0.0 {
            self.valid_bytes += new_len;
        }
        if self.zones[z].wp >= zone.cap_end() {
            self.write_zone_put(job, z);
        }
        job.wrote = true;
        Decision::Io {
            offset,
            len: new_len,
            reset,
        }
    }

    /// fio's write counter toward the next threshold reset.
    fn dec_and_reset_write_cnt(&mut self, job: &ZbdJob) -> bool {
        let every = || {
            if job.opts.reset_frequency > 0.0 {
                (1.0 / job.opts.reset_frequency).min(f64::from(u32::MAX)) as u32
            } else {
                u32::MAX
            }
        };
        if self.write_cnt == 0 {
            self.write_cnt = every();
        }
        self.write_cnt -= 1;
        if self.write_cnt == 0 {
            self.write_cnt = every();
            return true;
        }
        false
    }

    /// fio's `zbd_find_zone`: a zone with `min_bytes` of data after `zb`
    /// (and, for random jobs, before it, nearest first).
    fn find_zone(&self, job: &ZbdJob, zb: usize, min_bytes: u64) -> Option<usize> {
        let has = |z: usize| self.zones[z].start + min_bytes <= self.zones[z].wp;
        for k in 1..=self.zones.len() {
            let up = zb + k;
            if up < job.max_zone {
                if has(up) {
                    return Some(up);
                }
            } else if !job.random {
                return None;
            }
            if job.random {
                if let Some(down) = zb.checked_sub(k).filter(|&d| d >= job.min_zone) {
                    if has(down) {
                        return Some(down);
                    }
                } else if up >= job.max_zone {
                    return None;
                }
            }
        }
        None
    }

    fn adjust_read(&mut self, job: &mut ZbdJob, offset: u64, len: u64) -> Decision {
        if job.opts.read_beyond_wp {
            return Decision::Io {
                offset,
                len,
                reset: None,
            };
        }
        let min_bs = job.min_bs[0];
        let orig = self.zone_of(offset);
        let mut zb = orig;
        let mut offset = offset;
        let mut range = self.zones[zb].wp - self.zones[zb].start;
        if range < min_bs || (!job.random && offset + min_bs > self.zones[zb].wp) {
            let Some(z) = self.find_zone(job, zb, min_bs) else {
                return Decision::Eof("no zone has data to read");
            };
            zb = z;
            range = self.zones[zb].wp - self.zones[zb].start;
            if !job.random {
                offset = self.zones[zb].start;
            }
        }
        let zone = self.zones[zb];
        if range <= len {
            offset = zone.start;
        } else if job.random {
            let within = (offset - self.zones[orig].start) % (range - len);
            offset = zone.start + within / min_bs * min_bs;
        }
        let new_len = len.min(zone.wp.saturating_sub(offset)) / min_bs * min_bs;
        if new_len == 0 {
            return Decision::Eof("no zone has data to read");
        }
        Decision::Io {
            offset,
            len: new_len,
            reset: None,
        }
    }

    fn adjust_trim(&mut self, job: &mut ZbdJob, offset: u64, len: u64) -> Decision {
        let mut z = self.zone_of(offset);
        if job.random && self.zones[z].wp == self.zones[z].start {
            match self.find_zone(job, z, 1) {
                Some(f) => z = f,
                None => return Decision::Eof("no zone has data to trim"),
            }
        }
        let zone = self.zones[z];
        let offset = if job.random { zone.start } else { offset };
        if offset != zone.start {
            return Decision::Eof("trim offset not at a zone start");
        }
        self.write_zone_put(job, z);
        self.valid_bytes = self.valid_bytes.saturating_sub(zone.wp - zone.start);
        if zone.wp > zone.start {
            job.resets += 1;
        }
        self.zones[z].wp = zone.start;
        Decision::ResetOnly {
            zone: z,
            offset,
            len,
        }
    }

    /// fio's `zbd_adjust_ddir`: a mixed job's first I/O is a write when
    /// nothing is written and reads must stay below write pointers.
    pub fn adjust_ddir(&self, job: &ZbdJob, ddir: Ddir, mixed: bool, rwmix_write: u32) -> Ddir {
        if ddir != Ddir::Read || !mixed || job.wrote || job.opts.read_beyond_wp || rwmix_write == 0
        {
            return ddir;
        }
        Ddir::Write
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: u64 = 1 << 20;

    fn file(zones: u64, cap: u64) -> ZbdFile {
        ZbdFile::emulated(zones * 4 * MB, 4 * MB, cap)
    }

    fn job(f: &ZbdFile, random: bool, opts: ZbdOptions) -> ZbdJob {
        let size = f.zones.len() as u64 * f.zone_size;
        f.job(0, size, [4096, 4096, 4096], random, &opts)
    }

    fn io(d: Decision) -> (u64, u64, Option<usize>) {
        match d {
            Decision::Io { offset, len, reset } => (offset, len, reset),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sequential_writes_land_on_write_pointers_and_skip_past_capacity() {
        let mut f = file(2, 3 * MB);
        let mut j = job(&f, false, ZbdOptions::default());
        assert_eq!(io(f.adjust(&mut j, Ddir::Write, 0, MB)), (0, MB, None));
        // A zone with data continues at its wp whatever the plan said.
        assert_eq!(io(f.adjust(&mut j, Ddir::Write, 0, MB)).0, MB);
        assert_eq!(
            f.adjust(&mut j, Ddir::Write, 3 * MB, MB),
            Decision::Skip { to: 4 * MB }
        );
    }

    #[test]
    fn random_writes_go_to_open_zones_within_the_limit() {
        let mut f = file(16, 4 * MB);
        let opts = ZbdOptions {
            max_open_zones: 2,
            ..ZbdOptions::default()
        };
        f.limit(&opts, 0).unwrap();
        let mut j = job(&f, true, opts);
        let mut touched = std::collections::BTreeSet::new();
        for k in 0..64u64 {
            let off = (k * 7919 % 16) * 4 * MB + (k % 3) * 8192;
            let (o, len, _) = io(f.adjust(&mut j, Ddir::Write, off, 64 * 1024));
            let z = f.zone_of(o);
            assert_eq!(len, 64 * 1024);
            touched.insert(z);
            assert!(f.write_zones.len() <= 2);
        }
        assert_eq!(
            touched.len(),
            2,
            "64 writes of 64k fit in two zones: {touched:?}"
        );
    }

    #[test]
    fn full_zones_are_reset_before_the_next_write() {
        let mut f = file(1, 4 * MB);
        let mut j = job(&f, true, ZbdOptions::default());
        for _ in 0..4 {
            io(f.adjust(&mut j, Ddir::Write, 0, MB));
        }
        assert_eq!(io(f.adjust(&mut j, Ddir::Write, 0, MB)), (0, MB, Some(0)));
        assert_eq!(j.resets, 1);
    }

    #[test]
    fn the_reset_threshold_resets_every_nth_write_past_it() {
        let mut f = file(8, 4 * MB);
        let opts = ZbdOptions {
            reset_threshold: 0.25,
            reset_frequency: 0.5,
            ..ZbdOptions::default()
        };
        let mut j = job(&f, false, opts);
        let mut resets = 0;
        for k in 0..32u64 {
            let (_, _, r) = io(f.adjust(&mut j, Ddir::Write, k * MB, MB));
            resets += u64::from(r.is_some());
        }
        // 8 MiB (a quarter of 32) written, then every second write resets.
        assert!(resets >= 10, "{resets}");
    }

    #[test]
    fn reads_stay_below_write_pointers() {
        let mut f = file(4, 4 * MB);
        let mut j = job(&f, false, ZbdOptions::default());
        assert!(matches!(
            f.adjust(&mut j, Ddir::Read, 0, MB),
            Decision::Eof(_)
        ));
        let mut w = job(&f, false, ZbdOptions::default());
        io(f.adjust(&mut w, Ddir::Write, 8 * MB, MB + MB / 2));
        // Sequential: the next zone with data, cut at its wp.
        assert_eq!(io(f.adjust(&mut j, Ddir::Read, 0, MB)), (8 * MB, MB, None));
        assert_eq!(
            io(f.adjust(&mut j, Ddir::Read, 9 * MB, MB)),
            (9 * MB, MB / 2, None)
        );
        let beyond = ZbdOptions {
            read_beyond_wp: true,
            ..ZbdOptions::default()
        };
        let mut b = job(&f, false, beyond);
        assert_eq!(io(f.adjust(&mut b, Ddir::Read, 0, MB)), (0, MB, None));
    }

    #[test]
    fn trims_reset_zones_with_data() {
        let mut f = file(4, 4 * MB);
        let mut w = job(&f, false, ZbdOptions::default());
        io(f.adjust(&mut w, Ddir::Write, 4 * MB, MB));
        let mut t = job(&f, true, ZbdOptions::default());
        assert_eq!(
            f.adjust(&mut t, Ddir::Trim, 0, 4 * MB),
            Decision::ResetOnly {
                zone: 1,
                offset: 4 * MB,
                len: 4 * MB
            }
        );
        assert_eq!(f.zones[1].wp, 4 * MB);
    }

    #[test]
    fn a_user_limit_above_the_device_limit_is_refused_as_fio_does() {
        let mut f = ZbdFile::new(4 * MB, vec![HostZone::new(0, 4 * MB, 4 * MB, 0)], true);
        let opts = ZbdOptions {
            max_open_zones: 8,
            ..ZbdOptions::default()
        };
        assert_eq!(
            f.limit(&opts, 4).unwrap_err().to_string(),
            "Specified --max_open_zones (8) is larger than max (4)"
        );
        f.limit(&ZbdOptions::default(), 4).unwrap();
        assert_eq!(f.max_write_zones, 4);
        let ignore = ZbdOptions {
            ignore_zone_limits: true,
            ..opts
        };
        f.limit(&ignore, 4).unwrap();
        assert_eq!(f.max_write_zones, 8);
    }
}
