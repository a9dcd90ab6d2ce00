//! fio's per-job results on the wire: `thread_stat` (through
//! [`crate::layout`]) and `group_run_stats`, read and written field by
//! field. A [`ThreadStat`] holds the bytes in the sender's layout; fields
//! are read and set by name, so nothing is lost between decoding and
//! re-encoding, and a new version is a new table, not new code.

use crate::layout::{Layout, DIRS, GROUP_STATS, IO_STAT, LAT_KINDS, PLAT_NR};
use crate::Error;

/// `struct io_stat`: min, max, samples, mean and the sum of squared
/// deviations from it (Welford's S; variance = S / (samples − 1)).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IoStat {
    pub max: u64,
    pub min: u64,
    pub samples: u64,
    pub mean: f64,
    pub s: f64,
}

impl IoStat {
    /// Fold another set of samples in (Chan et al.'s parallel update, as
    /// fio's `sum_stat`).
    pub fn merge(&mut self, o: &IoStat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        let (n1, n2) = (self.samples as f64, o.samples as f64);
        let n = n1 + n2;
        let delta = o.mean - self.mean;
        self.mean += delta * n2 / n;
        self.s += o.s + delta * delta * n1 * n2 / n;
        self.samples += o.samples;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    /// Sample standard deviation.
    pub fn stddev(&self) -> f64 {
        if self.samples > 1 {
            (self.s / (self.samples - 1) as f64).sqrt()
        } else {
            0.0
        }
    }
}

/// Latency kinds in `io_u_plat`, in fio's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatKind {
    Slat = 0,
    Clat = 1,
    Lat = 2,
}

/// One `thread_stat`, as bytes in a version's layout.
#[derive(Clone, Debug)]
pub struct ThreadStat {
    pub layout: Layout,
    buf: Vec<u8>,
}

impl ThreadStat {
    /// All zero.
    pub fn new(version: u16) -> Result<Self, Error> {
        let layout = Layout::of(version).ok_or(Error::Version {
            got: version,
            spoken: crate::VERSIONS.to_vec(),
        })?;
        let buf = vec![0; layout.ts_size];
        Ok(ThreadStat { layout, buf })
    }

    /// Read from the start of a TS payload. The pointers fio passes as
    /// offsets past the fixed part (per-priority latencies, steady-state
    /// rings) are dropped: their counts and offsets are zeroed.
    pub fn parse(version: u16, bytes: &[u8]) -> Result<Self, Error> {
        let mut t = ThreadStat::new(version)?;
        let n = t.layout.ts_size;
        let src = bytes.get(..n).ok_or_else(|| {
            Error::Garbage(format!(
                "a thread_stat of {} bytes (expected {n})",
                bytes.len()
            ))
        })?;
        t.buf.copy_from_slice(src);
        for d in 0..DIRS {
            t.set("nr_clat_prio", d, 0);
            t.set("clat_prio_offset", d, 0);
        }
        t.set("ss_iops_data_offset", 0, 0);
        t.set("ss_bw_data_offset", 0, 0);
        if t.layout.has("ss_lat_data_offset") {
            t.set("ss_lat_data_offset", 0, 0);
        }
        let state = t.get("ss_state", 0);
        t.set("ss_state", 0, state & !FIO_SS_DATA);
        Ok(t)
    }

