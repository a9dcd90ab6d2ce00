//! I/O logs (#15 item 14): what `write_iolog` records, `read_iolog`
//! replays — the same requests in the same order, with the trace's timing
//! scaled by `replay_time_scale` or ignored with `replay_no_stall` — from
//! ssdready's logs, fio's logs (and fio replays ssdready's), and blktrace
//! binaries built here from the documented `struct blk_io_trace`; a bad
//! trace is one line and exit code 2, naming the file and the line.

use crate::common;
use common::fio::*;
use common::ssdready;
use serde_json::Value;
use std::path::Path;

/// (file, action, offset, length) of every request line of an iolog.
fn requests(log: &Path) -> Vec<(String, String, u64, u64)> {
    let text = std::fs::read_to_string(log).unwrap();
    assert!(text.starts_with("fio version 3 iolog\n"), "{text}");
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5).then(|| {
                (
                    w[1].to_string(),
                    w[2].to_string(),
                    w[3].parse().unwrap(),
                    w[4].parse().unwrap(),
                )
            })
        })
        .collect()
}

/// The µs of every request line of an iolog.
fn times(log: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(log).unwrap();
    text.lines()
        .skip(1)
        .filter(|l| l.split_whitespace().count() == 5)
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect()
}

/// I/Os and bytes per direction, and syncs, of the first job (fio's JSON).
fn counts(v: &Value) -> [u64; 7] {
    let j = &v["jobs"][0];
    let n = |d: &str, k: &str| j[d][k].as_u64().unwrap_or(0);
    [
        n("read", "total_ios"),
        n("read", "io_bytes"),
        n("write", "total_ios"),
        n("write", "io_bytes"),
        n("trim", "total_ios"),
        n("trim", "io_bytes"),
        n("sync", "total_ios"),
    ]
}

fn ok(o: &std::process::Output, who: &str) {
    assert!(
        o.status.success(),
        "{who} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn ssdready_iolog_replays_to_the_same_requests_and_counts() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("data");
    let (a, b) = (d.path().join("a.log"), d.path().join("b.log"));
    let file = format!("--filename={}", f.display());
    let (rec, o) = ssdready_in(
        d.path(),
        &[
            "--name=rec",
            &file,
            "--size=1m",
            "--rw=randrw",
            "--bssplit=4k/50:16k/30:64k/20",
            "--fsync=5",
            &format!("--write_iolog={}", a.display()),
        ],
    );
    ok(&o, "recording");
    let (rep, o) = ssdready_in(
        d.path(),
        &[
            "--name=rep",
            &format!("--read_iolog={}", a.display()),
            &format!("--write_iolog={}", b.display()),
        ],
    );
    ok(&o, "replay");
    let (ra, rb) = (requests(&a), requests(&b));
    assert!(ra.len() > 40, "{} requests", ra.len());
    assert!(ra.iter().any(|r| r.1 == "sync"), "the log has the syncs");
    assert!(ra.iter().any(|r| r.3 == 65536) && ra.iter().any(|r| r.3 == 4096));
    assert_eq!(ra, rb, "the replay issues the recorded requests in order");
    assert_eq!(counts(&rec), counts(&rep));
    assert_eq!(
        counts(&rec)[1] + counts(&rec)[3],
        1 << 20,
        "all of size moved"
    );
}

#[test]
fn emulator_iolog_replays_with_no_root_and_no_device() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.log"), d.path().join("b.log"));
    let (rec, o) = ssdready_in(
        d.path(),
        &[
            "--name=rec",
            "--filename=emu:nvme-tlc",
            "--size=2m",
            "--rw=randrw",
            "--iodepth=4",
            &format!("--write_iolog={}", a.display()),
        ],
    );
    ok(&o, "recording");
    assert!(requests(&a).iter().all(|r| r.0 == "emu:nvme-tlc"));
    // The log names the emulator: replayed there, and again redirected there.
    for extra in ["--replay_no_stall=0", "--replay_redirect=emu:x25e"] {
        let (rep, o) = ssdready_in(
            d.path(),
            &[
                "--name=rep",
                &format!("--read_iolog={}", a.display()),
                &format!("--write_iolog={}", b.display()),
                extra,
            ],
        );
        ok(&o, extra);
        assert_eq!(counts(&rec), counts(&rep), "{extra}");
        let got: Vec<_> = requests(&b).into_iter().map(|r| (r.1, r.2, r.3)).collect();
        let want: Vec<_> = requests(&a).into_iter().map(|r| (r.1, r.2, r.3)).collect();
        assert_eq!(got, want, "{extra}");
    }
}

