//! What a run is asked to do: its job sections, in the option table's own
//! form ([`Section`]s of [`RawOption`]s, as a job file or a command line
//! gives them), and the few switches that belong to the run rather than to
//! a job. Every option is checked when the run validates its jobs, by the
//! same table and the same checks as a job file's.
//!
//! The planners (the study, characterize, the strategies matrix) build
//! their runs as requests ([`RunRequest::job`], [`RunRequest::set`],
//! [`RunRequest::flag`]) and hand them to a [`RunFn`]; the command line
//! that repeats a run by hand is rendered from the request
//! ([`RunRequest::command_line`]), and [`RunRequest::options`] reads such
//! a command line back.

use crate::failure::Failure;
use ssdready_core::options::{RawOption, Section};
use ssdready_core::result::RunResult;
use ssdready_core::SpecError;
use std::fmt::Display;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Runs one request and gives its result: the binary's adapter over
/// [`crate::execute`] (with its progress display, the command's stop flag
/// and `--allow-destructive`), or a fake in a planner's tests. The one
/// seam between the planners and the run library.
pub type RunFn<'a> = dyn FnMut(&RunRequest) -> Result<RunResult, Failure> + 'a;

/// A run's request.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// Every section in effect order: globals, job files, jobs.
    pub sections: Vec<Section>,
    /// Writes to a device or file that holds data are allowed.
    pub allow_destructive: bool,
    /// fio's `--readonly`: no job may create, extend or remove a file (a
    /// job that writes or trims is refused when the jobs are checked).
    pub readonly: bool,
    /// No progress display while it runs (`--quiet`): the observer's
    /// business, kept here so that the command line repeats the run as it
    /// was asked.
    pub quiet: bool,
    /// Resolve the jobs only: nothing is written (not even a replay's
    /// merged log).
    pub parse_only: bool,
    /// System-wide CPU samples by kernel layer.
    pub profile: bool,
    /// `--profile=exact`: also bracket every CPU's time by state with
    /// tracepoints (eBPF), and scale the sampled layers to it.
    pub profile_exact: bool,
    /// Split each I/O's latency along its path: `Some(true)` asked,
    /// `Some(false)` refused, `None` neither (off).
    pub decompose: Option<bool>,
    /// `NAME`: NAME-{read,write,trim}_bw.log, the whole run's bandwidth.
    pub bandwidth_log: Option<String>,
    /// fio-format sample logs (`write_bw_log`, `write_lat_log`,
    /// `write_iops_log`) go here instead of to files, for a caller that
    /// sends them on (a server answering `fio --client`): none is written,
    /// and their paths are not checked here.
    pub log_sink: Option<crate::logs::LogSink>,
    /// The most samples the run's sample logs may hold in all, shared
    /// evenly by the workers that keep one (a server's bound for one
    /// client's job): a worker that reaches its share stops its job with
    /// an error that says so. None: no bound but the run's length.
    pub log_samples_max: Option<u64>,
    /// Set to stop the run (a signal): every wait ends within ~100 ms, and
    /// the result covers what ran.
    pub stop: Arc<AtomicBool>,
}

impl Default for RunRequest {
    fn default() -> Self {
        RunRequest::new(Arc::new(AtomicBool::new(false)))
    }
}

impl RunRequest {
    /// A request with no job yet (one empty global section), stopped by `stop`.
    pub fn new(stop: Arc<AtomicBool>) -> Self {
        RunRequest {
            sections: vec![Section {
                name: "global".into(),
                global: true,
                options: Vec::new(),
            }],
            allow_destructive: false,
            readonly: false,
            quiet: false,
            parse_only: false,
            profile: false,
            profile_exact: false,
            decompose: None,
            bandwidth_log: None,
            log_sink: None,
            log_samples_max: None,
            stop,
        }
    }

    /// Start a job named `name` (fio's `--name`): the options that follow
    /// are its own.
    pub fn job(&mut self, name: &str) -> &mut Self {
        self.sections.push(Section {
            name: name.into(),
            global: false,
            // fio lists `name` among a command-line job's options.
            options: vec![RawOption::cli("name", Some(name))],
        });
        self
    }

    /// An option of the last job (a global one before the first job), as
    /// a command line gives it: `key=value`, or `key` alone for a flag.
    pub fn option(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        let o = RawOption::cli(key, value);
        self.sections
            .last_mut()
            .expect("a global section")
            .options
            .push(o);
        self
    }

    /// An option with a value (`key=value`) of the last job, as
    /// [`RunRequest::option`].
    pub fn set(&mut self, key: &str, value: impl Display) -> &mut Self {
        self.option(key, Some(&value.to_string()))
    }

    /// An option without a value (`key`, a flag) of the last job, as
    /// [`RunRequest::option`].
    pub fn flag(&mut self, key: &str) -> &mut Self {
        self.option(key, None)
    }

    /// The request as `ssdready run`'s command line, the form the study's
    /// plans record each run in so that it can be repeated by hand: the
    /// run's switches first (`--quiet`, `--allow-destructive`,
    /// `--readonly`, `--profile[=exact]`, `--decompose` or `--no-decompose`), then every
    /// section's options in order as `--key=value` or `--flag` (a job's
    /// `name` option starts it). [`RunRequest::options`] reads it back to
    /// the same request. Not written: `parse_only`, the bandwidth log and
    /// the log sink (no planner asks for them), and a global section after
    /// a job (a command line has none).
    pub fn command_line(&self) -> Vec<String> {
        let mut o: Vec<String> = Vec::new();
        let switches = [
            (self.quiet, "--quiet"),
            (self.allow_destructive, "--allow-destructive"),
            (self.readonly, "--readonly"),
            (self.profile && !self.profile_exact, "--profile"),
            (self.profile && self.profile_exact, "--profile=exact"),
            (self.decompose == Some(true), "--decompose"),
            (self.decompose == Some(false), "--no-decompose"),
        ];
        o.extend(switches.iter().filter(|s| s.0).map(|s| s.1.to_string()));
        for s in &self.sections {
            let named = s.options.first().is_some_and(|x| x.key == "name");
            if !s.global && !named {
                o.push(arg("name", Some(&s.name)));
            }
            o.extend(s.options.iter().map(|x| arg(&x.key, x.value.as_deref())));
        }
        o
    }

