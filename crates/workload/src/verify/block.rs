//! Filling a block to be written, and checking a block read back, in fio's
//! layout (see the module docs of [`crate::verify`]).
//!
//! A block of `len` bytes at file offset `O` is cut into intervals of
//! `interval` bytes (the last may be shorter). Interval `i` holds, at its
//! start (or `header_offset` bytes in, swapped with the data there, as
//! fio's `verify_offset` does): the 40-byte header — magic, method, length,
//! seed, offset `O + i·interval`, time, thread, generation (low 16 bits),
//! CRC32C of those 36 bytes — then the method's checksum of the rest of the
//! interval. The data is the pattern (repeated from the block's first
//! byte, `%o` pasted with `O`) or pseudo-random bytes from the write's seed,
//! so the expected block can be made again for `verify_dump`.

use super::pattern::{self, Pattern};
use md5::Digest as _;
use ssdready_core::spec_verify::{Method, HEADER_BYTES, MAGIC};
use ssdready_core::stats::Failure;

/// How a job's blocks are laid out.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The verify method.
    pub method: Method,
    /// Bytes per header (fio's `verify_interval`).
    pub interval: u32,
    /// Where the header sits in its interval (fio's `verify_offset`).
    pub header_offset: u32,
    /// The data pattern (`verify_pattern`), else random data.
    pub pattern: Option<Pattern>,
}

/// What a write stamps into its headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stamp {
    /// Seed of the block's random data.
    pub seed: u64,
    /// The write's sequence number in its worker (fio's `numberio`).
    pub generation: u64,
    /// The worker (fio's thread number).
    pub thread: u16,
    /// When it was written (Unix time).
    pub time_sec: u32,
    /// Nanoseconds of that second.
    pub time_nsec: u32,
}

/// What a reader expects beyond the offset and length (None: not checked,
/// as for `verify_only` and read jobs, which cannot know which write was
/// last).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Expect {
    /// The generation of the last write to the block.
    pub generation: Option<u64>,
    /// The seed of the last write to the block.
    pub seed: Option<u64>,
    /// The block was trimmed (`trim_verify_zero`): it must read as zeroes.
    pub zeroes: bool,
}

