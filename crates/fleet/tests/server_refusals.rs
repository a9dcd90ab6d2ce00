//! The server's refusals on loopback, with a stand-in engine: a client of
//! another protocol version is told, in its own version, which versions are
//! spoken; a second client while one runs is told the server is busy; the
//! stop flag ends `serve` within a fraction of a second; a connection that
//! says nothing (a readiness check) does not make the server busy; a
//! client the server does not admit is told why; a client that probes and
//! says nothing, or many connections that say nothing, do not hold the
//! server; a client that claims it and goes silent is let go; and a huge
//! first message is refused before it is read whole. Every refusal ends
//! with a STOP carrying its error, so that fio's client exits 1.

use ssdready_fleet::pdu::{self, ProbeReply};
use ssdready_fleet::server::{JobRequest, Limits, Refusal, RunOutput, Runner, Server};
use ssdready_fleet::wire::{self, op, Wait};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs nothing: plans one job and, when run, waits for its stop flag.
struct Idle;

impl Runner for Idle {
    fn plan(&self, _: &JobRequest) -> Result<u32, String> {
        Ok(1)
    }
    fn run(&self, _: &JobRequest, _: u16, stop: Arc<AtomicBool>) -> RunOutput {
        while !stop.load(Relaxed) {
            std::thread::sleep(Duration::from_millis(10));
        }
        RunOutput::default()
    }
    fn probe(&self) -> ProbeReply {
        ProbeReply::default()
    }
}

fn read_all(s: &mut TcpStream, version: u16) -> Vec<wire::Message> {
    let stop = AtomicBool::new(false);
    let w = Wait {
        stop: &stop,
        deadline: Some(Instant::now() + Duration::from_secs(3)),
    };
    let mut out = Vec::new();
    while let Ok(Some(m)) = wire::recv(s, &[version], &w) {
        out.push(m);
    }
    out
}

#[test]
fn refusals_are_told_in_the_clients_own_version() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let serving = sc.spawn(|| server.serve(&Idle, &stop, None, &|_| {}));
        // Another protocol version.
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all_msg(96, op::PROBE, &pdu::client_probe(0, "x"));
        let m = read_all(&mut s, 96);
        assert_eq!(m[0].opcode, op::TEXT);
        let t = pdu::parse_text(&m[0].payload).unwrap();
        assert!(
            t.contains("97 (fio 3.33)") && t.contains("120 (fio 3.42)"),
            "{t}"
        );
        assert_eq!(m.last().unwrap().opcode, op::QUIT);
        assert_eq!(stop_error(&m), Some(Refusal::Protocol as u32));

        // One client running; a second one is dismissed.
        let mut a = TcpStream::connect(addr).unwrap();
        a.write_all_msg(97, op::PROBE, &pdu::client_probe(0, "x"));
        a.write_all_msg(97, op::JOB, &pdu::job("[x]\n"));
        a.write_all_msg(97, op::RUN, &[]);
        std::thread::sleep(Duration::from_millis(300));
        let mut b = TcpStream::connect(addr).unwrap();
        b.write_all_msg(97, op::PROBE, &pdu::client_probe(0, "x"));
        b.write_all_msg(97, op::JOB, &pdu::job("[x]\n"));
        let m = read_all(&mut b, 97);
        assert!(texts(&m).contains("busy"), "{}", texts(&m));
        assert_eq!(stop_error(&m), Some(Refusal::Busy as u32));

        // The stop flag ends the run (its results still go back) and serve.
        let t0 = Instant::now();
        stop.store(true, Relaxed);
        serving.join().unwrap().unwrap();
        assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
        let ops: Vec<u16> = read_all(&mut a, 97).iter().map(|m| m.opcode).collect();
        assert!(ops.ends_with(&[op::STOP, op::QUIT]), "{ops:?}");
    });
}

