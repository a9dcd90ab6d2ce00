//! The study of a fleet in figures (`figures.fleet`): each host alone,
//! then hosts 1…N together, and the efficiencies made from them
//! ([`finish`]); judged in [`crate::fleet`].

use serde::{Deserialize, Serialize};

/// One host in one run (alone or with others).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostFigure {
    /// `HOST,PORT` as named on the command line.
    pub host: String,
    pub ios: u64,
    pub iops: f64,
    pub runtime_ms: u64,
    /// Together: the time the host took for the I/Os it was given, ms;
    /// projected from its rate (and `projected` set) when the run's time
    /// cap stopped it first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub projected: bool,
    /// Completion latency p99, ns (fio's rule, from the host's own bins).
    pub p99_ns: Option<u64>,
    /// Why the host failed, if it did (its figures are what it sent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// fio's completion-latency bins (1856): summed for the fleet, not
    /// written (the run's own document keeps them).
    #[serde(skip)]
    pub clat_bins: Vec<u64>,
}

/// The slowest host of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Straggler {
    pub host: String,
    /// Its time for its share of the work (`work_ms`), else its runtime.
    pub runtime_ms: u64,
    /// The time is projected from its rate (it hit the time cap).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub projected: bool,
    /// Its runtime against the hosts' runtimes summed, percent.
    pub share_of_fleet_time_pct: f64,
    /// How much longer it took than the median host, percent.
    pub past_median_pct: f64,
}

/// One run: a host alone, or hosts 1…n together, at one depth.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Point {
    pub qd: u32,
    /// How many hosts ran together.
    pub n: u32,
    /// Together: the I/Os each host was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_ios: Option<u64>,
    pub hosts: Vec<String>,
    /// I/Os completed, all hosts.
    pub ios: u64,
    /// The hosts' rates added (they ran at once).
    pub iops: f64,
    /// Percentiles of the bin-by-bin sum of the hosts' histograms, ns.
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub per_host: Vec<HostFigure>,
    /// The same hosts alone at this depth, IOPS summed.
    pub solo_sum_iops: Option<f64>,
    /// `iops` against `solo_sum_iops`, percent.
    pub efficiency_pct: Option<f64>,
    /// The first host alone at this depth, IOPS.
    pub first_host_iops: Option<f64>,
    /// `iops` against n × `first_host_iops`, percent.
    pub vs_first_pct: Option<f64>,
    pub slowest: Option<Straggler>,
    /// A host failed or did not finish: the figures cover what came.
    pub partial: bool,
    /// The run's consolidated result (json+), beside study.json.
    pub result: Option<String>,
}

/// A host of the fleet, as it answered.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub host: String,
    pub hostname: String,
    pub fio_version: String,
    pub protocol_version: u16,
}

/// `figures.fleet`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Section {
    pub hosts: Vec<HostInfo>,
    /// What each host's job reads: a path on the host, `emu:…` (ssdready
    /// servers) or `null engine`.
    pub target: String,
    pub depths: Vec<u32>,
    /// Seconds of each solo run (the runs together are bounded by I/Os).
    pub runtime_s: f64,
    /// Each host alone at each depth.
    pub solo: Vec<Point>,
    /// Hosts 1…n together at each depth.
    pub scaling: Vec<Point>,
    /// Each host's own limit (its best solo IOPS over the depths), summed.
    pub own_limits_iops: Option<f64>,
    /// The best aggregate of all hosts together against `own_limits_iops`,
    /// percent: the fleet's delivered fraction.
    pub delivered_pct: Option<f64>,
    /// The point that figure comes from (all hosts, its depth).
    pub best: Option<Point>,
}

/// `part` against `whole`, percent (None when `whole` is not positive).
pub fn pct(part: f64, whole: f64) -> Option<f64> {
    (whole > 0.0).then(|| 100.0 * part / whole)
}

/// Fill the efficiencies of the points together from the solo points, and
/// the fleet's delivered fraction against its hosts' own limits.
pub fn finish(s: &mut Section) {
    let solo_iops = |host: &str, qd: u32| {
        s.solo
            .iter()
            .find(|p| p.qd == qd && p.hosts.first().map(String::as_str) == Some(host))
            .filter(|p| !p.partial)
            .map(|p| p.iops)
    };
    for p in &mut s.scaling {
        let solos: Option<Vec<f64>> = p.hosts.iter().map(|h| solo_iops(h, p.qd)).collect();
        p.solo_sum_iops = solos.map(|v| v.iter().sum());
        p.efficiency_pct = p.solo_sum_iops.and_then(|w| pct(p.iops, w));
        p.first_host_iops = p.hosts.first().and_then(|h| solo_iops(h, p.qd));
        p.vs_first_pct = p.first_host_iops.and_then(|f| pct(p.iops, p.n as f64 * f));
    }
    let limits: Option<Vec<f64>> = s
        .hosts
        .iter()
        .map(|h| {
            s.solo
                .iter()
                .filter(|p| p.hosts.first() == Some(&h.host) && !p.partial)
                .map(|p| p.iops)
                .max_by(f64::total_cmp)
        })
        .collect();
    s.own_limits_iops = limits.filter(|v| !v.is_empty()).map(|v| v.iter().sum());
    let all = s.hosts.len() as u32;
    s.best = s
        .scaling
        .iter()
        .filter(|p| p.n == all && !p.partial)
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .cloned();
    s.delivered_pct = match (&s.best, s.own_limits_iops) {
        (Some(b), Some(l)) => pct(b.iops, l),
        _ => None,
    };
}
