//! One consolidated result from many hosts.
//!
//! - Every job keeps its host (`host`, `port`, the host's own name).
//! - The fleet's latency distribution is the bin-by-bin sum of every job's
//!   fio histogram (1856 bins per kind and direction); its percentiles are
//!   read from that sum with fio's own rule (the value of the first bin at
//!   which the running count reaches p % of the samples). Percentiles are
//!   never averaged: the mean of two hosts' p99 is not the fleet's p99.
//! - Means and deviations combine exactly (Chan et al.'s parallel update
//!   of mean and sum of squared deviations, as fio's `sum_stat`).
//! - Rates add up (the hosts ran at the same time); the fleet's runtime is
//!   the longest host's.
//! - The slowest host is named with its runtime, its share of the summed
//!   host time and how far it is past the median of the other hosts.
//! - A host that failed is listed with why; the result says `partial`.

use crate::client::HostRun;
use crate::layout::{DIRS, PLAT_NR};
use crate::tstat::{IoStat, LatKind, TsPdu};
use serde_json::{json, Map, Value};

/// fio's default percentiles.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

const DIR_NAMES: [&str; DIRS] = ["read", "write", "trim"];

/// fio's `plat_idx_to_val`: the value (ns) a bin stands for.
pub fn bin_value(idx: usize) -> u64 {
    let idx = idx.min(PLAT_NR - 1);
    if idx < 128 {
        return idx as u64;
    }
    let error_bits = (idx >> 6) as u32 - 1;
    let base = 1u64 << (error_bits + 6);
    let k = (idx % 64) as f64;
    base + ((k + 0.5) * (1u64 << error_bits) as f64) as u64
}

/// fio's `plat_val_to_idx`: the bin of a value (ns).
pub fn bin_of(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= 6 {
        return v as usize;
    }
    let error_bits = msb - 6;
    let base = ((error_bits + 1) as usize) << 6;
    (base + ((v >> error_bits) & 63) as usize).min(PLAT_NR - 1)
}

/// Percentiles of a histogram, by fio's rule.
pub fn percentiles(bins: &[u64], list: &[f64]) -> Vec<(f64, u64)> {
    let n: u64 = bins.iter().sum();
    if n == 0 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(list.len());
    let mut sum = 0u64;
    let mut j = 0;
    for (i, &c) in bins.iter().enumerate() {
        sum += c;
        while j < list.len() && sum as f64 >= list[j] / 100.0 * n as f64 {
            out.push((list[j], bin_value(i)));
            j += 1;
        }
        if j == list.len() {
            break;
        }
    }
    out
}

/// One direction's figures, of one job or merged.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dir {
    pub ios: u64,
    pub bytes: u64,
    pub runtime_ms: u64,
    pub iops: f64,
    pub bw_bytes: f64,
    pub slat: IoStat,
    pub clat: IoStat,
    pub lat: IoStat,
    /// fio's bins of submission, completion and total latency.
    pub bins: [Vec<u64>; 3],
    /// Whether the JSON lists percentiles of submission, completion and
    /// total latency (the job's `slat_percentiles`, `clat_percentiles`,
    /// `lat_percentiles`; merged figures keep the first job's, as fio's
    /// "All clients").
    pub percentiles: Option<[bool; 3]>,
}

impl Dir {
    fn of(t: &TsPdu, d: usize) -> Dir {
        let ts = &t.ts;
        let ios = ts.get("total_io_u", d);
        let bytes = ts.get("io_bytes", d);
        let runtime_ms = ts.get("runtime", d);
        let per_s = |x: u64| {
            if runtime_ms == 0 {
                0.0
            } else {
                x as f64 * 1000.0 / runtime_ms as f64
            }
        };
        Dir {
            ios,
            bytes,
            runtime_ms,
            iops: per_s(ios),
            bw_bytes: per_s(bytes),
            slat: ts.io_stat("slat_stat", d),
            clat: ts.io_stat("clat_stat", d),
            lat: ts.io_stat("lat_stat", d),
            bins: [
                ts.plat(LatKind::Slat, d),
                ts.plat(LatKind::Clat, d),
                ts.plat(LatKind::Lat, d),
            ],
            percentiles: Some([
                ts.get("slat_percentiles", 0) != 0,
                ts.get("clat_percentiles", 0) != 0,
                ts.get("lat_percentiles", 0) != 0,
            ]),
        }
    }

