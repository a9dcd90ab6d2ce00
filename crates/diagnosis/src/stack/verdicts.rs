//! The stack's findings in words, and as the study's verdicts: each with
//! what to change, and every device's figures over the run where the
//! named one moved the most I/O as its evidence.

use super::finding::StackFinding;
use super::judge::{RunFigures, StackJudgement};

impl StackFinding {
    /// The finding in one sentence, and what to do.
    pub fn words(&self) -> (String, String) {
        match self {
            StackFinding::SlowMember { .. } | StackFinding::SlowLayer { .. } => self.slow_words(),
            StackFinding::UnevenSplit { .. }
            | StackFinding::ReadModifyWrite { .. }
            | StackFinding::Misaligned { .. }
            | StackFinding::Degraded { .. } => self.array_words(),
            StackFinding::LayerThread { .. }
            | StackFinding::QueueFull { .. }
            | StackFinding::NotIdentified { .. } => self.held_words(),
        }
    }

    /// A member or layer slower than its peers or than what is under it.
    fn slow_words(&self) -> (String, String) {
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
            _ => Default::default(),
        }
    }

    /// What the array's split, layout or state does to the I/O.
    fn array_words(&self) -> (String, String) {
        match self {
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
                    ssdready_measured::record::fmt_bs(*bs),
                    ssdready_measured::record::fmt_bs(*chunk_bytes),
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
            _ => Default::default(),
        }
    }

    /// A layer that holds the I/O with its CPU or its queue, or nothing
    /// identified.
    fn held_words(&self) -> (String, String) {
        match self {
            StackFinding::LayerThread {
                disk,
                layer,
                workload,
                works,
                thread_cpus,
                cpus,
                busy_cpus,
                ns_per_io,
                runs,
                judged,
                advice,
            } => {
                let how = match busy_cpus {
                    Some(b) if *thread_cpus < super::layer_cpu::SATURATED => format!(
                        "every CPU was busy and its threads ({}) took {cpus:.2} of the {b:.2} busy CPUs",
                        works.join(", ")
                    ),
                    _ => format!(
                        "one of its threads ({}) ran {:.0} % of a CPU; its threads took {cpus:.2} CPUs",
                        works.join(", "),
                        100.0 * thread_cpus
                    ),
                };
                (
                    format!(
                        "the layer {disk} ({layer}) holds the I/O with its CPU: at the stack's best {workload} runs {how}, {:.1} µs per I/O (on {} of the {judged} runs near that peak)",
                        ns_per_io / 1e3,
                        runs.len()
                    ),
                    advice.clone(),
                )
            }
            StackFinding::QueueFull {
                disk,
                layer,
                nr_requests,
                mean_in_flight,
                stack_in_flight,
                runs,
                judged,
            } => (
                format!(
                    "the member {disk} ({layer}) holds the I/O with its queue: it admits {nr_requests} request(s) and held {mean_in_flight:.2} in flight on average while the stack kept {stack_in_flight} I/Os in flight (on {} of the {judged} runs deep enough to fill it); its I/Os wait for a free request before the kernel counts them",
                    runs.len()
                ),
                format!(
                    "raise {disk}'s queue (queue/nr_requests, and the driver's queue depth under it: nvme io_queue_depth, null_blk hw_queue_depth, a SCSI device's queue_depth), or find why it is this small"
                ),
            ),
            StackFinding::NotIdentified { why } => (
                format!("which layer of the stack holds the I/O: not identified ({why})"),
                "nothing to change in the stack on this evidence".into(),
            ),
            _ => Default::default(),
        }
    }

    /// The disk it names, where it names one.
    pub fn disk(&self) -> Option<&str> {
        match self {
            StackFinding::SlowMember { disk, .. }
            | StackFinding::SlowLayer { disk, .. }
            | StackFinding::UnevenSplit { disk, .. }
            | StackFinding::Degraded { disk, .. }
            | StackFinding::LayerThread { disk, .. }
            | StackFinding::QueueFull { disk, .. } => Some(disk),
            _ => None,
        }
    }
}

