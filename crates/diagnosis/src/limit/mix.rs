//! A job that reads and writes from the same threads does both in the mix
//! it sets: fio draws each I/O's direction by `rwmixread`, so while one
//! direction waits (a write throttle, say) the other waits with it, at the
//! mix's ratio. Its directions are judged apart ([`super::point::directions`]),
//! and one may show no cause of its own where the other's is plain.
//!
//! [`through_the_mix`] gives such a direction the other's cause, where
//! the runs show the mix held: in every run where the job did both, its
//! reads ran at the same multiple of its writes, within [`STEADY_PCT`] of
//! their median. That ratio is the evidence. Directions of a file's
//! several jobs are paired only within a job (`[name] reads` with
//! `[name] writes`).

use super::point::Held;
use super::Cause;
use ssdready_core::units::fmt_count;
use ssdready_measured::record::RunRecord;

/// How far, percent, a run's ratio of reads to writes may stray from their
/// median for the mix to count as held.
pub const STEADY_PCT: f64 = 10.0;

/// The ratio of reads to writes in each run where both ran, in the runs'
/// order: `reads[i]` and `writes[i]` are one run's two directions.
fn ratios(reads: &[RunRecord], writes: &[RunRecord]) -> Vec<f64> {
    let both = reads
        .iter()
        .zip(writes)
        .filter(|(r, w)| r.error.is_none() && r.summary.iops > 0.0 && w.summary.iops > 0.0);
    both.map(|(r, w)| r.summary.iops / w.summary.iops).collect()
}

/// Where direction `from` of a job holds a cause and its other direction,
/// `to`, does not, `to` takes it (see the module's documentation). `each`
/// are the directions' runs, in the order of `held`.
pub fn through_the_mix(held: &mut [Held], each: &[(String, Vec<RunRecord>)]) {
    let label = |h: &[Held], i: usize| h[i].direction.clone();
    for to in 0..held.len() {
        if held[to].saturation.limit != Cause::NotIdentified {
            continue;
        }
        let mine = label(held, to);
        let (base, reads) = match (mine.strip_suffix("reads"), mine.strip_suffix("writes")) {
            (Some(b), _) => (b.to_string(), true),
            (_, Some(b)) => (b.to_string(), false),
            _ => continue,
        };
        let other = format!("{base}{}", if reads { "writes" } else { "reads" });
        let Some(from) = (0..held.len()).find(|&i| label(held, i) == other) else {
            continue;
        };
        let from_held = &held[from].saturation;
        if matches!(from_held.limit, Cause::NotIdentified) {
            continue;
        }
        let (r, w) = match reads {
            true => (&each[to].1, &each[from].1),
            false => (&each[from].1, &each[to].1),
        };
        let dirs = match reads {
            true => ("reads", "writes"),
            false => ("writes", "reads"),
        };
        let Some(line) = steady_mix(r, w, dirs) else {
            continue;
        };
        let mut s = from_held.clone();
        s.part = format!("{}; and so its {}, through the job's mix", s.part, dirs.0);
        let theirs = s.evidence.iter().map(|e| format!("its {}: {e}", dirs.1));
        s.evidence = std::iter::once(line).chain(theirs).collect();
        s.ruled_out = held[to].saturation.ruled_out.clone();
        s.ruled_out.retain(|o| o.cause != s.limit);
        let cost = held[from].cost.clone();
        (held[to].saturation, held[to].cost) = (s, cost);
    }
}

