//! The study's "What to change, measured" section (`trials`): each change
//! tried in turns as a bar of its gain on what it is judged on, with an
//! error bar of the interval its outcome rests on (`Gain::interval`: twice
//! its turns' spread on their log ratios, or the pairs' range where every
//! pair decided — the same figure its words come from, so a bar clear of
//! zero is a change beyond the noise and one across zero is not), and the
//! table: the change, what it moved, its outcome, the turns, and how to
//! keep it; then what was not tried and why, and the contradictions with
//! the diagnosis. The configuration to deploy
//! (every change that helped, measured together) leads the note and the
//! table.

use super::charts::{FONT, WIDTH};
use super::figure::Table;
use super::figure::{Body, Figure};
use super::svg::{color, linear_ticks, text_width, Scale, ScaleKind, Svg};
use ssdready_diagnosis::trials::combination::Combination;
use ssdready_diagnosis::trials::section::Section;
use ssdready_diagnosis::trials::{fmt_gain, noise_words, Outcome, Trial, CLEAR_PCT, SMALL_PCT};

fn bar_color(o: Outcome) -> &'static str {
    match o {
        Outcome::Better => color(2),
        Outcome::Worse => color(3),
        _ => "#999",
    }
}

/// The gains as horizontal bars around zero, each with its error bar.
pub fn chart(trials: &[&Trial]) -> String {
    let n = trials.len().max(1) as f64;
    let height = 70.0 + 30.0 * n;
    let mut svg = Svg::new(
        WIDTH,
        height,
        "Gain of each change, with the interval it is judged on",
    );
    let labels: Vec<String> = trials.iter().map(|t| t.change()).collect();
    let label_w = labels
        .iter()
        .map(|l| text_width(l, FONT))
        .fold(80.0, f64::max)
        .min(260.0);
    let (l, t, r, b) = (label_w + 14.0, 16.0, WIDTH - 24.0, height - 40.0);
    let (lo, hi) = extent(trials);
    let xs = Scale::nice(ScaleKind::Linear, lo, hi, l, r);
    for v in linear_ticks(xs.d0, xs.d1, 5) {
        let x = xs.map(v);
        svg.line(x, t, x, b, "grid", "");
        svg.text(x, b + 14.0, "middle", "tick", &format!("{v:+.0} %"));
    }
    let zero = xs.map(0.0);
    svg.line(zero, t, zero, b, "axis", "");
    svg.line(l, b, r, b, "axis", "");
    let band = (b - t) / n;
    for (i, tr) in trials.iter().enumerate() {
        let y = t + band * (i as f64 + 0.2);
        let h = band * 0.6;
        svg.text(l - 6.0, y + h / 2.0 + 4.0, "end", "tick", &labels[i]);
        bar(&mut svg, &xs, tr, y, h);
    }
    svg.text(
        (l + r) / 2.0,
        b + 32.0,
        "middle",
        "atitle",
        "change against the baseline on what each is judged on (IOPS, latency: less is better)",
    );
    svg.finish()
}

/// The interval a trial's outcome rests on, percent.
fn span(t: &Trial) -> Option<(f64, f64)> {
    t.main_gain().map(|g| g.interval())
}

/// The lowest and highest ends of the trials' spans, zero included.
fn extent(trials: &[&Trial]) -> (f64, f64) {
    let lo = trials
        .iter()
        .filter_map(|t| span(t))
        .map(|s| s.0)
        .fold(0.0, f64::min);
    let hi = trials
        .iter()
        .filter_map(|t| span(t))
        .map(|s| s.1)
        .fold(0.0, f64::max);
    (lo, hi)
}

/// A trial's bar from zero to its gain (`h` high from `y`), with its tip
/// and error bar; nothing where it has no gain.
fn bar(svg: &mut Svg, xs: &Scale, tr: &Trial, y: f64, h: f64) {
    let Some(g) = tr.main_gain() else {
        return;
    };
    let (zero, x) = (xs.map(0.0), xs.map(g.change_pct));
    let tip = format!(
        "{}: {} {} over {} turns — {}",
        tr.change(),
        g.metric.label(),
        fmt_gain(g),
        tr.turns.len(),
        noise_words(tr)
    );
    svg.rect(
        zero.min(x),
        y,
        (x - zero).abs().max(1.0),
        h,
        "mark",
        &format!("fill:{}", bar_color(tr.outcome)),
        &tip,
    );
    let (e0, e1) = span(tr).unwrap_or((g.change_pct, g.change_pct));
    let (x0, x1, ym) = (xs.map(e0), xs.map(e1), y + h / 2.0);
    svg.line(x0, ym, x1, ym, "axis", "");
    svg.line(x0, ym - 5.0, x0, ym + 5.0, "axis", "");
    svg.line(x1, ym - 5.0, x1, ym + 5.0, "axis", "");
}