    /// Add another job's figures (run at the same time).
    pub fn add(&mut self, o: &Dir) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.runtime_ms = self.runtime_ms.max(o.runtime_ms);
        self.iops += o.iops;
        self.bw_bytes += o.bw_bytes;
        self.slat.merge(&o.slat);
        self.clat.merge(&o.clat);
        self.lat.merge(&o.lat);
        self.percentiles = self.percentiles.or(o.percentiles);
        for (a, b) in self.bins.iter_mut().zip(&o.bins) {
            if a.is_empty() {
                a.resize(PLAT_NR, 0);
            }
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }

    fn json(&self, plus: bool) -> Value {
        let listed = self.percentiles.unwrap_or([true; 3]);
        let lat = |s: &IoStat, bins: &Vec<u64>, listed: bool| {
            let mut m = Map::new();
            let empty = s.samples == 0;
            m.insert("min".into(), json!(if empty { 0 } else { s.min }));
            m.insert("max".into(), json!(if empty { 0 } else { s.max }));
            m.insert("mean".into(), json!(s.mean));
            m.insert("stddev".into(), json!(s.stddev()));
            m.insert("N".into(), json!(s.samples));
            let p: Map<String, Value> = percentiles(bins, &DEFAULT_PERCENTILES)
                .into_iter()
                .map(|(p, v)| (format!("{p:.6}"), json!(v)))
                .collect();
            if !p.is_empty() && listed {
                m.insert("percentile".into(), Value::Object(p));
            }
            if plus && listed {
                let b: Map<String, Value> = bins
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(i, &c)| (bin_value(i).to_string(), json!(c)))
                    .collect();
                m.insert("bins".into(), Value::Object(b));
            }
            Value::Object(m)
        };
        json!({
            "io_bytes": self.bytes,
            "io_kbytes": self.bytes / 1024,
            "bw_bytes": self.bw_bytes.round() as u64,
            "bw": (self.bw_bytes / 1024.0).round() as u64,
            "iops": self.iops,
            "runtime": self.runtime_ms,
            "total_ios": self.ios,
            "slat_ns": lat(&self.slat, &self.bins[0], listed[0]),
            "clat_ns": lat(&self.clat, &self.bins[1], listed[1]),
            "lat_ns": lat(&self.lat, &self.bins[2], listed[2]),
        })
    }
}

/// Every direction of a set of jobs, summed.
pub fn merge<'a>(ts: impl IntoIterator<Item = &'a TsPdu>) -> [Dir; DIRS] {
    let mut out: [Dir; DIRS] = Default::default();
    for t in ts {
        for (d, o) in out.iter_mut().enumerate() {
            o.add(&Dir::of(t, d));
        }
    }
    out
}

/// A host's time: its longest job direction, ms.
fn host_runtime_ms(r: &HostRun) -> u64 {
    r.ts.iter()
        .flat_map(|t| (0..DIRS).map(move |d| t.ts.get("runtime", d)))
        .max()
        .unwrap_or(0)
}

/// The consolidated document: `client_stats` (every job with its host),
/// `all_clients` (merged), `hosts` and `fleet` (partial, failed hosts,
/// the slowest host).
pub fn document(runs: &[HostRun], plus: bool) -> Value {
    let mut jobs = Vec::new();
    for r in runs {
        for t in &r.ts {
            let mut m = Map::new();
            m.insert("jobname".into(), json!(t.ts.text("name")));
            m.insert("groupid".into(), json!(t.ts.get("groupid", 0)));
            m.insert("error".into(), json!(t.ts.get("error", 0)));
            m.insert("host".into(), json!(r.host.name));
            m.insert("port".into(), json!(r.host.port));
            if let Some(p) = &r.probe {
                m.insert("hostname".into(), json!(p.hostname));
            }
            for (d, name) in DIR_NAMES.iter().enumerate() {
                m.insert((*name).into(), Dir::of(t, d).json(plus));
            }
            jobs.push(Value::Object(m));
        }
    }
    let merged = merge(runs.iter().flat_map(|r| r.ts.iter()));
    let mut all = Map::new();
    all.insert("jobname".into(), json!("All clients"));
    all.insert(
        "hosts".into(),
        json!(runs.iter().filter(|r| !r.ts.is_empty()).count()),
    );
    all.insert(
        "jobs".into(),
        json!(runs.iter().map(|r| r.ts.len()).sum::<usize>()),
    );
    for (d, m) in merged.iter().enumerate() {
        all.insert(DIR_NAMES[d].into(), m.json(plus));
    }
    let hosts: Vec<Value> = runs.iter().map(host_json).collect();
    json!({
        "fleet": fleet_summary(runs),
        "hosts": hosts,
        "client_stats": jobs,
        "all_clients": Value::Object(all),
    })
}

