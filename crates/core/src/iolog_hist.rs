//! fio's latency histogram logs (`write_hist_log`, `log_hist_msec`,
//! `log_hist_coarseness`): `NAME_clat_hist.N.log`, one line per direction
//! each time an I/O completes `log_hist_msec` or more after the last line
//! of its direction: `time_ms, ddir, bs, c0, c1, …` where the counts are
//! the completion latencies that fell in each of fio's histogram bins
//! since that last line, and bs is the size of the I/O that ended the
//! interval (fio's `add_clat_sample`; the interval's end moves on by
//! exactly `log_hist_msec`, less any drift). No line is written for the
//! part of an interval left when the job ends, as in fio.
//!
//! ## fio's bins
//! fio 3.33 keeps `FIO_IO_U_PLAT_NR` = 29 × 64 = 1856 bins
//! (`FIO_IO_U_PLAT_BITS` = 6): values below 128 ns one bin each, then
//! every power of two split into 64 equal bins, the last bin taking every
//! value from 2^34 ns (17 s) on. (fio's own help text and
//! `tools/hist/fiologparser_hist.py` still say 1216 = 19 × 64, the layout
//! before fio counted in ns.) `log_hist_coarseness=c` sums 2^c adjacent
//! bins per column: 1856 / 2^c columns. ssdready's own histogram
//! ([`crate::hist`]) is finer and different, so these logs count each
//! latency in fio's layout directly ([`plat_val_to_idx`]).

use crate::req::Ddir;
use std::fmt::Write;

/// fio's `FIO_IO_U_PLAT_BITS`.
pub const PLAT_BITS: u32 = 6;
/// fio's `FIO_IO_U_PLAT_VAL`: bins per power of two.
pub const PLAT_VAL: u64 = 1 << PLAT_BITS;
/// fio's `FIO_IO_U_PLAT_GROUP_NR` (3.33).
pub const PLAT_GROUP_NR: usize = 29;
/// fio's `FIO_IO_U_PLAT_NR`: the number of bins.
pub const PLAT_NR: usize = PLAT_GROUP_NR * PLAT_VAL as usize;

/// fio's `plat_val_to_idx`: the bin of a latency of `val` ns.
pub fn plat_val_to_idx(val: u64) -> usize {
    let msb = if val == 0 {
        0
    } else {
        63 - val.leading_zeros()
    };
    if msb <= PLAT_BITS {
        return val as usize;
    }
    let error_bits = msb - PLAT_BITS;
    let base = ((error_bits + 1) as usize) << PLAT_BITS;
    let offset = ((PLAT_VAL - 1) & (val >> error_bits)) as usize;
    (base + offset).min(PLAT_NR - 1)
}

