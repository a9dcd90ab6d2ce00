//! The `run` command line, fio style. Arguments that do not start with `--`
//! are job files. `--name=value` pairs before the first `--name` are global
//! defaults for every job (those of job files too, whose own `[global]`
//! sections override them, as in fio); each `--name` starts a command-line
//! job. A few options belong to the tool rather than to a job (`--output`,
//! `--output-format`, `--parse-only`, `--quiet`, `--allow-destructive`,
//! `--save`, `--db`, `--baseline`, `--report`, and fio's `--minimal`,
//! `--eta`, `--eta-newline`, `--status-interval`, `--section`,
//! `--bandwidth-log`, `--terse-version`); they may appear anywhere, and an
//! error about one names the switch, never a job.

use ssdready_core::jobfile;
use ssdready_core::options::{RawOption, Section};
use ssdready_core::SpecError;
use ssdready_run::RunRequest;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// `ssdready run --help`.
pub const RUN_HELP: &str =
    "usage: ssdready run [--output=FILE] [--output-format=normal|json|json+|native] [--quiet] \
[--report=DIR] [--parse-only] [--allow-destructive] [--profile[=exact]] [--decompose|--no-decompose] \
[--save] [--db=PATH] [--baseline=ID|PATH] \
[JOBFILE]... [--OPTION=VALUE]... [--name=JOB [--OPTION=VALUE]...]...

