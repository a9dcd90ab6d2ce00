//! The history database and comparisons end to end: `run --save` and
//! `history` with filters, migrating an old database, refusing a newer one,
//! `compare` (identical results, a slower emulated drive, incomparable
//! workloads, bad names) and `--baseline`'s exit code 3. Every test keeps
//! its database in a temporary directory (`--db`, and XDG_DATA_HOME
//! pointed there too).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The output of one command: exit code, stdout, stderr.
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn ssdready(home: &Path, args: &[&str]) -> Out {
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .env("XDG_DATA_HOME", home)
        .output()
        .expect("run ssdready");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Tests whose verdicts rest on real-time measurements run one at a time
/// (in parallel they would measure each other).
static MEASURING: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Db {
    dir: tempfile::TempDir,
    db: PathBuf,
}

impl Db {
    fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("h.db");
        Db { dir, db }
    }
    fn db_arg(&self) -> String {
        format!("--db={}", self.db.display())
    }
    /// `ssdready VERB ARGS… --db=…` (the run's options take `--db=PATH`,
    /// the subcommands' take it too).
    fn run(&self, args: &[&str]) -> Out {
        let db = self.db_arg();
        let mut a = args.to_vec();
        a.push(&db);
        ssdready(self.dir.path(), &a)
    }
    fn history_json(&self, filters: &[&str]) -> Vec<Value> {
        let mut a = vec!["history", "--json"];
        a.extend_from_slice(filters);
        let o = self.run(&a);
        assert_eq!(o.code, 0, "{}", o.stderr);
        serde_json::from_str::<Value>(&o.stdout)
            .unwrap()
            .as_array()
            .unwrap()
            .clone()
    }
}

/// A run of 4 KiB random reads at QD 1 for `secs` seconds on `target`.
fn read_job(target: &str, secs: &str) -> Vec<String> {
    [
        "--name=t",
        &format!("--filename={target}"),
        "--rw=randread",
        "--bs=4k",
        "--iodepth=1",
        &format!("--runtime={secs}"),
        "--time_based",
        "--quiet",
    ]
    .map(String::from)
    .to_vec()
}

fn with<'a>(head: &[&'a str], job: &'a [String], tail: &[&'a str]) -> Vec<&'a str> {
    let mut v = head.to_vec();
    v.extend(job.iter().map(String::as_str));
    v.extend_from_slice(tail);
    v
}

fn ids(entries: &[Value]) -> Vec<i64> {
    entries.iter().map(|e| e["id"].as_i64().unwrap()).collect()
}

