//! fio's budgets in the worker loop, against the scripted engine:
//! `number_ios`, `io_size`, `size` and `loops` bound the I/Os a job
//! issues; `ignore_error` and `continue_on_error` decide which failures it
//! goes past; `flow` holds back a job ahead of its share. Each check counts
//! the I/Os the engine saw, which a loaded machine does not change.

use super::*;
use crate::worker::tokens::FlowToken;

/// How many I/Os the loop queued for a job of `options`.
fn queued(options: &[(&str, &str)]) -> (u64, WorkerOutcome) {
    let (mock, seen) = Mock::new(Duration::ZERO, Box::new(|_, len| i64::from(len)));
    let out = run_mock(&ctx(spec(options), Arc::default()), mock);
    let n = seen.lock().unwrap().queued;
    (n, out)
}

#[test]
fn number_ios_ends_the_job_after_that_many_ios() {
    let (n, out) = queued(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("number_ios", "10"),
    ]);
    assert_eq!(n, 10);
    assert_eq!(dir(&out, Ddir::Read).ios, 10);
}

#[test]
fn number_ios_also_ends_a_time_based_job() {
    let (n, _) = queued(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "64k"),
        ("time_based", ""),
        ("runtime", "60s"),
        ("number_ios", "40"),
    ]);
    assert_eq!(n, 40, "fio's number_ios ends even a time-based job");
}

#[test]
fn size_alone_is_one_pass_and_loops_repeat_it() {
    let base = [("rw", "read"), ("bs", "4k"), ("size", "64k")];
    assert_eq!(queued(&base).0, 16, "64 KiB in 4 KiB blocks");
    let looped: Vec<_> = base.iter().copied().chain([("loops", "3")]).collect();
    assert_eq!(queued(&looped).0, 48, "three passes of 16");
}

/// fio's number_ios counts per loop: `loops=3` runs it three times.
#[test]
fn number_ios_is_per_loop() {
    let (n, _) = queued(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "64k"),
        ("number_ios", "10"),
        ("loops", "3"),
    ]);
    assert_eq!(n, 30);
}

#[test]
fn io_size_beyond_size_wraps_around_the_region() {
    let (n, out) = queued(&[
        ("rw", "randwrite"),
        ("bs", "4k"),
        ("size", "64k"),
        ("io_size", "256k"),
    ]);
    assert_eq!(n, 64, "256 KiB of 4 KiB writes over a 64 KiB region");
    assert_eq!(dir(&out, Ddir::Write).bytes, 256 << 10);
}

#[test]
fn io_size_below_size_ends_early() {
    let (n, _) = queued(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "1m"),
        ("io_size", "32k"),
    ]);
    assert_eq!(n, 8);
}

/// `ignore_error` lists the errnos gone past; an errno it does not list
/// still ends the job at its first occurrence.
#[test]
fn ignore_error_goes_past_only_the_errnos_it_lists() {
    let failing = |errno: i32| -> Script {
        Box::new(move |n, len| {
            if n % 8 == 2 {
                -i64::from(errno)
            } else {
                i64::from(len)
            }
        })
    };
    let s = || {
        spec(&[
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "128k"),
            ("ignore_error", ",ENOSPC"),
        ])
    };
    let (mock, seen) = Mock::new(Duration::ZERO, failing(libc::ENOSPC));
    let out = run_mock(&ctx(s(), Arc::default()), mock);
    assert_eq!(seen.lock().unwrap().queued, 32, "ENOSPC is listed: all ran");
    assert_eq!(out.stats.errors, 4);
    assert_eq!(out.stats.continued, 4);
    assert_eq!(out.stats.first_error, None);

    let (mock, seen) = Mock::new(Duration::ZERO, failing(libc::EIO));
    let out = run_mock(&ctx(s(), Arc::default()), mock);
    assert!(seen.lock().unwrap().queued < 32, "EIO is not listed");
    assert_eq!(out.stats.first_errno, libc::EIO);
    assert_eq!(out.stats.continued, 0);
}

