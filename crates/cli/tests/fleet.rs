//! Many hosts on loopback (ports chosen free at run time): real fio 3.33's
//! client drives two `ssdready server`s and fails, saying why, on a job
//! the server refuses; `ssdready run --client` drives two
//! real `fio --server`s; bad input is one line and exit code 2. Skipped,
//! saying why, when fio is not installed.

use crate::common;
use common::net::{
    accept_within, fio_server, free_port, have_fio, spawn_listening as spawn, Proc, Within,
};
use serde_json::Value;
use std::net::TcpListener;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_ssdready");
const JOB: &str = "[global]\nioengine=null\nbs=4k\nsize=4m\n[r]\nrw=randread\n[w]\nrw=write\n";

#[test]
fn fio_client_drives_two_ssdready_servers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ports = [free_port(), free_port()];
    let _servers: Vec<Proc> = ports
        .iter()
        .map(|&p| {
            spawn(
                Command::new(BIN).args(["server", "--port", &p.to_string()]),
                p,
            )
        })
        .collect();
    let hosts = dir.path().join("hosts");
    std::fs::write(
        &hosts,
        format!("ip:127.0.0.1,{}\nip:127.0.0.1,{}\n", ports[0], ports[1]),
    )
    .unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, JOB).unwrap();
    let out = Command::new("fio")
        .arg(format!("--client={}", hosts.display()))
        .arg(&job)
        .arg("--output-format=json")
        .output_in_time();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stats = doc["client_stats"].as_array().unwrap();
    for port in ports {
        for (name, dir) in [("r", "read"), ("w", "write")] {
            let j = stats
                .iter()
                .find(|j| j["jobname"] == name && j["port"] == port)
                .unwrap_or_else(|| panic!("no job {name} from port {port}"));
            // 4 MiB in 4 KiB blocks.
            assert_eq!(j[dir]["total_ios"], 1024, "{name} on {port}");
            assert_eq!(j[dir]["io_bytes"], 4 << 20);
            assert_eq!(j[dir]["clat_ns"]["N"], 1024);
        }
    }
    let all = stats
        .iter()
        .find(|j| j["jobname"] == "All clients")
        .unwrap();
    assert_eq!(all["read"]["total_ios"], 2048);
    assert_eq!(all["write"]["total_ios"], 2048);
}

#[test]
fn run_client_drives_two_fio_servers_and_merges_bin_by_bin() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ports = [free_port(), free_port()];
    let _servers: Vec<Proc> = ports.iter().map(|&p| fio_server(p)).collect();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, JOB).unwrap();
    let out = Command::new(BIN)
        .arg("run")
        .arg(format!(
            "--client=127.0.0.1,{};127.0.0.1,{}",
            ports[0], ports[1]
        ))
        .arg(&job)
        .arg("--output-format=json+")
        .output_in_time();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["fleet"]["partial"], false);
    // fio's layout: every job, then "All clients" (the merged figures).
    let stats = doc["client_stats"].as_array().unwrap();
    assert_eq!(stats.len(), 5);
    let (jobs, all) = stats.split_at(4);
    assert_eq!(all[0]["jobname"], "All clients");
    assert_eq!(all[0]["read"], doc["all_clients"]["read"]);
    for dir in ["read", "write"] {
        let mut sum = std::collections::BTreeMap::<String, u64>::new();
        for j in jobs {
            assert_eq!(j["host"], "127.0.0.1");
            for (k, v) in j[dir]["clat_ns"]["bins"].as_object().unwrap() {
                *sum.entry(k.clone()).or_default() += v.as_u64().unwrap();
            }
        }
        let merged: std::collections::BTreeMap<String, u64> = doc["all_clients"][dir]["clat_ns"]
            ["bins"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_u64().unwrap()))
            .collect();
        assert_eq!(merged, sum, "{dir}");
        assert_eq!(doc["all_clients"][dir]["total_ios"], 2048);
    }
    let slow = doc["fleet"]["slowest"]["host"].as_str().unwrap();
    assert!(
        ports.iter().any(|p| slow == format!("127.0.0.1,{p}")),
        "{slow}"
    );
}