    /// Options written as on `ssdready run`'s command line (`--key=value`
    /// or `--flag`), the form [`RunRequest::command_line`] writes: `--name`
    /// starts a job, the run's switches (`--quiet`, `--allow-destructive`,
    /// `--profile`, `--decompose`, `--no-decompose`) set this request's
    /// fields, and every other one is a job option for the option table.
    /// Job files are not read here.
    pub fn options<S: AsRef<str>>(&mut self, options: &[S]) -> Result<&mut Self, SpecError> {
        for a in options {
            let a = a.as_ref();
            let Some(kv) = a.strip_prefix("--") else {
                return Err(SpecError::new(
                    a,
                    "is not an option (allowed: --name=value or --flag; job files are not read here)",
                ));
            };
            let (k, v) = match kv.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (kv, None),
            };
            match k {
                "quiet" => self.quiet = true,
                "allow-destructive" | "allow_destructive" => self.allow_destructive = true,
                "readonly" => self.readonly = true,
                "profile" => {
                    self.profile = true;
                    self.profile_exact = crate::exactcpu::parse_mode(v)?;
                }
                "decompose" => self.decompose = Some(true),
                "no-decompose" => self.decompose = Some(false),
                "name" => match v.filter(|v| !v.is_empty()) {
                    Some(name) => {
                        self.job(name);
                    }
                    None => return Err(SpecError::new("name", "needs a job name")),
                },
                _ => {
                    self.option(k, v);
                }
            }
        }
        Ok(self)
    }

    /// Whether any section is a job (not global).
    pub fn has_jobs(&self) -> bool {
        self.sections.iter().any(|s| !s.global)
    }
}

/// One option as a command line writes it: `--key=value`, or `--key`
/// alone for a flag.
pub fn arg(key: &str, value: Option<&str>) -> String {
    match value {
        Some(v) => format!("--{key}={v}"),
        None => format!("--{key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_go_to_the_job_they_follow_and_switches_to_the_request() {
        let mut r = RunRequest::default();
        r.options(&[
            "--quiet",
            "--bs=4k",
            "--name=a",
            "--rw=randread",
            "--profile",
            "--name=b",
            "--stonewall",
        ])
        .unwrap();
        assert!(r.profile && r.quiet && !r.allow_destructive);
        let names: Vec<&str> = r.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "a", "b"]);
        assert_eq!(r.sections[0].options[0].key, "bs");
        let a: Vec<(&str, Option<&str>)> = r.sections[1]
            .options
            .iter()
            .map(|o| (o.key.as_str(), o.value.as_deref()))
            .collect();
        assert_eq!(a, [("name", Some("a")), ("rw", Some("randread"))]);
        assert_eq!(r.sections[2].options[1].key, "stonewall");
        assert_eq!(r.sections[2].options[1].value, None);
    }

    #[test]
    fn a_bare_word_or_a_nameless_job_is_refused() {
        assert!(RunRequest::default().options(&["jobs.fio"]).is_err());
        assert!(RunRequest::default().options(&["--name="]).is_err());
    }

    /// The switches and sections of two requests.
    fn parts(r: &RunRequest) -> (Vec<Section>, [bool; 4], Option<bool>) {
        let flags = [r.quiet, r.allow_destructive, r.profile, r.profile_exact];
        (r.sections.clone(), flags, r.decompose)
    }

    #[test]
    fn a_command_line_reads_back_to_the_request_it_was_written_from() {
        let mut r = RunRequest {
            quiet: true,
            profile: true,
            decompose: Some(true),
            ..Default::default()
        };
        r.set("size", "32m");
        r.job("fill").set("rw", "write").set("bs", 1 << 20);
        r.job("m")
            .flag("stonewall")
            .set("iodepth", 8)
            .set("filename", "emu:x25e,nocopy=1");
        let line = r.command_line();
        assert_eq!(
            line,
            [
                "--quiet",
                "--profile",
                "--decompose",
                "--size=32m",
                "--name=fill",
                "--rw=write",
                "--bs=1048576",
                "--name=m",
                "--stonewall",
                "--iodepth=8",
                "--filename=emu:x25e,nocopy=1",
            ]
        );
        let mut back = RunRequest::default();
        back.options(&line).unwrap();
        assert_eq!(parts(&back), parts(&r));
        // Every other switch, and an empty value, too.
        let mut r = RunRequest {
            allow_destructive: true,
            readonly: true,
            profile: true,
            profile_exact: true,
            decompose: Some(false),
            ..Default::default()
        };
        r.job("a").set("description", "");
        let mut back = RunRequest::default();
        back.options(&r.command_line()).unwrap();
        assert_eq!(parts(&back), parts(&r));
        assert_eq!(back.command_line(), r.command_line());
    }

    #[test]
    fn a_job_without_its_name_option_is_written_with_one() {
        let mut r = RunRequest::default();
        r.sections.push(Section {
            name: "x".into(),
            global: false,
            options: vec![RawOption::cli("rw", Some("read"))],
        });
        assert_eq!(r.command_line(), ["--name=x", "--rw=read"]);
    }
}