/// `fill_device`: a full device (ENOSPC) ends the job there, without an
/// error, the I/O that found it full counted (fio's total_ios); without
/// it, the same ENOSPC is the job's error.
#[test]
fn fill_device_ends_the_job_at_enospc_without_an_error() {
    let full_at_20 = || -> Script {
        Box::new(|n, len| match n {
            20.. => -i64::from(libc::ENOSPC),
            _ => i64::from(len),
        })
    };
    for (fill, errors, errno, ios) in [("1", 0, 0, 21), ("0", 1, libc::ENOSPC, 20)] {
        let s = spec(&[
            ("rw", "write"),
            ("bs", "4k"),
            ("size", "1m"),
            ("fill_device", fill),
        ]);
        let (mock, seen) = Mock::new(Duration::ZERO, full_at_20());
        let out = run_mock(&ctx(s, Arc::default()), mock);
        assert_eq!(seen.lock().unwrap().queued, 21, "fill_device={fill}");
        assert_eq!(out.stats.errors, errors, "fill_device={fill}");
        assert_eq!(out.stats.first_errno, errno, "fill_device={fill}");
        assert_eq!(dir(&out, Ddir::Write).ios, ios, "fill_device={fill}");
    }
}

/// `continue_on_error=read` covers reads only: a failed write still ends
/// the job.
#[test]
fn continue_on_error_covers_only_the_kinds_it_names() {
    let script = || -> Script {
        Box::new(|n, len| {
            if n == 5 {
                -i64::from(libc::EIO)
            } else {
                i64::from(len)
            }
        })
    };
    for (rw, covered) in [("read", true), ("write", false)] {
        let s = spec(&[
            ("rw", rw),
            ("bs", "4k"),
            ("size", "64k"),
            ("continue_on_error", "read"),
        ]);
        let (mock, seen) = Mock::new(Duration::ZERO, script());
        let out = run_mock(&ctx(s, Arc::default()), mock);
        let n = seen.lock().unwrap().queued;
        assert_eq!(n == 16, covered, "{rw}: {n} I/Os");
        assert_eq!(out.stats.first_error.is_none(), covered, "{rw}");
    }
}

/// `flow`: a job whose share of its flow's I/Os runs ahead of its share of
/// the weights waits; it goes on as the other member issues, and runs free
/// once that member leaves.
#[test]
fn flow_holds_a_job_ahead_of_its_share_until_the_other_catches_up() {
    let s = spec(&[
        ("rw", "read"),
        ("bs", "4k"),
        ("size", "64k"),
        ("flow", "1"),
        ("flow_sleep", "1000"),
    ]);
    let shared = Arc::new(FlowShared::default());
    let mut other = FlowToken::join(shared.clone(), 1, 0);
    let (mock, seen) = Mock::new(Duration::ZERO, Box::new(|_, len| i64::from(len)));
    let c = WorkerCtx {
        flow: Some(shared),
        ..ctx(s, Arc::default())
    };
    let looping = std::thread::spawn(move || run_mock(&c, mock));
    let count = || seen.lock().unwrap().queued;
    let reaches = |n: u64| {
        let give_up = Instant::now() + Duration::from_secs(20);
        while count() < n && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(5));
        }
        count()
    };
    // Equal weights: it may issue while its count is at most half the
    // flow's (which starts at 1): 2 I/Os, then it waits.
    assert_eq!(reaches(2), 2);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(count(), 2, "issued past its share while the other idled");
    // The other issues 4: the job may go on to 6 and no further.
    let mut issued = 0;
    while issued < 4 {
        issued += u64::from(!other.ahead());
    }
    assert_eq!(reaches(6), 6);
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(count(), 6, "issued past its share while the other idled");
    // The other leaves: the job runs free to its end.
    drop(other);
    let out = looping.join().unwrap();
    assert_eq!(count(), 16);
    assert_eq!(out.error, None);
}

/// A phase ended from outside (another job's `exitall`) ends a long job
/// without an error, and what it did is counted.
#[test]
fn an_ended_phase_ends_the_job_without_an_error() {
    let s = spec(&[
        ("rw", "randread"),
        ("bs", "4k"),
        ("size", "1m"),
        ("time_based", ""),
        ("runtime", "60s"),
    ]);
    let c = ctx(s, Arc::default());
    let end = c.end_phase.clone();
    let (mock, seen) = Mock::new(LATENCY, Box::new(|_, len| i64::from(len)));
    let ender = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        end.store(true, Relaxed);
    });
    let out = run_mock(&c, mock);
    ender.join().unwrap();
    assert_eq!(out.error, None);
    assert_eq!(out.stats.first_error, None);
    let r = dir(&out, Ddir::Read);
    assert!(r.ios > 0);
    assert_eq!((r.ios, r.bytes), seen.lock().unwrap().ok[Ddir::Read.idx()]);
}