Arguments that are not --options are fio job files. Options before the first
--name apply to every job (job files' [global] sections override them); each
--name starts a job. --output-format=json or json+ writes fio's layout; native
writes ssdready's own schema (docs/result-schema.md); several may be given
comma-separated. --parse-only prints the resolved jobs as JSON and exits
(0, or 2 on an error). --report=DIR writes the run's native JSON (result.json)
and an HTML report (report.html) there; ssdready report DIR re-renders it.
Writes and trims to a block device (or to a file that backs a loop device) that
anything uses - mounted, swap, under a loop/dm/md device, partitioned, holding a
signature, held open exclusively - are refused (exit 2), naming each user and
the check that found it; --allow-destructive overrides them with a warning.
--profile samples every CPU at 1 kHz and splits the kernel's cost per I/O by
layer (needs root); --profile=exact also brackets every CPU's time by state
with eBPF on tracepoints (exact on VMs too; costs more, so asked for). --decompose splits each I/O's latency along its path with
eBPF on the block tracepoints (needs root, a block device; off by default: it
costs 5-10 % of IOPS, most of it the kernel's price of calling BPF at all).
--save records the run in the history database (--db=PATH, default
$XDG_DATA_HOME/ssdready/history.db) with its native JSON beside it; a save that
fails is a warning and exit code 1. --baseline=ID|PATH compares the run with a
saved run (a history id or a native JSON file) of the same workload: exit code
3 when IOPS, mean or p99 latency or CPU per I/O got worse beyond the noise.
Example: ssdready run --name=t --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring \\
         --direct=1 --filename=/tmp/ssdready.dat --size=1g --runtime=10s --time_based
--client=HOSTS (a list or a host file, as fio's) sends the job to fio servers
or ssdready servers instead and prints one consolidated result (docs/fleet.md).
Run 'ssdready options' for every job option.";

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The terminal summary.
    Normal,
    /// fio's JSON layout, plus an `ssdready` object per job.
    Json,
    /// fio's json+ (histogram bins added).
    JsonPlus,
    /// ssdready's native, versioned JSON (docs/result-schema.md).
    Native,
    /// fio's terse format, version 3 (`--minimal`).
    Terse,
}

/// When live progress is shown (fio's `--eta`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Eta {
    /// When stderr is a terminal (fio's `auto`).
    #[default]
    Auto,
    /// Always; as lines when stderr is not a terminal.
    Always,
    /// Never.
    Never,
}

/// A parsed `run` command line.
#[derive(Debug, Default)]
pub struct RunArgs {
    pub formats: Vec<Format>,
    pub output: Option<PathBuf>,
    /// `--report=DIR`: the native JSON and the HTML report go there.
    pub report: Option<PathBuf>,
    pub quiet: bool,
    pub allow_destructive: bool,
    pub parse_only: bool,
    /// `--profile`: system-wide CPU samples by kernel layer.
    pub profile: bool,
    /// `--profile=exact`: CPU time by state, bracketed by tracepoints.
    pub profile_exact: bool,
    /// `--decompose` (Some(true)), `--no-decompose` (Some(false)), or
    /// neither: on when root and a job's I/O reaches a block device.
    pub decompose: Option<bool>,
    /// `--save`: record the run in the history database.
    pub save: bool,
    /// `--db=PATH`: the history database (default: the user's data directory).
    pub db: Option<PathBuf>,
    /// `--baseline=ID|PATH`: a saved run to check this one against.
    pub baseline: Option<String>,
    /// Every section in effect order: command-line globals, job files, command-line jobs.
    pub sections: Vec<Section>,
    /// `--eta`.
    pub eta: Eta,
    /// `--eta-newline=T`: progress as a new line every T (ns).
    pub eta_newline_ns: Option<u64>,
    /// `--status-interval=T`: cumulative figures every T (ns).
    pub status_interval_ns: Option<u64>,
    /// `--bandwidth-log[=NAME]`: NAME-{read,write,trim}_bw.log.
    pub bandwidth_log: Option<String>,
    /// fio's global switches (`--max-jobs`, `--debug`, `--readonly`, …).
    pub fio: crate::fioswitch::FioSwitches,
}

impl RunArgs {
    /// fio's defaults where ssdready's differ (ssdready called as `fio`):
    /// the psync engine, so that a job without a filename uses fio's files.
    /// Applied before every other option, so any `ioengine` overrides it.
    pub fn with_fio_defaults(mut self) -> Self {
        if let Some(g) = self.sections.first_mut().filter(|s| s.global) {
            g.options
                .insert(0, RawOption::default_of("ioengine", "psync"));
        }
        self
    }

    /// The library's request for these arguments, stopped by `stop`.
    pub fn request(&self, stop: Arc<AtomicBool>) -> RunRequest {
        RunRequest {
            sections: self.sections.clone(),
            allow_destructive: self.allow_destructive,
            readonly: self.fio.readonly,
            quiet: self.quiet,
            parse_only: self.parse_only,
            profile: self.profile,
            profile_exact: self.profile_exact,
            decompose: self.decompose,
            bandwidth_log: self.bandwidth_log.clone(),
            log_sink: None,
            log_samples_max: None,
            stop,
        }
    }
}

/// Values of fio's reserved job-file variables and the environment.
fn env_lookup(name: &str) -> Option<String> {
    match name {
        "pagesize" => Some("4096".into()),
        "ncpus" => std::thread::available_parallelism()
            .ok()
            .map(|n| n.get().to_string()),
        "mb_memory" => std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
            let kb: u64 = m.lines().next()?.split_whitespace().nth(1)?.parse().ok()?;
            Some((kb / 1024).to_string())
        }),
        _ => std::env::var(name).ok(),
    }
}

/// The largest job file (or included file) read: a job file is text a person
/// wrote; this keeps `/dev/zero` or a runaway pipe from eating the memory.
const MAX_JOB_FILE_BYTES: u64 = 16 << 20;

/// A job file's text (a directory, binary data or a huge file is an error).
pub fn read_text(path: &Path) -> Result<String, String> {
    use std::io::Read;
    if path.is_dir() {
        return Err("is a directory (allowed: a fio job file)".into());
    }
    // A FIFO with no writer yet is waited for, until a signal.
    let stop = ssdready_run::stop::flag();
    let f = ssdready_io::written::open_waiting(path, false, &stop).map_err(|e| match e.kind() {
        std::io::ErrorKind::Interrupted => "interrupted while waiting for a writer".to_string(),
        _ => e.to_string(),
    })?;
    let mut bytes = Vec::new();
    f.take(MAX_JOB_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_JOB_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB (allowed: a fio job file)",
            MAX_JOB_FILE_BYTES >> 20
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (byte {} is invalid; allowed: a fio job file)",
            e.utf8_error().valid_up_to()
        )
    })
}

