//! fio's global switches, read by `run` and by ssdready called as `fio`:
//! `--max-jobs`, `--debug`, `--readonly`, `--aux-path`, `--warnings-fatal`,
//! `--alloc-size`, `--stderr-notes`, and the `--trigger*` family (refused:
//! running a command on a remote trigger is not built). They may appear
//! anywhere on the command line, before or after a `--name`, as in fio.

use ssdready_core::options::{RawOption, Section};
use ssdready_core::spec::JobSpec;
use ssdready_core::steady::{SsCriterion, SsMetric};
use ssdready_core::SpecError;
use std::path::PathBuf;

/// fio's debug classes (`fio --debug=?`), each with what it shows here.
pub const DEBUG_CLASSES: &[(&str, &str)] = &[
    (
        "process",
        "process creation and exit (accepted; prints nothing here)",
    ),
    ("file", "file handling (accepted; prints nothing here)"),
    (
        "io",
        "the I/Os, one completion line each in fio's layout, printed when the run ends",
    ),
    ("mem", "memory allocation (accepted; prints nothing here)"),
    (
        "blktrace",
        "blktrace replay (accepted; prints nothing here)",
    ),
    ("verify", "verification: each block filled and checked, in fio's lines (made from the job's iolog when the run ends)"),
    (
        "random",
        "the seeds of each worker's generators, in the output",
    ),
    ("parse", "each job option as it is read, on stdout"),
    (
        "diskutil",
        "disk utilization (accepted; prints nothing here)",
    ),
    ("job", "job setup (accepted; prints nothing here)"),
    ("mutex", "locking (accepted; prints nothing here)"),
    ("profile", "profiles (accepted; prints nothing here)"),
    ("time", "time keeping (accepted; prints nothing here)"),
    ("net", "network engine (accepted; prints nothing here)"),
    ("rate", "rate limiting (accepted; prints nothing here)"),
    (
        "compress",
        "log compression (accepted; prints nothing here)",
    ),
    (
        "steadystate",
        "steady-state detection (accepted; prints nothing here)",
    ),
    (
        "helperthread",
        "the helper thread (accepted; prints nothing here)",
    ),
    ("zbd", "zoned block devices (accepted; prints nothing here)"),
];

/// The switches this module reads (for fio's one-dash spelling).
pub const NAMES: &[&str] = &[
    "max-jobs",
    "debug",
    "readonly",
    "aux-path",
    "warnings-fatal",
    "alloc-size",
    "stderr-notes",
    "trigger",
    "trigger-file",
    "trigger-timeout",
    "trigger-remote",
];

/// Those of [`NAMES`] that take a value (also as the next argument).
pub const VALUE_NAMES: &[&str] = &[
    "max-jobs",
    "debug",
    "aux-path",
    "alloc-size",
    "trigger",
    "trigger-file",
    "trigger-timeout",
    "trigger-remote",
];

/// The fio global switches given.
#[derive(Debug, Default)]
pub struct FioSwitches {
    /// `--max-jobs=N`: the most jobs (clones counted) a run may start.
    pub max_jobs: Option<u64>,
    /// `--debug=LIST`: the classes asked for.
    pub debug: Vec<&'static str>,
    /// `--readonly`: a job that writes or trims is refused.
    pub readonly: bool,
    /// `--aux-path=DIR`: where verify-state files go.
    pub aux_path: Option<PathBuf>,
    /// `--warnings-fatal`: a run with warnings exits 1.
    pub warnings_fatal: bool,
    /// `--stderr-notes`: ssdready's notes and cross-check warnings on stderr
    /// as well as in the outputs (the default outside fio mode).
    pub stderr_notes: bool,
}

impl FioSwitches {
    /// Whether `--debug` named this class (or `all`).
    pub fn debugs(&self, class: &str) -> bool {
        self.debug.contains(&class)
    }
}

fn need<'a>(k: &str, v: Option<&'a str>, allowed: &str) -> Result<&'a str, SpecError> {
    v.filter(|v| !v.is_empty()).ok_or_else(|| {
        SpecError::new(
            &format!("--{k}"),
            format!("needs a value (allowed: {allowed})"),
        )
    })
}

