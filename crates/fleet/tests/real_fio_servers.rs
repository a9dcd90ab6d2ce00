//! The client side against real `fio --server`s on loopback (ports chosen
//! free at run time): the fleet's merged histogram is the bin-by-bin sum of
//! the hosts', and a server killed mid-run leaves the other's results, the
//! result marked partial. Skipped, saying why, when fio is not installed.

use ssdready_fleet::client::{parse_host, run_fleet, Request};
use ssdready_fleet::merge;
use ssdready_fleet::tstat::LatKind;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn have_fio() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `fio --server` in its own process group (fio forks per connection).
struct FioServer {
    child: Child,
    port: u16,
    killed: bool,
}

impl FioServer {
    fn start() -> FioServer {
        let port = free_port();
        let child = Command::new("fio")
            .arg(format!("--server=ip:127.0.0.1,{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("fio starts");
        let t0 = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "fio --server did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // That probe connection was a client to fio: let it go.
        std::thread::sleep(Duration::from_millis(100));
        FioServer {
            child,
            port,
            killed: false,
        }
    }

    /// Whether a job of this server is running: fio forks a process per
    /// connection, and that process forks one per job.
    fn job_running(&self) -> bool {
        let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
                // pid (comm) state ppid …: comm may hold spaces.
                let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?;
                Some((pid, ppid.parse().ok()?))
            })
            .collect();
        let children = |p: u32| parents.iter().filter(move |x| x.1 == p).map(|x| x.0);
        children(self.child.id()).any(|c| children(c).next().is_some())
    }

    fn kill(&mut self) {
        if std::mem::replace(&mut self.killed, true) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for FioServer {
    fn drop(&mut self) {
        self.kill();
    }
}

const JOB: &str = "[global]\nioengine=null\nbs=4k\nsize=16m\n[r]\nrw=randread\n[w]\nrw=write\n";

#[test]
fn merged_histogram_is_the_bin_wise_sum_of_two_fio_servers() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let servers = [FioServer::start(), FioServer::start()];
    let hosts: Vec<_> = servers
        .iter()
        .map(|s| parse_host(&format!("127.0.0.1,{}", s.port)).unwrap())
        .collect();
    let req = Request {
        args: Vec::new(),
        jobs: vec![JOB.into()],
    };
    let runs = run_fleet(&hosts, &req, &AtomicBool::new(false));
    for r in &runs {
        assert!(r.complete(), "{:?}: {:?}", r.host, r.error);
        assert_eq!(r.ts.len(), 2);
        assert_eq!(r.probe.as_ref().unwrap().fio_version, "fio-3.33");
    }
    let merged = merge::merge(runs.iter().flat_map(|r| r.ts.iter()));
    for (d, m) in merged.iter().enumerate() {
        for (k, kind) in [LatKind::Slat, LatKind::Clat, LatKind::Lat]
            .into_iter()
            .enumerate()
        {
            let mut sum = vec![0u64; 1856];
            for t in runs.iter().flat_map(|r| r.ts.iter()) {
                for (s, b) in sum.iter_mut().zip(t.ts.plat(kind, d)) {
                    *s += b;
                }
            }
            if m.bins[k].is_empty() {
                assert!(sum.iter().all(|&x| x == 0));
            } else {
                assert_eq!(m.bins[k], sum, "direction {d}, kind {k}");
            }
        }
    }
    // 16 MiB in 4 KiB blocks, read by one job and written by the other, on each host.
    assert_eq!(merged[0].ios, 2 * 4096);
    assert_eq!(merged[1].ios, 2 * 4096);
    assert_eq!(merged[1].clat.samples, 2 * 4096);
    let doc = merge::document(&runs, false);
    assert_eq!(doc["fleet"]["partial"], false);
    let jobs = doc["client_stats"].as_array().unwrap();
    assert_eq!(jobs.len(), 4);
    assert!(jobs.iter().all(|j| j["host"] == "127.0.0.1"));
    let ports: std::collections::BTreeSet<u64> =
        jobs.iter().map(|j| j["port"].as_u64().unwrap()).collect();
    assert_eq!(ports.len(), 2);
    assert!(doc["fleet"]["slowest"]["host"]
        .as_str()
        .unwrap()
        .starts_with("127.0.0.1,"));
}

#[test]
fn a_server_killed_mid_run_leaves_the_others_results_marked_partial() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    if !have_fio() {
        eprintln!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let mut servers = [FioServer::start(), FioServer::start()];
    let hosts: Vec<_> = servers
        .iter()
        .map(|s| parse_host(&format!("127.0.0.1,{}", s.port)).unwrap())
        .collect();
    let req = Request {
        args: Vec::new(),
        jobs: vec!["[x]\nioengine=null\nbs=4k\nsize=1g\ntime_based\nruntime=2\nrw=read\n".into()],
    };
    let stop = AtomicBool::new(false);
    let runs = std::thread::scope(|sc| {
        let t = sc.spawn(|| run_fleet(&hosts, &req, &stop));
        // Killed once its job runs (a fixed wait met a server still
        // reading the job on a loaded machine), well before the 2 s end.
        let t0 = Instant::now();
        while !servers[1].job_running() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
        servers[1].kill();
        t.join().unwrap()
    });
    assert!(runs[0].complete(), "{:?}", runs[0].error);
    assert!(!runs[1].complete());
    let why = runs[1].error.as_deref().unwrap();
    assert!(why.contains("connection lost mid-run"), "{why}");
    let doc = merge::document(&runs, false);
    assert_eq!(doc["fleet"]["partial"], true);
    let failed = doc["fleet"]["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["host"], format!("127.0.0.1,{}", hosts[1].port));
    assert_eq!(doc["client_stats"].as_array().unwrap().len(), 1);
    assert!(doc["all_clients"]["read"]["total_ios"].as_u64().unwrap() > 0);
}

#[test]
fn a_host_that_does_not_answer_is_named() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let port = free_port(); // nothing listens there
    let hosts = vec![parse_host(&format!("127.0.0.1,{port}")).unwrap()];
    let runs = run_fleet(&hosts, &Request::default(), &AtomicBool::new(false));
    let e = runs[0].error.as_deref().unwrap();
    // Refused, or reset when a parallel test's short-lived server took the
    // port in between: either way the host is named as failed.
    assert!(
        e.contains("connect") || e.contains("reset") || e.contains("refused"),
        "{e}"
    );
    assert_eq!(merge::document(&runs, false)["fleet"]["partial"], true);
}