fn one_line_exit_2(out: &std::process::Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains(needle), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_fleet_input_is_one_line_and_exit_2() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.fio");
    std::fs::write(&job, JOB).unwrap();
    // Nothing listens on that port.
    let port = free_port();
    let out = Command::new(BIN)
        .arg("run")
        .arg(format!("--client=127.0.0.1,{port}"))
        .arg(&job)
        .output_in_time();
    one_line_exit_2(&out, &format!("host 127.0.0.1,{port}: connect"));
    // A port in use.
    let busy = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = busy.local_addr().unwrap().port();
    let out = Command::new(BIN)
        .args(["server", "--port", &port.to_string()])
        .output_in_time();
    one_line_exit_2(&out, "cannot listen");
    // A bad port number for a host.
    let out = Command::new(BIN)
        .args(["run", "--client=127.0.0.1,70000"])
        .arg(&job)
        .output_in_time();
    one_line_exit_2(&out, "allowed: 1 to 65535");
}

#[test]
fn fios_client_fails_naming_a_job_the_server_refuses() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = own_server(&dir.path().join("srv"), &[]);
    let outside = dir.path().join("outside");
    let job = dir.path().join("job.fio");
    let text = format!("[x]\nrw=write\nsize=64k\nfilename={}\n", outside.display());
    std::fs::write(&job, text).unwrap();
    let out = Command::new("fio")
        .arg(format!("--client=127.0.0.1,{port}"))
        .arg(&job)
        .output_in_time();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("outside the places this server allows"),
        "{said}"
    );
    assert!(said.contains("exited with error 22"), "{said}");
    assert!(!outside.exists());
}

#[test]
fn a_job_the_server_refuses_is_named_with_exit_2() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _server = spawn(
        Command::new(BIN).args(["server", "--port", &port.to_string()]),
        port,
    );
    let job = dir.path().join("job.fio");
    std::fs::write(&job, "[x]\nioengine=null\nrw=bogus\nsize=1m\n").unwrap();
    let out = Command::new(BIN)
        .arg("run")
        .arg(format!("--client=127.0.0.1,{port}"))
        .arg(&job)
        .output_in_time();
    one_line_exit_2(&out, "rw");
}

#[test]
fn a_hosts_message_over_64_mib_is_its_failure_exit_1_not_bad_input() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    use ssdready_fleet::wire::{encode, op};
    use std::io::{Read, Write};
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // A hostile host: it answers PROBE with 64 MiB and one byte.
    let host = std::thread::spawn(move || {
        let mut s = accept_within(&l);
        let mut probe = [0u8; 4096];
        let _ = s.read(&mut probe);
        let big = vec![0u8; (64 << 20) + 1];
        let _ = s.write_all(&encode(ssdready_fleet::VERSIONS[0], op::PROBE, 1, &big));
    });
    let out = Command::new(BIN)
        .args(["run", &format!("--client=127.0.0.1,{port}")])
        .args(["--name=j", "--ioengine=null", "--size=1m"])
        .output_in_time();
    let _ = host.join();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("64 MiB"), "{err}");
}

