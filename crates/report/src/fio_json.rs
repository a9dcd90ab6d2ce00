//! fio's JSON and json+ layouts (`--output-format=json|json+`), so tools
//! built for fio's output read ssdready's unchanged.
//!
//! Layout and key order follow fio 3.33: top-level `fio version` (here
//! `ssdready-X.Y.Z`), `timestamp`, `timestamp_ms`, `time`, `global options`,
//! `jobs[]`, `disk_util[]`. Without `group_reporting` there is one entry per
//! worker (clone), as in fio; with it, one per reporting group, whose name and
//! options are stated in its `ssdready.group` object rather than borrowed from
//! one job. Percentile maps use `percentile_list` when given, else fio's own
//! 17-entry default, and sit in `clat_ns` (and `lat_ns`/`slat_ns` with
//! `lat_percentiles`/`slat_percentiles`), keyed like `"99.000000"`. json+ adds
//! `bins` (bucket value in ns → count) next to each percentile map.
//!
//! With `unified_rw_reporting`, a `mixed` object (every direction summed)
//! replaces `read`/`write`/`trim`/`sync` (`mixed`) or follows `sync` (`both`).
//!
//! Differences, stated: bandwidth and IOPS samples (`bw_*`, `iops_*`) are
//! per second rather than per 500 ms; `minf`/`majf` are 0; `time` is UTC.
//! ssdready's own figures — whole-system CPU per I/O, the latency split, the
//! platform — sit in one extra `ssdready` object per job, with whether the
//! run was `interrupted` and its `failure`, if any (fio has no field for
//! either).

use serde_json::{json, Map, Value};
use ssdready_core::hist::Histogram;
use ssdready_core::result::{JobResult, RunResult};
use ssdready_core::spec::UnifiedRw;
use ssdready_core::spec::FIO_DEFAULT_PERCENTILES;
use ssdready_core::stats::{DirStats, WorkerStats};
use ssdready_core::steady::FioSteadyReport;
use ssdready_core::Ddir;

/// `Sun Nov 22 02:44:33 2026` for a Unix time (UTC), like ctime(3).
pub fn ctime(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let (y, m, d) = ssdready_core::units::civil_from_days(days);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {y}",
        WD[days.rem_euclid(7) as usize],
        MO[(m - 1) as usize],
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn pct_key(p: f64) -> String {
    format!("{p:.6}")
}

fn lat_obj(h: &Histogram, pcts: Option<&[f64]>, plus: bool) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), json!(h.min()));
    m.insert("max".into(), json!(h.max()));
    m.insert("mean".into(), json!(h.mean()));
    m.insert("stddev".into(), json!(h.stddev()));
    m.insert("N".into(), json!(h.count()));
    if let (Some(p), true) = (pcts, h.count() > 0) {
        let map: Map<String, Value> = p
            .iter()
            .map(|&x| (pct_key(x), json!(h.percentile(x))))
            .collect();
        m.insert("percentile".into(), Value::Object(map));
        if plus {
            let bins: Map<String, Value> =
                h.bins().map(|(v, c)| (v.to_string(), json!(c))).collect();
            m.insert("bins".into(), Value::Object(bins));
        }
    }
    Value::Object(m)
}

/// (min, max, mean, sample stddev, samples) of per-second values.
fn sample_stats(v: &[f64]) -> (f64, f64, f64, f64, usize) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0, 0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(0.0, f64::max);
    (min, max, mean, var.sqrt(), v.len())
}

struct Opts<'a> {
    pcts: &'a [f64],
    clat_p: bool,
    lat_p: bool,
    slat_p: bool,
    plus: bool,
}

