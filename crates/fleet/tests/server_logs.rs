//! Logs and disk figures between ssdready's own client and server on
//! loopback, with a stand-in engine: zlib is agreed at PROBE, a log comes
//! through compressed and whole, a disk's utilisation comes as DU, and a
//! log that inflates far past the samples it declares (a zip bomb) is
//! refused by name while the host's other results are kept.

use ssdready_fleet::client::{self, Host, Request};
use ssdready_fleet::iolog::{encode_samples, IoLog, Sample, XMIT_COMPRESSED};
use ssdready_fleet::pdu::{DiskUtil, ProbeReply};
use ssdready_fleet::server::{JobRequest, RunOutput, Runner, Server};
use ssdready_fleet::tstat::{GroupStats, ThreadStat, TsPdu};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Plans one job; its run returns one empty result block, the logs
/// given, and one disk.
struct WithLogs(Vec<IoLog>);

impl Runner for WithLogs {
    fn plan(&self, _: &JobRequest) -> Result<u32, String> {
        Ok(1)
    }
    fn run(&self, _: &JobRequest, version: u16, _: Arc<AtomicBool>) -> RunOutput {
        let mut ts = ThreadStat::new(version).unwrap();
        ts.set_text("name", "j");
        RunOutput {
            ts: vec![TsPdu {
                ts,
                gs: GroupStats::default(),
            }],
            groups: vec![GroupStats::default()],
            logs: self.0.clone(),
            du: vec![DiskUtil {
                name: "loop7".into(),
                ios: [64, 0],
                sectors: [512, 0],
                io_ticks: 30,
                msec: 120,
                ..Default::default()
            }],
            ..Default::default()
        }
    }
    fn probe(&self) -> ProbeReply {
        ProbeReply {
            hostname: "stand-in".into(),
            ..Default::default()
        }
    }
}

fn log(name: &str, n: u64) -> IoLog {
    let samples: Vec<Sample> = (0..n)
        .map(|i| Sample {
            time_ms: i,
            value: 100 + i,
            ddir: 0,
            prio: 0,
            bs: 4096,
            offset: None,
        })
        .collect();
    IoLog {
        nr_samples: n,
        thread_number: 1,
        log_type: 1,
        per_job_logs: 1,
        name: name.into(),
        data: encode_samples(97, &samples).unwrap(),
        ..Default::default()
    }
}

fn drive(logs: Vec<IoLog>) -> client::HostRun {
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    let runner = WithLogs(logs);
    std::thread::scope(|sc| {
        sc.spawn(|| server.serve(&runner, &stop, Some(1), &|_| {}));
        let host = Host {
            name: "127.0.0.1".into(),
            port: addr.port(),
            addr,
        };
        let req = Request {
            args: vec![],
            jobs: vec!["[j]\nioengine=null\n".into()],
        };
        let stop = AtomicBool::new(false);
        client::run_host(&host, &req, &stop)
    })
}

#[test]
fn logs_come_compressed_and_whole_with_the_disks_figures() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let sent = log("lg_clat.1.log", 2000);
    let r = drive(vec![sent.clone(), log("lg_slat.1.log", 0)]);
    assert!(r.complete(), "{:?}", r.error);
    assert!(r.zlib, "zlib agreed at PROBE");
    assert_eq!(r.logs.len(), 2);
    assert_eq!(r.logs[0].compressed, XMIT_COMPRESSED);
    assert_eq!(r.logs[0].nr_samples, 2000);
    assert!(r.logs[0].data == sent.data, "the samples as sent");
    assert_eq!(r.logs[0].text(97).unwrap().lines().count(), 2000);
    assert_eq!(r.logs[1].nr_samples, 0);
    assert!(r.log_errors.is_empty());
    assert_eq!(r.du.len(), 1);
    assert_eq!(r.du[0].name, "loop7");
    assert_eq!(r.du[0].ios, [64, 0]);
    assert_eq!(r.du[0].util_pct(), 25.0);
}

#[test]
fn a_zip_bomb_is_refused_by_name_and_the_rest_kept() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // Declares 4 samples (128 bytes) but inflates to 32 MiB (about 32 KiB
    // on the wire).
    let mut bomb = log("lg_lat.1.log", 4);
    bomb.data = vec![0; 32 << 20];
    let r = drive(vec![log("lg_clat.1.log", 10), bomb]);
    assert_eq!(r.log_errors.len(), 1, "{:?}", r.log_errors);
    assert!(
        r.log_errors[0].contains("lg_lat.1.log") && r.log_errors[0].contains("zip bomb"),
        "{}",
        r.log_errors[0]
    );
    // The other log, the result block and the disk came through.
    assert_eq!(r.logs.len(), 1);
    assert_eq!(r.logs[0].name, "lg_clat.1.log");
    assert_eq!(r.ts.len(), 1);
    assert_eq!(r.du.len(), 1);
    assert!(r.error.is_none(), "{:?}", r.error);
}
