//! The terminal summary of `ssdready run --client`: a line per host, the
//! fleet's, and the slowest host, from the consolidated document
//! ([`crate::merge::document`]).

use crate::client::HostRun;
use crate::merge;

/// The terminal summary: a line per host, the fleet, the slowest host.
pub fn summary(runs: &[HostRun]) -> String {
    let doc = merge::document(runs, false);
    let mut s = String::new();
    let dirs = ["read", "write", "trim"];
    let line = |v: &serde_json::Value| -> String {
        dirs.iter()
            .filter(|d| v[**d]["total_ios"].as_u64().unwrap_or(0) > 0)
            .map(|d| {
                let x = &v[*d];
                let p = &x["clat_ns"]["percentile"];
                format!(
                    "{d}: IOPS={:.0} BW={:.1}MiB/s clat p50={}ns p99={}ns p99.9={}ns",
                    x["iops"].as_f64().unwrap_or(0.0),
                    x["bw_bytes"].as_f64().unwrap_or(0.0) / 1048576.0,
                    p["50.000000"],
                    p["99.000000"],
                    p["99.900000"]
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    for (r, h) in runs
        .iter()
        .zip(doc["hosts"].as_array().into_iter().flatten())
    {
        let who = r
            .probe
            .as_ref()
            .map(|p| format!(" ({}, {})", p.hostname, p.fio_version))
            .unwrap_or_default();
        let host_doc = merge::document(std::slice::from_ref(r), false);
        match &r.error {
            None => {
                s += &format!(
                    "{},{}{}: {} jobs, {}\n",
                    r.host.name,
                    r.host.port,
                    who,
                    h["jobs"],
                    line(&host_doc["all_clients"])
                )
            }
            Some(e) => {
                s += &format!(
                    "{},{}{}: FAILED: {e} ({} jobs kept)\n",
                    r.host.name,
                    r.host.port,
                    who,
                    r.ts.len()
                )
            }
        }
    }
    s += &format!(
        "All clients ({} hosts, {} jobs): {}\n",
        doc["all_clients"]["hosts"],
        doc["all_clients"]["jobs"],
        line(&doc["all_clients"])
    );
    let slow = &doc["fleet"]["slowest"];
    if !slow.is_null() {
        s += &format!(
            "slowest host: {} ({} ms, {:.1} % of the hosts' summed time, {:.1} % past the median of the other hosts)\n",
            slow["host"].as_str().unwrap_or(""),
            slow["runtime_ms"],
            slow["share_of_fleet_time_pct"].as_f64().unwrap_or(0.0),
            slow["past_median_pct"].as_f64().unwrap_or(0.0)
        );
    }
    s
}
