//! Fault injection: the errors and slow paths a real drive shows, on
//! purpose, so a platform's (and an application's) handling of them can be
//! tested against a known truth.
//!
//! A real SSD corrects most raw bit errors in its ECC; when hard-decision
//! decoding fails it retries the read with shifted reference voltages and
//! soft decoding (read retry), which costs hundreds of microseconds to
//! milliseconds per attempt, and after its last attempt it reports an
//! unrecoverable read error (NVMe "Unrecovered Read Error", EIO on Linux).
//! Programs and erases can fail too (the drive then retires the block; a
//! write it cannot place fails). Data can also come back wrong without any
//! error — a miscorrection, a torn or misdirected write, a bit flipped on
//! the way — which only an end-to-end check such as fio's `verify` catches.
//!
//! Keys (`emu:…,fault_read_error_rate=1e-4`, all off by default):
//! * `fault_read_error_rate`: probability that a command's read is
//!   unrecoverable: it takes `fault_retries` × `fault_retry_ns` more and
//!   completes with EIO; `fault_read_error_at=OFFSET[+LEN]:…` makes reads
//!   touching those byte ranges always fail so (a bad LBA list);
//! * `fault_retry_rate`: probability that a read needs the retries but
//!   then succeeds (a latency spike of `fault_retries` × `fault_retry_ns`);
//! * `fault_write_error_rate`: probability that a write fails with EIO
//!   (its data is not stored; the old data stays);
//! * `fault_corrupt_rate`: probability that a read returns data with one
//!   byte flipped and no error (silent corruption; the stored data is
//!   intact, so a re-read is right);
//! * `fault_spike_rate`: probability that any command (read, write,
//!   flush) stalls `fault_spike_ns` more (default 50 ms: a garbage
//!   collection or firmware housekeeping stall);
//! * `fault_program_fail_rate`: probability that a write's NAND program
//!   fails: the drive retires the block, programs the data again elsewhere
//!   (`fault_program_fail_ns` more, default 2 ms) and the host sees no
//!   error, while `fault_spare_blocks` (default 8) spare blocks last; the
//!   failure that finds none left puts the drive in read-only mode (NVMe's
//!   critical warning): that write and every later one fail with EIO,
//!   reads go on. Only the host-visible part is modelled: the FTL's
//!   capacity and garbage collection are not changed by retired blocks;
//! * `fault_torn_write_rate`: probability that a write of two or more
//!   4 KiB pages is acknowledged but stores only a prefix of its pages (a
//!   firmware bug class; the rest keeps the old data, no error);
//! * `fault_power_cut_after=N`: a power cut when the N-th write reaches the
//!   device ([`crate::powercut`]: un-flushed cache contents are lost, writes
//!   in flight are torn and fail with EIO, flush and FUA honoured);
//! * `fault_seed`: the draws are a hash of the seed, the command's number
//!   on the device and its offset: a run with one worker repeats exactly.
//!
//! Faults apply in real time (`ssdready run`); virtual time models latency
//! spikes only (each command's draw in submission order: a command
//! completes `fault_spike_ns` late) and refuses the others, and temporal
//! merge refuses them all, with that reason. What was injected is counted in
//! the results (`emulator.faults`), so a test can hold the errors and
//! verification failures a run saw against the truth.

use crate::config::error::ParamError;
use serde::{Deserialize, Serialize};

/// The fault keys' values.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FaultParams {
    pub read_error_rate: f64,
    /// Byte ranges (offset, length) whose reads always fail.
    pub read_error_at: Vec<(u64, u64)>,
    pub retry_rate: f64,
    pub write_error_rate: f64,
    pub corrupt_rate: f64,
    /// Read retries before a read succeeds late or fails, and each one's time.
    pub retries: u32,
    pub retry_ns: u64,
    pub seed: u64,
    /// Any command: a stall of `spike_ns`.
    pub spike_rate: f64,
    pub spike_ns: u64,
    /// Writes: a failed program, its cost, and the spare blocks.
    pub program_fail_rate: f64,
    pub program_fail_ns: u64,
    pub spare_blocks: u32,
    /// Writes of several pages: only a prefix stored, silently.
    pub torn_write_rate: f64,
    /// The write whose arrival cuts the power (0: none).
    pub power_cut_after: u64,
}

