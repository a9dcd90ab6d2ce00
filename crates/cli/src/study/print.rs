//! What a study prints: the target and the plan with its ETA before it
//! starts (stderr), a progress bar with the ETA while it runs (stderr; one
//! line per run when stderr is not a terminal), and the findings at the end
//! (stdout). The plan's and the findings' text are `ssdready_study::text`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_measured::record::RunRecord;
use ssdready_study::driver::Observer;
use ssdready_study::plan::Plan;
use ssdready_study::session;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use ssdready_diagnosis::text::findings;

struct Clock {
    done_s: f64,
    per_point_s: f64,
    started: Instant,
}

/// Progress of the study on stderr.
pub struct StudyProgress {
    bar: ProgressBar,
    lines: bool,
    total: usize,
    clock: Arc<Mutex<Clock>>,
    ticker: Option<std::thread::JoinHandle<()>>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

impl StudyProgress {
    /// A bar over the plan's estimated seconds.
    pub fn new(p: &Plan, quiet: bool) -> Self {
        let term = std::io::stderr().is_terminal() && !quiet;
        let per = p.settings.runtime_s + p.settings.ramp_s + p.overhead_s;
        let total_ms = (p.eta_s(0) * 1000.0) as u64;
        let bar = if term {
            let b = ProgressBar::with_draw_target(Some(total_ms), ProgressDrawTarget::stderr());
            b.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{elapsed_precise}] [{bar:30}] {percent:>3}% ETA {eta} {msg}",
                )
                .expect("static template"),
            );
            b
        } else {
            ProgressBar::hidden()
        };
        let clock = Arc::new(Mutex::new(Clock {
            done_s: 0.0,
            per_point_s: per,
            started: Instant::now(),
        }));
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ticker = term.then(|| {
            let (bar, clock, done) = (bar.clone(), clock.clone(), done.clone());
            std::thread::spawn(move || {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    if let Ok(c) = clock.lock() {
                        let within = c.started.elapsed().as_secs_f64().min(c.per_point_s);
                        bar.set_position(((c.done_s + within) * 1000.0) as u64);
                    }
                    bar.tick();
                    std::thread::sleep(Duration::from_millis(200));
                }
            })
        });
        StudyProgress {
            bar,
            lines: !term && !quiet,
            total: p.points.len(),
            clock,
            ticker,
            done,
        }
    }

    /// Remove the bar.
    pub fn finish(mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }

    fn say(&self, line: String) {
        if self.lines {
            eprintln!("{line}");
        } else if !self.bar.is_hidden() {
            self.bar.println(line);
        }
    }
}

impl Observer for StudyProgress {
    fn starting(&mut self, index: usize, id: &str, _eta: f64) {
        if let Ok(mut c) = self.clock.lock() {
            c.started = Instant::now();
        }
        self.bar
            .set_message(format!("run {}/{} {id}", index + 1, self.total));
    }

    fn finished(&mut self, rec: &RunRecord) {
        if let Ok(mut c) = self.clock.lock() {
            c.done_s += c.per_point_s;
            c.started = Instant::now();
            self.bar.set_position((c.done_s * 1000.0) as u64);
        }
        let what = match &rec.error {
            Some(e) => format!("failed: {e}"),
            None => format!(
                "{} IOPS, {} mean, {} p99",
                fmt_count(rec.summary.iops),
                fmt_ns(rec.summary.lat_mean_ns),
                fmt_ns(rec.summary.lat_p99_ns as f64)
            ),
        };
        self.say(format!("  {:<28} {what}", rec.id));
    }

    fn dropped(&mut self, n: usize) {
        if let Ok(c) = self.clock.lock() {
            let len = self.bar.length().unwrap_or(0);
            self.bar
                .set_length(len.saturating_sub((n as f64 * c.per_point_s * 1000.0) as u64));
        }
    }
}

/// The study's progress on stderr: its lines (only its warnings when
/// quiet), the plan, and the sweeps' bar.
pub struct Shown {
    quiet: bool,
    bar: Option<StudyProgress>,
}

impl Shown {
    pub fn new(quiet: bool) -> Self {
        Shown { quiet, bar: None }
    }
}

impl Observer for Shown {
    fn starting(&mut self, index: usize, id: &str, eta_s: f64) {
        if let Some(b) = &mut self.bar {
            b.starting(index, id, eta_s);
        }
    }

    fn finished(&mut self, rec: &RunRecord) {
        if let Some(b) = &mut self.bar {
            b.finished(rec);
        }
    }

    fn dropped(&mut self, n: usize) {
        if let Some(b) = &mut self.bar {
            b.dropped(n);
        }
    }
}

impl session::Observer for Shown {
    fn note(&mut self, line: &str) {
        if !self.quiet {
            crate::say(line);
        }
    }

    fn warn(&mut self, line: &str) {
        crate::say(line);
    }

    fn block(&mut self, text: &str) {
        if !self.quiet {
            eprint!("{text}");
        }
    }

    fn sweeps(&mut self, plan: &Plan) {
        self.bar = Some(StudyProgress::new(plan, self.quiet));
    }

    fn sweeps_done(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
}
