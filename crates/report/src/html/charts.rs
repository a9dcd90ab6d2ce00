//! The report's chart kinds, drawn with [`super::svg`]: lines and points
//! over two axes ([`XyChart`], with reference lines and shaded windows),
//! stacked bars ([`StackedBars`], vertical or horizontal, with a second
//! axis in another unit) and a heat map ([`HeatMap`]). Each chart is an
//! `<svg class="chart">` whose data marks carry `class="mark"`; a
//! [`Figure`] puts it under a title, with a note and its data as a table.

use super::svg::{
    color, esc, heat_color, linear_label, linear_unit, log_label, text_width, Scale, ScaleKind,
    Svg, Unit,
};
use std::fmt::Write as _;

/// Chart width in SVG units (the figure scales it to its box).
pub const WIDTH: f64 = 640.0;
const FONT: f64 = 11.0;

/// One axis: its title (without unit: the unit is added), unit and scale.
#[derive(Clone, Debug)]
pub struct Axis {
    pub title: String,
    pub unit: Unit,
    pub kind: ScaleKind,
    /// Start a linear axis at zero.
    pub zero: bool,
    /// Fixed ticks and their labels instead of computed ones.
    pub ticks: Vec<(f64, String)>,
}

impl Axis {
    pub fn linear(title: &str, unit: Unit) -> Axis {
        Axis {
            title: title.into(),
            unit,
            kind: ScaleKind::Linear,
            zero: true,
            ticks: Vec::new(),
        }
    }
    pub fn log10(title: &str, unit: Unit) -> Axis {
        Axis {
            title: title.into(),
            unit,
            kind: ScaleKind::Log10,
            zero: false,
            ticks: Vec::new(),
        }
    }
    pub fn log2(title: &str, unit: Unit) -> Axis {
        Axis {
            title: title.into(),
            unit,
            kind: ScaleKind::Log2,
            zero: false,
            ticks: Vec::new(),
        }
    }

    /// The scale over the data `lo..=hi`, its tick labels and the axis
    /// title with its unit.
    fn resolve(&self, lo: f64, hi: f64, r0: f64, r1: f64) -> (Scale, Vec<(f64, String)>, String) {
        let lo = if self.kind == ScaleKind::Linear && self.zero {
            lo.min(0.0)
        } else {
            lo
        };
        if self.kind == ScaleKind::Linear && self.ticks.is_empty() {
            // Round ticks in the unit shown (GiB/s, µs, thousands).
            let (div, u) = linear_unit(self.unit, lo.abs().max(hi.abs()));
            let mut s = Scale::nice(ScaleKind::Linear, lo / div, hi / div, r0, r1);
            let ticks = s.ticks();
            let step = if ticks.len() > 1 {
                ticks[1] - ticks[0]
            } else {
                1.0
            };
            let labels = ticks
                .iter()
                .map(|&t| (t * div, linear_label(t, 1.0, step)))
                .collect();
            (s.d0, s.d1) = (s.d0 * div, s.d1 * div);
            let title = if u.is_empty() {
                self.title.clone()
            } else {
                format!("{} ({u})", self.title)
            };
            return (s, labels, title);
        }
        let s = Scale::nice(self.kind, lo, hi, r0, r1);
        if !self.ticks.is_empty() {
            let inside = |v: f64| v >= s.d0.min(s.d1) && v <= s.d0.max(s.d1);
            let t = self.ticks.iter().filter(|t| inside(t.0)).cloned().collect();
            return (s, t, self.title.clone());
        }
        let ticks = s.ticks();
        match self.kind {
            _ => {
                let labels = ticks
                    .iter()
                    .map(|&t| (t, log_label(t, self.unit)))
                    .collect();
                (s, labels, format!("{} (log scale)", self.title))
            }
        }
    }
}

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A solid line with points.
    Line,
    /// A dashed line with points.
    Dashed,
    /// Points only (repeats, scatter).
    Points,
    /// A thin line without points (dense series over time).
    Thin,
}

