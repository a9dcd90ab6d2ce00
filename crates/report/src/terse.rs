//! fio's terse output, version 3 (`--output-format=terse`, `--minimal`):
//! one line of semicolon-separated fields per job entry of fio's JSON
//! (per clone, or per group with `group_reporting`), in the order and
//! number formats of fio 3.33's `show_thread_status_terse_all`:
//!
//! `3;VERSION;jobname;groupid;error`, then for reads and for writes
//! (version 3 has no trim fields): KiB, KiB/s, IOPS, runtime ms; slat,
//! clat min/max (integer µs) and mean/stddev (`%f` µs); 20 completion
//! latency percentiles `P%=µs` (padded with `0%=0`; total latency's when
//! `lat_percentiles`); total latency; bandwidth min, max, share of the
//! group's aggregate (`%f%`), mean, stddev in KiB/s; then CPU user%, sys%,
//! context switches, major and minor faults; 7 I/O depth shares
//! (`%3.1f%`); 10 µs and 12 ms latency shares (`%3.2f%`, the ns buckets
//! counted in the first µs one); every disk's name, ios, merges, ticks,
//! time in queue and utilisation; and the description, when set.
//!
//! The version field names ssdready (`ssdready-X.Y.Z`), as `fio version`
//! does in the JSON.

use serde_json::Value;

fn u(v: &Value) -> u64 {
    v.as_u64()
        .or_else(|| v.as_f64().map(|f| f.max(0.0) as u64))
        .unwrap_or(0)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

/// `;min;max;mean;dev` of a latency object in ns, as fio prints it in µs.
fn lat(out: &mut String, l: &Value) {
    if u(&l["N"]) == 0 {
        out.push_str(";0;0;0.000000;0.000000");
        return;
    }
    out.push_str(&format!(
        ";{};{};{:.6};{:.6}",
        u(&l["min"]) / 1000,
        u(&l["max"]) / 1000,
        f(&l["mean"]) / 1000.0,
        f(&l["stddev"]) / 1000.0
    ));
}

/// fio's `FIO_IO_U_LIST_MAX_LEN`: percentile fields per direction.
const PERCENTILE_FIELDS: usize = 20;

fn direction(out: &mut String, d: &Value) {
    let runtime = u(&d["runtime"]);
    let per_s = |x: u64| x.saturating_mul(1000).checked_div(runtime).unwrap_or(0);
    let (bw, iops) = (per_s(u(&d["io_bytes"])) / 1024, per_s(u(&d["total_ios"])));
    out.push_str(&format!(
        ";{};{bw};{iops};{runtime}",
        u(&d["io_bytes"]) >> 10
    ));
    lat(out, &d["slat_ns"]);
    lat(out, &d["clat_ns"]);
    // Total latency's percentiles when they were asked for, else clat's.
    let pcts = d["lat_ns"]["percentile"]
        .as_object()
        .or_else(|| d["clat_ns"]["percentile"].as_object());
    let mut list: Vec<(f64, u64)> = pcts
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, u(v))))
                .collect()
        })
        .unwrap_or_default();
    list.sort_by(|a, b| a.0.total_cmp(&b.0));
    for i in 0..PERCENTILE_FIELDS {
        match list.get(i) {
            Some((p, ns)) if u(&d["total_ios"]) > 0 => {
                out.push_str(&format!(";{p:.6}%={}", ns / 1000))
            }
            _ => out.push_str(";0%=0"),
        }
    }
    lat(out, &d["lat_ns"]);
    if u(&d["bw_samples"]) > 0 {
        out.push_str(&format!(
            ";{};{};{:.6}%;{:.6};{:.6}",
            u(&d["bw_min"]),
            u(&d["bw_max"]),
            f(&d["bw_agg"]).min(100.0),
            f(&d["bw_mean"]),
            f(&d["bw_dev"])
        ));
    } else {
        out.push_str(";0;0;0.000000%;0.000000;0.000000");
    }
}

/// fio's `%3.1f%%` / `%3.2f%%` shares, in the keys' order; a share below
/// the precision but not zero shows as the smallest step, as fio's
/// `stat_calc_dist` does.
fn shares(out: &mut String, m: &Value, keys: &[&str], first_extra: f64, decimals: usize) {
    let floor = if decimals == 1 { 0.1 } else { 0.01 };
    for (i, k) in keys.iter().enumerate() {
        let mut v = f(&m[*k]);
        if i == 0 {
            v += first_extra;
        }
        if v > 0.0 && v < floor {
            v = floor;
        }
        out.push_str(&format!(";{v:3.decimals$}%"));
    }
}

