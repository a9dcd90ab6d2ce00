//! The stack's ceiling against its members measured alone: from the
//! `ceiling` sweep's runs (each physical member of the stack read alone,
//! in turns with the stack itself, 4 KiB random reads at one depth), the
//! stack's IOPS, the sum of its members' IOPS alone, and their ratio with
//! the rounds' spread as its error. A stack delivering less than
//! [`HELD_BACK_PCT`] of its members beyond that error is held back by its
//! own layers — the RAID controller's ceiling of Samsung's "System-wide
//! issues for efficient use of E-SSD", in software.

use super::Stack;
use crate::model::RunRecord;
use serde::{Deserialize, Serialize};

/// Below this share of its members' sum (beyond the rounds' spread) the
/// stack is said to be held back by its own layers.
pub const HELD_BACK_PCT: f64 = 70.0;
/// The sweep whose runs this reads.
pub const SWEEP: &str = "ceiling";

/// The stack against its members alone (`figures.stack.ceiling`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StackCeiling {
    /// The stack's top device (`md0`).
    pub stack: String,
    /// What it is, short (`md raid0`).
    pub layer: String,
    pub bs: u64,
    pub qd: u32,
    /// The stack's IOPS, mean over the rounds.
    pub stack_iops: f64,
    /// Each physical member's IOPS read alone, mean over the rounds.
    pub members: Vec<MemberAlone>,
    /// The members' IOPS summed in each round, mean over the rounds.
    pub members_sum_iops: f64,
    /// The stack's IOPS over its members' sum, percent: mean of the
    /// rounds' ratios.
    pub ratio_pct: f64,
    /// Half the spread of the rounds' ratios, percent (0 with one round).
    pub ratio_err_pct: f64,
    /// Complete rounds (the stack and every member measured).
    pub rounds: usize,
    /// Whether the ratio is below [`HELD_BACK_PCT`] beyond its error.
    pub held_back: bool,
    pub runs: Vec<String>,
}

/// One physical member read alone.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemberAlone {
    pub disk: String,
    pub iops: f64,
}

/// Whether `r` read a physical member of `stack` alone: its disk.
pub fn member_alone<'a>(stack: &'a Stack, r: &RunRecord) -> Option<&'a str> {
    if r.sweep != SWEEP {
        return None;
    }
    let [path] = r.workload.targets.as_slice() else {
        return None;
    };
    // The kernel's name has `!` where the node's path has `/` (`cciss!c0d0`).
    let disk = path.strip_prefix("/dev/")?.replace('/', "!");
    stack
        .physical
        .iter()
        .find(|p| **p == disk)
        .map(String::as_str)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The ceiling from the runs (None without a complete round).
pub fn ceiling(stack: &Stack, runs: &[RunRecord]) -> Option<StackCeiling> {
    let mine: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.sweep == SWEEP && r.error.is_none() && r.summary.iops > 0.0)
        .collect();
    let first = mine.first()?;
    let mut rounds: Vec<u32> = mine.iter().map(|r| r.repeat).collect();
    rounds.sort_unstable();
    rounds.dedup();
    // Per complete round: the stack's IOPS and each member's.
    let mut per_round: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut used = Vec::new();
    for round in rounds {
        let of = |m: Option<&str>| {
            mine.iter()
                .find(|r| r.repeat == round && member_alone(stack, r) == m)
        };
        let Some(s) = of(None) else { continue };
        let members: Option<Vec<&&RunRecord>> =
            stack.physical.iter().map(|d| of(Some(d))).collect();
        let Some(members) = members else { continue };
        used.push(s.id.clone());
        used.extend(members.iter().map(|r| r.id.clone()));
        per_round.push((
            s.summary.iops,
            members.iter().map(|r| r.summary.iops).collect(),
        ));
    }
    if per_round.is_empty() {
        return None;
    }
    let ratios: Vec<f64> = per_round
        .iter()
        .map(|(s, m)| 100.0 * s / m.iter().sum::<f64>().max(f64::MIN_POSITIVE))
        .collect();
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    let ratio_pct = mean(&ratios);
    let ratio_err_pct = (hi - lo) / 2.0;
    let members = stack
        .physical
        .iter()
        .enumerate()
        .map(|(i, d)| MemberAlone {
            disk: d.clone(),
            iops: mean(&per_round.iter().map(|(_, m)| m[i]).collect::<Vec<_>>()),
        })
        .collect();
    Some(StackCeiling {
        stack: stack.target.clone(),
        layer: stack
            .layer(&stack.target)
            .map_or_else(|| stack.target.clone(), super::judge::short_kind),
        bs: first.workload.bs,
        qd: first.workload.qd,
        stack_iops: mean(&per_round.iter().map(|x| x.0).collect::<Vec<_>>()),
        members,
        members_sum_iops: mean(
            &per_round
                .iter()
                .map(|x| x.1.iter().sum())
                .collect::<Vec<f64>>(),
        ),
        ratio_pct,
        ratio_err_pct,
        rounds: per_round.len(),
        held_back: ratio_pct + ratio_err_pct < HELD_BACK_PCT,
        runs: used,
    })
}

