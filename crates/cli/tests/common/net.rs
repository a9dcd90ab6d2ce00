//! Servers on loopback for the fleet tests: a free port, and a process in
//! its own process group that listens on it, killed (the whole group) on
//! drop.

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.0.wait();
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
