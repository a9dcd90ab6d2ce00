//! Stacked bars: one bar per category (a queue depth, a configuration),
//! its parts stacked (the layers of CPU per I/O, the parts of a latency),
//! vertical or horizontal, with an optional second axis showing the same
//! values in another unit (TSC clocks beside nanoseconds).

use super::charts::{legend, value_text, Axis, Style, FONT, WIDTH};
use super::svg::{color, linear_label, linear_unit, text_width, Svg, Unit};
use std::fmt::Write as _;

/// A second axis showing the same quantity in another unit (clocks beside
/// nanoseconds): `value × factor`.
#[derive(Clone, Debug)]
pub struct AltAxis {
    pub title: String,
    pub unit: Unit,
    pub factor: f64,
}

/// Bars of stacked parts, one bar per category.
#[derive(Clone, Debug)]
pub struct StackedBars {
    pub title: String,
    /// What the categories are (`queue depth`), shown under them.
    pub category_title: String,
    pub categories: Vec<String>,
    /// (part name, one value per category).
    pub parts: Vec<(String, Vec<f64>)>,
    pub value: Axis,
    pub alt: Option<AltAxis>,
    /// Bars along the x axis, or (horizontal) one per row.
    pub horizontal: bool,
}

impl StackedBars {
    /// The chart as SVG.
    pub fn svg(&self) -> String {
        let n = self.categories.len();
        let totals: Vec<f64> = (0..n)
            .map(|i| {
                self.parts
                    .iter()
                    .map(|p| p.1.get(i).copied().filter(|v| v.is_finite()).unwrap_or(0.0))
                    .map(|v| v.max(0.0))
                    .sum()
            })
            .collect();
        let max = totals.iter().copied().fold(0.0, f64::max);
        let height = if self.horizontal {
            70.0 + 34.0 * n.max(1) as f64 + 18.0 * (self.parts.len() as f64 / 4.0).ceil()
        } else {
            300.0
        };
        let mut svg = Svg::new(WIDTH, height, &self.title);
        let items: Vec<_> = self
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| (p.0.clone(), color(i).to_string(), Style::Points))
            .collect();
        let lh = legend(&mut svg, &items, 10.0, 2.0, WIDTH - 20.0);
        if self.horizontal {
            self.draw_horizontal(&mut svg, &totals, max, lh, height);
        } else {
            self.draw_vertical(&mut svg, &totals, max, lh, height);
        }
        svg.finish()
    }

    fn tip(&self, ci: usize, pi: usize, v: f64) -> String {
        let total: f64 = self.parts.iter().filter_map(|p| p.1.get(ci)).sum();
        let share = if total > 0.0 { 100.0 * v / total } else { 0.0 };
        format!(
            "{} — {}: {} ({share:.0} %)",
            self.categories[ci],
            self.parts[pi].0,
            value_text(v, self.value.unit)
        )
    }

    fn draw_vertical(&self, svg: &mut Svg, totals: &[f64], max: f64, lh: f64, h: f64) {
        let right = if self.alt.is_some() { 64.0 } else { 14.0 };
        let plot = (60.0, 10.0 + lh, WIDTH - right, h - 42.0);
        let (l, t, r, b) = plot;
        let (ys, yt, ytitle) = self.value.resolve(0.0, max, b, t);
        let n = self.categories.len().max(1);
        let band = (r - l) / n as f64;
        for (v, s) in &yt {
            let y = ys.map(*v);
            svg.line(l, y, r, y, "grid", "");
            svg.text(l - 5.0, y + 3.5, "end", "tick", s);
        }
        svg.line(l, b, r, b, "axis", "");
        svg.line(l, t, l, b, "axis", "");
        for (ci, c) in self.categories.iter().enumerate() {
            let x = l + band * (ci as f64 + 0.18);
            let w = band * 0.64;
            let mut acc = 0.0;
            for (pi, (_, vals)) in self.parts.iter().enumerate() {
                let v = vals
                    .get(ci)
                    .copied()
                    .filter(|v| v.is_finite())
                    .unwrap_or(0.0);
                if v <= 0.0 {
                    continue;
                }
                let (y0, y1) = (ys.map(acc), ys.map(acc + v));
                svg.rect(
                    x,
                    y1,
                    w,
                    y0 - y1,
                    "mark",
                    &format!("fill:{}", color(pi)),
                    &self.tip(ci, pi, v),
                );
                acc += v;
            }
            svg.text(x + w / 2.0, b + 14.0, "middle", "tick", c);
            if totals[ci] > 0.0 {
                let top = ys.map(totals[ci]);
                svg.text(
                    x + w / 2.0,
                    top - 3.0,
                    "middle",
                    "plabel",
                    &value_text(totals[ci], self.value.unit),
                );
            }
        }
        svg.text(
            (l + r) / 2.0,
            b + 32.0,
            "middle",
            "atitle",
            &self.category_title,
        );
        svg.vtext(14.0, (t + b) / 2.0, "atitle", &ytitle);
        if let Some(a) = &self.alt {
            let (ticks, title) = alt_ticks(a, ys.d1);
            for (v, lab) in ticks {
                svg.text(r + 5.0, ys.map(v) + 3.5, "start", "tick", &lab);
            }
            svg.vtext(WIDTH - 10.0, (t + b) / 2.0, "atitle", &title);
        }
    }

    fn draw_horizontal(&self, svg: &mut Svg, totals: &[f64], max: f64, lh: f64, h: f64) {
        let label_w = self
            .categories
            .iter()
            .map(|c| text_width(c, FONT))
            .fold(60.0, f64::max)
            .min(200.0);
        let top = 10.0 + lh + if self.alt.is_some() { 30.0 } else { 4.0 };
        let plot = (label_w + 14.0, top, WIDTH - 56.0, h - 40.0);
        let (l, t, r, b) = plot;
        let (xs, xt, xtitle) = self.value.resolve(0.0, max, l, r);
        let n = self.categories.len().max(1);
        let band = (b - t) / n as f64;
        let mut last = f64::NEG_INFINITY;
        for (v, s) in &xt {
            let x = xs.map(*v);
            svg.line(x, t, x, b, "grid", "");
            if x - text_width(s, FONT) / 2.0 > last + 3.0 {
                svg.text(x, b + 14.0, "middle", "tick", s);
                last = x + text_width(s, FONT) / 2.0;
            }
        }
        svg.line(l, t, l, b, "axis", "");
        svg.line(l, b, r, b, "axis", "");
        for (ci, c) in self.categories.iter().enumerate() {
            let y = t + band * (ci as f64 + 0.2);
            let hh = band * 0.6;
            let mut acc = 0.0;
            for (pi, (_, vals)) in self.parts.iter().enumerate() {
                let v = vals
                    .get(ci)
                    .copied()
                    .filter(|v| v.is_finite())
                    .unwrap_or(0.0);
                if v <= 0.0 {
                    continue;
                }
                let (x0, x1) = (xs.map(acc), xs.map(acc + v));
                svg.rect(
                    x0,
                    y,
                    x1 - x0,
                    hh,
                    "mark",
                    &format!("fill:{}", color(pi)),
                    &self.tip(ci, pi, v),
                );
                acc += v;
            }
            svg.text(l - 6.0, y + hh / 2.0 + 4.0, "end", "tick", c);
            if totals[ci] > 0.0 {
                let mut s = value_text(totals[ci], self.value.unit);
                if let Some(a) = &self.alt {
                    let _ = write!(s, " · {}", value_text(totals[ci] * a.factor, a.unit));
                }
                svg.text(
                    xs.map(totals[ci]) + 4.0,
                    y + hh / 2.0 + 4.0,
                    "start",
                    "plabel",
                    &s,
                );
            }
        }
        svg.text((l + r) / 2.0, b + 32.0, "middle", "atitle", &xtitle);
        if let Some(a) = &self.alt {
            let (ticks, title) = alt_ticks(a, xs.d1);
            let mut last = f64::NEG_INFINITY;
            for (v, lab) in ticks {
                let x = xs.map(v);
                if x - text_width(&lab, FONT) / 2.0 > last + 3.0 {
                    svg.text(x, t - 5.0, "middle", "tick", &lab);
                    last = x + text_width(&lab, FONT) / 2.0;
                }
            }
            svg.text((l + r) / 2.0, t - 19.0, "middle", "atitle", &title);
        }
    }
}

