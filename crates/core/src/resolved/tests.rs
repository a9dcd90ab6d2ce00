//! The option logic of the resolution: defaults, clamps and derived values.

use super::*;
use crate::spec::JobSpec;

/// A job from `key=value` options, set through the option table.
fn job(text: &str) -> JobSpec {
    crate::options::job_of(text).expect("a valid job")
}

#[test]
fn a_synchronous_engine_keeps_one_io_in_flight() {
    let r = ResolvedJob::new(&job("ioengine=psync iodepth=32"));
    assert_eq!(r.run_loop.depth.get(), 1);
    assert_eq!(r.flow.depth.get(), 1);
    let r = ResolvedJob::new(&job("ioengine=libaio iodepth=32"));
    assert_eq!(r.run_loop.depth.get(), 32);
}

#[test]
fn a_depth_of_zero_written_in_code_is_one() {
    let s = JobSpec {
        iodepth: 0,
        ioengine: crate::spec::EngineKind::Libaio,
        ..JobSpec::default()
    };
    assert_eq!(LoopConfig::new(&s).depth.get(), 1);
    assert_eq!(FlowConfig::new(&s).depth.get(), 1);
}

#[test]
fn the_queue_batches_are_clamped() {
    let l = LoopConfig::new(&job("ioengine=libaio iodepth=16 iodepth_low=32"));
    assert_eq!(l.refill_at, 16, "a low mark above the depth is the depth");
    assert_eq!((l.batch_submit, l.complete_min), (1, 1));
    assert_eq!(l.complete_max, 16, "0 means the depth");
    let l = LoopConfig::new(&job(
        "ioengine=libaio iodepth=16 iodepth_low=4 iodepth_batch_complete_min=8 \
         iodepth_batch_complete_max=2",
    ));
    assert_eq!(l.refill_at, 4);
    assert_eq!(l.complete_max, 8, "at least the minimum");
    assert!(!l.has_min_rate);
    assert!(LoopConfig::new(&job("rate_iops_min=,10")).has_min_rate);
}

#[test]
fn sequential_holes_end_a_bounded_job_after_its_loops() {
    let p = PlanConfig::new(&job("rw=read:8k loops=3"));
    assert_eq!((p.seq_add, p.holed_loops), (8192, Some(3)));
    assert!(!p.fast_shape);
    // The flow's plan is endless, and still ends where the job would.
    let f = FlowConfig::new(&job("rw=read:8k loops=3 number_ios=10"));
    assert!(f.plan.time_based && f.plan.number_ios.is_none());
    assert_eq!(f.plan.holed_loops, Some(3));
    assert_eq!(f.number_ios, Some(30), "number_ios counts every loop");
    let p = PlanConfig::new(&job("rw=read:8k time_based=1 runtime=1"));
    assert_eq!(p.holed_loops, None);
    assert_eq!(PlanConfig::new(&job("rw=read")).holed_loops, None);
}

#[test]
fn random_offsets_are_drawn_as_fio_draws_them() {
    let draw = |t: &str| PlanConfig::new(&job(t)).draw;
    assert_eq!(draw("rw=randread bs=4k"), OffsetDraw::Permutation);
    assert_eq!(draw("rw=randread bsrange=4k-64k"), OffsetDraw::Map);
    assert_eq!(draw("rw=randread norandommap=1"), OffsetDraw::Free);
    assert_eq!(
        draw("rw=randread norandommap=1 random_generator=tausworthe"),
        OffsetDraw::Free32
    );
    assert_eq!(draw("rw=randread bs=4k blockalign=8k"), OffsetDraw::Free);
    assert_eq!(
        draw("rw=randread random_distribution=zipf:1.2"),
        OffsetDraw::Skewed
    );
    assert_eq!(
        draw("rw=randread random_distribution=zoned:50/10:50/90"),
        OffsetDraw::Zoned
    );
    assert!(PlanConfig::new(&job("rw=randread bs=4k")).fast_shape);
    assert!(!PlanConfig::new(&job("rw=randread norandommap=1")).fast_shape);
}

#[test]
fn alignment_is_blockalign_only_for_random_io() {
    let p = PlanConfig::new(&job("rw=randread bs=4k blockalign=8k"));
    assert_eq!(p.ba, [8192; 3]);
    let p = PlanConfig::new(&job("rw=read bs=4k blockalign=8k"));
    assert_eq!(p.ba, [4096; 3]);
    assert_eq!((p.unit, p.min_bs, p.max_bs), (4096, [4096; 3], [4096; 3]));
}

#[test]
fn a_bssplit_is_sorted_lightest_first_without_empty_parts() {
    let p = PlanConfig::new(&job("bssplit=4k/70:64k/30:8k/0"));
    assert_eq!(p.splits[0], vec![(65536, 30), (4096, 70)]);
    assert_eq!(p.unit, 4096);
    assert!(PlanConfig::new(&job("bs=4k")).splits[1].is_empty());
}