fn table(s: &Section) -> Table {
    let mut t = Table::new(&[
        "change",
        "on",
        "what it moved (the interval each is judged on)",
        "outcome",
        "turns",
        "at",
        "to keep it",
    ]);
    if let Some(c) = &s.combination {
        combination_rows(&mut t, c);
    }
    for tr in &s.trials {
        let moved = tr
            .gains
            .iter()
            .map(|g| format!("{} {}", g.metric.label(), fmt_gain(g)))
            .collect::<Vec<_>>()
            .join("; ");
        let keep = match tr.outcome {
            Outcome::Better => tr.permanent.clone(),
            _ => String::new(),
        };
        t.row(vec![
            tr.change(),
            tr.devices.join(", "),
            match &tr.error {
                Some(e) if moved.is_empty() => format!("not measured: {e}"),
                _ => moved,
            },
            noise_words(tr).into(),
            tr.turns.len().to_string(),
            tr.at.clone(),
            keep,
        ]);
    }
    for u in &s.untested {
        t.row(vec![
            format!("{} (untested)", u.lever),
            String::new(),
            u.what.clone(),
            "untested".into(),
            "0".into(),
            String::new(),
            u.why.clone(),
        ]);
    }
    t
}

/// The section's figure: the chart of gains and the table.
pub fn trials(s: &Section) -> Figure {
    let measured: Vec<&Trial> = s
        .trials
        .iter()
        .filter(|t| t.main_gain().is_some())
        .collect();
    let lead = s.combination.as_ref().map_or(String::new(), |c| {
        format!(
            "The configuration to deploy: {} at {}; {}. ",
            ssdready_diagnosis::trials::combination::result_words(c),
            c.at,
            c.words
        )
    });
    let mut note = format!(
        "{lead}{}. Each change ran in turns with the baseline (baseline, change, baseline, change, …) at the point its finding is about, and was put back after each run. Each error bar is the interval its outcome rests on: better or worse beyond the noise where twice the spread of its turns' log ratios stays clear of zero; in every pair where that crosses zero but every pair moved the same way by {:.2}× or more (the bar then spans the pairs); else no change (that interval within {:.0} % either way) or too noisy to judge.",
        capitalised(&s.answer),
        1.0 + CLEAR_PCT / 100.0,
        SMALL_PCT
    );
    for c in &s.contradictions {
        note.push_str(&format!(" Contradiction: {}.", c.text));
    }
    Figure {
        id: "trials".into(),
        title: "What to change, measured".into(),
        note,
        body: if measured.is_empty() {
            Body::Missing("No change was measured on this machine (the table says why).".into())
        } else {
            Body::Chart(chart(&measured))
        },
        table: Some(table(s)),
    }
}

