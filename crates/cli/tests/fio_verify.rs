//! Data verification (`verify` and its options): write-and-verify round
//! trips on a file and on the emulator for every method; damage made
//! between writing and verifying (a flipped byte, a block written to the
//! wrong place) found with its offset and the check that failed, in the
//! text, ssdready's JSON and fio's JSON, with exit code 1; fio reading
//! what ssdready wrote and the reverse; the verify state files.

use crate::common;
use common::fio::*;
use serde_json::{json, Value};
use std::os::unix::fs::FileExt;
use std::path::Path;

const METHODS: [&str; 10] = [
    "md5",
    "crc32c",
    "crc32c-intel",
    "sha1",
    "sha256",
    "sha512",
    "xxhash",
    "meta",
    "pattern",
    "null",
];

fn target(dir: &Path) -> String {
    format!("--filename={}", dir.join("v").display())
}

/// The args of a 256 KiB write job with `verify=method` (and a pattern
/// where the method needs one).
fn job<'a>(f: &'a str, method: &'a str) -> Vec<&'a str> {
    let mut a = vec!["--name=v", f, "--size=256k", "--bs=4k", "--rw=randwrite"];
    a.push(match method {
        "md5" => "--verify=md5",
        "crc32c" => "--verify=crc32c",
        "crc32c-intel" => "--verify=crc32c-intel",
        "sha1" => "--verify=sha1",
        "sha256" => "--verify=sha256",
        "sha512" => "--verify=sha512",
        "xxhash" => "--verify=xxhash",
        "meta" => "--verify=meta",
        "pattern" => "--verify=pattern",
        _ => "--verify=null",
    });
    if method == "pattern" {
        a.push("--verify_pattern=0xdeadbeef\"ab\"%o");
    }
    a
}

/// One tool's run in a directory: its fio JSON and its output.
type Runner = fn(&Path, &[&str]) -> (Value, std::process::Output);

fn verify_of(native: &Value) -> &Value {
    &native["jobs"][0]["verify"]
}

/// Every method: 64 blocks written, read back and checked, none failing,
/// on a file (psync and io_uring) and on the emulator.
#[test]
fn verify_round_trips_for_every_method_on_a_file_and_the_emulator() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    for method in METHODS {
        for target in [
            f.as_str(),
            "--filename=emu:nvme-tlc,size=1g",
            "--ioengine=io_uring",
        ] {
            let mut a = job(&f, method);
            if target != f {
                a.push(target);
            }
            let (v, out) = native_in(d.path(), &a);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{method} {target}: {err}");
            let w = verify_of(&v);
            assert_eq!(w["failed"], 0, "{method} {target}");
            assert_eq!(v["jobs"][0]["write"]["ios"], 64, "{method} {target}");
            assert_eq!(v["jobs"][0]["read"]["ios"], 64, "{method} {target}");
            assert_eq!(
                w["blocks"],
                if method == "null" { 0 } else { 64 },
                "{method} {target}"
            );
        }
    }
}

/// Flip one byte between writing (do_verify=0) and verify_only: the
/// failure names the block's offset and the check, in every output, and
/// the run exits 1; fio finds the same block.
#[test]
fn verify_only_finds_a_flipped_byte_at_its_offset() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    for method in ["md5", "crc32c", "sha256", "xxhash", "pattern"] {
        let mut w = job(&f, method);
        w.push("--do_verify=0");
        assert!(native_in(d.path(), &w).1.status.success(), "{method}");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(d.path().join("v"))
            .unwrap();
        let mut b = [0u8];
        file.read_at(&mut b, 40_960 + 1000).unwrap();
        file.write_at(&[b[0] ^ 0x20], 40_960 + 1000).unwrap();
        let mut r = job(&f, method);
        r.push("--verify_only=1");
        let (v, out) = native_in(d.path(), &r);
        assert_eq!(out.status.code(), Some(1), "{method}");
        let vr = verify_of(&v);
        assert_eq!(vr["failed"], 1, "{method}: {vr}");
        let fail = &vr["failures"][0];
        assert_eq!(fail["offset"], 40_960, "{method}");
        let check = if method == "pattern" {
            "pattern"
        } else {
            method
        };
        assert_eq!(fail["check"], check, "{method}");
        assert!(fail["file"].as_str().unwrap().ends_with("/v"));
        // The dry run's writes count as done, as fio counts them, with no
        // latency (none was measured); the flipped byte found shows that
        // nothing was written.
        let wr = &v["jobs"][0]["write"];
        assert_eq!((&wr["ios"], &wr["bytes"]), (&json!(64), &json!(262_144)));
        assert_eq!(wr["clat"]["n"], 0, "{wr}");
        // fio's layout: the job's error is EILSEQ, the failure listed beside.
        let (fj, _) = ssdready_in(d.path(), &r);
        assert_eq!(fj["jobs"][0]["error"], 84);
        assert_eq!(
            fj["jobs"][0]["ssdready"]["verify"]["failures"][0]["offset"],
            40_960
        );
        // The text report says where and what.
        let text = common::ssdready(&[&["run"], &r[..]].concat());
        let t = String::from_utf8_lossy(&text.stdout);
        assert!(
            t.contains(&format!("{check} at offset 40960 (length 4096)")),
            "{t}"
        );
        if have_fio() && !matches!(method, "sha256") {
            let (theirs, out) = fio_in(d.path(), &r);
            assert_eq!(out.status.code(), Some(1), "fio {method}");
            assert_eq!(theirs["jobs"][0]["error"], 84, "fio {method}");
            let e = String::from_utf8_lossy(&out.stderr);
            assert!(e.contains("offset 40960"), "fio {method}: {e}");
        }
        file.write_at(&b, 40_960 + 1000).unwrap();
    }
}

