//! ssdready's results as fio's structures, for `ssdready server`.
//!
//! One `thread_stat` per job (its workers merged, `members` = workers) and
//! one `group_run_stats` per reporting group. Latencies go into fio's 1856
//! bins exactly: each of ssdready's buckets (128 per power of two, exact
//! below 256 ns) lies inside one of fio's (64 per power of two, exact below
//! 128 ns), so a count never straddles two bins. Mean and S come from the
//! exact sums. Fields fio fills from its defaults (`kb_base`, `unit_base`,
//! `sig_figs`, `percentile_precision`, `latency_percentile`) carry the
//! values real fio 3.33 sends for a default job (see the golden fixtures).

use crate::layout::DIRS;
use crate::merge::bin_of;
use crate::pdu::DiskUtil;
use crate::tstat::{GroupStats, IoStat, LatKind, ThreadStat, TsPdu};
use crate::Error;
use ssdready_core::hist::Histogram;
use ssdready_core::result::{JobResult, RunResult};
use ssdready_core::stats::DirStats;

fn io_stat(h: &Histogram) -> IoStat {
    if h.count() == 0 {
        return empty_stat();
    }
    let n = h.count() as f64;
    IoStat {
        max: h.max(),
        min: h.min(),
        samples: h.count(),
        mean: h.mean(),
        // Population variance × n = the sum of squared deviations.
        s: h.stddev().powi(2) * n,
    }
}

/// fio's empty `io_stat`: min at its largest value.
fn empty_stat() -> IoStat {
    IoStat {
        min: u64::MAX,
        ..IoStat::default()
    }
}

fn bins(h: &Histogram) -> Vec<u64> {
    let mut b = vec![0u64; crate::layout::PLAT_NR];
    for (v, c) in h.bins() {
        b[bin_of(v)] += c;
    }
    b
}

/// fio's `io_u_lat_n/u/m` bucket of a latency (ns): which array and index.
fn lat_bucket(ns: u64) -> (&'static str, usize) {
    const EDGES: [u64; 10] = [0, 2, 4, 10, 20, 50, 100, 250, 500, 750];
    let idx = |v: u64| EDGES.iter().rposition(|&e| v >= e).unwrap_or(0);
    if ns < 1000 {
        ("io_u_lat_n", idx(ns))
    } else if ns < 1_000_000 {
        ("io_u_lat_u", idx(ns / 1000))
    } else {
        let ms = ns / 1_000_000;
        match ms {
            0..1000 => ("io_u_lat_m", idx(ms)),
            1000..2000 => ("io_u_lat_m", 10),
            _ => ("io_u_lat_m", 11),
        }
    }
}

/// Per-second samples as fio's bandwidth (KiB/s) and IOPS statistics:
/// whole seconds of the measured window only (a partial last second is
/// not a rate).
fn series_stats(series: &[ssdready_core::stats::SecSample], window_ns: u64) -> (IoStat, IoStat) {
    let mut bw = Histogram::new();
    let mut iops = Histogram::new();
    let whole = (window_ns / 1_000_000_000) as usize;
    for s in series.iter().take(whole) {
        bw.record(s.bytes / 1024);
        iops.record(s.ios);
    }
    (io_stat(&bw), io_stat(&iops))
}

/// One direction's counts, latencies, buckets and per-second rates in `t`.
fn set_direction(t: &mut ThreadStat, d: usize, ds: &DirStats, measured_ns: u64) {
    t.set("total_io_u", d, ds.ios);
    t.set("short_io_u", d, ds.short_ios);
    t.set("io_bytes", d, ds.bytes);
    if ds.ios > 0 {
        t.set("runtime", d, (measured_ns / 1_000_000).max(1));
    }
    for (kind, h, f) in [
        (LatKind::Slat, &ds.slat, "slat_stat"),
        (LatKind::Clat, &ds.clat, "clat_stat"),
        (LatKind::Lat, &ds.lat, "lat_stat"),
    ] {
        t.set_io_stat(f, d, &io_stat(h));
        t.set_plat(kind, d, &bins(h));
    }
    for (v, c) in ds.clat.bins() {
        let (f, i) = lat_bucket(v);
        t.set(f, i, t.get(f, i) + c);
    }
    let (bw, iops) = series_stats(&ds.series, measured_ns);
    t.set_io_stat("bw_stat", d, &bw);
    t.set_io_stat("iops_stat", d, &iops);
}

