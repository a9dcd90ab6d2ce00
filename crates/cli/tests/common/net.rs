//! Servers on loopback for the fleet tests: a free port, and a process in
//! its own process group that listens on it, killed (the whole group) on
//! drop. Every wait here has a deadline ([`Within`], [`accept_within`]): a
//! peer that misbehaves fails the test, saying what it waited for, rather
//! than hanging it.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long one client or server command of the fleet tests may take: the
/// slowest (a study of three hosts) takes about 10 s on an idle machine;
/// 120 s is a loaded machine's margin, and still ends a hung peer.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// `Command::output` with a deadline.
pub trait Within {
    /// Run to its end with stdout and stderr captured; past `limit`, kill
    /// its process group and panic with what it printed so far.
    fn output_within(&mut self, limit: Duration) -> Output;

    /// [`Within::output_within`] with [`DEADLINE`].
    fn output_in_time(&mut self) -> Output {
        self.output_within(DEADLINE)
    }
}

impl Within for Command {
    fn output_within(&mut self, limit: Duration) -> Output {
        let mut child = self
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("start {self:?}: {e}"));
        let drain = |r: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut buf);
                }
                buf
            })
        };
        let out = drain(child.stdout.take().map(|r| Box::new(r) as _));
        let err = drain(child.stderr.take().map(|r| Box::new(r) as _));
        let t0 = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if t0.elapsed() > limit {
                kill_group(&mut child);
                let err = err.join().unwrap_or_default();
                panic!(
                    "{self:?} did not finish within {limit:?}: {}",
                    String::from_utf8_lossy(&err)
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        Output {
            status,
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        }
    }
}

/// Kill `child`'s whole process group (it leads one) and reap it.
fn kill_group(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    // A child started in the test's own group has no group of its own to
    // kill: kill it by itself too, or the wait below never ends.
    let _ = child.kill();
    let _ = child.wait();
}

/// The first connection to `l` within [`DEADLINE`] (panics otherwise), with
/// reads and writes that give up after 10 s.
pub fn accept_within(l: &TcpListener) -> TcpStream {
    l.set_nonblocking(true).unwrap();
    let t0 = Instant::now();
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                s.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(t0.elapsed() < DEADLINE, "no connection within {DEADLINE:?}");
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
}

/// Whether fio runs here.
pub fn have_fio() -> bool {
    Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `fio --server` on loopback port `port`, ready.
pub fn fio_server(port: u16) -> Proc {
    let p = spawn_listening(
        Command::new("fio").arg(format!("--server=ip:127.0.0.1,{port}")),
        port,
    );
    // The readiness probe was a connection to fio: let it go by.
    std::thread::sleep(Duration::from_millis(100));
    p
}

/// `ssdready server` on loopback port `port`, ready.
pub fn ssdready_server(port: u16) -> Proc {
    ssdready_server_with(port, &[])
}

/// `ssdready server` on loopback port `port` with more switches (what it
/// allows), ready.
pub fn ssdready_server_with(port: u16, extra: &[&str]) -> Proc {
    spawn_listening(
        Command::new(env!("CARGO_BIN_EXE_ssdready"))
            .args(["server", "--port", &port.to_string()])
            .args(extra),
        port,
    )
}

/// A port free now (the kernel's choice).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A server process in its own process group, killed on drop.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        kill_group(&mut self.0);
    }
}

/// Start `cmd` (output discarded) and wait until `port` accepts a
/// connection. An `ssdready server` is claimed by a connection's first
/// message, so this readiness check leaves it free.
pub fn spawn_listening(cmd: &mut Command, port: u16) -> Proc {
    let p = Proc(
        cmd.stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap(),
    );
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "port {port} never listened"
        );
        std::thread::sleep(Duration::from_millis(30));
    }
    p
}
