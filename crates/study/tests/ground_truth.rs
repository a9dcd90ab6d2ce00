//! Ground truth first: on emulated drives the true limits are known, so the
//! study must find them. The analytic limits are checked against the model
//! in virtual time for every preset, and whole studies run in virtual time
//! (the device with a perfect platform) must find each drive's knee and
//! name the device as the limit.

use ssdready_diagnosis::limit::Cause;
use ssdready_emu::analytic::limit::{model_limit, write_iops_over, Access};
use ssdready_emu::config::{preset, PRESETS};
use ssdready_measured::record::{Machine, TargetKind, TargetProfile};
use ssdready_run::RunRequest;
use ssdready_study::clock::Deadline;
use ssdready_study::driver::{execute, Quiet};
use ssdready_study::plan::{fit_budget, plan, StudyOptions};
use ssdready_study::{judge, virt, Judgement, VirtualRunner};

/// IOPS and mean latency of 4 KiB random reads at `qd` on `spec`, after a
/// fill, in virtual time.
fn virtual_reads(spec: &str, qd: u32) -> (f64, f64) {
    let drain_ms = (ssdready_study::limit::drain_seconds(spec, 32 << 20) * 1000.0).ceil();
    let mut r = RunRequest::default();
    r.job("fill")
        .set("filename", spec)
        .set("rw", "write")
        .set("bs", "1m")
        .set("iodepth", 8)
        .set("size", "32m");
    r.job("m")
        .flag("stonewall")
        .set("filename", spec)
        .set("rw", "randread")
        .set("bs", "4k")
        .set("iodepth", qd)
        .set("size", "32m")
        .set("ramp_time", format_args!("{drain_ms}ms"))
        .set("runtime", "300ms")
        .flag("time_based");
    let (s, d) = virt::run(&r).unwrap();
    (s.iops, d.lat_mean_ns)
}

#[test]
fn analytic_limits_match_the_model_for_every_preset() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (name, _) in PRESETS {
        let p = preset(name).unwrap();
        let l = model_limit(&p, Access::Read, 4096);
        let Some(limit) = l.iops else {
            assert_eq!(*name, "null", "only the null device is unbounded");
            continue;
        };
        let spec = format!("emu:{name}");
        let (deep, _) = virtual_reads(&spec, 512);
        let (one, lat) = virtual_reads(&spec, 1);
        eprintln!("{name}: analytic {limit:.0} IOPS, model at QD 512 {deep:.0}; idle latency {:.0} ns vs {lat:.0} ns", l.idle_latency_ns);
        assert!(
            deep <= limit * 1.01,
            "{name}: the model beats its bound: {deep} > {limit}"
        );
        assert!(
            deep >= limit * 0.90,
            "{name}: the model at QD 512 is {deep}, bound {limit}"
        );
        assert!(
            (lat - l.idle_latency_ns).abs() <= 0.03 * l.idle_latency_ns,
            "{name}: QD 1 latency {lat} vs idle latency {}",
            l.idle_latency_ns
        );
        assert!(
            (one * lat / 1e9 - 1.0).abs() < 0.03,
            "{name}: Little's law at QD 1"
        );
    }
}

#[test]
fn analytic_write_limits_match_the_model_on_a_fresh_region() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (name, _) in PRESETS.iter().filter(|p| p.0 != "null") {
        let p = preset(name).unwrap();
        let mut r = RunRequest::default();
        r.job("m")
            .set("filename", format_args!("emu:{name}"))
            .set("rw", "randwrite")
            .set("bs", "4k")
            .set("iodepth", 32)
            .set("size", "32m")
            .set("runtime", "300ms")
            .flag("time_based");
        let (s, _) = virt::run(&r).unwrap();
        // The write buffer and the SLC cache absorb their size on top of
        // the sustained rate, the cache at SLC speed.
        let l = model_limit(&p, Access::Write, 4096).iops.unwrap();
        let expect = write_iops_over(&p, 4096, s.window_s).unwrap();
        eprintln!(
            "{name}: writes {:.0} IOPS, sustained limit {l:.0}, with buffer and cache {expect:.0}",
            s.iops
        );
        assert!(
            (s.iops - expect).abs() <= 0.03 * expect,
            "{name}: {} vs {expect}",
            s.iops
        );
    }
}

fn emulator(spec: &str) -> TargetProfile {
    let p = ssdready_study::limit::params_of(spec).unwrap();
    let mut t = TargetProfile {
        spec: spec.into(),
        kind: TargetKind::Emulator,
        transport: "emulator".into(),
        size_bytes: p.size,
        logical_block_size: 512,
        writable: true,
        ..Default::default()
    };
    t.basis = ssdready_study::limit::basis_of(&t);
    t
}

/// A quick study in virtual time: the device behind a perfect platform.
fn virtual_study(spec: &str) -> Judgement {
    let targets = vec![emulator(spec)];
    let o = StudyOptions {
        quick: true,
        budget_s: 60.0,
        cpus: 2,
        ..Default::default()
    };
    let mut p = plan(&targets, &o);
    fit_budget(&mut p, &targets, &o);
    p.settings.runtime_s = 0.3;
    let ex = execute(
        &targets,
        &p,
        &mut VirtualRunner,
        &mut Quiet,
        &Deadline::none(),
    );
    assert!(
        ex.runs.iter().all(|r| r.error.is_none()),
        "{:?}",
        ex.runs.iter().find_map(|r| r.error.clone())
    );
    let m = Machine {
        cpus: 2,
        ..Default::default()
    };
    judge(&targets, &m, &ex.runs, false)
}

#[test]
fn x25e_knee_is_at_qd_8_to_10_and_the_device_is_the_limit() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let j = virtual_study("emu:x25e");
    let f = &j.figures;
    let knee = f.knee_qd.unwrap();
    assert!((8..=10).contains(&knee), "knee {knee}: {:?}", f.qd_curve);
    assert_eq!(f.saturation.limit, Cause::Device, "{:?}", f.saturation);
    assert!(
        f.saturation.part.contains("controller"),
        "{}",
        f.saturation.part
    );
    let limit = f.device_limit.iops.unwrap();
    let peak = f.peak.as_ref().unwrap().iops;
    assert!(
        (peak - limit).abs() / limit < 0.02,
        "peak {peak} vs limit {limit}"
    );
    assert!(f.saturated, "the sweep stops once saturated");
    assert!(
        f.qd_curve.len() < 9,
        "no need to go to QD 256: {:?}",
        f.qd_curve.iter().map(|c| c.qd).collect::<Vec<_>>()
    );
    let v = j
        .verdicts
        .iter()
        .find(|v| v.rule == "device-limits-reads")
        .unwrap();
    assert!(
        v.finding.contains(&format!("from QD {knee}")),
        "{}",
        v.finding
    );
}

#[test]
fn iodrive_knee_is_at_most_qd_4() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let j = virtual_study("emu:iodrive");
    let knee = j.figures.knee_qd.unwrap();
    assert!(knee <= 4, "knee {knee}: {:?}", j.figures.qd_curve);
    assert_eq!(j.figures.saturation.limit, Cause::Device);
    assert!(j.figures.saturation.part.contains("command slots"));
}

#[test]
fn a_perfect_platform_is_not_blamed_at_qd_1() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let j = virtual_study("emu:x25e");
    let p = j.figures.platform_share_qd1.as_ref().unwrap();
    assert!(p.pct < 1.0, "virtual time has no platform: {p:?}");
    assert!(j.verdicts.iter().any(|v| v.rule == "device-owns-qd1"));
}