/// Read retries a drive makes before it gives up (typical firmware: a
/// handful of voltage shifts, then soft decoding).
pub const DEFAULT_RETRIES: u32 = 4;
/// Time per read retry, ns (a re-read with soft decoding: ~250 µs).
pub const DEFAULT_RETRY_NS: u64 = 250_000;
/// A latency spike, ns (a GC or firmware stall: 50 ms).
pub const DEFAULT_SPIKE_NS: u64 = 50_000_000;
/// A failed program and the data's program elsewhere, ns (the failing
/// program runs its full time before its status says so: ~2 × tPROG).
pub const DEFAULT_PROGRAM_FAIL_NS: u64 = 2_000_000;
/// Spare blocks for retired ones (a drive reserves a few per die).
pub const DEFAULT_SPARE_BLOCKS: u32 = 8;
/// The unit a torn write keeps or loses, bytes.
pub const TEAR_UNIT: u64 = 4096;

impl FaultParams {
    /// The defaults: nothing injected.
    pub fn off() -> FaultParams {
        FaultParams {
            retries: DEFAULT_RETRIES,
            retry_ns: DEFAULT_RETRY_NS,
            spike_ns: DEFAULT_SPIKE_NS,
            program_fail_ns: DEFAULT_PROGRAM_FAIL_NS,
            spare_blocks: DEFAULT_SPARE_BLOCKS,
            ..FaultParams::default()
        }
    }

    /// Whether any fault is asked for.
    pub fn any(&self) -> bool {
        self.read_error_rate > 0.0
            || !self.read_error_at.is_empty()
            || self.retry_rate > 0.0
            || self.write_error_rate > 0.0
            || self.corrupt_rate > 0.0
            || self.spike_rate > 0.0
            || self.program_fail_rate > 0.0
            || self.torn_write_rate > 0.0
            || self.power_cut_after > 0
    }

    /// Whether latency spikes are the only faults asked for (what virtual
    /// time models: a command completes `fault_spike_ns` late).
    pub fn only_spikes(&self) -> bool {
        let mut rest = self.clone();
        rest.spike_rate = 0.0;
        self.spike_rate > 0.0 && !rest.any()
    }

    /// Whether the drive has a volatile write cache that a power cut
    /// empties ([`crate::powercut`]).
    pub fn power_cut(&self) -> bool {
        self.power_cut_after > 0
    }

    /// Set key `k` (a `fault_` key); None when `k` is not one.
    pub fn set(&mut self, k: &str, v: &str) -> Option<Result<(), ParamError>> {
        let rate = |v: &str| -> Result<f64, ParamError> {
            match v.parse::<f64>() {
                Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
                _ => Err(ParamError::NotProbability {
                    key: k.into(),
                    value: v.into(),
                }),
            }
        };
        let r = match k {
            "fault_read_error_rate" => rate(v).map(|r| self.read_error_rate = r),
            "fault_retry_rate" => rate(v).map(|r| self.retry_rate = r),
            "fault_write_error_rate" => rate(v).map(|r| self.write_error_rate = r),
            "fault_corrupt_rate" => rate(v).map(|r| self.corrupt_rate = r),
            "fault_read_error_at" => ranges(k, v).map(|r| self.read_error_at = r),
            "fault_retries" => match v.parse::<u32>() {
                Ok(n) if n <= 64 => {
                    self.retries = n;
                    Ok(())
                }
                _ => Err(ParamError::Choice {
                    key: k.into(),
                    value: v.into(),
                    allowed: "0 to 64 retries",
                }),
            },
            "fault_retry_ns" => time(k, v).map(|t| self.retry_ns = t),
            "fault_spike_rate" => rate(v).map(|r| self.spike_rate = r),
            "fault_spike_ns" => time(k, v).map(|t| self.spike_ns = t),
            "fault_program_fail_rate" => rate(v).map(|r| self.program_fail_rate = r),
            "fault_program_fail_ns" => time(k, v).map(|t| self.program_fail_ns = t),
            "fault_spare_blocks" => whole(k, v)
                .and_then(|n| {
                    u32::try_from(n).map_err(|_| ParamError::NotAllowed {
                        key: k.into(),
                        value: n,
                        allowed: format!("0 to {}", u32::MAX),
                    })
                })
                .map(|n| self.spare_blocks = n),
            "fault_torn_write_rate" => rate(v).map(|r| self.torn_write_rate = r),
            "fault_power_cut_after" => whole(k, v).map(|n| self.power_cut_after = n),
            "fault_seed" => whole(k, v).map(|s| self.seed = s),
            _ => return None,
        };
        Some(r)
    }

