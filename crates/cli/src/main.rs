//! `ssdready`: how much of an SSD's speed does this Linux platform deliver to
//! applications, and where does the rest go?
//!
//! Exit codes: 0 success; 1 a failure while running (results so far are
//! still reported when there are any); 2 bad input (nothing was written);
//! 3 a regression: with `--baseline`, a key figure got worse beyond the
//! noise (the results were written); 70 an internal error (a bug: one line
//! names it and where); 130 interrupted (results so far were still
//! reported).

#![forbid(unsafe_code)]

mod app_cmd;
mod characterize;
mod compare;
mod emu_cmd;
mod fio_mode;
mod fleet_cmd;
mod history;
mod limits_cmd;
mod manpages;
mod progress;
mod report;
mod restore_cmd;
mod run_output;
mod server_cmd;
mod session;
mod stdout;
mod strategies;
mod study;

use ssdready_cmdline::{args, debug_io, fioswitch};
use stdout::{out, outln};

use ssdready_run::{emulated, output, panics, ramdev, validate};

use clap::{Parser, Subcommand};
use ssdready_core::options::{self, Arity};
use ssdready_core::optsets;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "ssdready",
    version = env!("SSDREADY_VERSION"),
    about = "Measure how much of an SSD's speed the platform delivers, and where the rest goes"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Study a device: how much of its speed reaches applications, where the
    /// rest goes, and what to change (writes DIR/study.json and DIR/report.html).
    Study(study::StudyArgs),
    /// Run an application workload (small-files, sqlite, fdatasync, pgbench)
    /// in a directory: its rate and latency, and the device's I/O per operation.
    App(app_cmd::AppArgs),
    /// Characterize a device the SNIA PTS way: purge, precondition, then
    /// IOPS, throughput, latency and write saturation, each to steady
    /// state, and the write cliff (writes DIR/characterize.json).
    Characterize(characterize::CharacterizeArgs),
    /// What can cap this process's I/O, as the kernel shows it: cgroup I/O
    /// throttles, CPU quota, cpuset, memory limit, affinity, and the
    /// target's devices with their queues; one line per limit with its source.
    Limits(limits_cmd::LimitsArgs),
    /// Run each submission/completion strategy (interrupts, polling, temporal
    /// merge, coalescing, SQPOLL, hybrid) on the four patterns of Shin,
    /// "Achieving Peak Device Throughput for Random IO Workload": % of the
    /// device's peak and the trade-offs (writes DIR/strategies.json).
    Strategies(strategies::StrategiesArgs),
    /// Answer fio's client/server protocol: an unmodified `fio --client`
    /// runs its job on this host with ssdready's engine (see docs/fleet.md).
    Server(server_cmd::ServerArgs),
    /// (A server's own: one client's job, checked or run in a process of
    /// its own with that client's rights.)
    #[command(name = "server-job", hide = true)]
    ServerJob(server_cmd::JobArgs),
    /// Re-render DIR/report.html from DIR/study.json (or a run's result.json) alone.
    Report {
        /// A directory written by `study` or `run --report`, or a study or run JSON file.
        path: std::path::PathBuf,
        /// Judge the study recorded in DIR again from its measurements with
        /// this build's rules: rewrite its findings in study.json and its
        /// report, print them, and say which findings changed; for a
        /// `study --job` directory, what holds the job in job-study.json.
        #[arg(long)]
        rejudge: bool,
    },
    /// Run a workload, fio style: ssdready run --name=t --rw=randread --bs=4k --filename=/tmp/f --size=1g
    ///
    /// Options before the first --name are global; each --name starts a job.
    /// Tool options: --output=FILE, --output-format=normal|json[,…], --quiet,
    /// --allow-destructive, --save, --db=PATH, --baseline=ID|PATH, --report=DIR.
    /// `ssdready options` lists the job options.
    #[command(disable_help_flag = true)]
    Run {
        /// Job options as --option=value.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// The studies and saved runs recorded in the history database, newest first.
    History(history::HistoryArgs),
    /// Two results side by side: the differences beyond the noise seen in repeats.
    Compare(compare::CompareArgs),
    /// List every job option with its allowed values.
    Options {
        /// Print the list as Markdown (docs/options.md is this output).
        #[arg(long)]
        markdown: bool,
    },
    /// Print a shell completion script: bash, zsh, fish, elvish or powershell.
    Completions {
        /// The shell.
        shell: String,
    },
    /// Write the man pages (ssdready.1 and one per subcommand) into DIR.
    Man {
        /// The directory (created if missing).
        dir: std::path::PathBuf,
    },
    /// RAM-backed kernel block devices that expose the software stack.
    Ramdev {
        #[command(subcommand)]
        cmd: RamdevCmd,
    },
    /// The built-in SSD emulator: presets, and runs in virtual time.
    Emu {
        #[command(subcommand)]
        cmd: EmuCmd,
    },
    /// Put back the device settings and cgroups that an ssdready which
    /// ended without doing so (killed) left changed (root; every command
    /// run as root does it first too). Those of a running ssdready are left to it.
    Restore,
}

