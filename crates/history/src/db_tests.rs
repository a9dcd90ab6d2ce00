//! The database: record and list with filters, migrate an old file, refuse
//! a newer or foreign one.

use super::*;

fn entry(kind: Kind, unix_ms: i64, target: &str, iops: f64) -> NewEntry {
    NewEntry {
        kind,
        unix_ms,
        target: target.into(),
        command: format!("ssdready {} {target}", kind.as_str()),
        workload: "randread bs=4096 iodepth=1".into(),
        platform: Fingerprint {
            kernel: "6.1.0".into(),
            cpu_model: "Xeon".into(),
            cpus: 2,
            vm: Some(true),
        },
        key: KeyFigures {
            iops: Some(iops),
            lat_mean_ns: Some(60_000.0),
            knee_qd: (kind == Kind::Study).then_some(128),
            ..KeyFigures::default()
        },
        figures: [("peak.iops".to_string(), iops)].into(),
        json_path: None,
        interrupted: false,
    }
}

const DAY: i64 = 86_400_000;

#[test]
fn rows_come_back_newest_first_and_filters_combine() {
    let d = tempfile::tempdir().unwrap();
    let mut h = History::open(&d.path().join("h.db")).unwrap();
    assert_eq!(h.opened_at_version, 0, "a new file");
    let a = h
        .insert(&entry(Kind::Study, 10 * DAY, "emu:nvme-tlc", 1.0))
        .unwrap();
    let b = h
        .insert(&entry(Kind::Run, 12 * DAY, "emu:x25e", 2.0))
        .unwrap();
    let c = h
        .insert(&entry(Kind::Run, 11 * DAY, "emu:nvme-tlc,fw_cmd_ns=1", 3.0))
        .unwrap();
    let ids = |f: Filter| h.list(&f).unwrap().iter().map(|e| e.id).collect::<Vec<_>>();
    assert_eq!(ids(Filter::default()), [b, c, a]);
    let nvme = || Filter {
        target: Some("nvme-tlc".into()),
        ..Filter::default()
    };
    assert_eq!(ids(nvme()), [c, a]);
    assert_eq!(
        ids(Filter {
            kind: Some(Kind::Run),
            ..nvme()
        }),
        [c]
    );
    assert_eq!(
        ids(Filter {
            since_ms: Some(11 * DAY),
            ..Filter::default()
        }),
        [b, c]
    );
    assert_eq!(
        ids(Filter {
            until_ms: Some(11 * DAY),
            ..Filter::default()
        }),
        [c, a]
    );
    let e = h.get(a).unwrap().unwrap();
    assert_eq!(e.kind, Kind::Study);
    assert_eq!(e.key.knee_qd, Some(128));
    assert_eq!(e.vm, Some(true));
    assert_eq!(e.figures["peak.iops"], 1.0);
    assert_eq!(e.time, "1970-01-11T00:00:00Z");
    assert!(h.get(999).unwrap().is_none());
}

#[test]
fn a_failed_result_file_records_nothing() {
    let d = tempfile::tempdir().unwrap();
    let mut h = History::open(&d.path().join("h.db")).unwrap();
    let e = h
        .insert_with_result(&entry(Kind::Run, 0, "f", 1.0), |_| Err("disk full".into()))
        .unwrap_err();
    assert!(e.to_string().contains("disk full"), "{e}");
    assert!(h.list(&Filter::default()).unwrap().is_empty());
    let (id, p) = h
        .insert_with_result(&entry(Kind::Run, 0, "f", 1.0), |id| {
            Ok(PathBuf::from(format!("r/{id}.json")))
        })
        .unwrap();
    assert_eq!(h.get(id).unwrap().unwrap().json_path, Some(p));
}

/// The first schema, as version 1 of ssdready wrote it.
const V1: &str = "CREATE TABLE entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('study', 'run')),
    unix_ms INTEGER NOT NULL, target TEXT NOT NULL, command TEXT NOT NULL,
    iops REAL, lat_mean_ns REAL, lat_p99_ns REAL, json_path TEXT);
  INSERT INTO entries (kind, unix_ms, target, command, iops, lat_mean_ns, lat_p99_ns, json_path)
    VALUES ('study', 1000, 'emu:x25e', 'ssdready study emu:x25e', 35000.5, 28000, 41000, '/r/study.json');
  PRAGMA user_version = 1;";

#[test]
fn a_version_1_database_is_migrated_and_keeps_its_rows() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("old.db");
    Connection::open(&p).unwrap().execute_batch(V1).unwrap();
    let mut h = History::open(&p).unwrap();
    assert_eq!(h.opened_at_version, 1);
    let old = &h.list(&Filter::default()).unwrap()[0];
    assert_eq!(
        (old.id, old.target.as_str(), old.key.iops),
        (1, "emu:x25e", Some(35000.5))
    );
    assert_eq!(old.json_path, Some(PathBuf::from("/r/study.json")));
    assert_eq!(
        (old.kernel.clone(), old.cpus, old.workload.as_str()),
        (None, None, "")
    );
    assert!(old.figures.is_empty());
    let new = h.insert(&entry(Kind::Run, 2000, "f", 1.0)).unwrap();
    assert_eq!(new, 2);
    let v: u32 = Connection::open(&p)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, schema::CURRENT_VERSION);
}

#[test]
fn a_newer_database_is_refused_untouched() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("new.db");
    let next = schema::CURRENT_VERSION + 1;
    Connection::open(&p)
        .unwrap()
        .execute_batch(&format!(
            "CREATE TABLE entries (id INTEGER); PRAGMA user_version = {next};"
        ))
        .unwrap();
    let e = History::open(&p).err().expect("refused");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "schema version {next}, newer than this ssdready's"
        )),
        "{msg}"
    );
    let v: u32 = Connection::open(&p)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, next, "left as it was");
}

#[test]
fn a_file_that_is_not_a_database_says_so() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("notes.txt");
    std::fs::write(&p, "x".repeat(4096)).unwrap();
    let e = History::open(&p).err().expect("refused").to_string();
    assert!(e.contains("is not an SQLite database"), "{e}");
    assert!(History::open_existing(&d.path().join("none.db"))
        .unwrap()
        .is_none());
    assert!(!d.path().join("none.db").exists(), "nothing created");
    let e = History::open(&d.path().join("no/dir/h.db"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("no/dir"), "{e}");
}