    /// The bytes, in the layout's version.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    fn slot(&self, name: &str, i: usize) -> (usize, usize) {
        let (off, size, count) = self.layout.field(name);
        assert!(i < count, "{name}[{i}] past {count}");
        (off + i * size, size)
    }

    /// An integer field's element `i`.
    pub fn get(&self, name: &str, i: usize) -> u64 {
        let (o, size) = self.slot(name, i);
        let mut b = [0u8; 8];
        let n = size.min(8);
        b[..n].copy_from_slice(&self.buf[o..o + n]);
        u64::from_le_bytes(b)
    }

    /// Set an integer field's element `i` (truncated to its size).
    pub fn set(&mut self, name: &str, i: usize, v: u64) {
        let (o, size) = self.slot(name, i);
        let n = size.min(8);
        self.buf[o..o + n].copy_from_slice(&v.to_le_bytes()[..n]);
    }

    /// A `fio_fp64_t` element (IEEE 754 bits in the first 8 of 16 bytes).
    pub fn get_f(&self, name: &str, i: usize) -> f64 {
        f64::from_bits(self.get(name, i))
    }

    pub fn set_f(&mut self, name: &str, i: usize, v: f64) {
        let (o, _) = self.slot(name, i);
        self.buf[o..o + 16].fill(0);
        self.buf[o..o + 8].copy_from_slice(&v.to_bits().to_le_bytes());
    }

    /// A text field (up to its first NUL).
    pub fn text(&self, name: &str) -> String {
        let (o, _, count) = self.layout.field(name);
        let b = &self.buf[o..o + count];
        let end = b.iter().position(|&c| c == 0).unwrap_or(count);
        String::from_utf8_lossy(&b[..end]).into_owned()
    }

    /// Set a text field, cut to leave room for the NUL.
    pub fn set_text(&mut self, name: &str, s: &str) {
        let (o, _, count) = self.layout.field(name);
        let b = &mut self.buf[o..o + count];
        b.fill(0);
        let n = s.len().min(count - 1);
        b[..n].copy_from_slice(&s.as_bytes()[..n]);
    }

    /// An `io_stat` element (`clat_stat`, `slat_stat`, `lat_stat`,
    /// `bw_stat`, `iops_stat`, `sync_stat`).
    pub fn io_stat(&self, name: &str, i: usize) -> IoStat {
        let (o, _) = self.slot(name, i);
        let u = |k: usize| u64::from_le_bytes(self.buf[o + k..o + k + 8].try_into().expect("8"));
        IoStat {
            max: u(0),
            min: u(8),
            samples: u(16),
            mean: f64::from_bits(u(24)),
            s: f64::from_bits(u(40)),
        }
    }

    pub fn set_io_stat(&mut self, name: &str, i: usize, v: &IoStat) {
        let (o, _) = self.slot(name, i);
        let b = &mut self.buf[o..o + IO_STAT];
        b.fill(0);
        b[0..8].copy_from_slice(&v.max.to_le_bytes());
        b[8..16].copy_from_slice(&v.min.to_le_bytes());
        b[16..24].copy_from_slice(&v.samples.to_le_bytes());
        b[24..32].copy_from_slice(&v.mean.to_bits().to_le_bytes());
        b[40..48].copy_from_slice(&v.s.to_bits().to_le_bytes());
    }

    /// The 1856 histogram bins of a latency kind and direction.
    pub fn plat(&self, kind: LatKind, dir: usize) -> Vec<u64> {
        let base = (kind as usize * DIRS + dir) * PLAT_NR;
        (0..PLAT_NR)
            .map(|k| self.get("io_u_plat", base + k))
            .collect()
    }

    pub fn set_plat(&mut self, kind: LatKind, dir: usize, bins: &[u64]) {
        let base = (kind as usize * DIRS + dir) * PLAT_NR;
        for (k, &c) in bins.iter().enumerate().take(PLAT_NR) {
            self.set("io_u_plat", base + k, c);
        }
    }

    /// Number of latency kinds × directions (for loops).
    pub const PLATS: usize = LAT_KINDS * DIRS;
}

/// fio's `FIO_SS_DATA`: steady-state rings follow the structure.
const FIO_SS_DATA: u64 = 1 << 2;

/// `struct group_run_stats` (packed, 164 bytes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GroupStats {
    pub max_run: [u64; 3],
    pub min_run: [u64; 3],
    pub max_bw: [u64; 3],
    pub min_bw: [u64; 3],
    pub iobytes: [u64; 3],
    pub agg: [u64; 3],
    pub kb_base: u32,
    pub unit_base: u32,
    pub sig_figs: u32,
    pub groupid: u32,
    pub unified_rw_rep: u32,
}

impl GroupStats {
    pub fn parse(b: &[u8]) -> Result<Self, Error> {
        let b = b
            .get(..GROUP_STATS)
            .ok_or_else(|| Error::Garbage(format!("group stats of {} bytes", b.len())))?;
        let u = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8"));
        let w = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4"));
        let arr = |k: usize| [u(k * 24), u(k * 24 + 8), u(k * 24 + 16)];
        Ok(GroupStats {
            max_run: arr(0),
            min_run: arr(1),
            max_bw: arr(2),
            min_bw: arr(3),
            iobytes: arr(4),
            agg: arr(5),
            kb_base: w(144),
            unit_base: w(148),
            sig_figs: w(152),
            groupid: w(156),
            unified_rw_rep: w(160),
        })
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(GROUP_STATS);
        for a in [
            &self.max_run,
            &self.min_run,
            &self.max_bw,
            &self.min_bw,
            &self.iobytes,
            &self.agg,
        ] {
            for v in a {
                b.extend_from_slice(&v.to_le_bytes());
            }
        }
        for v in [
            self.kb_base,
            self.unit_base,
            self.sig_figs,
            self.groupid,
            self.unified_rw_rep,
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b
    }
}

/// A TS message's payload: a `thread_stat` and its group's totals.
#[derive(Clone, Debug)]
pub struct TsPdu {
    pub ts: ThreadStat,
    pub gs: GroupStats,
}

impl TsPdu {
    pub fn parse(version: u16, b: &[u8]) -> Result<Self, Error> {
        let ts = ThreadStat::parse(version, b)?;
        let n = ts.layout.ts_size;
        if b.len() < ts.layout.ts_pdu_size() {
            return Err(Error::Garbage(format!(
                "a TS message of {} bytes (expected at least {})",
                b.len(),
                ts.layout.ts_pdu_size()
            )));
        }
        let gs = GroupStats::parse(&b[n..])?;
        Ok(TsPdu { ts, gs })
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut b = self.ts.bytes().to_vec();
        b.extend_from_slice(&self.gs.bytes());
        b.resize(self.ts.layout.ts_pdu_size(), 0);
        b
    }
}
