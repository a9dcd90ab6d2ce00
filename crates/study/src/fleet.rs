//! The study of a fleet: its figures, facts and verdicts are the
//! diagnosis's (`ssdready_diagnosis::fleet`); here, one point from its
//! hosts' figures, with the histograms summed bin by bin through fio's
//! protocol's own layout (`ssdready_fleet::merge`).

pub use ssdready_diagnosis::fleet::*;
use ssdready_fleet::merge;

/// One run's point from its hosts' figures: counts and rates added,
/// histograms summed bin by bin, percentiles read from the sum. `work`:
/// the I/Os each host was given (runs together), which sets each host's
/// time for its work and so the slowest host.
pub fn combine(qd: u32, mut per_host: Vec<HostFigure>, work: Option<u64>) -> Point {
    let mut bins: Vec<u64> = Vec::new();
    for h in &mut per_host {
        if bins.len() < h.clat_bins.len() {
            bins.resize(h.clat_bins.len(), 0);
        }
        for (a, b) in bins.iter_mut().zip(&h.clat_bins) {
            *a += b;
        }
        if let Some(w) = work.filter(|_| h.ios > 0) {
            h.projected = h.ios < w && h.iops > 0.0;
            h.work_ms = Some(if h.projected {
                (w as f64 * 1000.0 / h.iops).round() as u64
            } else {
                h.runtime_ms
            });
        }
    }
    let p = merge::percentiles(&bins, &[50.0, 99.0]);
    let times: Vec<(String, u64)> = per_host
        .iter()
        .filter(|h| h.ios > 0)
        .map(|h| (h.host.clone(), h.work_ms.unwrap_or(h.runtime_ms)))
        .collect();
    let slowest = merge::slowest(&times).map(|s| Straggler {
        projected: per_host.iter().any(|h| h.host == s.host && h.projected),
        host: s.host,
        runtime_ms: s.runtime_ms,
        share_of_fleet_time_pct: s.share_of_fleet_time_pct,
        past_median_pct: s.past_median_pct,
    });
    Point {
        qd,
        n: per_host.len() as u32,
        work_ios: work,
        hosts: per_host.iter().map(|h| h.host.clone()).collect(),
        ios: per_host.iter().map(|h| h.ios).sum(),
        iops: per_host.iter().map(|h| h.iops).sum(),
        p50_ns: p.first().map(|x| x.1),
        p99_ns: p.get(1).map(|x| x.1),
        slowest,
        partial: per_host.iter().any(|h| h.error.is_some()),
        per_host,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_fleet::layout::PLAT_NR;

    fn host(name: &str, ios: u64, runtime_ms: u64, lat_ns: u64) -> HostFigure {
        let mut bins = vec![0u64; PLAT_NR];
        bins[merge::bin_of(lat_ns)] = ios;
        HostFigure {
            host: name.into(),
            ios,
            iops: ios as f64 * 1000.0 / runtime_ms as f64,
            runtime_ms,
            clat_bins: bins,
            ..Default::default()
        }
    }

    #[test]
    fn a_point_adds_rates_and_reads_percentiles_from_the_summed_bins() {
        // 98 fast I/Os on a, 2 slow on b: the fleet's p99 is the slow
        // bin's (2 % of the I/Os are slow), though b alone has 2 I/Os.
        let p = combine(
            4,
            vec![host("a", 98, 1000, 1000), host("b", 2, 1000, 1 << 20)],
            None,
        );
        assert_eq!((p.n, p.ios), (2, 100));
        assert!((p.iops - 100.0).abs() < 1e-9);
        assert_eq!(p.p50_ns, Some(merge::bin_value(merge::bin_of(1000))));
        assert_eq!(p.p99_ns, Some(merge::bin_value(merge::bin_of(1 << 20))));
        assert!(!p.partial);
    }

    #[test]
    fn efficiency_against_the_hosts_alone_and_n_times_the_first() {
        let solo = |h: &str, ios| {
            let mut p = combine(16, vec![host(h, ios, 1000, 1000)], None);
            p.hosts = vec![h.into()];
            p
        };
        let mut s = Section {
            hosts: ["a", "b"]
                .iter()
                .map(|h| HostInfo {
                    host: h.to_string(),
                    ..Default::default()
                })
                .collect(),
            solo: vec![solo("a", 1000), solo("b", 500)],
            // Together: a 900/s for 1 s, b 300/s for 2 s (the straggler).
            scaling: vec![
                combine(16, vec![host("a", 1000, 1000, 1000)], Some(1000)),
                // b was given 900 I/Os and did 600 in 2 s before the cap:
                // its time for the work is projected, 3 s.
                combine(
                    16,
                    vec![host("a", 900, 1000, 1000), host("b", 600, 2000, 1000)],
                    Some(900),
                ),
            ],
            ..Default::default()
        };
        finish(&mut s);
        let one = &s.scaling[0];
        assert!((one.efficiency_pct.unwrap() - 100.0).abs() < 1e-9);
        let two = &s.scaling[1];
        assert_eq!(two.solo_sum_iops, Some(1500.0));
        assert!((two.iops - 1200.0).abs() < 1e-9);
        assert!((two.efficiency_pct.unwrap() - 80.0).abs() < 1e-9);
        assert!((two.vs_first_pct.unwrap() - 60.0).abs() < 1e-9);
        let st = two.slowest.as_ref().unwrap();
        assert_eq!(
            (st.host.as_str(), st.runtime_ms, st.projected),
            ("b", 3000, true)
        );
        assert!((st.share_of_fleet_time_pct - 75.0).abs() < 1e-9);
        assert!((st.past_median_pct - 200.0).abs() < 1e-9);
        assert_eq!(s.own_limits_iops, Some(1500.0));
        assert!((s.delivered_pct.unwrap() - 80.0).abs() < 1e-9);
        let (facts, v) = judge(&s, false);
        assert_eq!(facts["fleet_slowest"].show(), "b");
        let ids: Vec<&str> = v.iter().map(|v| v.rule.as_str()).collect();
        assert!(ids.contains(&"fleet-short-of-its-hosts"), "{ids:?}");
        assert!(ids.contains(&"fleet-straggler"), "{ids:?}");
        assert!(v[0].finding.contains("80 %"), "{}", v[0].finding);
    }

    #[test]
    fn a_failed_host_leaves_no_efficiency_to_claim() {
        let mut bad = host("b", 10, 100, 1000);
        bad.error = Some("connection lost mid-run".into());
        let mut s = Section {
            hosts: vec![HostInfo {
                host: "b".into(),
                ..Default::default()
            }],
            solo: vec![combine(1, vec![bad.clone()], None)],
            scaling: vec![combine(1, vec![bad], Some(10))],
            ..Default::default()
        };
        finish(&mut s);
        assert!(s.scaling[0].partial && s.best.is_none());
        assert_eq!(s.scaling[0].efficiency_pct, None);
        assert_eq!(s.delivered_pct, None);
        let (facts, v) = judge(&s, false);
        assert!(facts.contains_key("fleet_partial"));
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].rule, "fleet-partial");
    }
}
