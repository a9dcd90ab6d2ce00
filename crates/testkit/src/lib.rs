//! What the crates' integration test binaries share. Each crate's
//! `tests/*.rs` build as one binary (`tests/main.rs`, every file a module);
//! tests of one file may run at the same time as each other, never beside
//! another file's: each takes [`one_file_at_a_time`] first, as separate
//! binaries ran one after another. A test that reads the whole machine's
//! counters or changes a global switch is then no more disturbed than it
//! was in a binary of its own.

use std::sync::{Condvar, Mutex};
use std::time::Instant;

/// Where each file's turns are logged, when set: a line per turn, with
/// the file and its seconds (how long each file holds the machine).
const TURNS_LOG: &str = "SSDREADY_TEST_TURNS";

/// When the current turn began.
static TURN_BEGAN: Mutex<Option<Instant>> = Mutex::new(None);

/// The file whose tests hold the machine, and how many of them run.
static TURN: Mutex<(Option<&'static str>, usize)> = Mutex::new((None, 0));
static TURN_ENDED: Condvar = Condvar::new();

/// Held while a test runs: its file's turn.
pub struct FileTurn;

/// Wait until no other file's test runs, then run beside this file's own.
/// `module` is the test's `module_path!()`: its file is the part after the
/// binary's name.
pub fn one_file_at_a_time(module: &'static str) -> FileTurn {
    let file = module.split("::").nth(1).unwrap_or(module);
    let mut t = TURN.lock().unwrap_or_else(|e| e.into_inner());
    while t.0.is_some_and(|f| f != file) {
        t = TURN_ENDED.wait(t).unwrap_or_else(|e| e.into_inner());
    }
    if t.1 == 0 {
        *TURN_BEGAN.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }
    *t = (Some(file), t.1 + 1);
    FileTurn
}

/// Append `file`'s turn of `secs` to the turns log, where one is asked for.
fn log_turn(file: &str, secs: f64) {
    use std::io::Write;
    let Some(path) = std::env::var_os(TURNS_LOG) else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{secs:.1} {file}");
    }
}

impl Drop for FileTurn {
    fn drop(&mut self) {
        let mut t = TURN.lock().unwrap_or_else(|e| e.into_inner());
        t.1 -= 1;
        if t.1 == 0 {
            let began = TURN_BEGAN.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let (Some(file), Some(b)) = (t.0, began) {
                log_turn(file, b.elapsed().as_secs_f64());
            }
            t.0 = None;
            TURN_ENDED.notify_all();
        }
    }
}

/// The environment variable that marks a test's own second run.
const UMASK_CHILD: &str = "SSDREADY_TEST_UMASK_000";

/// For a test that must make files under umask 000: the umask is
/// process-wide, and other tests of the binary make directories meanwhile,
/// so the test runs again, alone, in a process of its own started under
/// umask 000. Returns true in that second run (go on with the test);
/// in the first it checks that the second passed and returns false.
/// `name` is the test's full path as the harness lists it.
pub fn in_a_process_under_umask_000(name: &str) -> bool {
    if std::env::var_os(UMASK_CHILD).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg("umask 000 && exec \"$0\" \"$@\"")
        .arg(&exe)
        .args(["--exact", name, "--test-threads=1"])
        .env(UMASK_CHILD, "1")
        .output()
        .expect("run the test binary again");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("1 passed"),
        "{name} under umask 000: {said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}