    /// Every key with its value, as [`FaultParams::set`] takes it back.
    pub fn pairs(&self) -> Vec<(&'static str, String)> {
        let at: Vec<String> = self
            .read_error_at
            .iter()
            .map(|(o, l)| format!("{o}+{l}"))
            .collect();
        vec![
            ("fault_read_error_rate", self.read_error_rate.to_string()),
            ("fault_read_error_at", at.join(":")),
            ("fault_retry_rate", self.retry_rate.to_string()),
            ("fault_write_error_rate", self.write_error_rate.to_string()),
            ("fault_corrupt_rate", self.corrupt_rate.to_string()),
            ("fault_retries", self.retries.to_string()),
            ("fault_retry_ns", self.retry_ns.to_string()),
            ("fault_seed", self.seed.to_string()),
            ("fault_spike_rate", self.spike_rate.to_string()),
            ("fault_spike_ns", self.spike_ns.to_string()),
            (
                "fault_program_fail_rate",
                self.program_fail_rate.to_string(),
            ),
            ("fault_program_fail_ns", self.program_fail_ns.to_string()),
            ("fault_spare_blocks", self.spare_blocks.to_string()),
            ("fault_torn_write_rate", self.torn_write_rate.to_string()),
            ("fault_power_cut_after", self.power_cut_after.to_string()),
        ]
    }
}

/// A time of at most 1 s (`250us`, `2ms`, or ns).
fn time(k: &str, v: &str) -> Result<u64, ParamError> {
    let t = ssdready_core::units::parse_time_ns(v, 1)
        .map_err(|why| ParamError::Unit { key: k.into(), why })?;
    if t <= 1_000_000_000 {
        Ok(t)
    } else {
        Err(ParamError::TimeOver1s {
            key: k.into(),
            ns: t,
        })
    }
}

/// A whole number.
fn whole(k: &str, v: &str) -> Result<u64, ParamError> {
    v.parse::<u64>().map_err(|_| ParamError::NotWhole {
        key: k.into(),
        value: v.into(),
    })
}

/// `OFFSET[+LEN]:…` (sizes with units; LEN 4 KiB when left out).
fn ranges(k: &str, v: &str) -> Result<Vec<(u64, u64)>, ParamError> {
    let size = |s: &str| {
        ssdready_core::units::parse_size(s, 1024)
            .map_err(|why| ParamError::Range { key: k.into(), why })
    };
    v.split(':')
        .filter(|s| !s.is_empty())
        .map(|r| match r.split_once('+') {
            Some((o, l)) => Ok((size(o)?, size(l)?.max(1))),
            None => Ok((size(r)?, 4096)),
        })
        .collect()
}

/// What happens to one command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Time added to its completion, ns.
    pub extra_ns: u64,
    /// It fails with this errno (EIO).
    pub errno: Option<i32>,
    /// A read: flip this byte of its data (an index into it).
    pub corrupt_byte: Option<u64>,
    /// A write: store only its first this many bytes (a silent tear).
    pub keep_bytes: Option<u64>,
}

/// What was injected: the report's own type, so that a new counter
/// cannot miss the report.
pub use ssdready_core::result::EmuFaults as FaultCounts;

/// A device's fault state: its settings, how many commands it decided on,
/// and what it injected.
#[derive(Clone, Debug, Default)]
pub struct FaultInjector {
    pub p: FaultParams,
    seq: u64,
    pub counts: FaultCounts,
    /// Spare blocks left for retiring failed ones.
    spares: u32,
    /// Out of spares: every write fails.
    read_only: bool,
}

const EIO: i32 = 5;

impl FaultInjector {
    pub fn new(p: &FaultParams) -> FaultInjector {
        FaultInjector {
            p: p.clone(),
            seq: 0,
            counts: FaultCounts::default(),
            spares: p.spare_blocks,
            read_only: false,
        }
    }

    /// Whether the drive has gone read-only (its spare blocks used up).
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The fate of a flush: a latency spike or none.
    pub fn decide_flush(&mut self) -> Outcome {
        if !self.p.any() {
            return Outcome::default();
        }
        self.seq += 1;
        Outcome {
            extra_ns: self.spike(0),
            ..Outcome::default()
        }
    }

    /// Virtual time: the next command's latency spike, or 0 (only spikes
    /// are modelled there; [`FaultParams::only_spikes`]).
    pub fn next_spike(&mut self) -> u64 {
        if self.p.spike_rate <= 0.0 {
            return 0;
        }
        self.seq += 1;
        self.spike(0)
    }

    /// A latency spike's time for the command at `offset`, or 0.
    fn spike(&mut self, offset: u64) -> u64 {
        if self.p.spike_rate > 0.0
            && unit(mix(self.p.seed ^ 5, self.seq, offset)) < self.p.spike_rate
        {
            self.counts.latency_spikes += 1;
            return self.p.spike_ns;
        }
        0
    }

