//! SVG primitives for the report's charts: scales (linear, log10, log2)
//! from data to pixels, "nice" tick positions, tick labels in the axis's
//! unit, escaping, and a small writer of SVG elements.
//!
//! Everything is plain text generation: the charts are inline SVG, drawn
//! once in Rust, with no script and nothing fetched. Marks that show data
//! carry `class="mark"` (the page's self-check counts them).

use std::fmt::Write as _;

/// Escape text for HTML and SVG (element content and quoted attributes).
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleKind {
    Linear,
    /// Powers of ten (latencies over decades).
    Log10,
    /// Powers of two (queue depths, threads, block sizes).
    Log2,
}

/// A map from a data interval to a pixel interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scale {
    pub kind: ScaleKind,
    /// Data domain (positive for log scales).
    pub d0: f64,
    pub d1: f64,
    /// Pixel range (r1 < r0 for a vertical axis drawn upwards).
    pub r0: f64,
    pub r1: f64,
}

impl Scale {
    /// A scale over `lo..=hi` (made non-empty and, for log scales,
    /// positive), extended to round tick values.
    pub fn nice(kind: ScaleKind, lo: f64, hi: f64, r0: f64, r1: f64) -> Scale {
        let (d0, d1) = match kind {
            ScaleKind::Linear => {
                let (lo, hi) = widen(lo, hi);
                let step = nice_step(hi - lo, 5);
                // A value a hair past a round tick (a window of 5.002 s)
                // does not open another interval.
                let slack = 1e-3;
                (
                    (lo / step + slack).floor() * step,
                    (hi / step - slack).ceil() * step,
                )
            }
            ScaleKind::Log10 | ScaleKind::Log2 => {
                let b = if kind == ScaleKind::Log10 { 10f64 } else { 2.0 };
                let lo = if lo.is_finite() && lo > 0.0 { lo } else { 1.0 };
                let hi = if hi.is_finite() && hi >= lo { hi } else { lo };
                let e0 = (lo.log(b) + 1e-9).floor();
                let mut e1 = (hi.log(b) - 1e-9).ceil();
                if e1 <= e0 {
                    e1 = e0 + 1.0;
                }
                (b.powf(e0), b.powf(e1))
            }
        };
        Scale {
            kind,
            d0,
            d1,
            r0,
            r1,
        }
    }

    /// The pixel position of `v` (values outside the domain extrapolate;
    /// non-positive values on a log scale map to its start).
    pub fn map(&self, v: f64) -> f64 {
        let t = match self.kind {
            ScaleKind::Linear => (v - self.d0) / (self.d1 - self.d0),
            ScaleKind::Log10 | ScaleKind::Log2 => {
                if v <= 0.0 {
                    0.0
                } else {
                    (v.ln() - self.d0.ln()) / (self.d1.ln() - self.d0.ln())
                }
            }
        };
        let t = if t.is_finite() { t } else { 0.0 };
        self.r0 + t * (self.r1 - self.r0)
    }

    /// Tick values within the domain.
    pub fn ticks(&self) -> Vec<f64> {
        match self.kind {
            ScaleKind::Linear => linear_ticks(self.d0, self.d1, 5),
            ScaleKind::Log10 => log10_ticks(self.d0, self.d1),
            ScaleKind::Log2 => log2_ticks(self.d0, self.d1),
        }
    }
}

/// A non-empty, finite interval around `lo..=hi`.
fn widen(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
        (true, true) if hi >= lo => (lo, hi),
        (true, _) => (lo, lo),
        (false, true) => (hi, hi),
        _ => (0.0, 1.0),
    };
    if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        let pad = lo.abs() * 0.1;
        (lo - pad, hi + pad)
    }
}

/// The smallest step of 1, 2 or 5 × 10^k that cuts `span` into at most
/// `target + 2` intervals (about `target`, with little room wasted).
pub fn nice_step(span: f64, target: usize) -> f64 {
    if !(span.is_finite() && span > 0.0) {
        return 1.0;
    }
    let most = (target + 2) as f64;
    let mag = 10f64.powf((span / most).log10().floor());
    [1.0, 2.0, 5.0, 10.0, 20.0]
        .iter()
        .map(|m| m * mag)
        .find(|step| span / step <= most + 1e-9)
        .unwrap_or(20.0 * mag)
}

