//! Golden bytes: a real fio 3.33 client and server talking on loopback,
//! captured by a relay (`fio --server=ip:127.0.0.1,PORT`, then
//! `fio --client=ip:127.0.0.1,RELAY fio-3.33-capture.fio --output-format=json+`;
//! `fio-3.33-client.json.gz` is what that client printed). Every message is
//! split, decoded and encoded again byte for byte, and what is decoded is
//! checked against what fio itself printed from the same bytes.

use flate2::read::GzDecoder;
use serde_json::Value;
use ssdready_fleet::merge::{self, bin_value, DEFAULT_PERCENTILES};
use ssdready_fleet::pdu::{self, ProbeReply};
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

fn to_server() -> (Vec<u8>, Vec<Message>) {
    let b = fixture("fio-3.33-client-to-server.bin");
    let m = wire::split(&b, &[97]).unwrap();
    (b, m)
}

fn to_client() -> (Vec<u8>, Vec<Message>) {
    let b = fixture("fio-3.33-server-to-client.bin.gz");
    let m = wire::split(&b, &[97]).unwrap();
    (b, m)
}

fn fio_json() -> Value {
    serde_json::from_slice(&fixture("fio-3.33-client.json.gz")).unwrap()
}

#[test]
fn every_message_re_encodes_to_fios_bytes() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (bytes, msgs) in [to_server(), to_client()] {
        let again: Vec<u8> = msgs
            .iter()
            .flat_map(|m| wire::encode(m.version, m.opcode, m.tag, &m.payload))
            .collect();
        assert_eq!(again.len(), bytes.len());
        assert!(again == bytes, "re-encoded stream differs");
    }
}

#[test]
fn the_client_side_sequence_and_payloads() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (_, m) = to_server();
    let ops: Vec<u16> = m.iter().map(|m| m.opcode).collect();
    assert_eq!(ops, [op::PROBE, op::JOBLINE, op::JOB, op::RUN]);
    assert_eq!(
        pdu::client_probe_flags(&m[0].payload).unwrap(),
        pdu::PROBE_ZLIB
    );
    assert_eq!(m[0].payload, pdu::client_probe(1, "127.0.0.1"));
    let args = pdu::jobline_args(&m[1].payload).unwrap();
    assert_eq!(args, ["fio", "--output-format=json+"]);
    assert_eq!(m[1].payload, pdu::jobline(&args));
    let job = pdu::job_text(&m[2].payload).unwrap();
    let file = String::from_utf8(fixture("fio-3.33-capture.fio")).unwrap();
    assert_eq!(job, file);
}

#[test]
fn the_server_side_sequence_and_small_structures() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (_, m) = to_client();
    let ops: Vec<&str> = m.iter().map(|m| op::name(m.opcode)).collect();
    assert_eq!(
        ops,
        [
            "PROBE",
            "START",
            "START",
            "SERVER_START",
            "SERVER_START",
            "JOB_OPT",
            "JOB_OPT",
            "JOB_OPT",
            "JOB_OPT",
            "TS",
            "JOB_OPT",
            "TS",
            "GS",
            "STOP",
            "QUIT"
        ]
    );
    let p = ProbeReply::parse(&m[0].payload).unwrap();
    assert_eq!(p.fio_version, "fio-3.33");
    // Linux (os 1) on x86-64 (arch 1), 64-bit: what ssdready server sends too.
    assert_eq!((p.os, p.arch, p.bpp, p.bigendian), (1, 1, 8, 0));
    assert_eq!(p.bytes(), m[0].payload);
    assert_eq!(pdu::parse_start(&m[1].payload).unwrap(), (0, 0));
    assert_eq!(pdu::parse_start(&m[2].payload).unwrap(), (2, 2));
    assert_eq!(m[2].payload, pdu::start(2, 2));
    assert_eq!(m[5].payload, pdu::job_opt(true, 0, "ioengine", "null"));
    assert_eq!(m[8].payload, pdu::job_opt(false, 0, "rw", "randread"));
    let gs = GroupStats::parse(&m[12].payload).unwrap();
    assert_eq!(gs.bytes(), m[12].payload);
    assert_eq!(gs.iobytes[..2], [4 << 20, 4 << 20]);
    assert_eq!(pdu::parse_stop(&m[13].payload).unwrap(), (0, 0));
    assert!(m[14].payload.is_empty());
}

#[test]
fn thread_stat_round_trips_and_matches_fios_own_json() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (_, m) = to_client();
    let json = fio_json();
    let ts: Vec<TsPdu> = m
        .iter()
        .filter(|m| m.opcode == op::TS)
        .map(|m| {
            let t = TsPdu::parse(97, &m.payload).unwrap();
            assert_eq!(t.bytes(), m.payload, "TS re-encodes byte for byte");
            t
        })
        .collect();
    for (t, (name, dir)) in ts.iter().zip([("r", 0usize), ("w", 1)]) {
        assert_eq!(t.ts.text("name"), name);
        assert_eq!(t.ts.get("total_io_u", dir), 1024, "4 MiB in 4 KiB blocks");
        assert_eq!(t.ts.get("io_bytes", dir), 4 << 20);
        let bins = t.ts.plat(LatKind::Clat, dir);
        let clat = t.ts.io_stat("clat_stat", dir);
        assert_eq!(bins.iter().sum::<u64>(), clat.samples);
        // fio printed these from the same bytes.
        let j = json["client_stats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["jobname"] == name)
            .unwrap();
        let dname = ["read", "write"][dir];
        let c = &j[dname]["clat_ns"];
        assert_eq!(c["N"].as_u64().unwrap(), clat.samples);
        assert_eq!(c["min"].as_u64().unwrap(), clat.min);
        assert_eq!(c["max"].as_u64().unwrap(), clat.max);
        assert!((c["mean"].as_f64().unwrap() - clat.mean).abs() < 1e-5);
        assert!((c["stddev"].as_f64().unwrap() - clat.stddev()).abs() < 1e-5);
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
            j[dname]["runtime"].as_u64().unwrap(),
            t.ts.get("runtime", dir)
        );
        assert_eq!(j["groupid"].as_u64().unwrap(), t.ts.get("groupid", 0));
    }
}

#[test]
fn the_version_120_layout_round_trips() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let (_, m) = to_client();
    let t97 = TsPdu::parse(97, &m[9].payload).unwrap();
    let mut t = ssdready_fleet::tstat::ThreadStat::new(120).unwrap();
    t.set_text("name", &t97.ts.text("name"));
    t.set("total_io_u", 0, 1024);
    t.set_io_stat("clat_stat", 0, &t97.ts.io_stat("clat_stat", 0));
    t.set_plat(LatKind::Clat, 0, &t97.ts.plat(LatKind::Clat, 0));
    t.set("nr_zone_resets", 0, 7);
    t.set("cachemiss", 0, 9);
    let pdu = TsPdu {
        ts: t,
        gs: t97.gs.clone(),
    };
    let b = pdu.bytes();
    assert_eq!(b.len(), 184_072);
    let back = TsPdu::parse(120, &b).unwrap();
    assert_eq!(
        back.ts.plat(LatKind::Clat, 0),
        t97.ts.plat(LatKind::Clat, 0)
    );
    assert_eq!(back.ts.get("nr_zone_resets", 0), 7);
    assert_eq!(back.ts.get("cachemiss", 0), 9);
    assert_eq!(back.gs, t97.gs);
    // A version-97 reader does not take a version-120 message for its own.
    assert_ne!(TsPdu::parse(97, &b).unwrap().ts.get("cachemiss", 0), 9);
}
