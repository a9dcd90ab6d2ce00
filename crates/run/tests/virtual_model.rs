//! The emulator against the ground truth of shared/notes/ssd-models.md and
//! the shapes of Polte et al. (queue-depth scaling, Figure 1; the write cliff,
//! Figure 5): write amplification against the analytic model, TRIM, the
//! cliff, and queue-depth scaling. All in virtual time.

use ssdready_core::spec::{BlockSizes, EngineKind, JobSpec, RwMode};
use ssdready_emu::analytic::wa_greedy;
use ssdready_emu::config::Params;
use ssdready_emu::device::Device;
use ssdready_run::virtual_time::simulate;

fn job(rw: RwMode, depth: u32, ios: u64) -> JobSpec {
    JobSpec {
        rw,
        iodepth: depth,
        number_ios: Some(ios),
        time_based: true,
        norandommap: true,
        ioengine: EngineKind::Null,
        ..JobSpec::default()
    }
}

fn counters(d: &Device) -> (u64, u64) {
    let c = d.ftl.as_ref().unwrap().counters;
    (c.host_pages, c.host_pages + c.gc_pages)
}

/// Write the whole device once, sequentially, 1 MiB at a time.
fn fill(d: &mut Device, p: &Params) {
    let fill = JobSpec {
        bs: BlockSizes::Fixed(1 << 20),
        size: Some(p.size),
        ..job(RwMode::Write, 4, p.size >> 20)
    };
    simulate(d, &[fill], &|| false).unwrap();
}

/// Overwrite `size` bytes from `offset` uniformly at random 4× over to reach
/// steady state, then return the WA measured over 2× more.
fn steady_wa_of(d: &mut Device, offset: u64, size: u64) -> f64 {
    let n = size / 4096;
    let rw = JobSpec {
        offset,
        size: Some(size),
        ..job(RwMode::RandWrite, 8, 4 * n)
    };
    simulate(d, std::slice::from_ref(&rw), &|| false).unwrap();
    let (h0, t0) = counters(d);
    simulate(
        d,
        &[JobSpec {
            number_ios: Some(2 * n),
            randseed: 77,
            ..rw
        }],
        &|| false,
    )
    .unwrap();
    let (h1, t1) = counters(d);
    d.ftl.as_ref().unwrap().check().unwrap();
    (t1 - t0) as f64 / (h1 - h0) as f64
}

/// Fill, then the steady-state WA of uniform random writes over the device.
fn steady_wa(params: &str) -> f64 {
    let p = Params::parse(params).unwrap();
    let mut d = Device::new(&p);
    fill(&mut d, &p);
    steady_wa_of(&mut d, 0, p.size)
}

#[test]
fn greedy_wa_matches_the_analytic_model_at_7_28_and_100_percent_op() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for op in [0.07, 0.28, 1.0] {
        let params = format!(
            "nvme-tlc,size=128m,op={op},channels=2,dies=1,pages_per_block=64,write_buffer=0"
        );
        let p = Params::parse(&params).unwrap();
        let wa = steady_wa(&params);
        let predicted = wa_greedy(p.alpha_effective(), 64.0);
        let err = (wa - predicted).abs() / predicted;
        eprintln!("op {op}: alpha_eff {:.4} measured WA {wa:.3}, greedy model {predicted:.3}, error {:.1}%", p.alpha_effective(), err * 100.0);
        assert!(err < 0.05, "op {op}: WA {wa:.3} vs model {predicted:.3}");
    }
}

#[test]
fn trimming_half_the_space_lowers_wa_as_the_larger_spare_predicts() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let params = "nvme-tlc,size=128m,op=0.07,channels=2,dies=1,pages_per_block=64,write_buffer=0";
    let p = Params::parse(params).unwrap();
    let mut d = Device::new(&p);
    fill(&mut d, &p);
    // TRIM the upper half, then write randomly to the lower half.
    let half = p.size / 2;
    let trim = JobSpec {
        offset: half,
        size: Some(half),
        bs: BlockSizes::Fixed(1 << 20),
        ..job(RwMode::Trim, 1, half >> 20)
    };
    simulate(&mut d, &[trim], &|| false).unwrap();
    let wa = steady_wa_of(&mut d, 0, half);
    // notes: trimmed space counts as spare: alpha = T_eff / (U (1 - t))
    let alpha = p.alpha_effective() / 0.5;
    let predicted = wa_greedy(alpha, 64.0);
    let untrimmed = wa_greedy(p.alpha_effective(), 64.0);
    eprintln!("trim half: WA {wa:.3}, model {predicted:.3} (untrimmed model {untrimmed:.3})");
    assert!(wa < untrimmed / 2.0);
    assert!(
        (wa - predicted).abs() / predicted < 0.05,
        "WA {wa:.3} vs {predicted:.3}"
    );
}

