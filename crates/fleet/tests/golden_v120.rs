//! Golden bytes of protocol version 120 (fio 3.42, the latest release): a
//! fio 3.42 built from its release tag, server and client on loopback
//! through a relay, the job `fio-3.33-logs.fio` (null engine, 64 random 4
//! KiB reads, lat, bw and iops logs), `--output-format=json+`.
//! `fio-3.42-server-to-client.bin.gz` is the server's stream without its
//! ETA messages, `fio-3.42-client.json.gz` what that client printed,
//! `fio-3.42-iolog-{zlib,plain}.bin` the PROBE reply and IOLOG messages
//! with zlib agreed and with the relay clearing the client's zlib flag,
//! and `fio-3.42-logs-*/` the log files fio 3.42's client wrote.

use flate2::read::GzDecoder;
use serde_json::Value;
use ssdready_fleet::iolog::{IoLog, XMIT_COMPRESSED};
use ssdready_fleet::merge::{self, bin_value, DEFAULT_PERCENTILES};
use ssdready_fleet::pdu::{self, ProbeReply, PROBE_ZLIB};
use ssdready_fleet::tstat::{GroupStats, LatKind, TsPdu};
use ssdready_fleet::wire::{self, op, Message};
use std::io::Read;

fn fixture(name: &str) -> Vec<u8> {
    let p = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let raw = std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    if name.ends_with(".gz") {
        let mut out = Vec::new();
        GzDecoder::new(&raw[..]).read_to_end(&mut out).unwrap();
        out
    } else {
        raw
    }
}

/// The messages of a capture, each with its own bytes as on the wire.
fn messages(name: &str) -> Vec<(Message, Vec<u8>)> {
    let bytes = fixture(name);
    let msgs = wire::split(&bytes, &[120]).unwrap();
    let mut out = Vec::new();
    let mut rest = &bytes[..];
    for m in msgs {
        let mut len = 0;
        loop {
            let h: &[u8; 24] = rest[len..len + 24].try_into().unwrap();
            let f = wire::parse_header(h, &[120]).unwrap();
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

#[test]
fn the_results_re_encode_and_match_fio_3_42s_own_json() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let msgs = messages("fio-3.42-server-to-client.bin.gz");
    // (IOLOG: its header in a fragment of its own; checked below.)
    for (m, bytes) in msgs.iter().filter(|(m, _)| m.opcode != op::IOLOG) {
        assert!(
            wire::encode(m.version, m.opcode, m.tag, &m.payload) == *bytes,
            "{} re-encodes to other bytes",
            op::name(m.opcode)
        );
    }
    let p = ProbeReply::parse(&msgs[0].0.payload).unwrap();
    assert_eq!(p.fio_version, "fio-3.42");
    assert_eq!(p.flags, PROBE_ZLIB);
    let ts: Vec<TsPdu> = msgs
        .iter()
        .filter(|(m, _)| m.opcode == op::TS)
        .map(|(m, _)| {
            assert_eq!(m.payload.len(), 184_072, "version 120's TS size");
            let t = TsPdu::parse(120, &m.payload).unwrap();
            assert!(t.bytes() == m.payload, "TS re-encodes byte for byte");
            t
        })
        .collect();
    assert_eq!(ts.len(), 1);
    let t = &ts[0];
    assert_eq!(t.ts.text("name"), "lg");
    assert_eq!(t.ts.get("total_io_u", 0), 64);
    assert_eq!(t.ts.get("io_bytes", 0), 256 << 10);
    let gs = msgs.iter().find(|(m, _)| m.opcode == op::GS).unwrap();
    let g = GroupStats::parse(&gs.0.payload).unwrap();
    assert_eq!(g.bytes(), gs.0.payload);
    let stop = msgs.iter().find(|(m, _)| m.opcode == op::STOP).unwrap();
    assert_eq!(pdu::parse_stop(&stop.0.payload).unwrap(), (0, 0));

    let json: Value = serde_json::from_slice(&fixture("fio-3.42-client.json.gz")).unwrap();
    let j = &json["client_stats"][0];
    assert_eq!(j["jobname"], "lg");
    let c = &j["read"]["clat_ns"];
    let clat = t.ts.io_stat("clat_stat", 0);
    let bins = t.ts.plat(LatKind::Clat, 0);
    assert_eq!(c["N"].as_u64().unwrap(), clat.samples);
    assert_eq!(c["min"].as_u64().unwrap(), clat.min);
    assert_eq!(c["max"].as_u64().unwrap(), clat.max);
    assert!((c["mean"].as_f64().unwrap() - clat.mean).abs() < 1e-5);
    assert!((c["stddev"].as_f64().unwrap() - clat.stddev()).abs() < 1e-5);
    assert_eq!(bins.iter().sum::<u64>(), 64);
    for (p, v) in merge::percentiles(&bins, &DEFAULT_PERCENTILES) {
        assert_eq!(
            c["percentile"][format!("{p:.6}")].as_u64().unwrap(),
            v,
            "p{p}"
        );
    }
    let fio_bins = c["bins"].as_object().unwrap();
    let ours: Vec<(String, u64)> = bins
        .iter()
        .enumerate()
        .filter(|(_, &n)| n > 0)
        .map(|(i, &n)| (bin_value(i).to_string(), n))
        .collect();
    assert_eq!(ours.len(), fio_bins.len());
    for (k, n) in ours {
        assert_eq!(fio_bins[&k].as_u64().unwrap(), n, "bin {k}");
    }
    assert_eq!(
        j["read"]["runtime"].as_u64().unwrap(),
        t.ts.get("runtime", 0)
    );
}

const NAMES: [&str; 5] = [
    "lg_bw.1.log",
    "lg_lat.1.log",
    "lg_slat.1.log",
    "lg_clat.1.log",
    "lg_iops.1.log",
];

fn fio_client_log(dir: &str, name: &str) -> String {
    String::from_utf8(fixture(&format!("{dir}/{name}.127.0.0.1"))).unwrap()
}

#[test]
fn version_120_logs_are_fio_3_42s_bytes_and_text() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let plain = messages("fio-3.42-iolog-plain.bin");
    let zlib = messages("fio-3.42-iolog-zlib.bin");
    assert_eq!((plain.len(), zlib.len()), (6, 6));
    for (((m, bytes), (mz, bz)), name) in plain[1..].iter().zip(&zlib[1..]).zip(NAMES) {
        let l = IoLog::parse(120, &m.payload).unwrap();
        assert_eq!((l.name.as_str(), l.compressed), (name, 0));
        assert_eq!(l.per_job_logs, 1);
        // 40-byte samples in version 120.
        assert_eq!(l.data.len() as u64, l.nr_samples * 40, "{name}");
        assert!(
            l.encode(120, m.tag).unwrap() == *bytes,
            "{name}: other bytes"
        );
        assert_eq!(
            l.text(120).unwrap(),
            fio_client_log("fio-3.42-logs-plain", name),
            "{name}"
        );
        let z = IoLog::parse(120, &mz.payload).unwrap();
        assert_eq!(z.compressed, XMIT_COMPRESSED);
        assert_eq!(&bz[24..24 + 296], &z.header(120).unwrap()[..], "{name}");
        assert_eq!(
            z.text(120).unwrap(),
            fio_client_log("fio-3.42-logs-zlib", name),
            "{name}"
        );
    }
}
