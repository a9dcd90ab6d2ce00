//! The emulated drive's transport, kept apart from the platform: when the
//! study's target is the built-in drive behind the kernel, the daemon
//! serving it stamps each request (arrival, modelled completion, reply) and
//! reports, over the study, the device time per I/O, its own lateness
//! against the model, the reply's cost and its threads' CPU. Lateness above
//! a few percent of device time means the daemon, not the kernel, set part
//! of what the study shows as the platform's time.
//!
//! The daemon's figures ([`ssdready_measured::summary::Transport`]) are a run's ([`ssdready_measured::summary`]),
//! gathered over runs and taken out of the QD 1 platform share by
//! [`crate::figures::curve`] (all re-exported here); this module weighs, on the
//! whole figures, a drive faster than this host can drive ([`host_limit`]).

pub mod calibration;
pub use crate::figures::curve::{over, split};

/// The device alone gives more than this many times the delivered IOPS
/// at the peak's depth: the drive outruns the host.
pub const OUTRUN: f64 = 2.0;

/// What limits the platform when the drive outruns the host, each figure
/// with its error: `x` the whole machine's CPU per I/O at the peak (± half
/// the spread of the peak's repeats), `y` the transport's part of it (±
/// the calibration's spread), and `n` = 1 s / (x − y) the I/Os one CPU
/// gives (± the two errors combined).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostLimit {
    pub n: f64,
    pub n_err: f64,
    pub x_ns: f64,
    pub x_err_ns: f64,
    pub y_ns: f64,
    pub y_err_ns: f64,
    /// The peak's runs behind `x` (1: no repeat, its error unknown).
    pub x_runs: usize,
    /// Where `y` comes from.
    pub y_source: &'static str,
}