#[test]
fn fio_iolog_replays_here_and_ssdready_iolog_replays_in_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("data");
    let file = format!("--filename={}", f.display());
    let job = [
        "--size=512k",
        "--rw=randrw",
        "--bs=4k",
        "--fsync=3",
        "--ioengine=psync",
    ];
    // fio records; ssdready replays.
    let flog = d.path().join("fio.log");
    let mut args = vec!["--name=rec", &file];
    args.extend(job);
    let w = format!("--write_iolog={}", flog.display());
    args.push(&w);
    let (fio_rec, o) = fio_in(d.path(), &args);
    ok(&o, "fio recording");
    let r = format!("--read_iolog={}", flog.display());
    let (ours, o) = ssdready_in(d.path(), &["--name=rep", &r]);
    ok(&o, "ssdready replaying fio's log");
    assert!(counts(&fio_rec)[6] > 0, "fio's log has syncs");
    assert_eq!(counts(&fio_rec), counts(&ours));
    // ssdready records; fio replays.
    let slog = d.path().join("ours.log");
    let mut args = vec!["--name=rec", &file];
    args.extend(job);
    let w = format!("--write_iolog={}", slog.display());
    args.push(&w);
    let (our_rec, o) = ssdready_in(d.path(), &args);
    ok(&o, "ssdready recording");
    let r = format!("--read_iolog={}", slog.display());
    let (fio_rep, o) = fio_in(d.path(), &["--name=rep", &r]);
    ok(&o, "fio replaying ssdready's log");
    assert_eq!(counts(&our_rec), counts(&fio_rep));
}

/// One blk_io_trace record (little-endian unless `big`), with `pdu` after it.
fn record(big: bool, time: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
    let dev: u32 = (8 << 20) | 16;
    let mut out = Vec::new();
    let mut put = |b: &[u8]| {
        let mut b = b.to_vec();
        if big {
            b.reverse();
        }
        out.extend_from_slice(&b);
    };
    put(&0x6561_7407u32.to_le_bytes()); // magic | version 7
    put(&1u32.to_le_bytes()); // sequence
    put(&time.to_le_bytes());
    put(&sector.to_le_bytes());
    put(&bytes.to_le_bytes());
    put(&action.to_le_bytes());
    put(&42u32.to_le_bytes()); // pid
    put(&dev.to_le_bytes());
    put(&0u32.to_le_bytes()); // cpu
    put(&0u16.to_le_bytes()); // error
    put(&(pdu.len() as u16).to_le_bytes());
    out.extend_from_slice(pdu);
    out
}

const QUEUE: u32 = 1;
const COMPLETE: u32 = 8;
const fn tc(bits: u32) -> u32 {
    bits << 16
}
const READ: u32 = tc(1);
const WRITE: u32 = tc(1 << 1);
const FLUSH: u32 = tc(1 << 2);
const NOTIFY: u32 = tc(1 << 10);
const DISCARD: u32 = tc(1 << 13);

/// A trace: a notify with data, then queue events 1 ms apart (a read, a
/// write, a discard, a flush, a zero-byte write, a read), with a
/// completion and a back merge between.
fn blktrace(big: bool) -> Vec<u8> {
    let ms = 1_000_000u64;
    [
        record(big, 0, 0, 0, NOTIFY, b"fio\0"),
        record(big, ms, 8, 4096, READ | QUEUE, &[]),
        record(big, ms + 500, 8, 4096, READ | COMPLETE, &[]),
        record(big, 2 * ms, 16, 8192, WRITE | QUEUE, &[]),
        record(big, 2 * ms + 10, 32, 4096, WRITE | 2, &[]),
        record(big, 3 * ms, 64, 4096, DISCARD | QUEUE, &[]),
        record(big, 4 * ms, 0, 0, FLUSH | QUEUE, &[]),
        record(big, 5 * ms, 100, 0, WRITE | QUEUE, &[]),
        record(big, 6 * ms, 33, 4096, READ | QUEUE, &[]),
    ]
    .concat()
}

fn replay_requests(dir: &Path, trace: &Path, extra: &[&str]) -> Vec<(String, u64, u64)> {
    let log = dir.join("replayed.log");
    let _ = std::fs::remove_file(&log);
    let target = format!("--replay_redirect={}", dir.join("target").display());
    let mut args = vec![
        "--name=bt".to_string(),
        format!("--read_iolog={}", trace.display()),
        target,
        "--size=1m".into(),
        format!("--write_iolog={}", log.display()),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (_, o) = ssdready_in(dir, &a);
    ok(&o, "blktrace replay");
    requests(&log)
        .into_iter()
        .map(|r| (r.1, r.2, r.3))
        .collect()
}

#[test]
fn synthetic_blktrace_replays_its_queued_requests() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let want = vec![
        ("read".to_string(), 4096, 4096),
        ("write".into(), 8192, 8192),
        ("trim".into(), 32768, 4096),
        ("sync".into(), 36864, 0),
        ("read".into(), 16896, 4096),
    ];
    for big in [false, true] {
        let t = d.path().join(format!("trace-{big}.bin"));
        std::fs::write(&t, blktrace(big)).unwrap();
        assert_eq!(replay_requests(d.path(), &t, &[]), want, "big-endian {big}");
    }
    let t = d.path().join("trace-false.bin");
    // replay_skip, then replay_scale and replay_align.
    let skipped = replay_requests(d.path(), &t, &["--replay_skip=write,sync"]);
    assert_eq!(
        skipped.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ["read", "trim", "read"]
    );
    let scaled = replay_requests(d.path(), &t, &["--replay_scale=2", "--replay_align=4k"]);
    let offsets: Vec<u64> = scaled
        .iter()
        .filter(|r| r.0 != "sync")
        .map(|r| r.1)
        .collect();
    assert_eq!(offsets, [0, 4096, 16384, 8192]);
}