/// The evidence that the job's mix held in its runs, in words; None where
/// fewer than two runs did both or one strayed beyond [`STEADY_PCT`].
/// `dirs` are the direction judged and the one whose cause it takes.
fn steady_mix(
    reads: &[RunRecord],
    writes: &[RunRecord],
    (mine, other): (&str, &str),
) -> Option<String> {
    let mut each = ratios(reads, writes);
    if each.len() < 2 {
        return None;
    }
    each.sort_by(f64::total_cmp);
    let median = each[each.len() / 2];
    let (lo, hi) = (each[0], each[each.len() - 1]);
    if (hi / median - 1.0) * 100.0 > STEADY_PCT || (1.0 - lo / median) * 100.0 > STEADY_PCT {
        return None;
    }
    let first = reads
        .iter()
        .zip(writes)
        .find(|(r, w)| r.summary.iops > 0.0 && w.summary.iops > 0.0)?;
    Some(format!(
        "the job reads and writes from the same threads: its reads ran at {lo:.2}–{hi:.2}× its writes in each of {} runs ({} against {} IOPS in {}), the mix it sets, so what holds its {other} holds its {mine} too",
        each.len(),
        fmt_count(first.0.summary.iops),
        fmt_count(first.1.summary.iops),
        first.0.id,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::caps::{Caps, IoCap, IoKind};
    use super::super::point::held;
    use super::super::tests::{machine, run, setting, target};
    use super::*;
    use crate::levers::{Context, Point};
    use ssdready_measured::record::TargetKind;

    /// A 75/25 random mix's repeats at QD 64, each at `(reads, writes)`
    /// IOPS: its thread a quarter busy, the device holding 12.
    fn mixed(rates: &[(f64, f64)]) -> Vec<RunRecord> {
        let each = |(i, &(r, w)): (usize, &(f64, f64))| {
            let id = match i {
                0 => "qd-64".to_string(),
                n => format!("qd-64#{}", n + 1),
            };
            let mut x = run(&id, 64, r + w, 24.0, 23.0, 11.8);
            x.repeat = i as u32 + 1;
            x.workload.rw = "randrw".into();
            (x.summary.read_iops, x.summary.write_iops) = (r, w);
            x
        };
        rates.iter().enumerate().map(each).collect()
    }

    /// What holds the mix under a 15,000-IOPS write throttle.
    fn judged(runs: &[RunRecord]) -> Vec<Held> {
        let throttle = Caps {
            io: vec![IoCap {
                kind: IoKind::WriteIops,
                value: 15_000.0,
                device: "loop3".into(),
                setting: setting("blkio.throttle.write_iops_device", "7:3 15000"),
            }],
            ..Default::default()
        };
        let p = Point {
            qd: 64,
            ..Default::default()
        };
        let levers = crate::levers::shipped();
        let t = target(TargetKind::RamDevice);
        let on = (&machine(), &throttle);
        held(&t, (runs, &[]), on, (&levers, &Context::default(), &p))
    }

    fn direction<'a>(h: &'a [Held], d: &str) -> &'a Held {
        h.iter().find(|x| x.direction == d).expect(d)
    }

    #[test]
    fn reads_in_a_steady_mix_with_throttled_writes_are_held_by_the_throttle_too() {
        let h = judged(&mixed(&[
            (45_200.0, 15_050.0),
            (45_100.0, 15_000.0),
            (44_900.0, 14_980.0),
        ]));
        assert_eq!(direction(&h, "writes").saturation.limit, Cause::IoThrottle);
        let reads = &direction(&h, "reads").saturation;
        assert_eq!(reads.limit, Cause::IoThrottle, "{reads:?}");
        assert!(
            reads.evidence[0].contains("its reads ran at 3.00–3.01× its writes in each of 3 runs"),
            "{:?}",
            reads.evidence
        );
        assert!(reads
            .part
            .ends_with("and so its reads, through the job's mix"));
        assert!(!reads.ruled_out.iter().any(|o| o.cause == Cause::IoThrottle));
    }

    #[test]
    fn reads_that_did_not_keep_to_the_mix_keep_their_own_verdict() {
        let h = judged(&mixed(&[
            (45_000.0, 15_000.0),
            (60_000.0, 15_000.0),
            (30_000.0, 15_000.0),
        ]));
        assert_eq!(direction(&h, "writes").saturation.limit, Cause::IoThrottle);
        let reads = &direction(&h, "reads").saturation;
        assert_ne!(reads.limit, Cause::IoThrottle, "{reads:?}");
    }
}