#[derive(Subcommand)]
enum RamdevCmd {
    /// Create a RAM-backed block device (needs root).
    Create {
        /// null_blk, loop (over a /dev/shm file, direct I/O), zram, or auto.
        #[arg(long, default_value = "auto")]
        kind: String,
        /// Size, e.g. 1g.
        #[arg(long, default_value = "1g")]
        size: String,
    },
    /// List the devices ssdready made.
    List,
    /// Remove a device ssdready made (or --all).
    Remove {
        /// The device, e.g. /dev/loop3 or /dev/ublkb0.
        device: Option<String>,
        #[arg(long)]
        all: bool,
    },
}

#[derive(Subcommand)]
enum EmuCmd {
    /// List the emulator presets with their parameters (or print one as a device file).
    Presets {
        /// Print preset NAME as a TOML device file (every parameter), to
        /// edit and use as --filename=emu:file=PATH.
        #[arg(long, value_name = "NAME")]
        toml: Option<String>,
    },
    /// Attach an emulated drive as a kernel block device (root): serves it in
    /// the foreground until Ctrl-C, SIGTERM, SIGHUP or `emu detach`; prints
    /// its path (docs/kernel-drive.md).
    Attach {
        /// PRESET[,key=value...], as after emu: in a target.
        spec: String,
        /// auto (ublk where /dev/ublk-control exists, FUSE + loop
        /// elsewhere), fuse (FUSE + loop over /dev/fuse), fuse-uring
        /// (FUSE over io_uring + loop; turns the kernel's enable_uring on
        /// while attached) or ublk.
        #[arg(long, default_value = "auto")]
        transport: String,
    },
    /// Detach an emulated drive made by `emu attach` (or --all).
    Detach {
        /// The device, e.g. /dev/loop3.
        device: Option<String>,
        #[arg(long)]
        all: bool,
    },
    /// List the emulated drives attached, with their daemons' figures.
    List,
    /// Run jobs against emulated devices in virtual time (same options and output as run).
    #[command(disable_help_flag = true)]
    Simulate {
        /// Job options and job files, as for run.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
}

fn list_presets() -> Done {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "Emulator presets (use as --filename=emu:PRESET[,key=value...], or a device file as emu:file=PATH.toml; no filename = emu:nvme-tlc):\n");
    for (name, desc) in ssdready_emu::config::PRESETS {
        let p = ssdready_emu::config::preset(name).expect("listed presets exist");
        let _ = writeln!(out, "{name}\n    {desc}");
        let pairs: Vec<String> = p
            .pairs()
            .into_iter()
            .skip(1)
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        for chunk in pairs.chunks(6) {
            let _ = writeln!(out, "    {}", chunk.join(" "));
        }
    }
    stdout::print(&out)
}

/// `emu presets --toml NAME`: the preset as a device file on stdout.
fn print_device_file(name: &str) -> Done {
    let desc = ssdready_emu::config::PRESETS
        .iter()
        .find(|p| p.0 == name)
        .map_or("", |p| p.1);
    let Some(p) = ssdready_emu::config::preset(name) else {
        let names: Vec<&str> = ssdready_emu::config::PRESETS.iter().map(|p| p.0).collect();
        return Err(fail(
            2,
            &format!(
                "--toml: unknown emulator preset '{name}' (allowed: {})",
                names.join(", ")
            ),
        ));
    };
    let text = ssdready_emu::devfile::to_toml(&p, &format!("the {name} preset ({desc})"));
    output::write(&output::Sink::Stdout, &text).map_err(|e| fail(1, &e.to_string()))
}

