//! `--decompose`: load the block-tracepoint programs, hand the workers the
//! join table, and turn the kernel's histograms and the workers' per-I/O
//! split into the result's decomposition.

use ssdready_core::hist::LatSummary;
use ssdready_core::result::{Decomposition, PartShare, PerIoSplit};
use ssdready_core::stats::IoSplit;
use ssdready_io::bpf::{BlockTimer, BtfLayout, PartHist, TRACEPOINTS};
use ssdready_probe::btf::Btf;
use ssdready_probe::disk;

/// The offsets and attach ids the tp_btf programs need, from the running
/// kernel's BTF.
pub fn btf_layout() -> Result<BtfLayout, String> {
    let btf = Btf::vmlinux().map_err(|e| e.to_string())?;
    let mut attach_ids = [0u32; 5];
    for (id, tp) in attach_ids.iter_mut().zip(TRACEPOINTS) {
        let name = format!("btf_trace_{tp}");
        *id = btf
            .typedef_id(&name)
            .ok_or_else(|| format!("the kernel's BTF has no {name} (tracepoint missing)"))?;
    }
    let field = |s: &str, f: &str, size: u32| match btf.field(s, f) {
        Some((off, sz)) if sz == size => Ok(off),
        Some((_, sz)) => Err(format!("struct {s}.{f} is {sz} bytes, expected {size}")),
        None => Err(format!("the kernel's BTF has no struct {s}.{f}")),
    };
    Ok(BtfLayout {
        attach_ids,
        rq_sector: field("request", "__sector", 8)?,
        rq_bio: field("request", "bio", 8)?,
        bio_bdev: field("bio", "bi_bdev", 8)?,
        bdev_dev: field("block_device", "bd_dev", 4)?,
    })
}

/// Load the programs for this process, or None with a warning that says
/// what cannot be measured and why.
pub fn start(warnings: &mut Vec<String>) -> Option<BlockTimer> {
    // SSDREADY_BTF=off forces the raw-tracepoint flavour (as on a kernel
    // without BTF), to test and compare it.
    let layout = match std::env::var_os("SSDREADY_BTF") {
        Some(v) if v == "off" => Err("SSDREADY_BTF=off".to_string()),
        _ => btf_layout(),
    };
    match BlockTimer::start(std::process::id(), layout.as_ref().ok()) {
        Ok(t) => {
            let why = match (&layout, &t.fallback) {
                (_, Some(f)) => Some(f.clone()),
                (Err(e), None) => Some(e.clone()),
                _ => None,
            };
            if let Some(why) = why {
                warnings.push(format!(
                    "--decompose: raw tracepoints only, so the time above the block layer is a mean, \
                     not per I/O: {why}"
                ));
            }
            Some(t)
        }
        Err(e) => {
            let root = crate::sys::is_root();
            warnings.push(format!(
                "--decompose: the eBPF block-tracepoint programs could not be loaded ({e}{}); \
                 for block devices only the mean split from /sys/block/X/stat is shown",
                if root {
                    ""
                } else {
                    "; loading them needs root"
                }
            ));
            None
        }
    }
}

/// `after` − `before`, as a summary.
fn delta(before: &PartHist, after: &PartHist, pcts: &[f64]) -> LatSummary {
    let buckets: Vec<(u64, u64)> = after
        .buckets
        .iter()
        .map(|&(v, c)| {
            let was = before.buckets.iter().find(|b| b.0 == v).map_or(0, |b| b.1);
            (v, c - was)
        })
        .filter(|b| b.1 > 0)
        .collect();
    disk::summary_from_buckets(
        &buckets,
        after.sum_ns - before.sum_ns,
        after.count - before.count,
        pcts,
    )
}

type Parts = (PartHist, PartHist, PartHist);

/// The split from two snapshots of the kernel histograms, the app's view
/// (I/O count and latency sum) and the workers' per-I/O join.
pub fn split(
    flavour: &str,
    a: Parts,
    b: Parts,
    app_ios: u64,
    app_sum_ns: f64,
    joined: Option<&IoSplit>,
    pcts: &[f64],
) -> Decomposition {
    let below = delta(&a.0, &b.0, pcts);
    let dev = delta(&a.1, &b.1, pcts);
    let blk = delta(&a.2, &b.2, pcts);
    let app_mean = if app_ios > 0 {
        app_sum_ns / app_ios as f64
    } else {
        0.0
    };
    let agree =
        app_ios > 0 && (below.n as f64 - app_ios as f64).abs() <= (app_ios as f64 * 0.01).max(2.0);
    let per_io = per_io_split(joined, pcts);
    let parts = shares(per_io.as_ref(), agree, app_mean, &below, &blk, &dev);
    let notes = notes(flavour, joined, agree, below.n, app_ios);
    Decomposition {
        flavour: flavour.into(),
        block_layer_mean_ns: below.mean_ns - dev.mean_ns,
        above_block_mean_ns: agree.then_some(app_mean - below.mean_ns),
        note: (!notes.is_empty()).then(|| notes.join("; ")),
        block_and_below: below,
        driver_and_device: dev,
        block_layer: blk,
        app_ios,
        app_mean_ns: app_mean,
        per_io,
        parts,
    }
}