#[test]
fn merged_blktraces_replay_in_time_order() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a.bin"), d.path().join("b.bin"));
    let ms = 1_000_000u64;
    // a: reads at 1, 3 ms; b: writes at 2, 4 ms.
    std::fs::write(
        &a,
        [
            record(false, ms, 0, 4096, READ | QUEUE, &[]),
            record(false, 3 * ms, 8, 4096, READ | QUEUE, &[]),
        ]
        .concat(),
    )
    .unwrap();
    std::fs::write(
        &b,
        [
            record(false, 2 * ms, 16, 4096, WRITE | QUEUE, &[]),
            record(false, 4 * ms, 24, 4096, WRITE | QUEUE, &[]),
        ]
        .concat(),
    )
    .unwrap();
    let merged = d.path().join("merged.bin");
    let trace = format!("{}:{}", a.display(), b.display());
    let m = format!("--merge_blktrace_file={}", merged.display());
    // b twice, a at 10 % of its time: a's reads (0.1, 0.3 ms) first, then
    // b's writes at 2, 4, then (2 + 4), (4 + 4) ms.
    let got = replay_requests(
        d.path(),
        Path::new(&trace),
        &[
            &m,
            "--merge_blktrace_scalars=10:100",
            "--merge_blktrace_iters=1:2",
        ],
    );
    let dirs: Vec<&str> = got.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(dirs, ["read", "read", "write", "write", "write", "write"]);
    assert_eq!(std::fs::metadata(&merged).unwrap().len(), 6 * 48);
}

#[test]
fn replay_time_scale_halves_the_duration_and_no_stall_ignores_it() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("data");
    // 21 reads 10 ms apart: 200 ms.
    let mut log = String::from("fio version 3 iolog\n");
    log += &format!("0 {} add\n0 {} open\n", f.display(), f.display());
    for i in 0..21u64 {
        log += &format!(
            "{} {} read {} 4096\n",
            1000 + i * 10_000,
            f.display(),
            i * 4096
        );
    }
    let trace = d.path().join("t.log");
    std::fs::write(&trace, log).unwrap();
    let span = |extra: &str| {
        let out = d.path().join("out.log");
        let (v, o) = ssdready_in(
            d.path(),
            &[
                "--name=t",
                &format!("--read_iolog={}", trace.display()),
                &format!("--write_iolog={}", out.display()),
                extra,
            ],
        );
        ok(&o, extra);
        assert_eq!(counts(&v)[0], 21, "{extra}");
        let t = times(&out);
        t[t.len() - 1] - t[0]
    };
    let full = span("--replay_time_scale=100");
    let half = span("--replay_time_scale=200");
    let none = span("--replay_no_stall=1");
    assert!(full >= 200_000, "never faster than the trace: {full} µs");
    assert!(
        (100_000..full * 3 / 4).contains(&half),
        "twice the rate: {half} µs of {full}"
    );
    assert!(none < 50_000, "no stall: {none} µs");
}

#[test]
fn bad_traces_are_one_line_naming_file_and_line() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "malformed.log",
            b"fio version 3 iolog\n0 /x add\n5 /x read 12ab 4096\n",
            "malformed.log line 3: the offset '12ab' is not a whole number",
        ),
        (
            "version.log",
            b"fio version 4 iolog\n",
            "version.log line 1: 'fio version 4 iolog' is not an iolog header",
        ),
        (
            "action.log",
            b"fio version 2 iolog\n/x add\n/x scribble 0 4096\n",
            "action.log line 3: unknown action 'scribble'",
        ),
        (
            "v6.bin",
            &record(false, 1, 0, 4096, READ | QUEUE, &[])
                .iter()
                .enumerate()
                .map(|(i, &b)| if i == 0 { 6 } else { b })
                .collect::<Vec<u8>>(),
            "v6.bin record 1: blktrace version 6 (allowed: 7)",
        ),
    ];
    for (name, bytes, want) in cases {
        let p = d.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let out = d.path().join("out.log");
        let o = ssdready(&[
            "run",
            "--name=bad",
            &format!("--read_iolog={}", p.display()),
            &format!("--write_iolog={}", out.display()),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(want), "{name}: {err}");
        assert!(err.contains("option 'read_iolog'"), "{err}");
        assert!(!out.exists(), "{name}: nothing written");
    }
}
