//! Filling a block with a pattern and finding where a block read back
//! departs from it. The pattern itself (fio's syntax, parsed) is the job
//! language's [`crate::verify::Pattern`].

pub use ssdready_core::spec::{Pattern, MAX_PATTERN_BYTES};

/// Fill `buf` with `pattern` repeated from its first byte.
pub fn fill(buf: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    for chunk in buf.chunks_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
}

/// The first byte of `buf` that differs from `pattern` repeated from its
/// byte `phase`, as (index, expected, found).
pub fn first_mismatch(buf: &[u8], pattern: &[u8], phase: usize) -> Option<(usize, u8, u8)> {
    if pattern.is_empty() {
        return None;
    }
    buf.iter().enumerate().find_map(|(i, &got)| {
        let want = pattern[(phase + i) % pattern.len()];
        (got != want).then_some((i, want, got))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_pasted_and_mismatches_found() {
        let p = Pattern::parse("\"ab\"%o").unwrap();
        let b = p.for_offset(0x0102);
        assert_eq!(&b[..4], [b'a', b'b', 0x02, 0x01]);
        let mut buf = vec![0u8; 25];
        fill(&mut buf, &b);
        assert_eq!(&buf[10..12], b"ab");
        assert_eq!(first_mismatch(&buf, &b, 0), None);
        assert_eq!(first_mismatch(&buf[3..], &b, 3), None);
        buf[13] ^= 0x80;
        assert_eq!(first_mismatch(&buf, &b, 0), Some((13, 0x01, 0x81)));
    }
}