#[test]
fn the_byte_limit_is_io_size_else_size_within_the_regions() {
    let f = FlowConfig::new(&job("size=8m"));
    assert_eq!(f.limit(32 << 20), 8 << 20);
    assert_eq!(f.limit(4 << 20), 4 << 20, "at most what the regions hold");
    let f = FlowConfig::new(&job("size=8m io_size=64m"));
    assert_eq!(f.limit(4 << 20), 64 << 20);
    let f = FlowConfig::new(&job("rw=trimwrite size=8m"));
    assert_eq!(f.moves, 2);
    assert_eq!(
        f.limit(32 << 20),
        16 << 20,
        "trimwrite writes what it trims"
    );
}

#[test]
fn think_time_spins_at_most_its_whole() {
    let t = FlowConfig::new(&job("thinktime=10 thinktime_spin=50")).think;
    assert_eq!((t.ns, t.spin_ns, t.blocks), (10_000, 10_000, 1));
    assert!(!t.blocks_given);
}

#[test]
fn a_backlog_applies_only_to_a_writing_job_that_verifies() {
    let f = FlowConfig::new(&job("rw=write verify=crc32c verify_backlog=16"));
    assert!(f.verify_phase && f.writes);
    assert_eq!((f.backlog, f.backlog_batch), (Some(16), 16));
    assert_eq!(f.verify.as_ref().map(|v| v.interval), Some(4096));
    let f = FlowConfig::new(&job("rw=read verify=crc32c verify_backlog=16"));
    assert!(!f.verify_phase && f.check_reads);
    assert_eq!(f.backlog, None);
    let f = FlowConfig::new(&job("rw=write"));
    assert!(f.verify.is_none() && !f.check_reads && !f.verify_phase);
}

#[test]
fn the_cache_is_dropped_on_a_wrap_of_buffered_time_based_io_to_files() {
    let f = FlowConfig::new(&job(
        "ioengine=psync filename=/tmp/x invalidate=1 time_based=1 runtime=1",
    ));
    assert!(f.wrap_invalidate(1));
    assert!(!f.wrap_invalidate(2), "sequential over several files");
    let f = FlowConfig::new(&job(
        "ioengine=psync filename=/tmp/x invalidate=1 time_based=1 runtime=1 direct=1",
    ));
    assert!(!f.wrap_invalidate(1));
}

#[test]
fn priorities_are_resolved_only_when_the_job_sets_one() {
    assert_eq!(LoopConfig::new(&job("rw=randread")).prios, None);
    let p = LoopConfig::new(&job("rw=randread prio=3")).prios.unwrap();
    // Best-effort (class 2) at level 3, for reads and writes alike.
    assert_eq!(p.values, [vec![(2 << 13) | 3], vec![(2 << 13) | 3]]);
    assert!(p.cmd.is_none() && !p.total);
}

#[test]
fn write_buffers_are_kept_for_reads_and_scrambled_for_writes() {
    use crate::spec_buffers::BeforeWrite;
    assert_eq!(LoopConfig::new(&job("rw=randread")).before_write, None);
    assert_eq!(
        LoopConfig::new(&job("rw=randwrite")).before_write,
        Some(BeforeWrite::Scramble)
    );
    assert_eq!(
        LoopConfig::new(&job("rw=randwrite refill_buffers=1")).before_write,
        Some(BeforeWrite::Refill)
    );
}

#[test]
fn overlaps_are_serialized_only_for_writes_above_depth_one() {
    let on = |t: &str| LoopConfig::new(&job(t)).serialize_overlap;
    assert!(on(
        "ioengine=libaio rw=randwrite iodepth=8 serialize_overlap=1"
    ));
    assert!(!on(
        "ioengine=libaio rw=randread iodepth=8 serialize_overlap=1"
    ));
    assert!(!on(
        "ioengine=libaio rw=randwrite iodepth=1 serialize_overlap=1"
    ));
    let l = LoopConfig::new(&job("rw=write sync_file_range=write:4 max_latency=10ms"));
    assert_eq!(l.sync_range_flags, Some(2));
    assert_eq!(l.max_latency_ns, [10_000_000; 3]);
}