/// Where job files and their includes come from: the file system, as a
/// local run reads them ([`Files`]), or a server's client.
pub trait Source {
    /// Job file `arg` (as given on the command line): its text, and its
    /// path (where its relative includes are resolved from).
    fn job_file(&mut self, arg: &str) -> Result<(String, String), String>;
    /// The file an `include` names, `name` as the parser read it in the
    /// file at `from`: resolved, checked and read in one place.
    fn include(&mut self, name: &str, from: &str) -> Result<jobfile::Included, String>;
}

/// Job files and includes as a local run reads them: an include's relative
/// name from the directory of the file it is in.
pub struct Files;

impl Source for Files {
    fn job_file(&mut self, arg: &str) -> Result<(String, String), String> {
        let text = read_text(Path::new(arg)).map_err(|e| format!("{arg}: {e}"))?;
        Ok((text, arg.to_string()))
    }

    fn include(&mut self, name: &str, from: &str) -> Result<jobfile::Included, String> {
        // A signal ends a long expansion between two files.
        if ssdready_run::stop::flag().load(std::sync::atomic::Ordering::Relaxed) {
            return Err("interrupted".into());
        }
        let p = beside(name, from);
        Ok(jobfile::Included {
            label: name.to_string(),
            text: read_text(&p)?,
            path: p.display().to_string(),
        })
    }
}

/// `name` as an include in the file at `from` names it: as written when
/// absolute, otherwise in the directory `from` is in.
pub fn beside(name: &str, from: &str) -> PathBuf {
    let base = Path::new(from).parent().unwrap_or(Path::new(""));
    base.join(name)
}

/// Read and parse one job file (and its includes) from `source`. With
/// `label`, locations name the file (`jobs.fio line 3`), as when several
/// job files are given; otherwise they are `line 3`.
pub fn read_job_file(
    arg: &str,
    label: bool,
    source: &mut dyn Source,
    out: &mut Vec<Section>,
) -> Result<(), SpecError> {
    let (text, path) = source
        .job_file(arg)
        .map_err(|e| SpecError::new("job file", e))?;
    let mut include = |f: &str, from: &str| source.include(f, from);
    let name = Path::new(arg)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    jobfile::parse_file_into(
        &text,
        label.then_some(name.as_str()),
        &path,
        &mut include,
        &env_lookup,
        out,
    )
}

/// The switches of `run` that need a value, which getopt-style tools
/// (fio among them) also accept as the next argument: `--report DIR`.
const VALUE_SWITCHES: &[&str] = &[
    "output",
    "output-format",
    "report",
    "db",
    "baseline",
    "section",
    "name",
];

/// The switches of `run` itself (besides the job options).
const RUN_SWITCHES: &[&str] = &[
    "output",
    "output-format",
    "minimal",
    "terse-version",
    "eta",
    "eta-newline",
    "eta-interval",
    "section",
    "bandwidth-log",
    "report",
    "save",
    "db",
    "baseline",
    "parse-only",
    "profile",
    "decompose",
    "name",
];

/// fio reads its long options with one dash as well (`getopt_long_only`):
/// `-name=x`, `-rw=read` and `-output-format=json` are `--name=x`, … when
/// the name is a switch of `run` or a job option; anything else stays (a
/// job file named so).
fn long_with_one_dash(a: &str) -> Option<String> {
    let body = a
        .strip_prefix('-')
        .filter(|b| !b.is_empty() && !b.starts_with('-'))?;
    let key = body.split_once('=').map_or(body, |p| p.0);
    let known = RUN_SWITCHES.contains(&key)
        || crate::fioswitch::NAMES.contains(&key)
        || ssdready_core::options::find(key).is_some();
    known.then(|| format!("--{body}"))
}