/// A named series of points.
#[derive(Clone, Debug)]
pub struct Series {
    pub name: String,
    pub color: String,
    pub style: Style,
    pub points: Vec<(f64, f64)>,
    /// A label written next to each point (`QD 8`), or none.
    pub labels: Vec<String>,
    /// A tooltip per point, or none.
    pub tips: Vec<String>,
}

impl Series {
    pub fn new(name: &str, color_index: usize, style: Style, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.into(),
            color: color(color_index).into(),
            style,
            points,
            labels: Vec::new(),
            tips: Vec::new(),
        }
    }
}

/// A reference drawn over the data.
#[derive(Clone, Debug)]
pub enum Mark {
    /// A vertical dashed line at `x` (the knee).
    VLine { x: f64, label: String },
    /// A horizontal dashed line at `y` (a limit).
    HLine { y: f64, label: String },
    /// A shaded interval of x (a measured or steady window).
    Band {
        x0: f64,
        x1: f64,
        label: String,
        fill: String,
    },
}

/// Lines and points over two axes.
#[derive(Clone, Debug)]
pub struct XyChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub marks: Vec<Mark>,
    pub height: f64,
    /// Width in SVG units (the figure scales it to its box).
    pub width: f64,
}

/// The legend: coloured keys laid out in rows across the top; returns its
/// height.
fn legend(svg: &mut Svg, items: &[(String, String, Style)], x0: f64, y0: f64, w: f64) -> f64 {
    if items.is_empty() {
        return 0.0;
    }
    let (mut x, mut y) = (x0, y0 + FONT);
    for (name, col, style) in items {
        let iw = 22.0 + text_width(name, FONT) + 14.0;
        if x + iw > x0 + w && x > x0 {
            x = x0;
            y += FONT + 6.0;
        }
        let dash = if *style == Style::Dashed {
            "stroke-dasharray:5 3;"
        } else {
            ""
        };
        match style {
            Style::Points => svg.circle(x + 8.0, y - 4.0, 3.5, "key", &format!("fill:{col}"), ""),
            _ => svg.line(
                x,
                y - 4.0,
                x + 16.0,
                y - 4.0,
                "key",
                &format!("stroke:{col};stroke-width:2.5;{dash}"),
            ),
        }
        svg.text(x + 21.0, y, "start", "lg", name);
        x += iw;
    }
    y - y0 + 6.0
}

/// The frame of a chart: grid lines, ticks and titles of both axes.
#[allow(clippy::too_many_arguments)]
fn axes(
    svg: &mut Svg,
    xs: &Scale,
    xt: &[(f64, String)],
    xtitle: &str,
    ys: &Scale,
    yt: &[(f64, String)],
    ytitle: &str,
    plot: (f64, f64, f64, f64),
) {
    let (l, t, r, b) = plot;
    for (v, s) in yt {
        let y = ys.map(*v);
        svg.line(l, y, r, y, "grid", "");
        svg.text(l - 5.0, y + 3.5, "end", "tick", s);
    }
    let mut last_end = f64::NEG_INFINITY;
    for (v, s) in xt {
        let x = xs.map(*v);
        svg.line(x, t, x, b, "grid", "");
        // Skip labels that would overlap the previous one.
        let half = text_width(s, FONT) / 2.0;
        if x - half > last_end + 3.0 {
            svg.text(x, b + 14.0, "middle", "tick", s);
            last_end = x + half;
        }
    }
    svg.line(l, b, r, b, "axis", "");
    svg.line(l, t, l, b, "axis", "");
    svg.text((l + r) / 2.0, b + 32.0, "middle", "atitle", xtitle);
    svg.vtext(14.0, (t + b) / 2.0, "atitle", ytitle);
}

/// Finite points, and positive ones on log axes.
fn usable(p: &(f64, f64), x: ScaleKind, y: ScaleKind) -> bool {
    let ok = |v: f64, k: ScaleKind| v.is_finite() && (k == ScaleKind::Linear || v > 0.0);
    ok(p.0, x) && ok(p.1, y)
}

fn extent(v: impl Iterator<Item = f64>) -> (f64, f64) {
    v.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    })
}

