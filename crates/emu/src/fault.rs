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
//! * `fault_seed`: the draws are a hash of the seed, the command's number
//!   on the device and its offset: a run with one worker repeats exactly.
//!
//! Faults apply in real time (`ssdready run`); virtual time and temporal
//! merge refuse them with that reason. What was injected is counted in
//! the results (`emulator.faults`), so a test can hold the errors and
//! verification failures a run saw against the truth.

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
}

/// Read retries a drive makes before it gives up (typical firmware: a
/// handful of voltage shifts, then soft decoding).
pub const DEFAULT_RETRIES: u32 = 4;
/// Time per read retry, ns (a re-read with soft decoding: ~250 µs).
pub const DEFAULT_RETRY_NS: u64 = 250_000;

impl FaultParams {
    /// The defaults: nothing injected.
    pub fn off() -> FaultParams {
        FaultParams {
            retries: DEFAULT_RETRIES,
            retry_ns: DEFAULT_RETRY_NS,
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
    }

    /// Set key `k` (a `fault_` key); None when `k` is not one.
    pub fn set(&mut self, k: &str, v: &str) -> Option<Result<(), String>> {
        let rate = |v: &str| -> Result<f64, String> {
            match v.parse::<f64>() {
                Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
                _ => Err(format!(
                    "emulator parameter '{k}': '{v}' is not a probability (allowed: 0 to 1, e.g. 1e-4)"
                )),
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
                _ => Err(format!(
                    "emulator parameter '{k}': '{v}' (allowed: 0 to 64 retries)"
                )),
            },
            "fault_retry_ns" => ssdready_core::units::parse_time_ns(v, 1)
                .map_err(|e| format!("emulator parameter '{k}': {e}"))
                .and_then(|t| {
                    if t <= 1_000_000_000 {
                        self.retry_ns = t;
                        Ok(())
                    } else {
                        Err(format!(
                            "emulator parameter '{k}': {t} ns is out of range (allowed: 0 to 1 s)"
                        ))
                    }
                }),
            "fault_seed" => v
                .parse::<u64>()
                .map(|s| self.seed = s)
                .map_err(|_| format!("emulator parameter '{k}': '{v}' is not a whole number")),
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
        ]
    }
}

/// `OFFSET[+LEN]:…` (sizes with units; LEN 4 KiB when left out).
fn ranges(k: &str, v: &str) -> Result<Vec<(u64, u64)>, String> {
    let size = |s: &str| {
        ssdready_core::units::parse_size(s, 1024).map_err(|e| {
            format!("emulator parameter '{k}': {e} (allowed: OFFSET[+LEN]:…, e.g. 1m+4k:2g)")
        })
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
}

/// What was injected.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounts {
    pub read_errors: u64,
    pub read_retries_recovered: u64,
    pub write_errors: u64,
    pub corrupted_reads: u64,
}

/// A device's fault state: its settings, how many commands it decided on,
/// and what it injected.
#[derive(Clone, Debug, Default)]
pub struct FaultInjector {
    pub p: FaultParams,
    seq: u64,
    pub counts: FaultCounts,
}

const EIO: i32 = 5;

impl FaultInjector {
    pub fn new(p: &FaultParams) -> FaultInjector {
        FaultInjector {
            p: p.clone(),
            seq: 0,
            counts: FaultCounts::default(),
        }
    }

    /// Decide the fate of a command: a read (`write` false) or write of
    /// `len` bytes at `offset`.
    pub fn decide(&mut self, write: bool, offset: u64, len: u64) -> Outcome {
        if !self.p.any() {
            return Outcome::default();
        }
        self.seq += 1;
        let draw = |salt: u64| unit(mix(self.p.seed ^ salt, self.seq, offset));
        let p = &self.p;
        let retries_ns = u64::from(p.retries).saturating_mul(p.retry_ns);
        if write {
            if draw(1) < p.write_error_rate {
                self.counts.write_errors += 1;
                return Outcome {
                    errno: Some(EIO),
                    ..Outcome::default()
                };
            }
            return Outcome::default();
        }
        let bad_lba = p
            .read_error_at
            .iter()
            .any(|&(o, l)| offset < o.saturating_add(l) && o < offset.saturating_add(len));
        if bad_lba || draw(2) < p.read_error_rate {
            self.counts.read_errors += 1;
            return Outcome {
                extra_ns: retries_ns,
                errno: Some(EIO),
                corrupt_byte: None,
            };
        }
        let mut out = Outcome::default();
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
fn mix(a: u64, b: u64, c: u64) -> u64 {
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
    fn bad_values_are_refused_with_the_allowed_range() {
        let mut p = FaultParams::off();
        for (k, v, want) in [
            ("fault_read_error_rate", "2", "allowed: 0 to 1"),
            ("fault_corrupt_rate", "x", "not a probability"),
            ("fault_read_error_at", "1q", "OFFSET[+LEN]"),
            ("fault_retries", "100", "0 to 64"),
        ] {
            let e = p.set(k, v).unwrap().unwrap_err();
            assert!(e.contains(want), "{k}={v}: {e}");
        }
        assert!(p.set("read_ns", "1").is_none());
    }
}
