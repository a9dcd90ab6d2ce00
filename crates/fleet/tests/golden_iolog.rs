//! Golden bytes of the jobs' logs (IOLOG): a real fio 3.33 server and
//! client on loopback, the job `fio-3.33-logs.fio` (null engine, 64 random
//! 4 KiB reads, `write_lat_log`, `write_bw_log`, `write_iops_log`), captured
//! by a relay twice: as fio's client asked (zlib agreed at PROBE:
//! `fio-3.33-iolog-zlib.bin`), and with the relay clearing the client's
//! zlib flag (`fio-3.33-iolog-plain.bin`). Each file holds the server's
//! PROBE reply and its IOLOG messages as they came off the wire; the
//! directories beside them hold the log files fio's client wrote from them
//! (`NAME.127.0.0.1`).

use ssdready_fleet::iolog::{IoLog, XMIT_COMPRESSED};
use ssdready_fleet::pdu::{ProbeReply, PROBE_ZLIB};
use ssdready_fleet::wire::{self, op, Message};

fn fixture(name: &str) -> Vec<u8> {
    let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// The messages of a capture, each with its bytes as on the wire.
fn messages(name: &str) -> Vec<(Message, Vec<u8>)> {
    let bytes = fixture(name);
    let msgs = wire::split(&bytes, &[97]).unwrap();
    // Cut the stream at message ends to keep each message's own bytes.
    let mut out = Vec::new();
    let mut rest = &bytes[..];
    for m in msgs {
        let mut len = 0;
        loop {
            let h: &[u8; 24] = rest[len..len + 24].try_into().unwrap();
            let f = wire::parse_header(h, &[97]).unwrap();
            len += 24 + f.len;
            if f.flags & wire::F_MORE == 0 {
                break;
            }
        }
        out.push((m, rest[..len].to_vec()));
        rest = &rest[len..];
    }
    out
}

fn fio_client_log(dir: &str, name: &str) -> String {
    String::from_utf8(fixture(&format!("{dir}/{name}.127.0.0.1"))).unwrap()
}

const NAMES: [&str; 5] = [
    "lg_bw.1.log",
    "lg_lat.1.log",
    "lg_slat.1.log",
    "lg_clat.1.log",
    "lg_iops.1.log",
];

#[test]
fn plain_logs_re_encode_to_fios_bytes_and_fios_text() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let msgs = messages("fio-3.33-iolog-plain.bin");
    let logs = &msgs[1..];
    assert_eq!(logs.len(), 5);
    for ((m, wire_bytes), name) in logs.iter().zip(NAMES) {
        assert_eq!(m.opcode, op::IOLOG);
        let l = IoLog::parse(97, &m.payload).unwrap();
        assert_eq!(l.name, name);
        assert_eq!(l.compressed, 0);
        assert_eq!(l.thread_number, 1);
        // fio 3.33 sends its three latency logs as type 1 (lat).
        let want_type = match name {
            "lg_bw.1.log" => 4,
            "lg_iops.1.log" => 5,
            _ => 1,
        };
        assert_eq!(l.log_type, want_type, "{name}");
        let n = if name.contains("slat") { 0 } else { 64 };
        assert_eq!(l.nr_samples, n, "{name}");
        // Header in a fragment of its own, samples in 1 KiB fragments:
        // byte for byte what fio's server sent.
        assert!(
            l.encode(97, m.tag).unwrap() == *wire_bytes,
            "{name} re-encodes to other bytes"
        );
        assert_eq!(
            l.text(97).unwrap(),
            fio_client_log("fio-3.33-logs-plain", name),
            "{name}"
        );
    }
}

#[test]
fn compressed_logs_inflate_to_what_fios_client_wrote() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let msgs = messages("fio-3.33-iolog-zlib.bin");
    let probe = ProbeReply::parse(&msgs[0].0.payload).unwrap();
    assert_eq!(probe.flags, PROBE_ZLIB, "fio's server agreed to zlib");
    let logs = &msgs[1..];
    assert_eq!(logs.len(), 5);
    for ((m, wire_bytes), name) in logs.iter().zip(NAMES) {
        let l = IoLog::parse(97, &m.payload).unwrap();
        assert_eq!((l.name.as_str(), l.compressed), (name, XMIT_COMPRESSED));
        assert_eq!(l.data.len() as u64, l.nr_samples * 32, "{name}");
        // The header goes uncompressed, in its own fragment, as ours.
        let head = l.header(97).unwrap();
        assert_eq!(&wire_bytes[24..24 + 288], &head[..], "{name}");
        assert_eq!(
            u32::from_le_bytes(wire_bytes[16..20].try_into().unwrap()),
            288
        );
        assert_eq!(
            l.text(97).unwrap(),
            fio_client_log("fio-3.33-logs-zlib", name),
            "{name}"
        );
        // Ours (a finished zlib stream) comes back to the same samples.
        let ours = l.encode(97, 0).unwrap();
        let back = wire::split(&ours, &[97]).unwrap();
        assert!(IoLog::parse(97, &back[0].payload).unwrap() == l, "{name}");
    }
}

#[test]
fn a_corrupted_compressed_log_is_named_not_a_panic() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let msgs = messages("fio-3.33-iolog-zlib.bin");
    let mut payload = msgs[1].0.payload.clone();
    // The zlib header's check bits broken.
    payload[289] ^= 0xFF;
    let e = IoLog::parse(97, &payload).unwrap_err().to_string();
    assert!(e.contains("lg_bw.1.log"), "{e}");
    // Cut short inside its header.
    assert!(IoLog::parse(97, &payload[..100]).is_err());
}
