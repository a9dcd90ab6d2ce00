//! `ssdready`: how much of an SSD's speed does this Linux platform deliver to
//! applications, and where does the rest go?
//!
//! Exit codes: 0 success; 1 a failure while running; 2 bad input (nothing was
//! written); 130 interrupted (results so far were still reported).

mod args;
mod progress;
mod run;
mod worker;

use clap::{Parser, Subcommand};
use ssdready_core::options::{Arity, OPTIONS};
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "ssdready",
    version,
    about = "Measure how much of an SSD's speed the platform delivers, and where the rest goes"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a workload, fio style: ssdready run --name=t --rw=randread --bs=4k --filename=/tmp/f --size=1g
    ///
    /// Options before the first --name are global; each --name starts a job.
    /// Tool options: --output=FILE, --output-format=normal|json[,…], --quiet,
    /// --allow-destructive. `ssdready options` lists the job options.
    #[command(disable_help_flag = true)]
    Run {
        /// Job options as --option=value.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// List every job option with its allowed values.
    Options,
}

const RUN_HELP: &str =
    "usage: ssdready run [--output=FILE] [--output-format=normal|json] [--quiet] \
[--allow-destructive] [--OPTION=VALUE]... [--name=JOB [--OPTION=VALUE]...]...

Options before the first --name apply to every job; each --name starts a job.
Example: ssdready run --name=t --rw=randread --bs=4k --iodepth=32 --ioengine=io_uring \\
         --direct=1 --filename=/tmp/ssdready.dat --size=1g --runtime=10s --time_based
Run 'ssdready options' for every job option.";

fn fail(code: i32, msg: &str) -> ! {
    eprintln!("ssdready: {msg}");
    std::process::exit(code);
}

fn list_options() {
    let mut out = std::io::stdout().lock();
    for o in OPTIONS {
        let names = std::iter::once(o.name)
            .chain(o.aliases.iter().copied())
            .collect::<Vec<_>>()
            .join(", ");
        let flag = if o.arity == Arity::Flag {
            " (flag)"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{names}{flag}\n    {}\n    allowed: {}",
            o.help, o.allowed
        );
    }
}

fn main() {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Options => list_options(),
        Cmd::Run { args } => {
            if args.iter().any(|a| a == "--help" || a == "-h") {
                println!("{RUN_HELP}");
                return;
            }
            let parsed = args::parse(&args).unwrap_or_else(|e| fail(2, &e.to_string()));
            let stop = Arc::new(AtomicBool::new(false));
            for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
                signal_hook::flag::register(sig, stop.clone())
                    .unwrap_or_else(|e| fail(1, &format!("installing a signal handler: {e}")));
            }
            let result = match run::execute(&parsed, stop) {
                Ok(r) => r,
                Err(run::Failure::BadInput(m)) => fail(2, &m),
                Err(run::Failure::Runtime(m)) => fail(1, &m),
            };
            let mut text = String::new();
            for f in &parsed.formats {
                text.push_str(&match f {
                    args::Format::Normal => ssdready_report::text::render(&result),
                    args::Format::Json => ssdready_report::json::render(&result),
                });
            }
            match &parsed.output {
                Some(p) => std::fs::write(p, &text)
                    .unwrap_or_else(|e| fail(1, &format!("writing {}: {e}", p.display()))),
                None => {
                    let _ = std::io::stdout().lock().write_all(text.as_bytes());
                }
            }
            for w in &result.warnings {
                eprintln!("ssdready: warning: {w}");
            }
            let job_errors: u64 = result.jobs.iter().map(|j| j.errors).sum();
            if result.interrupted {
                eprintln!("ssdready: interrupted; the results above cover what ran");
                std::process::exit(130);
            }
            if job_errors > 0 || result.jobs.iter().any(|j| j.first_error.is_some()) {
                std::process::exit(1);
            }
        }
    }
}