fn dir_obj(d: Option<&DirStats>, window_ns: u64, o: &Opts<'_>, group_bw: f64) -> Value {
    let empty = DirStats::default();
    let d = d.unwrap_or(&empty);
    let secs = window_ns as f64 / 1e9;
    let bw_bytes = if secs > 0.0 {
        d.bytes as f64 / secs
    } else {
        0.0
    };
    let iops = if secs > 0.0 { d.ios as f64 / secs } else { 0.0 };
    let full = (window_ns / 1_000_000_000) as usize;
    let per_sec: Vec<&ssdready_core::stats::SecSample> = d.series.iter().take(full).collect();
    let bw_s: Vec<f64> = per_sec.iter().map(|s| s.bytes as f64 / 1024.0).collect();
    let io_s: Vec<f64> = per_sec.iter().map(|s| s.ios as f64).collect();
    let (bmin, bmax, bmean, bdev, bn) = sample_stats(&bw_s);
    let (imin, imax, imean, idev, inn) = sample_stats(&io_s);
    let p = Some(o.pcts);
    let obj = json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes as u64,
        "bw": (bw_bytes / 1024.0) as u64,
        "iops": iops,
        "runtime": if d.ios > 0 { window_ns / 1_000_000 } else { 0 },
        "total_ios": d.ios,
        "short_ios": d.short_ios,
        "drop_ios": 0,
        "slat_ns": lat_obj(&d.slat, p.filter(|_| o.slat_p), o.plus),
        "clat_ns": lat_obj(&d.clat, p.filter(|_| o.clat_p), o.plus),
        "lat_ns": lat_obj(&d.lat, p.filter(|_| o.lat_p), o.plus),
        "bw_min": bmin as u64,
        "bw_max": bmax as u64,
        "bw_agg": if group_bw > 0.0 { 100.0 * bw_bytes / group_bw } else { 0.0 },
        "bw_mean": bmean,
        "bw_dev": bdev,
        "bw_samples": bn,
        "iops_min": imin as u64,
        "iops_max": imax as u64,
        "iops_mean": imean,
        "iops_stddev": idev,
        "iops_samples": inn,
    });
    match d.prios.as_deref().map(|p| p.reported()) {
        Some(prios) if !prios.is_empty() => with_prios(obj, &prios, o),
        _ => obj,
    }
}

/// fio 3.33's `prios` array (after `lat_ns`), when at least two
/// priorities have samples: each one's class, level and latency — total
/// latency (`lat_ns`) with `lat_percentiles`, else completion latency.
fn with_prios(obj: Value, prios: &[&(u16, Histogram)], o: &Opts<'_>) -> Value {
    let key = if o.lat_p { "lat_ns" } else { "clat_ns" };
    let pcts = Some(o.pcts).filter(|_| o.clat_p || o.lat_p);
    let list: Vec<Value> = prios
        .iter()
        .map(|(v, h)| {
            let mut m = Map::new();
            m.insert("prioclass".into(), json!(v >> 13));
            m.insert("prio".into(), json!(v & 7));
            m.insert(key.into(), lat_obj(h, pcts, o.plus));
            Value::Object(m)
        })
        .collect();
    let Value::Object(fields) = obj else {
        return obj;
    };
    let mut out = Map::new();
    for (k, v) in fields {
        let after_lat = k == "lat_ns";
        out.insert(k, v);
        if after_lat {
            out.insert("prios".into(), Value::Array(list.clone()));
        }
    }
    Value::Object(out)
}

/// fio's `sync` section: `total_ios` counts fsyncs only (fio counts its
/// DDIR_SYNC there, not DDIR_DATASYNC), the latency all syncs.
fn sync_obj(stats: &WorkerStats, o: &Opts<'_>) -> Value {
    let empty = Histogram::new();
    let (fsyncs, lat) = match stats.sync.as_deref() {
        Some(s) => (s.fsyncs, &s.lat),
        None => (0, &empty),
    };
    let p = Some(o.pcts).filter(|_| o.clat_p || o.lat_p);
    json!({ "total_ios": fsyncs, "lat_ns": lat_obj(lat, p, o.plus) })
}

fn pct_map(keys: &[&str], counts: &[u64; 7]) -> Value {
    let total: u64 = counts.iter().sum();
    let m: Map<String, Value> = keys
        .iter()
        .zip(counts)
        .map(|(k, &c)| {
            (
                k.to_string(),
                json!(if total > 0 {
                    100.0 * c as f64 / total as f64
                } else {
                    0.0
                }),
            )
        })
        .collect();
    Value::Object(m)
}

