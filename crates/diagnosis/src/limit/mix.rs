//! A job that reads and writes from the same threads does both in the mix
//! it sets: fio draws each I/O's direction by `rwmixread`, so while one
//! direction waits (a write throttle, say) the other waits with it, at the
//! mix's ratio. Its directions are judged apart ([`super::point::directions`]),
//! and one may show no cause of its own where the other's is plain.
//!
//! [`through_the_mix`] gives such a direction the other's cause, where
//! the runs show the mix held: in every run where the job did both, its
//! reads ran at the same multiple of its writes, within [`STEADY_PCT`] of
//! their median. That ratio is the evidence. A throttle on the other
//! direction (the one limit of a direction alone) is taken even over a
//! cause of this direction's own, which is then said as also held: the
//! rate it would set is not the rate the mix let it reach. The page
//! cache's rate is a direction's own and passes to neither. Directions of
//! a file's several jobs are paired only within a job (`[name] reads`
//! with `[name] writes`).

use super::{AlsoHeld, Cause, Saturation};
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

/// One direction of a job: its verdict and its runs (each run's rate
/// that direction's, in the order of the other direction's).
pub type Side<'a> = (&'a Saturation, &'a [RunRecord]);

/// `mine`'s verdict where it is held by `theirs`'s cause through the
/// job's mix (see the module's documentation): a direction with no cause,
/// or one weaker than a throttle on the other, where the mix held; None
/// where it keeps its own. `reads`: whether `mine` is the job's reads.
pub fn through_the_mix(mine: Side, theirs: Side, reads: bool) -> Option<Saturation> {
    let (own, other) = (mine.0.limit, theirs.0.limit);
    // The page cache's rate is its direction's own, not a limit the mix
    // passes on: a cached direction waits on the other.
    let takes = match own {
        Cause::IoThrottle | Cause::PageCache => false,
        Cause::NotIdentified => !matches!(other, Cause::NotIdentified | Cause::PageCache),
        _ => other == Cause::IoThrottle,
    };
    let (r, w, dirs) = match reads {
        true => (mine.1, theirs.1, ("reads", "writes")),
        false => (theirs.1, mine.1, ("writes", "reads")),
    };
    let line = steady_mix(r, w, dirs).filter(|_| takes)?;
    Some(taken(theirs.0, mine.0, line, dirs))
}

/// `mine` (the direction `dirs.0`) held by `theirs`'s cause through the
/// mix: its part and setting, `line` then their evidence, what `mine`
/// ruled out, and `mine`'s own cause as also held.
fn taken(theirs: &Saturation, mine: &Saturation, line: String, dirs: (&str, &str)) -> Saturation {
    let mut s = theirs.clone();
    s.part = format!("{}; and so its {}, through the job's mix", s.part, dirs.0);
    let evidence = theirs
        .evidence
        .iter()
        .map(|e| format!("its {}: {e}", dirs.1));
    s.evidence = std::iter::once(line).chain(evidence).collect();
    s.ruled_out = mine.ruled_out.clone();
    s.ruled_out.retain(|o| o.cause != s.limit);
    if mine.limit != Cause::NotIdentified {
        let also = AlsoHeld {
            cause: mine.limit,
            part: format!("the {}' own verdict: {}", dirs.0, mine.part),
            cost_pct: None,
            repeats: mine
                .repeats
                .iter()
                .filter(|r| r.limit == mine.limit)
                .count(),
        };
        s.also_held.retain(|a| a.cause != mine.limit);
        s.also_held.insert(0, also);
    }
    s
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
    use super::super::point::{held, Held};
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

    /// The reads' verdict of the mix at `rates`, its writes held by the
    /// throttle.
    fn reads_of(rates: &[(f64, f64)]) -> Saturation {
        let h = judged(&mixed(rates));
        let direction = |d: &str| h.iter().find(|x| x.direction == d).expect(d);
        assert_eq!(direction("writes").saturation.limit, Cause::IoThrottle);
        direction("reads").saturation.clone()
    }

    #[test]
    fn reads_in_a_steady_mix_with_throttled_writes_are_held_by_the_throttle_too() {
        let reads = reads_of(&[
            (45_200.0, 15_050.0),
            (45_100.0, 15_000.0),
            (44_900.0, 14_980.0),
        ]);
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
        let reads = reads_of(&[
            (45_000.0, 15_000.0),
            (60_000.0, 15_000.0),
            (30_000.0, 15_000.0),
        ]);
        assert_ne!(reads.limit, Cause::IoThrottle, "{reads:?}");
    }

    /// The reads' verdict where they were held by `reads` and the writes
    /// by `writes`, on steady runs: taken through the mix, or None.
    fn taken_for(reads: Cause, writes: Cause) -> Option<Saturation> {
        let runs = mixed(&[(45_200.0, 15_050.0), (45_100.0, 15_000.0)]);
        let each = super::super::point::directions(&runs);
        let judged = |limit: Cause| Saturation {
            limit,
            part: format!("{limit} as judged"),
            also_held: vec![AlsoHeld {
                cause: Cause::Completions,
                ..Default::default()
            }],
            ..Default::default()
        };
        let (r, w) = (judged(reads), judged(writes));
        through_the_mix((&r, &each[0].1), (&w, &each[1].1), true)
    }

    #[test]
    fn a_throttle_on_the_writes_outweighs_a_cause_the_reads_show_alone() {
        let reads = taken_for(Cause::Completions, Cause::IoThrottle).expect("taken");
        assert_eq!(reads.limit, Cause::IoThrottle);
        assert_eq!(reads.also_held[0].cause, Cause::Completions);
        assert_eq!(reads.also_held.len(), 1, "{:?}", reads.also_held);
        assert!(reads.also_held[0]
            .part
            .starts_with("the reads' own verdict"));
        // Causes both directions share are left as judged.
        assert!(taken_for(Cause::OneCore, Cause::DeviceQueue).is_none());
        // Writes the page cache took at its own rate hold no read back.
        assert!(taken_for(Cause::NotIdentified, Cause::PageCache).is_none());
    }
}
