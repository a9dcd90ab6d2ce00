//! The worker loop against a scripted engine: completions out of order,
//! failed and short I/Os, a stop request and the deadline. The engine
//! keeps its own count of what it completed, and checks that the loop
//! never reuses a slot still in flight; the loop's statistics must match.

use super::*;
use ssdready_core::req::{Completion, IoReq};
use ssdready_core::Ddir;
use ssdready_io::clock::Clock;
use ssdready_io::engine::Queued;
use ssdready_workload::plan::Region;
use std::sync::atomic::AtomicBool;
use std::sync::Barrier;
use std::sync::Mutex;
use std::time::{Duration, Instant};

mod budgets;
mod data;
mod semantics;

/// What the scripted engine returns for the `n`th I/O it queued (0-based)
/// of `len` bytes: bytes transferred or `-errno`.
type Script = Box<dyn Fn(u64, u32) -> i64 + Send>;

/// What the engine saw, for the test to compare with the loop's figures.
#[derive(Default, Debug)]
struct Seen {
    queued: u64,
    /// Completions handed back, per direction: (I/Os, bytes) of the
    /// successful ones, and the failed ones.
    ok: [(u64, u64); 3],
    failed: u64,
    /// The largest number of completions handed back by one call.
    largest_batch: usize,
    /// A slot queued again while still in flight, or an unknown slot.
    misuse: Option<String>,
}

struct Mock {
    latency: Duration,
    script: Script,
    queued: Vec<(u32, Ddir, i64)>,
    /// Submitted: slot, direction, result, when it is due.
    flight: Vec<(u32, Ddir, i64, Instant)>,
    busy: Vec<bool>,
    seen: Arc<Mutex<Seen>>,
}

impl Mock {
    fn new(latency: Duration, script: Script) -> (Self, Arc<Mutex<Seen>>) {
        let seen = Arc::new(Mutex::new(Seen::default()));
        let m = Mock {
            latency,
            script,
            queued: Vec::new(),
            flight: Vec::new(),
            busy: Vec::new(),
            seen: seen.clone(),
        };
        (m, seen)
    }
}

impl Engine for Mock {
    fn name(&self) -> &'static str {
        "mock"
    }

    fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
        let mut seen = self.seen.lock().unwrap();
        let slot = req.slot as usize;
        if self.busy.len() <= slot {
            self.busy.resize(slot + 1, false);
        }
        if self.busy[slot] {
            seen.misuse
                .get_or_insert(format!("slot {slot} queued while in flight"));
        }
        self.busy[slot] = true;
        let result = (self.script)(seen.queued, req.len);
        seen.queued += 1;
        self.queued.push((req.slot, req.ddir, result));
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> Result<usize, EngineError> {
        let due = Instant::now() + self.latency;
        let n = self.queued.len();
        self.flight
            .extend(self.queued.drain(..).map(|(s, d, r)| (s, d, r, due)));
        Ok(n)
    }

    /// Hands back the due I/Os newest first (the reverse of their order of
    /// submission), waiting until at least `min` are due.
    fn getevents(&mut self, min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        assert!(
            min <= self.flight.len(),
            "the loop waits for {min} completions with {} in flight",
            self.flight.len()
        );
        let give_up = Instant::now() + Duration::from_secs(10);
        loop {
            let now = Instant::now();
            let due = self.flight.iter().filter(|f| f.3 <= now).count();
            if due >= min.max(1) || (min == 0 && due == 0) {
                break;
            }
            assert!(now < give_up, "no completion due for 10 s");
            std::thread::yield_now();
        }
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap();
        let mut n = 0;
        for i in (0..self.flight.len()).rev() {
            if self.flight[i].3 > now {
                continue;
            }
            let (slot, ddir, result, _) = self.flight.remove(i);
            self.busy[slot as usize] = false;
            if result >= 0 {
                seen.ok[ddir.idx()].0 += 1;
                seen.ok[ddir.idx()].1 += result as u64;
            } else {
                seen.failed += 1;
            }
            out.push(Completion { slot, result });
            n += 1;
        }
        seen.largest_batch = seen.largest_batch.max(n);
        Ok(())
    }

    fn completion_mode(&self) -> &'static str {
        "interrupt"
    }
}

/// A job of `options` (key, value), through the option table.
fn spec(options: &[(&str, &str)]) -> Arc<JobSpec> {
    let mut r = crate::request::RunRequest::default();
    r.job("mock")
        .option("filename", Some("mock"))
        .option("ioengine", Some("io_uring"));
    for (k, v) in options {
        r.option(k, (!v.is_empty()).then_some(*v));
    }
    let mut specs =
        ssdready_core::options::build_jobs_on(&r.sections, &crate::sys::host()).unwrap();
    Arc::new(specs.remove(0))
}

