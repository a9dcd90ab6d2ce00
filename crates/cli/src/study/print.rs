//! What a study prints: the target and the plan with its ETA before it
//! starts (stderr), a progress bar with the ETA while it runs (stderr; one
//! line per run when stderr is not a terminal), and the findings at the end
//! (stdout).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_study::driver::Observer;
use ssdready_study::model::{RunRecord, StudyDoc, TargetProfile};
use ssdready_study::plan::Plan;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use ssdready_study::answer::{describe, fmt_duration};

/// The plan, before the study starts.
pub fn plan(targets: &[TargetProfile], p: &Plan, quick: bool) -> String {
    let mut s = String::new();
    for t in targets {
        let _ = writeln!(s, "target {}", describe(t));
    }
    let eta = p.eta_s(0);
    let _ = writeln!(
        s,
        "plan ({}): up to {} runs of {:.1} s{} over {}, about {} (the queue-depth sweep stops once saturated)",
        if quick { "quick" } else { "full" },
        p.points.len(),
        p.settings.runtime_s,
        if p.settings.ramp_s > 0.0 {
            format!(" after a {:.1} s ramp", p.settings.ramp_s)
        } else {
            String::new()
        },
        ssdready_core::units::fmt_bytes(p.settings.region_bytes as f64),
        fmt_duration(eta)
    );
    for sw in &p.sweeps {
        let _ = writeln!(s, "  {:<12} {:>3} runs  {}", sw.name, sw.points, sw.what);
    }
    for k in &p.skipped {
        let _ = writeln!(s, "  skipped: {}: {}", k.what, k.why);
    }
    s
}

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

/// The findings, at the end.
pub fn findings(d: &StudyDoc, wall_s: f64) -> String {
    let mut s = String::new();
    let f = &d.figures;
    let t = &d.targets[0];
    let ok = d.runs.iter().filter(|r| r.error.is_none()).count();
    let _ = writeln!(
        s,
        "ssdready study of {} — {} runs in {}{}",
        describe(t),
        ok,
        fmt_duration(wall_s),
        if d.interrupted {
            " (interrupted: figures cover what ran)"
        } else {
            ""
        }
    );
    let l = &f.device_limit;
    let _ = writeln!(s, "{}", ssdready_study::answer::device_limit_line(f));
    let _ = writeln!(
        s,
        "\n  QD        IOPS   mean lat    p99 lat  delivered  device alone"
    );
    for c in &f.qd_curve {
        let delivered = l
            .iops
            .map_or("-".to_string(), |i| format!("{:.0} %", 100.0 * c.iops / i));
        let alone = c.device_iops.map_or("-".to_string(), fmt_count);
        let _ = writeln!(
            s,
            "  {:>3} {:>10} {:>10} {:>10} {:>10} {:>13}",
            c.qd,
            fmt_count(c.iops),
            fmt_ns(c.lat_mean_ns),
            fmt_ns(c.lat_p99_ns as f64),
            delivered,
            alone
        );
    }
    if let Some(k) = ssdready_study::answer::knee_line(f) {
        let _ = writeln!(s, "  {k}");
    }
    let strategies = ssdready_study::answer::strategies_lines(f);
    if !strategies.is_empty() {
        let _ = writeln!(s, "\n{}", strategies.join("\n"));
    }
    let _ = writeln!(s, "\nfindings:");
    for (i, v) in d.verdicts.iter().enumerate() {
        let _ = writeln!(
            s,
            "{:>2}. {} [confidence {}: {}]",
            i + 1,
            v.finding,
            v.confidence,
            v.confidence_why
        );
        let _ = writeln!(s, "    → {}", v.recommendation);
    }
    if !d.skipped.is_empty() {
        let _ = writeln!(s, "\nnot studied:");
        for k in &d.skipped {
            let _ = writeln!(s, "  {}: {}", k.what, k.why);
        }
    }
    s
}