/// A block written to the wrong place: its header names its own offset,
/// so the check says "offset" and where the data was meant to go.
#[test]
fn a_misdirected_write_is_caught() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    let mut w = job(&f, "crc32c");
    w.push("--do_verify=0");
    assert!(native_in(d.path(), &w).1.status.success());
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(d.path().join("v"))
        .unwrap();
    let mut block = vec![0u8; 4096];
    file.read_exact_at(&mut block, 8192).unwrap();
    file.write_all_at(&block, 65_536).unwrap();
    let mut r = job(&f, "crc32c");
    r.push("--verify_only=1");
    let (v, out) = native_in(d.path(), &r);
    assert_eq!(out.status.code(), Some(1));
    let fail = &verify_of(&v)["failures"][0];
    assert_eq!(fail["offset"], 65_536);
    assert_eq!(fail["check"], "offset");
    let found = fail["found"].as_str().unwrap();
    assert!(
        found.contains("misdirected") && found.contains("offset 8192"),
        "{found}"
    );
}

/// verify_fatal stops at the first failure; without it every failure is
/// found and listed (fio stops a job at its first failing block either way).
#[test]
fn verify_fatal_stops_at_the_first_failure_and_dump_writes_the_block() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    let mut w = job(&f, "md5");
    w.push("--do_verify=0");
    w.push("--rw=write");
    assert!(native_in(d.path(), &w).1.status.success());
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(d.path().join("v"))
        .unwrap();
    file.write_at(b"xx", 4096 + 100).unwrap();
    file.write_at(b"yy", 12_288 + 100).unwrap();
    let mut r = w.clone();
    r.retain(|a| *a != "--do_verify=0");
    r.push("--verify_only=1");
    let (all, _) = native_in(d.path(), &r);
    let offsets: Vec<u64> = verify_of(&all)["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["offset"].as_u64().unwrap())
        .collect();
    assert_eq!(offsets, [4096, 12_288]);
    r.push("--verify_fatal=1");
    r.push("--verify_dump=1");
    let (first, out) = native_in(d.path(), &r);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(verify_of(&first)["failed"], 1);
    let dumped = std::fs::read(d.path().join("v.4096.received")).unwrap();
    assert_eq!(dumped.len(), 4096);
    assert_eq!(&dumped[100..102], b"xx");
}

/// fio verifies what ssdready wrote, and ssdready what fio wrote, for the
/// methods whose on-disk format is the same (md5, crc32c, sha1, xxhash,
/// meta, pattern; fio's sha256/sha512 are not the standard digests).
#[test]
fn fio_verifies_what_ssdready_wrote_and_the_reverse() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    for method in [
        "md5",
        "crc32c",
        "crc32c-intel",
        "sha1",
        "xxhash",
        "meta",
        "pattern",
    ] {
        for writer in ["ssdready", "fio"] {
            let mut w = job(&f, method);
            w.push("--do_verify=0");
            let mut r = job(&f, method);
            r.push("--verify_only=1");
            let (write, read): (Runner, Runner) = match writer {
                "ssdready" => (ssdready_in, fio_in),
                _ => (fio_in, ssdready_in),
            };
            assert!(
                write(d.path(), &w).1.status.success(),
                "{writer} writes {method}"
            );
            let (v, out) = read(d.path(), &r);
            let e = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{method} written by {writer}: {e}");
            assert_eq!(ios(&v, "read"), 64, "{method} written by {writer}");
            assert_eq!(v["jobs"][0]["error"], 0, "{method} written by {writer}");
        }
    }
}