/// One job's `thread_stat`, in `version`'s layout.
pub fn thread_stat(j: &JobResult, number: u32, version: u16) -> Result<ThreadStat, Error> {
    let mut t = ThreadStat::new(version)?;
    let raw = &j.raw;
    t.set_text("name", &j.name);
    if let Some(e) = &raw.first_error {
        t.set_text("verror", e);
    }
    t.set("error", 0, raw.first_errno.unsigned_abs() as u64);
    t.set("thread_number", 0, u64::from(number));
    t.set("groupid", 0, u64::from(j.group));
    t.set("pid", 0, u64::from(std::process::id()));
    t.set_text("description", j.spec.description.as_deref().unwrap_or(""));
    t.set("members", 0, u64::from(j.workers.max(1)));
    t.set("disable_prio_stat", 0, 1);
    t.set_io_stat("sync_stat", 0, &empty_stat());
    let runtime_ms = j.measured_ns / 1_000_000;
    for d in 0..DIRS {
        for f in ["clat_stat", "slat_stat", "lat_stat", "bw_stat", "iops_stat"] {
            t.set_io_stat(f, d, &empty_stat());
        }
        if let Some(ds) = raw.dirs[d].as_deref() {
            set_direction(&mut t, d, ds, j.measured_ns);
        }
    }
    t.set("usr_time", 0, raw.thread_cpu.user_ns / 1_000_000);
    t.set("sys_time", 0, raw.thread_cpu.sys_ns / 1_000_000);
    t.set("ctx", 0, raw.thread_cpu.ctx);
    t.set("clat_percentiles", 0, u64::from(j.spec.clat_percentiles));
    t.set("lat_percentiles", 0, u64::from(j.spec.lat_percentiles));
    t.set("slat_percentiles", 0, u64::from(j.spec.slat_percentiles));
    t.set("percentile_precision", 0, 2);
    let list: &[f64] = if j.spec.percentile_list_given {
        &j.spec.percentile_list
    } else {
        &crate::merge::DEFAULT_PERCENTILES
    };
    for (i, p) in list.iter().take(20).enumerate() {
        t.set_f("percentile_list", i, *p);
    }
    for i in 0..7 {
        t.set("io_u_map", i, raw.depth_at_issue[i]);
        t.set("io_u_submit", i, raw.submit_batches[i]);
        t.set("io_u_complete", i, raw.complete_batches[i]);
    }
    t.set("total_submit", 0, raw.submit_batches.iter().sum());
    t.set("total_complete", 0, raw.complete_batches.iter().sum());
    t.set("total_run_time", 0, runtime_ms);
    t.set(
        "first_error",
        0,
        raw.first_continued_errno.unsigned_abs() as u64,
    );
    t.set("total_err_count", 0, raw.continued);
    t.set("kb_base", 0, 1024);
    t.set("unit_base", 0, 4);
    t.set("latency_depth", 0, u64::from(j.spec.iodepth));
    t.set_f("latency_percentile", 0, 100.0);
    t.set("sig_figs", 0, 4);
    Ok(t)
}