/// The workers' per-I/O join as the result's split, when any I/O was joined.
fn per_io_split(joined: Option<&IoSplit>, pcts: &[f64]) -> Option<PerIoSplit> {
    joined.filter(|j| j.matched > 0).map(|j| PerIoSplit {
        matched: j.matched,
        unmatched: j.unmatched,
        above_block_submit: LatSummary::of(&j.submit, pcts),
        block_layer: LatSummary::of(&j.block, pcts),
        scheduler_queue: (j.queued.count() > 0).then(|| LatSummary::of(&j.queued, pcts)),
        driver_and_device: LatSummary::of(&j.device, pcts),
        completion: LatSummary::of(&j.complete, pcts),
        total: LatSummary::of(&j.total, pcts),
    })
}

/// Each part's mean and share of the whole: from the joined I/Os when
/// there are any, else from the histograms' means when the block layer's
/// count agrees with the app's.
fn shares(
    per_io: Option<&PerIoSplit>,
    agree: bool,
    app_mean: f64,
    below: &LatSummary,
    blk: &LatSummary,
    dev: &LatSummary,
) -> Vec<PartShare> {
    let share = |part: &str, mean_ns: f64, of: f64| PartShare {
        part: part.into(),
        mean_ns,
        share_pct: if of > 0.0 { 100.0 * mean_ns / of } else { 0.0 },
    };
    let mut parts = Vec::new();
    match per_io {
        // The joined I/Os' own means: they add up to their mean latency.
        Some(p) => {
            let of = p.total.mean_ns;
            parts.push(share(
                "above block, submission",
                p.above_block_submit.mean_ns,
                of,
            ));
            parts.push(share(
                "block layer and scheduler",
                p.block_layer.mean_ns,
                of,
            ));
            parts.push(share("driver and device", p.driver_and_device.mean_ns, of));
            parts.push(share("completion to the app", p.completion.mean_ns, of));
        }
        None if agree => {
            let of = app_mean;
            parts.push(share(
                "above block (both sides)",
                app_mean - below.mean_ns,
                of,
            ));
            parts.push(share("block layer, submission", blk.mean_ns, of));
            parts.push(share("driver and device", dev.mean_ns, of));
            let completion = below.mean_ns - blk.mean_ns - dev.mean_ns;
            parts.push(share("block layer, completion", completion, of));
        }
        None => {}
    }
    parts
}

/// What the split withholds or could not join, one note each.
fn notes(
    flavour: &str,
    joined: Option<&IoSplit>,
    agree: bool,
    block_ios: u64,
    app_ios: u64,
) -> Vec<String> {
    let mut notes = Vec::new();
    if !agree {
        notes.push(format!(
            "the block layer saw {block_ios} of this process's I/Os, ssdready completed {app_ios}: \
             the mean above-block split is withheld"
        ));
    }
    match (flavour, joined) {
        ("tp_btf", None) => notes.push(
            "no per-I/O split: the targets' sectors are unknown (a file needs a file system on a \
             block device that answers FIEMAP)"
                .into(),
        ),
        (_, Some(j)) if j.unmatched > j.matched / 10 => notes.push(format!(
            "{} of {} I/Os were not joined with a kernel record (merged or split requests)",
            j.unmatched,
            j.matched + j.unmatched
        )),
        _ => {}
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_core::stats::KernelTimes;

    fn hist(v: u64, n: u64) -> PartHist {
        PartHist {
            buckets: vec![(v, n)],
            sum_ns: v * n,
            count: n,
        }
    }

    fn parts(n: u64) -> Parts {
        (hist(10_000, n), hist(8_000, n), hist(500, n))
    }

    /// The kernel's counts are window deltas; the per-I/O parts add up to
    /// 100 % of the joined I/Os' mean.
    #[test]
    fn per_io_parts_share_the_joined_mean() {
        let mut j = IoSplit::default();
        for i in 0..100 {
            let t = 1_000_000 * i;
            let k = KernelTimes {
                io_start: t + 2_000,
                rq_insert: 0,
                rq_issue: t + 2_500,
                rq_complete: t + 10_500,
            };
            j.record(t, t + 14_000, Some(k));
        }
        let d = split(
            "tp_btf",
            parts(50),
            parts(150),
            100,
            100.0 * 14_000.0,
            Some(&j),
            &[50.0],
        );
        assert_eq!(d.block_and_below.n, 100);
        assert!(d.note.is_none(), "{:?}", d.note);
        let p = d.per_io.as_ref().unwrap();
        assert_eq!((p.matched, p.unmatched), (100, 0));
        let share: f64 = d.parts.iter().map(|x| x.share_pct).sum();
        assert!((share - 100.0).abs() < 1e-9);
        assert_eq!(d.parts[0].part, "above block, submission");
        assert!((d.parts[3].mean_ns - 3_500.0).abs() / 3_500.0 < 0.004);
    }

    /// Without a join and with counts that disagree, nothing above the block
    /// layer is claimed, and the note says why.
    #[test]
    fn disagreeing_counts_withhold_the_mean_split() {
        let d = split("raw_tp", parts(0), parts(50), 100, 1e6, None, &[50.0]);
        assert!(d.above_block_mean_ns.is_none());
        assert!(d.parts.is_empty());
        assert!(d.note.unwrap().contains("saw 50"));
    }
}