#[test]
fn a_rate_in_iops_is_a_byte_rate_of_the_smallest_block() {
    assert_eq!(RateConfig::new(&job("rw=randread")), None);
    let r = RateConfig::new(&job("rw=randread bs=4k rate_iops=1000")).unwrap();
    // 1,000 × 4 KiB per second: 1e9 / 4,096,000 ns per byte.
    assert_eq!(r.ns_per_byte[0], Some(1e9 / 4_096_000.0));
    assert_eq!(
        r.ns_per_byte[1], r.ns_per_byte[0],
        "one value limits every direction"
    );
    let r = RateConfig::new(&job("rw=randrw bs=4k rate=1m rate_iops=10")).unwrap();
    assert_eq!(r.ns_per_byte[0], Some(1e9 / 1_048_576.0), "rate wins");
    assert!(r.mixed && r.poisson.is_none());
    let r = RateConfig::new(&job(
        "rw=randread bs=4k rate_iops=1000 rate_process=poisson",
    ))
    .unwrap();
    let (gap, _) = r.poisson.unwrap();
    assert!((gap[0] - 1e6).abs() < 1e-6, "one I/O per ms on average");
    let l = LoopConfig::new(&job(
        "rw=randread rate_iops=10 thinktime=5 rate_ignore_thinktime=1",
    ));
    assert!(l.rate.is_some() && l.rate_ignore_thinktime);
}

#[test]
fn log_files_are_named_as_fio_names_them() {
    let mut s = job("write_bw_log write_lat_log=lat/x write_hist_log=h");
    s.name = "j".into();
    let files: Vec<(&str, String)> = LogConfig::new(&s)
        .files(3)
        .into_iter()
        .map(|f| (f.option, f.path))
        .collect();
    let want = [
        ("write_bw_log", "j_bw.3.log"),
        ("write_lat_log", "lat/x_slat.3.log"),
        ("write_lat_log", "lat/x_clat.3.log"),
        ("write_lat_log", "lat/x_lat.3.log"),
        ("write_hist_log", "h_clat_hist.3.log"),
    ];
    let want: Vec<(&str, String)> = want.iter().map(|(o, p)| (*o, p.to_string())).collect();
    assert_eq!(files, want);
}

#[test]
fn shared_and_compressed_logs_lose_the_number_and_gain_fz() {
    let mut s = job("write_iops_log=io per_job_logs=0 log_store_compressed=1");
    s.name = "j".into();
    let l = LogConfig::new(&s);
    let paths: Vec<String> = l.files(7).into_iter().map(|f| f.path).collect();
    assert_eq!(paths, ["io_iops.log.fz"]);
    assert!(l.any());
    assert!(!LogConfig::new(&job("log_avg_msec=100")).any());
    assert!(LogConfig::new(&job("log_avg_msec=100")).files(1).is_empty());
}

#[test]
fn log_options_carry_into_the_config() {
    let l = LogConfig::new(&job(
        "write_lat_log log_avg_msec=250 log_offset=1 log_max_value=1 log_unix_epoch=1",
    ));
    assert_eq!((l.avg_msec, l.offset, l.max_value), (250, true, true));
    assert_eq!(l.epoch_clock, Some(0));
    assert_eq!(LogConfig::new(&job("write_lat_log")).epoch_clock, None);
}

#[test]
fn the_error_policy_goes_past_what_fio_goes_past() {
    use crate::spec_types::ErrorKind;
    let none = ErrorPolicy::new(&job(""));
    assert!(!none.goes_past(ErrorKind::Read, 5));
    let all = ErrorPolicy::new(&job("continue_on_error=all"));
    assert!(all.goes_past(ErrorKind::Read, 5));
    assert!(all.goes_past(ErrorKind::Verify, 84));
    assert!(!all.goes_past(ErrorKind::Write, 28), "ENOSPC is not EIO");
    let listed = ErrorPolicy::new(&job("ignore_error=,ENOSPC"));
    assert!(listed.goes_past(ErrorKind::Write, 28));
    assert!(!listed.goes_past(ErrorKind::Read, 28));
    assert!(!none.is_full(28));
    let fill = ErrorPolicy::new(&job("fill_device=1"));
    assert!(fill.is_full(28) && fill.is_full(122) && !fill.is_full(5));
    let v = ErrorPolicy::new(&job("verify=crc32c verify_fatal=1"));
    assert!(v.verify_fatal && !v.verify_dump);
}

#[test]
fn the_dedupe_working_set_is_a_share_of_the_size_in_smallest_writes() {
    assert_eq!(BufferConfig::new(&job("")).working_set, None);
    let b = BufferConfig::new(&job(
        "dedupe_mode=working_set dedupe_percentage=50 bs=8k size=100m",
    ));
    let ws = b.working_set.expect("working set");
    assert_eq!(
        ws,
        WorkingSet {
            size: Some(100 << 20),
            percent: 5,
            min_write: 8192
        }
    );
    assert_eq!(ws.pages(0), (100 << 20) * 5 / 100 / 8192);
    let b = BufferConfig::new(&job(
        "dedupe_mode=working_set dedupe_working_set_percentage=20 bs=4k",
    ));
    let ws = b.working_set.expect("working set");
    assert_eq!(
        ws.pages(1 << 20),
        (1 << 20) / 5 / 4096,
        "the regions without a size"
    );
    assert_eq!(b.seed_of(2), b.randseed ^ (2u64 << 32));
}