/// Every job's TS and every group's totals, in `version`'s layout.
pub fn fio_results(r: &RunResult, version: u16) -> Result<(Vec<TsPdu>, Vec<GroupStats>), Error> {
    let mut groups: Vec<GroupStats> = Vec::new();
    let mut tss = Vec::new();
    for (i, j) in r.jobs.iter().enumerate() {
        let ts = thread_stat(j, i as u32 + 1, version)?;
        let gi = match groups.iter().position(|g| g.groupid == j.group) {
            Some(gi) => gi,
            None => {
                groups.push(GroupStats {
                    min_run: [u64::MAX; 3],
                    min_bw: [u64::MAX; 3],
                    kb_base: 1024,
                    unit_base: 4,
                    sig_figs: 4,
                    groupid: j.group,
                    ..Default::default()
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[gi];
        for d in 0..DIRS {
            let (bytes, run) = (ts.get("io_bytes", d), ts.get("runtime", d));
            if run == 0 {
                continue;
            }
            let bw = bytes * 1000 / run;
            g.max_run[d] = g.max_run[d].max(run);
            g.min_run[d] = g.min_run[d].min(run);
            g.max_bw[d] = g.max_bw[d].max(bw);
            g.min_bw[d] = g.min_bw[d].min(bw);
            g.iobytes[d] += bytes;
        }
        tss.push((ts, j.group));
    }
    for g in &mut groups {
        for d in 0..DIRS {
            g.agg[d] = (g.iobytes[d] * 1000).checked_div(g.max_run[d]).unwrap_or(0);
        }
    }
    let out = tss
        .into_iter()
        .map(|(ts, gid)| TsPdu {
            ts,
            gs: groups
                .iter()
                .find(|g| g.groupid == gid)
                .cloned()
                .unwrap_or_default(),
        })
        .collect();
    Ok((out, groups))
}

/// The block devices' utilisation over the run, one DU per disk (a disk
/// in several phases summed), as fio's server sends it.
pub fn disk_util(result: &RunResult) -> Vec<DiskUtil> {
    let mut out: Vec<DiskUtil> = Vec::new();
    for p in &result.phases {
        for d in &p.disks {
            let i = match out.iter().position(|u| u.name == d.name) {
                Some(i) => i,
                None => {
                    out.push(DiskUtil {
                        name: d.name.clone(),
                        ..Default::default()
                    });
                    out.len() - 1
                }
            };
            let u = &mut out[i];
            u.ios[0] += d.read_ios;
            u.ios[1] += d.write_ios;
            u.merges[0] += d.read_merges;
            u.merges[1] += d.write_merges;
            u.sectors[0] += d.read_sectors;
            u.sectors[1] += d.write_sectors;
            u.ticks[0] += d.read_ticks_ms;
            u.ticks[1] += d.write_ticks_ms;
            u.io_ticks += d.io_ticks_ms;
            u.time_in_queue += d.time_in_queue_ms;
            u.msec += p.window_ns / 1_000_000;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets_follow_fios_edges() {
        assert_eq!(lat_bucket(1), ("io_u_lat_n", 0));
        assert_eq!(lat_bucket(2), ("io_u_lat_n", 1));
        assert_eq!(lat_bucket(49), ("io_u_lat_n", 4));
        assert_eq!(lat_bucket(999), ("io_u_lat_n", 9));
        assert_eq!(lat_bucket(1000), ("io_u_lat_u", 0));
        assert_eq!(lat_bucket(250_000), ("io_u_lat_u", 7));
        assert_eq!(lat_bucket(1_500_000_000), ("io_u_lat_m", 10));
        assert_eq!(lat_bucket(5_000_000_000), ("io_u_lat_m", 11));
    }

    #[test]
    fn ssdready_buckets_fall_in_one_fio_bin_each() {
        let mut h = Histogram::new();
        for v in [
            1u64,
            127,
            128,
            255,
            256,
            1000,
            4097,
            123_456,
            9_999_999,
            1 << 36,
        ] {
            h.record(v);
        }
        let b = bins(&h);
        assert_eq!(b.iter().sum::<u64>(), 10);
        for v in [
            1u64,
            127,
            128,
            255,
            256,
            1000,
            4097,
            123_456,
            9_999_999,
            1 << 36,
        ] {
            assert!(b[bin_of(v)] >= 1, "{v}");
        }
    }
}