    /// A write's fate: refused (read-only, an injected write error, a
    /// failed program with no spare block left), slowed by a failed program
    /// that retired a block, or torn silently.
    fn decide_write(&mut self, offset: u64, len: u64, spike_ns: u64) -> Outcome {
        let draw = |salt: u64| unit(mix(self.p.seed ^ salt, self.seq, offset));
        let (fail, program_fail, tear) = (draw(1), draw(6), draw(7));
        let eio = Outcome {
            extra_ns: spike_ns,
            errno: Some(EIO),
            ..Outcome::default()
        };
        if self.read_only {
            self.counts.read_only_writes += 1;
            return eio;
        }
        if fail < self.p.write_error_rate {
            self.counts.write_errors += 1;
            return eio;
        }
        let mut out = Outcome {
            extra_ns: spike_ns,
            ..Outcome::default()
        };
        if program_fail < self.p.program_fail_rate {
            self.counts.program_failures += 1;
            if self.spares == 0 {
                self.read_only = true;
                self.counts.read_only_writes += 1;
                return eio;
            }
            self.spares -= 1;
            self.counts.blocks_retired += 1;
            out.extra_ns = out.extra_ns.saturating_add(self.p.program_fail_ns);
        }
        let pages = len.div_ceil(TEAR_UNIT);
        if pages >= 2 && tear < self.p.torn_write_rate {
            self.counts.silently_torn_writes += 1;
            let kept = 1 + mix(self.p.seed, self.seq, offset ^ 0x7e47) % (pages - 1);
            out.keep_bytes = Some(kept * TEAR_UNIT);
        }
        out
    }

    /// Decide the fate of a command: a read (`write` false) or write of
    /// `len` bytes at `offset`.
    pub fn decide(&mut self, write: bool, offset: u64, len: u64) -> Outcome {
        if !self.p.any() {
            return Outcome::default();
        }
        self.seq += 1;
        let spike_ns = self.spike(offset);
        if write {
            return self.decide_write(offset, len, spike_ns);
        }
        let draw = |salt: u64| unit(mix(self.p.seed ^ salt, self.seq, offset));
        let p = &self.p;
        let retries_ns = u64::from(p.retries)
            .saturating_mul(p.retry_ns)
            .saturating_add(spike_ns);
        let bad_lba = p
            .read_error_at
            .iter()
            .any(|&(o, l)| offset < o.saturating_add(l) && o < offset.saturating_add(len));
        if bad_lba || draw(2) < p.read_error_rate {
            self.counts.read_errors += 1;
            return Outcome {
                extra_ns: retries_ns,
                errno: Some(EIO),
                ..Outcome::default()
            };
        }
        let mut out = Outcome {
            extra_ns: spike_ns,
            ..Outcome::default()
        };
        if draw(3) < p.retry_rate {
            self.counts.read_retries_recovered += 1;
            out.extra_ns = retries_ns;
        }
        if len > 0 && draw(4) < p.corrupt_rate {
            self.counts.corrupted_reads += 1;
            out.corrupt_byte = Some(mix(p.seed, self.seq, offset ^ 0x5a5a) % len);
        }
        out
    }
}

