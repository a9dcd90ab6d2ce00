//! The stack's findings in words, and as the study's verdicts: each with
//! what to change, and every device's figures over the run where the
//! named one moved the most I/O as its evidence.

use super::judge::{RunFigures, StackFinding, StackJudgement};

impl StackFinding {
    /// The finding in one sentence, and what to do.
    pub fn words(&self) -> (String, String) {
        match self {
            StackFinding::SlowMember {
                disk,
                layer,
                direction,
                mean_ms_per_io,
                peers_median_ms_per_io,
                busy_pct,
                peers_median_busy_pct,
                ios,
                runs,
                judged,
            } => (
                match direction {
                    None => format!(
                        "the slow member of the stack is {disk} ({layer}): {mean_ms_per_io:.3} ms per I/O against its peers' median {peers_median_ms_per_io:.3} ms, busy {busy_pct:.0} % against {peers_median_busy_pct:.0} %, over {ios} I/Os (held on {} of the {judged} runs that judged it)",
                        runs.len()
                    ),
                    Some(d) => format!(
                        "the slow member of the stack for {d} is {disk} ({layer}): {mean_ms_per_io:.3} ms per I/O of its {d} against its peers' median {peers_median_ms_per_io:.3} ms, over {ios} {d} (held on {} of the {judged} runs that judged its {d}; on all its I/O it was not slow on most runs)",
                        runs.len()
                    ),
                },
                format!("look at {disk} and what is under it: every stripe waits on its slowest member"),
            ),
            StackFinding::SlowLayer {
                disk,
                layer,
                direction,
                over,
                mean_ms_per_io,
                under_mean_ms_per_io,
                ios,
                runs,
                judged,
            } => (
                {
                    let (what, io, n) = match direction {
                        None => ("the I/O".to_string(), "I/O".to_string(), "I/Os"),
                        Some(d) => (format!("the {d}"), format!("I/O of its {d}"), d.as_str()),
                    };
                    format!(
                        "the layer {disk} ({layer}) holds {what}: {mean_ms_per_io:.3} ms per {io} against {under_mean_ms_per_io:.3} ms on {over} under it, over {ios} {n} (held on {} of the {judged} runs that judged it)",
                        runs.len()
                    )
                },
                format!("the time is spent in {disk} itself, not in {over}: check its target's settings"),
            ),
            StackFinding::UnevenSplit {
                disk,
                share_pct,
                even_pct,
                ios,
                runs,
                judged,
            } => (
                format!(
                    "the array's I/O is split unevenly: {disk} took {share_pct:.0} % of the members' I/Os ({ios}) against an even {even_pct:.0} % (on {} of {judged} runs)",
                    runs.len()
                ),
                "check the members' sizes and states, and the layout (a degraded or resyncing array, RAID 1 reading from one side)".into(),
            ),
            StackFinding::ReadModifyWrite {
                level,
                member_reads,
                member_writes,
                runs,
            } => (
                format!(
                    "{level} writes read the members first (read-modify-write): {member_reads} member reads with {member_writes} member writes during write runs ({})",
                    runs.join(", ")
                ),
                "write whole stripes (block size a multiple of chunk × data disks), or use RAID 10 for small writes".into(),
            ),
            StackFinding::Misaligned {
                bs,
                chunk_bytes,
                array_ios,
                member_ios,
                runs,
            } => (
                format!(
                    "I/O of {} is misaligned with the chunk of {}: the array's {array_ios} I/Os reached its members as {member_ios} ({})",
                    crate::model::fmt_bs(*bs),
                    crate::model::fmt_bs(*chunk_bytes),
                    runs.join(", ")
                ),
                "use a block size that divides the chunk (or a multiple of it), and aligned offsets".into(),
            ),
            StackFinding::Degraded {
                disk,
                level,
                missing,
                faulty,
            } => (
                format!(
                    "{disk} ({level}) is degraded: {missing} of its disks missing{}; every figure of it was measured so (a missing disk's blocks are rebuilt from the others on each read)",
                    if faulty.is_empty() {
                        String::new()
                    } else {
                        format!(", faulty: {}", faulty.join(", "))
                    }
                ),
                format!("replace the missing or faulty member and let {disk} resync before judging its speed"),
            ),
            StackFinding::NotIdentified { why } => (
                format!("which layer of the stack holds the I/O: not identified ({why})"),
                "nothing to change in the stack on this evidence".into(),
            ),
        }
    }

    /// The disk it names, where it names one.
    pub fn disk(&self) -> Option<&str> {
        match self {
            StackFinding::SlowMember { disk, .. }
            | StackFinding::SlowLayer { disk, .. }
            | StackFinding::UnevenSplit { disk, .. }
            | StackFinding::Degraded { disk, .. } => Some(disk),
            _ => None,
        }
    }
}

