//! The report's chart kinds, drawn with [`super::svg`]: lines and points
//! over two axes ([`XyChart`], with reference lines and shaded windows),
//! stacked bars ([`StackedBars`](super::bars::StackedBars), vertical or
//! horizontal, with a second axis in another unit, in `bars.rs`) and a
//! heat map ([`HeatMap`](super::heatmap::HeatMap), `heatmap.rs`); the
//! axes, legends and frames they share. Each chart is an `<svg
//! class="chart">` whose data marks carry `class="mark"`; a
//! [`Figure`](super::figure::Figure) (`figure.rs`) puts it under a title,
//! with a note and its data as a table. Each kind is imported from the
//! file that defines it: `bars.rs` and `heatmap.rs` use the primitives
//! here, never the other way.

use super::svg::{
    color, linear_label, linear_unit, log_label, text_width, Scale, ScaleKind, Svg, Unit,
};

/// Chart width in SVG units (the figure scales it to its box).
pub const WIDTH: f64 = 640.0;
pub(super) const FONT: f64 = 11.0;

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
    pub(super) fn resolve(
        &self,
        lo: f64,
        hi: f64,
        r0: f64,
        r1: f64,
    ) -> (Scale, Vec<(f64, String)>, String) {
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
        // Log scales: each tick says its unit.
        let labels = s
            .ticks()
            .iter()
            .map(|&t| (t, log_label(t, self.unit)))
            .collect();
        (s, labels, format!("{} (log scale)", self.title))
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
pub(super) fn legend(
    svg: &mut Svg,
    items: &[(String, String, Style)],
    x0: f64,
    y0: f64,
    w: f64,
) -> f64 {
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
pub(super) fn axes(
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
        // Skip labels that would overlap the previous one; keep the last
        // inside the chart.
        let half = text_width(s, FONT) / 2.0;
        let cx = x.min(r + 12.0 - half);
        if cx - half > last_end + 3.0 {
            svg.text(cx, b + 14.0, "middle", "tick", s);
            last_end = cx + half;
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

pub(super) fn extent(v: impl Iterator<Item = f64>) -> (f64, f64) {
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
        self.draw_bands(&mut svg, &xs, plot);
        axes(&mut svg, &xs, &xt, &xtitle, &ys, &yt, &ytitle, plot);
        if pts.is_empty() {
            svg.text((l + r) / 2.0, (t + b) / 2.0, "middle", "note", "no data");
        }
        let mut placed = Vec::new();
        for s in &self.series {
            self.draw_series(&mut svg, s, &xs, &ys, plot, &mut placed);
        }
        let top = self.draw_hlines(&mut svg, &ys, plot);
        self.draw_vlines(&mut svg, &xs, &ys, plot, top);
        svg.finish()
    }

    /// The bands (shaded x ranges) behind the plot, each labelled at its top.
    fn draw_bands(&self, svg: &mut Svg, xs: &Scale, plot: (f64, f64, f64, f64)) {
        let (l, t, r, b) = plot;
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
    }

    /// The horizontal reference lines (limits) with their labels; returns
    /// the highest free label line at the top for the vertical ones.
    fn draw_hlines(&self, svg: &mut Svg, ys: &Scale, plot: (f64, f64, f64, f64)) -> f64 {
        let (l, t, r, _) = plot;
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
        top
    }

    /// The vertical reference lines (the knee) with their labels, at the top
    /// or at the bottom, wherever fewer points are in the way.
    fn draw_vlines(
        &self,
        svg: &mut Svg,
        xs: &Scale,
        ys: &Scale,
        plot: (f64, f64, f64, f64),
        mut top: f64,
    ) {
        let (t, r, b) = (plot.1, plot.2, plot.3);
        for m in &self.marks {
            if let Mark::VLine { x, label } = m {
                let px = xs.map(*x);
                svg.line(px, t, px, b, "ref", "");
                let w = text_width(label, FONT);
                let end = px + 4.0 + w > r;
                let (anchor, x0) = if end {
                    ("end", px - 4.0 - w)
                } else {
                    ("start", px + 4.0)
                };
                // At the top, or at the bottom where fewer points are in
                // the way.
                let covered = |y: f64| {
                    self.series
                        .iter()
                        .flat_map(|s| s.points.iter())
                        .filter(|p| usable(p, self.x.kind, self.y.kind))
                        .map(|p| (xs.map(p.0), ys.map(p.1)))
                        .filter(|(qx, qy)| {
                            *qx > x0 - 6.0 && *qx < x0 + w + 6.0 && *qy > y - 16.0 && *qy < y + 6.0
                        })
                        .count()
                };
                let y = if covered(b - 5.0) < covered(top) {
                    b - 5.0
                } else {
                    top
                };
                let tx = if end { px - 4.0 } else { px + 4.0 };
                svg.text(tx, y, anchor, "reflabel", label);
                if y == top {
                    top += 13.0;
                }
            }
        }
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
}