/// One terse v3 line for a job entry of fio's JSON, with the document's
/// `disk_util`.
pub fn line(job: &Value, disks: &[Value]) -> String {
    let mut out = format!(
        "3;{};{};{};{}",
        job["fio version"].as_str().unwrap_or(""),
        job["jobname"].as_str().unwrap_or(""),
        u(&job["groupid"]),
        u(&job["error"])
    );
    // unified_rw_reporting: `mixed` alone in the read slot, or after
    // the directions (`both`), as fio.
    if job.get("read").is_some() {
        direction(&mut out, &job["read"]);
        direction(&mut out, &job["write"]);
    }
    if job.get("mixed").is_some() {
        direction(&mut out, &job["mixed"]);
    }
    out.push_str(&format!(
        ";{:.6}%;{:.6}%;{};{};{}",
        f(&job["usr_cpu"]),
        f(&job["sys_cpu"]),
        u(&job["ctx"]),
        u(&job["majf"]),
        u(&job["minf"])
    ));
    shares(
        &mut out,
        &job["iodepth_level"],
        &["1", "2", "4", "8", "16", "32", ">=64"],
        0.0,
        1,
    );
    let edges = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
    ];
    let ns: f64 = edges.iter().map(|k| f(&job["latency_ns"][*k])).sum();
    shares(&mut out, &job["latency_us"], &edges, ns, 2);
    let ms = [
        "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000",
    ];
    shares(&mut out, &job["latency_ms"], &ms, 0.0, 2);
    for d in disks {
        out.push_str(&format!(
            ";{};{};{};{};{};{};{};{};{:3.2}%",
            d["name"].as_str().unwrap_or(""),
            u(&d["read_ios"]),
            u(&d["write_ios"]),
            u(&d["read_merges"]),
            u(&d["write_merges"]),
            u(&d["read_ticks"]),
            u(&d["write_ticks"]),
            u(&d["in_queue"]),
            f(&d["util"])
        ));
    }
    if let Some(desc) = job["desc"].as_str() {
        out.push(';');
        out.push_str(desc);
    }
    out.push('\n');
    out
}

/// The whole terse output of a result: one line per job entry.
pub fn render(r: &ssdready_core::result::RunResult) -> String {
    let doc = crate::fio_json::document(r, false);
    let version = doc["fio version"].clone();
    let disks = doc["disk_util"].as_array().cloned().unwrap_or_default();
    doc["jobs"]
        .as_array()
        .map(|jobs| {
            jobs.iter()
                .map(|j| {
                    let mut j = j.clone();
                    j["fio version"] = version.clone();
                    line(&j, &disks)
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_has_fios_v3_fields_in_order() {
        let dir = json!({
            "io_bytes": 4194304, "total_ios": 1024, "runtime": 1000,
            "slat_ns": {"N": 0},
            "clat_ns": {"N": 1024, "min": 1500, "max": 90000, "mean": 2500.5, "stddev": 300.25,
                        "percentile": {"50.000000": 2048, "1.000000": 1536, "99.000000": 8192}},
            "lat_ns": {"N": 1024, "min": 1600, "max": 91000, "mean": 2600.0, "stddev": 310.0},
            "bw_samples": 1, "bw_min": 4096, "bw_max": 4096, "bw_agg": 100.0, "bw_mean": 4096.0, "bw_dev": 0.0
        });
        let empty = json!({"io_bytes": 0, "total_ios": 0, "runtime": 0, "slat_ns": {"N": 0},
            "clat_ns": {"N": 0}, "lat_ns": {"N": 0}, "bw_samples": 0});
        let job = json!({
            "fio version": "ssdready-1.0.0", "jobname": "j", "groupid": 0, "error": 0,
            "read": dir, "write": empty, "usr_cpu": 1.5, "sys_cpu": 2.25, "ctx": 7, "majf": 0, "minf": 0,
            "iodepth_level": {"1": 100.0},
            "latency_ns": {"500": 0.001}, "latency_us": {"2": 60.0, "4": 39.999},
            "latency_ms": {}, "desc": "a test"
        });
        let disk = json!({"name": "vda", "read_ios": 10, "write_ios": 0, "read_merges": 0,
            "write_merges": 0, "read_ticks": 5, "write_ticks": 0, "in_queue": 5, "util": 1.5});
        let l = line(&job, &[disk]);
        let f: Vec<&str> = l.trim_end().split(';').collect();
        // 5 + 2 × 41 + 5 CPU + 7 depths + 10 µs + 12 ms + 9 disk + 1 description.
        assert_eq!(f.len(), 5 + 82 + 5 + 7 + 10 + 12 + 9 + 1, "{l}");
        assert_eq!(
            &f[..9],
            [
                "3",
                "ssdready-1.0.0",
                "j",
                "0",
                "0",
                "4096",
                "4096",
                "1024",
                "1000"
            ]
        );
        assert_eq!(&f[9..13], ["0", "0", "0.000000", "0.000000"], "no slat");
        assert_eq!(&f[13..17], ["1", "90", "2.500500", "0.300250"]);
        assert_eq!(
            &f[17..20],
            ["1.000000%=1", "50.000000%=2", "99.000000%=8"],
            "sorted"
        );
        assert_eq!(f[20], "0%=0");
        assert_eq!(f[37], "1");
        assert_eq!(
            &f[41..46],
            ["4096", "4096", "100.000000%", "4096.000000", "0.000000"]
        );
        assert_eq!(f[46], "0", "write KiB");
        assert_eq!(&f[87..92], ["1.500000%", "2.250000%", "7", "0", "0"]);
        assert_eq!(f[92], "100.0%");
        assert_eq!(f[99], "60.00%", "ns buckets added to the first µs one");
        assert_eq!(f[100], "40.00%");
        assert_eq!(f[121], "vda");
        assert_eq!(f[129], "1.50%");
        assert_eq!(f[130], "a test");
    }
}
