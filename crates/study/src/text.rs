//! The study's text: the target and the plan with its ETA, printed before
//! it starts, and the findings, printed at the end (the binary chooses
//! where).

use crate::answer::{describe, fmt_duration};
use crate::model::{StudyDoc, TargetProfile};
use crate::plan::Plan;
use ssdready_core::units::{fmt_count, fmt_ns};
use std::fmt::Write as _;

/// The plan, before the study starts.
pub fn plan(targets: &[TargetProfile], p: &Plan, quick: bool) -> String {
    let mut s = String::new();
    for t in targets {
        let _ = writeln!(s, "target {}", describe(t));
    }
    let eta = p.eta_s(0);
    let _ = writeln!(
        s,
        "plan ({}): up to {} runs of {:.1} s{} over {}, about {} (the queue-depth sweep stops once saturated)",
        if quick { "quick" } else { "full" },
        p.points.len(),
        p.settings.runtime_s,
        if p.settings.ramp_s > 0.0 {
            format!(" after a {:.1} s ramp", p.settings.ramp_s)
        } else {
            String::new()
        },
        ssdready_core::units::fmt_bytes(p.settings.region_bytes as f64),
        fmt_duration(eta)
    );
    for sw in &p.sweeps {
        let _ = writeln!(s, "  {:<12} {:>3} runs  {}", sw.name, sw.points, sw.what);
    }
    for k in &p.skipped {
        let _ = writeln!(s, "  skipped: {}: {}", k.what, k.why);
    }
    s
}

/// The findings, at the end.
pub fn findings(d: &StudyDoc, wall_s: f64) -> String {
    let mut s = String::new();
    let f = &d.figures;
    let t = &d.targets[0];
    let ok = d.runs.iter().filter(|r| r.error.is_none()).count();
    let _ = writeln!(
        s,
        "ssdready study of {} — {} runs in {}{}",
        describe(t),
        ok,
        fmt_duration(wall_s),
        if d.interrupted {
            " (interrupted: figures cover what ran)"
        } else {
            ""
        }
    );
    let l = &f.device_limit;
    let _ = writeln!(s, "{}", crate::answer::device_limit_line(f));
    let _ = writeln!(
        s,
        "\n  QD        IOPS   mean lat    p99 lat  delivered  device alone"
    );
    for c in &f.qd_curve {
        let delivered = l
            .iops
            .map_or("-".to_string(), |i| format!("{:.0} %", 100.0 * c.iops / i));
        let alone = c.device_iops.map_or("-".to_string(), fmt_count);
        let _ = writeln!(
            s,
            "  {:>3} {:>10} {:>10} {:>10} {:>10} {:>13}",
            c.qd,
            fmt_count(c.iops),
            fmt_ns(c.lat_mean_ns),
            fmt_ns(c.lat_p99_ns as f64),
            delivered,
            alone
        );
    }
    if let Some(k) = crate::answer::knee_line(f) {
        let _ = writeln!(s, "  {k}");
    }
    let strategies = crate::answer::strategies_lines(f);
    if !strategies.is_empty() {
        let _ = writeln!(s, "\n{}", strategies.join("\n"));
    }
    let _ = writeln!(s, "\nfindings:");
    for (i, v) in d.verdicts.iter().enumerate() {
        let _ = writeln!(
            s,
            "{:>2}. {} [confidence {}: {}]",
            i + 1,
            v.finding,
            v.confidence,
            v.confidence_why
        );
        let _ = writeln!(s, "    → {}", v.recommendation);
    }
    if !d.skipped.is_empty() {
        let _ = writeln!(s, "\nnot studied:");
        for k in &d.skipped {
            let _ = writeln!(s, "  {}: {}", k.what, k.why);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{TargetKind, Verdict};

    #[test]
    fn the_findings_number_the_verdicts_and_list_what_was_not_studied() {
        let mut d = StudyDoc {
            targets: vec![TargetProfile {
                spec: "emu:".into(),
                kind: TargetKind::Emulator,
                ..Default::default()
            }],
            interrupted: true,
            ..Default::default()
        };
        d.verdicts.push(Verdict {
            finding: "the platform delivers half".into(),
            recommendation: "poll".into(),
            confidence: "high".into(),
            confidence_why: "repeats agree".into(),
            ..Default::default()
        });
        d.skipped.push(crate::model::Skip {
            what: "scheduler".into(),
            why: "no block device".into(),
        });
        let s = findings(&d, 61.0);
        assert!(
            s.contains("0 runs in") && s.contains("(interrupted: figures cover what ran)"),
            "{s}"
        );
        assert!(
            s.contains(
                " 1. the platform delivers half [confidence high: repeats agree]\n    → poll"
            ),
            "{s}"
        );
        assert!(
            s.contains("not studied:\n  scheduler: no block device"),
            "{s}"
        );
    }
}
