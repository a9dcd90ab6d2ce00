//! What `run` leaves behind once the run is over: the result in every
//! format asked for, the verification failures and warnings on stderr,
//! the `--report` directory, and the run saved in the history database.

use crate::{fail, history, report, say};
use ssdready_cmdline::{args, fioswitch};
use ssdready_core::result::RunResult;
use ssdready_run::output;
use std::sync::atomic::AtomicBool;

/// The run's outputs: the result in every format asked for (after the
/// `--debug=io` lines, if any), the verification failures and warnings on
/// stderr, and the `--report` directory. A result that cannot be written ends the command (exit 1, or
/// 130 after a signal).
pub(crate) fn write_outputs(
    parsed: &args::RunArgs,
    sink: &output::Sink,
    result: &RunResult,
    io_lines: Option<String>,
    stop: &AtomicBool,
    notes_on_stderr: bool,
) -> crate::Done {
    let mut text = crate::render(&parsed.formats, result);
    if let Some(lines) = io_lines {
        text = lines + &text;
    }
    if parsed.fio.debugs("random") {
        let lines = fioswitch::random_debug_lines(result).join("\n");
        text = format!("{lines}\n{text}");
    }
    let written = output::write(sink, &text);
    crate::verify_failures_on_stderr(result);
    if notes_on_stderr || parsed.fio.warnings_fatal {
        for w in &result.warnings {
            eprintln!("ssdready: warning: {w}");
        }
    }
    if let Err(e) = written {
        let code = if stop.load(std::sync::atomic::Ordering::Relaxed) {
            130
        } else {
            1
        };
        return Err(fail(code, &format!("{e} (the run's results are lost)")));
    }
    if let Some(dir) = &parsed.report {
        match report::write_run(dir, result) {
            Ok(p) => eprintln!(
                "ssdready: wrote {} and {}",
                dir.join(report::RUN_JSON).display(),
                p.display()
            ),
            Err(e) => return Err(fail(1, &format!("option 'report': {e}"))),
        }
    }
    Ok(())
}

/// Save the run in the history database; false (with a warning) when that
/// failed.
pub(crate) fn save(h: &mut history::Recorder, result: &RunResult, quiet: bool) -> bool {
    match history::save_run(h, result) {
        Ok((id, p)) if !quiet => {
            say(&format!("saved as history #{id} ({})", p.display()));
            true
        }
        Ok(_) => true,
        Err(e) => {
            say(&format!(
                "warning: the run was not saved to the history: {e}"
            ));
            false
        }
    }
}