/// fio's latency_ns / latency_us / latency_ms maps from completion latencies.
fn latency_maps(clat: &[&Histogram]) -> (Value, Value, Value) {
    const EDGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    let mut total = 0u64;
    for h in clat {
        for (v, c) in h.bins() {
            total += c;
            let slot = |x: u64| EDGES.iter().position(|&e| x < e);
            if v < 1_000 {
                ns[slot(v).unwrap_or(9)] += c;
            } else if v < 1_000_000 {
                us[slot(v / 1_000).unwrap_or(9)] += c;
            } else {
                let m = v / 1_000_000;
                let i = match slot(m) {
                    Some(i) => i,
                    None if m < 2000 => 10,
                    None => 11,
                };
                ms[i] += c;
            }
        }
    }
    let pct = |c: u64| {
        if total > 0 {
            100.0 * c as f64 / total as f64
        } else {
            0.0
        }
    };
    let keys: Vec<String> = EDGES.iter().map(|e| e.to_string()).collect();
    let mk = |arr: &[u64], extra: &[&str]| -> Value {
        let mut m = Map::new();
        for (i, k) in keys
            .iter()
            .chain(
                extra
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .iter(),
            )
            .enumerate()
        {
            m.insert(k.clone(), json!(pct(arr[i])));
        }
        Value::Object(m)
    };
    (mk(&ns, &[]), mk(&us, &[]), mk(&ms, &["2000", ">=2000"]))
}

/// One entry of `jobs[]`: the merged stats of `workers` (a clone, or a group).
#[allow(clippy::too_many_arguments)]
fn job_entry(
    r: &RunResult,
    jobs: &[&JobResult],
    stats: &WorkerStats,
    name: &str,
    options: Map<String, Value>,
    group_bw: f64,
    plus: bool,
    extra: Value,
    steady: Option<&FioSteadyReport>,
) -> Value {
    let spec = &jobs[0].spec;
    let pcts: &[f64] = if spec.percentile_list_given {
        &spec.percentile_list
    } else {
        &FIO_DEFAULT_PERCENTILES
    };
    let o = Opts {
        pcts,
        clat_p: spec.clat_percentiles,
        lat_p: spec.lat_percentiles,
        slat_p: spec.slat_percentiles,
        plus,
    };
    let ours = ssdready_fields(r, jobs, stats, extra);
    let mut entry = fio_fields(jobs, stats, name, options, group_bw, &o);
    let window = stats.measured_ns;
    if spec.logs.unified_rw != UnifiedRw::None {
        let mut all = DirStats::default();
        stats.dirs.iter().flatten().for_each(|d| all.merge(d));
        let mixed = dir_obj(Some(&all), window, &o, group_bw);
        entry = unify_directions(entry, mixed, spec.logs.unified_rw);
    }
    if let (Value::Object(m), Some(ss)) = (&mut entry, steady) {
        m.insert("steadystate".into(), steadystate_obj(ss));
    }
    let resets = jobs
        .iter()
        .filter_map(|j| j.zone_resets)
        .reduce(|a, b| a + b);
    if let (Value::Object(m), Some(n)) = (&mut entry, resets) {
        // fio: zonemode=zbd jobs that write or trim.
        m.insert("zone_resets".into(), json!(n));
    }
    if let Value::Object(m) = &mut entry {
        m.insert("ssdready".into(), ours);
    }
    entry
}

