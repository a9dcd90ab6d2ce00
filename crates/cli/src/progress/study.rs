//! What a study prints on stderr: its progress lines (only its warnings
//! when quiet), the plan before it starts, and while the sweeps run a bar
//! with the ETA (one line per run when stderr is not a terminal). The
//! lines, the bar's message and position are `ssdready_study::progress`'s;
//! the findings' text, printed at the end, is the diagnosis's.
//! [`Shown`] is the observer `ssdready study` hands the study crate.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdready_measured::record::RunRecord;
use ssdready_study::driver::Observer;
use ssdready_study::progress::{run_line, Bar};
use ssdready_study::{plan::Plan, session};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The sweeps' bar: drawn on a terminal (a thread moves it within each
/// run), else each run's line.
struct Sweeps {
    bar: ProgressBar,
    lines: bool,
    at: Arc<Mutex<(Bar, Instant)>>,
    ticker: Option<(std::thread::JoinHandle<()>, Arc<AtomicBool>)>,
}

impl Sweeps {
    fn new(p: &Plan, quiet: bool) -> Self {
        let term = std::io::stderr().is_terminal() && !quiet;
        let at = Arc::new(Mutex::new((Bar::of(p), Instant::now())));
        let bar = match term {
            true => ProgressBar::with_draw_target(
                Some(Bar::of(p).length_ms),
                ProgressDrawTarget::stderr(),
            ),
            false => ProgressBar::hidden(),
        };
        let template = "{spinner} [{elapsed_precise}] [{bar:30}] {percent:>3}% ETA {eta} {msg}";
        bar.set_style(ProgressStyle::with_template(template).expect("static template"));
        let ticker = term.then(|| {
            let (bar, at, done) = (bar.clone(), at.clone(), Arc::new(AtomicBool::new(false)));
            let end = done.clone();
            let t = std::thread::spawn(move || {
                while !done.load(Relaxed) {
                    if let Ok(a) = at.lock() {
                        bar.set_position(a.0.position_ms(a.1.elapsed().as_secs_f64()));
                    }
                    bar.tick();
                    std::thread::sleep(Duration::from_millis(200));
                }
            });
            (t, end)
        });
        Sweeps {
            bar,
            lines: !term && !quiet,
            at,
            ticker,
        }
    }

    /// Remove the bar.
    fn finish(mut self) {
        if let Some((t, done)) = self.ticker.take() {
            done.store(true, Relaxed);
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

impl Observer for Sweeps {
    fn starting(&mut self, index: usize, id: &str, _eta: f64) {
        if let Ok(mut a) = self.at.lock() {
            a.1 = Instant::now();
            self.bar.set_message(a.0.starting(index, id));
        }
    }

    fn finished(&mut self, rec: &RunRecord) {
        if let Ok(mut a) = self.at.lock() {
            a.1 = Instant::now();
            self.bar.set_position(a.0.finished());
        }
        match self.lines {
            true => eprintln!("{}", run_line(rec)),
            false if !self.bar.is_hidden() => self.bar.println(run_line(rec)),
            false => {}
        }
    }

    fn dropped(&mut self, n: usize) {
        if let Ok(a) = self.at.lock() {
            self.bar
                .set_length(a.0.dropped(self.bar.length().unwrap_or(0), n));
        }
    }
}

/// The study's progress on stderr.
pub struct Shown {
    quiet: bool,
    bar: Option<Sweeps>,
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
        self.bar = Some(Sweeps::new(plan, self.quiet));
    }

    fn sweeps_done(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish();
        }
    }
}