/// Say one line on stderr, whatever a name or value in it held (control
/// characters escaped).
pub(crate) fn say(msg: &str) {
    let msg: String = msg
        .chars()
        .map(|c| match c {
            c if c.is_control() => c.escape_default().to_string(),
            c => c.to_string(),
        })
        .collect();
    eprintln!("ssdready: {msg}");
}

/// A command line clap refused: one line (what, where, the allowed
/// values), exit code 2; `--help` and `--version` print as usual.
fn refuse_arguments(e: clap::Error) -> Exit {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            return stdout::print(&e.render().to_string())
                .err()
                .unwrap_or(Exit(0));
        }
        // `ssdready` alone: the help, on stderr, as a refusal.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            eprint!("{}", e.render());
            return Exit(2);
        }
        _ => {}
    }
    let text = e.render().to_string();
    let line: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
        .filter(|l| !l.is_empty())
        .collect();
    let line = line.join(" ");
    let what = line.strip_prefix("error: ").unwrap_or(&line);
    fail(
        2,
        &format!("{what} (see '{} --help')", refused_command(&text)),
    )
}

/// The command whose arguments clap refused, from its usage line, or from
/// argv when the error has none (`ssdready app`).
fn refused_command(text: &str) -> String {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("Usage: "))
        .map(|u| {
            u.split_whitespace()
                .take_while(|w| !w.starts_with(['[', '<', '-']))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| {
            use clap::CommandFactory;
            let sub = std::env::args()
                .nth(1)
                .filter(|a| Cli::command().get_subcommands().any(|c| c.get_name() == a));
            sub.map_or("ssdready".into(), |s| format!("ssdready {s}"))
        })
}

/// How a command ends before its end: the exit code, its line (if any)
/// already said on stderr. Only `main` ends the process, with this code.
#[derive(Debug)]
#[must_use = "a command that failed ends: return it"]
pub(crate) struct Exit(pub(crate) i32);

/// A command's outcome: `Ok` is exit code 0.
pub(crate) type Done = Result<(), Exit>;

/// A command's outcome from its exit code.
pub(crate) fn done(code: i32) -> Done {
    match code {
        0 => Ok(()),
        c => Err(Exit(c)),
    }
}

/// Say `msg` (one line on stderr) and end the command with `code`.
pub(crate) fn fail(code: i32, msg: &str) -> Exit {
    say(msg);
    Exit(code)
}

fn list_options() -> Done {
    use std::fmt::Write;
    let mut out = String::new();
    let all = options::all();
    let _ = writeln!(out, "Supported job options ({}):\n", all.len());
    for o in all {
        let names = std::iter::once(o.name)
            .chain(o.aliases.iter().copied())
            .collect::<Vec<_>>()
            .join(", ");
        let flag = match o.arity {
            Arity::Flag => " (flag)",
            Arity::Optional => " (value optional)",
            Arity::Value => "",
        };
        let _ = writeln!(
            out,
            "{names}{flag}\n    {}\n    allowed: {}",
            o.help,
            o.allowed_values()
        );
    }
    let _ = writeln!(
        out,
        "\nAccepted and ignored on purpose ({}):\n",
        optsets::IGNORED.len()
    );
    for (n, why) in optsets::IGNORED {
        let _ = writeln!(out, "{n}\n    {why}");
    }
    let mut names: Vec<&str> = optsets::NOT_YET.to_vec();
    names.sort_unstable();
    if !names.is_empty() {
        let _ = writeln!(
            out,
            "\nfio options not supported yet ({}); a job using one stops with an error:\n",
            names.len()
        );
    }
    for chunk in names.chunks(6) {
        let _ = writeln!(out, "    {}", chunk.join(", "));
    }
    stdout::print(&out)
}

