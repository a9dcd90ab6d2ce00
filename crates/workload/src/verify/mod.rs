//! Data verification (fio's `verify`): every block a job writes carries, in
//! every `verify_interval` bytes, a header saying what should be there —
//! where (its offset), how long, which write (a generation number and the
//! seed of its data), when and by which worker — followed by a checksum of
//! the rest. Reading the block back checks the header against what the
//! reader expects and the checksum against the data, so three kinds of
//! damage are told apart:
//!
//! * **corruption**: the checksum (or the pattern) does not match the data;
//! * **misdirected writes**: a valid header names another offset;
//! * **stale data (lost writes)**: a valid header at the right offset, but
//!   from an older write (its generation or seed is not the last one).
//!
//! The on-disk layout is fio's (`struct verify_header`, little-endian:
//! magic `0xacca`, type, length, seed, offset, time, thread, generation,
//! CRC32C of the header; then the method's checksum), so data written by
//! fio with md5, crc32c, sha1, xxhash, meta or a pattern verifies here and
//! the reverse (tests check both ways). fio's sha256 and sha512 are not the
//! standard digests (its sha256 keeps one byte of each state word, its
//! sha512 keeps the last input block); ssdready stores the real SHA-256 and
//! SHA-512 digests in the same slots, so those two do not cross over.
//!
//! This module is pure: [`block`] fills and checks buffers, [`pattern`]
//! fills and compares them with a pattern, [`state`] reads and writes
//! fio's verify state files (`verify_state_save` / `verify_state_load`).
//! The options ([`VerifySpec`], [`Method`]) and fio's pattern syntax are
//! the job language's (`ssdready_core::spec_verify`, `spec_pattern`),
//! re-exported here. The worker and the engines (in `ssdready-run` and
//! `ssdready-io`) move the bytes.

pub mod block;
pub mod pattern;
pub mod state;

pub use block::{Expect, Layout, Stamp};
pub use pattern::Pattern;
pub use ssdready_core::spec_verify::{gcd, Method, VerifySpec, ALL, HEADER_BYTES, MAGIC};
pub use ssdready_core::stats::Failure;

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks fio 3.33 wrote (`--size=2k --bs=1k --rw=write --verify=M`,
    /// testdata/) verify here, and a flipped byte is caught at its offset.
    #[test]
    fn blocks_written_by_fio_verify_and_a_flipped_byte_is_caught() {
        for (data, method, interval, header_offset, pattern) in fio_files() {
            let l = Layout {
                method,
                interval,
                header_offset,
                pattern,
            };
            check_each_block(&l, data);
        }
        // fio's sha256 and sha512 are not the standard digests (module docs).
        let l = Layout {
            method: Method::Sha256,
            interval: 1024,
            header_offset: 0,
            pattern: None,
        };
        let mut b = include_bytes!("testdata/fio-3.33-sha256.bin")[..1024].to_vec();
        assert_eq!(
            l.check(&mut b, 0, &Expect::default(), false)[0].check,
            "sha256"
        );
    }

    /// (fio's file, method, verify_interval, verify_offset, pattern)
    type Case = (&'static [u8], Method, u32, u32, Option<Pattern>);

    /// The blocks fio 3.33 wrote with each method.
    fn fio_files() -> [Case; 8] {
        let pat = || Some(Pattern::parse("0xdeadbeef\"x\"%o").unwrap());
        [
            (
                include_bytes!("testdata/fio-3.33-crc32c.bin"),
                Method::Crc32c,
                1024,
                0,
                None,
            ),
            (
                include_bytes!("testdata/fio-3.33-md5.bin"),
                Method::Md5,
                1024,
                0,
                None,
            ),
            (
                include_bytes!("testdata/fio-3.33-sha1.bin"),
                Method::Sha1,
                1024,
                0,
                None,
            ),
            (
                include_bytes!("testdata/fio-3.33-xxhash.bin"),
                Method::Xxhash,
                1024,
                0,
                None,
            ),
            (
                include_bytes!("testdata/fio-3.33-meta.bin"),
                Method::Meta,
                1024,
                0,
                None,
            ),
            (
                include_bytes!("testdata/fio-3.33-md5-offset.bin"),
                Method::Md5,
                512,
                128,
                None,
            ),
            (
                include_bytes!("testdata/fio-3.33-pattern-header.bin"),
                Method::PatternHeader,
                1024,
                0,
                pat(),
            ),
            (
                include_bytes!("testdata/fio-3.33-pattern.bin"),
                Method::Pattern,
                1024,
                0,
                pat(),
            ),
        ]
    }

    /// Each 1 KiB block of `data` verifies, and one with a flipped byte
    /// fails at the offset of the interval holding it (meta aside).
    fn check_each_block(l: &Layout, data: &[u8]) {
        let (method, interval) = (l.method, l.interval);
        for (i, block) in data.chunks(1024).enumerate() {
            let at = i as u64 * 1024;
            let mut b = block.to_vec();
            assert_eq!(
                l.check(&mut b, at, &Expect::default(), false),
                vec![],
                "{method:?} block {i}"
            );
            let mut b = block.to_vec();
            b[700] ^= 4;
            let f = l.check(&mut b, at, &Expect::default(), false);
            if method != Method::Meta {
                assert_eq!(f.len(), 1, "{method:?}: {f:?}");
                assert_eq!(
                    f[0].offset,
                    at + u64::from(700 / interval * interval),
                    "{method:?}"
                );
            }
        }
    }

    /// fio 3.33's state file after that crc32c job: one completion, 1024.
    #[test]
    fn fios_state_file_reads() {
        let s = state::SavedState::from_bytes(include_bytes!(
            "testdata/fio-3.33-local-g-0-verify.state"
        ))
        .unwrap();
        assert_eq!((s.depth, s.files, s.issued, s.index), (1, 1, 2, 0));
        assert_eq!(s.name, "g");
        assert_eq!(s.completed, vec![(0, 1024)]);
        assert_eq!(s.to_bytes().len(), 24 + 168);
    }
}