#[test]
fn sustained_random_writes_fall_off_the_cliff_to_fresh_over_wa() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    let p = Params::parse("x25e,size=256m").unwrap();
    let mut d = Device::new(&p);
    let spec = JobSpec {
        runtime_ns: Some(80_000_000_000),
        number_ios: None,
        ..job(RwMode::RandWrite, 32, 0)
    };
    let o = simulate(&mut d, &[spec], &|| false).unwrap();
    let series: Vec<u64> = o.workers[0][0].dirs[1]
        .as_ref()
        .unwrap()
        .series
        .iter()
        .map(|s| s.ios)
        .collect();
    let fresh = series[0] as f64;
    let tail = &series[series.len() - 11..series.len() - 1];
    let steady = tail.iter().sum::<u64>() as f64 / tail.len() as f64;
    let wa = d.ftl.as_ref().unwrap().write_amplification();
    let (h0, t0) = counters(&d);
    let o2 = simulate(
        &mut d,
        &[JobSpec {
            runtime_ns: Some(10_000_000_000),
            number_ios: None,
            randseed: 9,
            ..job(RwMode::RandWrite, 32, 0)
        }],
        &|| false,
    )
    .unwrap();
    let (h1, t1) = counters(&d);
    let wa_steady = (t1 - t0) as f64 / (h1 - h0) as f64;
    eprintln!("fresh {fresh} IOPS, steady {steady:.0} IOPS, ratio {:.2}, steady WA {wa_steady:.2} (cumulative {wa:.2})", fresh / steady);
    assert!(fresh > 25_000.0, "fresh x25e random writes {fresh}");
    assert!(steady < fresh / 3.0, "no cliff: {fresh} -> {steady}");
    let ratio = fresh / steady;
    assert!(
        (ratio - wa_steady).abs() / wa_steady < 0.30,
        "fresh/steady {ratio:.2} vs WA {wa_steady:.2}"
    );
    assert!(!o2.free_blocks.is_empty());
}

/// Polte et al. Figure 1: IOPS at QD 1 is 1/latency; ≥ 90 % of peak by QD ≈ the
/// device's parallel units (the X25-E's 10 channels, the ioDrive's 4 command
/// units). (A many-die drive whose reads land on random dies needs QD of
/// 2–3× its dies: `bench/emu.sh` prints that curve.)
#[test]
fn queue_depth_scaling_has_the_shape_of_polte_et_al_figure_1() {
    let _one_file = crate::one_file_at_a_time(module_path!());
    for (preset, units) in [("x25e", 10u32), ("iodrive", 4)] {
        let p = Params::parse(&format!("{preset},size=256m")).unwrap();
        let mut d = Device::new(&p);
        let fill = JobSpec {
            bs: BlockSizes::Fixed(1 << 20),
            size: Some(p.size),
            ..job(RwMode::Write, 8, p.size >> 20)
        };
        simulate(&mut d, &[fill], &|| false).unwrap();
        let iops_at = |d: &mut Device, qd: u32| {
            let o = simulate(
                d,
                &[job(RwMode::RandRead, qd, 20_000 + 2_000 * qd as u64)],
                &|| false,
            )
            .unwrap();
            let r = o.workers[0][0].dirs[0].as_ref().unwrap().clone();
            (
                r.ios as f64 / (o.workers[0][0].measured_ns as f64 / 1e9),
                r.lat.mean(),
            )
        };
        let (iops1, lat1) = iops_at(&mut d, 1);
        assert!(
            (iops1 * lat1 / 1e9 - 1.0).abs() < 0.05,
            "{preset}: QD1 {iops1} IOPS vs latency {lat1}"
        );
        let (peak, _) = iops_at(&mut d, 4 * units);
        let (at_units, _) = iops_at(&mut d, units);
        eprintln!(
            "{preset}: QD1 {iops1:.0} IOPS ({:.1} us), QD{units} {at_units:.0}, peak {peak:.0}",
            lat1 / 1e3
        );
        assert!(
            at_units >= 0.9 * peak,
            "{preset}: QD{units} {at_units:.0} < 90% of {peak:.0}"
        );
    }
}