/// verify_backlog and experimental_verify read back as many blocks as fio
/// does for the same job, and find nothing wrong.
#[test]
fn verify_backlog_and_experimental_verify_match_fios_counts() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    for extra in [
        "--verify_backlog=16",
        "--experimental_verify=1",
        "--loops=2",
    ] {
        let mut a = job(&f, "crc32c");
        a.push(extra);
        let (ours, out) = ssdready_in(d.path(), &a);
        assert!(
            out.status.success(),
            "{extra}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            ours["jobs"][0]["ssdready"]["verify"]["failed"], 0,
            "{extra}"
        );
        let counts = |v: &Value| (ios(v, "write"), ios(v, "read"));
        if have_fio() {
            let (theirs, _) = fio_in(d.path(), &a);
            assert_eq!(counts(&ours), counts(&theirs), "{extra}");
        } else {
            assert_eq!(counts(&ours).0, counts(&ours).1, "{extra}");
        }
    }
}

/// verify_state_save writes fio's state file in the current directory
/// (local-JOB-N-verify.state); verify_state_load limits a later
/// verification to what it lists; fio reads ssdready's file.
#[test]
fn verify_state_is_saved_and_loaded_in_fios_format() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    let mut w = job(&f, "crc32c");
    w.push("--rw=write");
    assert!(native_in(d.path(), &w).1.status.success());
    let state = d.path().join("local-v-0-verify.state");
    let bytes = std::fs::read(&state).expect("the state file");
    let s = ssdready_workload::verify::state::SavedState::from_bytes(&bytes).unwrap();
    assert_eq!((s.issued, s.depth, s.name.as_str()), (64, 1, "v"));
    assert_eq!(s.completed, vec![(0, 63 * 4096)]);
    let mut r = w.clone();
    r.push("--verify_only=1");
    r.push("--verify_state_load=1");
    let (v, out) = native_in(d.path(), &r);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(verify_of(&v)["blocks"], 64);
    if have_fio() {
        let (theirs, out) = fio_in(d.path(), &r);
        assert!(out.status.success(), "fio loads ssdready's state");
        assert_eq!(ios(&theirs, "read"), 64);
    }
    std::fs::remove_file(&state).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .arg("run")
        .args(&r)
        .current_dir(d.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a missing state file is refused"
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("local-v-0-verify.state"), "{e}");
}

/// A read job with verify checks every block it reads (fio: verification
/// of existing data, e.g. after a write-only job).
#[test]
fn a_read_job_with_verify_checks_what_it_reads() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    let mut w = job(&f, "sha1");
    w.push("--do_verify=0");
    assert!(native_in(d.path(), &w).1.status.success());
    let r = [
        "--name=v",
        &f,
        "--size=256k",
        "--bs=4k",
        "--rw=randread",
        "--verify=sha1",
    ];
    let (v, out) = native_in(d.path(), &r);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(verify_of(&v)["blocks"], 64);
    std::fs::write(d.path().join("v"), vec![0u8; 256 << 10]).unwrap();
    let (v, out) = native_in(d.path(), &r);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(verify_of(&v)["failed"], 64);
    assert_eq!(verify_of(&v)["failures"][0]["check"], "magic");
}

/// Clones that each write their own region (`offset_increment` ≥ `size`)
/// are not warned about overwriting each other; clones over one region are.
#[test]
fn clones_in_their_own_regions_are_not_warned_of_overwriting_each_other() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let tmp = tempfile::tempdir().unwrap();
    let f = target(tmp.path());
    let base = [
        "--name=v",
        f.as_str(),
        "--size=256k",
        "--bs=4k",
        "--rw=randwrite",
        "--verify=crc32c",
        "--numjobs=2",
        "--verify_state_save=0",
    ];
    let warned = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        let (_, out) = native_in(tmp.path(), &a);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        (
            out.status.success(),
            stderr.contains("write the same blocks"),
        )
    };
    assert_eq!(warned(&["--offset_increment=256k"]), (true, false));
    // Over one region the warning is right: a clone's data is overwritten.
    assert!(warned(&[]).1);
}

/// trim_percentage on a file: the blocks trimmed (holes punched) are half
/// those written and read back as zeroes; a file whose trimmed blocks hold
/// data again fails verify_only there.
#[test]
fn verify_trims_punch_holes_that_read_back_as_zeroes() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = target(d.path());
    let mut w = job(&f, "md5");
    w.extend(["--trim_percentage=50", "--trim_backlog=4"]);
    let (v, out) = ssdready_in(d.path(), &w);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        (ios(&v, "write"), ios(&v, "trim"), ios(&v, "read")),
        (64, 32, 64)
    );
    assert_eq!(v["jobs"][0]["error"], 0);
    // A trimmed block written again with data: verify_only finds it.
    w.extend(["--do_verify=0", "--trim_percentage=0"]);
    assert!(ssdready_in(d.path(), &w).1.status.success());
    let mut r = job(&f, "md5");
    r.extend([
        "--trim_percentage=50",
        "--trim_backlog=4",
        "--verify_only=1",
    ]);
    let (v, out) = ssdready_in(d.path(), &r);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(v["jobs"][0]["error"], 84);
}