/// Read switch `k` (value `v`) into `s`; Ok(false) when `k` is not one of
/// fio's global switches.
pub fn take(k: &str, v: Option<&str>, s: &mut FioSwitches) -> Result<bool, SpecError> {
    match k {
        "max-jobs" => {
            let v = need(k, v, "a number of jobs from 1")?;
            let n = v.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
                SpecError::new("--max-jobs", format!("'{v}' is not a number of jobs (allowed: 1 or more)"))
            })?;
            s.max_jobs = Some(n);
        }
        "debug" => s.debug = debug_classes(need(k, v, "a comma-separated list of debug classes, or all")?)?,
        "readonly" => s.readonly = true,
        "aux-path" => s.aux_path = Some(PathBuf::from(need(k, v, "a directory")?)),
        "warnings-fatal" => s.warnings_fatal = true,
        "stderr-notes" => s.stderr_notes = true,
        "alloc-size" => {
            let v = need(k, v, "a size in KiB")?;
            if v.parse::<u64>().ok().filter(|n| *n > 0).is_none() {
                return Err(SpecError::new(
                    "--alloc-size",
                    format!("'{v}' is not a size in KiB (allowed: a number from 1; ssdready has no shared pool to size, so it only checks it)"),
                ));
            }
        }
        "trigger" | "trigger-file" | "trigger-timeout" | "trigger-remote" => {
            return Err(SpecError::new(
                &format!("--{k}"),
                "is not supported yet: ssdready does not run trigger commands (allowed: leave it out)",
            ))
        }
        _ => return Ok(false),
    }
    Ok(true)
}

/// `--debug=LIST`: fio's class names, comma-separated, or `all`.
fn debug_classes(v: &str) -> Result<Vec<&'static str>, SpecError> {
    let mut out = Vec::new();
    for name in v.split(',').map(str::trim) {
        if name == "all" {
            return Ok(DEBUG_CLASSES.iter().map(|c| c.0).collect());
        }
        let Some(c) = DEBUG_CLASSES.iter().find(|c| c.0 == name) else {
            let names: Vec<&str> = DEBUG_CLASSES.iter().map(|c| c.0).collect();
            return Err(SpecError::new(
                "--debug",
                format!(
                    "'{name}' is not a debug class (allowed: {}, all)",
                    names.join(", ")
                ),
            ));
        };
        out.push(c.0);
    }
    Ok(out)
}

/// The lines of `--debug=parse`: each option as read, in fio's layout
/// (`parse    PID  MESSAGE`), with fio's own wording for a steady-state
/// criterion.
pub fn parse_debug_lines(sections: &[Section]) -> Vec<String> {
    let pid = std::process::id();
    let mut out = Vec::new();
    for o in sections
        .iter()
        .flat_map(|s| s.options.iter())
        .filter(|o| !o.is_tool_default())
    {
        let line = |m: String| format!("{:<8} {:<5} {m}", "parse", pid);
        out.push(line(option_text(o)));
        if matches!(o.key.as_str(), "ss" | "steadystate") {
            if let Some(m) = o.value.as_deref().and_then(steady_text) {
                out.push(line(m));
            }
        }
    }
    out
}

fn option_text(o: &RawOption) -> String {
    match &o.value {
        Some(v) => format!("handle_option={}, ptr={v}", o.key),
        None => format!("handle_option={}, ptr=(null)", o.key),
    }
}

/// fio's message for a steady-state criterion (`str_steadystate_cb`).
fn steady_text(v: &str) -> Option<String> {
    let c = SsCriterion::parse(v, 1024).ok()?;
    Some(match (c.percent, c.metric) {
        (true, _) => format!("set steady state threshold to {:.6}%", c.limit),
        (false, SsMetric::Iops) => format!("set steady state IOPS threshold to {:.6}", c.limit),
        (false, SsMetric::Bw) => format!("set steady state BW threshold to {}", c.limit as u64),
    })
}