impl XyChart {
    pub fn new(title: &str, x: Axis, y: Axis) -> XyChart {
        XyChart {
            title: title.into(),
            x,
            y,
            series: Vec::new(),
            marks: Vec::new(),
            height: 300.0,
            width: WIDTH,
        }
    }

    /// The chart as SVG.
    pub fn svg(&self) -> String {
        let (xk, yk) = (self.x.kind, self.y.kind);
        let pts: Vec<(f64, f64)> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().copied())
            .filter(|p| usable(p, xk, yk))
            .collect();
        let mut xs_all: Vec<f64> = pts.iter().map(|p| p.0).collect();
        let mut ys_all: Vec<f64> = pts.iter().map(|p| p.1).collect();
        for m in &self.marks {
            match m {
                Mark::VLine { x, .. } => xs_all.push(*x),
                Mark::HLine { y, .. } => ys_all.push(*y),
                Mark::Band { x0, x1, .. } => xs_all.extend([*x0, *x1]),
            }
        }
        let mut svg = Svg::new(self.width, self.height, &self.title);
        let items: Vec<_> = self
            .series
            .iter()
            .filter(|s| !s.name.is_empty())
            .map(|s| (s.name.clone(), s.color.clone(), s.style))
            .collect();
        let lh = legend(&mut svg, &items, 60.0, 2.0, self.width - 70.0);
        let plot = (60.0, 8.0 + lh, self.width - 14.0, self.height - 42.0);
        let (l, t, r, b) = plot;
        let (x0, x1) = extent(xs_all.into_iter().filter(|v| v.is_finite()));
        let (y0, y1) = extent(ys_all.into_iter().filter(|v| v.is_finite()));
        let (xs, xt, xtitle) = self.x.resolve(x0, x1, l, r);
        let (ys, yt, ytitle) = self.y.resolve(y0, y1, b, t);
        for m in &self.marks {
            if let Mark::Band {
                x0,
                x1,
                label,
                fill,
            } = m
            {
                let (a, z) = (xs.map(*x0).max(l), xs.map(*x1).min(r));
                svg.rect(a, t, z - a, b - t, "band", &format!("fill:{fill}"), label);
                svg.text(a + 3.0, t + 11.0, "start", "note", label);
            }
        }
        axes(&mut svg, &xs, &xt, &xtitle, &ys, &yt, &ytitle, plot);
        if pts.is_empty() {
            svg.text((l + r) / 2.0, (t + b) / 2.0, "middle", "note", "no data");
        }
        let mut placed = Vec::new();
        for s in &self.series {
            self.draw_series(&mut svg, s, &xs, &ys, plot, &mut placed);
        }
        // Limits' labels sit above their line at the left; the knee's at the
        // top of its line, below any limit label up there.
        let mut top = t + 11.0;
        for m in &self.marks {
            if let Mark::HLine { y, label } = m {
                let py = ys.map(*y);
                svg.line(l, py, r, py, "ref", "");
                svg.text(l + 4.0, py - 4.0, "start", "reflabel", label);
                if py - 15.0 < top {
                    top = top.max(py + 13.0);
                }
            }
        }
        for m in &self.marks {
            if let Mark::VLine { x, label } = m {
                let px = xs.map(*x);
                svg.line(px, t, px, b, "ref", "");
                let end = px + 4.0 + text_width(label, FONT) > r;
                let (anchor, dx) = if end { ("end", -4.0) } else { ("start", 4.0) };
                svg.text(px + dx, top, anchor, "reflabel", label);
                top += 13.0;
            }
        }
        svg.finish()
    }

    fn draw_series(
        &self,
        svg: &mut Svg,
        s: &Series,
        xs: &Scale,
        ys: &Scale,
        plot: (f64, f64, f64, f64),
        placed: &mut Vec<(f64, f64, f64, f64)>,
    ) {
        let (xk, yk) = (self.x.kind, self.y.kind);
        let keep: Vec<usize> = (0..s.points.len())
            .filter(|&i| usable(&s.points[i], xk, yk))
            .collect();
        let px: Vec<(f64, f64)> = keep
            .iter()
            .map(|&i| (xs.map(s.points[i].0), ys.map(s.points[i].1)))
            .collect();
        let col = &s.color;
        match s.style {
            Style::Line | Style::Thin | Style::Dashed if px.len() > 1 => {
                let w = if s.style == Style::Thin { 1.5 } else { 2.2 };
                let dash = if s.style == Style::Dashed {
                    "stroke-dasharray:6 4;"
                } else {
                    ""
                };
                svg.polyline(
                    &px,
                    "mark",
                    &format!("stroke:{col};stroke-width:{w};{dash}"),
                );
            }
            _ => {}
        }
        let dots = s.style != Style::Thin || px.len() == 1;
        for (k, (&i, p)) in keep.iter().zip(&px).enumerate() {
            if dots {
                let tip =
                    s.tips.get(i).cloned().unwrap_or_else(|| {
                        format!("{}: {}, {}", s.name, s.points[i].0, s.points[i].1)
                    });
                let (r, fill) = match s.style {
                    Style::Points => (3.2, format!("fill:{col};fill-opacity:0.75")),
                    Style::Dashed => (2.8, format!("fill:#fff;stroke:{col};stroke-width:1.5")),
                    _ => (3.0, format!("fill:{col}")),
                };
                svg.circle(p.0, p.1, r, "mark", &fill, &tip);
            }
            if let Some(lab) = s.labels.get(i).filter(|l| !l.is_empty()) {
                let _ = k;
                // Right of the point, or left of it at the right edge;
                // dropped where it would cover another label.
                let w = text_width(lab, 10.0);
                let (x0, anchor) = if p.0 + 5.0 + w > plot.2 {
                    (p.0 - 5.0 - w, "end")
                } else {
                    (p.0 + 5.0, "start")
                };
                let bx = (x0, p.1 - 15.0, x0 + w, p.1 - 4.0);
                let clear = placed
                    .iter()
                    .all(|o| bx.2 < o.0 || bx.0 > o.2 || bx.3 < o.1 || bx.1 > o.3);
                if clear && bx.1 > plot.1 - 4.0 {
                    let tx = if anchor == "end" { bx.2 } else { bx.0 };
                    svg.text(tx, p.1 - 6.0, anchor, "plabel", lab);
                    placed.push(bx);
                }
            }
        }
    }
}

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