/// A 64-bit hash of three words (splitmix64's finaliser over their mix).
pub(crate) fn mix(a: u64, b: u64, c: u64) -> u64 {
    let mut z = a
        .wrapping_add(b.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_add(c.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A hash as a number in [0, 1).
fn unit(h: u64) -> f64 {
    (h >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(kvs: &[(&str, &str)]) -> FaultInjector {
        let mut p = FaultParams::off();
        for (k, v) in kvs {
            p.set(k, v).unwrap().unwrap();
        }
        FaultInjector::new(&p)
    }

    #[test]
    fn rates_are_met_within_sampling_error() {
        let mut f = with(&[
            ("fault_read_error_rate", "0.01"),
            ("fault_corrupt_rate", "0.02"),
        ]);
        let n = 200_000u64;
        for i in 0..n {
            f.decide(false, i * 4096, 4096);
        }
        let (e, c) = (f.counts.read_errors as f64, f.counts.corrupted_reads as f64);
        // Binomial: 4 standard deviations.
        assert!((e - 2000.0).abs() < 4.0 * (2000.0f64 * 0.99).sqrt(), "{e}");
        assert!((c - 3920.0).abs() < 4.0 * (3920.0f64).sqrt(), "{c}");
    }

    #[test]
    fn a_bad_lba_fails_every_read_touching_it_after_the_retries() {
        let mut f = with(&[("fault_read_error_at", "1m+4k"), ("fault_retry_ns", "1ms")]);
        let bad = f.decide(false, (1 << 20) - 2048, 4096);
        assert_eq!(bad.errno, Some(5));
        assert_eq!(bad.extra_ns, 4 * 1_000_000);
        assert_eq!(f.decide(false, (1 << 20) + 4096, 4096), Outcome::default());
        assert_eq!(
            f.decide(true, 1 << 20, 4096),
            Outcome::default(),
            "writes are fine"
        );
        assert_eq!(f.counts.read_errors, 1);
    }

    #[test]
    fn no_fault_is_drawn_when_none_is_asked() {
        let mut f = FaultInjector::new(&FaultParams::off());
        for i in 0..10_000 {
            assert_eq!(f.decide(i % 2 == 0, i * 4096, 4096), Outcome::default());
        }
        assert_eq!(f.counts, FaultCounts::default());
    }

    #[test]
    fn program_failures_use_the_spares_then_the_drive_goes_read_only() {
        let mut f = with(&[
            ("fault_program_fail_rate", "1"),
            ("fault_spare_blocks", "3"),
            ("fault_program_fail_ns", "2ms"),
        ]);
        for _ in 0..3 {
            let o = f.decide(true, 0, 4096);
            assert_eq!(
                (o.errno, o.extra_ns),
                (None, 2_000_000),
                "re-placed, no error"
            );
        }
        assert!(!f.read_only());
        assert_eq!(f.decide(true, 0, 4096).errno, Some(EIO), "no spare left");
        assert!(f.read_only());
        assert_eq!(f.decide(true, 8192, 4096).errno, Some(EIO), "read-only");
        assert_eq!(f.decide(false, 8192, 4096).errno, None, "reads go on");
        let c = f.counts;
        assert_eq!(
            (c.program_failures, c.blocks_retired, c.read_only_writes),
            (4, 3, 2)
        );
    }

    #[test]
    fn a_torn_write_keeps_a_whole_proper_prefix_of_its_pages() {
        let mut f = with(&[("fault_torn_write_rate", "1")]);
        for i in 0..1000 {
            let keep = f.decide(true, i * 65536, 65536).keep_bytes.unwrap();
            assert!(
                keep.is_multiple_of(TEAR_UNIT) && (TEAR_UNIT..65536).contains(&keep),
                "{keep}"
            );
        }
        assert_eq!(
            f.decide(true, 0, 4096).keep_bytes,
            None,
            "one page cannot tear"
        );
        assert_eq!(f.counts.silently_torn_writes, 1000);
    }

    #[test]
    fn spikes_hit_every_kind_of_command() {
        let mut f = with(&[("fault_spike_rate", "1"), ("fault_spike_ns", "7ms")]);
        assert_eq!(f.decide(false, 0, 4096).extra_ns, 7_000_000);
        assert_eq!(f.decide(true, 0, 4096).extra_ns, 7_000_000);
        assert_eq!(f.decide_flush().extra_ns, 7_000_000);
        assert_eq!(f.counts.latency_spikes, 3);
    }

    #[test]
    fn every_key_round_trips_through_its_pairs() {
        let f = with(&[
            ("fault_spike_rate", "0.5"),
            ("fault_spike_ns", "3ms"),
            ("fault_program_fail_rate", "0.25"),
            ("fault_spare_blocks", "2"),
            ("fault_torn_write_rate", "0.125"),
            ("fault_power_cut_after", "99"),
        ]);
        let mut back = FaultParams::off();
        for (k, v) in f.p.pairs() {
            back.set(k, &v).unwrap().unwrap();
        }
        assert_eq!(back, f.p);
        assert!(back.power_cut());
    }

    #[test]
    fn bad_values_are_refused_with_the_allowed_range() {
        let mut p = FaultParams::off();
        for (k, v, want) in [
            ("fault_read_error_rate", "2", "allowed: 0 to 1"),
            ("fault_corrupt_rate", "x", "not a probability"),
            ("fault_read_error_at", "1q", "OFFSET[+LEN]"),
            ("fault_retries", "100", "0 to 64"),
            ("fault_spike_ns", "2s", "0 to 1 s"),
            ("fault_power_cut_after", "-1", "not a whole number"),
            ("fault_spare_blocks", "5000000000", "allowed: 0 to"),
        ] {
            let e = p.set(k, v).unwrap().unwrap_err().to_string();
            assert!(e.contains(want), "{k}={v}: {e}");
        }
        assert!(p.set("read_ns", "1").is_none());
    }
}