/// fio's `plat_idx_to_val`: the value a bin stands for (its midpoint,
/// truncated as fio truncates it).
pub fn plat_idx_to_val(idx: usize) -> u64 {
    assert!(idx < PLAT_NR, "bin {idx} is past fio's {PLAT_NR}");
    if idx < (PLAT_VAL as usize) << 1 {
        return idx as u64;
    }
    let error_bits = (idx >> PLAT_BITS) as u32 - 1;
    let base = 1u64 << (error_bits + PLAT_BITS);
    let k = (idx as u64) % PLAT_VAL;
    base + ((k as f64 + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// The histogram log of one worker: fio's bins per direction since the
/// last line of that direction, and the lines so far.
#[derive(Clone, Debug)]
pub struct HistLog {
    msec: u64,
    coarseness: u32,
    /// Per direction: the counts since its last line.
    counts: [Vec<u64>; 3],
    /// Per direction: fio's `hist_last` (ms).
    last_ms: [u64; 3],
    /// Added to every time (ms): `log_unix_epoch` and friends.
    epoch_ms: u64,
    text: String,
}

impl HistLog {
    /// A log writing a line every `msec` ms per direction (none when 0),
    /// 2^`coarseness` bins summed per column.
    pub fn new(msec: u64, coarseness: u32, epoch_ms: u64) -> Self {
        HistLog {
            msec,
            coarseness,
            counts: std::array::from_fn(|_| vec![0; PLAT_NR]),
            last_ms: [0; 3],
            epoch_ms,
            text: String::new(),
        }
    }

    /// Count one completion of `bs` bytes with a completion latency of
    /// `clat_ns`, at `t_ns` since the worker started.
    #[inline]
    pub fn record(&mut self, t_ns: u64, ddir: Ddir, bs: u32, clat_ns: u64) {
        let d = ddir.idx();
        self.counts[d][plat_val_to_idx(clat_ns)] += 1;
        if self.msec == 0 {
            return;
        }
        let elapsed = t_ns / 1_000_000;
        if self.last_ms[d] == 0 {
            self.last_ms[d] = elapsed;
        }
        let window = elapsed.saturating_sub(self.last_ms[d]);
        if window >= self.msec {
            self.line(elapsed, d, bs);
            self.last_ms[d] = elapsed - (window - self.msec);
        }
    }

    fn line(&mut self, elapsed: u64, d: usize, bs: u32) {
        let stride = 1usize << self.coarseness;
        let _ = write!(self.text, "{}, {d}, {bs}", elapsed + self.epoch_ms);
        for chunk in self.counts[d].chunks(stride) {
            let _ = write!(self.text, ", {}", chunk.iter().sum::<u64>());
        }
        self.text.push('\n');
        self.counts[d].iter_mut().for_each(|c| *c = 0);
    }

    /// Forget everything (end of ramp).
    pub fn clear(&mut self) {
        self.counts.iter_mut().flatten().for_each(|c| *c = 0);
        self.last_ms = [0; 3];
        self.text.clear();
    }

    /// The log's text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (value, bin) and (bin, value) pairs printed by fio 3.33's own
    /// `plat_val_to_idx` and `plat_idx_to_val` (stat.c, compiled as is).
    const FIO_VAL_TO_IDX: &[(u64, usize)] = &[
        (0, 0),
        (1, 1),
        (63, 63),
        (64, 64),
        (127, 127),
        (128, 128),
        (129, 128),
        (130, 129),
        (255, 191),
        (256, 192),
        (257, 192),
        (1000, 317),
        (4095, 447),
        (4096, 448),
        (100000, 737),
        (1000000, 954),
        (123456789, 1397),
        (8724152320, 1793),
        (17179869183, 1855),
        (17179869184, 1855),
        (u64::MAX, 1855),
    ];
    const FIO_IDX_TO_VAL: &[(usize, u64)] = &[
        (0, 0),
        (5, 5),
        (127, 127),
        (128, 129),
        (129, 131),
        (191, 255),
        (192, 258),
        (317, 1004),
        (500, 7456),
        (1000, 1712128),
        (1855, 17112760320),
    ];

    #[test]
    fn bins_match_fios_plat_val_to_idx() {
        for &(v, i) in FIO_VAL_TO_IDX {
            assert_eq!(plat_val_to_idx(v), i, "value {v}");
        }
    }

    #[test]
    fn bin_values_match_fios_plat_idx_to_val() {
        for &(i, v) in FIO_IDX_TO_VAL {
            assert_eq!(plat_idx_to_val(i), v, "bin {i}");
        }
        // Every bin's value lies in the bin.
        for i in 0..PLAT_NR {
            assert_eq!(plat_val_to_idx(plat_idx_to_val(i)), i, "bin {i}");
        }
    }

    #[test]
    fn a_line_per_direction_once_its_interval_is_over() {
        let mut h = HistLog::new(100, 0, 0);
        h.record(5_000_000, Ddir::Read, 4096, 100);
        h.record(50_000_000, Ddir::Write, 8192, 1000);
        h.record(104_000_000, Ddir::Read, 4096, 100);
        h.record(105_000_000, Ddir::Read, 512, 300);
        let lines: Vec<&str> = h.text().lines().collect();
        assert_eq!(lines.len(), 1, "{lines:?}");
        let cols: Vec<&str> = lines[0].split(", ").collect();
        assert_eq!(&cols[..3], ["105", "0", "512"]);
        assert_eq!(cols.len(), 3 + PLAT_NR);
        assert_eq!(cols[3 + 100], "2");
        assert_eq!(cols[3 + plat_val_to_idx(300)], "1");
        // The next read interval ends 100 ms after 5 ms (less drift).
        h.record(205_000_000, Ddir::Read, 4096, 100);
        assert_eq!(h.text().lines().count(), 2);
    }

    #[test]
    fn coarseness_sums_adjacent_bins() {
        let mut h = HistLog::new(10, 6, 1_000);
        h.record(1_000_000, Ddir::Read, 4096, 1);
        h.record(1_000_000, Ddir::Read, 4096, 63);
        h.record(11_000_000, Ddir::Read, 4096, 64);
        let line = h.text().lines().next().unwrap().to_string();
        let cols: Vec<&str> = line.split(", ").collect();
        assert_eq!(cols.len(), 3 + PLAT_NR / 64);
        assert_eq!(&cols[..5], ["1011", "0", "4096", "2", "1"]);
    }
}