/// `--SWITCH VALUE` as `--SWITCH=VALUE` for [`VALUE_SWITCHES`], so the
/// value is not taken for a job file; fio's one-dash long options as two.
fn join_separate_values(args: &[String]) -> Vec<String> {
    let args: Vec<String> = args
        .iter()
        .map(|a| long_with_one_dash(a).unwrap_or_else(|| a.clone()))
        .collect();
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let takes_value = a.strip_prefix("--").is_some_and(|k| {
            VALUE_SWITCHES.contains(&k) || crate::fioswitch::VALUE_NAMES.contains(&k)
        });
        match it.peek() {
            Some(next) if takes_value && !next.starts_with("--") => {
                out.push(format!("{a}={next}"));
                it.next();
            }
            _ => out.push(a.clone()),
        }
    }
    out
}

/// Parse the arguments after `run`.
pub fn parse(args: &[String]) -> Result<RunArgs, SpecError> {
    parse_from(args, &mut Files)
}

/// [`parse`], job files and includes read from `source`.
pub fn parse_from(args: &[String], source: &mut dyn Source) -> Result<RunArgs, SpecError> {
    let args = &join_separate_values(args);
    let mut r = RunArgs::default();
    let mut globals = Section {
        name: "global".into(),
        global: true,
        options: Vec::new(),
    };
    let mut files: Vec<Section> = Vec::new();
    let mut cli_jobs: Vec<Section> = Vec::new();
    let several_files = args.iter().filter(|a| !a.starts_with("--")).count() > 1;
    // Each job file, with the number of sections before it.
    let mut file_starts: Vec<(&str, usize)> = Vec::new();
    let mut sections: Vec<String> = Vec::new();
    for a in args {
        let Some(body) = a.strip_prefix("--") else {
            file_starts.push((a, files.len()));
            read_job_file(a, several_files, source, &mut files)?;
            continue;
        };
        let (k, v) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (body, None),
        };
        match k {
            _ if tool_switch(&mut r, k, v.clone(), &mut sections)? => {}
            "name" => {
                let name = v
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| SpecError::new("name", "needs a job name"))?;
                // fio lists `name` among a command-line job's options.
                let options = vec![RawOption::cli("name", Some(&name))];
                cli_jobs.push(Section {
                    name,
                    global: false,
                    options,
                });
            }
            _ if crate::fioswitch::take(k, v.as_deref(), &mut r.fio)? => {}
            _ => {
                let o = RawOption::cli(k, v.as_deref());
                match cli_jobs.last_mut() {
                    Some(j) => j.options.push(o),
                    None => globals.options.push(o),
                }
            }
        }
    }
    if r.formats.is_empty() {
        r.formats.push(Format::Normal);
    }
    if !sections.is_empty() {
        keep_sections(&sections, &mut files, &mut file_starts)?;
    }
    check_files_define_jobs(&file_starts, &files, !cli_jobs.is_empty())?;
    r.sections.push(globals);
    r.sections.extend(files);
    r.sections.extend(cli_jobs);
    Ok(r)
}