/// The consolidated document in fio's client layout, with ssdready's own
/// keys ([`document`]) kept: `head` first (fio's `fio version`,
/// `timestamp`, `time`), then `global options` (one host: its options; several:
/// one object per host whose job files have any, with its `hostname` and
/// `port`), `client_stats` (every job with the host as given, then fio's
/// "All clients" when more than one job reported) and `disk_util`.
pub fn fio_document(runs: &[HostRun], plus: bool, head: Vec<(String, Value)>) -> Value {
    let mut doc = document(runs, plus);
    let Value::Object(mine) = &mut doc else {
        unreachable!("the document is an object")
    };
    let mut out: Map<String, Value> = head.into_iter().collect();
    let globals = |r: &HostRun| -> Map<String, Value> {
        r.global_options
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect()
    };
    let global = match runs {
        [one] => Value::Object(globals(one)),
        _ => Value::Array(
            runs.iter()
                .filter(|r| !r.global_options.is_empty())
                .map(|r| {
                    let mut m = globals(r);
                    m.insert("hostname".into(), json!(r.host.name));
                    m.insert("port".into(), json!(r.host.port));
                    Value::Object(m)
                })
                .collect(),
        ),
    };
    out.insert("global options".into(), global);
    let mut stats = match mine.remove("client_stats") {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    };
    // fio names a job's host as the client was given (`,8765`: "").
    for j in &mut stats {
        j["hostname"] = j["host"].clone();
    }
    if stats.len() > 1 {
        let mut all = mine.get("all_clients").cloned().unwrap_or(Value::Null);
        if let Some(last) = runs.iter().rev().find(|r| !r.ts.is_empty()) {
            all["hostname"] = json!(last.host.name);
            all["port"] = json!(last.host.port);
        }
        stats.push(all);
    }
    out.insert("client_stats".into(), Value::Array(stats));
    let du: Vec<Value> = mine
        .get("hosts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|h| h["disk_util"].as_array().cloned().unwrap_or_default())
        .collect();
    out.insert("disk_util".into(), Value::Array(du));
    for (k, v) in std::mem::take(mine) {
        out.entry(k).or_insert(v);
    }
    Value::Object(out)
}

fn host_json(r: &HostRun) -> Value {
    let d = merge(r.ts.iter());
    json!({
        "host": r.host.name,
        "port": r.host.port,
        "hostname": r.probe.as_ref().map(|p| p.hostname.clone()),
        "fio_version": r.probe.as_ref().map(|p| p.fio_version.clone()),
        "protocol_version": r.version,
        "complete": r.complete(),
        "error": r.error,
        "jobs": r.ts.len(),
        "jobs_announced": r.stats_announced,
        "runtime_ms": host_runtime_ms(r),
        "iops": d.iter().map(|x| x.iops).sum::<f64>(),
        "bw_bytes": d.iter().map(|x| x.bw_bytes).sum::<f64>().round() as u64,
        "text": r.text,
        "zlib": r.zlib,
        "logs": r.logs.iter().map(|l| json!({
            "name": l.name,
            "samples": l.nr_samples,
            "samples_received": l.held(r.version.unwrap_or(97)),
            "compressed": l.compressed,
        })).collect::<Vec<_>>(),
        "log_errors": r.log_errors,
        "disk_util": r.du.iter().map(|d| json!({
            "name": d.name,
            "read_ios": d.ios[0],
            "write_ios": d.ios[1],
            "read_merges": d.merges[0],
            "write_merges": d.merges[1],
            "read_ticks": d.ticks[0],
            "write_ticks": d.ticks[1],
            "in_queue": d.time_in_queue,
            "util": d.util_pct(),
        })).collect::<Vec<_>>(),
    })
}

/// The slowest of a fleet's hosts.
#[derive(Clone, Debug, PartialEq)]
pub struct Slowest {
    pub host: String,
    pub runtime_ms: u64,
    /// Its runtime against the hosts' runtimes summed, percent.
    pub share_of_fleet_time_pct: f64,
    /// How much longer it took than the median of the other hosts,
    /// percent (0 with one host).
    pub past_median_pct: f64,
}

/// The slowest host of `(host, runtime ms)` pairs (the first of equals);
/// None without hosts.
pub fn slowest(times: &[(String, u64)]) -> Option<Slowest> {
    let at = times.len() - 1 - times.iter().rev().enumerate().max_by_key(|x| x.1 .1)?.0;
    let (host, t) = &times[at];
    let total: u64 = times.iter().map(|x| x.1).sum();
    let mut others: Vec<u64> = times
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .map(|(_, x)| x.1)
        .collect();
    others.sort_unstable();
    let k = others.len();
    let median = match k {
        0 => *t as f64,
        _ if k % 2 == 1 => others[k / 2] as f64,
        _ => (others[k / 2 - 1] + others[k / 2]) as f64 / 2.0,
    };
    Some(Slowest {
        host: host.clone(),
        runtime_ms: *t,
        share_of_fleet_time_pct: if total > 0 {
            *t as f64 * 100.0 / total as f64
        } else {
            0.0
        },
        past_median_pct: if median > 0.0 {
            (*t as f64 / median - 1.0) * 100.0
        } else {
            0.0
        },
    })
}

/// Whether every host finished, which failed, and the slowest host.
pub fn fleet_summary(runs: &[HostRun]) -> Value {
    let failed: Vec<Value> = runs
        .iter()
        .filter(|r| !r.complete())
        .map(|r| {
            json!({"host": format!("{},{}", r.host.name, r.host.port),
                   "error": r.error.clone().unwrap_or_else(|| match r.stop {
                       Some((e, s)) if (e, s) != (0, 0) => format!("the run ended with error {e}, signal {s}"),
                       _ => format!("{} of {} result blocks", r.ts.len(), r.stats_announced),
                   }),
                   "results_kept": r.ts.len()})
        })
        .collect();
    let times: Vec<(String, u64)> = runs
        .iter()
        .filter(|r| !r.ts.is_empty())
        .map(|r| {
            (
                format!("{},{}", r.host.name, r.host.port),
                host_runtime_ms(r),
            )
        })
        .collect();
    let slowest = slowest(&times).map(|s| {
        json!({
            "host": s.host,
            "runtime_ms": s.runtime_ms,
            "share_of_fleet_time_pct": s.share_of_fleet_time_pct,
            "past_median_pct": s.past_median_pct,
        })
    });
    json!({
        "hosts": runs.len(),
        "answered": runs.iter().filter(|r| r.probe.is_some()).count(),
        "complete": runs.iter().filter(|r| r.complete()).count(),
        "partial": !failed.is_empty(),
        "failed": failed,
        "slowest": slowest,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_and_values_invert() {
        for i in 0..PLAT_NR - 1 {
            assert_eq!(bin_of(bin_value(i)), i, "bin {i}");
        }
        assert_eq!(bin_of(u64::MAX), PLAT_NR - 1);
    }

    #[test]
    fn percentiles_of_a_sum_are_not_averages() {
        // Host A: 99 fast I/Os and 1 slow; host B: 100 fast. The fleet's
        // p99 is fast (199 of 200 are), though A's own p99.5 is slow.
        let mut a = vec![0u64; PLAT_NR];
        let mut b = vec![0u64; PLAT_NR];
        a[bin_of(1000)] = 99;
        a[bin_of(1_000_000)] = 1;
        b[bin_of(1000)] = 100;
        let sum: Vec<u64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
        let p = percentiles(&sum, &[99.0, 99.9]);
        assert_eq!(p[0].1, bin_value(bin_of(1000)));
        assert_eq!(p[1].1, bin_value(bin_of(1_000_000)));
    }

    #[test]
    fn the_slowest_host_and_its_share() {
        let t = |v: &[(&str, u64)]| -> Vec<(String, u64)> {
            v.iter().map(|(h, t)| (h.to_string(), *t)).collect()
        };
        assert_eq!(slowest(&[]), None);
        // 1000 + 1000 + 2000 ms: the third took half the summed time and
        // twice the median host's.
        let s = slowest(&t(&[("a", 1000), ("b", 1000), ("c", 2000)])).unwrap();
        assert_eq!((s.host.as_str(), s.runtime_ms), ("c", 2000));
        assert!((s.share_of_fleet_time_pct - 50.0).abs() < 1e-9);
        assert!((s.past_median_pct - 100.0).abs() < 1e-9);
        // Two hosts: set against the other one.
        let s = slowest(&t(&[("a", 1000), ("b", 1500)])).unwrap();
        assert_eq!(s.host, "b");
        assert!((s.past_median_pct - 50.0).abs() < 1e-9);
        // Equal hosts: the first is named, 0 % past the median.
        let s = slowest(&t(&[("a", 500), ("b", 500)])).unwrap();
        assert_eq!(s.host, "a");
        assert!((s.share_of_fleet_time_pct - 50.0).abs() < 1e-9);
        assert_eq!(s.past_median_pct, 0.0);
    }

    fn job(name: &str, slat_pct: bool, clat_pct: bool) -> TsPdu {
        let mut ts = crate::tstat::ThreadStat::new(crate::VERSIONS[0]).unwrap();
        ts.set_text("name", name);
        ts.set("total_io_u", 0, 10);
        ts.set("runtime", 0, 1000);
        ts.set("slat_percentiles", 0, u64::from(slat_pct));
        ts.set("clat_percentiles", 0, u64::from(clat_pct));
        let stat = IoStat {
            min: 1000,
            max: 1000,
            samples: 10,
            mean: 1000.0,
            s: 0.0,
        };
        let mut bins = vec![0u64; PLAT_NR];
        bins[bin_of(1000)] = 10;
        for (name, kind) in [
            ("slat_stat", LatKind::Slat),
            ("clat_stat", LatKind::Clat),
            ("lat_stat", LatKind::Lat),
        ] {
            ts.set_io_stat(name, 0, &stat);
            ts.set_plat(kind, 0, &bins);
        }
        TsPdu {
            ts,
            gs: Default::default(),
        }
    }

    fn run(name: &str, port: u16, ts: Vec<TsPdu>, globals: &[(&str, &str)]) -> HostRun {
        let host = crate::client::Host {
            name: name.into(),
            port,
            addr: ([127, 0, 0, 1], port).into(),
        };
        let mut r = crate::client::empty_run(&host);
        r.ts = ts;
        r.global_options = globals
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        r
    }

    /// fio's client layout: one host's global options as an object,
    /// several hosts' as an array naming each; "All clients" in
    /// `client_stats` once more than one job reported; percentiles only
    /// for the kinds the job lists.
    #[test]
    fn the_fio_document_has_fios_client_layout() {
        let head = vec![("fio version".to_string(), json!("fio-3.33"))];
        let one = [run(
            "",
            8765,
            vec![job("t", true, false)],
            &[("ioengine", "null")],
        )];
        let d = fio_document(&one, false, head.clone());
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            &keys[..4],
            ["fio version", "global options", "client_stats", "disk_util"]
        );
        assert_eq!(d["global options"], json!({"ioengine": "null"}));
        let stats = d["client_stats"].as_array().unwrap();
        assert_eq!(stats.len(), 1);
        assert_eq!(
            (&stats[0]["hostname"], &stats[0]["port"]),
            (&json!(""), &json!(8765))
        );
        assert!(stats[0]["read"]["slat_ns"].get("percentile").is_some());
        assert!(stats[0]["read"]["clat_ns"].get("percentile").is_none());
        assert!(stats[0]["read"]["lat_ns"].get("percentile").is_none());

        let two = [
            run("a", 1, vec![job("t", false, true)], &[]),
            run("b", 2, vec![job("t", false, true)], &[("runtime", "3s")]),
        ];
        let d = fio_document(&two, false, head);
        assert_eq!(
            d["global options"],
            json!([{"runtime": "3s", "hostname": "b", "port": 2}])
        );
        let stats = d["client_stats"].as_array().unwrap();
        assert_eq!(stats.len(), 3);
        assert_eq!(stats[2]["jobname"], "All clients");
        assert_eq!(stats[2]["read"]["total_ios"], 20);
        assert!(stats[2]["read"]["clat_ns"].get("percentile").is_some());
    }

    #[test]
    fn io_stats_merge_exactly() {
        let xs = [1.0, 2.0, 3.0, 10.0, 20.0];
        let stat = |v: &[f64]| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            IoStat {
                min: v.iter().cloned().fold(f64::MAX, f64::min) as u64,
                max: v.iter().cloned().fold(0.0, f64::max) as u64,
                samples: v.len() as u64,
                mean,
                s: v.iter().map(|x| (x - mean).powi(2)).sum(),
            }
        };
        let mut a = stat(&xs[..2]);
        a.merge(&stat(&xs[2..]));
        let all = stat(&xs);
        assert!((a.mean - all.mean).abs() < 1e-12 && (a.s - all.s).abs() < 1e-9);
        assert_eq!((a.min, a.max, a.samples), (1, 20, 5));
    }
}
