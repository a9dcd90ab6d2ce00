//! The study's section on a stacked target (md, device-mapper, loop,
//! partitions): its layers as the kernel shows them, every device's
//! figures over the run that moved the most I/O, and which member or
//! layer the study named (`figures.stack`; docs/stacks.md).

use super::figure::Table;
use super::page::section;
use super::svg::esc;
use ssdready_core::units::fmt_count;
use ssdready_diagnosis::model::StudyDoc;
use ssdready_diagnosis::stack::{StackCeiling, StackJudgement};
use ssdready_measured::record::fmt_bs;
use ssdready_measured::stack_layers::Stack;

/// The section, where the first target has a stack.
pub fn section_of(d: &StudyDoc) -> Option<String> {
    let st = d.targets.first()?.stack.as_ref()?;
    let mut cards = vec![layers_card(st)];
    if let Some(j) = d.figures.stack.as_ref() {
        cards.extend(busiest_card(j));
        cards.extend(cpu_card(j));
        if let Some(c) = j.ceiling.as_ref() {
            cards.push(ceiling_card(c));
            cards.extend(bandwidth_card(c));
        }
        cards.extend(findings_card(j));
    }
    Some(section(
        "s-stack",
        &format!("The stack under {}", st.target),
        "The layers from the target down to the physical devices, each device's own counters, and which member or layer holds the I/O (docs/stacks.md).",
        &cards,
    ))
}

/// The layers as the kernel shows them, each indented by its depth.
fn layers_card(st: &Stack) -> String {
    let mut layers = Table::new(&["device", "MAJ:MIN", "what it is", "under it"]);
    for l in &st.layers {
        layers.row(vec![
            format!("{}{}", "· ".repeat(l.depth as usize), l.disk),
            l.device.clone(),
            l.kind.describe(),
            l.under.join(", "),
        ]);
    }
    format!("<div class=\"card\">{}</div>", layers.html())
}

/// Every device's counters over the run that moved the most I/O.
fn busiest_card(j: &StackJudgement) -> Option<String> {
    let r = j.busiest()?;
    let mut t = Table::new(&[
        "device",
        "I/Os",
        "IOPS",
        "MB/s",
        "busy",
        "time per I/O",
        "mean in flight",
    ]);
    for m in &r.members {
        t.row(vec![
            m.disk.clone(),
            m.ios.to_string(),
            fmt_count(m.iops),
            format!("{:.1}", m.bytes_per_s / 1e6),
            format!("{:.0} %", m.busy_pct),
            m.mean_ms_per_io
                .map_or("-".into(), |v| format!("{v:.3} ms")),
            format!("{:.1}", m.mean_queue),
        ]);
    }
    Some(format!(
        "<div class=\"card\"><p>Each device over {} (/sys/block/*/stat):</p>{}</div>",
        esc(&r.run),
        t.html()
    ))
}

/// Where the CPUs' time went, where the study read it.
fn cpu_card(j: &StackJudgement) -> Option<String> {
    let cpu: Vec<String> = ssdready_diagnosis::stack::cpu::lines(j)
        .iter()
        .map(|l| format!("<p>{}</p>", esc(l)))
        .collect();
    (!cpu.is_empty()).then(|| format!("<div class=\"card\">{}</div>", cpu.concat()))
}

/// The stack's random reads against its members' read alone (and all at
/// once, where the study read them so).
fn ceiling_card(c: &StackCeiling) -> String {
    let mut t = Table::new(&["device", "4 KiB random reads, IOPS"]);
    t.row(vec![
        format!("{} (the stack)", c.stack),
        fmt_count(c.stack_iops),
    ]);
    for m in &c.members {
        t.row(vec![format!("{} alone", m.disk), fmt_count(m.iops)]);
    }
    t.row(vec!["members' sum".into(), fmt_count(c.members_sum_iops)]);
    let mut said = vec![esc(&c.words().0)];
    if let Some(o) = &c.together {
        t.row(vec!["members all at once".into(), fmt_count(o.iops)]);
        said.push(esc(&o.words(c).0));
    }
    format!(
        "<div class=\"card\"><p>{}</p>{}</div>",
        said.join("</p><p>"),
        t.html()
    )
}