/// `run` (and `emu simulate`, and ssdready called as `fio` with `fio_mode`:
/// ssdready's notes and warnings then stay in the outputs).
pub(crate) fn run_command(args: &[String], simulate: bool, fio_mode: bool) -> Done {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        return outln!("{}", args::RUN_HELP);
    }
    if let Some((hosts, rest)) = ssdready_cmdline::client::split(args).filter(|_| !simulate) {
        return fleet_cmd::run_client(&hosts, &rest);
    }
    // fio's `--server=SPEC [--daemonize=FILE]`: this host becomes a server.
    if let Some(a) = server_cmd::fio_switches(args).filter(|_| !simulate) {
        return server_cmd::command(a.map_err(|e| fail(2, &e))?);
    }
    // Before anything is read: a job file or iolog on a FIFO waits for its
    // writer, and a signal must end that wait (exit 130), not the process.
    let stop = stop_on_signals()?;
    let mut parsed = parse_run_args(args, fio_mode, &stop)?;
    fio_switches(&parsed)?;
    let debug_io = debug_io::DebugIo::for_run(&mut parsed).map_err(|e| fail(1, &e))?;
    let notes_on_stderr = !fio_mode || parsed.fio.stderr_notes;
    if parsed.parse_only {
        return parse_only(&parsed, simulate, fio_mode);
    }
    if panics::injected("main") {
        panic!("injected by SSDREADY_INJECT_PANIC=main");
    }
    let sink = match &parsed.output {
        Some(p) => output::check(p, "option 'output'").map_err(|e| fail(2, &e.to_string()))?,
        None => output::Sink::Stdout,
    };
    // The history and the baseline are checked before the run: bad input
    // ends here, with nothing run or written.
    let mut saved_to = match parsed.save {
        true => Some(
            history::Recorder::prepare(parsed.db.as_deref())
                .map_err(|e| fail(history::error_code(&e), &format!("option '--save': {e}")))?,
        ),
        false => None,
    };
    let base = match parsed.baseline.as_deref() {
        Some(b) => {
            let base = compare::baseline(b, parsed.db.as_deref(), ssdready_history::Kind::Run)?;
            check_baseline_workload(&parsed, &base, simulate)?;
            Some(base)
        }
        None => None,
    };
    if let Some(dir) = &parsed.report {
        report::check_dir(dir, "option 'report'", report::RUN_JSON).map_err(|e| fail(2, &e))?;
    }
    let request = parsed.request(stop.clone());
    if !simulate {
        session::leave_for(&request.sections);
    }
    let mut terminal =
        progress::Terminal::new(progress::display(&parsed)).notes_on_stderr(notes_on_stderr);
    let outcome = match simulate {
        true => ssdready_run::simulate(request, &mut terminal),
        false => ssdready_run::execute(request, &mut terminal),
    };
    // Read (and removed) before anything can end the process.
    let io_lines = debug_io.map(debug_io::DebugIo::finish);
    let result = outcome.map_err(|f| fail(f.exit_code(), f.message()))?;
    run_output::write_outputs(&parsed, &sink, &result, io_lines, &stop, notes_on_stderr)?;
    let mut code = result_code(&result);
    let save_failed = match saved_to.as_mut() {
        Some(h) => !run_output::save(h, &result, parsed.quiet),
        None => false,
    };
    if let Some(b) = &base {
        if code == 0 {
            code = compare::regression_check(b, &ssdready_history::figures::from_run(&result));
        } else {
            say("no regression check: the run did not complete");
        }
    }
    if code == 0 && (save_failed || parsed.fio.warnings_fatal && !result.warnings.is_empty()) {
        code = 1;
    }
    done(code)
}

/// The `run` command line parsed (fio's defaults with `fio_mode`); bad
/// input ends here (exit 2, or 130 when a signal ended a read).
fn parse_run_args(
    args: &[String],
    fio_mode: bool,
    stop: &AtomicBool,
) -> Result<args::RunArgs, Exit> {
    let parsed = args::parse(args).map(|p| match fio_mode {
        true => p.with_fio_defaults(),
        false => p,
    });
    parsed.map_err(|e| {
        let code = match stop.load(std::sync::atomic::Ordering::Relaxed) {
            true => 130,
            false => 2,
        };
        fail(code, &e.to_string())
    })
}