#[test]
fn ctrl_c_of_run_client_is_exit_130() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // A host that takes the connection and never answers.
    let host = std::thread::spawn(move || accept_within(&l));
    let mut child = Command::new(BIN)
        .args(["run", &format!("--client=127.0.0.1,{port}")])
        .args(["--name=j", "--ioengine=null", "--size=1m"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let _held = host.join().unwrap();
    // Connected and waiting for PROBE's answer: now Ctrl-C.
    std::thread::sleep(std::time::Duration::from_millis(300));
    let ok = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let t0 = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        // Every socket wait looks at the stop flag every 100 ms; 10 s is a
        // loaded machine's margin.
        assert!(t0.elapsed().as_secs() < 10, "run --client did not stop");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// `ssdready run --client` of `job` on the server at `port`, which must
/// succeed.
fn json_from_server(port: u16, job: &std::path::Path) {
    let out = Command::new(BIN)
        .arg("run")
        .arg(format!("--client=127.0.0.1,{port}"))
        .arg("--output-format=json")
        .arg(job)
        .output_in_time();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A server of this test's own, in a directory of its own.
fn own_server(dir: &std::path::Path, extra: &[&str]) -> (Proc, u16) {
    let port = free_port();
    let p = spawn(
        Command::new(BIN)
            .args(["server", "--port", &port.to_string(), "--directory"])
            .arg(dir)
            .args(extra),
        port,
    );
    (p, port)
}

#[test]
fn a_server_takes_only_job_options_and_its_own_places_from_the_network() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = own_server(&dir.path().join("srv"), &[]);
    let outside = dir.path().join("outside");
    let write_outside = format!("[x]\nrw=write\nsize=64k\nfilename={}\n", outside.display());
    let cases: Vec<(Vec<String>, &str, &str)> = vec![
        (
            vec!["--allow-destructive".into()],
            "[x]\nioengine=null\nsize=1m\n",
            "not a job option",
        ),
        (
            vec![],
            "[x]\nioengine=null\nsize=1m\nexec_prerun=touch /tmp/ssdready-pwned\n",
            "--allow-exec",
        ),
        (
            vec![],
            &write_outside,
            "outside the places this server allows",
        ),
        (
            vec![],
            "[x]\ninclude /etc/shadow\nioengine=null\nsize=1m\n",
            "outside the places",
        ),
        (
            vec!["--write_iolog=/etc/ssdready-probe".into()],
            "[x]\nioengine=null\nsize=1m\n",
            "outside the places",
        ),
        (
            vec![],
            "[x]\nioengine=null\nsize=1m\nread_iolog=/etc/shadow\n",
            "outside the places",
        ),
    ];
    for (args, job, needle) in cases {
        let jf = dir.path().join("job.fio");
        std::fs::write(&jf, job).unwrap();
        let out = Command::new(BIN)
            .arg("run")
            .arg(format!("--client=127.0.0.1,{port}"))
            .args(&args)
            .arg(&jf)
            .output_in_time();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(0), "{job}: {err}");
        assert!(err.contains(needle), "{job} {args:?}: {err}");
        assert!(!err.contains("root:"), "{err}");
    }
    assert!(!outside.exists(), "a refused job wrote outside its places");
    assert!(!std::path::Path::new("/tmp/ssdready-pwned").exists());
    // A job in the server's own place runs.
    let jf = dir.path().join("ok.fio");
    std::fs::write(&jf, "[x]\nrw=write\nbs=4k\nsize=64k\nfilename=data\n").unwrap();
    json_from_server(port, &jf);
    assert!(dir.path().join("srv/work/data").exists());
}

#[test]
fn another_user_cannot_drive_a_root_server() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !common::is_root()
        || !Command::new("su")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    {
        eprintln!("skipped: needs root and su (a second account, nobody, drives the server)");
        return;
    }
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_server, port) = own_server(&dir.path().join("srv"), &[]);
    let job = std::env::temp_dir().join(format!("ssdready-other-user-{port}.fio"));
    std::fs::write(&job, "[x]\nioengine=null\nsize=1m\n").unwrap();
    // As nobody, with fio's own client: refused, and fio prints why.
    let out = Command::new("su")
        .args(["nobody", "-s", "/bin/sh", "-c"])
        .arg(format!("fio --client=127.0.0.1,{port} {}", job.display()))
        .output_in_time();
    let _ = std::fs::remove_file(&job);
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("may not drive this server"), "{text}");
    assert_ne!(
        out.status.code(),
        None,
        "fio's client died of a signal: {text}"
    );
}