/// The entry's `ssdready` object: what this run adds to fio's figures (the
/// run, the phase's CPU and disks, its profile and checks, verification).
fn ssdready_fields(r: &RunResult, jobs: &[&JobResult], stats: &WorkerStats, extra: Value) -> Value {
    let spec = &jobs[0].spec;
    let phase = &r.phases.get(jobs[0].phase);
    let mut ours = json!({
        "version": r.tool,
        "schema_version": r.schema_version,
        "phase": jobs[0].phase,
        "interrupted": r.interrupted,
        "failure": r.failure,
        "completion_mode": jobs[0].completion_mode,
        "strategy": jobs[0].strategy,
        "cpu": phase.and_then(|p| p.cpu.as_ref()),
        "disks": phase.map(|p| p.disks.iter().filter(|d| jobs.iter().any(|j| j.targets.iter().any(|t| t.device.as_deref() == Some(&d.name)))).collect::<Vec<_>>()),
        "clock": r.clock,
        "platform": { "kernel": r.platform.kernel, "cpu_model": r.platform.cpu_model, "cpus_online": r.platform.cpus_online },
    });
    let waited = jobs
        .iter()
        .filter_map(|j| j.overlaps_waited)
        .reduce(|a, b| a + b);
    if let (Value::Object(a), Some(n)) = (&mut ours, waited) {
        a.insert("overlaps_waited".into(), json!(n));
    }
    if let (Value::Object(a), Value::Object(b)) = (&mut ours, extra) {
        a.extend(b);
    }
    if let (Value::Object(a), Some(p)) = (&mut ours, &jobs[0].persistence) {
        a.insert("persistence".into(), json!(p));
    }
    if let (Value::Object(a), Some(p)) = (&mut ours, phase) {
        // What the phase measured beyond fio, when it ran: the kernel
        // profile, the per-I/O decomposition and the cross-checks that hold
        // its figures against independent sources.
        if let Some(v) = &p.profile {
            a.insert("profile".into(), json!(v));
        }
        if let Some(v) = &p.decomposition {
            a.insert("decomposition".into(), json!(v));
        }
        if !p.checks.is_empty() {
            a.insert("checks".into(), json!(p.checks));
        }
    }
    if let (Value::Object(a), Some(v)) = (&mut ours, stats.verify.as_deref()) {
        // fio shows a failed verification only as the job's error (84,
        // EILSEQ) and on stderr; here every failure is listed.
        a.insert(
            "verify".into(),
            json!({
                "method": spec.verify.method.map_or("", |m| m.name()),
                "blocks": v.blocks,
                "bytes": v.bytes,
                "failed": v.failed,
                "failures": v.failures,
                "skipped_by_state": v.skipped_by_state,
            }),
        );
    }
    ours
}

/// The fields fio itself writes for a job, in fio's order.
fn fio_fields(
    jobs: &[&JobResult],
    stats: &WorkerStats,
    name: &str,
    options: Map<String, Value>,
    group_bw: f64,
    o: &Opts<'_>,
) -> Value {
    let spec = &jobs[0].spec;
    let window = stats.measured_ns;
    let dir = |d: Ddir| stats.dirs[d.idx()].as_deref();
    let clats: Vec<&Histogram> = stats.dirs.iter().flatten().map(|d| &d.clat).collect();
    let (lns, lus, lms) = latency_maps(&clats);
    let runtime_ms = window / 1_000_000;
    let cpu_pct = |ns: u64| {
        if window > 0 {
            100.0 * ns as f64 / window as f64
        } else {
            0.0
        }
    };
    let depth_keys = ["1", "2", "4", "8", "16", "32", ">=64"];
    let batch_keys = ["0", "4", "8", "16", "32", "64", ">=64"];
    let ramp = jobs.iter().map(|j| j.spec.ramp_time_ns).max().unwrap_or(0);
    let mut entry = json!({
        "jobname": name,
        "groupid": jobs[0].group,
        "error": stats.first_errno,
        "eta": 0,
        "elapsed": (window + ramp).div_ceil(1_000_000_000),
        "job options": options,
        "read": dir_obj(dir(Ddir::Read), window, o, group_bw),
        "write": dir_obj(dir(Ddir::Write), window, o, group_bw),
        "trim": dir_obj(dir(Ddir::Trim), window, o, group_bw),
        "sync": sync_obj(stats, o),
        "job_runtime": runtime_ms,
        "usr_cpu": cpu_pct(stats.thread_cpu.user_ns),
        // The SQPOLL thread works for the job (fio, one process per job,
        // counts it in its getrusage figure too).
        "sys_cpu": cpu_pct(stats.thread_cpu.sys_ns + stats.sq_thread_ns),
        "ctx": stats.thread_cpu.ctx,
        "majf": 0,
        "minf": 0,
        "iodepth_level": pct_map(&depth_keys, &stats.depth_at_issue),
        "iodepth_submit": pct_map(&batch_keys, &stats.submit_batches),
        "iodepth_complete": pct_map(&batch_keys, &stats.complete_batches),
        "latency_ns": lns,
        "latency_us": lus,
        "latency_ms": lms,
        "latency_depth": stats.latency_depth.unwrap_or(jobs[0].spec.effective_iodepth()),
        "latency_target": spec.sched.latency.map_or(0, |l| l.target_ns),
        "latency_percentile": spec.sched.latency.map_or(100.0, |l| l.percentile),
        "latency_window": spec.sched.latency.map_or(0, |l| l.window_ns / 1000),
    });
    if let Value::Object(m) = &mut entry {
        // fio adds the errors gone past when continue_on_error is set,
        // then the description, when set, after the latency figures.
        if spec.continue_on_error.any() || spec.ignore_error.any() {
            m.insert("total_err".into(), json!(stats.continued));
            m.insert("first_error".into(), json!(stats.first_continued_errno));
        }
        if let Some(desc) = &spec.description {
            m.insert("desc".into(), json!(desc));
        }
    }
    entry
}