/// A block size in words (`4 KiB`).
fn bytes(bs: u64) -> String {
    match bs {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1024 && b % 1024 == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} B"),
    }
}

/// IOPS in thousands, as the terminal prints them (`9.8K`).
fn k(iops: f64) -> String {
    if iops >= 1000.0 {
        format!("{:.1}K", iops / 1000.0)
    } else {
        format!("{iops:.0}")
    }
}

impl StackCeiling {
    /// The finding in one sentence, and what to do.
    pub fn words(&self) -> (String, String) {
        let what = format!(
            "{} ({} over {} members) delivers {} IOPS of {} random reads at QD {}, {:.0} % (± {:.0} %) of its members' {} measured alone over {} round(s)",
            self.stack,
            self.layer,
            self.members.len(),
            k(self.stack_iops),
            bytes(self.bs),
            self.qd,
            self.ratio_pct,
            self.ratio_err_pct,
            k(self.members_sum_iops),
            self.rounds
        );
        if self.held_back {
            (
                format!("{what}: the stack's own layers hold it back"),
                format!(
                    "look at {}'s own work per I/O (its threads, locks, a crypt or delay target under it) and its settings: its members could give more",
                    self.stack
                ),
            )
        } else {
            (
                format!("{what}: the stack keeps up with its members"),
                "nothing to change in the stack's layers on this evidence".into(),
            )
        }
    }