impl HostLimit {
    /// The limit from the peak's CPU per I/O (one figure per run) and the
    /// transport's (its error); None without a platform part left.
    pub fn of(cpu: &[f64], (y_ns, y_err_ns, y_source): (f64, f64, &'static str)) -> Option<Self> {
        let x_ns = ssdready_measured::curve::median(cpu)?;
        let max = cpu.iter().copied().fold(f64::MIN, f64::max);
        let min = cpu.iter().copied().fold(f64::MAX, f64::min);
        let x_err_ns = (max - min) / 2.0;
        let platform = x_ns - y_ns;
        if platform <= 0.0 {
            return None;
        }
        let n = 1e9 / platform;
        // First order: dN/N = dP/P, the two errors independent.
        let n_err = n * x_err_ns.hypot(y_err_ns) / platform;
        Some(HostLimit {
            n,
            n_err,
            x_ns,
            x_err_ns,
            y_ns,
            y_err_ns,
            x_runs: cpu.len(),
            y_source,
        })
    }

    /// The platform's own CPU per I/O: x − y.
    pub fn platform_ns(&self) -> f64 {
        self.x_ns - self.y_ns
    }
}

/// `v` with its error when it has one (`fmt` formats both).
fn pm(v: f64, err: f64, fmt: impl Fn(f64) -> String) -> String {
    if err > 0.0 {
        format!("{} ± {}", fmt(v), fmt(err))
    } else {
        fmt(v)
    }
}

/// One CPU figure of each of the peak's runs (a run without it, 0, does
/// not count).
fn at_peak(
    peak: &ssdready_measured::curve::CurvePoint,
    runs: &[ssdready_measured::record::RunRecord],
    pick: fn(&ssdready_measured::summary::CpuSummary) -> f64,
) -> Vec<f64> {
    runs.iter()
        .filter(|r| peak.runs.contains(&r.id))
        .filter_map(|r| Some(pick(r.summary.cpu.as_ref()?)))
        .filter(|v| *v > 0.0)
        .collect()
}

/// The host limit's recommendation: fewer CPU per I/O or more CPUs, unless
/// the CPUs had time left at the peak (`idle_at_peak`, their busy share):
/// then something else held it, named in the saturation finding.
fn advice(h: &HostLimit, peak_iops: f64, idle_at_peak: Option<f64>) -> String {
    let us = |ns: f64| format!("{:.1} µs", ns / 1e3);
    match idle_at_peak {
        None => format!(
            "the platform's CPU per I/O sets this host's limit, not the drive: {} per I/O less \
             the transport ({}) is {}; fewer CPU per I/O (polling, batching, a lighter engine) \
             or more CPUs raise it",
            us(h.x_ns),
            h.y_source,
            us(h.platform_ns())
        ),
        Some(b) => format!(
            "{} per I/O less the transport ({}) is {} of the platform's CPU, which bounds what \
             each CPU can give; but at the peak the CPUs were {b:.0} % busy, so CPU time alone \
             did not hold it at {} IOPS: look for what serialises the I/Os (one hardware queue, \
             the loop device's worker, the drive's daemon) in the saturation finding",
            us(h.x_ns),
            h.y_source,
            us(h.platform_ns()),
            ssdready_core::units::fmt_count(peak_iops)
        ),
    }
}

/// Below this busy share of all CPUs at the peak (the median of its
/// runs), the CPUs had time left: the host limit per CPU still holds, but
/// it is not what held the peak (as `classify`'s 85 %).
const CPUS_BUSY_PCT: f64 = 85.0;

/// The headline when the emulated drive is faster than this host can
/// drive it: what the platform gives per CPU, and what an I/O costs it,
/// the transport's part named (from its calibration, else the daemon's own
/// CPU), each with its error. None when the drive does not outrun the
/// host, or without the CPU figures.
pub fn host_limit(
    f: &crate::figures::Figures,
    runs: &[ssdready_measured::record::RunRecord],
) -> Option<ssdready_measured::record::Verdict> {
    f.transport.as_ref()?;
    let peak = f.peak.as_ref()?;
    let alone = peak.device_iops?;
    if peak.iops <= 0.0 || alone < OUTRUN * peak.iops {
        return None;
    }
    let cpu = at_peak(peak, runs, |c| c.system_ns_per_io);
    let y = match f.calibration.as_ref().and_then(|c| c.at(peak.qd)) {
        Some(p) => (p.cpu_ns, p.cpu_err_ns, "measured with a zero-time drive"),
        None => (
            f.transport.as_ref()?.daemon_cpu_ns_per_io,
            0.0,
            "the drive's daemon alone: no calibration",
        ),
    };
    let h = HostLimit::of(&cpu, y)?;
    // The CPUs' busy share at the peak, the median of its runs.
    let idle_at_peak =
        ssdready_measured::curve::median(&at_peak(peak, runs, |c| c.system_busy_pct))
            .filter(|b| *b < CPUS_BUSY_PCT);
    let us = |ns: f64| format!("{:.1} µs", ns / 1e3);
    let count = ssdready_core::units::fmt_count;
    let repeats = match h.x_runs {
        1 => "one run at the peak: its repeatability unknown".to_string(),
        n => format!("errors: half the spread of the peak's {n} runs and of the calibration's"),
    };
    Some(ssdready_measured::record::Verdict {
        rule: "host-limit".into(),
        finding: format!(
            "this platform gives at most {} IOPS of 4 KiB reads per CPU; each I/O costs {} of \
             kernel CPU, of which {} is the transport (the drive alone gives {} IOPS at QD {}, \
             {:.0}× what this host delivered: the drive outruns the host)",
            pm(h.n, h.n_err, count),
            pm(h.x_ns, h.x_err_ns, us),
            pm(h.y_ns, h.y_err_ns, us),
            count(alone),
            peak.qd,
            alone / peak.iops
        ),
        evidence: ssdready_measured::record::Evidence {
            figures: vec![
                ("cpu_per_io_at_peak".into(), pm(h.x_ns, h.x_err_ns, us)),
                ("transport_cpu_per_io".into(), pm(h.y_ns, h.y_err_ns, us)),
                ("iops_per_cpu".into(), pm(h.n, h.n_err, count)),
                ("peak_iops".into(), count(peak.iops)),
                ("device_alone_iops".into(), count(alone)),
            ],
            runs: peak.runs.clone(),
        },
        recommendation: advice(&h, peak.iops, idle_at_peak),
        confidence: "medium".into(),
        confidence_why: format!(
            "the whole machine's CPU at the peak, other work included; {repeats}"
        ),
        noise_pct: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_measured::summary::Transport;

    #[test]
    fn the_transport_is_taken_out_of_the_platforms_part() {
        let share = crate::figures::PlatformShare {
            pct: 40.0,
            total_ns: 100_000.0,
            platform_ns: 40_000.0,
            device_ns: 60_000.0,
            parts: vec![
                ("the platform".into(), 40_000.0, 0.0),
                ("device".into(), 60_000.0, 0.0),
            ],
            source: "model".into(),
            runs: vec![],
            err_ns: None,
            overcount_ns: None,
            outside_daemon_ns: None,
            unaccounted_ns: None,
            joined_pct: None,
            paced_ns: None,
        };
        let t = Transport {
            name: "ublk".into(),
            ios: 10,
            late_ns_mean: 3_000.0,
            reply_ns_mean: 2_000.0,
            ..Default::default()
        };
        let s = split(share.clone(), Some(&t));
        assert_eq!(s.platform_ns, 35_000.0);
        assert_eq!(s.pct, 35.0);
        assert_eq!(s.parts.len(), 3);
        assert_eq!(s.parts[1].1, 5_000.0);
        let total: f64 = s.parts.iter().map(|p| p.1).sum();
        assert_eq!(total, 100_000.0);
        assert_eq!(split(share.clone(), None).pct, 40.0);
        // Never more than the platform's whole part.
        let big = Transport {
            late_ns_mean: 90_000.0,
            ..t
        };
        assert_eq!(split(share, Some(&big)).platform_ns, 0.0);
    }

    #[test]
    fn the_daemons_wait_is_kept_only_where_read_and_weighed_by_its_ios_over_runs() {
        // A study written before the wait was read loads, and writes none.
        let old = r#"{"name":"ublk","ios":4,"device_ns_mean":1.0,"late_ns_mean":0.0,
            "late_ns_max":0,"reply_ns_mean":0.0,"daemon_cpu_ns_per_io":3000.0}"#;
        let t: Transport = serde_json::from_str(old).unwrap();
        assert_eq!(
            (t.wait_ns_per_io, t.wait_pct, t.ready_wait_pct()),
            (None, None, None)
        );
        assert!(!serde_json::to_string(&t).unwrap().contains("wait"));
        let run = |ios: u64, cpu: f64, wait: Option<f64>| ssdready_measured::record::RunRecord {
            summary: ssdready_measured::summary::PointSummary {
                transport: Some(Transport {
                    ios,
                    daemon_cpu_ns_per_io: cpu,
                    wait_ns_per_io: wait,
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        // 1 000 I/Os waiting 1 µs each on 3 µs of CPU, 3 000 waiting 5 µs
        // on 3 µs: 4 µs per I/O, 4 / (3 + 4) of the ready time.
        let (a, b) = (
            run(1_000, 3_000.0, Some(1_000.0)),
            run(3_000, 3_000.0, Some(5_000.0)),
        );
        let o = crate::figures::curve::over(&[&a, &b]).unwrap();
        assert_eq!(o.wait_ns_per_io, Some(4_000.0));
        assert!((o.wait_pct.unwrap() - 400.0 / 7.0).abs() < 1e-9, "{o:?}");
        // A run without it: the study's whole is not claimed from a part.
        let c = run(1_000, 3_000.0, None);
        assert_eq!(
            crate::figures::curve::over(&[&a, &c]).unwrap().wait_pct,
            None
        );
    }

    #[test]
    fn lateness_above_three_percent_of_device_time_is_transport_bound() {
        let t = |late| Transport {
            device_ns_mean: 100_000.0,
            late_ns_mean: late,
            ..Default::default()
        };
        assert_eq!(t(2_000.0).late_pct(), Some(2.0));
        assert!(!t(3_000.0).bound());
        assert!(t(3_100.0).bound());
        assert_eq!(Transport::default().late_pct(), None);
    }

    fn outrun(
        device_iops: f64,
    ) -> (
        crate::figures::Figures,
        Vec<ssdready_measured::record::RunRecord>,
    ) {
        let mut f = crate::figures::Figures {
            transport: Some(Transport {
                name: "fuse+loop".into(),
                daemon_cpu_ns_per_io: 9_000.0,
                ..Default::default()
            }),
            ..Default::default()
        };
        f.peak = Some(ssdready_measured::curve::CurvePoint {
            qd: 32,
            iops: 37_000.0,
            device_iops: Some(device_iops),
            runs: vec!["qd-32".into()],
            ..Default::default()
        });
        let mut r = ssdready_measured::record::RunRecord {
            id: "qd-32".into(),
            ..Default::default()
        };
        r.summary.cpu = Some(ssdready_measured::summary::CpuSummary {
            system_ns_per_io: 54_000.0,
            ..Default::default()
        });
        (f, vec![r])
    }

    /// The limit's figures carry their errors: the peak's repeats' spread
    /// on the CPU per I/O, the calibration's on the transport, both on N.
    #[test]
    fn the_host_limit_carries_the_repeats_and_the_calibrations_errors() {
        // 50, 54, 58 µs: median 54, ± 4; transport 14 ± 3: 40 ± 5 µs.
        let h = HostLimit::of(&[58_000.0, 50_000.0, 54_000.0], (14_000.0, 3_000.0, "cal")).unwrap();
        assert_eq!((h.x_ns, h.x_err_ns, h.x_runs), (54_000.0, 4_000.0, 3));
        assert_eq!(h.platform_ns(), 40_000.0);
        assert!((h.n - 25_000.0).abs() < 1e-6, "{}", h.n);
        // 25K × 5/40 = 3,125.
        assert!((h.n_err - 3_125.0).abs() < 1e-6, "{}", h.n_err);
        // One run: no spread; nothing left for the platform: no limit.
        let one = HostLimit::of(&[54_000.0], (9_000.0, 0.0, "daemon")).unwrap();
        assert_eq!((one.x_err_ns, one.n_err), (0.0, 0.0));
        assert!(HostLimit::of(&[9_000.0], (9_000.0, 0.0, "daemon")).is_none());
        assert!(HostLimit::of(&[], (1.0, 0.0, "daemon")).is_none());
    }

    #[test]
    fn a_drive_that_outruns_the_host_gives_the_platforms_limit_per_cpu() {
        let (mut f, runs) = outrun(1.0e6);
        let v = host_limit(&f, &runs).unwrap();
        // 54 µs per I/O, 9 µs of it the daemon's: 1 s / 45 µs per CPU.
        assert!(
            v.finding.starts_with(
                "this platform gives at most 22.2K IOPS of 4 KiB reads per CPU; each I/O costs \
                 54.0 µs of kernel CPU, of which 9.0 µs is the transport"
            ),
            "{}",
            v.finding
        );
        // The calibration's figure, with its error, where there is one.
        f.calibration = Some(crate::transport::calibration::Calibration {
            points: vec![crate::transport::calibration::Point {
                qd: 32,
                cpu_ns: 14_000.0,
                cpu_err_ns: 1_000.0,
                ..Default::default()
            }],
            ..Default::default()
        });
        let v = host_limit(&f, &runs).unwrap();
        // 25K ± 25K × 1/40 per CPU.
        assert!(v.finding.contains("25.0K ± 625 IOPS"), "{}", v.finding);
        assert!(v.confidence_why.contains("one run at the peak"));
        assert!(v
            .finding
            .contains("of which 14.0 µs ± 1.0 µs is the transport"));
        assert!(v.recommendation.contains("more CPUs raise it"));
        // CPUs well short of busy at the peak: CPU time did not hold it.
        let mut idle = runs.clone();
        if let Some(c) = idle[0].summary.cpu.as_mut() {
            c.system_busy_pct = 63.0;
        }
        let v = host_limit(&f, &idle).unwrap();
        assert!(
            v.recommendation.contains("the CPUs were 63 % busy")
                && v.recommendation.contains("did not hold it at 37.0K IOPS"),
            "{}",
            v.recommendation
        );
        // A drive the host keeps up with: no such headline.
        assert!(host_limit(&outrun(60_000.0).0, &runs).is_none());
        // Nor without the drive behind the kernel.
        f.transport = None;
        assert!(host_limit(&f, &runs).is_none());
    }
}