#[test]
fn saved_runs_are_listed_newest_first_and_filtered() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let h = Db::new();
    let x25e = read_job("emu:x25e", "1");
    // Bad input leaves nothing behind, not even an empty database.
    let o = h.run(&with(&["run"], &x25e, &["--save", "--iodepth=zero"]));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(!h.db.exists(), "no database made for a run that never ran");
    let nowhere = h.dir.path().join("no/such/dir/h.db");
    let o = ssdready(
        h.dir.path(),
        &with(
            &["run"],
            &x25e,
            &["--save", &format!("--db={}", nowhere.display())],
        ),
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stdout.is_empty() && o.stderr.contains("option '--save'"),
        "{}",
        o.stderr
    );
    let o = h.run(&with(&["run"], &x25e, &["--save"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let sim = read_job("emu:nvme-tlc", "2");
    let o = h.run(&with(&["emu", "simulate"], &sim, &["--save"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let all = h.history_json(&[]);
    assert_eq!(ids(&all), [2, 1], "newest first");
    let run = &all[1];
    assert_eq!(run["kind"], "run");
    assert_eq!(run["target"], "emu:x25e");
    assert!(run["iops"].as_f64().unwrap() > 1000.0, "{run}");
    assert!(run["cpus"].as_u64().unwrap() >= 1 && !run["kernel"].as_str().unwrap().is_empty());
    assert!(run["command"].as_str().unwrap().contains("--save"));
    assert!(run["workload"].as_str().unwrap().contains("randread"));
    // The full result is kept beside the database, as native JSON.
    let saved = PathBuf::from(run["json_path"].as_str().unwrap());
    assert_eq!(
        saved,
        h.dir
            .path()
            .join("h-results/1.json")
            .canonicalize()
            .unwrap()
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&saved).unwrap()).unwrap();
    assert_eq!(doc["schema"], "ssdready.run");
    assert_eq!(ids(&h.history_json(&["--target", "x25e"])), [1]);
    assert_eq!(
        ids(&h.history_json(&["--kind", "run", "--since", "2000-01-01"])),
        [2, 1]
    );
    assert!(h.history_json(&["--kind", "study"]).is_empty());
    assert!(h.history_json(&["--until", "2000-01-01"]).is_empty());
    let table = h.run(&["history"]);
    assert_eq!(table.code, 0);
    let lines: Vec<&str> = table.stdout.lines().collect();
    assert!(
        lines[0].contains("IOPS") && lines[1].trim_start().starts_with("2 "),
        "{}",
        table.stdout
    );
    let bad = h.run(&["history", "--since", "last tuesday"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("option '--since'") && bad.stderr.lines().count() == 1,
        "{}",
        bad.stderr
    );
}

/// The first schema, as version 1 of the database was written.
const V1: &str = "CREATE TABLE entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('study', 'run')),
    unix_ms INTEGER NOT NULL, target TEXT NOT NULL, command TEXT NOT NULL,
    iops REAL, lat_mean_ns REAL, lat_p99_ns REAL, json_path TEXT);
  INSERT INTO entries (kind, unix_ms, target, command, iops, lat_mean_ns, lat_p99_ns, json_path)
    VALUES ('study', 1700000000000, 'emu:x25e', 'ssdready study emu:x25e', 35714, 28000, 41000, NULL);
  PRAGMA user_version = 1;";

fn user_version(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

#[test]
fn a_version_1_database_is_migrated_and_keeps_its_entries() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let h = Db::new();
    rusqlite::Connection::open(&h.db)
        .unwrap()
        .execute_batch(V1)
        .unwrap();
    let old = h.history_json(&[]);
    assert_eq!(old.len(), 1);
    assert_eq!(old[0]["target"], "emu:x25e");
    assert_eq!(old[0]["iops"], 35714.0);
    assert_eq!(old[0]["time"], "2023-11-14T22:13:20Z");
    assert!(old[0]["kernel"].is_null(), "a column version 1 lacked");
    assert!(user_version(&h.db) >= 2, "migrated");
    let job = read_job("emu:nvme-tlc", "1");
    let o = h.run(&with(&["emu", "simulate"], &job, &["--save"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(ids(&h.history_json(&[])), [2, 1]);
}

#[test]
fn a_database_from_a_newer_ssdready_is_refused_before_anything_runs() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let h = Db::new();
    rusqlite::Connection::open(&h.db)
        .unwrap()
        .execute_batch("CREATE TABLE entries (id INTEGER); PRAGMA user_version = 99;")
        .unwrap();
    let o = h.run(&["history"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("schema version 99, newer than this ssdready's"),
        "{}",
        o.stderr
    );
    assert_eq!(o.stderr.lines().count(), 1, "{}", o.stderr);
    let job = read_job("emu:nvme-tlc", "1");
    let o = h.run(&with(&["run"], &job, &["--save"]));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stdout.is_empty(), "nothing ran: {}", o.stdout);
    assert_eq!(user_version(&h.db), 99, "left as it was");
    let o = ssdready(h.dir.path(), &["history", "--db=/no/such/dir/h.db"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("/no/such/dir/h.db does not exist"),
        "{}",
        o.stderr
    );
}

#[test]
fn identical_results_show_no_differences() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let h = Db::new();
    // Virtual time: the same jobs give the same figures, twice.
    let job = read_job("emu:nvme-tlc", "3");
    for _ in 0..2 {
        let o = h.run(&with(&["emu", "simulate"], &job, &["--save"]));
        assert_eq!(o.code, 0, "{}", o.stderr);
    }
    let out = h.dir.path().join("cmp");
    let o = h.run(&["compare", "1", "2", "--output", out.to_str().unwrap()]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("no differences beyond the noise"),
        "{}",
        o.stdout
    );
    let c: Value =
        serde_json::from_slice(&std::fs::read(out.join("compare.json")).unwrap()).unwrap();
    assert_eq!(c["schema"], "ssdready.compare");
    assert_eq!(c["comparable"], true);
    assert_eq!(c["differences"], 0);
    assert_eq!(c["a"]["history_id"], 1);
    assert!(c["figures"].as_array().unwrap().len() >= 3);
    // A saved result named by its file against its history id.
    let saved = h.history_json(&[]);
    let path = saved[0]["json_path"].as_str().unwrap();
    let o = h.run(&["compare", path, "2"]);
    assert!(
        o.stdout.contains("no differences beyond the noise"),
        "{}",
        o.stdout
    );
}

#[test]
fn a_slower_emulated_drive_is_found_and_fails_the_baseline_with_3() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let h = Db::new();
    let fast = read_job("emu:nvme-tlc", "3");
    let o = h.run(&with(&["run"], &fast, &["--save"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Ten times the firmware's time per command: a clearly slower drive.
    let slow = read_job("emu:nvme-tlc,fw_cmd_ns=40000", "3");
    let o = h.run(&with(&["run"], &slow, &["--save", "--baseline=1"]));
    assert_eq!(o.code, 3, "{}", o.stderr);
    assert!(
        o.stderr.contains("regression against the baseline"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("read IOPS") && o.stderr.contains("read mean latency"),
        "{}",
        o.stderr
    );
    assert!(
        !o.stdout.is_empty(),
        "the run's own output is still written"
    );
    let o = h.run(&["compare", "1", "2"]);
    assert_eq!(o.code, 0);
    let iops = o
        .stdout
        .lines()
        .find(|l| l.starts_with("read IOPS"))
        .unwrap_or_default();
    assert!(iops.contains("worse"), "{}", o.stdout);
    assert!(o.stdout.contains("the targets differ"), "{}", o.stdout);
    // The fast drive against the slow one: better, so no regression.
    let o = h.run(&with(&["run"], &fast, &["--baseline=2"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stderr.contains("no regression against the baseline"),
        "{}",
        o.stderr
    );
}

#[test]
fn different_workloads_are_not_compared() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let h = Db::new();
    let reads = read_job("emu:nvme-tlc", "1");
    let o = h.run(&with(&["emu", "simulate"], &reads, &["--save"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let mut writes = reads.clone();
    writes[2] = "--rw=randwrite".into();
    let o = h.run(&with(&["emu", "simulate"], &writes, &["--save"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let out = h.dir.path().join("cmp");
    let o = h.run(&["compare", "1", "2", "--output", out.to_str().unwrap()]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("not comparable") && o.stderr.contains("\"randread\" vs \"randwrite\""),
        "{}",
        o.stderr
    );
    assert!(!out.join("compare.json").exists(), "nothing written");
    // A baseline of another workload stops the run before it starts.
    let o = h.run(&with(&["run"], &writes, &["--baseline=1"]));
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stdout.is_empty());
    assert!(
        o.stderr.contains("option '--baseline'") && o.stderr.contains("different workload"),
        "{}",
        o.stderr
    );
}

#[test]
fn names_that_are_not_results_say_what_is_allowed() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let h = Db::new();
    let o = h.run(&["compare", "/no/such.json", "1"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("A:")
            && o.stderr
                .contains("neither a file, a directory nor a history id"),
        "{}",
        o.stderr
    );
    let o = h.run(&["compare", "7", "8"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("no history database"), "{}", o.stderr);
    let notes = h.dir.path().join("notes.json");
    std::fs::write(&notes, r#"{"fio version": "fio-3.33", "jobs": []}"#).unwrap();
    let o = h.run(&["compare", notes.to_str().unwrap(), notes.to_str().unwrap()]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("fio's JSON layout"), "{}", o.stderr);
    let job = read_job("emu:nvme-tlc", "1");
    let o = h.run(&with(&["emu", "simulate"], &job, &["--save"]));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = h.run(&["compare", "1", "5"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("B: history id 5: no such entry"),
        "{}",
        o.stderr
    );
    let o = h.run(&with(&["run"], &job, &["--baseline=9"]));
    assert_eq!(o.code, 2);
    assert!(o.stdout.is_empty());
}

/// A quick study of `target` with 50 ms runs (the figures are noisy; the
/// drives compared below differ ten-fold at QD 1 and in peak IOPS).
fn study(h: &Db, target: &str, out: &Path, extra: &[&str]) -> Out {
    let db = h.db_arg();
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["study", target, "--quick", "--quiet", "--output"])
        .arg(out)
        .args(extra)
        .arg(db)
        .env("XDG_DATA_HOME", h.dir.path())
        .env("SSDREADY_STUDY_RUNTIME", "0.05")
        .output()
        .expect("run ssdready study");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

#[test]
fn studies_are_recorded_and_a_slower_drive_fails_the_baseline() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let _one = MEASURING.lock().unwrap_or_else(|e| e.into_inner());
    let h = Db::new();
    let a = h.dir.path().join("a");
    let o = study(&h, "emu:x25e", &a, &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let saved = h.history_json(&["--kind", "study"]);
    assert_eq!(saved.len(), 1);
    let s = &saved[0];
    assert_eq!(s["target"], "emu:x25e");
    assert!(
        s["knee_qd"].as_u64().is_some() && s["delivered_pct"].as_f64().is_some(),
        "{s}"
    );
    assert!(
        s["figures"]["qd-1.lat_mean_ns"].as_f64().unwrap() > 0.0,
        "{s}"
    );
    // The history keeps its own copy: the id means what was recorded,
    // whatever later happens to the study's directory.
    let kept = PathBuf::from(s["json_path"].as_str().unwrap());
    assert!(
        kept.starts_with(h.dir.path().join("h-results").canonicalize().unwrap()),
        "{kept:?}"
    );
    assert_eq!(
        std::fs::read(&kept).unwrap(),
        std::fs::read(a.join("study.json")).unwrap()
    );
    // A second study into the same directory is refused, nothing changed.
    let o = study(&h, "emu:x25e", &a, &[]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("already holds a study"), "{}", o.stderr);
    // The study against itself, by directory and by id.
    let o = h.run(&["compare", a.to_str().unwrap(), "1"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("no differences beyond the noise"),
        "{}",
        o.stdout
    );
    // Twenty times the firmware's time per command (one firmware unit):
    // QD 1 latency ten times longer, the controller's limit twenty times lower.
    let b = h.dir.path().join("b");
    let o = study(&h, "emu:x25e,fw_cmd_ns=560000", &b, &["--baseline", "1"]);
    assert_eq!(o.code, 3, "{}", o.stderr);
    // The peak is the robust one; QD 1 latency of a 50 ms real-time run
    // on a busy machine can move as much as the firmware's change.
    assert!(
        o.stderr.contains("peak IOPS (4 KiB random read)"),
        "{}",
        o.stderr
    );
    assert!(b.join("study.json").is_file(), "the study is still written");
    assert_eq!(
        h.history_json(&["--kind", "study"]).len(),
        2,
        "and recorded"
    );
}
