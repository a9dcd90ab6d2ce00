//! The study's findings as printed at the end (the binary chooses where):
//! the target, the queue-depth table, the verdicts and what was skipped.

use crate::answer::{describe, fmt_duration};
use crate::figures::Figures;
use crate::model::StudyDoc;
use ssdready_core::units::{fmt_count, fmt_ns};
use ssdready_measured::curve::CurvePoint;
use std::fmt::Write as _;

/// The findings, at the end.
pub fn findings(d: &StudyDoc, wall_s: f64) -> String {
    let mut s = String::new();
    let f = &d.figures;
    let ok = d.runs.iter().filter(|r| r.error.is_none()).count();
    let Some(t) = d.targets.first() else {
        return format!("ssdready study: no target was studied ({ok} runs)\n");
    };
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
    if let Some(lab) = &d.machine.lab {
        let _ = writeln!(
            s,
            "EMULATED ({lab}): measured in the lab VM under software emulation; every figure \
             shows function, never a platform's ceiling"
        );
    }
    if let Some(l) = crate::apparatus::in_process_line(t) {
        let _ = writeln!(s, "{l}");
    }
    if let Some(l) = f.device_reach.as_ref().and_then(|r| r.line()) {
        let _ = writeln!(s, "{l}");
    }
    let _ = writeln!(s, "{}", crate::answer::device_limit_line(f));
    if let Some(st) = &t.stack {
        stack_lines(&mut s, st, f.stack.as_ref());
    }
    qd_table(&mut s, f);
    if let Some(p) = &f.platform {
        platform_lines(&mut s, p);
    }
    if let Some(cal) = &f.calibration {
        let _ = writeln!(s, "  {}", cal.note());
    }
    if let Some(k) = crate::answer::knee_line(f) {
        let _ = writeln!(s, "  {k}");
    }
    let strategies = crate::answer::strategies_lines(f);
    if !strategies.is_empty() {
        let _ = writeln!(s, "\n{}", strategies.join("\n"));
    }
    verdicts_and_skipped(&mut s, d);
    s
}

/// The stack under the target, layer by layer, and each device's figures
/// over the run that moved the most I/O.
fn stack_lines(
    s: &mut String,
    st: &ssdready_measured::stack_layers::Stack,
    j: Option<&crate::stack::StackJudgement>,
) {
    let _ = writeln!(s, "  the stack under {}:", st.target);
    for l in st.lines() {
        let _ = writeln!(s, "    {l}");
    }
    if !st.above.is_empty() {
        let _ = writeln!(s, "    (above it, not studied: {})", st.above.join(", "));
    }
    for n in &st.notes {
        let _ = writeln!(s, "    note: {n}");
    }
    over_study_line(s, st, j);
    let busiest = j.and_then(|j| j.busiest());
    if let Some(r) = busiest {
        let _ = writeln!(s, "  each device over {} (/sys/block/*/stat):", r.run);
        for m in &r.members {
            let _ = writeln!(
                s,
                "    {:<10} {:>9} I/Os {:>9} IOPS {:>8.1} MB/s  busy {:>3.0} %  {} per I/O",
                m.disk,
                m.ios,
                fmt_count(m.iops),
                m.bytes_per_s / 1e6,
                m.busy_pct,
                m.mean_ms_per_io
                    .map_or("-".to_string(), |t| format!("{t:.3} ms"))
            );
        }
    }
    for l in j.map_or_else(Vec::new, crate::stack::cpu::lines) {
        let _ = writeln!(s, "  {l}");
    }
    if let Some(c) = j.and_then(|j| j.ceiling.as_ref()) {
        ceiling_lines(s, c);
    }
}

/// Each device's I/Os over the whole study, and how many of them fell
/// outside the runs.
fn over_study_line(
    s: &mut String,
    st: &ssdready_measured::stack_layers::Stack,
    j: Option<&crate::stack::StackJudgement>,
) {
    if st.over_study.is_empty() {
        return;
    }
    let in_runs = |disk: &str| -> u64 {
        j.map_or(0, |j| {
            j.runs
                .iter()
                .flat_map(|r| &r.members)
                .filter(|m| m.disk == disk)
                .map(|m| m.ios)
                .sum()
        })
    };
    let each: Vec<String> = st
        .over_study
        .iter()
        .map(|c| {
            let all = c.ios();
            let outside = all.saturating_sub(in_runs(&c.disk));
            format!("{} {all} ({outside} outside the runs)", c.disk)
        })
        .collect();
    let _ = writeln!(
        s,
        "  I/Os over the whole study, from detection to the end (/sys/block/*/stat): {}",
        each.join(", ")
    );
}