/// The stack's findings as verdicts: a member or layer named first (it is
/// what holds the I/O), the rest after the others; "not identified" last.
pub fn add_verdicts(verdicts: &mut Vec<crate::model::Verdict>, j: &StackJudgement) {
    let mut first = 0;
    for f in &j.findings {
        let (finding, recommendation) = f.words();
        let (rule, figures, runs) = evidence(f, j);
        let (confidence, why) = match f {
            StackFinding::NotIdentified { .. } => ("low", "no member or layer stood out".to_string()),
            StackFinding::Misaligned { .. } => ("high", "from the block size and the chunk, with the members' own counts".into()),
            StackFinding::Degraded { .. } => ("high", "the array's own md/degraded and its members' md/dev-*/state".into()),
            _ => ("medium", "the devices' own counters (/sys/block/*/stat) over the runs, each run judged on its own".into()),
        };
        let v = crate::model::Verdict {
            rule: rule.into(),
            finding,
            evidence: crate::model::Evidence { figures, runs },
            recommendation,
            confidence: confidence.into(),
            confidence_why: why,
            noise_pct: None,
        };
        match f {
            StackFinding::SlowMember { .. }
            | StackFinding::SlowLayer { .. }
            | StackFinding::Degraded { .. } => {
                verdicts.insert(first, v);
                first += 1;
            }
            _ => verdicts.push(v),
        }
    }
    if let Some(c) = &j.ceiling {
        let (finding, recommendation) = c.words();
        let v = crate::model::Verdict {
            rule: if c.held_back {
                "stack-ceiling"
            } else {
                "stack-keeps-up"
            }
            .into(),
            finding,
            evidence: crate::model::Evidence {
                figures: c.figures(),
                runs: c.runs.clone(),
            },
            recommendation,
            confidence: if c.rounds > 1 { "medium" } else { "low" }.into(),
            confidence_why: format!(
                "the stack and each member read alone in turns, {} round(s); the error is half the rounds' spread",
                c.rounds
            ),
            noise_pct: None,
        };
        match c.held_back {
            true => verdicts.insert(first, v),
            false => verdicts.push(v),
        }
    }
}

/// A finding's rule name, evidence figures and runs.
fn evidence(
    f: &StackFinding,
    j: &StackJudgement,
) -> (&'static str, Vec<(String, String)>, Vec<String>) {
    let per_member = |runs: &[String], disk: &str| -> Vec<(String, String)> {
        // The run where the named disk moved the most I/O (the first run
        // for a finding on the array).
        let ios = |r: &RunFigures| {
            r.members
                .iter()
                .find(|m| m.disk == disk)
                .map_or(0, |m| m.ios)
        };
        let Some(r) = runs
            .iter()
            .filter_map(|id| j.runs.iter().find(|r| &r.run == id))
            .rev()
            .max_by_key(|r| ios(r))
        else {
            return Vec::new();
        };
        r.members
            .iter()
            .map(|m| {
                let mark = if m.disk == disk { " ←" } else { "" };
                (
                    format!("{} in {}", m.disk, r.run),
                    format!(
                        "{} I/Os, {:.0} IOPS, {:.1} MB/s, busy {:.0} %, {} per I/O, queue {:.1}{mark}",
                        m.ios,
                        m.iops,
                        m.bytes_per_s / 1e6,
                        m.busy_pct,
                        m.mean_ms_per_io.map_or("-".into(), |t| format!("{t:.3} ms")),
                        m.mean_queue
                    ),
                )
            })
            .collect()
    };
    match f {
        StackFinding::SlowMember { disk, runs, .. } => {
            ("stack-slow-member", per_member(runs, disk), runs.clone())
        }
        StackFinding::SlowLayer { disk, runs, .. } => {
            ("stack-slow-layer", per_member(runs, disk), runs.clone())
        }
        StackFinding::UnevenSplit { disk, runs, .. } => {
            ("stack-uneven-split", per_member(runs, disk), runs.clone())
        }
        StackFinding::ReadModifyWrite { runs, .. } => (
            "stack-read-modify-write",
            per_member(runs, ""),
            runs.clone(),
        ),
        StackFinding::Misaligned { runs, .. } => {
            ("stack-misaligned", per_member(runs, ""), runs.clone())
        }
        StackFinding::Degraded { .. } => ("stack-degraded", Vec::new(), Vec::new()),
        StackFinding::NotIdentified { .. } => ("stack-not-identified", Vec::new(), Vec::new()),
    }
}