/// A baseline must have run the same workload as the jobs asked for now
/// (job by job: the options that shape the I/O, and the clock).
fn check_baseline_workload(
    parsed: &args::RunArgs,
    base: &compare::Baseline,
    simulate: bool,
) -> Done {
    // A request with errors fails in the run, with its own message.
    let request = parsed.request(Arc::default());
    let Ok(mut specs) = validate::jobs(&request) else {
        return Ok(());
    };
    emulated::assign_emulator(&mut specs);
    let clock = if simulate { "virtual" } else { "real" };
    let jobs: Vec<_> = specs
        .iter()
        .map(|s| {
            (
                s.name.clone(),
                ssdready_history::figures::job_workload(s, clock),
            )
        })
        .collect();
    let why = ssdready_history::compare::workload_differences(&base.side.jobs, &jobs);
    if !why.is_empty() {
        return Err(fail(
            2,
            &format!(
                "option '--baseline': {} ran a different workload: {} (a baseline is a run of the same jobs)",
                base.origin.given,
                why.join("; ")
            ),
        ));
    }
    Ok(())
}

/// Detected corruption, on stderr as fio says it (the first few per job;
/// every one is in the outputs).
fn verify_failures_on_stderr(r: &ssdready_core::result::RunResult) {
    use std::io::Write;
    const SHOWN: usize = 10;
    let mut err = std::io::stderr().lock();
    for j in &r.jobs {
        let Some(v) = j.verify.as_ref().filter(|v| v.failed > 0) else {
            continue;
        };
        for e in v.failures.iter().take(SHOWN) {
            let f = &e.failure;
            let _ = writeln!(
                err,
                "{}: verify failed at file {} offset {}, length {}\n       Expected: {}\n       Received: {}",
                f.check, e.file, f.offset, f.len, f.expected, f.found
            );
        }
        let _ = writeln!(
            err,
            "verify: job '{}': {} of {} blocks failed verification (verify={})",
            j.name, v.failed, v.blocks, v.method
        );
    }
}

/// What fio's global switches do before a run: `--debug=parse` prints the
/// options as read; `--readonly` and `--max-jobs` refuse jobs (exit 2).
fn fio_switches(parsed: &args::RunArgs) -> Done {
    if let Some(dir) = &parsed.fio.aux_path {
        if !dir.is_dir() {
            return Err(fail(
                2,
                &format!(
                    "option '--aux-path': {} is not a directory (allowed: an existing directory)",
                    dir.display()
                ),
            ));
        }
        ssdready_run::auxpath::set(dir);
    }
    if parsed.fio.debugs("parse") {
        for l in fioswitch::parse_debug_lines(&parsed.sections) {
            outln!("{l}")?;
        }
    }
    if parsed.fio.readonly || parsed.fio.max_jobs.is_some() {
        // A request with errors fails in the run, with its own message.
        if let Ok(specs) = validate::jobs(&parsed.request(Arc::default())) {
            fioswitch::check_jobs(&parsed.fio, &specs).map_err(|e| fail(2, &e))?;
        }
    }
    Ok(())
}

/// `--parse-only`: the resolved jobs as JSON (fio mode: checked only, as
/// fio prints nothing).
fn parse_only(parsed: &args::RunArgs, simulate: bool, fio_mode: bool) -> Done {
    // The same destination checks as a run: --output is written here too.
    let sink = match &parsed.output {
        Some(p) => output::check(p, "option 'output'").map_err(|e| fail(2, &e.to_string()))?,
        None => output::Sink::Stdout,
    };
    let time = match simulate {
        true => ssdready_emu::memory::TimeBase::Virtual,
        false => ssdready_emu::memory::TimeBase::Real,
    };
    let request = parsed.request(Arc::default());
    let mut terminal = progress::Terminal::new(progress::display(parsed))
        .notes_on_stderr(!fio_mode || parsed.fio.stderr_notes);
    match ssdready_run::resolve(&request, time, &mut terminal) {
        Ok(_) if fio_mode => {}
        Ok(specs) => {
            let (phases, groups) = ssdready_run::phases::phases_and_groups(&specs);
            let jobs: Vec<serde_json::Value> = specs
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let phase = phases.iter().position(|p| p.contains(&i)).unwrap_or(0);
                    serde_json::json!({ "group": groups[i], "phase": phase, "spec": s })
                })
                .collect();
            let text = serde_json::to_string_pretty(&jobs).expect("specs serialise");
            if let Err(e) = output::write(&sink, &format!("{text}\n")) {
                return Err(fail(1, &e.to_string()));
            }
        }
        Err(f) => return Err(fail(2, f.message())),
    }
    Ok(())
}

