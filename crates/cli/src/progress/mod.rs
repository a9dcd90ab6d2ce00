//! Live progress on stderr, once a second: elapsed / remaining time and the
//! current IOPS and bandwidth per direction. Silent when stderr is not a
//! terminal or with `--quiet` (fio's `--eta=auto`); `--eta=never` silences
//! it, `--eta=always` shows it anyway (as lines when stderr is not a
//! terminal), `--eta-newline=T` prints it as a new line every T.
//! `--status-interval=T` adds a line every T with the figures since the
//! phase started (fio dumps its whole report to stdout instead; a stated
//! difference).
//!
//! [`Terminal`] is the command line's observer of a run (the library's
//! [`RunObserver`]): it prints the run's warnings and notes on stderr as
//! they come, and draws the progress described above. A study's progress
//! (its lines, and a bar over its sweeps) is [`study`]'s.

pub mod study;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdready_cmdline::args::{Eta, RunArgs};
use ssdready_core::units::{fmt_bytes, fmt_count};
use ssdready_run::{Failure, RunObserver, RunRequest, RunResult, Totals};
use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The display; a no-op when hidden.
pub struct Progress {
    bar: ProgressBar,
    last: [(u64, u64); 3],
    last_t: f64,
    expected_s: Option<f64>,
    show: Display,
    next_line: f64,
    next_status: f64,
}

/// How progress is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Display {
    /// The live line on a terminal (and the layout bars).
    pub bar: bool,
    /// Progress as lines, every this many seconds.
    pub lines_every_s: Option<f64>,
    /// Figures since the phase started, every this many seconds.
    pub status_every_s: Option<f64>,
}

/// How progress is shown for `args`.
pub fn display(args: &RunArgs) -> Display {
    let tty = std::io::stderr().is_terminal();
    let newline = args.eta_newline_ns.map(|t| t as f64 / 1e9);
    let (bar, lines) = match args.eta {
        Eta::Never => (false, None),
        _ if args.quiet => (false, None),
        Eta::Auto if tty => (newline.is_none(), newline),
        Eta::Auto => (false, None),
        Eta::Always if tty && newline.is_none() => (true, None),
        Eta::Always => (false, Some(newline.unwrap_or(1.0))),
    };
    Display {
        bar,
        lines_every_s: lines,
        status_every_s: args.status_interval_ns.map(|t| t as f64 / 1e9),
    }
}

/// How progress is shown for a run started by another command (study,
/// characterize, strategies): fio's `--eta=auto`, or nothing when `quiet`.
pub fn display_auto(quiet: bool) -> Display {
    Display {
        bar: !quiet && std::io::stderr().is_terminal(),
        ..Display::default()
    }
}

/// Run a planner's request (study, characterize, strategies) through the
/// library, as every command that runs jobs does: its options go through
/// the option table with a job file's checks, `stop` ends it, the command's
/// `--allow-destructive` is passed on, the request's `quiet` hides the
/// progress, and a panic comes back as [`Failure::Internal`].
pub fn run_request(
    request: &RunRequest,
    stop: Arc<AtomicBool>,
    allow_destructive: bool,
) -> Result<RunResult, Failure> {
    let mut request = request.clone();
    request.stop = stop;
    request.allow_destructive |= allow_destructive;
    let display = display_auto(request.quiet);
    crate::session::leave_for(&request.sections);
    ssdready_run::execute(request, &mut Terminal::new(display))
}

/// The command line's observer of a run: warnings and notes on stderr at
/// once, progress as its [`Display`] says.
pub struct Terminal {
    display: Display,
    /// Notes and warnings on stderr (off in fio mode: they are in the outputs).
    notes: bool,
    phase: Option<Progress>,
    layout: Option<ProgressBar>,
}

impl Terminal {
    pub fn new(display: Display) -> Self {
        Terminal {
            display,
            notes: true,
            phase: None,
            layout: None,
        }
    }
}

impl Terminal {
    /// Whether notes and warnings are said on stderr as they come.
    pub fn notes_on_stderr(mut self, on: bool) -> Self {
        self.notes = on;
        self
    }
}

