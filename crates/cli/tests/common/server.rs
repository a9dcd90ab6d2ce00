//! A server of a test's own and the places around it, for the tests of what
//! a client may reach: `allowed` (the client's directory, given with
//! `--allow-dir`), `outside` (files the client must not read, write or
//! delete: `secret` and `victim`), and `hook` (where a run says it has
//! checked its job and waits to be let go, `SSDREADY_SERVER_JOB_HOOK`).
//! With a second user, the client is that user and `outside` is root's,
//! mode 0700; otherwise the client is this test's own user, and only the
//! confinement of the job's process keeps it out.

use super::net::{free_port, spawn_listening, Proc, Within};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

pub const BIN: &str = env!("CARGO_BIN_EXE_ssdready");

/// What `outside/secret` holds: no output may quote it.
pub const SECRET: &str = "root-secret-first-line";

/// The second account of this machine, when this test runs as root and it
/// exists (`cloudsdk`, uid 1000).
pub fn second_user() -> Option<(&'static str, u32)> {
    let out = Command::new("id").args(["-u", "cloudsdk"]).output().ok()?;
    let uid = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    (super::is_root() && out.status.success()).then_some(("cloudsdk", uid))
}

pub struct Fixture {
    pub base: tempfile::TempDir,
    pub allowed: PathBuf,
    pub outside: PathBuf,
    pub hook: PathBuf,
    pub user: Option<(&'static str, u32)>,
    pub port: u16,
    _server: Proc,
}

/// Give `p` to `uid` (not following a link).
pub fn give(p: &Path, uid: Option<u32>) {
    if let Some(u) = uid {
        std::os::unix::fs::lchown(p, Some(u), Some(u)).unwrap();
    }
}

impl Fixture {
    /// A server that lets `user` (or this test's user) use `allowed`, with
    /// `extra` switches; `hook`: runs wait at the hook.
    pub fn new(user: Option<(&'static str, u32)>, hook: bool, extra: &[&str]) -> Fixture {
        let base = tempfile::tempdir().unwrap();
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        let uid = user.map(|u| u.1);
        let allowed = base.path().join("allowed");
        let outside = base.path().join("outside");
        let hook_dir = allowed.join("hook");
        std::fs::create_dir_all(&hook_dir).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o700)).unwrap();
        give(&allowed, uid);
        give(&hook_dir, uid);
        let secret = outside.join("secret");
        std::fs::write(&secret, format!("{SECRET}\nmore\n")).unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(outside.join("victim"), "original").unwrap();
        let port = free_port();
        let mut cmd = Command::new(BIN);
        cmd.args(["server", "--port", &port.to_string(), "--directory"])
            .arg(base.path().join("srv"))
            .arg("--allow-dir")
            .arg(&allowed)
            .args(extra);
        if let Some((name, _)) = user {
            cmd.args(["--allow-user", name]);
        }
        if hook {
            cmd.env("SSDREADY_SERVER_JOB_HOOK", &hook_dir);
        }
        let server = spawn_listening(&mut cmd, port);
        Fixture {
            base,
            allowed,
            outside,
            hook: hook_dir,
            user,
            port,
            _server: server,
        }
    }

    pub fn uid(&self) -> Option<u32> {
        self.user.map(|u| u.1)
    }

    /// fio's client, as the fixture's user, runs `job` (a job file's
    /// text) on the server: everything it printed, and whether it
    /// succeeded.
    pub fn fio(&self, job: &str) -> (String, bool) {
        let jf = self.allowed.join(format!("job-{}.fio", rand_name()));
        std::fs::write(&jf, job).unwrap();
        give(&jf, self.uid());
        let line = format!(
            "fio --client=127.0.0.1,{} {} --output-format=json",
            self.port,
            jf.display()
        );
        let mut cmd = match self.user {
            Some((name, _)) => {
                let mut c = Command::new("su");
                c.args([name, "-s", "/bin/sh", "-c", &line]);
                c
            }
            None => {
                let mut c = Command::new("sh");
                c.args(["-c", &line]);
                c
            }
        };
        let out = cmd.output_in_time();
        let _ = std::fs::remove_file(&jf);
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        (text, out.status.success())
    }

    /// Run `job` while `swap` is done at the hook (after the run checked
    /// its job, before it opens anything): what fio's client printed. The
    /// run must reach the hook.
    pub fn fio_swapping(&self, job: &str, swap: impl FnOnce() + Send) -> String {
        let (text, reached) = self.fio_swapping_or_refused(job, swap);
        assert!(reached, "the run never reached its hook: {text}");
        text
    }

    /// [`Fixture::fio_swapping`] for a job that may also be refused by its
    /// check: what fio's client printed, and whether the hook was reached.
    pub fn fio_swapping_or_refused(&self, job: &str, swap: impl FnOnce() + Send) -> (String, bool) {
        use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
        let checked = self.hook.join("checked");
        let go = self.hook.join("go");
        let _ = std::fs::remove_file(&checked);
        let _ = std::fs::remove_file(&go);
        let done = AtomicBool::new(false);
        let (text, reached) = std::thread::scope(|sc| {
            let waiter = sc.spawn(|| {
                while !checked.exists() && !done.load(SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                let reached = checked.exists();
                if reached {
                    swap();
                    std::fs::write(&go, "").unwrap();
                }
                reached
            });
            let (text, _) = self.fio(job);
            done.store(true, SeqCst);
            (text, waiter.join().unwrap())
        });
        (text, reached)
    }

    /// `outside/victim` as it must stay.
    pub fn assert_untouched(&self, what: &str, text: &str) {
        let v = std::fs::read_to_string(self.outside.join("victim"));
        assert_eq!(v.ok().as_deref(), Some("original"), "{what}: {text}");
        let s = std::fs::read_to_string(self.outside.join("secret")).unwrap();
        assert!(s.starts_with(SECRET), "{what}");
        assert!(!text.contains(SECRET), "{what} quoted the secret: {text}");
    }
}

/// A name no other test of this process uses.
pub fn rand_name() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}
