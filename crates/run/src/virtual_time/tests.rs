//! The virtual-time loop's own checks: determinism, the modelled latency,
//! refusals of runs whose time does not advance, stop and long start delays.

use super::*;
use ssdready_core::spec::RwMode;
use ssdready_emu::config::Params;
use ssdready_emu::device::Device;

fn job(rw: RwMode, depth: u32, ios: u64) -> JobSpec {
    JobSpec {
        rw,
        iodepth: depth,
        number_ios: Some(ios),
        time_based: true,
        ioengine: ssdready_core::spec::EngineKind::Null,
        ..JobSpec::default()
    }
}

#[test]
fn same_seed_same_counters() {
    let run = || {
        let mut d = Device::new(&Params::parse("x25e,size=256m").unwrap());
        let o = simulate(&mut d, &[job(RwMode::RandWrite, 4, 30_000)], &|| false).unwrap();
        (
            d.ftl.as_ref().unwrap().counters,
            o.end_ns,
            o.workers[0][0].dirs[1].as_ref().unwrap().lat.sum(),
        )
    };
    assert_eq!(run(), run());
}

#[test]
fn qd1_reads_take_the_modelled_latency() {
    let mut d = Device::new(&Params::parse("x25e,size=256m").unwrap());
    let fill = JobSpec {
        size: Some(32 << 20),
        bs: ssdready_core::spec::BlockSizes::Fixed(1 << 20),
        ..job(RwMode::Write, 1, 32)
    };
    simulate(&mut d, &[fill], &|| false).unwrap();
    let read = JobSpec {
        size: Some(32 << 20),
        ..job(RwMode::RandRead, 1, 1000)
    };
    let o = simulate(&mut d, &[read], &|| false).unwrap();
    let lat = o.workers[0][0].dirs[0].as_ref().unwrap().lat.mean();
    assert!((145_000.0..155_000.0).contains(&lat), "{lat}");
}

fn timed(rw: RwMode, runtime_ns: u64) -> JobSpec {
    JobSpec {
        number_ios: None,
        runtime_ns: Some(runtime_ns),
        ..job(rw, 4, 0)
    }
}

#[test]
fn zero_latency_time_based_is_refused_not_endless() {
    let t = std::time::Instant::now();
    let mut d = Device::new(&Params::parse("null,size=64m").unwrap());
    let e = simulate(&mut d, &[timed(RwMode::RandRead, 1_000_000_000)], &|| false)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("stopped advancing") && e.contains("reads take 0 ns"),
        "{e}"
    );
    assert!(e.contains("host_ns="), "{e}");
    assert!(t.elapsed() < std::time::Duration::from_secs(20));
}

#[test]
fn trims_on_nvm_lowlat_are_refused_not_endless() {
    // Without the command's own 64 B on the link, its trims take no time.
    let mut d = Device::new(&Params::parse("nvm-lowlat,size=64m,cmd_bytes=0").unwrap());
    let e = simulate(&mut d, &[timed(RwMode::RandTrim, 1_000_000_000)], &|| false)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("trims take 0 ns"), "{e}");
}

#[test]
fn zero_time_sized_job_reports_no_rate() {
    let mut d = Device::new(&Params::parse("null,size=64m").unwrap());
    let sized = JobSpec {
        time_based: false,
        number_ios: Some(1000),
        ..job(RwMode::RandWrite, 4, 1000)
    };
    let e = simulate(&mut d, &[sized], &|| false)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("took no simulated time"), "{e}");
}

#[test]
fn zero_time_job_with_a_runtime_but_not_time_based_reports_no_rate() {
    let mut d = Device::new(&Params::parse("null,size=64m").unwrap());
    let sized = JobSpec {
        time_based: false,
        number_ios: Some(1000),
        runtime_ns: Some(1_000_000_000),
        ..job(RwMode::RandRead, 4, 1000)
    };
    let e = simulate(&mut d, &[sized], &|| false)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("took no simulated time"), "{e}");
}

#[test]
fn host_cost_lets_zero_latency_devices_run() {
    let mut d = Device::new(&Params::parse("null,size=64m,host_ns=1us").unwrap());
    let o = simulate(&mut d, &[timed(RwMode::RandRead, 10_000_000)], &|| false).unwrap();
    let r = o.workers[0][0].dirs[0].as_ref().unwrap();
    // Four streams, each one I/O per microsecond, for 10 ms.
    assert!((39_000..=40_004).contains(&r.ios), "{}", r.ios);
}