/// fio's `unified_rw_reporting`: `mixed` puts the directions' sum, keyed
/// `mixed`, where `read`, `write` and `trim` were, and drops `sync` (fio's
/// `add_ddir_status_json` shows only the first direction then); `both` keeps them and
/// adds `mixed` after `sync` (fio's `add_mixed_ddir_status_json`).
fn unify_directions(entry: Value, mixed: Value, how: UnifiedRw) -> Value {
    let Value::Object(m) = entry else {
        return entry;
    };
    let mut out = Map::new();
    let mut mixed = Some(mixed);
    for (k, v) in m {
        let per_dir = matches!(k.as_str(), "read" | "write" | "trim" | "sync");
        if how == UnifiedRw::Mixed && per_dir {
            if k == "read" {
                out.insert("mixed".into(), mixed.take().unwrap_or_default());
            }
            continue;
        }
        let after_sync = k == "sync";
        out.insert(k, v);
        if after_sync && how == UnifiedRw::Both {
            out.insert("mixed".into(), mixed.take().unwrap_or_default());
        }
    }
    Value::Object(out)
}

/// fio 3.33's `steadystate` object (`stat.c`), its keys in its order.
fn steadystate_obj(ss: &FioSteadyReport) -> Value {
    json!({
        "ss": ss.ss,
        "duration": ss.duration,
        "attained": u8::from(ss.attained),
        "criterion": ss.criterion,
        "max_deviation": ss.max_deviation,
        "slope": ss.slope,
        "data": {
            "bw_mean": ss.data.bw_mean,
            "iops_mean": ss.data.iops_mean,
            "iops": ss.data.iops,
            "bw": ss.data.bw,
        },
    })
}

/// A job's options as fio lists them: as written, value-less flags left out.
fn options_of(j: &JobResult) -> Map<String, Value> {
    j.spec
        .options_given
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect()
}

fn bw_of(s: &WorkerStats) -> f64 {
    let secs = s.measured_ns as f64 / 1e9;
    if secs > 0.0 {
        s.dirs.iter().flatten().map(|d| d.bytes).sum::<u64>() as f64 / secs
    } else {
        0.0
    }
}

/// The result in fio's layout; `plus` gives json+.
pub fn render(r: &RunResult, plus: bool) -> String {
    let mut s = serde_json::to_string_pretty(&document(r, plus)).expect("JSON values serialise");
    s.push('\n');
    s
}

/// The result in fio's layout, as a JSON value (also the source of the
/// terse format).
pub fn document(r: &RunResult, plus: bool) -> Value {
    let disk_util = disk_util(r);
    let globals: Map<String, Value> = r
        .global_options
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let ts = r.started_unix_ms / 1000;
    let mut top = Map::new();
    top.insert(
        "fio version".into(),
        json!(format!(
            "ssdready-{}",
            r.tool.trim_start_matches("ssdready ")
        )),
    );
    top.insert("timestamp".into(), json!(ts));
    top.insert("timestamp_ms".into(), json!(r.started_unix_ms));
    top.insert("time".into(), json!(ctime(ts)));
    if !globals.is_empty() {
        top.insert("global options".into(), Value::Object(globals));
    }
    top.insert("jobs".into(), Value::Array(job_entries(r, plus)));
    if !disk_util.is_empty() {
        top.insert("disk_util".into(), Value::Array(disk_util));
    }
    // ssdready's cross-checks and notes about the run (fio has no such key).
    if !r.warnings.is_empty() {
        top.insert("warnings".into(), json!(r.warnings));
    }
    Value::Object(top)
}

