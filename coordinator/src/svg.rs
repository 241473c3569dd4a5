//! `depths.svg`: the depth table as a log-scale bar chart, the way distance
//! distributions are usually shown.

use std::fmt::Write as _;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 50.0;
const BOTTOM: f64 = 50.0;
/// Decades of the log axis below a count of 1.
const FLOOR_DECADES: f64 = 0.5;

/// Renders `counts` (states per depth) as bars on a log scale, under
/// `title`.
pub fn depth_histogram(title: &str, counts: &[u64]) -> String {
    let max = counts.iter().copied().max().unwrap_or(1).max(1) as f64;
    let decades = max.log10().ceil().max(1.0);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    // The axis starts half a decade below 1, so that a depth holding one
    // state (depth 0 always does) gets a visible bar; an empty depth none.
    let height_of = |count: f64| {
        if count < 1.0 {
            0.0
        } else {
            count.log10() + FLOOR_DECADES
        }
    };
    let y_of = |count: f64| TOP + plot_h * (1.0 - height_of(count) / (decades + FLOOR_DECADES));
    let slot = plot_w / counts.len().max(1) as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="28" text-anchor="middle" font-size="15">{}</text>"#,
        WIDTH / 2.0,
        escape(title)
    );
    for d in 0..=decades as u32 {
        let y = y_of(10f64.powi(d as i32));
        let _ = writeln!(
            svg,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">1e{d}</text>"##,
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0
        );
    }
    for (depth, &count) in counts.iter().enumerate() {
        let x = LEFT + slot * depth as f64;
        let y = y_of(count as f64);
        let h = TOP + plot_h - y;
        let _ = writeln!(
            svg,
            r##"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{h:.1}" fill="#4a7bb7"><title>depth {depth}: {count}</title></rect>"##,
            x + slot * 0.1,
            slot * 0.8
        );
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{depth}</text>"#,
            x + slot / 2.0,
            HEIGHT - BOTTOM + 16.0
        );
    }
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        TOP + plot_h,
        WIDTH - RIGHT,
        TOP + plot_h
    );
    let _ = writeln!(
        svg,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">depth (moves from solved)</text>"#,
        LEFT + plot_w / 2.0,
        HEIGHT - 12.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="18" y="{:.1}" text-anchor="middle" transform="rotate(-90 18 {:.1})">states (log scale)</text>"#,
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
    svg.push_str("</svg>\n");
    svg
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heights of the bars, in order.
    fn bar_heights(svg: &str) -> Vec<f64> {
        svg.lines()
            .filter(|l| l.starts_with("<rect x="))
            .map(|l| {
                let h = l.split("height=\"").nth(1).unwrap();
                h[..h.find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn a_depth_of_one_state_has_a_visible_bar_and_larger_counts_taller_ones() {
        let heights = bar_heights(&depth_histogram("t", &[1, 12, 96, 0]));
        assert_eq!(heights.len(), 4);
        assert!(heights[0] >= 10.0, "{:?}", heights);
        assert!(heights[0] < heights[1] && heights[1] < heights[2], "{:?}", heights);
        assert_eq!(heights[3], 0.0);
    }
}