/// A value with its unit, for labels and tooltips.
pub fn value_text(v: f64, unit: Unit) -> String {
    use ssdready_core::units::{fmt_bytes, fmt_count, fmt_ns};
    match unit {
        Unit::Ns => fmt_ns(v),
        Unit::Count => fmt_count(v),
        Unit::BytesPerSec => format!("{}/s", fmt_bytes(v)),
        Unit::Bytes => fmt_bytes(v),
        Unit::Pct => format!("{v:.0} %"),
        Unit::Seconds => format!("{v:.1} s"),
        Unit::Plain => format!("{v}"),
    }
}

/// Cells of time × value buckets, coloured by a share.
#[derive(Clone, Debug)]
pub struct HeatMap {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    /// Each column's x interval.
    pub columns: Vec<(f64, f64)>,
    /// Each row's y interval (bucket bounds).
    pub rows: Vec<(f64, f64)>,
    /// cells[column][row]: the share of the column's I/Os, 0–1.
    pub cells: Vec<Vec<f64>>,
    /// A tooltip per column (what ran then).
    pub column_tips: Vec<String>,
    /// Vertical separators with a label (runs of a study).
    pub segments: Vec<(f64, String)>,
    pub legend: String,
}

impl HeatMap {
    /// The chart as SVG.
    pub fn svg(&self) -> String {
        let h = 320.0;
        let mut svg = Svg::new(WIDTH, h, &self.title);
        let plot = (60.0, 16.0, WIDTH - 70.0, h - 42.0);
        let (l, t, r, b) = plot;
        let (x0, x1) = extent(self.columns.iter().flat_map(|c| [c.0, c.1]));
        let (y0, y1) = extent(self.rows.iter().flat_map(|c| [c.0, c.1]));
        let (xs, xt, xtitle) = self.x.resolve(x0, x1, l, r);
        let (ys, yt, ytitle) = self.y.resolve(y0, y1, b, t);
        svg.rect(l, t, r - l, b - t, "heatbg", "", "");
        let vmax = self
            .cells
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        for (ci, col) in self.cells.iter().enumerate() {
            let Some(&(c0, c1)) = self.columns.get(ci) else {
                continue;
            };
            let (a, z) = (xs.map(c0), xs.map(c1));
            for (ri, &v) in col.iter().enumerate() {
                let Some(&(r0, r1)) = self.rows.get(ri) else {
                    continue;
                };
                if !(v > 0.0) {
                    continue;
                }
                let (ya, yz) = (ys.map(r0), ys.map(r1));
                // sqrt: thin tails stay visible beside the bulk.
                let shade = if vmax > 0.0 { (v / vmax).sqrt() } else { 0.0 };
                let tip = format!(
                    "{}{}–{}: {:.1} % of the I/Os",
                    self.column_tips
                        .get(ci)
                        .map_or(String::new(), |s| format!("{s}: ")),
                    value_text(r0, self.y.unit),
                    value_text(r1, self.y.unit),
                    100.0 * v
                );
                svg.rect(
                    a,
                    yz,
                    (z - a).max(0.6),
                    ya - yz,
                    "mark cell",
                    &format!("fill:{}", heat_color(shade)),
                    &tip,
                );
            }
        }
        axes(&mut svg, &xs, &xt, &xtitle, &ys, &yt, &ytitle, plot);
        // Run boundaries; their names above the plot where they fit.
        let mut last = f64::NEG_INFINITY;
        for (k, (x, label)) in self.segments.iter().enumerate() {
            let px = xs.map(*x);
            if k > 0 {
                svg.line(px, t, px, b, "sep", "");
            }
            let next = self.segments.get(k + 1).map_or(r, |s| xs.map(s.0));
            if px >= last && next - px >= text_width(label, 9.5) + 2.0 {
                svg.text(px + 1.0, t - 3.0, "start", "seglabel", label);
                last = px + text_width(label, 9.5);
            }
        }
        // The colour key: share of the column's maximum cell, sqrt scale.
        let (kx, kw) = (r + 18.0, 12.0);
        for k in 0..20 {
            let f = k as f64 / 19.0;
            let y = b - (b - t) * (k as f64 + 1.0) / 20.0;
            svg.rect(
                kx,
                y,
                kw,
                (b - t) / 20.0 + 0.5,
                "key",
                &format!("fill:{}", heat_color(f)),
                "",
            );
        }
        svg.text(
            kx + kw + 3.0,
            t + 8.0,
            "start",
            "tick",
            &format!("{:.0}%", 100.0 * vmax),
        );
        svg.text(kx + kw + 3.0, b, "start", "tick", "0");
        svg.vtext(WIDTH - 8.0, (t + b) / 2.0, "atitle", &self.legend);
        svg.finish()
    }
}