fn ctx(spec: Arc<JobSpec>, stop: Arc<AtomicBool>) -> WorkerCtx {
    let size = spec.size.unwrap_or(1 << 20);
    WorkerCtx {
        job: Arc::new(ssdready_core::resolved::ResolvedJob::new(&spec)),
        spec,
        targets: Arc::new(Vec::new()),
        regions: vec![Region {
            file: 0,
            offset: 0,
            len: size,
        }],
        index: 0,
        number: 1,
        clock: Clock::calibrate(),
        stop,
        end_phase: Arc::default(),
        live: Arc::default(),
        opened: Arc::new(Barrier::new(1)),
        start: Arc::new(Barrier::new(1)),
        cpus: None,
        emu: None,
        join: None,
        waitees: Vec::new(),
        flow: None,
        zbd: None,
        run_workers: 1,
        file_locks: None,
    }
}

/// Run the loop of `ctx` on `engine` to its end.
fn run_mock(ctx: &WorkerCtx, engine: Mock) -> WorkerOutcome {
    let mut out = WorkerOutcome::empty(1);
    let mut engine = ssdready_io::AnyEngine::dynamic(engine);
    run_loop(ctx, &mut engine, Wait::Engine, &mut out);
    out
}

fn dir(out: &WorkerOutcome, d: Ddir) -> &ssdready_core::stats::DirStats {
    out.stats.dirs[d.idx()]
        .as_deref()
        .expect("the direction ran")
}

const LATENCY: Duration = Duration::from_micros(300);

#[test]
fn completions_out_of_order_are_each_counted_once_with_their_latency() {
    let s = spec(&[
        ("rw", "randrw"),
        ("bs", "4k"),
        ("size", "1m"),
        ("iodepth", "8"),
        ("iodepth_batch_complete_max", "8"),
    ]);
    let (mock, seen) = Mock::new(LATENCY, Box::new(|_, len| i64::from(len)));
    let c = ctx(s, Arc::default());
    let out = run_mock(&c, mock);
    let seen = seen.lock().unwrap();
    assert_eq!(out.error, None);
    assert_eq!(seen.misuse, None);
    assert!(
        seen.largest_batch > 1,
        "the engine never returned a batch out of order"
    );
    assert_eq!(seen.queued, 256, "1 MiB in 4 KiB blocks");
    let (r, w) = (dir(&out, Ddir::Read), dir(&out, Ddir::Write));
    assert_eq!(r.ios + w.ios, 256);
    for (d, st) in [(Ddir::Read, r), (Ddir::Write, w)] {
        assert_eq!((st.ios, st.bytes), seen.ok[d.idx()], "{d:?}");
        assert_eq!(st.lat.count(), st.ios);
        assert_eq!(st.clat.count(), st.ios);
        assert_eq!(st.short_ios, 0);
        // Each I/O was handed back only once due: no latency is shorter.
        assert!(
            st.lat.min() >= LATENCY.as_nanos() as u64,
            "{d:?}: a latency of {} ns is below the engine's {} ns",
            st.lat.min(),
            LATENCY.as_nanos()
        );
        // And the slowest is not absurd (a generous bound for a loaded CI).
        assert!(st.lat.max() < 2_000_000_000, "{d:?}: {} ns", st.lat.max());
    }
    assert_eq!(out.stats.errors, 0);
    // The live counters the progress display reads agree.
    for (d, st) in [(Ddir::Read, r), (Ddir::Write, w)] {
        let live = (
            c.live.ios[d.idx()].load(Relaxed),
            c.live.bytes[d.idx()].load(Relaxed),
        );
        assert_eq!(live, (st.ios, st.bytes), "{d:?}");
    }
}

#[test]
fn a_failed_io_stops_the_job_and_the_ios_in_flight_are_still_reaped() {
    let s = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "1m"),
        ("iodepth", "4"),
    ]);
    let (mock, seen) = Mock::new(
        LATENCY,
        Box::new(|n, len| {
            if n == 20 {
                -(libc::EIO as i64)
            } else {
                i64::from(len)
            }
        }),
    );
    let out = run_mock(&ctx(s, Arc::default()), mock);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.misuse, None);
    assert!(seen.queued < 256, "the job went on after its error");
    let r = dir(&out, Ddir::Read);
    assert_eq!((r.ios, r.bytes), seen.ok[Ddir::Read.idx()]);
    assert_eq!(
        r.ios + 1,
        seen.queued,
        "every queued I/O but the failed one counts"
    );
    assert_eq!(out.stats.errors, 1);
    assert_eq!(out.stats.first_errno, libc::EIO);
    let e = out.stats.first_error.as_deref().unwrap_or("");
    assert!(e.contains("read of 4096 bytes"), "{e}");
}

#[test]
fn with_continue_on_error_every_io_runs_and_the_failures_are_counted() {
    let s = spec(&[
        ("rw", "write"),
        ("bs", "4k"),
        ("size", "256k"),
        ("iodepth", "4"),
        ("continue_on_error", "all"),
    ]);
    let (mock, seen) = Mock::new(
        LATENCY,
        Box::new(|n, len| {
            if n % 16 == 3 {
                -(libc::EIO as i64)
            } else {
                i64::from(len)
            }
        }),
    );
    let out = run_mock(&ctx(s, Arc::default()), mock);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.queued, 64);
    assert_eq!(seen.failed, 4);
    let w = dir(&out, Ddir::Write);
    assert_eq!((w.ios, w.bytes), (60, 60 * 4096));
    assert_eq!(out.stats.errors, 4);
    assert_eq!(out.stats.continued, 4);
    assert_eq!(out.stats.first_error, None);
}