/// Round ticks of a second axis up to `max` (in the first axis's values):
/// their positions in the first axis's values, their labels, and the
/// axis title with its unit.
fn alt_ticks(a: &AltAxis, max: f64) -> (Vec<(f64, String)>, String) {
    let top = max * a.factor;
    let (div, u) = linear_unit(a.unit, top);
    let ticks = super::svg::linear_ticks(0.0, top / div, 5);
    let step = if ticks.len() > 1 {
        ticks[1] - ticks[0]
    } else {
        1.0
    };
    let t = ticks
        .iter()
        .filter(|&&v| v * div <= top * (1.0 + 1e-9))
        .map(|&v| (v * div / a.factor, linear_label(v, 1.0, step)))
        .collect();
    let title = if u.is_empty() {
        a.title.clone()
    } else {
        format!("{} ({u})", a.title)
    };
    (t, title)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(svg: &str) -> usize {
        svg.matches("class=\"mark").count()
    }

    #[test]
    fn stacked_bars_stack_parts_and_label_totals_in_both_units() {
        let b = StackedBars {
            title: "t".into(),
            category_title: "QD".into(),
            categories: vec!["1".into(), "2".into()],
            parts: vec![
                ("a".into(), vec![1000.0, 2000.0]),
                ("b".into(), vec![500.0, 0.0]),
            ],
            value: Axis::linear("latency", Unit::Ns),
            alt: Some(AltAxis {
                title: "clocks".into(),
                unit: Unit::Count,
                factor: 2.0,
            }),
            horizontal: true,
        };
        let s = b.svg();
        assert_eq!(marks(&s), 3, "zero parts draw nothing");
        assert!(s.contains("1.50 µs · 3000"), "{s}");
        let v = StackedBars {
            horizontal: false,
            ..b
        }
        .svg();
        assert_eq!(marks(&v), 3);
    }
}
