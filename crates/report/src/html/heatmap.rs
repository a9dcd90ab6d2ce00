//! A heat map: columns of time, rows of value buckets (latency octaves),
//! each cell coloured by its share of the column (viridis, square-root
//! scale so thin tails stay visible), with run boundaries and a colour key.

use super::charts::{axes, extent, value_text, Axis, WIDTH};
use super::svg::{heat_color, text_width, Scale, Svg};

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
    /// `cells[column][row]`: the share of the column's I/Os, 0–1.
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
        axes(&mut svg, &xs, &xt, &xtitle, &ys, &yt, &ytitle, plot);
        let vmax = self
            .cells
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        self.draw_cells(&mut svg, &xs, &ys, vmax);
        self.draw_segments(&mut svg, &xs, plot);
        self.draw_key(&mut svg, plot, vmax);
        svg.finish()
    }

    /// The cells, shaded by their share of the largest (sqrt scale), each
    /// with its tooltip.
    fn draw_cells(&self, svg: &mut Svg, xs: &Scale, ys: &Scale, vmax: f64) {
        for (ci, col) in self.cells.iter().enumerate() {
            let Some(&(c0, c1)) = self.columns.get(ci) else {
                continue;
            };
            let (a, z) = (xs.map(c0), xs.map(c1));
            for (ri, &v) in col.iter().enumerate() {
                let Some(&(r0, r1)) = self.rows.get(ri) else {
                    continue;
                };
                if !v.is_finite() || v <= 0.0 {
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
    }

    /// Run boundaries; their names above the plot where they fit.
    fn draw_segments(&self, svg: &mut Svg, xs: &Scale, plot: (f64, f64, f64, f64)) {
        let (_, t, r, b) = plot;
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
    }

    /// The colour key (share of the column's maximum cell, sqrt scale) and
    /// the legend.
    fn draw_key(&self, svg: &mut Svg, plot: (f64, f64, f64, f64), vmax: f64) {
        let (_, t, r, b) = plot;
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
    }
}

#[cfg(test)]
mod tests {
    use super::super::svg::Unit;
    use super::*;

    fn marks(svg: &str) -> usize {
        svg.matches("class=\"mark").count()
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
}