#[test]
fn fios_server_and_daemonize_switches_start_a_background_server() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let pid_file = dir.path().join("server.pid");
    let out = Command::new(BIN)
        .arg("run")
        .arg(format!("--server=,{port}"))
        .arg(format!("--daemonize={}", pid_file.display()))
        .env("TMPDIR", dir.path())
        .output_in_time();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    // Killed (the whole group) when the test ends, pass or fail.
    struct Kill(String);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = Command::new("kill").arg(&self.0).status();
        }
    }
    let _k = Kill(pid.clone());
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    let job = dir.path().join("job.fio");
    std::fs::write(&job, JOB).unwrap();
    json_from_server(port, &job);
    // A second one on the same port says why it did not start.
    let out = Command::new(BIN)
        .arg("run")
        .arg(format!("--server=,{port}"))
        .arg(format!(
            "--daemonize={}",
            dir.path().join("two.pid").display()
        ))
        .env("TMPDIR", dir.path())
        .output_in_time();
    one_line_exit_2(&out, "Address already in use");
}

#[test]
fn a_unix_socket_server_is_for_its_owner_only() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Under /tmp, where another account may reach it but for its mode.
    let sock = std::env::temp_dir().join(format!("ssdready-test-{}.sock", std::process::id()));
    // A group of its own, as `Proc` kills it: a failed assertion below
    // must not leave the test waiting for a server that lives on.
    let mut server = Proc(
        std::os::unix::process::CommandExt::process_group(
            Command::new(BIN)
                .args(["server", "--socket"])
                .arg(&sock)
                .arg("--directory")
                .arg(dir.path().join("srv"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null()),
            0,
        )
        .spawn()
        .unwrap(),
    );
    // The server binds with no permission at all (no one may connect
    // yet), then gives the socket its mode: ready once that is done.
    use std::os::unix::fs::PermissionsExt;
    let mode = || std::fs::metadata(&sock).map_or(0, |m| m.permissions().mode() & 0o777);
    let t0 = std::time::Instant::now();
    while mode() == 0 {
        assert!(t0.elapsed().as_secs() < 10, "the socket never appeared");
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
    assert_eq!(mode(), 0o600);
    let job = dir.path().join("job.fio");
    std::fs::write(&job, JOB).unwrap();
    let out = Command::new("fio")
        .arg(format!("--client=sock:{}", sock.display()))
        .arg("--output-format=json")
        .arg(&job)
        .output_in_time();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["client_stats"].as_array().is_some_and(|c| !c.is_empty()),
        "{v}"
    );
    if common::is_root()
        && Command::new("su")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    {
        let out = Command::new("su")
            .args(["nobody", "-s", "/bin/sh", "-c"])
            .arg(format!("fio --client=sock:{} /dev/null", sock.display()))
            .output_in_time();
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && text.contains("Permission denied"),
            "{text}"
        );
    }
    let _ = server.0.kill();
    let _ = server.0.wait();
    let _ = std::fs::remove_file(&sock);
}

#[test]
fn bad_server_switches_are_one_line_and_make_nothing() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let dir = tempfile::tempdir().unwrap();
    let srv = dir.path().join("srv");
    let srv_s = srv.display().to_string();
    let sock = dir.path().join("passwd");
    std::fs::write(&sock, "not a socket").unwrap();
    let sock_s = sock.display().to_string();
    for (args, needle) in [
        (vec!["--allow-dir", "/nonexistent/ssdready"], "--allow-dir"),
        (
            vec!["--allow-device", "/nonexistent/ssdready"],
            "--allow-device",
        ),
        (
            vec!["--allow-user", "no-such-user-here"],
            "not a user of this host",
        ),
        (vec!["--socket", &sock_s], "not a socket"),
        (vec!["--job-memory", "1k"], "--job-memory"),
        (vec!["--job-time", "forever"], "--job-time"),
        (vec!["--job-threads", "0"], "--job-threads"),
    ] {
        let out = Command::new(BIN)
            .args(["server", "--directory", &srv_s])
            .args(&args)
            .output_in_time();
        one_line_exit_2(&out, needle);
        assert!(!srv.exists(), "{args:?} made the server's directory");
    }
}
