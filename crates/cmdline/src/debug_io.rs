//! fio's `--debug=io`: one line per I/O, in fio's layout
//! (`io       PID   complete: io_u 0x0: off=0x…,len=0x…,ddir=N,file=NAME`).
//!
//! The worker loop does not print: each job records what it issues as
//! fio's iolog (the `write_iolog` recorder, which costs nothing to a job
//! that does not ask for it) into a private directory, and the lines are
//! made from those logs when the run ends, before its results. What
//! differs from fio: the lines come after the I/O, job by job in issue
//! order, and `io_u` is not an address (ssdready has no io_u). A job that
//! names its own `write_iolog` keeps it; its lines come from that file.
//!
//! `--debug=verify` is made from the same logs: for a job with `verify`,
//! each write's `fill` lines, and each read's `get_next_verify` and
//! `METHOD verify` lines, the reads after the job's last write between
//! fio's `starting loop` and `exiting loop` (fio prints them as they
//! happen; `io_u` is 0x0 here too).

use crate::args::RunArgs;
use ssdready_core::options::RawOption;
use ssdready_core::spec::JobSpec;
use std::fmt::Write as _;
use std::path::PathBuf;

/// The logs a run with `--debug=io` records, and the private directory
/// that holds those ssdready added.
pub struct DebugIo {
    dir: PathBuf,
    /// Every log to read, in job then clone order, with the job's verify
    /// method when it verifies.
    logs: Vec<(PathBuf, Option<&'static str>)>,
    /// `--debug=io`.
    io: bool,
    /// `--debug=verify`.
    verify: bool,
}

impl DebugIo {
    /// `--debug=io` for the run `parsed` asks for, if it asks; a request
    /// that does not resolve is left to the run to refuse.
    pub fn for_run(parsed: &mut RunArgs) -> Result<Option<DebugIo>, String> {
        let (io, verify) = (parsed.fio.debugs("io"), parsed.fio.debugs("verify"));
        if !(io || verify) || parsed.parse_only {
            return Ok(None);
        }
        let request = parsed.request(std::sync::Arc::default());
        match ssdready_run::validate::jobs(&request) {
            Ok(specs) => DebugIo::prepare(parsed, &specs).map(|mut d| {
                (d.io, d.verify) = (io, verify);
                Some(d)
            }),
            Err(_) => Ok(None),
        }
    }

    /// Give each job of `parsed` without a `write_iolog` one in a new
    /// private directory (mode 0700, under the temporary directory).
    /// `specs` are the jobs as resolved, one per job section.
    pub fn prepare(parsed: &mut RunArgs, specs: &[JobSpec]) -> Result<DebugIo, String> {
        let dir = std::env::temp_dir().join(format!(
            "ssdready-debug-io-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos())
        ));
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(&dir)
                .map_err(|e| format!("option '--debug=io': {}: {e}", dir.display()))?;
        }
        let mut debug = DebugIo {
            dir,
            logs: Vec::new(),
            io: true,
            verify: false,
        };
        // Without a job section the globals form the one job (`job`): its
        // options go to the last global section.
        let has_jobs = parsed.sections.iter().any(|s| !s.global);
        let last = parsed.sections.len().saturating_sub(1);
        let jobs = parsed
            .sections
            .iter_mut()
            .enumerate()
            .filter(|(i, s)| !s.global || (!has_jobs && *i == last))
            .map(|(_, s)| s);
        for (i, (section, spec)) in jobs.zip(specs).enumerate() {
            let method = spec.verify.method.map(|m| m.name());
            match &spec.iolog.write {
                Some(own) => debug.logs.extend(
                    own.split(':')
                        .filter(|n| !n.is_empty())
                        .map(|n| (PathBuf::from(n), method)),
                ),
                None => {
                    let names: Vec<PathBuf> = (0..spec.numjobs.max(1))
                        .map(|c| debug.dir.join(format!("job{i}.{c}.iolog")))
                        .collect();
                    let joined: Vec<String> =
                        names.iter().map(|p| p.display().to_string()).collect();
                    section
                        .options
                        .push(RawOption::cli("write_iolog", Some(&joined.join(":"))));
                    debug.logs.extend(names.into_iter().map(|n| (n, method)));
                }
            }
        }
        Ok(debug)
    }

    /// The lines of every log that was written; ssdready's own logs and
    /// their directory are removed.
    pub fn finish(self) -> String {
        let pid = std::process::id();
        let mut out = String::new();
        for (log, method) in &self.logs {
            if let Ok(text) = std::fs::read_to_string(log) {
                let method = method.filter(|_| self.verify);
                lines(&text, pid, self.io, method, &mut out);
            }
        }
        out
    }
}