/// A switch of the tool itself rather than of a job, applied to `r`
/// (`--section`s gathered in `sections`); false when `k` is none.
fn tool_switch(
    r: &mut RunArgs,
    k: &str,
    v: Option<String>,
    sections: &mut Vec<String>,
) -> Result<bool, SpecError> {
    match k {
        "output" => {
            let v = v
                .filter(|v| !v.is_empty())
                .ok_or_else(|| SpecError::new("output", "needs a file path"))?;
            r.output = Some(PathBuf::from(v));
        }
        "output-format" => r.formats = output_formats(&v.unwrap_or_default())?,
        "minimal" => r.formats = vec![Format::Terse],
        "terse-version" => terse_version(v.as_deref())?,
        "eta" => r.eta = eta(v.as_deref())?,
        "eta-newline" | "eta-interval" => {
            let t = switch_time(k, v.as_deref())?;
            if k == "eta-newline" {
                r.eta_newline_ns = Some(t);
            }
        }
        "status-interval" => r.status_interval_ns = Some(switch_time(k, v.as_deref())?),
        "section" => {
            let name = v
                .filter(|v| !v.is_empty())
                .ok_or_else(|| SpecError::new("--section", "needs a section name (allowed: a [name] of the job files; may be given several times)"))?;
            sections.push(name);
        }
        "bandwidth-log" => {
            r.bandwidth_log = Some(v.filter(|v| !v.is_empty()).unwrap_or_else(|| "agg".into()))
        }
        "report" => {
            let v = v
                .filter(|v| !v.is_empty())
                .ok_or_else(|| SpecError::new("report", "needs a directory"))?;
            r.report = Some(PathBuf::from(v));
        }
        "quiet" => r.quiet = true,
        "save" => r.save = true,
        "db" => {
            let v = v
                .filter(|v| !v.is_empty())
                .ok_or_else(|| SpecError::new("db", "needs a file path (the history database)"))?;
            r.db = Some(PathBuf::from(v));
        }
        "baseline" => {
            let v = v.filter(|v| !v.is_empty()).ok_or_else(|| {
                SpecError::new("baseline", "needs a history id or a run's native JSON file")
            })?;
            r.baseline = Some(v);
        }
        "parse-only" => r.parse_only = true,
        "profile" => {
            r.profile = true;
            r.profile_exact = ssdready_run::exactcpu::parse_mode(v.as_deref())?;
        }
        "decompose" => r.decompose = Some(decompose(v.as_deref())?),
        "no-decompose" => r.decompose = Some(false),
        "allow-destructive" | "allow_destructive" => r.allow_destructive = true,
        _ => return Ok(false),
    }
    Ok(true)
}

/// `--output-format`: one or several formats, comma-separated.
fn output_formats(v: &str) -> Result<Vec<Format>, SpecError> {
    v.split(',')
        .map(|f| match f {
            "normal" => Ok(Format::Normal),
            "json" => Ok(Format::Json),
            "json+" => Ok(Format::JsonPlus),
            "native" => Ok(Format::Native),
            "terse" => Ok(Format::Terse),
            _ => Err(SpecError::new(
                "--output-format",
                format!(
                    "'{f}' is not a format (allowed: normal, json, json+, terse, native, several comma-separated)"
                ),
            )),
        })
        .collect()
}

/// `--terse-version`: only fio's default, 3.
fn terse_version(v: Option<&str>) -> Result<(), SpecError> {
    match v {
        Some("3") => Ok(()),
        Some(x @ ("2" | "4" | "5")) => Err(SpecError::new(
            "--terse-version",
            format!("terse version {x} is not supported yet (allowed: 3, fio's default)"),
        )),
        x => Err(SpecError::new(
            "--terse-version",
            format!("'{}' is not a terse version (allowed: 3)", x.unwrap_or("")),
        )),
    }
}

/// `--eta`: when to show progress.
fn eta(v: Option<&str>) -> Result<Eta, SpecError> {
    match v {
        Some("auto") => Ok(Eta::Auto),
        Some("always") => Ok(Eta::Always),
        Some("never") => Ok(Eta::Never),
        x => Err(SpecError::new(
            "--eta",
            format!(
                "'{}' is not when to show progress (allowed: always, never, auto)",
                x.unwrap_or("")
            ),
        )),
    }
}

/// `--decompose[=on|off]`.
fn decompose(v: Option<&str>) -> Result<bool, SpecError> {
    match v {
        None | Some("1" | "on" | "yes" | "true") => Ok(true),
        Some("0" | "off" | "no" | "false") => Ok(false),
        Some(x) => Err(SpecError::new(
            "decompose",
            format!("'{x}' is not on or off (allowed: on, off, 1, 0)"),
        )),
    }
}

