//! A full or closed standard output is an error like any other: one line
//! on stderr, exit code 1, never a panic and never a silent loss, for every
//! command that prints (only the binary can show this: it is how the
//! process meets its output).

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::process::{Command, Stdio};

/// Every command here prints on standard output and needs nothing else.
fn commands(dir: &std::path::Path) -> Vec<Vec<String>> {
    let man = dir.join("man").display().to_string();
    [
        vec!["completions", "bash"],
        vec!["completions", "fish"],
        vec!["man", &man],
        vec!["emu", "list"],
        vec!["emu", "presets"],
        vec!["options"],
        vec!["options", "--markdown"],
        vec!["history"],
    ]
    .into_iter()
    .map(|v| v.into_iter().map(String::from).collect())
    .collect()
}

/// A pipe whose reader is already gone: the write end of a FIFO whose
/// only reader was closed.
fn closed_pipe(dir: &std::path::Path) -> File {
    let p = dir.join("fifo");
    if !p.exists() {
        let ok = Command::new("mkfifo").arg(&p).status().unwrap().success();
        assert!(ok, "mkfifo");
    }
    let reader = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&p)
        .unwrap();
    let writer = OpenOptions::new().write(true).open(&p).unwrap();
    drop(reader);
    writer
}

/// Run `args` with `out` as standard output and a history of its own in
/// `dir` (empty); (exit code, stderr).
fn run_into(args: &[String], dir: &std::path::Path, out: File) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ssdready"))
        .args(args)
        .env("XDG_DATA_HOME", dir)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into())
}

fn one_line_exit_1(args: &[String], code: Option<i32>, err: &str, want: &str) -> Option<String> {
    let lines = err.lines().count();
    let ok = code == Some(1) && lines == 1 && err.contains(want) && !err.contains("panic");
    (!ok).then(|| format!("{args:?}: exit {code:?}, {lines} lines: {err}"))
}

#[test]
fn a_full_stdout_is_one_line_and_exit_1() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let bad: Vec<String> = commands(d.path())
        .iter()
        .filter_map(|a| {
            let full = OpenOptions::new().write(true).open("/dev/full").unwrap();
            let (code, err) = run_into(a, d.path(), full);
            one_line_exit_1(a, code, &err, "No space left on device")
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}

#[test]
fn a_closed_stdout_is_one_line_and_exit_1() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let d = tempfile::tempdir().unwrap();
    let bad: Vec<String> = commands(d.path())
        .iter()
        .filter_map(|a| {
            let (code, err) = run_into(a, d.path(), closed_pipe(d.path()));
            one_line_exit_1(a, code, &err, "Broken pipe")
        })
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
}
