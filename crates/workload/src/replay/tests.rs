use super::blktrace::{detect, merge, BlkTrace, Record, MAGIC, VERSION};
use super::cursor::{from_vec, Next, Replay};
use super::record::Recorder;
use super::text::TextLog;
use super::*;
use crate::jobflow::{FlowIo, Tag};

fn entries(text: &str) -> Vec<Entry> {
    TextLog::open(text.as_bytes(), "t.log")
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn version_2_and_3_lines_read_as_fio_reads_them() {
    let v3 = entries(
        "fio version 3 iolog\n5 /f add\n7 /f open\n9 /f write 4096 512\n\n12 /f datasync 0 0\n",
    );
    assert_eq!(v3.len(), 4);
    assert_eq!(v3[2].time_ns, Some(9_000));
    assert_eq!(
        v3[2].action,
        Action::Io {
            ddir: Ddir::Write,
            offset: 4096,
            len: 512
        }
    );
    assert_eq!(v3[3].action, Action::Sync { data_only: true });
    let v2 = entries("fio version 2 iolog\n/f add\n/f trim 0 4096\n/f wait 30 0\n");
    assert_eq!(v2[1].time_ns, None);
    assert_eq!(v2[2].action, Action::WaitUntilMs(30));
}

#[test]
fn a_bad_line_names_its_line() {
    let mut log = TextLog::open(
        &b"fio version 3 iolog\n1 /f read 0 4096\n2 /f read 0\n"[..],
        "t.log",
    )
    .unwrap();
    assert!(log.next().unwrap().is_ok());
    let e = log.next().unwrap().unwrap_err();
    assert_eq!(e.what, "t.log line 3");
    assert!(e.why.contains("'read' with 3 fields"), "{}", e.why);
    assert!(log.next().is_none(), "nothing after an error");
    let zero = TextLog::open(&b"fio version 2 iolog\n/f read 0 0\n"[..], "z")
        .unwrap()
        .next()
        .unwrap();
    assert!(zero.is_err(), "a request of 0 bytes");
    assert!(
        TextLog::open(&b"/f read 0 4096\n"[..], "v1").is_err(),
        "version 1"
    );
}

#[test]
fn blktrace_records_round_trip_and_are_detected_in_either_order() {
    let r = Record {
        magic: MAGIC | VERSION,
        time: 7,
        sector: 3,
        bytes: 4096,
        action: (1 << 16) | 1,
        device: 8 << 20,
        ..Record::default()
    };
    let b = r.encode();
    assert_eq!(detect(&b), Some(false));
    assert_eq!(Record::decode(&b, false), r);
    let mut be = b;
    for f in [
        0..4,
        4..8,
        8..16,
        16..24,
        24..28,
        28..32,
        32..36,
        36..40,
        40..44,
        44..46,
        46..48,
    ] {
        be[f].reverse();
    }
    assert_eq!(detect(&be), Some(true));
    assert_eq!(Record::decode(&be, true), r);
    let got: Vec<Entry> = BlkTrace::new(&b[..], "b", false)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(got[0].file.major_minor(), Some((8, 0)));
    assert_eq!(
        got[0].action,
        Action::Io {
            ddir: Ddir::Read,
            offset: 1536,
            len: 4096
        }
    );
    assert_eq!(
        detect(b"fio version 3 iolog\n0123456789012345678901234567"),
        None
    );
}

#[test]
fn merge_refuses_a_list_of_the_wrong_length() {
    let b = Record {
        magic: MAGIC | VERSION,
        ..Record::default()
    }
    .encode()
    .to_vec();
    let inputs = vec![("a".to_string(), b.clone()), ("b".to_string(), b)];
    let e = merge(&inputs, &[50.0], &[]).unwrap_err();
    assert!(e.to_string().contains("1 values for 2 traces"), "{e}");
}

fn read(offset: u64) -> Entry {
    Entry {
        time_ns: Some(offset * 1_000),
        file: FileKey::Name("/f".into()),
        action: Action::Io {
            ddir: Ddir::Read,
            offset,
            len: 512,
        },
    }
}

#[test]
fn the_cursor_waits_the_traces_gaps_scaled() {
    let trace = vec![read(0), read(1000), read(3000)];
    let mut spec = IologSpec {
        time_scale: 200,
        ..IologSpec::default()
    };
    let files = [FileKey::Name("/f".into())];
    let mut r = Replay::new(from_vec(trace.clone()), &spec, &files);
    assert!(matches!(r.next(10, 0), Next::Io(_)));
    // 1 ms in the trace, at twice the rate: 0.5 ms after the last issue.
    assert_eq!(r.next(10, 0), Next::Sleep(500_000));
    assert_eq!(r.next(10, 1), Next::Drain);
    assert!(matches!(r.next(500_010, 0), Next::Io(_)));
    assert_eq!(r.next(600_010, 0), Next::Sleep(900_000));
    spec.no_stall = true;
    let mut r = Replay::new(from_vec(trace), &spec, &files);
    for _ in 0..3 {
        assert!(matches!(r.next(0, 0), Next::Io(_)));
    }
    assert_eq!(r.next(0, 0), Next::Done);
}

#[test]
fn summary_sets_the_jobs_options_from_the_trace() {
    let mut s = Summary::default();
    for e in entries("fio version 3 iolog\n0 /a add\n1 /a read 0 4096\n2 /a write 65536 16384\n3 /b read 8192 8192\n") {
        s.add(&e);
    }
    let mut spec = ssdready_core::spec::JobSpec {
        filename: vec!["/a".into(), "/b".into()],
        ..Default::default()
    };
    s.apply(&mut spec);
    assert_eq!(spec.rw, RwMode::ReadWrite);
    assert_eq!(spec.bs.for_dir(0).max(), 8192);
    assert_eq!(spec.bs.for_dir(1).max(), 16384);
    assert_eq!(spec.size, Some(2 * 81920));
    assert_eq!(s.files.len(), 2);
    let skip = IologSpec {
        skip: Skip::parse("read").unwrap(),
        scale: 2,
        align: 4096,
        ..IologSpec::default()
    };
    assert_eq!(adjust(&skip, read(8192)), None);
    let w = entries("fio version 3 iolog\n1 /a write 12288 4096\n").remove(0);
    match adjust(&skip, w).unwrap().action {
        Action::Io { offset, .. } => assert_eq!(offset, 4096),
        a => panic!("{a:?}"),
    }
}

#[test]
fn recorded_lines_are_fios_version_3() {
    let mut r = Recorder::new(vec!["/f".into()]);
    r.issued(
        1_000_000,
        &FlowIo::Rw {
            file: 0,
            ddir: Ddir::Write,
            offset: 4096,
            len: 512,
            tag: Tag::Plain,
        },
    );
    r.issued(
        3_500_000,
        &FlowIo::Sync {
            file: 0,
            data_only: false,
        },
    );
    let text = r.finish(Some(4_000_000));
    assert_eq!(
        text,
        "fio version 3 iolog\n0 /f add\n0 /f open\n0 /f write 4096 512\n2500 /f sync 4608 0\n3000 /f close\n"
    );
    // And it reads back.
    assert_eq!(entries(&text).len(), 5);
}
