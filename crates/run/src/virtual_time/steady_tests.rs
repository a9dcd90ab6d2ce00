//! fio's steady-state check in virtual time: sampled at every simulated
//! second from the workers' counters, with the same units (a clone, or a
//! reporting group) and the same report as a real run; and the per-second
//! samples of the sample logs.

use super::*;
use ssdready_core::spec::RwMode;
use ssdready_core::steady::SsCriterion;
use ssdready_emu::config::Params;
use ssdready_emu::device::Device;

const S: u64 = 1_000_000_000;

/// Paced 4 KiB random reads on x25e, 2000 a second per worker, for
/// `runtime_s`, judged by `criterion` over `dur_s` seconds.
fn paced(criterion: &str, dur_s: u64, runtime_s: u64) -> JobSpec {
    JobSpec {
        name: "s".into(),
        rw: RwMode::RandRead,
        iodepth: 4,
        time_based: true,
        runtime_ns: Some(runtime_s * S),
        rate_iops: [Some(2000), None, None],
        steadystate: SsCriterion::parse(criterion, 1024).unwrap(),
        ss_dur_ns: dur_s * S,
        ..JobSpec::default()
    }
}

fn run(jobs: &[JobSpec], groups: &[u32]) -> SimOutcome {
    let mut d = Device::new(&Params::parse("x25e,size=256m").unwrap());
    simulate_in_groups(&mut d, jobs, groups, &|| false).unwrap()
}

#[test]
fn a_steady_job_ends_once_its_criterion_holds() {
    let o = run(&[paced("iops:10%", 2, 20)], &[0]);
    let ss = &o.steadystate[0];
    assert_eq!(ss.len(), 1);
    assert!(ss[0].attained, "{ss:?}");
    assert_eq!(ss[0].attained_after_s, Some(2));
    assert_eq!(ss[0].data.iops, vec![2000, 2000]);
    assert_eq!(ss[0].data.bw, vec![2000 * 4096, 2000 * 4096]);
    // Ended at its second sample, as at a runtime of 2 s, not 20.
    let w = &o.workers[0][0];
    assert!(
        (2 * S..2 * S + S / 100).contains(&w.measured_ns),
        "{}",
        w.measured_ns
    );
    let ios = w.dirs[0].as_ref().unwrap().ios;
    assert!((4000..=4004).contains(&ios), "{ios}");
}

#[test]
fn a_criterion_that_never_holds_runs_to_the_runtime() {
    let o = run(&[paced("iops:0", 2, 3)], &[0]);
    let ss = &o.steadystate[0][0];
    assert!(!ss.attained, "{ss:?}");
    assert_eq!(ss.data.iops.len(), 2);
    assert!(o.workers[0][0].measured_ns >= 3 * S);
}

#[test]
fn each_clone_has_its_own_check_and_a_group_one() {
    let two = JobSpec {
        numjobs: 2,
        ..paced("iops_slope:5%", 2, 20)
    };
    let o = run(std::slice::from_ref(&two), &[0]);
    assert_eq!(o.steadystate[0].len(), 2);
    for ss in &o.steadystate[0] {
        assert!(ss.attained && ss.data.iops_mean == 2000, "{ss:?}");
    }
    let grouped = JobSpec {
        group_reporting: true,
        ..two
    };
    let o = run(&[grouped], &[0]);
    let ss = &o.steadystate[0];
    assert_eq!(ss.len(), 1);
    assert_eq!(ss[0].data.iops_mean, 4000, "the group's two workers");
}

#[test]
fn only_the_steady_job_ends_and_the_others_have_no_report() {
    let other = JobSpec {
        ss_dur_ns: 0,
        name: "o".into(),
        ..paced("iops:10%", 2, 5)
    };
    let o = run(&[paced("iops:10%", 2, 5), other], &[0, 1]);
    assert!(o.steadystate[0][0].attained);
    assert!(o.steadystate[1].is_empty());
    assert!(o.workers[0][0].measured_ns < 3 * S);
    assert!(o.workers[1][0].measured_ns >= 5 * S);
}

#[test]
fn samples_count_after_the_ramps_and_a_late_start_is_not_sampled_second_by_second() {
    let ramped = JobSpec {
        ss_ramp_ns: 1_500_000_000,
        ..paced("iops:10%", 2, 20)
    };
    let o = run(&[ramped], &[0]);
    let ss = &o.steadystate[0][0];
    assert_eq!(ss.ramp_time_s, 1.5);
    assert!(ss.attained, "{ss:?}");
    // Seconds [2, 3] and [3, 4] count: it ends at 4 s.
    let w = &o.workers[0][0];
    assert!(
        (4 * S..4 * S + S / 100).contains(&w.measured_ns),
        "{}",
        w.measured_ns
    );
    // 100,000 days away: ten billion seconds before its samples count.
    let late = JobSpec {
        startdelay_ns: 100_000 * 86_400 * S,
        ..paced("iops:10%", 2, 20)
    };
    let o = run(&[late], &[0]);
    assert!(o.steadystate[0][0].attained);
}

/// The sample logs in virtual time: a paced job's bandwidth log, averaged
/// over each simulated second, is its pace, and its times count from the
/// worker's start, after `startdelay`.
#[test]
fn a_paced_jobs_bandwidth_log_holds_its_pace_each_second() {
    let logged = JobSpec {
        write_bw_log: Some("bw".into()),
        log_avg_msec: 1000,
        startdelay_ns: 5 * S,
        ss_dur_ns: 0,
        ..paced("iops:10%", 2, 3)
    };
    let o = run(&[logged], &[0]);
    let log = o.workers[0][0].log.as_deref().expect("a log");
    let rows = log.rows(ssdready_core::iolog::LogKind::Bw);
    let at: Vec<(u64, u64)> = rows.iter().map(|r| (r.t_ms, r.value)).collect();
    // 2000 × 4 KiB a second is 8000 KiB/s.
    assert_eq!(
        at[..3],
        [(1000, 8000), (2000, 8000), (3000, 8000)],
        "{at:?}"
    );
}

/// A job that runs out of I/O inside a window ends its logs as a real
/// worker's do: no rate for the partial window, and its latencies at the
/// job's end.
#[test]
fn a_jobs_last_partial_window_has_latencies_but_no_rate() {
    let logged = JobSpec {
        write_iops_log: Some("i".into()),
        write_lat_log: Some("l".into()),
        log_avg_msec: 1000,
        ss_dur_ns: 0,
        time_based: false,
        runtime_ns: None,
        number_ios: Some(2500),
        ..paced("iops:10%", 2, 3)
    };
    let o = run(&[logged], &[0]);
    let log = o.workers[0][0].log.as_deref().expect("a log");
    let at = |k| -> Vec<u64> { log.rows(k).iter().map(|r| r.t_ms).collect() };
    use ssdready_core::iolog::LogKind;
    assert_eq!(at(LogKind::Iops), [1000], "2,500 I/Os at 2,000 a second");
    let clat = at(LogKind::Clat);
    assert_eq!(clat.len(), 2, "{clat:?}");
    assert!((1240..1260).contains(&clat[1]), "{clat:?}");
}