/// The stack against its members read alone, and all at once.
fn ceiling_lines(s: &mut String, c: &crate::stack::StackCeiling) {
    let each: Vec<String> = c
        .members
        .iter()
        .map(|m| match &m.path {
            Some(p) => format!("{} through {p} {}", m.disk, fmt_count(m.iops)),
            None => format!("{} {}", m.disk, fmt_count(m.iops)),
        })
        .collect();
    let _ = writeln!(
        s,
        "  {} against its members read alone ({} random reads, QD {}, {} round(s)): {} IOPS; alone {} (sum {}): {:.0} % ± {:.0} % of them",
        c.stack,
        ssdready_measured::record::fmt_bs(c.bs),
        c.qd,
        c.rounds,
        fmt_count(c.stack_iops),
        each.join(", "),
        fmt_count(c.members_sum_iops),
        c.ratio_pct,
        c.ratio_err_pct
    );
    if let Some(t) = &c.together {
        let _ = writeln!(
            s,
            "  its members read all at once (QD {} each): {} IOPS, {:.0} % ± {:.0} % of the sum of each alone{}; {} {:.0} % ± {:.0} % of them",
            t.qd,
            fmt_count(t.iops),
            t.ratio_pct,
            t.ratio_err_pct,
            if t.shared { ": something they share holds them" } else { "" },
            c.stack,
            t.stack_ratio_pct,
            t.stack_ratio_err_pct
        );
    }
    if let Some(b) = &c.bandwidth {
        let each: Vec<String> = b
            .members
            .iter()
            .map(|m| format!("{} {:.1}", m.disk, m.bytes_per_s / 1e6))
            .collect();
        let _ = writeln!(
            s,
            "  {} against its members read alone ({} sequential reads, QD {}, {} round(s)): {:.1} MB/s; alone {} (sum {:.1}): {:.0} % ± {:.0} % of them",
            c.stack,
            ssdready_measured::record::fmt_bs(b.bs),
            b.qd,
            b.rounds,
            b.stack_bytes_per_s / 1e6,
            each.join(", "),
            b.members_sum_bytes_per_s / 1e6,
            b.ratio_pct,
            b.ratio_err_pct
        );
    }
}

/// The platform's own curve on the reference device, in one line.
fn platform_lines(s: &mut String, p: &crate::figures::PlatformPeak) {
    let pts: Vec<String> = p
        .curve
        .iter()
        .map(|c| format!("QD {} {}", c.qd, fmt_count(c.iops)))
        .collect();
    let _ = writeln!(
        s,
        "  the platform alone, on {} (RAM, the same kernel path without the drive's daemon): {}; held by {}",
        p.device,
        pts.join(", "),
        p.saturation.limit
    );
}

/// The findings, numbered with their recommendations, then what was not
/// studied.
fn verdicts_and_skipped(s: &mut String, d: &StudyDoc) {
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
    if let Some(t) = &d.trials {
        let _ = write!(s, "\n{}", crate::trials::text::section(t));
    }
    if !d.skipped.is_empty() {
        let _ = writeln!(s, "\nnot studied:");
        for k in &d.skipped {
            let _ = writeln!(s, "  {}: {}", k.what, k.why);
        }
    }
}