#[test]
fn a_stop_request_ends_a_long_simulation() {
    let mut d = Device::new(&Params::parse("x25e,size=256m").unwrap());
    let t = std::time::Instant::now();
    let o = simulate(
        &mut d,
        &[timed(RwMode::RandWrite, 3_600_000_000_000)],
        &|| t.elapsed() > std::time::Duration::from_millis(50),
    )
    .unwrap();
    // Stopped early: well short of the hour (a count, not a time; the
    // whole hour takes minutes of CPU, and the stop is polled every
    // 1024 events).
    assert!(o.end_ns < 3_600_000_000_000 / 4, "{}", o.end_ns);
}

#[test]
fn a_start_days_away_does_not_sample_every_second_in_memory() {
    let mut d = Device::new(&Params::parse("x25e,size=128m").unwrap());
    let late = JobSpec {
        startdelay_ns: 100_000 * 86_400 * 1_000_000_000, // 100000 days
        ..job(RwMode::RandRead, 1, 10)
    };
    let t = std::time::Instant::now();
    let o = simulate(&mut d, &[late], &|| false).unwrap();
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(o.free_blocks.len() as u64, MAX_SERIES_SECONDS + 1);
}

/// A job as the command line gives it (`--k=v` options).
fn parsed(options: &[(&str, &str)]) -> JobSpec {
    use ssdready_core::options::{build_jobs, RawOption, Section};
    let job = Section {
        name: "a".into(),
        global: false,
        options: options
            .iter()
            .map(|(k, v)| RawOption::cli(k, Some(v)))
            .collect(),
    };
    let mut jobs = build_jobs(&[job]).expect("a valid job");
    jobs.remove(0)
}

/// Bytes per direction that the job's flow issues, alone, each I/O done
/// before the next.
fn flow_bytes(spec: &JobSpec, capacity: u64) -> [u64; 3] {
    use ssdready_workload::jobflow::{FlowIo, JobFlow, Step};
    let mut flow = JobFlow::new(
        &ssdready_core::resolved::FlowConfig::new(spec),
        &[region(spec, capacity).unwrap()],
        0,
    );
    let mut bytes = [0u64; 3];
    loop {
        match flow.next(0, 0) {
            Step::Io(io) => {
                if let FlowIo::Rw { ddir, len, .. } = io {
                    bytes[ddir.idx()] += u64::from(len);
                }
                flow.completed(&io, true);
            }
            Step::Done => return bytes,
            _ => {}
        }
    }
}

#[test]
fn a_sized_job_moves_the_bytes_its_flow_issues_as_a_real_run_does() {
    // io_size with a block-size split: the flow checks the budget before
    // each I/O (the last may cross it), as fio and the real loop do.
    let spec = parsed(&[
        ("rw", "randrw"),
        ("bssplit", "4k/50:64k/50"),
        ("iodepth", "4"),
        ("io_size", "16m"),
    ]);
    let mut d = Device::new(&Params::parse("x25e,size=128m").unwrap());
    let want = flow_bytes(&spec, d.capacity());
    let o = simulate(&mut d, &[spec], &|| false).unwrap();
    let w = &o.workers[0][0];
    let got = [0, 1].map(|i| w.dirs[i].as_ref().map_or(0, |d| d.bytes));
    assert_eq!(got, [want[0], want[1]]);
    assert!(got[0] + got[1] >= 16 << 20, "{got:?}");
}

#[test]
fn think_time_passes_in_virtual_time() {
    // Ten 4 KiB reads (about 42 µs each on x25e), each followed by 1 ms of
    // think time: about 10 ms; without the thinks, half a millisecond.
    let spec = parsed(&[
        ("rw", "randread"),
        ("iodepth", "1"),
        ("number_ios", "10"),
        ("thinktime", "1ms"),
        ("thinktime_blocks", "1"),
    ]);
    let mut d = Device::new(&Params::parse("x25e,size=128m").unwrap());
    let o = simulate(&mut d, &[spec], &|| false).unwrap();
    let w = &o.workers[0][0];
    assert_eq!(w.dirs[0].as_ref().unwrap().ios, 10);
    assert!(
        (9_000_000..12_000_000).contains(&w.measured_ns),
        "{} ns",
        w.measured_ns
    );
}