/// A data table.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub head: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(head: &[&str]) -> Table {
        Table {
            head: head.iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as HTML (cells escaped; numbers right-aligned by CSS).
    pub fn html(&self) -> String {
        let mut s = String::from("<div class=\"tw\"><table class=\"data\"><thead><tr>");
        for h in &self.head {
            let _ = write!(s, "<th>{}</th>", esc(h));
        }
        s.push_str("</tr></thead><tbody>");
        for r in &self.rows {
            s.push_str("<tr>");
            for c in r {
                let _ = write!(s, "<td>{}</td>", esc(c));
            }
            s.push_str("</tr>");
        }
        s.push_str("</tbody></table></div>");
        s
    }
}

/// What a figure shows: a chart, or why there is none.
#[derive(Clone, Debug)]
pub enum Body {
    Chart(String),
    /// Not measured, and why (never an empty box).
    Missing(String),
}

/// A chart with its title, a note on what it shows and its data.
#[derive(Clone, Debug)]
pub struct Figure {
    /// The anchor verdicts link to.
    pub id: String,
    pub title: String,
    pub note: String,
    pub body: Body,
    pub table: Option<Table>,
}

impl Figure {
    pub fn html(&self) -> String {
        let mut s = format!(
            "<figure class=\"fig\" id=\"{}\"><h3>{}</h3>",
            esc(&self.id),
            esc(&self.title)
        );
        if !self.note.is_empty() {
            let _ = write!(s, "<p class=\"note\">{}</p>", esc(&self.note));
        }
        match &self.body {
            Body::Chart(svg) => s.push_str(svg),
            Body::Missing(why) => {
                let _ = write!(
                    s,
                    "<div class=\"missing\"><b>Not measured.</b> {}</div>",
                    esc(why)
                );
            }
        }
        if let Some(t) = self.table.as_ref().filter(|t| !t.rows.is_empty()) {
            let _ = write!(
                s,
                "<details><summary>Data ({} rows)</summary>{}</details>",
                t.rows.len(),
                t.html()
            );
        }
        s.push_str("</figure>");
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(svg: &str) -> usize {
        svg.matches("class=\"mark").count()
    }

    #[test]
    fn an_xy_chart_draws_a_line_and_a_point_per_value() {
        let mut c = XyChart::new(
            "t",
            Axis::log2("QD", Unit::Plain),
            Axis::linear("IOPS", Unit::Count),
        );
        c.series.push(Series::new(
            "a",
            0,
            Style::Line,
            vec![(1.0, 10.0), (2.0, 20.0), (4.0, 30.0)],
        ));
        c.marks.push(Mark::VLine {
            x: 2.0,
            label: "knee".into(),
        });
        let s = c.svg();
        assert_eq!(marks(&s), 4, "one polyline and three points");
        assert!(s.contains(">knee<"));
        assert!(s.contains("QD (log scale)"));
        assert!(!s.contains("NaN"));
    }

    #[test]
    fn an_xy_chart_without_data_says_so_and_draws_no_marks() {
        let mut c = XyChart::new(
            "t",
            Axis::log10("lat", Unit::Ns),
            Axis::linear("x", Unit::Count),
        );
        c.series.push(Series::new(
            "a",
            0,
            Style::Line,
            vec![(0.0, 1.0), (f64::NAN, 2.0)],
        ));
        let s = c.svg();
        assert_eq!(marks(&s), 0, "non-positive values cannot sit on a log axis");
        assert!(s.contains(">no data<"));
        assert!(!s.contains("NaN"));
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

    #[test]
    fn a_heat_map_draws_only_occupied_cells() {
        let h = HeatMap {
            title: "t".into(),
            x: Axis::linear("time", Unit::Seconds),
            y: Axis::log10("latency", Unit::Ns),
            columns: vec![(0.0, 1.0), (1.0, 2.0)],
            rows: vec![(1000.0, 2000.0), (2000.0, 4000.0)],
            cells: vec![vec![0.9, 0.1], vec![0.0, 1.0]],
            column_tips: vec!["qd-1".into(), "qd-2".into()],
            segments: vec![(1.0, "qd-2".into())],
            legend: "share".into(),
        };
        let s = h.svg();
        assert_eq!(marks(&s), 3);
        assert!(s.contains("qd-1: 1.00 µs–2.00 µs: 90.0 % of the I/Os"));
    }

    #[test]
    fn a_missing_figure_says_why_and_tables_escape() {
        let mut t = Table::new(&["a<b"]);
        t.row(vec!["x&y".into()]);
        let f = Figure {
            id: "d".into(),
            title: "T".into(),
            note: String::new(),
            body: Body::Missing("needs root".into()),
            table: Some(t),
        };
        let h = f.html();
        assert!(h.contains("Not measured.</b> needs root"));
        assert!(h.contains("<th>a&lt;b</th>") && h.contains("<td>x&amp;y</td>"));
        assert!(!h.contains("<svg"));
    }
}