#[test]
fn a_silent_connection_does_not_turn_the_next_client_away() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let serving = sc.spawn(|| server.serve(&Idle, &stop, None, &|_| {}));
        // One that connects and stays silent, one that connects and leaves,
        // both accepted before the client.
        let _silent = TcpStream::connect(addr).unwrap();
        drop(TcpStream::connect(addr).unwrap());
        std::thread::sleep(Duration::from_millis(120));
        let mut c = TcpStream::connect(addr).unwrap();
        c.write_all_msg(97, op::PROBE, &pdu::client_probe(0, "x"));
        let w = Wait {
            stop: &stop,
            deadline: Some(Instant::now() + Duration::from_secs(3)),
        };
        let m = wire::recv(&mut c, &[97], &w);
        stop.store(true, Relaxed);
        serving.join().unwrap().unwrap();
        let m = m.unwrap().unwrap();
        assert_eq!(m.opcode, op::PROBE, "{}", op::name(m.opcode));
    });
}

/// Admits no one.
struct Closed;

impl Runner for Closed {
    fn plan(&self, _: &JobRequest) -> Result<u32, String> {
        Ok(1)
    }
    fn run(&self, _: &JobRequest, _: u16, _: Arc<AtomicBool>) -> RunOutput {
        panic!("a client that was not admitted ran a job")
    }
    fn probe(&self) -> ProbeReply {
        ProbeReply::default()
    }
    fn admit(
        &self,
        _: &ssdready_fleet::server::Client,
    ) -> Result<ssdready_fleet::server::Identity, String> {
        Err("user nobody may not drive this server".into())
    }
}

#[test]
fn a_client_not_admitted_is_told_why_and_may_finish_sending() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let serving = sc.spawn(|| server.serve(&Closed, &stop, None, &|_| {}));
        let mut c = TcpStream::connect(addr).unwrap();
        // fio's client sends its whole job before reading: the refusal
        // must not close the socket under it (SIGPIPE in fio).
        c.write_all_msg(97, op::PROBE, &pdu::client_probe(0, "x"));
        std::thread::sleep(Duration::from_millis(200));
        c.write_all_msg(97, op::JOB, &pdu::job("[x]\n"));
        c.write_all_msg(97, op::RUN, &[]);
        let m = read_all(&mut c, 97);
        stop.store(true, Relaxed);
        serving.join().unwrap().unwrap();
        let t = pdu::parse_text(&m[0].payload).unwrap();
        assert!(t.contains("may not drive this server"), "{t}");
        assert_eq!(m.last().unwrap().opcode, op::QUIT);
        assert_eq!(stop_error(&m), Some(Refusal::NotAdmitted as u32));
    });
}

/// Runs nothing, at once.
struct Quick;

impl Runner for Quick {
    fn plan(&self, _: &JobRequest) -> Result<u32, String> {
        Ok(1)
    }
    fn run(&self, _: &JobRequest, _: u16, _: Arc<AtomicBool>) -> RunOutput {
        RunOutput::default()
    }
    fn probe(&self) -> ProbeReply {
        ProbeReply::default()
    }
}

/// A whole run (PROBE, JOB, RUN) on `addr`: the messages back.
fn one_run(addr: std::net::SocketAddr) -> Vec<wire::Message> {
    let mut c = TcpStream::connect(addr).unwrap();
    c.write_all_msg(97, op::PROBE, &pdu::client_probe(0, "x"));
    c.write_all_msg(97, op::JOB, &pdu::job("[x]\n"));
    c.write_all_msg(97, op::RUN, &[]);
    read_all(&mut c, 97)
}

/// The error the STOP among `m` carries (0: the run's results), if any.
fn stop_error(m: &[wire::Message]) -> Option<u32> {
    m.iter()
        .find(|m| m.opcode == op::STOP)
        .map(|m| pdu::parse_stop(&m.payload).unwrap().0)
}

fn texts(m: &[wire::Message]) -> String {
    m.iter()
        .filter(|m| m.opcode == op::TEXT)
        .filter_map(|m| pdu::parse_text(&m.payload).ok())
        .collect()
}