#[test]
fn write_iolog_records_the_simulated_requests_at_simulated_times() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.log");
    let spec = parsed(&[
        ("rw", "randread"),
        ("iodepth", "1"),
        ("number_ios", "20"),
        ("thinktime", "1ms"),
        ("thinktime_blocks", "1"),
        ("write_iolog", path.to_str().unwrap()),
    ]);
    let mut d = Device::new(&Params::parse("x25e,size=128m").unwrap());
    let o = simulate(&mut d, &[spec], &|| false).unwrap();
    let (p, text) = *o.workers[0][0].iolog_record.clone().expect("a record");
    assert_eq!(p, path.to_str().unwrap());
    let reads: Vec<&str> = text.lines().filter(|l| l.contains(" read ")).collect();
    assert_eq!(reads.len(), 20, "{text}");
    // The thinks between them are in the log's times (fio's iolog v3,
    // µs): 19 × (1 ms + one read of about 42 µs) after the first.
    let last: u64 = reads[19]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((19_000..=20_500).contains(&last), "{text}");
}

#[test]
fn read_iolog_replays_a_trace_at_its_times_in_virtual_time() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.log");
    let trace = "fio version 3 iolog\n0 emu add\n0 emu open\n\
                 0 emu read 0 4096\n5000 emu read 8192 4096\n10000 emu write 65536 8192\n";
    std::fs::write(&path, trace).unwrap();
    let mut specs = vec![parsed(&[
        ("read_iolog", path.to_str().unwrap()),
        ("replay_redirect", "emu:x25e,size=128m"),
    ])];
    crate::replay::prepare(&mut specs).unwrap();
    let mut d = Device::new(&Params::parse("x25e,size=128m").unwrap());
    let o = simulate(&mut d, &specs, &|| false).unwrap();
    let w = &o.workers[0][0];
    let (r, wr) = (w.dirs[0].as_ref().unwrap(), w.dirs[1].as_ref().unwrap());
    assert_eq!((r.ios, r.bytes, wr.ios, wr.bytes), (2, 8192, 1, 8192));
    // The last request is issued 10 ms in, as the trace has it.
    assert!(
        (10_000_000..10_500_000).contains(&w.measured_ns),
        "{} ns",
        w.measured_ns
    );
}

/// Think time as fio counts it, in simulated time: 32 reads at depth 8 with
/// 20 ms of think after every 8 completed take three thinks (none after the
/// last I/O), each after the queue has drained: 60 ms plus four rounds of
/// the device's time, and no completion latency includes a think.
#[test]
fn thinks_come_after_every_eighth_completion_but_the_last() {
    let mut d = Device::new(&Params::parse("x25e,size=128m").unwrap());
    let thinking = JobSpec {
        time_based: false,
        thinktime_ns: 20_000_000,
        thinktime_blocks: 8,
        ..job(RwMode::RandRead, 8, 32)
    };
    let o = simulate(&mut d, &[thinking], &|| false).unwrap();
    let w = &o.workers[0][0];
    let r = w.dirs[0].as_ref().unwrap();
    assert_eq!(r.ios, 32);
    let io_time = w.measured_ns - 60_000_000;
    assert!(
        w.measured_ns > 60_000_000 && io_time < 4 * r.lat.max() + 1_000_000,
        "{} ns: three thinks and four rounds of at most {} ns",
        w.measured_ns,
        r.lat.max()
    );
    assert!(r.lat.max() < 20_000_000, "a latency holds a think");
}

#[test]
fn a_synchronous_engine_keeps_its_iodepth_on_the_model() {
    // The real loop runs a synchronous engine (psync, the default) one
    // I/O at a time; on the model the device brings its queues, and
    // iodepth says how many are outstanding: 7 units of 10 µs serve 16
    // at once far faster than one.
    let end = |depth: &str| {
        let spec = parsed(&[
            ("rw", "randread"),
            ("iodepth", depth),
            ("number_ios", "20000"),
        ]);
        assert_eq!(spec.effective_iodepth(), 1, "a synchronous engine");
        let mut d = Device::new(&Params::parse("nvm-lowlat,size=64m").unwrap());
        simulate(&mut d, &[spec], &|| false).unwrap().end_ns
    };
    let (one, sixteen) = (end("1"), end("16"));
    assert!(sixteen * 4 < one, "QD1 {one} ns, QD16 {sixteen} ns");
}