/// A time given to a switch (bare numbers are seconds, as in fio).
fn switch_time(k: &str, v: Option<&str>) -> Result<u64, SpecError> {
    let v = v.unwrap_or("");
    match ssdready_core::units::parse_time_ns(v, 1_000_000_000) {
        Ok(t) if t >= 1_000_000 => Ok(t),
        Ok(_) => Err(SpecError::new(
            &format!("--{k}"),
            format!("'{v}' is shorter than 1 ms (allowed: a time such as 1s or 500ms)"),
        )),
        Err(e) => Err(SpecError::new(
            &format!("--{k}"),
            format!("{e} (allowed: a time such as 1s or 500ms)"),
        )),
    }
}

/// fio's `--section`: only the named job sections of the job files run;
/// every global section still applies. Naming a section no file has is an
/// error (fio would silently run nothing).
fn keep_sections(
    names: &[String],
    files: &mut Vec<Section>,
    file_starts: &mut [(&str, usize)],
) -> Result<(), SpecError> {
    for n in names {
        if !files.iter().any(|s| !s.global && s.name == *n) {
            let have: Vec<&str> = files
                .iter()
                .filter(|s| !s.global)
                .map(|s| s.name.as_str())
                .collect();
            return Err(SpecError::new(
                "--section",
                format!(
                    "no job section [{n}] in the job files (allowed: {})",
                    if have.is_empty() {
                        "none: the files define no job".to_string()
                    } else {
                        have.join(", ")
                    }
                ),
            ));
        }
    }
    let keep = |s: &Section| s.global || names.contains(&s.name);
    for (_, start) in file_starts.iter_mut() {
        *start = files[..*start].iter().filter(|s| keep(s)).count();
    }
    files.retain(keep);
    Ok(())
}