impl RunObserver for Terminal {
    fn warning(&mut self, text: &str) {
        if self.notes {
            eprintln!("ssdready: warning: {text}");
        }
    }

    fn note(&mut self, text: &str) {
        if self.notes {
            eprintln!("ssdready: {text}");
        }
    }

    fn layout_start(&mut self, path: &str, total: u64) {
        self.layout = Some(layout_bar(self.display.bar, path, total));
    }

    fn layout_progress(&mut self, done: u64) {
        if let Some(b) = &self.layout {
            b.set_position(done);
        }
    }

    fn layout_end(&mut self) {
        if let Some(b) = self.layout.take() {
            b.finish_and_clear();
        }
    }

    fn phase_start(&mut self, expected_s: Option<f64>) {
        self.phase = Some(Progress::new(self.display, expected_s));
    }

    fn progress(&mut self, t: f64, totals: &Totals) {
        if let Some(p) = &mut self.phase {
            p.tick(t, totals);
        }
    }

    fn phase_end(&mut self) {
        if let Some(p) = self.phase.take() {
            p.finish();
        }
    }
}

impl Progress {
    /// A display for a run expected to last `expected_s` seconds, if known.
    pub fn new(display: Display, expected_s: Option<f64>) -> Self {
        let show = display.bar;
        let bar = if show {
            ProgressBar::new_spinner()
        } else {
            ProgressBar::hidden()
        };
        if !show {
            bar.set_draw_target(ProgressDrawTarget::hidden());
        }
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
        Progress {
            bar,
            last: [(0, 0); 3],
            last_t: 0.0,
            expected_s,
            show: display,
            next_line: display.lines_every_s.unwrap_or(f64::INFINITY),
            next_status: display.status_every_s.unwrap_or(f64::INFINITY),
        }
    }

    /// Update from the workers' counters at `t` seconds since start.
    pub fn tick(&mut self, t: f64, now: &Totals) {
        let now = *now;
        let dt = (t - self.last_t).max(1e-3);
        let mut parts = Vec::new();
        for (d, name) in ["read", "write", "trim"].iter().enumerate() {
            let (ios, bytes) = (now[d].0 - self.last[d].0, now[d].1 - self.last[d].1);
            if now[d].0 > 0 {
                parts.push(format!(
                    "{name} {} IOPS {}/s",
                    fmt_count(ios as f64 / dt),
                    fmt_bytes(bytes as f64 / dt)
                ));
            }
        }
        let time = match self.expected_s {
            Some(e) => format!("{t:.0}s elapsed, {:.0}s left", (e - t).max(0.0)),
            None => format!("{t:.0}s elapsed"),
        };
        let line = format!("{time} | {}", parts.join(" | "));
        if t >= self.next_line {
            eprintln!("ssdready: {line}");
            self.next_line += self.show.lines_every_s.unwrap_or(f64::INFINITY);
        }
        if t >= self.next_status {
            eprintln!("ssdready: status {}", cumulative(t, &now));
            self.next_status += self.show.status_every_s.unwrap_or(f64::INFINITY);
        }
        self.bar.set_message(line);
        self.bar.tick();
        self.last = now;
        self.last_t = t;
    }

    /// Remove the line.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Figures since the start, `t` seconds ago: I/Os, bytes, mean IOPS and
/// bandwidth per direction.
fn cumulative(t: f64, now: &[(u64, u64); 3]) -> String {
    let mut parts = vec![format!("after {t:.0}s")];
    for (d, name) in ["read", "write", "trim"].iter().enumerate() {
        let (ios, bytes) = now[d];
        if ios > 0 {
            parts.push(format!(
                "{name} {} I/Os {} ({} IOPS {}/s)",
                fmt_count(ios as f64),
                fmt_bytes(bytes as f64),
                fmt_count(ios as f64 / t.max(1e-3)),
                fmt_bytes(bytes as f64 / t.max(1e-3))
            ));
        }
    }
    parts.join(" | ")
}

/// A byte progress bar for laying out files.
pub fn layout_bar(show: bool, path: &str, total: u64) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    b.set_style(
        ProgressStyle::with_template(
            "laying out {msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
        )
        .expect("static template"),
    );
    b.set_message(path.to_string());
    b
}
