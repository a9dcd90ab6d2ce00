//! fio compatibility: fio's log and
//! reporting options — histogram logs, compressed logs, log epochs,
//! `unified_rw_reporting`, `percentage_random`, `rate_ignore_thinktime` —
//! compared with fio 3.33 side by side where fio is installed.

use crate::common;
use common::fio::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The small psync random-read job both tools run on file `f` in `dir`.
fn job(dir: &Path, extra: &[&str]) -> Vec<String> {
    let f = dir.join("f");
    if !f.exists() {
        std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
    }
    let mut a = vec![
        "--name=j".to_string(),
        format!("--filename={}", f.display()),
        "--size=1m".into(),
        "--bs=4k".into(),
        "--ioengine=psync".into(),
    ];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The lines of a text log, split into columns.
fn rows(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(", ").map(str::to_string).collect())
        .collect()
}

/// write_hist_log: a line per direction every log_hist_msec, with fio's
/// 1856 bins (3 + 1856 columns; 3 + 29 with log_hist_coarseness=6), about
/// as many lines as fio writes for the same time-based job, and the counts
/// of the lines summing to every I/O completed up to the last line: the
/// I/Os the per-I/O clat log of the same run stamps before that line's
/// millisecond, and none stamped after it (those of the interval still
/// open when the job ended are not written, as in fio). That count holds
/// however loaded the machine is; the number of lines does not (a stall
/// near the end of either run leaves intervals no I/O closes), so it is
/// allowed three lines either way of fio's and at least 3 of the 10.
#[test]
fn hist_log_has_fios_columns_and_lines() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (coarse, cols) in [("0", 3 + 1856), ("6", 3 + 29)] {
        let ca = format!("--log_hist_coarseness={coarse}");
        let args = job(
            dir.path(),
            &[
                "--rw=randread",
                "--time_based",
                "--runtime=1",
                "--log_hist_msec=100",
                &ca,
            ],
        );
        let mut s = args.clone();
        s.push("--write_hist_log=s".into());
        s.push("--write_lat_log=s".into());
        let mut f = args;
        f.push("--write_hist_log=f".into());
        let (v, o) = ssdready_in(dir.path(), &refs(&s));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (_, fo) = fio_in(dir.path(), &refs(&f));
        assert!(fo.status.success());
        let ours = rows(&dir.path().join("s_clat_hist.1.log"));
        let theirs = rows(&dir.path().join("f_clat_hist.1.log"));
        assert!(
            ours.iter().all(|r| r.len() == cols),
            "ours: {}",
            ours[0].len()
        );
        assert!(
            theirs.iter().all(|r| r.len() == cols),
            "fio: {}",
            theirs[0].len()
        );
        assert!(
            ours.len().abs_diff(theirs.len()) <= 3 && ours.len() >= 3,
            "{} lines, fio {}",
            ours.len(),
            theirs.len()
        );
        assert!(ours.iter().all(|r| r[1] == "0" && r[2] == "4096"));
        let counted: u64 = ours
            .iter()
            .flat_map(|r| r[3..].iter().map(|c| c.parse::<u64>().unwrap()))
            .sum();
        let stamps: Vec<u64> = rows(&dir.path().join("s_clat.1.log"))
            .iter()
            .map(|r| r[0].parse().unwrap())
            .collect();
        assert_eq!(
            stamps.len() as u64,
            ios(&v, "read"),
            "one clat line per I/O"
        );
        let last: u64 = ours.last().unwrap()[0].parse().unwrap();
        // The I/O that closed the last line is counted in it; others of
        // the same millisecond may have come after it.
        let before = stamps.iter().filter(|&&t| t < last).count() as u64;
        let upto = stamps.iter().filter(|&&t| t <= last).count() as u64;
        assert!(
            before < counted && counted <= upto,
            "{counted} I/Os in the lines; {before} stamped before the last line at {last} ms, {upto} up to it"
        );
    }
}

/// log_store_compressed: `fio --inflate-log` reads ssdready's `.log.fz`
/// (several zlib streams with log_compression) into one line per I/O
/// whose latencies are the ones the JSON reports (min, max, mean).
#[test]
fn fio_inflates_our_compressed_logs_to_our_latencies() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let args = job(
        dir.path(),
        &[
            "--rw=randread",
            "--write_lat_log=z",
            "--log_offset=1",
            "--log_store_compressed=1",
            "--log_compression=2k",
        ],
    );
    let (v, o) = ssdready_in(dir.path(), &refs(&args));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let fz = dir.path().join("z_clat.1.log.fz");
    let out = Command::new("fio")
        .arg(format!("--inflate-log={}", fz.display()))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let clats: Vec<u64> = text
        .lines()
        .map(|l| {
            let c: Vec<&str> = l.split(", ").collect();
            assert_eq!(c.len(), 6, "log_offset's columns: {l}");
            c[1].parse().unwrap()
        })
        .collect();
    let clat = &v["jobs"][0]["read"]["clat_ns"];
    assert_eq!(clats.len() as u64, ios(&v, "read"));
    assert_eq!(clats.iter().min().copied(), clat["min"].as_u64());
    assert_eq!(clats.iter().max().copied(), clat["max"].as_u64());
    let mean = clats.iter().sum::<u64>() as f64 / clats.len() as f64;
    assert!((mean - clat["mean"].as_f64().unwrap()).abs() < 0.01);
    // fio writes no slat for a synchronous engine; nor does ssdready.
    let slat = Command::new("fio")
        .arg(format!(
            "--inflate-log={}",
            dir.path().join("z_slat.1.log.fz").display()
        ))
        .output()
        .unwrap();
    assert!(slat.stdout.is_empty());
}