#[test]
fn a_client_that_probes_and_says_nothing_does_not_hold_the_server() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    // The default silences (5 s, 10 s): the other client is served well
    // within them, so only not holding the server lets it through.
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let serving = sc.spawn(|| server.serve(&Quick, &stop, None, &|_| {}));
        let mut silent = TcpStream::connect(addr).unwrap();
        silent.write_all_msg(97, op::PROBE, &pdu::client_probe(0, "x"));
        let w = Wait {
            stop: &stop,
            deadline: Some(Instant::now() + Duration::from_secs(3)),
        };
        assert_eq!(
            wire::recv(&mut silent, &[97], &w).unwrap().unwrap().opcode,
            op::PROBE
        );
        let m = one_run(addr);
        stop.store(true, Relaxed);
        serving.join().unwrap().unwrap();
        assert!(!texts(&m).contains("busy"), "{}", texts(&m));
        assert_eq!(stop_error(&m), Some(0), "no results");
    });
}

#[test]
fn forty_silent_connections_do_not_hold_the_server() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let serving = sc.spawn(|| server.serve(&Quick, &stop, None, &|_| {}));
        let mute: Vec<TcpStream> = (0..40).map(|_| TcpStream::connect(addr).unwrap()).collect();
        // They are all accepted before the client comes (the listener
        // takes them in order).
        let m = one_run(addr);
        stop.store(true, Relaxed);
        serving.join().unwrap().unwrap();
        drop(mute);
        assert!(!texts(&m).contains("busy"), "{}", texts(&m));
        assert_eq!(stop_error(&m), Some(0), "no results");
    });
}

#[test]
fn a_client_that_claims_the_server_and_goes_silent_is_let_go() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let limits = Limits {
        first_wait: Duration::from_millis(300),
        idle: Duration::from_millis(300),
    };
    let server = Server::bind("127.0.0.1:0".parse().unwrap())
        .unwrap()
        .with_limits(limits);
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let serving = sc.spawn(|| server.serve(&Quick, &stop, None, &|_| {}));
        // PROBE and a job, then nothing: the server is claimed, then let go.
        let mut silent = TcpStream::connect(addr).unwrap();
        silent.write_all_msg(97, op::PROBE, &pdu::client_probe(0, "x"));
        silent.write_all_msg(97, op::JOB, &pdu::job("[x]\n"));
        let m = read_all(&mut silent, 97);
        assert!(texts(&m).contains("let go"), "{}", texts(&m));
        assert_eq!(stop_error(&m), Some(Refusal::Quiet as u32));
        let m = one_run(addr);
        stop.store(true, Relaxed);
        serving.join().unwrap().unwrap();
        assert_eq!(stop_error(&m), Some(0), "no results");
    });
}

#[test]
fn a_huge_first_message_is_refused_before_it_is_read_whole() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let server = Server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let serving = sc.spawn(|| server.serve(&Idle, &stop, None, &|_| {}));
        let mut c = TcpStream::connect(addr).unwrap();
        let big = vec![b'x'; 1 << 20];
        // The server stops reading after 64 KiB: the rest may not go out.
        let sent = std::io::Write::write_all(&mut c, &wire::encode(97, op::JOB, 0, &big));
        let mut rest = Vec::new();
        let _ = c.set_read_timeout(Some(Duration::from_secs(3)));
        let got = std::io::Read::read_to_end(&mut c, &mut rest);
        stop.store(true, Relaxed);
        serving.join().unwrap().unwrap();
        assert!(
            sent.is_err() || got.is_err() || rest.is_empty(),
            "{} bytes back",
            rest.len()
        );
    });
}

trait SendMsg {
    fn write_all_msg(&mut self, version: u16, opcode: u16, payload: &[u8]);
}

impl SendMsg for TcpStream {
    fn write_all_msg(&mut self, version: u16, opcode: u16, payload: &[u8]) {
        use std::io::Write;
        self.write_all(&wire::encode(version, opcode, 0, payload))
            .unwrap();
    }
}