/// Multiples of a nice step within `lo..=hi`.
pub fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let (lo, hi) = widen(lo, hi);
    let step = nice_step(hi - lo, target);
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last)
        .map(|k| {
            // 0.6000000000000001 → 0.6: round to the step's decimals.
            let scale = 10f64.powi((-step.log10().floor()).max(0.0) as i32);
            (k as f64 * step * scale).round() / scale
        })
        .collect()
}

/// Powers of ten within `lo..=hi`; with 2 and 5 between them when the
/// range is under three decades.
pub fn log10_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return Vec::new();
    }
    let e0 = lo.log10().floor() as i32;
    let e1 = hi.log10().ceil() as i32;
    let mults: &[f64] = if e1 - e0 < 3 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut v = Vec::new();
    for e in e0..=e1 {
        for m in mults {
            let t = m * 10f64.powi(e);
            if t >= lo * (1.0 - 1e-9) && t <= hi * (1.0 + 1e-9) {
                v.push(t);
            }
        }
    }
    v
}

/// Powers of two within `lo..=hi`, every other one past twelve.
pub fn log2_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
        return Vec::new();
    }
    let e0 = lo.log2().ceil() as i32;
    let e1 = hi.log2().floor() as i32;
    let every = if e1 - e0 > 12 { 2 } else { 1 };
    (e0..=e1)
        .filter(|e| (e - e0) % every == 0)
        .map(|e| 2f64.powi(e))
        .collect()
}

/// The unit of an axis: how tick labels are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds, shown as ns / µs / ms / s.
    Ns,
    /// A count or rate with decimal prefixes (IOPS, clocks).
    Count,
    /// Bytes per second, binary prefixes.
    BytesPerSec,
    /// Bytes, binary prefixes (block sizes).
    Bytes,
    /// Percent.
    Pct,
    /// Seconds.
    Seconds,
    /// A plain number (queue depth, threads).
    Plain,
}

/// For a linear axis reaching `max`: the divisor of tick values and the
/// unit to name in the axis title (`µs`, `thousands`, `GiB/s`, `%`).
pub fn linear_unit(unit: Unit, max: f64) -> (f64, &'static str) {
    let m = max.abs();
    match unit {
        Unit::Ns if m >= 2e9 => (1e9, "s"),
        Unit::Ns if m >= 2e6 => (1e6, "ms"),
        Unit::Ns if m >= 2e3 => (1e3, "µs"),
        Unit::Ns => (1.0, "ns"),
        Unit::Count if m >= 2e9 => (1e9, "billions"),
        Unit::Count if m >= 2e6 => (1e6, "millions"),
        Unit::Count if m >= 2e3 => (1e3, "thousands"),
        Unit::Count | Unit::Plain => (1.0, ""),
        Unit::BytesPerSec | Unit::Bytes => {
            let per = if unit == Unit::BytesPerSec { "/s" } else { "" };
            let (d, u) = if m >= 2.0 * (1u64 << 30) as f64 {
                ((1u64 << 30) as f64, "GiB")
            } else if m >= 2.0 * (1u64 << 20) as f64 {
                ((1u64 << 20) as f64, "MiB")
            } else if m >= 2.0 * 1024.0 {
                (1024.0, "KiB")
            } else {
                (1.0, "B")
            };
            let name: &'static str = match (u, per) {
                ("GiB", "/s") => "GiB/s",
                ("MiB", "/s") => "MiB/s",
                ("KiB", "/s") => "KiB/s",
                ("B", "/s") => "B/s",
                (u, _) => u,
            };
            (d, name)
        }
        Unit::Pct => (1.0, "%"),
        Unit::Seconds => (1.0, "s"),
    }
}

/// A tick label on a linear axis: `v / div` with the decimals `step` needs.
pub fn linear_label(v: f64, div: f64, step: f64) -> String {
    let x = v / div;
    let s = (step / div).abs();
    let dec = if s >= 1.0 || s == 0.0 {
        0
    } else {
        (-s.log10().floor()) as usize
    };
    let t = format!("{x:.dec$}");
    if t.starts_with('-') && t.trim_start_matches(['-', '0', '.']).is_empty() {
        t[1..].to_string()
    } else {
        t
    }
}