#[test]
fn short_reads_count_the_bytes_they_moved() {
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "8k"),
        ("size", "512k"),
        ("iodepth", "2"),
    ]);
    // Every third read moves half its length.
    let (mock, seen) = Mock::new(
        LATENCY,
        Box::new(|n, len| i64::from(if n % 3 == 0 { len / 2 } else { len })),
    );
    let out = run_mock(&ctx(s, Arc::default()), mock);
    let seen = seen.lock().unwrap();
    let r = dir(&out, Ddir::Read);
    assert_eq!(seen.queued, 64);
    assert_eq!((r.ios, r.bytes), seen.ok[Ddir::Read.idx()]);
    assert_eq!(r.short_ios, 22, "reads 0, 3, …, 63 were short");
    assert_eq!(r.bytes, 64 * 8192 - 22 * 4096);
}

#[test]
fn a_stop_request_ends_a_long_job_promptly_and_what_ran_is_counted() {
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("iodepth", "4"),
        ("time_based", ""),
        ("runtime", "60s"),
    ]);
    let stop = Arc::new(AtomicBool::new(false));
    let (mock, seen) = Mock::new(LATENCY, Box::new(|_, len| i64::from(len)));
    let c = ctx(s, stop.clone());
    let asked = Instant::now();
    let stopper = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, Relaxed);
        })
    };
    let out = run_mock(&c, mock);
    stopper.join().unwrap();
    let took = asked.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "the loop took {took:?} to see a stop asked after 200 ms"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.misuse, None);
    let r = dir(&out, Ddir::Read);
    assert!(r.ios > 0);
    assert_eq!(
        (r.ios, r.bytes),
        seen.ok[Ddir::Read.idx()],
        "the I/Os in flight were reaped"
    );
    assert_eq!(out.error, None);
}

#[test]
fn the_deadline_ends_a_time_based_job_and_sets_its_window() {
    let s = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "64k"),
        ("iodepth", "2"),
        ("time_based", ""),
        ("runtime", "300ms"),
    ]);
    let (mock, seen) = Mock::new(LATENCY, Box::new(|_, len| i64::from(len)));
    let began = Instant::now();
    let out = run_mock(&ctx(s, Arc::default()), mock);
    let took = began.elapsed();
    assert!(took >= Duration::from_millis(300), "ended after {took:?}");
    assert!(took < Duration::from_secs(5), "ended after {took:?}");
    let seen = seen.lock().unwrap();
    let r = dir(&out, Ddir::Read);
    // time_based: the 64 KiB are read again and again.
    assert!(r.ios > 16, "{} reads", r.ios);
    assert_eq!((r.ios, r.bytes), seen.ok[Ddir::Read.idx()]);
    let window = out.stats.measured_ns;
    assert!(
        (300_000_000..5_000_000_000).contains(&window),
        "measured window {window} ns for a 300 ms runtime"
    );
}

/// The slot contract's check in the loop, which only builds with debug
/// assertions have (release builds leave it out of the loop).
#[cfg(debug_assertions)]
mod slot_contract {
    use super::*;

    /// An engine that breaks the slot contract: it hands each completion back
    /// twice.
    struct Twice {
        queued: Vec<u32>,
    }

    impl Engine for Twice {
        fn name(&self) -> &'static str {
            "twice"
        }
        fn queue(&mut self, req: IoReq) -> Result<Queued, EngineError> {
            self.queued.push(req.slot);
            Ok(Queued::Pending)
        }
        fn commit(&mut self) -> Result<usize, EngineError> {
            Ok(self.queued.len())
        }
        fn getevents(&mut self, _min: usize, out: &mut Vec<Completion>) -> Result<(), EngineError> {
            for slot in self.queued.drain(..) {
                out.extend([Completion { slot, result: 4096 }; 2]);
            }
            Ok(())
        }
        fn completion_mode(&self) -> &'static str {
            "interrupt"
        }
    }

    /// In a build with debug assertions, a completion of a slot that is not in
    /// flight stops the worker with an internal error naming the slot (release
    /// builds leave the check out of the loop).
    #[test]
    fn a_completion_of_a_slot_not_in_flight_is_caught() {
        let s = spec(&[
            ("rw", "randread"),
            ("bs", "4k"),
            ("size", "64k"),
            ("iodepth", "4"),
        ]);
        let c = ctx(s, Arc::default());
        let mut out = WorkerOutcome::empty(1);
        let mut engine = ssdready_io::AnyEngine::dynamic(Twice { queued: Vec::new() });
        run_loop(&c, &mut engine, Wait::Engine, &mut out);
        assert!(out.panicked, "{:?}", out.error);
        let e = out.error.unwrap_or_default();
        assert!(e.contains("not in flight"), "{e}");
    }
}