/// The seeds of ssdready's generators per worker (`--debug=random`), in
/// fio's layout: `FIO_RAND_NR_OFFS=N`, then `rand_seeds[i]=SEED`. They
/// derive from the job's `randseed` (the clock's with `randrepeat=0` and no
/// `randseed`) and the worker's index, as the worker's plan seeds itself.
pub fn random_debug_lines(r: &ssdready_core::result::RunResult) -> Vec<String> {
    const SEEDS: u64 = 4;
    let pid = std::process::id();
    let line = |m: String| format!("{:<8} {:<5} {m}", "random", pid);
    let mut out = Vec::new();
    for j in &r.jobs {
        for w in 0..u64::from(j.spec.numjobs.max(1)) {
            let base = j.spec.randseed ^ w.wrapping_mul(0x2545_f491_4f6c_dd1d);
            out.push(line(format!("FIO_RAND_NR_OFFS={SEEDS}")));
            for i in 0..SEEDS {
                out.push(line(format!(
                    "rand_seeds[{i}]={}",
                    splitmix(base.wrapping_add(i))
                )));
            }
        }
    }
    out
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What `--readonly` and `--max-jobs` refuse in resolved jobs: one line.
pub fn check_jobs(s: &FioSwitches, specs: &[JobSpec]) -> Result<(), String> {
    if s.readonly {
        if let Some(j) = specs.iter().find(|j| j.rw.modifies() || j.rw.trims()) {
            return Err(format!(
                "job '{}': rw={} writes or trims, but --readonly is given (allowed: read, randread)",
                j.name,
                j.rw.name()
            ));
        }
        if let Some(j) = specs.iter().find(|j| j.verify.trims().is_some()) {
            return Err(format!(
                "job '{}': trim_percentage trims, but --readonly is given (allowed: trim_percentage=0)",
                j.name
            ));
        }
    }
    if let Some(max) = s.max_jobs {
        let n: u64 = specs.iter().map(|j| u64::from(j.numjobs.max(1))).sum();
        if n > max {
            return Err(format!(
                "option '--max-jobs': the jobs start {n} workers, more than --max-jobs={max} (allowed: at most {max})"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_are_read_and_bad_values_refused() {
        let mut s = FioSwitches::default();
        assert!(take("max-jobs", Some("16"), &mut s).unwrap());
        assert_eq!(s.max_jobs, Some(16));
        assert!(take("debug", Some("parse,io"), &mut s).unwrap());
        assert!(s.debugs("parse") && s.debugs("io") && !s.debugs("verify"));
        assert!(take("debug", Some("all"), &mut s).unwrap());
        assert!(s.debugs("verify"));
        assert!(take("readonly", None, &mut s).unwrap());
        assert!(s.readonly);
        assert!(!take("rw", Some("read"), &mut s).unwrap());
        for (k, v, want) in [
            (
                "max-jobs",
                Some("0"),
                "option '--max-jobs': '0' is not a number of jobs",
            ),
            (
                "debug",
                Some("nosuch"),
                "option '--debug': 'nosuch' is not a debug class",
            ),
            (
                "alloc-size",
                Some("x"),
                "option '--alloc-size': 'x' is not a size in KiB",
            ),
            (
                "trigger",
                Some("cmd"),
                "option '--trigger' is not supported yet",
            ),
            ("aux-path", None, "option '--aux-path': needs a value"),
        ] {
            let e = take(k, v, &mut s).unwrap_err().to_string();
            assert!(e.starts_with(want), "{k}: {e}");
        }
    }

    #[test]
    fn parse_debug_says_the_steady_state_criterion_as_fio_does() {
        let sec = Section {
            name: "global".into(),
            global: true,
            options: vec![
                RawOption::cli("ss", Some("iops:10")),
                RawOption::cli("ss", Some("iops:.1%")),
                RawOption::cli("ss", Some("bw:12")),
            ],
        };
        let text = parse_debug_lines(&[sec]).join("\n");
        for want in [
            "set steady state IOPS threshold to 10.000000",
            "set steady state threshold to 0.100000%",
            "set steady state BW threshold to 12",
        ] {
            assert!(text.contains(want), "{want} in {text}");
        }
    }
}