/// The queue-depth table: IOPS, latency, and, where the study has them,
/// the fractions delivered (of the device's limit where it has a basis; of
/// the model alone at each depth), where the mean went (in the block layer
/// and below, from the device's own counters; stopped by a CPU quota), and
/// the mean less the emulated drive's transport.
fn qd_table(s: &mut String, f: &Figures) {
    let any = |g: fn(&CurvePoint) -> bool| f.qd_curve.iter().any(g);
    let limit = f
        .device_limit
        .iops
        .filter(|_| f.device_limit.basis != ssdready_measured::basis::HIGHEST_MEASURED);
    let cols = QdColumns {
        limit,
        alone: any(|c| c.device_iops.is_some()),
        block: any(|c| c.block_ns.is_some()),
        stopped: any(|c| c.quota_stopped_ns.is_some()),
        less: any(|c| c.less_transport_lat_ns.is_some()),
        rest: any(|c| c.less_transport_lat_ns.is_some() && c.device_lat_mean_ns.is_some()),
    };
    qd_legend(s, &cols);
    let mut head = String::from("\n  QD        IOPS   mean lat    p99 lat");
    for (on, h) in [
        (cols.limit.is_some(), "   of limit"),
        (cols.alone, "  device alone   of alone"),
        (cols.block, "  block & below"),
        (cols.stopped, "  quota-stopped"),
        (cols.less, "       less transport"),
        (cols.rest, "              platform"),
    ] {
        if on {
            head.push_str(h);
        }
    }
    let _ = writeln!(s, "{head}");
    for c in &f.qd_curve {
        let _ = writeln!(s, "{}", qd_row(c, &cols));
    }
}

/// What the queue-depth table shows in each of its columns.
struct QdColumns {
    limit: Option<f64>,
    alone: bool,
    block: bool,
    stopped: bool,
    less: bool,
    rest: bool,
}

/// What the table's less common columns mean, where it has them.
fn qd_legend(s: &mut String, cols: &QdColumns) {
    if cols.less {
        let _ = writeln!(
            s,
            "  (IOPS and latency: behind this kernel; less transport: its mean latency less the \
             drive's transport, ± the calibration's spread; device alone: the model in virtual time)"
        );
    }
    if cols.rest {
        let _ = writeln!(
            s,
            "  (platform: what is left of the mean once the transport and the device alone's \
             latency at that depth are taken out; \"over by\": the parts taken out exceed the \
             mean by that much, beyond the error, and no platform share is claimed at that depth)"
        );
    }
    if cols.block {
        let _ = writeln!(
            s,
            "  (block & below: of the mean, the time in the block layer and below, from the \
             device's own counters; the rest is above the block layer)"
        );
    }
}

/// One depth's row of the table.
fn qd_row(c: &CurvePoint, cols: &QdColumns) -> String {
    let pct = |a: f64, b: f64| format!("{:.0} %", 100.0 * a / b);
    let dash = || "-".to_string();
    let mut row = format!(
        "  {:>3} {:>10} {:>10} {:>10}",
        c.qd,
        fmt_count(c.iops),
        fmt_ns(c.lat_mean_ns),
        fmt_ns(c.lat_p99_ns as f64)
    );
    if let Some(l) = cols.limit {
        let _ = write!(row, " {:>10}", pct(c.iops, l));
    }
    if cols.alone {
        let of = c.device_iops.filter(|&d| d > 0.0);
        let _ = write!(
            row,
            " {:>13} {:>10}",
            c.device_iops.map_or_else(dash, fmt_count),
            of.map_or_else(dash, |d| pct(c.iops, d))
        );
    }
    if cols.block {
        let _ = write!(row, " {:>14}", c.block_ns.map_or_else(dash, fmt_ns));
    }
    if cols.stopped {
        let _ = write!(row, " {:>14}", c.quota_stopped_ns.map_or_else(dash, fmt_ns));
    }
    if cols.less {
        let v = match c.less_transport_lat_ns {
            None => dash(),
            // Within its error of nothing: the noise, not a figure.
            Some(l) => {
                let err = c.less_transport_err_ns.unwrap_or(0.0);
                match l > err {
                    true => format!("{} ± {}", fmt_ns(l), fmt_ns(err)),
                    false => format!("noise ± {}", fmt_ns(err)),
                }
            }
        };
        let _ = write!(row, " {v:>20}");
    }
    if cols.rest {
        let _ = write!(row, " {:>21}", platform_rest(c).unwrap_or_else(dash));
    }
    row
}

