//! pgbench's own checks: its summary and transaction logs read, and the
//! server's watchdog driven with a stand-in `pg_ctl`.

use super::*;

#[test]
fn pgbench_summary_is_read() {
    let out = "transaction type: <builtin: TPC-B (sort of)>\nscaling factor: 1\nnumber of clients: 2\nnumber of transactions actually processed: 1234\nnumber of failed transactions: 0 (0.000%)\nlatency average = 1.6 ms\ninitial connection time = 3.1 ms\ntps = 617.25 (without initial connection time)\n";
    assert_eq!(
        parse_summary(out),
        Summary {
            transactions: Some(1234),
            failed: Some(0),
            tps: Some(617.25)
        }
    );
}

#[test]
fn transaction_logs_give_latencies() {
    let t = tempfile::tempdir().unwrap();
    std::fs::write(
        t.path().join("tx.1"),
        "0 0 1500 0 1700000000 1\n0 1 2500 0 1700000000 2\n",
    )
    .unwrap();
    std::fs::write(t.path().join("tx.1.1"), "1 0 100000 0 1700000000 3\n").unwrap();
    let log = latencies(t.path());
    assert_eq!(log.n, 3);
    assert_eq!(log.lat.max(), 100_000_000);
    assert_eq!(log.lat.min(), 1_500_000);
    // From the first start (1 s + 3 µs − 100 ms) to the last end.
    assert_eq!(log.first_start_us, Some(1_699_999_999_900_003));
    assert_eq!(log.last_end_us, Some(1_700_000_000_000_003));
}

#[test]
fn a_reported_rate_its_logs_do_not_give_is_named() {
    let t = tempfile::tempdir().unwrap();
    // 100 transactions of 10 ms, one after another over 1 s.
    let lines: String = (1..=100u64)
        .map(|i| format!("0 {i} 10000 0 1700000000 {}\n", i * 10_000))
        .collect();
    std::fs::write(t.path().join("tx.1"), lines).unwrap();
    let log = latencies(t.path());
    assert!((log.rate().unwrap() - 100.0).abs() < 1e-9);
    let s = |tps| Summary {
        transactions: Some(100),
        failed: Some(0),
        tps: Some(tps),
    };
    let c = checks(&s(101.0), &log, Some(100));
    assert_eq!(c.len(), 3);
    assert!(c.iter().all(|c| c.agree), "{c:?}");
    let c = checks(&s(150.0), &log, Some(99));
    assert_eq!(c.iter().filter(|c| !c.agree).count(), 2, "{c:?}");
}

/// The watchdog's script with a stand-in `pg_ctl` that logs its
/// arguments (or `none` when there is no PID file); `lines` go to its pipe, which then closes (this process
/// "ends"); `server` runs as the start in flight. Its calls and how
/// long it took.
fn watchdog_run(lines: &[&str], server: Option<&str>) -> (String, Duration) {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    let data = t.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let calls = t.path().join("calls");
    let fake = t.path().join("pg_ctl");
    // As pg_ctl stop: without a PID file it finds no server.
    let script = format!(
        "#!/bin/sh\n[ -f '{}/postmaster.pid' ] || {{ echo none >> '{c}'; exit 1; }}\necho \"$@\" >> '{c}'\n",
        data.display(),
        c = calls.display()
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut dog = Command::new("sh")
        .args(["-c", WATCHDOG])
        .arg(&fake)
        .arg(&data)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = dog.stdin.take().unwrap();
    let mut starter = server.map(|sh| {
        let mut c = Command::new("sh")
            .args(["-c", sh])
            .current_dir(&data)
            .spawn()
            .unwrap();
        writeln!(pipe, "start {}", c.id()).unwrap();
        // Reaped when it ends, as init reaps an orphan.
        std::thread::spawn(move || c.wait())
    });
    if !lines.is_empty() {
        // The start ended before these lines, as `started` says.
        if let Some(s) = starter.take() {
            s.join().unwrap().unwrap();
        }
    }
    for l in lines {
        writeln!(pipe, "{l}").unwrap();
    }
    let t0 = Instant::now();
    drop(pipe);
    dog.wait().unwrap();
    if let Some(s) = starter {
        s.join().unwrap().unwrap();
    }
    let took = t0.elapsed();
    (std::fs::read_to_string(&calls).unwrap_or_default(), took)
}

#[test]
fn the_watchdog_waits_for_a_start_in_flight_then_stops_its_server() {
    // Killed while pg_ctl start runs: its server writes the PID file
    // only when it is up, after the pipe closed.
    let (calls, _) = watchdog_run(&[], Some("sleep 0.5; touch postmaster.pid"));
    assert!(calls.starts_with("stop -m immediate"), "{calls:?}");
}

#[test]
fn the_watchdog_stops_a_running_server_and_nothing_else() {
    let (calls, took) = watchdog_run(&["started"], Some("touch postmaster.pid"));
    assert!(calls.starts_with("stop -m immediate"), "{calls:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    // A server already stopped (no PID file): nothing to do, at once.
    let (calls, took) = watchdog_run(&["started"], Some("true"));
    assert_eq!(calls, "");
    assert!(took < Duration::from_secs(5), "{took:?}");
}
