//! ssdready called as `fio` (a link named `fio` to the binary): fio's
//! command line dispatched: `--version`, `--help`, `--debug=?`,
//! `--inflate-log=FILE`, `--server`/`--daemonize` (onto `ssdready server`),
//! else a run with fio's defaults. What fio mode is (its usage, version,
//! the compressed logs) is `ssdready_cmdline::fio_mode`.

use crate::fail;
use ssdready_cmdline::fio_mode::{inflate, read_log, version_line, USAGE};
use std::io::Write as _;
use std::path::Path;

/// Run as fio with `args` (the arguments after the program name).
pub fn main(args: Vec<String>) -> crate::Done {
    if args.is_empty() {
        crate::stdout::outln!("{USAGE}")?;
        return Err(crate::Exit(1));
    }
    for a in &args {
        let body = a.trim_start_matches('-');
        let (k, v) = body.split_once('=').unwrap_or((body, ""));
        let dashed = a.starts_with('-');
        match (dashed, k) {
            (true, "version" | "v") => {
                return crate::stdout::outln!("{}", version_line(env!("SSDREADY_VERSION")));
            }
            (true, "help" | "h") => {
                return crate::stdout::outln!("{USAGE}");
            }
            (true, "debug") if v == "?" => {
                for (name, what) in ssdready_cmdline::fioswitch::DEBUG_CLASSES {
                    crate::stdout::outln!("{name:<14}{what}")?;
                }
                return Ok(());
            }
            (true, "inflate-log") => return inflate_log(v),
            (true, "server" | "daemonize") => match crate::server_cmd::fio_switches(&args) {
                Some(Ok(a)) => return crate::server_cmd::command(a),
                Some(Err(e)) => return Err(fail(2, &e)),
                None => return Err(fail(
                    2,
                    "option '--daemonize': needs --server (allowed: --server=[ip:]HOST[,PORT] --daemonize=FILE)",
                )),
            },
            _ => {}
        }
    }
    // fio's defaults (the psync engine: a job without a filename uses fio's
    // files rather than the emulator) are set in `run_command`.
    crate::run_command(&args, false, true)
}

/// `--inflate-log=FILE`: a `NAME.log.fz` (zlib streams of fio's binary
/// samples) printed as fio's text log. A file that is not a regular file,
/// is not a compressed log, or holds more than
/// [`MAX_LOG`](ssdready_cmdline::fio_mode::MAX_LOG) bytes, read or
/// inflated, is refused in one line (exit 2).
fn inflate_log(path: &str) -> crate::Done {
    if path.is_empty() {
        return Err(fail(
            2,
            "option '--inflate-log': needs a file (allowed: a NAME.log.fz log)",
        ));
    }
    let text = read_log(Path::new(path))
        .and_then(|bytes| inflate(&bytes))
        .map_err(|e| fail(2, &format!("option '--inflate-log': {path}: {e}")))?;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    Ok(())
}