/// A job file must define a job, itself or in what follows it (a later job
/// file or a command-line `--name`): an empty file, or one with only
/// `[global]`, would otherwise run a default job nobody asked for.
fn check_files_define_jobs(
    file_starts: &[(&str, usize)],
    files: &[Section],
    cli_jobs: bool,
) -> Result<(), SpecError> {
    for (name, start) in file_starts {
        if !cli_jobs && !files[*start..].iter().any(|s| !s.global) {
            return Err(SpecError::new(
                "job file",
                format!(
                    "no jobs in {name} (allowed: a file with at least one [JOBNAME] section; [global] alone defines none)"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn globals_come_before_the_first_name() {
        let r = parse(&s(&[
            "--bs=4k",
            "--name=a",
            "--rw=read",
            "--name=b",
            "--time_based",
            "--output-format=json",
        ]))
        .unwrap();
        assert_eq!(
            r.sections[0].options,
            vec![RawOption::cli("bs", Some("4k"))]
        );
        assert_eq!(r.sections.len(), 3);
        assert_eq!(
            r.sections[2].options,
            vec![
                RawOption::cli("name", Some("b")),
                RawOption::cli("time_based", None)
            ]
        );
        assert_eq!(r.formats, vec![Format::Json]);
    }

    /// `run --report /tmp/x` said "option 'report': needs a directory" and
    /// would have read the directory as a job file.
    #[test]
    fn a_switch_value_may_be_the_next_argument() {
        let r = parse(&s(&[
            "--report",
            "/tmp/x",
            "--name",
            "a",
            "--rw=read",
            "--output-format",
            "json",
        ]))
        .unwrap();
        assert_eq!(r.report, Some(PathBuf::from("/tmp/x")));
        assert_eq!(r.formats, vec![Format::Json]);
        assert_eq!(r.sections.len(), 2);
        // A job option keeps fio's `--key=value` form; a bare word after a
        // flag without a value is still a job file.
        assert!(parse(&s(&["--time_based", "no-such.fio"])).is_err());
    }

    #[test]
    fn fios_one_dash_long_options_are_read_as_two() {
        let a: Vec<String> = [
            "-name=x",
            "-ioengine=null",
            "-size=1m",
            "-output-format=json",
            "-parse-only",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let r = parse(&a).unwrap();
        assert!(r.parse_only);
        assert_eq!(r.formats, vec![Format::Json]);
        let job = r.sections.last().unwrap();
        assert_eq!(job.name, "x");
        assert!(
            job.options.iter().any(|o| o.key == "ioengine"),
            "{:?}",
            job.options
        );
        // Not an option: left for a job file of that name.
        assert_eq!(long_with_one_dash("-nosuchoption=1"), None);
        assert_eq!(long_with_one_dash("-"), None);
    }

    #[test]
    fn job_files_sit_between_cli_globals_and_cli_jobs() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.fio");
        std::fs::write(&f, "[global]\nbs=8k\n[fj]\nrw=read\n").unwrap();
        let r = parse(&s(&["--bs=4k", f.to_str().unwrap(), "--name=c"])).unwrap();
        let names: Vec<&str> = r.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "global", "fj", "c"]);
    }

    #[test]
    fn fio_switches_scripts_use_are_accepted() {
        let r = parse(&s(&[
            "--eta=never",
            "--eta-newline=2",
            "--status-interval=1s",
            "--minimal",
            "--bandwidth-log",
            "--name=a",
        ]))
        .unwrap();
        assert_eq!(r.eta, Eta::Never);
        assert_eq!(r.eta_newline_ns, Some(2_000_000_000));
        assert_eq!(r.status_interval_ns, Some(1_000_000_000));
        assert_eq!(r.formats, vec![Format::Terse]);
        assert_eq!(r.bandwidth_log.as_deref(), Some("agg"));
        let r = parse(&s(&["--output-format=terse,json", "--terse-version=3"])).unwrap();
        assert_eq!(r.formats, vec![Format::Terse, Format::Json]);
    }

    #[test]
    fn errors_about_switches_name_the_switch_not_a_job() {
        for (arg, want) in [
            (
                "--eta=sometimes",
                "option '--eta': 'sometimes' is not when to show progress",
            ),
            ("--status-interval=x", "option '--status-interval': "),
            (
                "--eta-newline=0",
                "option '--eta-newline': '0' is shorter than 1 ms",
            ),
            (
                "--terse-version=4",
                "option '--terse-version': terse version 4 is not supported yet",
            ),
            (
                "--output-format=xml",
                "option '--output-format': 'xml' is not a format",
            ),
            ("--section=", "option '--section': needs a section name"),
        ] {
            let e = parse(&s(&["--name=a", arg])).unwrap_err();
            assert!(e.to_string().starts_with(want), "{arg}: {e}");
            assert!(e.job.is_none(), "{arg}: {e}");
        }
    }

    #[test]
    fn section_keeps_the_named_jobs_and_every_global() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.fio");
        std::fs::write(
            &f,
            "[global]\nbs=8k\n[light]\nrw=read\n[global]\nbs=16k\n[heavy]\nrw=write\n[other]\nrw=read\n",
        )
        .unwrap();
        let r = parse(&s(&[f.to_str().unwrap(), "--section=heavy"])).unwrap();
        let names: Vec<&str> = r.sections.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["global", "global", "global", "heavy"]);
        let e = parse(&s(&[f.to_str().unwrap(), "--section=nope"])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "option '--section': no job section [nope] in the job files (allowed: light, heavy, other)"
        );
    }

    #[test]
    fn bad_format_and_missing_files_are_errors() {
        assert!(parse(&s(&["--output-format=xml"])).is_err());
        let e = parse(&s(&["/no/such.fio"])).unwrap_err();
        assert!(e.to_string().contains("/no/such.fio"), "{e}");
    }
}