/// A flag that SIGINT, SIGTERM and SIGHUP set: every loop of the run
/// (layout, workers, the emulator) watches it and stops within ~100 ms.
pub(crate) fn stop_on_signals() -> Result<Arc<AtomicBool>, Exit> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let mut failed = None;
    let stop = ssdready_run::stop::install(|| {
        let stop = Arc::new(AtomicBool::new(false));
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
                failed.get_or_insert(e);
            }
        }
        stop
    });
    match failed {
        Some(e) => Err(fail(1, &format!("installing a signal handler: {e}"))),
        None => Ok(stop),
    }
}

/// Whether Ctrl-C, SIGTERM or SIGHUP asked to stop (see [`ssdready_run::stop`]).
pub(crate) fn stop_flag() -> Arc<AtomicBool> {
    ssdready_run::stop::flag()
}

fn render(formats: &[args::Format], result: &ssdready_core::result::RunResult) -> String {
    let mut text = String::new();
    for f in formats {
        text.push_str(&match f {
            args::Format::Normal => ssdready_report::text::render(result),
            args::Format::Json => ssdready_report::fio_json::render(result, false),
            args::Format::JsonPlus => ssdready_report::fio_json::render(result, true),
            args::Format::Native => ssdready_report::json::render(result),
            args::Format::Terse => ssdready_report::terse::render(result),
        });
    }
    text
}

/// The exit code of a run whose results were written, saying why on stderr.
fn result_code(r: &ssdready_core::result::RunResult) -> i32 {
    if let Some(f) = &r.failure {
        eprintln!("ssdready: {f}");
        // A later phase's failure that was a bug is still an internal error;
        // one that a stop request caused (a wait on a FIFO ended) is the
        // interruption.
        return if panics::first().is_some() {
            panics::INTERNAL_ERROR
        } else if stop_flag().load(std::sync::atomic::Ordering::Relaxed) {
            130
        } else {
            1
        };
    }
    if r.interrupted {
        eprintln!("ssdready: interrupted; the results cover what ran");
        return 130;
    }
    // Errors gone past under continue_on_error do not fail the run (fio
    // clears them from the job's error); any other does.
    let failed = |j: &ssdready_core::result::JobResult| {
        j.first_error.is_some() || j.errors > j.continued_errors
    };
    if r.jobs.iter().any(failed) {
        1
    } else {
        0
    }
}