/// Each set measured together, the kept configuration first with its
/// files.
fn combination_rows(t: &mut Table, c: &Combination) {
    let kept = (&c.kept, true);
    let others = c.sets.iter().filter(|x| **x != c.kept).map(|x| (x, false));
    for (set, is_kept) in std::iter::once(kept).chain(others) {
        let moved = set
            .gains
            .iter()
            .map(|g| format!("{} {}", g.metric.label(), fmt_gain(g)))
            .collect::<Vec<_>>()
            .join("; ");
        let names: Vec<&str> = c.members_of(set).map(|m| m.change.as_str()).collect();
        let label = match (is_kept, set.single) {
            (true, true) => format!("configuration: {} (alone)", names.join(" + ")),
            (true, false) => format!("configuration: {} (together)", names.join(" + ")),
            _ => format!("{} (together)", names.join(" + ")),
        };
        let keep = match is_kept {
            true => ssdready_diagnosis::trials::files::names(c).join(", "),
            false => String::new(),
        };
        t.row(vec![
            label,
            String::new(),
            match &set.error {
                Some(e) if moved.is_empty() => format!("not measured: {e}"),
                _ => moved,
            },
            set.outcome_words(c.measure).into(),
            set.turns.len().to_string(),
            c.at.clone(),
            keep,
        ]);
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdready_diagnosis::levers::{Kind, Metric};
    use ssdready_diagnosis::trials::combination::{judge_set, Member, Set};
    use ssdready_diagnosis::trials::{judge_trial, Measured, Turn};

    fn turns(ratio: f64) -> Vec<Turn> {
        let run = |iops: f64| Measured {
            iops,
            bw_bytes_per_s: iops * 4096.0,
            lat_mean_ns: 32e9 / iops,
            lat_p99_ns: 64e9 / iops,
            cpu_ns_per_io: None,
            directions: None,
        };
        (0..3)
            .map(|i| Turn {
                baseline: run(100_000.0),
                change: run(100_000.0 * ratio * (1.0 + 0.004 * f64::from(i))),
            })
            .collect()
    }

    #[test]
    fn the_configuration_leads_the_note_and_the_table() {
        let member = |lever: &str| Member {
            lever: lever.into(),
            kind: Kind::Queue,
            change: format!("{lever} a → b"),
            attr: Some(lever.into()),
            devices: vec!["sda".into()],
            ..Default::default()
        };
        let mut kept = Set {
            levers: vec!["scheduler".into(), "nr-requests".into()],
            turns: turns(1.6),
            change_options: vec!["--name=m".into()],
            ..Default::default()
        };
        judge_set(&mut kept, Metric::Iops);
        let mut trial = Trial {
            lever: "scheduler".into(),
            from: "a".into(),
            to: "b".into(),
            turns: turns(1.5),
            ..Default::default()
        };
        ssdready_diagnosis::trials::judge_trial(&mut trial);
        let s = Section {
            trials: vec![trial],
            answer: "the configuration to deploy: …".into(),
            combination: Some(Combination {
                at: "4 KiB random reads at QD 32 × 1 thread".into(),
                changes: vec![member("scheduler"), member("nr-requests")],
                sets: vec![kept.clone()],
                kept,
                words: "together they bought more".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let f = trials(&s);
        assert!(
            f.note.starts_with(
                "The configuration to deploy: scheduler a → b + nr-requests a → b: IOPS +60."
            ),
            "{}",
            f.note
        );
        let html = f.html();
        let lead = html
            .find("configuration: scheduler a → b + nr-requests a → b (together)")
            .expect("the configuration's row");
        let single = html
            .find("<td>scheduler a → b</td>")
            .expect("the trial's row");
        assert!(lead < single);
        assert!(html.contains("99-ssdready.rules, job.fio"));
        // The kept set is not listed twice.
        assert_eq!(html.matches("(together)").count(), 1);
    }

    /// A trial judged on IOPS whose change gave each pair `ratios` of its
    /// baseline's 100K.
    fn tried(to: &str, ratios: &[f64]) -> Trial {
        let m = |iops: f64| Measured {
            iops,
            bw_bytes_per_s: iops * 4096.0,
            lat_mean_ns: 1e9 / iops,
            lat_p99_ns: 2e5,
            cpu_ns_per_io: None,
            directions: None,
        };
        let mut t = Trial {
            lever: "engine".into(),
            from: "io_uring".into(),
            to: to.into(),
            measure: Metric::Iops,
            turns: ratios
                .iter()
                .map(|r| Turn {
                    baseline: m(1e5),
                    change: m(1e5 * r),
                })
                .collect(),
            ..Default::default()
        };
        judge_trial(&mut t);
        t
    }

    #[test]
    fn the_error_bar_is_the_interval_the_outcome_words_rest_on() {
        let s = Section {
            trials: vec![
                // −95 %, −80 %, −65 %: worse in every pair.
                tried("psync", &[0.05, 0.2, 0.35]),
                // +30 %, −20 %, +5 %: too noisy to judge.
                tried("libaio", &[1.3, 0.8, 1.05]),
                // +38 % ± 4 %: better beyond the noise.
                tried("spdk", &[1.38, 1.42, 1.34]),
            ],
            ..Default::default()
        };
        let words: Vec<String> = table(&s).rows.iter().map(|r| r[3].clone()).collect();
        assert_eq!(
            words,
            [
                "worse in every pair",
                "too noisy to judge",
                "better beyond the noise"
            ]
        );
        let bars: Vec<(f64, f64)> = s.trials.iter().map(|t| span(t).unwrap()).collect();
        assert!(
            bars[0].1 < 0.0 && (bars[0].0 + 95.0).abs() < 1e-9,
            "{bars:?}"
        );
        assert!(bars[1].0 < 0.0 && bars[1].1 > 0.0, "{bars:?}");
        assert!(bars[2].0 > 0.0, "{bars:?}");
        // The table's figures are the bars' ends.
        let moved = &table(&s).rows[2][2];
        assert!(
            moved.starts_with(&format!("IOPS +38.0 % ({:+.1} %", bars[2].0)),
            "{moved}"
        );
        let svg = chart(&s.trials.iter().collect::<Vec<_>>());
        assert!(svg.contains("worse in every pair"), "{svg}");
    }
}