/// `jobs[]`: one entry per reporting group with `group_reporting`, else one
/// per worker (clone).
fn job_entries(r: &RunResult, plus: bool) -> Vec<Value> {
    let mut jobs_out = Vec::new();
    let mut groups: Vec<u32> = r.jobs.iter().map(|j| j.group).collect();
    groups.dedup();
    for g in groups {
        let members: Vec<&JobResult> = r.jobs.iter().filter(|j| j.group == g).collect();
        let group_bw: f64 = members
            .iter()
            .flat_map(|j| j.raw_workers.iter())
            .map(bw_of)
            .sum();
        if members.iter().any(|j| j.spec.group_reporting) {
            jobs_out.push(group_entry(r, &members, group_bw, plus));
        } else {
            for j in &members {
                for (i, w) in j.raw_workers.iter().enumerate() {
                    let extra = json!({ "clone": i, "workers": j.workers });
                    jobs_out.push(job_entry(
                        r,
                        &[j],
                        w,
                        &j.name,
                        options_of(j),
                        group_bw,
                        plus,
                        extra,
                        j.steadystate.get(i),
                    ));
                }
            }
        }
    }
    jobs_out
}

/// One reporting group's entry: its members' figures merged, its name and
/// options stated in `ssdready.group`.
fn group_entry(r: &RunResult, members: &[&JobResult], group_bw: f64, plus: bool) -> Value {
    let mut merged = WorkerStats::default();
    for j in members {
        merged.merge(&j.raw);
    }
    let mut names: Vec<&str> = members.iter().map(|j| j.name.as_str()).collect();
    names.dedup();
    let name = names.join("+");
    // Options every member shares are the group's; the rest are listed per job.
    let all: Vec<Map<String, Value>> = members.iter().map(|j| options_of(j)).collect();
    let common: Map<String, Value> = all[0]
        .iter()
        .filter(|(k, v)| all.iter().all(|m| m.get(*k) == Some(*v)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let extra = json!({ "group": {
        "name": name,
        "jobs": members.iter().map(|j| json!({"name": j.name, "workers": j.workers})).collect::<Vec<_>>(),
        "common_options": common.clone(),
        "job_options": all,
    }});
    let ss = members.iter().find_map(|j| j.steadystate.first());
    job_entry(
        r, members, &merged, &name, common, group_bw, plus, extra, ss,
    )
}

/// `disk_util[]`: every phase's device figures, summed per device.
fn disk_util(r: &RunResult) -> Vec<Value> {
    let mut disks: Vec<(String, [u64; 7], u64)> = Vec::new();
    for p in &r.phases {
        for d in &p.disks {
            let v = [
                d.read_ios,
                d.write_ios,
                d.read_merges,
                d.write_merges,
                d.read_ticks_ms,
                d.write_ticks_ms,
                d.time_in_queue_ms,
            ];
            match disks.iter_mut().find(|(n, _, _)| *n == d.name) {
                Some((_, acc, busy)) => {
                    for i in 0..7 {
                        acc[i] += v[i];
                    }
                    *busy += d.io_ticks_ms;
                }
                None => disks.push((d.name.clone(), v, d.io_ticks_ms)),
            }
        }
    }
    let total_ms: u64 = r.phases.iter().map(|p| p.window_ns / 1_000_000).sum();
    disks
        .into_iter()
        .map(|(name, v, busy)| {
            json!({
                "name": name, "read_ios": v[0], "write_ios": v[1], "read_merges": v[2], "write_merges": v[3],
                "read_ticks": v[4], "write_ticks": v[5], "in_queue": v[6],
                "util": if total_ms > 0 { (100.0 * busy as f64 / total_ms as f64).min(100.0) } else { 0.0 },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_matches_the_c_library() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(ctime(1_795_315_473), "Sun Nov 22 02:44:33 2026");
    }

    #[test]
    fn latency_maps_put_each_io_in_one_bucket() {
        let mut h = Histogram::new();
        h.record(30); // ns "50"
        h.record(5_000); // us "10"
        h.record(3_000_000); // ms "4"
        h.record(5_000_000_000); // ms ">=2000"
        let (ns, us, ms) = latency_maps(&[&h]);
        assert_eq!(ns["50"], 25.0);
        assert_eq!(us["10"], 25.0);
        assert_eq!(ms["4"], 25.0);
        assert_eq!(ms[">=2000"], 25.0);
    }
}
