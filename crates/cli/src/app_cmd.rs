//! `ssdready app NAME --directory DIR`: how much of the device's speed
//! reaches a file system and a database (small files, SQLite OLTP,
//! fdatasync log appends, pgbench), with the device's I/O per application
//! operation. The workloads, and reading their options' text, live in the
//! `ssdready-app` crate; this is the command line, progress and output.

use crate::{fail, say};
use ssdready_app::{Config, Error, Journal, Synchronous, Workload};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The `app` command line.
#[derive(clap::Args, Debug)]
pub struct AppArgs {
    /// small-files, sqlite, fdatasync or pgbench.
    pub name: String,
    /// The directory to run in (its file system is what is measured); the
    /// workload's files go in DIR/ssdready-NAME and stay there.
    #[arg(long, value_name = "DIR")]
    pub directory: PathBuf,
    /// Length of the timed phase, e.g. 10s, 500ms.
    #[arg(long, value_name = "TIME", default_value = "10s")]
    pub runtime: String,
    /// Concurrent workers: threads, SQLite connections, pgbench clients.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub jobs: u32,
    /// Data set size: thousands of files (small-files), pgbench scale
    /// (sqlite, pgbench: 100,000 accounts each), log MiB per job (fdatasync).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub scale: u32,
    /// Seed of the workload's random choices.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Append size (fdatasync, default 4k) or largest file (small-files, default 16k).
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<String>,
    /// SQLite journal: wal or delete.
    #[arg(long, value_name = "MODE", default_value = "wal")]
    pub journal: String,
    /// SQLite synchronous: normal or full.
    #[arg(long, value_name = "MODE", default_value = "full")]
    pub synchronous: String,
    /// small-files: fsync each file after a create or an append.
    #[arg(long)]
    pub fsync: bool,
    /// pgbench: keep the cluster's files after a failed or interrupted run.
    #[arg(long)]
    pub keep: bool,
    /// sqlite, pgbench: run the timed phase (pgbench: the server) in a
    /// memory cgroup (root) limited to SIZE, so the page cache holds only
    /// part of the data; several sizes (comma-separated) sweep them, as
    /// --cache-effect does.
    #[arg(long, value_name = "SIZE[,SIZE…]")]
    pub memory: Option<String>,
    /// sqlite, pgbench: the same workload with its data held by the page
    /// cache and not (memory limits from --memory, or chosen from the data size):
    /// transactions/s and the device's reads per transaction at each.
    #[arg(long)]
    pub cache_effect: bool,
    /// Remove the workload's files from DIR (ssdready-NAME) and exit.
    #[arg(long)]
    pub clean: bool,
    /// Write the result here (atomically) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// text or json.
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    pub output_format: String,
    /// No progress on stderr.
    #[arg(long)]
    pub quiet: bool,
}

fn config(a: &AppArgs) -> Result<Config, Error> {
    let mut c = Config::new(Workload::parse(&a.name)?, a.directory.clone());
    c.set_runtime(&a.runtime)?;
    c.jobs = a.jobs;
    c.scale = a.scale;
    if let Some(s) = a.seed {
        c.seed = s;
    }
    if let Some(bs) = &a.bs {
        c.set_bs(bs)?;
    }
    c.journal = Journal::parse(&a.journal)?;
    c.synchronous = Synchronous::parse(&a.synchronous)?;
    c.fsync = a.fsync;
    c.keep = a.keep;
    if let Some(m) = &a.memory {
        c.set_memory(m)?;
    }
    c.settle(a.cache_effect)?;
    Ok(c)
}

pub fn command(a: AppArgs) -> crate::Done {
    let cfg = config(&a).map_err(|e| fail(e.exit_code(), &e.to_string()))?;
    let json = match a.output_format.as_str() {
        "json" => true,
        "text" => false,
        f => {
            return Err(fail(
                2,
                &format!("option '--output-format': unknown format '{f}' (allowed: text, json)"),
            ))
        }
    };
    if a.clean {
        match ssdready_app::clean(&cfg.directory, cfg.workload) {
            Ok(true) => say(&format!(
                "removed {}",
                ssdready_app::workdir_of(&cfg.directory, cfg.workload).display()
            )),
            Ok(false) => say("nothing to remove"),
            Err(e) => return Err(fail(e.exit_code(), &e.to_string())),
        }
        return Ok(());
    }
    let sink = match &a.output {
        Some(p) => {
            crate::output::check(p, "option 'output'").map_err(|e| fail(2, &e.to_string()))?
        }
        None => crate::output::Sink::Stdout,
    };
    let stop = crate::stop_on_signals()?;
    let done = Arc::new(AtomicBool::new(false));
    let ticker = (!a.quiet && std::io::stderr().is_terminal())
        .then(|| progress(cfg.workload.name(), done.clone()));
    if cfg.cache_effect {
        let result = ssdready_app::cache::sweep(&cfg, stop);
        done.store(true, Ordering::Relaxed);
        if let Some(t) = ticker {
            let _ = t.join();
        }
        let r = result.map_err(|e| {
            fail(
                e.exit_code(),
                &format!("app {} --cache-effect: {e}", cfg.workload.name()),
            )
        })?;
        let text = if json {
            format!(
                "{}\n",
                serde_json::to_string_pretty(&r).expect("results serialise")
            )
        } else {
            r.to_text()
        };
        return finish(&sink, &text, r.interrupted);
    }
    let result = ssdready_app::run(&cfg, stop);
    done.store(true, Ordering::Relaxed);
    if let Some(t) = ticker {
        let _ = t.join();
    }
    let r =
        result.map_err(|e| fail(e.exit_code(), &format!("app {}: {e}", cfg.workload.name())))?;
    let text = if json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&r.to_json()).expect("results serialise")
        )
    } else {
        r.to_text()
    };
    finish(&sink, &text, r.interrupted)
}

/// Write the result; exit 130 after an interrupted run.
fn finish(sink: &crate::output::Sink, text: &str, interrupted: bool) -> crate::Done {
    if let Err(e) = crate::output::write(sink, text) {
        // Ctrl-C while waiting for a FIFO's reader: interrupted, as `run`.
        let stopped = crate::stop_flag().load(Ordering::Relaxed);
        return Err(fail(if stopped { 130 } else { 1 }, &e.to_string()));
    }
    if interrupted {
        say("interrupted; the results cover what ran");
        return Err(crate::Exit(130));
    }
    Ok(())
}

/// Elapsed time on stderr each second while the workload runs.
fn progress(name: &'static str, done: Arc<AtomicBool>) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        let mut last = 0;
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let s = t0.elapsed().as_secs();
            if s > last {
                last = s;
                eprint!("\rssdready: app {name}: {s} s");
            }
        }
        if last > 0 {
            eprintln!();
        }
    })
}