fn ramdev_command(cmd: RamdevCmd) -> Done {
    match cmd {
        RamdevCmd::Create { kind, size } => {
            let bytes = ssdready_core::units::parse_size(&size, 1024).map_err(|e| {
                fail(
                    2,
                    &format!("option 'size': {e} (allowed: a size such as 1g)"),
                )
            })?;
            match ramdev::create(&kind, bytes) {
                Ok((k, dev)) => {
                    outln!("{dev}")?;
                    eprintln!(
                        "made a {k} device {dev} of {bytes} bytes\n  {}",
                        ramdev::explain(&k)
                    );
                }
                Err(f) => return Err(fail(f.exit_code(), f.message())),
            }
        }
        RamdevCmd::List => {
            for (k, dev, detail) in ramdev::list() {
                outln!("{dev}\t{k}\t{detail}")?;
            }
        }
        RamdevCmd::Remove { device, all } => {
            if device.is_none() && !all {
                return Err(fail(2, "ramdev remove: name a device, or --all"));
            }
            match ramdev::remove(device.as_deref()) {
                Ok(v) => {
                    for d in v {
                        outln!("removed {d}")?;
                    }
                }
                Err(f) => return Err(fail(f.exit_code(), f.message())),
            }
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    panics::install(|what| {
        // A drive served by this process is handed over, never left behind.
        let drive = emu_cmd::on_panic().unwrap_or_default();
        restore_cmd::put_back_own();
        // Every command writes through `stdout`; this is the last guard:
        // a full or closed output is an error like any other (one line,
        // exit 1), not a bug.
        if let Some(i) = what.find("failed printing to std") {
            say(&format!("{}{drive}", &what[i..]));
            std::process::exit(1);
        }
        say(&format!(
            "internal error: {what} (a bug in ssdready; please report it){drive}"
        ));
        std::process::exit(panics::INTERNAL_ERROR);
    });
    let done = match ssdready_cmdline::fio_mode::invoked_as_fio() {
        true => fio_mode::main(std::env::args().skip(1).collect()),
        false => session::adopt().and_then(|()| command()),
    };
    // Whatever unwinding did not put back of this process's own changes.
    restore_cmd::put_back_own();
    match done {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // Exit codes are 0..=255 (`exit` keeps the low byte).
        Err(Exit(code)) => std::process::ExitCode::from(code as u8),
    }
}

/// `run` and `study` measure in a session of their own
/// ([`session::apart`]); a run's other uses (fio's client and server, a
/// parse or its help) stay here.
fn measured_apart(cmd: &Cmd) -> Option<Done> {
    let args: &[String] = match cmd {
        Cmd::Study(_) => &[],
        Cmd::Run { args } => args,
        _ => return None,
    };
    let elsewhere = ["--client", "--server", "--parse-only", "--help", "-h"];
    let here = args.iter().any(|a| {
        elsewhere
            .iter()
            .any(|e| a == e || a.starts_with(&format!("{e}=")))
    });
    if here {
        return None;
    }
    session::apart(args)
}

/// The command named on the command line, run.
fn command() -> Done {
    let cli = Cli::try_parse().map_err(refuse_arguments)?;
    if let Some(done) = measured_apart(&cli.cmd) {
        return done;
    }
    if !matches!(cli.cmd, Cmd::Restore | Cmd::ServerJob(_)) {
        restore_cmd::recover_left();
    }
    match cli.cmd {
        Cmd::Restore => restore_cmd::command(),
        Cmd::Options { markdown: false } => list_options(),
        Cmd::Options { markdown: true } => out!("{}", ssdready_core::option_doc::markdown()),
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            manpages::completions(Cli::command(), &shell)
        }
        Cmd::Man { dir } => {
            use clap::CommandFactory;
            match manpages::write_pages(&Cli::command(), &dir) {
                Ok(n) => outln!("{n} man pages written to {}", dir.display()),
                Err(e) => Err(fail(2, &e)),
            }
        }
        Cmd::Ramdev { cmd } => ramdev_command(cmd),
        Cmd::Emu {
            cmd: EmuCmd::Presets { toml: None },
        } => list_presets(),
        Cmd::Emu {
            cmd: EmuCmd::Presets { toml: Some(name) },
        } => print_device_file(&name),
        Cmd::Emu {
            cmd: EmuCmd::Attach { spec, transport },
        } => emu_cmd::attach(&spec, &transport),
        Cmd::Emu {
            cmd: EmuCmd::Detach { device, all },
        } => emu_cmd::detach(device.as_deref(), all),
        Cmd::Emu { cmd: EmuCmd::List } => emu_cmd::list(),
        Cmd::Emu {
            cmd: EmuCmd::Simulate { args },
        } => run_command(&args, true, false),
        Cmd::Run { args } => run_command(&args, false, false),
        Cmd::Study(a) => study::command(a),
        Cmd::App(a) => app_cmd::command(a),
        Cmd::History(a) => history::command(a),
        Cmd::Compare(a) => compare::command(a),
        Cmd::Characterize(a) => characterize::command(a),
        Cmd::Limits(a) => limits_cmd::command(a),
        Cmd::Strategies(a) => strategies::command(a),
        Cmd::Report { path, rejudge } => match rejudge {
            true => report::rejudge(&path),
            false => report::command(&path),
        },
        Cmd::Server(a) => server_cmd::command(a),
        Cmd::ServerJob(a) => server_cmd::job(a),
    }
}
