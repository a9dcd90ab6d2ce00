//! The worker's side of data verification ([`ssdready_workload::verify`],
//! sequenced by [`ssdready_workload::jobflow`]): stamping a write's buffer
//! before it is queued, checking a read's buffer when it completes (every
//! failure recorded with its file, offset, check, expected and found; with
//! `verify_dump`, the block as read and as expected written beside the
//! run), and the verify state file (`verify_state_save`,
//! `verify_state_load`) in the current directory, as fio keeps it.

use ssdready_core::stats::WorkerStats;
use ssdready_core::Ddir;
use ssdready_io::EngineError;
use ssdready_workload::jobflow::JobFlow;
use ssdready_workload::verify::{state, Expect, Layout, Stamp};

/// errno EILSEQ: fio's error for a failed verification.
pub(super) const EILSEQ: i32 = 84;

/// Fill `buf` with the block a stamped write of `offset` carries.
pub(super) fn stamp(
    layout: &Layout,
    buf: &mut [u8],
    offset: u64,
    generation: u64,
    seed: u64,
    thread: u32,
) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let s = Stamp {
        seed,
        generation,
        thread: thread as u16,
        time_sec: now.as_secs() as u32,
        time_nsec: now.subsec_nanos(),
    };
    layout.fill(buf, offset, &s);
}

/// What a check found wrong, for the worker to count.
pub(super) struct Found {
    /// Failed checks.
    pub failures: usize,
}

/// How a job treats failed checks.
pub(super) struct Handling {
    /// `verify_fatal`: stop at the first failure of a block.
    pub fatal: bool,
    /// `verify_dump`.
    pub dump: bool,
    /// `continue_on_error=verify` (or `all`): count failures as errors
    /// gone past, not as the job's error.
    pub go_past: bool,
}

/// Check the block read from `offset` of `file` (named `name`) in `buf`;
/// record each failure in `stats`.
pub(super) fn check(
    layout: &Layout,
    buf: &mut [u8],
    name: &str,
    offset: u64,
    expect: &Expect,
    how: Handling,
    stats: &mut WorkerStats,
) -> Found {
    let (first_only, dump) = (how.fatal, how.dump);
    let received = dump.then(|| buf.to_vec());
    let failures = layout.check(buf, offset, expect, first_only);
    // The expected block can be made again when the write is known.
    let expected = match (dump && !failures.is_empty(), expect.generation, expect.seed) {
        (true, Some(generation), Some(seed)) => {
            let mut e = vec![0u8; buf.len()];
            let s = Stamp {
                seed,
                generation,
                ..Stamp::default()
            };
            layout.fill(&mut e, offset, &s);
            Some(e)
        }
        _ => None,
    };
    let v = stats.verify.get_or_insert_with(Box::default);
    v.blocks += 1;
    v.bytes += buf.len() as u64;
    let n = failures.len();
    for f in failures {
        if how.go_past {
            stats.go_past(EILSEQ, || format!("verify failed on {name}: {f}"));
        } else if stats.first_error.is_none() {
            stats.first_errno = EILSEQ;
            stats.first_error = Some(format!("verify failed on {name}: {f}"));
        }
        let at = (f.offset - offset) as usize..(f.offset - offset) as usize + f.len as usize;
        if let Some(r) = &received {
            dump_block(name, f.offset, "received", &r[at.clone()]);
        }
        if let Some(e) = &expected {
            dump_block(name, f.offset, "expected", &e[at]);
        }
        stats
            .verify
            .get_or_insert_with(Box::default)
            .record(name, f);
    }
    stats.errors += n as u64;
    Found { failures: n }
}

/// `verify_dump`: the interval as read (or as expected, its header's time
/// and worker left zero), as `BASENAME.OFFSET.received` (`.expected`) in
/// the current directory (fio's names).
fn dump_block(name: &str, offset: u64, what: &str, bytes: &[u8]) {
    let base = std::path::Path::new(name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "emu".into());
    let path = format!("{base}.{offset}.{what}");
    if let Err(e) = crate::output::replace(std::path::Path::new(&path), bytes) {
        crate::observer::notices::note(format!("verify_dump: writing {path}: {e}"));
    }
}

/// `verify_only`: the I/Os its dry run counted as done without doing
/// them go into the job's I/O and byte counts, as fio's `do_dry_run`
/// completes them. They carry no latency (none was measured), so the
/// latency figures and the cross-check with the kernel's count are the
/// real I/Os' alone.
pub(super) fn count_dry_run(flow: &mut JobFlow, stats: &mut WorkerStats) {
    for (d, (ios, bytes)) in [Ddir::Read, Ddir::Write, Ddir::Trim]
        .into_iter()
        .zip(flow.take_dry_run())
    {
        if ios > 0 {
            let s = stats.dir(d);
            s.ios += ios;
            s.bytes += bytes;
        }
    }
}

/// The most a verify state file may hold.
const MAX_STATE_BYTES: u64 = 16 << 20;

/// The state file of worker `number` (1-based in the run) of job `name`.
fn state_path(name: &str, number: u32) -> String {
    crate::auxpath::place(&state::file_name(name, u64::from(number.saturating_sub(1))))
}

/// `verify_state_load`: the saved state, or why it cannot be used.
pub(super) fn load_state(name: &str, number: u32) -> Result<state::SavedState, EngineError> {
    let path = state_path(name, number);
    // Bounded: a state file holds a few numbers per worker.
    let bytes = ssdready_io::written::read_file_capped(
        std::path::Path::new(&path),
        MAX_STATE_BYTES,
        &crate::stop::flag(),
    )
    .map_err(|e| match e.kind() {
        // Ctrl-C while waiting on a FIFO: the run is interrupted (130).
        std::io::ErrorKind::Interrupted => EngineError::Sys {
            what: "option 'verify_state_load'".into(),
            source: e,
        },
        _ => EngineError::Unsupported(format!(
            "option 'verify_state_load': cannot read {path}: {e} \
             (a job with verify_state_save writes it when it ends)"
        )),
    })?;
    state::SavedState::from_bytes(&bytes)
        .map_err(|e| EngineError::Unsupported(format!("option 'verify_state_load': {path}: {e}")))
}

/// `verify_state_save`: write the state when a verifying job that writes
/// ends; a failure is a warning on stderr, as in fio.
pub(super) fn save_state(flow: &JobFlow, name: &str, number: u32) {
    let path = state_path(name, number);
    let s = flow.saved_state(name, u64::from(number.saturating_sub(1)));
    if let Err(e) = crate::output::replace(std::path::Path::new(&path), &s.to_bytes()) {
        crate::observer::notices::warning(format!(
            "job '{name}': verify_state_save: writing {path}: {e}"
        ));
    }
}
