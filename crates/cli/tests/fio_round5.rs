//! fio compatibility, round 5 (issue 15): options that stopped a job as
//! "not supported yet" — write-buffer contents (`buffer_pattern`,
//! `zero_buffers`, `refill_buffers`, `scramble_buffers`) and the others of
//! this round — compared with fio 3.33 side by side where fio is installed.

mod common;
use common::fio::*;
use std::path::Path;

/// Write 256 KiB in 4 KiB blocks to file `name` in `dir` with `extra`
/// options, with ssdready (`s`) and, when installed, fio (`f`); the files'
/// contents, ssdready's first.
fn written(dir: &Path, extra: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (file, run) in [("--filename=s", ssdready_in as Runner), ("--filename=f", fio_in)] {
        if file == "--filename=f" && !have_fio() {
            break;
        }
        let mut args = vec!["--name=j", file, "--size=256k", "--rw=write", "--bs=4k"];
        args.extend_from_slice(extra);
        let (_, o) = run(dir, &args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out.push(std::fs::read(dir.join(&file["--filename=".len()..])).unwrap());
    }
    out
}

type Runner = fn(&Path, &[&str]) -> (serde_json::Value, std::process::Output);

#[test]
fn buffer_pattern_fills_every_written_byte_as_fio() {
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &["--buffer_pattern=0xdeadbeef\"ab\""]) {
        assert_eq!(data.len(), 256 << 10);
        let want: Vec<u8> = [0xde, 0xad, 0xbe, 0xef, b'a', b'b'].to_vec();
        // The pattern restarts at every 4 KiB block, as fio's buffers do.
        for block in data.chunks(4096) {
            for (i, b) in block.iter().enumerate() {
                assert_eq!(*b, want[i % want.len()], "byte {i}");
            }
        }
    }
}

#[test]
fn zero_buffers_writes_zeros_without_scrambling_as_fio() {
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &["--zero_buffers"]) {
        assert!(data.iter().all(|&b| b == 0));
    }
}

/// Whether each 512-byte sector of `data` carries its own offset at the
/// start of one of its 8 cache lines (fio's small_content_scramble).
fn sectors_carry_their_offsets(data: &[u8]) -> bool {
    data.chunks(512).enumerate().all(|(i, s)| {
        (0..8).any(|l| s[l * 64..l * 64 + 8] == ((i * 512) as u64).to_ne_bytes())
    })
}

#[test]
fn writes_are_scrambled_with_their_offsets_by_default_as_fio() {
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &[]) {
        assert!(sectors_carry_their_offsets(&data));
    }
    // scramble_buffers=0: the one buffer is written as it is, 64 times.
    for data in written(d.path(), &["--scramble_buffers=0"]) {
        assert!(!sectors_carry_their_offsets(&data));
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), 1);
    }
    // zero_buffers with an explicit scramble_buffers=1: zeros, scrambled.
    for data in written(d.path(), &["--zero_buffers", "--scramble_buffers=1"]) {
        assert!(sectors_carry_their_offsets(&data));
    }
}

#[test]
fn refill_buffers_writes_distinct_random_blocks_as_fio() {
    let d = tempfile::tempdir().unwrap();
    for data in written(d.path(), &["--refill_buffers", "--scramble_buffers=0"]) {
        let blocks: std::collections::HashSet<&[u8]> = data.chunks(4096).collect();
        assert_eq!(blocks.len(), 64);
        assert!(!sectors_carry_their_offsets(&data));
    }
}

#[test]
fn a_buffer_pattern_with_an_offset_format_is_refused_as_fio() {
    let o = common::ssdready(&[
        "run",
        "--parse-only",
        "--name=j",
        "--buffer_pattern=%o",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("buffer_pattern") && e.contains("%o"), "{e}");
}