/// Pseudo-random bytes from `seed` (xorshift64*), the data of a block.
pub fn fill_random(buf: &mut [u8], seed: u64) {
    let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
    if x == 0 {
        x = 1;
    }
    for chunk in buf.chunks_mut(8) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let v = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

/// A trimmed block read back: zeroes, or one failure at its first
/// other byte (fio's "verify failed for zeroed data").
fn zeroes(buf: &[u8], offset: u64) -> Option<Failure> {
    let at = buf.iter().position(|&b| b != 0)?;
    Some(Failure {
        offset,
        len: buf.len() as u32,
        check: "trimmed zeroes".into(),
        expected: "zeroes".into(),
        found: format!("0x{:02x} at byte {at} of the block", buf[at]),
    })
}

/// fio's CRC-64 table (`crc/crc64.c`): reflected polynomial
/// 0x95ac9329ac4bc9b5.
const CRC64_TABLE: [u64; 256] = {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 == 1 {
                (c >> 1) ^ 0x95ac_9329_ac4b_c9b5
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// fio's `fio_crc64`: initial 0, no final inversion.
pub fn fio_crc64(data: &[u8]) -> u64 {
    data.iter().fold(0u64, |crc, &b| {
        CRC64_TABLE[((crc ^ u64::from(b)) & 0xff) as usize] ^ (crc >> 8)
    })
}

/// fio's CRC32C: the Castagnoli CRC without the final inversion.
pub fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// The method's checksum of `data`, as fio lays it out in its slot.
fn checksum(method: Method, data: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; method.checksum_bytes()];
    match method {
        Method::Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        Method::Crc64 => out.copy_from_slice(&fio_crc64(data).to_le_bytes()),
        Method::Crc32c | Method::Crc32cIntel => {
            out.copy_from_slice(&fio_crc32c(data).to_le_bytes());
        }
        Method::Xxhash => {
            out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes());
        }
        Method::Sha1 => {
            // fio keeps the five state words in host (little-endian) order.
            let d = sha1::Sha1::digest(data);
            for (o, w) in out.chunks_mut(4).zip(d.chunks(4)) {
                o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
            }
        }
        Method::Sha256 => out[..32].copy_from_slice(&sha2::Sha256::digest(data)),
        Method::Sha512 => out[..64].copy_from_slice(&sha2::Sha512::digest(data)),
        Method::Meta | Method::PatternHeader | Method::Pattern | Method::Null => {}
    }
    out
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The fields of a header, decoded.
struct Header {
    magic: u16,
    method: u16,
    len: u32,
    seed: u64,
    offset: u64,
    time_sec: u32,
    time_nsec: u32,
    thread: u16,
    generation: u16,
    crc: u32,
}

impl Header {
    fn read(b: &[u8]) -> Header {
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Header {
            magic: u16_at(0),
            method: u16_at(2),
            len: u32_at(4),
            seed: u64_at(8),
            offset: u64_at(16),
            time_sec: u32_at(24),
            time_nsec: u32_at(28),
            thread: u16_at(32),
            generation: u16_at(34),
            crc: u32_at(36),
        }
    }

    /// Who wrote it, for the `found` side of a message.
    fn origin(&self) -> String {
        let when = if self.time_sec > 1_000_000_000 {
            format!(" at Unix time {}.{:09}", self.time_sec, self.time_nsec)
        } else {
            String::new()
        };
        let how = Method::from_fio_type(self.method).map_or_else(
            || format!("method #{}", self.method),
            |m| m.name().to_string(),
        );
        format!(
            "written for offset {} by worker {} as write #{} (low 16 bits){when}, {how}",
            self.offset, self.thread, self.generation
        )
    }
}

fn write_header(b: &mut [u8], method: Method, len: u32, offset: u64, s: &Stamp) {
    b[0..2].copy_from_slice(&MAGIC.to_le_bytes());
    b[2..4].copy_from_slice(&method.fio_type().to_le_bytes());
    b[4..8].copy_from_slice(&len.to_le_bytes());
    b[8..16].copy_from_slice(&s.seed.to_le_bytes());
    b[16..24].copy_from_slice(&offset.to_le_bytes());
    b[24..28].copy_from_slice(&s.time_sec.to_le_bytes());
    b[28..32].copy_from_slice(&s.time_nsec.to_le_bytes());
    b[32..34].copy_from_slice(&s.thread.to_le_bytes());
    b[34..36].copy_from_slice(&(s.generation as u16).to_le_bytes());
    let crc = fio_crc32c(&b[..36]);
    b[36..40].copy_from_slice(&crc.to_le_bytes());
}

/// Swap the `n` bytes at the start of `iv` with those at `at` (fio's
/// `verify_offset`); the two ranges never overlap (checked with the options).
fn swap_header(iv: &mut [u8], at: usize, n: usize) {
    if at == 0 || n == 0 || at + n > iv.len() {
        return;
    }
    let (head, tail) = iv.split_at_mut(at);
    head[..n].swap_with_slice(&mut tail[..n]);
}

impl Layout {
    fn intervals(&self, len: usize) -> impl Iterator<Item = (usize, usize)> {
        let iv = (self.interval as usize).max(1);
        (0..len.div_ceil(iv)).map(move |i| (i * iv, (len - i * iv).min(iv)))
    }

    /// Make the block that a write of `len` bytes at `offset` stamped with
    /// `stamp` puts on the device, in `buf[..len]`.
    pub fn fill(&self, buf: &mut [u8], offset: u64, stamp: &Stamp) {
        let buf = &mut buf[..];
        match &self.pattern {
            Some(p) => pattern::fill(buf, &p.for_offset(offset)),
            None => fill_random(buf, stamp.seed),
        }
        let hsz = self.method.header_bytes();
        if hsz == 0 {
            return;
        }
        for (start, n) in self.intervals(buf.len()) {
            let iv = &mut buf[start..start + n];
            if n <= hsz {
                continue; // refused with the options; never reached
            }
            write_header(iv, self.method, n as u32, offset + start as u64, stamp);
            let sum = checksum(self.method, &iv[hsz..]);
            iv[HEADER_BYTES..hsz].copy_from_slice(&sum);
            swap_header(iv, self.header_offset as usize, hsz);
        }
    }

    /// Check the block read from `offset` in `buf` (un-swapping headers in
    /// place); every failed interval gives one [`Failure`], or only the
    /// first when `first_only`.
    pub fn check(
        &self,
        buf: &mut [u8],
        offset: u64,
        expect: &Expect,
        first_only: bool,
    ) -> Vec<Failure> {
        let mut out = Vec::new();
        if expect.zeroes {
            out.extend(zeroes(buf, offset));
            return out;
        }
        if self.method == Method::Null {
            return out;
        }
        for (start, n) in self.intervals(buf.len()) {
            let iv = &mut buf[start..start + n];
            let at = offset + start as u64;
            if let Some(f) = self.check_interval(iv, at, start, expect) {
                out.push(f);
                if first_only {
                    break;
                }
            }
        }
        out
    }

    fn check_interval(
        &self,
        iv: &mut [u8],
        at: u64,
        start_in_block: usize,
        expect: &Expect,
    ) -> Option<Failure> {
        let hsz = self.method.header_bytes();
        let header = if hsz > 0 {
            self.check_header(iv, hsz, at, expect)
        } else {
            None
        };
        let (check, expected, found) =
            header.or_else(|| self.check_pattern(iv, hsz, at, start_in_block))?;
        Some(Failure {
            offset: at,
            len: iv.len() as u32,
            check,
            expected,
            found,
        })
    }

    /// The interval's header (`hsz` bytes): magic, its crc32c, length,
    /// offset, the write expected, then the data's digest.
    fn check_header(
        &self,
        iv: &mut [u8],
        hsz: usize,
        at: u64,
        expect: &Expect,
    ) -> Option<Mismatch> {
        let n = iv.len();
        if n <= hsz {
            return mismatch("length", format!("more than {hsz} bytes"), format!("{n}"));
        }
        swap_header(iv, self.header_offset as usize, hsz);
        let h = Header::read(iv);
        if h.magic != MAGIC {
            return mismatch(
                "magic",
                format!("a header (magic 0x{MAGIC:04x})"),
                format!(
                    "0x{:04x}: no header (overwritten or never written)",
                    h.magic
                ),
            );
        }
        let crc = fio_crc32c(&iv[..36]);
        if crc != h.crc {
            return mismatch(
                "header crc32c",
                format!("0x{:08x} (computed over the header)", crc),
                format!("0x{:08x}: the header is corrupt", h.crc),
            );
        }
        if h.len as usize != n {
            return mismatch(
                "length",
                format!("{n}"),
                format!("{} ({})", h.len, h.origin()),
            );
        }
        if h.offset != at {
            return mismatch(
                "offset",
                format!("data written for offset {at}"),
                format!("a misdirected write: data {}", h.origin()),
            );
        }
        if let Some(g) = expect.generation.filter(|&g| g as u16 != h.generation) {
            return mismatch(
                "generation",
                format!("write #{} (low 16 bits {})", g, g as u16),
                format!("stale data, a different write: {}", h.origin()),
            );
        }
        if let Some(s) = expect.seed.filter(|&s| s != h.seed) {
            return mismatch(
                "seed",
                format!("seed {s}"),
                format!("stale data, seed {}: {}", h.seed, h.origin()),
            );
        }
        self.check_digest(iv, hsz)
    }

    /// The data's digest against the one stored in the header (methods
    /// with a checksum).
    fn check_digest(&self, iv: &[u8], hsz: usize) -> Option<Mismatch> {
        if hsz <= HEADER_BYTES {
            return None;
        }
        let want = &iv[HEADER_BYTES..hsz];
        let got = checksum(self.method, &iv[hsz..]);
        if want == got.as_slice() {
            return None;
        }
        let shown = |b: &[u8]| hex(&b[..b.len().min(self.digest_bytes())]);
        mismatch(
            self.method.name(),
            format!("{} (stored in the header)", shown(want)),
            format!("{} (computed from the data): corrupt data", shown(&got)),
        )
    }

    /// The interval's data against the job's pattern, where the method
    /// checks one.
    fn check_pattern(
        &self,
        iv: &[u8],
        hsz: usize,
        at: u64,
        start_in_block: usize,
    ) -> Option<Mismatch> {
        let checks_pattern = matches!(self.method, Method::Pattern | Method::PatternHeader)
            || (self.method == Method::Meta && self.pattern.is_some());
        if let (true, Some(p)) = (checks_pattern, &self.pattern) {
            let bytes = p.for_offset(at - start_in_block as u64);
            let phase = (start_in_block + hsz) % bytes.len();
            if let Some((i, want, got)) = pattern::first_mismatch(&iv[hsz..], &bytes, phase) {
                return mismatch(
                    "pattern",
                    format!("0x{want:02x} at byte {} of the interval", hsz + i),
                    format!("0x{got:02x}: corrupt data"),
                );
            }
        }
        None
    }

    /// Bytes of the checksum slot that hold the digest (the rest is zero).
    fn digest_bytes(&self) -> usize {
        match self.method {
            Method::Sha256 => 32,
            Method::Sha512 => 64,
            m => m.checksum_bytes(),
        }
    }
}

/// A check that failed: its name, what was expected and what was found.
type Mismatch = (String, String, String);

/// A failed check, as `Some`.
fn mismatch(check: &str, expected: String, found: String) -> Option<Mismatch> {
    Some((check.to_string(), expected, found))
}

#[cfg(test)]
mod tests {
    use super::super::ALL;
    use super::*;

    fn layout(method: Method) -> Layout {
        Layout {
            method,
            interval: 1024,
            header_offset: 0,
            pattern: (matches!(method, Method::Pattern | Method::PatternHeader))
                .then(|| Pattern::parse("0xdeadbeef%o").unwrap()),
        }
    }

    fn stamp(generation: u64) -> Stamp {
        Stamp {
            seed: 77 + generation,
            generation,
            thread: 1,
            time_sec: 1_800_000_000,
            time_nsec: 5,
        }
    }

    fn exp(generation: u64) -> Expect {
        Expect {
            generation: Some(generation),
            seed: Some(77 + generation),
            zeroes: false,
        }
    }

    #[test]
    fn a_trimmed_block_must_read_as_zeroes() {
        let l = Layout {
            method: Method::Md5,
            interval: 512,
            header_offset: 0,
            pattern: None,
        };
        let zero = Expect {
            zeroes: true,
            ..Expect::default()
        };
        let mut b = vec![0u8; 4096];
        assert_eq!(l.check(&mut b, 8192, &zero, false), vec![]);
        b[1000] = 7;
        let f = l.check(&mut b, 8192, &zero, false);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].offset, f[0].len), (8192, 4096));
        assert_eq!(f[0].found, "0x07 at byte 1000 of the block");
        // Data where zeroes were expected is caught with the null method too.
        let null = Layout {
            method: Method::Null,
            ..l
        };
        assert_eq!(null.check(&mut b, 8192, &zero, false).len(), 1);
    }

    #[test]
    fn every_method_round_trips_and_catches_a_flipped_byte() {
        for m in ALL {
            let l = layout(m);
            let mut b = vec![0u8; 4096];
            l.fill(&mut b, 8192, &stamp(3));
            let mut copy = b.clone();
            assert_eq!(l.check(&mut copy, 8192, &exp(3), false), vec![], "{m:?}");
            if m == Method::Null || m == Method::Meta {
                continue;
            }
            // A byte of data in the third interval.
            b[2048 + 900] ^= 0x10;
            let f = l.check(&mut b, 8192, &exp(3), false);
            assert_eq!(f.len(), 1, "{m:?}: {f:?}");
            assert_eq!(f[0].offset, 8192 + 2048, "{m:?}");
            let want = if m.checksum_bytes() > 0 {
                m.name()
            } else {
                "pattern"
            };
            assert_eq!(f[0].check, want, "{m:?}");
        }
    }

    #[test]
    fn misdirected_stale_and_overwritten_blocks_are_told_apart() {
        let l = layout(Method::Crc32c);
        let mut b = vec![0u8; 4096];
        // Written for offset 0, read at 4096: misdirected.
        l.fill(&mut b, 0, &stamp(1));
        let f = l.check(&mut b.clone(), 4096, &exp(1), true);
        assert_eq!(f[0].check, "offset");
        assert!(f[0].found.contains("misdirected"), "{}", f[0]);
        assert!(f[0].found.contains("offset 0"), "{}", f[0]);
        // An older write of the same block: stale.
        let f = l.check(&mut b.clone(), 0, &exp(2), false);
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].check, "generation");
        // Without a generation to expect (verify_only), the seed is not
        // checked either, and the old block passes.
        assert!(l
            .check(&mut b.clone(), 0, &Expect::default(), false)
            .is_empty());
        // Zeroes: no header.
        let f = l.check(&mut vec![0u8; 1024], 0, &exp(1), false);
        assert_eq!(f[0].check, "magic");
        // A flipped bit in a header's offset field.
        b[17] ^= 1;
        let f = l.check(&mut b, 0, &exp(1), true);
        assert_eq!(f[0].check, "header crc32c");
    }

    #[test]
    fn a_moved_header_is_found_where_it_was_put() {
        let mut l = layout(Method::Md5);
        l.header_offset = 512;
        let mut b = vec![0u8; 2048];
        l.fill(&mut b, 0, &stamp(0));
        assert_eq!(&b[512..514], &MAGIC.to_le_bytes());
        assert_ne!(&b[..2], &MAGIC.to_le_bytes());
        assert!(l.check(&mut b, 0, &exp(0), false).is_empty());
    }

    #[test]
    fn fios_crc32c_is_the_castagnoli_crc_not_inverted() {
        // CRC-32C("123456789") = 0xe3069283 (the standard check value).
        assert_eq!(!fio_crc32c(b"123456789"), 0xe306_9283);
    }
}