/// The stack's findings as verdicts: a member or layer named first (it is
/// what holds the I/O), the rest after the others; "not identified" last.
pub fn add_verdicts(verdicts: &mut Vec<ssdready_measured::record::Verdict>, j: &StackJudgement) {
    let mut first = 0;
    for f in &j.findings {
        let (finding, recommendation) = f.words();
        let (rule, figures, runs) = evidence(f, j);
        let (confidence, why) = match f {
            StackFinding::NotIdentified { .. } => ("low", "no member or layer stood out".to_string()),
            StackFinding::Misaligned { .. } => ("high", "from the block size and the chunk, with the members' own counts".into()),
            StackFinding::Degraded { .. } => ("high", "the array's own md/degraded and its members' md/dev-*/state".into()),
            StackFinding::QueueFull { .. } => ("medium", "each member's own counters (time_in_queue over the run: its mean requests in flight) against its queue/nr_requests, on every run deep enough to fill it".into()),
            StackFinding::LayerThread { .. } => ("medium", "the scheduler's run time of each kernel thread (/proc/*/task/*/schedstat) over the runs near the stack's peak; a work-queue worker counted by the queue it ran last".into()),
            _ => ("medium", "the devices' own counters (/sys/block/*/stat) over the runs, each run judged on its own".into()),
        };
        let v = ssdready_measured::record::Verdict {
            rule: rule.into(),
            finding,
            evidence: ssdready_measured::record::Evidence { figures, runs },
            recommendation,
            confidence: confidence.into(),
            confidence_why: why,
            noise_pct: None,
        };
        match f {
            StackFinding::SlowMember { .. }
            | StackFinding::SlowLayer { .. }
            | StackFinding::Degraded { .. }
            | StackFinding::LayerThread { .. }
            | StackFinding::QueueFull { .. } => {
                verdicts.insert(first, v);
                first += 1;
            }
            _ => verdicts.push(v),
        }
    }
    if let Some(c) = &j.ceiling {
        ceiling_verdicts(verdicts, first, c);
    }
}

/// The stack against its members: at small requests (said first when its
/// layers or what its members share hold it), the members all at once, and
/// its bandwidth at large requests beside its IOPS.
fn ceiling_verdicts(
    verdicts: &mut Vec<ssdready_measured::record::Verdict>,
    mut first: usize,
    c: &super::ceiling::StackCeiling,
) {
    let verdict = |rule: &str,
                   (finding, recommendation): (String, String),
                   figures,
                   runs,
                   rounds: usize,
                   why: &str| {
        ssdready_measured::record::Verdict {
            rule: rule.into(),
            finding,
            evidence: ssdready_measured::record::Evidence { figures, runs },
            recommendation,
            confidence: if rounds > 1 { "medium" } else { "low" }.into(),
            confidence_why: format!(
                "{why}, {rounds} round(s); the error is half the rounds' spread"
            ),
            noise_pct: None,
        }
    };
    let member_full = c.fullest.as_ref().is_some_and(|f| f.full);
    let small = verdict(
        match (member_full, c.held_back) {
            (true, _) => "stack-member-ceiling",
            (false, true) => "stack-ceiling",
            (false, false) => "stack-keeps-up",
        },
        c.words(),
        c.figures(),
        c.runs.clone(),
        c.rounds,
        "the stack and each member read alone in turns; each member's rate within the stack from its own counters",
    );
    if c.held_back || member_full {
        verdicts.insert(first, small);
        first += 1;
    } else {
        verdicts.push(small);
    }
    if let Some(t) = &c.together {
        let v = verdict(
            if t.shared {
                "stack-shared-ceiling"
            } else {
                "stack-members-scale"
            },
            t.words(c),
            t.figures(c),
            t.runs.clone(),
            t.rounds,
            "every member read at once, in turns with each alone and the stack",
        );
        if t.shared {
            verdicts.insert(first, v);
        } else {
            verdicts.push(v);
        }
    }
    if let (Some(b), Some(words)) = (&c.bandwidth, c.bandwidth_words()) {
        verdicts.push(verdict(
            if b.held_back {
                "stack-bandwidth-ceiling"
            } else {
                "stack-bandwidth-keeps-up"
            },
            words,
            b.figures(&c.stack),
            b.runs.clone(),
            b.rounds,
            "large sequential reads of the stack and of each member alone, in turns",
        ));
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
        StackFinding::QueueFull { disk, runs, .. } => {
            ("stack-member-queue", per_member(runs, disk), runs.clone())
        }
        StackFinding::LayerThread { disk, runs, .. } => (
            "stack-layer-thread",
            layer_cpu_figures(runs, disk, j),
            runs.clone(),
        ),
        StackFinding::NotIdentified { .. } => ("stack-not-identified", Vec::new(), Vec::new()),
    }
}

/// Every layer's CPU in the named layer's hottest run.
fn layer_cpu_figures(runs: &[String], disk: &str, j: &StackJudgement) -> Vec<(String, String)> {
    let hot = |r: &RunFigures| {
        r.layers_cpu
            .iter()
            .find(|c| c.disk == disk)
            .map_or(0.0, |c| c.busiest_thread_cpus)
    };
    let Some(r) = runs
        .iter()
        .filter_map(|id| j.runs.iter().find(|r| &r.run == id))
        .max_by(|a, b| hot(a).total_cmp(&hot(b)))
    else {
        return Vec::new();
    };
    r.layers_cpu
        .iter()
        .map(|c| {
            let mark = if c.disk == disk { " ←" } else { "" };
            (
                format!("{} in {}", c.disk, r.run),
                format!(
                    "{}: {:.2} CPUs, busiest thread {:.2}, {:.1} µs per I/O{mark}",
                    c.works.join(", "),
                    c.cpus,
                    c.busiest_thread_cpus,
                    c.ns_per_io / 1e3
                ),
            )
        })
        .collect()
}