impl Drop for DebugIo {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// fio's `ddir` numbers (`enum fio_ddir`).
fn ddir(action: &str) -> Option<u8> {
    Some(match action {
        "read" => 0,
        "write" => 1,
        "trim" => 2,
        "sync" => 3,
        "datasync" => 4,
        _ => return None,
    })
}

/// One request of an iolog (version 3: `TIME FILE ACTION OFFSET
/// LENGTH`): (ddir, offset, length, file); None for the file's own lines.
fn request(l: &str) -> Option<(u8, u64, u64, &str)> {
    let mut f = l.rsplitn(4, ' ');
    let (len, off, action, head) = (f.next()?, f.next()?, f.next()?, f.next()?);
    let (d, off, len) = (ddir(action)?, off.parse().ok()?, len.parse().ok()?);
    let file = head.split_once(' ').map_or(head, |(_, name)| name);
    Some((d, off, len, file))
}

/// fio's `--debug=io` completion lines of one iolog (with `io`) and its
/// `--debug=verify` lines (with the job's verify `method`).
fn lines(iolog: &str, pid: u32, io: bool, method: Option<&str>, out: &mut String) {
    let reqs: Vec<(u8, u64, u64, &str)> = iolog.lines().skip(1).filter_map(request).collect();
    let last_write = reqs.iter().rposition(|r| r.0 == 1);
    let verify = |out: &mut String, what: &str| {
        let _ = writeln!(out, "{:<8} {:<5} {what}", "verify", pid);
    };
    let mut in_loop = false;
    for (i, &(d, off, len, file)) in reqs.iter().enumerate() {
        if let (Some(m), 1) = (method, d) {
            if !m.starts_with("pattern") {
                verify(out, &format!("fill random bytes len={len}"));
            }
            verify(out, &format!("fill {m} io_u 0x0, len {len}"));
        }
        if let (Some(m), 0) = (method, d) {
            if last_write.is_some_and(|w| i > w) && !in_loop {
                in_loop = true;
                verify(out, "starting loop");
            }
            if last_write.is_some() {
                verify(out, "get_next_verify: ret io_u 0x0");
            }
            verify(out, &format!("{m} verify io_u 0x0, len {len}"));
        }
        if io {
            let _ = writeln!(
                out,
                "{:<8} {:<5} complete: io_u 0x0: off=0x{off:x},len=0x{len:x},ddir={d},file={file}",
                "io", pid
            );
        }
    }
    if in_loop {
        verify(out, "get_next_verify: empty");
        verify(out, "exiting loop");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_request_of_an_iolog_is_one_completion_line_in_fios_layout() {
        let log = "fio version 3 iolog\n0 /tmp/a b add\n0 /tmp/a b open\n\
                   3 /tmp/a b read 4096 512\n9 /tmp/a b write 0 4096\n\
                   12 /tmp/a b sync 4096 0\n20 /tmp/a b close\n";
        let mut out = String::new();
        lines(log, 7, true, None, &mut out);
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(
            got,
            [
                "io       7     complete: io_u 0x0: off=0x1000,len=0x200,ddir=0,file=/tmp/a b",
                "io       7     complete: io_u 0x0: off=0x0,len=0x1000,ddir=1,file=/tmp/a b",
                "io       7     complete: io_u 0x0: off=0x1000,len=0x0,ddir=3,file=/tmp/a b",
            ]
        );
    }

    #[test]
    fn a_verifying_jobs_log_gives_fios_verify_lines() {
        let log = "fio version 3 iolog\n0 f add\n0 f open\n1 f write 0 4096\n\
                   2 f write 4096 4096\n3 f read 0 4096\n4 f read 4096 4096\n5 f close\n";
        let mut out = String::new();
        lines(log, 9, false, Some("crc32c"), &mut out);
        let fill = [
            "verify   9     fill random bytes len=4096",
            "verify   9     fill crc32c io_u 0x0, len 4096",
        ];
        let check = [
            "verify   9     get_next_verify: ret io_u 0x0",
            "verify   9     crc32c verify io_u 0x0, len 4096",
        ];
        let mut want: Vec<&str> = Vec::new();
        want.extend(fill);
        want.extend(fill);
        want.push("verify   9     starting loop");
        want.extend(check);
        want.extend(check);
        want.extend([
            "verify   9     get_next_verify: empty",
            "verify   9     exiting loop",
        ]);
        assert_eq!(out.lines().collect::<Vec<_>>(), want);
        // With io as well, each request's io line follows its verify lines.
        let mut both = String::new();
        lines(log, 9, true, Some("crc32c"), &mut both);
        assert_eq!(
            both.lines().nth(2).unwrap().split_whitespace().nth(2),
            Some("complete:")
        );
    }
}