/// A self-describing tick label for log axes (`100 µs`, `10K`, `64`,
/// `4 KiB`).
pub fn log_label(v: f64, unit: Unit) -> String {
    let trim = |x: f64| {
        let s = format!("{x:.1}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    };
    let prefixed = |steps: &[(f64, &'static str)]| {
        let (d, u) = steps
            .iter()
            .find(|(d, _)| v >= *d)
            .copied()
            .unwrap_or(*steps.last().expect("non-empty"));
        (trim(v / d), u)
    };
    const KI: f64 = 1024.0;
    match unit {
        Unit::Ns => {
            let (x, u) = prefixed(&[(1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns")]);
            format!("{x} {u}")
        }
        Unit::Count => {
            let (x, u) = prefixed(&[(1e9, "G"), (1e6, "M"), (1e3, "K"), (1.0, "")]);
            format!("{x}{u}")
        }
        Unit::Bytes | Unit::BytesPerSec => {
            let (x, u) = prefixed(&[
                (KI * KI * KI, "GiB"),
                (KI * KI, "MiB"),
                (KI, "KiB"),
                (1.0, "B"),
            ]);
            let per = if unit == Unit::BytesPerSec { "/s" } else { "" };
            format!("{x} {u}{per}")
        }
        Unit::Pct => format!("{} %", trim(v)),
        Unit::Seconds => format!("{} s", trim(v)),
        Unit::Plain => trim(v),
    }
}

/// A fixed qualitative palette (colour-blind safe order first).
pub const PALETTE: [&str; 10] = [
    "#1f77b4", "#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#e6ab02",
    "#17becf", "#666666",
];

/// The palette's `i`-th colour, cycling.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// A sequential colour for `t` in `0..=1` (viridis, interpolated).
pub fn heat_color(t: f64) -> String {
    const STOPS: [(u8, u8, u8); 9] = [
        (68, 1, 84),
        (71, 44, 122),
        (59, 81, 139),
        (44, 113, 142),
        (33, 144, 141),
        (39, 173, 129),
        (92, 200, 99),
        (170, 220, 50),
        (253, 231, 37),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let lerp = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    format!(
        "#{:02x}{:02x}{:02x}",
        lerp(a.0, b.0),
        lerp(a.1, b.1),
        lerp(a.2, b.2)
    )
}

/// Rough width of `s` in pixels at `size` px (for legends and labels).
pub fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.56
}

/// An SVG document under construction.
pub struct Svg {
    out: String,
}

/// A number as SVG writes it: one decimal, no `-0`.
fn n(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let s = format!("{v:.1}");
    let s = s.strip_suffix(".0").unwrap_or(&s).to_string();
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

impl Svg {
    /// An `<svg class="chart">` of `w × h` user units, scaled to its box.
    pub fn new(w: f64, h: f64, title: &str) -> Svg {
        let mut out = String::new();
        let _ = write!(
            out,
            r#"<svg class="chart" viewBox="0 0 {} {}" role="img"><title>{}</title>"#,
            n(w),
            n(h),
            esc(title)
        );
        Svg { out }
    }

    /// A line segment; `class` styles it (`axis`, `grid`, `mark …`).
    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, class: &str, style: &str) {
        let _ = write!(
            self.out,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" class="{class}"{}/>"#,
            n(x1),
            n(y1),
            n(x2),
            n(y2),
            style_attr(style)
        );
    }

    /// A polyline through `pts`.
    pub fn polyline(&mut self, pts: &[(f64, f64)], class: &str, style: &str) {
        if pts.is_empty() {
            return;
        }
        let p: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{},{}", n(*x), n(*y)))
            .collect();
        let _ = write!(
            self.out,
            r#"<polyline points="{}" fill="none" class="{class}"{}/>"#,
            p.join(" "),
            style_attr(style)
        );
    }

    /// A rectangle (negative sizes are normalised).
    #[allow(clippy::too_many_arguments)]
    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, class: &str, style: &str, tip: &str) {
        let (x, w) = if w < 0.0 { (x + w, -w) } else { (x, w) };
        let (y, h) = if h < 0.0 { (y + h, -h) } else { (y, h) };
        let _ = write!(
            self.out,
            r#"<rect x="{}" y="{}" width="{}" height="{}" class="{class}"{}>"#,
            n(x),
            n(y),
            n(w),
            n(h),
            style_attr(style)
        );
        if !tip.is_empty() {
            let _ = write!(self.out, "<title>{}</title>", esc(tip));
        }
        self.out.push_str("</rect>");
    }

    /// A circle, with a tooltip.
    pub fn circle(&mut self, x: f64, y: f64, r: f64, class: &str, style: &str, tip: &str) {
        let _ = write!(
            self.out,
            r#"<circle cx="{}" cy="{}" r="{}" class="{class}"{}>"#,
            n(x),
            n(y),
            n(r),
            style_attr(style)
        );
        if !tip.is_empty() {
            let _ = write!(self.out, "<title>{}</title>", esc(tip));
        }
        self.out.push_str("</circle>");
    }

    /// Text; `anchor` is `start`, `middle` or `end`.
    pub fn text(&mut self, x: f64, y: f64, anchor: &str, class: &str, s: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{}" y="{}" text-anchor="{anchor}" class="{class}">{}</text>"#,
            n(x),
            n(y),
            esc(s)
        );
    }

    /// Text turned 90° counter-clockwise about its anchor (a y-axis title).
    pub fn vtext(&mut self, x: f64, y: f64, class: &str, s: &str) {
        let _ = write!(
            self.out,
            r#"<text x="{}" y="{}" text-anchor="middle" class="{class}" transform="rotate(-90 {} {})">{}</text>"#,
            n(x),
            n(y),
            n(x),
            n(y),
            esc(s)
        );
    }

    /// Raw markup (already escaped).
    pub fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// The finished `<svg>`.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

fn style_attr(style: &str) -> String {
    if style.is_empty() {
        String::new()
    } else {
        format!(r#" style="{}""#, esc(style))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_covers_markup_and_quotes() {
        assert_eq!(
            esc(r#"<a href="x">&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn linear_scale_extends_to_round_ticks_and_maps_ends_to_the_range() {
        let s = Scale::nice(ScaleKind::Linear, 3.0, 97.0, 0.0, 200.0);
        assert_eq!((s.d0, s.d1), (0.0, 100.0));
        assert_eq!(s.map(0.0), 0.0);
        assert_eq!(s.map(100.0), 200.0);
        assert_eq!(s.map(50.0), 100.0);
        assert_eq!(s.ticks(), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
    }

    #[test]
    fn a_vertical_scale_maps_upwards() {
        let s = Scale::nice(ScaleKind::Linear, 0.0, 10.0, 300.0, 20.0);
        assert_eq!(s.map(0.0), 300.0);
        assert_eq!(s.map(10.0), 20.0);
    }

    #[test]
    fn ticks_are_one_two_five_steps_without_float_noise() {
        assert_eq!(nice_step(1.0, 5), 0.2);
        assert_eq!(nice_step(543_000.0, 5), 100_000.0);
        assert_eq!(nice_step(7.0, 5), 1.0);
        assert_eq!(nice_step(120.0, 5), 20.0);
        assert_eq!(nice_step(0.003, 5), 0.0005);
        assert_eq!(
            linear_ticks(0.0, 1.0, 5),
            vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        );
        assert!(linear_ticks(0.1, 0.7, 5)
            .iter()
            .all(|t| format!("{t}").len() <= 4));
    }

    #[test]
    fn empty_or_degenerate_domains_still_give_a_usable_scale() {
        for (lo, hi) in [
            (5.0, 5.0),
            (0.0, 0.0),
            (f64::NAN, f64::NAN),
            (f64::INFINITY, 1.0),
            (3.0, 1.0),
        ] {
            let s = Scale::nice(ScaleKind::Linear, lo, hi, 0.0, 100.0);
            assert!(s.d1 > s.d0, "{lo}..{hi}: {s:?}");
            assert!(s.map(s.d0).is_finite());
            assert!(!s.ticks().is_empty());
            let l = Scale::nice(ScaleKind::Log10, lo, hi, 0.0, 100.0);
            assert!(l.d1 > l.d0 && l.d0 > 0.0, "{lo}..{hi}: {l:?}");
            assert!(!l.ticks().is_empty());
        }
    }

    #[test]
    fn log_scales_cover_whole_powers_and_place_decades_evenly() {
        let s = Scale::nice(ScaleKind::Log10, 60_000.0, 1_500_000.0, 0.0, 300.0);
        assert_eq!((s.d0, s.d1), (10_000.0, 10_000_000.0));
        assert!((s.map(100_000.0) - 100.0).abs() < 1e-9);
        assert!((s.map(1_000_000.0) - 200.0).abs() < 1e-9);
        assert_eq!(s.map(0.0), 0.0, "non-positive values clamp to the start");
        let q = Scale::nice(ScaleKind::Log2, 1.0, 256.0, 0.0, 80.0);
        assert_eq!((q.d0, q.d1), (1.0, 256.0));
        assert_eq!(q.ticks().len(), 9);
        assert!((q.map(16.0) - 40.0).abs() < 1e-9);
        // A single value gets one power of its own on each side.
        let one = Scale::nice(ScaleKind::Log2, 4.0, 4.0, 0.0, 1.0);
        assert_eq!((one.d0, one.d1), (4.0, 8.0));
    }

    #[test]
    fn log_ticks_add_two_and_five_only_on_short_ranges() {
        assert_eq!(
            log10_ticks(10.0, 1000.0),
            vec![10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]
        );
        assert_eq!(
            log10_ticks(1.0, 1e6),
            vec![1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]
        );
        assert!(log10_ticks(0.0, 10.0).is_empty());
        assert_eq!(log2_ticks(1.0, 1024.0).len(), 11);
        assert_eq!(
            log2_ticks(1.0, 2f64.powi(20)).len(),
            11,
            "every other power"
        );
    }

    #[test]
    fn tick_labels_carry_the_axis_unit() {
        assert_eq!(linear_unit(Unit::Ns, 1_500_000.0), (1e3, "µs"));
        assert_eq!(linear_unit(Unit::Count, 543_000.0), (1e3, "thousands"));
        assert_eq!(
            linear_unit(Unit::BytesPerSec, 2.3e9),
            ((1u64 << 30) as f64, "GiB/s")
        );
        assert_eq!(linear_label(200_000.0, 1e3, 100_000.0), "200");
        assert_eq!(linear_label(0.5, 1.0, 0.25), "0.5");
        assert_eq!(linear_label(-0.0, 1.0, 1.0), "0");
        assert_eq!(log_label(100_000.0, Unit::Ns), "100 µs");
        assert_eq!(log_label(1e6, Unit::Ns), "1 ms");
        assert_eq!(log_label(2_000.0, Unit::Count), "2K");
        assert_eq!(log_label(4096.0, Unit::Bytes), "4 KiB");
        assert_eq!(log_label(64.0, Unit::Plain), "64");
        assert_eq!(log_label(1024.0, Unit::Bytes), "1 KiB");
        assert_eq!(log_label(1_048_576.0, Unit::Bytes), "1 MiB");
    }

    #[test]
    fn heat_colours_run_from_dark_to_light_and_clamp() {
        assert_eq!(heat_color(0.0), "#440154");
        assert_eq!(heat_color(1.0), "#fde725");
        assert_eq!(heat_color(7.0), heat_color(1.0));
        assert_eq!(heat_color(f64::NAN), heat_color(0.0));
    }

    #[test]
    fn svg_numbers_are_short_and_never_nan() {
        let mut s = Svg::new(100.0, 50.0, "t<");
        s.line(0.0, f64::NAN, 1.25, -0.01, "axis", "");
        s.polyline(&[], "mark", "");
        let out = s.finish();
        assert!(
            out.contains(r#"y1="0""#) && out.contains(r#"x2="1.2""#) || out.contains(r#"x2="1.3""#)
        );
        assert!(out.contains(r#"y2="0""#), "{out}");
        assert!(!out.contains("NaN") && !out.contains("polyline"));
        assert!(out.contains("<title>t&lt;</title>"));
    }
}