/// log_unix_epoch: times in ms since 1970, within the run's wall time.
#[test]
fn log_unix_epoch_times_are_wall_clock_ms() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let args = job(
        dir.path(),
        &["--rw=read", "--write_iops_log=e", "--log_unix_epoch=1"],
    );
    let (_, o) = ssdready_in(dir.path(), &refs(&args));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let lines = rows(&dir.path().join("e_iops.1.log"));
    assert_eq!(lines.len(), 256);
    for l in lines {
        let t: u64 = l[0].parse().unwrap();
        assert!(
            (before..=after).contains(&t),
            "{t} not in {before}..={after}"
        );
    }
    // A clock that does not exist is refused before anything runs.
    let bad = job(
        dir.path(),
        &[
            "--rw=read",
            "--write_iops_log=x",
            "--log_unix_epoch=1",
            "--log_alternate_epoch_clock_id=99",
        ],
    );
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(["run", "--quiet"])
        .args(&bad)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("log_alternate_epoch_clock_id"));
    assert!(!dir.path().join("x_iops.1.log").exists());
}

/// The keys of a job object, without ssdready's own.
fn job_keys(v: &Value) -> Vec<String> {
    v["jobs"][0]
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| *k != "ssdready")
        .cloned()
        .collect()
}

/// unified_rw_reporting: the job object's keys, in order, as fio's for
/// each value, and the mixed direction counting every I/O.
#[test]
fn unified_rw_reporting_keys_match_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for how in ["none", "mixed", "both", "0", "1"] {
        let ua = format!("--unified_rw_reporting={how}");
        let args = job(dir.path(), &["--rw=randrw", &ua]);
        let (ours, o) = ssdready_in(dir.path(), &refs(&args));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (theirs, _) = fio_in(dir.path(), &refs(&args));
        assert_eq!(job_keys(&ours), job_keys(&theirs), "{how}");
        if how != "none" && how != "0" {
            assert_eq!(ios(&ours, "mixed"), 256, "{how}");
            assert_eq!(ios(&theirs, "mixed"), 256, "{how}");
        }
    }
}

/// The share of offsets that follow the previous I/O (log_offset=1 log).
fn sequential_share(path: &Path) -> f64 {
    let offs: Vec<u64> = rows(path).iter().map(|r| r[4].parse().unwrap()).collect();
    let seq = offs.windows(2).filter(|w| w[1] == w[0] + 4096).count();
    seq as f64 / (offs.len() - 1) as f64
}

/// percentage_random=50: about half the offsets sequential, as fio's
/// (1024 I/Os: 0.5 ± 0.1 for both).
#[test]
fn percentage_random_mixes_sequential_offsets_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, vec![1u8; 4 << 20]).unwrap();
    let args = job(
        dir.path(),
        &[
            "--rw=randread",
            "--size=4m",
            "--percentage_random=50",
            "--log_offset=1",
        ],
    );
    let mut s = args.clone();
    s.push("--write_iops_log=s".into());
    let (_, o) = ssdready_in(dir.path(), &refs(&s));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ours = sequential_share(&dir.path().join("s_iops.1.log"));
    assert!((0.4..0.6).contains(&ours), "ssdready: {ours}");
    if have_fio() {
        let mut t = args;
        t.push("--write_iops_log=t".into());
        fio_in(dir.path(), &refs(&t));
        let theirs = sequential_share(&dir.path().join("t_iops.1.log"));
        assert!((0.4..0.6).contains(&theirs), "fio: {theirs}");
    }
}

/// rate_ignore_thinktime: after each think, no catching up — the same
/// I/O count as fio for a rate-limited, thinking time-based job (448 in
/// 3 s at 1 MiB/s with 200 ms thinks every 64 blocks; 768 without it).
#[test]
fn rate_ignore_thinktime_issues_as_many_ios_as_fio() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    for (ignore, fio_count) in [("0", 768u64), ("1", 448)] {
        let ia = format!("--rate_ignore_thinktime={ignore}");
        let args = job(
            dir.path(),
            &[
                "--rw=read",
                "--rate=1m",
                "--thinktime=200ms",
                "--thinktime_blocks=64",
                &ia,
                "--time_based",
                "--runtime=3",
            ],
        );
        let (v, o) = ssdready_in(dir.path(), &refs(&args));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let n = ios(&v, "read");
        assert!(
            n.abs_diff(fio_count) <= 8,
            "rate_ignore_thinktime={ignore}: {n} I/Os, fio {fio_count}"
        );
    }
}