/// The stack's sequential reads against its members', where read.
fn bandwidth_card(c: &StackCeiling) -> Option<String> {
    let (b, (words, _)) = (c.bandwidth.as_ref()?, c.bandwidth_words()?);
    let head = format!("{} sequential reads, MB/s", fmt_bs(b.bs));
    let mut t = Table::new(&["device", &head]);
    let mb = |v: f64| format!("{:.1}", v / 1e6);
    t.row(vec![
        format!("{} (the stack)", c.stack),
        mb(b.stack_bytes_per_s),
    ]);
    for m in &b.members {
        t.row(vec![format!("{} alone", m.disk), mb(m.bytes_per_s)]);
    }
    t.row(vec!["members' sum".into(), mb(b.members_sum_bytes_per_s)]);
    Some(format!(
        "<div class=\"card\"><p>{}</p>{}</div>",
        esc(&words),
        t.html()
    ))
}

/// The member or layer the study named, one item each.
fn findings_card(j: &StackJudgement) -> Option<String> {
    let found: Vec<String> = j
        .findings
        .iter()
        .map(|f| format!("<li>{}</li>", esc(&f.words().0)))
        .collect();
    (!found.is_empty()).then(|| format!("<div class=\"card\"><ul>{}</ul></div>", found.concat()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_measured::stack_layers::{LayerKind, StackLayer};

    #[test]
    fn a_stacked_target_gets_its_layers_and_a_lone_one_no_section() {
        let mut d = StudyDoc {
            targets: vec![Default::default()],
            ..Default::default()
        };
        assert!(section_of(&d).is_none());
        d.targets[0].stack = Some(md0_over_two_nvme());
        let html = section_of(&d).unwrap();
        assert!(html.contains("The stack under md0"), "{html}");
        assert!(html.contains("md raid5, chunk 64k, 3 disks"), "{html}");
        assert!(html.contains("nvme0n1, nvme1n1"));
        assert!(html.contains("· nvme0n1"));
        // The stack against its members read alone, where the study read them.
        d.figures.stack = Some(held_back_at_random_not_sequential());
        let html = section_of(&d).unwrap();
        assert!(html.contains("nvme0n1 alone"), "{html}");
        assert!(html.contains("hold it back"), "{html}");
        assert!(html.contains("members all at once</td><td>19.9K"), "{html}");
        assert!(html.contains("nothing they share holds them"), "{html}");
        assert!(html.contains("128k sequential reads, MB/s"), "{html}");
        assert!(html.contains("<td>1900.0</td>"), "{html}");
        assert!(html.contains("cost is per request"), "{html}");
    }

    /// md0, a raid5 over two NVMe devices.
    fn md0_over_two_nvme() -> Stack {
        Stack {
            target: "md0".into(),
            layers: vec![
                StackLayer {
                    disk: "md0".into(),
                    device: "9:0".into(),
                    kind: LayerKind::Md {
                        level: Some("raid5".into()),
                        chunk_bytes: Some(65536),
                        raid_disks: Some(3),
                        degraded: None,
                        members: Vec::new(),
                    },
                    under: vec!["nvme0n1".into(), "nvme1n1".into()],
                    ..Default::default()
                },
                StackLayer {
                    disk: "nvme0n1".into(),
                    depth: 1,
                    ..Default::default()
                },
            ],
            ..Default::default()
        }
    }

    /// md0 reading at random at half its members' sum, sequentially at
    /// nearly all of it, and its members together at nearly all of theirs.
    fn held_back_at_random_not_sequential() -> ssdready_diagnosis::stack::StackJudgement {
        ssdready_diagnosis::stack::StackJudgement {
            ceiling: Some(ssdready_diagnosis::stack::StackCeiling {
                stack: "md0".into(),
                layer: "md raid5".into(),
                bs: 4096,
                qd: 32,
                stack_iops: 9800.0,
                members: vec![ssdready_diagnosis::stack::MemberAlone {
                    disk: "nvme0n1".into(),
                    iops: 10200.0,
                    path: None,
                }],
                members_sum_iops: 20400.0,
                ratio_pct: 48.0,
                rounds: 2,
                held_back: true,
                bandwidth: Some(ssdready_diagnosis::stack::SizeCeiling {
                    bs: 128 << 10,
                    qd: 8,
                    stack_bytes_per_s: 1.9e9,
                    members: vec![ssdready_diagnosis::stack::MemberBandwidth {
                        disk: "nvme0n1".into(),
                        bytes_per_s: 1e9,
                    }],
                    members_sum_bytes_per_s: 2e9,
                    ratio_pct: 95.0,
                    rounds: 2,
                    ..Default::default()
                }),
                together: Some(ssdready_diagnosis::stack::Together {
                    qd: 32,
                    iops: 19900.0,
                    ratio_pct: 97.5,
                    stack_ratio_pct: 49.2,
                    rounds: 2,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }
}