    /// The evidence: each figure, as printed.
    pub fn figures(&self) -> Vec<(String, String)> {
        let mut f = vec![(
            format!("{} (the stack)", self.stack),
            format!("{:.0} IOPS", self.stack_iops),
        )];
        for m in &self.members {
            f.push((format!("{} alone", m.disk), format!("{:.0} IOPS", m.iops)));
        }
        f.push((
            "members' sum".into(),
            format!("{:.0} IOPS", self.members_sum_iops),
        ));
        f.push((
            "stack / members".into(),
            format!("{:.1} % ± {:.1} %", self.ratio_pct, self.ratio_err_pct),
        ));
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{RunRecord, Workload};
    use crate::stack::{LayerKind, StackLayer};

    /// md0 (RAID 0) over nullb0 and nullb1.
    fn md0() -> Stack {
        let phys = |d: &str| StackLayer {
            disk: d.into(),
            depth: 1,
            ..Default::default()
        };
        Stack {
            target: "md0".into(),
            layers: vec![
                StackLayer {
                    disk: "md0".into(),
                    kind: LayerKind::Md {
                        level: Some("raid0".into()),
                        chunk_bytes: Some(65536),
                        raid_disks: Some(2),
                        degraded: None,
                        members: Vec::new(),
                    },
                    under: vec!["nullb0".into(), "nullb1".into()],
                    ..Default::default()
                },
                phys("nullb0"),
                phys("nullb1"),
            ],
            physical: vec!["nullb0".into(), "nullb1".into()],
            ..Default::default()
        }
    }

    /// A `ceiling` run of `path` in `round` at QD 32.
    fn run(path: &str, round: u32, iops: f64) -> RunRecord {
        let mut r = RunRecord {
            id: format!("ceiling-{}#{round}", path.trim_start_matches("/dev/")),
            sweep: SWEEP.into(),
            repeat: round,
            workload: Workload {
                rw: "randread".into(),
                bs: 4096,
                qd: 32,
                targets: vec![path.into()],
                ..Default::default()
            },
            ..Default::default()
        };
        r.summary.iops = iops;
        r
    }

    /// Two rounds: the stack's IOPS and each member's alone.
    fn rounds(r: &[(f64, f64, f64)]) -> Vec<RunRecord> {
        r.iter()
            .zip(1..)
            .flat_map(|(&(s, a, b), n)| {
                [
                    run("/dev/md0", n, s),
                    run("/dev/nullb0", n, a),
                    run("/dev/nullb1", n, b),
                ]
            })
            .collect()
    }

    #[test]
    fn an_array_at_half_its_members_sum_is_held_back_by_its_own_layer() {
        let runs = rounds(&[(9700.0, 10100.0, 10300.0), (9900.0, 10200.0, 10200.0)]);
        let c = ceiling(&md0(), &runs).expect("a ceiling");
        assert_eq!((c.rounds, c.qd, c.bs), (2, 32, 4096));
        assert!((c.stack_iops - 9800.0).abs() < 1e-9);
        assert!((c.members_sum_iops - 20400.0).abs() < 1e-9);
        assert!((c.ratio_pct - 48.04).abs() < 0.01, "{}", c.ratio_pct);
        assert!((c.ratio_err_pct - 0.49).abs() < 0.01, "{}", c.ratio_err_pct);
        assert!(c.held_back);
        assert_eq!(c.members[1].disk, "nullb1");
        assert!((c.members[1].iops - 10250.0).abs() < 1e-9);
        assert_eq!(c.runs.len(), 6);
        let (words, _) = c.words();
        assert!(
            words.starts_with("md0 (md raid0 over 2 members) delivers 9.8K IOPS of 4 KiB random reads at QD 32, 48 % (± 0 %) of its members' 20.4K measured alone")
                && words.contains("hold it back"),
            "{words}"
        );
        // Judged with the rest of the stack: said, and said first, with no
        // "not identified" beside it.
        let j = crate::stack::judge(&md0(), &runs).unwrap();
        assert_eq!(j.ceiling.as_ref(), Some(&c));
        assert!(j.findings.is_empty(), "{:?}", j.findings);
        let mut v = Vec::new();
        crate::stack::add_verdicts(&mut v, &j);
        assert_eq!(v[0].rule, "stack-ceiling");
        assert!(v[0].evidence.figures.iter().any(|f| f.0 == "nullb0 alone"));
    }

    #[test]
    fn a_stack_near_its_members_or_within_its_error_of_the_line_keeps_up() {
        let near = rounds(&[(19000.0, 10000.0, 10000.0), (17000.0, 10200.0, 10200.0)]);
        let c = ceiling(&md0(), &near).unwrap();
        assert!(!c.held_back && c.ratio_pct > 85.0);
        assert!(c.words().0.contains("keeps up"), "{}", c.words().0);
        // 60 % and 72 %: 66 % ± 6 % reaches the line.
        let spread = rounds(&[(12000.0, 10000.0, 10000.0), (14400.0, 10000.0, 10000.0)]);
        let c = ceiling(&md0(), &spread).unwrap();
        assert!((c.ratio_pct - 66.0).abs() < 1e-9 && (c.ratio_err_pct - 6.0).abs() < 1e-9);
        assert!(!c.held_back);
        let mut j = crate::stack::judge(&md0(), &spread).unwrap();
        let mut v = Vec::new();
        crate::stack::add_verdicts(&mut v, &j);
        assert!(v.iter().any(|v| v.rule == "stack-keeps-up"));
        j.ceiling = None;
        assert!(!serde_json::to_string(&j).unwrap().contains("ceiling"));
    }

    #[test]
    fn a_round_missing_a_member_counts_for_nothing_and_other_sweeps_are_not_read() {
        let mut runs = rounds(&[(9800.0, 10000.0, 10000.0), (5000.0, 10000.0, 10000.0)]);
        runs[5].error = Some("failed".into());
        let c = ceiling(&md0(), &runs).unwrap();
        assert_eq!(c.rounds, 1);
        assert!((c.stack_iops - 9800.0).abs() < 1e-9);
        // A qd sweep run of the stack, or a member run of no round: none.
        let mut other = run("/dev/md0", 1, 9000.0);
        other.sweep = "qd".into();
        assert_eq!(ceiling(&md0(), &[other, run("/dev/nullb0", 1, 1.0)]), None);
        assert_eq!(member_alone(&md0(), &run("/dev/nullb9", 1, 1.0)), None);
        assert_eq!(
            member_alone(&md0(), &run("/dev/nullb1", 1, 1.0)),
            Some("nullb1")
        );
    }
}