/// What the mean leaves for the platform at one depth behind the kernel:
/// the mean less the transport less the device alone's latency, with the
/// calibration's error; "over by" where the parts taken out exceed the
/// mean beyond it.
fn platform_rest(c: &CurvePoint) -> Option<String> {
    let rest = c.less_transport_lat_ns? - c.device_lat_mean_ns?;
    let err = c.less_transport_err_ns.unwrap_or(0.0);
    Some(if rest > err {
        format!("{} ± {}", fmt_ns(rest), fmt_ns(err))
    } else if rest < -err {
        format!("over by {}", fmt_ns(-rest))
    } else {
        format!("0 ± {}", fmt_ns(err))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_measured::record::{TargetKind, TargetProfile, Verdict};

    /// md0 against its one member read alone, by rate and by bandwidth,
    /// and its members read all at once.
    fn md0_ceiling() -> crate::stack::StackCeiling {
        use crate::stack::{MemberAlone, StackCeiling};
        StackCeiling {
            stack: "md0".into(),
            bs: 4096,
            qd: 32,
            stack_iops: 9800.0,
            members: vec![MemberAlone {
                disk: "nullb0".into(),
                iops: 10200.0,
                path: None,
            }],
            members_sum_iops: 20400.0,
            ratio_pct: 48.0,
            ratio_err_pct: 1.0,
            rounds: 2,
            held_back: true,
            bandwidth: Some(crate::stack::SizeCeiling {
                bs: 192 << 10,
                qd: 8,
                stack_bytes_per_s: 1.9e9,
                members: vec![crate::stack::MemberBandwidth {
                    disk: "nullb0".into(),
                    bytes_per_s: 1e9,
                }],
                members_sum_bytes_per_s: 2e9,
                ratio_pct: 95.0,
                ratio_err_pct: 2.0,
                rounds: 2,
                ..Default::default()
            }),
            together: Some(crate::stack::Together {
                qd: 32,
                iops: 10100.0,
                ratio_pct: 49.4,
                ratio_err_pct: 1.0,
                shared: true,
                stack_ratio_pct: 97.0,
                stack_ratio_err_pct: 1.0,
                rounds: 2,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn a_stack_read_against_its_members_alone_shows_the_ratio_and_not_a_members_run_as_its_own() {
        use crate::stack::{MemberFigures, RunFigures, StackJudgement};
        use ssdready_measured::stack_layers::Stack;
        let figures = |run: &str, disk: &str, ios: u64| RunFigures {
            run: run.into(),
            alone: run.contains("nullb").then(|| "nullb0".into()),
            members: vec![MemberFigures {
                disk: disk.into(),
                ios,
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut d = StudyDoc {
            targets: vec![TargetProfile {
                spec: "/dev/md0".into(),
                stack: Some(Stack {
                    target: "md0".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        d.figures.stack = Some(StackJudgement {
            runs: vec![
                figures("ceiling-stack-qd32", "md0", 9800),
                figures("ceiling-nullb0-qd32", "nullb0", 10200),
            ],
            ceiling: Some(md0_ceiling()),
            ..Default::default()
        });
        let s = findings(&d, 10.0);
        assert!(
            s.contains("md0 against its members read alone (192k sequential reads, QD 8, 2 round(s)): 1900.0 MB/s; alone nullb0 1000.0 (sum 2000.0): 95 % ± 2 % of them"),
            "{s}"
        );
        assert!(
            s.contains("its members read all at once (QD 32 each): 10.1K IOPS, 49 % ± 1 % of the sum of each alone: something they share holds them; md0 97 % ± 1 % of them"),
            "{s}"
        );
        assert!(s.contains("each device over ceiling-stack-qd32"), "{s}");
        assert!(
            s.contains("md0 against its members read alone (4k random reads, QD 32, 2 round(s))")
                && s.contains("48 % ± 1 % of them"),
            "{s}"
        );
    }

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

    #[test]
    fn a_low_depth_is_measured_against_the_device_alone_at_that_depth() {
        let mut d = StudyDoc {
            targets: vec![TargetProfile {
                spec: "emu:".into(),
                kind: TargetKind::Emulator,
                ..Default::default()
            }],
            ..Default::default()
        };
        d.figures.device_limit.iops = Some(1.0e6);
        d.figures
            .qd_curve
            .push(ssdready_measured::curve::CurvePoint {
                qd: 1,
                iops: 13_000.0,
                lat_mean_ns: 77_000.0,
                lat_p99_ns: 101_000,
                device_iops: Some(22_200.0),
                ..Default::default()
            });
        let s = findings(&d, 1.0);
        let row = s
            .lines()
            .find(|l| l.trim_start().starts_with("1 "))
            .unwrap();
        // 1 % of the device's limit, 59 % of the device alone at QD 1.
        assert!(
            row.contains(" 1 %") && row.trim_end().ends_with("59 %"),
            "{s}"
        );
        assert!(s.contains("of limit  device alone   of alone"), "{s}");
    }

    #[test]
    fn behind_the_kernel_the_table_gives_the_latency_less_the_transport() {
        let mut d = StudyDoc {
            targets: vec![TargetProfile {
                spec: "/dev/loop9".into(),
                kind: TargetKind::BlockDevice,
                ..Default::default()
            }],
            ..Default::default()
        };
        d.figures
            .qd_curve
            .push(ssdready_measured::curve::CurvePoint {
                qd: 1,
                iops: 5_000.0,
                lat_mean_ns: 200_000.0,
                device_iops: Some(22_000.0),
                less_transport_lat_ns: Some(190_000.0),
                less_transport_err_ns: Some(1_500.0),
                ..Default::default()
            });
        d.figures.calibration = Some(crate::transport::calibration::Calibration {
            transport: "fuse+loop".into(),
            path: Some("/root/.cache/ssdready/transport/k-b.json".into()),
            ..Default::default()
        });
        let s = findings(&d, 1.0);
        assert!(s.contains("of alone       less transport"), "{s}");
        let row = s
            .lines()
            .find(|l| l.trim_start().starts_with("1 "))
            .unwrap();
        assert!(row.ends_with("190.00 µs ± 1.50 µs"), "{s}");
        assert!(
            s.contains("/root/.cache/ssdready/transport/k-b.json"),
            "{s}"
        );
        // A figure within its error of nothing is said to be noise.
        d.figures.qd_curve[0].less_transport_err_ns = Some(200_000.0);
        let s = findings(&d, 1.0);
        assert!(s.contains("noise ± 200.00 µs"), "{s}");
        // Without a calibration, the table is as before.
        d.figures.qd_curve[0].less_transport_lat_ns = None;
        d.figures.qd_curve[0].less_transport_err_ns = None;
        d.figures.calibration = None;
        let s = findings(&d, 1.0);
        assert!(s.contains("of alone\n"), "{s}");
    }

    #[test]
    fn behind_the_kernel_each_depth_says_what_is_left_for_the_platform_or_that_the_parts_exceed_the_mean(
    ) {
        let mut d = StudyDoc {
            targets: vec![TargetProfile {
                spec: "/dev/loop9".into(),
                kind: TargetKind::BlockDevice,
                ..Default::default()
            }],
            ..Default::default()
        };
        // The mean less the transport against the device alone's latency:
        // 60 µs over 45 µs (15 left), 40 over 45 (5 over, beyond the 2 µs
        // error), 46 over 45 (within the error).
        for (qd, less, dev) in [
            (1, 60_000.0, 45_000.0),
            (2, 40_000.0, 45_000.0),
            (4, 46_000.0, 45_000.0),
        ] {
            d.figures
                .qd_curve
                .push(ssdready_measured::curve::CurvePoint {
                    qd,
                    iops: 10_000.0,
                    lat_mean_ns: less + 30_000.0,
                    device_iops: Some(20_000.0),
                    device_lat_mean_ns: Some(dev),
                    less_transport_lat_ns: Some(less),
                    less_transport_err_ns: Some(2_000.0),
                    ..Default::default()
                });
        }
        let s = findings(&d, 1.0);
        let row = |qd: &str| {
            s.lines()
                .find(|l| l.trim_start().starts_with(&format!("{qd} ")))
                .unwrap()
                .to_string()
        };
        assert!(row("1").ends_with("15.00 µs ± 2.00 µs"), "{s}");
        assert!(row("2").ends_with("over by 5.00 µs"), "{s}");
        assert!(row("4").ends_with("0 ± 2.00 µs"), "{s}");
        assert!(
            s.contains("no platform share is claimed at that depth"),
            "{s}"
        );
    }
}
